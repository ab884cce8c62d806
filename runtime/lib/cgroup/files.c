/* Cgroups, the part below the backends: cgroupsPath resolution, the file
 * helpers every backend uses, and the cgroup object itself (its accessors
 * and free). Nothing here calls a backend or the dispatcher (cgroup.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

bool
brig_cgroup_list_has (const char *list, const char *item)
{
  size_t n = strlen (item);
  const char *p = list;
  if (list == NULL)
    return false;
  while (*p)
    {
      const char *end = strchr (p, ',');
      size_t len = end ? (size_t) (end - p) : strlen (p);
      if (len == n && strncmp (p, item, n) == 0)
        return true;
      if (end == NULL)
        break;
      p = end + 1;
    }
  return false;
}

/* ---- paths ---- */

char *
brig_cgroup_own_path (const char *text)
{
  _cleanup_free_ char *copy = xstrdup (text);
  char *save = NULL, *line, *v2 = NULL, *named = NULL, *first = NULL;

  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *c1 = strchr (line, ':'), *c2;
      if (c1 == NULL || (c2 = strchr (c1 + 1, ':')) == NULL)
        continue;
      *c1 = '\0';
      *c2 = '\0';
      if (strcmp (line, "0") == 0 && c2 == c1 + 1)
        v2 = c2 + 1;
      else if (strcmp (c1 + 1, "name=systemd") == 0)
        named = c2 + 1;
      else if (first == NULL)
        first = c2 + 1;
    }
  return xstrdup (v2 ? v2 : named ? named : first);
}

/* Normalise an absolute path: collapse "//" and "/./", drop the trailing
 * "/", refuse "..". */
static int
normalise (const char *in, char **out, brig_error *err)
{
  _cleanup_free_ char *copy = xstrdup (in);
  char *res = xmalloc0 (strlen (in) + 2), *save = NULL, *tok;
  size_t n = 0;

  /* A control character has no business in a cgroup name, and a newline
   * would forge lines of the cgroup record (cgroup/owner.c). */
  for (const unsigned char *c = (const unsigned char *) in; *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      {
        free (res);
        return brig_error_set (err, 0, "linux.cgroupsPath: control character 0x%02x is not "
                               "allowed", *c);
      }
  for (tok = strtok_r (copy, "/", &save); tok; tok = strtok_r (NULL, "/", &save))
    {
      if (strcmp (tok, ".") == 0)
        continue;
      if (strcmp (tok, "..") == 0)
        {
          free (res);
          return brig_error_set (err, 0, "linux.cgroupsPath \"%s\": \"..\" is not allowed", in);
        }
      res[n++] = '/';
      strcpy (res + n, tok);
      n += strlen (tok);
    }
  res[n] = '\0';
  *out = res;
  return 0;
}

int
brig_cgroup_resolve_path (const char *cgroups_path, const char *own, const char *id,
                          char **out, brig_error *err)
{
  _cleanup_free_ char *joined = NULL;
  int r;

  if (cgroups_path == NULL || *cgroups_path == '\0')
    joined = xasprintf ("/brig/%s", id);
  else if (cgroups_path[0] == '/')
    joined = xstrdup (cgroups_path);
  else
    joined = xasprintf ("%s/%s", own ? own : "/", cgroups_path);
  r = normalise (joined, out, err);
  if (r < 0)
    return r;
  if (**out == '\0')
    {
      free (*out);
      *out = NULL;
      return brig_error_set (err, 0,
                             "linux.cgroupsPath \"%s\": refusing to use the root cgroup",
                             cgroups_path ? cgroups_path : "");
    }
  return 0;
}

void
brig_cgroup_fill_dirs (brig_cgroup *cg, const struct brig_cgroup_host *h)
{
  size_t n = 0;
  cg->dirs = xmalloc0 ((h->n_v1 + 1) * sizeof *cg->dirs);
  if (cg->mode == BRIG_CGROUP_V1 || cg->mode == BRIG_CGROUP_HYBRID)
    for (size_t i = 0; i < h->n_v1; i++)
      {
        cg->dirs[n].controllers = xstrdup (h->v1[i].controllers);
        cg->dirs[n].mountpoint = xstrdup (h->v1[i].mountpoint);
        cg->dirs[n].path = xasprintf ("%s%s", h->v1[i].mountpoint, cg->path);
        cg->dirs[n].clone_children = h->v1[i].clone_children;
        n++;
      }
  if ((cg->mode == BRIG_CGROUP_V2 || cg->mode == BRIG_CGROUP_HYBRID) && h->unified)
    {
      cg->dirs[n].path = xasprintf ("%s%s", h->unified, cg->path);
      cg->dirs[n].mountpoint = xstrdup (h->unified);
      cg->unified = cg->dirs[n].path;
      n++;
    }
  cg->n_dirs = n;
}

const char *
brig_cgroup_v1_dir (const brig_cgroup *cg, const char *controller)
{
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].controllers && brig_cgroup_list_has (cg->dirs[i].controllers, controller))
      return cg->dirs[i].path;
  return NULL;
}

/* ---- file helpers ---- */

int
brig_cgroup_write (const char *dir, const char *file, const char *value, brig_error *err)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
  _cleanup_close_ int fd = open (path, O_WRONLY | O_CLOEXEC);
  int r;

  if (fd < 0)
    return brig_error_errno (err, "write %s = \"%s\"", file, value);
  brig_debug ("cgroup: write %s = \"%s\"", path, value);
  /* One write(2): cgroupfs parses each write as one value. */
  do
    r = (int) write (fd, value, strlen (value));
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return brig_error_errno (err, "write %s = \"%s\"", file, value);
  return 0;
}

int
brig_cgroup_writef (const char *dir, const char *file, brig_error *err, const char *fmt, ...)
{
  _cleanup_free_ char *value = NULL;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&value, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return brig_cgroup_write (dir, file, value, err);
}

int
brig_cgroup_read (const char *dir, const char *file, char **out)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
  char *text = NULL;
  size_t len = 0;
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (brig_read_fd (fd, &text, &len, NULL) < 0)
    return -EIO;
  while (len > 0 && text[len - 1] == '\n')
    text[--len] = '\0';
  *out = text;
  return 0;
}

int
brig_cgroup_read_u64 (const char *dir, const char *file, uint64_t *out)
{
  _cleanup_free_ char *text = NULL;
  char *end;
  int r = brig_cgroup_read (dir, file, &text);
  if (r < 0)
    return r;
  if (strncmp (text, "max", 3) == 0)
    {
      *out = UINT64_MAX;
      return 0;
    }
  errno = 0;
  *out = strtoull (text, &end, 10);
  if (errno || end == text)
    return -EINVAL;
  return 0;
}

int
brig_cgroup_keyed_u64 (const char *text, const char *key, uint64_t *out)
{
  size_t n = strlen (key);
  const char *p = text;
  while (p && *p)
    {
      if (strncmp (p, key, n) == 0 && p[n] == ' ')
        {
          *out = strtoull (p + n + 1, NULL, 10);
          return 0;
        }
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return -ENOENT;
}

static int
read_pids_rec (const char *dir, pid_t **pids, size_t *n, size_t *cap, int depth, brig_error *err)
{
  _cleanup_free_ char *text = NULL;
  _cleanup_closedir_ DIR *d = NULL;
  struct dirent *de;
  int r = brig_cgroup_read (dir, "cgroup.procs", &text);

  if (r == -ENOENT && depth == 0)
    return 0;  /* already gone */
  if (r < 0)
    return brig_error_set (err, -r, "read %s/cgroup.procs", dir);
  for (char *p = text; *p;)
    {
      char *end;
      long v = strtol (p, &end, 10);
      if (end == p)
        break;
      if (*n == *cap)
        {
          *cap = *cap ? *cap * 2 : 16;
          *pids = xrealloc (*pids, *cap * sizeof **pids);
        }
      (*pids)[(*n)++] = (pid_t) v;
      p = end;
      while (*p == '\n')
        p++;
    }
  if (depth > 64)
    return 0;
  d = opendir (dir);
  if (d == NULL)
    return 0;
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *sub = NULL;
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      sub = xasprintf ("%s/%s", dir, de->d_name);
      r = read_pids_rec (sub, pids, n, cap, depth + 1, err);
      if (r < 0)
        return r;
    }
  return 0;
}

int
brig_cgroup_read_pids (const char *dir, pid_t **pids, size_t *n, brig_error *err)
{
  size_t cap = 0;
  *pids = NULL;
  *n = 0;
  int r = read_pids_rec (dir, pids, n, &cap, 0, err);
  if (r < 0)
    {
      free (*pids);
      *pids = NULL;
      *n = 0;
    }
  return r;
}

/* rmdir dir, waiting up to ~0.5 s while it is busy (a killed process
 * leaves its cgroup only after it has exited); children, when recurse. */
static int
rmdir_wait (const char *dir, bool recurse, brig_error *err)
{
  _cleanup_closedir_ DIR *d = NULL;
  struct dirent *de;
  long delay = 1, waited = 0;

  /* The usual case, an empty leaf, takes one syscall. */
  if (rmdir (dir) == 0 || errno == ENOENT)
    return 0;
  if (!recurse)
    goto wait;
  d = opendir (dir);
  if (d == NULL)
    return errno == ENOENT ? 0 : brig_error_errno (err, "open %s", dir);
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *sub = NULL;
      int r;
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      sub = xasprintf ("%s/%s", dir, de->d_name);
      r = brig_cgroup_rmdir_tree (sub, err);
      if (r < 0)
        return r;
    }
  /* A killed process leaves its cgroup only after it has exited; give it a
   * few hundred milliseconds. */
wait:
  for (;;)
    {
      if (rmdir (dir) == 0 || errno == ENOENT)
        return 0;
      if (errno != EBUSY || waited >= 500)
        return brig_error_errno (err, "rmdir %s", dir);
      brig_sleep_ms (delay);
      waited += delay;
      delay = delay < 32 ? delay * 2 : 32;
    }
}

int
brig_cgroup_rmdir_tree (const char *dir, brig_error *err)
{
  return rmdir_wait (dir, true, err);
}

int
brig_cgroup_rmdir_leaf (const char *dir, brig_error *err)
{
  return rmdir_wait (dir, false, err);
}

/* ---- the cgroup object ---- */

const char *
brig_cgroup_manager_name (const brig_cgroup *cg)
{
  return cg->ops->name;
}

const char *
brig_cgroup_path (const brig_cgroup *cg)
{
  return cg->path ? cg->path : "";
}

char *
brig_cgroup_dirs_freeze_file (const brig_cgroup *cg)
{
  const char *d;
  if ((d = brig_cgroup_v1_dir (cg, "freezer")))
    return xasprintf ("%s/freezer.state", d);
  return cg->unified ? xasprintf ("%s/cgroup.freeze", cg->unified) : NULL;
}

int
brig_cgroup_freeze_file_frozen (const char *file)
{
  _cleanup_free_ char *v = NULL;
  int r = brig_read_file_at (AT_FDCWD, file, &v, NULL, NULL);
  if (r < 0)
    return r == -ENOENT ? 0 : r;
  /* v1 freezer.state: THAWED, FREEZING or FROZEN; v2 cgroup.freeze: 0 or 1 */
  return strncmp (v, "FROZEN", 6) == 0 || v[0] == '1';
}

void
brig_cgroup_free (brig_cgroup *cg)
{
  if (cg == NULL)
    return;
  if (cg->ops && cg->ops->free)
    cg->ops->free (cg);
  if (cg->clone_fd >= 0)
    close (cg->clone_fd);
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      free (cg->dirs[i].controllers);
      free (cg->dirs[i].mountpoint);
      free (cg->dirs[i].path);
    }
  free (cg->dirs);
  for (size_t i = 0; i < cg->n_skipped; i++)
    {
      free (cg->skipped[i].controllers);
      free (cg->skipped[i].mountpoint);
      free (cg->skipped[i].path);
    }
  free (cg->skipped);
  free (cg->foreign);
  free (cg->path);
  free (cg->unit);
  free (cg->slice);
  if (cg->pending)
    oci_free (&oci_resources_type, cg->pending);
  free (cg);
}

const char *
brig_cgroup_unified_dir (const brig_cgroup *cg)
{
  return cg ? cg->unified : NULL;
}
