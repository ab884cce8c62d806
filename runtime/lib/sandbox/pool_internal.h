/* Shared by pool.c, pool_child.c and pool_fill.c. Not part of libbrig's interface. */
#ifndef BRIG_SANDBOX_POOL_INTERNAL_H
#define BRIG_SANDBOX_POOL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "container/container.h"
#include "context.h"
#include "error.h"
#include "ocispec.h"
#include "sandbox/reset.h"

/* brig_container_reset of id in a forked child that first closes fds (the
 * pool's) and puts /dev/null on stdio; its error comes back in err, rep
 * receives its checks. */
int pool_child_reset (const struct brig_context *ctx, const char *id, const int *fds,
                      size_t nfds, struct brig_reset_report *rep, brig_error *err);

struct shared;

/* A child in flight: fn (arg, err) runs in it, after it closed the fds it
 * was given and put /dev/null on stdio (as above). */
struct pool_child_job {
  int (*fn) (void *arg, brig_error *err);
  void *arg;               /* copied into the child by fork: may change after start */
  pid_t pid;
  int pidfd;               /* readable once the child ended; -1 if pidfd_open failed */
  struct shared *sh;
};

/* Fork j's child; 0, or -errno with nothing started. */
int pool_child_start (struct pool_child_job *j, const int *fds, size_t nfds, brig_error *err);

/* Wait for j's child and give its result (its error in err). */
int pool_child_finish (struct pool_child_job *j, brig_error *err);

/* What fill and a release that replaces its member need to make members
 * (pool_fill.c). */
struct member_edit {
  const char *id;
  bool rootless;            /* --rootless true: no host ids of its own */
};

struct pool_maker {
  const struct brig_context *ctx;
  const char *name;         /* the pool's */
  const char *bundle;       /* absolute */
  int dirfd;                /* ROOT/@pools/NAME */
  int creating, available;  /* two of its state directories */
  const int *fds;           /* every fd of the pool's: closed in the children */
  size_t nfds;
  /* pool.c's member_edit_config, given struct member_edit */
  int (*edit_config) (oci_config *cfg, void *data, brig_error *err);
  size_t parallel;          /* creates in flight, at least 1 */
};

/* Delete container id, saying why when that fails (not when it is gone). */
void pool_delete_quietly (const struct brig_context *ctx, const char *id);

/* Make count members: each a creating/ID entry locked (flock) by the
 * maker while the create child runs, made vacant, then moved to
 * available/; up to m->parallel at once. The new ids are appended to
 * *made (NULL-terminated, *nmade of them). A member that fails is deleted
 * and no more are started; the first error is returned. */
int pool_make_members (const struct pool_maker *m, size_t count, char ***made, size_t *nmade,
                       brig_error *err);

/* ROOT/@pools/NAME/failures: one JSON line per failed release or
 * replacement ({"time","member","phase","reason"}), appended with one
 * write; the file moves to failures.1 past 1 MiB. */
void pool_failure_note (int pool_dirfd, const char *id, const char *phase, const char *reason);

/* How many failures the log holds (with failures.1), and the last line
 * (malloc'd, NULL when none). */
size_t pool_failures_read (int pool_dirfd, char **last);

/* Remove the log (drain). */
void pool_failures_remove (int pool_dirfd);

#endif
