/* linux.sysctl validation: see sysctl.h. The kernel decides which
 * namespace a write under /proc/sys changes from the writer's namespaces,
 * and only for the ipc, net and uts sysctls; everything else
 * (kernel.core_pattern, vm.*, fs.* outside mqueue, ...) is the host's. A
 * sysctl of a namespace the container shares with brig is the host's too. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "process/sysctl.h"
#include "utils.h"

enum sysctl_class { SYSCTL_HOST, SYSCTL_IPC, SYSCTL_NET, SYSCTL_UTS };

char *
brig_sysctl_path (const char *key)
{
  const char *first;
  char *p;
  size_t len;

  if (key == NULL || (len = strlen (key)) == 0 || strstr (key, ".."))
    return NULL;
  p = xstrdup (key);
  /* sysctl.d(5): with a '.' first, the dots separate and a '/' stands for
   * a dot inside a name ("net.ipv4.conf.eth0/100.forwarding"). */
  first = strpbrk (key, "./");
  if (first && *first == '.')
    for (char *c = p; *c; c++)
      *c = *c == '.' ? '/' : *c == '/' ? '.' : *c;
  if (p[0] == '/' || p[len - 1] == '/' || strstr (p, "//"))
    goto bad;
  for (const char *c = p; *c;)
    {
      const char *e = strchrnul (c, '/');
      if (e - c == 1 && c[0] == '.')
        goto bad;
      c = *e ? e + 1 : e;
    }
  return p;
bad:
  free (p);
  return NULL;
}

/* Which namespace owns the sysctl at path (below /proc/sys, '/'-separated). */
static enum sysctl_class
classify (const char *path)
{
  const char *name;

  if (strncmp (path, "net/", 4) == 0)
    return SYSCTL_NET;
  if (strncmp (path, "fs/mqueue/", 10) == 0 && strchr (path + 10, '/') == NULL)
    return SYSCTL_IPC;
  if (strncmp (path, "kernel/", 7) != 0 || strchr (path + 7, '/'))
    return SYSCTL_HOST;
  name = path + 7;
  if (strcmp (name, "hostname") == 0 || strcmp (name, "domainname") == 0)
    return SYSCTL_UTS;
  /* kernel.msg*, kernel.shm*, kernel.sem and kernel.sem_next_id live in
   * ipc/ipc_sysctl.c: per ipc namespace. */
  if (strncmp (name, "msg", 3) == 0 || strncmp (name, "shm", 3) == 0
      || strcmp (name, "sem") == 0 || strcmp (name, "sem_next_id") == 0)
    return SYSCTL_IPC;
  return SYSCTL_HOST;
}

/* The container must have namespace t of its own: new, or joined by a path
 * that is not brig's own (the host's, compared by device and inode). */
static int
check_own_ns (const struct brig_ns_plan *ns, enum brig_ns_type t, const char *name,
              const char *key, brig_error *err)
{
  struct stat joined, host;
  char path[64];

  if (ns->new_flags & brig_ns_flag (t))
    return 0;
  if (ns->join_fd[t] < 0)
    return brig_error_say (err, EINVAL, "linux.sysctl \"%s\": needs a %s namespace of the "
                           "container's own (linux.namespaces has none: it would change the "
                           "host's)", key, name);
  snprintf (path, sizeof path, "/proc/self/ns/%s", brig_ns_proc_name (t));
  if (fstat (ns->join_fd[t], &joined) < 0 || stat (path, &host) < 0)
    return brig_error_errno (err, "linux.sysctl \"%s\": compare the joined %s namespace with %s",
                             key, name, path);
  if (joined.st_dev == host.st_dev && joined.st_ino == host.st_ino)
    return brig_error_say (err, EINVAL, "linux.sysctl \"%s\": the %s namespace joined in "
                           "linux.namespaces is the host's (it would change the host's)",
                           key, name);
  return 0;
}

int
brig_sysctl_validate (const oci_config *cfg, const struct brig_ns_plan *ns, brig_error *err)
{
  const oci_map *m = cfg->linux ? cfg->linux->sysctl : NULL;

  for (size_t i = 0; m && i < m->len; i++)
    {
      const char *key = m->keys[i], *value = m->values[i] ? m->values[i] : "";
      _cleanup_free_ char *path = brig_sysctl_path (key);
      int r = 0;

      if (path == NULL)
        return brig_error_say (err, EINVAL, "linux.sysctl \"%s\": not a valid sysctl name", key);
      switch (classify (path))
        {
        case SYSCTL_HOST:
          return brig_error_say (err, EINVAL, "linux.sysctl \"%s\": not namespaced, it would "
                                 "change the host (allowed: ipc sysctls with an ipc namespace, "
                                 "net.* with a network namespace, kernel.domainname with a "
                                 "uts namespace)", key);
        case SYSCTL_IPC:
          r = check_own_ns (ns, BRIG_NS_IPC, "ipc", key, err);
          break;
        case SYSCTL_NET:
          r = check_own_ns (ns, BRIG_NS_NET, "network", key, err);
          break;
        case SYSCTL_UTS:
          r = check_own_ns (ns, BRIG_NS_UTS, "uts", key, err);
          /* As runc and crun: the hostname has a field of its own, always
           * (an equal value too: which one applies would depend on the
           * order). kernel.domainname is how engines set a domain name
           * (docker), so only a value other than domainname's is. */
          if (r == 0 && strcmp (path, "kernel/hostname") == 0)
            r = brig_error_say (err, EINVAL, "linux.sysctl \"%s\": not allowed as it conflicts "
                                "with the OCI \"hostname\" field (set hostname instead)", key);
          else if (r == 0 && cfg->domainname && *cfg->domainname
                   && strcmp (cfg->domainname, value) != 0)
            r = brig_error_say (err, EINVAL, "linux.sysctl \"%s\": \"%s\" conflicts with "
                                "domainname \"%s\"", key, value, cfg->domainname);
          break;
        }
      if (r < 0)
        return r;
    }
  return 0;
}
