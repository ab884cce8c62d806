/* create's context, shared by the two halves of the parent side of create:
 * container/validate.c (read and check the bundle before anything exists)
 * and container/create.c (make it). Not part of libbrig's interface. */
#ifndef BRIG_CONTAINER_CREATE_H
#define BRIG_CONTAINER_CREATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "container/container.h"
#include "container/extension.h"
#include "context.h"
#include "error.h"
#include "namespaces.h"
#include "process/netdev.h"
#include "container/sdnotify.h"
#include "ocispec.h"
#include "seccomp/seccomp.h"
#include "container/state.h"

enum create_mode { MODE_CREATE, MODE_RUN_DETACHED, MODE_RUN };

/* Everything create has made, so that failure can undo it. */
struct create_ctx {
  const struct brig_context *ctx;
  const struct brig_create_opts *o;
  enum create_mode mode;
  char *bundle;             /* absolute */
  char *rootfs;             /* absolute */
  char *config_buf;         /* config.json as read */
  size_t config_len;
  oci_config *cfg;
  struct brig_ns_plan ns;
  brig_seccomp *seccomp;
  int dirfd;                /* the claimed, locked state directory */
  int record_fd;            /* the ownership record, open for its init line */
  bool rootless;            /* as create decided it, once */
  bool inherited_closed;    /* the caller's leaked fds are closed already */
  brig_cgroup *cg;
  int sync_fd;              /* parent's end */
  int console_fd;           /* console socket (given) or our end of the pty pair */
  pid_t child;              /* pid returned by clone */
  pid_t pid;                /* the init */
  int pidfd;                /* of the init */
  brig_netdevs *netdevs;    /* linux.netDevices moved in */
  struct brig_notify notify;/* run: the sd_notify relay (notify.h) */
  struct brig_state_file st;
  int stdio_fd;             /* the init's stdin, stdout and stderr instead of
                               brig's, or -1 (reset: /dev/null) */
  bool reset;               /* brig reset: saved config, existing state and
                               cgroup (container/respawn.c) */
  bool shared_cgroup;       /* run.brig.cgroup.shared=true */
  struct brig_ext_create *ext; /* the extension's record (container/extension.h) */
  int init_closes[2];       /* the caller's fds the init closes first, -1:
                               none (reset: brig's own network namespace and
                               the pinned one, held around the clone) */
};

/* Read the bundle's config.json and resolve the bundle and rootfs paths. */
int create_load_bundle (struct create_ctx *c, brig_error *err);

/* Everything that can be checked before touching the system; also builds
 * the namespace plan and the seccomp program, and asks the extension. */
int create_validate_config (struct create_ctx *c, brig_error *err);

/* run.brig.cgroup.shared: "true" or "false", anything else is refused. */
int create_cgroup_shared (const oci_config *cfg, bool *shared, brig_error *err);

/* ---- shared with brig reset (container/respawn.c) ---- */

/* Zero c and set every fd to -1. */
void create_ctx_init (struct create_ctx *c, const struct brig_context *ctx,
                      const struct brig_create_opts *o, enum create_mode mode);

/* Release what c holds (fds, parsed config, handles). */
void create_ctx_free (struct create_ctx *c);

/* Create up to READY (create, run); on success c holds the running init. */
int create_common (struct create_ctx *c, brig_error *err);

/* Undo a failed create: kill the init, remove the cgroup and the state. */
void create_ctx_undo (struct create_ctx *c);

/* SIGKILL the init (through its pidfd) and reap it and the intermediate
 * child, if any. */
void create_kill_init (struct create_ctx *c);

/* What the extension is shown of c (container/extension.h). */
static inline void
create_ext_info (const struct create_ctx *c, struct brig_ext_create_info *info)
{
  *info = (struct brig_ext_create_info) {
    .ctx = c->ctx, .id = c->o->id, .cfg = c->cfg, .bundle = c->bundle, .rootfs = c->rootfs,
    .ns = &c->ns, .rootless = c->rootless, .reset = c->reset, .shared_cgroup = c->shared_cgroup,
    .dirfd = c->dirfd, .cg = c->cg, .pid = c->pid,
  };
}

/* Fill c->st from the config, the cgroup and the extension's record (old:
 * the state before, for a reset, else NULL). */
void create_fill_state (struct create_ctx *c, struct brig_ext_state *old);

/* The state JSON of the container being made, with the given status and
 * the init's pid (for hooks and the seccomp agent). */
char *create_state_json (struct create_ctx *c, enum brig_status status);

/* Close what the caller leaked to brig beyond stdio and preserve_fds. */
void create_close_inherited_fds (int preserve_fds);

/* Bind and listen on the exec socket the init waits on for `start`. */
int create_listen_exec_socket (int dirfd, int *fd, brig_error *err);

/* Clone the init and drive it through the handshake until READY
 * (container/spawn.c). */
int create_spawn_init (struct create_ctx *c, int exec_fd, int child_console, brig_error *err);

#endif
