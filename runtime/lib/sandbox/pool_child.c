/* The two pool steps that place a new init in a container (a member's
 * create, a release's reset) run in a forked child of the brig process.
 *
 * Why a child: the new init is a clone of the process that makes it and
 * keeps every fd of that process until its execve (it only marks them
 * close-on-exec), so an init cloned by the pool process itself would hold
 * the pool's flocks for as long as it waits in `created`, and drain would
 * wait forever; and its stdio would be the caller of fill or release,
 * whose pipe would then never see end-of-file. The child drops the pool's
 * fds and puts /dev/null on its stdio before it creates; what it has to
 * say comes back in a shared anonymous mapping, which needs no fd and so
 * cannot be held open by the init either. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container/container.h"
#include "sandbox/pool_internal.h"
#include "utils.h"

/* What the child hands back: its result, its error and (reset) the report
 * as records "ok\0name\0detail\0", as many as fit. */
#define SHARED_SIZE (256 * 1024)
struct shared {
  int r;
  int code;
  bool report_ok;
  size_t nchecks;
  size_t data_len;
  char msg[4096];
  char data[];
};

static void
put (struct shared *sh, const char *s)
{
  size_t room = SHARED_SIZE - sizeof *sh - sh->data_len;
  size_t len = s ? strlen (s) : 0;

  if (room == 0)
    return;
  if (len >= room)
    len = room - 1;
  memcpy (sh->data + sh->data_len, s ? s : "", len);
  sh->data[sh->data_len + len] = '\0';
  sh->data_len += len + 1;
}

/* Leave the pool's fds (and their flocks) and the caller's stdio behind. */
static void
child_detach (const int *fds, size_t nfds)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);

  for (size_t i = 0; i < nfds; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  if (null >= 0)
    for (int fd = 0; fd < 3; fd++)
      dup2 (null, fd); /* dup2 clears close-on-exec: stdio of the process */
  if (null > 2)
    close (null);
}

/* The child's side: fn, its result into sh, and exit. */
static void __attribute__ ((noreturn))
child_body (const int *fds, size_t nfds, struct shared *sh,
            int (*fn) (void *arg, struct shared *sh, brig_error *err), void *arg)
{
  brig_error e = { 0 };
  /* The init this child clones must not map it: a waiting member would
   * keep its pages for as long as it waits. */
  madvise (sh, SHARED_SIZE, MADV_DONTFORK);
  child_detach (fds, nfds);
  sh->r = fn (arg, sh, &e);
  sh->code = e.code;
  snprintf (sh->msg, sizeof sh->msg, "%s", e.msg ? e.msg : "failed without a message");
  _exit (sh->r < 0 ? 1 : 0);
}

/* Wait for child pid and give what it put in sh. */
static int
child_wait (pid_t pid, const struct shared *sh, brig_error *err)
{
  int status;

  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return brig_error_errno (err, "wait for the pool's child %d", (int) pid);
  if (WIFSIGNALED (status))
    return brig_error_say (err, EINTR, "the pool's child was killed by signal %d",
                           WTERMSIG (status));
  if (sh->r < 0)
    return brig_error_set_raw (err, sh->code, sh->msg);
  return 0;
}

static int
run_child (const int *fds, size_t nfds, struct shared *sh,
           int (*fn) (void *arg, struct shared *sh, brig_error *err), void *arg,
           brig_error *err)
{
  pid_t pid;

  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  if (pid < 0)
    return brig_error_errno (err, "fork");
  if (pid == 0)
    child_body (fds, nfds, sh, fn, arg);
  return child_wait (pid, sh, err);
}

static struct shared *
shared_map (brig_error *err)
{
  void *p = mmap (NULL, SHARED_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    {
      brig_error_errno (err, "mmap");
      return NULL;
    }
  /* -EINTR until the child says otherwise (killed before it could) */
  ((struct shared *) p)->r = -EINTR;
  snprintf (((struct shared *) p)->msg, sizeof ((struct shared *) p)->msg,
            "the pool's child ended without a result");
  return p;
}

struct reset_arg {
  const struct brig_context *ctx;
  const char *id;
};

static int
reset_in_child (void *arg, struct shared *sh, brig_error *err)
{
  struct reset_arg *a = arg;
  struct brig_reset_report rep = { 0 };
  int r = brig_container_reset (a->ctx, a->id, BRIG_RESET_VACATE, &rep, err);

  sh->report_ok = rep.ok;
  sh->nchecks = 0;
  for (size_t i = 0; i < rep.n; i++)
    {
      size_t before = sh->data_len;
      put (sh, rep.checks[i].ok ? "1" : "0");
      put (sh, rep.checks[i].name);
      put (sh, rep.checks[i].detail);
      if (sh->data_len - before < 3)
        break; /* full */
      sh->nchecks++;
    }
  brig_reset_report_free (&rep);
  return r;
}

/* Read the checks back into rep. */
static void
report_from_shared (const struct shared *sh, struct brig_reset_report *rep)
{
  const char *p = sh->data, *end = sh->data + sh->data_len;

  memset (rep, 0, sizeof *rep);
  rep->checks = xmalloc0 ((sh->nchecks + 1) * sizeof *rep->checks);
  for (size_t i = 0; i < sh->nchecks && p < end; i++)
    {
      struct brig_reset_check *c = &rep->checks[rep->n];
      const char *ok = p, *name = ok + strlen (ok) + 1, *detail = name + strlen (name) + 1;
      if (detail >= end)
        break;
      c->ok = ok[0] == '1';
      c->name = xstrdup (name);
      c->detail = *detail ? xstrdup (detail) : NULL;
      p = detail + strlen (detail) + 1;
      rep->n++;
    }
  rep->ok = sh->report_ok && rep->n == sh->nchecks;
}

int
pool_child_reset (const struct brig_context *ctx, const char *id, const int *fds, size_t nfds,
                  struct brig_reset_report *rep, brig_error *err)
{
  struct reset_arg a = { ctx, id };
  struct shared *sh = shared_map (err);
  int r;

  memset (rep, 0, sizeof *rep);
  if (sh == NULL)
    return -errno;
  r = run_child (fds, nfds, sh, reset_in_child, &a, err);
  report_from_shared (sh, rep);
  munmap (sh, SHARED_SIZE);
  return r;
}

/* ---- children in flight (pool_fill.c: several creates at once) ---- */

static int
job_in_child (void *arg, struct shared *sh, brig_error *err)
{
  struct pool_child_job *j = arg;
  (void) sh;
  return j->fn (j->arg, err);
}

int
pool_child_start (struct pool_child_job *j, const int *fds, size_t nfds, brig_error *err)
{
  j->pid = -1;
  j->pidfd = -1;
  j->sh = shared_map (err);
  if (j->sh == NULL)
    return -errno;
  fflush (stdout);
  fflush (stderr);
  j->pid = fork ();
  if (j->pid < 0)
    {
      munmap (j->sh, SHARED_SIZE);
      j->sh = NULL;
      return brig_error_errno (err, "fork");
    }
  if (j->pid == 0)
    child_body (fds, nfds, j->sh, job_in_child, j);
  /* The next job's child, and the init it clones, must not map this one's
   * page. */
  madvise (j->sh, SHARED_SIZE, MADV_DONTFORK);
  j->pidfd = (int) syscall (SYS_pidfd_open, j->pid, 0);
  return 0;
}

int
pool_child_finish (struct pool_child_job *j, brig_error *err)
{
  int r = child_wait (j->pid, j->sh, err);

  if (j->pidfd >= 0)
    close (j->pidfd);
  munmap (j->sh, SHARED_SIZE);
  j->sh = NULL;
  j->pidfd = -1;
  j->pid = -1;
  return r;
}
