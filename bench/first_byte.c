/* first_byte: the container process of bench/pool.sh's latency samples.
 * Its first act is to write one byte to /bench/fifo (bind-mounted from
 * the harness, which holds the fifo open and times the byte); then it
 * waits, so that `exec` and `release` find a running container.
 *
 * Built static without libc's start-up (-nostdlib, x86-64 and aarch64):
 * glibc's start-up probes the CPU with cpuid instructions that trap to the
 * hypervisor on these VMs (~0.3 ms), which would land in every sample and
 * is not the runtime's. Elsewhere it falls back to a libc main. */
#if defined(__x86_64__) || defined(__aarch64__)
#include <asm/unistd.h>

static long
sys4 (long n, long a, long b, long c, long d)
{
  long r;
#if defined(__x86_64__)
  register long r10 __asm__ ("r10") = d;
  __asm__ volatile ("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
                    : "rcx", "r11", "memory");
#else
  register long x8 __asm__ ("x8") = n, x0 __asm__ ("x0") = a, x1 __asm__ ("x1") = b,
                x2 __asm__ ("x2") = c, x3 __asm__ ("x3") = d;
  __asm__ volatile ("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  r = x0;
#endif
  return r;
}

void __attribute__ ((noreturn)) _start (void)
{
  static const char path[] = "/bench/fifo";
  long fd = sys4 (__NR_openat, -100 /* AT_FDCWD */, (long) path, 01 /* O_WRONLY */, 0);
  if (fd >= 0)
    {
      sys4 (__NR_write, fd, (long) "x", 1, 0);
      sys4 (__NR_close, fd, 0, 0, 0);
    }
  for (;;) /* pause() is not on aarch64: ppoll with no fds, no timeout, no mask */
    sys4 (__NR_ppoll, 0, 0, 0, 0);
}
#else
#include <fcntl.h>
#include <unistd.h>

int
main (void)
{
  int fd = open ("/bench/fifo", O_WRONLY);
  if (fd >= 0)
    write (fd, "x", 1);
  for (;;)
    pause ();
}
#endif
