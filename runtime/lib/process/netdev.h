/* linux.netDevices (runtime-spec 1.3, config-linux.md "Network Devices"):
 * existing interfaces of brig's network namespace moved into the
 * container's over rtnetlink, renamed when asked, with their permanent
 * global addresses, and set up. delete never moves them back (the spec
 * forbids it): when the namespace dies the kernel returns physical devices
 * to the initial namespace and destroys virtual ones. */
#ifndef BRIG_NETDEV_H
#define BRIG_NETDEV_H

#include <sys/types.h>

#include "error.h"
#include "namespaces.h"
#include "ocispec.h"

/* What a create moved, so that a create failing later can give it back. */
typedef struct brig_netdevs brig_netdevs;

/* Check linux.netDevices without touching the system: interface names the
 * kernel accepts, no two devices under one name, and a network namespace
 * of the container's own (new, or joined and not brig's). */
int brig_netdev_validate (const oci_linux *lx, const struct brig_ns_plan *ns, brig_error *err);

/* Move every device into the network namespace of pid (the init, blocked
 * on the sync socket). On failure the ones already moved are given back;
 * on success *out records them for brig_netdev_undo. */
int brig_netdev_move (const oci_linux *lx, pid_t pid, brig_netdevs **out, brig_error *err);

/* Give the moved devices back to brig's network namespace under their host
 * names, with their addresses (a create that failed after the move). */
void brig_netdev_undo (brig_netdevs *nd);

/* Set lo up in the calling process's network namespace (a new one: runc
 * and crun do the same, and programs expect 127.0.0.1 to work). */
int brig_netdev_loopback_up (brig_error *err);

/* Release nd (NULL is fine); the devices stay where they are. */
void brig_netdev_free (brig_netdevs *nd);

#endif
