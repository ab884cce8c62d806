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
 *   timer [--first-byte FIFO] [--out FILE] CMD [ARG...] [-- CMD [ARG...]]...
 *       The same, with options (bench/pool.sh):
 *       --first-byte FIFO: FIFO is opened before the clock starts; also
 *         print the microseconds until one byte arrived on it (the
 *         container's process writes it as its first act), waiting for it
 *         at most 20 s after the last command returned;
 *       --out FILE: the first command's stdout goes to FILE (appended)
 *         instead of /dev/null.
 *       An argument "{}" of a later command is replaced by the first line
 *       the first command printed (a claimed container's id), which is
 *       then captured through a pipe.
 *   timer --lifecycle RUNTIME ROOT BUNDLE ID PIDFILE
 *       RUNTIME --root ROOT create --bundle BUNDLE --pid-file PIDFILE ID,
 *       start ID, wait until the container's process has exited, delete
 *       ID. Print the microseconds of the whole lifecycle, then of create,
 *       start, the wait and delete.
 *
 * Every command gets /dev/null (or $TIMER_NULL) as stdin and stdout and
 * timer's stderr.
 * The wait watches a pidfd (the process is not timer's child), so no
 * polling loop competes with the container for a CPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdbool.h>
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

/* --first-byte: the fifo and when its byte came (0: not yet). */
static int fifo_fd = -1;
static long long first_byte_us;

/* Read the fifo's byte if it is there; note when it came. */
static void
take_byte (void)
{
  char b;
  if (fifo_fd >= 0 && first_byte_us == 0 && read (fifo_fd, &b, 1) == 1)
    first_byte_us = now_us ();
}

/* Wait for pid, watching the fifo meanwhile (a pidfd and the fifo in one
 * poll): 0 when it exited 0. */
static int
wait_child (pid_t pid)
{
  int st, pfd = fifo_fd >= 0 ? (int) syscall (SYS_pidfd_open, pid, 0) : -1;

  while (pfd >= 0)
    {
      struct pollfd p[2] = { { .fd = pfd, .events = POLLIN }, { .fd = fifo_fd, .events = POLLIN } };
      if (poll (p, first_byte_us ? 1 : 2, -1) < 0 && errno != EINTR)
        break;
      if (p[1].revents & POLLIN)
        take_byte ();
      if (p[0].revents & POLLIN)
        break;
    }
  if (pfd >= 0)
    close (pfd);
  while (waitpid (pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED (st) && WEXITSTATUS (st) == 0 ? 0 : -1;
}

/* Spawn argv with stdout on out_fd (-1: /dev/null) and wait for it: 0 when
 * it exited 0. */
static int
run_to (char **argv, int out_fd)
{
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int r;

  /* TIMER_NULL: a null device node of the caller's own (bench/runsc.sh:
   * runsc chowns the stdio it is given to its sandbox user, which must
   * not be the host's /dev/null) */
  const char *nul = getenv ("TIMER_NULL") && *getenv ("TIMER_NULL") ? getenv ("TIMER_NULL")
                                                                     : "/dev/null";

  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_addopen (&fa, 0, nul, O_RDONLY, 0);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2 (&fa, out_fd, 1);
  else
    posix_spawn_file_actions_addopen (&fa, 1, nul, O_WRONLY, 0);
  r = posix_spawn (&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  if (r != 0)
    {
      fprintf (stderr, "timer: %s: %s\n", argv[0], strerror (r));
      return -1;
    }
  return wait_child (pid);
}

static int
run (char **argv)
{
  return run_to (argv, -1);
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
  {
    const char *out = NULL;
    bool subst = false;
    char line[256] = "";
    long long t1;

    while (i + 1 < argc && (strcmp (argv[i], "--first-byte") == 0 || strcmp (argv[i], "--out") == 0))
      {
        if (strcmp (argv[i], "--out") == 0)
          out = argv[i + 1];
        else if ((fifo_fd = open (argv[i + 1], O_RDWR | O_NONBLOCK | O_CLOEXEC)) < 0)
          {
            fprintf (stderr, "timer: %s: %s\n", argv[i + 1], strerror (errno));
            return 2;
          }
        i += 2;
      }
    if (i >= argc)
      {
        fprintf (stderr, "usage: timer [--first-byte FIFO] [--out FILE] CMD [ARG...] "
                 "[-- CMD [ARG...]]...\n");
        return 2;
      }
    for (int k = i; k < argc; k++)
      subst |= strcmp (argv[k], "{}") == 0;
    if (fifo_fd >= 0)
      { /* a byte left by an earlier sample is not this one's */
        char junk[64];
        while (read (fifo_fd, junk, sizeof junk) > 0)
          ;
      }
    t0 = now_us ();
    for (bool first = true; i < argc; first = false)
      {
        int j = i, pipefd[2] = { -1, -1 }, out_fd = -1, r;
        while (j < argc && strcmp (argv[j], "--") != 0)
          j++;
        argv[j < argc ? j : argc] = NULL;
        for (int k = i; k < j && !first; k++)
          if (strcmp (argv[k], "{}") == 0)
            argv[k] = line;
        if (first && subst)
          {
            if (pipe2 (pipefd, O_CLOEXEC) < 0)
              return 1;
            out_fd = pipefd[1];
          }
        else if (first && out)
          out_fd = open (out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        r = j > i ? run_to (argv + i, out_fd) : 0;
        if (pipefd[1] >= 0)
          {
            ssize_t n;
            close (pipefd[1]);
            fcntl (pipefd[0], F_SETFL, O_NONBLOCK);
            n = read (pipefd[0], line, sizeof line - 1);
            line[n > 0 ? n : 0] = '\0';
            line[strcspn (line, "\n")] = '\0';
            close (pipefd[0]);
            if (out)
              {
                FILE *f = fopen (out, "ae");
                if (f)
                  fprintf (f, "%s\n", line), fclose (f);
              }
          }
        else if (out_fd >= 0)
          close (out_fd);
        if (r < 0)
          return 1;
        i = j + 1;
      }
    t1 = now_us ();
    if (fifo_fd < 0)
      {
        printf ("%lld\n", t1 - t0);
        return 0;
      }
    take_byte ();
    if (first_byte_us == 0)
      {
        struct pollfd p = { .fd = fifo_fd, .events = POLLIN };
        if (poll (&p, 1, 20000) > 0)
          take_byte ();
      }
    if (first_byte_us == 0)
      {
        fprintf (stderr, "timer: no byte on the fifo within 20 s\n");
        return 1;
      }
    printf ("%lld %lld\n", t1 - t0, first_byte_us - t0);
    return 0;
  }
}
