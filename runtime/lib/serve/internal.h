/* What the files of serve/ share: the server, its sandboxes and their
 * processes, and the small HTTP and JSON helpers (docs/serve.md).
 *
 * Threads: libmicrohttpd runs one thread per connection (a streamed
 * response may block in its reader), plus one pump thread per process and
 * the sweeper. srv->mu guards the sandbox list, each sandbox's process list
 * and the connection list; p->mu guards a process's streams. Lock order:
 * srv->mu before p->mu. Objects shared between threads are reference
 * counted. Every library call that forks, changes signal dispositions or
 * places a process in a container runs in a forked child (records.c,
 * runner.c), never in a server thread. */
#ifndef BRIG_SERVE_INTERNAL_H
#define BRIG_SERVE_INTERNAL_H

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "serve/serve.h"

#ifndef SYS_pidfd_send_signal
# define SYS_pidfd_send_signal 424
#endif

/* The envd version the sandboxes advertise: no default user, closeStdin,
 * and file metadata refused client-side (e2b SDK 2.51.0). */
#define SERVE_ENVD_VERSION "0.5.7"

/* Bounds on what clients can make the server hold: connections (each a
 * thread), processes per sandbox (each a runner, a pump thread, five
 * fds). */
#define SERVE_MAX_CONNECTIONS 1024
#define SERVE_MAX_PROCS 256

struct serve_key {
  char *key;
  char fp[128];              /* crypt(3) SHA-256 of the key: the owner on disk */
};

struct serve_proc;

struct serve_sandbox {
  struct serve_sandbox *next;
  char id[24];               /* "sb" + 20 hex digits, never reused */
  char *member;              /* the pool member (container id) */
  char *pool;                /* the template = the pool's name */
  char token[33];            /* envdAccessToken, 32 hex digits */
  char owner[128];           /* the owning key's fingerprint */
  int64_t started;           /* unix seconds */
  int64_t end;               /* unix seconds the lease ends (endAt), 0: none */
  uint64_t deadline_ns;      /* the lease's CLOCK_BOOTTIME deadline, 0: none (srv->mu) */
  unsigned long long gen;    /* the member's tenancy generation of this claim */
  char **meta;               /* create's metadata as "KEY=VALUE" (claim labels) */
  int refs;                  /* atomic; the list holds one */
  bool gone;                 /* killed: no new processes */
  struct serve_proc *procs;  /* under srv->mu */
};

struct serve {
  const struct brig_context *ctx;
  const struct brig_serve_opts *o;
  struct serve_key *keys;
  size_t nkeys;
  int dirfd;                 /* ROOT/@serve, locked */
  pthread_mutex_t mu;
  struct serve_sandbox *sandboxes;
  struct serve_conn *conns;
  int stopping;              /* atomic */
  struct MHD_Daemon *d;
};

/* One subscriber of a process's output: the body of a Start or Connect
 * response, a queue of Connect envelopes. */
struct serve_stream {
  struct serve_stream *next;
  struct serve_proc *p;
  struct serve *srv;
  char *buf;
  size_t off, len, cap;
  bool done;
  int64_t keepalive_ms;      /* Keepalive-Ping-Interval */
};

struct serve_proc {
  struct serve_proc *next;   /* in sb->procs */
  struct serve_sandbox *sb;  /* holds a reference */
  struct serve *srv;
  pid_t pid, runner;
  int pidfd, sock, out, err, in;
  pthread_mutex_t mu;         /* streams, ended */
  pthread_cond_t cond;        /* a stream has more (monotonic clock) */
  pthread_mutex_t in_mu;      /* in: writes and close */
  struct serve_stream *streams;
  char *config;              /* ProcessConfig JSON, for List */
  int64_t deadline;          /* monotonic ms, 0: none */
  int refs;                  /* atomic */
  bool ended;
};

/* ---- json.c ---- */

/* Parse a JSON request body (not NUL-terminated); NULL with msg filled when
 * it is not JSON, nests deeper than 32 or is not an object. */
yajl_val serve_json_parse (const char *body, size_t len, char *msg, size_t msglen);
/* The string member key of obj; NULL when missing. *bad: present but not a
 * string. */
const char *serve_json_str (yajl_val obj, const char *key, bool *bad);
/* The member key of obj when it has type t (yajl_t_*), else NULL. */
yajl_val serve_json_get (yajl_val obj, const char *key, yajl_type t);
/* A generator; jg_* add to it; serve_jg_done returns the text (malloc'd). */
yajl_gen serve_jg_new (void);
void serve_jg_str (yajl_gen g, const char *s);
void serve_jg_strn (yajl_gen g, const char *s, size_t n);
void serve_jg_kstr (yajl_gen g, const char *k, const char *v);
void serve_jg_kint (yajl_gen g, const char *k, long long v);
void serve_jg_knull (yajl_gen g, const char *k);
char *serve_jg_done (yajl_gen g, size_t *len);
/* Standard base64. */
char *serve_b64_encode (const void *data, size_t n, size_t *outlen);
int serve_b64_decode (const char *s, size_t n, unsigned char **out, size_t *outlen);
/* Append a copy of s to the NULL-terminated *v. */
void serve_strv_add (char ***v, const char *s);
/* n random bytes as 2n lowercase hex digits (buf of 2n+1). */
int serve_random_hex (char *buf, size_t n);

/* ---- http.c ---- */

const char *serve_header (struct MHD_Connection *c, const char *name);
/* Answer JSON text (taken over, freed by MHD). */
enum MHD_Result serve_reply (struct MHD_Connection *c, unsigned status, char *body, size_t len,
                             const char *content_type);
/* The control plane's and /files' error body: {"code":status,"message":...}. */
enum MHD_Result serve_error (struct MHD_Connection *c, unsigned status, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
/* A unary Connect error: {"code":"not_found","message":...} with the status
 * connect-go uses for that code. */
enum MHD_Result serve_connect_error (struct MHD_Connection *c, const char *code,
                                     const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
/* An empty answer (204, or 200 with "{}" for a unary Connect success). */
enum MHD_Result serve_empty (struct MHD_Connection *c, unsigned status);
/* A Connect envelope: flags, big-endian length, JSON, appended to *buf. */
void serve_envelope (char **buf, size_t *len, size_t *cap, unsigned flags, const char *json,
                     size_t n);
/* A whole stream answer that is only an end-stream error (HTTP 200). */
enum MHD_Result serve_stream_error (struct MHD_Connection *c, const char *code,
                                    const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* ---- control.c ---- */

int serve_keys_load (struct serve *srv, brig_error *err);
void serve_keys_free (struct serve *srv);
enum MHD_Result serve_control (struct serve *srv, struct MHD_Connection *c, const char *method,
                               const char *url, const char *body, size_t len);

/* ---- records.c ---- */

/* ROOT/@serve: made, locked (one server per root), its records adopted. */
int serve_records_open (struct serve *srv, brig_error *err);
int serve_record_write (struct serve *srv, const struct serve_sandbox *sb);
void serve_record_remove (struct serve *srv, const char *id);
struct brig_claim_opts;
/* brig_pool_claim in a forked child: sb's member, gen and deadline_ns set. */
int serve_claim (struct serve *srv, const char *pool, const struct brig_claim_opts *o,
                 struct serve_sandbox *sb, brig_error *err);
/* brig_pool_renew of sb's lease to seconds from now (child); record rewritten. */
int serve_renew (struct serve *srv, struct serve_sandbox *sb, long long seconds, brig_error *err);
/* brig_pool_release_gen of member's tenancy gen (0: any) in a forked child. */
int serve_release (struct serve *srv, const char *member, unsigned long long gen, brig_error *err);
/* The fd a child of serve_copy_into keeps (the spool). */
#define SERVE_CHILD_FD 4

/* A library call made in a forked child of the server (calls that fork,
 * wait or change signal dispositions must not run in a server thread). */
typedef int (*serve_child_fn) (struct serve *srv, const void *arg, char **out, brig_error *err);

/* Run fn in a forked child with default signals; its result (or error
 * message) comes back on a pipe as "CODE\nTEXT" into *out (out may be
 * NULL). The child keeps no fd of the server but keep (-1: none), as
 * SERVE_CHILD_FD. */
int serve_in_child (struct serve *srv, serve_child_fn fn, const void *arg, int keep, char **out,
                    brig_error *err);
/* A one-file copy into a member (files.c): produce writes the archive. */
struct serve_copy {
  const char *member;
  const char *dir;           /* the directory it goes into */
  const char *name;          /* its name there */
  uint64_t size;             /* bytes in the spool */
  int (*produce) (int fd, void *data, brig_error *err);
};
/* brig_copy_into of a (as_is, into a->dir) in a forked child that keeps
 * spool as SERVE_CHILD_FD. */
int serve_copy_into (struct serve *srv, const struct serve_copy *a, int spool, brig_error *err);
/* Sandboxes: lookup by id for owner (NULL: any), with a reference; a
 * sandbox whose tenancy ended (lease over, member released) is dropped
 * and not found. */
struct serve_sandbox *serve_sandbox_get (struct serve *srv, const char *id, const char *owner);
void serve_sandbox_unref (struct serve_sandbox *sb);
/* Drop every sandbox whose tenancy ended (the sweeper, list). */
void serve_sandboxes_sweep (struct serve *srv);
/* Take sb out of the list, kill its processes, release its member. */
int serve_sandbox_kill (struct serve *srv, struct serve_sandbox *sb, brig_error *err);

/* ---- files.c ---- */

struct serve_upload;
/* POST /files before its body: the sandbox, its token and the target
 * checked; *up NULL when it answered already (an error). */
enum MHD_Result serve_upload_begin (struct serve *srv, struct MHD_Connection *c, const char *sid,
                                    struct serve_upload **up);
/* A piece of the body (spooled; a multipart body through MHD's post processor). */
void serve_upload_feed (struct serve_upload *up, const char *data, size_t n);
/* The body is over: copy what is left, answer. */
enum MHD_Result serve_upload_end (struct serve_upload *up, struct MHD_Connection *c);
void serve_upload_free (struct serve_upload *up);
/* GET /files of sb: the file's bytes, streamed out of the member. */
enum MHD_Result serve_files_get (struct serve *srv, struct MHD_Connection *c,
                                 struct serve_sandbox *sb);

/* ---- envd.c ---- */

enum MHD_Result serve_envd (struct serve *srv, struct MHD_Connection *c, const char *method,
                            const char *url, const char *sandbox_id, const char *body,
                            size_t len);

/* ---- proc.c ---- */

/* Start args in sb's member; on success *out holds a process with one
 * stream (the caller's, with the start event queued). */
struct serve_start {
  char **args;
  char **env;
  const char *cwd;
  bool stdin;
  int64_t timeout_ms;        /* Connect-Timeout-Ms, 0: none */
  int64_t keepalive_ms;
  char *config;              /* taken over */
};
int serve_proc_start (struct serve *srv, struct serve_sandbox *sb, struct serve_start *st,
                      struct serve_stream **out, brig_error *err);
/* The process pid of sb with a reference, or NULL. */
struct serve_proc *serve_proc_get (struct serve *srv, struct serve_sandbox *sb, uint32_t pid);
void serve_proc_unref (struct serve_proc *p);
/* A new stream on p with the start event queued (Connect). NULL: ended. */
struct serve_stream *serve_proc_subscribe (struct serve_proc *p, int64_t keepalive_ms);
/* The MHD response for a stream (its reader and free callbacks). */
struct MHD_Response *serve_stream_response (struct serve_stream *s);
/* Signal p through its pidfd (no pid reuse race); 0 or -errno. Inline:
 * records.c kills a sandbox's processes without calling into proc.c,
 * which calls it (no file cycle, docs/architecture.md). */
static inline int
serve_proc_signal (struct serve_proc *p, int sig)
{
  return syscall (SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}
int serve_proc_write (struct serve_proc *p, const void *data, size_t n, brig_error *err);
int serve_proc_close_stdin (struct serve_proc *p);

/* ---- fscall.c ---- */

enum serve_fs_op { SERVE_FS_STAT, SERVE_FS_LIST, SERVE_FS_MKDIR, SERVE_FS_MOVE, SERVE_FS_REMOVE };
struct serve_fs_args {
  enum serve_fs_op op;
  const char *path;
  const char *dest;          /* Move */
  unsigned depth;            /* ListDir */
};
/* Run one fsops.c call in member, joined to its namespaces and root as
 * its root user; *json is the call's JSON (an EntryInfo, an array of
 * them, or "" for Remove). Errors keep the call's errno. */
int serve_fs_call (struct serve *srv, const char *member, const struct serve_fs_args *a,
                   char **json, brig_error *err);

/* 0 when the process of pidfd is alive. */
static inline int
serve_pidfd_alive (int pidfd)
{
  return syscall (SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ? -errno : 0;
}

/* Whether got is the sandbox's token want, in time independent of where
 * they differ. */
static inline bool
serve_token_ok (const char *got, const char *want)
{
  size_t lg = got ? __builtin_strlen (got) : 0, lw = __builtin_strlen (want);
  unsigned char d = lg != lw;

  for (size_t i = 0; i < lw && got; i++)
    d |= (unsigned char) got[i % (lg ? lg : 1)] ^ (unsigned char) want[i];
  return got != NULL && d == 0;
}

/* ---- runner.c ---- */

struct serve_spawned {
  pid_t pid, runner;
  int pidfd, sock, out, err, in;
};
/* Run args in member as brig exec would, from a forked runner that stays
 * the process's parent and reports its wait status on sock. */
int serve_spawn (struct serve *srv, const char *member, const struct serve_start *st,
                 struct serve_spawned *sp, brig_error *err);

#endif
