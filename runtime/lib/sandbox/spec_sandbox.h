/* `brig spec --sandbox`: a config for untrusted code that passes
 * `brig check --profile sandbox` with no finding. */
#ifndef BRIG_SANDBOX_SPEC_SANDBOX_H
#define BRIG_SANDBOX_SPEC_SANDBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "ocispec.h"

/* The mapping's host uid/gid of container root (and the next 65535) when
 * brig runs as root: above the ranges useradd (100000..600100000) and
 * systemd-nspawn (524288..1879048191) hand out, so it owns no host file.
 * With run.brig.userns=auto, which the config asks for, it says how the
 * image's files are owned; the container runs in a range of its own. */
#define BRIG_SANDBOX_USERNS_BASE UINT32_C (1879048192)
#define BRIG_SANDBOX_USERNS_SIZE UINT32_C (65536)

/* Default limits: 512 MiB of memory (no swap beyond it), 256 pids, 1 CPU. */
#define BRIG_SANDBOX_MEMORY (INT64_C (512) << 20)
#define BRIG_SANDBOX_PIDS 256
#define BRIG_SANDBOX_CPU_PERIOD UINT64_C (100000)

/* Build the sandbox config into *out. userns_base is the host uid/gid of
 * container root (ignored when rootless: an unprivileged user maps root to
 * its own ids, one id, as it cannot map more without newuidmap; and gets
 * no cgroup limits, which need a delegated cgroup). */
int brig_spec_sandbox (bool rootless, uint32_t userns_base, oci_config **out, brig_error *err);

#endif
