/* brig pause ID: freeze every process of a running container. */
#include <getopt.h>
#include <stdio.h>

#include "container/cgroup_ops.h"
#include "commands.h"

int
cmd_pause (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  brig_error err = { 0 };
  int c;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h':
        printf ("Usage: brig pause CONTAINER_ID\n\n"
                "Suspend every process of the container (cgroup freezer), waiting until\n"
                "all are frozen. `brig resume` continues them.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("pause", argc, argv, optind, 1) < 0)
    return 1;
  if (brig_container_pause (&ctx, argv[optind], &err) < 0)
    return cli_fail (&err);
  return 0;
}
