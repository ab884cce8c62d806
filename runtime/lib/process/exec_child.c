/* exec's two children, inside the container (container/exec.c is brig's
 * side, P): C1 becomes non-dumpable, joins the init's namespaces and root
 * and clones C2 as P's child into the container's pid namespace; C2 (the
 * process) joins its v1 cgroups itself when asked, waits for P's GO and
 * becomes the process as the init does (process.h), then execve. Their
 * messages to P are process/handshake.h's. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "namespaces.h"
#include "process/exec_child.h"
#include "process/handshake.h"
#include "process/lsm.h"
#include "process/procattr.h"
#include "process/process.h"
#include "process/terminal.h"
#include "utils.h"


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
join_container (struct brig_exec_child *x, brig_error *err)
{
  pid_t pid = x->init_pid;
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
  if (rootfd < 0 && (errno == EACCES || errno == EPERM) && x->created)
    return brig_error_set (err, errno, "cannot exec in container \"%s\" before it is started: "
                           "its init may be joined only with CAP_SYS_PTRACE (a rootless exec "
                           "works once it runs)", x->id);
  if (rootfd < 0)
    return brig_error_errno (err, "open the container's root (%s)", path);
  r = brig_ns_open_process (pid, fds, err);
  if (r < 0)
    return r;
  /* Both were opened by pid: the pidfd tells whether it is still the init. */
  if (syscall (SYS_pidfd_send_signal, x->init_pidfd, 0, NULL, 0) < 0)
    {
      r = brig_error_say (err, ESRCH, "container \"%s\" is not running", x->id);
      goto out;
    }
  for (int t = 0; t < BRIG_NS_COUNT; t++)
    if (fds[t] >= 0)
      flags |= brig_ns_flag ((enum brig_ns_type) t);

  /* All namespaces in one step through the pidfd (Linux >= 5.8). */
  if (flags != 0 && setns (x->init_pidfd, (int) flags) == 0)
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
run_process (struct brig_exec_child *x)
{
  brig_error err = { 0 };
  struct brig_process pr;
  sigset_t none;
  int r;

  /* the cgroup2 directory it was cloned into: not the process's to keep */
  if (x->cgfd >= 0)
    close (x->cgfd);
  /* the init's pidfd, C1's to join with */
  if (x->init_pidfd >= 0)
    close (brig_steal_fd (x->init_pidfd));
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
  if (brig_hs_exec_await_go (x->sync, &err) < 0)
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
   * the container was made to share it (--no-new-keyring): the init's,
   * by name, so an exec makes no key (one keyring per init). */
  if (!x->shared_keyring && (r = brig_process_share_session_keyring (x->keyring, &err)) < 0)
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
  if (brig_hs_exec_ready (x->sync) < 0)
    _exit (1);
  brig_process_exec (&pr, &err);
fail:
  brig_sync_send_error (x->sync, &err);
  _exit (1);
}

/* C1: non-dumpable, join, and clone C2 as our parent's child. */
void
brig_exec_child_main (struct brig_exec_child *x)
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
  close (brig_steal_fd (x->state_dirfd));
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
  if (brig_hs_exec_forked (x->sync, pid, joined) < 0)
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
      if (brig_hs_exec_joined (x->sync, e) < 0)
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

