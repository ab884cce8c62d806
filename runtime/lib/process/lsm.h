/* Linux security modules: AppArmor profiles and SELinux labels. */
#ifndef BRIG_LSM_H
#define BRIG_LSM_H

#include <stdbool.h>

#include "error.h"
#include "ocispec.h"

/* True when the running kernel has AppArmor enabled. */
bool brig_lsm_apparmor_enabled (void);

/* True when the running kernel has SELinux enabled (selinuxfs mounted). */
bool brig_lsm_selinux_enabled (void);

/* Check the labels in the config against the kernel (in the parent, before
 * clone): a label for an LSM the kernel lacks is an error, as with runc. */
int brig_lsm_validate (const oci_config *cfg, const oci_process *proc, brig_error *err);

/* Arrange for proc's apparmorProfile and selinuxLabel to take effect at
 * the next execve (/proc/thread-self/attr/...exec). Call in the init just
 * before seccomp; does nothing for labels that are not set. */
int brig_lsm_apply_exec_labels (const oci_process *proc, brig_error *err);

/* The mount data for a filesystem mounted with linux.mountLabel: data plus
 * context="label" (malloc'd), or a copy of data when label is NULL or
 * SELinux is off. data may be NULL. */
char *brig_lsm_mount_data (const char *data, const char *label);

#endif
