/* Unit tests: terminal mode checks, pty creation, the SCM_RIGHTS hand-over,
 * the foreground proxy (output, input, exit status, signal forwarding) and
 * exec's process overrides. Uses the host's /dev/ptmx; no container. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "container/exec.h"
#include "tap.h"
#include "process/terminal.h"
#include "utils.h"

/* In a child of its own session (no controlling terminal) with stdio on
 * /dev/null: exit 0 when a foreground tty is refused with runc's phrase,
 * then accepted once stdout is a pty's slave (a terminal on brig's side). */
static int
foreground_tty_child (void)
{
  brig_error err = { 0 };
  int null = open ("/dev/null", O_RDWR), master = -1, slave = -1;

  if (setsid () < 0 || null < 0)
    return 10;
  for (int fd = 0; fd <= 2; fd++)
    dup2 (null, fd);
  if (brig_terminal_check_mode (true, false, NULL, &err) == 0)
    return 11;
  if (strstr (err.msg, "open /dev/tty: no such device or address") == NULL
      || strstr (err.msg, "process.terminal") == NULL)
    return 12;
  brig_error_clear (&err);
  if (brig_terminal_open_pty ("/dev/ptmx", NULL, &master, &slave, &err) < 0)
    return 13;
  dup2 (slave, STDOUT_FILENO);
  if (brig_terminal_check_mode (true, false, NULL, &err) < 0)
    return 14;
  return 0;
}

static void
test_check_mode (void)
{
  brig_error err = { 0 };
  int r;

  tap_ok (brig_terminal_check_mode (true, true, "/s", &err) == 0, "detached tty with a socket");
  tap_ok (brig_terminal_check_mode (false, true, NULL, &err) == 0, "detached without tty");
  {
    pid_t pid = fork ();
    int st = -1;
    if (pid == 0)
      _exit (foreground_tty_child ());
    waitpid (pid, &st, 0);
    tap_ok (pid > 0 && WIFEXITED (st) && WEXITSTATUS (st) == 0,
            "foreground tty: refused without a terminal on brig's side (open /dev/tty), "
            "accepted with one (child status %d)", WIFEXITED (st) ? WEXITSTATUS (st) : -1);
  }
  r = brig_terminal_check_mode (true, true, NULL, &err);
  tap_ok (r < 0 && strstr (err.msg, "console-socket") != NULL,
          "detached tty without a socket is refused: %s", err.msg);
  brig_error_clear (&err);
  r = brig_terminal_check_mode (false, true, "/s", &err);
  tap_ok (r < 0, "a socket without a tty is refused: %s", err.msg);
  brig_error_clear (&err);
  r = brig_terminal_check_mode (true, false, "/s", &err);
  tap_ok (r < 0, "a socket in the foreground is refused: %s", err.msg);
  brig_error_clear (&err);
}

static void
test_pty_and_handover (void)
{
  oci_console_size size = { .height = 24, .width = 91, .has_height = true, .has_width = true };
  brig_error err = { 0 };
  int master = -1, slave = -1, got = -1, sv[2];
  unsigned int n1 = 0, n2 = 1;
  struct winsize ws = { 0 };

  if (!tap_ok (brig_terminal_open_pty ("/dev/ptmx", &size, &master, &slave, &err) == 0,
               "open a pty pair (%s)", err.msg ? err.msg : "ok"))
    {
      brig_error_clear (&err);
      for (int i = 0; i < 4; i++)
        tap_ok (true, "# SKIP no pty");
      return;
    }
  ioctl (slave, TIOCGWINSZ, &ws);
  tap_ok (ws.ws_row == 24 && ws.ws_col == 91, "consoleSize set: %ux%u", ws.ws_col, ws.ws_row);
  tap_ok ((fcntl (master, F_GETFD) & FD_CLOEXEC) && (fcntl (slave, F_GETFD) & FD_CLOEXEC),
          "both ends are close-on-exec");

  socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
  tap_ok (brig_terminal_send_master (sv[0], master, &err) == 0
          && brig_terminal_recv_master (sv[1], &got, &err) == 0,
          "master sent and received over SCM_RIGHTS");
  ioctl (master, TIOCGPTN, &n1);
  ioctl (got, TIOCGPTN, &n2);
  tap_ok (got >= 0 && n1 == n2 && (fcntl (got, F_GETFD) & FD_CLOEXEC),
          "the received fd is the same pty (%u = %u), close-on-exec", n1, n2);
  close (sv[0]);
  close (sv[1]);
  close (got);
  close (master);
  close (slave);
}

/* Run brig_terminal_proxy with stdin = in_fd and stdout captured. */
static int
proxy_capture (int master, pid_t pid, int in_fd, int *status, char *out, size_t out_size)
{
  brig_error err = { 0 };
  int saved_in = dup (STDIN_FILENO), saved_out = dup (STDOUT_FILENO), p[2], r;
  ssize_t len;

  fflush (stdout);
  pipe2 (p, O_CLOEXEC);
  dup2 (in_fd, STDIN_FILENO);
  dup2 (p[1], STDOUT_FILENO);
  close (p[1]);
  r = brig_terminal_proxy (master, pid, status, &err);
  dup2 (saved_out, STDOUT_FILENO);
  dup2 (saved_in, STDIN_FILENO);
  close (saved_in);
  close (saved_out);
  fcntl (p[0], F_SETFL, O_NONBLOCK);
  len = read (p[0], out, out_size - 1);
  out[len > 0 ? len : 0] = '\0';
  close (p[0]);
  if (r < 0)
    tap_diag ("proxy: %s", err.msg);
  brig_error_clear (&err);
  return r;
}

static void
test_proxy_pty (void)
{
  brig_error err = { 0 };
  int master, slave, in[2], status = -1;
  char out[4096];
  pid_t pid;

  if (brig_terminal_open_pty ("/dev/ptmx", NULL, &master, &slave, &err) < 0)
    {
      brig_error_clear (&err);
      tap_ok (true, "# SKIP no pty");
      tap_ok (true, "# SKIP no pty");
      return;
    }
  pipe2 (in, O_CLOEXEC);
  pid = fork ();
  if (pid == 0)
    {
      char line[256];
      ssize_t n;
      struct termios t;
      close (master);
      /* Our copy of the pipe would keep the proxy's stdin from EOF. */
      close (in[0]);
      close (in[1]);
      /* Line mode without echo: what arrives is what the proxy typed. */
      tcgetattr (slave, &t);
      t.c_lflag &= ~(tcflag_t) ECHO;
      tcsetattr (slave, TCSANOW, &t);
      dprintf (slave, "hello from the pty\n");
      n = read (slave, line, sizeof line - 1);
      line[n > 0 ? n : 0] = '\0';
      dprintf (slave, "typed:%s", line);
      /* EOF on the proxy's stdin arrives as end of file here. */
      n = read (slave, line, sizeof line);
      dprintf (slave, "eof:%zd\n", n);
      _exit (3);
    }
  close (slave);
  if (write (in[1], "some input\n", 11) != 11)
    abort ();
  close (in[1]);
  proxy_capture (master, pid, in[0], &status, out, sizeof out);
  close (in[0]);
  close (master);
  tap_ok (status == 3, "exit status of the child comes back (%d)", status);
  tap_ok (strstr (out, "hello from the pty") && strstr (out, "typed:some input")
          && strstr (out, "eof:0"),
          "output copied, input typed, stdin EOF is EOF: [%s]", out);
}

static void
on_usr1 (int sig)
{
  (void) sig;
  _exit (42);
}

static void
test_proxy_signals (void)
{
  int devnull = open ("/dev/null", O_RDONLY | O_CLOEXEC), status = -1;
  char out[64];
  pid_t child, sender, me = getpid ();

  child = fork ();
  if (child == 0)
    {
      signal (SIGUSR1, on_usr1);
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      for (;;)
        pause ();
    }
  /* Signal the proxy (us) once it runs: it must forward to the child. */
  sender = fork ();
  if (sender == 0)
    {
      usleep (200000);
      kill (me, SIGUSR1);
      _exit (0);
    }
  proxy_capture (-1, child, devnull, &status, out, sizeof out);
  waitpid (sender, NULL, 0);
  tap_ok (status == 42, "a signal to brig reaches the child (status %d)", status);

  child = fork ();
  if (child == 0)
    {
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      raise (SIGKILL);
      _exit (0);
    }
  proxy_capture (-1, child, devnull, &status, out, sizeof out);
  tap_ok (status == 128 + SIGKILL, "death by signal is 128+signal (%d)", status);
  close (devnull);
}

static void
test_exec_overrides (void)
{
  char *env[] = { "PATH=/bin", "TERM=xterm", NULL };
  char *args[] = { "sh", "-c", "true", NULL };
  char *new_env[] = { "TERM=dumb", "FOO=bar", NULL };
  char *caps[] = { "CAP_SYS_ADMIN", NULL };
  uint32_t gids[] = { 29, 30 };
  struct brig_exec_overrides o = {
    .args = args, .cwd = "/tmp", .env = new_env, .user = "1000:1001", .gids = gids,
    .gids_len = 2, .caps = caps, .tty = 1, .no_new_privs = 1,
  };
  oci_process *p = xmalloc0 (sizeof *p);
  brig_error err = { 0 };
  int r;

  p->cwd = xstrdup ("/");
  p->env = xmalloc0 (3 * sizeof (char *));
  p->env[0] = xstrdup (env[0]);
  p->env[1] = xstrdup (env[1]);
  p->env_len = 2;

  tap_ok (brig_exec_apply_overrides (p, &o, &err) == 0, "overrides apply");
  tap_ok (p->args_len == 3 && strcmp (p->args[2], "true") == 0 && p->args[3] == NULL,
          "args replaced");
  tap_ok (p->env_len == 3 && strcmp (p->env[1], "TERM=dumb") == 0
          && strcmp (p->env[2], "FOO=bar") == 0 && p->env[3] == NULL,
          "env: same key replaced in place, new key appended");
  tap_ok (strcmp (p->cwd, "/tmp") == 0, "cwd replaced");
  tap_ok (p->user && p->user->uid == 1000 && p->user->gid == 1001
          && p->user->additional_gids_len == 2 && p->user->additional_gids[1] == 30,
          "user uid:gid and additional gids");
  tap_ok (p->capabilities && p->capabilities->bounding_len == 1
          && p->capabilities->effective_len == 1 && p->capabilities->permitted_len == 1
          && p->capabilities->inheritable_len == 0 && p->capabilities->ambient_len == 0
          && strcmp (p->capabilities->bounding[0], "CAP_SYS_ADMIN") == 0
          && strcmp (p->capabilities->effective[0], "CAP_SYS_ADMIN") == 0
          && strcmp (p->capabilities->permitted[0], "CAP_SYS_ADMIN") == 0,
          "--cap goes to bounding, effective, permitted; not inheritable (CVE-2022-29162)");
  tap_ok (p->terminal && p->no_new_privileges, "tty and no_new_privs");
  tap_ok (brig_exec_validate_process (p, &err) == 0, "valid process");

  o = (struct brig_exec_overrides) { .user = "root", .tty = -1, .no_new_privs = -1 };
  r = brig_exec_apply_overrides (p, &o, &err);
  tap_ok (r < 0 && strstr (err.msg, "--user"), "a non-numeric user is refused: %s", err.msg);
  brig_error_clear (&err);
  o = (struct brig_exec_overrides) { .cwd = "relative", .tty = -1, .no_new_privs = -1 };
  brig_exec_apply_overrides (p, &o, &err);
  tap_ok (!p->terminal, "exec gets no terminal unless asked");
  r = brig_exec_validate_process (p, &err);
  tap_ok (r < 0 && strstr (err.msg, "absolute"), "a relative cwd is refused: %s", err.msg);
  brig_error_clear (&err);
  oci_process_free (p);
}

int
main (void)
{
  tap_plan (6 + 5 + 2 + 2 + 11);
  test_check_mode ();
  test_pty_and_handover ();
  test_proxy_pty ();
  test_proxy_signals ();
  test_exec_overrides ();
  return tap_done ();
}
