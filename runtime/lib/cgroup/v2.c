/* The cgroup2 hierarchy: directory creation with controllers enabled in
 * the ancestors, cgroup.freeze and cgroup.kill. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

/* Enable in dir/cgroup.subtree_control the controllers of want (comma
 * separated; NULL = every controller dir offers) that are not yet enabled.
 * Each one goes in its own write so one refusal (cpu with realtime tasks,
 * a populated non-root cgroup) does not block the others. The controllers
 * of a given list (a hybrid host's: cgroup/delegate.c) are enabled noting
 * that brig did, so that delete can take them back. */
static void
enable_controllers (const char *dir, const char *want)
{
  _cleanup_free_ char *avail = NULL, *enabled = NULL;
  char *save = NULL, *tok;

  if (brig_cgroup_read (dir, "cgroup.controllers", &avail) < 0)
    return;
  if (brig_cgroup_read (dir, "cgroup.subtree_control", &enabled) < 0)
    return;
  for (tok = strtok_r (avail, " ", &save); tok; tok = strtok_r (NULL, " ", &save))
    {
      char *sp;
      brig_error err = { 0 };
      bool on = false;
      /* subtree_control is space separated too */
      for (char *p = enabled; p && *p;)
        {
          size_t n = strlen (tok);
          if (strncmp (p, tok, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
            on = true;
          sp = strchr (p, ' ');
          p = sp ? sp + 1 : NULL;
        }
      if (on || (want && !brig_cgroup_list_has (want, tok)))
        continue;
      if ((want ? brig_cgroup_v2_enable_marked (dir, tok, &err)
                : brig_cgroup_writef (dir, "cgroup.subtree_control", &err, "+%s", tok)) < 0)
        brig_debug ("cgroup: %s: %s", dir, err.msg);
      brig_error_clear (&err);
    }
}

int
brig_cgroup_v2_enable (const char *mountpoint, const char *path, const char *want,
                       brig_error *err)
{
  _cleanup_free_ char *dir = xstrdup (mountpoint);
  _cleanup_free_ char *copy = xstrdup (path);
  char *save = NULL, *tok;

  /* every ancestor of the leaf, the leaf excluded */
  for (tok = strtok_r (copy, "/", &save); tok; tok = strtok_r (NULL, "/", &save))
    {
      char *next;
      enable_controllers (dir, want);
      next = xasprintf ("%s/%s", dir, tok);
      free (dir);
      dir = next;
    }
  return 0;
}

int
brig_cgroup_v2_mkdir_walk (const char *mountpoint, const char *path, bool all, const char *want,
                           char **created, brig_error *err)
{
  _cleanup_free_ char *dir = xstrdup (mountpoint);
  _cleanup_free_ char *copy = xstrdup (path);
  char *save = NULL, *tok;

  *created = NULL;
  for (tok = strtok_r (copy, "/", &save); tok; tok = strtok_r (NULL, "/", &save))
    {
      char *next;
      if (all || (want && *want))
        enable_controllers (dir, all ? NULL : want);
      next = xasprintf ("%s/%s", dir, tok);
      free (dir);
      dir = next;
      /* mkdir's EEXIST says what a stat before it would; the leaf gets
       * brig's mark */
      if (mkdir (dir, save == NULL || save[strspn (save, "/")] == '\0' ? BRIG_CGROUP_LEAF_MODE
                                                                        : 0755) == 0)
        {
          if (*created == NULL)
            *created = xstrdup (dir);
        }
      else if (errno != EEXIST)
        return brig_error_errno (err, "mkdir %s", dir);
    }
  return 0;
}

int
brig_cgroup_v2_mkdir (const char *mountpoint, const char *path, bool all, const char *want,
                      brig_error *err)
{
  _cleanup_free_ char *created = NULL;
  return brig_cgroup_v2_mkdir_walk (mountpoint, path, all, want, &created, err);
}


/* cgroup.freeze only asks; cgroup.events says "frozen 1" once every task
 * has stopped. */
int
brig_cgroup_v2_freeze (const char *dir, bool freeze, brig_error *err)
{
  long waited = 0, delay = 100;
  int r = brig_cgroup_write (dir, "cgroup.freeze", freeze ? "1" : "0", err);
  if (r < 0)
    return r;
  for (;;)
    {
      _cleanup_free_ char *events = NULL;
      uint64_t frozen = 0;
      r = brig_cgroup_read (dir, "cgroup.events", &events);
      if (r < 0)
        return brig_error_set (err, -r, "read %s/cgroup.events", dir);
      if (brig_cgroup_keyed_u64 (events, "frozen", &frozen) < 0)
        return 0;  /* no frozen key: nothing to wait for */
      if ((frozen != 0) == freeze)
        return 0;
      if (waited > 5000000)
        {
          if (freeze)
            brig_cgroup_write (dir, "cgroup.freeze", "0", NULL);
          return brig_error_say (err, EBUSY, "%s: cgroup.events does not say frozen %d",
                                 dir, freeze);
        }
      brig_sleep_us (delay);
      waited += delay;
      delay = delay < 10000 ? delay * 2 : 10000;
    }
}

int
brig_cgroup_v2_kill (const char *dir, brig_error *err)
{
  _cleanup_free_ char *path = xasprintf ("%s/cgroup.kill", dir);
  if (access (path, F_OK) < 0)
    return -ENOENT;
  return brig_cgroup_write (dir, "cgroup.kill", "1", err);
}
