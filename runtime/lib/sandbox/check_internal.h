/* Shared between check.c (engine, reports, policy) and check_rules.c. */
#ifndef BRIG_SANDBOX_CHECK_INTERNAL_H
#define BRIG_SANDBOX_CHECK_INTERNAL_H

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

#endif
