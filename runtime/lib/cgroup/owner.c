/* Which cgroup directories are brig's: create decides, before it makes
 * anything, which directories it will make and whether an existing one may
 * be used (never a frozen one; one with processes only when shared), and
 * the caller writes that down (brig_cgroup_record) before the first mkdir.
 * delete rebuilds the handle from the record, so it can undo a create
 * killed at any moment and never removes or kills what brig did not make. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "container/state.h"
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

char *
brig_cgroup_record (const brig_cgroup *cg)
{
  char *out = xasprintf ("manager %s\npath %s\n%s%s", brig_cgroup_manager_name (cg),
                         brig_cgroup_path (cg), cg->shared ? "shared\n" : "",
                         cg->marked ? "marked\n" : "");
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].made)
      {
        char *n = xasprintf ("%smade %s\n", out, cg->dirs[i].path);
        free (out);
        out = n;
      }
  /* left out: delete has nothing there, exec and update must not write there */
  for (size_t i = 0; i < cg->n_skipped; i++)
    {
      char *n = xasprintf ("%sskip %s\n", out, cg->skipped[i].path);
      free (out);
      out = n;
    }
  for (size_t i = 0; i < cg->n_foreign; i++)
    {
      char *n = xasprintf ("%sforeign %d %llu\n", out, (int) cg->foreign[i].pid,
                           cg->foreign[i].start_time);
      free (out);
      out = n;
    }
  return out;
}

/* A record of a create killed before its mkdir loop was over (no init
 * line, no config.json) lists as made every directory it meant to make,
 * before mkdir told it which existed. Only those carrying brig's mark can
 * be its: the others are left out of the handle (neither removed nor
 * searched for processes to kill: another's processes may live there). A
 * marked one may still be another brig container's at the same path, so
 * nothing is killed at all (no_kill); nothing of this create's can be
 * there either: it never reached its clone. One stat per directory, on
 * this path only. */
static void
unmarked_not_made (brig_cgroup *cg)
{
  cg->no_kill = true;
  for (size_t i = 0; i < cg->n_dirs;)
    {
      struct stat st;
      if (cg->dirs[i].made && stat (cg->dirs[i].path, &st) == 0 && !(st.st_mode & S_ISVTX))
        {
          cg->dirs[i].made = false;
          brig_cgroup_skip (cg, i);
          continue;
        }
      i++;
    }
}

/* The value of "KEY value" lines, one at a time. */
static const char *
line_value (const char *line, const char *key)
{
  size_t n = strlen (key);
  return strncmp (line, key, n) == 0 && line[n] == ' ' ? line + n + 1 : NULL;
}

/* create wrote config.json: the record's `made` lines are final (state.h) */
static bool
record_settled (int dirfd)
{
  return dirfd >= 0 && faccessat (dirfd, BRIG_STATE_CONFIG, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int
brig_cgroup_load_record (const char *text, int dirfd, brig_cgroup **out, brig_error *err)
{
  _cleanup_free_ char *copy = xstrdup (text);
  const char *manager = NULL, *path = NULL, *v;
  char *save = NULL, *line;
  brig_cgroup *cg;
  bool has_init = false;
  int r;

  *out = NULL;
  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if ((v = line_value (line, "manager")))
      {
        /* one of each: a record with two was not written by brig */
        if (manager)
          return brig_error_say (err, EINVAL, "the cgroup record names two managers");
        manager = v;
      }
    else if ((v = line_value (line, "path")))
      {
        if (path)
          return brig_error_say (err, EINVAL, "the cgroup record names two paths");
        path = v;
      }
  if (manager == NULL)
    return brig_error_say (err, EINVAL, "the cgroup record names no manager");
  r = brig_cgroup_load (manager, path, &cg, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < cg->n_dirs; i++)
    cg->dirs[i].made = false;
  strcpy (copy, text);
  save = NULL;
  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      if (strcmp (line, "shared") == 0)
        cg->shared = true;
      else if (strcmp (line, "marked") == 0)
        cg->marked = true;
      else if (line_value (line, "init"))
        has_init = true;
      else if ((v = line_value (line, "skip")))
        {
          /* a "made" line after it (update joined it later) takes it back */
          for (size_t i = 0; i < cg->n_dirs; i++)
            if (strcmp (cg->dirs[i].path, v) == 0 && !cg->dirs[i].made)
              {
                brig_cgroup_skip (cg, i);
                break;
              }
        }
      else if ((v = line_value (line, "made")))
        {
          /* only a directory of this path: the record cannot point delete
           * anywhere else */
          for (size_t i = 0; i < cg->n_dirs; i++)
            if (strcmp (cg->dirs[i].path, v) == 0)
              cg->dirs[i].made = true;
          for (size_t k = 0; k < cg->n_skipped; k++)
            if (strcmp (cg->skipped[k].path, v) == 0)
              {
                cg->skipped[k].made = true;
                brig_cgroup_unskip (cg, k);
                break;
              }
        }
      else if ((v = line_value (line, "foreign")))
        {
          int pid = 0;
          unsigned long long t = 0;
          if (sscanf (v, "%d %llu", &pid, &t) == 2 && pid > 0)
            {
              cg->foreign = xrealloc (cg->foreign, (cg->n_foreign + 1) * sizeof *cg->foreign);
              cg->foreign[cg->n_foreign++] = (struct brig_cgroup_proc) { pid, t };
            }
        }
    }
  /* Without the init line, a create (or a reset's respawn) killed after
   * its mkdir loop still names only what it made, and its init (if it was
   * cloned) is killed with whatever else is there: an init that outlived
   * its create would otherwise keep the cgroup (and itself) forever. */
  if (cg->marked && !has_init && cg->ops == &brig_cgroup_fs_ops && !record_settled (dirfd))
    unmarked_not_made (cg);
  *out = cg;
  return 0;
}

int
brig_cgroup_for_delete (brig_cgroup *cg, int dirfd, pid_t init_pid,
                        unsigned long long init_start, brig_cgroup **out, brig_error *err)
{
  _cleanup_free_ char *text = brig_cgroup_record (cg);
  /* the line brig_state_record_add_init appends */
  int init_len = snprintf (NULL, 0, "init %d %llu\n", (int) init_pid, init_start);
  struct stat st;
  int r;

  *out = NULL;
  if (fstatat (dirfd, BRIG_STATE_RECORD, &st, 0) == 0
      && (size_t) st.st_size == strlen (text) + (size_t) init_len)
    {
      *out = cg;
      return 0;
    }
  brig_cgroup_free (cg);
  free (text);
  text = NULL;
  r = brig_read_file_at (dirfd, BRIG_STATE_RECORD, &text, NULL, err);
  if (r < 0)
    return brig_error_wrap (err, "read %s", BRIG_STATE_RECORD);
  return brig_cgroup_load_record (text, dirfd, out, err);
}

bool
brig_cgroup_is_shared (const brig_cgroup *cg)
{
  return cg->shared;
}

void
brig_cgroup_set_rootless (brig_cgroup *cg)
{
  cg->rootless = true;
}

static int
cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return x < y ? -1 : x > y;
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
    qsort (all, total, sizeof *all, cmp_pid);
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

bool
brig_cgroup_listable (const brig_cgroup *cg)
{
  return cg->n_dirs > 0 && !cg->no_kill;
}

bool
brig_cgroup_try_remove (brig_cgroup *cg)
{
  bool gone = true;
  /* Only plain cgroupfs directories brig made: systemd units are stopped
   * through the manager, and a directory brig found is not its to remove. */
  if (cg->ops != &brig_cgroup_fs_ops || cg->shared)
    return false;
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      if (!cg->dirs[i].made)
        continue;
      /* the kernel refuses (EBUSY, ENOTEMPTY) while a process or a child
       * cgroup is left; those go through the full destroy */
      if (rmdir (cg->dirs[i].path) < 0 && errno != ENOENT)
        gone = false;
    }
  if (gone)
    brig_cgroup_fs_release (cg);
  return gone;
}
