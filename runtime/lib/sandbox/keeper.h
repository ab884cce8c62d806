/* Leases of claimed pool members and the one keeper per pool that ends
 * them (docs/sandbox.md "Leases and the keeper").
 *
 *   ROOT/@pools/NAME/leases/ID  "GEN DEADLINE_NS\n" (CLOCK_BOOTTIME), write
 *                               + rename by claim --deadline and renew;
 *                               removed by release and by the keeper
 *   ROOT/@pools/NAME/keeper     flock'd (exclusive) by the running keeper,
 *                               which writes its pid there
 *
 * The keeper is a process forked by the first pool command that finds
 * leases and no keeper (no daemon the operator starts): it waits on a
 * timerfd (CLOCK_BOOTTIME, absolute, at the earliest deadline) and an
 * inotify watch of leases/; at a deadline it kills the member's init
 * through a pidfd (its pid namespace goes with it) and releases the
 * member as `pool release` does, for that tenancy generation only. It
 * exits once leases/ has been empty for 10 s. */
#ifndef BRIG_SANDBOX_KEEPER_H
#define BRIG_SANDBOX_KEEPER_H

#include <stdint.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"

/* Write the lease of member id of pool (tenancy gen, deadline in
 * CLOCK_BOOTTIME ns) and make sure a keeper runs. */
int brig_keeper_lease (const struct brig_context *ctx, const char *pool, const char *id,
                       unsigned long long gen, uint64_t deadline_ns, brig_error *err);

/* Remove member id's lease (release; best effort). */
void brig_keeper_unlease (const struct brig_context *ctx, const char *pool, const char *id);

/* Start a keeper for pool when it has leases and none runs (every pool
 * command: the backstop for a keeper that was killed). */
void brig_keeper_ensure (const struct brig_context *ctx, const char *pool);

/* The running keeper's pid, or 0. */
pid_t brig_keeper_pid (const struct brig_context *ctx, const char *pool);

/* Remove the keeper's file and the leases (drain: the members are gone). */
void brig_keeper_remove (int pooldirfd);

#endif
