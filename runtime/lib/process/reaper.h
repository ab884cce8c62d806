/* run.brig.init: brig's own pid 1. Instead of calling execve, the container
 * init (already brig code, from the detached read-only mount of the binary)
 * stays pid 1: it runs the config's process as its only child and forwards
 * signals to it (mode true), or runs nothing and waits for exec'd work
 * (mode hold); either way it reaps every orphan. docs/sandbox.md "brig's
 * pid 1". */
#ifndef BRIG_PROCESS_REAPER_H
#define BRIG_PROCESS_REAPER_H

#include <stdbool.h>

#include "error.h"
#include "ocispec.h"
#include "process/process.h"

#define BRIG_INIT_KEY "run.brig.init"

/* The fd number the pid 1 of an ephemeral root keeps its O_PATH fd of the
 * layer's upper directory at (state: brig.rootfs.upperFd). */
#define BRIG_REAPER_UPPER_FD 3

enum brig_init_mode {
  BRIG_INIT_EXEC,   /* absent or "false": the config's process is pid 1 */
  BRIG_INIT_CHILD,  /* "true": brig is pid 1, the process its child */
  BRIG_INIT_HOLD,   /* "hold": brig is pid 1 and runs nothing */
};

/* The mode run.brig.init asks for; any value but true, false or hold is
 * refused by name (err may be NULL once create checked it). */
int brig_init_mode_parse (const oci_map *annotations, enum brig_init_mode *mode, brig_error *err);

/* The end of the init in mode CHILD or HOLD, in place of brig_process_exec
 * (pr is become's; start_fd the connection of `start` or run's sync socket,
 * where the child's execve error goes, or -1; upper_fd the
 * layer's upper directory to keep, or -1). Never returns. */
_Noreturn void brig_reaper_run (struct brig_process *pr, enum brig_init_mode mode, int start_fd,
                                int upper_fd);

#endif
