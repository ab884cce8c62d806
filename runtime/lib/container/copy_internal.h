/* Inside `brig cp` (copy.h): a tree written as a tar stream and a tar
 * stream extracted under a directory, the same code on both sides (the
 * host's and the container's); the side decides how a named path is
 * resolved and what the extraction may create. */
#ifndef BRIG_COPY_INTERNAL_H
#define BRIG_COPY_INTERNAL_H

#include <stdbool.h>

#include "error.h"
#include "tar.h"

/* How a side resolves the path it is given. */
struct brig_copy_side {
  int root;          /* the container's "/" (RESOLVE_IN_ROOT), or -1: the host's rules */
  bool host;         /* extraction on the host: no setuid/setgid bits, no devices */
  bool keep_owner;   /* -a: the archive's ids; else the extracting process's own */
};

/* Write path (resolved by side; its last symlink followed only with
 * follow) to t as an archive whose entries start with its base name,
 * ending the archive. */
int brig_copy_write_path (struct brig_tar *t, const struct brig_copy_side *side, const char *path,
                          bool follow, brig_error *err);

/* Extract the archive on t at path (resolved by side) by docker cp's
 * rules: with as_is the archive goes into the directory path as it is
 * (`cp - ID:DST`); else its first entry names what was copied, and
 * contents says the source named a directory's contents ("DIR/."). */
int brig_copy_extract_path (struct brig_tar *t, const struct brig_copy_side *side,
                            const char *path, bool as_is, bool contents, brig_error *err);

#endif
