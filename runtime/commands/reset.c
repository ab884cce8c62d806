/* brig reset ID: take a container back to `created` and print what was
 * verified, one JSON object per check and a summary line
 * (docs/sandbox.md "Reset"). */
#include <getopt.h>
#include <stdio.h>
#include <time.h>

#include "commands.h"
#include "sandbox/reset.h"
#include "utils.h"

void
cli_print_reset_report (const char *id, const struct brig_reset_report *rep, bool ok, double ms)
{
  for (size_t i = 0; i < rep->n; i++)
    {
      fputs ("{\"check\":", stdout);
      brig_json_write_string (stdout, rep->checks[i].name);
      printf (",\"ok\":%s", rep->checks[i].ok ? "true" : "false");
      if (rep->checks[i].detail)
        {
          fputs (",\"detail\":", stdout);
          brig_json_write_string (stdout, rep->checks[i].detail);
        }
      fputs ("}\n", stdout);
    }
  fputs ("{\"reset\":", stdout);
  brig_json_write_string (stdout, id);
  printf (",\"ok\":%s,\"ms\":%.3f}\n", ok ? "true" : "false", ms);
  fflush (stdout);
}

int
cmd_reset (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  struct brig_reset_report rep = { 0 };
  brig_error err = { 0 };
  double t0 = brig_mono_ms_f ();
  int c, r;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h':
        printf ("Usage: brig reset CONTAINER_ID\n\n"
                "Kill every process of the container, make its namespaces and writable layers\n"
                "new, and leave a new init waiting for start (status created), from the config\n"
                "saved at create. Prints one JSON object per check, then a summary line; exits\n"
                "1 and leaves the container unusable (delete it) when a check fails.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("reset", argc, argv, optind, 1) < 0)
    return 1;
  r = brig_container_reset (&ctx, argv[optind], 0, &rep, &err);
  /* Only a reset that ran has checks to show. */
  if (rep.n > 0 || r == 0)
    cli_print_reset_report (argv[optind], &rep, r == 0, brig_mono_ms_f () - t0);
  brig_reset_report_free (&rep);
  if (r < 0)
    return cli_fail (&err);
  return 0;
}
