/* Seccomp: the linux.seccomp object compiled with libseccomp into BPF. */
#ifndef BRIG_SECCOMP_H
#define BRIG_SECCOMP_H

#include <stdbool.h>

#include "error.h"
#include "ocispec.h"

typedef struct brig_seccomp brig_seccomp;

/* Validate and compile the profile (in the parent, before clone, so errors
 * surface early and leave nothing behind). cache_dir may be NULL; otherwise
 * the compiled BPF is cached there keyed by a hash of the profile. */
int brig_seccomp_prepare (const oci_seccomp *s, const char *cache_dir,
                          brig_seccomp **out, brig_error *err);

/* Load the filter into the calling thread: the last step before execve.
 * When the profile uses SCMP_ACT_NOTIFY, *notify_fd receives the listener
 * fd (else -1). */
int brig_seccomp_load (brig_seccomp *sc, int *notify_fd, brig_error *err);

/* Send the notify fd and the container state JSON to listenerPath as
 * config-linux.md describes (called by the runtime, not the container). */
int brig_seccomp_send_notify (const oci_seccomp *s, int notify_fd,
                              const char *state_json, brig_error *err);

void brig_seccomp_free (brig_seccomp *sc);

#endif
