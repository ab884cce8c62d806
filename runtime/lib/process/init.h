/* The container init: the child of create (or run, or reset's respawn)
 * after the clone (process/init.c). What it is given is prepared by the
 * parent (container/spawn.c); they talk through process/handshake.h. */
#ifndef BRIG_PROCESS_INIT_H
#define BRIG_PROCESS_INIT_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "namespaces.h"
#include "ocispec.h"
#include "rootfs/rootfs.h"
#include "seccomp/seccomp.h"

/* Everything the init needs, prepared by the parent before clone. */
struct brig_init_args {
  const oci_config *cfg;
  /* of create's options (container.h), what the init reads */
  const char *id;
  const char *console_socket;  /* --console-socket, or NULL */
  bool no_pivot;               /* --no-pivot */
  bool no_new_keyring;         /* --no-new-keyring */
  const char *keyring;         /* the session keyring to make searchable for
                                  exec (state's keyring), or NULL: a random
                                  name of its own, not searchable */
  int preserve_fds;            /* --preserve-fds */
  int listen_fds;              /* socket activation (LISTEN_FDS) */
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
  bool layer_seed;             /* the parent fills the layer before it is
                                  mounted (LAYER_SEED, brig fork) */
  int rootfs_tree;             /* an extension's idmapped rootfs
                                  (brig_rootfs_opts.rootfs_tree), or -1 */
};

/* The init: runs in the child after clone, never returns. */
void brig_init_main (struct brig_init_args *a) __attribute__ ((noreturn));

#endif
