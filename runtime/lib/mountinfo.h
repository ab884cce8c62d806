/* /proc/self/mountinfo as a list of entries (proc(5)). */
#ifndef BRIG_MOUNTINFO_H
#define BRIG_MOUNTINFO_H

#include <stddef.h>

#include "error.h"

struct brig_mountinfo {
  int id, parent_id;
  char *root;           /* root of the mount within its filesystem */
  char *mountpoint;     /* unescaped */
  char *options;        /* per-mount options: "rw,nosuid,..." */
  char *optional;       /* optional fields: "shared:1 master:2", may be "" */
  char *fstype;
  char *source;
  char *super_options;  /* per-superblock options */
};

/* A malloc'd copy of a mountinfo field with its octal escapes undone
 * (\040 space, \011 tab, \012 newline, \134 backslash). */
char *brig_mountinfo_unescape (const char *s);

/* Read and parse the mountinfo file at path (NULL: /proc/self/mountinfo). */
int brig_mountinfo_read (const char *path, struct brig_mountinfo **out, size_t *n,
                         brig_error *err);

/* Free what brig_mountinfo_read returned. */
void brig_mountinfo_free (struct brig_mountinfo *v, size_t n);

/* The entry whose mountpoint is the longest prefix (by path components) of
 * path: the mount path lives on; NULL when none matches. */
const struct brig_mountinfo *brig_mountinfo_find_parent (const struct brig_mountinfo *v,
                                                         size_t n, const char *path);

/* True when path equals prefix or lies below it (component-wise). */
int brig_path_has_prefix (const char *path, const char *prefix);

#endif
