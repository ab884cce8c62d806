/* brig: an OCI container runtime. This file parses the global options and
 * dispatches to the command table; every command lives in commands/. */
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands/commands.h"
#include "process/selfexe.h"
#include "sandbox/extension.h"

/* Only commands that work are listed here (and so in --help). */
const struct brig_command brig_commands[] = {
  { "create", "create a container from a bundle, waiting for start", cmd_create },
  { "start", "start the process of a created container", cmd_start },
  { "run", "create and start a container", cmd_run },
  { "state", "print the state of a container as JSON", cmd_state },
  { "list", "list containers", cmd_list },
  { "kill", "send a signal to a container's process(es)", cmd_kill },
  { "delete", "delete a container", cmd_delete },
  { "exec", "run a new process inside a running container", cmd_exec },
  { "ps", "list the processes of a container", cmd_ps },
  { "cp", "copy files into or out of a container (tar with -)", cmd_cp },
  { "pause", "suspend all processes of a container", cmd_pause },
  { "resume", "resume a paused container", cmd_resume },
  { "update", "update the resource limits of a container", cmd_update },
  { "checkpoint", "checkpoint a running container with criu", cmd_checkpoint },
  { "restore", "restore a container from a criu checkpoint", cmd_restore },
  { "events", "print a container's resource statistics and OOM events", cmd_events },
  { "reset", "kill everything in a container and make it created again, verified (JSON)",
    cmd_reset },
  { "check", "report how far a config.json is from a boundary (rules, severities)", cmd_check },
  { "pool", "warm containers: fill, claim, release (reset), status, drain", cmd_pool },
  { "serve", "serve the pools to the e2b SDK over HTTP (docs/serve.md)", cmd_serve },
  { "fork", "new containers from a running one's config and files (frozen copy)", cmd_fork },
  { "spec", "write a default config.json into a bundle", cmd_spec },
  { "features", "print the features this build supports (JSON)", cmd_features },
  { "version", "print the version and the compiled-in features", cmd_version },
};
const int brig_commands_count = (int) (sizeof brig_commands / sizeof brig_commands[0]);

static void
usage (FILE *out)
{
  fprintf (out,
           "Usage: brig [global options] COMMAND [command options] [arguments]\n"
           "\n"
           "brig runs containers from OCI bundles (config.json + rootfs).\n"
           "\n"
           "Commands:\n");
  for (int i = 0; i < brig_commands_count; i++)
    fprintf (out, "  %-12s %s\n", brig_commands[i].name, brig_commands[i].summary);
  fprintf (out,
           "\n"
           "Global options:\n"
           "  --root DIR             state directory (default /run/brig, or $XDG_RUNTIME_DIR/brig rootless)\n"
           "  --log FILE             also write messages to FILE\n"
           "  --log-format FORMAT    text (default) or json\n"
           "  --systemd-cgroup       use the systemd cgroup manager\n"
           "  --rootless true|false|auto  rootless mode (default auto)\n"
           "  --debug                log debug messages\n"
           "  --policy FILE          node policy create, run and exec must pass (default\n"
           "                         /etc/brig/policy.json when present; see 'brig check')\n"
           "  --userns-range FIRST:COUNT  host ids run.brig.userns=auto hands out: COUNT ranges\n"
           "                         of 65536 from FIRST (default 1879113728:4093)\n"
           "  --help, -h             show this help\n"
           "  --version, -v          print the version\n");
}

static const struct brig_command *
find_command (const char *name)
{
  for (int i = 0; i < brig_commands_count; i++)
    if (strcmp (brig_commands[i].name, name) == 0)
      return &brig_commands[i];
  return NULL;
}

/* Commands that place a brig process in a container, which then execve()s
 * there: they run from a sealed copy of the binary (selfexe.h). The others
 * never put a process in a container and do not pay for the copy. */
static bool
places_process_in_container (const struct brig_command *cmd, const char *sub)
{
  /* pool fill creates members, pool release makes a new init (reset);
   * claim only releases a waiting init and must stay cheap. */
  if (cmd->run == cmd_pool)
    return sub && (strcmp (sub, "fill") == 0 || strcmp (sub, "release") == 0);
  /* brig-serve runs exec, claim and release for its clients; brig's own
   * serve only executes brig-serve */
#ifdef BRIG_SERVE_PROGRAM
  if (cmd->run == cmd_serve)
    return true;
#endif
  /* reset clones a new init, as create does */
  return cmd->run == cmd_create || cmd->run == cmd_run || cmd->run == cmd_exec
         || cmd->run == cmd_reset || cmd->run == cmd_fork;
}

static int
parse_rootless (const char *v)
{
  if (v == NULL || strcmp (v, "true") == 0)
    return 1;
  if (strcmp (v, "false") == 0)
    return 0;
  if (strcmp (v, "auto") == 0)
    return -1;
  return -2;
}

static const char *
default_root (int rootless)
{
  static char buf[4096];
  const char *xdg = getenv ("XDG_RUNTIME_DIR");
  if ((rootless == 1 || (rootless == -1 && geteuid () != 0)) && xdg && *xdg)
    {
      snprintf (buf, sizeof buf, "%s/brig", xdg);
      return buf;
    }
  return "/run/brig";
}

int
main (int argc, char **argv)
{
  enum { OPT_ROOT = 256, OPT_LOG, OPT_LOG_FORMAT, OPT_SYSTEMD, OPT_ROOTLESS, OPT_DEBUG,
         OPT_CRIU, OPT_POLICY, OPT_USERNS_RANGE };
  static const struct option opts[] = {
    { "root", required_argument, NULL, OPT_ROOT },
    { "log", required_argument, NULL, OPT_LOG },
    { "log-format", required_argument, NULL, OPT_LOG_FORMAT },
    { "systemd-cgroup", no_argument, NULL, OPT_SYSTEMD },
    { "rootless", optional_argument, NULL, OPT_ROOTLESS },
    { "debug", no_argument, NULL, OPT_DEBUG },
    { "criu", required_argument, NULL, OPT_CRIU },
    { "policy", required_argument, NULL, OPT_POLICY },
    { "userns-range", required_argument, NULL, OPT_USERNS_RANGE },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'v' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_globals g = { .rootless = -1, .log_format = BRIG_LOG_TEXT };
  const struct brig_command *cmd;
  bool format_given = false;
  int c, r;

  /* The sandbox layer acts at the core's extension points
   * (container/extension.h); a table of function pointers, no syscall. */
  brig_extension_register (&brig_sandbox_extension);

  /* Grow the heap in a few large steps and never give it back: a command
   * lives for milliseconds, and each brk costs a syscall (and a TLB flush
   * when it shrinks). Untouched pages cost no memory. */
  mallopt (M_TOP_PAD, 1 << 20);
  mallopt (M_TRIM_THRESHOLD, 64 << 20);
  mallopt (M_MMAP_THRESHOLD, 4 << 20);

  /* '+': stop at the command name; the rest belongs to the command. */
  opterr = 0;
  while ((c = getopt_long_only (argc, argv, "+hv", opts, NULL)) != -1)
    {
      switch (c)
        {
        case OPT_ROOT: g.root = optarg; break;
        case OPT_LOG: g.log = optarg; break;
        case OPT_LOG_FORMAT:
          format_given = true;
          if (strcmp (optarg, "json") == 0)
            g.log_format = BRIG_LOG_JSON;
          else if (strcmp (optarg, "text") == 0)
            g.log_format = BRIG_LOG_TEXT;
          else
            {
              fprintf (stderr, "brig: invalid --log-format \"%s\": expected text or json\n", optarg);
              return 1;
            }
          break;
        case OPT_SYSTEMD: g.systemd_cgroup = true; break;
        case OPT_ROOTLESS:
          g.rootless = parse_rootless (optarg);
          if (g.rootless == -2)
            {
              fprintf (stderr, "brig: invalid --rootless \"%s\": expected true, false or auto\n", optarg);
              return 1;
            }
          break;
        case OPT_DEBUG: g.debug = true; break;
        case OPT_POLICY: g.policy = optarg; break;
        case OPT_USERNS_RANGE: g.userns_range = optarg; break;
        case OPT_CRIU: break; /* accepted for runc compatibility; criu is found in $PATH */
        case 'h': usage (stdout); return 0;
        case 'v': cli_print_version (); return 0;
        default:
          fprintf (stderr, "brig: unknown global option \"%s\" (see 'brig --help')\n", argv[optind - 1]);
          return 1;
        }
    }

  if (optind >= argc)
    {
      usage (stderr);
      return 1;
    }
  /* runc writes key=value lines to stderr for every error; brig does with
   * --log-format or --debug, and keeps bare errors otherwise (brig.8). */
  r = brig_log_init (g.log, g.log_format, g.debug, format_given || g.debug);
  if (r < 0)
    {
      fprintf (stderr, "brig: open log file %s: %s\n", g.log, strerror (-r));
      return 1;
    }
  if (g.root == NULL)
    g.root = default_root (g.rootless);

  cmd = find_command (argv[optind]);
  if (cmd == NULL)
    {
      brig_log (BRIG_LOG_ERROR, "brig: unknown command \"%s\" (see 'brig --help')", argv[optind]);
      return 1;
    }
  if (places_process_in_container (cmd, optind + 1 < argc ? argv[optind + 1] : NULL))
    {
      brig_error err = { 0 };
      /* Returns only when the copy cannot be made or run: fail closed. */
      if (brig_selfexe_seal (argv, &err) < 0)
        {
          brig_error_wrap (&err, "%s", cmd->name);
          return cli_fail (&err);
        }
    }
  /* Hand the command its own argv, with argv[0] = command name. */
  optind++;
  argv += optind - 1;
  argc -= optind - 1;
  optind = 0; /* re-initialise getopt for the command's own parsing */
  opterr = 1;
  return cmd->run (&g, argc, argv);
}
