/* brig delete [--force] ID */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container/container.h"

int
cmd_delete (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "force", no_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  brig_error err = { 0 };
  bool force = false;
  int c;

  while ((c = getopt_long_only (argc, argv, "fh", opts, NULL)) != -1)
    switch (c)
      {
      case 'f': force = true; break;
      case 'h':
        printf ("Usage: brig delete [--force] CONTAINER_ID\n\n"
                "Delete a stopped or created container; --force (-f) kills a running one first.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("delete", argc, argv, optind, 1) < 0)
    return 1;
  if (brig_container_delete (&ctx, argv[optind], force, &err) < 0)
    return cli_fail (&err);
  return 0;
}
