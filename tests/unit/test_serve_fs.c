/* serve/fsops.c: envd's filesystem calls stay inside the root they are
 * given, whatever symlinks the tenant planted (absolute, "..", a directory
 * swapped for a link), and answer what the SDK reads (EntryInfo). Runs on
 * a temporary directory as root; needs no privilege. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/fsops.h"
#include "serve/internal.h"
#include "tap.h"
#include "utils.h"

static char top[] = "/tmp/brig-test-serve-fs.XXXXXX";
static char outside[4200];

static void
put (const char *rel, const char *text)
{
  char p[4200];
  FILE *f;
  snprintf (p, sizeof p, "%s/root/%s", top, rel);
  f = fopen (p, "w");
  if (f)
    {
      fputs (text, f);
      fclose (f);
    }
}

static bool
exists (const char *rel)
{
  char p[4200];
  struct stat st;
  snprintf (p, sizeof p, "%s/%s", top, rel);
  return lstat (p, &st) == 0;
}

/* Run one call; its JSON (or the error) into out. */
static int
call (int which, int root, const char *a, const char *b, unsigned depth, char **out)
{
  yajl_gen g = serve_jg_new ();
  brig_error err = { 0 };
  int r = which == 0   ? serve_fs_stat (root, a, g, &err)
          : which == 1 ? serve_fs_list (root, a, depth, g, &err)
          : which == 2 ? serve_fs_mkdir (root, a, g, &err)
          : which == 3 ? serve_fs_move (root, a, b, g, &err)
                       : serve_fs_remove (root, a, &err);
  char *json = serve_jg_done (g, NULL);

  if (r < 0)
    {
      free (json);
      *out = xstrdup (err.msg ? err.msg : "?");
    }
  else
    *out = json;
  brig_error_clear (&err);
  return r;
}

int
main (void)
{
  char dir[4200], *out = NULL;
  int root, r;

  if (mkdtemp (top) == NULL)
    return 1;
  snprintf (dir, sizeof dir, "mkdir -p %s/root/etc %s/root/home/user/d %s/outside", top, top, top);
  if (system (dir) != 0)
    return 1;
  snprintf (outside, sizeof outside, "%s/outside", top);
  put ("etc/marker", "inside\n");
  put ("home/user/a.txt", "hello file");
  snprintf (dir, sizeof dir, "%s/outside/secret", top);
  close (open (dir, O_CREAT | O_WRONLY, 0600));
  /* the tenant's links: absolute to the host's /etc, ".." past the root,
   * and one to a host directory by its absolute host path */
  snprintf (dir, sizeof dir, "%s/root/home/user/etc", top);
  symlink ("/etc", dir);
  snprintf (dir, sizeof dir, "%s/root/home/user/up", top);
  symlink ("../../../../../../..", dir);
  snprintf (dir, sizeof dir, "%s/root/home/user/host", top);
  symlink (outside, dir);
  snprintf (dir, sizeof dir, "%s/root", top);
  root = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

  tap_plan (17);

  r = call (0, root, "/home/user/a.txt", NULL, 0, &out);
  tap_ok (r == 0 && strstr (out, "\"type\":\"FILE_TYPE_FILE\"") && strstr (out, "\"size\":\"10\"")
          && strstr (out, "\"name\":\"a.txt\"") && strstr (out, "\"permissions\":\"-rw-"),
          "stat: a file's EntryInfo (%s)", out);
  free (out);
  r = call (0, root, "/home/user/etc/marker", NULL, 0, &out);
  tap_ok (r == 0 && strstr (out, "\"path\":\"/home/user/etc/marker\""),
          "stat: an absolute symlink resolves inside the root (%s)", out);
  free (out);
  r = call (0, root, "/home/user/etc/passwd", NULL, 0, &out);
  tap_ok (r == -ENOENT, "stat: the host's /etc/passwd is not reached through it (%s)", out);
  free (out);
  r = call (0, root, "/home/user/up/etc/marker", NULL, 0, &out);
  tap_ok (r == 0, "stat: \"..\" past the root stops at the root (%s)", out);
  free (out);
  r = call (0, root, "/home/user/host/secret", NULL, 0, &out);
  tap_ok (r == -ENOENT, "stat: a host path in a symlink is a path inside the root (%s)", out);
  free (out);
  r = call (0, root, "/home/user/etc", NULL, 0, &out);
  tap_ok (r == 0 && strstr (out, "FILE_TYPE_SYMLINK") && strstr (out, "\"symlinkTarget\":\"/etc\""),
          "stat: a symlink as the last name is the link (%s)", out);
  free (out);

  r = call (1, root, "/home/user", NULL, 1, &out);
  tap_ok (r == 0 && strstr (out, "\"path\":\"/home/user/a.txt\"") && strstr (out, "\"path\":\"/home/user/d\"")
          && !strstr (out, "/home/user/d/"), "list: depth 1 (%s)", out);
  free (out);
  r = call (2, root, "/home/user/d/e/f", NULL, 0, &out);
  tap_ok (r == 0 && strstr (out, "FILE_TYPE_DIRECTORY") && exists ("root/home/user/d/e/f"),
          "mkdir: with its parents (%s)", out);
  free (out);
  r = call (1, root, "/home/user", NULL, 2, &out);
  tap_ok (r == 0 && strstr (out, "\"path\":\"/home/user/d/e\"") && !strstr (out, "/home/user/d/e/f"),
          "list: depth 2 (%s)", out);
  free (out);
  r = call (1, root, "/home/user/host", NULL, 2, &out);
  tap_ok (r == -ENOENT, "list: a link to a host directory lists nothing of the host (%s)", out);
  free (out);
  r = call (2, root, "/home/user/d", NULL, 0, &out);
  tap_ok (r == -EEXIST && strstr (out, "already exists"), "mkdir: an existing directory (%s)", out);
  free (out);
  r = call (2, root, "/home/user/host/newdir", NULL, 0, &out);
  tap_ok (r == 0 && !exists ("outside/newdir"), "mkdir: through a host-path link stays inside (%s)", out);
  free (out);

  r = call (3, root, "/home/user/a.txt", "/home/user/x/y/b.txt", 0, &out);
  tap_ok (r == 0 && strstr (out, "\"path\":\"/home/user/x/y/b.txt\"") && exists ("root/home/user/x/y/b.txt")
          && !exists ("root/home/user/a.txt"), "move: to a new directory (%s)", out);
  free (out);
  r = call (3, root, "/home/user/x/y/b.txt", "/home/user/etc/b.txt", 0, &out);
  tap_ok (r == 0 && exists ("root/etc/b.txt"), "move: through an absolute link lands inside (%s)", out);
  free (out);

  /* remove a directory holding a link to the host: the link goes, the
   * host directory's content stays */
  snprintf (dir, sizeof dir, "%s/root/home/user/d/e/hostlink", top);
  symlink (outside, dir);
  r = call (4, root, "/home/user/d", NULL, 0, &out);
  tap_ok (r == 0 && !exists ("root/home/user/d") && exists ("outside/secret"),
          "remove: recursive, never through a symlink (%s)", out);
  free (out);
  r = call (4, root, "/home/user/host", NULL, 0, &out);
  tap_ok (r == 0 && !exists ("root/home/user/host") && exists ("outside/secret"),
          "remove: a link to a host directory removes the link only (%s)", out);
  free (out);
  r = call (4, root, "/home/user/nothing/here", NULL, 0, &out);
  tap_ok (r == 0, "remove: a missing path is success (%s)", out);
  free (out);

  snprintf (dir, sizeof dir, "rm -rf %s", top);
  if (system (dir) != 0)
    tap_diag ("could not remove %s", top);
  return tap_failed ? 1 : 0;
}
