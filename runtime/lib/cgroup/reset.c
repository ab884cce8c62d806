/* What brig reset asks of the cgroup it keeps: the counters a tenant left
 * reset where the kernel lets a runtime, and the usage read back for the
 * reset's checks (docs/sandbox.md "Reset"). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "cgroup/internal.h"

void
brig_cgroup_reset_counters (brig_cgroup *cg, uint64_t reclaim_over)
{
  const char *v1 = brig_cgroup_v1_dir (cg, "memory");
  uint64_t cur;

  if (v1)
    {
      /* An empty cgroup: force_empty reclaims every page still charged to
       * it (the tenant's page cache, tmpfs pages already freed). It walks
       * the cgroup's LRUs (1-7 ms even when little is charged), so it runs
       * only when the usage is over what the caller accepts; what stays
       * under is clean, reclaimable page cache, and the caller's check of
       * the usage still runs afterwards and fails above the bound. */
      if (brig_cgroup_read_u64 (v1, "memory.usage_in_bytes", &cur) < 0 || cur > reclaim_over)
        brig_cgroup_write (v1, "memory.force_empty", "0", NULL);
      brig_cgroup_write (v1, "memory.max_usage_in_bytes", "0", NULL);
      brig_cgroup_write (v1, "memory.memsw.max_usage_in_bytes", "0", NULL);
      brig_cgroup_write (v1, "memory.kmem.max_usage_in_bytes", "0", NULL);
      return;
    }
  if (cg->unified && brig_cgroup_read_u64 (cg->unified, "memory.current", &cur) == 0
      && cur > reclaim_over)
    {
      /* memory.peak is reset per open file only (6.12+), not for whoever
       * reads it next: nothing to do there. */
      char buf[32];
      snprintf (buf, sizeof buf, "%" PRIu64, cur);
      brig_cgroup_write (cg->unified, "memory.reclaim", buf, NULL);
    }
}

/* One usage value: from the v1 directory when the hierarchy is there,
 * else from the unified one; UINT64_MAX when neither has the controller,
 * BRIG_CGROUP_UNREADABLE when it is there and cannot be read. */
static uint64_t
usage_of (brig_cgroup *cg, const char *v1, const char *v1_file, const char *v2_file)
{
  uint64_t v;
  int r;

  if (v1)
    return brig_cgroup_read_u64 (v1, v1_file, &v) == 0 && v != UINT64_MAX
           ? v : BRIG_CGROUP_UNREADABLE;
  if (!cg->unified)
    return UINT64_MAX;
  r = brig_cgroup_read_u64 (cg->unified, v2_file, &v);
  if (r == -ENOENT)
    return UINT64_MAX;   /* the controller is not enabled there */
  return r == 0 && v != UINT64_MAX ? v : BRIG_CGROUP_UNREADABLE;
}

int
brig_cgroup_usage (brig_cgroup *cg, uint64_t *memory, uint64_t *pids)
{
  *memory = usage_of (cg, brig_cgroup_v1_dir (cg, "memory"), "memory.usage_in_bytes",
                      "memory.current");
  *pids = usage_of (cg, brig_cgroup_v1_dir (cg, "pids"), "pids.current", "pids.current");
  return *memory == UINT64_MAX || *pids == UINT64_MAX ? -ENOENT : 0;
}
