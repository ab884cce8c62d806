/* /dev inside the container. Nodes are created fd-relatively below the
 * rootfs (the parent directory is resolved inside the root first), so an
 * image symlink like /dev -> /host/dev cannot make brig mknod on the host. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rootfs/devices.h"
#include "log.h"
#include "rootfs/mounts.h"
#include "paths.h"
#include "utils.h"

struct node {
  const char *path;
  char type;
  unsigned major, minor;
  mode_t mode;
  uid_t uid;
  gid_t gid;
};

/* The devices runtime-linux.md / config-linux.md "Default Devices" require. */
static const struct node default_nodes[] = {
  { "/dev/null", 'c', 1, 3, 0666, 0, 0 },
  { "/dev/zero", 'c', 1, 5, 0666, 0, 0 },
  { "/dev/full", 'c', 1, 7, 0666, 0, 0 },
  { "/dev/random", 'c', 1, 8, 0666, 0, 0 },
  { "/dev/urandom", 'c', 1, 9, 0666, 0, 0 },
  { "/dev/tty", 'c', 5, 0, 0666, 0, 0 },
};

static mode_t
type_bits (char type)
{
  switch (type)
    {
    case 'c':
    case 'u':
      return S_IFCHR;
    case 'b':
      return S_IFBLK;
    case 'p':
      return S_IFIFO;
    default:
      return 0;
    }
}

int
brig_devices_validate (const oci_config *cfg, brig_error *err)
{
  if (cfg->linux == NULL)
    return 0;
  for (size_t i = 0; i < cfg->linux->devices_len; i++)
    {
      const oci_device *d = &cfg->linux->devices[i];
      _cleanup_free_ char *clean = NULL;

      if (d->type == NULL || strlen (d->type) != 1 || type_bits (d->type[0]) == 0)
        return brig_error_say (err, EINVAL, "linux.devices[%zu].type: \"%s\" is not one of c, b, u, p",
                               i, d->type ? d->type : "");
      if (d->type[0] != 'p' && (!d->has_major || !d->has_minor))
        return brig_error_say (err, EINVAL, "linux.devices[%zu]: major and minor are required for type \"%s\"",
                               i, d->type);
      if ((d->has_major && (d->major < 0 || d->major > 0xfff))
          || (d->has_minor && (d->minor < 0 || d->minor > 0xfffff)))
        return brig_error_say (err, EINVAL, "linux.devices[%zu]: major/minor out of range", i);
      if (d->path == NULL || d->path[0] != '/')
        return brig_error_say (err, EINVAL, "linux.devices[%zu].path: \"%s\" is not an absolute path",
                               i, d->path ? d->path : "");
      clean = brig_path_clean (d->path);
      if (strcmp (clean, "/") == 0 || strcmp (clean, "/dev") == 0 || strstr (clean, "/..") != NULL)
        return brig_error_say (err, EINVAL, "linux.devices[%zu].path: \"%s\" is not a valid device path",
                               i, d->path);
    }
  return 0;
}

/* Bind the host's node at n->path onto the container's (created as an empty
 * file): what a user namespace allows instead of mknod. */
static int
bind_host_node (int rootfd, const struct node *n, brig_error *err)
{
  _cleanup_close_ int src = open (n->path, O_PATH | O_CLOEXEC);
  _cleanup_close_ int dst = -1;
  int r;

  if (src < 0)
    return brig_error_errno (err, "open host device %s", n->path);
  dst = brig_path_create_in_root (rootfd, n->path, BRIG_PATH_FILE, err);
  if (dst < 0)
    return dst;
  r = brig_bind_fd_onto_fd (src, dst, false, NULL);
  if (r < 0)
    return brig_error_set (err, -r, "bind mount %s", n->path);
  return 0;
}

/* An existing file is fine when it is the requested device already. */
static int
check_existing (int dirfd, const char *name, const struct node *n, bool strict, brig_error *err)
{
  struct stat st;

  if (!strict)
    return 0;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "stat %s", n->path);
  if ((st.st_mode & S_IFMT) != type_bits (n->type)
      || (n->type != 'p' && st.st_rdev != makedev (n->major, n->minor)))
    return brig_error_say (err, EEXIST, "device %s: a different file exists at that path", n->path);
  return 0;
}

/* devfd: the container's /dev, already resolved, for the usual case of a
 * node directly in it. */
static int
create_node (int rootfd, int devfd, const struct node *n, bool userns, bool strict,
             brig_error *err)
{
  _cleanup_free_ char *clean = brig_path_clean (n->path);
  _cleanup_close_ int owned = -1;
  char *slash = strrchr (clean, '/');
  const char *name = slash + 1;
  int dirfd;
  int r;

  if (userns && n->type != 'p')
    return bind_host_node (rootfd, n, err);
  *slash = '\0';
  if (strcmp (clean, "/dev") == 0 && devfd >= 0)
    dirfd = devfd;
  else
    dirfd = owned = brig_path_create_in_root (rootfd, *clean ? clean : "/", BRIG_PATH_DIR, err);
  *slash = '/';
  if (dirfd < 0)
    return dirfd;

  r = mknodat (dirfd, name, type_bits (n->type) | (n->mode & 07777),
               n->type == 'p' ? 0 : makedev (n->major, n->minor));
  if (r < 0)
    {
      if (errno == EEXIST)
        return check_existing (dirfd, name, n, strict, err);
      if (errno == EPERM && n->type != 'p')
        return bind_host_node (rootfd, n, err);
      return brig_error_errno (err, "mknod %s", n->path);
    }
  if ((n->uid || n->gid) && fchownat (dirfd, name, n->uid, n->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return brig_error_errno (err, "chown %s", n->path);
  return 0;
}

static bool
configured (const oci_config *cfg, const char *path)
{
  if (cfg->linux == NULL)
    return false;
  for (size_t i = 0; i < cfg->linux->devices_len; i++)
    {
      _cleanup_free_ char *clean = brig_path_clean (cfg->linux->devices[i].path);
      if (strcmp (clean, path) == 0)
        return true;
    }
  return false;
}

static int
setup_links (int devfd, bool have_shm, brig_error *err)
{
  static const char *const links[][2] = {
    { "fd", "/proc/self/fd" },
    { "stdin", "/proc/self/fd/0" },
    { "stdout", "/proc/self/fd/1" },
    { "stderr", "/proc/self/fd/2" },
  };
  struct stat st;

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (links); i++)
    if (symlinkat (links[i][1], devfd, links[i][0]) < 0 && errno != EEXIST)
      return brig_error_errno (err, "symlink /dev/%s", links[i][0]);
  /* kcore exists only with CONFIG_PROC_KCORE; link it only when it does. */
  if (access ("/proc/kcore", F_OK) == 0
      && symlinkat ("/proc/kcore", devfd, "core") < 0 && errno != EEXIST)
    return brig_error_errno (err, "symlink /dev/core");

  /* /dev/ptmx must be the devpts instance's own ptmx: whatever the image
     has there is replaced (a fresh /dev has nothing: one call). */
  if (symlinkat ("pts/ptmx", devfd, "ptmx") < 0)
    {
      if (errno != EEXIST)
        return brig_error_errno (err, "symlink /dev/ptmx");
      if (unlinkat (devfd, "ptmx", 0) < 0 && errno != ENOENT)
        {
          if (errno != EISDIR || unlinkat (devfd, "ptmx", AT_REMOVEDIR) < 0)
            return brig_error_errno (err, "remove /dev/ptmx");
        }
      if (symlinkat ("pts/ptmx", devfd, "ptmx") < 0)
        return brig_error_errno (err, "symlink /dev/ptmx");
    }

  if (!have_shm && fstatat (devfd, "shm", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
    {
      if (mkdirat (devfd, "shm", 01777) < 0 && errno != EEXIST)
        return brig_error_errno (err, "mkdir /dev/shm");
      _cleanup_close_ int shm = openat (devfd, "shm", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (shm < 0 || fchmod (shm, 01777) < 0)
        return brig_error_errno (err, "chmod /dev/shm");
    }
  return 0;
}

static int create_nodes (int rootfd, int devfd, const oci_config *cfg, bool userns,
                         brig_error *err);

int
brig_devices_setup (int rootfd, int dev, const oci_config *cfg, bool userns, brig_error *err)
{
  _cleanup_close_ int opened = -1;
  int devfd = dev;
  mode_t old;
  int r;

  if (devfd < 0)
    devfd = opened = brig_path_create_in_root (rootfd, "/dev", BRIG_PATH_DIR, err);
  if (devfd < 0)
    return devfd;
  /* Nodes get exactly their configured mode: no umask, set once for all
   * of them (directories made on the way have explicit modes too). */
  old = umask (0);
  r = create_nodes (rootfd, devfd, cfg, userns, err);
  umask (old);
  if (r < 0)
    return r;
  return setup_links (devfd, brig_config_mounts_at (cfg, "/dev/shm", NULL), err);
}

static int
create_nodes (int rootfd, int devfd, const oci_config *cfg, bool userns, brig_error *err)
{
  int r;

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (default_nodes); i++)
    {
      if (configured (cfg, default_nodes[i].path))
        continue;
      r = create_node (rootfd, devfd, &default_nodes[i], userns, false, err);
      if (r < 0)
        return r;
    }
  for (size_t i = 0; cfg->linux && i < cfg->linux->devices_len; i++)
    {
      const oci_device *d = &cfg->linux->devices[i];
      struct node n = {
        .path = d->path,
        .type = d->type[0],
        .major = (unsigned) d->major,
        .minor = (unsigned) d->minor,
        .mode = d->has_file_mode ? (mode_t) d->file_mode : 0666,
        .uid = d->has_uid ? d->uid : 0,
        .gid = d->has_gid ? d->gid : 0,
      };
      r = create_node (rootfd, devfd, &n, userns, true, err);
      if (r < 0)
        return brig_error_wrap (err, "linux.devices[%zu]", i);
    }
  return 0;
}

int
brig_devices_mount_console (int rootfd, int console_fd, brig_error *err)
{
  _cleanup_close_ int dst = brig_path_create_in_root (rootfd, "/dev/console", BRIG_PATH_FILE, err);
  int r;

  if (dst < 0)
    return dst;
  r = brig_bind_fd_onto_fd (console_fd, dst, false, NULL);
  if (r < 0)
    return brig_error_set (err, -r, "bind mount the console on /dev/console");
  return 0;
}
