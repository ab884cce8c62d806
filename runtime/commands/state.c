/* brig state ID: the OCI state as JSON, as runc prints it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "container/state.h"

int
cmd_state (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  struct brig_context ctx = cli_context (g, 0);
  brig_container *c = NULL;
  brig_error err = { 0 };
  char *json;
  int opt;

  while ((opt = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (opt)
      {
      case 'h':
        printf ("Usage: brig state CONTAINER_ID\n\nPrint the state of a container as JSON.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("state", argc, argv, optind, 1) < 0)
    return 1;
  if (brig_container_load_visible (&ctx, argv[optind], &c, &err) < 0)
    return cli_fail (&err);
  json = brig_container_state_json (c, -1, true);
  brig_container_free (c);
  if (json == NULL)
    {
      brig_error_set (&err, ENOMEM, "generate the state");
      return cli_fail (&err);
    }
  fputs (json, stdout);
  free (json);
  return fflush (stdout) == 0 ? 0 : 1;
}
