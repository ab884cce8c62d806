/* Cgroups: which hierarchies this host has, from the cgroup mounts that are
 * visible in /proc/self/mountinfo (v1, hybrid, v2 or none). */
#include <fcntl.h>
#include <string.h>

#include "cgroup/internal.h"
#include "log.h"
#include "mountinfo.h"
#include "utils.h"

/* Super options of a v1 mount that are not controllers. */
static bool
is_mount_option (const char *opt)
{
  static const char *const opts[] = { "rw", "ro", "noprefix", "clone_children", "xattr",
                                      "cpuset_v2_mode", "favordynmods", "nofavordynmods",
                                      "none", "all" };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (opts); i++)
    if (strcmp (opt, opts[i]) == 0)
      return true;
  return strncmp (opt, "release_agent=", 14) == 0;
}

static char *
controllers_of (const char *superopts)
{
  _cleanup_free_ char *copy = xstrdup (superopts);
  char *save = NULL, *tok, *out = NULL;
  for (tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      if (is_mount_option (tok))
        continue;
      if (out == NULL)
        out = xstrdup (tok);
      else
        {
          char *n = xasprintf ("%s,%s", out, tok);
          free (out);
          out = n;
        }
    }
  return out;
}

void
brig_cgroup_host_clear (struct brig_cgroup_host *h)
{
  for (size_t i = 0; i < h->n_v1; i++)
    {
      free (h->v1[i].mountpoint);
      free (h->v1[i].controllers);
      free (h->v1[i].root);
    }
  free (h->v1);
  free (h->unified);
  memset (h, 0, sizeof *h);
}

/* One mountinfo line, split in place. */
struct mi_line {
  char *mountpoint;   /* unescaped, owned */
  char *root;         /* unescaped, owned */
  const char *fstype, *superopts;
};

static bool
split_line (char *line, struct mi_line *out)
{
  char *fields[6] = { 0 }, *p = line, *sep, *rest;
  int n = 0;

  /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [optional...] - FSTYPE SOURCE SUPEROPTS */
  while (n < 6 && p && *p)
    {
      fields[n++] = p;
      p = strchr (p, ' ');
      if (p)
        *p++ = '\0';
    }
  if (n < 6 || p == NULL)
    return false;
  sep = strstr (p, "- ");
  if (sep == NULL || (sep != p && sep[-1] != ' '))
    return false;
  out->fstype = sep + 2;
  rest = strchr (out->fstype, ' ');
  if (rest == NULL)
    return false;
  *rest++ = '\0';
  out->superopts = strchr (rest, ' ');
  out->superopts = out->superopts ? out->superopts + 1 : rest;
  out->mountpoint = brig_mountinfo_unescape (fields[4]);
  out->root = brig_mountinfo_unescape (fields[3]);
  return true;
}

/* A mount is hidden when a later one sits on its mount point or on a
 * directory above it (a tmpfs over /sys/fs/cgroup/unified, as nested and
 * sandboxed environments make): files under a hidden mount point are not
 * the cgroup's, so writes there fail or land in the wrong place. mountinfo
 * lists a namespace's mounts in the order they were made. */
static bool
covered_later (const struct mi_line *v, size_t n, size_t i)
{
  for (size_t j = i + 1; j < n; j++)
    if (brig_path_has_prefix (v[i].mountpoint, v[j].mountpoint))
      return true;
  return false;
}

int
brig_cgroup_parse_mountinfo (const char *text, struct brig_cgroup_host *h)
{
  bool v1_controllers = false;
  _cleanup_free_ char *copy = xstrdup (text);
  _cleanup_free_ struct mi_line *lines = NULL;
  char *save = NULL, *line;
  size_t n_lines = 0;

  memset (h, 0, sizeof *h);
  for (line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      struct mi_line l;
      if (!split_line (line, &l))
        continue;
      lines = xrealloc (lines, (n_lines + 1) * sizeof *lines);
      lines[n_lines++] = l;
    }

  for (size_t i = 0; i < n_lines; i++)
    {
      const struct mi_line *l = &lines[i];
      bool v2 = strcmp (l->fstype, "cgroup2") == 0;

      if ((!v2 && strcmp (l->fstype, "cgroup") != 0) || covered_later (lines, n_lines, i))
        continue;
      if (v2)
        {
          /* Prefer the canonical place when cgroup2 is mounted twice. */
          if (h->unified == NULL || strcmp (l->mountpoint, "/sys/fs/cgroup") == 0)
            {
              free (h->unified);
              h->unified = xstrdup (l->mountpoint);
            }
        }
      else
        {
          _cleanup_free_ char *ctrls = controllers_of (l->superopts);
          bool dup = false;
          if (ctrls == NULL)
            continue;
          for (size_t k = 0; k < h->n_v1; k++)
            if (strcmp (h->v1[k].controllers, ctrls) == 0)
              dup = true;
          if (dup)
            continue;
          if (strncmp (ctrls, "name=", 5) != 0)
            v1_controllers = true;
          h->v1 = xrealloc (h->v1, (h->n_v1 + 1) * sizeof *h->v1);
          h->v1[h->n_v1].mountpoint = xstrdup (l->mountpoint);
          h->v1[h->n_v1].controllers = brig_steal_ptr (ctrls);
          h->v1[h->n_v1].root = xstrdup (l->root);
          h->v1[h->n_v1].clone_children = brig_cgroup_list_has (l->superopts, "clone_children");
          h->n_v1++;
        }
    }
  for (size_t i = 0; i < n_lines; i++)
    {
      free (lines[i].mountpoint);
      free (lines[i].root);
    }

  /* Without a visible cgroup2 mount a host with v1 controllers is plain v1. */
  if (v1_controllers)
    h->mode = h->unified ? BRIG_CGROUP_HYBRID : BRIG_CGROUP_V1;
  else if (h->unified)
    h->mode = BRIG_CGROUP_V2;
  else
    h->mode = BRIG_CGROUP_NONE;
  return 0;
}

const struct brig_cgroup_host *
brig_cgroup_host_get (void)
{
  static struct brig_cgroup_host host;
  static bool done;
  if (!done)
    {
      _cleanup_free_ char *text = NULL;
      if (brig_read_file_at (AT_FDCWD, "/proc/self/mountinfo", &text, NULL, NULL) == 0)
        brig_cgroup_parse_mountinfo (text, &host);
      done = true;
      brig_debug ("cgroup: host mode %s", brig_cgroup_mode_name (host.mode));
    }
  return &host;
}

const struct brig_cgroup_hier *
brig_cgroup_host_v1 (size_t *n)
{
  const struct brig_cgroup_host *h = brig_cgroup_host_get ();
  *n = h->n_v1;
  return h->v1;
}

const char *
brig_cgroup_host_unified (void)
{
  return brig_cgroup_host_get ()->unified;
}

enum brig_cgroup_mode
brig_cgroup_host_mode (void)
{
  return brig_cgroup_host_get ()->mode;
}

const char *
brig_cgroup_mode_name (enum brig_cgroup_mode mode)
{
  switch (mode)
    {
    case BRIG_CGROUP_V1: return "v1";
    case BRIG_CGROUP_HYBRID: return "hybrid";
    case BRIG_CGROUP_V2: return "v2";
    default: return "none";
    }
}
