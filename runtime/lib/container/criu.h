/* Checkpoint and restore of a container by running the criu binary
 * (`criu dump` / `criu pre-dump` / `criu restore`) with command-line options.
 * Debian ships no libcriu, so brig execs criu from $PATH; criu's own log
 * (dump.log / restore.log in the work directory) holds the details, and its
 * "Error" lines are copied into the brig_error on failure. */
#ifndef BRIG_CRIU_H
#define BRIG_CRIU_H

#include <stdbool.h>

#include "context.h"
#include "error.h"

/* Options shared by checkpoint and restore (runc's flag names). */
struct brig_criu_common {
  const char *image_path;          /* NULL: ./checkpoint */
  const char *work_path;           /* NULL: the image path */
  const char *manage_cgroups_mode; /* soft|full|strict|ignore, NULL: criu's default */
  const char **empty_ns;           /* runc names (network, ...), empty_ns_len of them */
  int empty_ns_len;
  bool tcp_established;
  bool ext_unix_sk;
  bool shell_job;
  bool file_locks;
  bool lazy_pages;
  bool auto_dedup;
};

struct brig_checkpoint_opts {
  const char *id;
  struct brig_criu_common c;
  const char *parent_path;         /* --prev-images-dir, relative to the image path */
  bool leave_running;
  bool pre_dump;
};

struct brig_restore_opts {
  const char *id;
  struct brig_criu_common c;
  const char *bundle;              /* NULL: the current directory */
  const char *console_socket;
  const char *pid_file;
  const char *lsm_profile;
  const char *lsm_mount_context;
  bool detach;
  bool no_subreaper;
  bool no_pivot;
};

/* Check a --manage-cgroups-mode value: 0 or -EINVAL. */
int brig_criu_check_cgroups_mode (const char *mode);

/* `checkpoint`: dump a running (or paused) container's process tree into the
 * image directory; without leave_running or pre_dump criu kills it (the
 * container is then stopped). */
int brig_container_checkpoint (const struct brig_context *ctx,
                               const struct brig_checkpoint_opts *o, brig_error *err);

/* `restore`: claim ID, restore the images with the bundle's rootfs as root,
 * and record the restored init in the state (status running). Without detach
 * wait for it, set *exit_status and delete the container. */
int brig_container_restore (const struct brig_context *ctx, const struct brig_restore_opts *o,
                            int *exit_status, brig_error *err);

#endif
