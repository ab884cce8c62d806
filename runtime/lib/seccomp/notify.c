/* SCMP_ACT_NOTIFY: hand the listener fd to the agent at listenerPath.
 *
 * From the process that loaded the filter to brig first: every syscall
 * after seccomp(2) may be notified, and a notification waits for an agent
 * that only gets the fd through brig. So the first syscall after the filter
 * hands the fd over (process/handshake.c), brig passes it on at once
 * (brig_seccomp_send_notify), and whatever
 * the process does next is answered by the agent.
 *
 * config-linux.md "The Container Process State": one connection per fd,
 * AF_UNIX SOCK_STREAM, a JSON payload {ociVersion, fds, pid, metadata,
 * state} with the fds in SCM_RIGHTS of the first sendmsg(2). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "seccomp/seccomp.h"
#include "seccomp/internal.h"
#include "sync.h"
#include "utils.h"


#define NOTIFY_OCI_VERSION "1.3.0"

int
brig_seccomp_await_process (int sock, const oci_seccomp *s, brig_error *err)
{
  int r = brig_sync_wait (sock, BRIG_SECCOMP_AGENT_TIMEOUT_MS);
  if (r == -ETIMEDOUT)
    return brig_error_say (err, ETIMEDOUT, "seccomp agent at %s did not answer the container "
                           "process's system calls within %d s",
                           s && s->listener_path ? s->listener_path : "listenerPath",
                           BRIG_SECCOMP_AGENT_TIMEOUT_MS / 1000);
  if (r < 0)
    return brig_error_set (err, -r, "wait for the container process");
  return 0;
}

static char *
process_state_json (const oci_seccomp *s, pid_t pid, const char *state_json, size_t *len)
{
  char *buf = NULL;
  FILE *f = open_memstream (&buf, len);

  if (f == NULL)
    abort ();
  fprintf (f, "{\"ociVersion\":\"%s\",\"fds\":[\"seccompFd\"],\"pid\":%d,", NOTIFY_OCI_VERSION,
           (int) pid);
  if (s->listener_metadata != NULL)
    {
      fputs ("\"metadata\":", f);
      brig_json_write_string (f, s->listener_metadata);
      fputc (',', f);
    }
  fprintf (f, "\"state\":%s}", state_json);
  if (fclose (f) != 0)
    abort ();
  return buf;
}

int
brig_seccomp_send_notify_pid (const oci_seccomp *s, int notify_fd, pid_t pid,
                              const char *state_json, brig_error *err)
{
  _cleanup_close_ int sock = -1;
  _cleanup_free_ char *payload = NULL;
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  union {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov;
  struct msghdr msg = { 0 };
  struct cmsghdr *cmsg;
  size_t len = 0, off;
  ssize_t n;

  if (s == NULL || s->listener_path == NULL)
    return brig_error_set (err, 0, "linux.seccomp.listenerPath: not set");
  if (strlen (s->listener_path) >= sizeof addr.sun_path)
    return brig_error_set (err, ENAMETOOLONG, "seccomp listener %s", s->listener_path);
  strcpy (addr.sun_path, s->listener_path);

  payload = process_state_json (s, pid, state_json, &len);
  sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return brig_error_errno (err, "seccomp listener: socket");
  if (connect (sock, (struct sockaddr *) &addr, sizeof addr) < 0)
    return brig_error_errno (err, "connect to seccomp listener %s", s->listener_path);

  memset (&control, 0, sizeof control);
  iov.iov_base = payload;
  iov.iov_len = len;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof control.buf;
  cmsg = CMSG_FIRSTHDR (&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cmsg), &notify_fd, sizeof (int));

  do
    n = sendmsg (sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return brig_error_errno (err, "send seccomp fd to %s", s->listener_path);
  /* The fd went with the first call; the rest of the JSON follows plainly. */
  for (off = (size_t) n; off < len; off += (size_t) n)
    {
      do
        n = send (sock, payload + off, len - off, MSG_NOSIGNAL);
      while (n < 0 && errno == EINTR);
      if (n < 0)
        return brig_error_errno (err, "send container state to %s", s->listener_path);
    }
  return 0;
}

int
brig_seccomp_send_notify (const oci_seccomp *s, int notify_fd, const char *state_json,
                          brig_error *err)
{
  oci_error perr = { 0 };
  oci_state *st = oci_parse_data (&oci_state_type, state_json, strlen (state_json), "state",
                                  &perr);
  pid_t pid;

  if (st == NULL)
    {
      int r = brig_error_set (err, 0, "seccomp listener: %s", perr.msg ? perr.msg : "bad state");
      free (perr.msg);
      return r;
    }
  pid = st->has_pid ? (pid_t) st->pid : 0;
  oci_free (&oci_state_type, st);
  return brig_seccomp_send_notify_pid (s, notify_fd, pid, state_json, err);
}
