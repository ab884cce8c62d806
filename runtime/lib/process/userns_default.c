/* Default id mappings for a new user namespace: see userns_default.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process/userns_default.h"
#include "utils.h"

/* What id is in the parent user namespace, from /proc/self/{uid,gid}_map
 * ("inside outside count" lines); -1 when it cannot be told. */
static long long
outside_id (const char *file, unsigned long id)
{
  _cleanup_free_ char *map = NULL;

  if (brig_read_file_at (AT_FDCWD, file, &map, NULL, NULL) < 0)
    return -1;
  for (const char *p = map; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    {
      unsigned long long in, out, count;
      if (sscanf (p, "%llu %llu %llu", &in, &out, &count) == 3 && id >= in && id - in < count)
        return (long long) (out + (id - in));
    }
  return -1;
}

static int
default_map (oci_id_mapping **m, size_t *n, const char *field, const char *file,
             unsigned long own, brig_error *err)
{
  if (*n > 0)
    return 0;
  if (outside_id (file, own) <= 0)
    return brig_error_say (err, EPERM, "%s: a new user namespace without mappings would map "
                           "the container's root to brig's own id %lu, which is root outside "
                           "brig's user namespace (the host's root, for brig run as root): give "
                           "%s, e.g. [{\"containerID\": 0, \"hostID\": 100000, \"size\": "
                           "65536}] for host ids nothing else uses", field, own, field);
  *m = xmalloc0 (sizeof **m);
  (*m)->container_id = 0;
  (*m)->host_id = (uint32_t) own;
  (*m)->size = 1;
  *n = 1;
  return 0;
}

int
brig_userns_default_maps (oci_linux *lx, brig_error *err)
{
  int r = default_map (&lx->uid_mappings, &lx->uid_mappings_len, "linux.uidMappings",
                       "/proc/self/uid_map", (unsigned long) geteuid (), err);
  if (r < 0)
    return r;
  return default_map (&lx->gid_mappings, &lx->gid_mappings_len, "linux.gidMappings",
                      "/proc/self/gid_map", (unsigned long) getegid (), err);
}
