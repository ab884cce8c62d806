/* Making pool members (fill, and the replacement of a member whose release
 * failed) and the pool's failure log (pool_internal.h).
 *
 * Several creates in flight: each in its own forked child (pool_child.c),
 * up to pool_maker.parallel at once, each with its own creating/ID entry
 * held locked (flock) by the maker until the member is available: a fill
 * that finds an entry it can lock knows its maker died (pool.c). Every
 * child is given every fd of the maker's to close first: the pool's, and
 * the entry locks and pidfds of the other creates, which the init it
 * clones would otherwise hold for as long as it waits. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "container/container.h"
#include "container/state.h"
#include "container/tenancy.h"
#include "log.h"
#include "sandbox/pool.h"
#include "sandbox/pool_internal.h"
#include "utils.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#define POOL_SUFFIX_LEN 12
#define FAILURES_FILE "failures"
#define FAILURES_OLD "failures.1"
#define FAILURES_MAX (1024 * 1024)
#define MAX_PARALLEL 16
#define MAX_POOL_FDS 8 /* pool_maker.nfds at most */

void
pool_delete_quietly (const struct brig_context *ctx, const char *id)
{
  brig_error e = { 0 };
  if (brig_container_delete (ctx, id, true, &e) < 0 && e.code != ENOENT)
    brig_warn ("pool: delete member \"%s\": %s", id, e.msg ? e.msg : "failed");
  brig_error_clear (&e);
}

/* "NAME-<12 hex>" */
static char *
member_id (const char *name)
{
  unsigned char b[POOL_SUFFIX_LEN / 2];
  char hex[POOL_SUFFIX_LEN + 1];
  size_t got = 0;

  while (got < sizeof b)
    {
      ssize_t k = getrandom (b + got, sizeof b - got, 0);
      if (k < 0 && errno == EINTR)
        continue;
      if (k < 0)
        abort (); /* the kernel has had getrandom since 3.17 */
      got += (size_t) k;
    }
  for (size_t i = 0; i < sizeof b; i++)
    snprintf (hex + 2 * i, 3, "%02x", b[i]);
  return xasprintf ("%s-%s", name, hex);
}

/* One member being made. */
struct job {
  char *id;
  int entry;                  /* creating/ID, flock held */
  struct member_edit edit;
  struct brig_create_opts opts;
  const struct brig_context *ctx;
  struct pool_child_job child;
};

/* In the child: create, then vacant (tenancy.h): nobody's until a claim,
 * so no exec may enter it before. */
static int
make_in_child (void *arg, brig_error *err)
{
  struct job *j = arg;
  _cleanup_container_ brig_container *c = NULL;
  int r = brig_container_create (j->ctx, &j->opts, err);

  if (r == 0)
    r = brig_container_load (j->ctx, j->id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r == 0)
    r = brig_tenancy_write (c->dirfd, 1, BRIG_TENANCY_VACANT, err);
  return r;
}

/* A new creating/ID entry, locked. */
static int
job_entry (const struct pool_maker *m, struct job *j, brig_error *err)
{
  for (int tries = 0; tries < 8 && j->entry < 0; tries++)
    {
      free (j->id);
      j->id = member_id (m->name);
      j->entry = openat (m->creating, j->id, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                         0600);
    }
  if (j->entry < 0)
    return brig_error_errno (err, "pool \"%s\": record a new member", m->name);
  if (flock (j->entry, LOCK_EX | LOCK_NB) < 0)
    return brig_error_errno (err, "pool \"%s\": lock the entry of member %s", m->name, j->id);
  return 0;
}

/* The fds a new child closes: the pool's and those of every job. */
static size_t
close_list (const struct pool_maker *m, const struct job *jobs, size_t njobs, int *out)
{
  size_t n = 0;
  for (size_t i = 0; i < m->nfds && i < MAX_POOL_FDS; i++)
    out[n++] = m->fds[i];
  for (size_t i = 0; i < njobs; i++)
    {
      out[n++] = jobs[i].entry;
      out[n++] = jobs[i].child.pidfd;
    }
  return n;
}

static int
job_start (const struct pool_maker *m, struct job *jobs, size_t k, brig_error *err)
{
  struct job *j = &jobs[k];
  int closes[MAX_POOL_FDS + 2 * MAX_PARALLEL];
  int r;

  memset (j, 0, sizeof *j);
  j->entry = -1;
  j->child.pidfd = -1;
  j->child.pid = -1;
  r = job_entry (m, j, err);
  if (r < 0)
    return r;
  j->ctx = m->ctx;
  j->edit.id = j->id;
  j->edit.rootless = m->ctx->rootless == 1;
  j->opts = (struct brig_create_opts) { .id = j->id, .bundle = m->bundle,
                                        .edit_config = m->edit_config, .edit_data = &j->edit };
  j->child.fn = make_in_child;
  j->child.arg = j;
  return pool_child_start (&j->child, closes, close_list (m, jobs, k + 1, closes), err);
}

/* Wait for job j, and make its member available (or delete it). */
static int
job_finish (const struct pool_maker *m, struct job *j, char ***made, size_t *nmade,
            brig_error *err)
{
  int r = j->child.pid > 0 ? pool_child_finish (&j->child, err) : -EINVAL;

  if (r < 0)
    brig_error_wrap (err, "pool \"%s\": create member %s", m->name, j->id);
  else if (renameat2 (m->creating, j->id, m->available, j->id, RENAME_NOREPLACE) < 0)
    r = brig_error_errno (err, "pool \"%s\": make member %s available", m->name, j->id);
  if (r < 0)
    {
      /* create undoes itself; a child killed half way does not */
      pool_delete_quietly (m->ctx, j->id);
      unlinkat (m->creating, j->id, 0);
    }
  else
    {
      *made = xrealloc (*made, (*nmade + 2) * sizeof (char *));
      (*made)[(*nmade)++] = brig_steal_ptr (j->id);
      (*made)[*nmade] = NULL;
    }
  if (j->entry >= 0)
    close (j->entry);
  j->entry = -1;
  free (j->id);
  j->id = NULL;
  return r;
}

/* The index of a job whose child ended (poll on the pidfds), else 0. */
static size_t
job_ended (struct job *jobs, size_t n)
{
  struct pollfd pf[MAX_PARALLEL];

  for (size_t i = 0; i < n; i++)
    {
      if (jobs[i].child.pidfd < 0)
        return i; /* no pidfd: wait for this one */
      pf[i] = (struct pollfd) { .fd = jobs[i].child.pidfd, .events = POLLIN };
    }
  while (poll (pf, n, -1) < 0 && errno == EINTR)
    ;
  for (size_t i = 0; i < n; i++)
    if (pf[i].revents)
      return i;
  return 0;
}

int
pool_make_members (const struct pool_maker *m, size_t count, char ***made, size_t *nmade,
                   brig_error *err)
{
  struct job jobs[MAX_PARALLEL];
  size_t w = m->parallel < 1 ? 1 : m->parallel > MAX_PARALLEL ? MAX_PARALLEL : m->parallel;
  size_t running = 0, started = 0;
  int first = 0;

  while (running > 0 || (started < count && first == 0))
    {
      if (started < count && first == 0 && running < w)
        {
          brig_error e = { 0 };
          int r = job_start (m, jobs, running, &e);
          if (r == 0)
            {
              running++;
              started++;
              continue;
            }
          if (jobs[running].entry >= 0)
            {
              unlinkat (m->creating, jobs[running].id, 0);
              close (jobs[running].entry);
            }
          free (jobs[running].id);
          first = r;
          brig_error_set_raw (err, e.code, e.msg);
          brig_error_clear (&e);
          continue;
        }
      /* full, or nothing more to start: wait for one */
      {
        size_t k = job_ended (jobs, running);
        brig_error e = { 0 };
        int r = job_finish (m, &jobs[k], made, nmade, &e);
        if (r < 0 && first == 0)
          {
            first = r;
            brig_error_set_raw (err, e.code, e.msg);
          }
        else if (r < 0)
          brig_warn ("%s", e.msg ? e.msg : "pool: a member failed");
        brig_error_clear (&e);
        jobs[k] = jobs[--running];
      }
    }
  return first;
}

/* ---- the failure log ---- */

/* s as a JSON string (malloc'd). */
static char *
json_string (const char *s)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);

  if (f == NULL)
    return xstrdup ("\"\"");
  brig_json_write_string (f, s ? s : "");
  fclose (f);
  return buf;
}

void
pool_failure_note (int pool_dirfd, const char *id, const char *phase, const char *reason)
{
  _cleanup_free_ char *jid = json_string (id), *jreason = NULL, *line = NULL;
  _cleanup_close_ int fd = -1;
  char when[64];
  struct timespec ts;
  struct tm tm;
  struct stat st;
  size_t len;

  /* one write of less than 4 KiB: lines of concurrent releases never mix */
  {
    char cut[3000];
    snprintf (cut, sizeof cut, "%s", reason ? reason : "");
    jreason = json_string (cut);
  }
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  line = xasprintf ("{\"time\":\"%s\",\"member\":%s,\"phase\":\"%s\",\"reason\":%s}\n", when, jid,
                    phase, jreason);
  len = strlen (line);
  fd = openat (pool_dirfd, FAILURES_FILE, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
               0600);
  if (fd < 0)
    {
      brig_warn ("pool: record a failure: %s", strerror (errno));
      return;
    }
  if (fstat (fd, &st) == 0 && st.st_size > FAILURES_MAX)
    renameat (pool_dirfd, FAILURES_FILE, pool_dirfd, FAILURES_OLD); /* the next note starts anew */
  if (write (fd, line, len) != (ssize_t) len)
    brig_warn ("pool: record a failure: %s", strerror (errno));
}

/* Lines in file name of dirfd; *last (if not NULL) takes its last line. */
static size_t
count_lines (int dirfd, const char *name, char **last)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, n = 0;

  if (brig_read_file_at (dirfd, name, &buf, &len, NULL) < 0 || len == 0)
    return 0;
  for (size_t i = 0; i < len; i++)
    n += buf[i] == '\n';
  if (last)
    {
      char *end = buf + len;
      char *start;
      while (end > buf && end[-1] == '\n')
        end--;
      *end = '\0';
      start = strrchr (buf, '\n');
      *last = xstrdup (start ? start + 1 : buf);
    }
  return n;
}

size_t
pool_failures_read (int pool_dirfd, char **last)
{
  size_t n = count_lines (pool_dirfd, FAILURES_OLD, NULL);
  char *l = NULL;

  n += count_lines (pool_dirfd, FAILURES_FILE, &l);
  if (last)
    *last = l;
  else
    free (l);
  return n;
}

void
pool_failures_remove (int pool_dirfd)
{
  unlinkat (pool_dirfd, FAILURES_FILE, 0);
  unlinkat (pool_dirfd, FAILURES_OLD, 0);
}
