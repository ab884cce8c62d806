/* Parser of /proc/PID/mountinfo (see proc(5)):
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue */
#include <fcntl.h>
#include <string.h>

#include "mountinfo.h"
#include "utils.h"

char *
brig_mountinfo_unescape (const char *s)
{
  char *out = xmalloc0 (strlen (s) + 1), *o = out;
  while (*s)
    {
      if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7'
          && s[3] >= '0' && s[3] <= '7')
        {
          *o++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
          s += 4;
        }
      else
        *o++ = *s++;
    }
  *o = '\0';
  return out;
}

static int
parse_line (char *line, struct brig_mountinfo *e)
{
  char *fields[6], *save = NULL, *tok, *rest, *sep;
  int i = 0;

  /* The optional fields end at " - "; split the line there first. */
  sep = strstr (line, " - ");
  if (sep == NULL)
    return -EINVAL;
  *sep = '\0';
  rest = sep + 3;
  for (tok = strtok_r (line, " ", &save); tok; tok = i < 6 ? strtok_r (NULL, " ", &save) : NULL)
    {
      fields[i++] = tok;
      if (i == 6)
        break;
    }
  if (i < 6)
    return -EINVAL;
  e->id = atoi (fields[0]);
  e->parent_id = atoi (fields[1]);
  e->root = brig_mountinfo_unescape (fields[3]);
  e->mountpoint = brig_mountinfo_unescape (fields[4]);
  e->options = xstrdup (fields[5]);
  e->optional = xstrdup (save && *save ? save : "");
  save = NULL;
  tok = strtok_r (rest, " ", &save);
  e->fstype = xstrdup (tok ? tok : "");
  tok = strtok_r (NULL, " ", &save);
  e->source = brig_mountinfo_unescape (tok ? tok : "");
  tok = strtok_r (NULL, " \n", &save);
  e->super_options = xstrdup (tok ? tok : "");
  return 0;
}

int
brig_mountinfo_read (const char *path, struct brig_mountinfo **out, size_t *n,
                     brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  struct brig_mountinfo *v = NULL;
  size_t len = 0, count = 0, cap = 0;
  char *line, *save = NULL;
  int r;

  r = brig_read_file_at (AT_FDCWD, path ? path : "/proc/self/mountinfo", &buf, &len, err);
  if (r < 0)
    return r;
  for (line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      if (count == cap)
        {
          cap = cap ? cap * 2 : 32;
          v = xrealloc (v, cap * sizeof (*v));
        }
      memset (&v[count], 0, sizeof (v[count]));
      if (parse_line (line, &v[count]) == 0)
        count++;
    }
  *out = v;
  *n = count;
  return 0;
}

void
brig_mountinfo_free (struct brig_mountinfo *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    {
      free (v[i].root);
      free (v[i].mountpoint);
      free (v[i].options);
      free (v[i].optional);
      free (v[i].fstype);
      free (v[i].source);
      free (v[i].super_options);
    }
  free (v);
}

int
brig_path_has_prefix (const char *path, const char *prefix)
{
  size_t n = strlen (prefix);
  if (strcmp (prefix, "/") == 0)
    return path[0] == '/';
  while (n > 1 && prefix[n - 1] == '/')
    n--;
  return strncmp (path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

const struct brig_mountinfo *
brig_mountinfo_find_parent (const struct brig_mountinfo *v, size_t n, const char *path)
{
  const struct brig_mountinfo *best = NULL;
  size_t best_len = 0;

  /* Later entries are mounted on top of earlier ones at the same place. */
  for (size_t i = 0; i < n; i++)
    {
      size_t l = strlen (v[i].mountpoint);
      if (brig_path_has_prefix (path, v[i].mountpoint) && (best == NULL || l >= best_len))
        {
          best = &v[i];
          best_len = l;
        }
    }
  return best;
}
