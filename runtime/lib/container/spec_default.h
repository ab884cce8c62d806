/* The default bundle configuration written by `brig spec`. */
#ifndef BRIG_SPEC_DEFAULT_H
#define BRIG_SPEC_DEFAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "ocispec.h"

struct brig_spec_opts {
  bool rootless;   /* a user namespace mapping the caller to root, no netns */
  bool hardened;   /* add brig's default seccomp profile */
};

/* Build the default config (as `runc spec` does, with brig's name). */
int brig_spec_default (const struct brig_spec_opts *opts, oci_config **out, brig_error *err);

#endif
