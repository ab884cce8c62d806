/* brig run ID [create flags] [--detach] [--keep] */
#include <stdio.h>
#include <stdlib.h>

#include "commands.h"
#include "container/container.h"
#include "create_opts.h"

static void
run_usage (void)
{
  printf ("Usage: brig run [options] CONTAINER_ID\n"
          "\n"
          "Create and start a container; in the foreground, wait for it and exit with\n"
          "its status (128+signal when killed), then delete it.\n"
          "\n"
          "Options:\n"
          "  --bundle, -b DIR         bundle directory (default: current directory)\n"
          "  --detach, -d             return once the process runs\n"
          "  --keep                   do not delete the container after it exits\n"
          "  --pid-file FILE          write the container's pid to FILE\n"
          "  --console-socket PATH    send the pty master to this AF_UNIX socket\n"
          "  --preserve-fds N         pass N more fds (3..3+N-1) to the container\n"
          "  --no-pivot               use MS_MOVE + chroot instead of pivot_root\n"
          "  --no-new-keyring         keep the caller's session keyring\n");
}

int
cmd_run (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE | CLI_NOTIFY);
  struct brig_create_opts o = { 0 };
  brig_error err = { 0 };
  bool detach = false, keep = false, help;
  int status = 0;

  if (cli_parse_create_opts ("run", argc, argv, &o, &detach, &keep, &help) < 0)
    return 1;
  if (help)
    {
      run_usage ();
      return 0;
    }
  if (brig_container_run (&ctx, &o, detach, keep, &status, &err) < 0)
    return cli_fail (&err);
  return status;
}
