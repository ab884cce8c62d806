/* seccomp_listener: a test agent for SCMP_ACT_NOTIFY (config-linux.md
 * "listenerPath"). It listens on a unix socket, accepts one connection
 * from the runtime, records the container process state JSON it receives,
 * takes the seccomp fd from SCM_RIGHTS, and answers every notification:
 *
 *   mkdir / mkdirat      -> success (0) without creating anything, or
 *                           -ERRNO with --mkdir-errno N
 *   getpid-like / other  -> return value --value V (default 4242), or, with
 *                           --continue 1, SECCOMP_USER_NOTIF_FLAG_CONTINUE:
 *                           the kernel runs the call as if not notified
 *
 * --log FILE appends the name (or number) of every notified syscall, one a
 * line, so a test can tell which calls were notified. --hold 1 takes the fd
 * and never answers (an agent that hangs).
 *
 * Usage: seccomp_listener SOCKET STATE_OUT [--mkdir-errno N] [--value V]
 *                         [--count N] [--continue 1] [--log FILE] [--hold 1]
 * It takes one connection per process (the container init, then each
 * exec; the states go to STATE_OUT, STATE_OUT.2, ...), writes "ready" to
 * stdout once listening, and exits after N answered notifications or (by
 * default) when no process uses any of the filters any more. */
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

#define MAX_FDS 8

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

/* Names for the log: the calls a runtime's init makes after the filter. */
static const struct {
  long nr;
  const char *name;
} names[] = {
  { SYS_read, "read" },       { SYS_write, "write" },     { SYS_close, "close" },
  { SYS_openat, "openat" },   { SYS_execve, "execve" },   { SYS_sendmsg, "sendmsg" },
  { SYS_recvmsg, "recvmsg" }, { SYS_chdir, "chdir" },     { SYS_fchdir, "fchdir" },
  { SYS_getcwd, "getcwd" },   { SYS_prctl, "prctl" },     { SYS_accept4, "accept4" },
  { SYS_setresuid, "setresuid" }, { SYS_setresgid, "setresgid" },
  { SYS_setgroups, "setgroups" }, { SYS_capset, "capset" },
  { SYS_rt_sigaction, "rt_sigaction" }, { SYS_fcntl, "fcntl" },
  { SYS_close_range, "close_range" }, { SYS_newfstatat, "newfstatat" },
  { SYS_faccessat, "faccessat" },
#ifdef SYS_execveat
  { SYS_execveat, "execveat" },
#endif
#ifdef SYS_mkdir
  { SYS_mkdir, "mkdir" },
#endif
  { SYS_mkdirat, "mkdirat" },
};

static void
log_call (FILE *log, long nr)
{
  if (log == NULL)
    return;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (names[i].nr == nr)
      {
        fprintf (log, "%s\n", names[i].name);
        fflush (log);
        return;
      }
  fprintf (log, "%ld\n", nr);
  fflush (log);
}

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
  long mkdir_errno = 0, value = 4242, count = -1, cont = 0, hold = 0;
  FILE *log = NULL;
  int lfd, conn, sfd = -1;

  if (argc < 3)
    {
      fprintf (stderr, "usage: %s SOCKET STATE_OUT [--mkdir-errno N] [--value V] [--count N] "
               "[--continue 1] [--log FILE] [--hold 1]\n", argv[0]);
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
      else if (strcmp (argv[i], "--continue") == 0)
        cont = strtol (argv[i + 1], NULL, 0);
      else if (strcmp (argv[i], "--hold") == 0)
        hold = strtol (argv[i + 1], NULL, 0);
      else if (strcmp (argv[i], "--log") == 0 && (log = fopen (argv[i + 1], "a")) == NULL)
        {
          perror (argv[i + 1]);
          return 2;
        }
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

  /* One connection per process (the init, then each `exec`): poll the
   * listening socket and every seccomp fd received so far. */
  struct pollfd pfd[1 + MAX_FDS];
  int nfds = 0, conns = 0;
  pfd[0] = (struct pollfd) { .fd = lfd, .events = POLLIN };
  while (count != 0)
    {
      if (poll (pfd, (nfds_t) (1 + nfds), -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if ((pfd[0].revents & POLLIN) && nfds < MAX_FDS)
        {
          char out[4096];
          conn = accept4 (lfd, NULL, NULL, SOCK_CLOEXEC);
          if (conns == 0)
            snprintf (out, sizeof out, "%s", argv[2]);
          else
            snprintf (out, sizeof out, "%s.%d", argv[2], conns + 1);
          if (conn < 0 || receive_state (conn, out, &sfd) < 0 || sfd < 0)
            {
              fprintf (stderr, "seccomp_listener: no state or fd received\n");
              return 1;
            }
          close (conn);
          conns++;
          pfd[1 + nfds++] = (struct pollfd) { .fd = sfd, .events = hold ? 0 : POLLIN };
        }
      for (int k = 1; k <= nfds; k++)
        {
          struct seccomp_notif req;
          struct seccomp_notif_resp resp;

          /* POLLHUP: every process using this filter has exited. */
          if (pfd[k].revents & POLLHUP)
            {
              close (pfd[k].fd);
              pfd[k] = pfd[nfds--];
              k--;
              continue;
            }
          if (!(pfd[k].revents & POLLIN))
            continue;
          memset (&req, 0, sizeof req);
          if (ioctl (pfd[k].fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
            continue; /* EINTR, or ENOENT: the caller died before we looked */
          log_call (log, req.data.nr);
          memset (&resp, 0, sizeof resp);
          resp.id = req.id;
          if (req.data.nr == SYS_mkdir || req.data.nr == SYS_mkdirat)
            {
              resp.error = mkdir_errno ? (int) -mkdir_errno : 0;
              resp.val = 0;
            }
          else if (cont)
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
          else
            resp.val = value;
          if (ioctl (pfd[k].fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
            perror ("SECCOMP_IOCTL_NOTIF_SEND");
          if (count > 0)
            count--;
        }
      if (conns > 0 && nfds == 0)
        break;
    }
  return 0;
}
