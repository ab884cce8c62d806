/* The sandbox layer as the core sees it: the one extension
 * (container/extension.h) that runtime/brig.c registers. It acts at create
 * (the node policy, run.brig.egress, run.brig.rootfs.ephemeral,
 * run.brig.userns=auto, the reset pins), in the state store (its record in
 * state.json), at delete, exec, update and restore. */
#ifndef BRIG_SANDBOX_EXTENSION_H
#define BRIG_SANDBOX_EXTENSION_H

#include "container/extension.h"
#include "container/state.h"
#include "ocispec.h"

/* The sandbox's part of a container's state (the opaque record the state
 * store keeps for it): what create applied, each NULL when not asked for. */
struct brig_ext_state {
  oci_egress_state *egress;    /* the egress policy applied (sandbox/egress.h) */
  oci_rootfs_state *ephemeral; /* the ephemeral rootfs layer (sandbox/ephemeral.h) */
  oci_userns_state *userns;    /* run.brig.userns=auto's range (sandbox/userns_auto.h) */
};

/* The hooks, for brig_extension_register. */
extern const struct brig_extension brig_sandbox_extension;

/* The sandbox's record in a loaded container's state, or NULL. */
const struct brig_ext_state *brig_sandbox_state (const struct brig_state_file *st);

/* `brig features`: the sandbox layer's config annotations (docs/sandbox.md). */
void brig_sandbox_features (oci_features *f);

/* `brig spec --sandbox`: the config for untrusted code (spec_sandbox.h). */
struct brig_sandbox_spec_opts {
  bool rootless;        /* a user namespace mapping the caller to root */
  uint32_t userns_base; /* host id of container root (0: default) */
  bool ephemeral;       /* run.brig.rootfs.ephemeral=true, root writable */
};
int brig_sandbox_spec (const struct brig_sandbox_spec_opts *opts, oci_config **out,
                       brig_error *err);

#endif
