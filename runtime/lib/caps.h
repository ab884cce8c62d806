/* Capabilities (libcap): bounding, effective, permitted, inheritable, ambient. */
#ifndef BRIG_CAPS_H
#define BRIG_CAPS_H

#include "error.h"
#include "ocispec.h"

/* Before the uid/gid change: keep capabilities across setuid and drop from
 * the bounding set everything not in caps->bounding. caps may be NULL
 * (nothing is kept). Unknown names are warned about and skipped. */
int brig_caps_prepare (const oci_capabilities *caps, brig_error *err);

/* After the uid/gid change: set effective, permitted, inheritable and
 * ambient exactly as listed. */
int brig_caps_apply (const oci_capabilities *caps, brig_error *err);

#endif
