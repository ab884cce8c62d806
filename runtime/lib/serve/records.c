/* What brig serve handed out, in memory and under --root:
 *
 *   ROOT/@serve/lock                 flock: one server per root
 *   ROOT/@serve/sandboxes/ID.json    one per sandbox: the member, the pool,
 *                                    the envd token, the owner (crypt(3)
 *                                    SHA-256 of its API key, never the key)
 *   ROOT/@serve/run/                 pid files of processes being started
 *
 * A server that starts adopts the records a stopped one left (their
 * members still exist), so a restart keeps each key's sandboxes and
 * tokens. Claim and release are libbrig's pool calls, each in a forked
 * child: they fork, wait and change signal dispositions, which a thread
 * of a threaded server must not. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "container/copy.h"
#include "container/tenancy.h"
#include "sandbox/claim.h"
#include "sandbox/pool.h"
#include "sandbox/reset.h"
#include "serve/internal.h"
#include "utils.h"

#define SERVE_DIR "@serve"

static int
open_dirs (struct serve *srv, brig_error *err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/" SERVE_DIR, srv->ctx->state_root);
  _cleanup_close_ int lock = -1;

  if (brig_mkdir_p (dir, 0700) < 0)
    return brig_error_errno (err, "create %s", dir);
  srv->dirfd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (srv->dirfd < 0)
    return brig_error_errno (err, "open %s", dir);
  if ((mkdirat (srv->dirfd, "sandboxes", 0700) < 0 && errno != EEXIST)
      || (mkdirat (srv->dirfd, "run", 0700) < 0 && errno != EEXIST))
    return brig_error_errno (err, "create %s/sandboxes", dir);
  lock = openat (srv->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock < 0)
    return brig_error_errno (err, "open %s/lock", dir);
  if (flock (lock, LOCK_EX | LOCK_NB) < 0)
    return brig_error_say (err, errno == EWOULDBLOCK ? EBUSY : errno,
                           "another brig serve uses --root %s", srv->ctx->state_root);
  /* held for the server's life (closed at exit) */
  brig_steal_fd (lock);
  return 0;
}

static void
adopt (struct serve *srv, const char *name)
{
  _cleanup_free_ char *text = NULL, *path = xasprintf ("sandboxes/%s", name);
  char msg[256];
  yajl_val v = NULL;
  size_t len;
  const char *id, *member, *pool, *token, *owner;
  bool bad = false, b;
  yajl_val started, gen, end, meta;
  const char *dl;
  struct serve_sandbox *sb;
  struct stat st;
  _cleanup_free_ char *member_dir = NULL;

  if (brig_read_file_at (srv->dirfd, path, &text, &len, NULL) == 0)
    v = serve_json_parse (text, len, msg, sizeof msg);
  id = serve_json_str (v, "id", &b), bad |= b;
  member = serve_json_str (v, "member", &b), bad |= b;
  pool = serve_json_str (v, "pool", &b), bad |= b;
  token = serve_json_str (v, "token", &b), bad |= b;
  owner = serve_json_str (v, "owner", &b), bad |= b;
  started = serve_json_get (v, "started", yajl_t_number);
  gen = serve_json_get (v, "gen", yajl_t_number);
  end = serve_json_get (v, "end", yajl_t_number);
  dl = serve_json_str (v, "deadlineNs", &b);
  meta = serve_json_get (v, "metadata", yajl_t_array);
  if (bad || !id || !member || !pool || !token || !owner || strlen (id) >= sizeof sb->id
      || strlen (token) >= sizeof sb->token || strlen (owner) >= sizeof sb->owner
      || brig_pool_check_name (member, NULL) < 0)
    {
      brig_warn ("serve: dropping the unreadable record %s", path);
      unlinkat (srv->dirfd, path, 0);
      yajl_tree_free (v);
      return;
    }
  member_dir = xasprintf ("%s/%s", srv->ctx->state_root, member);
  if (stat (member_dir, &st) < 0)
    {
      brig_warn ("serve: dropping %s: its member %s is gone", path, member);
      unlinkat (srv->dirfd, path, 0);
      yajl_tree_free (v);
      return;
    }
  sb = xmalloc0 (sizeof *sb);
  snprintf (sb->id, sizeof sb->id, "%s", id);
  snprintf (sb->token, sizeof sb->token, "%s", token);
  snprintf (sb->owner, sizeof sb->owner, "%s", owner);
  sb->member = xstrdup (member);
  sb->pool = xstrdup (pool);
  sb->started = started ? YAJL_GET_INTEGER (started) : time (NULL);
  sb->gen = gen ? (unsigned long long) YAJL_GET_INTEGER (gen) : 0;
  sb->end = end ? YAJL_GET_INTEGER (end) : 0;
  sb->deadline_ns = dl ? strtoull (dl, NULL, 10) : 0;
  for (size_t i = 0; meta && i < YAJL_GET_ARRAY (meta)->len; i++)
    if (YAJL_IS_STRING (YAJL_GET_ARRAY (meta)->values[i]))
      serve_strv_add (&sb->meta, YAJL_GET_STRING (YAJL_GET_ARRAY (meta)->values[i]));
  sb->refs = 1;
  sb->next = srv->sandboxes;
  srv->sandboxes = sb;
  yajl_tree_free (v);
  brig_log (BRIG_LOG_INFO, "serve: adopted sandbox %s (member %s)", sb->id, sb->member);
}

int
serve_records_open (struct serve *srv, brig_error *err)
{
  int r = open_dirs (srv, err), fd;
  DIR *d;
  struct dirent *de;

  if (r < 0)
    return r;
  fd = openat (srv->dirfd, "sandboxes", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    return brig_error_errno (err, "open the records of brig serve");
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.' && strstr (de->d_name, ".json") != NULL)
      adopt (srv, de->d_name);
  closedir (d);
  return 0;
}

int
serve_record_write (struct serve *srv, const struct serve_sandbox *sb)
{
  _cleanup_free_ char *path = xasprintf ("sandboxes/%s.json", sb->id), *text = NULL;
  yajl_gen g = serve_jg_new ();
  brig_error err = { 0 };
  char dl[24];
  size_t len;
  int r;

  yajl_gen_map_open (g);
  serve_jg_kstr (g, "id", sb->id);
  serve_jg_kstr (g, "member", sb->member);
  serve_jg_kstr (g, "pool", sb->pool);
  serve_jg_kstr (g, "token", sb->token);
  serve_jg_kstr (g, "owner", sb->owner);
  serve_jg_kint (g, "started", sb->started);
  serve_jg_kint (g, "gen", (long long) sb->gen);
  serve_jg_kint (g, "end", sb->end);
  snprintf (dl, sizeof dl, "%llu", (unsigned long long) sb->deadline_ns);
  serve_jg_kstr (g, "deadlineNs", dl);
  serve_jg_str (g, "metadata");
  yajl_gen_array_open (g);
  for (size_t i = 0; sb->meta && sb->meta[i]; i++)
    serve_jg_str (g, sb->meta[i]);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  text = serve_jg_done (g, &len);
  r = brig_write_file_atomic (srv->dirfd, path, text, len, 0600, &err);
  if (r < 0)
    brig_warn ("serve: record of %s: %s", sb->id, err.msg);
  brig_error_clear (&err);
  return r;
}

void
serve_record_remove (struct serve *srv, const char *id)
{
  _cleanup_free_ char *path = xasprintf ("sandboxes/%s.json", id);
  unlinkat (srv->dirfd, path, 0);
}

/* ---- library calls in a child ---- */


struct claim_arg {
  const char *name;                  /* the pool (claim), the member (renew, release) */
  const struct brig_claim_opts *o;   /* claim */
  const char *seconds;               /* renew */
  unsigned long long gen;            /* release: that tenancy only (0: any) */
};

/* "GEN DEADLINE_NS" of member id's tenancy and lease, read in the child
 * right after the library call (the keeper may end it from then on). */
static char *
tenancy_of (struct serve *srv, const char *id)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s", srv->ctx->state_root, id);
  _cleanup_close_ int fd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  struct brig_tenancy t = { 0 };
  oci_claim *rec = fd >= 0 ? brig_claim_read (fd) : NULL;
  char *s;

  brig_tenancy_peek (srv->ctx, id, &t);
  s = xasprintf ("%llu %llu", t.gen,
                 rec && rec->has_deadline_ns ? (unsigned long long) rec->deadline_ns : 0ULL);
  if (rec)
    oci_free (&oci_claim_type, rec);
  return s;
}

static int
claim_fn (struct serve *srv, const void *arg, char **out, brig_error *err)
{
  const struct claim_arg *a = arg;
  char *id = NULL;
  _cleanup_free_ char *t = NULL;
  int r = brig_pool_claim (srv->ctx, a->name, a->o, &id, err);

  if (r < 0)
    return r;
  t = tenancy_of (srv, id);
  *out = xasprintf ("%s %s", id, t);
  free (id);
  return 0;
}

static int
renew_fn (struct serve *srv, const void *arg, char **out, brig_error *err)
{
  const struct claim_arg *a = arg;
  int r = brig_pool_renew (srv->ctx, a->name, a->seconds, err);

  if (r < 0)
    return r;
  *out = tenancy_of (srv, a->name);
  return 0;
}

static int
release_fn (struct serve *srv, const void *arg, char **out, brig_error *err)
{
  const struct claim_arg *a = arg;
  struct brig_reset_report rep = { 0 };
  int r = brig_pool_release_gen (srv->ctx, a->name, a->gen, &rep, err);
  brig_reset_report_free (&rep);
  return r;
}

int
serve_in_child (struct serve *srv, serve_child_fn fn, const void *arg, int keep, char **out, brig_error *err)
{
  int p[2], status, code = -EPROTO;
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  char *nl;
  pid_t pid;

  if (pipe2 (p, O_CLOEXEC) < 0)
    return brig_error_errno (err, "pipe");
  pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return brig_error_errno (err, "fork");
    }
  if (pid == 0)
    {
      sigset_t none;
      brig_error e = { 0 };
      char *res = NULL;
      int r;
      sigemptyset (&none);
      signal (SIGPIPE, SIG_DFL);
      sigprocmask (SIG_SETMASK, &none, NULL);
      int k = keep >= 0 ? fcntl (keep, F_DUPFD, 10) : -1;
      dup2 (p[1], 3);
      if (k >= 0)
        dup2 (k, SERVE_CHILD_FD);
      syscall (SYS_close_range, k >= 0 ? SERVE_CHILD_FD + 1U : 4U, ~0U, 0U);
      r = fn (srv, arg, &res, &e);
      dprintf (3, "%d\n%s", r, r < 0 ? (e.msg ? e.msg : "failed") : (res ? res : ""));
      _exit (0);
    }
  close (p[1]);
  brig_read_fd (p[0], &text, &len, NULL);
  close (p[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (text == NULL || (nl = strchr (text, '\n')) == NULL)
    return brig_error_say (err, EPROTO, "the library call's child died (status %d)", status);
  *nl = '\0';
  code = atoi (text);
  if (code < 0)
    return brig_error_say (err, -code, "%s", nl + 1);
  if (out)
    *out = xstrdup (nl + 1);
  return 0;
}

static int
in_child (struct serve *srv, serve_child_fn fn, const void *arg, char **out, brig_error *err)
{
  return serve_in_child (srv, fn, arg, -1, out, err);
}

static int
copy_into_fn (struct serve *srv, const void *arg, char **out, brig_error *err)
{
  const struct serve_copy *a = arg;
  struct brig_copy_opts o = { .id = a->member, .path = a->dir, .as_is = true };

  return brig_copy_into (srv->ctx, &o, a->produce, (void *) a, err);
}

int
serve_copy_into (struct serve *srv, const struct serve_copy *a, int spool, brig_error *err)
{
  return serve_in_child (srv, copy_into_fn, a, spool, NULL, err);
}

/* "GEN DEADLINE_NS" into sb's fields. */
static int
parse_tenancy (const char *s, unsigned long long *gen, uint64_t *deadline_ns)
{
  unsigned long long d;
  return sscanf (s, "%llu %llu", gen, &d) == 2 ? (*deadline_ns = d, 0) : -EPROTO;
}

int
serve_claim (struct serve *srv, const char *pool, const struct brig_claim_opts *o,
             struct serve_sandbox *sb, brig_error *err)
{
  struct claim_arg a = { .name = pool, .o = o };
  _cleanup_free_ char *out = NULL;
  char *sp;
  int r = in_child (srv, claim_fn, &a, &out, err);

  if (r < 0)
    return r;
  sp = strchr (out, ' ');
  if (sp == NULL || parse_tenancy (sp + 1, &sb->gen, &sb->deadline_ns) < 0)
    return brig_error_say (err, EPROTO, "claim: unexpected answer \"%s\"", out);
  *sp = '\0';
  sb->member = xstrdup (out);
  return 0;
}

int
serve_renew (struct serve *srv, struct serve_sandbox *sb, long long seconds, brig_error *err)
{
  char secs[24];
  struct claim_arg a = { .name = sb->member, .seconds = secs };
  _cleanup_free_ char *out = NULL;
  unsigned long long gen;
  uint64_t dl;
  int r;

  snprintf (secs, sizeof secs, "%lld", seconds);
  r = in_child (srv, renew_fn, &a, &out, err);
  if (r < 0)
    return r;
  if (parse_tenancy (out, &gen, &dl) < 0)
    return brig_error_say (err, EPROTO, "renew: unexpected answer \"%s\"", out);
  if (sb->gen && gen != sb->gen)
    return brig_error_say (err, ENOENT, "sandbox %s has ended", sb->id);
  pthread_mutex_lock (&srv->mu);
  sb->deadline_ns = dl;
  sb->end = time (NULL) + seconds;
  pthread_mutex_unlock (&srv->mu);
  serve_record_write (srv, sb);
  return 0;
}

int
serve_release (struct serve *srv, const char *member, unsigned long long gen, brig_error *err)
{
  struct claim_arg a = { .name = member, .gen = gen };
  return in_child (srv, release_fn, &a, NULL, err);
}

/* ---- the list ---- */

static uint64_t
boottime_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_BOOTTIME, &t);
  return (uint64_t) t.tv_sec * 1000000000ULL + (uint64_t) t.tv_nsec;
}

/* Whether sb's tenancy is over: its lease's deadline passed (the keeper
 * kills and releases the member then) or the member is no longer this
 * tenancy (released, reset, claimed again). A file read, no lock. */
static bool
ended (struct serve *srv, struct serve_sandbox *sb)
{
  struct brig_tenancy t = { 0 };
  uint64_t dl;

  pthread_mutex_lock (&srv->mu);
  dl = sb->deadline_ns;
  pthread_mutex_unlock (&srv->mu);
  if (dl && boottime_ns () >= dl)
    return true;
  if (brig_tenancy_peek (srv->ctx, sb->member, &t) < 0)
    return false;           /* unreadable: kill and release judge it */
  return t.state != BRIG_TENANCY_TENANT || (sb->gen && t.gen != sb->gen);
}

/* Take sb out of the list, no new processes, its processes killed;
 * false: someone else did first. */
static bool
unlist (struct serve *srv, struct serve_sandbox *sb)
{
  struct serve_sandbox **pp;
  bool listed = false;

  pthread_mutex_lock (&srv->mu);
  for (pp = &srv->sandboxes; *pp; pp = &(*pp)->next)
    if (*pp == sb)
      {
        *pp = sb->next;
        listed = true;
        break;
      }
  sb->gone = true;
  for (struct serve_proc *p = sb->procs; p; p = p->next)
    serve_proc_signal (p, SIGKILL);
  pthread_mutex_unlock (&srv->mu);
  return listed;
}

/* Take an ended sb out of the list: its processes killed, its record
 * dropped; its member is the keeper's (or the next tenant's) now. */
static void
drop (struct serve *srv, struct serve_sandbox *sb)
{
  bool listed = unlist (srv, sb);

  if (!listed)
    return;
  brig_log (BRIG_LOG_INFO, "serve: sandbox %s ended (member %s: lease over or released)", sb->id,
            sb->member);
  serve_record_remove (srv, sb->id);
  serve_sandbox_unref (sb);
}

struct serve_sandbox *
serve_sandbox_get (struct serve *srv, const char *id, const char *owner)
{
  struct serve_sandbox *sb;

  pthread_mutex_lock (&srv->mu);
  for (sb = srv->sandboxes; sb; sb = sb->next)
    if (strcmp (sb->id, id) == 0 && (owner == NULL || strcmp (sb->owner, owner) == 0))
      {
        __atomic_add_fetch (&sb->refs, 1, __ATOMIC_ACQ_REL);
        break;
      }
  pthread_mutex_unlock (&srv->mu);
  if (sb && ended (srv, sb))
    {
      drop (srv, sb);
      serve_sandbox_unref (sb);
      return NULL;
    }
  return sb;
}

void
serve_sandboxes_sweep (struct serve *srv)
{
  struct serve_sandbox **all = NULL;
  size_t n = 0;

  pthread_mutex_lock (&srv->mu);
  for (struct serve_sandbox *sb = srv->sandboxes; sb; sb = sb->next)
    {
      all = xrealloc (all, (n + 1) * sizeof *all);
      __atomic_add_fetch (&sb->refs, 1, __ATOMIC_ACQ_REL);
      all[n++] = sb;
    }
  pthread_mutex_unlock (&srv->mu);
  for (size_t i = 0; i < n; i++)
    {
      if (ended (srv, all[i]))
        drop (srv, all[i]);
      serve_sandbox_unref (all[i]);
    }
  free (all);
}

void
serve_sandbox_unref (struct serve_sandbox *sb)
{
  if (sb == NULL || __atomic_sub_fetch (&sb->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  free (sb->member);
  free (sb->pool);
  brig_strv_free (sb->meta);
  free (sb);
}

int
serve_sandbox_kill (struct serve *srv, struct serve_sandbox *sb, brig_error *err)
{
  bool listed = unlist (srv, sb);
  int r;

  if (!listed)
    return brig_error_say (err, ENOENT, "sandbox %s is being killed already", sb->id);
  r = serve_release (srv, sb->member, sb->gen, err);
  if (r < 0)
    brig_error_wrap (err, "release %s", sb->member);
  else
    brig_log (BRIG_LOG_INFO, "serve: sandbox %s released (member %s)", sb->id, sb->member);
  /* the record goes either way: a failed release deleted the member */
  serve_record_remove (srv, sb->id);
  serve_sandbox_unref (sb);
  return r;
}
