/* The container lifecycle: create, start, run, kill, delete. Each entry point
 * loads what it needs from the state store (state.h), holds the container's
 * lock while it changes it, and returns 0 or a negative errno with err
 * filled. */
#ifndef BRIG_CONTAINER_H
#define BRIG_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "context.h"
#include "error.h"

struct oci_config;
struct brig_cgroup;

struct brig_create_opts {
  const char *id;
  const char *bundle;          /* NULL: the current directory */
  const char *pid_file;        /* NULL: none; relative to the cwd */
  const char *console_socket;  /* NULL: none */
  int preserve_fds;            /* fds 3 .. 3+N-1 go to the container */
  int listen_fds;              /* socket activation (LISTEN_FDS): these fds
                                  come first, the preserved ones after them */
  bool no_pivot;
  bool no_new_keyring;
  /* NULL, or called on the parsed config before it is validated; the
   * config.json kept in the state directory is then the edited one (brig
   * pool gives each member its own cgroup and the reset opt-in). */
  int (*edit_config) (struct oci_config *cfg, void *data, brig_error *err);
  void *edit_data;
  /* NULL, or called (in create, before the init mounts its root layer)
   * with an O_PATH fd of the layer's empty upper directory, the init's
   * pid (its id maps written), the cgroup it is in (or NULL) and seed_data,
   * to fill it (brig fork); the config must have a root layer
   * (run.brig.rootfs.ephemeral). Plain create never sets it. */
  int (*seed) (int upper, pid_t init, struct brig_cgroup *cg, void *data, brig_error *err);
  void *seed_data;
};

/* `create`: everything up to the init waiting on the exec socket; writes the
 * state and the pid file. On failure nothing is left behind. */
int brig_container_create (const struct brig_context *ctx, const struct brig_create_opts *o,
                           brig_error *err);

/* `start`: release a created container's init, then run poststart hooks. */
int brig_container_start (const struct brig_context *ctx, const char *id, brig_error *err);

struct brig_container;

/* What a claim binds to its member (brig pool claim, sandbox/claim.c). */
struct brig_start_bind {
  /* Called with the member locked, created and vacant, before its tenancy
   * becomes the new tenant's (generation gen) and before its process is
   * released; an error refuses the start. NULL: nothing. */
  int (*bind) (struct brig_container *c, unsigned long long gen, void *data, brig_error *err);
  void *data;
  char *const *env;   /* START: "k=v" entries for the process's environment */
};

/* The same for brig pool claim: the member's tenancy (tenancy.h) goes
 * from vacant to a new tenant's before its process is released; b (may be
 * NULL) binds the tenant's options first. */
int brig_container_start_claimed (const struct brig_context *ctx, const char *id,
                                  const struct brig_start_bind *b, brig_error *err);

/* `run`: create + start in one go. With detach the call returns once the
 * process runs; otherwise it forwards signals (and the terminal), waits, sets
 * *exit_status (code or 128+signal) and deletes the container unless keep. */
int brig_container_run (const struct brig_context *ctx, const struct brig_create_opts *o,
                        bool detach, bool keep, int *exit_status, brig_error *err);

/* `kill`: send sig to the init (all: to every process of the cgroup). */
int brig_container_kill (const struct brig_context *ctx, const char *id, int sig, bool all,
                         brig_error *err);

/* `delete`: remove a stopped or created container (force: any state, after
 * SIGKILL); the cgroup, the state directory, then poststop hooks. */
int brig_container_delete (const struct brig_context *ctx, const char *id, bool force,
                           brig_error *err);

/* Parse a signal: "KILL", "SIGKILL", "9"; 0 or -EINVAL. */
int brig_signal_parse (const char *s, int *sig);

#endif
