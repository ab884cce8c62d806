/* Per-user kernel limits, for tests/integration/boundary_limits.bats
 * (static, for the busybox rootfs; also run on the host).
 *
 *   limit_probe hold   in a tenant: take every per-user count the kernel
 *                      keeps as far as it goes (inotify instances until
 *                      EMFILE, POSIX message queues of 80 KiB until the
 *                      RLIMIT_MSGQUEUE bytes are used, keys until EDQUOT,
 *                      pipes of 1 MiB until the user's pipe pages are
 *                      used up and a new pipe is refused or shrunk), print
 *                      one line per count ("inotify N EMFILE", ...), then
 *                      leave a daemon holding all of it (stdio on
 *                      /dev/null) and exit 0
 *   limit_probe try    one of each, as any user would: prints "inotify ok",
 *                      "mqueue ok", "key ok", "pipe ok" or the error of the
 *                      one that fails, exits 1 when one does
 *   limit_probe owner PATH   the host uid owning the user namespace PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <linux/nsfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_PROCESS_KEYRING -2
#define PIPE_BIG (1 << 20)

static int
add_key (const char *desc)
{
  return (int) syscall (SYS_add_key, "user", desc, "0123456789", (size_t) 10,
                        KEY_SPEC_PROCESS_KEYRING);
}

/* Every count, to out; the fds stay open. */
static void
fill (FILE *out)
{
  struct mq_attr at = { .mq_maxmsg = 10, .mq_msgsize = 8192 };
  char name[64];
  int n, e, p[2];

  for (n = 0;; n++)
    if (inotify_init1 (IN_CLOEXEC) < 0)
      break;
  fprintf (out, "inotify %d %s\n", n, strerrorname_np (errno));
  for (n = 0;; n++)
    {
      snprintf (name, sizeof name, "/limit_probe.%d.%d", (int) getpid (), n);
      mqd_t q = mq_open (name, O_CREAT | O_EXCL | O_RDWR, 0600, &at);
      if (q == (mqd_t) -1)
        break;
      /* the queue stays charged while its descriptor is open */
      mq_unlink (name);
    }
  fprintf (out, "mqueue %d %s\n", n, strerrorname_np (errno));
  for (n = 0;; n++)
    {
      snprintf (name, sizeof name, "limit_probe.%d", n);
      if (add_key (name) < 0)
        break;
    }
  fprintf (out, "keys %d %s\n", n, strerrorname_np (errno));
  /* Pipes of 1 MiB until the kernel refuses more pages to this user. */
  for (n = 0;; n++)
    {
      if (pipe2 (p, O_CLOEXEC) < 0)
        {
          fprintf (out, "pipes %d refused %s\n", n, strerrorname_np (errno));
          break;
        }
      if (fcntl (p[0], F_SETPIPE_SZ, PIPE_BIG) < 0)
        {
          e = errno;
          fprintf (out, "pipes %d setsize %s new-size %d\n", n, strerrorname_np (e),
                   fcntl (p[0], F_GETPIPE_SZ));
          break;
        }
    }
}

static int
hold (void)
{
  int rp[2];
  char buf[4096];
  ssize_t len;
  pid_t pid;

  if (pipe (rp) < 0)
    return 1;
  pid = fork ();
  if (pid < 0)
    return 1;
  if (pid == 0)
    {
      FILE *out = fdopen (rp[1], "w");
      int null = open ("/dev/null", O_RDWR);
      close (rp[0]);
      setsid ();
      fill (out);
      fclose (out);
      dup2 (null, 0);
      dup2 (null, 1);
      dup2 (null, 2);
      for (;;)
        pause ();
    }
  close (rp[1]);
  while ((len = read (rp[0], buf, sizeof buf)) > 0)
    fwrite (buf, 1, (size_t) len, stdout);
  return 0;
}

static int
try_one_of_each (void)
{
  struct mq_attr at = { .mq_maxmsg = 10, .mq_msgsize = 8192 };
  char name[64];
  int fails = 0, fd, p[2];
  mqd_t q;

  fd = inotify_init1 (IN_CLOEXEC);
  printf ("inotify %s\n", fd >= 0 ? "ok" : strerrorname_np (errno));
  fails += fd < 0;
  snprintf (name, sizeof name, "/limit_probe.try.%d", (int) getpid ());
  q = mq_open (name, O_CREAT | O_EXCL | O_RDWR, 0600, &at);
  printf ("mqueue %s\n", q != (mqd_t) -1 ? "ok" : strerrorname_np (errno));
  fails += q == (mqd_t) -1;
  if (q != (mqd_t) -1)
    mq_unlink (name);
  fd = add_key ("limit_probe.try");
  printf ("key %s\n", fd >= 0 ? "ok" : strerrorname_np (errno));
  fails += fd < 0;
  /* A pipe of the default size that can grow to 1 MiB: a user over its
   * pipe pages gets one page and may not grow it. */
  if (pipe2 (p, O_CLOEXEC) < 0)
    {
      printf ("pipe %s\n", strerrorname_np (errno));
      return 1;
    }
  if (fcntl (p[0], F_GETPIPE_SZ) < 65536)
    {
      printf ("pipe shrunk %d\n", fcntl (p[0], F_GETPIPE_SZ));
      fails++;
    }
  else if (fcntl (p[0], F_SETPIPE_SZ, PIPE_BIG) < 0)
    {
      printf ("pipe setsize %s\n", strerrorname_np (errno));
      fails++;
    }
  else
    printf ("pipe ok\n");
  return fails ? 1 : 0;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "hold") == 0)
    return hold ();
  if (argc == 2 && strcmp (argv[1], "try") == 0)
    return try_one_of_each ();
  if (argc == 3 && strcmp (argv[1], "owner") == 0)
    {
      uid_t owner;
      int fd = open (argv[2], O_RDONLY | O_CLOEXEC);
      if (fd < 0 || ioctl (fd, NS_GET_OWNER_UID, &owner) < 0)
        {
          perror (argv[2]);
          return 1;
        }
      printf ("%u\n", (unsigned) owner);
      return 0;
    }
  fprintf (stderr, "usage: limit_probe hold|try|owner PATH\n");
  return 2;
}
