/* nsexec: run a program inside the mount namespace NS_PATH names, as a
 * thin exec wrapper (one setns and one execve, no shell), so a runtime can
 * be benchmarked in a private mount namespace at almost no extra cost.
 *
 *   gcc -static -O2 -DNS_PATH='"/proc/PID/ns/mnt"' -DPROG='"/usr/bin/crun"' \
 *       -o crun-v1 nsexec.c
 *   crun-v1 ARGS...      runs PROG ARGS... in that namespace
 *
 * The benchmark uses it for crun, which refuses the hybrid cgroup layout:
 * the namespace has a tmpfs over /sys/fs/cgroup/unified, so crun sees
 * cgroup v1 only. setns(CLONE_NEWNS) resets the working directory to the
 * namespace's root, so the wrapper changes back to it by path. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#ifndef NS_PATH
#error "build with -DNS_PATH='\"/proc/PID/ns/mnt\"'"
#endif
#ifndef PROG
#error "build with -DPROG='\"/path/to/program\"'"
#endif

int
main (int argc, char **argv)
{
  char cwd[PATH_MAX];
  int fd;

  (void) argc;
  if (getcwd (cwd, sizeof cwd) == NULL)
    cwd[0] = '\0';
  fd = open (NS_PATH, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns (fd, CLONE_NEWNS) < 0)
    {
      perror ("nsexec: " NS_PATH);
      return 125;
    }
  close (fd);
  if (cwd[0] != '\0' && chdir (cwd) < 0)
    {
      perror ("nsexec: chdir");
      return 125;
    }
  argv[0] = (char *) PROG;
  execv (PROG, argv);
  perror ("nsexec: " PROG);
  return 127;
}
