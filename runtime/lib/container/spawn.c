/* `create` and `run`, the parent side of the init's start: which
 * namespaces the clone makes and which the init makes or joins itself, the
 * clone (into the cgroup where the kernel allows), then the handshake with
 * the init (process/handshake.h) up to READY: id maps, cgroup placement,
 * netDevices, hooks, the init recorded, the seccomp listener. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

#include "cgroup/cgroup.h"
#include "container/create.h"
#include "container/internal.h"
#include "process/init.h"
#include "hooks.h"
#include "log.h"
#include "process/handshake.h"
#include "process/netdev.h"
#include "process/process.h"
#include "process/userns_owner.h"
#include "utils.h"

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

/* One spawn of the init: what it is given and how it is placed. */
struct spawn {
  struct brig_init_args a;
  unsigned long newf;       /* namespaces cloned or unshared (the time ns is
                               made here, around the clone) */
  bool self;                /* v1 hierarchies joined by the child itself */
  int cgfd;                 /* the cgroup2 directory to clone into, or -1 */
  bool slow;                /* the init joins namespaces first, then makes
                               the new ones itself */
  bool netdevs;             /* linux.netDevices to move */
  unsigned long long clone_flags;
};

/* What the init gets and which namespaces the clone makes. */
static void
spawn_plan (struct create_ctx *c, struct spawn *sp, int exec_fd, int child_console)
{
  struct brig_init_args *a = &sp->a;
  unsigned long newf = c->ns.new_flags & ~(unsigned long) CLONE_NEWTIME;
  bool cgroupns_deferred;

  *a = (struct brig_init_args) {
    .cfg = c->cfg, .id = c->o->id, .console_socket = c->o->console_socket,
    .no_pivot = c->o->no_pivot, .no_new_keyring = c->o->no_new_keyring,
    .preserve_fds = c->o->preserve_fds, .listen_fds = c->o->listen_fds, .rootfs = c->rootfs, .bundle = c->bundle, .exec_fd = exec_fd,
    .console_fd = child_console, .close_fds = { -1, -1, -1, -1, -1, -1 },
    .stdio_fd = c->stdio_fd, .seccomp = c->seccomp, .rootfs_tree = -1, .sync_fd = -1,
  };
  sp->newf = newf;
  /* With a user namespace of its own, a keyring exec joins by name
   * (state.json's keyring), new per init; its owner, container root, is
   * then the container's alone. Without one the owner is a uid other
   * containers share: the init's keyring stays unsearchable and unnamed
   * in the state (process.h). */
  free (c->st.keyring);
  c->st.keyring = c->o->no_new_keyring || !(newf & CLONE_NEWUSER) ? NULL
                  : brig_process_session_keyring_name (c->o->id);
  a->keyring = c->st.keyring;
  /* v1 hierarchies joined by the child itself, before the clone's fd */
  sp->self = brig_cgroup_self_prepare (c->cg, &a->cg_self, !(newf & CLONE_NEWUSER));
  sp->cgfd = c->cg ? brig_cgroup_clone_fd (c->cg) : -1;
  sp->slow = false;
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    {
      a->join_fd[i] = -1;
      if (i != BRIG_NS_PID && i != BRIG_NS_TIME && c->ns.join_fd[i] >= 0)
        {
          a->join_fd[i] = c->ns.join_fd[i];
          sp->slow = true;
        }
    }
  a->new_userns = (newf & CLONE_NEWUSER) || c->ns.join_fd[BRIG_NS_USER] >= 0;
  a->made_userns = (newf & CLONE_NEWUSER) != 0;
  a->hook_sync = brig_hooks_before_process (c->cfg->hooks);
  a->layer_seed = c->o->seed != NULL;
  a->new_netns = (newf & CLONE_NEWNET) != 0;
  sp->netdevs = c->cfg->linux && c->cfg->linux->net_devices_len > 0;
  a->seccomp_early = c->seccomp && c->cfg->process && !c->cfg->process->no_new_privileges;
  /* Without CLONE_INTO_CGROUP the init joins its cgroup after clone; its
   * cgroup namespace must be made after that, or its root would be ours. */
  cgroupns_deferred = (newf & CLONE_NEWCGROUP) && (sp->cgfd < 0 || sp->self);

  if (sp->slow)
    {
      /* Joined namespaces first, with brig's rights, then new ones made
       * by the child so they belong to the right user namespace. */
      a->userns_via_sync = (newf & CLONE_NEWUSER) != 0;
      a->userns_owner = a->userns_via_sync ? brig_userns_owner (c->cfg->linux) : 0;
      a->unshare_flags = newf & ~(unsigned long) CLONE_NEWUSER;
      a->fork_init = (newf & CLONE_NEWPID) != 0;
      /* the network namespace exists once the init has made or joined it */
      a->netdev_sync = sp->netdevs;
      sp->clone_flags = 0;
    }
  else
    {
      sp->clone_flags = newf & ~(unsigned long) (cgroupns_deferred ? CLONE_NEWCGROUP : 0);
      a->unshare_flags = cgroupns_deferred ? CLONE_NEWCGROUP : 0;
      /* Only the id maps must come before the first mount; the cgroup
       * placement (and linux.netDevices, moved into the network namespace
       * the clone made) is awaited at the rootfs's cgroup barrier. */
      a->go_late = !(newf & CLONE_NEWUSER);
    }
}

/* The fds the init closes first: none of brig's may stay open in it. */
static void
spawn_close_fds (struct create_ctx *c, struct spawn *sp, int child_sync)
{
  int *fds = sp->a.close_fds;

  sp->a.sync_fd = child_sync;
  fds[0] = c->sync_fd;
  fds[1] = c->console_fd;
  /* The flock lives as long as any fd of that open file: the init must not
   * keep it held while it waits for start. */
  fds[2] = c->dirfd;
  /* The ownership record, open for writing until the parent appends the
   * init's line: a host file the init must not hold while it waits for
   * start (a process of the container with CAP_SYS_PTRACE reached it
   * through /proc/1/fd and rewrote what delete removes and kills). */
  fds[3] = c->record_fd;
  fds[4] = c->init_closes[0];
  fds[5] = c->init_closes[1];
}

/* What the parent held for the clone only. */
static void
spawn_release (struct create_ctx *c, struct spawn *sp)
{
  if (sp->a.sync_fd >= 0)
    close (brig_steal_fd (sp->a.sync_fd));
  if (sp->a.rootfs_tree >= 0)
    close (brig_steal_fd (sp->a.rootfs_tree));
  /* the child has its copies: it writes them before anything else */
  brig_cgroup_self_close (c->cg, &sp->a.cg_self);
}

/* The socketpair, then the clone; the child becomes the init and never
 * returns here. */
static int
spawn_clone (struct create_ctx *c, struct spawn *sp, brig_error *err)
{
  struct ns_for_children nsc;
  int sv[2], r, e;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      spawn_release (c, sp);
      return brig_error_errno (err, "socketpair");
    }
  c->sync_fd = sv[0];
  spawn_close_fds (c, sp, sv[1]);
  /* Every init spawned (reset's too) waits without the caller's fds. */
  if (!c->inherited_closed)
    create_close_inherited_fds (c->o->listen_fds + c->o->preserve_fds);
  r = enter_child_namespaces (c, &nsc, err);
  if (r == 0)
    r = clone_init (c, sp->clone_flags, &sp->cgfd, &sp->self, &sp->a, sp->slow, err);
  if (r == 0 && c->child == 0)
    brig_init_main (&sp->a);
  e = errno;
  leave_child_namespaces (&nsc);
  spawn_release (c, sp);
  if (r < 0)
    return r;
  if (c->child < 0)
    return brig_error_set (err, e, "clone the container init");
  c->pid = c->child;
  return 0;
}

/* The real init, forked by the clone into the new pid namespace: its pid,
 * and a pidfd of it instead of the clone's, which has exited. */
static int
adopt_forked_init (struct create_ctx *c, brig_error *err)
{
  int r = brig_hs_parent_forked (c->sync_fd, &c->pid, err);

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
  brig_hs_parent_go (c->sync_fd);
  return 0;
}

/* The id maps, the cgroup, the early netDevices and the OOM score; then GO
 * (and the forked init's pid). */
static int
place_init (struct create_ctx *c, struct spawn *sp, brig_error *err)
{
  const oci_process *p = c->cfg->process;
  int r;

  if ((sp->newf & CLONE_NEWUSER)
      && (r = brig_hs_parent_userns (c->sync_fd, sp->a.userns_via_sync, c->child, c->cfg->linux,
                                     err)) < 0)
    return r;
  if (c->cg && sp->cgfd < 0 && !sp->self && (r = brig_cgroup_enter (c->cg, c->child, err)) < 0)
    return r;
  if (sp->netdevs && !sp->a.netdev_sync
      && (r = brig_netdev_move (c->cfg->linux, c->child, &c->netdevs, err)) < 0)
    return r;
  /* Before GO: once released, the init may get to execve (run) before
   * anything the parent does later; a forked init inherits the value. */
  if (p && p->has_oom_score_adj
      && (r = brig_process_set_oom_score_adj (c->child, p->oom_score_adj, err)) < 0)
    return r;
  brig_hs_parent_go (c->sync_fd);
  return sp->a.fork_init ? adopt_forked_init (c, err) : 0;
}

/* HOOKS: prestart and createRuntime, in the bundle (as runc runs them:
 * hooks use relative paths), with the state while creating. */
static int
run_create_hooks (struct create_ctx *c, brig_error *err)
{
  const oci_hooks *h = c->cfg->hooks;
  _cleanup_free_ char *json = NULL, *created = NULL;
  int r = brig_hs_parent_expect (c->sync_fd, BRIG_SYNC_HOOKS, c->cfg, c->bundle, c->pid, err);

  if (r < 0)
    return r;
  json = create_state_json (c, BRIG_STATUS_CREATING);
  r = brig_hooks_run_in (h->prestart, h->prestart_len, "prestart", json, NULL, c->bundle, err);
  if (r == 0)
    r = brig_hooks_run_in (h->create_runtime, h->create_runtime_len, "createRuntime", json,
                           NULL, c->bundle, err);
  if (r < 0)
    return r;
  created = create_state_json (c, BRIG_STATUS_CREATED);
  brig_hs_parent_hooks_done (c->sync_fd, json, created);
  return 0;
}

/* LAYER_SEED: the caller fills the new layer (brig fork). */
static int
seed_layer (void *arg, int upper, brig_error *err)
{
  struct create_ctx *c = arg;
  return c->o->seed (upper, c->pid, c->cg, c->o->seed_data, err);
}

/* While the init builds its root: the final state, staged for one rename
 * once the init is ready; the init line beside the cgroup record; then
 * HANDOVER: the init may outlive us from now on (until now the kernel
 * kills it with us, init.c). */
static int
record_init (struct create_ctx *c, brig_error *err)
{
  int r;

  if (brig_proc_stat (c->pid, NULL, &c->st.pid_start_time) < 0)
    {
      brig_error_set (err, 0, "container init exited unexpectedly");
      return -EPIPE;
    }
  c->st.pid = c->pid;
  /* Next to the cgroup record, for a delete that finds state.json damaged. */
  r = brig_state_record_add_init (c->dirfd, c->record_fd, c->pid, c->st.pid_start_time, err);
  if (r == 0)
    r = brig_state_stage (c->dirfd, &c->st, err);
  if (r < 0)
    return r;
  brig_hs_parent_handover (c->sync_fd);
  return 0;
}

/* SECCOMP: the init waits for nothing but the agent from here on: pass
 * the listener fd on before anything else. */
static int
pass_seccomp_listener (struct create_ctx *c, brig_error *err)
{
  _cleanup_free_ char *json = NULL;
  _cleanup_close_ int nfd = -1;
  int r = brig_hs_parent_seccomp (c->sync_fd, c->cfg, c->bundle, c->pid, &nfd, err);

  if (r < 0)
    return r;
  json = create_state_json (c, BRIG_STATUS_CREATING);
  r = brig_seccomp_send_notify (c->cfg->linux->seccomp, nfd, json, err);
  if (r == 0)
    r = brig_seccomp_await_process (c->sync_fd, c->cfg->linux->seccomp, err);
  return r;
}

/* Clone the init and drive it until it is READY (process/handshake.h). */
int
create_spawn_init (struct create_ctx *c, int exec_fd, int child_console, brig_error *err)
{
  struct spawn sp;
  int r;

  spawn_plan (c, &sp, exec_fd, child_console);
  /* an extension's root: an idmapped tree, a layer over root.path */
  if (BRIG_EXT_HOOK (create_rootfs))
    {
      struct brig_ext_create_info info;
      create_ext_info (c, &info);
      r = brig_ext->create_rootfs (&info, c->ext, &sp.a.rootfs_tree, &sp.a.root_layer, err);
      if (r < 0)
        {
          brig_cgroup_self_close (c->cg, &sp.a.cg_self);
          return r;
        }
    }
  if ((r = spawn_clone (c, &sp, err)) < 0 || (r = place_init (c, &sp, err)) < 0)
    return r;
  if (sp.a.netdev_sync
      && (r = brig_hs_parent_netdev (c->sync_fd, c->cfg->linux, c->pid, &c->netdevs, err)) < 0)
    return r;
  if (sp.a.layer_seed && (r = brig_hs_parent_layer_seed (c->sync_fd, seed_layer, c, err)) < 0)
    return r;
  if (sp.a.hook_sync && (r = run_create_hooks (c, err)) < 0)
    return r;
  if ((r = record_init (c, err)) < 0)
    return r;
  if (c->cfg->process && brig_seccomp_uses_notify (c->seccomp)
      && (r = pass_seccomp_listener (c, err)) < 0)
    return r;
  return brig_hs_parent_expect (c->sync_fd, BRIG_SYNC_READY, c->cfg, c->bundle, c->pid, err);
}


char *
create_state_json (struct create_ctx *c, enum brig_status status)
{
  brig_container tmp = { .id = (char *) c->o->id, .dirfd = -1, .st = c->st, .status = status,
                         .pidfd = -1 };
  tmp.st.pid = c->pid;
  return brig_container_state_json (&tmp, -1, false);
}

/* Close what the caller leaked to brig beyond stdio and --preserve-fds (fds
 * without close-on-exec: every fd brig opens itself has it). The init may
 * wait in "created" for a long time, and a pipe held open there keeps the
 * engine reading create's output from ever seeing end-of-file. brig needs
 * none of them either. create closes them first thing, before brig opens
 * its own (bundle, state, cgroups): the scan then asks fcntl about a few fds
 * instead of a dozen; create_spawn_init for any other caller (reset). */
void
create_close_inherited_fds (int preserve_fds)
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
