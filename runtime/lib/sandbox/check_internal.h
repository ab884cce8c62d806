/* Shared between check.c (engine, reports, policy), check_rules.c (the
 * rules) and check_judge.c (what names reach: namespace paths, addresses). */
#ifndef BRIG_SANDBOX_CHECK_INTERNAL_H
#define BRIG_SANDBOX_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/check.h"

/* Add a finding of rule (an entry of brig_check_rules) with severity sev,
 * unless the rule is above rep->profile. Takes path (malloc'd, freed when
 * the rule does not apply); the message is printf(fmt). */
void check_add (struct brig_check_report *rep, const struct brig_check_rule *rule,
                enum brig_check_severity sev, char *path, const char *fmt, ...)
  __attribute__ ((format (printf, 5, 6)));

/* Run every rule over cfg, adding to rep (check_rules.c). */
void check_run_rules (const oci_config *cfg, struct brig_check_report *rep);

/* Lexically normalise an absolute path into buf: no "//", ".", "..", no
 * trailing slash; /var/run is /run (check_rules.c). */
void check_path_norm (const char *in, char *buf, size_t size);

/* ---- check_mounts.c: mounts judged by the filesystem they put in the
 * container, wherever it is mounted and however it is spelt ---- */

/* The rules check_mounts.c adds findings of (entries of brig_check_rules). */
struct check_mount_rules {
  const struct brig_check_rule *procfs;      /* procfs-mount */
  const struct brig_check_rule *kernel_fs;   /* kernel-fs-mount */
  const struct brig_check_rule *block_dev;   /* block-device-mount */
};

/* True when m is a bind mount (type bind, or option bind / rbind). */
bool check_mount_is_bind (const oci_mount *m);

/* The host path the source of a bind names (a relative one lies in
 * rep->bundle, as the runtime-spec says); malloc'd. */
char *check_source_path (const struct brig_check_report *rep, const char *src);

/* Resolve the absolute path as the kernel's lookup would on this host,
 * into out: "//", ".", "..", trailing slashes and every symlink on the way
 * (".." after a symlink goes up from where it led); the part from the
 * first missing component on is taken as written. 0 or -errno. */
int check_resolve_path (const char *path, char *out, size_t size);

/* Every procfs outside /proc, every kernel-internal filesystem (debugfs,
 * tracefs, securityfs, bpf, configfs, efivarfs, binfmt_misc) and every
 * filesystem of a block device, mounted by type or bound from where the
 * host (or an earlier mount of the container) has one. */
void check_run_mount_rules (const oci_config *cfg, const struct check_mount_rules *rules,
                            struct brig_check_report *rep);
/* The rules check_judge.c adds findings of (entries of brig_check_rules). */
/* The rules, by index into brig_check_rules[] (check_table.c). */
enum {
  R_CAP_ADDED, R_CAP_NOT_DROPPED, R_CAP_ANY,
  R_NS_MOUNT, R_NS_PID, R_NS_NETWORK, R_NS_IPC, R_NS_UTS, R_NS_CGROUP,
  R_NO_USERNS, R_ROOT_USER,
  R_SECCOMP_UNCONFINED, R_SECCOMP_DENYLIST, R_NO_NEW_PRIVS, R_LSM_UNCONFINED,
  R_SENSITIVE_MOUNT, R_HOST_BIND_WRITABLE, R_PROPAGATION_SHARED,
  R_DEVICES_ALL, R_HOST_DEVICE, R_PROC_UNMASKED, R_KERNEL_FS_WRITABLE, R_SYSCTL_UNSAFE,
  R_ROOTFS_WRITABLE, R_NO_MEMORY_LIMIT, R_NO_PIDS_LIMIT, R_NO_CPU_LIMIT,
  R_EGRESS_UNSET,
  R_PROCFS_MOUNT, R_KERNEL_FS_MOUNT, R_BLOCK_DEVICE_MOUNT, R_SECCOMP_DEFAULT_PERMITS,
  R_NOT_CHECKED, R_EGRESS_ALLOW_METADATA, R_EGRESS_ALLOW_PRIVATE, R_EGRESS_ALLOW_POLICY,
  R_ROOTFS_OWNER_UNMAPPED,
  R_COUNT
};

extern const struct brig_check_rule *const check_rule_not_checked;
extern const struct brig_check_rule *const check_rule_allow_metadata;
extern const struct brig_check_rule *const check_rule_allow_private;
extern const struct brig_check_rule *const check_rule_allow_policy;

/* ---- check_judge.c ---- */

enum check_ns_verdict { CHECK_NS_OTHER, CHECK_NS_HOST, CHECK_NS_UNCHECKED };

/* What the linux.namespaces entry ns (with a path) joins, judged by the
 * namespace it opens (in->ns_fd's fd when create gives one): the host's,
 * another, or not judged; why says which namespace or why not. */
enum check_ns_verdict check_ns_judge (const oci_namespace *ns, const struct brig_check_input *in,
                                      char *why, size_t size);

enum check_cover { CHECK_COVER_NONE, CHECK_COVER_PRIVATE, CHECK_COVER_METADATA };

/* c with its translated IPv6 form unwrapped (IPv4-mapped, SIIT, NAT64
 * 64:ff9b::/96 and 64:ff9b:1::/48, 6to4, Teredo, IPv4-compatible): an IPv6
 * prefix deep enough inside one becomes the IPv4 prefix it names, else c. */
void check_addr_unwrap (const struct brig_egress_cidr *c, struct brig_egress_cidr *out);

/* The worst range the allow entry c overlaps, directly or through a
 * translated form: a metadata endpoint, or a private, shared, link-local,
 * multicast, reserved or (unless own_netns) loopback range; what names it. */
enum check_cover check_egress_covers (const struct brig_egress_cidr *c, bool own_netns,
                                      char *what, size_t size);

/* Whether the node policy's egress section admits the allow entry c. */
bool check_policy_admits (const struct brig_policy_egress *pe, const struct brig_egress_cidr *c,
                          bool own_netns);

/* The rule on run.brig.egress.allow (and, under a policy with an egress
 * section, on the mode): check_rule_allow_*. */
void check_rule_egress_allow (const oci_config *cfg, struct brig_check_report *rep);

#endif
