/* getpid_loop: the seccomp benchmark's workload. Calls getpid(2) through
 * syscall(2) (no libc caching) ITERATIONS times in a tight loop and prints
 * the nanoseconds per call, so the cost of the seccomp filter on an
 * allowed syscall shows directly. The loop runs in 20 rounds and the
 * fastest round counts: on a loaded machine the slower rounds measure
 * preemption, not the syscall. Built static (gcc -static -O2) into the
 * benchmark bundle's rootfs.
 *
 *   getpid_loop [ITERATIONS]     default 2000000 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int
main (int argc, char **argv)
{
  long n = argc > 1 ? strtol (argv[1], NULL, 10) : 2000000;
  struct timespec a, b;
  long i, per_round;
  double ns, best = -1;
  int r;

  if (n <= 0)
    n = 2000000;
  /* Warm up caches and the filter path. */
  for (i = 0; i < 1000; i++)
    syscall (SYS_getpid);
  per_round = n / 20 > 0 ? n / 20 : 1;
  for (r = 0; r < 20; r++)
    {
      clock_gettime (CLOCK_MONOTONIC, &a);
      for (i = 0; i < per_round; i++)
        syscall (SYS_getpid);
      clock_gettime (CLOCK_MONOTONIC, &b);
      ns = (double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec);
      ns /= (double) per_round;
      if (best < 0 || ns < best)
        best = ns;
    }
  printf ("%.2f\n", best);
  return 0;
}
