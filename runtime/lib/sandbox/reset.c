/* brig reset: every process of the container killed, its namespaces (but a
 * pinned, clean network namespace) and its ephemeral layer made new, a new
 * init waiting for `start` from the config saved at create, then verified
 * (reset_verify.c). A reset that fails leaves the container unusable: its
 * new init killed and reset.failed in the state directory, so start and
 * exec refuse it and only delete remains (docs/sandbox.md "Reset"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "container_respawn.h"
#include "log.h"
#include "sandbox/reset_internal.h"
#include "state.h"
#include "utils.h"

void
reset_check_add (struct brig_reset_report *rep, const char *name, bool ok, char *detail)
{
  rep->checks = xrealloc (rep->checks, (rep->n + 1) * sizeof *rep->checks);
  rep->checks[rep->n++] = (struct brig_reset_check) { .name = xstrdup (name), .ok = ok,
                                                      .detail = ok ? NULL : detail };
  if (ok)
    free (detail);
  if (!ok)
    rep->ok = false;
}

void
brig_reset_report_free (struct brig_reset_report *rep)
{
  if (rep == NULL)
    return;
  for (size_t i = 0; i < rep->n; i++)
    {
      free (rep->checks[i].name);
      free (rep->checks[i].detail);
    }
  free (rep->checks);
  rep->checks = NULL;
  rep->n = 0;
}

static double
mono_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* SIGKILL to everything, frozen or not, and wait (up to 10 s) until no
 * process is left in any hierarchy of the cgroup. */
static bool
kill_everything (brig_container *c, brig_cgroup *cg)
{
  struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
  long waited = 0, step = 1;

  if (c->status == BRIG_STATUS_PAUSED)
    {
      /* each gets its SIGKILL while frozen: none runs again before it dies */
      brig_cgroup_kill_all (cg, SIGKILL, NULL);
      brig_cgroup_freeze (cg, false, NULL);
    }
  if (c->pidfd >= 0)
    {
      /* With a pid namespace the kernel kills the rest with the init. */
      syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
      while (poll (&p, 1, 10000) < 0 && errno == EINTR)
        ;
    }
  while (brig_cgroup_busy (cg))
    {
      if (waited >= 10000)
        return false;
      /* double-forked, new sessions, SIGTERM ignored: SIGKILL all the same,
       * again for what forked meanwhile */
      if (waited == 0 || step >= 8)
        brig_cgroup_kill_all (cg, SIGKILL, NULL);
      sleep_ms (step);
      waited += step;
      step = step < 16 ? step * 2 : 16;
    }
  return true;
}

/* A process anywhere on the host still in one of the old init's
 * namespaces: a tenant that left the cgroup (or escaped its freezer). */
static void
check_old_namespaces (const struct reset_ns *ns, size_t n, struct brig_reset_report *rep)
{
  _cleanup_closedir_ DIR *d = opendir ("/proc");
  char *found = NULL;
  size_t nfound = 0;
  struct dirent *de;
  pid_t self = getpid ();

  if (d == NULL)
    {
      reset_check_add (rep, "ns.unused", false, xasprintf ("open /proc: %s", strerror (errno)));
      return;
    }
  while ((de = readdir (d)) != NULL)
    {
      char p[300];
      struct stat st;
      int pid;
      if (de->d_name[0] < '1' || de->d_name[0] > '9')
        continue;
      pid = atoi (de->d_name);
      if (pid == self)
        continue;
      for (size_t i = 0; i < n; i++)
        {
          snprintf (p, sizeof p, "%s/ns/%s", de->d_name, brig_ns_proc_name (ns[i].type));
          if (fstatat (dirfd (d), p, &st, 0) < 0)
            break;   /* gone, or a zombie: no namespaces left */
          if (st.st_ino != ns[i].ino || st.st_dev != ns[i].dev)
            continue;
          if (nfound++ < 4)
            {
              char *s = xasprintf ("%s%spid %d in the old %s namespace", found ? found : "",
                                   found ? ", " : "", pid, brig_ns_proc_name (ns[i].type));
              free (found);
              found = s;
            }
          break;
        }
    }
  reset_check_add (rep, "ns.unused", nfound == 0, found);
}

/* Whether the pinned network namespace has nothing of the tenant left: no
 * socket at all (a TIME_WAIT connection names the tenant's peers), no
 * entry in the TCP metrics cache, no IPv6 flow label, no traffic counted. */
static bool
pinned_netns_clean (int nsfd, char **why)
{
  _cleanup_close_ int self = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  _cleanup_free_ char *detail = NULL;
  int r;

  if (self < 0 || setns (nsfd, CLONE_NEWNET) < 0)
    return false;
  r = reset_sockets ("/proc/thread-self/net", &detail);
  /* No socket left, but connections that ended left their destinations
   * in the TCP metrics cache, and flow labels linger after their socket:
   * channels to the next tenant. */
  if (r == 0 && detail == NULL)
    {
      size_t n = 0;
      r = reset_tcp_metrics (&n);
      if (r == 0 && n > 0)
        detail = xasprintf ("%zu TCP metrics entries (destinations of ended connections)", n);
      if (r == 0 && detail == NULL && (r = reset_flowlabels (&n)) == 0 && n > 0)
        detail = xasprintf ("%zu IPv6 flow labels", n);
      /* and every packet and error it caused, in counters */
      if (r == 0 && detail == NULL)
        r = reset_netns_counters (&detail);
    }
  if (setns (self, CLONE_NEWNET) < 0)
    {
      /* brig must not go on in the container's namespace */
      brig_warn ("reset: return to brig's network namespace: %s", strerror (errno));
      abort ();
    }
  if (r == 0 && detail)
    brig_debug ("reset: pinned network namespace not reused: %s", detail);
  *why = brig_steal_ptr (detail);
  return r == 0 && *why == NULL;
}

static void
unpin_netns (int dirfd)
{
  char p[64];
  snprintf (p, sizeof p, "/proc/self/fd/%d/" BRIG_RESET_NETNS, dirfd);
  umount2 (p, MNT_DETACH | UMOUNT_NOFOLLOW);
  unlinkat (dirfd, BRIG_RESET_NETNS, 0);
}

/* The failed checks' names, for the error and the mark. */
static char *
failed_names (const struct brig_reset_report *rep)
{
  char *s = xstrdup ("");
  for (size_t i = 0; i < rep->n; i++)
    if (!rep->checks[i].ok)
      {
        char *t = xasprintf ("%s%s%s (%s)", s, *s ? ", " : "", rep->checks[i].name,
                             rep->checks[i].detail ? rep->checks[i].detail : "failed");
        free (s);
        s = t;
      }
  return s;
}

/* Leave the container unusable: no init, reset.failed says why. */
static int
mark_failed (brig_container *c, const char *why, brig_error *err)
{
  unlinkat (c->dirfd, BRIG_EXEC_SOCKET, 0);
  brig_write_file_atomic (c->dirfd, BRIG_STATE_RESET_FAILED, why, strlen (why), 0600, NULL);
  return brig_error_set (err, 0, "reset failed: %s; the container is unusable, delete it", why);
}

struct reset_run {
  const struct brig_context *ctx;
  brig_container *c;
  oci_config *cfg;
  brig_cgroup *cg;
  struct brig_ns_plan ns;
  struct reset_ns *old;
  size_t n_old;
  bool opt_in;
  int netns_fd;
  pid_t old_pid;                 /* the init before the reset */
  unsigned long long old_start;
  struct brig_respawn rs;        /* the new init, prepared before the kill */
};

/* Everything that can refuse a reset while the container is untouched. */
static int
reset_prepare (struct reset_run *x, brig_error *err)
{
  brig_container *c = x->c;
  _cleanup_free_ char *failed = NULL;
  const oci_process *p;
  int r;

  switch (c->status)
    {
    case BRIG_STATUS_CREATED:
    case BRIG_STATUS_RUNNING:
    case BRIG_STATUS_PAUSED:
    case BRIG_STATUS_STOPPED:
      break;
    default:
      return brig_error_set (err, 0, "cannot reset a container in the %s state",
                             brig_status_name (c->status));
    }
  failed = brig_state_reset_failed (c->dirfd);
  if (failed)
    return brig_error_set (err, 0, "container \"%s\": an earlier reset failed (%s); delete it",
                           c->id, failed);
  r = brig_container_config (c, &x->cfg, err);
  if (r < 0)
    return r;
  p = x->cfg->process;
  if (p == NULL)
    return brig_error_say (err, EINVAL, "config.json: a container without process cannot be reset");
  if (p->has_terminal && p->terminal)
    return brig_error_say (err, EINVAL, "process.terminal: a container with a terminal "
                           "cannot be reset (no console socket to hand it to)");
  if (x->cfg->linux && x->cfg->linux->net_devices_len > 0)
    return brig_error_say (err, EINVAL, "linux.netDevices: a container with network devices "
                           "cannot be reset (they leave with the old network namespace)");
  r = brig_reset_opt_in (x->cfg->annotations, &x->opt_in, err);
  if (r < 0)
    return r;
  r = brig_ns_plan_build (x->cfg->linux, &x->ns, err);
  if (r < 0)
    return r;
  r = brig_container_cgroup (c, &x->cg, err);
  if (r < 0)
    return r;
  /* Finding and killing every process needs a cgroup of its own. */
  if (x->cg == NULL || strcmp (brig_cgroup_manager_name (x->cg), "disabled") == 0)
    return brig_error_set (err, 0, "container \"%s\" has no cgroup: it cannot be reset", c->id);
  if (brig_cgroup_is_shared (x->cg))
    return brig_error_set (err, 0, "annotation " BRIG_CGROUP_SHARED_ANNOTATION ": a container "
                           "sharing its cgroup cannot be reset");
  /* create's checks of the saved config, on the parse above (one read
   * and parse per reset): a config they refuse is refused here, while
   * the container is untouched */
  x->rs = (struct brig_respawn) { .dirfd = c->dirfd, .cg = x->cg, .old = &c->st,
                                  .netns_fd = -1 };
  r = brig_container_respawn_prepare (x->ctx, c->id, x->cfg, &x->rs, err);
  if (r < 0)
    return r;

  /* The namespaces to look for once everything is killed: the live init's,
   * else what the last create or reset recorded, else a survivor's. None
   * with a pid namespace of its own: ns.unused needs no scan then. */
  if (x->ns.new_flags & CLONE_NEWPID)
    return 0;
  if (c->pidfd >= 0 && brig_reset_ns_of (c->st.pid, x->ns.new_flags, &x->old, &x->n_old) == 0)
    return 0;
  if (brig_reset_ns_load (c->dirfd, &x->old, &x->n_old) == 0)
    return 0;
  {
    _cleanup_free_ pid_t *pids = NULL;
    size_t n = 0;
    if (brig_cgroup_pids (x->cg, &pids, &n, NULL) == 0)
      for (size_t i = 0; i < n; i++)
        if (brig_reset_ns_of (pids[i], x->ns.new_flags, &x->old, &x->n_old) == 0)
          return 0;
  }
  return 0;
}

static void
reset_run_clear (struct reset_run *x)
{
  brig_container_respawn_clear (&x->rs);
  if (x->netns_fd >= 0)
    close (x->netns_fd);
  free (x->old);
  brig_ns_plan_clear (&x->ns);
  brig_cgroup_free (x->cg);
  oci_config_free (x->cfg);
}

/* From the kill on: whatever fails, the container ends unusable. */
static int
reset_do (struct reset_run *x, struct brig_reset_report *rep, brig_error *err)
{
  brig_container *c = x->c;
  struct brig_respawn *rs = &x->rs;
  _cleanup_free_ char *why = NULL;
  int r;

  double t0 = mono_ms ();
  reset_check_add (rep, "cgroup.empty", kill_everything (c, x->cg),
                   xstrdup ("processes left in the cgroup after SIGKILL (10 s)"));
  /* The old init's pidfd has served: the new init must not inherit it. */
  if (c->pidfd >= 0)
    {
      close (c->pidfd);
      c->pidfd = -1;
    }
  brig_debug ("reset: kill %.3f ms", mono_ms () - t0);
  /* With a pid namespace of its own, the kernel killed every process in
   * it (and in the pid namespaces below it) before its init counted as
   * exited, also those that had left the cgroup: no tenant process can be
   * outside it, so no scan is needed. Without one, a tenant that moved
   * itself out of the cgroup keeps the old namespaces: scan for them. */
  if (x->ns.new_flags & CLONE_NEWPID)
    reset_check_add (rep, "ns.unused", true, NULL);
  else if (x->n_old > 0)
    check_old_namespaces (x->old, x->n_old, rep);
  else
    reset_check_add (rep, "ns.unused", false,
                     xstrdup ("the old init's namespaces are unknown (it exited before the "
                              "reset; opt in with run.brig.reset=true to record them)"));
  if (!rep->ok)
    {
      why = failed_names (rep);
      return mark_failed (c, why, err);
    }

  brig_debug ("reset: ns scan %.3f ms", mono_ms () - t0);
  /* The page cache (when over the memory.usage check's bound: that check
   * still runs on the new init) and the peaks the tenant left. */
  brig_cgroup_reset_counters (x->cg, BRIG_RESET_MEMORY_BOUND);
  brig_debug ("reset: counters %.3f ms", mono_ms () - t0);
  /* The config's limits, written again: a tenant that could write its
   * own cgroup's files (a v1 cgroupfs mounted rw, uid 0) raised them, and
   * the kept cgroup would have handed that to the next tenant. The
   * device rules are left: changing them needs CAP_SYS_ADMIN (v1) or
   * detaching brig's program (v2), and they are not the tenant's. */
  if (x->cfg->linux && x->cfg->linux->resources)
    {
      oci_resources res = *x->cfg->linux->resources;
      brig_error e = { 0 };
      bool ok;
      res.devices = NULL;
      res.devices_len = 0;
      ok = brig_cgroup_update (x->cg, &res, &e) == 0;
      reset_check_add (rep, "cgroup.limits", ok,
                       ok ? NULL : xstrdup (e.msg ? e.msg : "linux.resources not applied"));
      brig_error_clear (&e);
      if (!rep->ok)
        {
          why = failed_names (rep);
          return mark_failed (c, why, err);
        }
    }
  brig_debug ("reset: limits %.3f ms", mono_ms () - t0);

  /* The pinned network namespace, when nothing of the tenant is left in it. */
  {
    _cleanup_close_ int nsfd = openat (c->dirfd, BRIG_RESET_NETNS, O_RDONLY | O_CLOEXEC);
    int e = errno;
    _cleanup_free_ char *why_not = NULL;
    if (nsfd >= 0 && brig_reset_netns_reusable (x->cfg, &x->ns)
        && pinned_netns_clean (nsfd, &why_not))
      rs->netns_fd = x->netns_fd = brig_steal_fd (nsfd);
    else if (nsfd >= 0 || e != ENOENT)
      unpin_netns (c->dirfd);
  }

  brig_debug ("reset: netns %.3f ms", mono_ms () - t0);
  r = brig_container_respawn (rs, err);
  brig_debug ("reset: respawn %.3f ms", mono_ms () - t0);
  if (r < 0)
    {
      why = xstrdup (err->msg ? err->msg : "a new init could not be made");
      brig_error_clear (err);
      return mark_failed (c, why, err);
    }
  {
    unsigned long mine = x->ns.new_flags;
    /* The reused network namespace was checked, empty, with every process
     * of the tenant dead; the new init has not run a line of the tenant's
     * program yet: that check stands for it (and saves reading the host's
     * socket tables twice). */
    if (rs->netns_fd >= 0)
      {
        reset_check_add (rep, "net.sockets", true, NULL);
        mine &= ~(unsigned long) CLONE_NEWNET;
      }
    reset_verify_init (x->cfg, mine, rs->pid, c->dirfd, x->cg, x->old_pid, x->old_start, rep);
  }
  brig_debug ("reset: verify %.3f ms", mono_ms () - t0);
  if (!rep->ok)
    {
      int pidfd = (int) syscall (SYS_pidfd_open, rs->pid, 0);
      if (pidfd >= 0)
        {
          struct pollfd p = { .fd = pidfd, .events = POLLIN };
          syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
          while (poll (&p, 1, 10000) < 0 && errno == EINTR)
            ;
          close (pidfd);
        }
      why = failed_names (rep);
      return mark_failed (c, why, err);
    }
  /* For the next reset: the namespaces of this init, and its network
   * namespace pinned when the config opted in. */
  brig_reset_pin (c->dirfd, x->cfg, &x->ns, rs->pid, x->opt_in);
  return 0;
}

int
brig_container_reset (const struct brig_context *ctx, const char *id,
                      struct brig_reset_report *rep, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  struct reset_run x = { .ctx = ctx, .netns_fd = -1 };
  int r;

  memset (rep, 0, sizeof *rep);
  rep->ok = true;
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    x.ns.join_fd[i] = -1;
  r = brig_container_load (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r < 0)
    return r;
  x.c = c;
  x.old_pid = c->st.pid;
  x.old_start = c->st.pid_start_time;
  r = reset_prepare (&x, err);
  if (r == 0)
    r = reset_do (&x, rep, err);
  if (r < 0)
    rep->ok = false;
  reset_run_clear (&x);
  return r;
}
