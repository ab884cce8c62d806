/* envd's /files (docs/serve.md "Files"): GET streams one file out of the
 * member, POST writes one or more into it, both through brig cp's library
 * (container/copy.h) with a one-entry tar, so paths are resolved in the
 * container exactly as `brig cp` resolves them (inside its root, no magic
 * link, the entry written under a temporary name and renamed into place).
 *
 * A tar header carries the size before the data, and the SDK's uploads
 * are chunked (no length): each file is spooled to an unlinked file under
 * ROOT/@serve/run (O_TMPFILE, at most SERVE_MAX_FILE bytes) and copied in
 * once its part ends. A download is streamed: the copy's child parses the
 * archive and sends the size, then the bytes, on a pipe the response reads. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "container/copy.h"
#include "log.h"
#include "serve/internal.h"
#include "tar.h"
#include "utils.h"

/* The largest file one upload may write (spooled on the host's disk). */
#define SERVE_MAX_FILE (1ULL << 30)
/* "SIZE\n" ahead of a download's bytes: 20 digits and a newline. */
#define SIZE_LINE 21

struct serve_upload {
  struct serve *srv;
  struct serve_sandbox *sb;          /* a reference */
  char *qpath;                       /* ?path=, or NULL (multipart: each part's file name) */
  struct MHD_PostProcessor *pp;      /* multipart, or NULL: the body is the file */
  int spool;
  char *path;                        /* the current file's target, or NULL */
  uint64_t size;
  yajl_gen out;                      /* the answer: one entry per file */
  char **done;                       /* the targets written, to refuse one twice */
  unsigned status;                   /* the first error (0: none) */
  char msg[512];
};

static void
up_fail (struct serve_upload *up, unsigned status, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

static void
up_fail (struct serve_upload *up, unsigned status, const char *fmt, ...)
{
  va_list ap;

  if (up->status)
    return;
  up->status = status;
  va_start (ap, fmt);
  vsnprintf (up->msg, sizeof up->msg, fmt, ap);
  va_end (ap);
}

/* An errno of the copy as envd's status: a path problem is the client's. */
static unsigned
status_of (int code, bool read)
{
  switch (code)
    {
    case ENOENT:
      return read ? 404 : 400;
    case ENOSPC:
    case EDQUOT:
      return 507;
    case EISDIR: case ENOTDIR: case EINVAL: case ELOOP: case EXDEV: case ENAMETOOLONG:
    case EEXIST: case EPERM: case EACCES: case EROFS:
      return 400;
    default:
      return 500;
    }
}

/* path split into its directory and last name (a copy each); -1 when it
 * is not an absolute path to a file name. */
static int
split_path (const char *path, char **dir, char **name)
{
  const char *slash;

  if (path == NULL || path[0] != '/' || strlen (path) >= 4096)
    return -1;
  slash = strrchr (path, '/');
  if (slash[1] == '\0' || strcmp (slash + 1, ".") == 0 || strcmp (slash + 1, "..") == 0)
    return -1;
  *dir = slash == path ? xstrdup ("/") : xasprintf ("%.*s", (int) (slash - path), path);
  *name = xstrdup (slash + 1);
  return 0;
}

/* The copy's producer, in the child: the spool (SERVE_CHILD_FD) as one
 * regular file entry. */
static int
produce (int fd, void *data, brig_error *err)
{
  const struct serve_copy *a = data;
  struct brig_tar *t = xmalloc0 (sizeof *t);
  struct brig_tar_entry e = { .name = (char *) a->name, .type = BRIG_TAR_FILE, .mode = 0644,
                              .size = a->size };
  static char buf[64 * 1024];
  uint64_t off = 0;
  int r;

  clock_gettime (CLOCK_REALTIME, &e.mtime);
  brig_tar_init (t, fd);
  r = brig_tar_write_header (t, &e, err);
  while (r == 0 && off < a->size)
    {
      ssize_t n = pread (SERVE_CHILD_FD, buf, sizeof buf, (off_t) off);
      if (n <= 0)
        r = brig_error_errno (err, "read the spooled upload");
      else
        r = brig_tar_write_data (t, buf, (size_t) n, err), off += (uint64_t) n;
    }
  if (r == 0 && (r = brig_tar_write_pad (t, a->size, err)) == 0)
    r = brig_tar_write_end (t, err);
  free (t);
  return r;
}

/* The current file is whole: its parents made (as envd), then copied in. */
static void
finish_file (struct serve_upload *up)
{
  _cleanup_free_ char *dir = NULL, *name = NULL, *json = NULL;
  brig_error err = { 0 };
  struct serve_fs_args mk = { .op = SERVE_FS_MKDIR };
  struct serve_copy a;
  int r;

  if (up->path == NULL || up->status)
    goto out;
  if (split_path (up->path, &dir, &name) < 0)
    {
      up_fail (up, 400, "path '%.256s': expected an absolute path to a file", up->path);
      goto out;
    }
  for (size_t i = 0; up->done && up->done[i]; i++)
    if (strcmp (up->done[i], up->path) == 0)
      {
        up_fail (up, 400, "path '%.256s' is given twice", up->path);
        goto out;
      }
  mk.path = dir;
  r = serve_fs_call (up->srv, up->sb->member, &mk, &json, &err);
  brig_error_clear (&err);
  a = (struct serve_copy) { up->sb->member, dir, name, up->size, produce };
  if ((r < 0 && r != -EEXIST) || (r = serve_copy_into (up->srv, &a, up->spool, &err)) < 0)
    {
      up_fail (up, status_of (-r, false), "%s", err.msg ? err.msg : "cannot make the directory");
      brig_error_clear (&err);
      goto out;
    }
  yajl_gen_map_open (up->out);
  serve_jg_kstr (up->out, "name", name);
  serve_jg_kstr (up->out, "type", "file");
  serve_jg_kstr (up->out, "path", up->path);
  yajl_gen_map_close (up->out);
  serve_strv_add (&up->done, up->path);
out:
  free (up->path);
  up->path = NULL;
  up->size = 0;
  if (ftruncate (up->spool, 0) < 0 || lseek (up->spool, 0, SEEK_SET) < 0)
    up_fail (up, 500, "spool: %s", strerror (errno));
}

static void
spool (struct serve_upload *up, const char *data, size_t n)
{
  if (up->status || n == 0)
    return;
  if (up->size + n > SERVE_MAX_FILE)
    return up_fail (up, 400, "path '%.256s': larger than %llu bytes", up->path,
                    (unsigned long long) SERVE_MAX_FILE);
  if (brig_write_all (up->spool, data, n) < 0)
    return up_fail (up, errno == ENOSPC ? 507 : 500, "spool: %s", strerror (errno));
  up->size += n;
}

/* MHD's post processor: each part named "file" is one file; a new one
 * starts at offset 0. */
static enum MHD_Result
part (void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
      const char *content_type, const char *transfer_encoding, const char *data, uint64_t off,
      size_t size)
{
  struct serve_upload *up = cls;
  const char *target = up->qpath ? up->qpath : filename;

  (void) kind, (void) content_type, (void) transfer_encoding;
  if (key == NULL || strcmp (key, "file") != 0 || up->status)
    return MHD_YES;
  if (off == 0 && (up->path == NULL || up->size > 0 || target == NULL
                   || strcmp (up->path, target) != 0))
    {
      finish_file (up);
      if (target == NULL)
        {
          up_fail (up, 400, "a file part without a file name or ?path=");
          return MHD_YES;
        }
      up->path = xstrdup (target);
    }
  spool (up, data, size);
  return MHD_YES;
}

enum MHD_Result
serve_upload_begin (struct serve *srv, struct MHD_Connection *c, const char *sid,
                    struct serve_upload **out)
{
  const char *ct = serve_header (c, MHD_HTTP_HEADER_CONTENT_TYPE);
  const char *ce = serve_header (c, MHD_HTTP_HEADER_CONTENT_ENCODING);
  const char *qpath = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "path");
  struct serve_sandbox *sb = serve_sandbox_get (srv, sid, NULL);
  struct serve_upload *up;

  *out = NULL;
  if (sb == NULL)
    return serve_error (c, 502, "The sandbox was not found");
  if (!serve_token_ok (serve_header (c, "X-Access-Token"), sb->token))
    {
      serve_sandbox_unref (sb);
      return serve_error (c, 401, "missing or wrong X-Access-Token");
    }
  if (ce && strcmp (ce, "identity") != 0)
    {
      serve_sandbox_unref (sb);
      return serve_error (c, 400, "Content-Encoding %s is not supported by brig serve", ce);
    }
  up = xmalloc0 (sizeof *up);
  up->srv = srv;
  up->sb = sb;
  up->qpath = qpath && *qpath ? xstrdup (qpath) : NULL;
  up->out = serve_jg_new ();
  yajl_gen_array_open (up->out);
  up->spool = openat (srv->dirfd, "run", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (up->spool < 0)
    up_fail (up, 500, "spool: %s", strerror (errno));
  if (ct && strncasecmp (ct, "multipart/form-data", 19) == 0)
    {
      up->pp = MHD_create_post_processor (c, 64 * 1024, part, up);
      if (up->pp == NULL)
        up_fail (up, 400, "cannot parse this multipart/form-data body");
    }
  else if (up->qpath == NULL)
    up_fail (up, 400, "path: required for an application/octet-stream body");
  else
    up->path = xstrdup (up->qpath);
  *out = up;
  return MHD_YES;
}

void
serve_upload_feed (struct serve_upload *up, const char *data, size_t n)
{
  if (up->status)
    return;
  if (up->pp == NULL)
    spool (up, data, n);
  else if (MHD_post_process (up->pp, data, n) != MHD_YES)
    up_fail (up, 400, "malformed multipart/form-data body");
}

enum MHD_Result
serve_upload_end (struct serve_upload *up, struct MHD_Connection *c)
{
  size_t len;
  char *body;

  finish_file (up);
  if (up->status)
    return serve_error (c, up->status, "%s", up->msg);
  if (up->done == NULL)
    return serve_error (c, 400, "no file in the request");
  yajl_gen_array_close (up->out);
  body = serve_jg_done (up->out, &len);
  up->out = NULL;
  return serve_reply (c, 200, body, len, "application/json");
}

void
serve_upload_free (struct serve_upload *up)
{
  if (up == NULL)
    return;
  if (up->pp)
    MHD_destroy_post_processor (up->pp);
  if (up->spool >= 0)
    close (up->spool);
  if (up->out)
    yajl_gen_free (up->out);
  brig_strv_free (up->done);
  free (up->path);
  free (up->qpath);
  serve_sandbox_unref (up->sb);
  free (up);
}

/* ---- GET /files ---- */

struct download {
  pid_t pid;
  int data, res;             /* the child's bytes; its result */
  uint64_t size, sent;
};

/* The consumer, in the child: the first entry must be a regular file;
 * its size line, then its bytes, go to fd 3. */
static int
consume (int fd, void *data, brig_error *err)
{
  struct brig_tar *t = xmalloc0 (sizeof *t);
  struct brig_tar_entry e = { 0 };
  static char buf[64 * 1024];
  char line[SIZE_LINE + 1];
  ssize_t n;
  int r;

  (void) data;
  brig_tar_init (t, fd);
  r = brig_tar_read_header (t, &e, err);
  if (r == 0)
    r = brig_error_say (err, ENOENT, "nothing was copied");
  else if (r > 0 && e.type == BRIG_TAR_DIR)
    r = brig_error_say (err, EISDIR, "path is a directory");
  else if (r > 0 && e.type != BRIG_TAR_FILE)
    r = brig_error_say (err, EINVAL, "path is not a regular file");
  else if (r > 0)
    {
      snprintf (line, sizeof line, "%020" PRIu64 "\n", e.size);
      r = brig_write_all (3, line, SIZE_LINE) < 0 ? -EPIPE : 0;
      while (r == 0 && (n = brig_tar_read_data (t, buf, sizeof buf, err)) > 0)
        r = brig_write_all (3, buf, (size_t) n) < 0 ? -EPIPE : 0;
      if (r == 0 && n < 0)
        r = (int) n;
    }
  brig_tar_entry_clear (&e);
  free (t);
  return r;
}

/* Fork the copy out of member's path: the child sends the bytes on
 * d->data and "CODE\nMESSAGE" on d->res. */
static int
download_start (struct serve *srv, const char *member, const char *path, struct download *d,
                brig_error *err)
{
  int pd[2], pr[2];

  if (pipe2 (pd, O_CLOEXEC) < 0)
    return brig_error_errno (err, "pipe");
  if (pipe2 (pr, O_CLOEXEC) < 0)
    {
      close (pd[0]), close (pd[1]);
      return brig_error_errno (err, "pipe");
    }
  d->pid = fork ();
  if (d->pid == 0)
    {
      struct brig_copy_opts o = { .id = member, .path = path, .follow = true };
      brig_error e = { 0 };
      sigset_t none;
      int r;
      sigemptyset (&none);
      signal (SIGPIPE, SIG_IGN);
      sigprocmask (SIG_SETMASK, &none, NULL);
      r = fcntl (pr[1], F_DUPFD, 10);
      dup2 (pd[1], 3);
      dup2 (r, 4);
      syscall (SYS_close_range, 5U, ~0U, 0U);
      r = brig_copy_out_of (srv->ctx, &o, consume, NULL, &e);
      dprintf (4, "%d\n%s", r, r < 0 ? (e.msg ? e.msg : "failed") : "");
      _exit (0);
    }
  close (pd[1]), close (pr[1]);
  if (d->pid < 0)
    {
      close (pd[0]), close (pr[0]);
      return brig_error_errno (err, "fork");
    }
  d->data = pd[0];
  d->res = pr[0];
  return 0;
}

static void
download_free (void *cls)
{
  struct download *d = cls;
  int status;

  close (d->data);
  close (d->res);
  if (d->sent < d->size)
    kill (d->pid, SIGKILL);
  while (waitpid (d->pid, &status, 0) < 0 && errno == EINTR)
    ;
  free (d);
}

static ssize_t
download_read (void *cls, uint64_t pos, char *buf, size_t max)
{
  struct download *d = cls;
  ssize_t n;

  (void) pos;
  if (d->sent == d->size)
    return MHD_CONTENT_READER_END_OF_STREAM;
  if (max > d->size - d->sent)
    max = (size_t) (d->size - d->sent);
  while ((n = read (d->data, buf, max)) < 0 && errno == EINTR)
    ;
  if (n <= 0)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  d->sent += (uint64_t) n;
  return n;
}

/* The child failed before any byte: its errno and message as the answer. */
static enum MHD_Result
download_error (struct MHD_Connection *c, struct download *d, const char *path)
{
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  char *nl;
  int code;

  close (d->data);
  d->data = -1;
  brig_read_fd (d->res, &text, &len, NULL);
  d->size = 0;
  download_free (d);
  if (text == NULL || (nl = strchr (text, '\n')) == NULL)
    return serve_error (c, 500, "path '%.256s': the copy's child died", path);
  *nl = '\0';
  code = -atoi (text);
  if (code == ENOENT)
    return serve_error (c, 404, "path '%.256s' does not exist", path);
  return serve_error (c, status_of (code, true), "path '%.256s': %s", path, nl + 1);
}

enum MHD_Result
serve_files_get (struct serve *srv, struct MHD_Connection *c, struct serve_sandbox *sb)
{
  const char *path = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "path");
  _cleanup_free_ char *dir = NULL, *name = NULL;
  struct download *d;
  struct MHD_Response *resp;
  brig_error err = { 0 };
  char line[SIZE_LINE + 1];
  size_t got = 0;
  enum MHD_Result ret;

  if (split_path (path, &dir, &name) < 0)
    return serve_error (c, 400, "path '%.256s': expected an absolute path to a file",
                        path ? path : "");
  d = xmalloc0 (sizeof *d);
  if (download_start (srv, sb->member, path, d, &err) < 0)
    {
      free (d);
      ret = serve_error (c, 500, "%s", err.msg);
      brig_error_clear (&err);
      return ret;
    }
  while (got < SIZE_LINE)
    {
      ssize_t n = read (d->data, line + got, SIZE_LINE - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return download_error (c, d, path);
      got += (size_t) n;
    }
  line[SIZE_LINE] = '\0';
  d->size = strtoull (line, NULL, 10);
  resp = MHD_create_response_from_callback (d->size, 64 * 1024, download_read, d, download_free);
  MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
  ret = MHD_queue_response (c, 200, resp);
  MHD_destroy_response (resp);
  return ret;
}
