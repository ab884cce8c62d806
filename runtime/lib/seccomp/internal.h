/* Shared between the seccomp modules; not part of libbrig's interface. */
#ifndef BRIG_SECCOMP_INTERNAL_H
#define BRIG_SECCOMP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ocispec.h"

struct brig_seccomp {
  void *bpf;              /* struct sock_filter[], bpf_len bytes */
  size_t bpf_len;
  unsigned long flags;    /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
  bool notify;            /* some rule uses SCMP_ACT_NOTIFY */
  bool handover_write;    /* sendmsg is notified: hand the listener fd over
                             by number with write(2) (seccomp/notify.c) */
};

/* The canonical text of a profile plus everything else that changes the
 * compiled BPF (libseccomp version, API level, native arch). Two profiles
 * compile to the same program iff their keys are equal. */
char *brig_seccomp_cache_key (const oci_seccomp *s, size_t *len);

/* Look the key up in cache_dir; on a hit *bpf / *bpf_len receive the
 * program. Returns 1 on a hit, 0 on a miss (never an error: a broken
 * cache only costs a compilation). */
int brig_seccomp_cache_get (const char *cache_dir, const char *key, size_t key_len,
                            void **bpf, size_t *bpf_len);

/* Store the program under the key, atomically; failures are logged at
 * debug level and ignored. */
void brig_seccomp_cache_put (const char *cache_dir, const char *key, size_t key_len,
                             const void *bpf, size_t bpf_len);

#endif
