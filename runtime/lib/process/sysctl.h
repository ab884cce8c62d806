/* linux.sysctl: which keys a container may set. /proc/sys is not one
 * namespace: most of it is the host's whatever namespaces the writer is
 * in. Only the sysctls of a namespace the container owns (ipc, net, uts)
 * are allowed, checked in the parent before anything exists. */
#ifndef BRIG_SYSCTL_H
#define BRIG_SYSCTL_H

#include "error.h"
#include "namespaces.h"
#include "ocispec.h"

/* The path below /proc/sys of a linux.sysctl key, in the sysctl.d(5)
 * spelling: "net.ipv4.ip_forward" and "net/ipv4/ip_forward" are the same
 * key (the first separator decides; with '.' first, '.' and '/' swap).
 * NULL for a malformed key: empty, "..", "." or empty components, a
 * leading or trailing separator. Returns a malloc'd string. */
char *brig_sysctl_path (const char *key);

/* Refuse every linux.sysctl key that would reach the host: ipc sysctls need
 * a new (or joined, not the host's) ipc namespace, net.* a network one,
 * kernel.domainname a uts one (and must agree with domainname);
 * kernel.hostname (it conflicts with the hostname field) and every other
 * key are refused. Errors name the key. */
int brig_sysctl_validate (const oci_config *cfg, const struct brig_ns_plan *ns, brig_error *err);

#endif
