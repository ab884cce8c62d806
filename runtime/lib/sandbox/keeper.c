/* The lease keeper of a pool (keeper.h): one process per pool that has
 * leases, started by whichever pool command finds none running, ended by
 * itself. What waits is this process alone: a timerfd, an inotify watch,
 * epoll; no lock is held while it waits but its own file's flock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "container/state.h"
#include "container/tenancy.h"
#include "log.h"
#include "sandbox/keeper.h"
#include "sandbox/pool.h" /* BRIG_POOL_DIR */
#include "utils.h"

#define LEASES "leases"
#define KEEPER "keeper"
#define KEEPER_IDLE_NS (10ull * 1000000000ull)
#define LEASES_MAX 4096

static char *
pool_path (const struct brig_context *ctx, const char *pool, const char *what)
{
  return xasprintf ("%s/" BRIG_POOL_DIR "/%s%s%s", ctx->state_root, pool, what ? "/" : "",
                    what ? what : "");
}

static uint64_t
now_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_BOOTTIME, &t);
  return (uint64_t) t.tv_sec * 1000000000ull + (uint64_t) t.tv_nsec;
}

int
brig_keeper_lease (const struct brig_context *ctx, const char *pool, const char *id,
                   unsigned long long gen, uint64_t deadline_ns, brig_error *err)
{
  _cleanup_free_ char *dir = pool_path (ctx, pool, LEASES);
  _cleanup_free_ char *text = xasprintf ("%llu %llu\n", gen, (unsigned long long) deadline_ns);
  _cleanup_close_ int fd = -1;
  int r;

  if (mkdir (dir, 0700) < 0 && errno != EEXIST)
    return brig_error_errno (err, "--deadline: create %s", dir);
  fd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return brig_error_errno (err, "--deadline: open %s", dir);
  r = brig_write_file_atomic (fd, id, text, strlen (text), 0600, err);
  if (r < 0)
    return brig_error_wrap (err, "--deadline: write the lease");
  brig_keeper_ensure (ctx, pool);
  return 0;
}

void
brig_keeper_unlease (const struct brig_context *ctx, const char *pool, const char *id)
{
  _cleanup_free_ char *path = pool_path (ctx, pool, LEASES);
  char *p = xasprintf ("%s/%s", path, id);
  unlink (p);
  free (p);
}

pid_t
brig_keeper_pid (const struct brig_context *ctx, const char *pool)
{
  _cleanup_free_ char *path = pool_path (ctx, pool, KEEPER);
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  size_t len;

  /* the lock taken means no keeper holds it */
  if (fd < 0 || flock (fd, LOCK_SH | LOCK_NB) == 0)
    return 0;
  if (brig_read_file_at (AT_FDCWD, path, &buf, &len, NULL) < 0)
    return 0;
  return (pid_t) atoi (buf);
}

void
brig_keeper_remove (int pooldirfd)
{
  _cleanup_close_ int fd = openat (pooldirfd, LEASES, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  DIR *d = fd >= 0 ? fdopendir (dup (fd)) : NULL;
  struct dirent *de;

  while (d && (de = readdir (d)))
    if (de->d_name[0] != '.')
      unlinkat (fd, de->d_name, 0);
  if (d)
    closedir (d);
  unlinkat (pooldirfd, LEASES, AT_REMOVEDIR);
  unlinkat (pooldirfd, KEEPER, 0);
}

/* ---- the keeper process ---- */

struct lease {
  char id[256];
  unsigned long long gen;
  uint64_t deadline;
};

/* Every lease in leases/ (at most LEASES_MAX). */
static size_t
read_leases (int dirfd, struct lease *v, size_t max)
{
  _cleanup_close_ int fd = openat (dirfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (brig_steal_fd (fd)) : NULL;
  struct dirent *de;
  size_t n = 0;

  while (d && n < max && (de = readdir (d)))
    {
      _cleanup_free_ char *buf = NULL;
      size_t len;
      if (brig_state_check_id (de->d_name, NULL) < 0 || strlen (de->d_name) >= sizeof v[n].id
          || brig_read_file_at (dirfd, de->d_name, &buf, &len, NULL) < 0
          || sscanf (buf, "%llu %llu", &v[n].gen, (unsigned long long *) &v[n].deadline) != 2)
        continue;
      snprintf (v[n].id, sizeof v[n].id, "%s", de->d_name);
      n++;
    }
  if (d)
    closedir (d);
  return n;
}

/* The deadline of lease l passed: kill the member's processes now (the
 * tenancy must still be l's: a pidfd of that init, checked under the
 * lock). */
static void
expire_kill (const struct brig_context *ctx, const struct lease *l)
{
  brig_container *c = NULL;
  struct brig_tenancy t;

  if (brig_container_load (ctx, l->id, BRIG_LOCK_SHARED, &c, NULL) == 0)
    {
      if (brig_tenancy_read (c->dirfd, &t) == 0 && t.gen == l->gen
          && t.state == BRIG_TENANCY_TENANT && c->pidfd >= 0)
        syscall (SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0);
      brig_container_free (c);
    }
}

/* ... then release it as `pool release ID --generation GEN` does, in a
 * child (re-executed from the read-only mount, as every brig command):
 * its pid, or -1. */
static pid_t
expire_release (const struct brig_context *ctx, const struct lease *l)
{
  pid_t pid = fork ();

  if (pid == 0)
    {
      char gen[32];
      const char *argv[16];
      int n = 0;
      snprintf (gen, sizeof gen, "%llu", l->gen);
      argv[n++] = "brig";
      argv[n++] = "--root";
      argv[n++] = ctx->state_root;
      if (ctx->systemd_cgroup)
        argv[n++] = "--systemd-cgroup";
      if (ctx->policy)
        {
          argv[n++] = "--policy";
          argv[n++] = ctx->policy;
        }
      if (ctx->userns_range)
        {
          argv[n++] = "--userns-range";
          argv[n++] = ctx->userns_range;
        }
      argv[n++] = "pool";
      argv[n++] = "release";
      argv[n++] = l->id;
      argv[n++] = "--generation";
      argv[n++] = gen;
      argv[n] = NULL;
      sigset_t none;
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      execv ("/proc/self/exe", (char *const *) argv);
      _exit (127);
    }
  return pid;
}

/* A release that ended: its lease goes, unless a renew wrote a new one
 * meanwhile (the release removes it itself; not when it found another
 * tenancy). */
static void
released (int leases, const struct lease *l)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  unsigned long long gen, dl;

  if (brig_read_file_at (leases, l->id, &buf, &len, NULL) == 0
      && sscanf (buf, "%llu %llu", &gen, &dl) == 2 && gen == l->gen && dl == l->deadline)
    unlinkat (leases, l->id, 0);
}

/* The releases running, by pid. */
struct pending {
  pid_t pid[64];
  struct lease l[64];
  size_t n;
};

static bool
pending_has (const struct pending *p, const char *id)
{
  for (size_t i = 0; i < p->n; i++)
    if (strcmp (p->l[i].id, id) == 0)
      return true;
  return false;
}

/* Reap the releases that ended (all of them with wait: the table is full). */
static void
pending_reap (struct pending *p, int leases, bool wait)
{
  pid_t pid;

  while (p->n && (pid = waitpid (-1, NULL, wait ? 0 : WNOHANG)) > 0)
    {
      wait = false;
      for (size_t i = 0; i < p->n; i++)
        if (p->pid[i] == pid)
          {
            released (leases, &p->l[i]);
            p->pid[i] = p->pid[p->n - 1];
            p->l[i] = p->l[p->n - 1];
            p->n--;
            break;
          }
    }
}

/* One pass: every due lease's member killed, then released in parallel;
 * the next deadline (0: none). */
static uint64_t
keeper_pass (const struct brig_context *ctx, int leases, struct lease *v, size_t n,
             struct pending *p, uint64_t now)
{
  uint64_t next = 0;

  for (size_t i = 0; i < n; i++)
    if (v[i].deadline <= now && !pending_has (p, v[i].id))
      expire_kill (ctx, &v[i]);
    else if (v[i].deadline > now && (next == 0 || v[i].deadline < next))
      next = v[i].deadline;
  for (size_t i = 0; i < n; i++)
    if (v[i].deadline <= now && !pending_has (p, v[i].id))
      {
        if (p->n == BRIG_ARRAY_SIZE (p->pid))
          pending_reap (p, leases, true);
        pid_t pid = expire_release (ctx, &v[i]);
        if (pid > 0)
          {
            p->pid[p->n] = pid;
            p->l[p->n++] = v[i];
          }
      }
  return next;
}

/* Wait for deadlines until leases/ is empty for KEEPER_IDLE_NS or gone:
 * a timerfd at the earliest deadline, inotify on leases/, a signalfd for
 * the releases' ends. */
static void
keeper_loop (const struct brig_context *ctx, int leases)
{
  struct lease *v = xmalloc0 (LEASES_MAX * sizeof *v);
  struct pending *p = xmalloc0 (sizeof *p);
  int ep = epoll_create1 (EPOLL_CLOEXEC);
  int tfd = timerfd_create (CLOCK_BOOTTIME, TFD_CLOEXEC | TFD_NONBLOCK);
  int in = inotify_init1 (IN_CLOEXEC | IN_NONBLOCK);
  int sfd;
  struct epoll_event ev = { .events = EPOLLIN };
  sigset_t chld;
  char path[64];
  uint64_t idle_since = now_ns ();

  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  sigprocmask (SIG_BLOCK, &chld, NULL);
  sfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  snprintf (path, sizeof path, "/proc/self/fd/%d", leases);
  if (ep < 0 || tfd < 0 || in < 0 || sfd < 0
      || inotify_add_watch (in, path, IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF
                                      | IN_MOVED_FROM) < 0)
    return;
  int fds[3] = { tfd, in, sfd };
  for (int i = 0; i < 3; i++)
    {
      ev.data.fd = fds[i];
      epoll_ctl (ep, EPOLL_CTL_ADD, fds[i], &ev);
    }
  for (;;)
    {
      struct epoll_event got[3];
      char buf[4096] __attribute__ ((aligned (8)));
      size_t n;
      uint64_t next, now, x;
      struct stat st;

      pending_reap (p, leases, false);
      n = read_leases (leases, v, LEASES_MAX);
      now = now_ns ();
      next = keeper_pass (ctx, leases, v, n, p, now);
      if (n || p->n)
        idle_since = now;
      if (fstat (leases, &st) < 0 || st.st_nlink == 0)
        break;
      if (n == 0 && p->n == 0 && now - idle_since >= KEEPER_IDLE_NS)
        break;
      if (next == 0)
        next = idle_since + KEEPER_IDLE_NS;
      struct itimerspec its = { .it_value = { (time_t) (next / 1000000000ull),
                                              (long) (next % 1000000000ull) } };
      timerfd_settime (tfd, TFD_TIMER_ABSTIME, &its, NULL);
      if (epoll_wait (ep, got, 3, -1) < 0 && errno != EINTR)
        break;
      while (read (in, buf, sizeof buf) > 0 || read (sfd, buf, sizeof buf) > 0
             || read (tfd, &x, sizeof x) > 0)
        ;
    }
  pending_reap (p, leases, true);
  free (p);
  free (v);
}

/* In the grandchild: a process of its own (session, no fd of its caller
 * but the lock), then the loop. */
static _Noreturn void
keeper_main (const struct brig_context *ctx0, const char *pool, int lockfd)
{
  struct brig_context ctx = *ctx0;
  _cleanup_free_ char *dir = NULL;
  char pid[32];
  int leases, null;

  setsid ();
  /* nothing of the caller's: its pipes (command substitution returns at
   * once), its pool and state locks */
  if (lockfd != 3)
    {
      dup2 (lockfd, 3);
      lockfd = 3;
    }
  syscall (SYS_close_range, 4, ~0U, 0);
  null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3; fd++)
    dup2 (null >= 0 ? null : fd, fd);
  if (null > 2)
    close (null);
  prctl (PR_SET_NAME, "brig-keeper", 0, 0, 0);
  prctl (PR_SET_TIMERSLACK, 1000, 0, 0, 0);
  {
    int fd = open ("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
      {
        if (write (fd, "-999", 4) < 0)
          {
            /* not allowed: an ordinary process, then */
          }
        close (fd);
      }
  }
  signal (SIGPIPE, SIG_IGN);
  signal (SIGCHLD, SIG_DFL); /* its releases are waited for */
  snprintf (pid, sizeof pid, "%d\n", (int) getpid ());
  if (ftruncate (lockfd, 0) == 0 && pwrite (lockfd, pid, strlen (pid), 0) < 0)
    _exit (1);
  dir = pool_path (&ctx, pool, LEASES);
  leases = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (leases >= 0)
    keeper_loop (&ctx, leases);
  _exit (0);
}

void
brig_keeper_ensure (const struct brig_context *ctx, const char *pool)
{
  _cleanup_free_ char *path = pool_path (ctx, pool, KEEPER);
  _cleanup_free_ char *dir = NULL;
  _cleanup_close_ int fd = -1;
  struct lease one;
  pid_t child;

  fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT)
    {
      /* never leased: nothing to start (one failed open for a plain pool) */
      dir = pool_path (ctx, pool, LEASES);
      if (access (dir, F_OK) < 0)
        return;
      fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    }
  if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
    return; /* a keeper holds it */
  free (dir);
  dir = pool_path (ctx, pool, LEASES);
  {
    _cleanup_close_ int lfd = open (dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (lfd < 0 || read_leases (lfd, &one, 1) == 0)
      return;
  }
  child = fork ();
  if (child == 0)
    {
      if (fork () == 0)
        keeper_main (ctx, pool, fd);
      _exit (0);
    }
  if (child > 0)
    while (waitpid (child, NULL, 0) < 0 && errno == EINTR)
      ;
}
