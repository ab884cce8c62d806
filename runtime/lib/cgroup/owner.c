/* Which cgroup directories are brig's: create decides, before it makes
 * anything, which directories it will make and whether an existing one may
 * be used (never a frozen one; one with processes only when shared), and
 * the caller writes that down (brig_cgroup_record) before the first mkdir.
 * delete rebuilds the handle from the record, so it can undo a create
 * killed at any moment and never removes or kills what brig did not make. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "utils.h"

/* A v1 freezer.state other than THAWED (FROZEN, FREEZING, or frozen by an
 * ancestor), or a v2 cgroup.freeze / cgroup.events saying frozen. */
static bool
dir_frozen (const struct brig_cgroup_dir *d, char **what)
{
  _cleanup_free_ char *v = NULL;
  if (d->controllers)
    {
      if (!brig_cgroup_list_has (d->controllers, "freezer")
          || brig_cgroup_read (d->path, "freezer.state", &v) < 0)
        return false;
      if (strcmp (v, "THAWED") == 0)
        return false;
      *what = xasprintf ("freezer.state %s", v);
      return true;
    }
  if (brig_cgroup_read (d->path, "cgroup.freeze", &v) == 0 && strcmp (v, "1") == 0)
    {
      *what = xstrdup ("cgroup.freeze 1");
      return true;
    }
  free (v);
  v = NULL;
  if (brig_cgroup_read (d->path, "cgroup.events", &v) == 0)
    {
      uint64_t f = 0;
      if (brig_cgroup_keyed_u64 (v, "frozen", &f) == 0 && f == 1)
        {
          *what = xstrdup ("cgroup.events frozen 1");
          return true;
        }
    }
  return false;
}

static bool
is_foreign (const brig_cgroup *cg, pid_t pid)
{
  unsigned long long t = 0;
  bool known = false;
  for (size_t i = 0; i < cg->n_foreign; i++)
    if (cg->foreign[i].pid == pid)
      {
        if (!known && brig_proc_stat (pid, NULL, &t) < 0)
          return true; /* gone: nothing to signal either way */
        known = true;
        if (t == cg->foreign[i].start_time)
          return true;
      }
  return false;
}

static void
add_foreign (brig_cgroup *cg, pid_t pid)
{
  unsigned long long t = 0;
  if (is_foreign (cg, pid) || brig_proc_stat (pid, NULL, &t) < 0)
    return;
  cg->foreign = xrealloc (cg->foreign, (cg->n_foreign + 1) * sizeof *cg->foreign);
  cg->foreign[cg->n_foreign++] = (struct brig_cgroup_proc) { pid, t };
}

/* An existing directory: refuse it frozen, or holding processes unless the
 * config shares it (then note them so they are never signalled). */
static int
check_existing (brig_cgroup *cg, size_t i, bool shared, brig_error *err)
{
  const struct brig_cgroup_dir *d = &cg->dirs[i];
  _cleanup_free_ char *what = NULL;
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  int r;

  if (dir_frozen (d, &what))
    return brig_error_set (err, 0,
                           "container's cgroup unexpectedly frozen: linux.cgroupsPath: "
                           "cgroup %s is frozen (%s), the container could not run in it",
                           d->path, what);
  r = brig_cgroup_read_pids (d->path, &pids, &n, err);
  if (r < 0)
    return brig_error_wrap (err, "linux.cgroupsPath");
  if (n == 0)
    return 0;
  if (!shared)
    return brig_error_set (err, 0,
                           "container's cgroup is not empty: linux.cgroupsPath: cgroup %s "
                           "already holds %zu process%s brig did not start (annotation "
                           BRIG_CGROUP_SHARED_ANNOTATION "=true shares it)", d->path, n,
                           n == 1 ? "" : "es");
  for (size_t k = 0; k < n; k++)
    add_foreign (cg, pids[k]);
  return 0;
}

int
brig_cgroup_plan (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err)
{
  cg->shared = cfg->shared;
  if (cg->dirs == NULL)
    brig_cgroup_fill_dirs (cg, brig_cgroup_host_get ());
  /* No stat per hierarchy: every directory is recorded as one create
   * makes, mkdir's EEXIST tells a found one (brig_cgroup_found), and the
   * record is then rewritten before anything is done there. The mark on
   * the directories brig makes covers a create killed in between. */
  for (size_t i = 0; i < cg->n_dirs; i++)
    cg->dirs[i].made = true;
  cg->marked = true;
  return 0;
}

int
brig_cgroup_found (brig_cgroup *cg, size_t i, bool shared, brig_error *err)
{
  cg->dirs[i].made = false;
  return check_existing (cg, i, shared, err);
}

int
brig_cgroup_own_pids (brig_cgroup *cg, pid_t **pids, size_t *n, brig_error *err)
{
  pid_t *all = NULL;
  size_t total = 0, k = 0;

  *pids = NULL;
  *n = 0;
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      _cleanup_free_ pid_t *p = NULL;
      size_t m = 0;
      int r = brig_cgroup_read_pids (cg->dirs[i].path, &p, &m, err);
      if (r < 0)
        {
          free (all);
          return r;
        }
      if (m == 0)
        continue;
      all = xrealloc (all, (total + m) * sizeof *all);
      memcpy (all + total, p, m * sizeof *p);
      total += m;
    }
  if (total)
    qsort (all, total, sizeof *all, brig_cmp_pid);
  for (size_t i = 0; i < total; i++)
    if ((k == 0 || all[k - 1] != all[i]) && (cg->n_foreign == 0 || !is_foreign (cg, all[i])))
      all[k++] = all[i];
  if (k == 0)
    {
      free (all);
      all = NULL;
    }
  *pids = all;
  *n = k;
  return 0;
}

bool
brig_cgroup_busy (brig_cgroup *cg)
{
  _cleanup_free_ pid_t *p = NULL;
  size_t n = 0;
  /* nothing there is known to be the container's (and nothing is killed) */
  if (cg->n_dirs == 0 || cg->no_kill)
    return false;
  return brig_cgroup_own_pids (cg, &p, &n, NULL) < 0 || n > 0;
}

/* Every process of the container in any hierarchy: one that joined only
 * some of them (a create killed while placing its init) is signalled too. */
static int
signal_all (brig_cgroup *cg, int sig, brig_error *err)
{
  _cleanup_free_ pid_t *pids = NULL;
  size_t n = 0;
  int r = brig_cgroup_own_pids (cg, &pids, &n, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < n; i++)
    if (kill (pids[i], sig) < 0 && errno != ESRCH)
      return brig_error_errno (err, "kill %d", (int) pids[i]);
  return 0;
}

/* brig_cgroup_kill_all below the dispatcher, for a cgroup that has a
 * backend (the backends' destroy calls it): freeze, signal every process of
 * the container's own, thaw. */
int
brig_cgroup_signal_own (brig_cgroup *cg, int sig, brig_error *err)
{
  bool was_frozen;
  int r;

  if (cg->no_kill)
    return brig_error_set (err, 0, "kill all: the container's create did not finish: the "
                           "processes in its cgroup are not known to be its own");
  /* Shared with processes brig did not start: only the container's own are
   * signalled, and nothing is frozen (that would stop the others too). */
  if (cg->shared)
    return signal_all (cg, sig, err);
  if (sig == SIGKILL && cg->mode == BRIG_CGROUP_V2 && cg->unified)
    {
      r = brig_cgroup_v2_kill (cg->unified, err);
      if (r != -ENOENT)
        return r;
    }
  /* Freeze first so that no process forks a child we do not see. */
  was_frozen = cg->ops->is_frozen (cg) == 1;
  if (!was_frozen && cg->ops->freeze (cg, true, NULL) < 0)
    return signal_all (cg, sig, err);
  r = signal_all (cg, sig, err);
  if (!was_frozen)
    {
      brig_error tmp = { 0 };
      int r2 = cg->ops->freeze (cg, false, &tmp);
      if (r2 < 0 && r == 0)
        {
          brig_error_set_raw (err, tmp.code, tmp.msg);
          r = r2;
        }
      brig_error_clear (&tmp);
    }
  return r;
}
