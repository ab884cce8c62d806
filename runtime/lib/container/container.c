/* start, kill, delete: the lifecycle after create. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/internal.h"
#include "hooks.h"
#include "log.h"
#include "container/sdnotify.h"
#include "container/state.h"
#include "sync.h"
#include "container/tenancy.h"
#include "utils.h"

static bool wait_exit (brig_container *c, int timeout_ms);

/* The saved config, parsed only when it has hooks of that kind at all:
 * start and delete stay cheap for the common hook-less container. */
static oci_config *
config_if_hooks (brig_container *c, const char *kind)
{
  _cleanup_free_ char *buf = NULL;
  oci_config *cfg = NULL;
  oci_error perr = { NULL };
  size_t len;

  if (brig_read_file_at (c->dirfd, "config.json", &buf, &len, NULL) < 0)
    return NULL;
  if (memmem (buf, len, kind, strlen (kind)) == NULL)
    return NULL;
  cfg = oci_config_parse_data (buf, len, "config.json", &perr);
  if (cfg == NULL)
    {
      brig_warn ("container \"%s\": %s", c->id, perr.msg ? perr.msg : "invalid config.json");
      free (perr.msg);
    }
  return cfg;
}

int
brig_container_poststart (const oci_hooks *h, brig_container *c, brig_error *err)
{
  _cleanup_free_ char *json = NULL;
  int r;

  if (h == NULL || h->poststart_len == 0)
    return 0;
  json = brig_container_state_json (c, BRIG_STATUS_RUNNING, false);
  r = brig_hooks_run_in (h->poststart, h->poststart_len, "poststart", json, NULL, c->st.bundle,
                         err);
  if (r < 0)
    {
      brig_container_signal (c, SIGKILL, NULL);
      wait_exit (c, 2000);
      return r;
    }
  return 0;
}

/* Connect to the init's exec socket; refused or missing: it is gone. */
static int
connect_exec_socket (brig_container *c, int *fd, brig_error *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  int s;

  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/" BRIG_EXEC_SOCKET, c->dirfd);
  s = socket (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0)
    return brig_error_errno (err, "create a socket");
  if (connect (s, (struct sockaddr *) &sa, sizeof sa) < 0)
    {
      int e = errno;
      close (s);
      if (e == ECONNREFUSED || e == ENOENT)
        return brig_error_set (err, 0, "cannot start a container that has stopped: \"%s\" "
                               "(delete it, then create it again)", c->id);
      return brig_error_set (err, e, "connect to the exec socket");
    }
  *fd = s;
  return 0;
}

/* Whose start this is: a plain start may not start a pool's available
 * member nor a container whose reset did not finish; a claim makes the
 * vacant member its tenant's (a new generation). */
static int
start_tenancy (brig_container *c, bool claim, brig_error *err)
{
  struct brig_tenancy t;
  int r = brig_tenancy_read (c->dirfd, &t);

  if (r < 0 && t.state != BRIG_TENANCY_RESETTING)
    return brig_error_set (err, -r, "container \"%s\": read its tenancy", c->id);
  if (claim && t.state == BRIG_TENANCY_VACANT)
    return brig_tenancy_write (c->dirfd, t.gen + 1, BRIG_TENANCY_TENANT, err);
  return brig_tenancy_refuse (c->dirfd, c->id, &t, "start", err);
}

static int
start_common (const struct brig_context *ctx, const char *id, bool claim, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  _cleanup_close_ int fd = -1;
  struct brig_notify notify = { -1, -1 };
  oci_config *cfg;
  int r;

  r = brig_container_load (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r < 0)
    return r;
  /* whatever the init's state: a reset that failed or did not finish
   * says so first */
  r = start_tenancy (c, claim && c->status == BRIG_STATUS_CREATED, err);
  if (r < 0)
    return r;
  switch (c->status)
    {
    case BRIG_STATUS_CREATED:
      break;
    case BRIG_STATUS_STOPPED:
      return brig_error_set (err, 0, "cannot start a container that has stopped: \"%s\" "
                             "(delete it, then create it again)", c->id);
    case BRIG_STATUS_RUNNING:
      return brig_error_set (err, 0, "cannot start an already running container: \"%s\"",
                             c->id);
    default:
      return brig_error_set (err, 0, "cannot start a container in the %s state: \"%s\"",
                             brig_status_name (c->status), c->id);
    }
  /* runtime-spec 1.3: start MUST fail when process was not set. The
   * container stays created; delete removes it. */
  if (c->st.no_process)
    return brig_error_set (err, 0, "cannot start container \"%s\": its config.json has "
                           "no process", c->id);
  /* sd_notify: listen before the process can send (notify.h). */
  r = brig_notify_open (c->dirfd, ctx->notify_socket, &notify, err);
  if (r < 0)
    return r;
  r = connect_exec_socket (c, &fd, err);
  if (r < 0)
    {
      brig_notify_close (&notify);
      return r;
    }
  /* Running from now on, whatever the init answers. */
  unlinkat (c->dirfd, BRIG_EXEC_SOCKET, 0);
  /* What follows waits on the container (startContainer hooks, execve, a
   * seccomp listener, poststart hooks): never while holding its lock, so
   * kill, exec and delete still work meanwhile. */
  flock (c->dirfd, LOCK_UN);
  /* The init answers with an error (a startContainer hook, execve: E2BIG,
   * ENOENT, EACCES) or EOF once execve has closed the connection. An init
   * made by an older brig without start hooks closes it at once. */
  {
    struct brig_sync_msg m = { .fd = -1 };
    r = brig_sync_recv (fd, &m);
    if (r == 0 && m.type == BRIG_SYNC_ERROR)
      {
        r = brig_error_set_raw (err, m.code, m.data);
        brig_sync_msg_clear (&m);
        brig_notify_close (&notify);
        wait_exit (c, 2000);
        return r;
      }
    brig_sync_msg_clear (&m);
  }

  cfg = config_if_hooks (c, "poststart");
  if (cfg)
    {
      r = brig_container_poststart (cfg->hooks, c, err);
      oci_config_free (cfg);
      if (r < 0)
        {
          /* runtime-spec 1.3: a failed poststart hook stops the container
           * (done above) and the lifecycle continues with delete, which
           * also runs the poststop hooks. */
          brig_error e = { 0 };
          if (brig_container_delete (ctx, id, true, &e) < 0)
            brig_warn ("delete container \"%s\": %s", id, e.msg ? e.msg : "failed");
          brig_error_clear (&e);
          brig_notify_close (&notify);
          return r;
        }
    }
  /* A claim hands out a running member only: the EOF came at the
   * process's execve, which may have exited at once (pool.h); looked at
   * last, after the poststart hooks, right before the hand-out. */
  if (claim && c->pidfd >= 0 && poll (&(struct pollfd) { .fd = c->pidfd, .events = POLLIN }, 1, 0) > 0)
    {
      brig_notify_close (&notify);
      return brig_error_say (err, ECHILD, "its process exited at once: a pool member needs a "
                             "process that keeps running (run.brig.init=hold, pool fill's "
                             "default, runs none and waits for exec)");
    }
  /* As runc: start returns once the process said READY=1 (or exited). */
  brig_notify_relay (&notify, c->st.pid, c->pidfd);
  brig_notify_close (&notify);
  return 0;
}

int
brig_container_start (const struct brig_context *ctx, const char *id, brig_error *err)
{
  return start_common (ctx, id, false, err);
}

int
brig_container_start_claimed (const struct brig_context *ctx, const char *id, brig_error *err)
{
  return start_common (ctx, id, true, err);
}

int
brig_signal_parse (const char *s, int *sig)
{
  char *end;
  long v;

  if (s == NULL || *s == '\0')
    return -EINVAL;
  v = strtol (s, &end, 10);
  if (*end == '\0')
    {
      if (v < 0 || v > SIGRTMAX)
        return -EINVAL;
      *sig = (int) v;
      return 0;
    }
  if (strncasecmp (s, "SIG", 3) == 0)
    s += 3;
  for (int i = 1; i < SIGRTMIN; i++)
    {
      const char *name = sigabbrev_np (i);
      if (name && strcasecmp (name, s) == 0)
        {
          *sig = i;
          return 0;
        }
    }
  if (strncasecmp (s, "RTMIN", 5) == 0 || strncasecmp (s, "RTMAX", 5) == 0)
    {
      bool min = strncasecmp (s, "RTMIN", 5) == 0;
      long off = 0;
      if (s[5] != '\0')
        {
          off = strtol (s + 5, &end, 10);
          if (*end != '\0' || (min && off < 0) || (!min && off > 0))
            return -EINVAL;
        }
      v = (min ? SIGRTMIN : SIGRTMAX) + off;
      if (v < SIGRTMIN || v > SIGRTMAX)
        return -EINVAL;
      *sig = (int) v;
      return 0;
    }
  return -EINVAL;
}

static int
load_cgroup (brig_container *c, brig_cgroup **cg, brig_error *err)
{
  return brig_container_cgroup (c, cg, err);
}

int
brig_container_kill (const struct brig_context *ctx, const char *id, int sig, bool all,
                     brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  brig_cgroup *cg = NULL;
  int r;

  r = brig_container_load (ctx, id, BRIG_LOCK_SHARED, &c, err);
  if (r < 0)
    return r;
  /* The cgroup: for --all, and for SIGKILL to a paused container, which
   * in a v1 freezer dies only once thawed (as runc, other signals wait). */
  if ((all || (sig == SIGKILL && c->status == BRIG_STATUS_PAUSED))
      && (r = load_cgroup (c, &cg, all ? err : NULL)) < 0 && all)
    return r;
  if (all && cg)
    r = brig_cgroup_kill_all (cg, sig, err);
  else if (c->status == BRIG_STATUS_STOPPED || c->status == BRIG_STATUS_CREATING)
    r = brig_error_set (err, 0, "container not running");
  else
    r = brig_container_signal (c, sig, err);
  if (r == 0 && cg && sig == SIGKILL && c->status == BRIG_STATUS_PAUSED)
    brig_cgroup_freeze (cg, false, NULL);
  brig_cgroup_free (cg);
  return r;
}

/* Wait up to timeout_ms for the init behind c->pidfd to exit. */
static bool
wait_exit (brig_container *c, int timeout_ms)
{
  struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
  if (c->pidfd < 0)
    return true;
  for (;;)
    {
      int r = poll (&p, 1, timeout_ms);
      if (r > 0)
        return true;
      if (r == 0)
        return false;
      if (errno != EINTR)
        return false;
    }
}

static int delete_container (const struct brig_context *ctx, const char *id, bool force,
                             bool read_hooks, brig_error *err);

int
brig_container_delete (const struct brig_context *ctx, const char *id, bool force,
                       brig_error *err)
{
  return delete_container (ctx, id, force, true, err);
}

/* Remove the container's cgroup (and free cg). An empty cgroup (the usual
 * case once the init is gone: the kernel kills the rest of its pid
 * namespace) needs no freeze-kill-thaw. Without a pid namespace of its own
 * the container's other processes outlive the init: every one, in any
 * hierarchy, is killed and waited for. The first try is one rmdir per
 * hierarchy: the kernel refuses it while a process or a child cgroup is
 * left, and then the full check runs on what remains. */
static int
remove_cgroup (brig_cgroup *cg, const char *id, brig_error *err)
{
  brig_error e = { 0 };
  int r = 0;

  if (!brig_cgroup_try_remove (cg))
    {
      bool empty = !brig_cgroup_busy (cg);
      r = brig_cgroup_destroy (cg, !empty, &e);
      if (r < 0 && empty)
        {
          brig_error_clear (&e);
          r = brig_cgroup_destroy (cg, true, &e);
        }
    }
  brig_cgroup_free (cg);
  if (r < 0)
    {
      r = brig_error_set_raw (err, e.code, e.msg);
      brig_error_clear (&e);
      return brig_error_wrap (err, "delete container \"%s\"", id);
    }
  return 0;
}

int
brig_container_delete_after_run_owned (const struct brig_context *ctx, const char *id,
                                       int dirfd, brig_cgroup *cg, pid_t pid,
                                       unsigned long long start_time, brig_error *err)
{
  struct stat st;
  int r = 0;

  /* Whatever another command did while the lock was free: a delete (the
   * directory is gone: nothing left to do), an exec (its processes die with
   * the cgroup), a reset (its new init too), an update that made more
   * cgroups (the record grew: it is read again). */
  while (flock (dirfd, LOCK_EX) < 0 && errno == EINTR)
    ;
  if (fstat (dirfd, &st) == 0 && st.st_nlink > 0)
    {
      brig_cgroup *del = NULL;
      if (cg && brig_cgroup_for_delete (cg, dirfd, pid, start_time, &del, err) < 0)
        {
          brig_warn ("%s", err->msg ? err->msg : "load cgroup");
          brig_error_clear (err);
        }
      cg = NULL;
      if (del)
        r = remove_cgroup (del, id, err);
      if (r == 0)
        r = brig_state_remove (ctx, id, dirfd, err);
    }
  if (cg)
    brig_cgroup_free (cg);
  close (dirfd);
  return r;
}

int
brig_container_delete_after_run (const struct brig_context *ctx, const char *id,
                                 bool has_poststop, brig_error *err)
{
  return delete_container (ctx, id, true, has_poststop, err);
}

/* read_hooks: false when the caller knows the config has no poststop
 * hooks (run), so the saved config.json is not read again. */
static int
delete_container (const struct brig_context *ctx, const char *id, bool force, bool read_hooks,
                  brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  brig_cgroup *cg = NULL;
  oci_config *cfg = NULL;
  int r;

  r = brig_container_load_any (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r == -ENOENT && force)
    {
      /* As runc: forcing the removal of nothing is not an error. */
      brig_error_clear (err);
      return 0;
    }
  if (r < 0)
    return r;
  if (c->status == BRIG_STATUS_UNKNOWN && !force)
    return brig_error_set (err, 0, "container \"%s\": %s/%s/state.json is damaged (%s); "
                           "delete --force removes the container", id, ctx->state_root, id,
                           c->damaged);
  if ((c->status == BRIG_STATUS_RUNNING || c->status == BRIG_STATUS_PAUSED) && !force)
    return brig_error_set (err, 0, "cannot delete container %s that is not stopped: %s "
                           "(delete --force kills it first)", id,
                           brig_status_name (c->status));

  r = load_cgroup (c, &cg, err);
  if (r < 0)
    {
      brig_warn ("%s", err->msg ? err->msg : "load cgroup");
      brig_error_clear (err);
      cg = NULL;
    }
  if (c->status != BRIG_STATUS_STOPPED)
    {
      /* A paused container's processes only die once thawed: each gets its
       * SIGKILL while still frozen, so none runs again before it dies. */
      if (c->status == BRIG_STATUS_PAUSED && cg && !brig_cgroup_is_shared (cg))
        {
          brig_cgroup_kill_all (cg, SIGKILL, NULL);
          brig_cgroup_freeze (cg, false, NULL);
        }
      brig_container_signal (c, SIGKILL, NULL);
      if (!wait_exit (c, 10000))
        brig_warn ("container \"%s\": init did not exit after SIGKILL", id);
    }
  if (cg && (r = remove_cgroup (cg, id, err)) < 0)
    return r;
  cfg = read_hooks ? config_if_hooks (c, "poststop") : NULL;
  r = brig_state_remove (ctx, id, c->dirfd, err);
  if (r == 0 && cfg && cfg->hooks && cfg->hooks->poststop_len)
    {
      _cleanup_free_ char *json = brig_container_state_json (c, BRIG_STATUS_STOPPED, false);
      brig_hooks_run_warn (cfg->hooks->poststop, cfg->hooks->poststop_len, "poststop", json);
    }
  oci_config_free (cfg);
  return r;
}
