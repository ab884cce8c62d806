/* OCI hooks (config.md "POSIX-platform Hooks", runtime.md "Lifecycle"):
 * each hook is path + args + env, run with the container state JSON on its
 * stdin, killed after timeout seconds. Where each kind runs:
 *   prestart, createRuntime  the parent (runtime namespaces), after the
 *                            container's namespaces exist, before pivot_root;
 *                            in the bundle directory
 *   createContainer          the container init (container namespaces),
 *                            before pivot_root, in the container's root (the
 *                            rootfs with every mount made); without env of
 *                            its own it gets process.env (each variable once)
 *   startContainer           the container init, after start, before execve;
 *                            without env: the process's final environment
 *   poststart                start/run, after the user process started, in
 *                            the bundle directory; a failure kills and
 *                            deletes the container and fails start/run
 *                            (spec 1.3)
 *   poststop                 delete, after the container is gone; failures
 *                            are only warned about */
#ifndef BRIG_HOOKS_H
#define BRIG_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "ocispec.h"

/* Run hooks[0..n) in order (kind names them in errors: "createRuntime");
 * stops at the first failure: "createRuntime hook #1 (/usr/bin/x): exit
 * status 2: <its output>". */
/* Whether the config has hooks that `start` waits on (recorded in the
 * state: a brig before #11 waited for the init's answer only then; start
 * now always waits, to report a failed execve). */
static inline bool
brig_hooks_start_waits (const oci_hooks *h)
{
  return h && (h->start_container_len || h->poststart_len);
}

/* Whether the config has hooks the init must wait for (prestart,
 * createRuntime, createContainer, startContainer). */
static inline bool
brig_hooks_before_process (const oci_hooks *h)
{
  return h && (h->prestart_len || h->create_runtime_len || h->create_container_len
               || h->start_container_len);
}

int brig_hooks_run (const oci_hook *hooks, size_t n, const char *kind,
                    const char *state_json, brig_error *err);

/* Like brig_hooks_run; a hook without its own env gets env (NULL: brig's
 * environment), as runc gives the container's hooks the process's. */
int brig_hooks_run_env (const oci_hook *hooks, size_t n, const char *kind,
                        const char *state_json, char *const *env, brig_error *err);

/* Like brig_hooks_run_env, in cwd (NULL: brig's own working directory):
 * create, run and start give the runtime-namespace hooks the bundle and
 * createContainer the container's root, as runc does. */
int brig_hooks_run_in (const oci_hook *hooks, size_t n, const char *kind,
                       const char *state_json, char *const *env, const char *cwd,
                       brig_error *err);

/* Like brig_hooks_run but every failure is only logged as a warning and the
 * remaining hooks still run (poststop). */
void brig_hooks_run_warn (const oci_hook *hooks, size_t n, const char *kind,
                          const char *state_json);

#endif
