/* The sandbox layer's hooks at the core's extension points
 * (container/extension.h): each says what the sandbox does there and calls
 * the file that does it (check.c for the node policy, egress*.c,
 * ephemeral.c, userns_auto.c, reset_pin.c). Every hook returns at once, with
 * no syscall, for a config without run.brig. annotations; the node policy
 * costs one open(2) of its file at create, exec, update and restore. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hooks.h"
#include "log.h"
#include "sandbox/check.h"
#include "sandbox/claim.h"
#include "sandbox/egress.h"
#include "process/reaper.h"
#include "sandbox/ephemeral.h"
#include "sandbox/extension.h"
#include "sandbox/fork.h"
#include "sandbox/pod.h"
#include "sandbox/reset_internal.h"
#include "sandbox/spec_sandbox.h"
#include "sandbox/userns_auto.h"
#include "utils.h"

/* What the sandbox decided and made for one create. */
struct brig_ext_create {
  brig_egress_policy *egress;      /* run.brig.egress, NULL without */
  struct brig_policy_create policy;/* the node policy, loaded once */
  struct brig_ephemeral ephemeral; /* run.brig.rootfs.ephemeral */
  char *ephemeral_dir;             /* the disk layer's directory, or NULL */
  bool reset_opt_in;               /* pin what a later reset reuses */
  bool userns_auto;                /* run.brig.userns=auto */
  struct brig_userns_auto userns;  /* its range, once taken */
};

/* ... for one exec. */
struct brig_ext_exec {
  struct brig_policy_exec pe;
};

const struct brig_ext_state *
brig_sandbox_state (const struct brig_state_file *st)
{
  return st->ext;
}

/* ---- create ---- */

/* Whether the namespace of type t is the container's own rather than the
 * host's: new, or joined through a path that opens another namespace than
 * brig's or pid 1's (judged by inode, however the path is spelt). */
static bool
own_namespace (const struct brig_ns_plan *ns, enum brig_ns_type t)
{
  if (ns->new_flags & brig_ns_flag (t))
    return true;
  return ns->join_fd[t] >= 0 && !brig_ns_judged_host (ns->join_fd[t], t);
}

/* Whether the container's user namespace (its own) will own its network
 * namespace: a new network namespace is made by it (or after joining it);
 * a joined one is judged by its owner's chain; a new user namespace owns
 * nothing that exists already. */
static bool
userns_owns_netns (const struct brig_ns_plan *ns)
{
  if (ns->new_flags & CLONE_NEWNET)
    return true;
  if (ns->join_fd[BRIG_NS_NET] < 0 || (ns->new_flags & CLONE_NEWUSER)
      || ns->join_fd[BRIG_NS_USER] < 0)
    return false;
  return brig_egress_userns_owns (ns->join_fd[BRIG_NS_USER], ns->join_fd[BRIG_NS_NET]);
}

/* run.brig.egress: parse, resolve, and refuse what could bypass it. */
static int
validate_egress (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                 brig_error *err)
{
  const oci_process *p = info->cfg->process;
  struct brig_egress_ns ns = {
    .own_userns = own_namespace (info->ns, BRIG_NS_USER),
    .own_pidns = (info->ns->new_flags & CLONE_NEWPID) != 0,
    .owns_netns = userns_owns_netns (info->ns),
  };
  int r = brig_egress_parse (info->cfg->annotations, own_namespace (info->ns, BRIG_NS_NET),
                             &x->egress, err);
  if (r < 0)
    return r;
  return brig_egress_check_caps (p ? p->capabilities : NULL, &ns, "process.capabilities", err);
}

/* run.brig.egress=none needs no program where the kernel already holds it:
 * a network namespace brig makes has nothing but its loopback, and nothing
 * the config runs before the process (netDevices, hooks that could wire it
 * up) adds an interface. Used where no cgroup v2 directory can carry the
 * programs (rootless, pure v1). */
static bool
egress_held_by_netns (const struct brig_ext_create_info *info, const struct brig_ext_create *x)
{
  const oci_config *cfg = info->cfg;

  return x->egress->mode == BRIG_EGRESS_NONE && (info->ns->new_flags & CLONE_NEWNET)
         && info->ns->join_fd[BRIG_NS_NET] < 0
         && !(cfg->linux && cfg->linux->net_devices_len > 0)
         && !brig_hooks_before_process (cfg->hooks);
}

/* run.brig.userns=auto at a reset: the range create took stays the
 * container's. */
static int
userns_recorded (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                 brig_error *err)
{
  uint32_t base;
  int r = brig_userns_auto_recorded (info->dirfd, &base);
  if (r < 0)
    return brig_error_set (err, -r, "annotation " BRIG_USERNS_KEY "=auto: no id range "
                           "recorded in the state directory");
  brig_userns_auto_apply (info->cfg, base, &x->userns);
  return 0;
}

static int
sandbox_create_validate (const struct brig_ext_create_info *info, struct brig_ext_create **rec,
                         brig_error *err)
{
  struct brig_ext_create *x = xmalloc0 (sizeof *x);
  const oci_config *cfg = info->cfg;
  int r;

  *rec = x;
  /* The node policy, before anything exists, on the config as written and
   * the namespace fds the init will join (nothing opens those paths
   * again); before any egress hostname is resolved, so a refused config
   * sends no DNS query. reset: judged at create. */
  if (!info->reset && (r = brig_policy_create_check (info->ctx->policy, cfg, info->bundle,
                                                     info->ns->join_fd, &x->policy, err)) < 0)
    return r;
  /* A Kubernetes pod's annotations reach its pause container too (CRI
   * passes them to every container of the pod), whose spec CRI makes with
   * a read-only root and the default capabilities: the policy is for the
   * pod's workload containers, each confined in its own cgroup, and the
   * pause container runs the node's image, not the tenant's
   * (docs/sandbox.md, "Pods through CRI"). Asked only when the annotation
   * is there; brig_ephemeral_parse asks the same. reset: the policy create
   * applied stays attached to the cgroup, with the addresses create
   * resolved; nothing is resolved again. */
  if (!info->reset && brig_egress_requested (cfg->annotations)
      && !brig_pod_sandbox_container (cfg->annotations) && (r = validate_egress (info, x, err)) < 0)
    return r;
  /* and again on the addresses the hostnames were pinned to */
  if (!info->reset && (r = brig_policy_create_check_pinned (&x->policy, cfg, info->ns->join_fd,
                                                            x->egress, err)) < 0)
    return r;
  if (cfg->annotations && (r = brig_reset_opt_in (cfg->annotations, &x->reset_opt_in, err)) < 0)
    return r;
  r = brig_ephemeral_parse (cfg, &x->ephemeral, err);
  if (r < 0)
    return r;
  if (cfg->annotations
      && (r = brig_userns_auto_parse (cfg, (info->ns->new_flags & CLONE_NEWUSER) != 0,
                                      info->rootless, info->ctx->userns_range, &x->userns_auto,
                                      &x->userns, err)) < 0)
    return r;
  if (info->reset && x->userns_auto)
    return userns_recorded (info, x, err);
  return 0;
}

static int
sandbox_create_check (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                      brig_error *err)
{
  /* The programs would filter the foreign processes too, and stay attached
   * to a cgroup brig never removes. */
  if (info->shared_cgroup && x->egress)
    return brig_error_set (err, 0, "annotation " BRIG_EGRESS_KEY ": cannot be applied to a "
                           "cgroup shared with other processes (annotation "
                           BRIG_CGROUP_SHARED_ANNOTATION "=true)");
  return 0;
}

/* The disk layer's directory, absolute: the init opens it by path, in its
 * own mount namespace. */
static int
disk_layer_dir (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                brig_error *err)
{
  _cleanup_free_ char *root = realpath (info->ctx->state_root, NULL);
  if (root == NULL)
    return brig_error_errno (err, "state root %s", info->ctx->state_root);
  x->ephemeral_dir = xasprintf ("%s/%s/" BRIG_EPHEMERAL_DIR, root, info->id);
  return 0;
}

/* reset: the disk layer of run.brig.rootfs.ephemeral emptied and made again
 * (the tmpfs layer comes new with the new mount namespace). */
static int
remake_disk_layer (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                   brig_error *err)
{
  int r = brig_ephemeral_discard (info->dirfd);
  /* What the walk could not remove (a file the tenant made immutable)
   * stays in the layer, whose directories then still exist: the reset's
   * rootfs.layer check judges what is there and fails the reset. */
  if (r < 0
      && faccessat (info->dirfd, BRIG_EPHEMERAL_DIR "/upper", F_OK, AT_SYMLINK_NOFOLLOW) == 0
      && faccessat (info->dirfd, BRIG_EPHEMERAL_DIR "/work", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    brig_debug ("reset: empty the ephemeral layer: %s", strerror (-r));
  else if (r < 0)
    return brig_error_set (err, -r, "empty the ephemeral layer");
  else if ((r = brig_ephemeral_make_disk (info->dirfd, info->cfg, err)) < 0)
    return r;
  return disk_layer_dir (info, x, err);
}

static int
sandbox_create_claimed (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                        brig_error *err)
{
  int r;

  if (info->reset)
    return x->ephemeral.mode == BRIG_EPHEMERAL_DISK ? remake_disk_layer (info, x, err) : 0;
  if (x->userns_auto)
    {
      /* recorded in the state directory: freed with it, by delete */
      uint32_t base;
      r = brig_userns_auto_alloc (&x->userns.from, info->ctx->state_root, info->id, info->dirfd,
                                  &base, err);
      if (r < 0)
        return r;
      brig_userns_auto_apply (info->cfg, base, &x->userns);
    }
  if (x->ephemeral.mode == BRIG_EPHEMERAL_DISK)
    {
      r = brig_ephemeral_make_disk (info->dirfd, info->cfg, err);
      if (r < 0)
        return r;
      return disk_layer_dir (info, x, err);
    }
  return 0;
}

static int
sandbox_create_cgroup (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                       brig_error *err)
{
  const char *dir = brig_cgroup_unified_dir (info->cg);
  /* before any process of the container exists in the cgroup */
  if (x->egress && (dir || !egress_held_by_netns (info, x)))
    return brig_egress_apply (x->egress, dir, err);
  return 0;
}

/* In the init: the overlay is the new root's mount, as the self-bind would
 * be; every config mount below lands on top of it. */
static int
mount_ephemeral (const void *data, const char *rootfs, bool userns, int tree, int *upper_out,
                 const struct brig_layer_seed *seed, brig_error *err)
{
  const struct brig_ext_create *x = data;
  return brig_ephemeral_mount (rootfs, &x->ephemeral, x->ephemeral_dir, userns, tree, upper_out,
                               seed, err);
}

/* In the init: a read-only root locked in its superblock (ephemeral.h). */
static int
mount_locked (const void *data, const char *rootfs, bool userns, int tree, int *upper_out,
              const struct brig_layer_seed *seed, brig_error *err)
{
  (void) data;
  (void) upper_out;
  (void) seed; /* no upper to fill: brig fork needs an ephemeral root */
  return brig_ephemeral_mount_locked (rootfs, userns, tree, err);
}

static int
sandbox_create_rootfs (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                       int *tree, struct brig_root_layer *layer, brig_error *err)
{
  unsigned long newf = info->ns->new_flags;
  bool own = (newf & CLONE_NEWUSER) && (newf & CLONE_NEWNS);
  /* A read-only root of a container a reset hands to other tenants (a
   * pool member): a tenant with CAP_SYS_ADMIN in its user namespace could
   * remount a bind of the bundle writable (the mount is made in its
   * namespace, so the kernel locks none of its flags); an overlay without
   * an upper layer is read-only in its superblock. */
  bool locked = own && x->reset_opt_in && info->cfg->root && info->cfg->root->readonly
                && x->ephemeral.mode == BRIG_EPHEMERAL_OFF;

  if (x->ephemeral.mode != BRIG_EPHEMERAL_OFF || locked)
    {
      layer->mount = locked ? mount_locked : mount_ephemeral;
      layer->data = x;
    }
  /* The ephemeral lower as container root must see it to write its root:
   * idmapped from the owner of root.path (ephemeral_lower.c), attached by
   * the layer. (A locked read-only root keeps what it had: auto's tree
   * below, attached by the layer, or root.path itself.) */
  if (own && x->ephemeral.mode == BRIG_EPHEMERAL_TMPFS)
    return brig_ephemeral_lower_tree (info->rootfs, info->cfg,
                                      x->userns_auto ? x->userns.uid : NULL, x->userns.nuid,
                                      x->userns_auto ? x->userns.gid : NULL, x->userns.ngid,
                                      tree, err);
  /* run.brig.userns=auto: the rootfs as the container's range sees it */
  if (x->userns_auto && own)
    {
      int fd = brig_userns_auto_rootfs_tree (info->rootfs, &x->userns, err);
      if (fd < 0)
        return fd;
      *tree = fd;
    }
  return 0;
}

static struct brig_ext_state *
sandbox_create_state (const struct brig_ext_create_info *info, struct brig_ext_create *x,
                      struct brig_ext_state *old)
{
  struct brig_ext_state s = { NULL, NULL, NULL };

  /* reset: what create applied and resolved, kept */
  if (old)
    s.egress = brig_steal_ptr (old->egress);
  else if (x->egress)
    s.egress = brig_egress_state (x->egress, brig_cgroup_unified_dir (info->cg));
  if (x->userns_auto)
    s.userns = brig_userns_auto_state (&x->userns);
  if (x->ephemeral.mode != BRIG_EPHEMERAL_OFF)
    {
      _cleanup_free_ char *dir = xasprintf ("%s/%s", info->ctx->state_root, info->id);
      s.ephemeral = brig_ephemeral_state (&x->ephemeral, dir);
      enum brig_init_mode mode;
      /* brig's pid 1 keeps the tmpfs layer's upper directory open there
       * (process/reaper.h), for `brig fork` to take with pidfd_getfd */
      if (x->ephemeral.mode == BRIG_EPHEMERAL_TMPFS
          && brig_init_mode_parse (info->cfg->annotations, &mode, NULL) == 0
          && mode != BRIG_INIT_EXEC)
        {
          s.ephemeral->upper_fd = BRIG_REAPER_UPPER_FD;
          s.ephemeral->has_upper_fd = true;
        }
    }
  if (s.egress == NULL && s.userns == NULL && s.ephemeral == NULL)
    return NULL;
  struct brig_ext_state *out = xmalloc0 (sizeof *out);
  *out = s;
  return out;
}

static void
sandbox_create_started (const struct brig_ext_create_info *info, struct brig_ext_create *x)
{
  /* Only for containers that opted in (sandbox/reset_internal.h). */
  if (x->reset_opt_in)
    brig_reset_pin (info->dirfd, info->cfg, info->ns, info->pid, true);
}

static void
sandbox_create_free (struct brig_ext_create *x)
{
  if (x == NULL)
    return;
  free (x->ephemeral_dir);
  brig_userns_auto_clear (&x->userns);
  brig_egress_policy_free (x->egress);
  free (x);
}

/* ---- the state store ---- */

static void
sandbox_state_save (const struct brig_ext_state *s, oci_brig_state *out)
{
  out->egress = s->egress;
  out->ephemeral = s->ephemeral;
  out->userns = s->userns;
}

static struct brig_ext_state *
sandbox_state_load (oci_brig_state *in)
{
  struct brig_ext_state *s;

  if (in->egress == NULL && in->ephemeral == NULL && in->userns == NULL)
    return NULL;
  s = xmalloc0 (sizeof *s);
  s->egress = brig_steal_ptr (in->egress);
  s->ephemeral = brig_steal_ptr (in->ephemeral);
  s->userns = brig_steal_ptr (in->userns);
  return s;
}

static void
sandbox_state_show (const struct brig_ext_state *s, int dirfd, oci_state *out)
{
  /* a pool member's claim (only pool members have one: no syscall for
   * any other container) */
  oci_claim *claim = oci_map_get (out->annotations, BRIG_RESET_KEY) ? brig_claim_read (dirfd)
                                                                     : NULL;

  if (s == NULL && claim == NULL)
    return;
  /* what the sandbox layer applied, beside runc's fields */
  out->brig = xmalloc0 (sizeof *out->brig);
  out->brig->claim = claim;
  if (s == NULL)
    return;
  /* a claim's policy replaces the pool's while the claim lasts */
  if (s->egress)
    out->brig->egress = brig_claim_egress_state (claim, out->annotations, s->egress);
  if (s->egress && out->brig->egress == NULL)
    out->brig->egress = oci_copy (&oci_egress_state_type, s->egress);
  if (s->ephemeral)
    out->brig->rootfs = oci_copy (&oci_rootfs_state_type, s->ephemeral);
  if (s->userns)
    out->brig->userns = oci_copy (&oci_userns_state_type, s->userns);
}

static void
sandbox_state_free (struct brig_ext_state *s)
{
  if (s->egress)
    oci_free (&oci_egress_state_type, s->egress);
  if (s->ephemeral)
    oci_free (&oci_rootfs_state_type, s->ephemeral);
  if (s->userns)
    oci_free (&oci_userns_state_type, s->userns);
  free (s);
}

static int
sandbox_state_remove (const struct brig_context *ctx, const char *id, int dirfd, brig_error *err)
{
  int fd;

  /* run.brig.userns=auto: the range goes back (every process of the
   * container is dead by now) */
  brig_userns_auto_free (ctx->state_root, id, dirfd);
  /* The disk layer of run.brig.rootfs.ephemeral: a tree the tenant made. */
  if ((fd = brig_ephemeral_discard (dirfd)) < 0)
    return brig_error_set (err, -fd, "remove the ephemeral layer %s/%s/" BRIG_EPHEMERAL_DIR,
                           ctx->state_root, id);
  return 0;
}

/* ---- the running container ---- */

static int
sandbox_exec_begin (const struct brig_context *ctx, const oci_config *cfg,
                    struct brig_ext_exec **rec, brig_error *err)
{
  *rec = xmalloc0 (sizeof **rec);
  /* The node policy: the container's own findings first (exec's process
   * changes cfg->process), then what the exec'd process adds. */
  return brig_policy_exec_begin (ctx->policy, cfg, &(*rec)->pe, err);
}

static int
sandbox_exec_check (struct brig_ext_exec *x, const struct brig_ext_state *st, pid_t init,
                    bool new_pidns, const oci_config *cfg, const oci_process *p,
                    const char *process_path, brig_error *err)
{
  int r = brig_policy_exec_check (&x->pe, cfg, p, err);
  if (r < 0)
    return r;
  /* The egress policy holds exec's process only as create held the
   * config's: the same judgement of its capabilities, with or without a
   * node policy (issue #22 item 5). */
  if (st && st->egress)
    {
      _cleanup_free_ char *field = process_path
        ? xasprintf ("exec --process %s: process.capabilities", process_path)
        : xstrdup ("exec --cap");
      r = brig_egress_check_exec (init, new_pidns, p->capabilities, field, err);
    }
  return r;
}

static void
sandbox_exec_free (struct brig_ext_exec *x)
{
  if (x == NULL)
    return;
  brig_policy_exec_clear (&x->pe);
  free (x);
}

static int
sandbox_update_check (const struct brig_context *ctx, const oci_config *cfg,
                      const oci_resources *res, brig_error *err)
{
  return brig_policy_update_check (ctx->policy, cfg, res, err);
}

static int
sandbox_restore_begin (const struct brig_context *ctx, const oci_config *cfg, const char *dir,
                       brig_error *err)
{
  /* Restore makes a container from a bundle too: the node policy holds. */
  return brig_policy_enforce (ctx->policy, cfg, dir, err);
}

static int
sandbox_restore_check (const oci_config *cfg, brig_error *err)
{
  const char *eph;

  /* criu's restored sockets would start outside any policy: fail closed */
  if (brig_egress_requested (cfg->annotations))
    return brig_error_say (err, EOPNOTSUPP, "annotation " BRIG_EGRESS_KEY ": not supported by restore");
  /* criu would restore onto the bundle's rootfs itself, which the layer
   * promises never to write: fail closed */
  eph = oci_map_get (cfg->annotations, BRIG_EPHEMERAL_KEY);
  if (eph && strcmp (eph, "false") != 0)
    return brig_error_say (err, EOPNOTSUPP, "annotation " BRIG_EPHEMERAL_KEY ": not supported by restore");
  /* criu makes the user namespace itself, as root, with the config's ids:
   * not the range of its own the annotation promises */
  if (oci_map_get (cfg->annotations, BRIG_USERNS_KEY))
    return brig_error_say (err, EOPNOTSUPP, "annotation " BRIG_USERNS_KEY ": not supported by restore");
  return 0;
}

const struct brig_extension brig_sandbox_extension = {
  .create_validate = sandbox_create_validate,
  .create_check = sandbox_create_check,
  .create_claimed = sandbox_create_claimed,
  .create_cgroup = sandbox_create_cgroup,
  .create_rootfs = sandbox_create_rootfs,
  .create_state = sandbox_create_state,
  .create_started = sandbox_create_started,
  .create_free = sandbox_create_free,
  .state_save = sandbox_state_save,
  .state_load = sandbox_state_load,
  .state_show = sandbox_state_show,
  .state_free = sandbox_state_free,
  .state_remove = sandbox_state_remove,
  .exec_begin = sandbox_exec_begin,
  .exec_check = sandbox_exec_check,
  .exec_free = sandbox_exec_free,
  .exec_tenant = brig_claim_exec,
  .update_check = sandbox_update_check,
  .restore_begin = sandbox_restore_begin,
  .restore_check = sandbox_restore_check,
  .lock_taken = brig_fork_recover_freeze,
};

/* ---- above the core: brig features and brig spec --sandbox ---- */

void
brig_sandbox_features (oci_features *f)
{
  /* the sandbox layer's config annotations (docs/sandbox.md) */
  oci_map_set (&f->annotations, BRIG_EGRESS_KEY, "none|public|allowlist");
  oci_map_set (&f->annotations, BRIG_EGRESS_ALLOW_KEY, "CIDR[:port],hostname[:port],...");
  oci_map_set (&f->annotations, BRIG_EGRESS_DENY_KEY, "CIDR,...");
  oci_map_set (&f->annotations, BRIG_EGRESS_HOSTNET_KEY, "true|false");
  oci_map_set (&f->annotations, BRIG_EPHEMERAL_KEY, "true|false");
  oci_map_set (&f->annotations, BRIG_USERNS_KEY, "auto");
  oci_map_set (&f->annotations, BRIG_EPHEMERAL_SIZE_KEY, "BYTES[k|m|g]|disk");
  oci_map_set (&f->annotations, BRIG_RESET_KEY, "true|false");
}

int
brig_sandbox_spec (const struct brig_sandbox_spec_opts *opts, oci_config **out,
                   brig_error *err)
{
  int r = brig_spec_sandbox (opts->rootless || geteuid () != 0,
                             opts->userns_base ? opts->userns_base : BRIG_SANDBOX_USERNS_BASE,
                             out, err);
  /* The overlay takes the read-only root's place: writes go to the layer,
   * never to the image (a read-only root and the layer together are
   * refused at create). */
  if (r == 0 && opts->ephemeral)
    {
      oci_map_set (&(*out)->annotations, BRIG_EPHEMERAL_KEY, "true");
      (*out)->root->readonly = false;
    }
  return r;
}
