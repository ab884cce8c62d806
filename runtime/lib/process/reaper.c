/* brig's own pid 1 (run.brig.init, reaper.h).
 *
 * The init has become the process (uid, capabilities, no_new_privs as the
 * config asks, non-dumpable) and `start` has connected. Here it stays pid 1:
 *
 *   scrub argv and environ (they are the create command's: the state root,
 *   the bundle, the caller's variables; /proc/1/cmdline is world-readable);
 *   default handlers, every signal blocked (taken with rt_sigtimedwait: a
 *   blocked signal is never ignored, not even the default-ignored ones of a
 *   pid-namespace init);
 *   true: fork the config's process (it unblocks, takes a process group and
 *   the terminal's foreground, loads the config's filter, execve's);
 *   close every fd but the layer's upper directory (kept at fd
 *   BRIG_REAPER_UPPER_FD for `brig fork`) and the start connection;
 *   no_new_privs and a filter of its own that leaves it seven syscalls
 *   (an error loading it goes to start); close the start connection (its
 *   EOF, or the child's execve error, is start's answer);
 *   loop: reap every child, forward signals, exit with the child's code or
 *   128+signal (true).
 *
 * Nothing allocates after the fork. pid 1 never execve's: it keeps the
 * non-dumpable flag become set, so a process of the container needs
 * CAP_SYS_PTRACE over pid 1's mm to read /proc/1/{fd,mem,environ,exe} or
 * ptrace it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "process/reaper.h"
#include "sync.h"
#include "utils.h"

/* The process's arg and env area, from the arguments glibc passes the
 * constructors of the program (argc, argv, envp). */
static char *args_start, *args_end;

static void __attribute__ ((constructor))
note_args (int argc, char **argv, char **envp)
{
  char *end = NULL;

  if (argc < 1 || argv == NULL || argv[0] == NULL)
    return;
  for (int i = 0; i < argc && argv[i]; i++)
    end = argv[i] + strlen (argv[i]) + 1;
  for (size_t i = 0; envp && envp[i]; i++)
    if (envp[i] >= end)
      end = envp[i] + strlen (envp[i]) + 1;
  args_start = argv[0];
  args_end = end;
}

int
brig_init_mode_parse (const oci_map *annotations, enum brig_init_mode *mode, brig_error *err)
{
  const char *v = oci_map_get (annotations, BRIG_INIT_KEY);

  *mode = BRIG_INIT_EXEC;
  if (v == NULL || strcmp (v, "false") == 0)
    return 0;
  if (strcmp (v, "true") == 0)
    *mode = BRIG_INIT_CHILD;
  else if (strcmp (v, "hold") == 0)
    *mode = BRIG_INIT_HOLD;
  else
    return brig_error_say (err, EINVAL, "annotation " BRIG_INIT_KEY ": \"%s\" is not true, "
                           "false or hold", v);
  return 0;
}

/* /proc/1/cmdline and environ read "brig-init" and nothing else. */
static void
scrub_args (void)
{
  static const char name[] = "brig-init";

  if (args_start && args_end > args_start + sizeof name)
    {
      memset (args_start, 0, (size_t) (args_end - args_start));
      memcpy (args_start, name, sizeof name);
    }
  prctl (PR_SET_NAME, name, 0, 0, 0);
}

/* pid 1's own filter: what the loop below calls, nothing else (the arch
 * checked, so no other ABI's numbers pass). */
static int
load_own_filter (void)
{
#if defined(__x86_64__)
# define REAPER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define REAPER_ARCH AUDIT_ARCH_AARCH64
#endif
#ifdef REAPER_ARCH
# define ALLOW(nr) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
                   BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
  struct sock_filter f[] = {
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch)),
    BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, REAPER_ARCH, 1, 0),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr)),
    ALLOW (__NR_rt_sigtimedwait), ALLOW (__NR_wait4), ALLOW (__NR_kill),
    ALLOW (__NR_exit_group), ALLOW (__NR_exit), ALLOW (__NR_restart_syscall),
    ALLOW (__NR_close),
    BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
  };
# undef ALLOW
  struct sock_fprog prog = { .len = BRIG_ARRAY_SIZE (f), .filter = f };

  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return -errno;
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
    return -errno;
#endif
  return 0;
}

/* Mode true, in the child: the config's process, as the plain init would
 * have run it. */
static _Noreturn void
run_child (struct brig_process *pr, int start_fd, int upper_fd)
{
  brig_error err = { 0 };
  sigset_t none;

  if (upper_fd >= 0)
    close (upper_fd);
  /* A process group of its own in pid 1's session, in the terminal's
   * foreground when there is one (SIGTTOU is blocked here). */
  setpgid (0, 0);
  if (isatty (STDIN_FILENO))
    tcsetpgrp (STDIN_FILENO, getpid ());
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  brig_process_exec (pr, &err);
  if (start_fd >= 0)
    brig_sync_send_error (start_fd, &err);
  _exit (127);
}

/* Every fd closed but the upper directory's, which moves to
 * BRIG_REAPER_UPPER_FD, and *start_fd, which moves above it. */
static void
close_all_but (int upper_fd, int *start_fd)
{
  const unsigned up = BRIG_REAPER_UPPER_FD;
  int s = *start_fd;

  if (s >= 0 && (unsigned) s <= up)
    s = fcntl (s, F_DUPFD_CLOEXEC, (int) up + 1);
  if (upper_fd >= 0 && (unsigned) upper_fd != up
      && dup3 (upper_fd, (int) up, O_CLOEXEC) < 0)
    upper_fd = -1;
  syscall (SYS_close_range, 0U, upper_fd >= 0 ? up - 1 : up, 0U);
  if (s < 0)
    syscall (SYS_close_range, up + 1, ~0U, 0U);
  else
    {
      if ((unsigned) s > up + 1)
        syscall (SYS_close_range, up + 1, (unsigned) s - 1, 0U);
      syscall (SYS_close_range, (unsigned) s + 1, ~0U, 0U);
    }
  *start_fd = s;
}

/* Reap whatever exited; the child's status when it was among them. */
static bool
reap (pid_t child, int *code)
{
  bool done = false;
  int status;
  pid_t pid;

  while ((pid = (pid_t) syscall (SYS_wait4, -1, &status, WNOHANG, NULL)) > 0)
    if (pid == child)
      {
        done = true;
        *code = WIFEXITED (status) ? WEXITSTATUS (status)
                : WIFSIGNALED (status) ? 128 + WTERMSIG (status) : 1;
      }
  return done;
}

_Noreturn void
brig_reaper_run (struct brig_process *pr, enum brig_init_mode mode, int start_fd, int upper_fd)
{
  sigset_t all;
  pid_t child = 0;
  int code = 0;
  bool pid1 = getpid () == 1;

  scrub_args ();
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
  sigfillset (&all);
  sigprocmask (SIG_SETMASK, &all, NULL);
  /* Without a pid namespace of its own it is not pid 1: orphans of the
   * work come to it all the same. */
  if (!pid1)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (mode == BRIG_INIT_CHILD)
    {
      child = fork ();
      if (child == 0)
        run_child (pr, start_fd, upper_fd);
      if (child < 0)
        {
          brig_error err = { 0 };
          brig_error_errno (&err, "run.brig.init: fork the container's process");
          if (start_fd >= 0)
            brig_sync_send_error (start_fd, &err);
          _exit (127);
        }
    }
  close_all_but (upper_fd, &start_fd);
  int r = load_own_filter ();
  if (r < 0)
    {
      brig_error err = { 0 };
      brig_error_set (&err, -r, "run.brig.init: load pid 1's seccomp filter (the config's "
                      "filter must allow prctl and seccomp)");
      if (start_fd >= 0)
        brig_sync_send_error (start_fd, &err);
      _exit (127);
    }
  /* The start connection last: its EOF (or the child's execve error
   * first) is start's answer. */
  if (start_fd >= 0)
    close (start_fd);
  for (;;)
    {
      siginfo_t si;
      /* the kernel's sigset is _NSIG bits */
      long sig = syscall (SYS_rt_sigtimedwait, &all, &si, NULL, (size_t) (_NSIG / 8));

      if (sig < 0)
        {
          if (errno == EINTR || errno == EAGAIN)
            continue;
          _exit (127);
        }
      if (sig == SIGCHLD)
        {
          if (reap (child, &code) && mode == BRIG_INIT_CHILD)
            _exit (code);
          continue;
        }
      /* Forwarded: to the process pid 1 runs, or (hold) to every process
       * of the namespace but pid 1 itself; never to -1 without a pid
       * namespace of its own, where that is every process of the host's
       * the uid may signal. */
      if (mode == BRIG_INIT_CHILD)
        syscall (SYS_kill, child, (int) sig);
      else if (pid1)
        syscall (SYS_kill, -1, (int) sig);
    }
}
