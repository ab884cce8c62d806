/* systemd unit and slice names for cgroupsPath "slice:prefix:name"; pure
 * string work, used by both managers and the unit tests. */
#include <errno.h>
#include <string.h>

#include "cgroup/internal.h"
#include "utils.h"

static bool
ends_with (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

int
brig_cgroup_systemd_slice_path (const char *slice, char **out, brig_error *err)
{
  size_t n;
  char *res, *p;

  if (strcmp (slice, "-.slice") == 0)
    {
      *out = xstrdup ("");
      return 0;
    }
  n = strlen (slice);
  if (!ends_with (slice, ".slice") || n == 6 || strchr (slice, '/') || slice[0] == '-'
      || slice[n - 7] == '-' || strstr (slice, "--"))
    return brig_error_set (err, 0, "invalid systemd slice name \"%s\"", slice);
  /* one path component per dash: a-b.slice lives in a.slice */
  res = xmalloc0 (2 * n + 64);
  p = res;
  for (size_t i = 0; i < n - 6; i++)
    if (slice[i] == '-')
      p += sprintf (p, "/%.*s.slice", (int) i, slice);
  sprintf (p, "/%s", slice);
  *out = res;
  return 0;
}

int
brig_cgroup_systemd_names (const char *cgroups_path, const char *id, char **slice_out,
                           char **unit_out, char **path_out, brig_error *err)
{
  _cleanup_free_ char *slice = NULL, *prefix = NULL, *name = NULL, *slice_path = NULL;
  const char *c1, *c2;
  int r;

  if (cgroups_path == NULL || *cgroups_path == '\0')
    {
      slice = xstrdup ("system.slice");
      prefix = xstrdup ("brig");
      name = xstrdup (id);
    }
  else
    {
      c1 = strchr (cgroups_path, ':');
      c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL || strchr (c2 + 1, ':'))
        return brig_error_set (err, 0,
                               "linux.cgroupsPath \"%s\": the systemd cgroup manager expects "
                               "\"slice:prefix:name\"", cgroups_path);
      slice = xasprintf ("%.*s", (int) (c1 - cgroups_path), cgroups_path);
      prefix = xasprintf ("%.*s", (int) (c2 - c1 - 1), c1 + 1);
      name = xstrdup (c2 + 1);
      if (*slice == '\0')
        {
          free (slice);
          slice = xstrdup ("system.slice");
        }
      if (*name == '\0')
        {
          free (name);
          name = xstrdup (id);
        }
    }
  if (strchr (name, '/') || strchr (prefix, '/') || strcmp (name, "..") == 0)
    return brig_error_set (err, 0, "linux.cgroupsPath \"%s\": '/' is not allowed here",
                           cgroups_path);
  /* a newline would forge lines of the cgroup record (cgroup/owner.c) */
  for (const unsigned char *c = (const unsigned char *) cgroups_path; cgroups_path && *c; c++)
    if (*c < 0x20 || *c == 0x7f)
      return brig_error_set (err, 0, "linux.cgroupsPath: control character 0x%02x is not "
                             "allowed", *c);
  r = brig_cgroup_systemd_slice_path (slice, &slice_path, err);
  if (r < 0)
    return brig_error_wrap (err, "linux.cgroupsPath \"%s\"", cgroups_path ? cgroups_path : "");

  if (ends_with (name, ".slice"))
    {
      /* the container gets a slice of its own, below the given one */
      _cleanup_free_ char *own = NULL;
      r = brig_cgroup_systemd_slice_path (name, &own, err);
      if (r < 0)
        return brig_error_wrap (err, "linux.cgroupsPath \"%s\"", cgroups_path);
      *unit_out = xstrdup (name);
      *path_out = xasprintf ("%s/%s", slice_path, name);
    }
  else
    {
      *unit_out = *prefix ? xasprintf ("%s-%s.scope", prefix, name) : xasprintf ("%s.scope", name);
      *path_out = xasprintf ("%s/%s", slice_path, *unit_out);
    }
  *slice_out = brig_steal_ptr (slice);
  return 0;
}
