/* Every procfs in the container gets the masks written for /proc. The
 * config's linux.readonlyPaths and maskedPaths name /proc/...; a second
 * procfs (a "proc" mount elsewhere, a bind of the host's or of the
 * container's own /proc, a bind of one procfs file, an rbind that carries
 * one) shows the same files, and without a user namespace its
 * sys/kernel/core_pattern is the host's. After the config's mounts the
 * container's mount table is read once (only when some mount could have
 * made such a procfs) and each path under /proc is mapped into every other
 * procfs mount, relative to the part of procfs that mount shows; the
 * mapped paths are masked and made read-only after the pivot with the
 * config's own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"
#include "rootfs/internal.h"
#include "utils.h"

static void
push (char ***v, size_t *n, char *s)
{
  *v = xrealloc (*v, (*n + 2) * sizeof **v);
  (*v)[(*n)++] = s;
  (*v)[*n] = NULL;
}

/* Whether cfg lists a path under /proc in readonlyPaths or maskedPaths:
 * otherwise there is nothing to map. */
bool
rootfs_procfs_has_masks (const oci_config *cfg)
{
  const oci_linux *l = cfg->linux;
  for (size_t i = 0; l && i < l->readonly_paths_len; i++)
    if (l->readonly_paths[i] && brig_path_has_prefix (l->readonly_paths[i], "/proc"))
      return true;
  for (size_t i = 0; l && i < l->masked_paths_len; i++)
    if (l->masked_paths[i] && brig_path_has_prefix (l->masked_paths[i], "/proc"))
      return true;
  return false;
}

/* Map each path of list that lies under /proc into the procfs mount at mp
 * (in the container) showing the part root of its procfs. */
static void
map_list (char *const *list, size_t len, const char *mp, const char *root, char ***out,
          size_t *n)
{
  for (size_t i = 0; i < len; i++)
    {
      _cleanup_free_ char *clean = list[i] ? brig_path_clean (list[i]) : NULL;
      const char *rel, *rest;
      if (clean == NULL || !brig_path_has_prefix (clean, "/proc"))
        continue;
      /* "/proc/sys/kernel" is "/sys/kernel" of procfs, "/proc" its "/". */
      rel = clean[5] ? clean + 5 : "/";
      if (brig_path_has_prefix (rel, root))
        rest = strcmp (root, "/") == 0 ? rel : rel + strlen (root);
      else if (brig_path_has_prefix (root, rel))
        rest = "";   /* the whole mount lies inside the path */
      else
        continue;
      if (*rest == '\0' || strcmp (rest, "/") == 0)
        push (out, n, xstrdup (mp));
      else
        push (out, n, strcmp (mp, "/") == 0 ? xstrdup (rest) : xasprintf ("%s%s", mp, rest));
    }
}

int
rootfs_procfs_find (const struct rootfs_ctx *c, struct brig_rootfs_procfs *out, brig_error *err)
{
  const oci_linux *l = c->cfg->linux;
  struct brig_mountinfo *mi = NULL;
  size_t n = 0, nro = 0, nmask = 0, plen = strlen (c->rootfs);

  if (brig_mountinfo_read (NULL, &mi, &n, err) < 0)
    return brig_error_wrap (err, "find the procfs mounts that linux.maskedPaths must cover");
  for (size_t i = 0; i < n; i++)
    {
      const char *mp = mi[i].mountpoint + plen;
      if (strcmp (mi[i].fstype, "proc") != 0 || !brig_path_has_prefix (mi[i].mountpoint, c->rootfs))
        continue;
      if (*mp == '\0')
        mp = "/";
      /* The container's own /proc gets the paths as written. */
      if (strcmp (mp, "/proc") == 0 && strcmp (mi[i].root, "/") == 0)
        continue;
      map_list (l->readonly_paths, l->readonly_paths_len, mp, mi[i].root, &out->readonly, &nro);
      map_list (l->masked_paths, l->masked_paths_len, mp, mi[i].root, &out->masked, &nmask);
    }
  brig_mountinfo_free (mi, n);
  return 0;
}

void
brig_rootfs_procfs_clear (struct brig_rootfs_procfs *p)
{
  brig_strv_free (p->readonly);
  brig_strv_free (p->masked);
  p->readonly = p->masked = NULL;
}
