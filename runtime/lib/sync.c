#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sync.h"
#include "utils.h"

struct wire_header {
  uint32_t type;
  int32_t code;
};

/* Room for a state JSON with large annotations; bigger payloads are cut. */
#define SYNC_MAX (256 * 1024)

int
brig_sync_send (int sock, uint32_t type, int32_t code, const void *data, size_t len, int fd)
{
  struct wire_header h = { type, code };
  struct iovec iov[2] = { { &h, sizeof h }, { (void *) data, data ? len : 0 } };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };

  if (iov[1].iov_len > SYNC_MAX)
    iov[1].iov_len = SYNC_MAX;
  if (fd >= 0)
    {
      struct cmsghdr *c;
      memset (&u, 0, sizeof u);
      mh.msg_control = u.buf;
      mh.msg_controllen = sizeof u.buf;
      c = CMSG_FIRSTHDR (&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (c), &fd, sizeof (int));
    }
  for (;;)
    {
      if (sendmsg (sock, &mh, MSG_NOSIGNAL) >= 0)
        return 0;
      if (errno != EINTR)
        return -errno;
    }
}

int
brig_sync_send_plain (int sock, uint32_t type, int32_t code)
{
  struct wire_header h = { type, code };
  ssize_t n;

  do
    n = write (sock, &h, sizeof h);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  return (size_t) n == sizeof h ? 0 : -EIO;
}

int
brig_sync_wait (int sock, int timeout_ms)
{
  struct pollfd p = { .fd = sock, .events = POLLIN };
  int n;

  do
    n = poll (&p, 1, timeout_ms);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  return n == 0 ? -ETIMEDOUT : 0;
}

/* An error message quoting what the config gave (a 10 MB hostname or
 * argument) must still fit one packet: a SEQPACKET send larger than the
 * socket buffer fails whole, and the parent would only see the init exit. */
#define SYNC_ERROR_MAX 4096

void
brig_sync_send_error (int sock, const brig_error *err)
{
  const char *m = err && err->msg ? err->msg : "unknown error";
  size_t len = strlen (m);
  char buf[SYNC_ERROR_MAX];

  if (len >= SYNC_ERROR_MAX)
    {
      /* keep the head (what failed) and the tail (the errno text) */
      size_t tail = 256, head = SYNC_ERROR_MAX - tail - 8;
      memcpy (buf, m, head);
      memcpy (buf + head, " [...] ", 7);
      memcpy (buf + head + 7, m + len - tail, tail);
      m = buf;
      len = head + 7 + tail;
    }
  brig_sync_send (sock, BRIG_SYNC_ERROR, err ? err->code : 0, m, len, -1);
}

void
brig_sync_msg_clear (struct brig_sync_msg *msg)
{
  free (msg->data);
  msg->data = NULL;
  if (msg->fd >= 0)
    close (msg->fd);
  msg->fd = -1;
}

int
brig_sync_recv (int sock, struct brig_sync_msg *msg)
{
  /* One recvmsg per packet, into a buffer for the largest one: .bss,
   * whose pages exist only once a message touches them (a peek at the size
   * first would take a second call for every message). */
  static char buf[SYNC_MAX];
  struct wire_header h;
  struct iovec iov[2] = { { &h, sizeof h }, { buf, sizeof buf } };
  union {
    char b[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = u.b,
                       .msg_controllen = sizeof u.b };
  ssize_t n;

  msg->data = NULL;
  msg->fd = -1;
  /* ECONNRESET: the peer closed with a message of ours unread (the init
   * failed before it read GO). The error is reported once, ahead of what
   * the peer sent before it closed, which the next call returns. */
  do
    n = recvmsg (sock, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 && (errno == EINTR || errno == ECONNRESET));
  if (n < 0)
    return -errno;
  for (struct cmsghdr *c = CMSG_FIRSTHDR (&mh); c; c = CMSG_NXTHDR (&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      memcpy (&msg->fd, CMSG_DATA (c), sizeof (int));
  if (n == 0 || (size_t) n < sizeof h)
    {
      if (msg->fd >= 0)
        close (brig_steal_fd (msg->fd));
      return -EPIPE;
    }
  msg->len = (size_t) n - sizeof h;
  msg->data = xmalloc0 (msg->len + 1);
  memcpy (msg->data, buf, msg->len);
  msg->type = h.type;
  msg->code = h.code;
  msg->data[msg->len] = '\0';
  return 0;
}

int
brig_sync_expect (int sock, uint32_t type, struct brig_sync_msg *msg, brig_error *err)
{
  return brig_sync_check (brig_sync_recv (sock, msg), type, msg, err);
}

int
brig_sync_check (int r, uint32_t type, struct brig_sync_msg *msg, brig_error *err)
{
  if (r == -EPIPE)
    {
      /* -EPIPE tells the caller the peer is gone (create looks for why) */
      brig_error_set (err, 0, "container init exited unexpectedly");
      return -EPIPE;
    }
  if (r < 0)
    return brig_error_set (err, -r, "container init exited unexpectedly");
  if (msg->type == BRIG_SYNC_ERROR)
    {
      r = brig_error_set_raw (err, msg->code, msg->data);
      brig_sync_msg_clear (msg);
      return r;
    }
  if (msg->type != type)
    {
      r = brig_error_say (err, EPROTO, "container init: unexpected message %u (wanted %u)",
                          msg->type, type);
      brig_sync_msg_clear (msg);
      return r;
    }
  return 0;
}
