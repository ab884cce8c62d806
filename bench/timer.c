/* timer: spawn and time runtime commands for the benchmarks.
 *
 * A shell that runs a command forks itself first; on the benchmark VMs
 * that fork (of a bash holding the harness) costs 1-2 ms, charged to
 * whichever runtime runs next. timer starts every command with
 * posix_spawn(3) (vfork + exec, as engines written in Go start the
 * runtime) so the samples hold the runtime's cost and little else. The
 * shell starts timer itself outside the measured interval.
 *
 *   timer CMD [ARG...] [-- CMD [ARG...]]...
 *       Run the commands one after the other; print the wall time of the
 *       whole sequence in microseconds. Exit 1 if one of them fails.
 *   timer --lifecycle RUNTIME ROOT BUNDLE ID PIDFILE
 *       RUNTIME --root ROOT create --bundle BUNDLE --pid-file PIDFILE ID,
 *       start ID, wait until the container's process has exited, delete
 *       ID. Print the microseconds of the whole lifecycle, then of create,
 *       start, the wait and delete.
 *
 * Every command gets /dev/null as stdin and stdout and timer's stderr.
 * The wait watches a pidfd (the process is not timer's child), so no
 * polling loop competes with the container for a CPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long
now_us (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

/* Spawn argv and wait for it: 0 when it exited 0. */
static int
run (char **argv)
{
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int st, r;

  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen (&fa, 1, "/dev/null", O_WRONLY, 0);
  r = posix_spawn (&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    {
      fprintf (stderr, "timer: %s: %s\n", argv[0], strerror (r));
      return -1;
    }
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (st) && WEXITSTATUS (st) == 0 ? 0 : -1;
}

/* The process has exited: gone, or a zombie nobody reaped yet. */
static int
exited (pid_t pid)
{
  char path[64], buf[512], *p;
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 1;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 1;
  buf[n] = '\0';
  p = strrchr (buf, ')');
  return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void
wait_exit (pid_t pid)
{
  int fd = (int) syscall (SYS_pidfd_open, pid, 0);

  if (fd >= 0)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      while (poll (&p, 1, -1) < 0 && errno == EINTR)
        ;
      close (fd);
      return;
    }
  while (!exited (pid))
    {
      struct timespec d = { 0, 200000 };
      nanosleep (&d, NULL);
    }
}

static int
lifecycle (char **a)
{
  char *rt = a[0], *root = a[1], *bundle = a[2], *id = a[3], *pidfile = a[4];
  char *create[] = { rt, "--root", root, "create", "--bundle", bundle, "--pid-file", pidfile,
                     id, NULL };
  char *start[] = { rt, "--root", root, "start", id, NULL };
  char *delete[] = { rt, "--root", root, "delete", id, NULL };
  long long t[5];
  FILE *f;
  int pid = 0;

  t[0] = now_us ();
  if (run (create) < 0)
    return 1;
  t[1] = now_us ();
  f = fopen (pidfile, "re");
  if (f == NULL || fscanf (f, "%d", &pid) != 1 || pid <= 0)
    {
      fprintf (stderr, "timer: no pid in %s\n", pidfile);
      return 1;
    }
  fclose (f);
  if (run (start) < 0)
    return 1;
  t[2] = now_us ();
  wait_exit (pid);
  t[3] = now_us ();
  if (run (delete) < 0)
    return 1;
  t[4] = now_us ();
  printf ("%lld %lld %lld %lld %lld\n", t[4] - t[0], t[1] - t[0], t[2] - t[1], t[3] - t[2],
          t[4] - t[3]);
  return 0;
}

int
main (int argc, char **argv)
{
  long long t0;
  int i = 1;

  if (argc > 1 && strcmp (argv[1], "--lifecycle") == 0)
    {
      if (argc != 7)
        {
          fprintf (stderr, "usage: timer --lifecycle RUNTIME ROOT BUNDLE ID PIDFILE\n");
          return 2;
        }
      return lifecycle (argv + 2);
    }
  if (argc < 2)
    {
      fprintf (stderr, "usage: timer CMD [ARG...] [-- CMD [ARG...]]...\n");
      return 2;
    }
  t0 = now_us ();
  while (i < argc)
    {
      int j = i;
      while (j < argc && strcmp (argv[j], "--") != 0)
        j++;
      argv[j < argc ? j : argc] = NULL;
      if (j > i && run (argv + i) < 0)
        return 1;
      i = j + 1;
    }
  printf ("%lld\n", now_us () - t0);
  return 0;
}
