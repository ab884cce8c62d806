/* Seccomp: the linux.seccomp object compiled with libseccomp into BPF.
 *
 * The profile is validated and compiled in the parent (brig_seccomp_prepare,
 * before clone) and cached under --root; the container init only hands the
 * ready BPF program to seccomp(2) (brig_seccomp_load), so it does no
 * libseccomp work and allocates nothing. */
/* runtime/lib is on the include path, so <seccomp.h> finds this file
 * before libseccomp's: hand that name through to libseccomp's header. */
#ifndef _SECCOMP_H
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winclude-next-absolute-path"
#endif
#include_next <seccomp.h>
#ifdef __clang__
#pragma clang diagnostic pop
#endif
#endif

#ifndef BRIG_SECCOMP_H
#define BRIG_SECCOMP_H

#include <stdbool.h>
#include <sys/types.h>

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
 * fd (else -1). Without no_new_privs the caller must still hold
 * CAP_SYS_ADMIN (in its user namespace), or the kernel refuses (EACCES). */
int brig_seccomp_load (brig_seccomp *sc, int *notify_fd, brig_error *err);

/* Whether the profile notifies sendmsg: the listener fd then goes to brig
 * by number (process/handshake.c, brig_hs_seccomp_send). */
bool brig_seccomp_notifies_sendmsg (const brig_seccomp *sc);

/* How long brig waits, once the agent has the listener fd, for the
 * process to get through its remaining setup (READY, then execve), whose
 * syscalls the agent may have to answer. An agent that holds the fd and
 * never answers would otherwise keep brig waiting, with the container's
 * lock held, for ever. */
#define BRIG_SECCOMP_AGENT_TIMEOUT_MS 15000

/* Wait (BRIG_SECCOMP_AGENT_TIMEOUT_MS at most) for the next message or EOF
 * from the process on sock; the error names listenerPath. */
int brig_seccomp_await_process (int sock, const oci_seccomp *s, brig_error *err);

/* Send the notify fd and the container state JSON to listenerPath as
 * config-linux.md describes (called by the runtime, not the container).
 * The process pid is taken from the state's "pid". */
int brig_seccomp_send_notify (const oci_seccomp *s, int notify_fd,
                              const char *state_json, brig_error *err);

/* As brig_seccomp_send_notify, for a process whose pid is not the state's
 * (brig exec): pid is the process the notify fd belongs to. */
int brig_seccomp_send_notify_pid (const oci_seccomp *s, int notify_fd, pid_t pid,
                                  const char *state_json, brig_error *err);

void brig_seccomp_free (brig_seccomp *sc);

/* True when the compiled profile uses SCMP_ACT_NOTIFY (the init must pass
 * the listener fd from brig_seccomp_load to the parent). */
bool brig_seccomp_uses_notify (const brig_seccomp *sc);

/* The cache directory for compiled filters under a state root (malloc'd):
 * <root>/@seccomp-cache. '@' is not allowed in container ids, so no
 * container can collide with it and `list` never shows it. */
char *brig_seccomp_cache_dir (const char *state_root);

/* Fill the seccomp part of the features document: actions, operators,
 * archs this libseccomp knows, knownFlags and the kernel's supportedFlags. */
void brig_seccomp_features (oci_feat_seccomp *out);

/* brig's hardened default profile for `brig spec` (seccomp/profile.c). */
oci_seccomp *brig_seccomp_default_profile (void);

#endif
