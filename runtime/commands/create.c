/* brig create ID --bundle DIR [--pid-file F] [--console-socket S]
 *             [--preserve-fds N] [--no-pivot] [--no-new-keyring] */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "container/container.h"
#include "create_opts.h"
#include "process/process.h"

int
cli_parse_create_opts (const char *cmd, int argc, char **argv, struct brig_create_opts *o,
                       bool *detach, bool *keep, bool *help)
{
  enum { OPT_PID_FILE = 256, OPT_CONSOLE, OPT_PRESERVE, OPT_NO_PIVOT, OPT_NO_KEYRING,
         OPT_NO_SUBREAPER, OPT_KEEP };
  const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "pid-file", required_argument, NULL, OPT_PID_FILE },
    { "console-socket", required_argument, NULL, OPT_CONSOLE },
    { "preserve-fds", required_argument, NULL, OPT_PRESERVE },
    { "no-pivot", no_argument, NULL, OPT_NO_PIVOT },
    { "no-new-keyring", no_argument, NULL, OPT_NO_KEYRING },
    { "no-subreaper", no_argument, NULL, OPT_NO_SUBREAPER },
    { detach ? "detach" : "help", no_argument, NULL, detach ? 'd' : 'h' },
    { keep ? "keep" : "help", no_argument, NULL, keep ? OPT_KEEP : 'h' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *shorts = detach ? "b:dh" : "b:h";
  int c;

  *help = false;
  while ((c = getopt_long_only (argc, argv, shorts, opts, NULL)) != -1)
    switch (c)
      {
      case 'b': o->bundle = optarg; break;
      case OPT_PID_FILE: o->pid_file = optarg; break;
      case OPT_CONSOLE: o->console_socket = optarg; break;
      case OPT_PRESERVE:
        {
          char *end;
          long v = strtol (optarg, &end, 10);
          if (*optarg == '\0' || *end != '\0' || v < 0 || v > INT_MAX - 3)
            return cli_usage_error (cmd, "invalid --preserve-fds \"%s\"", optarg) ? -1 : -1;
          o->preserve_fds = (int) v;
          break;
        }
      case OPT_NO_PIVOT: o->no_pivot = true; break;
      case OPT_NO_KEYRING: o->no_new_keyring = true; break;
      case OPT_NO_SUBREAPER: break; /* runc compatibility: brig never double-forks */
      case 'd': *detach = true; break;
      case OPT_KEEP: *keep = true; break;
      case 'h': *help = true; return 0;
      default: return -1;
      }
  if (cli_require_args (cmd, argc, argv, optind, 1) < 0)
    return -1;
  o->id = argv[optind];
  /* As runc: a socket-activated brig hands its LISTEN_FDS to the container. */
  o->listen_fds = brig_process_listen_fds ();
  return 0;
}

static void
create_usage (void)
{
  printf ("Usage: brig create [options] CONTAINER_ID\n"
          "\n"
          "Create a container from the bundle, its process waiting for 'brig start'.\n"
          "\n"
          "Options:\n"
          "  --bundle, -b DIR         bundle directory (default: current directory)\n"
          "  --pid-file FILE          write the container's pid to FILE\n"
          "  --console-socket PATH    send the pty master to this AF_UNIX socket\n"
          "  --preserve-fds N         pass N more fds (3..3+N-1) to the container\n"
          "  --no-pivot               use MS_MOVE + chroot instead of pivot_root\n"
          "  --no-new-keyring         keep the caller's session keyring\n");
}

int
cmd_create (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE | CLI_NOTIFY);
  struct brig_create_opts o = { 0 };
  brig_error err = { 0 };
  bool help;

  if (cli_parse_create_opts ("create", argc, argv, &o, NULL, NULL, &help) < 0)
    return 1;
  if (help)
    {
      create_usage ();
      return 0;
    }
  if (brig_container_create (&ctx, &o, &err) < 0)
    return cli_fail (&err);
  return 0;
}
