/* brig fork SOURCE NEW...: new containers from a running one's config and
 * a copy of its ephemeral layer, taken while it is frozen (docs/sandbox.md
 * "Forks"). */
#ifndef BRIG_SANDBOX_FORK_H
#define BRIG_SANDBOX_FORK_H

#include <stddef.h>

#include "context.h"
#include "error.h"

struct brig_container;

/* SOURCE's record that a fork froze it: "PID STARTTIME\n" of the fork. */
#define BRIG_FORK_FREEZING "fork.freezing"

/* Make each of ids[0..n) a container (status created) from source's saved
 * config and a copy of its ephemeral layer's upper directory, taken while
 * source is frozen (thawed again before this returns, also on failure).
 * All or nothing: on failure no new container is left. Phases (ms) go to
 * the debug log. */
int brig_fork (const struct brig_context *ctx, const char *source, char *const *ids, size_t n,
               brig_error *err);

/* The lock of c was taken: a fork that froze it and died is undone (thaw,
 * marker removed). One faccessat when there is nothing to do. */
void brig_fork_recover_freeze (const struct brig_context *ctx, struct brig_container *c);

#endif
