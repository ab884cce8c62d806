/* Terminals: pty creation inside the container, the console-socket hand
 * over (SCM_RIGHTS) and the foreground proxy. See terminal.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"
#include "process/terminal.h"
#include "utils.h"

#ifndef TIOCGPTPEER
# define TIOCGPTPEER _IO ('T', 0x41)
#endif

/* A foreground process's terminal is relayed to and from brig's own
 * stdio. With no terminal on brig's side at all (no stdio is one and there
 * is no controlling terminal: a script, a CI job, `setsid`), a shell in it
 * waits for input nobody can type and ignores the SIGTERM meant to end it:
 * `run` hung. Refused before anything exists, as runc refuses (with the
 * same "open /dev/tty: no such device or address"). A terminal on stdout
 * or stderr alone is enough, as for runc: the input then ends with the EOF
 * character (brig_terminal_proxy). */
static int
check_host_terminal (brig_error *err)
{
  int fd, e;

  for (int i = 0; i <= 2; i++)
    if (isatty (i))
      return 0;
  fd = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0)
    {
      close (fd);
      return 0;
    }
  e = errno;
  return brig_error_set (err, 0, "process.terminal (exec: --tty) in the foreground needs a "
                         "terminal on brig's side, and there is none: stdin, stdout and stderr "
                         "are not terminals, and open /dev/tty: %s (no controlling terminal); "
                         "give brig a terminal, or use --detach with --console-socket, or run "
                         "without one (process.terminal false, exec without --tty)",
                         e == ENXIO ? "no such device or address" : strerror (e));
}

int
brig_terminal_check_mode (bool terminal, bool detach, const char *console_socket,
                          brig_error *err)
{
  bool have_socket = console_socket != NULL && *console_socket != '\0';

  if (terminal && detach && !have_socket)
    return brig_error_set (err, 0, "a terminal for a detached process needs --console-socket: "
                           "nothing would receive the pty otherwise");
  if (have_socket && !terminal)
    return brig_error_set (err, 0, "--console-socket needs process.terminal (or --tty): "
                           "there is no pty to send");
  if (have_socket && !detach)
    return brig_error_set (err, 0, "--console-socket needs a detached process (--detach): "
                           "a foreground process keeps the pty itself");
  if (terminal && !detach)
    return check_host_terminal (err);
  return 0;
}

int
brig_terminal_connect_socket (const char *path, int *fd, brig_error *err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  _cleanup_close_ int s = -1;

  if (strlen (path) >= sizeof addr.sun_path)
    return brig_error_set (err, ENAMETOOLONG, "console socket %s", path);
  memcpy (addr.sun_path, path, strlen (path) + 1);

  s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return brig_error_errno (err, "console socket %s: socket", path);
  if (connect (s, (struct sockaddr *) &addr, sizeof addr) < 0)
    return brig_error_errno (err, "connect to console socket %s", path);
  *fd = brig_steal_fd (s);
  return 0;
}

int
brig_terminal_set_size (int fd, unsigned short rows, unsigned short cols, brig_error *err)
{
  struct winsize ws = { .ws_row = rows, .ws_col = cols };

  if (ioctl (fd, TIOCSWINSZ, &ws) < 0)
    return brig_error_errno (err, "set terminal size %ux%u", cols, rows);
  return 0;
}

/* The slave through TIOCGPTPEER (no path lookup: the container cannot swap
 * /dev/pts/N under us), else by its name in the same devpts. */
static int
open_slave (int master, int *slave, brig_error *err)
{
  char path[64];
  unsigned int n;
  int fd;

  fd = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd >= 0)
    {
      *slave = fd;
      return 0;
    }
  if (errno != EINVAL && errno != ENOTTY)
    return brig_error_errno (err, "open pty slave");
  if (ioctl (master, TIOCGPTN, &n) < 0)
    return brig_error_errno (err, "pty number");
  snprintf (path, sizeof path, "/dev/pts/%u", n);
  fd = open (path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return brig_error_errno (err, "open %s", path);
  *slave = fd;
  return 0;
}

int
brig_terminal_open_pty (const char *ptmx, const oci_console_size *size, int *master,
                        int *slave, brig_error *err)
{
  _cleanup_close_ int m = -1;
  int unlock = 0, r;

  if (ptmx == NULL)
    ptmx = "/dev/ptmx";
  m = open (ptmx, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0)
    return brig_error_errno (err, "open %s", ptmx);
  if (ioctl (m, TIOCSPTLCK, &unlock) < 0)
    return brig_error_errno (err, "unlock pty");
  if (size != NULL)
    {
      r = brig_terminal_set_size (m, (unsigned short) size->height,
                                  (unsigned short) size->width, err);
      if (r < 0)
        return r;
    }
  r = open_slave (m, slave, err);
  if (r < 0)
    return r;
  *master = brig_steal_fd (m);
  return 0;
}

int
brig_terminal_send_master (int sockfd, int master, brig_error *err)
{
  char name[64] = "/dev/ptmx";
  unsigned int n;
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov;
  struct msghdr msg = { 0 };
  struct cmsghdr *cmsg;
  ssize_t w;

  /* runc sends the pty's name as the data; receivers such as recvtty and
   * the containerd shim expect a non-empty payload. */
  if (ioctl (master, TIOCGPTN, &n) == 0)
    snprintf (name, sizeof name, "/dev/pts/%u", n);
  iov.iov_base = name;
  iov.iov_len = strlen (name);
  memset (&ctl, 0, sizeof ctl);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  cmsg = CMSG_FIRSTHDR (&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cmsg), &master, sizeof (int));

  do
    w = sendmsg (sockfd, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return brig_error_errno (err, "send the pty master over the console socket");
  return 0;
}

int
brig_terminal_recv_master (int sockfd, int *master, brig_error *err)
{
  char name[256];
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = { .iov_base = name, .iov_len = sizeof name };
  struct msghdr msg = { 0 };
  struct cmsghdr *cmsg;
  ssize_t r;
  int fd;

  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = ctl.buf;
  msg.msg_controllen = sizeof ctl.buf;
  do
    r = recvmsg (sockfd, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return brig_error_errno (err, "receive the pty master");
  cmsg = CMSG_FIRSTHDR (&msg);
  if (r == 0 || cmsg == NULL || cmsg->cmsg_level != SOL_SOCKET
      || cmsg->cmsg_type != SCM_RIGHTS || cmsg->cmsg_len != CMSG_LEN (sizeof (int)))
    return brig_error_say (err, EPROTO, "receive the pty master: no file descriptor in the message");
  memcpy (&fd, CMSG_DATA (cmsg), sizeof fd);
  *master = fd;
  return 0;
}

int
brig_terminal_bind_console (int slave, brig_error *err)
{
  char path[64];
  unsigned int n;
  _cleanup_close_ int fd = -1;

  /* The slave's name in this root: we are after pivot_root, so /dev/pts is
   * the container's devpts, the one the pty came from. */
  if (ioctl (slave, TIOCGPTN, &n) < 0)
    {
      /* TIOCGPTN works on the master only on older kernels: ask procfs. */
      char link[64];
      ssize_t len;
      snprintf (link, sizeof link, "/proc/self/fd/%d", slave);
      len = readlink (link, path, sizeof path - 1);
      if (len < 0)
        return brig_error_errno (err, "name of the pty slave");
      path[len] = '\0';
    }
  else
    snprintf (path, sizeof path, "/dev/pts/%u", n);

  fd = open ("/dev/console", O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
  if (fd < 0 && errno != ENXIO && errno != EACCES)
    return brig_error_errno (err, "create /dev/console");
  if (mount (path, "/dev/console", NULL, MS_BIND, NULL) < 0)
    return brig_error_errno (err, "bind %s on /dev/console", path);
  return 0;
}

int
brig_terminal_make_controlling (int slave, brig_error *err)
{
  /* setsid fails with EPERM when we already lead a process group: a
   * session we lead is as good. */
  if (setsid () < 0 && getsid (0) != getpid ())
    return brig_error_errno (err, "setsid");
  if (ioctl (slave, TIOCSCTTY, 0) < 0)
    return brig_error_errno (err, "make the pty the controlling terminal");
  for (int i = 0; i <= 2; i++)
    if (dup2 (slave, i) < 0)
      return brig_error_errno (err, "dup the pty onto fd %d", i);
  return 0;
}

/* No "\n" -> "\r\n" on output: what the process prints reaches brig's
 * stdout, often a file or a pipe, byte for byte (runc does the same for the
 * ptys it proxies). A pty sent to a console socket keeps the kernel's
 * default: its receiver decides, as with runc. */
static int
clear_onlcr (int slave, brig_error *err)
{
  struct termios t;

  if (tcgetattr (slave, &t) < 0)
    return brig_error_errno (err, "read the pty's settings");
  t.c_oflag &= ~(tcflag_t) ONLCR;
  if (tcsetattr (slave, TCSANOW, &t) < 0)
    return brig_error_errno (err, "clear ONLCR on the pty");
  return 0;
}

int
brig_terminal_setup (int sockfd, const oci_console_size *size, bool bind_console,
                     bool proxied, brig_error *err)
{
  _cleanup_close_ int sock = sockfd;
  _cleanup_close_ int master = -1;
  _cleanup_close_ int slave = -1;
  int r;

  r = brig_terminal_open_pty (NULL, size, &master, &slave, err);
  if (r < 0)
    return r;
  /* Before the master leaves: nothing can be written to the pty yet. */
  if (proxied && (r = clear_onlcr (slave, err)) < 0)
    return r;
  if (bind_console)
    {
      r = brig_terminal_bind_console (slave, err);
      if (r < 0)
        return r;
    }
  r = brig_terminal_send_master (sock, master, err);
  if (r < 0)
    return r;
  r = brig_terminal_make_controlling (slave, err);
  if (r < 0)
    return r;
  /* A slave that landed on 0..2 is now stdio: keep it open across exec. */
  if (slave <= 2)
    {
      fcntl (slave, F_SETFD, 0);
      slave = -1;
    }
  return 0;
}

/* ---- foreground proxy ---- */

bool
brig_terminal_stdin_size (oci_console_size *size)
{
  struct winsize ws;

  if (ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0 || ws.ws_col == 0)
    return false;
  size->height = ws.ws_row;
  size->has_height = true;
  size->width = ws.ws_col;
  size->has_width = true;
  return true;
}

struct proxy {
  int master;             /* -1 when there is no terminal */
  pid_t pid;
  bool stdin_open;        /* still reading our stdin */
  bool master_open;       /* the pty still has a slave side */
  bool stdout_broken;     /* our stdout reader went away: drop output */
  char *in;               /* stdin bytes not yet accepted by the pty (with a
                             terminal only: without one nothing is buffered) */
  size_t in_len;
  bool eof_typed;         /* stdin ended and the EOF character was typed, */
  tcflag_t eof_icanon;    /* in this mode of the pty (ICANON or 0) */
  cc_t eof_char;
  const struct brig_proxy_watch *watch; /* NULL, or done with */
};

#define PROXY_IN_SIZE 65536

static void
copy_window_size (int master)
{
  struct winsize ws;

  if (ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && (ws.ws_row || ws.ws_col))
    (void) ioctl (master, TIOCSWINSZ, &ws);
}

/* Our stdin reached EOF: type the EOF character (^D), as at a keyboard.
 * A line-mode reader sees end of file; line editors that put the pty in raw
 * mode (shells) take ^D on an empty line as end of file too. tcgetattr on a
 * master reads the slave's settings. */
static void
send_eof (struct proxy *p)
{
  struct termios t;
  char eof = 4;

  p->eof_icanon = 0;
  if (tcgetattr (p->master, &t) == 0)
    {
      if (t.c_cc[VEOF] != 0)
        eof = (char) t.c_cc[VEOF];
      p->eof_icanon = t.c_lflag & ICANON;
    }
  p->eof_char = (cc_t) eof;
  p->eof_typed = true;
  if (p->in_len < PROXY_IN_SIZE)
    p->in[p->in_len++] = eof;
}

/* The line discipline reads the EOF character in the mode of the moment it
 * arrives: typed while the pty was canonical it is stored as an end of
 * line, which a program that switches to raw mode afterwards (a shell's
 * line editor, at its first prompt) reads as a NUL byte, and the reverse;
 * and a switch with TCSAFLUSH drops it. The process then waits for input
 * that already ended: a run </dev/null hung (1 in 20 here). Each switch of
 * ICANON (or of the EOF character) after it was typed types it again, so
 * the end of the input reaches the program in the mode it reads in. */
static void
retype_eof (struct proxy *p)
{
  struct termios t;

  if (!p->eof_typed || p->in_len > 0 || !p->master_open || tcgetattr (p->master, &t) < 0)
    return;
  if ((t.c_lflag & ICANON) != p->eof_icanon || (t.c_cc[VEOF] && t.c_cc[VEOF] != p->eof_char))
    send_eof (p);
}

static void
read_stdin (struct proxy *p)
{
  ssize_t r;

  do
    r = read (STDIN_FILENO, p->in + p->in_len, PROXY_IN_SIZE - p->in_len);
  while (r < 0 && errno == EINTR);
  if (r > 0)
    {
      p->in_len += (size_t) r;
      return;
    }
  if (r < 0 && errno == EAGAIN)
    return;
  p->stdin_open = false;
  send_eof (p);
}

static void
flush_input (struct proxy *p)
{
  ssize_t w;

  while (p->in_len > 0)
    {
      w = write (p->master, p->in, p->in_len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && errno == EAGAIN)
        return;
      if (w <= 0)
        {
          /* The pty is gone: nobody will read the rest. */
          p->in_len = 0;
          p->stdin_open = false;
          return;
        }
      memmove (p->in, p->in + w, p->in_len - (size_t) w);
      p->in_len -= (size_t) w;
    }
}

/* Copy what the pty has to our stdout; false when it has nothing more now. */
static bool
read_master (struct proxy *p)
{
  char buf[16384];
  ssize_t r;

  do
    r = read (p->master, buf, sizeof buf);
  while (r < 0 && errno == EINTR);
  if (r > 0)
    {
      if (!p->stdout_broken && brig_write_all (STDOUT_FILENO, buf, (size_t) r) < 0)
        p->stdout_broken = true;
      return true;
    }
  if (r < 0 && errno == EAGAIN)
    return false;
  /* EIO: every slave fd is closed. */
  p->master_open = false;
  return false;
}

static void
handle_signal (struct proxy *p, int sig)
{
  switch (sig)
    {
    case SIGCHLD:
      return;
    case SIGWINCH:
      if (p->master >= 0)
        {
          copy_window_size (p->master);
          return;
        }
      break;
    case SIGPIPE:
      /* Raised by our own write to a closed stdout. */
      if (p->stdout_broken)
        return;
      break;
    default:
      break;
    }
  if (kill (p->pid, sig) < 0 && errno != ESRCH)
    brig_warn ("forward signal %d to pid %d: %s", sig, (int) p->pid, strerror (errno));
}

/* After the child exited: whatever it wrote before exiting is still in the
 * pty; read until the slave side is closed or it stays quiet (a background
 * process in the container may hold the slave open forever). */
static void
drain_master (struct proxy *p)
{
  struct pollfd pfd = { .fd = p->master, .events = POLLIN };

  while (p->master_open)
    {
      if (read_master (p))
        continue;
      if (!p->master_open)
        break;
      if (poll (&pfd, 1, 100) <= 0)
        break;
    }
}

static int
exit_status_of (int status)
{
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  if (WIFSIGNALED (status))
    return 128 + WTERMSIG (status);
  return 255;
}

static int
proxy_loop (struct proxy *p, int sfd, int *exit_status, brig_error *err)
{
  for (;;)
    {
      struct pollfd pfd[4];
      struct signalfd_siginfo si[8];
      int n = 0, idx_in = -1, idx_master = -1, idx_watch = -1, status;
      pid_t w;

      w = waitpid (p->pid, &status, WNOHANG);
      if (w < 0 && errno != EINTR)
        return brig_error_errno (err, "wait for pid %d", (int) p->pid);
      if (w == p->pid)
        {
          if (p->master >= 0)
            {
              flush_input (p);
              drain_master (p);
            }
          *exit_status = exit_status_of (status);
          return 0;
        }

      pfd[n++] = (struct pollfd) { .fd = sfd, .events = POLLIN };
      if (p->master >= 0 && p->stdin_open && p->in_len < PROXY_IN_SIZE)
        {
          idx_in = n;
          pfd[n++] = (struct pollfd) { .fd = STDIN_FILENO, .events = POLLIN };
        }
      if (p->master >= 0 && p->master_open)
        {
          idx_master = n;
          pfd[n++] = (struct pollfd) { .fd = p->master,
                                       .events = POLLIN | (p->in_len ? POLLOUT : 0) };
        }
      if (p->watch)
        {
          idx_watch = n;
          pfd[n++] = (struct pollfd) { .fd = p->watch->fd, .events = POLLIN };
        }
      /* after the input ended: look at the pty's mode now and then */
      if (poll (pfd, (nfds_t) n, p->eof_typed && p->master_open ? 100 : -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return brig_error_errno (err, "poll");
        }

      if (pfd[0].revents & POLLIN)
        for (;;)
          {
            /* A read returns every queued signal that fits: one that does
               not fill the buffer has drained the queue. */
            ssize_t got = read (sfd, si, sizeof si);
            for (ssize_t i = 0; i < got / (ssize_t) sizeof si[0]; i++)
              handle_signal (p, (int) si[i].ssi_signo);
            if (got < (ssize_t) sizeof si)
              break;
          }
      if (idx_in >= 0 && pfd[idx_in].revents)
        read_stdin (p);
      if (idx_master >= 0 && (pfd[idx_master].revents & (POLLIN | POLLHUP | POLLERR)))
        read_master (p);
      if (p->master >= 0)
        retype_eof (p);
      if (p->master >= 0 && p->master_open && p->in_len)
        flush_input (p);
      if (idx_watch >= 0 && pfd[idx_watch].revents
          && ((pfd[idx_watch].revents & (POLLERR | POLLNVAL))
              || !p->watch->on_readable (p->watch->arg)))
        p->watch = NULL;
    }
}

int
brig_terminal_proxy (int master, pid_t pid, int *exit_status, brig_error *err)
{
  return brig_terminal_proxy_watch (master, pid, NULL, exit_status, err);
}

int
brig_terminal_proxy_watch (int master, pid_t pid, const struct brig_proxy_watch *watch,
                           int *exit_status, brig_error *err)
{
  struct proxy *p = NULL;
  sigset_t all, old;
  struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
  struct termios saved;
  bool raw = false;
  _cleanup_close_ int sfd = -1;
  int r, flags;

  p = xmalloc0 (sizeof *p);
  if (master >= 0)
    p->in = xrealloc (NULL, PROXY_IN_SIZE);
  p->master = master;
  p->pid = pid;
  p->stdin_open = true;
  p->master_open = master >= 0;
  p->watch = watch && watch->fd >= 0 ? watch : NULL;

  /* Every catchable signal arrives through the signalfd: SIGCHLD wakes the
   * loop to reap, SIGWINCH resizes, the rest go to the child. SIGCHLD must
   * not be ignored, or the kernel reaps the child before we see its status. */
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  sigaction (SIGCHLD, &dfl, &old_chld);
  sfd = signalfd (-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    {
      r = brig_error_errno (err, "signalfd");
      goto out;
    }

  if (master >= 0)
    {
      flags = fcntl (master, F_GETFL);
      if (flags >= 0)
        fcntl (master, F_SETFL, flags | O_NONBLOCK);
      if (isatty (STDIN_FILENO))
        {
          copy_window_size (master);
          if (tcgetattr (STDIN_FILENO, &saved) == 0)
            {
              struct termios t = saved;
              /* The container's pty does the line discipline; ours
               * passes bytes through untouched. */
              cfmakeraw (&t);
              raw = tcsetattr (STDIN_FILENO, TCSANOW, &t) == 0;
            }
        }
    }

  r = proxy_loop (p, sfd, exit_status, err);

out:
  if (raw)
    tcsetattr (STDIN_FILENO, TCSAFLUSH, &saved);
  sigaction (SIGCHLD, &old_chld, NULL);
  /* Drop signals still queued for us (they were meant for the child). */
  if (sfd >= 0)
    {
      struct signalfd_siginfo si;
      while (read (sfd, &si, sizeof si) == (ssize_t) sizeof si)
        ;
    }
  sigprocmask (SIG_SETMASK, &old, NULL);
  free (p->in);
  free (p);
  return r;
}
