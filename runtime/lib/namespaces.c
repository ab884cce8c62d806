/* Namespaces: see namespaces.h for the order rules. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/nsfs.h>

#include "namespaces.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
  const char *config;   /* linux.namespaces[].type */
  const char *proc;     /* /proc/PID/ns/ entry */
  unsigned long flag;
} ns_table[BRIG_NS_COUNT] = {
  [BRIG_NS_USER] = { "user", "user", CLONE_NEWUSER },
  [BRIG_NS_MNT] = { "mount", "mnt", CLONE_NEWNS },
  [BRIG_NS_PID] = { "pid", "pid", CLONE_NEWPID },
  [BRIG_NS_NET] = { "network", "net", CLONE_NEWNET },
  [BRIG_NS_IPC] = { "ipc", "ipc", CLONE_NEWIPC },
  [BRIG_NS_UTS] = { "uts", "uts", CLONE_NEWUTS },
  [BRIG_NS_CGROUP] = { "cgroup", "cgroup", CLONE_NEWCGROUP },
  [BRIG_NS_TIME] = { "time", "time", CLONE_NEWTIME },
};

/* setns order: user first (the rest are then joined with its rights), mount
 * last (it changes the root the others' paths were resolved from). */
static const enum brig_ns_type join_order[BRIG_NS_COUNT] = {
  BRIG_NS_USER, BRIG_NS_IPC, BRIG_NS_UTS, BRIG_NS_NET, BRIG_NS_PID,
  BRIG_NS_CGROUP, BRIG_NS_TIME, BRIG_NS_MNT,
};

int
brig_ns_from_name (const char *name)
{
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    if (strcmp (ns_table[i].config, name) == 0)
      return i;
  return -1;
}

unsigned long
brig_ns_flag (enum brig_ns_type t)
{
  return ns_table[t].flag;
}

const char *
brig_ns_proc_name (enum brig_ns_type t)
{
  return ns_table[t].proc;
}

void
brig_ns_plan_clear (struct brig_ns_plan *plan)
{
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    {
      if (plan->join_fd[i] >= 0)
        close (plan->join_fd[i]);
      plan->join_fd[i] = -1;
    }
}

int
brig_ns_plan_build (const oci_linux *lx, struct brig_ns_plan *plan, brig_error *err)
{
  bool seen[BRIG_NS_COUNT] = { false };

  memset (plan, 0, sizeof *plan);
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    plan->join_fd[i] = -1;
  if (lx == NULL)
    return 0;
  for (size_t i = 0; i < lx->namespaces_len; i++)
    {
      const oci_namespace *ns = &lx->namespaces[i];
      int t = brig_ns_from_name (ns->type);
      if (t < 0)
        {
          brig_ns_plan_clear (plan);
          return brig_error_say (err, EINVAL, "linux.namespaces[%zu]: unknown namespace type \"%s\"",
                                 i, ns->type);
        }
      if (seen[t])
        {
          brig_ns_plan_clear (plan);
          return brig_error_say (err, EINVAL, "linux.namespaces[%zu]: duplicate namespace \"%s\"",
                                 i, ns->type);
        }
      seen[t] = true;
      if (ns->path == NULL || ns->path[0] == '\0')
        {
          plan->new_flags |= ns_table[t].flag;
          continue;
        }
      /* This fd is the one the init joins and an extension judges
       * (container/extension.h): nothing opens the path again. */
      int fd, kind, r = brig_ns_open_path (ns->path, &fd, &kind);
      if (r < 0)
        {
          brig_ns_plan_clear (plan);
          if (r == -EINVAL)
            return brig_error_say (err, EINVAL, "linux.namespaces[%zu]: %s is not a namespace",
                                   i, ns->path);
          return brig_error_set (err, -r, "linux.namespaces[%zu]: open %s namespace %s", i,
                                 ns->type, ns->path);
        }
      /* A path that is not a namespace of that type would fail later in the
       * child with a vaguer message, or join what the config did not say. */
      if (kind != t)
        {
          close (fd);
          brig_ns_plan_clear (plan);
          return brig_error_say (err, EINVAL, "linux.namespaces[%zu]: %s is a %s namespace, "
                                 "not %s", i, ns->path, ns_table[kind].config, ns->type);
        }
      plan->join_fd[t] = fd;
      plan->joined_any = true;
    }
  return 0;
}

/* The kernel's limit on the lines of a uid_map or gid_map
 * (UID_GID_MAP_MAX_EXTENTS in user_namespace.c). */
#define ID_MAP_MAX_EXTENTS 340

/* True when [a, a+na) and [b, b+nb) share an id (64-bit sums). */
static bool
ranges_overlap (uint64_t a, uint64_t na, uint64_t b, uint64_t nb)
{
  return a < b + nb && b < a + na;
}

int
brig_ns_open_path (const char *path, int *fd, int *type)
{
  _cleanup_close_ int opath = -1;
  struct statfs sfs;
  char self[64];
  int kind;

  *fd = -1;
  /* Every symlink is followed, the last too, as open(2) of the path would:
   * what is judged is the namespace the kernel finds, however the path is
   * spelt. O_PATH opens nothing for reading (a FIFO would block, a device
   * could act), and only an nsfs file goes further. */
  opath = open (path, O_PATH | O_CLOEXEC);
  if (opath < 0)
    return -errno;
  if (fstatfs (opath, &sfs) < 0)
    return -errno;
  if (sfs.f_type != NSFS_MAGIC)
    return -EINVAL;
  /* setns(2) and the ioctls refuse O_PATH fds: open the same file again
   * through its fd, never through the path. */
  snprintf (self, sizeof self, "/proc/self/fd/%d", opath);
  *fd = open (self, O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    return -errno;
  kind = ioctl (*fd, NS_GET_NSTYPE);
  *type = -1;
  for (int i = 0; kind > 0 && i < BRIG_NS_COUNT; i++)
    if ((unsigned long) kind == ns_table[i].flag)
      *type = i;
  if (*type < 0)
    {
      close (*fd);
      *fd = -1;
      return kind < 0 ? -errno : -EINVAL;
    }
  return 0;
}

/* The inode numbers the kernel gives its initial namespaces
 * (include/linux/proc_ns.h: ipc, uts, user and pid since 3.8, cgroup since
 * 4.6, time since 5.6; net and mnt on recent kernels, 6.18 here). Numbers
 * it allocates start at 0xF0000000, so none of these ever names another
 * namespace, also on a kernel that does not fix net and mnt. */
static const unsigned long ns_init_ino[BRIG_NS_COUNT] = {
  [BRIG_NS_IPC] = 0xEFFFFFFFUL, [BRIG_NS_UTS] = 0xEFFFFFFEUL, [BRIG_NS_USER] = 0xEFFFFFFDUL,
  [BRIG_NS_PID] = 0xEFFFFFFCUL, [BRIG_NS_CGROUP] = 0xEFFFFFFBUL, [BRIG_NS_TIME] = 0xEFFFFFFAUL,
  [BRIG_NS_NET] = 0xEFFFFFF9UL, [BRIG_NS_MNT] = 0xEFFFFFF8UL,
};

int
brig_ns_is_host (int fd, enum brig_ns_type t, char *why, size_t size)
{
  const char *whose = NULL;
  struct stat ns, ref;
  char path[64];

  if (fstat (fd, &ns) < 0)
    return -errno;
  snprintf (path, sizeof path, "/proc/self/ns/%s", ns_table[t].proc);
  if (stat (path, &ref) < 0)
    return -errno;
  if (ns.st_dev == ref.st_dev && ns.st_ino == ref.st_ino)
    whose = "brig's own";
  /* on the same nsfs as brig's own: one superblock holds them all */
  else if (ns.st_dev == ref.st_dev && ns.st_ino == ns_init_ino[t])
    whose = "the initial one";
  else
    {
      /* Where brig may examine pid 1: root without ptrace access to it
       * (this test host's pid 1) cannot, and the initial namespaces above
       * still count then. */
      snprintf (path, sizeof path, "/proc/1/ns/%s", ns_table[t].proc);
      if (stat (path, &ref) == 0 && ns.st_dev == ref.st_dev && ns.st_ino == ref.st_ino)
        whose = "pid 1's";
    }
  snprintf (why, size, "%s%s%s:[%lu]", whose ? whose : "", whose ? ", " : "", ns_table[t].proc,
            (unsigned long) ns.st_ino);
  return whose != NULL;
}

bool
brig_ns_judged_host (int fd, enum brig_ns_type t)
{
  char why[128];
  return brig_ns_is_host (fd, t, why, sizeof why) != 0;
}

int
brig_ns_validate_id_mapping (const oci_id_mapping *m, size_t n, const char *field,
                             brig_error *err)
{
  /* What map_write() in the kernel accepts: an id is a u32, a range must
   * not wrap past 4294967295 ((u32) -1, which no map may contain: it is
   * "no id" to the kernel and "unchanged" to setresuid), and no two lines
   * may share an id on either side. {0, 0, 4294967295} (every id) is
   * fine. The sums are done in 64 bits. */
  const uint64_t end = UINT32_MAX;

  if (n > ID_MAP_MAX_EXTENTS)
    return brig_error_set (err, EINVAL, "%s: %zu entries, the kernel takes at most %d", field,
                           n, ID_MAP_MAX_EXTENTS);
  for (size_t i = 0; i < n; i++)
    {
      if (m[i].size == 0)
        return brig_error_say (err, EINVAL, "%s[%zu].size: must be at least 1", field, i);
      if ((uint64_t) m[i].container_id + m[i].size > end)
        return brig_error_say (err, EINVAL, "%s[%zu]: containerID %u + size %u is beyond the id "
                               "range (0-%u)", field, i, (unsigned) m[i].container_id,
                               (unsigned) m[i].size, UINT32_MAX - 1);
      if ((uint64_t) m[i].host_id + m[i].size > end)
        return brig_error_say (err, EINVAL, "%s[%zu]: hostID %u + size %u is beyond the id "
                               "range (0-%u)", field, i, (unsigned) m[i].host_id,
                               (unsigned) m[i].size, UINT32_MAX - 1);
      for (size_t j = 0; j < i; j++)
        {
          if (ranges_overlap (m[i].container_id, m[i].size, m[j].container_id, m[j].size))
            return brig_error_say (err, EINVAL, "%s[%zu]: its containerIDs overlap those of "
                                   "%s[%zu]", field, i, field, j);
          if (ranges_overlap (m[i].host_id, m[i].size, m[j].host_id, m[j].size))
            return brig_error_say (err, EINVAL, "%s[%zu]: its hostIDs overlap those of %s[%zu]",
                                   field, i, field, j);
        }
    }
  return 0;
}

int
brig_ns_validate_id_maps (const oci_linux *lx, brig_error *err)
{
  int r = brig_ns_validate_id_mapping (lx->uid_mappings, lx->uid_mappings_len,
                                       "linux.uidMappings", err);
  if (r < 0)
    return r;
  return brig_ns_validate_id_mapping (lx->gid_mappings, lx->gid_mappings_len,
                                      "linux.gidMappings", err);
}

int
brig_ns_join (const int fds[BRIG_NS_COUNT], brig_error *err)
{
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    {
      enum brig_ns_type t = join_order[i];
      if (fds[t] < 0)
        continue;
      if (setns (fds[t], (int) ns_table[t].flag) < 0)
        return brig_error_errno (err, "join %s namespace", ns_table[t].config);
    }
  return 0;
}

int
brig_ns_open_process (pid_t pid, int fds[BRIG_NS_COUNT], brig_error *err)
{
  char path[64];

  for (int i = 0; i < BRIG_NS_COUNT; i++)
    fds[i] = -1;
  for (int i = 0; i < BRIG_NS_COUNT; i++)
    {
      struct stat theirs, ours;
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns_table[i].proc);
      if (stat (path, &theirs) < 0)
        {
          if (errno == ENOENT && i == BRIG_NS_TIME)
            continue; /* kernel without time namespaces */
          int e = errno;
          for (int j = 0; j < i; j++)
            if (fds[j] >= 0)
              close (fds[j]);
          return brig_error_set (err, e, "open %s", path);
        }
      snprintf (path, sizeof path, "/proc/self/ns/%s", ns_table[i].proc);
      if (stat (path, &ours) == 0 && ours.st_ino == theirs.st_ino
          && ours.st_dev == theirs.st_dev)
        continue;
      snprintf (path, sizeof path, "/proc/%d/ns/%s", (int) pid, ns_table[i].proc);
      fds[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (fds[i] < 0)
        {
          int e = errno;
          for (int j = 0; j < i; j++)
            if (fds[j] >= 0)
              close (fds[j]);
          return brig_error_set (err, e, "open %s", path);
        }
    }
  return 0;
}

static char *
format_map (const oci_id_mapping *m, size_t n)
{
  size_t cap = n * 36 + 1, len = 0;
  char *buf = xmalloc0 (cap);
  for (size_t i = 0; i < n; i++)
    len += (size_t) snprintf (buf + len, cap - len, "%u %u %u\n", m[i].container_id,
                              m[i].host_id, m[i].size);
  return buf;
}

static int
write_proc (pid_t pid, const char *file, const char *value, brig_error *err)
{
  char path[64];
  int r;

  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  r = brig_write_string_at (AT_FDCWD, path, value);
  if (r < 0)
    return brig_error_set (err, -r, "write %s", path);
  return 0;
}

int
brig_ns_write_id_maps (pid_t pid, const oci_linux *lx, brig_error *err)
{
  _cleanup_free_ char *uid = NULL, *gid = NULL;
  int r;

  /* Without CAP_SETGID in the parent namespace a gid map can only be
   * written after setgroups is denied (user_namespaces(7)). */
  if (geteuid () != 0)
    {
      r = write_proc (pid, "setgroups", "deny", err);
      if (r < 0 && r != -ENOENT)
        return r;
    }
  if (lx && lx->uid_mappings_len > 0)
    {
      uid = format_map (lx->uid_mappings, lx->uid_mappings_len);
      r = write_proc (pid, "uid_map", uid, err);
      if (r < 0)
        return brig_error_wrap (err, "linux.uidMappings");
    }
  if (lx && lx->gid_mappings_len > 0)
    {
      gid = format_map (lx->gid_mappings, lx->gid_mappings_len);
      r = write_proc (pid, "gid_map", gid, err);
      if (r < 0)
        return brig_error_wrap (err, "linux.gidMappings");
    }
  return 0;
}

int
brig_ns_write_time_offsets (const oci_linux *lx, brig_error *err)
{
  char buf[256];
  size_t len = 0;
  int r;

  if (lx == NULL || lx->time_offsets_len == 0)
    return 0;
  for (size_t i = 0; i < lx->time_offsets_len; i++)
    {
      const char *clock = lx->time_offsets_keys[i];
      const oci_time_offset *o = &lx->time_offsets[i];
      if (strcmp (clock, "monotonic") != 0 && strcmp (clock, "boottime") != 0)
        return brig_error_say (err, EINVAL, "linux.timeOffsets: unknown clock \"%s\"", clock);
      len += (size_t) snprintf (buf + len, sizeof buf - len, "%s %lld %u\n", clock,
                                (long long) o->secs, o->nanosecs);
      if (len >= sizeof buf)
        return brig_error_say (err, EINVAL, "linux.timeOffsets: too many entries");
    }
  r = brig_write_string_at (AT_FDCWD, "/proc/self/timens_offsets", buf);
  if (r < 0)
    return brig_error_set (err, -r, "linux.timeOffsets: write /proc/self/timens_offsets");
  return 0;
}
