/* Shared by pool.c and pool_child.c. Not part of libbrig's interface. */
#ifndef BRIG_SANDBOX_POOL_INTERNAL_H
#define BRIG_SANDBOX_POOL_INTERNAL_H

#include <stddef.h>

#include "container/container.h"
#include "context.h"
#include "error.h"
#include "sandbox/reset.h"

struct pool_child_create {
  const struct brig_context *ctx;
  const struct brig_create_opts *opts;
};

/* brig_container_create in a forked child that first closes fds (the
 * pool's) and puts /dev/null on stdio; its error comes back in err. */
int pool_child_create (const struct pool_child_create *a, const int *fds, size_t nfds,
                       brig_error *err);

/* brig_container_reset of id the same way; rep receives its checks. */
int pool_child_reset (const struct brig_context *ctx, const char *id, const int *fds,
                      size_t nfds, struct brig_reset_report *rep, brig_error *err);

#endif
