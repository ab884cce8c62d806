/* seccomp_listener: a test agent for SCMP_ACT_NOTIFY (config-linux.md
 * "listenerPath"). It listens on a unix socket, accepts one connection
 * from the runtime, records the container process state JSON it receives,
 * takes the seccomp fd from SCM_RIGHTS, and answers every notification:
 *
 *   mkdir / mkdirat      -> success (0) without creating anything, or
 *                           -ERRNO with --mkdir-errno N
 *   getpid-like / other  -> return value --value V (default 4242)
 *
 * Usage: seccomp_listener SOCKET STATE_OUT [--mkdir-errno N] [--value V]
 *                         [--count N]
 * It writes "ready" to stdout once listening, and exits after N answered
 * notifications or (by default) when no process uses the filter any more. */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

/* True once buf holds a whole JSON object: runtimes need not close the
 * connection before the container runs, so EOF cannot be the end. */
static int
json_complete (const char *buf, size_t len)
{
  int depth = 0, in_str = 0, esc = 0, seen = 0;
  for (size_t i = 0; i < len; i++)
    {
      char c = buf[i];
      if (in_str)
        {
          if (esc)
            esc = 0;
          else if (c == '\\')
            esc = 1;
          else if (c == '"')
            in_str = 0;
          continue;
        }
      if (c == '"')
        in_str = 1;
      else if (c == '{' || c == '[')
        depth++, seen = 1;
      else if (c == '}' || c == ']')
        depth--;
    }
  return seen && depth == 0;
}

static int
receive_state (int conn, const char *out, int *fd)
{
  char buf[65536], c[CMSG_SPACE (sizeof (int) * 4)];
  size_t len = 0;
  FILE *f;

  *fd = -1;
  for (;;)
    {
      struct iovec iov = { .iov_base = buf + len, .iov_len = sizeof buf - 1 - len };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c,
                            .msg_controllen = sizeof c };
      ssize_t n = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      for (struct cmsghdr *cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && *fd < 0)
          memcpy (fd, CMSG_DATA (cm), sizeof (int));
      len += (size_t) n;
      if (n == 0 || len >= sizeof buf - 1 || json_complete (buf, len))
        break;
    }
  buf[len] = '\0';
  f = fopen (out, "w");
  if (f == NULL)
    return -1;
  fputs (buf, f);
  fclose (f);
  return 0;
}

int
main (int argc, char **argv)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  long mkdir_errno = 0, value = 4242, count = -1;
  int lfd, conn, sfd;

  if (argc < 3)
    {
      fprintf (stderr, "usage: %s SOCKET STATE_OUT [--mkdir-errno N] [--value V] [--count N]\n", argv[0]);
      return 2;
    }
  for (int i = 3; i + 1 < argc; i += 2)
    {
      if (strcmp (argv[i], "--mkdir-errno") == 0)
        mkdir_errno = strtol (argv[i + 1], NULL, 0);
      else if (strcmp (argv[i], "--value") == 0)
        value = strtol (argv[i + 1], NULL, 0);
      else if (strcmp (argv[i], "--count") == 0)
        count = strtol (argv[i + 1], NULL, 0);
    }
  if (strlen (argv[1]) >= sizeof addr.sun_path)
    return 2;
  strcpy (addr.sun_path, argv[1]);
  unlink (argv[1]);
  lfd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || bind (lfd, (struct sockaddr *) &addr, sizeof addr) < 0 || listen (lfd, 1) < 0)
    {
      perror ("listen");
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);
  conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0 || receive_state (conn, argv[2], &sfd) < 0 || sfd < 0)
    {
      fprintf (stderr, "seccomp_listener: no state or fd received\n");
      return 1;
    }
  close (conn);

  while (count != 0)
    {
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;

      struct pollfd pfd = { .fd = sfd, .events = POLLIN };

      /* POLLHUP: every process using the filter has exited. */
      if (poll (&pfd, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (pfd.revents & POLLHUP)
        break;
      memset (&req, 0, sizeof req);
      if (ioctl (sfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        {
          /* EINTR, or ENOENT: the caller died before we looked. */
          if (errno == EINTR || errno == ENOENT)
            continue;
          break;
        }
      memset (&resp, 0, sizeof resp);
      resp.id = req.id;
      if (req.data.nr == SYS_mkdir || req.data.nr == SYS_mkdirat)
        {
          resp.error = mkdir_errno ? (int) -mkdir_errno : 0;
          resp.val = 0;
        }
      else
        resp.val = value;
      if (ioctl (sfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
        perror ("SECCOMP_IOCTL_NOTIF_SEND");
      if (count > 0)
        count--;
    }
  return 0;
}
