/* Idmapped bind mounts (mounts[].options idmap/ridmap, mounts[].uidMappings
 * and gidMappings). mount_setattr(MOUNT_ATTR_IDMAP) needs a user namespace
 * carrying the mapping, and CAP_SYS_ADMIN over the filesystem's user
 * namespace: a container init inside its own user namespace cannot idmap
 * the host's filesystems, so the parent does it when the init asks
 * (rootfs/source.c), in the init's mount namespace (so the source shows
 * what earlier mounts put there), and the init only attaches the result. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rootfs/mounts.h"
#include "paths.h"
#include "rootfs/internal.h"
#include "sync.h"
#include "utils.h"

static char *
format_map (const oci_id_mapping *m, size_t n)
{
  char *out = xstrdup ("");
  for (size_t i = 0; i < n; i++)
    {
      char *next = xasprintf ("%s%u %u %u\n", out, m[i].container_id, m[i].host_id, m[i].size);
      free (out);
      out = next;
    }
  return out;
}

/* A user namespace with the given maps, held by an fd: a child unshares
 * it, the caller writes the maps and opens it, the child exits. */
static int
make_userns (const oci_id_mapping *u, size_t nu, const oci_id_mapping *g, size_t ng,
             brig_error *err)
{
  _cleanup_free_ char *umap = format_map (u, nu), *gmap = format_map (g, ng);
  int to_child[2] = { -1, -1 }, to_parent[2] = { -1, -1 };
  char pidbuf[32] = "", path[64];
  ssize_t n;
  pid_t pid;
  int fd = -1, r = 0;

  if (pipe2 (to_child, O_CLOEXEC) < 0 || pipe2 (to_parent, O_CLOEXEC) < 0)
    {
      r = brig_error_errno (err, "pipe");
      goto out;
    }
  pid = fork ();
  if (pid < 0)
    {
      r = brig_error_errno (err, "fork");
      goto out;
    }
  if (pid == 0)
    {
      char c;
      ssize_t l;
      close (to_child[1]);
      close (to_parent[0]);
      if (unshare (CLONE_NEWUSER) < 0)
        _exit (1);
      /* Our pid as the mounted /proc numbers it (it may be another pid
         namespace's than ours). */
      l = readlink ("/proc/self", pidbuf, sizeof (pidbuf) - 1);
      if (l <= 0 || write (to_parent[1], pidbuf, (size_t) l) != l)
        _exit (1);
      close (to_parent[1]);
      (void) !read (to_child[0], &c, 1);
      _exit (0);
    }
  close (to_parent[1]);
  to_parent[1] = -1;
  n = read (to_parent[0], pidbuf, sizeof (pidbuf) - 1);
  if (n <= 0)
    {
      r = brig_error_set (err, EPERM, "create a user namespace for an idmapped mount");
      goto reap;
    }
  pidbuf[n] = '\0';
  snprintf (path, sizeof (path), "/proc/%s/uid_map", pidbuf);
  if ((r = brig_write_string_at (AT_FDCWD, path, umap)) < 0)
    {
      r = brig_error_set (err, -r, "write the uid map of an idmapped mount");
      goto reap;
    }
  snprintf (path, sizeof (path), "/proc/%s/gid_map", pidbuf);
  if ((r = brig_write_string_at (AT_FDCWD, path, gmap)) < 0)
    {
      r = brig_error_set (err, -r, "write the gid map of an idmapped mount");
      goto reap;
    }
  snprintf (path, sizeof (path), "/proc/%s/ns/user", pidbuf);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    r = brig_error_errno (err, "open %s", path);
reap:
  close (to_child[1]);
  to_child[1] = -1;
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
out:
  for (int i = 0; i < 2; i++)
    {
      if (to_child[i] >= 0)
        close (to_child[i]);
      if (to_parent[i] >= 0)
        close (to_parent[i]);
    }
  if (r < 0 && fd >= 0)
    close (fd);
  return r < 0 ? r : fd;
}

int
brig_idmap_userns (const oci_id_mapping *u, size_t nu, const oci_id_mapping *g, size_t ng,
                   brig_error *err)
{
  return make_userns (u, nu, g, ng, err);
}

int
rootfs_idmap_userns (const oci_config *cfg, const oci_mount *m, brig_error *err)
{
  if (m->uid_mappings_len > 0 && m->gid_mappings_len > 0)
    return make_userns (m->uid_mappings, m->uid_mappings_len, m->gid_mappings,
                        m->gid_mappings_len, err);
  if (cfg->linux && cfg->linux->uid_mappings_len > 0 && cfg->linux->gid_mappings_len > 0)
    return make_userns (cfg->linux->uid_mappings, cfg->linux->uid_mappings_len,
                        cfg->linux->gid_mappings, cfg->linux->gid_mappings_len, err);
  return brig_error_say (err, EINVAL, "idmap needs uidMappings and gidMappings "
                         "(on the mount or the container)");
}

/* In a child of the parent that entered the init's mount namespace (the
 * kernel clones only mounts of the caller's namespace): the detached,
 * idmapped copy of srcfd with the mount's attributes, sent over sock. */
static void __attribute__ ((noreturn))
idmap_in_child (int sock, int mntns, int srcfd, int userns, const struct brig_mount_options *o)
{
  int tree, r = 0;

  if (setns (mntns, CLONE_NEWNS) < 0)
    _exit (1);
  tree = brig_open_tree (srcfd, "", OPEN_TREE_CLONE | AT_EMPTY_PATH
                         | (o->recursive ? AT_RECURSIVE : 0));
  if (tree < 0)
    r = tree;
  if (r == 0 && (o->attr_set || o->attr_clr))
    {
      uint64_t implied = brig_mount_implied_clr (o);
      r = brig_mount_setattr_fd (tree, false, o->attr_set, o->attr_clr | implied, 0, -1);
      if (r == -EPERM && implied)
        r = brig_mount_setattr_fd (tree, false, o->attr_set, o->attr_clr, 0, -1);
    }
  if (r == 0)
    r = brig_mount_setattr_fd (tree, o->ridmap, MOUNT_ATTR_IDMAP, 0, 0, userns);
  if (r == 0 && (o->rec_attr_set || o->rec_attr_clr))
    r = brig_mount_setattr_fd (tree, true, o->rec_attr_set, o->rec_attr_clr, 0, -1);
  brig_sync_send (sock, 0, r, NULL, 0, r == 0 ? tree : -1);
  _exit (0);
}

int
rootfs_idmap_tree (const oci_config *cfg, size_t i, int srcfd, pid_t pid, brig_error *err)
{
  const oci_mount *m = &cfg->mounts[i];
  struct brig_mount_options o;
  struct brig_sync_msg msg = { .fd = -1 };
  _cleanup_close_ int userns = -1, mntns = -1;
  int sv[2] = { -1, -1 }, r;
  char path[64];
  pid_t child;

  if (brig_mount_options_parse (m->options, m->options_len, &o, err) < 0)
    return brig_error_wrap (err, "mounts[%zu]", i);
  userns = rootfs_idmap_userns (cfg, m, err);
  if (userns < 0)
    {
      brig_mount_options_free (&o);
      return userns;
    }
  snprintf (path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
  mntns = open (path, O_RDONLY | O_CLOEXEC);
  if (mntns < 0 || socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      brig_mount_options_free (&o);
      return brig_error_errno (err, "idmap %s", m->source);
    }
  child = fork ();
  if (child == 0)
    {
      close (sv[0]);
      idmap_in_child (sv[1], mntns, srcfd, userns, &o);
    }
  brig_mount_options_free (&o);
  close (sv[1]);
  r = child < 0 ? -errno : brig_sync_recv (sv[0], &msg);
  close (sv[0]);
  if (child > 0)
    while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
      ;
  if (r == 0 && (msg.code != 0 || msg.fd < 0))
    r = msg.code < 0 ? msg.code : -EIO;
  if (r < 0)
    {
      brig_sync_msg_clear (&msg);
      return brig_error_set (err, -r, "idmap %s", m->source);
    }
  return msg.fd;
}

bool
rootfs_wants_idmap (const oci_mount *m)
{
  struct brig_mount_options o;
  bool idmap;

  if (m->uid_mappings_len > 0)
    return true;
  if (brig_mount_options_parse (m->options, m->options_len, &o, NULL) < 0)
    return false;
  idmap = o.idmap;
  brig_mount_options_free (&o);
  return idmap;
}
