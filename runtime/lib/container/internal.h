/* Shared between the parent side of create (container/create.c) and the
 * container init (init.c). Not part of libbrig's interface. */
#ifndef BRIG_CONTAINER_INTERNAL_H
#define BRIG_CONTAINER_INTERNAL_H

#include <stdbool.h>

#include "cgroup/cgroup.h"
#include "container/container.h"
#include "namespaces.h"
#include "ocispec.h"
#include "rootfs/rootfs.h"
#include "seccomp/seccomp.h"

/* Everything the init needs, prepared by the parent before clone. */
struct brig_init_args {
  const oci_config *cfg;
  const struct brig_create_opts *o;
  const char *rootfs;          /* absolute host path of root.path */
  const char *bundle;          /* absolute bundle path */
  int sync_fd;                 /* the child's end of the sync socketpair */
  int exec_fd;                 /* listening exec socket, -1 for run */
  int console_fd;              /* console socket or socketpair end, -1 */
  int stdio_fd;                /* dup'ed onto 0, 1 and 2 first, -1: keep them */
  int close_fds[6];            /* the parent's fds, closed first (-1: none) */
  int join_fd[BRIG_NS_COUNT];  /* namespaces the init joins itself */
  unsigned long unshare_flags; /* namespaces the init creates itself */
  bool userns_via_sync;        /* it unshares the user ns: parent writes maps */
  bool fork_init;              /* fork the real init after unshare (pid ns) */
  bool new_userns;             /* running in a new user namespace */
  bool made_userns;            /* ... one brig makes (not joined): set its
                                  /proc/sys/user limits */
  uid_t userns_owner;          /* the euid to unshare it with (userns_owner.h),
                                  0: brig's own */
  bool hook_sync;              /* round trip for prestart/createRuntime hooks */
  bool netdev_sync;            /* round trip for linux.netDevices (netdev.h)
                                  when the init makes or joins its network
                                  namespace itself; else moved before GO */
  bool new_netns;              /* a new network namespace: bring lo up */
  bool go_late;                /* nothing before the rootfs needs the cgroup:
                                  the init mounts while the parent places it
                                  and waits for GO only at the cgroup barrier */
  struct brig_cgroup_self cg_self; /* v1 hierarchies it joins itself first
                                      (brig_cgroup_self_open); n == 0: none */
  brig_seccomp *seccomp;
  bool seccomp_early;
  struct brig_root_layer root_layer; /* an extension's layer over root.path
                                        (brig_rootfs_opts.layer), or none */
  int rootfs_tree;             /* an extension's idmapped rootfs
                                  (brig_rootfs_opts.rootfs_tree), or -1 */
};

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

/* The init: runs in the child after clone, never returns. */
void brig_init_main (struct brig_init_args *a) __attribute__ ((noreturn));

#endif
