/* The owner of the user namespaces brig makes, and the limits it sets in
 * them (userns_owner.h says why). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "process/userns_owner.h"
#include "utils.h"

uid_t
brig_userns_owner (const oci_linux *lx)
{
  if (lx == NULL || lx->uid_mappings_len == 0 || geteuid () != 0)
    return 0;
  for (size_t i = 0; i < lx->uid_mappings_len; i++)
    {
      const oci_id_mapping *m = &lx->uid_mappings[i];
      if (m->container_id == 0 && m->size > 0)
        return (uid_t) m->host_id;
    }
  return (uid_t) lx->uid_mappings[0].host_id;
}

int
brig_userns_creator_enter (struct brig_userns_creator *s, uid_t owner, brig_error *err)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

  s->active = false;
  if (owner == 0)
    return 0;
  if (syscall (SYS_capget, &h, s->caps) < 0)
    return brig_error_errno (err, "capget");
  if (setresuid ((uid_t) -1, owner, (uid_t) -1) < 0)
    return brig_error_errno (err, "take uid %u to create the user namespace", (unsigned) owner);
  s->active = true;
  /* Allowed: the real uid is 0. Files are still opened as root. */
  setfsuid (0);
  return 0;
}

void
brig_userns_creator_leave (struct brig_userns_creator *s)
{
  struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

  if (!s->active)
    return;
  s->active = false;
  if (setresuid ((uid_t) -1, 0, (uid_t) -1) < 0)
    {
      brig_warn ("return to euid 0: %s", strerror (errno));
      abort ();
    }
  /* euid 0 raised the effective set to the permitted one: give back the
   * effective set brig had when that was less. */
  if ((s->caps[0].effective != s->caps[0].permitted
       || s->caps[1].effective != s->caps[1].permitted)
      && syscall (SYS_capset, &h, s->caps) < 0)
    {
      brig_warn ("restore the effective capabilities: %s", strerror (errno));
      abort ();
    }
}

int
brig_userns_creator_become (uid_t owner, brig_error *err)
{
  if (owner == 0)
    return 0;
  if (setresuid ((uid_t) -1, owner, (uid_t) -1) < 0)
    return brig_error_errno (err, "take uid %u to create the user namespace", (unsigned) owner);
  return 0;
}

/* Per uid of the container (each level of nesting counts again, and the
 * whole container is also held to the host's per-user limits, charged to
 * its own host uid): enough for nested runtimes and file watchers, far
 * below what would let one container use up kernel memory. */
static const struct {
  const char *name;
  const char *value;
} user_limits[] = {
  { "max_user_namespaces", "1024" },
  { "max_mnt_namespaces", "1024" },
  { "max_pid_namespaces", "1024" },
  { "max_net_namespaces", "1024" },
  { "max_ipc_namespaces", "1024" },
  { "max_uts_namespaces", "1024" },
  { "max_cgroup_namespaces", "1024" },
  { "max_time_namespaces", "1024" },
  { "max_inotify_instances", "128" },
  { "max_inotify_watches", "65536" },
  { "max_fanotify_groups", "128" },
  { "max_fanotify_marks", "65536" },
};

int
brig_userns_write_limits (brig_error *err)
{
  /* The values of the calling process's user namespace (the kernel picks
   * the set by the writer's namespace), which its root may write. */
  _cleanup_close_ int dir = open ("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC);

  if (dir < 0)
    return brig_error_errno (err, "open /proc/sys/user");
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (user_limits); i++)
    {
      int fd = openat (dir, user_limits[i].name, O_WRONLY | O_CLOEXEC);
      size_t len = strlen (user_limits[i].value);
      int e = 0;
      if (fd < 0)
        {
          /* a kernel without this count (time namespaces < 5.6,
           * fanotify's < 5.18) */
          if (errno == ENOENT)
            continue;
          e = errno;
        }
      else
        {
          errno = 0;
          if (write (fd, user_limits[i].value, len) != (ssize_t) len)
            e = errno ? errno : EIO;
          close (fd);
        }
      if (e)
        return brig_error_set (err, e, "write /proc/sys/user/%s of the container's user "
                               "namespace", user_limits[i].name);
    }
  return 0;
}
