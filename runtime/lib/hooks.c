/* Running OCI hooks: fork + execve, state on stdin, output kept for the
 * error message, timeout through a pidfd. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "log.h"
#include "utils.h"

#define HOOK_OUTPUT_MAX 4096

extern char **environ;

/* The child side: never returns. */
static void __attribute__ ((noreturn))
hook_child (const oci_hook *h, char *const *env, const char *cwd, int in_fd, int out_fd)
{
  char *argv_default[2] = { h->path, NULL };
  sigset_t none;

  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  signal (SIGPIPE, SIG_DFL);
  if (dup2 (in_fd, 0) < 0 || dup2 (out_fd, 1) < 0 || dup2 (out_fd, 2) < 0)
    _exit (127);
  if (cwd && chdir (cwd) < 0)
    {
      dprintf (2, "chdir %s: %s", cwd, strerror (errno));
      _exit (127);
    }
  execve (h->path, h->args && h->args_len > 0 ? h->args : argv_default,
          h->env ? h->env : env ? env : environ);
  dprintf (2, "exec %s: %s", h->path, strerror (errno));
  _exit (127);
}

static void
append_output (char *buf, size_t *len, int fd)
{
  char tmp[1024];
  ssize_t n;
  while ((n = read (fd, tmp, sizeof tmp)) > 0)
    {
      size_t room = HOOK_OUTPUT_MAX - *len;
      size_t take = (size_t) n < room ? (size_t) n : room;
      memcpy (buf + *len, tmp, take);
      *len += take;
    }
}

static int
run_one (const oci_hook *h, size_t index, const char *kind, const char *state,
         char *const *env, const char *cwd, brig_error *err)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 };
  _cleanup_close_ int pidfd = -1, in_w = -1, out_r = -1;
  size_t state_len = state ? strlen (state) : 0, written = 0, out_len = 0;
  char output[HOOK_OUTPUT_MAX + 1];
  long long deadline = -1;
  bool exited = false, timed_out = false;
  int status = 0;
  pid_t pid;

  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (out, O_CLOEXEC) < 0)
    {
      int e = errno;
      for (int i = 0; i < 2; i++)
        {
          if (in[i] >= 0) close (in[i]);
          if (out[i] >= 0) close (out[i]);
        }
      return brig_error_set (err, e, "%s hook #%zu (%s): pipe", kind, index, h->path);
    }
  pid = fork ();
  if (pid < 0)
    {
      int e = errno;
      close (in[0]); close (in[1]); close (out[0]); close (out[1]);
      return brig_error_set (err, e, "%s hook #%zu (%s): fork", kind, index, h->path);
    }
  if (pid == 0)
    hook_child (h, env, cwd, in[0], out[1]);
  close (in[0]);
  close (out[1]);
  in_w = in[1];
  out_r = out[0];
  fcntl (in_w, F_SETFL, O_NONBLOCK);
  fcntl (out_r, F_SETFL, O_NONBLOCK);
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (h->has_timeout && h->timeout > 0)
    deadline = brig_mono_ms () + (long long) h->timeout * 1000;
  if (state_len == 0)
    {
      close (in_w);
      in_w = -1;
    }

  while (!exited)
    {
      struct pollfd pf[3];
      int n = 0, timeout = -1, r;
      pf[n++] = (struct pollfd) { .fd = pidfd, .events = POLLIN };
      pf[n++] = (struct pollfd) { .fd = out_r, .events = POLLIN };
      if (in_w >= 0)
        pf[n++] = (struct pollfd) { .fd = in_w, .events = POLLOUT };
      if (deadline >= 0)
        {
          long long left = deadline - brig_mono_ms ();
          timeout = left > 0 ? (int) left : 0;
        }
      r = poll (pf, (nfds_t) n, pidfd >= 0 ? timeout : 10);
      if (r < 0 && errno != EINTR)
        break;
      if (r == 0 && deadline >= 0 && brig_mono_ms () >= deadline)
        {
          timed_out = true;
          kill (pid, SIGKILL);
          break;
        }
      if (r <= 0 && pidfd >= 0)
        continue;
      if (pf[1].revents)
        append_output (output, &out_len, out_r);
      if (in_w >= 0 && n > 2 && pf[2].revents)
        {
          ssize_t w = write (in_w, state + written, state_len - written);
          if (w > 0)
            written += (size_t) w;
          if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == state_len)
            {
              close (in_w); /* EOF (or EPIPE: the hook does not read stdin) */
              in_w = -1;
            }
        }
      if (pidfd < 0 || pf[0].revents)
        {
          pid_t w = waitpid (pid, &status, pidfd >= 0 ? 0 : WNOHANG);
          if (w == pid)
            exited = true;
        }
    }
  if (!exited)
    while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
      ;
  append_output (output, &out_len, out_r);
  output[out_len] = '\0';
  while (out_len > 0 && (output[out_len - 1] == '\n' || output[out_len - 1] == ' '))
    output[--out_len] = '\0';

  if (timed_out)
    return brig_error_say (err, ETIMEDOUT, "%s hook #%zu (%s): hook ran past specified timeout "
                           "of %lld s (killed)", kind, index, h->path, (long long) h->timeout);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFSIGNALED (status))
    return brig_error_set (err, 0, "%s hook #%zu (%s): killed by signal %d%s%s", kind, index,
                           h->path, WTERMSIG (status), out_len ? ": " : "", output);
  return brig_error_set (err, 0, "%s hook #%zu (%s): exit status %d%s%s", kind, index, h->path,
                         WEXITSTATUS (status), out_len ? ": " : "", output);
}

static int
run_all (const oci_hook *hooks, size_t n, const char *kind, const char *state,
         char *const *env, const char *cwd, bool warn_only, brig_error *err)
{
  struct sigaction ign = { .sa_handler = SIG_IGN }, old;
  int ret = 0;

  if (n == 0)
    return 0;
  /* A hook that does not read its stdin must not kill us with SIGPIPE. */
  sigaction (SIGPIPE, &ign, &old);
  for (size_t i = 0; i < n; i++)
    {
      brig_error e = { 0 };
      int r = run_one (&hooks[i], i, kind, state, env, cwd, &e);
      if (r < 0)
        {
          if (warn_only)
            {
              brig_warn ("%s", e.msg ? e.msg : "hook failed");
              brig_error_clear (&e);
              continue;
            }
          if (err)
            {
              brig_error_clear (err);
              *err = e;
            }
          else
            brig_error_clear (&e);
          ret = r;
          break;
        }
    }
  sigaction (SIGPIPE, &old, NULL);
  return ret;
}

int
brig_hooks_run (const oci_hook *hooks, size_t n, const char *kind, const char *state_json,
                brig_error *err)
{
  return run_all (hooks, n, kind, state_json, NULL, NULL, false, err);
}

int
brig_hooks_run_env (const oci_hook *hooks, size_t n, const char *kind, const char *state_json,
                    char *const *env, brig_error *err)
{
  return run_all (hooks, n, kind, state_json, env, NULL, false, err);
}

int
brig_hooks_run_in (const oci_hook *hooks, size_t n, const char *kind, const char *state_json,
                   char *const *env, const char *cwd, brig_error *err)
{
  return run_all (hooks, n, kind, state_json, env, cwd, false, err);
}

void
brig_hooks_run_warn (const oci_hook *hooks, size_t n, const char *kind, const char *state_json)
{
  run_all (hooks, n, kind, state_json, NULL, NULL, true, NULL);
}
