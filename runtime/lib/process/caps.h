/* Capabilities (libcap): bounding, effective, permitted, inheritable, ambient. */
#ifndef BRIG_CAPS_H
#define BRIG_CAPS_H

#include <stdbool.h>
#include <stddef.h>

#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

/* Before the uid/gid change to uid: drop from the bounding set everything
 * not in caps->bounding, and keep capabilities across setuid when uid is
 * not 0 (a change to 0 clears nothing). caps may be NULL (nothing is kept).
 * Unknown names are skipped, with a warning when warn is true (not where the
 * parent's brig_caps_check warned already: once is enough). */
int brig_caps_prepare (const oci_capabilities *caps, uid_t uid, bool warn, brig_error *err);

/* After the uid/gid change: set effective, permitted, inheritable and
 * ambient exactly as listed. */
int brig_caps_apply (const oci_capabilities *caps, brig_error *err);

/* Log a warning for every capability name in caps that libcap or the
 * running kernel does not know (for the parent's config check; the init's
 * brig_caps_prepare then stays quiet). */
void brig_caps_check (const oci_capabilities *caps);

/* The capability names ("CAP_CHOWN", ...) that both libcap and the running
 * kernel know, in number order; a malloc'd NULL-terminated vector. */
char **brig_caps_known (size_t *n);

/* The highest capability number the running kernel knows
 * (/proc/sys/kernel/cap_last_cap). */
int brig_caps_last_cap (void);

#endif
