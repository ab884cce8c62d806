/* brig pool: warm containers created ahead from one bundle, claimed
 * (started) in one step, reset and put back on release (docs/sandbox.md
 * "Pools").
 *
 *   ROOT/@pools/NAME/            one directory per pool ('@': never a
 *                                container id, so list skips it); flock:
 *                                shared by fill, claim, release and status,
 *                                exclusive by drain
 *   ROOT/@pools/NAME/bundle      the bundle's absolute path (first fill)
 *   ROOT/@pools/NAME/{creating,available,claimed,releasing}/ID
 *                                one empty file per member, in exactly one
 *                                of the four: a member changes state by
 *                                renameat2(RENAME_NOREPLACE), so of many
 *                                claimers exactly one moves a given member
 *                                out of available/; fill holds creating/
 *                                locked exclusively (one fill at a time),
 *                                and each creating/ID by its maker
 *   ROOT/@pools/NAME/failures    one JSON line per failed release
 *
 * Members are ordinary containers under ROOT, ids NAME-<12 hex digits>. */
#ifndef BRIG_SANDBOX_POOL_H
#define BRIG_SANDBOX_POOL_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "error.h"
#include "sandbox/reset.h"

#define BRIG_POOL_DIR "@pools"

enum brig_pool_state {
  BRIG_POOL_CREATING,
  BRIG_POOL_AVAILABLE,
  BRIG_POOL_CLAIMED,
  BRIG_POOL_RELEASING,
  BRIG_POOL_NSTATES,
};

struct brig_pool_member {
  char *id;
  enum brig_pool_state state;
};

/* What status reads: the members sorted by id and the count per state. */
struct brig_pool_info {
  char *bundle;                 /* NULL when the record is missing */
  struct brig_pool_member *members;
  size_t n;
  size_t count[BRIG_POOL_NSTATES];
  size_t failures;              /* failed releases and replacements logged */
  char *last_failure;           /* the last one's JSON line, or NULL */
};

/* Check a pool name: a valid container id of at most 128 characters. */
int brig_pool_check_name (const char *name, brig_error *err);

/* "creating", "available", "claimed", "releasing". */
const char *brig_pool_state_name (enum brig_pool_state s);

/* Create members of pool name from bundle (NULL: the bundle of the first
 * fill) until size are available, each in a forked child that runs the
 * create code path. *made (may be NULL) receives the new ids (NULL-
 * terminated, also on failure: those exist and are available). A member
 * that fails is deleted; fill stops there with err naming it. */
int brig_pool_fill (const struct brig_context *ctx, const char *name, const char *bundle,
                    size_t size, char ***made, brig_error *err);

struct brig_claim_opts;

/* Take one available member, start it and return its id (malloc'd) in *id.
 * Never hands out one member twice; an empty pool is -EAGAIN with
 * `pool "NAME" is empty`. o (may be NULL): the claim's options
 * (sandbox/claim.h), bound before the member's process runs; a refusal
 * before the bind consumes no member, a failure after it resets it. */
int brig_pool_claim (const struct brig_context *ctx, const char *name,
                     const struct brig_claim_opts *o, char **id, brig_error *err);

/* brig_pool_release of tenancy gen only (0: any): a member whose tenancy
 * is another is left as it is, -ESTALE (the keeper's release of a lease
 * the tenant ended first). */
int brig_pool_release_gen (const struct brig_context *ctx, const char *id,
                           unsigned long long gen, struct brig_reset_report *rep,
                           brig_error *err);

/* pool renew: member id's lease ends seconds (a decimal) from now. */
int brig_pool_renew (const struct brig_context *ctx, const char *id, const char *seconds,
                     brig_error *err);

/* Reset claimed member id (sandbox/reset.h) and make it available again;
 * when the reset fails, delete the member, log why (status's failures) and
 * make a new member in its place (the release still fails). rep is filled whenever the reset
 * ran (free it with brig_reset_report_free). */
int brig_pool_release (const struct brig_context *ctx, const char *id,
                       struct brig_reset_report *rep, brig_error *err);

/* Read the members of pool name and their pool states. */
int brig_pool_status (const struct brig_context *ctx, const char *name,
                      struct brig_pool_info *info, brig_error *err);

/* Free what info holds (not info itself). */
void brig_pool_info_clear (struct brig_pool_info *info);

/* Delete every member (force) and the pool; waits for claims, releases and
 * fills in progress. On failure the pool stays, with what is left.
 * *deleted: how many members were deleted (also on failure). */
int brig_pool_drain (const struct brig_context *ctx, const char *name, size_t *deleted,
                     brig_error *err);

#endif
