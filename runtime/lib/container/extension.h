/* The named points of the container lifecycle where an extension may act.
 *
 * The core (create, run, exec, update, delete, restore, state) knows of no
 * extension: it calls these hooks, through the one registered table, at the
 * points named below, and shows them what it has made so far. brig's sandbox
 * layer (runtime/lib/sandbox/extension.c) is the one extension; runtime/brig.c
 * registers it before any command runs. A hook that is NULL, or a table that
 * is not registered, is the plain runtime: nothing is called and nothing of it
 * costs a syscall. docs/architecture.md "Extension points" says when each is
 * called and what it may do. */
#ifndef BRIG_CONTAINER_EXTENSION_H
#define BRIG_CONTAINER_EXTENSION_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "context.h"
#include "error.h"
#include "namespaces.h"
#include "ocispec.h"
#include "rootfs/rootfs.h"

/* The extension's own record of one create (or reset's respawn), and of a
 * container in its state (kept in state.json beside the core's fields).
 * Opaque to the core, which only hands them back. */
struct brig_ext_create;
struct brig_ext_state;
/* ... and of one exec. */
struct brig_ext_exec;
/* A loaded container (container/state.h). */
struct brig_container;

/* What the core shows an extension of a create, filled as it goes. */
struct brig_ext_create_info {
  const struct brig_context *ctx;
  const char *id;
  oci_config *cfg;                /* the config, checked by the core */
  const char *bundle;             /* absolute */
  const char *rootfs;             /* absolute host path of root.path */
  const struct brig_ns_plan *ns;  /* the namespaces it makes and joins */
  bool rootless;
  bool reset;                     /* brig reset's respawn: the saved config, the
                                     state directory and cgroup exist already */
  bool shared_cgroup;             /* run.brig.cgroup.shared=true */
  int dirfd;                      /* the state directory, or -1 before the claim */
  brig_cgroup *cg;                /* the cgroup once made, else NULL */
  pid_t pid;                      /* the init once it exists, else 0 */
};

struct brig_extension {
  /* ---- create and run (and brig reset's respawn, info->reset) ---- */

  /* The config passed the core's checks; nothing exists yet. May parse its
   * annotations, refuse the config (an error naming the field), and keep
   * what it decided in *rec (freed by create_free). */
  int (*create_validate) (const struct brig_ext_create_info *info, struct brig_ext_create **rec,
                          brig_error *err);
  /* The cgroup's sharing is known; the last refusal before the state
   * directory is claimed. */
  int (*create_check) (const struct brig_ext_create_info *info, struct brig_ext_create *rec,
                       brig_error *err);
  /* The state directory is claimed (info->dirfd), no cgroup yet: may take
   * what it records there (freed by state_remove at delete) and change the
   * config's id mappings. */
  int (*create_claimed) (const struct brig_ext_create_info *info, struct brig_ext_create *rec,
                         brig_error *err);
  /* The cgroup exists (info->cg) and holds no process of the container
   * yet: may attach what filters the container's processes. */
  int (*create_cgroup) (const struct brig_ext_create_info *info, struct brig_ext_create *rec,
                        brig_error *err);
  /* Before the clone: how the init makes its root in place of root.path's
   * self-bind: a detached tree it attaches (*tree, else left -1), and a layer
   * it mounts over the rootfs (layer, else left empty), called in the init. */
  int (*create_rootfs) (const struct brig_ext_create_info *info, struct brig_ext_create *rec,
                        int *tree, struct brig_root_layer *layer, brig_error *err);
  /* The extension's part of the new state; old: the state before (reset),
   * whose parts it may keep. NULL: nothing to record. */
  struct brig_ext_state *(*create_state) (const struct brig_ext_create_info *info,
                                          struct brig_ext_create *rec,
                                          struct brig_ext_state *old);
  /* The init exists (info->pid) and waits for start; best effort. */
  void (*create_started) (const struct brig_ext_create_info *info, struct brig_ext_create *rec);
  /* Free what create_validate kept. */
  void (*create_free) (struct brig_ext_create *rec);

  /* ---- the state store ---- */

  /* state.json: lend its fields to the document written (save), take them
   * from the document read (load, NULL: nothing of it there), add them to
   * `brig state`'s output (show; s may be NULL, dirfd: the state
   * directory), free them. */
  void (*state_save) (const struct brig_ext_state *s, oci_brig_state *out);
  struct brig_ext_state *(*state_load) (oci_brig_state *in);
  void (*state_show) (const struct brig_ext_state *s, int dirfd, oci_state *out);
  void (*state_free) (struct brig_ext_state *s);
  /* delete, before the state directory goes: release what create_claimed
   * took (every process of the container is dead by now). */
  int (*state_remove) (const struct brig_context *ctx, const char *id, int dirfd,
                       brig_error *err);

  /* ---- the running container ---- */

  /* exec, once the container's config is read (exec_begin: before the
   * process is loaded) and once the process to run is known (exec_check);
   * either may refuse. process_path: --process FILE, or NULL. */
  int (*exec_begin) (const struct brig_context *ctx, const oci_config *cfg,
                     struct brig_ext_exec **rec, brig_error *err);
  int (*exec_check) (struct brig_ext_exec *rec, const struct brig_ext_state *st, pid_t init,
                     bool new_pidns, const oci_config *cfg, const oci_process *p,
                     const char *process_path, brig_error *err);
  void (*exec_free) (struct brig_ext_exec *rec);
  /* exec, under the lock after the tenancy check, once the process to run
   * is built: p (the exec's own copy; from_file: --process FILE; keep:
   * exec's --env entries, which win) may gain environment entries, or be
   * refused (a pool claim's --env and mounts, sandbox/claim.c). dirfd: the
   * container's state directory. */
  int (*exec_tenant) (int dirfd, oci_process *p, bool from_file, char *const *keep,
                      brig_error *err);
  /* update, before the resources are applied; may refuse. */
  int (*update_check) (const struct brig_context *ctx, const oci_config *cfg,
                       const oci_resources *res, brig_error *err);
  /* restore: the bundle is read (restore_begin), and criu is about to be
   * set up (restore_check); either may refuse. */
  int (*restore_begin) (const struct brig_context *ctx, const oci_config *cfg, const char *dir,
                        brig_error *err);
  int (*restore_check) (const oci_config *cfg, brig_error *err);

  /* ---- any command that locks a container ---- */

  /* The container's lock was taken (exclusive or shared) and its state
   * read: may undo what a command that died under the lock left (brig
   * fork's freeze). */
  void (*lock_taken) (const struct brig_context *ctx, struct brig_container *c);
};

/* The registered extension, or NULL (the plain runtime). */
extern const struct brig_extension *brig_ext;

/* Register ext (once, before any command runs; NULL: none). */
void brig_extension_register (const struct brig_extension *ext);

/* The hook `name` of the registered extension, or NULL. */
#define BRIG_EXT_HOOK(name) (brig_ext ? brig_ext->name : NULL)

#endif
