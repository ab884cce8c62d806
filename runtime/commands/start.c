/* brig start ID */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "container/container.h"

int
cmd_start (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
  struct brig_context ctx = cli_context (g, CLI_NOTIFY);
  brig_error err = { 0 };
  int c;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h':
        printf ("Usage: brig start CONTAINER_ID\n\nStart the process of a created container.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("start", argc, argv, optind, 1) < 0)
    return 1;
  if (brig_container_start (&ctx, argv[optind], &err) < 0)
    return cli_fail (&err);
  return 0;
}
