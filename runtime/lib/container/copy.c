/* `brig cp` and the copy calls of `brig serve`: a tar stream between the
 * caller's side and a child that joined the container (copy.h).
 *
 *   brig (P, the caller's side)         C (joined child)
 *   load + lock shared, tenancy
 *   open the v1 `tasks` files
 *   fork ─────────────────────────────► non-dumpable, close every fd but
 *                                       the pipe, the socket, the pidfd
 *                                       and the `tasks` files; join the
 *                                       cgroups (not the freezer); setns
 *                                       user+mnt by the init's pidfd;
 *                                       chroot into the init's root;
 *                                       container root
 *   ◄── J ──────────────────────────────┘
 *   (cgroup2: move C), unlock
 *   G ────────────────────────────────► resolve the path, then
 *   produce / consume the tar ◄═ pipe ═► extract / write the tar
 *   wait; ◄── E code message (if it failed), exit status
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/copy.h"
#include "container/copy_internal.h"
#include "container/state.h"
#include "container/tenancy.h"
#include "utils.h"

struct copy_run {
  const struct brig_context *ctx;
  const struct brig_copy_opts *o;
  bool into;
  const char *verb;              /* "copy into", "copy out of" */
  brig_container *c;
  brig_cgroup *cg;
  struct brig_cgroup_self cs;
  bool self;                     /* C joins its v1 cgroups itself (until the fork) */
  bool child_joins;              /* the same, kept after the fork */
  int freezer;                   /* index in cs of the freezer's `tasks`, or -1 */
  bool userns;                   /* the container has its own user namespace */
  int data[2], ctl[2];
  pid_t pid;
};

/* ---- the child ---- */

static void
child_say (int ctl, char what, const brig_error *err)
{
  char msg[4096];
  int n = snprintf (msg, sizeof msg, "%c%d %s", what, err ? err->code : 0,
                    err && err->msg ? err->msg : "");

  if (brig_write_all (ctl, msg, (size_t) (n < (int) sizeof msg ? n : (int) sizeof msg - 1)) < 0)
    _exit (2);
}

/* Keep only the fds C needs: a host fd in it is a host object near the
 * container, even if nothing there can reach C. */
static void
close_others (struct copy_run *x)
{
  int keep[BRIG_CGROUP_SELF_MAX + 3], n = 0;

  keep[n++] = x->data[1];
  keep[n++] = x->ctl[1];
  keep[n++] = x->c->pidfd;
  for (size_t i = 0; x->self && i < x->cs.n; i++)
    if (x->cs.fd[i] >= 0)
      keep[n++] = x->cs.fd[i];
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--)
      {
        int t = keep[j];
        keep[j] = keep[j - 1];
        keep[j - 1] = t;
      }
  int from = 0;
  for (int i = 0; i <= n; i++)
    {
      int to = i < n ? keep[i] - 1 : INT32_MAX;
      if (to >= from)
        syscall (SYS_close_range, (unsigned) from, (unsigned) to, 0);
      from = i < n ? keep[i] + 1 : from;
    }
}

/* The container's cgroups (each v1 hierarchy but the freezer's), its user
 * and mount namespaces and root, as its root user. */
static int
child_join (struct copy_run *x, brig_error *err)
{
  char path[64];
  _cleanup_close_ int rootfd = -1;
  int flags = CLONE_NEWNS | (x->userns ? CLONE_NEWUSER : 0);

  for (size_t i = 0; x->self && i < x->cs.n; i++)
    if ((int) i != x->freezer && write (x->cs.fd[i], "0", 1) < 0)
      return brig_error_errno (err, "join the cgroup %s", x->cs.dir[i]);
  for (size_t i = 0; x->self && i < x->cs.n; i++)
    close (x->cs.fd[i]);
  snprintf (path, sizeof path, "/proc/%d/root", (int) x->c->st.pid);
  rootfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return brig_error_errno (err, "open the container's root (%s)", path);
  /* opened by pid: the pidfd says whether that is still the init */
  if (syscall (SYS_pidfd_send_signal, x->c->pidfd, 0, NULL, 0) < 0)
    return brig_error_say (err, ESRCH, "container \"%s\" is not running", x->c->id);
  if (setns (x->c->pidfd, flags) < 0)
    return brig_error_errno (err, "join the namespaces of container \"%s\"", x->c->id);
  close (x->c->pidfd);
  if (fchdir (rootfd) < 0 || chroot (".") < 0 || chdir ("/") < 0)
    return brig_error_errno (err, "enter the root of container \"%s\"", x->c->id);
  if (x->userns)
    {
      /* refused where setgroups is denied: then there are none to drop */
      if (setgroups (0, NULL) < 0 && errno != EPERM)
        return brig_error_errno (err, "setgroups");
      if (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
        return brig_error_errno (err, "become root of container \"%s\"", x->c->id);
    }
  return 0;
}

static _Noreturn void
child_main (struct copy_run *x)
{
  struct sigaction ign = { .sa_handler = SIG_IGN };
  brig_error err = { 0 };
  struct brig_copy_side side = { .root = -1, .keep_owner = x->o->keep_owner };
  struct brig_tar *t;
  char go;
  int r;

  /* before anything of the container can see us */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    _exit (2);
  /* the copy ends with the caller, even one blocked on a tenant's file */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid () == 1)
    _exit (2);
  sigaction (SIGPIPE, &ign, NULL);
  close_others (x);
  r = child_join (x, &err);
  if (r == 0 && (side.root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
    r = brig_error_errno (&err, "open /");
  if (r < 0)
    {
      child_say (x->ctl[1], 'E', &err);
      _exit (1);
    }
  child_say (x->ctl[1], 'J', NULL);
  if (read (x->ctl[1], &go, 1) != 1 || go != 'G')
    _exit (1);
  t = xmalloc0 (sizeof *t);
  brig_tar_init (t, x->data[1]);
  if (x->into)
    {
      r = brig_copy_extract_path (t, &side, x->o->path, x->o->as_is, x->o->contents, &err);
      /* what follows the archive's end (tar pads to its record size):
       * read, so that the caller's side does not see the pipe close */
      while (r == 0 && read (x->data[1], t->buf, sizeof t->buf) > 0)
        ;
    }
  else
    r = brig_copy_write_path (t, &side, x->o->path, x->o->follow, &err);
  if (r < 0)
    {
      child_say (x->ctl[1], 'E', &err);
      _exit (1);
    }
  _exit (0);
}

/* ---- the caller's side ---- */

static int
copy_load (struct copy_run *x, brig_error *err)
{
  struct brig_tenancy peek = { 0, BRIG_TENANCY_OPEN }, now;
  struct stat a, b;
  char path[64];
  int r;

  if (brig_state_check_id (x->o->id, NULL) == 0 && brig_tenancy_peek (x->ctx, x->o->id, &peek) == 0
      && (r = brig_tenancy_refuse (-1, x->o->id, &peek, x->verb, err)) < 0)
    return r;
  if ((r = brig_container_load (x->ctx, x->o->id, BRIG_LOCK_SHARED, &x->c, err)) < 0)
    return r;
  if ((r = brig_tenancy_read (x->c->dirfd, &now)) < 0)
    return brig_error_set (err, -r, "container \"%s\": read its tenancy", x->c->id);
  if ((r = brig_tenancy_refuse (x->c->dirfd, x->c->id, &now, x->verb, err)) < 0)
    return r;
  if (now.gen != peek.gen)
    return brig_error_say (err, EAGAIN, "cannot %s container \"%s\": it was reset while this "
                           "copy waited", x->verb, x->c->id);
  switch (x->c->status)
    {
    case BRIG_STATUS_CREATED:
    case BRIG_STATUS_RUNNING:
    case BRIG_STATUS_PAUSED:
      break;
    case BRIG_STATUS_CREATING:
      return brig_error_say (err, EBUSY, "cannot %s container \"%s\": it is still being "
                             "created", x->verb, x->c->id);
    default:
      return brig_error_say (err, ESRCH, "cannot %s a stopped container \"%s\": its mount "
                             "namespace is gone", x->verb, x->c->id);
    }
  if (x->c->pidfd < 0)
    return brig_error_say (err, ESRCH, "container \"%s\" is not running", x->c->id);
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) x->c->st.pid);
  if (stat (path, &a) < 0 || stat ("/proc/self/ns/user", &b) < 0)
    return brig_error_errno (err, "container \"%s\": its user namespace", x->c->id);
  x->userns = a.st_ino != b.st_ino || a.st_dev != b.st_dev;
  return 0;
}

/* How C joins the cgroups: itself through the v1 `tasks` files (all but
 * the freezer's: a copy into a paused container must not stop itself), or
 * P moves it (cgroup2) unless the container is paused. */
static int
copy_cgroup (struct copy_run *x, brig_error *err)
{
  _cleanup_free_ char *ff = NULL;
  int r = brig_container_cgroup (x->c, &x->cg, err);

  if (r < 0 || x->cg == NULL)
    return r;
  x->self = brig_cgroup_self_open (x->cg, &x->cs);
  if (!x->self)
    return 0;
  ff = brig_cgroup_freeze_file (x->cg);
  for (size_t i = 0; ff && i < x->cs.n; i++)
    {
      size_t l = strlen (x->cs.dir[i]);
      if (strncmp (ff, x->cs.dir[i], l) == 0 && ff[l] == '/')
        x->freezer = (int) i;
    }
  return 0;
}

/* C's message on ctl: 'J', or 'E' with its error (which then is err's). */
static int
read_ctl (struct copy_run *x, char *what, brig_error *err)
{
  char msg[4096];
  ssize_t n;
  int code = 0, off = 0;

  do
    n = read (x->ctl[0], msg, sizeof msg - 1);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    {
      *what = 0;
      return 0;
    }
  msg[n] = '\0';
  *what = msg[0];
  if (msg[0] == 'E' && sscanf (msg + 1, "%d %n", &code, &off) >= 1)
    return brig_error_set_raw (err, code, msg + 1 + off);
  return 0;
}

/* C's end: its error, or how it ended. */
static int
child_result (struct copy_run *x, brig_error *err)
{
  int status;
  char what;

  while (waitpid (x->pid, &status, 0) < 0 && errno == EINTR)
    ;
  x->pid = -1;
  read_ctl (x, &what, err);
  if (what == 'E')
    return brig_error_wrap (err, "%s container \"%s\"", x->verb, x->c->id);
  if (WIFSIGNALED (status))
    return brig_error_say (err, EINTR, "cannot %s container \"%s\": the copy was killed "
                           "(signal %d): the container was reset, stopped or deleted meanwhile, "
                           "or it is at its memory limit", x->verb, x->c->id, WTERMSIG (status));
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return brig_error_say (err, EIO, "cannot %s container \"%s\": the copy failed",
                           x->verb, x->c->id);
  return 0;
}

static int
copy_run (struct copy_run *x, brig_copy_fn *fn, void *data, brig_error *err)
{
  brig_error host = { 0 };
  char what = 0;
  int r, hr;

  if (pipe2 (x->data, O_CLOEXEC) < 0
      || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, x->ctl) < 0)
    return brig_error_errno (err, "%s: pipe", x->verb);
  /* data[0] is P's end, data[1] C's: C reads (into) or writes (out of) */
  if (x->into)
    {
      int t = x->data[0];
      x->data[0] = x->data[1];
      x->data[1] = t;
    }
  x->child_joins = x->self;
  x->pid = fork ();
  if (x->pid < 0)
    return brig_error_errno (err, "%s: fork", x->verb);
  if (x->pid == 0)
    child_main (x);
  close (brig_steal_fd (x->data[1]));
  close (brig_steal_fd (x->ctl[1]));
  brig_cgroup_self_close (x->cg, &x->cs);
  x->self = false;
  read_ctl (x, &what, err);
  if (what == 'E')
    {
      /* C could not join: its message is the error */
      while (waitpid (x->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      x->pid = -1;
      return brig_error_wrap (err, "%s container \"%s\"", x->verb, x->c->id);
    }
  if (what != 'J')
    return child_result (x, err);
  if (x->cg && !x->child_joins && x->c->status != BRIG_STATUS_PAUSED
      && (r = brig_cgroup_enter (x->cg, x->pid, err)) < 0)
    {
      kill (x->pid, SIGKILL);
      child_result (x, &host);
      brig_error_clear (&host);
      return r;
    }
  flock (x->c->dirfd, LOCK_UN);
  if (send (x->ctl[0], "G", 1, MSG_NOSIGNAL) != 1)
    return child_result (x, err);
  hr = fn (x->data[0], data, &host);
  close (brig_steal_fd (x->data[0]));
  r = child_result (x, err);
  /* the first failure is the cause: C's, unless it only saw the pipe
   * close because the caller's side had failed */
  if (hr < 0 && (r == 0 || err->code == EPIPE))
    {
      brig_error_set_raw (err, host.code, host.msg);
      r = hr;
    }
  brig_error_clear (&host);
  return r;
}

static int
copy_main (const struct brig_context *ctx, const struct brig_copy_opts *o, bool into,
           brig_copy_fn *fn, void *data, brig_error *err)
{
  struct copy_run x = {
    .ctx = ctx, .o = o, .into = into, .verb = into ? "copy into" : "copy out of",
    .freezer = -1, .data = { -1, -1 }, .ctl = { -1, -1 }, .pid = -1,
  };
  struct sigaction ign = { .sa_handler = SIG_IGN }, old;
  int r;

  sigaction (SIGPIPE, &ign, &old);
  r = copy_load (&x, err);
  if (r == 0)
    r = copy_cgroup (&x, err);
  if (r == 0)
    r = copy_run (&x, fn, data, err);
  if (x.pid > 0)
    {
      kill (x.pid, SIGKILL);
      while (waitpid (x.pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  for (int i = 0; i < 2; i++)
    {
      if (x.data[i] >= 0)
        close (x.data[i]);
      if (x.ctl[i] >= 0)
        close (x.ctl[i]);
    }
  brig_cgroup_self_close (x.cg, &x.cs);
  brig_cgroup_free (x.cg);
  brig_container_free (x.c);
  sigaction (SIGPIPE, &old, NULL);
  return r;
}

int
brig_copy_into (const struct brig_context *ctx, const struct brig_copy_opts *o,
                brig_copy_fn *produce, void *data, brig_error *err)
{
  return copy_main (ctx, o, true, produce, data, err);
}

int
brig_copy_out_of (const struct brig_context *ctx, const struct brig_copy_opts *o,
                  brig_copy_fn *consume, void *data, brig_error *err)
{
  return copy_main (ctx, o, false, consume, data, err);
}

/* ---- the host side ---- */

int
brig_copy_host_archive (int fd, const char *src, bool follow, brig_error *err)
{
  const struct brig_copy_side side = { .root = -1, .host = true };
  _cleanup_free_ struct brig_tar *t = xmalloc0 (sizeof *t);

  brig_tar_init (t, fd);
  return brig_copy_write_path (t, &side, src, follow, err);
}

int
brig_copy_host_extract (int fd, const char *dst, bool contents, bool keep_owner, brig_error *err)
{
  const struct brig_copy_side side = { .root = -1, .host = true, .keep_owner = keep_owner };
  _cleanup_free_ struct brig_tar *t = xmalloc0 (sizeof *t);

  brig_tar_init (t, fd);
  return brig_copy_extract_path (t, &side, dst, false, contents, err);
}

int
brig_copy_relay (int in, int out, brig_error *err)
{
  _cleanup_free_ char *buf = xmalloc0 (128 * 1024);

  for (;;)
    {
      ssize_t n = read (in, buf, 128 * 1024);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return brig_error_errno (err, "read the tar stream");
      if (n == 0)
        return 0;
      if (brig_write_all (out, buf, (size_t) n) < 0)
        return brig_error_errno (err, "write the tar stream");
    }
}
