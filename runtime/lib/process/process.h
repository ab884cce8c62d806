/* The user process: what config.json's "process" (or exec's process.json)
 * asks of the process that finally calls execve. The container init and
 * `brig exec` share this sequence, in this order:
 *
 *   brig_process_become:   a session of its own (setsid), stdio owner
 *                          (fix_stdio_owner), rlimits,
 *                          capabilities kept across the uid change
 *                          (brig_caps_prepare), seccomp now when it must be
 *                          loaded while privileged (its listener fd handed
 *                          to brig at once), groups/gid/uid/umask,
 *                          capabilities (brig_caps_apply), cwd, PATH lookup
 *                          with the user's ids and capabilities (as execve
 *                          checks), no_new_privs, LISTEN_FDS and
 *                          LISTEN_PID when socket-activated
 *   ... (the init waits for `start` and runs startContainer hooks here)
 *   brig_process_exec:     seccomp (if not loaded yet: last), every fd but
 *                          stdio and the preserved ones marked close-on-exec,
 *                          execve
 *
 * Namespaces, mounts and pivot_root come before all of this. */
#ifndef BRIG_PROCESS_H
#define BRIG_PROCESS_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"
#include "seccomp/seccomp.h"

struct brig_process {
  const oci_process *p;     /* the process to run (not owned) */
  brig_seccomp *seccomp;    /* compiled filter or NULL (not owned) */
  bool seccomp_early;       /* load the filter in become (privileged, before
                               the uid change) instead of right before execve;
                               needed without noNewPrivileges */
  int notify_sock;          /* SCMP_ACT_NOTIFY: the sync socket the listener
                               fd goes to right after the filter is loaded
                               (brig_hs_seccomp_send); -1: keep it in
                               notify_fd */
  int listen_fds;           /* socket activation: fds 3 .. 3+listen_fds-1
                               stay open (before the preserved ones) and
                               LISTEN_FDS/LISTEN_PID go into the env */
  int preserve_fds;         /* the next preserve_fds fds stay open */
  bool keep_groups;         /* run.oci.keep_original_groups (groups.h): keep
                               the caller's supplementary groups */
  bool caps_checked;        /* the parent warned of unknown capability names
                               (brig_caps_check): do not warn again */
  /* What fds 0..2 are, when the caller already knows (bit fd of
   * stdio_known; the init, from rootfs_pivot): become's
   * brig_process_fix_stdio_owner then need not fstat them again. */
  struct stat stdio_st[3];
  unsigned stdio_known;
  bool no_exec;             /* run.brig.init=hold: nothing is execve'd, so
                               become looks up no executable */
  bool at_root;             /* the cwd is "/" already (the init after its
                               pivot): a cwd of "/" needs no chdir */
  /* Filled by brig_process_become: */
  char *exec_path;          /* resolved executable (malloc'd) */
  char **envp;              /* environment for execve (malloc'd) */
  bool seccomp_loaded;
  int notify_fd;            /* seccomp listener fd when loaded early, else -1 */
};

/* Initialise pr for p (notify_fd = notify_sock = -1, nothing resolved). */
void brig_process_init (struct brig_process *pr, const oci_process *p,
                        brig_seccomp *seccomp, int preserve_fds);

/* Free what become allocated (not p, not seccomp); closes notify_fd. */
void brig_process_clear (struct brig_process *pr);

/* Everything up to (not including) the last step, see above. Errors name the
 * setting: "setrlimit RLIMIT_NOFILE: Operation not permitted", or
 * `exec: "X": executable file not found in $PATH (PATH=...)`. */
int brig_process_become (struct brig_process *pr, brig_error *err);

/* Load the seccomp filter now unless it is loaded already (with
 * notify_sock, its listener fd goes to brig before anything else). For
 * SCMP_ACT_NOTIFY with noNewPrivileges: while brig still listens. */
int brig_process_load_seccomp (struct brig_process *pr, brig_error *err);

/* The last step: seccomp if not loaded yet, close-on-exec for every fd
 * above stdio and the preserved ones, execve. Returns only on failure. */
int brig_process_exec (struct brig_process *pr, brig_error *err);

/* ---- single steps (also usable on their own) ---- */

/* setrlimit for every process.rlimits entry ("RLIMIT_NOFILE", ...). */
int brig_process_set_rlimits (const oci_process *p, brig_error *err);

/* setgroups(additionalGids) (skipped when /proc/self/setgroups is "deny";
 * with keep_groups the caller's groups plus additionalGids, groups.h),
 * setresgid, setresuid and umask (default 0022) from user (NULL: root). */
int brig_process_set_user (const oci_user *u, bool keep_groups, brig_error *err);

/* Give stdio that is a pipe, a socket or a pty of the container's /dev/pts
 * (not /dev/null, a file or a host terminal) to uid:gid, so the process can
 * reopen it through /proc/self/fd/N after the id change, as runc does;
 * refusals (EINVAL, EPERM, EROFS) are skipped. Call inside the root. */
int brig_process_fix_stdio_owner (uid_t uid, gid_t gid, brig_error *err);
/* The same, taking fd's stat from known[fd] where bit fd of mask is set. */
int brig_process_fix_stdio_owner_known (uid_t uid, gid_t gid, const struct stat known[3],
                                        unsigned mask, brig_error *err);

/* Every process.env entry is NAME=value with a non-empty NAME. */
int brig_process_validate_env (const oci_process *p, brig_error *err);

/* Largest uid/gid brig accepts: (uid_t) -1 means "unchanged" to setresuid
 * and setgroups, and ids above 2^31-1 are not portable. */
#define BRIG_ID_MAX 2147483647u

/* process.user uid, gid and additionalGids are all in 0..BRIG_ID_MAX;
 * u may be NULL. Errors name the field. */
int brig_process_validate_user (const oci_user *u, brig_error *err);

/* systemd socket activation: LISTEN_FDS of brig's environment when its
 * LISTEN_PID is brig's own pid, else 0. */
int brig_process_listen_fds (void);

/* Set LISTEN_FDS=listen_fds and LISTEN_PID=getpid() in the malloc'd env, and
 * brig's own LISTEN_FDNAMES when it has one. */
void brig_process_add_listen_env (char ***env, int listen_fds);

/* chdir into cwd (relative to the current root). */
int brig_process_chdir (const char *cwd, brig_error *err);

/* Resolve args[0] with the PATH of env (a name with a '/' is taken as is),
 * checking X_OK with the caller's effective ids and capabilities, as execve
 * will; *path is malloc'd. Errors in runc's words, brig's detail after them:
 * `exec: "X": executable file not found in $PATH (PATH=...)`, `exec: "/x": no
 * such file or directory (process.args[0])`. */
int brig_process_find_executable (const char *arg0, char *const *env, char **path,
                                  brig_error *err);

/* process.env with a variable given twice kept once: its last value at its
 * first place (runc's rule). Malloc'd vector with room for one more entry. */
char **brig_process_env_list (const oci_process *p);

/* The environment for execve: brig_process_env_list plus HOME from the
 * container's /etc/passwd when env has none or an empty one ("/" when
 * unknown). Malloc'd vector. */
char **brig_process_build_env (const oci_process *p);

/* Mark every fd >= 3 + preserve_fds close-on-exec and clear close-on-exec
 * on stdio and the preserved fds. */
int brig_process_close_fds (int preserve_fds, brig_error *err);

/* Refuse a hostname or domainname longer than the kernel takes (64 bytes). */
int brig_process_validate_hostname (const char *hostname, const char *domainname,
                                    brig_error *err);

/* Check that fds 3 .. 3+listen_fds+preserve_fds-1 are open (EBADF naming
 * --preserve-fds or LISTEN_FDS and the first missing fd). */
int brig_process_check_fds (int listen_fds, int preserve_fds, brig_error *err);

/* sethostname / setdomainname (call inside the new uts namespace). */
int brig_process_set_hostname (const char *hostname, const char *domainname,
                               brig_error *err);

/* Write each linux.sysctl key (sysctl.d(5) spelling, see sysctl.h) under /proc/sys. */
int brig_process_apply_sysctl (const oci_map *sysctl, brig_error *err);

/* Write /proc/PID/oom_score_adj (pid 0: self). */
/* Leave the caller's session keyring for a new one (name NULL: anonymous),
 * so no key of brig's caller reaches the container. A kernel without keys
 * (ENOSYS) or a caller whose seccomp filter refuses keyctl (EPERM: the
 * container inherits that filter) leaves nothing to reach. */
int brig_process_join_session_keyring (const char *name, brig_error *err);

int brig_process_set_oom_score_adj (pid_t pid, int value, brig_error *err);

#endif
