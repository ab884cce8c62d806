/* brig resume ID: thaw a paused container. */
#include <getopt.h>
#include <stdio.h>

#include "container/cgroup_ops.h"
#include "commands.h"

int
cmd_resume (struct brig_globals *g, int argc, char **argv)
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
        printf ("Usage: brig resume CONTAINER_ID\n\n"
                "Continue every process of a paused container (cgroup freezer).\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("resume", argc, argv, optind, 1) < 0)
    return 1;
  if (brig_container_resume (&ctx, argv[optind], &err) < 0)
    return cli_fail (&err);
  return 0;
}
