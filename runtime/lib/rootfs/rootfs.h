/* The container's filesystem view, built inside the container's new mount
 * namespace by the container init. Every path inside the rootfs is resolved
 * without following the container's symlinks out of it. */
#ifndef BRIG_ROOTFS_H
#define BRIG_ROOTFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"
#include "sync.h"

/* A layer the init mounts over root.path in place of its self-bind (an
 * extension's, container/extension.h),
 * with the rootfs's host path; mount NULL: none. tree: the extension's
 * detached tree of the rootfs (brig_rootfs_opts.rootfs_tree) for the layer
 * to attach as it needs, or -1. upper_out: NULL, or where it leaves an
 * O_PATH fd of its upper directory when it has one of its own in the
 * container's mount namespace (else -1). seed: NULL, or what fills the
 * upper before the layer is mounted (brig fork). */
struct brig_layer_seed;
struct brig_root_layer {
  int (*mount) (const void *data, const char *rootfs, bool userns, int tree, int *upper_out,
                const struct brig_layer_seed *seed, brig_error *err);
  const void *data;
};

/* What fills a new layer's upper directory before the layer is mounted
 * (brig fork); fill NULL: nothing, the layer starts empty. A layer's mount
 * calls fill with an O_PATH fd of its upper once made (the fd stays its
 * own). */
struct brig_layer_seed {
  int (*fill) (void *arg, int upper, brig_error *err);
  void *arg;
};

/* The config's readonlyPaths and maskedPaths under /proc mapped into every
 * other procfs mount of the container (rootfs/procfs.c): in-container
 * paths, NULL-terminated lists, or NULL. */
struct brig_rootfs_procfs {
  char **readonly;
  char **masked;
};

/* Release the lists of p. */
void brig_rootfs_procfs_clear (struct brig_rootfs_procfs *p);

struct brig_rootfs_opts {
  bool no_pivot;     /* --no-pivot: MS_MOVE + chroot instead of pivot_root */
  bool userns;       /* the container has a new user namespace: bind device
                        nodes from the host instead of mknod */
  int console_fd;    /* >= 0: pty slave to bind on /dev/console, else -1
                        (it must have been opened after the mount namespace
                        was unshared, or the kernel refuses the bind) */
  const char *bundle;    /* base of relative bind-mount sources (runtime-spec:
                            "relative to the bundle"); NULL: the cwd */
  /* NULL, or (in a user namespace) asks the parent to open the source of
   * mounts[i] when the init may not look it up itself (an O_PATH fd), or
   * to idmap it (the detached mount: the init cannot idmap host
   * filesystems); -errno with err set. Called with barrier_arg. */
  int (*open_source) (void *arg, size_t i, brig_error *err);
  /* NULL, or called before the first step that depends on the process's
   * cgroup: a cgroup or cgroup2 mount (rooted by the cgroup namespace) and
   * device nodes (the devices controller checks mknod). It may be called
   * more than once. */
  int (*cgroup_barrier) (void *arg, brig_error *err);
  void *barrier_arg;
  /* A layer mounted over root.path instead of its self-bind, or none. */
  struct brig_root_layer layer;
  int *layer_upper_out;  /* NULL, or the layer's upper_out (brig's pid 1
                            keeps it, process/reaper.h) */
  /* What fills the layer before it is mounted (brig fork), or none. */
  struct brig_layer_seed seed;
  /* NULL, or where rootfs_prepare leaves its O_PATH fd of the rootfs once
   * every mount is in place (the caller closes it; rootfs_pivot and
   * rootfs_finalize take it instead of opening the root again). */
  int *rootfd_out;
  /* NULL, or where rootfs_prepare puts the paths that rootfs_finalize must
   * also make read-only or mask: the config's /proc paths below every other
   * procfs the mounts made (the caller clears it). */
  struct brig_rootfs_procfs *procfs_out;
  /* >= 0: a detached tree of root.path the parent idmapped
   * (an extension's, container/extension.h), attached in place of the
   * self-bind */
  int rootfs_tree;
};

/* Check root, mounts (destinations, options, idmap requirements),
 * rootfsPropagation and linux.devices without touching the system, so
 * create can fail before it makes anything. */
int rootfs_validate (const oci_config *cfg, brig_error *err);

/* Before pivot: make mounts private/slave per rootfsPropagation, bind the
 * rootfs onto itself, apply every entry of cfg->mounts in order, set up /dev
 * (default nodes, linux.devices, /dev/pts/ptmx, /dev/fd and std links,
 * /dev/console). rootfs is the host path of root.path as realpath(3) gives
 * it (create resolved it while loading the bundle; one with "." or ".."
 * parts is resolved again here; a symlink in it would make every mount
 * fail the inside-the-rootfs check). Without a mount namespace in cfg it
 * mounts nothing and warns about what it skips. */
int rootfs_prepare (const oci_config *cfg, const char *rootfs,
                    const struct brig_rootfs_opts *opts, brig_error *err);

/* Make rootfs the process's root (pivot_root, or MS_MOVE + chroot with
 * no_pivot; plain chroot when cfg has no mount namespace), detach the old
 * root and chdir("/"). rootfd: rootfs_prepare's fd of it (the root
 * afterwards), or -1 to open rootfs by path. stdio_st[fd] gets what fd 0..2 is afterwards, bit fd
 * of *stdio_known set when it was read (for brig_process_fix_stdio_owner). */
int rootfs_pivot (const oci_config *cfg, const char *rootfs, int rootfd, bool no_pivot,
                  struct stat stdio_st[3], unsigned *stdio_known, brig_error *err);

/* After pivot: maskedPaths, readonlyPaths (and their copies for other
 * procfs mounts, procfs: rootfs_prepare's procfs_out, may be NULL),
 * root.readonly, and the final propagation of "/". rootfd (as for
 * rootfs_pivot): the root, or -1. */
int rootfs_finalize (const oci_config *cfg, int rootfd, const struct brig_rootfs_procfs *procfs,
                     brig_error *err);

/* In the parent: open mounts[i].source (relative: to bundle) O_PATH with
 * brig's rights, resolved as the host does but inside the mount namespace
 * of the init pid (rootfs/source.c). Returns the fd or -errno. */
int rootfs_source_open (const oci_config *cfg, const char *bundle, pid_t pid, size_t i,
                        brig_error *err);

/* In the parent: the detached, idmapped copy of the object srcfd (from
 * rootfs_source_open) for mounts[i], with its attributes, made in the mount
 * namespace of the init pid. Returns the mount fd or -errno. */
int rootfs_idmap_tree (const oci_config *cfg, size_t i, int srcfd, pid_t pid, brig_error *err);

/* A user namespace carrying these maps (for MOUNT_ATTR_IDMAP), as an fd;
 * -errno with err set. */
int brig_idmap_userns (const oci_id_mapping *u, size_t nu, const oci_id_mapping *g, size_t ng,
                       brig_error *err);

/* True when mounts entry m is idmapped (idmap/ridmap or its own maps). */
bool rootfs_wants_idmap (const oci_mount *m);

/* In the parent, for the init's MOUNT_SOURCE request (process/handshake.c):
 * rootfs_source_open, and its idmapped copy when the mount asks for one. */
int rootfs_source_open_for_init (const oci_config *cfg, const char *bundle, pid_t pid, size_t i,
                                 brig_error *err);

/* After pivot: bind the pty slave console_fd onto /dev/console (creating
 * the mount point). For a console made inside the container. */
int rootfs_mount_console (int console_fd, brig_error *err);

#endif
