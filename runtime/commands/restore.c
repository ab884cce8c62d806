/* brig restore [options] ID: restore a container from criu images. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container/criu.h"

#define MAX_EMPTY_NS 8

int
cmd_restore (struct brig_globals *g, int argc, char **argv)
{
  enum { O_IMAGE = 256, O_WORK, O_CONSOLE, O_PIDFILE, O_NOSUB, O_NOPIVOT, O_TCP, O_UNIX,
         O_SHELL, O_LOCKS, O_CGMODE, O_LSM, O_LSM_MOUNT, O_DEDUP, O_LAZY, O_EMPTY };
  static const struct option opts[] = {
    { "image-path", required_argument, NULL, O_IMAGE },
    { "work-path", required_argument, NULL, O_WORK },
    { "bundle", required_argument, NULL, 'b' },
    { "console-socket", required_argument, NULL, O_CONSOLE },
    { "detach", no_argument, NULL, 'd' },
    { "pid-file", required_argument, NULL, O_PIDFILE },
    { "no-subreaper", no_argument, NULL, O_NOSUB },
    { "no-pivot", no_argument, NULL, O_NOPIVOT },
    { "tcp-established", no_argument, NULL, O_TCP },
    { "ext-unix-sk", no_argument, NULL, O_UNIX },
    { "shell-job", no_argument, NULL, O_SHELL },
    { "file-locks", no_argument, NULL, O_LOCKS },
    { "manage-cgroups-mode", required_argument, NULL, O_CGMODE },
    { "lsm-profile", required_argument, NULL, O_LSM },
    { "lsm-mount-context", required_argument, NULL, O_LSM_MOUNT },
    { "auto-dedup", no_argument, NULL, O_DEDUP },
    { "lazy-pages", no_argument, NULL, O_LAZY },
    { "empty-ns", required_argument, NULL, O_EMPTY },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, CLI_POLICY);
  const char *empty_ns[MAX_EMPTY_NS];
  struct brig_restore_opts o = { .c.empty_ns = empty_ns };
  brig_error err = { 0 };
  int c, status = 0;

  while ((c = getopt_long_only (argc, argv, "b:dh", opts, NULL)) != -1)
    switch (c)
      {
      case O_IMAGE: o.c.image_path = optarg; break;
      case O_WORK: o.c.work_path = optarg; break;
      case 'b': o.bundle = optarg; break;
      case O_CONSOLE: o.console_socket = optarg; break;
      case 'd': o.detach = true; break;
      case O_PIDFILE: o.pid_file = optarg; break;
      case O_NOSUB: o.no_subreaper = true; break;
      /* criu always pivots into the restored root inside its own mount
       * namespace; accepted for compatibility. */
      case O_NOPIVOT: o.no_pivot = true; break;
      case O_TCP: o.c.tcp_established = true; break;
      case O_UNIX: o.c.ext_unix_sk = true; break;
      case O_SHELL: o.c.shell_job = true; break;
      case O_LOCKS: o.c.file_locks = true; break;
      case O_LSM: o.lsm_profile = optarg; break;
      case O_LSM_MOUNT: o.lsm_mount_context = optarg; break;
      case O_DEDUP: o.c.auto_dedup = true; break;
      case O_LAZY: o.c.lazy_pages = true; break;
      case O_CGMODE:
        if (brig_criu_check_cgroups_mode (optarg) < 0)
          return cli_usage_error ("restore", "invalid --manage-cgroups-mode \"%s\": "
                                  "expected soft, full, strict or ignore", optarg);
        o.c.manage_cgroups_mode = optarg;
        break;
      case O_EMPTY:
        if (o.c.empty_ns_len == MAX_EMPTY_NS)
          return cli_usage_error ("restore", "too many --empty-ns");
        empty_ns[o.c.empty_ns_len++] = optarg;
        break;
      case 'h':
        printf ("Usage: brig restore [options] CONTAINER_ID\n\n"
                "Restore a container checkpointed by `brig checkpoint` (criu must be\n"
                "installed) under a new or the same id. Without --detach brig waits for\n"
                "the container and deletes it when it exits.\n\n"
                "Options:\n"
                "  --image-path DIR          criu images (default ./checkpoint)\n"
                "  --work-path DIR           criu's logs and work files (default: the image path)\n"
                "  --bundle, -b DIR          the bundle (default: the current directory)\n"
                "  --detach, -d              return once the container runs\n"
                "  --pid-file FILE           write the restored init's pid to FILE\n"
                "  --console-socket PATH     (terminal containers cannot be restored yet)\n"
                "  --no-subreaper            do not become a child subreaper\n"
                "  --no-pivot                accepted; criu pivots in its own mount namespace\n"
                "  --tcp-established         restore established TCP connections\n"
                "  --ext-unix-sk             allow external unix sockets\n"
                "  --shell-job               allow a shell job (controlling terminal)\n"
                "  --file-locks              restore file locks\n"
                "  --manage-cgroups-mode M   soft, full, strict or ignore\n"
                "  --lsm-profile TYPE:NAME   LSM profile of the restored processes\n"
                "  --lsm-mount-context CTX   SELinux mount context for the restored mounts\n"
                "  --auto-dedup              punch restored pages out of the images\n"
                "  --lazy-pages              restore memory pages on demand\n"
                "  --empty-ns NS             create NS (network) empty\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("restore", argc, argv, optind, 1) < 0)
    return 1;
  o.id = argv[optind];
  if (brig_container_restore (&ctx, &o, &status, &err) < 0)
    return cli_fail (&err);
  return status;
}
