/* brig pool: fill, claim, release, status, drain (pool.h for the layout,
 * docs/sandbox.md "Pools" for the design and the threat model). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "container/container.h"
#include "log.h"
#include "ocispec.h"
#include "process/reaper.h"
#include "sandbox/pool.h"
#include "sandbox/pool_internal.h"
#include "sandbox/ephemeral.h"
#include "sandbox/reset.h"
#include "container/state.h"
#include "container/tenancy.h"
#include "utils.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* What h1's reset reads to keep the network namespace across resets. */
#define POOL_RESET_KEY "run.brig.reset"
#define POOL_SUFFIX_LEN 12

static const char *const state_dirs[BRIG_POOL_NSTATES] = {
  "creating", "available", "claimed", "releasing",
};

const char *
brig_pool_state_name (enum brig_pool_state s)
{
  return s < BRIG_POOL_NSTATES ? state_dirs[s] : "unknown";
}

int
brig_pool_check_name (const char *name, brig_error *err)
{
  if (name == NULL || strlen (name) > 128 || brig_state_check_id (name, NULL) < 0)
    return brig_error_say (err, EINVAL, "invalid pool name \"%.128s\": [A-Za-z0-9_+.-], at "
                           "most 128 characters, not \".\" or \"..\"", name ? name : "");
  return 0;
}

/* One pool, opened: the directory (holding the flock) and its four state
 * directories. */
struct pool {
  const char *name;
  int dirfd;
  int sub[BRIG_POOL_NSTATES];
};

static void
pool_close (struct pool *p)
{
  if (p->dirfd >= 0)
    close (p->dirfd);
  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    if (p->sub[i] >= 0)
      close (p->sub[i]);
  p->dirfd = -1;
  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    p->sub[i] = -1;
}

static void
pool_closep (struct pool *p)
{
  pool_close (p);
}
#define _cleanup_pool_ __attribute__ ((cleanup (pool_closep)))

static int
no_pool (const char *name, brig_error *err)
{
  return brig_error_say (err, ENOENT, "pool \"%s\" does not exist", name);
}

/* Open pool name with lock op (LOCK_SH, LOCK_EX); create: make what is
 * missing (fill). A pool drain removed while we waited for the lock is
 * made again (create) or does not exist. */
static int
pool_open (const struct brig_context *ctx, const char *name, bool create, int op, struct pool *p,
           brig_error *err)
{
  _cleanup_close_ int rootfd = -1;
  int r;

  p->name = name;
  p->dirfd = -1;
  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    p->sub[i] = -1;
  r = brig_pool_check_name (name, err);
  if (r < 0)
    return r;
  if (create)
    {
      r = brig_state_root_open (ctx, true, &rootfd, err);
      if (r < 0)
        return r;
    }
  else
    {
      rootfd = open (ctx->state_root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
      if (rootfd < 0)
        return errno == ENOENT ? no_pool (name, err)
          : brig_error_errno (err, "open state root %s", ctx->state_root);
    }

  for (int tries = 0; tries < 100; tries++)
    {
      _cleanup_close_ int poolsfd = -1;
      struct stat st;

      if (create && mkdirat (rootfd, BRIG_POOL_DIR, 0700) < 0 && errno != EEXIST)
        return brig_error_errno (err, "create %s/" BRIG_POOL_DIR, ctx->state_root);
      poolsfd = openat (rootfd, BRIG_POOL_DIR, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (poolsfd < 0 && errno == ENOENT)
        {
          if (!create)
            return no_pool (name, err);
          continue; /* a drain removed it meanwhile */
        }
      if (poolsfd < 0)
        return brig_error_errno (err, "open %s/" BRIG_POOL_DIR, ctx->state_root);
      if (create && mkdirat (poolsfd, name, 0700) < 0 && errno != EEXIST)
        {
          if (errno == ENOENT)
            continue;
          return brig_error_errno (err, "create pool directory %s/" BRIG_POOL_DIR "/%s",
                                   ctx->state_root, name);
        }
      p->dirfd = openat (poolsfd, name, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (p->dirfd < 0 && errno == ENOENT)
        {
          if (!create)
            return no_pool (name, err);
          continue;
        }
      if (p->dirfd < 0)
        return brig_error_errno (err, "open pool directory %s/" BRIG_POOL_DIR "/%s",
                                 ctx->state_root, name);
      while (flock (p->dirfd, op) < 0)
        if (errno != EINTR)
          return brig_error_errno (err, "lock pool \"%s\"", name);
      if (fstat (p->dirfd, &st) < 0)
        return brig_error_errno (err, "pool \"%s\"", name);
      if (st.st_nlink > 0)
        break;
      /* drained while we waited for the lock */
      close (p->dirfd);
      p->dirfd = -1;
      if (!create)
        return no_pool (name, err);
    }
  if (p->dirfd < 0)
    return brig_error_say (err, EAGAIN, "pool \"%s\": drained again and again while opening",
                           name);

  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    {
      if (create && mkdirat (p->dirfd, state_dirs[i], 0700) < 0 && errno != EEXIST)
        return brig_error_errno (err, "pool \"%s\": create %s", name, state_dirs[i]);
      p->sub[i] = openat (p->dirfd, state_dirs[i], O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (p->sub[i] < 0)
        {
          if (errno == ENOENT && !create)
            return no_pool (name, err);
          return brig_error_errno (err, "pool \"%s\": open %s", name, state_dirs[i]);
        }
    }
  return 0;
}

/* The entries of a state directory that can be member ids (sorted). */
static int
list_dir (int dirfd, char ***out, size_t *n, brig_error *err)
{
  char buf[8192] __attribute__ ((aligned (8)));
  _cleanup_close_ int fd = openat (dirfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  char **v = xmalloc0 (sizeof (char *));
  long got;

  *n = 0;
  if (fd < 0)
    {
      free (v);
      return brig_error_errno (err, "open a pool directory");
    }
  while ((got = syscall (SYS_getdents64, fd, buf, sizeof buf)) > 0)
    for (long off = 0; off < got;)
      {
        struct dirent64 *de = (struct dirent64 *) (buf + off);
        off += de->d_reclen;
        if (brig_state_check_id (de->d_name, NULL) < 0)
          continue;
        v = xrealloc (v, (*n + 2) * sizeof (char *));
        v[(*n)++] = xstrdup (de->d_name);
        v[*n] = NULL;
      }
  if (got < 0)
    {
      brig_strv_free (v);
      return brig_error_errno (err, "read a pool directory");
    }
  *out = v;
  return 0;
}

/* Move member id from one state to another; only one caller can. */
static int
pool_move (struct pool *p, const char *id, enum brig_pool_state from, enum brig_pool_state to)
{
  if (renameat2 (p->sub[from], id, p->sub[to], id, RENAME_NOREPLACE) < 0)
    return -errno;
  return 0;
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

/* The pool of member id: what precedes "-<12 hex>" at its end. */
static char *
pool_of (const char *id, brig_error *err)
{
  const char *dash = id ? strrchr (id, '-') : NULL;

  if (dash && dash != id && strlen (dash + 1) == POOL_SUFFIX_LEN
      && strspn (dash + 1, "0123456789abcdef") == POOL_SUFFIX_LEN)
    return strndup (id, (size_t) (dash - id));
  brig_error_say (err, EINVAL, "\"%s\" is not the id of a pool member (NAME-<12 hex digits>)",
                  id ? id : "");
  return NULL;
}

static void
delete_quietly (const struct brig_context *ctx, const char *id)
{
  brig_error e = { 0 };
  if (brig_container_delete (ctx, id, true, &e) < 0 && e.code != ENOENT)
    brig_warn ("pool: delete member \"%s\": %s", id, e.msg ? e.msg : "failed");
  brig_error_clear (&e);
}

/* Remove the pool's directories (they must be empty) and, with the last
 * pool, ROOT/@pools. */
static int
pool_remove (const struct brig_context *ctx, struct pool *p, brig_error *err)
{
  _cleanup_close_ int rootfd = -1, poolsfd = -1;

  unlinkat (p->dirfd, "bundle", 0);
  for (int s = 0; s < BRIG_POOL_NSTATES; s++)
    if (unlinkat (p->dirfd, state_dirs[s], AT_REMOVEDIR) < 0 && errno != ENOENT)
      return brig_error_errno (err, "pool \"%s\": remove %s", p->name, state_dirs[s]);
  rootfd = open (ctx->state_root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (rootfd >= 0)
    poolsfd = openat (rootfd, BRIG_POOL_DIR, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (poolsfd < 0 || unlinkat (poolsfd, p->name, AT_REMOVEDIR) < 0)
    return brig_error_errno (err, "pool \"%s\": remove its directory", p->name);
  unlinkat (rootfd, BRIG_POOL_DIR, AT_REMOVEDIR); /* fails while other pools exist */
  return 0;
}

/* ---- fill ---- */

struct member_edit {
  const char *id;
};

/* Every member gets its own cgroup and opts into what reset keeps; a config
 * whose members would share something writable is refused. */
/* A member serves exec'd work: brig's pid 1 holds it (run.brig.init=hold,
 * process/reaper.h), so a claim hands out a running member whatever the
 * config's process would do, and nothing of the image runs until the
 * tenant asks. Only an explicit "false" keeps the config's process as
 * pid 1, run at claim. */
static int
member_init_mode (oci_config *cfg, brig_error *err)
{
  enum brig_init_mode mode;
  int r = brig_init_mode_parse (cfg->annotations, &mode, err);

  if (r < 0)
    return brig_error_wrap (err, "config.json");
  if (mode == BRIG_INIT_EXEC && oci_map_get (cfg->annotations, BRIG_INIT_KEY))
    return 0;
  if (oci_map_set (&cfg->annotations, BRIG_INIT_KEY, "hold") < 0)
    return brig_error_set (err, ENOMEM, "annotations");
  return 0;
}

static int
member_edit_config (oci_config *cfg, void *data, brig_error *err)
{
  struct member_edit *m = data;
  const char *eph = oci_map_get (cfg->annotations, BRIG_EPHEMERAL_KEY);
  int r;

  if (cfg->process && cfg->process->terminal)
    return brig_error_say (err, EINVAL, "config.json: process.terminal: a pool member "
                           "cannot have a terminal (claim has no console socket to give it)");
  if ((r = member_init_mode (cfg, err)) < 0)
    return r;
  /* Every member of the pool, claimed by different tenants at once, would
   * write the one rootfs of the bundle: a channel between tenants, and
   * what one leaves the next finds. */
  if (!(cfg->root && cfg->root->readonly) && !(eph && strcmp (eph, "true") == 0))
    return brig_error_say (err, EINVAL, "config.json: root.readonly: the members of a pool "
                           "share the bundle's rootfs: make it read-only or set "
                           "the annotation " BRIG_EPHEMERAL_KEY "=true");
  /* What release's reset would refuse, refused before any member exists. */
  if (brig_reset_check_storage (cfg, err) < 0)
    return brig_error_wrap (err, "config.json");
  if (oci_map_set (&cfg->annotations, POOL_RESET_KEY, "true") < 0)
    return brig_error_set (err, ENOMEM, "annotations");
  if (cfg->linux && cfg->linux->cgroups_path && *cfg->linux->cgroups_path)
    {
      /* "/a/b" -> "/a/b-ID", "slice:prefix:name" -> "slice:prefix:name-ID":
       * siblings in the place the bundle chose. */
      char *path = xasprintf ("%s-%s", cfg->linux->cgroups_path, m->id);
      free (cfg->linux->cgroups_path);
      cfg->linux->cgroups_path = path;
    }
  return 0;
}

/* A new member's tenancy: vacant (tenancy.h). */
static int
member_vacate (const struct brig_context *ctx, const char *id, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  int r = brig_container_load (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r == 0)
    r = brig_tenancy_write (c->dirfd, 1, BRIG_TENANCY_VACANT, err);
  return r;
}

/* Record the bundle at the first fill; later fills must name the same. */
static int
fill_bundle (struct pool *p, const char *given, char **out, bool *fresh, brig_error *err)
{
  _cleanup_free_ char *recorded = NULL;
  char abs[PATH_MAX];
  size_t len;
  int r;

  r = brig_read_file_at (p->dirfd, "bundle", &recorded, &len, NULL);
  if (r < 0 && r != -ENOENT)
    return brig_error_set (err, -r, "pool \"%s\": read its bundle record", p->name);
  if (given && realpath (given, abs) == NULL)
    return brig_error_errno (err, "bundle %s", given);
  if (recorded)
    {
      if (given && strcmp (abs, recorded) != 0)
        return brig_error_say (err, EINVAL, "pool \"%s\" holds members of bundle %s, not %s",
                               p->name, recorded, abs);
      *out = brig_steal_ptr (recorded);
      return 0;
    }
  if (given == NULL)
    return brig_error_say (err, EINVAL, "pool \"%s\" is new: --bundle is required", p->name);
  *fresh = true;
  r = brig_write_file_atomic (p->dirfd, "bundle", abs, strlen (abs), 0600, err);
  if (r < 0)
    return brig_error_wrap (err, "pool \"%s\"", p->name);
  *out = xstrdup (abs);
  return 0;
}

/* Members left in releasing/ by a release that was killed (its lock on
 * the entry is gone with it): their reset never finished, or never
 * started, so they are deleted; fill makes new ones in their place. */
static void
pool_reap_releasing (const struct brig_context *ctx, struct pool *p)
{
  _cleanup_strv_ char **ids = NULL;
  size_t n = 0;

  if (list_dir (p->sub[BRIG_POOL_RELEASING], &ids, &n, NULL) < 0)
    return;
  for (size_t i = 0; i < n; i++)
    {
      _cleanup_close_ int fd = openat (p->sub[BRIG_POOL_RELEASING], ids[i],
                                       O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
        continue;   /* gone, or a release is at work on it */
      brig_warn ("pool \"%s\": member %s was left releasing by a release that did not "
                 "finish: deleted", p->name, ids[i]);
      delete_quietly (ctx, ids[i]);
      unlinkat (p->sub[BRIG_POOL_RELEASING], ids[i], 0);
    }
}

int
brig_pool_fill (const struct brig_context *ctx, const char *name, const char *bundle,
                size_t size, char ***made, brig_error *err)
{
  _cleanup_pool_ struct pool p;
  _cleanup_free_ char *abs = NULL;
  _cleanup_strv_ char **stale = NULL, **avail = NULL;
  char **v = xmalloc0 (sizeof (char *));
  size_t nmade = 0, n, navail;
  int fds[1 + BRIG_POOL_NSTATES];
  bool fresh = false;
  int r;

  if (made)
    *made = NULL;
  p.dirfd = -1;
  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    p.sub[i] = -1;
  /* A bundle that does not exist makes no pool either. */
  if (bundle && access (bundle, F_OK) < 0)
    {
      r = brig_error_errno (err, "bundle %s", bundle);
      goto out;
    }
  r = pool_open (ctx, name, true, LOCK_SH, &p, err);
  if (r < 0)
    goto out;
  /* One fill at a time; claims and releases go on meanwhile. */
  while ((r = flock (p.sub[BRIG_POOL_CREATING], LOCK_EX)) < 0 && errno == EINTR)
    ;
  if (r < 0)
    {
      r = brig_error_errno (err, "lock pool \"%s\" for fill", name);
      goto out;
    }
  r = fill_bundle (&p, bundle, &abs, &fresh, err);
  if (r < 0)
    goto out;
  /* Left by a fill that was killed: the container may be half made. */
  r = list_dir (p.sub[BRIG_POOL_CREATING], &stale, &n, err);
  if (r < 0)
    goto out;
  for (size_t i = 0; i < n; i++)
    {
      delete_quietly (ctx, stale[i]);
      unlinkat (p.sub[BRIG_POOL_CREATING], stale[i], 0);
    }
  pool_reap_releasing (ctx, &p);
  r = list_dir (p.sub[BRIG_POOL_AVAILABLE], &avail, &navail, err);
  if (r < 0)
    goto out;

  fds[0] = p.dirfd;
  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    fds[1 + i] = p.sub[i];
  for (size_t k = navail; k < size; k++)
    {
      _cleanup_free_ char *id = NULL;
      int fd = -1;
      for (int tries = 0; tries < 8 && fd < 0; tries++)
        {
          free (id);
          id = member_id (name);
          fd = openat (p.sub[BRIG_POOL_CREATING], id,
                       O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        }
      if (fd < 0)
        {
          r = brig_error_errno (err, "pool \"%s\": record a new member", name);
          goto out;
        }
      close (fd);
      {
        struct member_edit me = { .id = id };
        struct brig_create_opts o = { .id = id, .bundle = abs, .edit_config = member_edit_config,
                                      .edit_data = &me };
        struct pool_child_create a = { ctx, &o };
        r = pool_child_create (&a, fds, BRIG_ARRAY_SIZE (fds), err);
      }
      if (r < 0)
        {
          /* create undoes itself; a child killed half way does not */
          delete_quietly (ctx, id);
          unlinkat (p.sub[BRIG_POOL_CREATING], id, 0);
          brig_error_wrap (err, "pool \"%s\": create member %s", name, id);
          goto out;
        }
      /* Nobody's until a claim: no exec may enter it before. */
      if ((r = member_vacate (ctx, id, err)) < 0
          || (r = pool_move (&p, id, BRIG_POOL_CREATING, BRIG_POOL_AVAILABLE)) < 0)
        {
          if (!(err && err->msg))
            brig_error_set (err, -r, "pool \"%s\": make member %s available", name, id);
          delete_quietly (ctx, id);
          unlinkat (p.sub[BRIG_POOL_CREATING], id, 0);
          goto out;
        }
      v = xrealloc (v, (nmade + 2) * sizeof (char *));
      v[nmade++] = brig_steal_ptr (id);
      v[nmade] = NULL;
    }
  r = 0;
out:
  /* A first fill that made nothing leaves no pool behind. */
  if (r < 0 && fresh && nmade == 0)
    pool_remove (ctx, &p, NULL);
  if (made)
    *made = v;
  else
    brig_strv_free (v);
  return r;
}

/* ---- claim ---- */

/* The member's process exited right after its start: a property of the
 * bundle's config, not of this member, so the next would do the same. It is
 * released (reset, available again), and claim fails naming why. */
static int
claim_exited (const struct brig_context *ctx, struct pool *p, const char *id, brig_error *why,
              brig_error *err)
{
  struct brig_reset_report rep;
  brig_error e = { 0 };

  brig_error_say (err, ECHILD, "pool \"%s\": member %s: %s", p->name, id,
                  why->msg ? why->msg : "its process exited at once");
  brig_error_clear (why);
  /* the new init of the release's reset must not inherit the pool's fds
   * (its lock would hold off drain): release opens the pool itself */
  pool_close (p);
  if (brig_pool_release (ctx, id, &rep, &e) < 0)
    brig_warn ("pool \"%s\": release member %s: %s", p->name, id, e.msg ? e.msg : "failed");
  brig_error_clear (&e);
  brig_reset_report_free (&rep);
  return -ECHILD;
}

int
brig_pool_claim (const struct brig_context *ctx, const char *name, char **out, brig_error *err)
{
  _cleanup_pool_ struct pool p;
  size_t dropped = 0;
  int r;

  *out = NULL;
  r = pool_open (ctx, name, false, LOCK_SH, &p, err);
  if (r < 0)
    return r;
  /* A few passes: a member released while we looked is worth a second
   * look before calling the pool empty. */
  for (int pass = 0; pass < 3; pass++)
    {
      _cleanup_strv_ char **ids = NULL;
      size_t n, start;

      r = list_dir (p.sub[BRIG_POOL_AVAILABLE], &ids, &n, err);
      if (r < 0)
        return r;
      if (n == 0)
        break;
      /* Concurrent claimers start at different members, so that most
       * first renames succeed instead of all racing for the first. */
      start = (size_t) getpid () % n;
      for (size_t k = 0; k < n; k++)
        {
          const char *id = ids[(start + k) % n];
          brig_error e = { 0 };

          r = pool_move (&p, id, BRIG_POOL_AVAILABLE, BRIG_POOL_CLAIMED);
          if (r == -ENOENT)
            continue; /* another claimer took it */
          if (r < 0)
            return brig_error_set (err, -r, "pool \"%s\": claim member %s", name, id);
          /* Ours alone from here. */
          r = brig_container_start_claimed (ctx, id, &e);
          if (r == 0)
            {
              *out = xstrdup (id);
              return 0;
            }
          if (r == -ECHILD)
            return claim_exited (ctx, &p, id, &e, err);
          /* Its init died (OOM, killed) or it was deleted behind the
           * pool's back: not worth handing out; drop it and go on. */
          brig_warn ("pool \"%s\": member %s cannot be started, deleted: %s", name, id,
                     e.msg ? e.msg : "failed");
          brig_error_clear (&e);
          delete_quietly (ctx, id);
          unlinkat (p.sub[BRIG_POOL_CLAIMED], id, 0);
          dropped++;
        }
    }
  if (dropped)
    return brig_error_say (err, EAGAIN, "pool \"%s\" is empty (%zu broken member%s deleted): "
                           "fill it", name, dropped, dropped == 1 ? "" : "s");
  return brig_error_say (err, EAGAIN, "pool \"%s\" is empty: fill it", name);
}

/* ---- release ---- */

int
brig_pool_release (const struct brig_context *ctx, const char *id,
                   struct brig_reset_report *rep, brig_error *err)
{
  _cleanup_pool_ struct pool p;
  _cleanup_free_ char *name = pool_of (id, err);
  _cleanup_close_ int lock = -1;
  int fds[2 + BRIG_POOL_NSTATES];
  int r;

  memset (rep, 0, sizeof *rep);
  if (name == NULL)
    return -EINVAL;
  r = pool_open (ctx, name, false, LOCK_SH, &p, err);
  if (r < 0)
    return r;
  /* Held from before the entry is in releasing/ until the member is
   * available again or deleted: a fill that can take it knows the release
   * was killed (pool_reap_releasing). The lock moves with the entry. */
  lock = openat (p.sub[BRIG_POOL_CLAIMED], id, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (lock >= 0)
    flock (lock, LOCK_EX | LOCK_NB);
  r = pool_move (&p, id, BRIG_POOL_CLAIMED, BRIG_POOL_RELEASING);
  if (r == -ENOENT)
    return brig_error_say (err, ENOENT, "container \"%s\" is not a claimed member of pool \"%s\"",
                           id, name);
  if (r < 0)
    return brig_error_set (err, -r, "pool \"%s\": release %s", name, id);

  fds[0] = p.dirfd;
  for (int i = 0; i < BRIG_POOL_NSTATES; i++)
    fds[1 + i] = p.sub[i];
  fds[1 + BRIG_POOL_NSTATES] = lock;
  r = pool_child_reset (ctx, id, fds, BRIG_ARRAY_SIZE (fds), rep, err);
  if (r == 0 && (r = pool_move (&p, id, BRIG_POOL_RELEASING, BRIG_POOL_AVAILABLE)) < 0)
    brig_error_set (err, -r, "pool \"%s\": make %s available again", name, id);
  if (r < 0)
    {
      /* Never hand out what could not be verified clean. */
      delete_quietly (ctx, id);
      unlinkat (p.sub[BRIG_POOL_RELEASING], id, 0);
      return brig_error_wrap (err, "pool \"%s\": release %s (member deleted)", name, id);
    }
  return 0;
}

/* ---- status, drain ---- */

static int
cmp_member (const void *a, const void *b)
{
  return strcmp (((const struct brig_pool_member *) a)->id,
                 ((const struct brig_pool_member *) b)->id);
}

int
brig_pool_status (const struct brig_context *ctx, const char *name,
                  struct brig_pool_info *info, brig_error *err)
{
  _cleanup_pool_ struct pool p;
  size_t len;
  int r;

  memset (info, 0, sizeof *info);
  r = pool_open (ctx, name, false, LOCK_SH, &p, err);
  if (r < 0)
    return r;
  if (brig_read_file_at (p.dirfd, "bundle", &info->bundle, &len, NULL) < 0)
    info->bundle = NULL;
  for (int s = 0; s < BRIG_POOL_NSTATES; s++)
    {
      _cleanup_strv_ char **ids = NULL;
      size_t n;
      r = list_dir (p.sub[s], &ids, &n, err);
      if (r < 0)
        {
          brig_pool_info_clear (info);
          return r;
        }
      info->members = xrealloc (info->members, (info->n + n + 1) * sizeof *info->members);
      for (size_t i = 0; i < n; i++)
        info->members[info->n++] = (struct brig_pool_member) { brig_steal_ptr (ids[i]),
                                                              (enum brig_pool_state) s };
      info->count[s] = n;
    }
  if (info->n)
    qsort (info->members, info->n, sizeof *info->members, cmp_member);
  return 0;
}

void
brig_pool_info_clear (struct brig_pool_info *info)
{
  for (size_t i = 0; i < info->n; i++)
    free (info->members[i].id);
  free (info->members);
  free (info->bundle);
  memset (info, 0, sizeof *info);
}

int
brig_pool_drain (const struct brig_context *ctx, const char *name, size_t *deleted,
                 brig_error *err)
{
  _cleanup_pool_ struct pool p;
  size_t left = 0;
  int r;

  *deleted = 0;
  r = pool_open (ctx, name, false, LOCK_EX, &p, err);
  if (r < 0)
    return r;
  for (int s = 0; s < BRIG_POOL_NSTATES; s++)
    {
      _cleanup_strv_ char **ids = NULL;
      size_t n;
      r = list_dir (p.sub[s], &ids, &n, err);
      if (r < 0)
        return r;
      for (size_t i = 0; i < n; i++)
        {
          brig_error e = { 0 };
          r = brig_container_delete (ctx, ids[i], true, &e);
          if (r < 0 && e.code != ENOENT)
            {
              /* Keep its entry: a later drain tries again. */
              if (left++ == 0)
                brig_error_set_raw (err, e.code, e.msg);
              else
                brig_warn ("pool \"%s\": delete member %s: %s", name, ids[i],
                           e.msg ? e.msg : "failed");
              brig_error_clear (&e);
              continue;
            }
          brig_error_clear (&e);
          unlinkat (p.sub[s], ids[i], 0);
          if (r == 0) /* not one deleted behind the pool's back */
            ++*deleted;
        }
    }
  if (left)
    return brig_error_wrap (err, "pool \"%s\": drain: %zu member%s left", name, left,
                            left == 1 ? "" : "s");
  return pool_remove (ctx, &p, err);
}
