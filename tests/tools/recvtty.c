/* recvtty: a console-socket receiver for the tests.
 *
 * Listens on a unix socket, receives a pty master sent with SCM_RIGHTS (as
 * a runtime does for process.terminal with --console-socket) and then
 *   single: copies the pty to stdout and stdin to the pty until the pty's
 *           last slave is closed, then exits (one connection);
 *   null:   accepts connections forever and discards what the ptys print.
 * The pid file is written once the socket listens, so a test can wait for
 * it before starting the runtime. Standalone on purpose: it checks brig's
 * side of the protocol, so it must not share brig's code.
 *
 * usage: recvtty [--mode single|null] [--pid-file F] [--timeout SECS]
 *                [--name-file F] SOCKET_PATH */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1 /* accept4 when built outside the tree */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void
die (const char *what)
{
  fprintf (stderr, "recvtty: %s: %s\n", what, strerror (errno));
  exit (1);
}

static void
write_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t w = write (fd, buf, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return;
      buf += w;
      len -= (size_t) w;
    }
}

static int
listen_on (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int s;

  if (strlen (path) >= sizeof addr.sun_path)
    {
      errno = ENAMETOOLONG;
      die (path);
    }
  strcpy (addr.sun_path, path);
  s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    die ("socket");
  unlink (path);
  if (bind (s, (struct sockaddr *) &addr, sizeof addr) < 0)
    die ("bind");
  if (listen (s, 16) < 0)
    die ("listen");
  return s;
}

/* Accept one connection and receive the master; its name goes to *name. */
static int
receive_master (int lsock, char *name, size_t name_size)
{
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = name, .iov_len = name_size - 1 };
  struct msghdr msg = { 0 };
  struct cmsghdr *cmsg;
  ssize_t r;
  int conn, fd;

  conn = accept4 (lsock, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    die ("accept");
  memset (&ctl, 0, sizeof ctl);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  do
    r = recvmsg (conn, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    die ("recvmsg");
  close (conn);
  cmsg = CMSG_FIRSTHDR (&msg);
  if (r == 0 || cmsg == NULL || cmsg->cmsg_type != SCM_RIGHTS
      || cmsg->cmsg_len != CMSG_LEN (sizeof (int)))
    {
      fprintf (stderr, "recvtty: no file descriptor received (%zd bytes of data)\n", r);
      exit (1);
    }
  name[r] = '\0';
  memcpy (&fd, CMSG_DATA (cmsg), sizeof fd);
  if (!isatty (fd))
    {
      fprintf (stderr, "recvtty: the received fd is not a terminal\n");
      exit (1);
    }
  return fd;
}

/* Copy master <-> stdio until the pty has no slave left (read gives EIO). */
static void
copy_single (int master)
{
  bool in_open = true;
  char buf[8192];

  for (;;)
    {
      struct pollfd pfd[2] = {
        { .fd = master, .events = POLLIN },
        { .fd = STDIN_FILENO, .events = POLLIN },
      };
      ssize_t r;

      if (poll (pfd, in_open ? 2 : 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          die ("poll");
        }
      if (pfd[0].revents)
        {
          r = read (master, buf, sizeof buf);
          if (r < 0 && errno == EINTR)
            continue;
          if (r <= 0)
            return;
          write_all (STDOUT_FILENO, buf, (size_t) r);
        }
      if (in_open && pfd[1].revents)
        {
          r = read (STDIN_FILENO, buf, sizeof buf);
          if (r <= 0)
            in_open = false;
          else
            write_all (master, buf, (size_t) r);
        }
    }
}

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "we");
  if (f == NULL)
    die (path);
  fputs (text, f);
  if (fclose (f) != 0)
    die (path);
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "mode", required_argument, NULL, 'm' },
    { "pid-file", required_argument, NULL, 'p' },
    { "timeout", required_argument, NULL, 't' },
    { "name-file", required_argument, NULL, 'n' },
    { NULL, 0, NULL, 0 },
  };
  const char *mode = "single", *pid_file = NULL, *name_file = NULL;
  char name[256];
  int c, lsock, master;

  while ((c = getopt_long (argc, argv, "m:p:t:n:", opts, NULL)) != -1)
    switch (c)
      {
      case 'm': mode = optarg; break;
      case 'p': pid_file = optarg; break;
      case 't': alarm ((unsigned) atoi (optarg)); break;
      case 'n': name_file = optarg; break;
      default:
        fprintf (stderr, "usage: recvtty [--mode single|null] [--pid-file F] "
                 "[--timeout SECS] [--name-file F] SOCKET_PATH\n");
        return 2;
      }
  if (optind != argc - 1 || (strcmp (mode, "single") != 0 && strcmp (mode, "null") != 0))
    {
      fprintf (stderr, "recvtty: expected one socket path and mode single or null\n");
      return 2;
    }
  signal (SIGPIPE, SIG_IGN);

  lsock = listen_on (argv[optind]);
  if (pid_file)
    {
      char pid[32];
      snprintf (pid, sizeof pid, "%d\n", (int) getpid ());
      write_file (pid_file, pid);
    }

  if (strcmp (mode, "single") == 0)
    {
      master = receive_master (lsock, name, sizeof name);
      close (lsock);
      if (name_file)
        write_file (name_file, name);
      copy_single (master);
      return 0;
    }

  signal (SIGCHLD, SIG_IGN); /* reap the drainers */
  for (;;)
    {
      master = receive_master (lsock, name, sizeof name);
      if (fork () == 0)
        {
          char buf[8192];
          ssize_t r;
          close (lsock);
          do
            r = read (master, buf, sizeof buf);
          while (r > 0 || (r < 0 && errno == EINTR));
          _exit (0);
        }
      close (master);
    }
}
