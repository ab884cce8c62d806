/* envd's filesystem calls on a container's root (fsops.c): each resolves
 * its paths inside root and adds EntryInfo JSON to g; errors name the
 * path, with errno ENOENT (not_found), EEXIST (already_exists) or another
 * (invalid_argument / internal). */
#ifndef BRIG_SERVE_FSOPS_H
#define BRIG_SERVE_FSOPS_H

#include <yajl/yajl_gen.h>

#include "error.h"

/* Stat: the entry of path (a symlink as the last component is the link). */
int serve_fs_stat (int root, const char *path, yajl_gen g, brig_error *err);
/* ListDir: an array of the entries below path, depth (1..64) levels down,
 * never through a symlink below path. */
int serve_fs_list (int root, const char *path, unsigned depth, yajl_gen g, brig_error *err);
/* MakeDir: path and its missing parents; the entry of path. */
int serve_fs_mkdir (int root, const char *path, yajl_gen g, brig_error *err);
/* Move: rename src to dst (dst's parents made); the entry of dst. */
int serve_fs_move (int root, const char *src, const char *dst, yajl_gen g, brig_error *err);
/* Remove: path and everything below it, never through a symlink; a
 * missing path is success (RemoveAll). */
int serve_fs_remove (int root, const char *path, brig_error *err);

#endif
