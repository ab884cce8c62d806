/* The parent/child protocol of create: one SOCK_SEQPACKET socketpair, one
 * message per packet ({type, code, len} + data, optionally one fd with
 * SCM_RIGHTS). Errors of the child travel as SYNC_ERROR messages and become
 * the create error verbatim. */
#ifndef BRIG_SYNC_H
#define BRIG_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum brig_sync_type {
  BRIG_SYNC_USERNS = 1,   /* C->P: user ns unshared, write the id maps of pid */
  BRIG_SYNC_USERNS_DONE,  /* P->C: maps written */
  BRIG_SYNC_INIT_PID,     /* C->P: the init was forked; data: its pid (host) */
  BRIG_SYNC_GO,           /* P->C: cgroup joined, maps written: go on (sent
                             once more to a forked init, once its pid is
                             known) */
  BRIG_SYNC_HOOKS,        /* C->P: rootfs prepared: run prestart/createRuntime */
  BRIG_SYNC_HOOKS_DONE,   /* P->C: data: the state JSON for createContainer */
  BRIG_SYNC_READY,        /* C->P: set up, waiting to exec; fd: seccomp notify */
  BRIG_SYNC_ERROR,        /* C->P: code: errno, data: message */
  BRIG_SYNC_NETDEV,       /* C->P: network ns in place: move linux.netDevices */
  BRIG_SYNC_NETDEV_DONE,  /* P->C: moved */
  BRIG_SYNC_SECCOMP,      /* C->P: the seccomp listener fd, sent right after
                             the filter was loaded: fd in SCM_RIGHTS, or no
                             fd and code: its number (pidfd_getfd) */
  BRIG_SYNC_SECCOMP_DONE, /* P->C: the fd named by number was taken */
  BRIG_SYNC_MOUNT_SOURCE,    /* C->P: data: index of a mounts[] entry whose source the
                                init (in a user namespace) cannot reach: open it */
  BRIG_SYNC_MOUNT_SOURCE_FD, /* P->C: fd: O_PATH fd of that source; or code: errno,
                                data: message */
  BRIG_SYNC_JOINED,       /* C->P (exec's C1): C2 joined its v1 cgroups itself */
  BRIG_SYNC_HANDOVER,     /* P->C: the record names the init (its init line is
                             written): it may outlive the parent from now on.
                             Sent unasked; the init takes it wherever it
                             arrives, and waits for it before it becomes the
                             process (init.c) */
};

struct brig_sync_msg {
  uint32_t type;
  int32_t code;
  char *data;     /* malloc'd, NUL-terminated (len bytes before the NUL) */
  size_t len;
  int fd;         /* received fd or -1 */
};

/* Send one message (data may be NULL; fd < 0: none). 0 or -errno. */
int brig_sync_send (int sock, uint32_t type, int32_t code, const void *data, size_t len,
                    int fd);

/* Send a message of only {type, code} with one write(2): for the moment
 * right after a seccomp filter was loaded that notifies sendmsg. */
int brig_sync_send_plain (int sock, uint32_t type, int32_t code);

/* Wait up to timeout_ms for a message (or EOF) on sock: 0, or -ETIMEDOUT. */
int brig_sync_wait (int sock, int timeout_ms);

/* Send a SYNC_ERROR with err's message and code. */
void brig_sync_send_error (int sock, const brig_error *err);

/* Receive one message; EOF is -EPIPE. */
int brig_sync_recv (int sock, struct brig_sync_msg *msg);

/* Receive a message of the given type. A SYNC_ERROR becomes the error (its
 * message verbatim); EOF is "container init exited" and returns -EPIPE. */
int brig_sync_expect (int sock, uint32_t type, struct brig_sync_msg *msg, brig_error *err);

/* What brig_sync_expect does with a message brig_sync_recv returned r for:
 * the same errors, for callers that look at the message type first. */
int brig_sync_check (int r, uint32_t type, struct brig_sync_msg *msg, brig_error *err);

/* Free msg's data and close its fd. */
void brig_sync_msg_clear (struct brig_sync_msg *msg);

#endif
