/* Process attributes applied by the container init: personality,
 * scheduler (sched_setattr), I/O priority (ioprio_set), CPU affinity
 * (execCPUAffinity) and memory policy (set_mempolicy). */
#ifndef BRIG_PROCATTR_H
#define BRIG_PROCATTR_H

#include "error.h"
#include "ocispec.h"

/* Check every name and value (in the parent, before clone): unknown
 * scheduler policy or flag, I/O class, personality domain, memory policy
 * mode or flag, malformed CPU or node lists. cfg or proc may be NULL. */
int brig_procattr_validate (const oci_config *cfg, const oci_process *proc, brig_error *err);

/* Apply personality, scheduler, ioPriority, memoryPolicy and the final
 * execCPUAffinity to the calling process. The init calls it once the
 * rootfs is ready, before seccomp (which may block these syscalls); the
 * privileged settings (SCHED_FIFO/RR/DEADLINE, IOPRIO_CLASS_RT) need
 * capabilities the container may not keep, so call it before
 * brig_caps_apply. cfg may be NULL (exec of a process.json). */
int brig_procattr_apply (const oci_config *cfg, const oci_process *proc, brig_error *err);

/* Apply execCPUAffinity.initial: the CPUs a process runs on before it
 * joins the container's cgroup (brig exec calls it before joining). */
int brig_procattr_affinity_initial (const oci_process *proc, brig_error *err);

/* process.scheduler.policy when it is a realtime one (SCHED_FIFO or
 * SCHED_RR), which needs a realtime budget in a v1 cpu cgroup with
 * realtime group scheduling; NULL otherwise. */
const char *brig_procattr_realtime_policy (const oci_process *proc);

#endif
