/* What create keeps for a later brig reset, for containers that opt in:
 * the namespaces of the init (so a reset finds a tenant that outlived it)
 * and the network namespace, pinned by a bind mount in the state directory
 * so it outlives the processes in it (docs/sandbox.md "Reset"). */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "sandbox/reset_internal.h"
#include "container/tenancy.h"
#include "utils.h"

int
brig_reset_opt_in (const oci_map *a, bool *want, brig_error *err)
{
  *want = false;
  for (size_t i = 0; a && i < a->len; i++)
    {
      const char *k = a->keys[i];
      if (strncmp (k, "run.brig.", 9) != 0)
        continue;
      if (strcmp (k, BRIG_RESET_KEY) == 0)
        {
          if (strcmp (a->values[i], "true") != 0 && strcmp (a->values[i], "false") != 0)
            return brig_error_say (err, EINVAL, "annotation " BRIG_RESET_KEY ": \"%s\" is "
                                   "not true or false", a->values[i]);
          if (strcmp (a->values[i], "true") == 0)
            *want = true;
        }
      else if (strncmp (k + 9, "rootfs.ephemeral", 16) == 0 || strncmp (k + 9, "egress", 6) == 0
               || strncmp (k + 9, "sandbox", 7) == 0)
        *want = true;
    }
  return 0;
}

static bool
caps_have (char **v, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] && (strcasecmp (v[i], name) == 0
                 || (strncasecmp (v[i], "CAP_", 4) != 0 && strcasecmp (v[i], name + 4) == 0)))
      return true;
  return false;
}

static bool
caps_any (const oci_capabilities *c, const char *name)
{
  return c && (caps_have (c->bounding, c->bounding_len, name)
               || caps_have (c->effective, c->effective_len, name)
               || caps_have (c->permitted, c->permitted_len, name)
               || caps_have (c->inheritable, c->inheritable_len, name)
               || caps_have (c->ambient, c->ambient_len, name));
}

static bool
paths_have (char **v, size_t n, const char *path)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] && strcmp (v[i], path) == 0)
      return true;
  return false;
}

/* What lets a process change its network namespace. */
static const char *const net_caps[] = { "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_SYS_ADMIN" };

bool
brig_reset_netns_reusable (const oci_config *cfg, const struct brig_ns_plan *ns, int grants)
{
  const oci_linux *lx = cfg->linux;
  const oci_process *p = cfg->process;

  /* Only a namespace brig made, never one joined by path. */
  if (!(ns->new_flags & CLONE_NEWNET) || ns->join_fd[BRIG_NS_NET] >= 0)
    return false;
  /* A network namespace belongs to the user namespace it was made in:
   * whatever the tenant held there applies to it, and a new init in a new
   * user namespace would have no rights over it (sysfs, net sysctls). */
  if ((ns->new_flags & CLONE_NEWUSER) || ns->join_fd[BRIG_NS_USER] >= 0)
    return false;
  /* Interfaces, addresses, routes, firewall, raw packets: all need one of
   * these, which without a user namespace are the host's; given by the
   * config, or to any exec of the tenancy (--cap, --process). */
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (net_caps); i++)
    if ((p && caps_any (p->capabilities, net_caps[i]))
        || (grants >= 0 && brig_exec_grants_have (grants, net_caps[i])))
      return false;
  /* What wires interfaces in before the process runs would do so again. */
  if (lx && lx->net_devices_len > 0)
    return false;
  if (cfg->hooks && (cfg->hooks->prestart_len || cfg->hooks->create_runtime_len
                     || cfg->hooks->create_container_len))
    return false;
  /* uid 0 owns /proc/sys/net of its namespace even without capabilities,
   * and any process can be uid 0: a config without process.user, a setuid
   * program of the image without noNewPrivileges, `exec -u 0`. So
   * /proc/sys must be read-only (or masked) whatever process.user says,
   * and no other procfs may be mounted where it is not. */
  if (!(lx && (paths_have (lx->readonly_paths, lx->readonly_paths_len, "/proc/sys")
               || paths_have (lx->masked_paths, lx->masked_paths_len, "/proc/sys"))))
    return false;
  for (size_t i = 0; i < cfg->mounts_len; i++)
    if (cfg->mounts[i].type && strcmp (cfg->mounts[i].type, "proc") == 0
        && !(cfg->mounts[i].destination && strcmp (cfg->mounts[i].destination, "/proc") == 0))
      return false;
  return true;
}

int
brig_reset_ns_of (pid_t pid, unsigned long new_flags, struct reset_ns **out, size_t *n)
{
  struct reset_ns *v = xmalloc0 (BRIG_NS_COUNT * sizeof *v);
  size_t k = 0;

  for (int t = 0; t < BRIG_NS_COUNT; t++)
    {
      char p[64];
      struct stat st;
      if (!(new_flags & brig_ns_flag ((enum brig_ns_type) t)))
        continue;
      /* a time namespace applies to children: the init is one */
      snprintf (p, sizeof p, "/proc/%d/ns/%s", (int) pid, brig_ns_proc_name ((enum brig_ns_type) t));
      if (stat (p, &st) < 0)
        {
          int e = errno;
          free (v);
          return -e;
        }
      v[k++] = (struct reset_ns) { .type = (enum brig_ns_type) t, .dev = st.st_dev,
                                   .ino = st.st_ino };
    }
  *out = v;
  *n = k;
  return 0;
}

int
brig_reset_ns_load (int dirfd, struct reset_ns **out, size_t *n)
{
  _cleanup_free_ char *text = NULL;
  struct reset_ns *v;
  size_t k = 0;
  char *line, *save = NULL;
  int r;

  r = brig_read_file_at (dirfd, BRIG_RESET_NSREC, &text, NULL, NULL);
  if (r < 0)
    return r;
  v = xmalloc0 (BRIG_NS_COUNT * sizeof *v);
  for (line = strtok_r (text, "\n", &save); line && k < BRIG_NS_COUNT;
       line = strtok_r (NULL, "\n", &save))
    {
      char name[16];
      unsigned long long dev, ino;
      int t;
      if (sscanf (line, "%15s %llu %llu", name, &dev, &ino) != 3)
        continue;
      for (t = 0; t < BRIG_NS_COUNT; t++)
        if (strcmp (name, brig_ns_proc_name ((enum brig_ns_type) t)) == 0)
          break;
      if (t == BRIG_NS_COUNT)
        continue;
      v[k++] = (struct reset_ns) { .type = (enum brig_ns_type) t, .dev = (dev_t) dev,
                                   .ino = (ino_t) ino };
    }
  *out = v;
  *n = k;
  return 0;
}

/* The description of the new namespace of pid (the init waiting for
 * start: no tenant code has run in it) for reset's comparison. Without
 * it the namespace is never reused. */
static void
describe_fresh (int dirfd, pid_t pid)
{
  char p[64];
  _cleanup_close_ int self = open ("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC), ns = -1;
  _cleanup_free_ char *text = NULL;
  int r = -EBADF;

  snprintf (p, sizeof p, "/proc/%d/ns/net", (int) pid);
  ns = open (p, O_RDONLY | O_CLOEXEC);
  if (self >= 0 && ns >= 0 && setns (ns, CLONE_NEWNET) == 0)
    {
      r = reset_netns_describe (&text);
      if (setns (self, CLONE_NEWNET) < 0)
        {
          /* brig must not go on in the container's namespace */
          brig_warn ("reset: return to brig's network namespace: %s", strerror (errno));
          abort ();
        }
    }
  if (r < 0 || brig_write_file_atomic (dirfd, BRIG_RESET_NETNS_FRESH, text, strlen (text), 0600,
                                       NULL) < 0)
    brig_debug ("reset: describe the pinned network namespace: %s", strerror (-r));
}

void
brig_reset_pin (int dirfd, const oci_config *cfg, const struct brig_ns_plan *ns, pid_t pid,
                bool pin_netns)
{
  _cleanup_free_ struct reset_ns *v = NULL;
  char text[BRIG_NS_COUNT * 64], path[64], src[64];
  size_t n = 0, len = 0;
  int fd;

  /* The record serves ns.unused's scan, which a new pid namespace makes
   * needless (reset.c): no stats and no file write for it then. */
  if (!(ns->new_flags & CLONE_NEWPID) && brig_reset_ns_of (pid, ns->new_flags, &v, &n) == 0)
    {
      for (size_t i = 0; i < n; i++)
        len += (size_t) snprintf (text + len, sizeof text - len, "%s %llu %llu\n",
                                  brig_ns_proc_name (v[i].type), (unsigned long long) v[i].dev,
                                  (unsigned long long) v[i].ino);
      if (brig_write_file_atomic (dirfd, BRIG_RESET_NSREC, text, len, 0600, NULL) < 0)
        brig_debug ("reset: cannot record the init's namespaces");
    }
  if (!pin_netns || !brig_reset_netns_reusable (cfg, ns, -1)
      || faccessat (dirfd, BRIG_RESET_NETNS, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return;
  fd = openat (dirfd, BRIG_RESET_NETNS, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      brig_debug ("reset: pin the network namespace: %s", strerror (errno));
      return;
    }
  close (fd);
  snprintf (path, sizeof path, "/proc/self/fd/%d/" BRIG_RESET_NETNS, dirfd);
  snprintf (src, sizeof src, "/proc/%d/ns/net", (int) pid);
  if (mount (src, path, NULL, MS_BIND, NULL) < 0)
    {
      /* rootless, or a read-only state root: reset makes a new one */
      brig_debug ("reset: pin the network namespace: %s", strerror (errno));
      unlinkat (dirfd, BRIG_RESET_NETNS, 0);
      return;
    }
  describe_fresh (dirfd, pid);
}
