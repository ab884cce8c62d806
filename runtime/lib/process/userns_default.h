/* A new user namespace that config.json gives no mapping (crun runs it,
 * runc refuses it): brig maps the container's id 0 to its own euid and egid,
 * one id each, as `brig spec --rootless` writes, but never when that id is
 * root of brig's parent user namespace (the host's root, for a brig run as
 * root on the host). crun then maps container root to host root, which
 * gives the container's root every capability in a user namespace of its
 * own while every permission check on a host-owned file (/proc/sys, sysfs,
 * bind mounts) still sees host uid 0: less isolation than no user namespace
 * at all. Such a config is refused, naming the fields to add. */
#ifndef BRIG_USERNS_DEFAULT_H
#define BRIG_USERNS_DEFAULT_H

#include "error.h"
#include "ocispec.h"

/* Fill an empty lx->uidMappings (gidMappings) with "0 -> brig's euid
 * (egid), size 1"; -EPERM, naming the field, when that id is root of the
 * parent user namespace. Call for a new user namespace only. */
int brig_userns_default_maps (oci_linux *lx, brig_error *err);

#endif
