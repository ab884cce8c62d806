/* The mount rules of `brig check` that judge a mount by the filesystem it
 * puts in the container, not by how the config spells it: a procfs outside
 * /proc escapes the masks written for /proc (its sys/kernel/core_pattern is
 * the host's without a user namespace), debugfs and its kin reach kernel
 * internals, a disk filesystem is the host's data. A mount is judged by its
 * type (any case) and, for a bind, by what its source is on this host
 * (statfs(2) after realpath(3), so "//", "/./", "..", trailing slashes and
 * symlinks change nothing), by the earlier mounts of the same config (a bind
 * of the container's own /proc), and, for an rbind, by what the host has
 * mounted below the source. */
#include <errno.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "mountinfo.h"
#include "sandbox/check_internal.h"
#include "utils.h"

/* Filesystems that expose kernel internals or host-wide state, by name
 * and by f_type (some magics are not in every linux/magic.h). */
static const struct { const char *name; unsigned long magic; } kernel_fs[] = {
  { "debugfs", 0x64626720 }, { "tracefs", 0x74726163 }, { "securityfs", 0x73636673 },
  { "bpf", 0xcafe4a11 }, { "configfs", 0x62656570 }, { "efivarfs", 0xde5e81e4 },
  { "binfmt_misc", 0x42494e4d },
};

/* Filesystems that live on a block device: mounting one gives the
 * container a host disk (the kernel finds the device from the source). */
static const char *const disk_fs[] = {
  "ext2", "ext3", "ext4", "xfs", "btrfs", "vfat", "msdos", "exfat", "ntfs", "ntfs3", "f2fs",
  "jfs", "reiserfs", "nilfs2", "hfs", "hfsplus", "udf", "iso9660", "squashfs", "erofs",
  "ocfs2", "gfs2", "bcachefs", "zfs", NULL,
};

/* Types whose source the kernel ignores (a name, not a device). */
static const char *const virtual_fs[] = {
  "tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2", "overlay", "ramfs",
  "hugetlbfs", "fuse", "none", NULL,
};

static bool
name_in (const char *const *v, const char *s)
{
  for (size_t i = 0; v[i]; i++)
    if (strcasecmp (v[i], s) == 0)
      return true;
  return false;
}

static const char *
kernel_fs_by_name (const char *type)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (kernel_fs); i++)
    if (strcasecmp (kernel_fs[i].name, type) == 0)
      return kernel_fs[i].name;
  return NULL;
}

static const char *
kernel_fs_by_magic (unsigned long magic)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (kernel_fs); i++)
    if (kernel_fs[i].magic == magic)
      return kernel_fs[i].name;
  return NULL;
}

bool
check_mount_is_bind (const oci_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  for (size_t i = 0; i < m->options_len; i++)
    if (m->options[i] && (strcmp (m->options[i], "bind") == 0 || strcmp (m->options[i], "rbind") == 0))
      return true;
  return false;
}

static bool
is_rbind (const oci_mount *m)
{
  for (size_t i = 0; i < m->options_len; i++)
    if (m->options[i] && strcmp (m->options[i], "rbind") == 0)
      return true;
  return false;
}

char *
check_source_path (const struct brig_check_report *rep, const char *src)
{
  if (src[0] == '/' || rep->bundle == NULL)
    return xstrdup (src);
  return xasprintf ("%s/%s", rep->bundle, src);
}

int
check_resolve_path (const char *path, char *out, size_t size)
{
  char todo[PATH_MAX], link[PATH_MAX];
  size_t n = 0;
  int links = 0;

  if (path[0] != '/' || strlen (path) >= sizeof todo)
    return -EINVAL;
  strcpy (todo, path);
  out[0] = '\0';
  for (char *p = todo; *p;)
    {
      char *e;
      size_t len;
      struct stat st;
      ssize_t l;

      while (*p == '/')
        p++;
      e = strchrnul (p, '/');
      len = (size_t) (e - p);
      if (len == 0 || (len == 1 && p[0] == '.'))
        {
          p = e;
          continue;
        }
      if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          while (n > 0 && out[n - 1] != '/')
            n--;
          n = n > 0 ? n - 1 : 0;
          out[n] = '\0';
          p = e;
          continue;
        }
      if (n + 1 + len >= size)
        return -ENAMETOOLONG;
      out[n++] = '/';
      memcpy (out + n, p, len);
      n += len;
      out[n] = '\0';
      p = e;
      /* A component that is missing ends the lookup: the rest is read
       * as written (the mount would fail there today, not tomorrow). */
      if (lstat (out, &st) < 0 || !S_ISLNK (st.st_mode))
        continue;
      if (++links > 40 || (l = readlink (out, link, sizeof link - 1)) <= 0)
        return -ELOOP;
      link[l] = '\0';
      if ((size_t) l + strlen (p) + 2 > sizeof link)
        return -ENAMETOOLONG;
      strcat (link, "/");
      strcat (link, p);
      /* Absolute: from "/"; relative: from the link's directory. */
      if (link[0] == '/')
        n = 0;
      else
        while (n > 0 && out[n - 1] != '/')
          n--;
      if (n > 0 && out[n - 1] == '/')
        n--;
      out[n] = '\0';
      memmove (todo, link, strlen (link) + 1);
      p = todo;
    }
  if (n == 0)
    strcpy (out, "/");
  return 0;
}

/* Whether a ".." component is in p: where it leads depends on the
 * image's symlinks, which a lexical reading cannot know. */
static bool
has_dotdot (const char *p)
{
  for (const char *c = p; c && (c = strstr (c, "..")) != NULL; c += 2)
    if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
      return true;
  return false;
}

static bool
under_or_at (const char *p, const char *dir)
{
  size_t n = strlen (dir);
  if (strcmp (dir, "/") == 0)
    return p[0] == '/';
  return strncmp (p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

struct mount_judge {
  const oci_config *cfg;
  const struct check_mount_rules *rules;
  struct brig_check_report *rep;
  enum brig_check_severity procfs_sev;  /* critical without a user namespace */
  char rootfs[PATH_MAX];                /* root.path on the host, "" if unknown */
  char **procfs_at;                     /* where earlier mounts put a procfs */
  size_t n_procfs;
  struct brig_mountinfo *mi;            /* the host's mounts, read for an rbind */
  size_t n_mi;
  bool mi_read;
};

/* Index of the earlier procfs mount that host path p (inside the rootfs)
 * lies in or at, or -1. */
static int
own_procfs (const struct mount_judge *j, const char *p)
{
  size_t n = strlen (j->rootfs);
  if (j->rootfs[0] == '\0' || !under_or_at (p, j->rootfs))
    return -1;
  for (size_t k = 0; k < j->n_procfs; k++)
    if (under_or_at (p[n] ? p + n : "/", j->procfs_at[k]))
      return (int) k;
  return -1;
}

/* The host's procfs and kernel filesystems mounted below dir, which an
 * rbind of dir carries into the container. */
static void
judge_submounts (struct mount_judge *j, size_t i, const char *dir, const char *dest)
{
  if (!j->mi_read)
    {
      brig_error err = { 0 };
      j->mi_read = true;
      if (brig_mountinfo_read (NULL, &j->mi, &j->n_mi, &err) < 0)
        brig_error_clear (&err);
    }
  for (size_t k = 0; k < j->n_mi; k++)
    {
      const struct brig_mountinfo *e = &j->mi[k];
      const char *kfs = kernel_fs_by_name (e->fstype);
      if (strcmp (e->mountpoint, dir) == 0 || !under_or_at (e->mountpoint, dir))
        continue;
      if (strcmp (e->fstype, "proc") == 0)
        check_add (j->rep, j->rules->procfs, j->procfs_sev, xasprintf ("mounts[%zu].source", i),
                   "host %s holds a procfs at %s, which the rbind carries to %s", dir,
                   e->mountpoint, dest);
      else if (kfs)
        check_add (j->rep, j->rules->kernel_fs, j->rules->kernel_fs->severity,
                   xasprintf ("mounts[%zu].source", i),
                   "host %s holds %s at %s, which the rbind carries to %s", dir, kfs,
                   e->mountpoint, dest);
    }
}

/* A mount of a filesystem by its type. */
static void
judge_fs (struct mount_judge *j, size_t i, const oci_mount *m, const char *dest)
{
  const char *type = m->type ? m->type : "";
  const char *kfs = kernel_fs_by_name (type);
  struct stat st;

  if (strcasecmp (type, "proc") == 0)
    {
      /* Only /proc gets linux.maskedPaths and readonlyPaths as written. */
      if (strcmp (dest, "/proc") != 0 || has_dotdot (m->destination))
        check_add (j->rep, j->rules->procfs, j->procfs_sev, xasprintf ("mounts[%zu].destination", i),
                   "a procfs is mounted at %s, outside /proc", m->destination);
      j->procfs_at[j->n_procfs++] = xstrdup (dest);
    }
  if (kfs)
    check_add (j->rep, j->rules->kernel_fs, j->rules->kernel_fs->severity,
               xasprintf ("mounts[%zu].type", i), "%s is mounted at %s", kfs, m->destination);
  if (name_in (disk_fs, type))
    check_add (j->rep, j->rules->block_dev, j->rules->block_dev->severity,
               xasprintf ("mounts[%zu].type", i), "%s of %s is mounted at %s", type,
               m->source ? m->source : "?", m->destination);
  else if (!name_in (virtual_fs, type) && !kfs && m->source && m->source[0] == '/'
           && stat (m->source, &st) == 0 && S_ISBLK (st.st_mode))
    check_add (j->rep, j->rules->block_dev, j->rules->block_dev->severity,
               xasprintf ("mounts[%zu].source", i), "host block device %s is mounted at %s",
               m->source, m->destination);
}

/* A bind, by what its source is on this host. */
static void
judge_bind (struct mount_judge *j, size_t i, const oci_mount *m, const char *dest)
{
  _cleanup_free_ char *src = check_source_path (j->rep, m->source);
  char real[PATH_MAX], norm[PATH_MAX];
  const char *on = check_resolve_path (src, real, sizeof real) == 0 ? real : src;
  const char *kfs = NULL;
  struct statfs sfs;
  struct stat st;
  int own;

  check_path_norm (on, norm, sizeof norm);
  if (statfs (on, &sfs) == 0)
    {
      kfs = kernel_fs_by_magic ((unsigned long) sfs.f_type);
      if (sfs.f_type == PROC_SUPER_MAGIC)
        {
          check_add (j->rep, j->rules->procfs, j->procfs_sev, xasprintf ("mounts[%zu].source", i),
                     "host %s is on a procfs, bound at %s", norm, m->destination);
          j->procfs_at[j->n_procfs++] = xstrdup (dest);
          return;
        }
    }
  own = own_procfs (j, norm);
  if (own >= 0)
    {
      check_add (j->rep, j->rules->procfs, j->procfs_sev, xasprintf ("mounts[%zu].source", i),
                 "%s is in the container's own procfs (mounted at %s), bound at %s", m->source,
                 j->procfs_at[own], m->destination);
      j->procfs_at[j->n_procfs++] = xstrdup (dest);
      return;
    }
  if (kfs)
    check_add (j->rep, j->rules->kernel_fs, j->rules->kernel_fs->severity,
               xasprintf ("mounts[%zu].source", i), "host %s is on %s, bound at %s", norm, kfs,
               m->destination);
  else if (stat (on, &st) == 0 && S_ISBLK (st.st_mode))
    check_add (j->rep, j->rules->block_dev, j->rules->block_dev->severity,
               xasprintf ("mounts[%zu].source", i), "host block device %s is bound at %s", norm,
               m->destination);
  else if (is_rbind (m) && stat (on, &st) == 0 && S_ISDIR (st.st_mode))
    judge_submounts (j, i, norm, m->destination);
}

void
check_run_mount_rules (const oci_config *cfg, const struct check_mount_rules *rules,
                       struct brig_check_report *rep)
{
  struct mount_judge j = { .cfg = cfg, .rules = rules, .rep = rep };
  const oci_linux *l = cfg->linux;
  bool userns = false;

  if (cfg->mounts_len == 0)
    return;
  for (size_t i = 0; l && i < l->namespaces_len; i++)
    userns = userns || (l->namespaces[i].type && strcmp (l->namespaces[i].type, "user") == 0);
  /* In a user namespace the host's sysctls, sysrq-trigger and kcore refuse
   * the container's root whatever is mounted; without one they do not. */
  j.procfs_sev = userns ? BRIG_SEV_MEDIUM : rules->procfs->severity;
  if (cfg->root && cfg->root->path)
    {
      _cleanup_free_ char *root = check_source_path (rep, cfg->root->path);
      char real[PATH_MAX];
      check_path_norm (check_resolve_path (root, real, sizeof real) == 0 ? real : root, j.rootfs,
                       sizeof j.rootfs);
    }
  j.procfs_at = xmalloc0 (cfg->mounts_len * sizeof *j.procfs_at);
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      char dest[PATH_MAX];
      if (m->destination == NULL)
        continue;
      check_path_norm (m->destination, dest, sizeof dest);
      if (!check_mount_is_bind (m))
        judge_fs (&j, i, m, dest);
      else if (m->source && *m->source)
        judge_bind (&j, i, m, dest);
    }
  for (size_t k = 0; k < j.n_procfs; k++)
    free (j.procfs_at[k]);
  free (j.procfs_at);
  brig_mountinfo_free (j.mi, j.n_mi);
}
