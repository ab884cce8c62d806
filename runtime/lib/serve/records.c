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
  yajl_val started;
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
  size_t len;
  int r;

  yajl_gen_map_open (g);
  serve_jg_kstr (g, "id", sb->id);
  serve_jg_kstr (g, "member", sb->member);
  serve_jg_kstr (g, "pool", sb->pool);
  serve_jg_kstr (g, "token", sb->token);
  serve_jg_kstr (g, "owner", sb->owner);
  serve_jg_kint (g, "started", sb->started);
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

typedef int (*child_fn) (struct serve *srv, const char *arg, char **out, brig_error *err);

static int
claim_fn (struct serve *srv, const char *pool, char **out, brig_error *err)
{
  return brig_pool_claim (srv->ctx, pool, NULL, out, err); /* no claim options yet (docs/serve.md "Not yet") */
}

static int
release_fn (struct serve *srv, const char *member, char **out, brig_error *err)
{
  struct brig_reset_report rep = { 0 };
  int r = brig_pool_release (srv->ctx, member, &rep, err);
  brig_reset_report_free (&rep);
  return r;
}

/* Run fn in a forked child; its result (or error message) comes back on
 * a pipe as "CODE\nTEXT". The child keeps no fd of the server. */
static int
in_child (struct serve *srv, child_fn fn, const char *arg, char **out, brig_error *err)
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
      dup2 (p[1], 3);
      syscall (SYS_close_range, 4U, ~0U, 0U);
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

int
serve_claim (struct serve *srv, const char *pool, char **member, brig_error *err)
{
  return in_child (srv, claim_fn, pool, member, err);
}

int
serve_release (struct serve *srv, const char *member, brig_error *err)
{
  return in_child (srv, release_fn, member, NULL, err);
}

/* ---- the list ---- */

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
  return sb;
}

void
serve_sandbox_unref (struct serve_sandbox *sb)
{
  if (sb == NULL || __atomic_sub_fetch (&sb->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  free (sb->member);
  free (sb->pool);
  free (sb);
}

int
serve_sandbox_kill (struct serve *srv, struct serve_sandbox *sb, brig_error *err)
{
  struct serve_sandbox **pp;
  bool listed = false;
  int r;

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
  if (!listed)
    return brig_error_say (err, ENOENT, "sandbox %s is being killed already", sb->id);
  r = serve_release (srv, sb->member, err);
  if (r < 0)
    brig_error_wrap (err, "release %s", sb->member);
  else
    brig_log (BRIG_LOG_INFO, "serve: sandbox %s released (member %s)", sb->id, sb->member);
  /* the record goes either way: a failed release deleted the member */
  serve_record_remove (srv, sb->id);
  serve_sandbox_unref (sb);
  return r;
}
