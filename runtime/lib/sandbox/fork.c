/* brig fork SOURCE NEW...: each NEW is created from SOURCE's saved config,
 * and its ephemeral layer starts as a copy of SOURCE's, taken while SOURCE
 * is frozen so that the copy is one moment of it. SOURCE goes on running.
 *
 * The creates run in parallel, one forked worker each (as pool fill's
 * members: the new init is a clone of its worker and must not hold this
 * process's fds, stdio or SOURCE's lock). Each create stops at the layer
 * seed step (container.h's seed: the init has made its layer's empty upper
 * directory and waits before mounting the overlay) and tells this process
 * so; once every worker is there, SOURCE is frozen, every worker copies
 * (layer_copy.c, in a helper placed in the NEW's cgroups so the pages are
 * the NEW's), SOURCE is thawed, and the creates finish.
 *
 * Processes are not copied: that needs criu, which cannot run on the
 * kernels brig is tested on. The seed step is where a restore would go. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/container.h"
#include "container/state.h"
#include "log.h"
#include "sandbox/ephemeral.h"
#include "sandbox/extension.h"
#include "sandbox/fork.h"
#include "sandbox/layer_copy.h"
#include "utils.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* What a worker needs to reach SOURCE's upper after its init exists. */
struct fork_source {
  const char *id;
  char *bundle;
  char *config;            /* SOURCE's saved config.json */
  size_t config_len;
  char *disk_upper;        /* the disk layer's path, or NULL */
  int upper_fd;            /* tmpfs: the number of pid 1's fd of the upper */
  pid_t pid;
  unsigned long long start;
  struct brig_idmaps maps; /* SOURCE's id maps */
};

/* One worker's result, in a shared anonymous mapping (no fd for the new
 * init to inherit). */
struct slot {
  int r;
  int code;
  double ready_ms, go_ms, copied_ms, done_ms; /* since the worker started */
  char msg[2048];
};

struct worker {
  double t0;
  const struct fork_source *src;
  const char *id;
  pid_t pid;
  int up[2];    /* worker -> fork: 'R' at the seed step, then 'C' or 'E' */
  int down[2];  /* fork -> worker: 'G' (SOURCE frozen) or 'A' (abort) */
  struct slot *slot;
};

/* ---- in the worker ---- */

/* The NEW's config: SOURCE's as saved, in its own cgroup. */
static int
fork_edit_config (struct oci_config *cfg, void *data, brig_error *err)
{
  const struct worker *w = data;
  oci_error perr = { NULL };
  oci_config *saved = oci_config_parse_data (w->src->config, w->src->config_len,
                                             "config.json", &perr), tmp;

  if (saved == NULL)
    {
      int r = brig_error_say (err, EINVAL, "container \"%s\": its saved %s", w->src->id,
                              perr.msg ? perr.msg : "config.json is invalid");
      free (perr.msg);
      return r;
    }
  tmp = *cfg;
  *cfg = *saved;
  *saved = tmp;
  oci_config_free (saved);
  if (cfg->linux && cfg->linux->cgroups_path && *cfg->linux->cgroups_path)
    {
      char *path = xasprintf ("%s-%s", cfg->linux->cgroups_path, w->id);
      free (cfg->linux->cgroups_path);
      cfg->linux->cgroups_path = path;
    }
  return 0;
}

/* SOURCE's upper, opened only now: the NEW's init (cloned before) never
 * holds it. */
static int
open_source_upper (const struct fork_source *s, brig_error *err)
{
  unsigned long long start = 0;
  struct statfs sf;
  struct stat st;
  int pidfd, fd;

  if (s->disk_upper)
    {
      fd = open (s->disk_upper, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      return fd < 0 ? brig_error_errno (err, "open %s", s->disk_upper) : fd;
    }
  pidfd = (int) syscall (SYS_pidfd_open, s->pid, 0);
  if (pidfd < 0)
    return brig_error_errno (err, "container \"%s\": its init", s->id);
  /* the pid is the init's only with its start time */
  if (brig_proc_stat (s->pid, NULL, &start) < 0 || start != s->start)
    {
      close (pidfd);
      return brig_error_say (err, ESRCH, "container \"%s\": its init exited", s->id);
    }
  fd = (int) syscall (SYS_pidfd_getfd, pidfd, s->upper_fd, 0);
  if (fd < 0)
    brig_error_errno (err, "container \"%s\": take its layer's upper directory from its "
                      "pid 1 (fd %d)", s->id, s->upper_fd);
  close (pidfd);
  if (fd < 0)
    return -errno;
  /* what pid 1 keeps there is the tenant's own tmpfs, a directory: anything
   * else (an init that is not brig's pid 1 yet) is not copied */
  if (fstatfs (fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC || fstat (fd, &st) < 0
      || !S_ISDIR (st.st_mode))
    {
      close (fd);
      return brig_error_say (err, EBADF, "container \"%s\": its pid 1's fd %d is not the "
                             "ephemeral layer's upper directory", s->id, s->upper_fd);
    }
  return fd;
}

/* The copy's helper: a child placed in the NEW's memory cgroup (its pages
 * are charged to the NEW, and the layer's size= bounds it), made and
 * placed before SOURCE is frozen (the cgroup move waits for an RCU grace
 * period on a v1 host), which copies when told. */
struct helper {
  pid_t pid;
  int go;   /* -> helper: 'G' */
  int res;  /* <- helper: 'r' (ready), then an int code and a message */
};

static void
helper_main (const struct worker *w, int upper, const struct brig_idmaps *to, brig_cgroup *cg,
             int go, int res)
{
  brig_error e = { 0 };
  char b = 0;
  int r = cg ? brig_cgroup_enter_memory (cg, getpid (), &e) : 0, src = -1;

  if (r == 0 && (src = open_source_upper (w->src, &e)) < 0)
    r = src;
  if (write (res, r == 0 ? "r" : "e", 1) != 1)
    _exit (2);
  if (r == 0 && (read (go, &b, 1) != 1 || b != 'G'))
    _exit (3);
  if (r == 0)
    r = brig_layer_copy (src, upper, &w->src->maps, to, &e);
  if (write (res, &e.code, sizeof e.code) < 0
      || write (res, e.msg ? e.msg : "", e.msg ? strlen (e.msg) : 0) < 0)
    _exit (2);
  _exit (r < 0 ? 1 : 0);
}

/* The helper's result: 0, or its error. */
static int
helper_wait (struct helper *h, brig_error *err)
{
  char msg[2048];
  int code = 0, status = 0;
  ssize_t n;

  /* first: a helper still waiting for its go reads EOF and exits */
  close (h->go);
  if (read (h->res, &code, sizeof code) != (ssize_t) sizeof code)
    code = 0;
  n = read (h->res, msg, sizeof msg - 1);
  msg[n > 0 ? n : 0] = '\0';
  close (h->res);
  while (waitpid (h->pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  return brig_error_set_raw (err, code ? code : EIO, msg[0] ? msg : "the copy failed");
}

static int
helper_start (const struct worker *w, int upper, pid_t init, brig_cgroup *cg, struct helper *h,
              brig_error *err)
{
  struct brig_idmaps *to = xmalloc0 (sizeof *to);
  int go[2] = { -1, -1 }, res[2] = { -1, -1 }, r;
  char b = 0;

  r = brig_idmaps_read (init, to, err);
  if (r == 0 && (pipe2 (go, O_CLOEXEC) < 0 || pipe2 (res, O_CLOEXEC) < 0))
    r = brig_error_errno (err, "pipe");
  if (r == 0 && (h->pid = fork ()) == 0)
    {
      close (go[1]);
      close (res[0]);
      helper_main (w, upper, to, cg, go[0], res[1]);
    }
  free (to);
  if (r == 0 && h->pid < 0)
    r = brig_error_errno (err, "fork");
  close (go[0]);
  close (res[1]);
  h->go = go[1];
  h->res = res[0];
  if (r < 0)
    {
      close (h->go);
      close (h->res);
      return r;
    }
  /* placed, and SOURCE's upper open: ready to copy */
  if (read (h->res, &b, 1) == 1 && b == 'r')
    return 0;
  return helper_wait (h, err);
}

/* container.h's seed: the helper ready, say so, wait for SOURCE to be
 * frozen, copy. */
static int
fork_seed (int upper, pid_t init, brig_cgroup *cg, void *data, brig_error *err)
{
  const struct worker *w = data;
  struct helper h;
  char go = 0;
  int r = helper_start (w, upper, init, cg, &h, err);

  if (r < 0)
    return brig_error_wrap (err, "copy the layer of \"%s\"", w->src->id);
  w->slot->ready_ms = brig_mono_ms_f () - w->t0;
  if (write (w->up[1], "R", 1) != 1 || read (w->down[0], &go, 1) != 1 || go != 'G')
    {
      helper_wait (&h, NULL); /* EOF on its go: it exits */
      return brig_error_say (err, ECANCELED, "fork of \"%s\" given up (SOURCE was not frozen)",
                             w->src->id);
    }
  w->slot->go_ms = brig_mono_ms_f () - w->t0;
  r = write (h.go, "G", 1) == 1 ? helper_wait (&h, err)
                                 : (helper_wait (&h, NULL), brig_error_errno (err, "copy"));
  w->slot->copied_ms = brig_mono_ms_f () - w->t0;
  if (write (w->up[1], r == 0 ? "C" : "E", 1) != 1 && r == 0)
    r = brig_error_errno (err, "tell brig fork");
  if (r < 0)
    brig_error_wrap (err, "copy the layer of \"%s\"", w->src->id);
  return r;
}

static void
worker_main (const struct brig_context *ctx, struct worker *w, struct worker *all, size_t n)
{
  struct brig_create_opts o = {
    .id = w->id, .bundle = w->src->bundle,
    .edit_config = fork_edit_config, .edit_data = w,
    .seed = fork_seed, .seed_data = w,
  };
  brig_error e = { 0 };
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);

  /* The NEW's init (brig's pid 1 may keep its pages for the container's
   * life) must not map the results of every worker. */
  madvise (all[0].slot, n * sizeof (struct slot), MADV_DONTFORK);
  /* Only its own ends: the NEW's init is a clone of this process. */
  for (size_t i = 0; i < n; i++)
    {
      if (&all[i] != w)
        {
          close (all[i].up[1]);
          close (all[i].down[0]);
        }
      close (all[i].up[0]);
      close (all[i].down[1]);
    }
  if (null >= 0)
    for (int fd = 0; fd < 3; fd++)
      dup2 (null, fd);
  w->t0 = brig_mono_ms_f ();
  w->slot->r = brig_container_create (ctx, &o, &e);
  w->slot->done_ms = brig_mono_ms_f () - w->t0;
  w->slot->code = e.code;
  snprintf (w->slot->msg, sizeof w->slot->msg, "%s", e.msg ? e.msg : "failed without a message");
  _exit (w->slot->r < 0 ? 1 : 0);
}

/* ---- in brig fork ---- */

/* The number of brig's pid 1's fd of the tmpfs layer's upper, recorded
 * in state.json (brig.rootfs.upperFd); -ENOENT without brig's pid 1. */
static int
tmpfs_upper (const oci_rootfs_state *eph, int *fd)
{
  *fd = eph->has_upper_fd ? eph->upper_fd : -1;
  return *fd >= 0 ? 0 : -ENOENT;
}

/* Refuse what cannot be forked, before anything exists. */
static int
check_ids (const char *source, char *const *ids, size_t n, const struct brig_context *ctx,
           brig_error *err)
{
  _cleanup_close_ int root = open (ctx->state_root, O_PATH | O_DIRECTORY | O_CLOEXEC);

  if (n == 0)
    return brig_error_say (err, EINVAL, "fork: name at least one new container");
  for (size_t i = 0; i < n; i++)
    {
      if (brig_state_check_id (ids[i], err) < 0)
        return -EINVAL;
      if (strcmp (ids[i], source) == 0)
        return brig_error_say (err, EEXIST, "container \"%s\" already exists (it is the source)",
                               ids[i]);
      for (size_t j = 0; j < i; j++)
        if (strcmp (ids[i], ids[j]) == 0)
          return brig_error_say (err, EINVAL, "fork: \"%s\" is named twice", ids[i]);
      if (root >= 0 && faccessat (root, ids[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return brig_error_say (err, EEXIST, "container \"%s\" already exists", ids[i]);
    }
  return 0;
}

/* What SOURCE must be: running (or created, or paused) with an ephemeral
 * layer brig can reach, and a cgroup of its own to freeze. */
static int
load_source (const struct brig_context *ctx, brig_container *c, struct fork_source *s,
             brig_error *err)
{
  const struct brig_ext_state *x = c->st.ext;
  const oci_rootfs_state *eph = x ? x->ephemeral : NULL;
  int r;

  if (c->status != BRIG_STATUS_RUNNING && c->status != BRIG_STATUS_CREATED
      && c->status != BRIG_STATUS_PAUSED)
    return brig_error_say (err, EINVAL, "fork: container \"%s\" is %s: only a running, "
                           "created or paused container can be forked", c->id,
                           brig_status_name (c->status));
  if (eph == NULL || eph->mode == NULL)
    return brig_error_say (err, EINVAL, "fork: container \"%s\" has no ephemeral root "
                           "(annotation " BRIG_EPHEMERAL_KEY "=true): its writable state is "
                           "the bundle's own rootfs, which a fork cannot copy apart", c->id);
  s->id = c->id;
  s->pid = c->st.pid;
  s->start = c->st.pid_start_time;
  s->bundle = xstrdup (c->st.bundle);
  if (strcmp (eph->mode, "disk") == 0 && eph->upper)
    s->disk_upper = xasprintf ("%s/%s/" BRIG_EPHEMERAL_DIR "/upper", ctx->state_root, c->id);
  else if (c->status == BRIG_STATUS_CREATED)
    return brig_error_say (err, EINVAL, "fork: container \"%s\" is created, not started: "
                           "the tmpfs layer is reached through brig's pid 1 "
                           "(run.brig.init), which holds it once the container is started",
                           c->id);
  else if ((r = tmpfs_upper (eph, &s->upper_fd)) < 0)
    return brig_error_say (err, EINVAL, "fork: container \"%s\": brig fork needs "
                           "run.brig.init to reach the tmpfs layer of a running container "
                           "(the layer exists only inside its mount namespace, where brig's "
                           "pid 1 keeps it open)", c->id);
  r = brig_read_file_at (c->dirfd, BRIG_STATE_CONFIG, &s->config, &s->config_len, err);
  if (r < 0)
    return brig_error_wrap (err, "fork: container \"%s\"", c->id);
  return brig_idmaps_read (s->pid, &s->maps, err);
}

/* fork.freezing: "PID STARTTIME" of this process, before the freeze. */
static int
mark_freezing (int dirfd, brig_error *err)
{
  unsigned long long start = 0;
  _cleanup_free_ char *text = NULL;

  brig_proc_stat (getpid (), NULL, &start);
  text = xasprintf ("%d %llu\n", (int) getpid (), start);
  return brig_write_file_atomic (dirfd, BRIG_FORK_FREEZING, text, strlen (text), 0600, err);
}

static int
read_byte (int fd)
{
  char b;
  ssize_t n;
  while ((n = read (fd, &b, 1)) < 0 && errno == EINTR)
    ;
  return n == 1 ? b : -1;
}

static void
send_all (struct worker *w, size_t n, const bool *ready, char what)
{
  for (size_t i = 0; i < n; i++)
    if (ready[i] && write (w[i].down[1], &what, 1) != 1)
      brig_debug ("fork: worker of %s is gone", w[i].id);
}

/* Every worker at its seed step (or failed before): freeze, let them copy,
 * thaw. 0, or the freeze's error (the workers were told to give up). */
static int
freeze_and_copy (brig_container *c, brig_cgroup *cg, bool paused, struct worker *w, size_t n,
                 brig_error *err)
{
  _cleanup_free_ bool *ready = xmalloc0 (n * sizeof *ready);
  size_t nready = 0;
  double t0, t1;
  int r = 0;

  for (size_t i = 0; i < n; i++)
    if (read_byte (w[i].up[0]) == 'R')
      ready[i] = true, nready++;
  if (nready == 0)
    return 0;
  t0 = brig_mono_ms_f ();
  if (!paused && ((r = mark_freezing (c->dirfd, err)) < 0
                  || (r = brig_cgroup_freeze (cg, true, err)) < 0))
    {
      send_all (w, n, ready, 'A');
      unlinkat (c->dirfd, BRIG_FORK_FREEZING, 0);
      return brig_error_wrap (err, "fork: freeze container \"%s\"", c->id);
    }
  t1 = brig_mono_ms_f ();
  send_all (w, n, ready, 'G');
  for (size_t i = 0; i < n; i++)
    if (ready[i])
      read_byte (w[i].up[0]); /* 'C', 'E', or the worker died */
  if (!paused)
    {
      brig_error e = { 0 };
      if (brig_cgroup_freeze (cg, false, &e) < 0)
        {
          /* left frozen with the marker: the next command that locks it
           * tries again */
          brig_error_set_raw (err, e.code, e.msg);
          brig_error_clear (&e);
          return brig_error_wrap (err, "fork: thaw container \"%s\"", c->id);
        }
      unlinkat (c->dirfd, BRIG_FORK_FREEZING, 0);
    }
  brig_debug ("fork: %s frozen %.2f ms (freeze %.2f ms, copy of %zu layers %.2f ms)", c->id,
              brig_mono_ms_f () - t0, t1 - t0, nready, brig_mono_ms_f () - t1);
  return 0;
}

/* Start the workers; wait for them; the first failure is the error. */
static int
run_workers (const struct brig_context *ctx, brig_container *c, brig_cgroup *cg,
             struct fork_source *s, char *const *ids, size_t n, brig_error *err)
{
  size_t map_len = n * sizeof (struct slot);
  struct slot *slots = mmap (NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                             -1, 0);
  _cleanup_free_ struct worker *w = xmalloc0 (n * sizeof *w);
  int r = 0, failed = -1;

  if (slots == MAP_FAILED)
    return brig_error_errno (err, "mmap");
  for (size_t i = 0; i < n; i++)
    {
      w[i] = (struct worker) { .src = s, .id = ids[i], .pid = -1, .up = { -1, -1 },
                               .down = { -1, -1 }, .slot = &slots[i] };
      slots[i].r = -EINTR;
      snprintf (slots[i].msg, sizeof slots[i].msg, "the create was killed");
      if (pipe2 (w[i].up, O_CLOEXEC) < 0 || pipe2 (w[i].down, O_CLOEXEC) < 0)
        r = brig_error_errno (err, "pipe");
    }
  fflush (stdout);
  fflush (stderr);
  for (size_t i = 0; r == 0 && i < n; i++)
    {
      w[i].pid = fork ();
      if (w[i].pid == 0)
        {
          close (c->dirfd);
          if (c->pidfd >= 0)
            close (c->pidfd);
          worker_main (ctx, &w[i], w, n);
        }
      if (w[i].pid < 0)
        r = brig_error_errno (err, "fork");
    }
  for (size_t i = 0; i < n; i++)
    {
      close (w[i].up[1]);
      close (w[i].down[0]);
    }
  if (r == 0)
    r = freeze_and_copy (c, cg, c->status == BRIG_STATUS_PAUSED, w, n, err);
  for (size_t i = 0; i < n; i++)
    {
      int status;
      close (w[i].down[1]); /* EOF: a worker still waiting gives up */
      if (w[i].pid > 0)
        while (waitpid (w[i].pid, &status, 0) < 0 && errno == EINTR)
          ;
      close (w[i].up[0]);
      brig_debug ("fork: %s: at the seed step %.2f ms, copying %.2f-%.2f ms, created %.2f ms",
                  ids[i], slots[i].ready_ms, slots[i].go_ms, slots[i].copied_ms,
                  slots[i].done_ms);
      if (slots[i].r < 0 && failed < 0)
        failed = (int) i;
    }
  if (r == 0 && failed >= 0)
    {
      r = brig_error_set_raw (err, slots[failed].code ? slots[failed].code : EIO,
                              slots[failed].msg);
      brig_error_wrap (err, "fork: create \"%s\"", ids[failed]);
    }
  if (r < 0)
    for (size_t i = 0; i < n; i++)
      if (slots[i].r == 0)
        brig_container_delete (ctx, ids[i], true, NULL);
  munmap (slots, map_len);
  return r;
}

int
brig_fork (const struct brig_context *ctx, const char *source, char *const *ids, size_t n,
           brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  struct fork_source *s = xmalloc0 (sizeof *s);
  brig_cgroup *cg = NULL;
  double t0 = brig_mono_ms_f ();
  int r;

  s->upper_fd = -1;
  r = check_ids (source, ids, n, ctx, err);
  /* Locked for the whole fork: no exec, cp, reset or delete of SOURCE
   * meanwhile (and the recovery of a killed fork's freeze ran). */
  if (r == 0)
    r = brig_container_load (ctx, source, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r == 0)
    r = load_source (ctx, c, s, err);
  if (r == 0 && (r = brig_container_cgroup (c, &cg, err)) == 0 && cg == NULL)
    r = brig_error_say (err, EINVAL, "fork: container \"%s\" has no cgroup to freeze", source);
  if (r == 0 && brig_cgroup_is_shared (cg))
    r = brig_error_say (err, EINVAL, "fork: container \"%s\": its cgroup is shared (annotation "
                        BRIG_CGROUP_SHARED_ANNOTATION "): freezing it would stop processes "
                        "that are not the container's", source);
  if (r == 0)
    r = run_workers (ctx, c, cg, s, ids, n, err);
  brig_debug ("fork: %s into %zu: %.2f ms", source, n, brig_mono_ms_f () - t0);
  if (cg)
    brig_cgroup_free (cg);
  free (s->bundle);
  free (s->config);
  free (s->disk_upper);
  free (s);
  return r;
}

void
brig_fork_recover_freeze (const struct brig_context *ctx, struct brig_container *c)
{
  _cleanup_free_ char *text = NULL;
  unsigned long long start = 0, now = 0;
  brig_cgroup *cg = NULL;
  brig_error e = { 0 };
  int pid = 0;

  (void) ctx;
  if (faccessat (c->dirfd, BRIG_FORK_FREEZING, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    return;
  if (brig_read_file_at (c->dirfd, BRIG_FORK_FREEZING, &text, NULL, NULL) == 0
      && sscanf (text, "%d %llu", &pid, &start) == 2 && pid > 0
      && brig_proc_stat (pid, NULL, &now) == 0 && now == start)
    return; /* that fork is alive (it cannot be: it holds the lock) */
  if (brig_container_cgroup (c, &cg, &e) == 0 && cg
      && brig_cgroup_freeze (cg, false, &e) == 0)
    {
      unlinkat (c->dirfd, BRIG_FORK_FREEZING, 0);
      brig_debug ("container \"%s\": thawed after a fork that died while it was frozen",
                  c->id);
    }
  else
    brig_warn ("container \"%s\": a fork died while it was frozen, and the thaw failed: %s",
               c->id, e.msg ? e.msg : "no cgroup");
  if (cg)
    brig_cgroup_free (cg);
  brig_error_clear (&e);
}
