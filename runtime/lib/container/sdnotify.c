/* sd_notify relay for containers: see notify.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "container/sdnotify.h"
#include "utils.h"

#define NOTIFY_MSG_MAX 4096
#define NOTIFY_BARRIER_MS 10000

/* The keys a container may send to the host's manager: its own state. Not
 * MAINPID (brig names it), NOTIFYACCESS, FDSTORE* or BARRIER (fds). */
static const char *const relayed_keys[] = {
  "READY=", "STATUS=", "ERRNO=", "BUSERROR=", "RELOADING=", "STOPPING=",
  "MONOTONIC_USEC=", "WATCHDOG=", "WATCHDOG_USEC=", "EXTEND_TIMEOUT_USEC=",
  "EXIT_STATUS=",
};

static int
host_addr (const char *host, struct sockaddr_un *sa, socklen_t *len, brig_error *err)
{
  size_t n = strlen (host);

  memset (sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  if (n == 0 || (host[0] != '/' && host[0] != '@'))
    return brig_error_say (err, EINVAL, "NOTIFY_SOCKET \"%s\": not an absolute path or "
                           "@abstract socket name", host);
  if (n >= sizeof sa->sun_path)
    return brig_error_set (err, ENAMETOOLONG, "NOTIFY_SOCKET \"%s\"", host);
  memcpy (sa->sun_path, host, n);
  if (host[0] == '@')
    sa->sun_path[0] = '\0';
  /* An abstract name is exactly its bytes, no terminating NUL. */
  *len = (socklen_t) (offsetof (struct sockaddr_un, sun_path) + n + (host[0] == '/'));
  return 0;
}

int
brig_notify_check_host (const char *host, brig_error *err)
{
  struct sockaddr_un sa;
  socklen_t len;
  return host_addr (host, &sa, &len, err);
}

/* Replace or add NOTIFY_SOCKET in the process environment (a NULL-terminated
 * vector with its length, as libocispec keeps it). */
static void
env_set_notify (oci_process *p)
{
  static const char key[] = "NOTIFY_SOCKET=";
  char *v = xstrdup ("NOTIFY_SOCKET=" BRIG_NOTIFY_CONTAINER_SOCKET);

  for (size_t i = 0; i < p->env_len; i++)
    if (p->env[i] && strncmp (p->env[i], key, sizeof key - 1) == 0)
      {
        free (p->env[i]);
        p->env[i] = v;
        return;
      }
  p->env = xrealloc (p->env, (p->env_len + 2) * sizeof *p->env);
  p->env[p->env_len++] = v;
  p->env[p->env_len] = NULL;
}

int
brig_notify_setup (int dirfd, oci_config *cfg, brig_error *err)
{
  static const char *const opts[] = { "bind", "nosuid", "noexec", "nodev", "ro" };
  char link[64], dir[PATH_MAX];
  oci_mount *m;
  ssize_t n;

  if (cfg->process == NULL)
    return 0;
  if (mkdirat (dirfd, BRIG_NOTIFY_DIR, 0755) < 0 && errno != EEXIST)
    return brig_error_errno (err, "NOTIFY_SOCKET: create the state's %s directory",
                             BRIG_NOTIFY_DIR);
  /* Whatever the umask: every user of the container may send. */
  if (fchmodat (dirfd, BRIG_NOTIFY_DIR, 0755, 0) < 0)
    return brig_error_errno (err, "NOTIFY_SOCKET: chmod the state's %s directory",
                             BRIG_NOTIFY_DIR);
  /* The init mounts by path from the host's mount namespace: the state
   * directory's absolute path, whatever --root looked like. */
  snprintf (link, sizeof link, "/proc/self/fd/%d", dirfd);
  n = readlink (link, dir, sizeof dir - 1);
  if (n < 0 || (size_t) n >= sizeof dir - sizeof "/" BRIG_NOTIFY_DIR)
    return brig_error_set (err, n < 0 ? errno : ENAMETOOLONG, "NOTIFY_SOCKET: the state "
                           "directory's path");
  dir[n] = '\0';

  cfg->mounts = xrealloc (cfg->mounts, (cfg->mounts_len + 1) * sizeof *cfg->mounts);
  m = &cfg->mounts[cfg->mounts_len++];
  memset (m, 0, sizeof *m);
  m->destination = xstrdup (BRIG_NOTIFY_CONTAINER_DIR);
  m->source = xasprintf ("%s/%s", dir, BRIG_NOTIFY_DIR);
  m->type = xstrdup ("bind");
  m->options = xmalloc0 ((BRIG_ARRAY_SIZE (opts) + 1) * sizeof *m->options);
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (opts); i++)
    m->options[i] = xstrdup (opts[i]);
  m->options_len = BRIG_ARRAY_SIZE (opts);
  env_set_notify (cfg->process);
  return 0;
}

int
brig_notify_open (int dirfd, const char *host, struct brig_notify *n, brig_error *err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX }, ha;
  socklen_t hlen;
  _cleanup_close_ int fd = -1, hfd = -1;
  struct stat st;
  int r;

  n->fd = n->host_fd = -1;
  n->host_pending = false;
  if (host == NULL || *host == '\0')
    return 0;
  if (fstatat (dirfd, BRIG_NOTIFY_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
    return 0; /* created without NOTIFY_SOCKET: nothing listens inside */
  r = host_addr (host, &ha, &hlen, err);
  if (r < 0)
    return r;
  hfd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (hfd < 0)
    return brig_error_errno (err, "NOTIFY_SOCKET: socket");
  n->host_pending = connect (hfd, (struct sockaddr *) &ha, hlen) < 0;
  /* Not there yet (its manager starts later): relayed once it is, as crun
   * does; anything else is the caller's mistake. */
  if (n->host_pending && errno != ENOENT && errno != ECONNREFUSED)
    return brig_error_errno (err, "NOTIFY_SOCKET: connect to %s", host);
  if (n->host_pending)
    brig_debug ("NOTIFY_SOCKET: %s is not there yet (%s): relayed once it is", host,
                strerror (errno));
  n->host_addr = ha;
  n->host_len = hlen;

  /* Through the state directory's fd: no sun_path limit on --root. */
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/%s/notify.sock", dirfd,
            BRIG_NOTIFY_DIR);
  fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return brig_error_errno (err, "NOTIFY_SOCKET: socket");
  unlinkat (dirfd, BRIG_NOTIFY_DIR "/notify.sock", 0);
  if (bind (fd, (struct sockaddr *) &sa, sizeof sa) < 0)
    return brig_error_errno (err, "NOTIFY_SOCKET: bind %s/notify.sock in the state "
                             "directory", BRIG_NOTIFY_DIR);
  /* Any uid of the container may notify, as with systemd's own socket. */
  if (fchmodat (dirfd, BRIG_NOTIFY_DIR "/notify.sock", 0777, 0) < 0)
    return brig_error_errno (err, "NOTIFY_SOCKET: chmod the container's socket");
  n->fd = brig_steal_fd (fd);
  n->host_fd = brig_steal_fd (hfd);
  return 0;
}

void
brig_notify_close (struct brig_notify *n)
{
  if (n->fd >= 0)
    close (n->fd);
  if (n->host_fd >= 0)
    close (n->host_fd);
  n->fd = n->host_fd = -1;
  n->host_pending = false;
}

/* Connect a host socket that was not there at open; false while it still
 * is not. */
static bool
host_ready (struct brig_notify *n)
{
  if (!n->host_pending)
    return true;
  if (connect (n->host_fd, (struct sockaddr *) &n->host_addr, n->host_len) < 0)
    return false;
  n->host_pending = false;
  return true;
}

static bool
key_relayed (const char *line, size_t len)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (relayed_keys); i++)
    {
      size_t k = strlen (relayed_keys[i]);
      if (len >= k && memcmp (line, relayed_keys[i], k) == 0)
        return true;
    }
  return false;
}

/* sd_notify's BARRIER=1: systemd closes the pipe end it got once it has
 * processed every earlier message, so MAINPID is taken before we exit. */
static void
notify_barrier (int host_fd)
{
  static const char msg[] = "BARRIER=1";
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE (sizeof (int))];
  } cm;
  struct iovec iov = { .iov_base = (void *) msg, .iov_len = sizeof msg - 1 };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
                       .msg_controllen = sizeof cm.buf };
  struct cmsghdr *c;
  struct pollfd p;
  int pfd[2], r;

  if (pipe2 (pfd, O_CLOEXEC) < 0)
    return;
  memset (&cm, 0, sizeof cm);
  c = CMSG_FIRSTHDR (&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (c), &pfd[1], sizeof (int));
  r = (int) sendmsg (host_fd, &mh, MSG_NOSIGNAL);
  close (pfd[1]);
  if (r >= 0)
    {
      p = (struct pollfd) { .fd = pfd[0], .events = POLLIN };
      while ((r = poll (&p, 1, NOTIFY_BARRIER_MS)) < 0 && errno == EINTR)
        ;
      if (r == 0)
        brig_debug ("NOTIFY_SOCKET: no answer to BARRIER=1 after %d ms", NOTIFY_BARRIER_MS);
    }
  close (pfd[0]);
}

int
brig_notify_forward (struct brig_notify *n, pid_t mainpid)
{
  char in[NOTIFY_MSG_MAX], out[NOTIFY_MSG_MAX + 32];
  size_t o = 0, len;
  bool ready = false;
  ssize_t got;

  /* No control buffer: fds the container attached are closed unseen. */
  got = recv (n->fd, in, sizeof in, MSG_TRUNC | MSG_DONTWAIT);
  if (got < 0)
    return 0;
  len = (size_t) got;
  /* Whole, text datagrams only (systemd drops the others too). */
  if (len >= sizeof in || memchr (in, '\0', len) != NULL)
    {
      brig_debug ("NOTIFY_SOCKET: dropped a %zu-byte datagram from the container", len);
      return 0;
    }
  for (size_t i = 0; i < len;)
    {
      const char *line = in + i, *nl = memchr (line, '\n', len - i);
      size_t l = nl ? (size_t) (nl - line) : len - i;
      if (l == sizeof "READY=1" - 1 && memcmp (line, "READY=1", l) == 0)
        ready = true;
      i += l + 1;
    }
  if (ready)
    o = (size_t) snprintf (out, sizeof out, "MAINPID=%d\n", (int) mainpid);
  for (size_t i = 0; i < len;)
    {
      const char *line = in + i, *nl = memchr (line, '\n', len - i);
      size_t l = nl ? (size_t) (nl - line) : len - i;
      if (key_relayed (line, l))
        {
          memcpy (out + o, line, l);
          o += l;
          out[o++] = '\n';
        }
      else if (l > 0)
        brig_debug ("NOTIFY_SOCKET: not relayed: %.*s", (int) (l > 64 ? 64 : l), line);
      i += l + 1;
    }
  if (o == 0)
    return 0;
  if (!host_ready (n))
    {
      /* never wait for it: the container runs already */
      if (ready)
        brig_warn ("NOTIFY_SOCKET: READY=1 not relayed: the host's socket is not there");
      else
        brig_debug ("NOTIFY_SOCKET: the host's socket is not there yet: dropped");
      return ready ? 1 : 0;
    }
  if (send (n->host_fd, out, o, MSG_NOSIGNAL) < 0)
    return -errno;
  if (!ready)
    return 0;
  notify_barrier (n->host_fd);
  return 1;
}

bool
brig_notify_pending (const struct brig_notify *n)
{
  struct pollfd p = { .fd = n->fd, .events = POLLIN };
  return n->fd >= 0 && poll (&p, 1, 0) == 1 && (p.revents & POLLIN);
}

void
brig_notify_relay (struct brig_notify *n, pid_t mainpid, int pidfd)
{
  if (n->fd < 0)
    return;
  for (;;)
    {
      struct pollfd p[2] = { { .fd = n->fd, .events = POLLIN },
                             { .fd = pidfd, .events = POLLIN } };
      int r = poll (p, pidfd >= 0 ? 2 : 1, -1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return;
      /* The socket first: READY=1 sent just before exiting still counts. */
      if (p[0].revents & POLLIN)
        {
          r = brig_notify_forward (n, mainpid);
          if (r < 0)
            brig_warn ("NOTIFY_SOCKET: relay to the host: %s", strerror (-r));
          if (r != 0)
            return;
          continue;
        }
      if (p[0].revents & (POLLERR | POLLNVAL))
        return;
      if (pidfd >= 0 && p[1].revents)
        return;
    }
}
