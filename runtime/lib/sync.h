/* The channel between brig and the processes it starts in a container: one
 * SOCK_SEQPACKET socketpair, one message per packet ({type, code, len} +
 * data, optionally one fd with SCM_RIGHTS). Errors of the child travel as
 * BRIG_SYNC_ERROR messages and become the error verbatim. What the
 * messages are and who sends which: process/handshake.h. */
#ifndef BRIG_SYNC_H
#define BRIG_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* The one message type of the transport itself: an error (code: errno,
 * data: message) that ends any exchange. The handshake's messages are
 * process/handshake.h's. */
enum { BRIG_SYNC_ERROR = 1 };


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
