/* Files into and out of a container as a tar stream (`brig cp`, and the
 * file calls of `brig serve`), privilege-separated: the caller's side
 * touches only host objects (the fd it produces or consumes the stream
 * through), and a child that joined the container touches only the
 * container's. The child is non-dumpable before it joins anything, joins
 * the container's memory, pids and other v1 cgroups but not its freezer
 * (so its writes are charged to the container and a paused container does
 * not stop it), then its user and mount namespaces and its root, and runs
 * as the container's root; it never enters the pid namespace and never
 * execs. Inside, the named path is resolved with
 * openat2(RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS) and every archive entry
 * below it with no symlink at all (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS),
 * made under a temporary name and renamed into place: the check is the
 * use, so a tenant swapping symlinks (CVE-2018-15664) can at worst make an
 * entry fail, and there is no host path in the child to reach.
 * docs/sandbox.md "Copying files", docs/security.md. */
#ifndef BRIG_COPY_H
#define BRIG_COPY_H

#include <stdbool.h>

#include "context.h"
#include "error.h"

struct brig_copy_opts {
  const char *id;
  const char *path;     /* in the container: DST (into) or SRC (out of) */
  bool keep_owner;      /* -a: the archive's ids (in), the container's view of them (out) */
  bool follow;          /* -L: out of: follow SRC's last symlink (inside the root) */
  bool as_is;           /* into: the stream is extracted as it is into the directory
                           path (`cp - ID:DST`); else its first entry names what was
                           copied and docker cp's file/directory rules apply */
  bool contents;        /* into: the source named a directory's contents ("DIR/.") */
};

/* The caller's side of a copy: write the archive to fd (into) or read it
 * from fd (out of); 0 or -errno with err set. fd is a pipe to the child. */
typedef int brig_copy_fn (int fd, void *data, brig_error *err);

/* Copy the archive that produce writes into container o->id at o->path.
 * The container must be created, running or paused. 0 or -errno with err
 * naming the path or the archive entry; entries already in place stay. */
int brig_copy_into (const struct brig_context *ctx, const struct brig_copy_opts *o,
                    brig_copy_fn *produce, void *data, brig_error *err);

/* Write o->path of container o->id as an archive (its entries start with
 * the path's base name, "." for "DIR/." and "/") for consume to read. */
int brig_copy_out_of (const struct brig_context *ctx, const struct brig_copy_opts *o,
                      brig_copy_fn *consume, void *data, brig_error *err);

/* The host side of `brig cp` (the caller's paths, by the host's rules):
 * write the host path src as an archive to fd (follow: its last symlink
 * too). */
int brig_copy_host_archive (int fd, const char *src, bool follow, brig_error *err);

/* Extract the archive on fd at the host path dst by docker cp's rules
 * (copy.h's as_is and contents); never a setuid or setgid bit, a device
 * node or a write through a symlink; keep_owner: the archive's ids, else
 * the caller's. */
int brig_copy_host_extract (int fd, const char *dst, bool contents, bool keep_owner,
                            brig_error *err);

/* Copy fd in to fd out until the end of in (a tar stream on stdin or to
 * stdout, or a socket of `brig serve`). */
int brig_copy_relay (int in, int out, brig_error *err);

#endif
