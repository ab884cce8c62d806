/* The state store: one directory per container under --root.
 *
 *   ROOT/ID/            created with mkdir(2): the atomic claim of the id
 *   ROOT/ID/state.json  what brig recorded at create (write + rename)
 *   ROOT/ID/config.json the bundle's config.json as parsed at create (exec
 *                       takes its defaults from it, delete its poststop hooks)
 *   ROOT/ID/made        the ownership record, written before create makes
 *                       anything: the cgroup manager, path and directories
 *                       create makes (brig_cgroup_record), then the init's
 *                       pid and start time ("init PID START") once it
 *                       exists; delete --force undoes a half-made or
 *                       damaged container from it
 *   ROOT/ID/exec.sock   present while the init waits for `start`: a
 *                       listening AF_UNIX socket of the init; start connects,
 *                       the init answers with an error (startContainer hook
 *                       failed) or closes it by execve (started)
 *
 * Every command that changes a container holds flock(2) on ROOT/ID. The status
 * is always derived from live facts: the init's pid alive with the recorded
 * start time (/proc/PID/stat field 22, not a zombie), the exec socket (created),
 * the cgroup freezer (paused); never read from the file. */
#ifndef BRIG_STATE_H
#define BRIG_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "context.h"
#include "error.h"
#include "ocispec.h"

/* The file whose presence means "created" (see above). */
#define BRIG_EXEC_SOCKET "exec.sock"

enum brig_status {
  BRIG_STATUS_CREATING,
  BRIG_STATUS_CREATED,
  BRIG_STATUS_RUNNING,
  BRIG_STATUS_PAUSED,
  BRIG_STATUS_STOPPED,
  BRIG_STATUS_UNKNOWN,     /* state.json is damaged (brig_container_load_any) */
};

enum brig_lock { BRIG_LOCK_NONE, BRIG_LOCK_SHARED, BRIG_LOCK_EXCLUSIVE };

/* What state.json records (all strings malloc'd, NULL when absent). */
struct brig_state_file {
  char *id;
  char *bundle;            /* absolute bundle path */
  char *rootfs;            /* absolute root.path */
  pid_t pid;               /* host pid of the init (0 before it exists) */
  unsigned long long pid_start_time; /* /proc/PID/stat starttime of pid */
  char *created;           /* RFC 3339 with nanoseconds, UTC */
  char *owner;             /* "" for root, else the user name (as runc) */
  oci_map *annotations;    /* config.json annotations, may be NULL */
  char *cgroup_manager;    /* brig_cgroup_manager_name() */
  char *cgroup_path;       /* brig_cgroup_path() */
  char *freeze_file;       /* brig_cgroup_freeze_file(), may be NULL */
  bool systemd_cgroup;     /* created with --systemd-cgroup */
  bool rootless;           /* created in rootless mode */
  bool new_pidns;          /* the container has its own pid namespace */
  bool start_hooks;        /* brig_hooks_start_waits() of its config */
  bool no_process;         /* config.json has no process: start fails */
  bool shared_keyring;     /* created with --no-new-keyring: exec keeps the caller's */
  char *keyring;           /* the name of the init's session keyring, which exec
                              joins (new for each init); NULL: none recorded */
  struct brig_ext_state *ext; /* the extension's record (container/extension.h),
                                 opaque here; may be NULL */
};

/* One container, as loaded by brig_container_load. */
typedef struct brig_container {
  char *id;
  int dirfd;                /* ROOT/ID, O_DIRECTORY; holds the flock if any */
  struct brig_state_file st;/* zeroed while status is creating */
  enum brig_status status;  /* from live facts, see brig_container_refresh */
  int pidfd;                /* pidfd of the live init, else -1 */
  char *damaged;            /* status unknown: why state.json could not be read */
} brig_container;

/* Check a container id: non-empty, [A-Za-z0-9_+.-], not "." or "..". */
int brig_state_check_id (const char *id, brig_error *err);

/* Open (creating it when create is true, mode 0700) the state root; *fd is
 * an O_DIRECTORY|O_CLOEXEC fd. */
int brig_state_root_open (const struct brig_context *ctx, bool create, int *fd,
                          brig_error *err);

/* Load container id with the given lock held (blocking) and its live status.
 * A missing container fails with -ENOENT and `container "ID" does not exist`. */
int brig_container_load (const struct brig_context *ctx, const char *id,
                         enum brig_lock lock, brig_container **out, brig_error *err);

/* The same, but a damaged state.json (empty, truncated, garbage, wrong
 * types) gives a container of status unknown whose init (from the record,
 * only if its start time matches) and cgroup can still be found: for list
 * and delete --force. */
int brig_container_load_any (const struct brig_context *ctx, const char *id,
                             enum brig_lock lock, brig_container **out, brig_error *err);

/* brig_container_load without a lock, for commands that only look (state,
 * events, check --container): a container whose create has not finished
 * does not exist yet (-ENOENT), as runc and crun answer; commands that take
 * the lock wait for create instead. */
int brig_container_load_visible (const struct brig_context *ctx, const char *id,
                                 brig_container **out, brig_error *err);

/* The container's cgroup: from the ownership record (which knows what
 * create made and whom it shares the cgroup with), else from state.json's
 * manager and path; *cg is NULL when neither names one. */
int brig_container_cgroup (const brig_container *c, struct brig_cgroup **cg, brig_error *err);

/* Recompute c->status (and c->pidfd) from the live facts. */
void brig_container_refresh (brig_container *c);

/* Release c: closes its fds (dropping the lock) and frees everything. */
void brig_container_free (brig_container *c);
void brig_container_freep (brig_container **c);
#define _cleanup_container_ __attribute__ ((cleanup (brig_container_freep)))

/* "creating", "created", "running", "paused", "stopped". */
const char *brig_status_name (enum brig_status s);

/* The OCI state of c as JSON (what `brig state` prints and hooks read on
 * stdin): ociVersion, id, pid (0 when stopped), status, bundle, rootfs,
 * created, owner, annotations. status overrides c->status when >= 0.
 * Returns malloc'd JSON or NULL on ENOMEM. */
char *brig_container_state_json (const brig_container *c, int status, bool pretty);

/* Fill an oci_state (caller frees with oci_free(&oci_state_type, ...)). */
oci_state *brig_container_oci_state (const brig_container *c, int status);

/* Parse the config.json saved in c's state directory. */
int brig_container_config (const brig_container *c, oci_config **cfg, brig_error *err);

/* Send sig to c's init if it is alive (via its pidfd, so a recycled pid is
 * never signalled); -ESRCH when it is not running. */
int brig_container_signal (brig_container *c, int sig, brig_error *err);

/* List the ids under the state root (malloc'd NULL-terminated vector,
 * sorted); an absent root is an empty list. */
int brig_state_list (const struct brig_context *ctx, char ***ids, brig_error *err);

/* ---- used by create/delete ---- */

/* Claim ROOT/ID: mkdir it (EEXIST: `container "ID" already exists`), open it
 * and take the exclusive lock. *dirfd receives the locked directory. */
int brig_state_claim (const struct brig_context *ctx, const char *id, int *dirfd,
                      brig_error *err);

/* Write state.json in dirfd (stage + commit; the caller holds the lock). */
int brig_state_write (int dirfd, const struct brig_state_file *st, brig_error *err);

/* The same in two steps: write the next state to BRIG_STATE_NEXT, then
 * (commit) rename it over state.json, so readers never see a partial file.
 * Lets create prepare the final state while the init is still setting up
 * and publish it with one rename. */
#define BRIG_STATE_NEXT "state.json.next"
int brig_state_stage (int dirfd, const struct brig_state_file *st, brig_error *err);
int brig_state_commit (int dirfd, brig_error *err);

/* The ownership record (ROOT/ID/made, see above). */
#define BRIG_STATE_RECORD BRIG_CGROUP_RECORD_FILE
/* The config as created (ROOT/ID/config.json). create writes it once every
 * cgroup directory exists and the record says which ones it made (after
 * the record's last rewrite, before the clone): present, it tells delete
 * that the record's `made` lines are final even without an init line
 * (docs/cgroups.md "Ownership"). */
#define BRIG_STATE_CONFIG BRIG_CGROUP_SETTLED_FILE
/* Write text as the record (one write, before anything it names exists);
 * keep != NULL: the fd stays open there, for add_init. */
int brig_state_record_write (int dirfd, const char *text, int *keep, brig_error *err);
/* Append the init's pid and start time to the record: through record_fd
 * (as kept by brig_state_record_write, its offset at the end) or, when it
 * is -1, by opening it in dirfd. */
int brig_state_record_add_init (int dirfd, int record_fd, pid_t pid,
                                unsigned long long start_time, brig_error *err);

/* Drop the init's line from the record (brig reset, before a new init's
 * line is appended), leaving "init 0 0" in its place: the container's
 * create finished, its cgroup is its own while no init is recorded. */
int brig_state_record_drop_init (int dirfd, brig_error *err);

/* brig reset's mark of a container it left unusable: the reason, or NULL
 * when the container has none (malloc'd). Read only on the error paths of
 * start and exec. */
#define BRIG_STATE_RESET_FAILED "reset.failed"
char *brig_state_reset_failed (int dirfd);

/* Remove ROOT/ID and everything in it (dirfd is that directory). */
int brig_state_remove (const struct brig_context *ctx, const char *id, int dirfd,
                       brig_error *err);

/* Free the strings of st (not st itself). */
void brig_state_file_clear (struct brig_state_file *st);

/* Current time as RFC 3339 in UTC with nanoseconds (malloc'd). */
char *brig_state_now (void);

/* sec.nsec since the epoch as RFC 3339 in UTC, "2026-12-01T18:03:21.800651409Z",
 * computed without the time zone machinery of libc (malloc'd). */
char *brig_state_format_time (int64_t sec, long nsec);

#endif
