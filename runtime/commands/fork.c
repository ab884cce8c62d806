/* brig fork SOURCE NEW...: new containers (status created) from a running
 * container's config and a copy of its ephemeral layer, taken while it is
 * frozen (docs/sandbox.md "Forks"). */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "sandbox/fork.h"

int
cmd_fork (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "processes", no_argument, NULL, 'p' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  brig_error err = { 0 };
  int c;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'p':
        fprintf (stderr, "brig fork: --processes: processes are not copied (that would need criu's "
                 "checkpoint/restore, which brig fork does not use); a fork gets "
                 "SOURCE's config and files, and starts its own process with brig start\n");
        return 1;
      case 'h':
        printf ("Usage: brig fork SOURCE NEW [NEW...]\n\n"
                "Create each NEW (status created) from SOURCE's config and a copy of its\n"
                "ephemeral layer (run.brig.rootfs.ephemeral), taken while SOURCE is frozen;\n"
                "SOURCE goes on running. Processes are not copied (that would need criu).\n"
                "All or nothing: on failure no NEW is left, and SOURCE is thawed.\n\n"
                "  --processes   refused: copying processes would need criu, which fork does not use\n");
        return 0;
      default: return 1;
      }
  if (argc - optind < 1)
    {
      fprintf (stderr, "brig fork: usage: brig fork SOURCE NEW [NEW...]\n");
      return 1;
    }
  if (brig_fork (&ctx, argv[optind], argv + optind + 1, (size_t) (argc - optind - 1),
                 &err) < 0)
    return cli_fail (&err);
  return 0;
}
