/* Judge the thing, not its name (docs/sandbox.md): what `brig check` and
 * the node policy decide about a config's names is decided by what they
 * reach. A linux.namespaces path by the namespace it opens (its type and
 * inode against the host's). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "namespaces.h"
#include "sandbox/check_internal.h"
#include "utils.h"

/* ---- namespaces ---- */

enum check_ns_verdict
check_ns_judge (const oci_namespace *ns, const struct brig_check_input *in, char *why,
                size_t size)
{
  int t = ns->type ? brig_ns_from_name (ns->type) : -1;
  int fd = -1, kind = -1, r;
  _cleanup_close_ int own = -1;

  if (t < 0)
    {
      snprintf (why, size, "unknown namespace type: create refuses it");
      return CHECK_NS_UNCHECKED;
    }
  if (in->ns_fd)
    fd = in->ns_fd[t];
  if (fd < 0)
    {
      r = brig_ns_open_path (ns->path, &own, &kind);
      if (r == -EINVAL)
        {
          snprintf (why, size, "%s is not a namespace: create refuses it", ns->path);
          return CHECK_NS_UNCHECKED;
        }
      if (r < 0)
        {
          snprintf (why, size, "%s cannot be opened here (%s): not checked", ns->path,
                    strerror (-r));
          return CHECK_NS_UNCHECKED;
        }
      if (kind != t)
        {
          char host[80];
          /* what it really is: the host's pid namespace under "network" */
          r = brig_ns_is_host (own, (enum brig_ns_type) kind, host, sizeof host);
          snprintf (why, size, "%s is a %s namespace (%s), not %s: create refuses it", ns->path,
                    brig_ns_proc_name ((enum brig_ns_type) kind), r > 0 ? host : "not the host's",
                    ns->type);
          return CHECK_NS_UNCHECKED;
        }
      fd = own;
    }
  r = brig_ns_is_host (fd, (enum brig_ns_type) t, why, size);
  if (r < 0)
    {
      snprintf (why, size, "%s cannot be compared with the host's (%s): not checked", ns->path,
                strerror (-r));
      return CHECK_NS_UNCHECKED;
    }
  return r ? CHECK_NS_HOST : CHECK_NS_OTHER;
}
