/* floor: the physical limit of starting a container, for the lifecycle
 * benchmark. It does only what every runtime must: clone(2) into the same
 * new namespaces as the benchmark bundle (pid, network, ipc, uts, mount,
 * cgroup), and in the child make the mounts private, bind-mount the
 * rootfs onto itself, pivot_root into it, detach the old root and exec
 * the program; the parent waits and returns its exit status. No config
 * parsing, no /proc, /dev or cgroup setup, no state files.
 *
 *   floor [--no-netns] ROOTFS PROGRAM [ARGS...] */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int
child (const char *rootfs, char **argv)
{
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return perror ("floor: make / private"), 125;
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return perror ("floor: bind rootfs"), 125;
  if (chdir (rootfs) < 0)
    return perror ("floor: chdir rootfs"), 125;
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return perror ("floor: pivot_root"), 125;
  if (umount2 (".", MNT_DETACH) < 0)
    return perror ("floor: umount old root"), 125;
  if (chdir ("/") < 0)
    return perror ("floor: chdir /"), 125;
  execv (argv[0], argv);
  perror ("floor: exec");
  return 127;
}

int
main (int argc, char **argv)
{
  unsigned long flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
                        | CLONE_NEWNS | CLONE_NEWCGROUP;
  int i = 1, status;
  pid_t pid;

  if (i < argc && strcmp (argv[i], "--no-netns") == 0)
    {
      flags &= ~(unsigned long) CLONE_NEWNET;
      i++;
    }
  if (argc - i < 2)
    {
      fprintf (stderr, "usage: floor [--no-netns] ROOTFS PROGRAM [ARGS...]\n");
      return 2;
    }
  /* A raw clone without a new stack behaves like fork (the child runs on
   * a copy of this stack), which is all a single-threaded caller needs. */
  pid = (pid_t) syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid < 0)
    return perror ("floor: clone"), 125;
  if (pid == 0)
    _exit (child (argv[i], argv + i + 1));
  if (waitpid (pid, &status, 0) < 0)
    return perror ("floor: waitpid"), 125;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}
