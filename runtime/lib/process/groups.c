/* run.oci.keep_original_groups: see groups.h for when keeping the caller's
 * supplementary groups is allowed and why. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/groups.h"
#include "utils.h"

int
brig_keep_groups_parse (const oci_map *annotations, bool *keep, brig_error *err)
{
  *keep = false;
  for (size_t i = 0; annotations && i < annotations->len; i++)
    {
      const char *v = annotations->values[i];
      if (strcmp (annotations->keys[i], BRIG_KEEP_GROUPS_ANNOTATION) != 0)
        continue;
      if (strcmp (v, "1") == 0 || strcmp (v, "true") == 0)
        *keep = true;
      else if (strcmp (v, "0") == 0 || strcmp (v, "false") == 0)
        *keep = false;
      else
        return brig_error_set (err, 0, "annotation " BRIG_KEEP_GROUPS_ANNOTATION ": \"%s\" is "
                               "not 1, true, 0 or false", v);
    }
  return 0;
}

/* The caller's supplementary groups (malloc'd, *n of them). */
static gid_t *
own_groups (int *n)
{
  int k = getgroups (0, NULL);
  gid_t *g = xmalloc0 (((size_t) (k > 0 ? k : 0) + 1) * sizeof *g);
  *n = k > 0 ? getgroups (k, g) : 0;
  if (*n < 0)
    *n = 0;
  return g;
}

/* gid lies in an "inside outside count" line's outside range. */
static bool
map_covers (const char *map, gid_t gid)
{
  for (const char *p = map; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    {
      unsigned long long in, out, count;
      if (sscanf (p, "%llu %llu %llu", &in, &out, &count) == 3 && gid >= out
          && gid - out < count)
        return true;
    }
  return false;
}

int
brig_keep_groups_check (const char *gid_map, brig_error *err)
{
  _cleanup_free_ gid_t *g = NULL;
  int n;

  if (gid_map == NULL)
    return 0;
  g = own_groups (&n);
  for (int i = 0; i < n; i++)
    if (!map_covers (gid_map, g[i]))
      return brig_error_set (err, 0, "annotation " BRIG_KEEP_GROUPS_ANNOTATION ": the caller's "
                             "group %u is not mapped by the container's user namespace "
                             "(linux.gidMappings), where it would keep its rights unseen, "
                             "shown as the overflow gid", (unsigned) g[i]);
  return 0;
}

int
brig_keep_groups_check_pid (pid_t pid, brig_error *err)
{
  _cleanup_free_ char *map = NULL, *path = xasprintf ("/proc/%d/ns/user", (int) pid);
  struct stat mine, theirs;
  int r;

  if (stat ("/proc/self/ns/user", &mine) < 0 || stat (path, &theirs) < 0)
    return brig_error_errno (err, "annotation " BRIG_KEEP_GROUPS_ANNOTATION ": %s", path);
  if (mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev)
    return 0;
  free (path);
  path = xasprintf ("/proc/%d/gid_map", (int) pid);
  r = brig_read_file_at (AT_FDCWD, path, &map, NULL, NULL);
  if (r < 0)
    return brig_error_set (err, -r, "annotation " BRIG_KEEP_GROUPS_ANNOTATION ": read %s", path);
  return brig_keep_groups_check (map, err);
}

char *
brig_keep_groups_map_text (const oci_linux *lx)
{
  char *text = xstrdup ("");
  for (size_t i = 0; lx && i < lx->gid_mappings_len; i++)
    {
      char *next = xasprintf ("%s%u %u %u\n", text, (unsigned) lx->gid_mappings[i].container_id,
                              (unsigned) lx->gid_mappings[i].host_id,
                              (unsigned) lx->gid_mappings[i].size);
      free (text);
      text = next;
    }
  return text;
}

int
brig_keep_groups_apply (const oci_user *u, brig_error *err)
{
  _cleanup_free_ gid_t *g = NULL;
  size_t extra = u ? u->additional_gids_len : 0;
  int n;

  /* Nothing to add: the groups the process has are the ones it keeps. */
  if (extra == 0)
    return 0;
  g = own_groups (&n);
  g = xrealloc (g, ((size_t) n + extra + 1) * sizeof *g);
  for (size_t i = 0; i < extra; i++)
    {
      bool have = false;
      for (int k = 0; k < n && !have; k++)
        have = g[k] == u->additional_gids[i];
      if (!have)
        g[n++] = u->additional_gids[i];
    }
  if (setgroups ((size_t) n, g) < 0)
    return brig_error_errno (err, "setgroups (the caller's groups with "
                             "process.user.additionalGids, annotation "
                             BRIG_KEEP_GROUPS_ANNOTATION ")");
  return 0;
}
