/* The handshake between brig and the processes it starts in a container
 * (handshake.h has the order). Each exchange is one section: the side that
 * asks, then the side that answers. Everything the init waits for ends at
 * EOF of the socket, so an init whose parent died never waits forever; an
 * error of either side travels as sync.h's BRIG_SYNC_ERROR. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "namespaces.h"
#include "process/handshake.h"
#include "rootfs/rootfs.h"
#include "utils.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* ---- the init's wait, and HANDOVER ---- */

/* The init must not outlive a create (run, reset) that dies before its
 * record names the init: nothing could find it to kill it, and it would
 * wait for `start` forever in the container's cgroups (docs/security.md,
 * "a killed create"). Until HANDOVER the kernel kills it with its parent
 * (PR_SET_PDEATHSIG). That setting is cleared by fork and by a credential
 * change (another euid, egid, fsuid or fsgid, or fewer capabilities: the
 * uid 0 of a new user namespace, a joined one), so it is armed again after
 * each; and the parent may be gone already, which a pid-1 init cannot
 * learn from getppid (0): the parent's end of the sync socket hangs up as
 * it exits, before its children are told. (Besides, every wait before
 * HANDOVER is a read of the sync socket, which ends at EOF.) */
void
brig_hs_init_arm_parent_death (struct brig_hs_init *h)
{
  struct pollfd p = { .fd = h->sock, .events = POLLIN };

  if (h->handed_over)
    return;
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit (1);
  if (poll (&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR)))
    _exit (1);
}

/* HANDOVER: the parent wrote the init line; from here the init outlives it
 * (create returns, a killed run leaves a recorded container). */
static void
take_handover (struct brig_hs_init *h)
{
  prctl (PR_SET_PDEATHSIG, 0, 0, 0, 0);
  h->handed_over = true;
}

/* The init's wait for type. A parent that died or gave up leaves nothing to
 * report to: the init exits. */
static void
init_expect (struct brig_hs_init *h, uint32_t type, struct brig_sync_msg *m, brig_error *err)
{
  int r;

  /* HANDOVER comes when the parent has recorded the init, between any two
   * of the init's requests (a mount source's, say): taken on the way. */
  while ((r = brig_sync_recv (h->sock, m)) == 0 && m->type == BRIG_SYNC_HANDOVER
         && type != BRIG_SYNC_HANDOVER)
    {
      take_handover (h);
      brig_sync_msg_clear (m);
    }
  if (brig_sync_check (r, type, m, err) < 0)
    {
      brig_sync_msg_clear (m);
      _exit (1);
    }
}

/* Send a message of the init's that the parent must hear (or exit). */
static void
init_send (struct brig_hs_init *h, uint32_t type)
{
  if (brig_sync_send (h->sock, type, 0, NULL, 0, -1) < 0)
    _exit (1);
}

/* The init's request type, then its answer done (data dropped). */
static void
init_ask (struct brig_hs_init *h, uint32_t type, uint32_t done, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  brig_sync_send (h->sock, type, 0, NULL, 0, -1);
  init_expect (h, done, &m, err);
  brig_sync_msg_clear (&m);
}

void
brig_hs_parent_handover (int sock)
{
  /* Not awaited: the init takes it on its way to READY, which it sends
   * only once it has; an init already gone shows at READY. */
  brig_sync_send (sock, BRIG_SYNC_HANDOVER, 0, NULL, 0, -1);
}

void
brig_hs_init_await_handover (struct brig_hs_init *h, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };

  if (h->handed_over)
    return;
  init_expect (h, BRIG_SYNC_HANDOVER, &m, err);
  brig_sync_msg_clear (&m);
  take_handover (h);
}

/* ---- USERNS: the id maps of a user namespace the init unshared ---- */

void
brig_hs_init_userns (struct brig_hs_init *h, brig_error *err)
{
  init_ask (h, BRIG_SYNC_USERNS, BRIG_SYNC_USERNS_DONE, err);
}

int
brig_hs_parent_userns (int sock, bool asked, pid_t child, const oci_linux *lx, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r;

  if (asked)
    {
      r = brig_sync_expect (sock, BRIG_SYNC_USERNS, &m, err);
      brig_sync_msg_clear (&m);
      if (r < 0)
        return r;
    }
  r = brig_ns_write_id_maps (child, lx, err);
  if (r < 0)
    return r;
  if (asked)
    brig_sync_send (sock, BRIG_SYNC_USERNS_DONE, 0, NULL, 0, -1);
  return 0;
}

/* ---- GO: placed in its cgroups ---- */

int
brig_hs_parent_go (int sock)
{
  return brig_sync_send (sock, BRIG_SYNC_GO, 0, NULL, 0, -1);
}

int
brig_hs_init_placed (void *arg, brig_error *err)
{
  struct brig_hs_init *h = arg;
  struct brig_sync_msg m = { .fd = -1 };

  if (h->placed)
    return 0;
  init_expect (h, BRIG_SYNC_GO, &m, err);
  brig_sync_msg_clear (&m);
  h->placed = true;
  /* what must come after the placement: the cgroup namespace, rooted at
   * the process's cgroup */
  if (h->unshare_late && unshare ((int) h->unshare_late) < 0)
    return brig_error_errno (err, "unshare namespaces");
  return 0;
}

/* ---- INIT_PID: the real init, forked into the new pid namespace ---- */

void
brig_hs_init_forked (struct brig_hs_init *h, pid_t pid)
{
  char buf[16];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  brig_sync_send (h->sock, BRIG_SYNC_INIT_PID, 0, buf, (size_t) n, -1);
}

int
brig_hs_parent_forked (int sock, pid_t *pid, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_INIT_PID, &m, err);
  if (r == 0)
    *pid = (pid_t) atoi (m.data);
  brig_sync_msg_clear (&m);
  return r;
}

void
brig_hs_init_await_go (struct brig_hs_init *h, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  /* The parent must hear of the new pid before anything from it. */
  init_expect (h, BRIG_SYNC_GO, &m, err);
  brig_sync_msg_clear (&m);
}

/* ---- NETDEV: linux.netDevices moved into the init's network namespace ---- */

void
brig_hs_init_netdev (struct brig_hs_init *h, brig_error *err)
{
  init_ask (h, BRIG_SYNC_NETDEV, BRIG_SYNC_NETDEV_DONE, err);
}

int
brig_hs_parent_netdev (int sock, const oci_linux *lx, pid_t pid, brig_netdevs **moved,
                       brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_NETDEV, &m, err);
  brig_sync_msg_clear (&m);
  if (r == 0)
    r = brig_netdev_move (lx, pid, moved, err);
  if (r < 0)
    return r;
  brig_sync_send (sock, BRIG_SYNC_NETDEV_DONE, 0, NULL, 0, -1);
  return 0;
}

/* ---- MOUNT_SOURCE: a bind source the init cannot reach, opened by brig ---- */

/* The fd (O_CLOEXEC: MSG_CMSG_CLOEXEC), closed by the caller once mounted. */
int
brig_hs_init_mount_source (void *arg, size_t i, brig_error *err)
{
  struct brig_hs_init *h = arg;
  struct brig_sync_msg m = { .fd = -1 };
  char buf[24];
  int n = snprintf (buf, sizeof buf, "%zu", i), fd;

  if (brig_sync_send (h->sock, BRIG_SYNC_MOUNT_SOURCE, 0, buf, (size_t) n, -1) < 0)
    return brig_error_errno (err, "ask for the source of mounts[%zu]", i);
  init_expect (h, BRIG_SYNC_MOUNT_SOURCE_FD, &m, err);
  if (m.code != 0 || m.fd < 0)
    {
      int r = brig_error_set_raw (err, m.code ? m.code : EPROTO,
                                  m.data ? m.data : "no fd for a mount source");
      brig_sync_msg_clear (&m);
      return r;
    }
  fd = m.fd;
  m.fd = -1;
  brig_sync_msg_clear (&m);
  return fd;
}

/* Answer one request: the fd (rootfs/source.c opens it, idmapped when the
 * mount asks), or the error as code and message. */
static int
serve_mount_source (int sock, const oci_config *cfg, const char *bundle, pid_t pid,
                    const struct brig_sync_msg *req)
{
  brig_error e = { 0 };
  char *end = NULL;
  unsigned long i;
  int fd, r;

  errno = 0;
  i = req->data ? strtoul (req->data, &end, 10) : 0;
  if (req->data == NULL || end == req->data || *end != '\0' || errno != 0)
    fd = brig_error_say (&e, EPROTO, "container init: bad mount source request");
  else
    fd = rootfs_source_open_for_init (cfg, bundle, pid, (size_t) i, &e);
  if (fd < 0)
    {
      const char *msg = e.msg ? e.msg : strerror (-fd);
      r = brig_sync_send (sock, BRIG_SYNC_MOUNT_SOURCE_FD, -fd, msg, strlen (msg), -1);
      brig_error_clear (&e);
      return r;
    }
  brig_debug ("opened the source of mounts[%lu] for the init", i);
  r = brig_sync_send (sock, BRIG_SYNC_MOUNT_SOURCE_FD, 0, NULL, 0, fd);
  close (fd);
  return r;
}

static int
parent_expect (int sock, uint32_t type, struct brig_sync_msg *msg, const oci_config *cfg,
               const char *bundle, pid_t pid, brig_error *err)
{
  for (;;)
    {
      int r = brig_sync_recv (sock, msg);
      if (r < 0 || msg->type != BRIG_SYNC_MOUNT_SOURCE)
        return brig_sync_check (r, type, msg, err);
      r = serve_mount_source (sock, cfg, bundle, pid, msg);
      brig_sync_msg_clear (msg);
      if (r < 0)
        return brig_error_set (err, -r, "answer the container init");
    }
}

int
brig_hs_parent_expect (int sock, uint32_t type, const oci_config *cfg, const char *bundle,
                       pid_t pid, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = parent_expect (sock, type, &m, cfg, bundle, pid, err);
  brig_sync_msg_clear (&m);
  return r;
}

/* ---- LAYER_SEED: the root layer's upper, filled by brig (brig fork) ---- */

int
brig_hs_init_layer_seed (void *arg, int upper, brig_error *err)
{
  struct brig_hs_init *h = arg;
  struct brig_sync_msg m = { .fd = -1 };
  int r;

  /* GO may still be on its way (the init mounts while it is placed): take
   * it first, so that SEED_DONE is the next message; and the pages the
   * parent writes into the layer are then charged to the container. */
  if ((r = brig_hs_init_placed (h, err)) < 0)
    return r;
  if (brig_sync_send (h->sock, BRIG_SYNC_LAYER_SEED, 0, NULL, 0, upper) < 0)
    return brig_error_errno (err, "hand the ephemeral layer to brig");
  init_expect (h, BRIG_SYNC_SEED_DONE, &m, err);
  brig_sync_msg_clear (&m);
  return 0;
}

int
brig_hs_parent_layer_seed (int sock, int (*fill) (void *arg, int upper, brig_error *err),
                           void *arg, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_LAYER_SEED, &m, err);

  if (r == 0 && m.fd < 0)
    r = brig_error_say (err, EPROTO, "container init: no ephemeral layer to seed (the "
                        "config has no run.brig.rootfs.ephemeral)");
  if (r == 0)
    r = fill (arg, m.fd, err);
  brig_sync_msg_clear (&m);
  if (r == 0 && brig_sync_send (sock, BRIG_SYNC_SEED_DONE, 0, NULL, 0, -1) < 0)
    r = brig_error_errno (err, "answer the container init");
  return r;
}

/* ---- HOOKS: prestart and createRuntime, run by brig ---- */

void
brig_hs_init_hooks (struct brig_hs_init *h, char **creating, const char **created,
                    brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };

  brig_sync_send (h->sock, BRIG_SYNC_HOOKS, 0, NULL, 0, -1);
  init_expect (h, BRIG_SYNC_HOOKS_DONE, &m, err);
  /* Two documents: the state while creating, then once created. */
  *creating = brig_steal_ptr (m.data);
  *created = strlen (*creating) < m.len ? *creating + strlen (*creating) + 1 : *creating;
  brig_sync_msg_clear (&m);
}

void
brig_hs_parent_hooks_done (int sock, const char *creating, const char *created)
{
  /* createContainer gets the state while creating, startContainer the
   * state once created: both travel now, NUL-separated. */
  size_t l1 = strlen (creating) + 1, l2 = strlen (created);
  _cleanup_free_ char *both = xmalloc0 (l1 + l2 + 1);
  memcpy (both, creating, l1);
  memcpy (both + l1, created, l2);
  brig_sync_send (sock, BRIG_SYNC_HOOKS_DONE, 0, both, l1 + l2, -1);
}

/* ---- SECCOMP: the listener fd, from the process that loaded the filter ---- */

int
brig_hs_seccomp_send (const brig_seccomp *sc, int sock, int notify_fd)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r;

  if (!brig_seccomp_notifies_sendmsg (sc))
    r = brig_sync_send (sock, BRIG_SYNC_SECCOMP, 0, NULL, 0, notify_fd);
  else
    {
      /* sendmsg is notified: name the fd and let brig take it. It must
       * stay open until brig has it; the wait may itself be notified,
       * which is fine now. */
      r = brig_sync_send_plain (sock, BRIG_SYNC_SECCOMP, notify_fd);
      if (r == 0)
        r = brig_sync_recv (sock, &m);
      if (r == 0 && m.type != BRIG_SYNC_SECCOMP_DONE)
        r = -EPROTO;
      brig_sync_msg_clear (&m);
    }
  close (notify_fd);
  return r;
}

/* Take the fd that m carries, or (no fd) the one it names in process pid. */
static int
take_listener (int sock, pid_t pid, struct brig_sync_msg *m, int *fd, brig_error *err)
{
  _cleanup_close_ int pidfd = -1;
  int r;

  *fd = -1;
  if (m->fd >= 0)
    {
      *fd = m->fd;
      m->fd = -1;
      return 0;
    }
  /* pid is brig's unreaped child: it cannot have been recycled. */
  pidfd = (int) syscall (SYS_pidfd_open, pid, 0);
  if (pidfd < 0)
    return brig_error_errno (err, "seccomp listener: pidfd_open %d", (int) pid);
  r = (int) syscall (SYS_pidfd_getfd, pidfd, m->code, 0);
  if (r < 0)
    return brig_error_errno (err, "seccomp listener: take fd %d of process %d (pidfd_getfd, "
                                  "needed because sendmsg is notified)", (int) m->code, (int) pid);
  *fd = r;
  r = brig_sync_send (sock, BRIG_SYNC_SECCOMP_DONE, 0, NULL, 0, -1);
  if (r < 0)
    {
      close (*fd);
      *fd = -1;
      return brig_error_set (err, -r, "seccomp listener: answer the container init");
    }
  return 0;
}

int
brig_hs_seccomp_receive (int sock, pid_t pid, int *fd, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r;

  *fd = -1;
  r = brig_sync_expect (sock, BRIG_SYNC_SECCOMP, &m, err);
  if (r == 0)
    r = take_listener (sock, pid, &m, fd, err);
  brig_sync_msg_clear (&m);
  return r;
}

int
brig_hs_parent_seccomp (int sock, const oci_config *cfg, const char *bundle, pid_t pid,
                        int *fd, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  /* Until the filter, the init may still ask for mount sources. */
  int r = parent_expect (sock, BRIG_SYNC_SECCOMP, &m, cfg, bundle, pid, err);
  if (r == 0)
    r = take_listener (sock, pid, &m, fd, err);
  brig_sync_msg_clear (&m);
  return r;
}

/* ---- READY ---- */

void
brig_hs_init_ready (struct brig_hs_init *h)
{
  /* Set up: the parent writes the state and (create) returns. */
  init_send (h, BRIG_SYNC_READY);
}

int
brig_hs_parent_await_exec (int sock, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_recv (sock, &m);

  if (r == 0 && m.type == BRIG_SYNC_ERROR)
    r = brig_error_set_raw (err, m.code, m.data);
  else
    r = 0;
  brig_sync_msg_clear (&m);
  return r;
}

/* ---- exec: C1 forks C2, C2 joins its v1 cgroups ---- */

int
brig_hs_exec_forked (int sock, pid_t pid, bool joined)
{
  int32_t v = pid;
  /* code 1: C2 is in the cgroup2 directory too */
  return brig_sync_send (sock, BRIG_SYNC_INIT_PID, joined ? 1 : 0, &v, sizeof v, -1);
}

int
brig_hs_exec_await_forked (int sock, pid_t *pid, bool *joined, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_INIT_PID, &m, err);

  *pid = -1;
  *joined = false;
  if (r == 0 && m.len == sizeof (int32_t))
    {
      int32_t v;
      memcpy (&v, m.data, sizeof v);
      *pid = v;
    }
  if (r == 0)
    *joined = m.code == 1;
  brig_sync_msg_clear (&m);
  return r;
}

int
brig_hs_exec_joined (int sock, int e)
{
  return brig_sync_send (sock, BRIG_SYNC_JOINED, e, NULL, 0, -1);
}

int
brig_hs_exec_await_joined (int sock, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_JOINED, &m, err);
  if (r == 0 && m.code != 0)
    r = brig_error_set (err, m.code, "exec: join the container's cgroup");
  brig_sync_msg_clear (&m);
  return r;
}

int
brig_hs_exec_await_go (int sock, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_GO, &m, err);
  brig_sync_msg_clear (&m);
  return r;
}

int
brig_hs_exec_ready (int sock)
{
  return brig_sync_send (sock, BRIG_SYNC_READY, 0, NULL, 0, -1);
}

int
brig_hs_exec_await_ready (int sock, brig_error *err)
{
  struct brig_sync_msg m = { .fd = -1 };
  int r = brig_sync_expect (sock, BRIG_SYNC_READY, &m, err);
  brig_sync_msg_clear (&m);
  return r;
}
