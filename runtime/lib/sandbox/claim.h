/* brig pool claim's options: what a tenant binds to a warm member before
 * its process runs (docs/sandbox.md "Pools": claim options, leases and the
 * keeper). An egress policy (the member's own tries rewritten), environment
 * (START message, and every exec of the claim), host directories bound
 * into the running member, a deadline (a lease the pool's keeper enforces)
 * and labels.
 *
 *   ROOT/ID/claim.json   what the claim binds (oci_claim), written (write +
 *                        rename, under the member's lock) before any of it
 *                        is applied; removed by a reset that completed.
 *
 * Everything a claim applies is undone by the reset of `pool release`: the
 * tries are rewritten from the saved config (and verified, egress.policy),
 * the mounts go with the old mount namespace (mounts.exact), the env was
 * only in the old tenant's processes. */
#ifndef BRIG_SANDBOX_CLAIM_H
#define BRIG_SANDBOX_CLAIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "error.h"
#include "ocispec.h"
#include "sandbox/reset.h"

#define BRIG_CLAIM_FILE "claim.json"

struct brig_container;

/* The options as given on the command line (NULL-terminated lists, or NULL). */
struct brig_claim_opts {
  char **annotations;   /* --annotation KEY=VALUE */
  char **env;           /* --env KEY=VALUE */
  char **mounts;        /* --mount SRC:DST[:ro] */
  char **labels;        /* --label KEY=VALUE */
  const char *deadline; /* --deadline SECONDS, or NULL */
};

struct brig_claim_mount {
  char *src, *dst;      /* as given (dst cleaned) */
  bool ro;
  int srcfd;            /* O_PATH of src, opened without following a symlink */
};

/* How far a claim's bind got (the pool undoes accordingly). */
enum brig_claim_stage {
  BRIG_CLAIM_NONE,      /* nothing looked at: the member was dead */
  BRIG_CLAIM_JUDGED,    /* refused before anything was applied */
  BRIG_CLAIM_APPLYING,  /* claim.json written: a reset undoes the rest */
  BRIG_CLAIM_BOUND,     /* everything applied */
};

/* A claim, checked (brig_claim_prepare) and bound (brig_claim_bind). */
struct brig_claim {
  const struct brig_context *ctx;
  const char *pool;
  oci_map *egress;                  /* the claim's run.brig.egress* keys */
  char **env;                       /* NULL-terminated */
  struct brig_claim_mount *mounts;
  size_t n_mounts;
  uint64_t deadline_ns;             /* CLOCK_BOOTTIME; 0: no lease */
  oci_map *labels;
  enum brig_claim_stage stage;
  bool bind_failed;                 /* the bind itself failed (not the start) */
  unsigned long long gen;           /* the tenancy the bind made */
};

/* Check every option (no member touched: a refusal consumes nothing):
 * errors name the option. *cl is filled (brig_claim_clear it). */
int brig_claim_prepare (const struct brig_context *ctx, const char *pool,
                        const struct brig_claim_opts *o, struct brig_claim *cl, brig_error *err);

/* Whether cl binds anything (a plain claim binds nothing). */
bool brig_claim_any (const struct brig_claim *cl);

/* The bind of brig_start_bind (container.h): judge (node policy,
 * capabilities), record claim.json, apply egress and mounts, write the
 * lease. data: the struct brig_claim. */
int brig_claim_bind (struct brig_container *c, unsigned long long gen, void *data,
                     brig_error *err);

/* Release what cl holds. */
void brig_claim_clear (struct brig_claim *cl);

/* The record of the container's current claim, or NULL. */
oci_claim *brig_claim_read (int dirfd);

/* The exec hook (extension.h exec_tenant): the claim's env into p (exec's
 * own --env, keep, and a --process file's entries win), and CAP_SYS_ADMIN
 * refused while the claim holds a read-only mount. */
int brig_claim_exec (int dirfd, oci_process *p, bool from_file, char *const *keep,
                     brig_error *err);

/* reset, with every process of the tenant dead: the claim's egress policy
 * replaced by the config's (create's pinned addresses, es), then the tries
 * verified against it (check egress.policy). */
void brig_claim_reset_egress (int dirfd, const oci_config *cfg, const oci_egress_state *es,
                              struct brig_reset_report *rep);

/* --deadline SECONDS (0.1 to 30 days): *ns, CLOCK_BOOTTIME; errors name
 * the option. */
int brig_claim_deadline (const char *seconds, uint64_t *ns, brig_error *err);

/* pool renew: the lease of claimed member id of pool ends seconds from
 * now (claim.json and the lease rewritten; the keeper re-arms). */
int brig_claim_renew (const struct brig_context *ctx, const char *pool, const char *id,
                      const char *seconds, brig_error *err);

/* What `brig state` shows as brig.egress while a claim's policy holds:
 * the member's annotations (annotations) with the claim's keys, their
 * addresses as pinned at the claim, in the pool's programs (pool); NULL
 * when the claim has no egress policy. */
oci_egress_state *brig_claim_egress_state (const oci_claim *rec, const oci_map *annotations,
                                           const oci_egress_state *pool);

/* reset completed: the claim is over. */
void brig_claim_forget (int dirfd);

/* Bind the tree of srcfd (O_PATH of a host directory) at dst inside the
 * mount namespace of the process init_pidfd, as root of its user
 * namespace; dst is resolved in the container's root without a symlink or
 * "..", its last component made when missing (claim_mount.c). */
int brig_claim_mount (int init_pidfd, int srcfd, const char *dst, bool ro, brig_error *err);

#endif
