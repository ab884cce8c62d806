/* Realtime budgets of v1 cpu cgroups (CONFIG_RT_GROUP_SCHED). A cgroup's
 * cpu.rt_runtime_us must fit, with its siblings', in its parent's, and a new
 * cgroup gets none; the kernel lets no SCHED_FIFO/SCHED_RR task into a
 * cgroup without one. So when a container asks for realtime time
 * (linux.resources.cpu.realtimeRuntime, or a realtime process.scheduler
 * policy, which gets BRIG_CGROUP_SCHED_RT_SHARE of its period), brig walks
 * its ancestors below the host's root from the top:
 *   - one without a budget (nothing below it runs realtime, nobody chose
 *     its value) gets the container's share of its own period, and brig's
 *     mark (the attribute trusted.brig.rt) says brig gave it;
 *   - one brig gave a budget grows to hold its children and the
 *     container's share, so that containers side by side all fit;
 *   - one with a budget of its own keeps it (the error names it when it is
 *     too little), and so does the host's root.
 * After delete, each marked ancestor shrinks back, bottom-up, to what its
 * children still hold (none: 0, and the mark goes). docs/cgroups.md
 * "Realtime budget (v1)". */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

#define XATTR_RT "trusted.brig.rt"

static bool
marked (const char *dir)
{
  char v;
  return getxattr (dir, XATTR_RT, &v, 1) >= 0;
}

static int
read_budget (const char *dir, uint64_t *rt, uint64_t *period)
{
  int r = brig_cgroup_read_u64 (dir, "cpu.rt_runtime_us", rt);
  if (r == 0)
    r = brig_cgroup_read_u64 (dir, "cpu.rt_period_us", period);
  return r < 0 ? r : *period == 0 ? -EINVAL : 0;
}

/* What the children of dir hold, in dir's period (the kernel's sum). */
static uint64_t
children_budget (const char *dir, uint64_t period)
{
  _cleanup_closedir_ DIR *d = opendir (dir);
  struct dirent *de;
  uint64_t sum = 0;

  while (d && (de = readdir (d)))
    {
      _cleanup_free_ char *sub = NULL;
      uint64_t rt, p;
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      sub = xasprintf ("%s/%s", dir, de->d_name);
      if (read_budget (sub, &rt, &p) == 0)
        sum += (rt * period + p - 1) / p;
    }
  return sum;
}

int
brig_cgroup_v1_rt_give (const struct brig_cgroup_dir *d, int64_t runtime, uint64_t want_period,
                        bool force, const char *what, char **blocker_out, brig_error *err)
{
  _cleanup_free_ char *dir = xstrdup (d->mountpoint), *blocker = xstrdup (d->mountpoint);
  const char *p = d->path + strlen (d->mountpoint);
  uint64_t blocker_rt = 0;
  int r;

  brig_cgroup_read_u64 (d->mountpoint, "cpu.rt_runtime_us", &blocker_rt);
  if (want_period == 0 && brig_cgroup_read_u64 (d->path, "cpu.rt_period_us", &want_period) < 0)
    want_period = 1000000;
  if (want_period == 0 || runtime <= 0 || (uint64_t) runtime > want_period)
    return 0;   /* the write to the container's cgroup refuses it */
  for (;;)
    {
      uint64_t rt, period, need, target;
      const char *next;
      bool ours;
      char *longer;

      while (*p == '/')
        p++;
      next = strchr (p, '/');
      if (next == NULL)
        break;   /* the rest is the container's own cgroup */
      longer = xasprintf ("%s/%.*s", dir, (int) (next - p), p);
      free (dir);
      dir = longer;
      p = next;
      if (read_budget (dir, &rt, &period) < 0)
        continue;
      ours = rt == 0 || marked (dir);
      if (!ours)
        {
          /* someone else's budget: kept, and named if too little */
          free (blocker);
          blocker = xstrdup (dir);
          blocker_rt = rt;
          continue;
        }
      /* the same share of its own period besides what its children hold
       * (the container's own, on update, counted too: slack, not creep).
       * A child removed a moment ago still counts for the kernel until its
       * last process is reaped, which readdir does not show: with force,
       * on top of the whole budget instead; release shrinks it to what is
       * needed. brig's mark first: a brig killed in between leaves a mark
       * on a budget the next release shrinks. */
      need = ((uint64_t) runtime * period + want_period - 1) / want_period;
      target = (rt == 0 ? 0 : force ? rt : children_budget (dir, period)) + need;
      if (target <= rt)
        continue;
      if (rt == 0 && setxattr (dir, XATTR_RT, "1", 1, 0) < 0)
        brig_debug ("cgroup: %s: cannot mark its realtime budget as brig's", dir);
      r = brig_cgroup_writef (dir, "cpu.rt_runtime_us", NULL, "%" PRIu64, target);
      if (r < 0 && rt == 0)
        removexattr (dir, XATTR_RT);
      if (r < 0 && blocker_rt == 0)
        return brig_error_set (err, -r, "%s: give parent cgroup %s a realtime budget of %"
                               PRIu64 " us: the host has no realtime budget to give "
                               "(cpu.rt_runtime_us 0 in %s)", what, dir, target, blocker);
      if (r < 0)
        return brig_error_set (err, -r, "%s: give parent cgroup %s a realtime budget of %" PRIu64
                               " us: its own parent %s (cpu.rt_runtime_us %" PRIu64 ") has too "
                               "little left", what, dir, target, blocker, blocker_rt);
      brig_debug ("cgroup: gave %s a realtime budget of %" PRIu64 " us", dir, target);
    }
  *blocker_out = brig_steal_ptr (blocker);
  return 0;
}

/* The container's v1 cpu directory, or NULL. */
static const struct brig_cgroup_dir *
cpu_dir (const brig_cgroup *cg)
{
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].controllers && brig_cgroup_list_has (cg->dirs[i].controllers, "cpu"))
      return &cg->dirs[i];
  return NULL;
}

int
brig_cgroup_v1_rt_for_sched (brig_cgroup *cg, const oci_resources *res, const char *policy,
                             brig_error *err)
{
  const struct brig_cgroup_dir *d = cpu_dir (cg);
  const oci_cpu *c = res ? res->cpu : NULL;
  _cleanup_free_ char *blocker = NULL, *what = NULL;
  uint64_t rt = 0, period = 0, brt = 0;
  int64_t want;
  int r;

  /* the config's own realtimeRuntime was given (apply_cpu); rootless
   * writes no budget (and gets no realtime policy in its user namespace) */
  if (d == NULL || cg->rootless || (c && c->has_realtime_runtime && c->realtime_runtime != 0))
    return 0;
  /* no file: a kernel without realtime group scheduling, nothing to give */
  if (read_budget (d->path, &rt, &period) < 0 || rt > 0)
    return 0;
  want = (int64_t) (period * BRIG_CGROUP_SCHED_RT_SHARE / 100);
  what = xasprintf ("process.scheduler.policy %s (a realtime budget of %" PRId64 " us of %"
                    PRIu64 " for the container's cpu cgroup)", policy, want, period);
  r = brig_cgroup_v1_rt_give (d, want, period, false, what, &blocker, err);
  if (r == 0)
    r = brig_cgroup_writef (d->path, "cpu.rt_runtime_us", NULL, "%" PRId64, want);
  if (r == -EINVAL)
    {
      /* a sibling removed a moment ago still counts: room on top */
      free (blocker);
      blocker = NULL;
      brig_error_clear (err);
      r = brig_cgroup_v1_rt_give (d, want, period, true, what, &blocker, err);
      if (r == 0)
        r = brig_cgroup_writef (d->path, "cpu.rt_runtime_us", NULL, "%" PRId64, want);
    }
  if (r < 0 && blocker == NULL)
    return r;   /* an ancestor could not be given room: err says which */
  if (r < 0)
    {
      brig_cgroup_read_u64 (blocker, "cpu.rt_runtime_us", &brt);
      return brig_error_set (err, -r, "%s: parent cgroup %s (cpu.rt_runtime_us %" PRIu64 ") "
                             "has %s; set linux.resources.cpu.realtimeRuntime, or a budget on "
                             "that parent", what, blocker, brt,
                             brt == 0 ? "no realtime budget to give" : "too little left");
    }
  brig_debug ("cgroup: %s: a realtime budget of %" PRId64 " us for %s", d->path, want, policy);
  return 0;
}

/* Write dir's budget, retrying for up to ~250 ms while the kernel still
 * counts a removed child. */
static int
write_budget_retry (const char *dir, uint64_t v)
{
  long delay = 1, waited = 0;
  for (;;)
    {
      int r = brig_cgroup_writef (dir, "cpu.rt_runtime_us", NULL, "%" PRIu64, v);
      struct timespec ts = { 0, delay * 1000000L };
      if (r == 0 || (r != -EINVAL && r != -EBUSY) || waited >= 250)
        return r;
      nanosleep (&ts, NULL);
      waited += delay;
      delay = delay < 32 ? delay * 2 : 32;
    }
}

void
brig_cgroup_v1_rt_release (brig_cgroup *cg)
{
  const struct brig_cgroup_dir *d = cpu_dir (cg);
  _cleanup_free_ char *dir = NULL;
  size_t root;
  char *end;

  if (d == NULL)
    return;
  dir = xstrdup (d->path);
  root = strlen (d->mountpoint);
  /* bottom-up: a parent shrinks only once its children have; one
   * getxattr per ancestor when brig gave none of them a budget */
  for (end = dir + strlen (dir); end > dir + root;)
    {
      uint64_t rt, period, keep;
      while (end > dir && *--end != '/')
        ;
      *end = '\0';
      if (end <= dir + root || !marked (dir) || read_budget (dir, &rt, &period) < 0)
        continue;
      keep = children_budget (dir, period);
      if (keep >= rt)
        continue;
      /* the child just removed counts for the kernel until it is freed
       * (EINVAL for a few ms): a bounded wait, then the budget stays until
       * a later delete */
      if (write_budget_retry (dir, keep) == 0)
        {
          brig_debug ("cgroup: %s: realtime budget back to %" PRIu64 " us", dir, keep);
          if (keep == 0)
            removexattr (dir, XATTR_RT);
        }
    }
}
