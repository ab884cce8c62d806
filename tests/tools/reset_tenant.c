/* The tenant of tests/integration/sandbox_reset.bats, run inside the
 * container (static, for the busybox rootfs).
 *
 *   reset_tenant leave   leave what busybox cannot: SysV shm, sem and msg
 *                        objects, a POSIX message queue, a key in the
 *                        session keyring, a listening TCP socket on
 *                        127.0.0.1:7777 and an established connection to
 *                        it, held by a daemon (double fork, new session,
 *                        SIGTERM ignored); prints "left"
 *   reset_tenant check   print one line per thing of a tenant still there
 *                        (or "clean") and exit 1 when something is
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_SESSION_KEYRING -3
#define KEYCTL_SEARCH 10
#define IPC_KEY 0x7e5e7

static long
add_key (const char *type, const char *desc, const void *payload, size_t len, int ring)
{
  return syscall (SYS_add_key, type, desc, payload, len, ring);
}

static int
leave (void)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (7777) };
  int one = 1, l, c, a, p[2];
  char ok;

  if (shmget (IPC_KEY, 4096, IPC_CREAT | 0600) < 0 || semget (IPC_KEY, 1, IPC_CREAT | 0600) < 0
      || msgget (IPC_KEY, IPC_CREAT | 0600) < 0)
    {
      perror ("sysv ipc");
      return 1;
    }
  {
    mqd_t q = mq_open ("/brig-tenant", O_CREAT | O_RDWR, 0600, NULL);
    if (q == (mqd_t) -1)
      {
        perror ("mq_open");
        return 1;
      }
    mq_close (q);
  }
  if (add_key ("user", "brig-tenant", "secret", 6, KEY_SPEC_SESSION_KEYRING) < 0
      || syscall (SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", "brig-tenant", 0) < 0)
    {
      perror ("add_key");
      return 1;
    }
  if (pipe (p) < 0)
    return 1;
  if (fork () == 0)
    {
      /* the daemon: new session, second fork, SIGTERM ignored */
      setsid ();
      if (fork () != 0)
        _exit (0);
      signal (SIGTERM, SIG_IGN);
      inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
      l = socket (AF_INET, SOCK_STREAM, 0);
      setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (l < 0 || bind (l, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (l, 4) < 0)
        _exit (1);
      c = socket (AF_INET, SOCK_STREAM, 0);
      if (c < 0 || connect (c, (struct sockaddr *) &sa, sizeof sa) < 0)
        _exit (1);
      a = accept (l, NULL, NULL);
      if (a < 0 || write (c, "x", 1) != 1)
        _exit (1);
      if (write (p[1], "k", 1) != 1)
        _exit (1);
      close (p[1]);
      close (0);
      close (1);
      close (2);
      for (;;)
        pause ();
    }
  close (p[1]);
  if (read (p[0], &ok, 1) != 1)
    {
      fprintf (stderr, "the daemon failed\n");
      return 1;
    }
  puts ("left");
  return 0;
}

/* Lines of a /proc table beyond its header. */
static int
rows (const char *path)
{
  FILE *f = fopen (path, "r");
  char line[512];
  int n = -1;
  if (f == NULL)
    return 0;
  while (fgets (line, sizeof line, f))
    n++;
  fclose (f);
  return n < 0 ? 0 : n;
}

static int
check (void)
{
  static const char *const tables[] = { "/proc/sysvipc/shm", "/proc/sysvipc/sem",
                                        "/proc/sysvipc/msg", "/proc/net/tcp", "/proc/net/tcp6",
                                        "/proc/net/udp", "/proc/net/unix" };
  int bad = 0;
  mqd_t q;

  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
    {
      int n = rows (tables[i]);
      if (n > 0)
        {
          printf ("%s: %d\n", tables[i], n);
          bad = 1;
        }
    }
  q = mq_open ("/brig-tenant", O_RDONLY);
  if (q != (mqd_t) -1)
    {
      puts ("mqueue /brig-tenant");
      bad = 1;
    }
  if (syscall (SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", "brig-tenant", 0) >= 0)
    {
      puts ("key brig-tenant in the session keyring");
      bad = 1;
    }
  if (!bad)
    puts ("clean");
  return bad;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "leave") == 0)
    return leave ();
  if (argc == 2 && strcmp (argv[1], "check") == 0)
    return check ();
  fprintf (stderr, "usage: reset_tenant leave|check\n");
  return 2;
}
