/* Which capabilities defeat a container's egress policy, judged once for
 * create (process.capabilities) and for every way exec adds capabilities
 * to a running container (--cap, --process with capabilities in any set):
 * the programs hold only the sockets of the container's cgroup, so a
 * capability that sends below them, removes them or acts through a
 * process outside the cgroup is refused (docs/sandbox.md, "Capabilities").
 * Each name is judged by the capability number it names, as the process
 * would be given it; a namespace by its inode, not by its path, and a
 * namespaced capability by the namespaces it reaches. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/capnames.h"
#include "sandbox/egress.h"
#include "namespaces.h"
#include "utils.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BIT(c) (UINT64_C (1) << (c))

/* Every capability any set of c names, as numbers. */
static uint64_t
caps_of (const oci_capabilities *c)
{
  char *const *sets[] = { c->bounding, c->effective, c->permitted, c->inheritable, c->ambient };
  size_t lens[] = { c->bounding_len, c->effective_len, c->permitted_len, c->inheritable_len,
                    c->ambient_len };
  uint64_t m = 0;

  for (size_t s = 0; s < BRIG_ARRAY_SIZE (sets); s++)
    for (size_t i = 0; sets[s] && i < lens[s] && sets[s][i]; i++)
      {
        int n = brig_cap_from_name (sets[s][i]);
        if (n >= 0 && n < 64)
          m |= BIT (n);
      }
  return m;
}

int
brig_egress_check_caps (const oci_capabilities *c, const struct brig_egress_ns *ns,
                        const char *field, brig_error *err)
{
  /* Outside a user namespace of the container's own these are the host's:
   * CAP_SYS_ADMIN turns the programs' ids into the fds that detach them,
   * CAP_NET_ADMIN and CAP_BPF load and attach cgroup programs of their
   * own, CAP_SYS_MODULE loads kernel code that can do anything. */
  static const int host[] = { CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_BPF, CAP_SYS_MODULE };
  uint64_t m = c ? caps_of (c) : 0;

  if (m == 0)
    return 0;
  /* AF_PACKET sockets send frames below IP, where no cgroup program runs;
   * over the container's own network namespace too, with a user namespace */
  if (m & BIT (CAP_NET_RAW))
    return brig_error_say (err, EPERM, "annotation " BRIG_EGRESS_KEY ": %s grants CAP_NET_RAW, whose packet "
                           "sockets bypass the egress policy; drop it", field);
  for (size_t i = 0; !ns->own_userns && i < BRIG_ARRAY_SIZE (host); i++)
    if (m & BIT (host[i]))
      return brig_error_say (err, EPERM, "annotation " BRIG_EGRESS_KEY ": %s grants %s without a user "
                             "namespace: it could detach the egress policy; drop it or add a "
                             "user namespace", field, brig_cap_name (host[i]));
  /* Namespaced, but over the network namespace the process sends from: a
   * tunnel device it makes there (VXLAN, GRE, IPIP) wraps its allowed
   * packets in outer ones the kernel sends without the socket, so no
   * cgroup program judges where they go. */
  if ((m & BIT (CAP_NET_ADMIN)) && ns->owns_netns)
    return brig_error_say (err, EPERM, "annotation " BRIG_EGRESS_KEY ": %s grants CAP_NET_ADMIN over a "
                           "network namespace its user namespace owns: the packets of a "
                           "tunnel device it makes there leave without the egress policy; "
                           "drop it, or join a network namespace the container's user "
                           "namespace does not own", field);
  /* Without a user namespace it ptraces every process of its pid
   * namespace, non-dumpable or not: `exec`'s process before it drops
   * brig's capabilities among them. With a pid namespace that is not the
   * container's own (the host's, a pod's) it reaches processes outside
   * the cgroup, whose sockets no program of the container judges. */
  if ((m & BIT (CAP_SYS_PTRACE)) && (!ns->own_userns || !ns->own_pidns))
    return brig_error_say (err, EPERM, "annotation " BRIG_EGRESS_KEY ": %s grants CAP_SYS_PTRACE %s: it "
                           "could act through a process the egress policy does not hold; "
                           "drop it", field,
                           !ns->own_userns ? "without a user namespace"
                                           : "with a pid namespace not its own");
  return 0;
}

bool
brig_egress_userns_owns (int userns, int ns)
{
  struct stat u, o;
  int cur;

  if (fstat (userns, &u) < 0)
    return true;
  /* the owner, then its ancestors: a user namespace's capabilities hold
   * over what it and its descendants own */
  cur = ioctl (ns, NS_GET_USERNS);
  if (cur < 0)
    return true;  /* cannot tell: as if it did */
  for (int depth = 0; cur >= 0 && depth < 40; depth++)
    {
      int parent;
      if (fstat (cur, &o) == 0 && o.st_dev == u.st_dev && o.st_ino == u.st_ino)
        {
          close (cur);
          return true;
        }
      parent = ioctl (cur, NS_GET_PARENT);
      close (cur);
      cur = parent;
    }
  if (cur >= 0)
    close (cur);
  return false;  /* the walk ended above the initial user namespace (EPERM) */
}

int
brig_egress_check_exec (pid_t init, bool new_pidns, const oci_capabilities *c,
                        const char *field, brig_error *err)
{
  struct brig_egress_ns ns = { .own_pidns = new_pidns };
  char path[64];
  _cleanup_close_ int fd = -1;

  if (c == NULL)
    return 0;
  /* the user namespace the init runs in, as create judged the config's
   * (an init that is gone or cannot be looked at counts as the host's) */
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) init);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  ns.own_userns = fd >= 0 && !brig_ns_judged_host (fd, BRIG_NS_USER);
  if (ns.own_userns)
    {
      _cleanup_close_ int net = -1;
      snprintf (path, sizeof path, "/proc/%d/ns/net", (int) init);
      net = open (path, O_RDONLY | O_CLOEXEC);
      ns.owns_netns = net < 0 || brig_egress_userns_owns (fd, net);
    }
  return brig_egress_check_caps (c, &ns, field, err);
}
