/* A process in a sandbox, started as `brig exec -d` would start it (the
 * core's brig_exec: every namespace, the cgroup, the container's process
 * settings, the node policy's exec check), from a forked runner:
 *
 *   server thread              runner (fork)                process
 *   pipes, socketpair ───────► stdio = the pipes
 *                              brig_exec (detached) ──────► execve in the
 *                              pid file → pid                container
 *   ◄── "P<pid>" ──────────────┤
 *   pidfd_open, "A" ──────────►│ (the pid cannot be reused before: the
 *                              │  runner has not reaped it)
 *                              waitpid ◄──────────────────── exit
 *   ◄── "S<wait status>" ──────┘ _exit
 *
 * The runner stays the process's parent (exec clones it CLONE_PARENT), so
 * the server needs no subreaper and reaps only runners. A failure before
 * the execve comes back as "E<errno> message". */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container/exec.h"
#include "serve/internal.h"
#include "utils.h"

#ifndef SYS_pidfd_open
# define SYS_pidfd_open 434
#endif

static void
say (int sock, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
say (int sock, const char *fmt, ...)
{
  char msg[2048];
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (n > (int) sizeof msg - 1)
    n = sizeof msg - 1;
  send (sock, msg, (size_t) n, MSG_NOSIGNAL);
}

/* In the runner: fd 0-2 are the process's stdio, 3 the socket. */
static void __attribute__ ((noreturn))
runner_main (struct serve *srv, const char *member, const struct serve_start *st,
             const char *pid_file)
{
  struct brig_exec_overrides ov = {
    .args = st->args, .env = st->env, .cwd = st->cwd, .tty = -1, .no_new_privs = -1,
  };
  struct brig_exec_opts o = { .id = member, .overrides = &ov, .detach = true, .pid_file = pid_file };
  brig_error err = { 0 };
  _cleanup_free_ char *text = NULL;
  size_t len;
  int status, r;
  pid_t pid;
  char ack;

  r = brig_exec (srv->ctx, &o, &status, &err);
  /* the process has its own copies now: EOF on them means it closed them */
  for (int fd = 0; fd < 3; fd++)
    close (fd);
  if (r < 0)
    {
      say (3, "E%d %s", -r, err.msg ? err.msg : "exec failed");
      _exit (1);
    }
  r = brig_read_file_at (AT_FDCWD, pid_file, &text, &len, NULL);
  unlink (pid_file);
  pid = r == 0 ? (pid_t) atoi (text) : 0;
  if (pid <= 0)
    {
      say (3, "E%d %s", EPROTO, "exec: no pid in the pid file");
      _exit (1);
    }
  say (3, "P%d", (int) pid);
  if (recv (3, &ack, 1, 0) != 1)
    {
      /* the server is gone: the process stays bounded by its sandbox */
      _exit (0);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      _exit (1);
  say (3, "S%d", status);
  _exit (0);
}

/* Set up fds 0-3 for the runner and close every other. */
static void
runner_fds (int in, int out, int errfd, int sock)
{
  if (in < 0)
    in = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  /* above 3 first, so that no dup2 overwrites a source */
  in = fcntl (in, F_DUPFD_CLOEXEC, 10);
  out = fcntl (out, F_DUPFD_CLOEXEC, 10);
  errfd = fcntl (errfd, F_DUPFD_CLOEXEC, 10);
  sock = fcntl (sock, F_DUPFD_CLOEXEC, 10);
  if (in < 0 || out < 0 || errfd < 0 || sock < 0 || dup2 (in, 0) < 0 || dup2 (out, 1) < 0
      || dup2 (errfd, 2) < 0 || dup2 (sock, 3) < 0)
    _exit (127);
  syscall (SYS_close_range, 4U, ~0U, 0U);
}

static int
read_reply (int sock, char *buf, size_t n)
{
  ssize_t k;

  do
    k = recv (sock, buf, n - 1, 0);
  while (k < 0 && errno == EINTR);
  if (k <= 0)
    return -EPIPE;
  buf[k] = '\0';
  return 0;
}

int
serve_spawn (struct serve *srv, const char *member, const struct serve_start *st,
             struct serve_spawned *sp, brig_error *err)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 }, sk[2] = { -1, -1 };
  _cleanup_free_ char *pid_file = NULL;
  char reply[2100], num[32];
  int status, r;
  pid_t runner;

  *sp = (struct serve_spawned){ .pidfd = -1, .sock = -1, .out = -1, .err = -1, .in = -1 };
  if ((st->stdin && pipe2 (in, O_CLOEXEC) < 0) || pipe2 (out, O_CLOEXEC) < 0
      || pipe2 (errp, O_CLOEXEC) < 0 || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sk) < 0)
    {
      r = brig_error_errno (err, "process pipes");
      goto fail;
    }
  if (serve_random_hex (num, 8) < 0)
    abort ();
  pid_file = xasprintf ("%s/@serve/run/%s.pid", srv->ctx->state_root, num);
  runner = fork ();
  if (runner < 0)
    {
      r = brig_error_errno (err, "fork");
      goto fail;
    }
  if (runner == 0)
    {
      sigset_t none;
      sigemptyset (&none);
      signal (SIGPIPE, SIG_DFL);
      sigprocmask (SIG_SETMASK, &none, NULL);
      runner_fds (in[0], out[1], errp[1], sk[1]);
      runner_main (srv, member, st, pid_file);
    }
  close (sk[1]), sk[1] = -1;
  close (out[1]), out[1] = -1;
  close (errp[1]), errp[1] = -1;
  if (in[0] >= 0)
    close (in[0]), in[0] = -1;
  sp->runner = runner;
  if (read_reply (sk[0], reply, sizeof reply) < 0 || (reply[0] != 'P' && reply[0] != 'E'))
    r = brig_error_say (err, EPROTO, "exec: the runner died");
  else if (reply[0] == 'E')
    {
      char *sp_ = strchr (reply, ' ');
      r = brig_error_say (err, atoi (reply + 1) ? atoi (reply + 1) : EIO, "%s", sp_ ? sp_ + 1 : reply + 1);
    }
  else
    {
      sp->pid = (pid_t) atoi (reply + 1);
      sp->pidfd = (int) syscall (SYS_pidfd_open, sp->pid, 0);
      r = sp->pidfd < 0 ? brig_error_errno (err, "pidfd_open %d", (int) sp->pid) : 0;
      if (r == 0 && send (sk[0], "A", 1, MSG_NOSIGNAL) != 1)
        r = brig_error_errno (err, "exec: tell the runner");
    }
  if (r < 0)
    {
      if (sp->pidfd >= 0)
        syscall (SYS_pidfd_send_signal, sp->pidfd, SIGKILL, NULL, 0), close (sp->pidfd);
      close (sk[0]), sk[0] = -1;
      while (waitpid (runner, &status, 0) < 0 && errno == EINTR)
        ;
      goto fail;
    }
  sp->sock = sk[0];
  sp->out = out[0];
  sp->err = errp[0];
  sp->in = in[1];
  return 0;

fail:
  for (int i = 0; i < 2; i++)
    {
      if (in[i] >= 0)
        close (in[i]);
      if (out[i] >= 0)
        close (out[i]);
      if (errp[i] >= 0)
        close (errp[i]);
      if (sk[i] >= 0)
        close (sk[i]);
    }
  return r;
}
