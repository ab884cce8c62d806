/* `exec`: a new process in a running container. See exec.h.
 *
 *   brig (P)                     C1 (host pid ns)          C2 (container pid ns)
 *   lock + load state, config,
 *   compile seccomp, sockets
 *   fork ───────────────────────► non-dumpable
 *                                open /proc/INIT/root
 *                                setns(pidfd, all flags)
 *                                chroot into the init's root
 *                                clone(CLONE_PARENT) ─────► (P's child)
 *   ◄── INIT_PID (C2's host pid) ─┘ exit
 *   move C2 into the cgroup,
 *   oom_score_adj, unlock
 *   GO ──────────────────────────────────────────────────► pty, attributes,
 *                                                          LSM labels, user,
 *                                                          caps, cwd, seccomp
 *   ◄── SECCOMP (listener fd, right after the filter) ─────┤
 *   fd to listenerPath                                     │
 *   ◄── READY ─────────────────────────────────────────────┘
 *   EOF: exec'd (or ERROR) ◄───────────────────────────────── execve
 *   pid file; proxy and wait, or return (detached)
 *
 * On a v1 or hybrid host with the cgroupfs manager C2 moves itself instead
 * ("0" to each v1 `tasks` file, cloned into the cgroup2 directory) and C1
 * sends JOINED once it has: no cgroup.procs write, no RCU grace period
 * (docs/cgroups.md "Joining").
 *
 * C2 is cloned with CLONE_PARENT so that P, outside the container, is its
 * parent and can wait for it and forward signals. The state lock is held
 * only until C2 is in the cgroup: from GO on C2 runs in the container and
 * may be frozen (exec --ignore-paused), and nothing may wait on it locked. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/exec.h"
#include "process/groups.h"
#include "log.h"
#include "process/lsm.h"
#include "namespaces.h"
#include "process/procattr.h"
#include "process/process.h"
#include "container/extension.h"
#include "seccomp/seccomp.h"
#include "container/state.h"
#include "process/exec_child.h"
#include "process/handshake.h"
#include "container/tenancy.h"
#include "process/terminal.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
# define CLONE_NEWTIME 0x00000080
#endif

/* ---- the parent side ---- */

static int
check_status (const brig_container *c, bool ignore_paused, brig_error *err)
{
  switch (c->status)
    {
    case BRIG_STATUS_RUNNING:
    case BRIG_STATUS_CREATED:
      return 0;
    case BRIG_STATUS_PAUSED:
      if (ignore_paused)
        return 0;
      return brig_error_set (err, 0, "cannot exec in a paused container \"%s\" "
                             "(use --ignore-paused to override)", c->id);
    case BRIG_STATUS_CREATING:
      return brig_error_set (err, 0, "cannot exec in container \"%s\": it is still being created",
                             c->id);
    case BRIG_STATUS_STOPPED:
    default:
      {
        _cleanup_free_ char *why = brig_state_reset_failed (c->dirfd);
        if (why)
          return brig_error_set (err, 0, "cannot exec in container \"%s\": reset failed: %s",
                                 c->id, why);
      }
      return brig_error_set (err, 0, "cannot exec in a stopped container \"%s\"", c->id);
    }
}

/* The tenancy under the lock: the one the exec read before it waited for
 * the lock (peeked), or refused. */
static int
check_tenancy (const brig_container *c, const struct brig_tenancy *peeked, brig_error *err)
{
  struct brig_tenancy now;
  int r = brig_tenancy_read (c->dirfd, &now);

  if (r < 0)
    return brig_error_set (err, -r, "container \"%s\": read its tenancy", c->id);
  r = brig_tenancy_refuse (c->dirfd, c->id, &now, "exec in", err);
  if (r < 0)
    return r;
  if (now.gen != peeked->gen)
    return brig_error_set (err, 0, "cannot exec in container \"%s\": it was reset while "
                           "this exec waited (tenancy %llu, now %llu): the exec belonged to "
                           "the previous tenant", c->id, peeked->gen, now.gen);
  return 0;
}

static int
load_process (const struct brig_exec_opts *o, oci_config *cfg, oci_process **owned,
              const oci_process **out, brig_error *err)
{
  int r;

  if (o->process_path)
    {
      oci_error perr = { NULL };
      *owned = oci_process_parse_file (o->process_path, &perr);
      if (*owned == NULL)
        {
          r = brig_error_set (err, 0, "--process %s: %s", o->process_path,
                              perr.msg ? perr.msg : "invalid process JSON");
          free (perr.msg);
          return r;
        }
      /* As runc: what process.json leaves out of the confinement comes
       * from the container's process, not from nothing (no capabilities
       * at all, or no LSM profile). Moved: cfg is freed with the rest. */
      if (cfg->process)
        {
          oci_process *base = cfg->process;
          if ((*owned)->capabilities == NULL)
            (*owned)->capabilities = brig_steal_ptr (base->capabilities);
          if ((*owned)->apparmor_profile == NULL)
            (*owned)->apparmor_profile = brig_steal_ptr (base->apparmor_profile);
          if ((*owned)->selinux_label == NULL)
            (*owned)->selinux_label = brig_steal_ptr (base->selinux_label);
        }
      *out = *owned;
    }
  else
    {
      if (cfg->process == NULL)
        {
          cfg->process = xmalloc0 (sizeof *cfg->process);
          cfg->process->cwd = xstrdup ("/");
        }
      if (o->overrides)
        {
          r = brig_exec_apply_overrides (cfg->process, o->overrides, err);
          if (r < 0)
            return r;
        }
      *out = cfg->process;
    }
  return brig_exec_validate_process (*out, err);
}

/* Whether pid is in the v1 freezer cgroup at cgpath (/proc/PID/cgroup). */
static bool
in_freezer (pid_t pid, const char *cgpath)
{
  char path[64];
  _cleanup_free_ char *text = NULL;
  size_t plen = strlen (cgpath);

  snprintf (path, sizeof path, "/proc/%d/cgroup", (int) pid);
  if (brig_read_file_at (AT_FDCWD, path, &text, NULL, NULL) < 0)
    return false;
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    {
      char *ctl = strchr (l, ':'), *cp = ctl ? strchr (ctl + 1, ':') : NULL;
      if (cp == NULL)
        continue;
      for (char *w = ctl + 1; w < cp; w = strchr (w, ',') ? strchr (w, ',') + 1 : cp)
        if (strncmp (w, "freezer", 7) == 0 && (w[7] == ',' || w[7] == ':'))
          return strncmp (cp + 1, cgpath, plen) == 0
                 && (cp[1 + plen] == '\n' || cp[1 + plen] == '\0');
    }
  return false;
}

/* JOINED from C1: C2 moved itself into its v1 cgroups. A tenant that
 * froze its own freezer cgroup stops C2 right after its last join, the
 * freezer's, before C1 hears of it: the lock must not be held while
 * waiting for that (resume and delete would wait for us), so every 20 ms
 * P looks whether C2 is in the container's freezer cgroup, which means
 * every join is done, and then unlocks as after brig_cgroup_enter. */
static int
expect_joined (brig_container *c, const char *cgpath, pid_t pid, int sync, bool *unlocked,
               brig_error *err)
{
  struct pollfd pf = { .fd = sync, .events = POLLIN };

  while (!*unlocked)
    {
      int n = poll (&pf, 1, 20);
      if (n > 0 || (n < 0 && errno != EINTR))
        break;
      if (n == 0 && in_freezer (pid, cgpath))
        {
          flock (c->dirfd, LOCK_UN);
          *unlocked = true;
        }
    }
  return brig_hs_exec_await_joined (sync, err);
}

/* One exec, in P: what it loaded, prepared and holds. */
struct exec_run {
  const struct brig_context *ctx;
  const struct brig_exec_opts *o;
  brig_container *c;
  oci_config *cfg;
  oci_process *owned;       /* --process FILE's process, or NULL */
  const oci_process *p;     /* the process to run */
  struct brig_ext_exec *xe; /* the extension's record, or NULL */
  bool keep_groups;
  brig_seccomp *sc;
  brig_cgroup *cg;
  struct brig_cgroup_self cs;
  bool self;                /* C2 joins the v1 hierarchies itself */
  int cgfd;                 /* the cgroup2 directory C2 is cloned into, or -1 */
  int sync[2], console[2];
  struct sigaction old_chld;
  sigset_t old_mask;
  bool restore;             /* signals blocked: restore them */
  pid_t c1, pid;            /* C1, then C2 (the process) */
  bool unlocked;
  bool c2_done;             /* C2 is gone or reported its error: reap it,
                               do not kill it */
};

/* The tenancy this exec is for, before it waits for the lock: a reset that
 * runs meanwhile (a release, a plain reset) makes a new one, and the exec
 * must not land in it. */
static int
peek_tenancy (const struct brig_context *ctx, const char *id, struct brig_tenancy *ten,
              brig_error *err)
{
  _cleanup_free_ char *dir = NULL;
  _cleanup_close_ int d = -1;
  int r;

  if (brig_state_check_id (id, NULL) < 0)
    return 0;
  r = brig_tenancy_peek (ctx, id, ten);
  if (r < 0)
    return brig_error_set (err, -r, "container \"%s\": read its tenancy", id);
  /* (the directory only to name a failed reset's reason) */
  if (ten->state == BRIG_TENANCY_RESETTING)
    {
      dir = xasprintf ("%s/%s", ctx->state_root, id);
      d = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    }
  return brig_tenancy_refuse (d, id, ten, "exec in", err);
}

/* The container, locked shared, of the tenancy peeked, in a state that
 * takes an exec; and its config. */
static int
exec_load (struct exec_run *x, brig_error *err)
{
  struct brig_tenancy ten = { 0, BRIG_TENANCY_OPEN };
  int r = peek_tenancy (x->ctx, x->o->id, &ten, err);

  if (r == 0)
    r = brig_container_load (x->ctx, x->o->id, BRIG_LOCK_SHARED, &x->c, err);
  if (r == 0)
    r = check_tenancy (x->c, &ten, err);
  if (r == 0)
    r = check_status (x->c, x->o->ignore_paused, err);
  if (r == 0)
    r = brig_container_config (x->c, &x->cfg, err);
  return r;
}

/* The process to run, judged as create judges the config's (and by the
 * extension); what it gets beyond the config recorded. */
static int
exec_judge (struct exec_run *x, brig_error *err)
{
  const struct brig_exec_opts *o = x->o;
  brig_container *c = x->c;
  _cleanup_free_ char *had = brig_exec_caps_of (x->cfg->process);
  int r;

  /* An extension judges the container's config before load_process
   * changes cfg->process, then the process this exec runs. */
  if (BRIG_EXT_HOOK (exec_begin) && (r = brig_ext->exec_begin (x->ctx, x->cfg, &x->xe, err)) < 0)
    return r;
  if ((r = load_process (o, x->cfg, &x->owned, &x->p, err)) < 0)
    return r;
  if (BRIG_EXT_HOOK (exec_tenant)
      && (r = brig_ext->exec_tenant (c->dirfd, x->owned ? x->owned : x->cfg->process,
                                     x->owned != NULL, o->overrides ? o->overrides->env : NULL,
                                     err)) < 0)
    return r;
  if (BRIG_EXT_HOOK (exec_check)
      && (r = brig_ext->exec_check (x->xe, c->st.ext, c->st.pid, c->st.new_pidns, x->cfg, x->p,
                                    o->process_path, err)) < 0)
    return r;
  if ((r = brig_terminal_check_mode (x->p->terminal, o->detach, o->console_socket, err)) < 0
      || (r = brig_procattr_validate (x->cfg, x->p, err)) < 0
      || (r = brig_lsm_validate (x->cfg, x->p, err)) < 0)
    return r;
  /* the caller's groups, where they stay what they are (groups.h) */
  r = brig_keep_groups_parse (x->cfg->annotations, &x->keep_groups, err);
  if (r == 0 && x->keep_groups && !c->st.rootless)
    r = brig_keep_groups_check_pid (c->st.pid, err);
  if (r < 0)
    return r;
  /* What this exec gives beyond the config counts wherever the config's
   * capabilities count (a reset keeps the network namespace only when no
   * process could change it): recorded before the process exists, under
   * the lock, so a killed exec cannot skip it. */
  return brig_exec_grants_note (c->dirfd, had, x->p, err);
}

/* The freezer's `tasks` last: once C2 is in the freezer cgroup, every
 * other join is done (expect_joined looks for that). */
static void
freezer_last (brig_cgroup *cg, struct brig_cgroup_self *cs)
{
  _cleanup_free_ char *ff = brig_cgroup_freeze_file (cg);

  for (size_t i = 0; ff && i + 1 < cs->n; i++)
    {
      size_t l = strlen (cs->dir[i]);
      if (strncmp (ff, cs->dir[i], l) == 0 && ff[l] == '/')
        {
          int fd = cs->fd[i];
          const char *d = cs->dir[i];
          memmove (&cs->fd[i], &cs->fd[i + 1], (cs->n - i - 1) * sizeof cs->fd[0]);
          memmove (&cs->dir[i], &cs->dir[i + 1], (cs->n - i - 1) * sizeof cs->dir[0]);
          cs->fd[cs->n - 1] = fd;
          cs->dir[cs->n - 1] = d;
          break;
        }
    }
}

/* The seccomp program, the cgroup and how C2 joins it, the terminal's and
 * the handshake's sockets. */
static int
exec_prepare (struct exec_run *x, brig_error *err)
{
  const oci_linux *lx = x->cfg->linux;
  int r = 0;

  if (lx && lx->seccomp)
    {
      _cleanup_free_ char *cache = brig_seccomp_cache_dir (x->ctx->state_root);
      if ((r = brig_seccomp_prepare (lx->seccomp, cache, &x->sc, err)) < 0)
        return r;
    }
  /* from the ownership record: the hierarchies create joined, not every one */
  if ((r = brig_container_cgroup (x->c, &x->cg, err)) < 0)
    return r;
  /* Joining without cgroup.procs (no RCU grace period, ~10-20 ms in every
   * warm-pool cycle here): C2 writes "0" to each v1 `tasks` file, the
   * freezer's last, and is cloned into the cgroup2 directory. Not for a
   * paused container: there P places C2 as before. */
  if (x->cg && x->c->status != BRIG_STATUS_PAUSED
      && (x->self = brig_cgroup_self_open (x->cg, &x->cs)))
    {
      freezer_last (x->cg, &x->cs);
      x->cgfd = brig_cgroup_clone_fd (x->cg);
    }
  if (x->p->terminal)
    {
      if (x->o->console_socket)
        r = brig_terminal_connect_socket (x->o->console_socket, &x->console[1], err);
      else if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, x->console) < 0)
        r = brig_error_errno (err, "exec: socketpair");
      if (r < 0)
        return r;
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, x->sync) < 0)
    return brig_error_errno (err, "exec: socketpair");
  return 0;
}

/* Fork C1 (process/exec_child.c), which never returns here. Signals that
 * arrive from now on are for the process: they wait, blocked, until
 * brig_terminal_proxy forwards them. SIGCHLD must not be ignored or the
 * kernel would reap C2 before we read its status. */
static int
exec_fork (struct exec_run *x, brig_error *err)
{
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  sigset_t all;

  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &x->old_mask);
  sigaction (SIGCHLD, &dfl, &x->old_chld);
  x->restore = true;
  x->c1 = fork ();
  if (x->c1 < 0)
    return brig_error_errno (err, "exec: fork");
  if (x->c1 == 0)
    {
      const brig_container *c = x->c;
      const oci_process *p = x->p;
      struct brig_exec_child ch = {
        .id = c->id, .init_pid = c->st.pid, .init_pidfd = c->pidfd,
        .created = c->status == BRIG_STATUS_CREATED, .shared_keyring = c->st.shared_keyring,
        .keyring = c->st.keyring,
        .state_dirfd = c->dirfd, .cfg = x->cfg, .p = p, .seccomp = x->sc, .sync = x->sync[1],
        .console = x->console[1], .preserve_fds = x->o->preserve_fds,
        .keep_groups = x->keep_groups, .size = p->console_size,
        .proxied = x->o->console_socket == NULL, .cg_self = x->self ? &x->cs : NULL,
        .cgfd = x->cgfd, .joined = { -1, -1 },
      };
      oci_console_size ours;
      /* A pty we proxy starts with the size of the terminal brig runs in. */
      if (p->terminal && x->o->console_socket == NULL && brig_terminal_stdin_size (&ours))
        ch.size = &ours;
      close (x->sync[0]);
      if (x->console[0] >= 0)
        close (x->console[0]);
      brig_exec_child_main (&ch);
    }
  close (brig_steal_fd (x->sync[1]));
  if (x->console[1] >= 0)
    close (brig_steal_fd (x->console[1]));
  brig_cgroup_self_close (x->cg, &x->cs);
  return 0;
}

/* INIT_PID from C1: C2's pid, and whether C2 is in every hierarchy already
 * (C1 reaped; with a self-join once JOINED came). */
static int
await_process (struct exec_run *x, bool *joined_all, brig_error *err)
{
  bool in_cgroup2;
  int status, r = brig_hs_exec_await_forked (x->sync[0], &x->pid, &in_cgroup2, err);

  /* with a self-join C1 exits only once C2 has joined (expect_joined) */
  if (!x->self || r < 0)
    while (waitpid (x->c1, &status, 0) < 0 && errno == EINTR)
      ;
  if (r < 0)
    return brig_error_wrap (err, "exec");
  /* C2 is in every hierarchy unless it could not be cloned into cgroup2 */
  *joined_all = x->self && (x->cgfd < 0 || in_cgroup2);
  if (x->pid > 0 && !x->self)
    return 0;
  r = x->pid <= 0 ? brig_error_say (err, EPROTO, "exec: no pid from the joining process")
                  : expect_joined (x->c, brig_cgroup_path (x->cg), x->pid, x->sync[0],
                                   &x->unlocked, err);
  if (x->self)
    {
      /* C1 is done once JOINED came; on an error it may still wait */
      if (r < 0)
        kill (x->c1, SIGKILL);
      while (waitpid (x->c1, &status, 0) < 0 && errno == EINTR)
        ;
    }
  return r;
}

/* C2 in its cgroup (unless it joined itself) with its OOM score; unlock,
 * then GO. The lock kept delete from removing the cgroup before C2 was in
 * it; from here a delete kills C2 with the rest. Everything after waits on
 * C2, which a paused container's freezer stops: holding the lock through
 * it would make resume (and delete --force) wait for us while we wait for
 * the resume. */
static int
place_process (struct exec_run *x, bool joined_all, brig_error *err)
{
  int r;

  if (!joined_all && x->cg && (r = brig_cgroup_enter (x->cg, x->pid, err)) < 0)
    return r;
  if (x->p->has_oom_score_adj
      && (r = brig_process_set_oom_score_adj (x->pid, x->p->oom_score_adj, err)) < 0)
    return r;
  flock (x->c->dirfd, LOCK_UN);
  r = brig_hs_parent_go (x->sync[0]);
  if (r < 0)
    return brig_error_set (err, -r, "exec: start the process");
  return 0;
}

/* SECCOMP: C2 waits for nothing but the agent from here on: pass the
 * listener fd on before anything else. */
static int
pass_listener (struct exec_run *x, brig_error *err)
{
  const oci_seccomp *s = x->cfg->linux->seccomp;
  _cleanup_close_ int nfd = -1;
  _cleanup_free_ char *state = NULL;
  int r = brig_hs_seccomp_receive (x->sync[0], x->pid, &nfd, err);

  if (r < 0)
    {
      x->c2_done = true;
      return r;
    }
  state = brig_container_state_json (x->c, -1, false);
  r = brig_seccomp_send_notify_pid (s, nfd, x->pid, state ? state : "{}", err);
  if (r == 0)
    r = brig_seccomp_await_process (x->sync[0], s, err);
  return r;
}

/* READY, then EOF: execve closed C2's end. */
static int
await_exec (struct exec_run *x, bool notify, brig_error *err)
{
  struct brig_sync_msg msg = { .fd = -1 };
  int r = brig_hs_exec_await_ready (x->sync[0], err);

  x->c2_done = r < 0;
  if (r < 0)
    return r;
  if (notify && (r = brig_seccomp_await_process (x->sync[0], x->cfg->linux->seccomp, err)) < 0)
    return r;
  r = brig_sync_recv (x->sync[0], &msg);
  if (r == 0)
    {
      if (msg.type == BRIG_SYNC_ERROR)
        r = brig_error_set_raw (err, msg.code, msg.data);
      else
        r = brig_error_say (err, EPROTO, "exec: unexpected message %u", msg.type);
      brig_sync_msg_clear (&msg);
      x->c2_done = true;
      return r < 0 ? r : -EIO;
    }
  if (r != -EPIPE)
    return brig_error_set (err, -r, "exec: wait for the process to start");
  return 0;
}

/* Everything after the fork of C1, in P (process/handshake.h "exec"). */
static int
supervise (struct exec_run *x, int *exit_status, brig_error *err)
{
  bool notify = brig_seccomp_uses_notify (x->sc), joined_all = false;
  _cleanup_close_ int master = -1;
  int status, r = await_process (x, &joined_all, err);

  if (r < 0 && x->pid <= 0)
    return r;
  if (r == 0)
    r = place_process (x, joined_all, err);
  if (r == 0 && notify)
    r = pass_listener (x, err);
  if (r == 0)
    r = await_exec (x, notify, err);
  if (r == 0 && x->o->pid_file)
    r = brig_write_pid_file (x->o->pid_file, x->pid, "pid file", err);
  if (r == 0 && x->o->detach)
    {
      *exit_status = 0;
      return 0;
    }
  if (r == 0 && x->p->terminal && x->console[0] >= 0)
    r = brig_terminal_recv_master (x->console[0], &master, err);
  if (r == 0)
    return brig_terminal_proxy (master, x->pid, exit_status, err);
  if (!x->c2_done)
    kill (x->pid, SIGKILL);
  while (waitpid (x->pid, &status, 0) < 0 && errno == EINTR)
    ;
  return r;
}

/* What the exec held, released (the container and its lock by the
 * caller's cleanup). */
static void
exec_release (struct exec_run *x)
{
  if (x->restore)
    {
      sigaction (SIGCHLD, &x->old_chld, NULL);
      sigprocmask (SIG_SETMASK, &x->old_mask, NULL);
    }
  for (int i = 0; i < 2; i++)
    {
      if (x->sync[i] >= 0)
        close (x->sync[i]);
      if (x->console[i] >= 0)
        close (x->console[i]);
    }
  brig_cgroup_self_close (x->cg, &x->cs);
  brig_cgroup_free (x->cg);
  brig_seccomp_free (x->sc);
  if (x->owned)
    oci_process_free (x->owned);
  if (x->xe && BRIG_EXT_HOOK (exec_free))
    brig_ext->exec_free (x->xe);
  oci_config_free (x->cfg);
}

int
brig_exec (const struct brig_context *ctx, const struct brig_exec_opts *o, int *exit_status,
           brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  struct exec_run x = {
    .ctx = ctx, .o = o, .cs = { .n = 0 }, .cgfd = -1, .sync = { -1, -1 },
    .console = { -1, -1 }, .pid = -1,
  };
  int r;

  *exit_status = 255;
  /* fds that do not exist cannot be passed: an error, not a silent drop */
  r = brig_process_check_fds (0, o->preserve_fds, err);
  if (r < 0)
    return r;
  r = exec_load (&x, err);
  c = x.c;
  if (r == 0)
    r = exec_judge (&x, err);
  if (r == 0)
    r = exec_prepare (&x, err);
  if (r == 0)
    r = exec_fork (&x, err);
  if (r == 0)
    r = supervise (&x, exit_status, err);
  exec_release (&x);
  return r;
}
