/* The container init: the child of `create`/`run` after clone. It finishes
 * the namespaces, builds the filesystem view, becomes the user process and
 * waits for `start`. In order:
 *
 *   join namespaces by path; unshare the user ns (parent writes the maps);
 *   wait for the parent (cgroup placement); unshare the rest; fork the real
 *   init when a new pid ns was unshared; uid/gid 0 in a new user ns;
 *   [parent: linux.netDevices moved in];
 *   session keyring; rootfs_prepare; [parent: prestart, createRuntime hooks];
 *   (go_late, the common case of a clone into new namespaces without a user
 *   ns: the wait for the placement (and the devices) and the cgroup ns
 *   move to rootfs_prepare's cgroup barrier or its end, so the mounts
 *   overlap the parent's cgroup writes);
 *   createContainer hooks; rootfs_pivot; terminal; cwd created when
 *   missing; hostname, domainname;
 *   sysctl; rootfs_finalize; personality/scheduler/...; LSM exec labels;
 *   HANDOVER from the parent (the init line is written: from here the init
 *   may outlive it; until here the kernel kills it with its parent);
 *   rlimits, caps bounding, user, caps, cwd, executable lookup,
 *   no_new_privs (process.h); seccomp now if it notifies (its listener
 *   fd goes to the parent first); READY to the parent; wait for `start` on
 *   the exec socket;
 *   startContainer hooks; seccomp (unless loaded earlier); execve.
 *
 * Every error goes back to the parent as a SYNC_ERROR message while the
 * parent listens; after that (create has returned) it goes to stderr. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/sched.h>

#include "container/internal.h"
#include "process/groups.h"
#include "hooks.h"
#include "log.h"
#include "process/lsm.h"
#include "process/netdev.h"
#include "process/procattr.h"
#include "process/process.h"
#include "rootfs/rootfs.h"
#include "sync.h"
#include "process/terminal.h"
#include "process/userns_owner.h"
#include "utils.h"

struct init_state {
  struct brig_init_args *a;
  bool parent_listens;      /* errors can still go over the sync socket */
  int start_fd;             /* connection from `start`: errors go there */
  char *state_json;         /* for createContainer hooks (status creating) */
  char *state_json_start;   /* for startContainer hooks (status created) */
  bool placed;              /* GO received: in its cgroups, namespaces complete */
  bool handed_over;         /* HANDOVER received: may outlive the parent */
};

/* A pid-1 process ignores every signal it has no handler for, even from
 * the host; while it waits for `start` the usual terminating signals make
 * the init exit, as `kill` of a created container expects. execve resets
 * the handlers. (SIGKILL always works; `run` never waits.) */
static void
on_term_signal (int sig)
{
  _exit (128 + sig);
}

static void
install_signal_handlers (void)
{
  static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2,
                              SIGALRM, SIGPIPE, SIGABRT };
  struct sigaction sa = { .sa_handler = on_term_signal };

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (sigs); i++)
    sigaction (sigs[i], &sa, NULL);
}

static void
reset_signal_mask (void)
{
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}

/* The init must not outlive a create (run, reset) that dies before its
 * record names the init: nothing could find it to kill it, and it would
 * wait for `start` forever in the container's cgroups (docs/security.md,
 * "a killed create"). Until HANDOVER the kernel kills it with its parent
 * (PR_SET_PDEATHSIG). That setting is cleared by fork and by a credential
 * change (another euid, egid, fsuid or fsgid, or fewer capabilities: the
 * uid 0 of a new user namespace, a joined one), so it is armed again after
 * each; and the parent may be gone already, which a pid-1 init cannot
 * learn from getppid (0): the parent's end of the sync socket hangs up as
 * it exits, before its children are told. (Besides, every wait before
 * HANDOVER is a read of the sync socket, which ends at EOF.) */
static void
arm_parent_death (struct init_state *s)
{
  struct pollfd p = { .fd = s->a->sync_fd, .events = POLLIN };

  if (s->handed_over)
    return;
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit (1);
  if (poll (&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
    _exit (1);
}

/* HANDOVER: the parent wrote the init line; from here the init outlives it
 * (create returns, a killed run leaves a recorded container). */
static void
take_handover (struct init_state *s)
{
  prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  s->handed_over = true;
}

static int
expect (struct init_state *s, uint32_t type, struct brig_sync_msg *m, brig_error *err)
{
  int r;

  /* HANDOVER comes when the parent has recorded the init, between any two
   * of the init's requests (a mount source's, say): taken on the way. */
  while ((r = brig_sync_recv (s->a->sync_fd, m)) == 0 && m->type == BRIG_SYNC_HANDOVER
         && type != BRIG_SYNC_HANDOVER)
    {
      take_handover (s);
      brig_sync_msg_clear (m);
    }
  r = brig_sync_check (r, type, m, err);
  if (r < 0)
    {
      /* The parent died or gave up: nothing to report to. */
      brig_sync_msg_clear (m);
      _exit (1);
    }
  return 0;
}

/* Before the init becomes the process (credentials, seccomp, then READY
 * and the wait for start or execve): only a recorded init goes on. */
static void
await_handover (struct init_state *s, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };

  if (s->handed_over)
    return;
  expect (s, BRIG_SYNC_HANDOVER, &m, err);
  brig_sync_msg_clear (&m);
  take_handover (s);
}

/* Clone the real init into the pid (and time) namespace unshared by the
 * calling process, as a sibling: CLONE_PARENT makes it the child of the brig
 * process, which can wait for it (foreground run) and whose subreaper adopts
 * it. Returns 0 in the new init, never in the caller. */
static int
fork_real_init (struct init_state *s, brig_error *err)
{
  struct clone_args ca = { .flags = CLONE_PARENT, .exit_signal = 0 };
  pid_t pid;

  pid = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
  if (pid < 0 && errno == ENOSYS)
    pid = (pid_t) syscall (SYS_clone, (unsigned long) CLONE_PARENT, 0UL, NULL, NULL, 0UL);
  if (pid < 0)
    return brig_error_errno (err, "clone the container init");
  if (pid == 0)
    return 0;
  char buf[16];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  brig_sync_send (s->a->sync_fd, BRIG_SYNC_INIT_PID, 0, buf, (size_t) n, -1);
  _exit (0);
}

/* Wait until the parent has placed this process in its cgroups (GO), then
 * unshare what must come after that (the cgroup namespace, rooted at the
 * process's cgroup). With go_late this is the rootfs's cgroup barrier:
 * mounts that do not depend on the cgroup are made meanwhile. */
static int
await_placement (void *arg, brig_error *err)
{
  struct init_state *s = arg;
  struct brig_sync_msg m = { .fd = -1 };

  if (s->placed)
    return 0;
  expect (s, BRIG_SYNC_GO, &m, err);
  brig_sync_msg_clear (&m);
  s->placed = true;
  if (s->a->unshare_flags && unshare ((int) s->a->unshare_flags) < 0)
    return brig_error_errno (err, "unshare namespaces");
  return 0;
}

/* rootfs_prepare's open_source: the parent opens mounts[i].source with
 * brig's rights (rootfs/source.c). The fd is O_CLOEXEC (MSG_CMSG_CLOEXEC)
 * and closed by the caller once mounted. */
static int
request_mount_source (void *arg, size_t i, brig_error *err)
{
  struct init_state *s = arg;
  struct brig_sync_msg m = { .fd = -1 };
  char buf[24];
  int n = snprintf (buf, sizeof buf, "%zu", i), fd;

  if (brig_sync_send (s->a->sync_fd, BRIG_SYNC_MOUNT_SOURCE, 0, buf, (size_t) n, -1) < 0)
    return brig_error_errno (err, "ask for the source of mounts[%zu]", i);
  expect (s, BRIG_SYNC_MOUNT_SOURCE_FD, &m, err);
  if (m.code != 0 || m.fd < 0)
    {
      int r = brig_error_set_raw (err, m.code ? m.code : EPROTO,
                                  m.data ? m.data : "no fd for a mount source");
      brig_sync_msg_clear (&m);
      return r;
    }
  fd = m.fd;
  m.fd = -1;
  brig_sync_msg_clear (&m);
  return fd;
}

static int
setup_namespaces (struct init_state *s, brig_error *err)
{
  struct brig_init_args *a = s->a;
  struct brig_sync_msg m = { .fd = -1 };
  int r;

  r = brig_ns_join (a->join_fd, err);
  if (r < 0)
    return r;
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    if (a->join_fd[i] >= 0)
      {
        close (a->join_fd[i]);
        a->join_fd[i] = -1;
      }
  if (a->userns_via_sync)
    {
      /* Owned by container root's host uid: its per-user counts are then
       * not host root's (userns_owner.h). Nothing below needs the host's
       * privilege: the namespaces to join are joined. */
      r = brig_userns_creator_become (a->userns_owner, err);
      if (r < 0)
        return r;
      if (unshare (CLONE_NEWUSER) < 0)
        return brig_error_errno (err, "unshare user namespace");
      brig_sync_send (a->sync_fd, BRIG_SYNC_USERNS, 0, NULL, 0, -1);
      expect (s, BRIG_SYNC_USERNS_DONE, &m, err);
      brig_sync_msg_clear (&m);
    }
  if (a->go_late)
    return 0;
  r = await_placement (s, err);
  if (r < 0)
    return r;
  if (a->fork_init)
    {
      r = fork_real_init (s, err);
      if (r < 0)
        return r;
      /* a new process: fork cleared the parent-death signal */
      arm_parent_death (s);
      /* The parent must hear of this pid before anything from it. */
      expect (s, BRIG_SYNC_GO, &m, err);
      brig_sync_msg_clear (&m);
    }
  if (a->new_userns)
    {
      /* Become root of the new user namespace: the uid brig had is not
       * necessarily mapped in it. */
      if (setresgid (0, 0, 0) < 0)
        return brig_error_errno (err, "setgid 0 in the user namespace");
      if (setresuid (0, 0, 0) < 0)
        return brig_error_errno (err, "setuid 0 in the user namespace");
      /* unless the config keeps the caller's (groups.h: create checked
       * that the namespace maps every one of them) */
      bool keep = false;
      (void) brig_keep_groups_parse (a->cfg->annotations, &keep, NULL);
      if (!keep)
        setgroups (0, NULL);
      if (a->made_userns && (r = brig_userns_write_limits (err)) < 0)
        return r;
    }
  /* the uid change (or a joined user namespace) cleared it */
  arm_parent_death (s);
  return 0;
}

/* Block until `start` connects to the exec socket; the connection stays
 * open as the channel for errors until execve closes it. */
static int
wait_start (struct init_state *s, brig_error *err)
{
  int conn;

  do
    conn = accept4 (s->a->exec_fd, NULL, NULL, SOCK_CLOEXEC);
  while (conn < 0 && errno == EINTR);
  if (conn < 0)
    return brig_error_errno (err, "wait for start on the exec socket");
  close (s->a->exec_fd);
  s->a->exec_fd = -1;
  /* start waits on it for what follows: a startContainer hook's or
   * execve's error, or EOF once execve closed it (close-on-exec). */
  s->start_fd = conn;
  return 0;
}

static int
run_init (struct init_state *s, struct brig_process *pr, brig_error *err)
{
  struct brig_init_args *a = s->a;
  const oci_config *cfg = a->cfg;
  const oci_hooks *h = cfg->hooks;
  struct brig_sync_msg m = { .fd = -1 };
  struct brig_rootfs_opts ro = { .no_pivot = a->o->no_pivot, .userns = a->new_userns,
                                 .console_fd = -1, .bundle = a->bundle,
                                 .cgroup_barrier = await_placement, .barrier_arg = s,
                                 .open_source = a->new_userns ? request_mount_source : NULL,
                                 .layer = a->root_layer,
                                 .rootfs_tree = a->rootfs_tree };
  _cleanup_close_ int rootfd = -1;
  __attribute__ ((cleanup (brig_rootfs_procfs_clear))) struct brig_rootfs_procfs procfs
    = { NULL, NULL };
  int r;

  ro.procfs_out = &procfs;
  /* The rootfs's fd from the mounts serves the pivot and finalize, unless
   * createContainer hooks run in between (they may mount over the path). */
  if (!(h && h->create_container_len > 0))
    ro.rootfd_out = &rootfd;

  /* Into its v1 cgroups before anything is forked or charged; the parent
   * places a child that cannot (brig_cgroup_self_open). */
  r = brig_cgroup_self_join (&a->cg_self, err);
  if (r < 0)
    return r;
  r = setup_namespaces (s, err);
  if (r < 0)
    return r;
  if (a->netdev_sync)
    {
      /* The network namespace exists now (made or joined): the parent
       * moves linux.netDevices into it before anything runs here. */
      brig_sync_send (a->sync_fd, BRIG_SYNC_NETDEV, 0, NULL, 0, -1);
      expect (s, BRIG_SYNC_NETDEV_DONE, &m, err);
      brig_sync_msg_clear (&m);
    }
  /* Only a namespace made for this container: a joined one is someone
   * else's to configure. */
  if (a->new_netns && (r = brig_netdev_loopback_up (err)) < 0)
    return r;
  if (!a->o->no_new_keyring)
    {
      _cleanup_free_ char *ring = xasprintf ("_ses.%s", a->o->id);
      if ((r = brig_process_join_session_keyring (ring, err)) < 0)
        return r;
    }

  r = rootfs_prepare (cfg, a->rootfs, &ro, err);
  if (a->rootfs_tree >= 0)
    close (brig_steal_fd (a->rootfs_tree));
  if (r == 0)
    r = await_placement (s, err);
  if (r < 0)
    return r;
  if (a->hook_sync)
    {
      brig_sync_send (a->sync_fd, BRIG_SYNC_HOOKS, 0, NULL, 0, -1);
      expect (s, BRIG_SYNC_HOOKS_DONE, &m, err);
      /* Two documents: the state while creating, then once created. */
      s->state_json = brig_steal_ptr (m.data);
      if (strlen (s->state_json) < m.len)
        s->state_json_start = s->state_json + strlen (s->state_json) + 1;
      else
        s->state_json_start = s->state_json;
      brig_sync_msg_clear (&m);
    }
  if (h && h->create_container_len > 0)
    {
      /* As runc: the process's variables, not brig's. HOME is left as
       * given: the container's /etc/passwd is not the root yet. */
      char **env = cfg->process ? brig_process_env_list (cfg->process) : NULL;
      /* In the container's root, as runc runs them: the rootfs with every
       * mount made, in the container's mount namespace (a hook's relative
       * paths name the container's files). */
      r = brig_hooks_run_in (h->create_container, h->create_container_len, "createContainer",
                             s->state_json, env, a->rootfs, err);
      brig_strv_free (env);
      if (r < 0)
        return r;
    }
  r = rootfs_pivot (cfg, a->rootfs, rootfd, a->o->no_pivot, pr->stdio_st, &pr->stdio_known,
                    err);
  if (r < 0)
    return r;
  pr->at_root = true;
  if (a->console_fd >= 0)
    {
      /* the terminal replaces stdio */
      pr->stdio_known = 0;
      bool proxied = a->o->console_socket == NULL || *a->o->console_socket == '\0';
      r = brig_terminal_setup (a->console_fd, cfg->process->console_size, true, proxied, err);
      a->console_fd = -1;
      if (r < 0)
        return r;
    }
  /* As runc: a missing cwd is created (inside the new root, so the image's
   * symlinks cannot lead it out; before root.readonly applies). */
  if (cfg->process && cfg->process->cwd && strcmp (cfg->process->cwd, "/") != 0
      && access (cfg->process->cwd, F_OK) < 0 && errno == ENOENT)
    {
      r = brig_mkdir_p (cfg->process->cwd, 0755);
      if (r < 0)
        return brig_error_set (err, -r, "create cwd %s", cfg->process->cwd);
    }
  r = brig_process_set_hostname (cfg->hostname, cfg->domainname, err);
  if (r < 0)
    return r;
  if (cfg->linux)
    {
      r = brig_process_apply_sysctl (cfg->linux->sysctl, err);
      if (r < 0)
        return r;
    }
  r = rootfs_finalize (cfg, rootfd, &procfs, err);
  if (r < 0)
    return r;
  /* Nothing of the mount setup stays open while the init waits for start. */
  if (rootfd >= 0)
    close (brig_steal_fd (rootfd));
  r = brig_procattr_apply (cfg, cfg->process, err);
  if (r < 0)
    return r;
  r = brig_lsm_apply_exec_labels (cfg->process, err);
  if (r < 0)
    return r;
  await_handover (s, err);
  /* Without process (allowed at create, spec 1.3) the init only holds the
   * namespaces: start refuses to release it, delete kills it. */
  if (pr->p && (r = brig_process_become (pr, err)) < 0)
    return r;

  if (a->exec_fd >= 0)
    install_signal_handlers ();
  /* SCMP_ACT_NOTIFY with noNewPrivileges: the filter comes now, while the
   * parent listens for its fd, not after start. */
  if (pr->p && pr->notify_sock >= 0 && (r = brig_process_load_seccomp (pr, err)) < 0)
    return r;
  /* Set up: the parent writes the state and (create) returns. */
  r = brig_sync_send (a->sync_fd, BRIG_SYNC_READY, 0, NULL, 0, -1);
  if (r < 0)
    _exit (1);
  if (a->exec_fd >= 0)
    {
      s->parent_listens = false;
      r = wait_start (s, err);
      if (r < 0)
        return r;
    }
  if (h && h->start_container_len > 0)
    {
      /* The environment execve will pass (built by become), as runc. */
      r = brig_hooks_run_env (h->start_container, h->start_container_len, "startContainer",
                              s->state_json_start, pr->envp, err);
      if (r < 0)
        return r;
    }
  if (pr->p == NULL)
    return brig_error_say (err, EINVAL, "config.json has no process to start");
  return brig_process_exec (pr, err);
}

void
brig_init_main (struct brig_init_args *a)
{
  struct init_state s = { .a = a, .parent_listens = true, .start_fd = -1 };
  struct brig_process pr;
  brig_error err = { 0 };

  arm_parent_death (&s);
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (a->close_fds); i++)
    if (a->close_fds[i] >= 0)
      close (a->close_fds[i]);
  if (a->stdio_fd >= 0)
    {
      for (int fd = 0; fd < 3; fd++)
        dup2 (a->stdio_fd, fd);
      /* the host's /dev/null (reset): 0-2 are enough until the pivot
         replaces them with the container's */
      if (a->stdio_fd > 2)
        close (a->stdio_fd);
    }
  reset_signal_mask ();
  brig_process_init (&pr, a->cfg->process, a->seccomp, a->o->preserve_fds);
  pr.seccomp_early = a->seccomp_early;
  if (brig_seccomp_uses_notify (a->seccomp))
    pr.notify_sock = a->sync_fd;
  pr.listen_fds = a->o->listen_fds;
  pr.caps_checked = true; /* create_validate_config warned */
  /* create checked the value and where keeping the groups is safe */
  (void) brig_keep_groups_parse (a->cfg->annotations, &pr.keep_groups, NULL);

  run_init (&s, &pr, &err);
  if (s.parent_listens)
    brig_sync_send_error (a->sync_fd, &err);
  else if (s.start_fd >= 0)
    brig_sync_send_error (s.start_fd, &err);
  else
    brig_log (BRIG_LOG_ERROR, "%s", err.msg ? err.msg : "container init failed");
  _exit (127);
}
