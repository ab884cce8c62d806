/* connect_loop: the network work of bench/egress.sh, run inside a
 * container. Listens on 127.0.0.1 (the container's own loopback), then
 *   connect_loop N      N connect()+close() to it: prints "connect_ns MEDIAN"
 *                       (the median of N single calls, nanoseconds)
 *   connect_loop -t MB  sends MB MiB over one TCP connection to a forked
 *                       reader: prints "tcp_mib_s RATE"
 * Static, so it runs in the busybox rootfs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long
now_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (long long) t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int
cmp (const void *a, const void *b)
{
  long long x = *(const long long *) a, y = *(const long long *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t al = sizeof a;
  int l = socket (AF_INET, SOCK_STREAM, 0);
  if (argc < 2 || bind (l, (struct sockaddr *) &a, sizeof a) < 0 || listen (l, 4096) < 0
      || getsockname (l, (struct sockaddr *) &a, &al) < 0)
    {
      fprintf (stderr, "usage: connect_loop N | -t MB\n");
      return 2;
    }
  if (strcmp (argv[1], "-t") == 0 && argc == 3)
    {
      long mb = atol (argv[2]);
      static char buf[1 << 16];
      long long t0;
      pid_t pid = fork ();
      if (pid == 0)
        {
          int c = accept (l, NULL, NULL);
          while (read (c, buf, sizeof buf) > 0)
            ;
          _exit (0);
        }
      int s = socket (AF_INET, SOCK_STREAM, 0);
      connect (s, (struct sockaddr *) &a, sizeof a);
      t0 = now_ns ();
      for (long i = 0; i < mb * 16; i++)
        if (write (s, buf, sizeof buf) < 0)
          return 1;
      close (s);
      waitpid (pid, NULL, 0);
      printf ("tcp_mib_s %.0f\n", (double) mb / ((double) (now_ns () - t0) / 1e9));
      return 0;
    }
  long n = atol (argv[1]);
  long long *t = calloc ((size_t) n, sizeof *t);
  for (long i = 0; i < n; i++)
    {
      int s = socket (AF_INET, SOCK_STREAM, 0);
      long long t0 = now_ns ();
      if (connect (s, (struct sockaddr *) &a, sizeof a) < 0)
        return 1;
      t[i] = now_ns () - t0;
      close (s);
      int c = accept (l, NULL, NULL);
      close (c);
    }
  qsort (t, (size_t) n, sizeof *t, cmp);
  printf ("connect_ns %lld\n", t[n / 2]);
  return 0;
}
