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
 *   startContainer hooks; seccomp (unless loaded earlier); execve, or with
 *   run.brig.init brig's own pid 1 (process/reaper.h).
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

#include "process/init.h"
#include "process/groups.h"
#include "hooks.h"
#include "log.h"
#include "process/lsm.h"
#include "process/netdev.h"
#include "process/procattr.h"
#include "process/reaper.h"
#include "process/process.h"
#include "rootfs/rootfs.h"
#include "process/handshake.h"
#include "process/terminal.h"
#include "process/userns_owner.h"
#include "utils.h"

struct init_state {
  struct brig_init_args *a;
  bool parent_listens;      /* errors can still go over the sync socket */
  int start_fd;             /* connection from `start`: errors go there */
  char *state_json;         /* for createContainer hooks (status creating) */
  const char *state_json_start; /* for startContainer hooks (status created) */
  struct brig_hs_init hs;   /* its end of the handshake (process/handshake.h) */
  enum brig_init_mode mode; /* run.brig.init (process/reaper.h) */
  int upper_fd;             /* the ephemeral layer's upper directory, kept
                               by brig's pid 1, or -1 */
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
  brig_hs_init_forked (&s->hs, pid);
  _exit (0);
}

static int
setup_namespaces (struct init_state *s, brig_error *err)
{
  struct brig_init_args *a = s->a;
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
      brig_hs_init_userns (&s->hs, err);
    }
  if (a->go_late)
    return 0;
  r = brig_hs_init_placed (&s->hs, err);
  if (r < 0)
    return r;
  if (a->fork_init)
    {
      r = fork_real_init (s, err);
      if (r < 0)
        return r;
      /* a new process: fork cleared the parent-death signal */
      brig_hs_init_arm_parent_death (&s->hs);
      brig_hs_init_await_go (&s->hs, err);
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
  brig_hs_init_arm_parent_death (&s->hs);
  return 0;
}

/* Set "k=v" in the malloc'd environment *env, replacing k's entry. */
static void
env_put (char ***env, const char *kv, size_t len)
{
  size_t klen = (size_t) ((const char *) memchr (kv, '=', len) - kv), n = 0;
  char **v = *env;

  for (; v && v[n]; n++)
    if (strncmp (v[n], kv, klen + 1) == 0)
      {
        free (v[n]);
        v[n] = xasprintf ("%.*s", (int) len, kv);
        return;
      }
  v = xrealloc (v, (n + 2) * sizeof *v);
  v[n] = xasprintf ("%.*s", (int) len, kv);
  v[n + 1] = NULL;
  *env = v;
}

/* The START message, the first on start's connection (handshake.h): the
 * entries a claim adds to the process's environment (its --env). A start
 * of an older brig sends none: after 1 s the process starts as it is. An
 * entry without '=' or with an empty name is refused (claim checked them:
 * not the tenant's to send). */
static int
read_start_message (int conn, struct brig_process *pr, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r;

  if (brig_sync_wait (conn, 1000) < 0 || brig_sync_recv (conn, &m) < 0)
    return 0;
  r = 0;
  if (m.type == BRIG_SYNC_START)
    for (size_t off = 0; off < m.len && r == 0;)
      {
        const char *kv = m.data + off;
        size_t len = strnlen (kv, m.len - off);
        const char *eq = memchr (kv, '=', len);
        if (eq == NULL || eq == kv)
          r = brig_error_say (err, EINVAL, "start: invalid environment entry \"%.*s\"",
                              (int) (len > 64 ? 64 : len), kv);
        else
          env_put (&pr->envp, kv, len);
        off += len + 1;
      }
  brig_sync_msg_clear (&m);
  return r;
}

/* Block until `start` connects to the exec socket; the connection stays
 * open as the channel for errors until execve closes it. */
static int
wait_start (struct init_state *s, struct brig_process *pr, brig_error *err)
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
  return pr->p ? read_start_message (conn, pr, err) : 0;
}

/* The namespaces finished (joined, the user namespace's maps, the cgroup
 * placement unless late), linux.netDevices moved in, the loopback up, the
 * session keyring. */
static int
init_namespaces (struct init_state *s, brig_error *err)
{
  struct brig_init_args *a = s->a;
  int r;

  /* Into its v1 cgroups before anything is forked or charged; the parent
   * places a child that cannot (brig_cgroup_self_open). */
  if ((r = brig_cgroup_self_join (&a->cg_self, err)) < 0 || (r = setup_namespaces (s, err)) < 0)
    return r;
  /* The network namespace exists now (made or joined): the parent moves
   * linux.netDevices into it before anything runs here. */
  if (a->netdev_sync)
    brig_hs_init_netdev (&s->hs, err);
  /* Only a namespace made for this container: a joined one is someone
   * else's to configure. */
  if (a->new_netns && (r = brig_netdev_loopback_up (err)) < 0)
    return r;
  if (!a->no_new_keyring)
    {
      /* a->keyring: shared with exec (searchable); else a random name of
       * its own, never one a tenant could have planted */
      _cleanup_free_ char *ring = a->keyring ? NULL : brig_process_session_keyring_name (a->id);
      if ((r = a->keyring ? brig_process_make_session_keyring (a->keyring, err)
                          : brig_process_join_session_keyring (ring, err)) < 0)
        return r;
    }
  return 0;
}

/* The rootfs with every mount (the placement awaited at its cgroup
 * barrier), then the hooks of the parent (prestart, createRuntime) and the
 * init's own createContainer hooks. */
static int
init_rootfs (struct init_state *s, struct brig_rootfs_opts *ro, brig_error *err)
{
  struct brig_init_args *a = s->a;
  const oci_config *cfg = a->cfg;
  const oci_hooks *h = cfg->hooks;
  int r = rootfs_prepare (cfg, a->rootfs, ro, err);

  if (a->rootfs_tree >= 0)
    close (brig_steal_fd (a->rootfs_tree));
  if (r == 0)
    r = brig_hs_init_placed (&s->hs, err);
  if (r < 0)
    return r;
  if (a->hook_sync)
    brig_hs_init_hooks (&s->hs, &s->state_json, &s->state_json_start, err);
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
    }
  return r;
}

/* Inside the new root: the terminal, the cwd, hostname and sysctls, the
 * read-only and masked paths, the process attributes and LSM labels. */
static int
init_enter_root (struct init_state *s, struct brig_process *pr, int *rootfd,
                 const struct brig_rootfs_procfs *procfs, brig_error *err)
{
  struct brig_init_args *a = s->a;
  const oci_config *cfg = a->cfg;
  const oci_process *p = cfg->process;
  int r = rootfs_pivot (cfg, a->rootfs, *rootfd, a->no_pivot, pr->stdio_st,
                        &pr->stdio_known, err);

  if (r < 0)
    return r;
  pr->at_root = true;
  if (a->console_fd >= 0)
    {
      /* the terminal replaces stdio */
      pr->stdio_known = 0;
      bool proxied = a->console_socket == NULL || *a->console_socket == '\0';
      r = brig_terminal_setup (a->console_fd, p->console_size, true, proxied, err);
      a->console_fd = -1;
      if (r < 0)
        return r;
    }
  /* As runc: a missing cwd is created (inside the new root, so the image's
   * symlinks cannot lead it out; before root.readonly applies). */
  if (p && p->cwd && strcmp (p->cwd, "/") != 0 && access (p->cwd, F_OK) < 0 && errno == ENOENT
      && (r = brig_mkdir_p (p->cwd, 0755)) < 0)
    return brig_error_set (err, -r, "create cwd %s", p->cwd);
  if ((r = brig_process_set_hostname (cfg->hostname, cfg->domainname, err)) < 0)
    return r;
  if (cfg->linux && (r = brig_process_apply_sysctl (cfg->linux->sysctl, err)) < 0)
    return r;
  if ((r = rootfs_finalize (cfg, *rootfd, procfs, err)) < 0)
    return r;
  /* Nothing of the mount setup stays open while the init waits for start. */
  if (*rootfd >= 0)
    close (brig_steal_fd (*rootfd));
  if ((r = brig_procattr_apply (cfg, p, err)) < 0)
    return r;
  return brig_lsm_apply_exec_labels (p, err);
}

/* Once recorded (HANDOVER): become the process, READY, wait for `start`
 * (create), the startContainer hooks, execve. */
static int
init_become (struct init_state *s, struct brig_process *pr, brig_error *err)
{
  struct brig_init_args *a = s->a;
  const oci_hooks *h = a->cfg->hooks;
  int r;

  brig_hs_init_await_handover (&s->hs, err);
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
  brig_hs_init_ready (&s->hs);
  if (a->exec_fd >= 0)
    {
      s->parent_listens = false;
      if ((r = wait_start (s, pr, err)) < 0)
        return r;
    }
  /* The environment execve will pass (built by become), as runc. */
  if (h && h->start_container_len > 0
      && (r = brig_hooks_run_env (h->start_container, h->start_container_len, "startContainer",
                                  s->state_json_start, pr->envp, err)) < 0)
    return r;
  if (pr->p == NULL)
    return brig_error_say (err, EINVAL, "config.json has no process to start");
  /* the answer channel: start's connection, or run's sync socket (its
   * EOF marks the execve) */
  if (s->mode != BRIG_INIT_EXEC)
    brig_reaper_run (pr, s->mode, s->parent_listens ? s->a->sync_fd : s->start_fd,
                     s->upper_fd);
  return brig_process_exec (pr, err);
}

static int
run_init (struct init_state *s, struct brig_process *pr, brig_error *err)
{
  struct brig_init_args *a = s->a;
  const oci_hooks *h = a->cfg->hooks;
  struct brig_rootfs_opts ro = { .no_pivot = a->no_pivot, .userns = a->new_userns,
                                 .console_fd = -1, .bundle = a->bundle,
                                 .cgroup_barrier = brig_hs_init_placed, .barrier_arg = &s->hs,
                                 .open_source = a->new_userns ? brig_hs_init_mount_source : NULL,
                                 .layer = a->root_layer,
                                 .seed = { a->layer_seed ? brig_hs_init_layer_seed : NULL,
                                           &s->hs },
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
  if (s->mode != BRIG_INIT_EXEC)
    ro.layer_upper_out = &s->upper_fd;
  if ((r = init_namespaces (s, err)) < 0 || (r = init_rootfs (s, &ro, err)) < 0
      || (r = init_enter_root (s, pr, &rootfd, &procfs, err)) < 0)
    return r;
  return init_become (s, pr, err);
}

void
brig_init_main (struct brig_init_args *a)
{
  struct init_state s = { .a = a, .parent_listens = true, .start_fd = -1, .upper_fd = -1,
                          .hs = { .sock = a->sync_fd, .unshare_late = a->unshare_flags } };
  struct brig_process pr;
  brig_error err = { 0 };

  brig_hs_init_arm_parent_death (&s.hs);
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
  brig_process_init (&pr, a->cfg->process, a->seccomp, a->preserve_fds);
  pr.seccomp_early = a->seccomp_early;
  if (brig_seccomp_uses_notify (a->seccomp))
    pr.notify_sock = a->sync_fd;
  pr.listen_fds = a->listen_fds;
  pr.caps_checked = true; /* create_validate_config warned */
  /* create checked these values, and where keeping the groups is safe */
  (void) brig_init_mode_parse (a->cfg->annotations, &s.mode, NULL);
  pr.no_exec = s.mode == BRIG_INIT_HOLD;
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
