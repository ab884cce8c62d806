/* A new init for a container that exists: what create does from the
 * moment the state directory, the cgroup and the config exist (brig reset,
 * docs/sandbox.md "Reset"). The config is the one saved at create, never
 * the bundle's again; the cgroup (and what an extension attached to it)
 * and the compiled seccomp filter (seccomp cache) are reused. The extension
 * acts at the same points as at create, told it is a reset. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container/create.h"
#include "container/respawn.h"
#include "log.h"
#include "utils.h"

/* What prepare makes and the respawn uses: create's context with the
 * context and options it points to. */
struct respawn_prep {
  struct brig_context ctx;
  struct brig_create_opts o;
  struct create_ctx c;
};

int
brig_container_respawn_prepare (const struct brig_context *ctx, const char *id, oci_config *cfg,
                                struct brig_respawn *rs, brig_error *err)
{
  struct respawn_prep *p = xmalloc0 (sizeof *p);
  struct create_ctx *c = &p->c;

  /* Not relayed: NOTIFY_SOCKET belongs to the engine that created it. */
  p->ctx = *ctx;
  p->ctx.notify_socket = NULL;
  p->o.id = id;
  create_ctx_init (c, &p->ctx, &p->o, MODE_CREATE);
  c->reset = true;
  c->dirfd = rs->dirfd;
  c->cg = rs->cg;
  /* the caller's parse of the saved config, borrowed: read and parsed
   * once per reset (it is the file the caller checked) */
  c->cfg = cfg;
  rs->prep = p;
  if (rs->old->bundle == NULL || rs->old->rootfs == NULL || *rs->old->rootfs != '/')
    return brig_error_say (err, EINVAL, "state.json: no bundle or rootfs recorded");
  c->bundle = xstrdup (rs->old->bundle);
  c->rootfs = xstrdup (rs->old->rootfs);
  if (cfg->process && cfg->process->has_terminal && cfg->process->terminal)
    return brig_error_say (err, EINVAL, "process.terminal: a container with a terminal "
                           "cannot be reset (no console socket to hand it to)");
  /* The same checks as create, on the saved config: they build the
   * namespace plan and the seccomp program (from the cache) again. */
  return create_validate_config (c, err);
}

void
brig_container_respawn_clear (struct brig_respawn *rs)
{
  struct respawn_prep *p = rs->prep;

  if (p == NULL)
    return;
  /* the caller's: the state directory, the cgroup, the config */
  p->c.dirfd = -1;
  p->c.cg = NULL;
  p->c.cfg = NULL;
  create_ctx_free (&p->c);
  free (p);
  rs->prep = NULL;
}

static int
respawn (struct create_ctx *c, struct brig_respawn *rs, brig_error *err)
{
  _cleanup_close_ int exec_fd = -1, host_net = -1;
  int r;

  /* The pinned network namespace is entered by this process around the
   * clone and inherited by the init, the way create enters a pid or time
   * namespace to join for its children. As a joined namespace
   * (ns.join_fd) it would take create's path for joins: an intermediate
   * process that joins it, then unshares the new namespaces and forks the
   * init, one more process per reset. Only the clone and create's own
   * host-side steps run meanwhile: a pinned namespace is reused only
   * without hooks before the process, netDevices or a user namespace
   * (brig_reset_netns_reusable), its tenant is dead and it held no
   * socket. */
  if (rs->netns_fd >= 0)
    {
      c->ns.new_flags &= ~(unsigned long) CLONE_NEWNET;
      host_net = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      if (host_net < 0)
        return brig_error_errno (err, "open /proc/thread-self/ns/net");
    }
  if (BRIG_EXT_HOOK (create_claimed))
    {
      struct brig_ext_create_info info;
      create_ext_info (c, &info);
      if ((r = brig_ext->create_claimed (&info, c->ext, err)) < 0)
        return r;
    }
  /* what create applied and resolved, the extension keeps */
  create_fill_state (c, rs->old->ext);
  /* The old init's line goes: the record names one init, this one. */
  r = brig_state_record_drop_init (c->dirfd, err);
  if (r < 0)
    return r;
  if (unlinkat (c->dirfd, BRIG_EXEC_SOCKET, 0) < 0 && errno != ENOENT)
    return brig_error_errno (err, "remove the old exec socket");
  r = create_listen_exec_socket (c->dirfd, &exec_fd, err);
  if (r < 0)
    return r;
  if (host_net >= 0 && setns (rs->netns_fd, CLONE_NEWNET) < 0)
    return brig_error_errno (err, "join the pinned network namespace");
  /* Both are inherited by the clone: a handle on the host's network
   * namespace must not wait for start in the container's pid 1. */
  c->init_closes[0] = host_net;
  c->init_closes[1] = rs->netns_fd;
  r = create_spawn_init (c, exec_fd, -1, err);
  c->init_closes[0] = c->init_closes[1] = -1;
  if (host_net >= 0 && setns (host_net, CLONE_NEWNET) < 0)
    {
      /* brig must not go on in the container's namespace */
      brig_warn ("reset: return to brig's network namespace: %s", strerror (errno));
      abort ();
    }
  if (r < 0)
    return r;
  return brig_state_commit (c->dirfd, err);
}

int
brig_container_respawn (struct brig_respawn *rs, brig_error *err)
{
  struct respawn_prep *p = rs->prep;
  struct create_ctx *c;
  int r;

  if (p == NULL)
    return brig_error_say (err, EINVAL, "respawn: not prepared");
  c = &p->c;
  /* The new init's stdio is /dev/null, not the caller's: reset's output is
   * its report, and a caller reading it to the end must not wait for the
   * next tenant to exit. */
  c->stdio_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  r = c->stdio_fd < 0 ? brig_error_errno (err, "open /dev/null") : respawn (c, rs, err);
  if (c->stdio_fd >= 0)
    {
      close (c->stdio_fd);
      c->stdio_fd = -1;
    }
  if (r < 0)
    {
      /* The init, never the cgroup or the state: the caller marks the
       * container unusable and delete removes the rest. */
      create_kill_init (c);
    }
  else
    {
      rs->pid = c->pid;
      rs->start_time = c->st.pid_start_time;
    }
  brig_container_respawn_clear (rs);
  return r;
}
