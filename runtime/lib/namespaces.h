/* Linux namespaces: the linux.namespaces list turned into clone/unshare
 * flags and namespace fds to join, in the order the kernel needs: the paths
 * are all opened first (a joined mount namespace would hide the others), the
 * user namespace is joined before the rest (the others are then owned by
 * it), pid and time only affect children. */
#ifndef BRIG_NAMESPACES_H
#define BRIG_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

enum brig_ns_type {
  BRIG_NS_USER, BRIG_NS_MNT, BRIG_NS_PID, BRIG_NS_NET, BRIG_NS_IPC, BRIG_NS_UTS,
  BRIG_NS_CGROUP, BRIG_NS_TIME, BRIG_NS_COUNT,
};

/* The namespaces of one container, resolved from the config. */
struct brig_ns_plan {
  unsigned long new_flags;          /* CLONE_NEW* to create */
  int join_fd[BRIG_NS_COUNT];       /* fd to setns for joined ones, else -1 */
  bool joined_any;                  /* at least one path given */
};

/* Config type name ("pid", "network", "mount", ...) to enum; -1 if unknown. */
int brig_ns_from_name (const char *name);

/* CLONE_NEW* flag of a type. */
unsigned long brig_ns_flag (enum brig_ns_type t);

/* The /proc/PID/ns/ entry name of a type ("pid", "net", "mnt", ...). */
const char *brig_ns_proc_name (enum brig_ns_type t);

/* Validate linux.namespaces (known types, no duplicates, paths that are
 * namespaces of the right type) and open the paths. Errors name the entry. */
int brig_ns_plan_build (const oci_linux *lx, struct brig_ns_plan *plan, brig_error *err);

/* Open a linux.namespaces path the way create joins it: O_PATH following
 * every symlink (the kernel's answer, not the spelling), accepted only on
 * nsfs, then reopened through its fd for setns. *type: what it really is.
 * 0, -EINVAL when it is not a namespace, or -errno. */
int brig_ns_open_path (const char *path, int *fd, int *type);

/* Whether the namespace fd (of type t) is the host's: brig's own, the
 * kernel's initial one (by its fixed inode number) or pid 1's. 1 or 0 with
 * why saying which ("pid 1's, net:[4026531833]", or just the inode), or
 * -errno when it cannot be told. */
int brig_ns_is_host (int fd, enum brig_ns_type t, char *why, size_t size);

/* brig_ns_is_host for a decision: true when the namespace fd is the host's
 * or cannot be told (fail closed). */
bool brig_ns_judged_host (int fd, enum brig_ns_type t);

/* Close the join fds. */
void brig_ns_plan_clear (struct brig_ns_plan *plan);

/* setns every fd in fds[BRIG_NS_COUNT] (entries -1 skipped), user first,
 * mount last; pid and time take effect for children only. */
int brig_ns_join (const int fds[BRIG_NS_COUNT], brig_error *err);

/* Open /proc/PID/ns/X for every namespace in which pid differs from the
 * calling process (what `exec` joins); fds[t] = -1 for shared ones. */
int brig_ns_open_process (pid_t pid, int fds[BRIG_NS_COUNT], brig_error *err);

/* m[n] is what the kernel takes in a uid_map or gid_map: at most 340
 * lines, each of size >= 1 with both ranges inside 0..4294967294 (the
 * kernel's (u32) -1 is "no id"), no two sharing an id on either side;
 * field names the list in errors ("linux.uidMappings"). */
int brig_ns_validate_id_mapping (const oci_id_mapping *m, size_t n, const char *field,
                                 brig_error *err);

/* brig_ns_validate_id_mapping for linux.uidMappings and linux.gidMappings. */
int brig_ns_validate_id_maps (const oci_linux *lx, brig_error *err);

/* Write /proc/PID/uid_map and gid_map from the mappings (after "deny" to
 * setgroups when the caller is not root in the initial user namespace). */
int brig_ns_write_id_maps (pid_t pid, const oci_linux *lx, brig_error *err);

/* Write /proc/self/timens_offsets from linux.timeOffsets (after
 * unshare(CLONE_NEWTIME), before the first child). */
int brig_ns_write_time_offsets (const oci_linux *lx, brig_error *err);

#endif
