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

#include "container/respawn.h"
#include "log.h"
#include "sandbox/claim.h"
#include "sandbox/egress.h"
#include "sandbox/ephemeral.h"
#include "sandbox/extension.h"
#include "sandbox/reset_internal.h"
#include "container/state.h"
#include "container/tenancy.h"
#include "utils.h"

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

/* SIGKILL to everything, frozen or not, and wait (up to 10 s) until no
 * process is left in any hierarchy of the cgroup. *init_exited: the old
 * init is known to have exited (its pidfd said so, or it was gone before). */
static bool
kill_everything (brig_container *c, brig_cgroup *cg, bool *init_exited)
{
  struct pollfd p = { .fd = c->pidfd, .events = POLLIN };
  long waited = 0, step = 1;
  int n = 0;

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
      while ((n = poll (&p, 1, 10000)) < 0 && errno == EINTR)
        ;
    }
  /* A frozen init (a freezer cgroup the tenant made and froze) or one
   * waiting for a frozen process of its pid namespace does not exit. */
  *init_exited = c->pidfd < 0 || n > 0;
  while (brig_cgroup_busy (cg))
    {
      if (waited >= 10000)
        return false;
      /* double-forked, new sessions, SIGTERM ignored: SIGKILL all the same,
       * again for what forked meanwhile */
      if (waited == 0 || step >= 8)
        brig_cgroup_kill_all (cg, SIGKILL, NULL);
      brig_sleep_ms (step);
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

/* The pinned namespace's configuration against its description when it
 * was fresh (taken when it was pinned): *detail names the first
 * difference; a missing description is one. */
static int
netns_as_fresh (int dirfd, char **detail)
{
  _cleanup_free_ char *fresh = NULL, *now = NULL;
  int r = brig_read_file_at (dirfd, BRIG_RESET_NETNS_FRESH, &fresh, NULL, NULL);

  if (r < 0)
    {
      *detail = xasprintf ("no description of it when fresh (%s)", strerror (-r));
      return 0;
    }
  r = reset_netns_describe (&now);
  if (r == 0)
    *detail = reset_netns_diff (fresh, now);
  return r;
}

/* Whether the pinned network namespace has nothing of the tenant left: no
 * socket at all (a TIME_WAIT connection names the tenant's peers), no
 * entry in the TCP metrics cache, no IPv6 flow label, no traffic counted,
 * and its configuration (interfaces, addresses, routes, rules, firewall)
 * as it was when fresh. */
static bool
pinned_netns_clean (int dirfd, int nsfd, char **why)
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
      /* What a process with CAP_NET_ADMIN changes (whether or not the
       * config or an exec was known to give it): judged on the namespace. */
      if (r == 0 && detail == NULL)
        r = netns_as_fresh (dirfd, &detail);
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
  unlinkat (dirfd, BRIG_RESET_NETNS_FRESH, 0);
}

/* The new init of a reset that failed after the respawn: killed and
 * waited for. */
static void
kill_new_init (pid_t pid)
{
  int pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
      while (poll (&p, 1, 10000) < 0 && errno == EINTR)
        ;
      close (pidfd);
    }
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

/* Whether a mount keeps what is written to it beyond the reset: a bind of
 * anything, or a file system whose contents outlive the mount namespace
 * (a disk, a network share). Those the reset makes new (the kernel's
 * views and the memory file systems the new init mounts) do not. */
static bool
mount_keeps_writes (const oci_mount *m)
{
  static const char *const fresh[] = { "tmpfs", "devpts", "mqueue", "proc", "sysfs",
                                       "cgroup", "cgroup2" };
  bool bind = m->type && strcmp (m->type, "bind") == 0;
  if (!bind)
    for (size_t i = 0; i < m->options_len; i++)
      if (m->options[i] && (strcmp (m->options[i], "bind") == 0
                            || strcmp (m->options[i], "rbind") == 0))
        bind = true;
  if (bind || m->type == NULL)
    return true;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (fresh); i++)
    if (strcmp (m->type, fresh[i]) == 0)
      return false;
  return true;
}

int
brig_reset_check_storage (const oci_config *cfg, brig_error *err)
{
  struct brig_ephemeral e = { 0 };

  /* Without the ephemeral layer a writable root is the bundle's own
   * directory: what one tenant writes there the next one reads, and no
   * reset can undo it. */
  if (!(cfg->root && cfg->root->readonly)
      && !(brig_ephemeral_parse (cfg, &e, NULL) == 0 && e.mode != BRIG_EPHEMERAL_OFF))
    return brig_error_say (err, EINVAL, "root.readonly: the root is writable and has no "
                           "ephemeral layer: what a tenant writes there stays for the next "
                           "(set root.readonly or annotations." BRIG_EPHEMERAL_KEY "=true)");
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      bool ro = false;
      for (size_t k = 0; k < m->options_len; k++)
        if (m->options[k] && strcmp (m->options[k], "ro") == 0)
          ro = true;
        else if (m->options[k] && strcmp (m->options[k], "rw") == 0)
          ro = false;
      if (!ro && mount_keeps_writes (m))
        return brig_error_say (err, EINVAL, "mounts[%zu] (%s): a writable %s mount keeps "
                               "what a tenant writes for the next: add \"ro\" to its options",
                               i, m->destination ? m->destination : "?",
                               m->type ? m->type : "bind");
    }
  return 0;
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
  struct brig_tenancy ten;       /* the tenancy before the reset */
  unsigned flags;                /* BRIG_RESET_* */
};

/* Add the namespaces pid is in to those ns.unused looks for. */
static bool
add_ns_of (struct reset_run *x, pid_t pid)
{
  _cleanup_free_ struct reset_ns *v = NULL;
  size_t n = 0;
  if (brig_reset_ns_of (pid, x->ns.new_flags, &v, &n) < 0)
    return false;
  x->old = xrealloc (x->old, (x->n_old + n) * sizeof *x->old);
  memcpy (x->old + x->n_old, v, n * sizeof *v);
  x->n_old += n;
  return true;
}

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
  /* A reset that was killed before its checks held left the tenancy
   * resetting: this one repairs it (every step below runs anew). */
  brig_tenancy_read (c->dirfd, &x->ten);
  r = brig_container_config (c, &x->cfg, err);
  if (r < 0)
    return r;
  r = brig_reset_check_storage (x->cfg, err);
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

  /* The namespaces to look for once everything is killed: what the last
   * create or reset recorded (the tenant's, also when a reset killed half
   * way made another init since) and the live init's, else a survivor's.
   * None with a pid namespace of its own: ns.unused needs no scan then. */
  if (x->ns.new_flags & CLONE_NEWPID)
    return 0;
  brig_reset_ns_load (c->dirfd, &x->old, &x->n_old);
  if (c->pidfd >= 0 && add_ns_of (x, c->st.pid))
    return 0;
  if (x->n_old > 0)
    return 0;
  {
    _cleanup_free_ pid_t *pids = NULL;
    size_t n = 0;
    if (brig_cgroup_pids (x->cg, &pids, &n, NULL) == 0)
      for (size_t i = 0; i < n; i++)
        if (add_ns_of (x, pids[i]))
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

/* The mark, the kill and the checks of it (cgroup.empty, ns.unused). */
static int
reset_kill (struct reset_run *x, struct brig_reset_report *rep, brig_error *err)
{
  brig_container *c = x->c;
  bool init_exited = false, listable = brig_cgroup_listable (x->cg), empty;
  int r;

  /* Durably, before anything is destroyed: until every check has held,
   * start, exec and claim refuse the container, also when this reset is
   * killed half way (a new generation: an exec that waited for the lock
   * belongs to the tenant before). */
  r = brig_tenancy_write (c->dirfd, x->ten.gen + 1, BRIG_TENANCY_RESETTING, err);
  if (r < 0)
    return r;
  empty = kill_everything (c, x->cg, &init_exited);
  reset_check_add (rep, "cgroup.empty", listable && empty,
                   xstrdup (!listable ? "not checked: the cgroup's directories are not known"
                            : "processes left in the cgroup after SIGKILL (10 s)"));
  /* The old init's pidfd has served: the new init must not inherit it. */
  if (c->pidfd >= 0)
    {
      close (c->pidfd);
      c->pidfd = -1;
    }
  /* With a pid namespace of its own, the kernel killed every process in
   * it (and in the pid namespaces below it) before its init counted as
   * exited, also those that had left the cgroup: no tenant process can be
   * outside it, so no scan is needed, but the init's exit must be seen.
   * Without one, a tenant that moved itself out of the cgroup keeps the
   * old namespaces: scan for them. */
  if (x->ns.new_flags & CLONE_NEWPID)
    reset_check_add (rep, "ns.unused", init_exited,
                     xasprintf ("the old init (pid %d) did not exit after SIGKILL (10 s): its "
                                "pid namespace may still hold processes", (int) x->old_pid));
  else if (x->n_old > 0)
    check_old_namespaces (x->old, x->n_old, rep);
  else
    reset_check_add (rep, "ns.unused", false,
                     xstrdup ("the old init's namespaces are unknown (it exited before the "
                              "reset; opt in with run.brig.reset=true to record them)"));
  return 0;
}

/* From the kill on: whatever fails, the container ends unusable. */
static int
reset_do (struct reset_run *x, struct brig_reset_report *rep, brig_error *err)
{
  brig_container *c = x->c;
  struct brig_respawn *rs = &x->rs;
  _cleanup_free_ char *why = NULL;
  double t0 = brig_mono_ms_f ();
  int r;

  r = reset_kill (x, rep, err);
  if (r < 0)
    return r;
  brig_debug ("reset: kill %.3f ms", brig_mono_ms_f () - t0);
  if (!rep->ok)
    {
      why = failed_names (rep);
      return mark_failed (c, why, err);
    }

  brig_debug ("reset: ns scan %.3f ms", brig_mono_ms_f () - t0);
  /* The page cache (when over the memory.usage check's bound: that check
   * still runs on the new init) and the peaks the tenant left. */
  brig_cgroup_reset_counters (x->cg, BRIG_RESET_MEMORY_BOUND);
  /* the egress policy's denials were the old tenant's (`events --stats`) */
  if (c->st.ext && c->st.ext->egress && brig_egress_reset_counters (brig_cgroup_unified_dir (x->cg), err) < 0)
    {
      why = xstrdup (err->msg ? err->msg : "the egress denial counters were not emptied");
      brig_error_clear (err);
      return mark_failed (c, why, err);
    }
  /* a claim's policy replaced by the pool's, verified (claim.h) */
  if (c->st.ext && c->st.ext->egress)
    {
      brig_claim_reset_egress (c->dirfd, x->cfg, c->st.ext->egress, rep);
      if (!rep->ok)
        {
          why = failed_names (rep);
          return mark_failed (c, why, err);
        }
    }
  brig_debug ("reset: counters %.3f ms", brig_mono_ms_f () - t0);
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
  brig_debug ("reset: limits %.3f ms", brig_mono_ms_f () - t0);

  /* The pinned network namespace, when nothing of the tenant is left in it. */
  {
    _cleanup_close_ int nsfd = openat (c->dirfd, BRIG_RESET_NETNS, O_RDONLY | O_CLOEXEC);
    int e = errno;
    _cleanup_free_ char *why_not = NULL;
    if (nsfd >= 0 && brig_reset_netns_reusable (x->cfg, &x->ns, c->dirfd)
        && pinned_netns_clean (c->dirfd, nsfd, &why_not))
      rs->netns_fd = x->netns_fd = brig_steal_fd (nsfd);
    else if (nsfd >= 0 || e != ENOENT)
      unpin_netns (c->dirfd);
  }

  brig_debug ("reset: netns %.3f ms", brig_mono_ms_f () - t0);
  r = brig_container_respawn (rs, err);
  brig_debug ("reset: respawn %.3f ms", brig_mono_ms_f () - t0);
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
  brig_debug ("reset: verify %.3f ms", brig_mono_ms_f () - t0);
  if (rep->ok)
    {
      /* A fresh start: what the execs of the old tenancy were given
       * counted for this reset's decisions and is forgotten. For the next
       * reset: the namespaces of this init, and its network namespace
       * pinned when the config opted in. Then the new tenancy. */
      brig_exec_grants_clear (c->dirfd);
      brig_claim_forget (c->dirfd);
      brig_reset_pin (c->dirfd, x->cfg, &x->ns, rs->pid, x->opt_in);
      r = brig_tenancy_write (c->dirfd, x->ten.gen + 1,
                              (x->flags & BRIG_RESET_VACATE) || x->ten.state == BRIG_TENANCY_VACANT
                              ? BRIG_TENANCY_VACANT : BRIG_TENANCY_TENANT, err);
      if (r == 0)
        return 0;
      why = xstrdup (err->msg ? err->msg : "the new tenancy could not be recorded");
      brig_error_clear (err);
    }
  kill_new_init (rs->pid);
  if (why == NULL)
    why = failed_names (rep);
  return mark_failed (c, why, err);
}

int
brig_container_reset (const struct brig_context *ctx, const char *id, unsigned flags,
                      struct brig_reset_report *rep, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  struct reset_run x = { .ctx = ctx, .netns_fd = -1, .flags = flags };
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
