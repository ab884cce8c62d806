/* Cgroup managers: cgroupfs v1, v2, hybrid, systemd and disabled, behind one
 * interface. The mode is detected from the host; the manager and path used
 * are recorded in the container's state so later commands (delete --force
 * without --systemd-cgroup) find the same cgroup. */
#ifndef BRIG_CGROUP_H
#define BRIG_CGROUP_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

typedef struct brig_cgroup brig_cgroup;

struct brig_cgroup_config {
  const char *id;                   /* container id */
  const char *cgroups_path;         /* linux.cgroupsPath, may be NULL */
  const oci_resources *resources;   /* linux.resources, may be NULL */
  bool systemd;                     /* --systemd-cgroup */
  bool rootless;
  const oci_map *annotations;       /* config annotations (systemd props) */
};

/* Create the cgroup (all hierarchies) and apply resources. On failure
 * nothing is left behind. */
int brig_cgroup_create (const struct brig_cgroup_config *cfg, brig_cgroup **out,
                        brig_error *err);

/* An O_PATH|O_DIRECTORY fd of the v2 cgroup directory for clone3's
 * CLONE_INTO_CGROUP, or -1 when that cannot be used (v1, hybrid, systemd). */
int brig_cgroup_clone_fd (brig_cgroup *cg);

/* Move pid into the cgroup (every hierarchy). */
int brig_cgroup_enter (brig_cgroup *cg, pid_t pid, brig_error *err);

/* The manager name ("cgroupfs", "systemd", "disabled") and path to record in
 * the state; brig_cgroup_load rebuilds a handle from them. */
const char *brig_cgroup_manager_name (const brig_cgroup *cg);
const char *brig_cgroup_path (const brig_cgroup *cg);
int brig_cgroup_load (const char *manager, const char *path, brig_cgroup **out,
                      brig_error *err);

/* Remove the cgroup: thaw, kill leftovers when kill is true, retry EBUSY. */
int brig_cgroup_destroy (brig_cgroup *cg, bool kill, brig_error *err);

/* Free the handle (does not touch the cgroup). */
void brig_cgroup_free (brig_cgroup *cg);

/* Every pid in the cgroup (host pids), malloc'd array. */
int brig_cgroup_pids (brig_cgroup *cg, pid_t **pids, size_t *n, brig_error *err);

/* Signal every process in the cgroup (cgroup.kill on v2 for SIGKILL,
 * freeze-signal-thaw otherwise). */
int brig_cgroup_kill_all (brig_cgroup *cg, int sig, brig_error *err);

/* Freeze (true) or thaw (false), waiting until the state is reached. */
int brig_cgroup_freeze (brig_cgroup *cg, bool freeze, brig_error *err);

/* 1 when frozen, 0 when not, negative errno on error. */
int brig_cgroup_is_frozen (brig_cgroup *cg);

/* Apply new resources to an existing cgroup (brig update). */
int brig_cgroup_update (brig_cgroup *cg, const oci_resources *res, brig_error *err);

#endif
