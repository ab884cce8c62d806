/* `create` and `run`, the first half of the parent side: read the bundle
 * and check everything that can be checked before anything exists, so a
 * refused config leaves nothing behind (container/create.c makes it). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/caps.h"
#include "container/create.h"
#include "process/groups.h"
#include "process/lsm.h"
#include "process/procattr.h"
#include "process/reaper.h"
#include "paths.h"
#include "process/process.h"
#include "rootfs/rootfs.h"
#include "process/sysctl.h"
#include "process/terminal.h"
#include "process/userns_default.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

/* The canonical absolute path of a directory opened as fd, as realpath(3)
 * would give it: the kernel's name of the fd (one readlink) rather than a
 * readlink of every component. NULL when procfs cannot tell (not mounted,
 * or the directory is gone): the caller falls back to realpath. */
static char *
canonical_of_fd (int fd)
{
  char *p = brig_path_of_fd_in_root (fd, NULL);
  size_t n = p ? strlen (p) : 0;
  static const char gone[] = " (deleted)";

  if (p && (p[0] != '/' || (n >= sizeof gone - 1 && strcmp (p + n - (sizeof gone - 1), gone) == 0)))
    {
      free (p);
      return NULL;
    }
  return p;
}

/* Read the bundle's config.json and resolve the paths. */
int
create_load_bundle (struct create_ctx *c, brig_error *err)
{
  char buf[PATH_MAX];
  const char *b = c->o->bundle && *c->o->bundle ? c->o->bundle : ".";
  _cleanup_close_ int bfd = -1;
  oci_error perr = { NULL };
  int r;

  bfd = open (b, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (bfd < 0)
    return brig_error_errno (err, "bundle %s", b);
  c->bundle = canonical_of_fd (bfd);
  if (c->bundle == NULL)
    {
      if (realpath (b, buf) == NULL)
        return brig_error_errno (err, "bundle %s", b);
      c->bundle = xstrdup (buf);
    }
  r = brig_read_file_at (bfd, "config.json", &c->config_buf, &c->config_len, err);
  if (r < 0)
    return brig_error_wrap (err, "bundle %s", c->bundle);
  c->cfg = oci_config_parse_data (c->config_buf, c->config_len, "config.json", &perr);
  if (c->cfg == NULL)
    {
      r = brig_error_say (err, EINVAL, "%s", perr.msg ? perr.msg : "config.json: invalid");
      free (perr.msg);
      return r;
    }
  if (c->o->edit_config)
    {
      /* Only callers that edit (brig pool) pay for generating it again. */
      r = c->o->edit_config (c->cfg, c->o->edit_data, err);
      if (r < 0)
        return r;
      free (c->config_buf);
      c->config_buf = oci_generate (&oci_config_type, c->cfg, false, &c->config_len);
      if (c->config_buf == NULL)
        return brig_error_errno (err, "config.json: generate the edited config");
    }
  if (c->cfg->root == NULL || c->cfg->root->path == NULL || *c->cfg->root->path == '\0')
    return brig_error_say (err, EINVAL, "config.json: root.path is required");
  {
    _cleanup_free_ char *p = c->cfg->root->path[0] == '/'
      ? xstrdup (c->cfg->root->path)
      : xasprintf ("%s/%s", c->bundle, c->cfg->root->path);
    /* Relative to the bundle's fd, which is what p names: O_DIRECTORY
       refuses anything but a directory (after following symlinks, as
       realpath does). */
    _cleanup_close_ int rfd = openat (bfd, c->cfg->root->path, O_PATH | O_DIRECTORY
                                      | O_CLOEXEC);
    if (rfd < 0)
      return brig_error_errno (err, "config.json: root.path %s", p);
    c->rootfs = canonical_of_fd (rfd);
    if (c->rootfs == NULL)
      {
        struct stat st;
        if (realpath (p, buf) == NULL)
          return brig_error_errno (err, "config.json: root.path %s", p);
        if (stat (buf, &st) < 0 || !S_ISDIR (st.st_mode))
          return brig_error_set (err, ENOTDIR, "config.json: root.path %s", buf);
        c->rootfs = xstrdup (buf);
      }
  }
  return 0;
}

static int
validate_rlimits (const oci_process *p, brig_error *err)
{
  for (size_t i = 0; i < p->rlimits_len; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp (p->rlimits[i].type, p->rlimits[j].type) == 0)
        return brig_error_say (err, EINVAL, "process.rlimits: duplicate entry for %s",
                               p->rlimits[i].type);
  for (size_t i = 0; i < p->rlimits_len; i++)
    if (p->rlimits[i].soft > p->rlimits[i].hard)
      return brig_error_say (err, EINVAL, "process.rlimits[%zu] (%s): soft limit above hard limit",
                             i, p->rlimits[i].type);
  return 0;
}

static int
validate_hooks (const oci_hook *h, size_t n, const char *kind, brig_error *err)
{
  for (size_t i = 0; i < n; i++)
    {
      if (h[i].path == NULL || h[i].path[0] != '/')
        return brig_error_say (err, EINVAL, "hooks.%s[%zu].path: must be an absolute path",
                               kind, i);
      if (h[i].has_timeout && h[i].timeout <= 0)
        return brig_error_say (err, EINVAL, "hooks.%s[%zu].timeout: must be positive", kind, i);
    }
  return 0;
}

/* Everything that can be checked before touching the system. */
/* run.oci.keep_original_groups: only where the kept groups stay what they
 * are (groups.h); rootless, the kernel keeps them anyway. */
static int
validate_keep_groups (const struct create_ctx *c, brig_error *err)
{
  _cleanup_free_ char *map = NULL;
  bool keep;
  int r = brig_keep_groups_parse (c->cfg->annotations, &keep, err);

  if (r < 0 || !keep || c->rootless)
    return r;
  if (c->ns.join_fd[BRIG_NS_USER] >= 0)
    return brig_error_set (err, 0, "annotation " BRIG_KEEP_GROUPS_ANNOTATION ": not with a "
                           "joined user namespace (linux.namespaces path), whose gid mapping "
                           "brig cannot read to check that it maps the caller's groups");
  if (c->ns.new_flags & CLONE_NEWUSER)
    map = brig_keep_groups_map_text (c->cfg->linux);
  return brig_keep_groups_check (map, err);
}

int
create_validate_config (struct create_ctx *c, brig_error *err)
{
  const oci_config *cfg = c->cfg;
  const oci_process *p = cfg->process;
  const oci_linux *lx = cfg->linux;
  int r;

  /* runtime-spec 1.3: process is optional at create; start then fails
   * (container.c). run is create + start, so it fails at once. */
  if (p == NULL && c->mode != MODE_CREATE)
    return brig_error_say (err, EINVAL, "config.json: process is required to run a container");
  if (p && (p->args == NULL || p->args_len == 0 || p->args[0] == NULL || *p->args[0] == '\0'))
    return brig_error_say (err, EINVAL, "config.json: process.args must not be empty");
  if (p && (p->cwd == NULL || p->cwd[0] != '/'))
    return brig_error_say (err, EINVAL, "config.json: process.cwd \"%s\" must be an absolute path",
                           p->cwd ? p->cwd : "");
  if (p && (r = validate_rlimits (p, err)) < 0)
    return r;
  r = brig_ns_plan_build (lx, &c->ns, err);
  if (r < 0)
    return r;
  /* Without a mount namespace of its own the container shares brig's: the
   * rootfs is entered with chroot and nothing is mounted (rootfs.c), so a
   * read-only root cannot be honoured. */
  if (!(c->ns.new_flags & CLONE_NEWNS) && c->ns.join_fd[BRIG_NS_MNT] < 0)
    {
      if (cfg->root && cfg->root->readonly)
        return brig_error_say (err, EINVAL, "root.readonly: needs a mount namespace "
                               "(linux.namespaces has none)");
      /* Restrictions brig cannot apply are refused, as runc does. */
      if (lx && (lx->masked_paths_len || lx->readonly_paths_len))
        return brig_error_say (err, EINVAL, "linux.%s: needs a mount namespace "
                               "(linux.namespaces has none)",
                               lx->masked_paths_len ? "maskedPaths" : "readonlyPaths");
      /* The pty comes from the container's /dev/pts, which is not mounted. */
      if (p && p->has_terminal && p->terminal)
        return brig_error_say (err, EINVAL, "process.terminal: needs a mount namespace "
                               "(linux.namespaces has none)");
    }
  if ((cfg->hostname && *cfg->hostname) || (cfg->domainname && *cfg->domainname))
    if (!(c->ns.new_flags & CLONE_NEWUTS) && c->ns.join_fd[BRIG_NS_UTS] < 0)
      return brig_error_say (err, EINVAL, "config.json: %s needs a uts namespace",
                             cfg->hostname && *cfg->hostname ? "hostname" : "domainname");
  r = brig_process_validate_hostname (cfg->hostname, cfg->domainname, err);
  if (r < 0)
    return r;
  if (c->ns.new_flags & CLONE_NEWUSER)
    {
      /* none given: brig's own ids, never host root (userns_default.h) */
      r = brig_userns_default_maps (c->cfg->linux, err);
      if (r < 0)
        return r;
    }
  else if (lx && (lx->uid_mappings_len || lx->gid_mappings_len)
           && c->ns.join_fd[BRIG_NS_USER] < 0)
    return brig_error_say (err, EINVAL, "linux.uidMappings: a user namespace is required");
  if (lx && lx->time_offsets_len && !(c->ns.new_flags & CLONE_NEWTIME))
    return brig_error_say (err, EINVAL, "linux.timeOffsets: a new time namespace is required");
  /* Values the kernel would take for the host's, or as "unchanged". */
  if ((r = brig_sysctl_validate (cfg, &c->ns, err)) < 0
      || (r = brig_process_validate_user (p ? p->user : NULL, err)) < 0
      || (lx && (r = brig_ns_validate_id_maps (lx, err)) < 0))
    return r;
  if (cfg->annotations && (r = validate_keep_groups (c, err)) < 0)
    return r;
  {
    enum brig_init_mode mode;
    if ((r = brig_init_mode_parse (cfg->annotations, &mode, err)) < 0)
      return r;
  }
  if (cfg->hooks)
    {
      const oci_hooks *h = cfg->hooks;
      if ((r = validate_hooks (h->prestart, h->prestart_len, "prestart", err)) < 0
          || (r = validate_hooks (h->create_runtime, h->create_runtime_len, "createRuntime", err)) < 0
          || (r = validate_hooks (h->create_container, h->create_container_len, "createContainer", err)) < 0
          || (r = validate_hooks (h->start_container, h->start_container_len, "startContainer", err)) < 0
          || (r = validate_hooks (h->poststart, h->poststart_len, "poststart", err)) < 0
          || (r = validate_hooks (h->poststop, h->poststop_len, "poststop", err)) < 0)
        return r;
    }
  r = brig_terminal_check_mode (p && p->has_terminal && p->terminal, c->mode != MODE_RUN,
                                c->o->console_socket, err);
  if (r < 0)
    return r;
  brig_caps_check (p ? p->capabilities : NULL);
  r = brig_process_validate_env (p, err);
  if (r < 0)
    return r;
  r = brig_procattr_validate (cfg, p, err);
  if (r < 0)
    return r;
  r = brig_lsm_validate (cfg, p, err);
  if (r < 0)
    return r;
  r = rootfs_validate (cfg, err);
  if (r < 0)
    return r;
  r = brig_netdev_validate (lx, &c->ns, err);
  if (r < 0)
    return r;
  /* The extension last (container/extension.h), on a config the core
   * accepts and the namespace fds the init will join. */
  if (BRIG_EXT_HOOK (create_validate))
    {
      struct brig_ext_create_info info;
      create_ext_info (c, &info);
      r = brig_ext->create_validate (&info, &c->ext, err);
      if (r < 0)
        return r;
    }
  if (lx && lx->seccomp)
    {
      _cleanup_free_ char *cache = brig_seccomp_cache_dir (c->ctx->state_root);
      r = brig_seccomp_prepare (lx->seccomp, cache, &c->seccomp, err);
      if (r < 0)
        return brig_error_wrap (err, "linux.seccomp");
    }
  return 0;
}

int
create_cgroup_shared (const oci_config *cfg, bool *shared, brig_error *err)
{
  const oci_map *a = cfg->annotations;
  *shared = false;
  for (size_t i = 0; a && i < a->len; i++)
    if (strcmp (a->keys[i], BRIG_CGROUP_SHARED_ANNOTATION) == 0)
      {
        if (strcmp (a->values[i], "true") != 0 && strcmp (a->values[i], "false") != 0)
          return brig_error_set (err, 0, "annotation " BRIG_CGROUP_SHARED_ANNOTATION
                                 ": \"%s\" is not true or false", a->values[i]);
        *shared = strcmp (a->values[i], "true") == 0;
      }
  return 0;
}

