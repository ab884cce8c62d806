/* `create` and `run`, the parent side: read and check the bundle, claim the
 * state directory, create the cgroup, clone the init, drive it through the
 * sync protocol (id maps, cgroup, hooks), write the state. Every failure
 * undoes all of it: init killed, cgroup removed, state directory removed. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

#include "cgroup/cgroup.h"
#include "container/create.h"
#include "container/internal.h"
#include "hooks.h"
#include "log.h"
#include "rootfs/mounts.h"
#include "process/netdev.h"
#include "container/sdnotify.h"
#include "process/procattr.h"
#include "process/process.h"
#include "rootfs/rootfs.h"
#include "container/state.h"
#include "process/handshake.h"
#include "process/terminal.h"
#include "process/userns_owner.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* stdio the caller closed would be taken by brig's first open() and leak
 * into the container as its stdin/out/err. One poll(2) asks about all three
 * (POLLNVAL marks a closed fd) where fcntl would take a call each. */
static void
ensure_stdio (void)
{
  struct pollfd pf[3] = { { .fd = 0 }, { .fd = 1 }, { .fd = 2 } };

  if (poll (pf, 3, 0) < 0)
    return;
  for (int fd = 0; fd < 3; fd++)
    if (pf[fd].revents & POLLNVAL)
      {
        int n = open ("/dev/null", O_RDWR);
        if (n >= 0 && n != fd)
          {
            dup2 (n, fd);
            close (n);
          }
      }
}

void
create_fill_state (struct create_ctx *c, struct brig_ext_state *old)
{
  c->st.id = xstrdup (c->o->id);
  c->st.bundle = xstrdup (c->bundle);
  c->st.rootfs = xstrdup (c->rootfs);
  c->st.created = brig_state_now ();
  c->st.owner = xstrdup ("");
  if (c->cfg->annotations)
    for (size_t i = 0; i < c->cfg->annotations->len; i++)
      oci_map_set (&c->st.annotations, c->cfg->annotations->keys[i],
                   c->cfg->annotations->values[i]);
  c->st.systemd_cgroup = c->ctx->systemd_cgroup;
  c->st.rootless = c->rootless;
  c->st.new_pidns = (c->ns.new_flags & CLONE_NEWPID) != 0;
  c->st.start_hooks = brig_hooks_start_waits (c->cfg->hooks);
  c->st.no_process = c->cfg->process == NULL;
  c->st.shared_keyring = c->o->no_new_keyring;
  if (c->cg)
    {
      c->st.cgroup_manager = xstrdup (brig_cgroup_manager_name (c->cg));
      c->st.cgroup_path = xstrdup (brig_cgroup_path (c->cg));
      free (c->st.freeze_file);
      c->st.freeze_file = brig_cgroup_freeze_file (c->cg);
    }
  if (BRIG_EXT_HOOK (create_state))
    {
      struct brig_ext_create_info info;
      create_ext_info (c, &info);
      c->st.ext = brig_ext->create_state (&info, c->ext, old);
    }
}

/* The exec socket the init waits on for `start` (bound through
 * /proc/self/fd so a long --root does not hit the sun_path limit; the init
 * inherits the listening fd, it cannot reach the state directory after
 * pivot_root). */
int
create_listen_exec_socket (int dirfd, int *fd, brig_error *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int s;

  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" BRIG_EXEC_SOCKET, dirfd);
  s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0)
    return brig_error_errno (err, "create the exec socket");
  /* Connecting needs write permission on the socket, whose mode bind
   * takes from the umask: a caller with umask 0 (and a state root others
   * may traverse, 0711 by convention) let any local user connect and
   * start the container. Owner only, before anyone can connect (listen). */
  if (bind (s, (struct sockaddr *) &sa, sizeof sa) < 0
      || fchmodat (dirfd, BRIG_EXEC_SOCKET, 0600, 0) < 0 || listen (s, 1) < 0)
    {
      int e = errno;
      close (s);
      return brig_error_set (err, e, "bind the exec socket");
    }
  *fd = s;
  return 0;
}

/* The init died before it was ready. When the OOM killer took it (a memory
 * limit too small for even brig's init), say so rather than "exited
 * unexpectedly": it died by SIGKILL and its new cgroup counts an OOM kill. */
static void
explain_init_death (struct create_ctx *c, brig_error *err)
{
  const oci_resources *res = c->cfg->linux ? c->cfg->linux->resources : NULL;
  struct pollfd pfd = { .fd = c->pidfd, .events = POLLIN };
  siginfo_t si = { 0 };
  uint64_t ooms = 0;

  if (c->cg == NULL || c->pid <= 0 || c->pidfd < 0)
    return;
  /* Its end of the sync socket closed as it exited: the status follows. */
  if (poll (&pfd, 1, 1000) <= 0)
    return;
  if (waitid (P_PID, (id_t) c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0
      || si.si_pid != c->pid || si.si_code != CLD_KILLED || si.si_status != SIGKILL)
    return;
  if (brig_cgroup_oom_count (c->cg, &ooms) < 0 || ooms == 0)
    return;
  if (res && res->memory && res->memory->has_limit && res->memory->limit > 0)
    brig_error_set (err, 0, "linux.resources.memory.limit %" PRId64 " bytes is too small to "
                    "start the container: the OOM killer killed its init",
                    res->memory->limit);
  else
    brig_error_set (err, 0, "the container init was killed by the OOM killer of its "
                    "memory cgroup");
}

void
create_kill_init (struct create_ctx *c)
{
  if (c->pidfd >= 0)
    syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
  else if (c->pid > 0)
    kill (c->pid, SIGKILL);
  if (c->child > 0)
    while (waitpid (c->child, NULL, 0) < 0 && errno == EINTR)
      ;
  if (c->pid > 0 && c->pid != c->child)
    while (waitpid (c->pid, NULL, 0) < 0 && errno == EINTR)
      ;
}

void
create_ctx_undo (struct create_ctx *c)
{
  /* Before the kill, while the init's network namespace surely still
   * holds the devices. */
  brig_netdev_undo (c->netdevs);
  create_kill_init (c);
  if (c->cg)
    {
      brig_error e = { 0 };
      if (brig_cgroup_destroy (c->cg, true, &e) < 0)
        brig_warn ("remove cgroup: %s", e.msg ? e.msg : "failed");
      brig_error_clear (&e);
    }
  if (c->dirfd >= 0)
    brig_state_remove (c->ctx, c->o->id, c->dirfd, NULL);
}

void
create_ctx_free (struct create_ctx *c)
{
  if (c->sync_fd >= 0)
    close (c->sync_fd);
  if (c->console_fd >= 0)
    close (c->console_fd);
  if (c->pidfd >= 0)
    close (c->pidfd);
  if (c->dirfd >= 0)
    close (c->dirfd);
  if (c->record_fd >= 0)
    close (c->record_fd);
  brig_notify_close (&c->notify);
  brig_ns_plan_clear (&c->ns);
  brig_netdev_free (c->netdevs);
  if (c->ext && BRIG_EXT_HOOK (create_free))
    brig_ext->create_free (c->ext);
  if (c->cg)
    brig_cgroup_free (c->cg);
  brig_seccomp_free (c->seccomp);
  oci_config_free (c->cfg);
  brig_state_file_clear (&c->st);
  free (c->config_buf);
  free (c->bundle);
  free (c->rootfs);
}

/* The cgroup's ownership record, before the first directory is made (see
 * state.h): a create killed at any moment leaves what delete needs. */
static int
record_cgroup (const brig_cgroup *cg, void *data, brig_error *err)
{
  struct create_ctx *c = data;
  _cleanup_free_ char *text = brig_cgroup_record (cg);
  if (c->record_fd >= 0)
    close (brig_steal_fd (c->record_fd));
  return brig_state_record_write (c->dirfd, text, &c->record_fd, err);
}

/* Everything checked before anything exists: the id, the bundle, the
 * caller's fds, the config (and by the extension), the notify socket. */
static int
create_admit (struct create_ctx *c, struct brig_ext_create_info *info, brig_error *err)
{
  const oci_process *p;
  int r;

  /* First thing, before brig opens its own: fewer fds to ask about. */
  create_close_inherited_fds (c->o->listen_fds + c->o->preserve_fds);
  c->inherited_closed = true;
  if ((r = brig_state_check_id (c->o->id, err)) < 0 || (r = create_load_bundle (c, err)) < 0)
    return r;
  /* the caller's fds, not the config: before its check */
  if ((r = brig_process_check_fds (c->o->listen_fds, c->o->preserve_fds, err)) < 0)
    return r;
  /* runc's words for a config it cannot apply, which scripts match (the
   * node policy is judged in there too: create_validate_config) */
  if (create_validate_config (c, err) < 0)
    return brig_error_wrap (err, "invalid configuration");
  p = c->cfg->process;
  if ((r = create_cgroup_shared (c->cfg, &c->shared_cgroup, err)) < 0)
    return r;
  create_ext_info (c, info);
  if (BRIG_EXT_HOOK (create_check) && (r = brig_ext->create_check (info, c->ext, err)) < 0)
    return r;
  if (c->ctx->notify_socket && *c->ctx->notify_socket && p
      && (r = brig_notify_check_host (c->ctx->notify_socket, err)) < 0)
    return r;
  return 0;
}

/* The state directory claimed, then what the extension records there and
 * the sd_notify socket. */
static int
create_claim (struct create_ctx *c, struct brig_ext_create_info *info, brig_error *err)
{
  int r = brig_state_claim (c->ctx, c->o->id, &c->dirfd, err);

  if (r < 0)
    return r;
  info->dirfd = c->dirfd;
  if (BRIG_EXT_HOOK (create_claimed) && (r = brig_ext->create_claimed (info, c->ext, err)) < 0)
    return r;
  if (c->ctx->notify_socket && *c->ctx->notify_socket && c->cfg->process)
    {
      /* run binds the socket before the process can send; create leaves
       * that to start, the command that relays. */
      r = brig_notify_setup (c->dirfd, c->cfg, err);
      if (r == 0 && c->mode != MODE_CREATE)
        r = brig_notify_open (c->dirfd, c->ctx->notify_socket, &c->notify, err);
    }
  return r;
}

/* The cgroup (its ownership record written before the first directory),
 * the extension's part in it, then the saved config.json. */
static int
create_make_cgroup (struct create_ctx *c, struct brig_ext_create_info *info, brig_error *err)
{
  struct brig_cgroup_config cgc = {
    .id = c->o->id,
    .cgroups_path = c->cfg->linux ? c->cfg->linux->cgroups_path : NULL,
    .resources = c->cfg->linux ? c->cfg->linux->resources : NULL,
    .systemd = c->ctx->systemd_cgroup,
    .rootless = c->rootless,
    .annotations = c->cfg->annotations,
    .shared = c->shared_cgroup,
    .no_cgroup_mount = !brig_config_mounts_type (c->cfg, "cgroup"),
    .realtime_policy = brig_procattr_realtime_policy (c->cfg->process),
    .before_make = record_cgroup,
    .before_make_data = c,
  };
  int r = brig_cgroup_create (&cgc, &c->cg, err);

  if (r < 0)
    return r;
  info->cg = c->cg;
  if (BRIG_EXT_HOOK (create_cgroup) && (r = brig_ext->create_cgroup (info, c->ext, err)) < 0)
    return r;
  /* The directory is new and nobody reads config.json before state.json
   * shows a live container: no need for write + rename. After the cgroup
   * is made, never before: its presence tells delete that the record's
   * `made` lines are final (state.h, BRIG_STATE_CONFIG). */
  _cleanup_close_ int fd = openat (c->dirfd, BRIG_STATE_CONFIG,
                                   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || (r = brig_write_all (fd, c->config_buf, c->config_len)) < 0)
    return brig_error_set (err, fd < 0 ? errno : -r, "write the state's config.json");
  return 0;
}

/* The console of a process with a terminal: the caller's console socket,
 * or a socketpair whose end brig keeps (run proxies the pty). */
static int
create_console (struct create_ctx *c, int *child_console, brig_error *err)
{
  const oci_process *p = c->cfg->process;
  int sv[2];

  if (!(p && p->has_terminal && p->terminal))
    return 0;
  if (c->o->console_socket && *c->o->console_socket)
    {
      if (brig_terminal_connect_socket (c->o->console_socket, child_console, err) < 0)
        return brig_error_wrap (err, "--console-socket");
      return 0;
    }
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return brig_error_errno (err, "socketpair for the terminal");
  c->console_fd = sv[0];
  *child_console = sv[1];
  return 0;
}

int
create_common (struct create_ctx *c, brig_error *err)
{
  _cleanup_close_ int exec_fd = -1, child_console = -1;
  struct brig_ext_create_info info;
  int r;

  ensure_stdio ();
  if ((r = create_admit (c, &info, err)) < 0 || (r = create_claim (c, &info, err)) < 0
      || (r = create_make_cgroup (c, &info, err)) < 0)
    return r;
  /* state.json is written once, with the init's pid (create_spawn_init
   * stages it, brig_state_commit below publishes it). A create killed
   * before that leaves a directory without state.json, which load_common
   * reports as creating while this create holds the lock and as stopped
   * once it is gone; delete finds the cgroup in the ownership record
   * (written before the first directory was made), as it would have from a
   * first pid-less state.json. */
  create_fill_state (c, NULL);
  if (c->mode == MODE_CREATE && (r = create_listen_exec_socket (c->dirfd, &exec_fd, err)) < 0)
    return r;
  if ((r = create_console (c, &child_console, err)) < 0)
    return r;
  r = create_spawn_init (c, exec_fd, child_console, err);
  if (r == -EPIPE)
    explain_init_death (c, err);
  if (r < 0)
    return r;
  info.pid = c->pid;
  if (BRIG_EXT_HOOK (create_started))
    brig_ext->create_started (&info, c->ext);
  if ((r = brig_state_commit (c->dirfd, err)) < 0)
    return r;
  if (c->o->pid_file && *c->o->pid_file)
    return brig_write_pid_file (c->o->pid_file, c->pid, "--pid-file", err);
  return 0;
}

void
create_ctx_init (struct create_ctx *c, const struct brig_context *ctx,
                 const struct brig_create_opts *o, enum create_mode mode)
{
  memset (c, 0, sizeof *c);
  c->ctx = ctx;
  c->o = o;
  c->mode = mode;
  c->dirfd = c->sync_fd = c->console_fd = c->pidfd = c->stdio_fd = c->record_fd = -1;
  c->init_closes[0] = c->init_closes[1] = -1;
  c->rootless = ctx->rootless == 1 || (ctx->rootless == -1 && geteuid () != 0);
  c->notify.fd = c->notify.host_fd = -1;
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    c->ns.join_fd[i] = -1;
}

int
brig_container_create (const struct brig_context *ctx, const struct brig_create_opts *o,
                       brig_error *err)
{
  struct create_ctx c;
  int r;

  create_ctx_init (&c, ctx, o, MODE_CREATE);
  r = create_common (&c, err);
  if (r < 0)
    create_ctx_undo (&c);
  create_ctx_free (&c);
  return r;
}
