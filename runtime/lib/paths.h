/* Safe path resolution inside the container's rootfs, and mounting onto
 * what was resolved. A path inside the rootfs is always resolved by the
 * kernel with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), so a symlink
 * in the image (absolute, relative with "..", or swapped in during setup)
 * can never lead out of the rootfs; mounts then go onto the fd that was
 * checked, never onto a path string that could be re-resolved. */
#ifndef BRIG_PATHS_H
#define BRIG_PATHS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

enum brig_path_kind {
  BRIG_PATH_DIR,   /* create missing components as directories */
  BRIG_PATH_FILE,  /* ... and the last one as an empty regular file */
};

/* Open path (absolute or relative, both taken from the root) below rootfd
 * without leaving it; flags as open(2) (O_CLOEXEC is added). Symlinks are
 * followed as if rootfd were "/"; magic links (/proc/self/fd/N) are refused.
 * Returns the fd or -errno. */
int brig_path_open_in_root (int rootfd, const char *path, int flags);
/* As brig_path_open_in_root, but -ELOOP for a path with a symlink or a ".."
 * component anywhere (or without openat2): what it opens is then the path
 * as written, so callers need not ask the kernel where it landed. */
int brig_path_open_in_root_nolinks (int rootfd, const char *path, int flags);

/* The same resolution done in userspace, one O_PATH|O_NOFOLLOW component at
 * a time ("..": back to the parent fd, never looked up; symlink text
 * resolved from the root or the current directory). brig_path_open_in_root
 * uses it when openat2 is missing; exported for the unit tests. */
int brig_path_open_in_root_walk (int rootfd, const char *path, int flags);

/* Resolve path below rootfd like brig_path_open_in_root, creating what is
 * missing (directories 0755; with BRIG_PATH_FILE the last component as an
 * empty 0644 file). A dangling symlink is followed inside the root and its
 * target created there. Every component is re-resolved after it is
 * created, so a swap during setup still lands inside the root. Returns an
 * O_PATH fd of the result or -errno with err naming the path. */
int brig_path_create_in_root (int rootfd, const char *path, enum brig_path_kind kind,
                              brig_error *err);

/* brig_path_create_in_root for a caller that has just seen the path
 * missing (brig_path_open_in_root gave -ENOENT): skips that first lookup. */
int brig_path_create_absent_in_root (int rootfd, const char *path, enum brig_path_kind kind,
                                     brig_error *err);
/* brig_path_create_absent_in_root that sets *plain when the fd it returns
 * was reached without a symlink or "..": it is then at path as written. */
int brig_path_create_absent_in_root_plain (int rootfd, const char *path,
                                           enum brig_path_kind kind, bool *plain,
                                           brig_error *err);

/* Clean a container path: collapse "//", "/./", drop a trailing "/", and
 * make it absolute ("" and relative paths are taken from "/"). ".." is kept
 * for the kernel to resolve inside the root. Returns a malloc'd string. */
char *brig_path_clean (const char *path);

/* brig_path_clean, and ".." takes the previous component off (as Go's
 * filepath.Clean, which runc applies to mount sources): the path as
 * written, whatever symlinks lie on it. Returns a malloc'd string. */
char *brig_path_clean_lexical (const char *path);

/* brig_path_clean_lexical (path) when it names root (a clean absolute
 * path) or lies below it: the rest, from root ("/" for root itself),
 * malloc'd; NULL when it lies elsewhere. How runc tells a mount's
 * destination or source written as a path inside the rootfs. */
char *brig_path_below (const char *root, const char *path);

/* The path of the object fd refers to, relative to the root at rootfs
 * ("/proc/sys"), from /proc/self/fd. Returns a malloc'd string or NULL. */
char *brig_path_of_fd_in_root (int fd, const char *rootfs);

/* Fill buf with "/proc/self/fd/N" and return it. */
const char *brig_fd_path (int fd, char buf[static 32]);

/* mount(2) onto the object target_fd refers to (through /proc/self/fd).
 * Returns 0 or -errno. */
int brig_mount_onto_fd (const char *source, int target_fd, const char *type,
                        unsigned long flags, const char *data);

/* Thin wrappers of the new mount API; each returns an fd / 0 or -errno. */
int brig_open_tree (int dirfd, const char *path, unsigned int flags);
int brig_move_mount_to_fd (int mount_fd, int target_fd);
/* move_mount onto name in dirfd, not following a symlink there: only for a
 * directory brig made itself on a filesystem the container cannot reach yet
 * (the tmpfs of a v1 /sys/fs/cgroup), never for a path in the image. */
int brig_move_mount_at (int mount_fd, int dirfd, const char *name);
int brig_mount_setattr_fd (int fd, bool recursive, uint64_t attr_set, uint64_t attr_clr,
                           uint64_t propagation, int userns_fd);

/* Bind the object src_fd refers to (any fd; recursive: with its submounts)
 * onto target_fd: open_tree + move_mount, or mount(MS_BIND) through
 * /proc/self/fd when the new mount API is missing. Returns 0 and, when
 * mount_fd is not NULL, stores an fd of the new mount there (-1 when the
 * fallback made none); -errno on failure. */
int brig_bind_fd_onto_fd (int src_fd, int target_fd, bool recursive, int *mount_fd);

/* Fds a loop opens per item and needs until the loop ends (the targets
 * and trees of masked and read-only paths), closed together: one
 * close_range per run of consecutive numbers instead of one close each.
 * Only the fds added are closed, never a number between them that is not
 * in the batch. Initialise with { .n = 0 }. */
#define BRIG_FD_BATCH_MAX 64
struct brig_fd_batch {
  int fds[BRIG_FD_BATCH_MAX];
  size_t n;
};

/* Add fd (>= 0; ignored when negative); a full batch is closed first. */
void brig_fd_batch_add (struct brig_fd_batch *b, int fd);

/* Close every fd of the batch and empty it. */
void brig_fd_batch_close (struct brig_fd_batch *b);

#endif
