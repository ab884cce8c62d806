/* The zombies pids.usage may count (reset_verify.c): killed inits of this
 * container whose parent (pid 1, or the engine's subreaper) has not reaped
 * them yet. They hold a pid of the cgroup's pids controller and nothing
 * else. Reading every /proc/PID/stat of the host to find them cost 1.5-4
 * ms of every warm-pool release on the test VM, whose pid 1 reaps orphans
 * lazily (each release left one more): reset.zombies in the state
 * directory lists the ones found before ("PID START" per line), and only
 * when those do not explain pids.current is /proc scanned. Each candidate
 * is taken only as what the kernel shows now: a zombie with that start
 * time, charged to this cgroup (its /proc/PID/cgroup), never from the
 * file alone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/reset_internal.h"
#include "container/state.h"
#include "utils.h"

/* Whether /proc/PID/cgroup (pid as text) names cgpath in some hierarchy:
 * 1 yes, 0 no, -1 cannot tell. The kernel shows an exiting task (a
 * zombie) as "/" in every v1 hierarchy; only a cgroup2 line keeps its path,
 * so a zombie of a container that is in no cgroup2 cgroup reads "/"
 * everywhere. */
static int
proc_in_cgroup (const char *pid, const char *cgpath)
{
  _cleanup_free_ char *text = NULL;
  size_t plen = strlen (cgpath);
  bool all_root = true;
  char p[64];

  snprintf (p, sizeof p, "/proc/%s/cgroup", pid);
  if (brig_read_file_at (AT_FDCWD, p, &text, NULL, NULL) < 0)
    return 0;
  for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    {
      char *c = strchr (l, ':') ? strchr (strchr (l, ':') + 1, ':') : NULL;
      if (c == NULL)
        continue;
      if (strncmp (c + 1, cgpath, plen) == 0 && (c[1 + plen] == '\n' || c[1 + plen] == '\0'))
        return 1;
      if (!(c[1] == '/' && (c[2] == '\n' || c[2] == '\0')))
        all_root = false;
    }
  return all_root ? -1 : 0;
}

static bool
listed (const struct reset_zombies *zs, pid_t pid, unsigned long long start)
{
  for (size_t i = 0; i < zs->n; i++)
    if (zs->z[i].pid == pid && zs->z[i].start == start)
      return true;
  return false;
}

/* Add pid when it is a zombie started at start and charged to cgpath (or
 * the kernel cannot tell: pid and start time name a process of this
 * cgroup, the old init or one a reset recorded). */
static void
take (struct reset_zombies *zs, pid_t pid, unsigned long long start, const char *cgpath)
{
  char st = 0, s[24];
  unsigned long long t = 0;

  if (pid <= 0 || zs->n >= BRIG_ARRAY_SIZE (zs->z) || listed (zs, pid, start))
    return;
  if (brig_proc_stat (pid, &st, &t) < 0 || st != 'Z' || t != start)
    return;
  snprintf (s, sizeof s, "%d", (int) pid);
  if (proc_in_cgroup (s, cgpath) == 0)
    return;
  zs->z[zs->n].pid = pid;
  zs->z[zs->n].start = start;
  zs->n++;
}

void
reset_zombies_load (int dirfd, const char *cgpath, pid_t old_pid, unsigned long long old_start,
                    struct reset_zombies *zs)
{
  _cleanup_free_ char *text = NULL;
  size_t lines = 0, before;

  zs->n = 0;
  if (brig_read_file_at (dirfd, BRIG_RESET_ZOMBIES, &text, NULL, NULL) == 0)
    for (char *l = text; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
      {
        int pid;
        unsigned long long start;
        if (sscanf (l, "%d %llu", &pid, &start) != 2)
          continue;
        lines++;
        take (zs, (pid_t) pid, start, cgpath);
      }
  /* the old init: the usual one, and new in the record */
  before = zs->n;
  take (zs, old_pid, old_start, cgpath);
  /* rewritten only when it would say something else */
  zs->changed = before != lines || zs->n != before;
}

void
reset_zombies_scan (const char *cgpath, pid_t old_pid, unsigned long long old_start,
                    struct reset_zombies *zs)
{
  _cleanup_closedir_ DIR *d = opendir ("/proc");
  struct dirent *de;

  zs->n = 0;
  zs->changed = true;
  while (d && (de = readdir (d)) != NULL)
    {
      char st = 0;
      unsigned long long t;
      if (de->d_name[0] < '1' || de->d_name[0] > '9'
          || brig_proc_stat ((pid_t) atoi (de->d_name), &st, &t) < 0 || st != 'Z'
          || proc_in_cgroup (de->d_name, cgpath) != 1)
        continue;
      if (zs->n < BRIG_ARRAY_SIZE (zs->z))
        {
          zs->z[zs->n].pid = (pid_t) atoi (de->d_name);
          zs->z[zs->n].start = t;
        }
      zs->n++;   /* counted even beyond what the record keeps */
    }
  /* The old init, known by pid and start time even where its cgroup
     reads "/" (above). */
  take (zs, old_pid, old_start, cgpath);
}

void
reset_zombies_save (int dirfd, const struct reset_zombies *zs)
{
  char buf[BRIG_RESET_ZOMBIES_MAX * 48];
  size_t len = 0;

  if (!zs->changed)
    return;
  if (zs->n == 0)
    {
      unlinkat (dirfd, BRIG_RESET_ZOMBIES, 0);
      return;
    }
  for (size_t i = 0; i < zs->n && i < BRIG_ARRAY_SIZE (zs->z); i++)
    len += (size_t) snprintf (buf + len, sizeof buf - len, "%d %llu\n", (int) zs->z[i].pid,
                              zs->z[i].start);
  /* only a hint for the next reset: a failure costs the next one a scan */
  brig_write_file_atomic (dirfd, BRIG_RESET_ZOMBIES, buf, len, 0600, NULL);
}
