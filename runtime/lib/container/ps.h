/* `ps`: the processes of a container, found through its cgroup. */
#ifndef BRIG_PS_H
#define BRIG_PS_H

#include <stddef.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"

/* The host pids of every process in container id's cgroup, sorted
 * (malloc'd; *n may be 0). A missing container fails with
 * `container "ID" does not exist`. */
int brig_container_pids (const struct brig_context *ctx, const char *id, pid_t **pids,
                         size_t *n, brig_error *err);

#endif
