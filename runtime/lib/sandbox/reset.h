/* brig reset: take a container that has run back to `created`, as if it had
 * just been created from its bundle, keeping what is costly and clean to
 * keep (cgroup, network namespace and egress policy, the validated config,
 * the compiled seccomp filter) and making new what a tenant can touch;
 * then verify that nothing of the previous tenant remains
 * (docs/sandbox.md "Reset"). */
#ifndef BRIG_SANDBOX_RESET_H
#define BRIG_SANDBOX_RESET_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "error.h"
#include "ocispec.h"

/* One verification: name (e.g. "cgroup.empty"), whether it held, and a
 * detail saying what was found when it did not (NULL when it held). */
struct brig_reset_check {
  char *name;
  bool ok;
  char *detail;
};

/* What a reset verified, in order. ok is true only when every check held. */
struct brig_reset_report {
  struct brig_reset_check *checks;
  size_t n;
  bool ok;
};

/* flags of brig_container_reset: leave the container vacant (an available
 * pool member that no exec may enter until a claim), not its caller's. */
#define BRIG_RESET_VACATE 1u

/* Reset container id (running, stopped or created) under ctx->state_root
 * and verify it. Returns 0 when the container is `created` again and every
 * check held; otherwise a negative errno with err set, and the container
 * is left unusable (never half reset, also when killed: its tenancy says
 * resetting until a reset completes). rep is filled whenever checks ran,
 * also on failure; free it with brig_reset_report_free. */
int brig_container_reset (const struct brig_context *ctx, const char *id, unsigned flags,
                          struct brig_reset_report *rep, brig_error *err);

/* Refuse (by the field's name) a config whose storage keeps what a tenant
 * writes across a reset: a writable root without the ephemeral layer, a
 * writable bind or disk mount. */
int brig_reset_check_storage (const oci_config *cfg, brig_error *err);

/* Free what a report holds (not rep itself). */
void brig_reset_report_free (struct brig_reset_report *rep);

#endif
