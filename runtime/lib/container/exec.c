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
#include "sync.h"
#include "container/tenancy.h"
#include "process/terminal.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
# define CLONE_NEWTIME 0x00000080
#endif

/* ---- building the process ---- */

static size_t
strv_len (char **v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

/* Append a copy of s to *v (length *len), keeping it NULL-terminated. */
static void
strv_push (char ***v, size_t *len, const char *s)
{
  *v = xrealloc (*v, (*len + 2) * sizeof (char *));
  (*v)[(*len)++] = xstrdup (s);
  (*v)[*len] = NULL;
}

static char **
strv_dup (char **v, size_t *len)
{
  size_t n = strv_len (v);
  char **r = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup (v[i]);
  *len = n;
  return r;
}

/* KEY=VALUE replaces an entry with the same KEY, else is appended. */
static void
env_set (oci_process *p, const char *kv)
{
  const char *eq = strchr (kv, '=');
  size_t klen = eq ? (size_t) (eq - kv) : strlen (kv);

  for (size_t i = 0; i < p->env_len; i++)
    if (strncmp (p->env[i], kv, klen) == 0
        && (p->env[i][klen] == '=' || p->env[i][klen] == '\0'))
      {
        free (p->env[i]);
        p->env[i] = xstrdup (kv);
        return;
      }
  strv_push (&p->env, &p->env_len, kv);
}

static int
parse_id (const char *s, const char *what, uint32_t *out, brig_error *err)
{
  char *end;
  unsigned long v;

  errno = 0;
  v = strtoul (s, &end, 10);
  if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0)
    return brig_error_set (err, 0, "--user: %s \"%s\" is not a number", what, s);
  if (v > BRIG_ID_MAX)
    return brig_error_set (err, 0, "--user: %s %s is out of range (0-%u)", what, s, BRIG_ID_MAX);
  *out = (uint32_t) v;
  return 0;
}

static int
apply_user (oci_process *p, const char *spec, brig_error *err)
{
  _cleanup_free_ char *copy = xstrdup (spec);
  char *colon = strchr (copy, ':');
  uint32_t uid, gid;
  int r;

  if (colon)
    *colon = '\0';
  r = parse_id (copy, "uid", &uid, err);
  if (r < 0)
    return r;
  if (colon)
    {
      r = parse_id (colon + 1, "gid", &gid, err);
      if (r < 0)
        return r;
    }
  if (p->user == NULL)
    p->user = xmalloc0 (sizeof *p->user);
  p->user->uid = uid;
  p->user->has_uid = true;
  if (colon)
    {
      p->user->gid = gid;
      p->user->has_gid = true;
    }
  /* A numeric user replaces a username the config may carry. */
  free (p->user->username);
  p->user->username = NULL;
  return 0;
}

static bool
strv_has (char **v, const char *s)
{
  for (; v && *v; v++)
    if (strcasecmp (*v, s) == 0)
      return true;
  return false;
}

/* Never into the inheritable set (CVE-2022-29162: an inheritable cap lets
 * file capabilities of a program in the image raise it on execve); ambient
 * only when the config already makes it inheritable, the one case where the
 * kernel lets ambient hold it. */
static void
add_cap (oci_process *p, const char *name)
{
  oci_capabilities *c;

  if (p->capabilities == NULL)
    p->capabilities = xmalloc0 (sizeof *p->capabilities);
  c = p->capabilities;
  strv_push (&c->bounding, &c->bounding_len, name);
  strv_push (&c->effective, &c->effective_len, name);
  strv_push (&c->permitted, &c->permitted_len, name);
  if (strv_has (c->inheritable, name))
    strv_push (&c->ambient, &c->ambient_len, name);
}

static void
replace_str (char **dst, const char *src)
{
  free (*dst);
  *dst = xstrdup (src);
}

int
brig_exec_apply_overrides (oci_process *p, const struct brig_exec_overrides *o,
                           brig_error *err)
{
  int r;

  if (o->args)
    {
      brig_strv_free (p->args);
      p->args = strv_dup (o->args, &p->args_len);
      free (p->command_line);
      p->command_line = NULL;
    }
  if (o->cwd)
    replace_str (&p->cwd, o->cwd);
  for (size_t i = 0; o->env && o->env[i]; i++)
    env_set (p, o->env[i]);
  if (o->user)
    {
      r = apply_user (p, o->user, err);
      if (r < 0)
        return r;
    }
  if (o->gids_len > 0)
    {
      oci_user *u;
      for (size_t i = 0; i < o->gids_len; i++)
        if (o->gids[i] > BRIG_ID_MAX)
          return brig_error_set (err, 0, "--additional-gids: %u is out of range (0-%u)",
                                 (unsigned) o->gids[i], BRIG_ID_MAX);
      if (p->user == NULL)
        p->user = xmalloc0 (sizeof *p->user);
      u = p->user;
      u->additional_gids = xrealloc (u->additional_gids,
                                     (u->additional_gids_len + o->gids_len) * sizeof (uint32_t));
      memcpy (u->additional_gids + u->additional_gids_len, o->gids,
              o->gids_len * sizeof (uint32_t));
      u->additional_gids_len += o->gids_len;
    }
  for (size_t i = 0; o->caps && o->caps[i]; i++)
    add_cap (p, o->caps[i]);
  /* exec gets a terminal only when asked, whatever the container's init has. */
  p->terminal = o->tty == 1;
  p->has_terminal = true;
  if (o->no_new_privs == 1)
    {
      p->no_new_privileges = true;
      p->has_no_new_privileges = true;
    }
  if (o->apparmor)
    replace_str (&p->apparmor_profile, o->apparmor);
  if (o->process_label)
    replace_str (&p->selinux_label, o->process_label);
  return 0;
}

int
brig_exec_validate_process (const oci_process *p, brig_error *err)
{
  if (p->args == NULL || p->args_len == 0 || p->args[0] == NULL || p->args[0][0] == '\0')
    return brig_error_set (err, 0, "process: args must not be empty");
  if (p->cwd == NULL || p->cwd[0] == '\0')
    return brig_error_set (err, 0, "process: cwd must not be empty");
  if (p->cwd[0] != '/')
    return brig_error_set (err, 0, "process: cwd \"%s\" is not an absolute path", p->cwd);
  if (brig_process_validate_user (p->user, err) < 0)
    return -EINVAL;
  return brig_process_validate_env (p, err);
}

/* ---- the child side ---- */

struct exec_child {
  brig_container *c;
  const oci_config *cfg;
  const oci_process *p;
  brig_seccomp *seccomp;
  int sync;              /* child end of the sync socketpair */
  int console;           /* console socket (or socketpair end) when tty, else -1 */
  const oci_console_size *size; /* the pty's initial size or NULL */
  bool proxied;          /* the pty comes back to brig (no console socket) */
  int preserve_fds;
  bool keep_groups;      /* run.oci.keep_original_groups (groups.h) */
  struct brig_cgroup_self *cg_self; /* v1 `tasks` fds C1 writes "0" to, or NULL */
  int cgfd;              /* cgroup2 directory C2 is cloned into, or -1 */
  int joined[2];         /* C2 -> C1: errno of its self-join */
};

static pid_t
clone_as_sibling (int cgfd)
{
  /* clone3 first: the raw clone(2) argument order differs between
   * architectures, clone3's struct does not. */
  struct {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
      set_tid, set_tid_size, cgroup;
  } args = { .flags = CLONE_PARENT, .exit_signal = 0 };
  pid_t pid;

  if (cgfd >= 0)
    {
      /* CLONE_INTO_CGROUP takes the cgroup lock for reading only: no grace
       * period, unlike P's cgroup.procs write (docs/cgroups.md "Joining") */
      args.flags |= 0x200000000ULL;
      args.cgroup = (uint64_t) cgfd;
      return (pid_t) syscall (SYS_clone3, &args, sizeof args);
    }

  /* With CLONE_PARENT the exit signal is our own (SIGCHLD); clone3 wants
   * exit_signal 0 with it. */
  pid = (pid_t) syscall (SYS_clone3, &args, sizeof args);
  if (pid >= 0 || errno != ENOSYS)
    return pid;
  return (pid_t) syscall (SYS_clone, CLONE_PARENT, 0, NULL, NULL, 0);
}

/* Enter the init's namespaces and root. */
static int
join_container (struct exec_child *x, brig_error *err)
{
  pid_t pid = x->c->st.pid;
  int fds[BRIG_NS_COUNT];
  unsigned long flags = 0;
  _cleanup_close_ int rootfd = -1;
  char path[64];
  int r;

  snprintf (path, sizeof path, "/proc/%d/root", (int) pid);
  rootfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  /* The waiting init is not dumpable (a process exec'd beside it must not
   * ptrace it): /proc/PID/root then needs CAP_SYS_PTRACE, which a rootless
   * caller lacks. The started container's process is dumpable again. */
  if (rootfd < 0 && (errno == EACCES || errno == EPERM) && x->c->status == BRIG_STATUS_CREATED)
    return brig_error_set (err, errno, "cannot exec in container \"%s\" before it is started: "
                           "its init may be joined only with CAP_SYS_PTRACE (a rootless exec "
                           "works once it runs)", x->c->id);
  if (rootfd < 0)
    return brig_error_errno (err, "open the container's root (%s)", path);
  r = brig_ns_open_process (pid, fds, err);
  if (r < 0)
    return r;
  /* Both were opened by pid: the pidfd tells whether it is still the init. */
  if (syscall (SYS_pidfd_send_signal, x->c->pidfd, 0, NULL, 0) < 0)
    {
      r = brig_error_say (err, ESRCH, "container \"%s\" is not running", x->c->id);
      goto out;
    }
  for (int t = 0; t < BRIG_NS_COUNT; t++)
    if (fds[t] >= 0)
      flags |= brig_ns_flag ((enum brig_ns_type) t);

  /* All namespaces in one step through the pidfd (Linux >= 5.8). */
  if (flags != 0 && setns (x->c->pidfd, (int) flags) == 0)
    r = 0;
  else if (flags != 0 && errno != EINVAL && errno != EBADF)
    r = brig_error_errno (err, "join the namespaces of pid %d", (int) pid);
  else
    r = brig_ns_join (fds, err);
  if (r < 0)
    goto out;

  if (fchdir (rootfd) < 0)
    r = brig_error_errno (err, "enter the container's root");
  else if (chroot (".") < 0)
    r = brig_error_errno (err, "chroot into the container's root");
  else if (chdir ("/") < 0)
    r = brig_error_errno (err, "chdir /");
out:
  for (int t = 0; t < BRIG_NS_COUNT; t++)
    if (fds[t] >= 0)
      close (fds[t]);
  return r;
}

/* C2: inside every namespace; become the process and exec. */
static _Noreturn void
run_process (struct exec_child *x)
{
  brig_error err = { 0 };
  struct brig_sync_msg msg = { .fd = -1 };
  struct brig_process pr;
  sigset_t none;
  int r;

  /* the cgroup2 directory it was cloned into: not the process's to keep */
  if (x->cgfd >= 0)
    close (x->cgfd);
  /* the init's pidfd, C1's to join with */
  if (x->c->pidfd >= 0)
    close (brig_steal_fd (x->c->pidfd));
  if (x->cg_self)
    {
      int32_t e = 0;
      close (x->joined[0]);
      if (brig_cgroup_self_join (x->cg_self, &err) < 0)
        e = err.code ? err.code : EIO;
      if (write (x->joined[1], &e, sizeof e) != (ssize_t) sizeof e || e != 0)
        _exit (1);
      close (x->joined[1]);
    }
  r = brig_sync_expect (x->sync, BRIG_SYNC_GO, &msg, &err);
  brig_sync_msg_clear (&msg);
  if (r < 0)
    _exit (1);

  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);

  if (x->console >= 0)
    {
      r = brig_terminal_setup (x->console, x->size, false, x->proxied, &err);
      x->console = -1;
      if (r < 0)
        goto fail;
    }

  /* What the init applies after its rootfs is ready, in the same order:
   * process attributes and LSM labels, then user, caps and seccomp. */
  /* Not the caller's session keyring (its keys are the host's), unless
   * the container was made to share it (--no-new-keyring). */
  if (!x->c->st.shared_keyring && (r = brig_process_join_session_keyring (NULL, &err)) < 0)
    goto fail;
  r = brig_procattr_apply (x->cfg, x->p, &err);
  if (r < 0)
    goto fail;
  r = brig_lsm_apply_exec_labels (x->p, &err);
  if (r < 0)
    goto fail;

  brig_process_init (&pr, x->p, x->seccomp, x->preserve_fds);
  pr.keep_groups = x->keep_groups;
  pr.seccomp_early = x->seccomp != NULL && !x->p->no_new_privileges;
  if (brig_seccomp_uses_notify (x->seccomp))
    pr.notify_sock = x->sync;
  r = brig_process_become (&pr, &err);
  if (r < 0)
    goto fail;
  /* SCMP_ACT_NOTIFY with noNewPrivileges: while P listens for the fd. */
  if (pr.notify_sock >= 0 && (r = brig_process_load_seccomp (&pr, &err)) < 0)
    goto fail;
  r = brig_sync_send (x->sync, BRIG_SYNC_READY, 0, NULL, 0, -1);
  if (r < 0)
    _exit (1);
  brig_process_exec (&pr, &err);
fail:
  brig_sync_send_error (x->sync, &err);
  _exit (1);
}

/* C1: non-dumpable, join, and clone C2 as our parent's child. */
static _Noreturn void
run_joiner (struct exec_child *x)
{
  brig_error err = { 0 };
  bool joined;
  int32_t pid;

  /* Before any setns: from now on the container cannot open our
   * /proc/PID/exe, mem or fds (CVE-2019-5736). C2 inherits it until
   * execve. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    {
      brig_error_errno (&err, "prctl PR_SET_DUMPABLE");
      goto fail;
    }
  /* The state directory (P holds it, locked): a directory of the host that
   * C2 would carry into the container until execve, where a process with
   * CAP_SYS_PTRACE (pidfd_getfd needs no stop) could walk from it to the
   * host's root. */
  close (brig_steal_fd (x->c->dirfd));
  /* execCPUAffinity.initial: the CPUs to run on until the cgroup (and its
   * cpuset) is joined; C2 inherits it. */
  if (brig_procattr_affinity_initial (x->p, &err) < 0)
    goto fail;
  if (join_container (x, &err) < 0)
    goto fail;
  /* v1: C2 moves itself ("0" to each `tasks`, the freezer's last) and
   * tells C1 through a pipe; C1 tells P (JOINED). C2 is forked outside the
   * v1 cgroups, as a cgroup.procs write would move it: a container at its
   * pids limit takes an exec as before. */
  if (x->cg_self && pipe2 (x->joined, O_CLOEXEC) < 0)
    {
      brig_error_errno (&err, "exec: pipe");
      goto fail;
    }

  joined = x->cgfd >= 0;
  pid = clone_as_sibling (x->cgfd);
  if (pid < 0 && joined)
    {
      /* refused (a threaded cgroup, an old kernel): P places C2 */
      joined = false;
      pid = clone_as_sibling (-1);
    }
  if (pid < 0)
    {
      brig_error_errno (&err, "clone into the container's pid namespace");
      goto fail;
    }
  if (pid == 0)
    run_process (x);
  /* code 1: C2 is in the cgroup2 directory too */
  if (brig_sync_send (x->sync, BRIG_SYNC_INIT_PID, joined ? 1 : 0, &pid, sizeof pid, -1) < 0)
    {
      kill (pid, SIGKILL);
      _exit (1);
    }
  if (x->cg_self)
    {
      int32_t e = 0;
      close (x->joined[1]);
      /* C2's errno, or EOF when it died before it joined */
      if (read (x->joined[0], &e, sizeof e) != (ssize_t) sizeof e)
        e = EPIPE;
      if (brig_sync_send (x->sync, BRIG_SYNC_JOINED, e, NULL, 0, -1) < 0)
        {
          kill (pid, SIGKILL);
          _exit (1);
        }
    }
  _exit (0);
fail:
  brig_sync_send_error (x->sync, &err);
  _exit (1);
}

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
write_pid_file (const char *path, pid_t pid, brig_error *err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  int r = brig_write_file_atomic (AT_FDCWD, path, buf, (size_t) n, 0644, err);
  if (r < 0)
    return brig_error_wrap (err, "pid file");
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
  struct brig_sync_msg msg = { .fd = -1 };
  int r;

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
  r = brig_sync_expect (sync, BRIG_SYNC_JOINED, &msg, err);
  if (r == 0 && msg.code != 0)
    r = brig_error_set (err, msg.code, "exec: join the container's cgroup");
  brig_sync_msg_clear (&msg);
  return r;
}

/* Everything after the fork of C1, in P. self: C1 joined the v1
 * hierarchies itself; cgfd >= 0: C2 was to be cloned into the cgroup2
 * directory (INIT_PID's code says whether it was). */
static int
supervise (brig_container *c, const oci_config *cfg, const struct brig_exec_opts *o,
           const oci_process *p, brig_cgroup *cg, bool self, int cgfd, bool notify, pid_t c1,
           int sync, int console, int *exit_status, brig_error *err)
{
  struct brig_sync_msg msg = { .fd = -1 };
  _cleanup_close_ int master = -1;
  pid_t pid = -1;
  bool unlocked = false, joined_all;
  int status, r;

  r = brig_sync_expect (sync, BRIG_SYNC_INIT_PID, &msg, err);
  /* with a self-join C1 exits only once C2 has joined (expect_joined) */
  if (!self || r < 0)
    while (waitpid (c1, &status, 0) < 0 && errno == EINTR)
      ;
  if (r < 0)
    return brig_error_wrap (err, "exec");
  if (msg.len == sizeof (int32_t))
    {
      int32_t v;
      memcpy (&v, msg.data, sizeof v);
      pid = v;
    }
  /* C2 is in every hierarchy unless it could not be cloned into cgroup2 */
  joined_all = self && (cgfd < 0 || msg.code == 1);
  brig_sync_msg_clear (&msg);
  if (pid <= 0 || self)
    {
      r = pid <= 0 ? brig_error_say (err, EPROTO, "exec: no pid from the joining process")
                   : expect_joined (c, brig_cgroup_path (cg), pid, sync, &unlocked, err);
      if (self)
        {
          /* C1 is done once JOINED came; on an error it may still wait */
          if (r < 0)
            kill (c1, SIGKILL);
          while (waitpid (c1, &status, 0) < 0 && errno == EINTR)
            ;
        }
      if (r < 0 && pid <= 0)
        return r;
      if (r < 0)
        goto kill_child;
    }
  if (joined_all)
    cg = NULL;

  if (cg)
    {
      r = brig_cgroup_enter (cg, pid, err);
      if (r < 0)
        goto kill_child;
    }
  if (p->has_oom_score_adj)
    {
      r = brig_process_set_oom_score_adj (pid, p->oom_score_adj, err);
      if (r < 0)
        goto kill_child;
    }
  /* The lock kept delete from removing the cgroup before C2 was in it; from
   * here a delete kills C2 with the rest. Everything below waits on C2,
   * which a paused container's freezer stops: holding the lock through it
   * would make resume (and delete --force) wait for us while we wait for
   * the resume. */
  flock (c->dirfd, LOCK_UN);
  r = brig_sync_send (sync, BRIG_SYNC_GO, 0, NULL, 0, -1);
  if (r < 0)
    {
      brig_error_set (err, -r, "exec: start the process");
      goto kill_child;
    }
  if (notify)
    {
      /* C2 waits for nothing but the agent from here on: pass the
       * listener fd on before anything else. */
      _cleanup_close_ int nfd = -1;
      r = brig_seccomp_receive_listener (sync, pid, &nfd, err);
      if (r < 0)
        goto reap_child;
      _cleanup_free_ char *state = brig_container_state_json (c, -1, false);
      r = brig_seccomp_send_notify_pid (cfg->linux->seccomp, nfd, pid, state ? state : "{}", err);
      if (r == 0)
        r = brig_seccomp_await_process (sync, cfg->linux->seccomp, err);
      if (r < 0)
        goto kill_child;
    }
  r = brig_sync_expect (sync, BRIG_SYNC_READY, &msg, err);
  brig_sync_msg_clear (&msg);
  if (r < 0)
    goto reap_child;

  /* execve closes C2's end: EOF means the process runs. */
  if (notify && (r = brig_seccomp_await_process (sync, cfg->linux->seccomp, err)) < 0)
    goto kill_child;
  r = brig_sync_recv (sync, &msg);
  if (r == 0)
    {
      if (msg.type == BRIG_SYNC_ERROR)
        r = brig_error_set_raw (err, msg.code, msg.data);
      else
        r = brig_error_say (err, EPROTO, "exec: unexpected message %u", msg.type);
      brig_sync_msg_clear (&msg);
      goto reap_child;
    }
  if (r != -EPIPE)
    {
      brig_error_set (err, -r, "exec: wait for the process to start");
      goto kill_child;
    }

  if (o->pid_file)
    {
      r = write_pid_file (o->pid_file, pid, err);
      if (r < 0)
        goto kill_child;
    }
  if (o->detach)
    {
      *exit_status = 0;
      return 0;
    }
  if (p->terminal && console >= 0)
    {
      r = brig_terminal_recv_master (console, &master, err);
      if (r < 0)
        goto kill_child;
    }
  return brig_terminal_proxy (master, pid, exit_status, err);

kill_child:
  kill (pid, SIGKILL);
reap_child:
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  return r < 0 ? r : -EIO;
}

int
brig_exec (const struct brig_context *ctx, const struct brig_exec_opts *o, int *exit_status,
           brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  oci_config *cfg = NULL;
  oci_process *owned = NULL;
  const oci_process *p = NULL;
  struct brig_ext_exec *xe = NULL;
  struct brig_tenancy ten = { 0, BRIG_TENANCY_OPEN };
  _cleanup_free_ char *had = NULL;
  brig_seccomp *sc = NULL;
  brig_cgroup *cg = NULL;
  struct brig_cgroup_self cs = { .n = 0 };
  bool self = false, keep_groups = false;
  int cgfd = -1;
  int sync[2] = { -1, -1 }, console[2] = { -1, -1 };
  struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
  sigset_t all, old_mask;
  bool restore = false;
  pid_t c1;
  int r;

  *exit_status = 255;
  /* fds that do not exist cannot be passed: an error, not a silent drop */
  r = brig_process_check_fds (0, o->preserve_fds, err);
  if (r < 0)
    return r;
  /* The tenancy this exec is for, before it waits for the lock: a reset
   * that runs meanwhile (a release, a plain reset) makes a new one, and
   * the exec must not land in it. */
  if (brig_state_check_id (o->id, NULL) == 0)
    {
      _cleanup_free_ char *dir = xasprintf ("%s/%s", ctx->state_root, o->id);
      _cleanup_close_ int d = -1;
      r = brig_tenancy_peek (ctx, o->id, &ten);
      if (r < 0)
        return brig_error_set (err, -r, "container \"%s\": read its tenancy", o->id);
      /* (the directory only to name a failed reset's reason) */
      if (ten.state == BRIG_TENANCY_RESETTING)
        d = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      r = brig_tenancy_refuse (d, o->id, &ten, "exec in", err);
      if (r < 0)
        return r;
    }
  r = brig_container_load (ctx, o->id, BRIG_LOCK_SHARED, &c, err);
  if (r < 0)
    return r;
  r = check_tenancy (c, &ten, err);
  if (r < 0)
    return r;
  r = check_status (c, o->ignore_paused, err);
  if (r < 0)
    return r;
  r = brig_container_config (c, &cfg, err);
  if (r < 0)
    return r;
  had = brig_exec_caps_of (cfg->process);
  /* An extension judges the container's config before load_process
   * changes cfg->process, then the process this exec runs. */
  if (BRIG_EXT_HOOK (exec_begin) && (r = brig_ext->exec_begin (ctx, cfg, &xe, err)) < 0)
    goto out;
  r = load_process (o, cfg, &owned, &p, err);
  if (r < 0)
    goto out;
  if (BRIG_EXT_HOOK (exec_check)
      && (r = brig_ext->exec_check (xe, c->st.ext, c->st.pid, c->st.new_pidns, cfg, p,
                                    o->process_path, err)) < 0)
    goto out;
  r = brig_terminal_check_mode (p->terminal, o->detach, o->console_socket, err);
  if (r < 0)
    goto out;
  r = brig_procattr_validate (cfg, p, err);
  if (r < 0)
    goto out;
  r = brig_lsm_validate (cfg, p, err);
  if (r < 0)
    goto out;
  /* the caller's groups, where they stay what they are (groups.h) */
  r = brig_keep_groups_parse (cfg->annotations, &keep_groups, err);
  if (r == 0 && keep_groups && !c->st.rootless)
    r = brig_keep_groups_check_pid (c->st.pid, err);
  if (r < 0)
    goto out;
  /* What this exec gives beyond the config counts wherever the config's
   * capabilities count (a reset keeps the network namespace only when no
   * process could change it): recorded before the process exists, under
   * the lock, so a killed exec cannot skip it. */
  r = brig_exec_grants_note (c->dirfd, had, p, err);
  if (r < 0)
    goto out;

  if (cfg->linux && cfg->linux->seccomp)
    {
      _cleanup_free_ char *cache = brig_seccomp_cache_dir (ctx->state_root);
      r = brig_seccomp_prepare (cfg->linux->seccomp, cache, &sc, err);
      if (r < 0)
        goto out;
    }
  /* from the ownership record: the hierarchies create joined, not every one */
  r = brig_container_cgroup (c, &cg, err);
  if (r < 0)
    goto out;
  /* Joining without cgroup.procs (no RCU grace period, ~10-20 ms in every
   * warm-pool cycle here): C1 writes "0" to each v1 `tasks` file, the
   * freezer's last, and C2 is cloned into the cgroup2 directory. Not for
   * a paused container: there P places C2 as before. */
  if (cg && c->status != BRIG_STATUS_PAUSED && (self = brig_cgroup_self_open (cg, &cs)))
    {
      _cleanup_free_ char *ff = brig_cgroup_freeze_file (cg);
      for (size_t i = 0; ff && i + 1 < cs.n; i++)
        {
          size_t l = strlen (cs.dir[i]);
          if (strncmp (ff, cs.dir[i], l) == 0 && ff[l] == '/')
            {
              int fd = cs.fd[i];
              const char *d = cs.dir[i];
              memmove (&cs.fd[i], &cs.fd[i + 1], (cs.n - i - 1) * sizeof cs.fd[0]);
              memmove (&cs.dir[i], &cs.dir[i + 1], (cs.n - i - 1) * sizeof cs.dir[0]);
              cs.fd[cs.n - 1] = fd;
              cs.dir[cs.n - 1] = d;
              break;
            }
        }
      cgfd = brig_cgroup_clone_fd (cg);
    }
  if (p->terminal)
    {
      if (o->console_socket)
        r = brig_terminal_connect_socket (o->console_socket, &console[1], err);
      else if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, console) < 0)
        r = brig_error_errno (err, "exec: socketpair");
      if (r < 0)
        goto out;
    }
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0)
    {
      r = brig_error_errno (err, "exec: socketpair");
      goto out;
    }

  /* Signals that arrive from now on are for the process: they wait, blocked,
   * until brig_terminal_proxy forwards them. SIGCHLD must not be ignored or
   * the kernel would reap C2 before we read its status. */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old_mask);
  sigaction (SIGCHLD, &dfl, &old_chld);
  restore = true;

  c1 = fork ();
  if (c1 < 0)
    {
      r = brig_error_errno (err, "exec: fork");
      goto out;
    }
  if (c1 == 0)
    {
      struct exec_child x = {
        .c = c, .cfg = cfg, .p = p, .seccomp = sc, .sync = sync[1],
        .console = console[1], .preserve_fds = o->preserve_fds, .keep_groups = keep_groups,
        .size = p->console_size, .proxied = o->console_socket == NULL,
        .cg_self = self ? &cs : NULL, .cgfd = cgfd, .joined = { -1, -1 },
      };
      oci_console_size ours;
      /* A pty we proxy starts with the size of the terminal brig runs in. */
      if (p->terminal && o->console_socket == NULL && brig_terminal_stdin_size (&ours))
        x.size = &ours;
      close (sync[0]);
      if (console[0] >= 0)
        close (console[0]);
      run_joiner (&x);
    }
  close (sync[1]);
  sync[1] = -1;
  if (console[1] >= 0)
    {
      close (console[1]);
      console[1] = -1;
    }
  brig_cgroup_self_close (cg, &cs);
  r = supervise (c, cfg, o, p, cg, self, cgfd, brig_seccomp_uses_notify (sc), c1, sync[0],
                 console[0], exit_status, err);

out:
  if (restore)
    {
      sigaction (SIGCHLD, &old_chld, NULL);
      sigprocmask (SIG_SETMASK, &old_mask, NULL);
    }
  for (int i = 0; i < 2; i++)
    {
      if (sync[i] >= 0)
        close (sync[i]);
      if (console[i] >= 0)
        close (console[i]);
    }
  brig_cgroup_self_close (cg, &cs);
  brig_cgroup_free (cg);
  brig_seccomp_free (sc);
  if (owned)
    oci_process_free (owned);
  if (xe && BRIG_EXT_HOOK (exec_free))
    brig_ext->exec_free (xe);
  oci_config_free (cfg);
  return r;
}
