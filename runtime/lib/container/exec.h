/* `exec`: run one more process in a running container.
 *
 * The process joins every namespace of the container's init (setns with the
 * init's pidfd and all flags at once, or /proc/PID/ns/ files on old kernels),
 * its root (the init's /proc/PID/root, so --no-pivot containers work too)
 * and its cgroup, then applies process settings exactly as the init does
 * (process.h) and execs. The brig process that enters the namespaces is
 * non-dumpable first, so nothing in the container can reach the brig binary
 * through /proc/PID/exe (CVE-2019-5736); the new process's cwd is always
 * resolved inside the container and it keeps no fd beyond stdio and
 * --preserve-fds (CVE-2024-21626). */
#ifndef BRIG_EXEC_H
#define BRIG_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "error.h"
#include "ocispec.h"

/* Settings of `brig exec` on top of the container's process (runc's rules:
 * env entries replace same-named ones; --cap adds to the bounding, effective
 * and permitted sets, never to inheritable (ambient only when the config
 * already has it inheritable); additional gids are appended). Unset fields
 * are NULL / 0 / -1. */
struct brig_exec_overrides {
  char **args;               /* the command; NULL-terminated */
  const char *cwd;           /* --cwd */
  char **env;                /* --env K=V..., NULL-terminated or NULL */
  const char *user;          /* --user UID[:GID] */
  const uint32_t *gids;      /* --additional-gids */
  size_t gids_len;
  char **caps;               /* --cap NAME..., NULL-terminated or NULL */
  int tty;                   /* --tty: 1, or -1 when not given (then false) */
  int no_new_privs;          /* --no-new-privs: 1, or -1 when not given */
  const char *apparmor;      /* --apparmor */
  const char *process_label; /* --process-label */
};

struct brig_exec_opts {
  const char *id;
  const char *process_path;  /* --process FILE (then overrides are ignored) */
  const struct brig_exec_overrides *overrides;
  bool detach;               /* -d */
  const char *pid_file;      /* --pid-file */
  const char *console_socket;/* --console-socket */
  int preserve_fds;          /* --preserve-fds */
  bool ignore_paused;        /* --ignore-paused */
};

/* Turn cfg->process into the exec'd process in place, applying o. Errors
 * name the flag ("--user: ..."). */
int brig_exec_apply_overrides (oci_process *p, const struct brig_exec_overrides *o,
                               brig_error *err);

/* Check what exec needs of a process: args and an absolute cwd. */
int brig_exec_validate_process (const oci_process *p, brig_error *err);

/* Run the process. Foreground: forwards signals (and proxies the pty when
 * the process has a terminal and no console socket was given) until it
 * exits; *exit_status is its status (128+signal when killed). Detached:
 * returns once the process has exec'd, *exit_status = 0. The pid file, when
 * asked, holds the host pid of the process. */
int brig_exec (const struct brig_context *ctx, const struct brig_exec_opts *o,
               int *exit_status, brig_error *err);

#endif
