/* sd_notify for containers (NOTIFY_SOCKET), the way runc does it.
 *
 * An engine that runs a container under a Type=notify unit (podman
 * --sdnotify=container, Quadlet) passes NOTIFY_SOCKET to the runtime. Then:
 *   create  makes ROOT/ID/notify, bound read-only (nosuid, nodev, noexec) at
 *           /run/notify in the container, and sets
 *           NOTIFY_SOCKET=/run/notify/notify.sock for the container process;
 *   start   (or run) binds ROOT/ID/notify/notify.sock before the process
 *           starts, then relays what the container sends to the caller's
 *           NOTIFY_SOCKET until READY=1, adding MAINPID: the container's init
 *           for start and run --detach, brig itself for a foreground run
 *           (it stays the unit's process and exits with the container).
 * Only state keys pass (READY, STATUS, ERRNO, ...): a container cannot name
 * another MAINPID, change NotifyAccess or hand fds to the host's manager.
 * No helper process: the relay ends at READY=1 or when the init exits. */
#ifndef BRIG_NOTIFY_H
#define BRIG_NOTIFY_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "error.h"
#include "ocispec.h"

/* The socket's directory inside the state directory and in the container. */
#define BRIG_NOTIFY_DIR "notify"
#define BRIG_NOTIFY_CONTAINER_DIR "/run/notify"
#define BRIG_NOTIFY_CONTAINER_SOCKET "/run/notify/notify.sock"

/* A bound container socket and the connected host socket (-1: none). */
struct brig_notify {
  int fd;
  int host_fd;
  /* The host's socket was not there yet at open (crun runs the container
   * anyway): host_fd is connected before each datagram until it is, and
   * what comes before is dropped. */
  bool host_pending;
  struct sockaddr_un host_addr;
  socklen_t host_len;
};

/* Check a NOTIFY_SOCKET value: an absolute path or "@abstract" that fits a
 * sockaddr_un; the error names NOTIFY_SOCKET. */
int brig_notify_check_host (const char *host, brig_error *err);

/* At create: make ROOT/ID/notify (dirfd is ROOT/ID) and add its bind mount
 * and NOTIFY_SOCKET to cfg (nothing when cfg has no process). */
int brig_notify_setup (int dirfd, oci_config *cfg, brig_error *err);

/* Bind ROOT/ID/notify/notify.sock and connect to host (a host socket that
 * does not exist yet, or has no reader yet, is connected to once it is
 * there: the container is not held up for it). n->fd stays -1 when the
 * container was created without NOTIFY_SOCKET. */
int brig_notify_open (int dirfd, const char *host, struct brig_notify *n, brig_error *err);

/* Close both sockets (the socket file stays until delete). */
void brig_notify_close (struct brig_notify *n);

/* Relay one datagram from the container; 1 when it held READY=1 (then
 * MAINPID=mainpid went with it and the host acknowledged a BARRIER, or 10 s
 * passed), 0 otherwise, -errno when the host socket failed. */
int brig_notify_forward (struct brig_notify *n, pid_t mainpid);

/* True when a datagram from the container waits to be relayed. */
bool brig_notify_pending (const struct brig_notify *n);

/* Relay until READY=1 or until the init behind pidfd exits (-1: wait only
 * for READY=1); a host socket error is a warning, not a failure: the
 * container runs already. */
void brig_notify_relay (struct brig_notify *n, pid_t mainpid, int pidfd);

#endif
