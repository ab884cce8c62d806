/* brig exec: run a new process inside a running container. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "container/exec.h"
#include "utils.h"

/* Failures of exec itself exit 255, as runc does: any smaller status could
 * be the process's own. */
#define EXEC_FAILED 255

static void
exec_usage (void)
{
  printf ("Usage: brig exec [options] ID [COMMAND [ARG...]]\n"
          "\n"
          "Run a new process inside the running container ID: COMMAND with the\n"
          "container's process settings, or the process described by --process.\n"
          "A foreground exec exits with the process's status (128+signal if killed).\n"
          "\n"
          "  --process, -p FILE        process.json (runtime-spec process object) to run\n"
          "  --tty, -t                 allocate a pseudo-terminal\n"
          "  --detach, -d              do not wait for the process\n"
          "  --pid-file FILE           write the process's host pid to FILE\n"
          "  --console-socket PATH     send the pty master to this unix socket (with -t -d)\n"
          "  --cwd DIR                 working directory inside the container\n"
          "  --env, -e KEY=VALUE       set an environment variable (repeatable)\n"
          "  --user, -u UID[:GID]      run as this user\n"
          "  --additional-gids, -g GID add a supplementary group (repeatable)\n"
          "  --cap, -c CAP             add a capability (repeatable)\n"
          "  --no-new-privs            set no_new_privs\n"
          "  --preserve-fds N          pass N extra fds (from fd 3) to the process\n"
          "  --ignore-paused           exec even if the container is paused\n"
          "  --process-label LABEL     SELinux label of the process\n"
          "  --apparmor PROFILE        AppArmor profile of the process\n");
}

static void
strv_add (char ***v, size_t *n, const char *s)
{
  *v = xrealloc (*v, (*n + 2) * sizeof (char *));
  (*v)[(*n)++] = (char *) s;
  (*v)[*n] = NULL;
}

static int
parse_uint (const char *flag, const char *s, unsigned long max, unsigned long *out)
{
  char *end;
  unsigned long v;

  errno = 0;
  v = strtoul (s, &end, 10);
  if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0 || v > max)
    {
      cli_usage_error ("exec", "%s: \"%s\" is not a valid number", flag, s);
      return -1;
    }
  *out = v;
  return 0;
}

int
cmd_exec (struct brig_globals *g, int argc, char **argv)
{
  enum { OPT_PID_FILE = 256, OPT_CONSOLE, OPT_CWD, OPT_NNP, OPT_PRESERVE, OPT_IGNORE_PAUSED,
         OPT_LABEL, OPT_APPARMOR, OPT_CGROUP };
  static const struct option opts[] = {
    { "process", required_argument, NULL, 'p' },
    { "tty", no_argument, NULL, 't' },
    { "detach", no_argument, NULL, 'd' },
    { "pid-file", required_argument, NULL, OPT_PID_FILE },
    { "console-socket", required_argument, NULL, OPT_CONSOLE },
    { "cwd", required_argument, NULL, OPT_CWD },
    { "env", required_argument, NULL, 'e' },
    { "user", required_argument, NULL, 'u' },
    { "additional-gids", required_argument, NULL, 'g' },
    { "cap", required_argument, NULL, 'c' },
    { "no-new-privs", no_argument, NULL, OPT_NNP },
    { "preserve-fds", required_argument, NULL, OPT_PRESERVE },
    { "ignore-paused", no_argument, NULL, OPT_IGNORE_PAUSED },
    { "process-label", required_argument, NULL, OPT_LABEL },
    { "apparmor", required_argument, NULL, OPT_APPARMOR },
    { "cgroup", required_argument, NULL, OPT_CGROUP },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_exec_overrides ov = { .tty = -1, .no_new_privs = -1 };
  struct brig_exec_opts eo = { 0 };
  struct brig_context ctx = cli_context (g, CLI_POLICY);
  _cleanup_free_ char **env = NULL;
  _cleanup_free_ char **caps = NULL;
  _cleanup_free_ uint32_t *gids = NULL;
  size_t n_env = 0, n_caps = 0;
  brig_error err = { 0 };
  unsigned long v;
  int c, status = EXEC_FAILED;

  while ((c = getopt_long_only (argc, argv, "+p:tde:u:g:c:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'p': eo.process_path = optarg; break;
      case 't': ov.tty = 1; break;
      case 'd': eo.detach = true; break;
      case OPT_PID_FILE: eo.pid_file = optarg; break;
      case OPT_CONSOLE: eo.console_socket = optarg; break;
      case OPT_CWD: ov.cwd = optarg; break;
      case 'e': strv_add (&env, &n_env, optarg); break;
      case 'u': ov.user = optarg; break;
      case 'g':
        if (parse_uint ("--additional-gids", optarg, UINT32_MAX - 1, &v) < 0)
          return EXEC_FAILED;
        gids = xrealloc (gids, (ov.gids_len + 1) * sizeof (uint32_t));
        gids[ov.gids_len++] = (uint32_t) v;
        break;
      case 'c': strv_add (&caps, &n_caps, optarg); break;
      case OPT_NNP: ov.no_new_privs = 1; break;
      case OPT_PRESERVE:
        if (parse_uint ("--preserve-fds", optarg, INT_MAX - 3, &v) < 0)
          return EXEC_FAILED;
        eo.preserve_fds = (int) v;
        break;
      case OPT_IGNORE_PAUSED: eo.ignore_paused = true; break;
      case OPT_LABEL: ov.process_label = optarg; break;
      case OPT_APPARMOR: ov.apparmor = optarg; break;
      case OPT_CGROUP:
        cli_usage_error ("exec", "--cgroup is not supported: the process joins the "
                         "container's cgroup");
        return EXEC_FAILED;
      case 'h': exec_usage (); return 0;
      default: return EXEC_FAILED;
      }

  if (optind >= argc)
    {
      cli_usage_error ("exec", "requires a container id (see 'brig exec --help')");
      return EXEC_FAILED;
    }
  eo.id = argv[optind++];
  if (eo.process_path == NULL && optind >= argc)
    {
      cli_usage_error ("exec", "requires a command or --process (see 'brig exec --help')");
      return EXEC_FAILED;
    }
  if (eo.process_path == NULL)
    ov.args = argv + optind;
  else if (optind < argc)
    brig_warn ("exec: --process is given: ignoring the command line \"%s ...\"", argv[optind]);
  ov.env = env;
  ov.caps = caps;
  ov.gids = gids;
  eo.overrides = &ov;

  if (brig_exec (&ctx, &eo, &status, &err) < 0)
    {
      cli_fail (&err);
      return EXEC_FAILED;
    }
  return status;
}
