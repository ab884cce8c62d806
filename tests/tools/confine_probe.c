/* confine_probe: a static test program run inside containers by the
 * confinement bats tests (seccomp, caps, security). It makes one kind of
 * privileged or escape-prone request and prints what the kernel said, so
 * the tests can prove from inside that a boundary holds.
 *
 *   confine_probe syscall NAME...   try each syscall harmlessly; print
 *                                   "NAME: ok" or "NAME: EPERM" (errno name)
 *   confine_probe whoami            print "uid=R euid=E capeff=HEX capprm=HEX nnp=N"
 *   confine_probe ptrace PID        PTRACE_SEIZE + detach; "ptrace: ok|ERRNO"
 *   confine_probe kill PID          kill(PID, 0); "kill: ok|ERRNO"
 *   confine_probe write PATH        open(PATH, O_WRONLY|O_APPEND); "write: ok|ERRNO"
 *   confine_probe put PATH VALUE    write VALUE to PATH (a sysctl); "put: ok|ERRNO"
 *   confine_probe fds               list open fds above 2 with their targets
 *
 * Exit status 0 unless the arguments are wrong. Built with -static so it
 * runs in the busybox rootfs. */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *
errno_name (int e)
{
  switch (e)
    {
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case EBADF: return "EBADF";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EINVAL: return "EINVAL";
    case ENOSYS: return "ENOSYS";
    case ETXTBSY: return "ETXTBSY";
    case EROFS: return "EROFS";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case ENOTDIR: return "ENOTDIR";
    case EXDEV: return "EXDEV";
    case ENOMEM: return "ENOMEM";
    case E2BIG: return "E2BIG";
    default: return "EOTHER";
    }
}

static void
report (const char *what, long r)
{
  if (r >= 0)
    printf ("%s: ok\n", what);
  else
    printf ("%s: %s\n", what, errno_name (errno));
}

/* Each call is made so that, if the filter lets it through, it fails
 * harmlessly or does nothing lasting (bad pointers, invalid flags). */
static long
try_syscall (const char *name)
{
  /* mount and umount2 act on the container's own mount namespace: a
   * tmpfs over /tmp, the mask over /proc/timer_list. */
  if (strcmp (name, "mount") == 0)
    return mount ("tmpfs", "/tmp", "tmpfs", 0, "size=64k");
  if (strcmp (name, "umount2") == 0)
    return umount2 ("/proc/timer_list", MNT_DETACH);
  if (strcmp (name, "unshare") == 0)
    return syscall (SYS_unshare, 0);
  if (strcmp (name, "setns") == 0)
    return syscall (SYS_setns, -1, 0);
  if (strcmp (name, "pivot_root") == 0)
    return syscall (SYS_pivot_root, "/nonexistent-a", "/nonexistent-b");
  if (strcmp (name, "keyctl") == 0)
    return syscall (SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0, 0, 0);
  if (strcmp (name, "add_key") == 0)
    return syscall (SYS_add_key, "user", "brig", "x", 1, -3);
  if (strcmp (name, "bpf") == 0)
    return syscall (SYS_bpf, -1, NULL, 0);
  if (strcmp (name, "userfaultfd") == 0)
    return syscall (SYS_userfaultfd, -1);
  if (strcmp (name, "perf_event_open") == 0)
    return syscall (SYS_perf_event_open, NULL, 0, -1, -1, 0);
  if (strcmp (name, "kexec_load") == 0)
    return syscall (SYS_kexec_load, 0, 0, NULL, -1);
  if (strcmp (name, "init_module") == 0)
    return syscall (SYS_init_module, NULL, 0, "");
  if (strcmp (name, "open_by_handle_at") == 0)
    return syscall (SYS_open_by_handle_at, -1, NULL, 0);
  if (strcmp (name, "clock_settime") == 0)
    return syscall (SYS_clock_settime, -1, NULL);
  if (strcmp (name, "reboot") == 0)
    return syscall (SYS_reboot, 0, 0, 0, NULL);
  if (strcmp (name, "swapon") == 0)
    return syscall (SYS_swapon, "/nonexistent-brig-probe", 0);
  if (strcmp (name, "syslog") == 0)
    return syscall (SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
  if (strcmp (name, "clone3") == 0)
    return syscall (SYS_clone3, NULL, 0);
  if (strcmp (name, "clone_newns") == 0)
    {
      /* fork with CLONE_NEWNS: the child exits at once. */
      long r = syscall (SYS_clone, CLONE_NEWNS | 17 /* SIGCHLD */, NULL, NULL, NULL, 0);
      if (r == 0)
        _exit (0);
      return r;
    }
  if (strcmp (name, "personality_query") == 0)
    return syscall (SYS_personality, 0xffffffffUL);
  if (strcmp (name, "personality_norandom") == 0)
    return syscall (SYS_personality, 0x0040000UL);
  if (strcmp (name, "getpid") == 0)
    return syscall (SYS_getpid);
  if (strcmp (name, "mkdir") == 0)
    return syscall (SYS_mkdir, "/tmp/brig-probe-dir", 0700);
  if (strcmp (name, "io_uring_setup") == 0)
    return syscall (SYS_io_uring_setup, 1, NULL);
  errno = EINVAL;
  fprintf (stderr, "confine_probe: unknown syscall probe %s\n", name);
  exit (2);
}

static void
status_field (const char *buf, const char *field, char *out, size_t n)
{
  const char *p = strstr (buf, field);
  size_t i = 0;
  out[0] = '\0';
  if (p == NULL)
    return;
  p += strlen (field);
  while (*p == '\t' || *p == ' ')
    p++;
  while (*p && *p != '\n' && *p != '\t' && i + 1 < n)
    out[i++] = *p++;
  out[i] = '\0';
}

static int
whoami (void)
{
  char buf[8192], eff[32], prm[32];
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? read (fd, buf, sizeof buf - 1) : -1;
  if (n < 0)
    return 1;
  buf[n] = '\0';
  close (fd);
  status_field (buf, "CapEff:", eff, sizeof eff);
  status_field (buf, "CapPrm:", prm, sizeof prm);
  printf ("uid=%d euid=%d capeff=%s capprm=%s nnp=%d\n", (int) getuid (), (int) geteuid (), eff, prm,
          prctl (PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    return 2;
  if (strcmp (argv[1], "syscall") == 0)
    {
      for (int i = 2; i < argc; i++)
        report (argv[i], try_syscall (argv[i]));
      return 0;
    }
  if (strcmp (argv[1], "whoami") == 0)
    return whoami ();
  if (strcmp (argv[1], "ptrace") == 0 && argc == 3)
    {
      pid_t pid = (pid_t) atoi (argv[2]);
      long r = ptrace (PTRACE_SEIZE, pid, NULL, NULL);
      report ("ptrace", r);
      if (r == 0)
        ptrace (PTRACE_DETACH, pid, NULL, NULL);
      return 0;
    }
  if (strcmp (argv[1], "kill") == 0 && argc == 3)
    {
      report ("kill", kill ((pid_t) atoi (argv[2]), 0));
      return 0;
    }
  if (strcmp (argv[1], "write") == 0 && argc == 3)
    {
      int fd = open (argv[2], O_WRONLY | O_APPEND | O_CLOEXEC);
      report ("write", fd);
      if (fd >= 0)
        close (fd);
      return 0;
    }
  if (strcmp (argv[1], "put") == 0 && argc == 4)
    {
      int fd = open (argv[2], O_WRONLY | O_TRUNC | O_CLOEXEC);
      ssize_t n = -1;
      if (fd >= 0)
        {
          n = write (fd, argv[3], strlen (argv[3]));
          close (fd);
        }
      report ("put", n < 0 ? -1 : 0);
      return 0;
    }
  if (strcmp (argv[1], "fds") == 0)
    {
      DIR *d = opendir ("/proc/self/fd");
      struct dirent *e;
      if (d == NULL)
        return 1;
      while ((e = readdir (d)) != NULL)
        {
          char path[300], target[4096];
          int fd = atoi (e->d_name);
          ssize_t n;
          if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd (d))
            continue;
          snprintf (path, sizeof path, "/proc/self/fd/%s", e->d_name);
          n = readlink (path, target, sizeof target - 1);
          target[n > 0 ? n : 0] = '\0';
          printf ("fd %d -> %s\n", fd, target);
        }
      closedir (d);
      return 0;
    }
  fprintf (stderr, "usage: confine_probe syscall NAME...|whoami|ptrace PID|kill PID|write PATH|put PATH VALUE|fds\n");
  return 2;
}
