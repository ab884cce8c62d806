/* Which hierarchies a container is in. On v1 and hybrid hosts every
 * hierarchy costs a mkdir, a cgroup.procs write and an rmdir per
 * container; a few v1 ones hold nothing a container gets unless its config
 * asks for it, and are left out when nothing could be inherited there
 * (docs/cgroups.md, "Which hierarchies": the table and the reasons). A
 * hybrid host's cgroup2 hierarchy is always joined (with CLONE_INTO_CGROUP,
 * no cgroup.procs write); a record of an older brig may have left it out.
 * `update` that sets a value of a left-out hierarchy makes it and moves
 * every process of the container into it first (cgroup/grow.c). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

/* v1 controllers whose cgroup a container gets nothing from by default:
 * no limit is set, no engine reads their statistics, brig needs none of
 * them for pause, kill or ps. */
static const char *const optional_v1[] = { "net_cls", "net_prio", "perf_event", "rdma", "misc" };

bool
brig_cgroup_dir_optional (const char *controllers)
{
  _cleanup_free_ char *copy = NULL;
  char *save = NULL, *tok;
  bool any = false;

  /* the cgroup2 hierarchy of a hybrid host: always, as runc joins it;
   * tools read the "0::" line of /proc/PID/cgroup to find a container's
   * cgroup (issue #26 item 5), and systemd as PID 1 tracks processes
   * there */
  if (controllers == NULL)
    return false;
  /* a named hierarchy (name=systemd) is how systemd, also one inside the
   * container, tracks processes: always */
  copy = xstrdup (controllers);
  for (tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      bool found = false;
      for (size_t i = 0; i < BRIG_ARRAY_SIZE (optional_v1); i++)
        if (strcmp (tok, optional_v1[i]) == 0)
          found = true;
      if (!found)
        return false;
      any = true;
    }
  return any;
}

bool
brig_cgroup_dir_used (const char *controllers, const oci_resources *r, bool v1_hugetlb)
{
  if (r == NULL)
    return false;
  if (controllers == NULL)
    return r->hugepage_limits_len > 0 && !v1_hugetlb;
  if (brig_cgroup_list_has (controllers, "cpuset") && r->cpu
      && ((r->cpu->cpus && *r->cpu->cpus) || (r->cpu->mems && *r->cpu->mems)))
    return true;
  if (brig_cgroup_list_has (controllers, "net_cls") && r->network && r->network->has_class_id)
    return true;
  if (brig_cgroup_list_has (controllers, "net_prio") && r->network
      && r->network->priorities_len > 0)
    return true;
  return brig_cgroup_list_has (controllers, "rdma") && r->rdma_len > 0;
}

/* True when the first directory of cgroupsPath exists in the hierarchy:
 * someone organised cgroups there, and what they set on the ancestors (limits, a
 * net_cls class, BPF programs, firewall rules matching the cgroup path)
 * must reach the container as it would with every hierarchy joined. When
 * it does not exist, the container's would-be ancestors are the root's,
 * whose settings apply below it either way. */
static bool
top_exists (const struct brig_cgroup_dir *d, const char *path)
{
  const char *p = path + strspn (path, "/");
  _cleanup_free_ char *top = xasprintf ("%s/%.*s", d->mountpoint, (int) strcspn (p, "/"), p);
  struct stat st;
  return stat (top, &st) == 0 || errno != ENOENT;
}

/* Where create may leave out a hierarchy that other hosts need (issue 25):
 * name=systemd only matters to a systemd running as the host's init (which
 * tracks every unit's processes there; sd_booted(3)'s test) or inside the
 * container (a cgroup mount, checked by the caller); a named hierarchy has
 * no settings an ancestor could pass down. cpuset gives a container only
 * the cpus and mems of its ancestors: left out when the would-be parent's
 * effective ones, and those of brig's own cpuset cgroup (where the
 * container stays), are the whole machine's, so it runs on the same cpus
 * either way and no exec from another cgroup can widen them. */
static bool
named_systemd (const char *controllers)
{
  return controllers && strcmp (controllers, "name=systemd") == 0;
}

static bool
host_runs_systemd (void)
{
  struct stat st;
  return lstat ("/run/systemd/system", &st) == 0 && S_ISDIR (st.st_mode);
}

/* The cpuset cgroup of this process, relative to the hierarchy's root,
 * from /proc/self/cgroup; NULL when it cannot be told. */
static char *
own_cpuset (void)
{
  _cleanup_free_ char *text = NULL;
  char *line, *save = NULL;

  if (brig_read_file_at (AT_FDCWD, "/proc/self/cgroup", &text, NULL, NULL) < 0)
    return NULL;
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *ctl = strchr (line, ':'), *path = ctl ? strchr (ctl + 1, ':') : NULL;
      if (path == NULL)
        continue;
      *path++ = '\0';
      if (brig_cgroup_list_has (ctl + 1, "cpuset"))
        return xstrdup (path);
    }
  return NULL;
}

/* dir's effective cpus and mems equal the hierarchy root's ones */
static bool
cpuset_whole (const char *mountpoint, const char *dir)
{
  static const char *const files[] = { "cpuset.effective_cpus", "cpuset.effective_mems" };
  for (size_t i = 0; i < 2; i++)
    {
      _cleanup_free_ char *a = NULL, *b = NULL;
      _cleanup_free_ char *pa = xasprintf ("%s/%s", mountpoint, files[i]);
      _cleanup_free_ char *pb = xasprintf ("%s/%s", dir, files[i]);
      if (brig_read_file_at (AT_FDCWD, pa, &a, NULL, NULL) < 0
          || brig_read_file_at (AT_FDCWD, pb, &b, NULL, NULL) < 0 || strcmp (a, b) != 0)
        return false;
    }
  return true;
}

static bool
cpuset_needed (const struct brig_cgroup_dir *d, const char *path)
{
  _cleanup_free_ char *own = own_cpuset ();
  _cleanup_free_ char *up = xasprintf ("%s%s", d->mountpoint, path);
  size_t root_len = strlen (d->mountpoint);
  struct stat st;

  if (own == NULL)
    return true;
  if (strcmp (own, "/") != 0)
    {
      _cleanup_free_ char *mine = xasprintf ("%s%s", d->mountpoint, own);
      if (!cpuset_whole (d->mountpoint, mine))
        return true;
    }
  /* the nearest ancestor that exists */
  for (;;)
    {
      char *slash = strrchr (up, '/');
      if (slash == NULL || (size_t) (slash - up) <= root_len)
        return false;   /* the root's own cpus and mems */
      *slash = '\0';
      if (stat (up, &st) == 0)
        return !cpuset_whole (d->mountpoint, up);
      if (errno != ENOENT)
        return true;
    }
}

void
brig_cgroup_skip (brig_cgroup *cg, size_t i)
{
  if (cg->unified == cg->dirs[i].path)
    cg->unified = NULL;
  cg->skipped = xrealloc (cg->skipped, (cg->n_skipped + 1) * sizeof *cg->skipped);
  cg->skipped[cg->n_skipped++] = cg->dirs[i];
  memmove (&cg->dirs[i], &cg->dirs[i + 1], (cg->n_dirs - i - 1) * sizeof *cg->dirs);
  cg->n_dirs--;
}

void
brig_cgroup_unskip (brig_cgroup *cg, size_t k)
{
  struct brig_cgroup_dir d = cg->skipped[k];
  size_t at = cg->n_dirs;

  memmove (&cg->skipped[k], &cg->skipped[k + 1], (cg->n_skipped - k - 1) * sizeof d);
  cg->n_skipped--;
  /* v1 hierarchies first, then the cgroup2 one (fs_apply relies on it) */
  if (d.controllers && cg->n_dirs > 0 && cg->dirs[cg->n_dirs - 1].controllers == NULL)
    at = cg->n_dirs - 1;
  /* dirs has room: fill_dirs sized it for every hierarchy; the unified
   * pointer follows its entry when that moves up */
  cg->dirs = xrealloc (cg->dirs, (cg->n_dirs + 1) * sizeof *cg->dirs);
  memmove (&cg->dirs[at + 1], &cg->dirs[at], (cg->n_dirs - at) * sizeof d);
  cg->dirs[at] = d;
  cg->n_dirs++;
  cg->unified = NULL;
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].controllers == NULL)
      cg->unified = cg->dirs[i].path;
}

void
brig_cgroup_scope (brig_cgroup *cg, const struct brig_cgroup_config *cfg)
{
  bool v1_hugetlb = brig_cgroup_v1_dir (cg, "hugetlb") != NULL;
  bool brig_default = cfg->cgroups_path == NULL || *cfg->cgroups_path == '\0';

  /* pure v2 is one directory joined by clone3; a shared cgroup is someone
   * else's layout; rootless drops what it may not write anyway */
  if ((cg->mode != BRIG_CGROUP_V1 && cg->mode != BRIG_CGROUP_HYBRID) || cfg->shared
      || cfg->rootless)
    return;
  for (size_t i = 0; i < cg->n_dirs;)
    {
      const struct brig_cgroup_dir *d = &cg->dirs[i];
      bool cpuset = d->controllers && strcmp (d->controllers, "cpuset") == 0;
      bool keep = (!brig_cgroup_dir_optional (d->controllers) && !cpuset
                   && !(named_systemd (d->controllers) && !host_runs_systemd ()))
                  || brig_cgroup_dir_used (d->controllers, cfg->resources, v1_hugetlb)
                  /* a hierarchy the container sees through a cgroup mount
                   * would show the tree of brig's own cgroup */
                  || !cfg->no_cgroup_mount
                  || (cpuset && cpuset_needed (d, cg->path))
                  /* brig's own /brig/ID (no cgroupsPath): nobody placed
                   * the container, brig never configures /brig */
                  || (!cpuset && !named_systemd (d->controllers) && !brig_default
                      && top_exists (d, cg->path));
      if (keep)
        {
          i++;
          continue;
        }
      brig_debug ("cgroup: %s: not used by the config, left out", d->path);
      brig_cgroup_skip (cg, i);
    }
}

bool
brig_cgroup_joined (const brig_cgroup *cg, const char *controller)
{
  if (controller == NULL)
    return cg->unified != NULL;
  return brig_cgroup_v1_dir (cg, controller) != NULL;
}
