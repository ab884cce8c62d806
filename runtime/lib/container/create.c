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
#include "sync.h"
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

static char *
state_json_for_hooks (struct create_ctx *c, enum brig_status status)
{
  brig_container tmp = { .id = (char *) c->o->id, .dirfd = -1, .st = c->st, .status = status,
                         .pidfd = -1 };
  tmp.st.pid = c->pid;
  return brig_container_state_json (&tmp, -1, false);
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

/* Close what the caller leaked to brig beyond stdio and --preserve-fds (fds
 * without close-on-exec: every fd brig opens itself has it). The init may
 * wait in "created" for a long time, and a pipe held open there keeps the
 * engine reading create's output from ever seeing end-of-file. brig needs
 * none of them either. create closes them first thing, before brig opens
 * its own (bundle, state, cgroups): the scan then asks fcntl about a few fds
 * instead of a dozen; create_spawn_init for any other caller (reset). */
static void
close_inherited_fds (int preserve_fds)
{
  int first = 3 + (preserve_fds > 0 ? preserve_fds : 0);
  char buf[4096] __attribute__ ((aligned (8)));
  int dfd = open ("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long n;

  if (dfd < 0)
    return;
  while ((n = syscall (SYS_getdents64, dfd, buf, sizeof buf)) > 0)
    for (long off = 0; off < n;)
      {
        struct dirent64 *de = (struct dirent64 *) (buf + off);
        int fd, fl;
        off += de->d_reclen;
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
          continue;
        fd = atoi (de->d_name);
        if (fd < first || fd == dfd)
          continue;
        fl = fcntl (fd, F_GETFD);
        if (fl >= 0 && !(fl & FD_CLOEXEC))
          close (fd);
      }
  close (dfd);
}

static pid_t
do_clone3 (unsigned long long flags, int cgroup_fd, int *pidfd)
{
  struct clone_args ca = { .flags = flags | CLONE_PIDFD, .pidfd = (uintptr_t) pidfd,
                           .exit_signal = SIGCHLD };
  if (cgroup_fd >= 0)
    {
      ca.flags |= CLONE_INTO_CGROUP;
      ca.cgroup = (uint64_t) cgroup_fd;
    }
  return (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
}

/* clone(2) for when clone3 is missing (kernels before 5.3, or a seccomp
 * profile that hides it, as container engines' older defaults do). */
static pid_t
do_clone_legacy (unsigned long long flags, int *pidfd)
{
  pid_t pid = (pid_t) syscall (SYS_clone, (unsigned long) flags | SIGCHLD, 0UL, NULL, NULL,
                               0UL);
  if (pid > 0)
    *pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  return pid;
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

/* Write the pid file atomically (runc: just the number, no newline). */
static int
write_pid_file (const char *path, pid_t pid, brig_error *err)
{
  char buf[16];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  int r = brig_write_file_atomic (AT_FDCWD, path, buf, (size_t) n, 0644, err);
  if (r < 0)
    return brig_error_wrap (err, "--pid-file");
  return 0;
}

/* Save and later restore the caller's pid and time namespace for children
 * around the clone, so joined pid/time namespaces only reach the init. */
struct ns_for_children {
  int saved[2];
};

static int
enter_child_namespaces (struct create_ctx *c, struct ns_for_children *s, brig_error *err)
{
  static const enum brig_ns_type types[2] = { BRIG_NS_PID, BRIG_NS_TIME };
  s->saved[0] = s->saved[1] = -1;
  for (int i = 0; i < 2; i++)
    {
      enum brig_ns_type t = types[i];
      bool new_time = t == BRIG_NS_TIME && (c->ns.new_flags & CLONE_NEWTIME);
      if (c->ns.join_fd[t] < 0 && !new_time)
        continue;
      _cleanup_free_ char *p = xasprintf ("/proc/self/ns/%s", brig_ns_proc_name (t));
      s->saved[i] = open (p, O_RDONLY | O_CLOEXEC);
      if (s->saved[i] < 0)
        return brig_error_errno (err, "open %s", p);
      if (new_time)
        {
          if (unshare (CLONE_NEWTIME) < 0)
            return brig_error_errno (err, "unshare time namespace");
          int r = brig_ns_write_time_offsets (c->cfg->linux, err);
          if (r < 0)
            return r;
        }
      else if (setns (c->ns.join_fd[t], (int) brig_ns_flag (t)) < 0)
        return brig_error_errno (err, "join %s namespace", brig_ns_proc_name (t));
    }
  return 0;
}

static void
leave_child_namespaces (struct ns_for_children *s)
{
  static const int flags[2] = { CLONE_NEWPID, CLONE_NEWTIME };
  for (int i = 0; i < 2; i++)
    if (s->saved[i] >= 0)
      {
        if (setns (s->saved[i], flags[i]) < 0)
          brig_warn ("restore the %s namespace for children: %s", i ? "time" : "pid",
                     strerror (errno));
        close (s->saved[i]);
        s->saved[i] = -1;
      }
}

/* The clone of the init, with its fallbacks (CLONE_INTO_CGROUP refused,
 * no clone3). A user namespace it makes is made with container root's
 * host uid as euid, for that one call (userns_owner.h): brig is root again
 * right after it; the child waits for its id maps with nothing of the host's
 * but what it had (its capabilities are its new namespace's). errno is the
 * clone's when c->child < 0. */
static int
clone_init (struct create_ctx *c, unsigned long long clone_flags, int *cgfd, bool *self,
            struct brig_init_args *a, bool slow, brig_error *err)
{
  struct brig_userns_creator owner = { .active = false };
  int r, e;

  if ((clone_flags & CLONE_NEWUSER)
      && (r = brig_userns_creator_enter (&owner, brig_userns_owner (c->cfg->linux), err)) < 0)
    return r;
  c->child = do_clone3 (clone_flags, *cgfd, &c->pidfd);
  if (c->child < 0 && *cgfd >= 0)
    {
      /* CLONE_INTO_CGROUP refused (e.g. a threaded cgroup), or no clone3:
       * join the cgroup after the clone, every hierarchy from here. */
      *cgfd = -1;
      *self = false;
      brig_cgroup_self_close (c->cg, &a->cg_self);
      if (c->ns.new_flags & CLONE_NEWCGROUP)
        {
          clone_flags &= ~(unsigned long long) CLONE_NEWCGROUP;
          if (!slow)
            a->unshare_flags |= CLONE_NEWCGROUP;
        }
      c->child = do_clone3 (clone_flags, *cgfd, &c->pidfd);
    }
  if (c->child < 0 && errno == ENOSYS)
    c->child = do_clone_legacy (clone_flags, &c->pidfd);
  if (c->child == 0)
    return 0;
  e = errno;
  brig_userns_creator_leave (&owner);
  errno = e;
  return 0;
}

/* Clone the init and drive it until it is READY. */
int
create_spawn_init (struct create_ctx *c, int exec_fd, int child_console, brig_error *err)
{
  struct brig_init_args a = {
    .cfg = c->cfg, .o = c->o, .rootfs = c->rootfs, .bundle = c->bundle, .exec_fd = exec_fd,
    .console_fd = child_console, .close_fds = { -1, -1, -1, -1, -1, -1 },
    .stdio_fd = c->stdio_fd,
    .seccomp = c->seccomp, .rootfs_tree = -1,
  };
  unsigned long newf = c->ns.new_flags & ~(unsigned long) CLONE_NEWTIME;
  /* v1 hierarchies joined by the child itself, before the clone's fd */
  bool self = brig_cgroup_self_prepare (c->cg, &a.cg_self, !(newf & CLONE_NEWUSER));
  int cgfd = c->cg ? brig_cgroup_clone_fd (c->cg) : -1;
  bool slow = false, cgroupns_deferred, netdevs;
  struct ns_for_children nsc;
  struct brig_sync_msg m = { .fd = -1 };
  int sv[2], r;
  unsigned long long clone_flags;

  for (int i = 0; i < BRIG_NS_COUNT; i++)
    {
      a.join_fd[i] = -1;
      if (i != BRIG_NS_PID && i != BRIG_NS_TIME && c->ns.join_fd[i] >= 0)
        {
          a.join_fd[i] = c->ns.join_fd[i];
          slow = true;
        }
    }
  a.new_userns = (newf & CLONE_NEWUSER) || c->ns.join_fd[BRIG_NS_USER] >= 0;
  a.made_userns = (newf & CLONE_NEWUSER) != 0;
  a.hook_sync = brig_hooks_before_process (c->cfg->hooks);
  a.new_netns = (newf & CLONE_NEWNET) != 0;
  netdevs = c->cfg->linux && c->cfg->linux->net_devices_len > 0;
  a.seccomp_early = c->seccomp && c->cfg->process && !c->cfg->process->no_new_privileges;
  /* Without CLONE_INTO_CGROUP the init joins its cgroup after clone; its
   * cgroup namespace must be made after that, or its root would be ours. */
  cgroupns_deferred = (newf & CLONE_NEWCGROUP) && (cgfd < 0 || self);

  if (slow)
    {
      /* Joined namespaces first, with brig's rights, then new ones made
       * by the child so they belong to the right user namespace. */
      a.userns_via_sync = (newf & CLONE_NEWUSER) != 0;
      a.userns_owner = a.userns_via_sync ? brig_userns_owner (c->cfg->linux) : 0;
      a.unshare_flags = newf & ~(unsigned long) CLONE_NEWUSER;
      a.fork_init = (newf & CLONE_NEWPID) != 0;
      /* the network namespace exists once the init has made or joined it */
      a.netdev_sync = netdevs;
      clone_flags = 0;
    }
  else
    {
      clone_flags = newf & ~(unsigned long) (cgroupns_deferred ? CLONE_NEWCGROUP : 0);
      a.unshare_flags = cgroupns_deferred ? CLONE_NEWCGROUP : 0;
      /* Only the id maps must come before the first mount; the cgroup
       * placement (and linux.netDevices, moved into the network namespace
       * the clone made) is awaited at the rootfs's cgroup barrier. */
      a.go_late = !(newf & CLONE_NEWUSER);
    }

  /* an extension's root: an idmapped tree, a layer over root.path */
  if (BRIG_EXT_HOOK (create_rootfs))
    {
      struct brig_ext_create_info info;
      create_ext_info (c, &info);
      r = brig_ext->create_rootfs (&info, c->ext, &a.rootfs_tree, &a.root_layer, err);
      if (r < 0)
        {
          brig_cgroup_self_close (c->cg, &a.cg_self);
          return r;
        }
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      brig_cgroup_self_close (c->cg, &a.cg_self);
      if (a.rootfs_tree >= 0)
        close (a.rootfs_tree);
      return brig_error_errno (err, "socketpair");
    }
  c->sync_fd = sv[0];
  a.sync_fd = sv[1];
  a.close_fds[0] = sv[0];
  a.close_fds[1] = c->console_fd;
  /* The flock lives as long as any fd of that open file: the init must not
   * keep it held while it waits for start. */
  a.close_fds[2] = c->dirfd;
  /* The ownership record, open for writing until the parent appends the
   * init's line: a host file the init must not hold while it waits for
   * start (a process of the container with CAP_SYS_PTRACE reached it
   * through /proc/1/fd and rewrote what delete removes and kills). */
  a.close_fds[3] = c->record_fd;
  a.close_fds[4] = c->init_closes[0];
  a.close_fds[5] = c->init_closes[1];

  /* Every init spawned (reset's too) waits without the caller's fds. */
  if (!c->inherited_closed)
    close_inherited_fds (c->o->listen_fds + c->o->preserve_fds);
  r = enter_child_namespaces (c, &nsc, err);
  if (r < 0)
    {
      leave_child_namespaces (&nsc);
      close (sv[1]);
      if (a.rootfs_tree >= 0)
        close (a.rootfs_tree);
      brig_cgroup_self_close (c->cg, &a.cg_self);
      return r;
    }
  r = clone_init (c, clone_flags, &cgfd, &self, &a, slow, err);
  if (r < 0)
    {
      leave_child_namespaces (&nsc);
      close (sv[1]);
      if (a.rootfs_tree >= 0)
        close (a.rootfs_tree);
      brig_cgroup_self_close (c->cg, &a.cg_self);
      return r;
    }
  if (c->child == 0)
    brig_init_main (&a);
  r = errno;
  leave_child_namespaces (&nsc);
  close (sv[1]);
  if (a.rootfs_tree >= 0)
    close (a.rootfs_tree);
  /* the child has its copies: it writes them before anything else */
  brig_cgroup_self_close (c->cg, &a.cg_self);
  if (c->child < 0)
    return brig_error_set (err, r, "clone the container init");
  c->pid = c->child;

  if (a.userns_via_sync)
    {
      r = brig_sync_expect (c->sync_fd, BRIG_SYNC_USERNS, &m, err);
      brig_sync_msg_clear (&m);
      if (r < 0)
        return r;
    }
  if (newf & CLONE_NEWUSER)
    {
      r = brig_ns_write_id_maps (c->child, c->cfg->linux, err);
      if (r < 0)
        return r;
      if (a.userns_via_sync)
        brig_sync_send (c->sync_fd, BRIG_SYNC_USERNS_DONE, 0, NULL, 0, -1);
    }
  if (c->cg && cgfd < 0 && !self)
    {
      r = brig_cgroup_enter (c->cg, c->child, err);
      if (r < 0)
        return r;
    }
  if (netdevs && !a.netdev_sync)
    {
      r = brig_netdev_move (c->cfg->linux, c->child, &c->netdevs, err);
      if (r < 0)
        return r;
    }
  /* Before GO: once released, the init may get to execve (run) before
   * anything the parent does later; a forked init inherits the value. */
  if (c->cfg->process && c->cfg->process->has_oom_score_adj)
    {
      r = brig_process_set_oom_score_adj (c->child, c->cfg->process->oom_score_adj, err);
      if (r < 0)
        return r;
    }
  brig_sync_send (c->sync_fd, BRIG_SYNC_GO, 0, NULL, 0, -1);
  if (a.fork_init)
    {
      r = brig_sync_expect (c->sync_fd, BRIG_SYNC_INIT_PID, &m, err);
      if (r == 0)
        c->pid = (pid_t) atoi (m.data);
      brig_sync_msg_clear (&m);
      while (waitpid (c->child, NULL, 0) < 0 && errno == EINTR)
        ;
      c->child = 0;
      close (c->pidfd);
      c->pidfd = -1;
      if (r < 0)
        return r;
      c->pidfd = (int) syscall (SYS_pidfd_open, c->pid, 0);
      if (c->pidfd < 0)
        return brig_error_errno (err, "pidfd_open of the container init");
      brig_sync_send (c->sync_fd, BRIG_SYNC_GO, 0, NULL, 0, -1);
    }
  if (a.netdev_sync)
    {
      r = brig_sync_expect (c->sync_fd, BRIG_SYNC_NETDEV, &m, err);
      brig_sync_msg_clear (&m);
      if (r == 0)
        r = brig_netdev_move (c->cfg->linux, c->pid, &c->netdevs, err);
      if (r < 0)
        return r;
      brig_sync_send (c->sync_fd, BRIG_SYNC_NETDEV_DONE, 0, NULL, 0, -1);
    }
  if (a.hook_sync)
    {
      const oci_hooks *h = c->cfg->hooks;
      _cleanup_free_ char *json = NULL;
      r = rootfs_source_expect (c->sync_fd, BRIG_SYNC_HOOKS, &m, c->cfg, c->bundle, c->pid, err);
      brig_sync_msg_clear (&m);
      if (r < 0)
        return r;
      json = state_json_for_hooks (c, BRIG_STATUS_CREATING);
      /* in the bundle, as runc runs them (hooks use relative paths) */
      r = brig_hooks_run_in (h->prestart, h->prestart_len, "prestart", json, NULL, c->bundle,
                             err);
      if (r == 0)
        r = brig_hooks_run_in (h->create_runtime, h->create_runtime_len, "createRuntime", json,
                               NULL, c->bundle, err);
      if (r < 0)
        return r;
      {
        /* createContainer gets the state while creating, startContainer
         * the state once created: both travel now, NUL-separated. */
        _cleanup_free_ char *created = state_json_for_hooks (c, BRIG_STATUS_CREATED);
        size_t l1 = strlen (json) + 1, l2 = strlen (created);
        _cleanup_free_ char *both = xmalloc0 (l1 + l2 + 1);
        memcpy (both, json, l1);
        memcpy (both + l1, created, l2);
        brig_sync_send (c->sync_fd, BRIG_SYNC_HOOKS_DONE, 0, both, l1 + l2, -1);
      }
    }
  /* While the init builds its root: the final state, published with one
   * rename once the init is ready. */
  if (brig_proc_stat (c->pid, NULL, &c->st.pid_start_time) < 0)
    {
      brig_error_set (err, 0, "container init exited unexpectedly");
      return -EPIPE;
    }
  c->st.pid = c->pid;
  /* Next to the cgroup record, for a delete that finds state.json damaged. */
  r = brig_state_record_add_init (c->dirfd, c->record_fd, c->pid, c->st.pid_start_time, err);
  if (r < 0)
    return r;
  r = brig_state_stage (c->dirfd, &c->st, err);
  if (r < 0)
    return r;
  /* Recorded: the init may outlive us from now on (until now the kernel
   * kills it with us, init.c). Not awaited: the init takes it on its way
   * to READY, which it sends only once it has; an init already gone shows
   * at READY. */
  brig_sync_send (c->sync_fd, BRIG_SYNC_HANDOVER, 0, NULL, 0, -1);
  if (c->cfg->process && brig_seccomp_uses_notify (c->seccomp))
    {
      /* The init waits for nothing but the agent from here on: pass the
       * listener fd on before anything else. Until the filter, the init
       * may still ask for mount sources. */
      _cleanup_free_ char *json = NULL;
      _cleanup_close_ int nfd = -1;
      r = rootfs_source_expect (c->sync_fd, BRIG_SYNC_SECCOMP, &m, c->cfg, c->bundle, c->pid,
                                err);
      if (r == 0)
        r = brig_seccomp_take_listener (c->sync_fd, c->pid, &m, &nfd, err);
      brig_sync_msg_clear (&m);
      if (r < 0)
        return r;
      json = state_json_for_hooks (c, BRIG_STATUS_CREATING);
      r = brig_seccomp_send_notify (c->cfg->linux->seccomp, nfd, json, err);
      if (r == 0)
        r = brig_seccomp_await_process (c->sync_fd, c->cfg->linux->seccomp, err);
      if (r < 0)
        return r;
    }
  r = rootfs_source_expect (c->sync_fd, BRIG_SYNC_READY, &m, c->cfg, c->bundle, c->pid, err);
  brig_sync_msg_clear (&m);
  return r;
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

int
create_common (struct create_ctx *c, brig_error *err)
{
  _cleanup_close_ int exec_fd = -1, child_console = -1;
  struct brig_cgroup_config cgc;
  struct brig_ext_create_info info;
  const oci_process *p;
  int r;

  ensure_stdio ();
  /* First thing, before brig opens its own: fewer fds to ask about. */
  close_inherited_fds (c->o->listen_fds + c->o->preserve_fds);
  c->inherited_closed = true;
  r = brig_state_check_id (c->o->id, err);
  if (r < 0)
    return r;
  r = create_load_bundle (c, err);
  if (r < 0)
    return r;
  /* the caller's fds, not the config: before its check */
  r = brig_process_check_fds (c->o->listen_fds, c->o->preserve_fds, err);
  if (r < 0)
    return r;
  /* runc's words for a config it cannot apply, which scripts match (the
   * node policy is judged in there too: create_validate_config) */
  r = create_validate_config (c, err);
  if (r < 0)
    return brig_error_wrap (err, "invalid configuration");
  p = c->cfg->process;
  r = create_cgroup_shared (c->cfg, &c->shared_cgroup, err);
  if (r < 0)
    return r;
  create_ext_info (c, &info);
  if (BRIG_EXT_HOOK (create_check) && (r = brig_ext->create_check (&info, c->ext, err)) < 0)
    return r;

  if (c->ctx->notify_socket && *c->ctx->notify_socket && p
      && (r = brig_notify_check_host (c->ctx->notify_socket, err)) < 0)
    return r;

  r = brig_state_claim (c->ctx, c->o->id, &c->dirfd, err);
  if (r < 0)
    return r;
  info.dirfd = c->dirfd;
  if (BRIG_EXT_HOOK (create_claimed) && (r = brig_ext->create_claimed (&info, c->ext, err)) < 0)
    return r;
  if (c->ctx->notify_socket && *c->ctx->notify_socket && p)
    {
      /* run binds the socket before the process can send; create leaves
       * that to start, the command that relays. */
      r = brig_notify_setup (c->dirfd, c->cfg, err);
      if (r == 0 && c->mode != MODE_CREATE)
        r = brig_notify_open (c->dirfd, c->ctx->notify_socket, &c->notify, err);
      if (r < 0)
        return r;
    }
  cgc = (struct brig_cgroup_config) {
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
  r = brig_cgroup_create (&cgc, &c->cg, err);
  if (r < 0)
    return r;
  info.cg = c->cg;
  if (BRIG_EXT_HOOK (create_cgroup) && (r = brig_ext->create_cgroup (&info, c->ext, err)) < 0)
    return r;
  {
    /* The directory is new and nobody reads config.json before state.json
     * shows a live container: no need for write + rename. After the cgroup
     * is made, never before: its presence tells delete that the record's
     * `made` lines are final (state.h, BRIG_STATE_CONFIG). */
    _cleanup_close_ int fd = openat (c->dirfd, BRIG_STATE_CONFIG,
                                     O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || (r = brig_write_all (fd, c->config_buf, c->config_len)) < 0)
      return brig_error_set (err, fd < 0 ? errno : -r, "write the state's config.json");
  }
  /* state.json is written once, with the init's pid (create_spawn_init
   * stages it, brig_state_commit below publishes it). A create killed
   * before that leaves a directory without state.json, which load_common
   * reports as creating while this create holds the lock and as stopped
   * once it is gone; delete finds the cgroup in the ownership record
   * (written before the first directory was made), as it would have from a
   * first pid-less state.json. */
  create_fill_state (c, NULL);
  if (c->mode == MODE_CREATE)
    {
      r = create_listen_exec_socket (c->dirfd, &exec_fd, err);
      if (r < 0)
        return r;
    }
  if (p && p->has_terminal && p->terminal)
    {
      if (c->o->console_socket && *c->o->console_socket)
        {
          r = brig_terminal_connect_socket (c->o->console_socket, &child_console, err);
          if (r < 0)
            return brig_error_wrap (err, "--console-socket");
        }
      else
        {
          int sv[2];
          if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
            return brig_error_errno (err, "socketpair for the terminal");
          c->console_fd = sv[0];
          child_console = sv[1];
        }
    }
  r = create_spawn_init (c, exec_fd, child_console, err);
  if (r == -EPIPE)
    explain_init_death (c, err);
  if (r < 0)
    return r;
  info.pid = c->pid;
  if (BRIG_EXT_HOOK (create_started))
    brig_ext->create_started (&info, c->ext);
  r = brig_state_commit (c->dirfd, err);
  if (r < 0)
    return r;
  if (c->o->pid_file && *c->o->pid_file)
    {
      r = write_pid_file (c->o->pid_file, c->pid, err);
      if (r < 0)
        return r;
    }
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
