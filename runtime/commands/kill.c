/* brig kill [--all] ID [SIGNAL] */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>

#include "commands.h"
#include "container/container.h"

int
cmd_kill (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "all", no_argument, NULL, 'a' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  brig_error err = { 0 };
  bool all = false;
  int c, sig = SIGTERM;

  while ((c = getopt_long_only (argc, argv, "ah", opts, NULL)) != -1)
    switch (c)
      {
      case 'a': all = true; break;
      case 'h':
        printf ("Usage: brig kill [--all] CONTAINER_ID [SIGNAL]\n\n"
                "Send SIGNAL (name or number; default SIGTERM) to the container's init, or\n"
                "with --all (-a) to every process of its cgroup.\n");
        return 0;
      default: return 1;
      }
  if (argc - optind < 1 || argc - optind > 2)
    return cli_usage_error ("kill", "requires 1 or 2 arguments (see 'brig kill --help')");
  if (argc - optind == 2 && brig_signal_parse (argv[optind + 1], &sig) < 0)
    return cli_usage_error ("kill", "unknown signal \"%s\"", argv[optind + 1]);
  if (brig_container_kill (&ctx, argv[optind], sig, all, &err) < 0)
    return cli_fail (&err);
  return 0;
}
