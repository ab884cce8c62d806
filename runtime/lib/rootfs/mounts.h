/* Mount options of config.json "mounts[].options": the table of every option
 * the runtime-spec and mount(8) define, parsed into mount(2) flags,
 * propagation changes, mount_setattr(2) attributes (plain and recursive) and
 * the filesystem data string. No Linux calls in here besides the constants,
 * so the parser is unit-testable. */
#ifndef BRIG_MOUNTS_H
#define BRIG_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ocispec.h"

#define BRIG_MOUNT_MAX_PROPAGATION 8

struct brig_mount_options {
  unsigned long flags;       /* MS_* for mount(2): MS_RDONLY, MS_NOSUID, ...,
                                MS_BIND (bind), MS_BIND|MS_REC (rbind),
                                MS_REMOUNT (remount) */
  unsigned long cleared;     /* MS_* explicitly turned off (rw, suid, ...) */
  /* propagation changes in the order given: MS_PRIVATE, MS_SHARED,
     MS_SLAVE or MS_UNBINDABLE, each possibly with MS_REC */
  unsigned long propagation[BRIG_MOUNT_MAX_PROPAGATION];
  size_t n_propagation;
  /* mount_setattr(2) attributes for the mount itself (from the plain
     ro/nosuid/... options; used on bind mounts instead of a remount) */
  uint64_t attr_set, attr_clr;
  /* mount_setattr(2) attributes applied with AT_RECURSIVE (rro, rnosuid...) */
  uint64_t rec_attr_set, rec_attr_clr;
  bool bind;        /* bind or rbind */
  bool recursive;   /* rbind */
  bool idmap;       /* idmap or ridmap */
  bool ridmap;      /* ridmap: the idmapping is applied recursively */
  bool tmpcopyup;   /* copy the destination's content into the new tmpfs */
  char *data;       /* filesystem options, comma-joined; NULL when none */
};

/* Parse options (n entries; NULL means none) into out, which is reset
 * first. Unknown options become filesystem data, as the spec says; the only
 * errors are malformed entries (empty strings). Free with
 * brig_mount_options_free. */
int brig_mount_options_parse (char *const *options, size_t n,
                              struct brig_mount_options *out, brig_error *err);

/* Release what brig_mount_options_parse allocated (the data string). */
void brig_mount_options_free (struct brig_mount_options *o);

/* Parse one propagation name ("private", "rslave", ...) into MS_* flags;
 * 0 when it is not a propagation name. */
unsigned long brig_mount_propagation_parse (const char *name);

/* The attributes a bind mount loses though its options do not name them:
 * options that set per-mount attributes (nosuid, noatime, ...) without
 * "ro" make the bind read-write (MOUNT_ATTR_RDONLY), as runc's bind
 * remount does; a bind with no attribute options keeps the source's flags.
 * Callers drop this where the kernel refuses (a locked read-only mount). */
uint64_t brig_mount_implied_clr (const struct brig_mount_options *o);

/* The MS_* flags that are per-mount attributes (ro, nosuid, nodev, noexec,
 * the atime flags, nosymfollow): what a bind remount may change. */
unsigned long brig_mount_attr_flags (void);

/* True when the option name is one the table knows (flag, propagation,
 * recursive attribute or extension), i.e. it is not filesystem data. */
bool brig_mount_option_known (const char *name);

/* True when cfg mounts something of type (any type when NULL) at dest (a
 * clean absolute path; destinations are compared cleaned). */
bool brig_config_mounts_at (const oci_config *cfg, const char *dest, const char *type);

/* True when cfg mounts a filesystem of this type anywhere. */
bool brig_config_mounts_type (const oci_config *cfg, const char *type);

/* The names of every option the table acts on (for `brig features`), as a
 * NULL-terminated malloc'd vector; *len receives the count. */
char **brig_mount_option_names (size_t *len);

#endif
