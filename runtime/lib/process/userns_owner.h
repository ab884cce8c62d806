/* Who owns a container's user namespace, and its per-namespace limits.
 *
 * The kernel charges the per-user counts of a process in a user namespace
 * (inotify instances and watches, POSIX message queue bytes, namespaces,
 * pending signals, locked memory) to its uid there and, walking up, to the
 * namespace's owner in the parent namespace: the euid of the process that
 * created it. Made by brig running as host root, every container's counts
 * were host root's, and one tenant at a limit blocked host root and every
 * other container. So the process that makes the user namespace takes
 * container root's host uid as its euid for that one step (docs/security.md,
 * "Per-user kernel limits"). */
#ifndef BRIG_USERNS_OWNER_H
#define BRIG_USERNS_OWNER_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/capability.h>

#include "error.h"
#include "ocispec.h"

/* The host uid to own a new user namespace of lx: container root's, else
 * the first mapping's; 0 (brig's own euid) when there is none or brig is
 * not root. */
uid_t brig_userns_owner (const oci_linux *lx);

/* What brig_userns_creator_enter changed, for brig_userns_creator_leave. */
struct brig_userns_creator {
  bool active;
  struct __user_cap_data_struct caps[2];
};

/* In brig (euid 0): take owner as euid (real and saved uid stay 0, so brig
 * gets back its own), fsuid 0 for CLONE_INTO_CGROUP's check on root's
 * cgroup directory. No-op for owner 0. */
int brig_userns_creator_enter (struct brig_userns_creator *s, uid_t owner, brig_error *err);

/* Back to euid 0 and the effective capabilities brig had; aborts when that
 * fails (brig must not go on as someone else). */
void brig_userns_creator_leave (struct brig_userns_creator *s);

/* In a process about to unshare a user namespace, which never returns to
 * host privilege: euid and fsuid owner. No-op for owner 0. */
int brig_userns_creator_become (uid_t owner, brig_error *err);

/* Inside a user namespace brig just made, as its root: write the
 * per-namespace limits of /proc/sys/user (brig's values, see the .c). */
int brig_userns_write_limits (brig_error *err);

#endif
