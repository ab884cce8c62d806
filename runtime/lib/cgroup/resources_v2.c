/* linux.resources on cgroup v2. The OCI values are shaped after v1; each
 * conversion is described in cgroup/convert.c. Settings v2 has no file for
 * (kernel, kernelTCP, swappiness, disableOOMKiller, leafWeight, network)
 * are reported with a warning and ignored, as other runtimes do. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

static bool
has_file (const char *dir, const char *file)
{
  _cleanup_free_ char *p = xasprintf ("%s/%s", dir, file);
  return access (p, F_OK) == 0;
}

static int
apply_memory (const char *dir, const oci_memory *m, bool update, brig_error *err)
{
  char v[32];
  int r;

  if (m->has_limit && m->limit != 0)
    {
      if (update && m->has_check_before_update && m->check_before_update && m->limit > 0)
        {
          uint64_t usage = 0;
          if (brig_cgroup_read_u64 (dir, "memory.current", &usage) == 0
              && usage > (uint64_t) m->limit)
            return brig_error_say (err, EBUSY, "linux.resources.memory.limit %" PRId64
                                   ": below the current usage %" PRIu64 " (checkBeforeUpdate)",
                                   m->limit, usage);
        }
      brig_cgroup_max_value (m->limit, v, sizeof v);
      if ((r = brig_cgroup_write (dir, "memory.max", v, err)) < 0)
        return r;
    }
  r = brig_cgroup_v2_swap_value (m->has_limit, m->limit, m->has_swap, m->swap, v, sizeof v, err);
  if (r < 0)
    return r;
  if (*v)
    {
      if (!has_file (dir, "memory.swap.max"))
        {
          if (strcmp (v, "max") != 0)
            return brig_error_set (err, 0, "linux.resources.memory.swap: the kernel does "
                                   "not account swap (no memory.swap.max)");
        }
      else if ((r = brig_cgroup_write (dir, "memory.swap.max", v, err)) < 0)
        return r;
    }
  if (m->has_reservation && m->reservation != 0)
    {
      brig_cgroup_max_value (m->reservation, v, sizeof v);
      if ((r = brig_cgroup_write (dir, "memory.low", v, err)) < 0)
        return r;
    }
  if (m->has_kernel && m->kernel != 0)
    brig_warn ("linux.resources.memory.kernel is deprecated and ignored");
  if (m->has_kernel_tcp && m->kernel_tcp != 0)
    brig_warn ("linux.resources.memory.kernelTCP: cgroup v2 has no such limit; ignored");
  if (m->has_swappiness)
    brig_warn ("linux.resources.memory.swappiness: cgroup v2 has no such setting; ignored");
  if (m->has_disable_oom_killer && m->disable_oom_killer)
    brig_warn ("linux.resources.memory.disableOOMKiller: cgroup v2 cannot disable the OOM killer; ignored");
  if (m->has_use_hierarchy && !m->use_hierarchy)
    brig_warn ("linux.resources.memory.useHierarchy false: cgroup v2 is always hierarchical");
  return 0;
}

static int
apply_cpu (const char *dir, const oci_cpu *c, brig_error *err)
{
  int r;

  if (c->has_idle && (r = brig_cgroup_writef (dir, "cpu.idle", err, "%" PRId64, c->idle)) < 0)
    return r;
  if (c->has_shares && c->shares != 0 && !(c->has_idle && c->idle == 1))
    {
      r = brig_cgroup_writef (dir, "cpu.weight", err, "%" PRIu64,
                              brig_cgroup_shares_to_weight (c->shares));
      if (r < 0)
        return r;
    }
  if ((c->has_quota && c->quota != 0) || (c->has_period && c->period != 0))
    {
      /* cpu.max is "QUOTA PERIOD"; a lone period keeps the current quota */
      _cleanup_free_ char *cur = NULL;
      char quota[32];
      if (c->has_quota && c->quota != 0)
        brig_cgroup_max_value (c->quota, quota, sizeof quota);
      else
        {
          char *sp;
          if (brig_cgroup_read (dir, "cpu.max", &cur) < 0)
            cur = xstrdup ("max");
          sp = strchr (cur, ' ');
          if (sp)
            *sp = '\0';
          snprintf (quota, sizeof quota, "%s", cur);
        }
      if (c->has_period && c->period != 0)
        r = brig_cgroup_writef (dir, "cpu.max", err, "%s %" PRIu64, quota, c->period);
      else
        r = brig_cgroup_write (dir, "cpu.max", quota, err);
      if (r < 0)
        return r;
    }
  if (c->has_burst && (r = brig_cgroup_writef (dir, "cpu.max.burst", err, "%" PRIu64, c->burst)) < 0)
    return r;
  if ((c->has_realtime_runtime && c->realtime_runtime != 0)
      || (c->has_realtime_period && c->realtime_period != 0))
    return brig_error_set (err, 0, "linux.resources.cpu.realtimeRuntime/realtimePeriod: "
                           "cgroup v2 has no realtime group scheduling");
  if (c->cpus && *c->cpus && (r = brig_cgroup_write (dir, "cpuset.cpus", c->cpus, err)) < 0)
    return r;
  if (c->mems && *c->mems && (r = brig_cgroup_write (dir, "cpuset.mems", c->mems, err)) < 0)
    return r;
  return 0;
}

static int
io_max (const char *dir, const char *key, const oci_throttle_device *d, size_t n, brig_error *err)
{
  for (size_t i = 0; i < n; i++)
    {
      char v[32];
      int r;
      /* 0 removes the limit, as it does in v1 */
      if (d[i].rate == 0)
        snprintf (v, sizeof v, "max");
      else
        snprintf (v, sizeof v, "%" PRIu64, d[i].rate);
      r = brig_cgroup_writef (dir, "io.max", err, "%" PRId64 ":%" PRId64 " %s=%s", d[i].major,
                              d[i].minor, key, v);
      if (r < 0)
        return r;
    }
  return 0;
}

static int
apply_io (const char *dir, const oci_block_io *b, brig_error *err)
{
  /* BFQ keeps the v1 scale [1,1000]; io.weight (iocost) needs the conversion */
  bool bfq = has_file (dir, "io.bfq.weight");
  const char *wfile = bfq ? "io.bfq.weight" : "io.weight";
  int r;

  if (b->has_weight && b->weight != 0)
    {
      uint64_t w = bfq ? b->weight : brig_cgroup_blkio_to_io_weight (b->weight);
      if ((r = brig_cgroup_writef (dir, wfile, err, "default %" PRIu64, w)) < 0)
        return r;
    }
  if (b->has_leaf_weight && b->leaf_weight != 0)
    brig_warn ("linux.resources.blockIO.leafWeight: cgroup v2 has no leaf weight; ignored");
  for (size_t i = 0; i < b->weight_device_len; i++)
    {
      const oci_weight_device *d = &b->weight_device[i];
      if (d->has_weight)
        {
          uint64_t w = bfq ? d->weight : brig_cgroup_blkio_to_io_weight (d->weight);
          r = brig_cgroup_writef (dir, wfile, err, "%" PRId64 ":%" PRId64 " %" PRIu64,
                                  d->major, d->minor, w);
          if (r < 0)
            return r;
        }
      if (d->has_leaf_weight)
        brig_warn ("linux.resources.blockIO.weightDevice[%zu].leafWeight: ignored on cgroup v2", i);
    }
  if ((r = io_max (dir, "rbps", b->throttle_read_bps_device, b->throttle_read_bps_device_len, err)) < 0
      || (r = io_max (dir, "wbps", b->throttle_write_bps_device, b->throttle_write_bps_device_len, err)) < 0
      || (r = io_max (dir, "riops", b->throttle_read_iops_device, b->throttle_read_iops_device_len, err)) < 0
      || (r = io_max (dir, "wiops", b->throttle_write_iops_device, b->throttle_write_iops_device_len, err)) < 0)
    return r;
  return 0;
}

int
brig_cgroup_v2_apply_hugetlb (const char *dir, const oci_resources *res, brig_error *err)
{
  for (size_t i = 0; i < res->hugepage_limits_len; i++)
    {
      char name[32];
      _cleanup_free_ char *file = NULL, *rsvd = NULL;
      int r = brig_cgroup_hugepage_name (res->hugepage_limits[i].page_size, name, sizeof name, err);
      if (r < 0)
        return r;
      file = xasprintf ("hugetlb.%s.max", name);
      if ((r = brig_cgroup_writef (dir, file, err, "%" PRIu64, res->hugepage_limits[i].limit)) < 0)
        return r;
      /* reservations (kernels since 5.7) are bounded by the same value */
      rsvd = xasprintf ("hugetlb.%s.rsvd.max", name);
      if (has_file (dir, rsvd)
          && (r = brig_cgroup_writef (dir, rsvd, err, "%" PRIu64, res->hugepage_limits[i].limit)) < 0)
        return r;
    }
  return 0;
}

int
brig_cgroup_v2_apply (brig_cgroup *cg, const char *dir, const oci_resources *res, bool update,
                      brig_error *err)
{
  int r;

  if (res->memory && (r = apply_memory (dir, res->memory, update, err)) < 0)
    return r;
  if (res->cpu && (r = apply_cpu (dir, res->cpu, err)) < 0)
    return r;
  if (res->pids && res->pids->has_limit)
    {
      char v[32];
      brig_cgroup_max_value (res->pids->limit <= 0 ? -1 : res->pids->limit, v, sizeof v);
      if ((r = brig_cgroup_write (dir, "pids.max", v, err)) < 0)
        return r;
    }
  if (res->block_io && (r = apply_io (dir, res->block_io, err)) < 0)
    return r;
  if (res->hugepage_limits_len > 0 && (r = brig_cgroup_v2_apply_hugetlb (dir, res, err)) < 0)
    return r;
  if (res->network && (res->network->has_class_id || res->network->priorities_len > 0))
    brig_warn ("linux.resources.network: cgroup v2 has no net_cls/net_prio; ignored");
  if (res->rdma_len > 0 && (r = brig_cgroup_apply_rdma (dir, res, err)) < 0)
    return r;
  /* raw keys last, so they win over the converted values above */
  for (size_t i = 0; res->unified && i < res->unified->len; i++)
    {
      r = brig_cgroup_write (dir, res->unified->keys[i], res->unified->values[i], err);
      if (r == -ENOENT)
        return brig_error_wrap (err, "linux.resources.unified (is the controller enabled?)");
      if (r < 0)
        return brig_error_wrap (err, "linux.resources.unified");
    }
  if (!cg->rootless && (!update || res->devices))
    if ((r = brig_cgroup_v2_apply_devices (cg, dir, res, err)) < 0)
      return r;
  return 0;
}
