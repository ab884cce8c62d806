/* `ps`: the processes of a container, found through its cgroup. */
#include <errno.h>
#include <stdlib.h>

#include "cgroup/cgroup.h"
#include "container/ps.h"
#include "container/state.h"
#include "utils.h"

int
brig_container_pids (const struct brig_context *ctx, const char *id, pid_t **pids,
                     size_t *n, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  brig_cgroup *cg = NULL;
  int r;

  *pids = NULL;
  *n = 0;
  r = brig_container_load (ctx, id, BRIG_LOCK_SHARED, &c, err);
  if (r < 0)
    return r;
  /* The record knows the processes of a shared cgroup that are not ours. */
  r = brig_container_cgroup (c, &cg, err);
  if (r < 0)
    return r;
  /* No cgroup recorded (a create that died early): no processes. */
  if (cg == NULL)
    return 0;
  r = brig_cgroup_pids (cg, pids, n, err);
  brig_cgroup_free (cg);
  if (r == -ENOENT)
    {
      /* The cgroup is gone with the container's last process. */
      brig_error_clear (err);
      return 0;
    }
  if (r < 0)
    return r;
  if (*n > 1)
    qsort (*pids, *n, sizeof **pids, brig_cmp_pid);
  return 0;
}
