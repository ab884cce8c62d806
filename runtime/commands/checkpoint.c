/* brig checkpoint [options] ID: dump a running container with criu. */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container/criu.h"

#define MAX_EMPTY_NS 8

int
cmd_checkpoint (struct brig_globals *g, int argc, char **argv)
{
  enum { O_IMAGE = 256, O_WORK, O_PARENT, O_LEAVE, O_TCP, O_UNIX, O_SHELL, O_LAZY, O_LOCKS,
         O_PRE, O_CGMODE, O_EMPTY, O_DEDUP, O_PAGE_SERVER, O_STATUS_FD };
  static const struct option opts[] = {
    { "image-path", required_argument, NULL, O_IMAGE },
    { "work-path", required_argument, NULL, O_WORK },
    { "parent-path", required_argument, NULL, O_PARENT },
    { "leave-running", no_argument, NULL, O_LEAVE },
    { "tcp-established", no_argument, NULL, O_TCP },
    { "ext-unix-sk", no_argument, NULL, O_UNIX },
    { "shell-job", no_argument, NULL, O_SHELL },
    { "lazy-pages", no_argument, NULL, O_LAZY },
    { "file-locks", no_argument, NULL, O_LOCKS },
    { "pre-dump", no_argument, NULL, O_PRE },
    { "manage-cgroups-mode", required_argument, NULL, O_CGMODE },
    { "empty-ns", required_argument, NULL, O_EMPTY },
    { "auto-dedup", no_argument, NULL, O_DEDUP },
    { "page-server", required_argument, NULL, O_PAGE_SERVER },
    { "status-fd", required_argument, NULL, O_STATUS_FD },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  const char *empty_ns[MAX_EMPTY_NS];
  struct brig_checkpoint_opts o = { .c.empty_ns = empty_ns };
  brig_error err = { 0 };
  int c;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case O_IMAGE: o.c.image_path = optarg; break;
      case O_WORK: o.c.work_path = optarg; break;
      case O_PARENT: o.parent_path = optarg; break;
      case O_LEAVE: o.leave_running = true; break;
      case O_TCP: o.c.tcp_established = true; break;
      case O_UNIX: o.c.ext_unix_sk = true; break;
      case O_SHELL: o.c.shell_job = true; break;
      case O_LAZY: o.c.lazy_pages = true; break;
      case O_LOCKS: o.c.file_locks = true; break;
      case O_PRE: o.pre_dump = true; break;
      case O_DEDUP: o.c.auto_dedup = true; break;
      case O_CGMODE:
        if (brig_criu_check_cgroups_mode (optarg) < 0)
          return cli_usage_error ("checkpoint", "invalid --manage-cgroups-mode \"%s\": "
                                  "expected soft, full, strict or ignore", optarg);
        o.c.manage_cgroups_mode = optarg;
        break;
      case O_EMPTY:
        if (o.c.empty_ns_len == MAX_EMPTY_NS)
          return cli_usage_error ("checkpoint", "too many --empty-ns");
        empty_ns[o.c.empty_ns_len++] = optarg;
        break;
      case O_PAGE_SERVER:
      case O_STATUS_FD:
        return cli_usage_error ("checkpoint", "%s is not supported by brig", argv[optind - 1]);
      case 'h':
        printf ("Usage: brig checkpoint [options] CONTAINER_ID\n\n"
                "Checkpoint a running container with criu (which must be installed). Unless\n"
                "--leave-running or --pre-dump is given the container is stopped.\n\n"
                "Options:\n"
                "  --image-path DIR          where criu writes the images (default ./checkpoint)\n"
                "  --work-path DIR           criu's logs and work files (default: the image path)\n"
                "  --parent-path DIR         images of a previous pre-dump, relative to the image path\n"
                "  --leave-running           keep the container running after the dump\n"
                "  --pre-dump                dump the memory only, leaving the container running\n"
                "  --tcp-established         allow open established TCP connections\n"
                "  --ext-unix-sk             allow external unix sockets\n"
                "  --shell-job               allow a shell job (controlling terminal)\n"
                "  --file-locks              dump file locks\n"
                "  --lazy-pages              leave memory pages to be transferred on demand\n"
                "  --manage-cgroups-mode M   soft, full, strict or ignore\n"
                "  --empty-ns NS             do not dump NS (network) but create it empty on restore\n"
                "  --auto-dedup              deduplicate the images of a parent\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("checkpoint", argc, argv, optind, 1) < 0)
    return 1;
  o.id = argv[optind];
  if (brig_container_checkpoint (&ctx, &o, &err) < 0)
    return cli_fail (&err);
  return 0;
}
