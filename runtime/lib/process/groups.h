/* The annotation run.oci.keep_original_groups (crun's; podman's
 * `--group-add keep-groups` sets it): the container's process keeps the
 * supplementary groups of the brig process that made it, instead of
 * process.user.additionalGids alone (or none).
 *
 * Safe where the groups stay what they were: no user namespace of the
 * container's own, or one whose gid mapping maps every kept group (each
 * then shows under its container id), and in rootless mode, where the
 * kernel keeps them anyway (setgroups is denied in a namespace brig maps
 * itself). A kept group that the container's user namespace does not map
 * would still grant its host rights while showing as the overflow gid
 * (65534), which no one in the container can tell from nogroup: that is
 * refused, and so is a joined user namespace, whose mapping brig cannot
 * read before it is in it. docs/brig.8.md, ANNOTATIONS. */
#ifndef BRIG_GROUPS_H
#define BRIG_GROUPS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

#define BRIG_KEEP_GROUPS_ANNOTATION "run.oci.keep_original_groups"

/* The annotation's value: *keep is true for "1" or "true", false when it is
 * absent, "0" or "false"; any other value is an error naming it. */
int brig_keep_groups_parse (const oci_map *annotations, bool *keep, brig_error *err);

/* Refuse keeping the caller's groups where that is unsafe (see above).
 * gid_map: the container's user namespace's gid mapping in brig's view
 * ("inside outside count" lines, as /proc/PID/gid_map), NULL when the
 * container shares brig's user namespace. Call in brig, before the clone. */
int brig_keep_groups_check (const char *gid_map, brig_error *err);

/* brig_keep_groups_check for a process entering the namespaces of pid
 * (exec): pid's gid_map when its user namespace is not brig's. */
int brig_keep_groups_check_pid (pid_t pid, brig_error *err);

/* The gid_map text of a new user namespace's linux.gidMappings (malloc'd). */
char *brig_keep_groups_map_text (const oci_linux *lx);

/* In the process, before the gid change: keep the groups it has, adding
 * process.user.additionalGids to them (setgroups only then). */
int brig_keep_groups_apply (const oci_user *u, brig_error *err);

#endif
