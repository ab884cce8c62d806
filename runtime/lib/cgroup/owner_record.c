/* The ownership record of a container's cgroup (state.h "cgroup"), above
 * the backends: create writes which directories it made and found, and
 * every later command loads the cgroup from it (through the dispatcher),
 * decides what delete may signal and remove, and removes only what brig
 * made. The plan and the container's own processes, which the backends
 * use, are in cgroup/owner.c below them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

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
  return dirfd >= 0 && faccessat (dirfd, BRIG_CGROUP_SETTLED_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
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
  if (fstatat (dirfd, BRIG_CGROUP_RECORD_FILE, &st, 0) == 0
      && (size_t) st.st_size == strlen (text) + (size_t) init_len)
    {
      *out = cg;
      return 0;
    }
  brig_cgroup_free (cg);
  free (text);
  text = NULL;
  r = brig_read_file_at (dirfd, BRIG_CGROUP_RECORD_FILE, &text, NULL, err);
  if (r < 0)
    return brig_error_wrap (err, "read %s", BRIG_CGROUP_RECORD_FILE);
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
