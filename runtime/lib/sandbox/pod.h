/* The pod sandbox ("pause") container of a Kubernetes pod, as the CRI
 * implementations mark it. It receives the pod's annotations like the
 * pod's workload containers, but runs no tenant code: the node's pause
 * image holds the pod's namespaces open. The sandbox-layer annotations
 * (run.brig.egress*, run.brig.rootfs.ephemeral*) are meant for the
 * workload containers and are not applied to it (docs/sandbox.md, "Pods
 * through CRI"). */
#ifndef BRIG_SANDBOX_POD_H
#define BRIG_SANDBOX_POD_H

#include <stdbool.h>

#include "ocispec.h"

/* containerd's CRI plugin marks each container it creates with this
 * annotation: "sandbox" for the pause container, "container" otherwise. */
#define BRIG_CRI_CONTAINERD_TYPE_KEY "io.kubernetes.cri.container-type"
/* CRI-O's equivalent. */
#define BRIG_CRI_CRIO_TYPE_KEY "io.kubernetes.cri-o.ContainerType"

/* True when annotations mark the config as a CRI pod's sandbox container. */
bool brig_pod_sandbox_container (const oci_map *annotations);

#endif
