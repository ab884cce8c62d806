/* The CRI pod sandbox container (pod.h). Only the CRI implementation
 * writes these keys: containerd and CRI-O set them themselves on every
 * container they create, and pass a pod's own annotations through only
 * when the runtime handler lists them (pod_annotations, allowed_annotations),
 * which must not include these keys (docs/engines.md). */
#include <string.h>

#include "sandbox/pod.h"

bool
brig_pod_sandbox_container (const oci_map *annotations)
{
  const char *t = oci_map_get (annotations, BRIG_CRI_CONTAINERD_TYPE_KEY);

  if (t == NULL)
    t = oci_map_get (annotations, BRIG_CRI_CRIO_TYPE_KEY);
  return t != NULL && strcmp (t, "sandbox") == 0;
}
