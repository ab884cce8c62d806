/* linux.resources on cgroup v1: one file per value, in the hierarchy of
 * the controller. A value for a controller that is not mounted is an
 * error naming the field, never silently dropped. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

/* Limits where -1 means "unlimited" and no other negative value means
 * anything: -5 must not quietly become "unlimited" (it would lift a limit
 * the caller thought it was setting). */
static int
validate_negatives (const oci_resources *r, brig_error *err)
{
  const oci_memory *m = r->memory;
  const oci_cpu *c = r->cpu;
  const struct { bool has; int64_t v; const char *name; } f[] = {
    { m && m->has_limit, m ? m->limit : 0, "memory.limit" },
    { m && m->has_reservation, m ? m->reservation : 0, "memory.reservation" },
    { m && m->has_swap, m ? m->swap : 0, "memory.swap" },
    { m && m->has_kernel, m ? m->kernel : 0, "memory.kernel" },
    { m && m->has_kernel_tcp, m ? m->kernel_tcp : 0, "memory.kernelTCP" },
    { c && c->has_quota, c ? c->quota : 0, "cpu.quota" },
    { c && c->has_realtime_runtime, c ? c->realtime_runtime : 0, "cpu.realtimeRuntime" },
    { r->pids && r->pids->has_limit, r->pids ? r->pids->limit : 0, "pids.limit" },
  };

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (f); i++)
    if (f[i].has && f[i].v < -1)
      return brig_error_set (err, 0, "linux.resources.%s %" PRId64 ": must not be "
                             "negative (only -1 means unlimited)", f[i].name, f[i].v);
  return 0;
}

int
brig_cgroup_resources_validate (const brig_cgroup *cg, const oci_resources *r, brig_error *err)
{
  bool v2 = cg->mode == BRIG_CGROUP_V2;
  char name[32];

  if (validate_negatives (r, err) < 0)
    return -EINVAL;

  if (r->unified && r->unified->len > 0 && !v2)
    return brig_error_set (err, 0, "invalid configuration: linux.resources.unified: requires "
                           "cgroup v2 (this host is %s)", brig_cgroup_mode_name (cg->mode));
  for (size_t i = 0; r->unified && i < r->unified->len; i++)
    {
      const char *k = r->unified->keys[i];
      if (*k == '\0' || strchr (k, '/') || k[0] == '.' || strchr (k, '.') == NULL)
        return brig_error_set (err, 0, "linux.resources.unified: \"%s\" is not a cgroup file name", k);
    }
  if (r->memory)
    {
      const oci_memory *m = r->memory;
      if (m->has_swappiness && m->swappiness > 100)
        return brig_error_set (err, 0, "linux.resources.memory.swappiness %" PRIu64
                               ": must be between 0 and 100", m->swappiness);
      if (m->has_swap && m->swap > 0 && m->has_limit && m->limit > 0 && m->swap < m->limit)
        return brig_error_set (err, 0, "linux.resources.memory.swap %" PRId64
                               " is below memory.limit %" PRId64 " (swap counts memory+swap)",
                               m->swap, m->limit);
    }
  for (size_t i = 0; i < r->hugepage_limits_len; i++)
    if (brig_cgroup_hugepage_name (r->hugepage_limits[i].page_size, name, sizeof name, err) < 0)
      return -EINVAL;
  if (r->cpu && r->cpu->has_idle && r->cpu->idle != 0 && r->cpu->idle != 1)
    return brig_error_set (err, 0, "linux.resources.cpu.idle %" PRId64 ": must be 0 or 1",
                           r->cpu->idle);
  if (r->devices_len > 0)
    {
      /* Check the rules now, before any cgroup exists, not at the write. */
      _cleanup_free_ struct brig_dev_rule *rules = NULL;
      size_t n;
      if (brig_cgroup_device_rules (r, &rules, &n, err) < 0)
        return -EINVAL;
    }
  return 0;
}

/* The directory of controller, or an error naming the resource field. */
static const char *
need (brig_cgroup *cg, const char *controller, const char *field, brig_error *err)
{
  const char *d = brig_cgroup_v1_dir (cg, controller);
  if (d == NULL)
    brig_error_set (err, 0, "linux.resources.%s: the %s cgroup controller is not mounted",
                    field, controller);
  return d;
}

static bool
has_file (const char *dir, const char *file)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  return access (p, F_OK) == 0;
}

/* memory.limit_in_bytes must stay <= memory.memsw.limit_in_bytes at every
 * moment: raising both needs memsw first, lowering both the limit first. */
static int
memory_limits (const char *dir, const oci_memory *m, bool update, brig_error *err)
{
  bool set_swap = m->has_swap && m->swap != 0;
  bool set_limit = m->has_limit && m->limit != 0;
  char limit[32], swap[32];
  int r;

  snprintf (limit, sizeof limit, "%" PRId64, m->limit < 0 ? -1 : m->limit);
  snprintf (swap, sizeof swap, "%" PRId64, m->swap < 0 ? -1 : m->swap);
  if (set_limit && update && m->has_check_before_update && m->check_before_update && m->limit > 0)
    {
      uint64_t usage = 0;
      if (brig_cgroup_read_u64 (dir, "memory.usage_in_bytes", &usage) == 0
          && usage > (uint64_t) m->limit)
        return brig_error_say (err, EBUSY, "linux.resources.memory.limit %" PRId64
                               ": below the current usage %" PRIu64 " (checkBeforeUpdate)",
                               m->limit, usage);
    }
  if (set_swap && !has_file (dir, "memory.memsw.limit_in_bytes"))
    {
      if (m->swap < 0)
        set_swap = false;  /* unlimited is what we have anyway */
      else
        return brig_error_set (err, 0, "linux.resources.memory.swap: the kernel does not "
                               "account swap (no memory.memsw.limit_in_bytes)");
    }
  if (!set_swap)
    {
      uint64_t memsw = 0;
      if (!set_limit)
        return 0;
      r = brig_cgroup_write (dir, "memory.limit_in_bytes", limit, err);
      /* The kernel keeps the limit at or below memory+swap, and says only
       * EINVAL: name the other limit. */
      if (r == -EINVAL && brig_cgroup_read_u64 (dir, "memory.memsw.limit_in_bytes", &memsw) == 0
          && (m->limit < 0 || (uint64_t) m->limit > memsw))
        return brig_error_set (err, EINVAL, "linux.resources.memory.limit %" PRId64 ": above "
                               "the memory+swap limit memory.memsw.limit_in_bytes %" PRIu64
                               " (raise memory.swap with it)", m->limit, memsw);
      return r;
    }
  if (!set_limit)
    return brig_cgroup_write (dir, "memory.memsw.limit_in_bytes", swap, err);
  r = brig_cgroup_write (dir, "memory.limit_in_bytes", limit, NULL);
  if (r == -EINVAL)
    {
      r = brig_cgroup_write (dir, "memory.memsw.limit_in_bytes", swap, err);
      if (r < 0)
        return r;
      return brig_cgroup_write (dir, "memory.limit_in_bytes", limit, err);
    }
  if (r < 0)
    return brig_cgroup_write (dir, "memory.limit_in_bytes", limit, err);
  return brig_cgroup_write (dir, "memory.memsw.limit_in_bytes", swap, err);
}

static int
apply_memory (brig_cgroup *cg, const oci_memory *m, bool update, brig_error *err)
{
  const char *dir = need (cg, "memory", "memory", err);
  int r;

  if (dir == NULL)
    return -ENOTSUP;
  r = memory_limits (dir, m, update, err);
  if (r < 0)
    return r;
  if (m->has_reservation && m->reservation != 0)
    {
      r = brig_cgroup_writef (dir, "memory.soft_limit_in_bytes", err, "%" PRId64,
                              m->reservation < 0 ? -1 : m->reservation);
      if (r < 0)
        return r;
    }
  if (m->has_kernel && m->kernel != 0)
    brig_warn ("linux.resources.memory.kernel is deprecated and ignored");
  if (m->has_kernel_tcp && m->kernel_tcp != 0)
    {
      r = brig_cgroup_writef (dir, "memory.kmem.tcp.limit_in_bytes", err, "%" PRId64,
                              m->kernel_tcp < 0 ? -1 : m->kernel_tcp);
      if (r < 0)
        return r;
    }
  if (m->has_swappiness)
    {
      r = brig_cgroup_writef (dir, "memory.swappiness", err, "%" PRIu64, m->swappiness);
      if (r < 0)
        return r;
    }
  if (m->has_disable_oom_killer && (m->disable_oom_killer || update))
    {
      r = brig_cgroup_write (dir, "memory.oom_control", m->disable_oom_killer ? "1" : "0", err);
      if (r < 0)
        return r;
    }
  if (m->has_use_hierarchy)
    {
      /* Kernels since 5.x are always hierarchical and refuse "0". */
      brig_error tmp = { 0 };
      r = brig_cgroup_write (dir, "memory.use_hierarchy", m->use_hierarchy ? "1" : "0", &tmp);
      if (r < 0)
        {
          if (m->use_hierarchy)
            {
              brig_error_set_raw (err, tmp.code, tmp.msg);
              brig_error_clear (&tmp);
              return r;
            }
          brig_warn ("linux.resources.memory.useHierarchy false: %s (the kernel is always "
                     "hierarchical)", tmp.msg);
        }
      brig_error_clear (&tmp);
    }
  return 0;
}

/* Two coupled files (period + quota, rt period + runtime): the kernel
 * checks each write against the other value, so when the first order is
 * refused, the other order is the one that works. */
static int
write_pair (const char *dir, const char *f1, const char *v1, const char *f2, const char *v2,
            brig_error *err)
{
  int r = 0;
  if (v1 == NULL || v2 == NULL)
    return v1 ? brig_cgroup_write (dir, f1, v1, err)
              : v2 ? brig_cgroup_write (dir, f2, v2, err) : 0;
  if (brig_cgroup_write (dir, f1, v1, NULL) < 0)
    {
      r = brig_cgroup_write (dir, f2, v2, err);
      return r < 0 ? r : brig_cgroup_write (dir, f1, v1, err);
    }
  return brig_cgroup_write (dir, f2, v2, err);
}

/* The v1 hierarchy dir of controller (mountpoint and path), or NULL. */
static const struct brig_cgroup_dir *
v1_dir_of (const brig_cgroup *cg, const char *controller)
{
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].controllers && brig_cgroup_list_has (cg->dirs[i].controllers, controller))
      return &cg->dirs[i];
  return NULL;
}

static int
apply_cpu (brig_cgroup *cg, const oci_cpu *c, brig_error *err)
{
  _cleanup_free_ char *blocker = NULL;
  char a[32], b[32];
  const char *dir;
  int r;
  bool sched = c->has_shares || c->has_quota || c->has_period || c->has_burst
               || c->has_realtime_runtime || c->has_realtime_period || c->has_idle;

  if (sched)
    {
      if ((dir = need (cg, "cpu", "cpu", err)) == NULL)
        return -ENOTSUP;
      if (c->has_idle)
        {
          r = brig_cgroup_writef (dir, "cpu.idle", err, "%" PRId64, c->idle);
          if (r < 0)
            return r;
        }
      /* an idle group has no shares to set */
      if (c->has_shares && c->shares != 0 && !(c->has_idle && c->idle == 1))
        {
          r = brig_cgroup_writef (dir, "cpu.shares", err, "%" PRIu64, c->shares);
          if (r < 0)
            return r;
        }
      snprintf (a, sizeof a, "%" PRIu64, c->period);
      snprintf (b, sizeof b, "%" PRId64, c->quota <= 0 ? -1 : c->quota);
      r = write_pair (dir, "cpu.cfs_period_us", c->has_period && c->period ? a : NULL,
                      "cpu.cfs_quota_us", c->has_quota && c->quota ? b : NULL, err);
      if (r < 0)
        return r;
      if (c->has_burst)
        {
          r = brig_cgroup_writef (dir, "cpu.cfs_burst_us", err, "%" PRIu64, c->burst);
          if (r < 0)
            return r;
        }
      snprintf (a, sizeof a, "%" PRIu64, c->realtime_period);
      snprintf (b, sizeof b, "%" PRId64, c->realtime_runtime);
      r = 0;
      for (int force = 0; force < 2; force++)
        {
          if (c->has_realtime_runtime && c->realtime_runtime > 0)
            {
              _cleanup_free_ char *what = xasprintf ("linux.resources.cpu.realtimeRuntime %"
                                                     PRId64, c->realtime_runtime);
              free (blocker);
              blocker = NULL;
              brig_error_clear (err);
              if ((r = brig_cgroup_v1_rt_give (v1_dir_of (cg, "cpu"), c->realtime_runtime,
                                               c->has_realtime_period ? c->realtime_period : 0,
                                               force, what, &blocker, err)) < 0)
                return r;
            }
          r = write_pair (dir, "cpu.rt_period_us",
                          c->has_realtime_period && c->realtime_period ? a : NULL,
                          "cpu.rt_runtime_us", c->has_realtime_runtime ? b : NULL, err);
          /* refused: a sibling removed a moment ago may still count for
           * the kernel; once more with room on top (cgroup/rt.c) */
          if (r != -EINVAL || blocker == NULL)
            break;
        }
      if (r < 0 && blocker)
        return brig_error_wrap (err, "linux.resources.cpu.realtimeRuntime %" PRId64 ": parent "
                                "cgroup %s has too little realtime budget left "
                                "(cpu.rt_runtime_us)", c->realtime_runtime, blocker);
      if (r < 0)
        return r;
    }
  if ((c->cpus && *c->cpus) || (c->mems && *c->mems))
    {
      if ((dir = need (cg, "cpuset", "cpu.cpus", err)) == NULL)
        return -ENOTSUP;
      if (c->cpus && *c->cpus && (r = brig_cgroup_write (dir, "cpuset.cpus", c->cpus, err)) < 0)
        return r;
      if (c->mems && *c->mems && (r = brig_cgroup_write (dir, "cpuset.mems", c->mems, err)) < 0)
        return r;
    }
  return 0;
}

static int
write_devices (const char *dir, const char *file, const oci_throttle_device *d, size_t n,
               brig_error *err)
{
  for (size_t i = 0; i < n; i++)
    {
      int r = brig_cgroup_writef (dir, file, err, "%" PRId64 ":%" PRId64 " %" PRIu64,
                                  d[i].major, d[i].minor, d[i].rate);
      if (r < 0)
        return r;
    }
  return 0;
}

static int
apply_blkio (brig_cgroup *cg, const oci_block_io *b, brig_error *err)
{
  const char *dir = need (cg, "blkio", "blockIO", err);
  /* CFQ is gone since 5.0; BFQ offers the same weight under another name. */
  const char *wfile, *wdfile;
  int r;

  if (dir == NULL)
    return -ENOTSUP;
  wfile = has_file (dir, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight";
  wdfile = has_file (dir, "blkio.weight_device") ? "blkio.weight_device" : "blkio.bfq.weight_device";
  if (b->has_weight && b->weight != 0)
    {
      r = brig_cgroup_writef (dir, wfile, err, "%" PRIu32, b->weight);
      if (r < 0)
        return r;
    }
  if (b->has_leaf_weight && b->leaf_weight != 0)
    {
      r = brig_cgroup_writef (dir, "blkio.leaf_weight", err, "%" PRIu32, b->leaf_weight);
      if (r < 0)
        return r;
    }
  for (size_t i = 0; i < b->weight_device_len; i++)
    {
      const oci_weight_device *w = &b->weight_device[i];
      if (w->has_weight)
        {
          r = brig_cgroup_writef (dir, wdfile, err, "%" PRId64 ":%" PRId64 " %" PRIu32,
                                  w->major, w->minor, w->weight);
          if (r < 0)
            return r;
        }
      if (w->has_leaf_weight)
        {
          r = brig_cgroup_writef (dir, "blkio.leaf_weight_device", err,
                                  "%" PRId64 ":%" PRId64 " %" PRIu32, w->major, w->minor,
                                  w->leaf_weight);
          if (r < 0)
            return r;
        }
    }
  if ((r = write_devices (dir, "blkio.throttle.read_bps_device", b->throttle_read_bps_device,
                          b->throttle_read_bps_device_len, err)) < 0
      || (r = write_devices (dir, "blkio.throttle.write_bps_device", b->throttle_write_bps_device,
                             b->throttle_write_bps_device_len, err)) < 0
      || (r = write_devices (dir, "blkio.throttle.read_iops_device", b->throttle_read_iops_device,
                             b->throttle_read_iops_device_len, err)) < 0
      || (r = write_devices (dir, "blkio.throttle.write_iops_device",
                             b->throttle_write_iops_device, b->throttle_write_iops_device_len,
                             err)) < 0)
    return r;
  return 0;
}

static int
apply_hugetlb (const char *dir, const oci_resources *res, brig_error *err)
{
  for (size_t i = 0; i < res->hugepage_limits_len; i++)
    {
      char name[32];
      _cleanup_free_ char *file = NULL, *rsvd = NULL;
      int r = brig_cgroup_hugepage_name (res->hugepage_limits[i].page_size, name, sizeof name, err);
      if (r < 0)
        return r;
      file = xasprintf ("hugetlb.%s.limit_in_bytes", name);
      r = brig_cgroup_writef (dir, file, err, "%" PRIu64, res->hugepage_limits[i].limit);
      if (r < 0)
        return r;
      /* the reservation limit follows the limit, so reserved pages are
       * bounded as well (kernels since 5.7) */
      rsvd = xasprintf ("hugetlb.%s.rsvd.limit_in_bytes", name);
      if (has_file (dir, rsvd)
          && (r = brig_cgroup_writef (dir, rsvd, err, "%" PRIu64, res->hugepage_limits[i].limit)) < 0)
        return r;
    }
  return 0;
}

static int
apply_devices (brig_cgroup *cg, const oci_resources *res, brig_error *err)
{
  _cleanup_free_ struct brig_dev_rule *rules = NULL;
  const char *dir = brig_cgroup_v1_dir (cg, "devices");
  size_t n = 0;
  int r;

  if (dir == NULL)
    {
      if (res->devices_len > 0)
        brig_warn ("linux.resources.devices: the devices cgroup controller is not mounted");
      return 0;
    }
  r = brig_cgroup_device_rules (res, &rules, &n, err);
  if (r < 0)
    return r;
  /* The two files stay open across the rules: each write(2) is one rule. */
  _cleanup_close_ int deny_fd = -1;
  _cleanup_close_ int allow_fd = -1;
  char prev[64] = "";
  for (size_t i = 0; i < n; i++)
    {
      const char *file = rules[i].allow ? "devices.allow" : "devices.deny";
      int *fd = rules[i].allow ? &allow_fd : &deny_fd;
      char rule[64];
      brig_cgroup_device_rule_v1 (&rules[i], rule, sizeof rule);
      if (i > 0 && rules[i].allow == rules[i - 1].allow && strcmp (rule, prev) == 0)
        continue;
      snprintf (prev, sizeof prev, "%s", rule);
      if (*fd < 0)
        {
          _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
          *fd = open (path, O_WRONLY | O_CLOEXEC);
          if (*fd < 0)
            return brig_error_errno (err, "write %s = \"%s\"", file, rule);
        }
      brig_debug ("cgroup: write %s/%s = \"%s\"", dir, file, rule);
      r = brig_write_all (*fd, rule, strlen (rule));
      if (r < 0)
        return brig_error_set (err, -r, "write %s = \"%s\"", file, rule);
    }
  return 0;
}

static int
apply_network (brig_cgroup *cg, const oci_network *net, brig_error *err)
{
  const char *dir;
  int r;
  if (net->has_class_id)
    {
      if ((dir = need (cg, "net_cls", "network.classID", err)) == NULL)
        return -ENOTSUP;
      r = brig_cgroup_writef (dir, "net_cls.classid", err, "%" PRIu32, net->class_id);
      if (r < 0)
        return r;
    }
  if (net->priorities_len > 0)
    {
      if ((dir = need (cg, "net_prio", "network.priorities", err)) == NULL)
        return -ENOTSUP;
      for (size_t i = 0; i < net->priorities_len; i++)
        {
          r = brig_cgroup_writef (dir, "net_prio.ifpriomap", err, "%s %" PRIu32,
                                  net->priorities[i].name, net->priorities[i].priority);
          if (r < 0)
            return r;
        }
    }
  return 0;
}

/* rdma.max takes "DEVICE hca_handle=N hca_object=M" (v1 and v2 alike). */
int
brig_cgroup_apply_rdma (const char *dir, const oci_resources *res, brig_error *err)
{
  for (size_t i = 0; i < res->rdma_len; i++)
    {
      const oci_rdma *d = &res->rdma[i];
      char h[32] = "", o[32] = "";
      int r;
      if (d->has_hca_handles)
        snprintf (h, sizeof h, " hca_handle=%" PRIu32, d->hca_handles);
      if (d->has_hca_objects)
        snprintf (o, sizeof o, " hca_object=%" PRIu32, d->hca_objects);
      if (!*h && !*o)
        continue;
      r = brig_cgroup_writef (dir, "rdma.max", err, "%s%s%s", res->rdma_keys[i], h, o);
      if (r < 0)
        return r;
    }
  return 0;
}

int
brig_cgroup_v1_apply (brig_cgroup *cg, const oci_resources *res, bool update, brig_error *err)
{
  const char *dir;
  int r;

  if (res->memory && (r = apply_memory (cg, res->memory, update, err)) < 0)
    return r;
  if (res->cpu && (r = apply_cpu (cg, res->cpu, err)) < 0)
    return r;
  if (res->pids && res->pids->has_limit)
    {
      char v[32];
      if ((dir = need (cg, "pids", "pids.limit", err)) == NULL)
        return -ENOTSUP;
      brig_cgroup_max_value (res->pids->limit <= 0 ? -1 : res->pids->limit, v, sizeof v);
      if ((r = brig_cgroup_write (dir, "pids.max", v, err)) < 0)
        return r;
    }
  if (res->block_io && (r = apply_blkio (cg, res->block_io, err)) < 0)
    return r;
  if (res->hugepage_limits_len > 0)
    {
      dir = brig_cgroup_v1_dir (cg, "hugetlb");
      if (dir == NULL && cg->unified == NULL)
        return brig_error_set (err, 0, "linux.resources.hugepageLimits: the hugetlb "
                               "cgroup controller is not mounted");
      /* else the caller applies it through the unified hierarchy */
      if (dir && (r = apply_hugetlb (dir, res, err)) < 0)
        return r;
    }
  if (res->network && (r = apply_network (cg, res->network, err)) < 0)
    return r;
  if (res->rdma_len > 0)
    {
      if ((dir = need (cg, "rdma", "rdma", err)) == NULL)
        return -ENOTSUP;
      if ((r = brig_cgroup_apply_rdma (dir, res, err)) < 0)
        return r;
    }
  /* Devices last: a deny-all in between must not catch our own writes, and
   * on update they change only when given. */
  if (!cg->rootless && (!update || res->devices))
    if ((r = apply_devices (cg, res, err)) < 0)
      return r;
  return 0;
}
