/* Shared by the lifecycle's files (create, run, start/delete); not part of
 * libbrig's interface. What the init is given: process/init.h. */
#ifndef BRIG_CONTAINER_INTERNAL_H
#define BRIG_CONTAINER_INTERNAL_H

#include <stdbool.h>

#include "cgroup/cgroup.h"
#include "container/container.h"
#include "namespaces.h"
#include "ocispec.h"


struct brig_container;

/* Poststart hooks of a container whose process just started, with the state
 * on stdin; a failure kills the container (runtime-spec 1.3). */
int brig_container_poststart (const oci_hooks *h, struct brig_container *c, brig_error *err);

/* delete --force for `run`, which parsed the config itself: the saved
 * config.json is read for its poststop hooks only when has_poststop. */
int brig_container_delete_after_run (const struct brig_context *ctx, const char *id,
                                     bool has_poststop, brig_error *err);
/* The end of a foreground run without poststop hooks: the container whose
 * init run has reaped, from the state directory fd and cgroup it kept (no
 * state.json or ownership record to read again). Takes both. */
int brig_container_delete_after_run_owned (const struct brig_context *ctx, const char *id,
                                           int dirfd, brig_cgroup *cg, pid_t pid,
                                           unsigned long long start_time, brig_error *err);

#endif
