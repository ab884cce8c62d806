/* The state store under --root; see state.h for the layout. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/extension.h"
#include "container/state.h"
#include "utils.h"

#define OCI_VERSION "1.3.0"

/* The texts callers match on, without an errno suffix (codes still set). */
static int
not_exist (brig_error *err, const char *id)
{
  _cleanup_free_ char *m = xasprintf ("container \"%s\" does not exist", id ? id : "");
  return brig_error_set_raw (err, ENOENT, m);
}

static const char *const status_names[] = {
  [BRIG_STATUS_CREATING] = "creating", [BRIG_STATUS_CREATED] = "created",
  [BRIG_STATUS_RUNNING] = "running",   [BRIG_STATUS_PAUSED] = "paused",
  [BRIG_STATUS_STOPPED] = "stopped", [BRIG_STATUS_UNKNOWN] = "unknown",
};

const char *
brig_status_name (enum brig_status s)
{
  return (unsigned) s < BRIG_ARRAY_SIZE (status_names) ? status_names[s] : "unknown";
}

int
brig_state_check_id (const char *id, brig_error *err)
{
  if (id == NULL || *id == '\0')
    return brig_error_say (err, EINVAL, "invalid container id: empty");
  if (strcmp (id, ".") == 0 || strcmp (id, "..") == 0 || strlen (id) > 1024)
    return brig_error_say (err, EINVAL, "invalid container id \"%s\"", id);
  for (const char *p = id; *p; p++)
    {
      char c = *p;
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
            || c == '_' || c == '-' || c == '.' || c == '+'))
        return brig_error_say (err, EINVAL,
                               "invalid container id \"%s\": only [A-Za-z0-9_+.-] are allowed", id);
    }
  return 0;
}

int
brig_state_root_open (const struct brig_context *ctx, bool create, int *fd, brig_error *err)
{
  int r;

  *fd = open (ctx->state_root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (*fd >= 0)
    return 0;
  if (errno != ENOENT || !create)
    return brig_error_errno (err, "open state root %s", ctx->state_root);
  r = brig_mkdir_p (ctx->state_root, 0700);
  if (r < 0)
    return brig_error_set (err, -r, "create state root %s", ctx->state_root);
  *fd = open (ctx->state_root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    return brig_error_errno (err, "open state root %s", ctx->state_root);
  return 0;
}

static int
lock_dir (int dirfd, enum brig_lock lock)
{
  int op = lock == BRIG_LOCK_EXCLUSIVE ? LOCK_EX : LOCK_SH;
  if (lock == BRIG_LOCK_NONE)
    return 0;
  while (flock (dirfd, op) < 0)
    if (errno != EINTR)
      return -errno;
  return 0;
}

/* A directory removed by a concurrent delete while we waited for its lock. */
static bool
dir_unlinked (int dirfd)
{
  struct stat st;
  return fstat (dirfd, &st) < 0 || st.st_nlink == 0;
}

int
brig_state_claim (const struct brig_context *ctx, const char *id, int *dirfd, brig_error *err)
{
  _cleanup_free_ char *path = NULL;
  int fd, r, e;

  r = brig_state_check_id (id, err);
  if (r < 0)
    return r;
  /* By name, as brig_state_remove: no open and close of the root. */
  path = xasprintf ("%s/%s", ctx->state_root, id);
  e = mkdirat (AT_FDCWD, path, 0711) < 0 ? errno : 0;
  if (e == ENOENT)
    {
      _cleanup_close_ int rootfd = -1;
      r = brig_state_root_open (ctx, true, &rootfd, err);
      if (r < 0)
        return r;
      e = mkdirat (rootfd, id, 0711) < 0 ? errno : 0;
    }
  if (e == EEXIST)
    {
      _cleanup_free_ char *m = xasprintf ("container \"%s\" already exists", id);
      return brig_error_set_raw (err, EEXIST, m);
    }
  if (e != 0)
    return brig_error_set (err, e, "create state directory %s", path);
  fd = open (path, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      r = brig_error_errno (err, "open state directory %s", path);
      rmdir (path);
      return r;
    }
  /* Nobody else can hold it yet: the directory is brand new. */
  flock (fd, LOCK_EX);
  *dirfd = fd;
  return 0;
}

void
brig_state_file_clear (struct brig_state_file *st)
{
  free (st->id);
  free (st->bundle);
  free (st->rootfs);
  free (st->created);
  free (st->owner);
  free (st->cgroup_manager);
  free (st->cgroup_path);
  free (st->freeze_file);
  free (st->keyring);
  if (st->ext && BRIG_EXT_HOOK (state_free))
    brig_ext->state_free (st->ext);
  if (st->annotations)
    {
      for (size_t i = 0; i < st->annotations->len; i++)
        {
          free (st->annotations->keys[i]);
          free (st->annotations->values[i]);
        }
      free (st->annotations->keys);
      free (st->annotations->values);
      free (st->annotations);
    }
  memset (st, 0, sizeof *st);
}

static oci_map *
map_dup (const oci_map *m)
{
  oci_map *r = NULL;
  if (m == NULL)
    return NULL;
  for (size_t i = 0; i < m->len; i++)
    if (oci_map_set (&r, m->keys[i], m->values[i]) < 0)
      abort ();
  if (r == NULL)
    r = xmalloc0 (sizeof *r);
  return r;
}

static char *
state_json (const struct brig_state_file *st, size_t *len)
{
  oci_brig_state s = {
    .oci_version = (char *) OCI_VERSION,
    .id = st->id,
    .pid = st->pid, .has_pid = true,
    .pid_start_time = st->pid_start_time, .has_pid_start_time = true,
    .bundle = st->bundle,
    .rootfs = st->rootfs,
    .created = st->created,
    .owner = st->owner,
    .annotations = st->annotations,
    .cgroup_manager = st->cgroup_manager,
    .cgroup_path = st->cgroup_path,
    .freeze_file = st->freeze_file,
    .systemd_cgroup = st->systemd_cgroup, .has_systemd_cgroup = true,
    .rootless = st->rootless, .has_rootless = true,
    .new_pidns = st->new_pidns, .has_new_pidns = true,
    .start_hooks = st->start_hooks, .has_start_hooks = true,
    .no_process = st->no_process, .has_no_process = true,
    .shared_keyring = st->shared_keyring, .has_shared_keyring = st->shared_keyring,
    .keyring = st->keyring,
  };

  if (st->ext && BRIG_EXT_HOOK (state_save))
    brig_ext->state_save (st->ext, &s);
  *len = 0;
  return oci_generate (&oci_brig_state_type, &s, false, len);
}

int
brig_state_stage (int dirfd, const struct brig_state_file *st, brig_error *err)
{
  size_t len;
  _cleanup_free_ char *json = state_json (st, &len);
  _cleanup_close_ int fd = -1;
  int r;

  if (json == NULL)
    return brig_error_errno (err, "generate state.json");
  fd = openat (dirfd, BRIG_STATE_NEXT, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return brig_error_errno (err, "create %s", BRIG_STATE_NEXT);
  r = brig_write_all (fd, json, len);
  if (r < 0)
    return brig_error_set (err, -r, "write %s", BRIG_STATE_NEXT);
  return 0;
}

int
brig_state_commit (int dirfd, brig_error *err)
{
  if (renameat (dirfd, BRIG_STATE_NEXT, dirfd, "state.json") < 0)
    return brig_error_errno (err, "rename %s to state.json", BRIG_STATE_NEXT);
  return 0;
}

int
brig_state_write (int dirfd, const struct brig_state_file *st, brig_error *err)
{
  int r = brig_state_stage (dirfd, st, err);
  return r < 0 ? r : brig_state_commit (dirfd, err);
}

static int
state_read (int dirfd, const char *id, struct brig_state_file *st, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  oci_error perr = { NULL };
  oci_brig_state *s;
  size_t len;
  int r;

  r = brig_read_file_at (dirfd, "state.json", &buf, &len, err);
  if (r < 0)
    return r;
  s = oci_parse_data (&oci_brig_state_type, buf, len, "state.json", &perr);
  /* What every later command relies on; anything else is damage. */
  if (s && (s->id == NULL || s->bundle == NULL || s->created == NULL))
    {
      perr.msg = xstrdup ("state.json: id, bundle or created is missing");
      oci_free (&oci_brig_state_type, s);
      s = NULL;
    }
  if (s == NULL)
    {
      r = brig_error_set (err, 0, "container \"%s\": %s", id,
                          perr.msg ? perr.msg : "state.json: invalid");
      free (perr.msg);
      return r;
    }
  st->id = brig_steal_ptr (s->id);
  st->bundle = brig_steal_ptr (s->bundle);
  st->rootfs = brig_steal_ptr (s->rootfs);
  st->created = brig_steal_ptr (s->created);
  st->owner = brig_steal_ptr (s->owner);
  st->annotations = brig_steal_ptr (s->annotations);
  st->cgroup_manager = brig_steal_ptr (s->cgroup_manager);
  st->cgroup_path = brig_steal_ptr (s->cgroup_path);
  st->freeze_file = brig_steal_ptr (s->freeze_file);
  st->keyring = brig_steal_ptr (s->keyring);
  st->ext = BRIG_EXT_HOOK (state_load) ? brig_ext->state_load (s) : NULL;
  st->pid = (pid_t) s->pid;
  st->pid_start_time = s->pid_start_time;
  st->systemd_cgroup = s->systemd_cgroup;
  st->rootless = s->rootless;
  st->new_pidns = s->new_pidns;
  st->start_hooks = s->start_hooks;
  st->no_process = s->no_process;
  st->shared_keyring = s->shared_keyring;
  oci_free (&oci_brig_state_type, s);
  return 0;
}

/* True when pid is alive (not a zombie) and started at start_time. */
static bool
pid_matches (pid_t pid, unsigned long long start_time)
{
  unsigned long long t = 0;
  char s = 0;

  if (pid <= 0 || brig_proc_stat (pid, &s, &t) < 0)
    return false;
  if (s == 'Z' || s == 'X' || s == 'x')
    return false;
  return start_time == 0 || t == start_time;
}

static bool
is_frozen (const struct brig_state_file *st)
{
  brig_cgroup *cg = NULL;
  int r;

  if (st->cgroup_manager == NULL || st->cgroup_path == NULL)
    return false;
  /* The file recorded at create answers without loading the cgroup (which
   * reads the host's mount table): one read on every status check. */
  if (st->freeze_file)
    return brig_cgroup_freeze_file_frozen (st->freeze_file) > 0;
  if (brig_cgroup_load (st->cgroup_manager, st->cgroup_path, &cg, NULL) < 0)
    return false;
  r = brig_cgroup_is_frozen (cg);
  brig_cgroup_free (cg);
  return r > 0;
}

void
brig_container_refresh (brig_container *c)
{
  if (c->pidfd >= 0)
    {
      close (c->pidfd);
      c->pidfd = -1;
    }
  if (c->st.id == NULL)
    {
      c->status = BRIG_STATUS_CREATING;
      return;
    }
  if (!pid_matches (c->st.pid, c->st.pid_start_time))
    {
      c->status = BRIG_STATUS_STOPPED;
      return;
    }
  c->pidfd = (int) syscall (SYS_pidfd_open, c->st.pid, 0);
  /* The pid could have been recycled between the check and pidfd_open: check
   * again now that the pidfd pins the process. */
  if (c->pidfd < 0 || !pid_matches (c->st.pid, c->st.pid_start_time))
    {
      if (c->pidfd >= 0)
        close (c->pidfd);
      c->pidfd = -1;
      c->status = BRIG_STATUS_STOPPED;
      return;
    }
  /* Frozen first: a created container can be paused too (as in runc). */
  if (is_frozen (&c->st))
    c->status = BRIG_STATUS_PAUSED;
  else if (faccessat (c->dirfd, BRIG_EXEC_SOCKET, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    c->status = BRIG_STATUS_CREATED;
  else
    c->status = BRIG_STATUS_RUNNING;
}

/* The init recorded in ROOT/ID/made ("init PID START"), or 0. */
static pid_t
record_init (int dirfd, unsigned long long *start_time)
{
  _cleanup_free_ char *text = NULL;
  const char *p;
  int pid = 0;

  if (brig_read_file_at (dirfd, BRIG_STATE_RECORD, &text, NULL, NULL) < 0)
    return 0;
  /* ("init 0 0": a reset's mark while it replaces the init; see below) */
  for (p = text; p && *p; p = strchr (p, '\n') ? strchr (p, '\n') + 1 : NULL)
    if (strncmp (p, "init ", 5) == 0 && sscanf (p + 5, "%d %llu", &pid, start_time) == 2
        && pid > 0)
      break;
    else
      pid = 0;
  return pid > 0 ? (pid_t) pid : 0;
}

/* state.json cannot be read: a container of status unknown, whose init is
 * the recorded one if it still runs (its start time must match). */
static void
load_damaged (brig_container *c, brig_error *err)
{
  unsigned long long start = 0;
  pid_t pid = record_init (c->dirfd, &start);

  c->damaged = xstrdup (err->msg ? err->msg : "state.json: invalid");
  brig_error_clear (err);
  brig_state_file_clear (&c->st);
  c->st.id = xstrdup (c->id);
  c->st.bundle = xstrdup ("");
  if (pid > 0 && start > 0)
    {
      c->st.pid = pid;
      c->st.pid_start_time = start;
      brig_container_refresh (c);
      if (c->pidfd < 0)
        c->st.pid = 0;
    }
  c->status = BRIG_STATUS_UNKNOWN;
}

/* A directory with neither state.json nor the ownership record: a create
 * between its mkdir and its flock (brig_state_claim), or one killed right
 * there, which left nothing but the directory. */
static bool
claim_in_progress (int dirfd)
{
  return faccessat (dirfd, BRIG_STATE_RECORD, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

static int
load_common (const struct brig_context *ctx, const char *id, enum brig_lock lock, bool any,
             brig_container **out, brig_error *err)
{
  _cleanup_close_ int rootfd = -1;
  _cleanup_container_ brig_container *c = NULL;
  int r;

  if (brig_state_check_id (id, NULL) < 0)
    return not_exist (err, id ? id : "");
  rootfd = open (ctx->state_root, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (rootfd < 0)
    {
      if (errno == ENOENT)
        return not_exist (err, id);
      return brig_error_errno (err, "open state root %s", ctx->state_root);
    }
  c = xmalloc0 (sizeof *c);
  c->pidfd = -1;
  c->id = xstrdup (id);
  c->dirfd = openat (rootfd, id, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (c->dirfd < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        return not_exist (err, id);
      return brig_error_errno (err, "open state directory of \"%s\"", id);
    }
  r = lock_dir (c->dirfd, lock);
  if (r < 0)
    return brig_error_set (err, -r, "lock state directory of \"%s\"", id);
  if (lock != BRIG_LOCK_NONE && dir_unlinked (c->dirfd))
    return not_exist (err, id);

  {
    /* a local error: callers of load_any may pass none, and still get the
     * reason in c->damaged */
    brig_error e = { 0 };
    r = state_read (c->dirfd, id, &c->st, &e);
    if (r < 0 && !(r == -EINVAL && any))
      brig_error_set_raw (err, e.code, e.msg);
    if (r == -EINVAL && any)
      load_damaged (c, &e);
    brig_error_clear (&e);
  }
  if (r == -ENOENT)
    {
      brig_error_clear (err);
      /* No state.json: a create in progress holds the lock; with the lock
       * free it is what a killed create left behind, which only delete
       * can act on (status stopped, no pid). */
      if (lock == BRIG_LOCK_NONE && flock (c->dirfd, LOCK_SH | LOCK_NB) < 0)
        c->status = BRIG_STATUS_CREATING;
      else if (lock == BRIG_LOCK_NONE && claim_in_progress (c->dirfd))
        {
          flock (c->dirfd, LOCK_UN);
          c->status = BRIG_STATUS_CREATING;
        }
      else
        {
          if (lock == BRIG_LOCK_NONE)
            flock (c->dirfd, LOCK_UN);
          if (dir_unlinked (c->dirfd))
            return not_exist (err, id);
          c->st.id = xstrdup (id);
          c->st.bundle = xstrdup ("");
          c->status = BRIG_STATUS_STOPPED;
        }
      *out = brig_steal_ptr (c);
      return 0;
    }
  if (r == -EINVAL && any)
    {
      *out = brig_steal_ptr (c);
      return 0;
    }
  if (r == -EINVAL)
    {
      /* name the file and the way out */
      _cleanup_free_ char *why = xstrdup (err && err->msg ? err->msg : "invalid");
      brig_error_clear (err);
      return brig_error_set (err, 0, "container \"%s\": %s/%s/state.json is damaged "
                             "(%s); delete --force removes the container", id,
                             ctx->state_root, id, why);
    }
  if (r < 0)
    return r;
  if (lock != BRIG_LOCK_NONE && BRIG_EXT_HOOK (lock_taken))
    brig_ext->lock_taken (ctx, c);
  brig_container_refresh (c);
  /* No pid yet: create wrote its first state (so that the cgroup of a
   * killed create can still be found) and holds the lock until the init
   * exists. */
  if (c->st.pid <= 0 && lock == BRIG_LOCK_NONE)
    {
      if (flock (c->dirfd, LOCK_SH | LOCK_NB) < 0)
        c->status = BRIG_STATUS_CREATING;
      else
        flock (c->dirfd, LOCK_UN);
    }
  *out = brig_steal_ptr (c);
  return 0;
}

int
brig_container_load (const struct brig_context *ctx, const char *id, enum brig_lock lock,
                     brig_container **out, brig_error *err)
{
  return load_common (ctx, id, lock, false, out, err);
}

int
brig_container_load_visible (const struct brig_context *ctx, const char *id,
                             brig_container **out, brig_error *err)
{
  int r = load_common (ctx, id, BRIG_LOCK_NONE, false, out, err);
  if (r == 0 && (*out)->status == BRIG_STATUS_CREATING)
    {
      brig_container_free (*out);
      *out = NULL;
      return not_exist (err, id);
    }
  return r;
}

int
brig_container_load_any (const struct brig_context *ctx, const char *id, enum brig_lock lock,
                         brig_container **out, brig_error *err)
{
  return load_common (ctx, id, lock, true, out, err);
}

int
brig_container_cgroup (const brig_container *c, brig_cgroup **cg, brig_error *err)
{
  _cleanup_free_ char *text = NULL;
  int r;

  *cg = NULL;
  r = brig_read_file_at (c->dirfd, BRIG_STATE_RECORD, &text, NULL, NULL);
  if (r == 0)
    r = brig_cgroup_load_record (text, c->dirfd, cg, err);
  else if (c->st.cgroup_manager == NULL || c->st.cgroup_path == NULL)
    return 0;
  else
    r = brig_cgroup_load (c->st.cgroup_manager, c->st.cgroup_path, cg, err);
  /* create kept (and recorded) only what the user could make */
  if (r == 0 && *cg && c->st.rootless)
    brig_cgroup_set_rootless (*cg);
  return r;
}

int
brig_state_record_write (int dirfd, const char *text, int *keep, brig_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, BRIG_STATE_RECORD,
                                   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int r;
  if (fd < 0)
    return brig_error_errno (err, "create %s", BRIG_STATE_RECORD);
  r = brig_write_all (fd, text, strlen (text));
  if (r < 0)
    return brig_error_set (err, -r, "write %s", BRIG_STATE_RECORD);
  if (keep)
    *keep = brig_steal_fd (fd);
  return 0;
}

int
brig_state_record_add_init (int dirfd, int record_fd, pid_t pid,
                            unsigned long long start_time, brig_error *err)
{
  char line[64];
  int n = snprintf (line, sizeof line, "init %d %llu\n", (int) pid, start_time);
  _cleanup_close_ int fd = record_fd >= 0 ? -1 : openat (dirfd, BRIG_STATE_RECORD,
                                                          O_WRONLY | O_APPEND | O_CLOEXEC);
  int r;
  if (record_fd < 0 && fd < 0)
    return brig_error_errno (err, "open %s", BRIG_STATE_RECORD);
  r = brig_write_all (record_fd >= 0 ? record_fd : fd, line, (size_t) n);
  if (r < 0)
    return brig_error_set (err, -r, "write %s", BRIG_STATE_RECORD);
  return 0;
}

int
brig_state_record_drop_init (int dirfd, brig_error *err)
{
  _cleanup_free_ char *text = NULL;
  char *in, *out;
  int r;

  r = brig_read_file_at (dirfd, BRIG_STATE_RECORD, &text, NULL, err);
  if (r < 0)
    return brig_error_wrap (err, "read %s", BRIG_STATE_RECORD);
  for (in = out = text; *in;)
    {
      char *nl = strchr (in, '\n');
      size_t len = nl ? (size_t) (nl - in + 1) : strlen (in);
      if (strncmp (in, "init ", 5) != 0)
        {
          memmove (out, in, len);
          out += len;
        }
      in += len;
    }
  *out = '\0';
  {
    /* "init 0 0" in its place: a record without an init line is a create
     * that did not finish, whose cgroup's processes may not be its own
     * (nothing is killed); a reset killed before it recorded its new init
     * must leave one whose cgroup is still known to be the container's. */
    _cleanup_free_ char *with = xasprintf ("%sinit 0 0\n", text);
    return brig_write_file_atomic (dirfd, BRIG_STATE_RECORD, with, strlen (with), 0600, err);
  }
}

char *
brig_state_reset_failed (int dirfd)
{
  char *why = NULL;
  if (brig_read_file_at (dirfd, BRIG_STATE_RESET_FAILED, &why, NULL, NULL) < 0)
    return NULL;
  return why;
}

void
brig_container_free (brig_container *c)
{
  if (c == NULL)
    return;
  if (c->dirfd >= 0)
    close (c->dirfd);
  if (c->pidfd >= 0)
    close (c->pidfd);
  brig_state_file_clear (&c->st);
  free (c->damaged);
  free (c->id);
  free (c);
}

void
brig_container_freep (brig_container **c)
{
  brig_container_free (*c);
}

oci_state *
brig_container_oci_state (const brig_container *c, int status)
{
  oci_state *s = xmalloc0 (sizeof *s);
  enum brig_status st = status >= 0 ? (enum brig_status) status : c->status;

  s->oci_version = xstrdup (OCI_VERSION);
  s->id = xstrdup (c->id);
  s->status = xstrdup (brig_status_name (st));
  /* A stopped container has no process (runc prints 0). */
  s->pid = st == BRIG_STATUS_STOPPED ? 0 : c->st.pid;
  s->has_pid = true;
  s->bundle = xstrdup (c->st.bundle ? c->st.bundle : "");
  s->rootfs = xstrdup (c->st.rootfs ? c->st.rootfs : "");
  s->created = xstrdup (c->st.created ? c->st.created : "");
  s->owner = xstrdup (c->st.owner ? c->st.owner : "");
  if (c->st.annotations && c->st.annotations->len > 0)
    s->annotations = map_dup (c->st.annotations);
  /* what an extension applied, beside runc's fields */
  if (BRIG_EXT_HOOK (state_show))
    brig_ext->state_show (c->st.ext, c->dirfd, s);
  return s;
}

char *
brig_container_state_json (const brig_container *c, int status, bool pretty)
{
  oci_state *s = brig_container_oci_state (c, status);
  char *json = oci_generate (&oci_state_type, s, pretty, NULL);
  oci_free (&oci_state_type, s);
  return json;
}

int
brig_container_config (const brig_container *c, oci_config **cfg, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  oci_error perr = { NULL };
  size_t len;
  int r;

  r = brig_read_file_at (c->dirfd, BRIG_STATE_CONFIG, &buf, &len, err);
  if (r < 0)
    return brig_error_wrap (err, "container \"%s\"", c->id);
  *cfg = oci_config_parse_data (buf, len, "config.json", &perr);
  if (*cfg == NULL)
    {
      r = brig_error_say (err, EINVAL, "container \"%s\": %s", c->id,
                          perr.msg ? perr.msg : "invalid config.json");
      free (perr.msg);
      return r;
    }
  return 0;
}

int
brig_container_signal (brig_container *c, int sig, brig_error *err)
{
  if (c->pidfd < 0)
    brig_container_refresh (c);
  if (c->pidfd < 0)
    return brig_error_say (err, ESRCH, "container not running");
  if (syscall (SYS_pidfd_send_signal, c->pidfd, sig, NULL, 0) < 0)
    {
      if (errno == ESRCH)
        return brig_error_say (err, ESRCH, "container not running");
      return brig_error_errno (err, "kill container \"%s\" (pid %d)", c->id, (int) c->st.pid);
    }
  return 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
brig_state_list (const struct brig_context *ctx, char ***ids, brig_error *err)
{
  _cleanup_closedir_ DIR *d = NULL;
  struct dirent *de;
  char **v = NULL;
  size_t n = 0;

  d = opendir (ctx->state_root);
  if (d == NULL)
    {
      if (errno != ENOENT)
        return brig_error_errno (err, "open state root %s", ctx->state_root);
      *ids = xmalloc0 (sizeof (char *));
      return 0;
    }
  v = xmalloc0 (sizeof (char *));
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      if (brig_state_check_id (de->d_name, NULL) < 0)
        continue;
      v = xrealloc (v, (n + 2) * sizeof (char *));
      v[n++] = xstrdup (de->d_name);
      v[n] = NULL;
    }
  qsort (v, n, sizeof (char *), cmp_str);
  *ids = v;
  return 0;
}

int
brig_state_remove (const struct brig_context *ctx, const char *id, int dirfd, brig_error *err)
{
  /* By name: the id is checked, the root is the operator's (no open and
   * close of the root for one unlinkat). */
  _cleanup_free_ char *path = xasprintf ("%s/%s", ctx->state_root, id);
  _cleanup_closedir_ DIR *d = NULL;
  struct dirent *de;
  int fd;

  /* what an extension took in the directory (container/extension.h) */
  if (BRIG_EXT_HOOK (state_remove) && (fd = brig_ext->state_remove (ctx, id, dirfd, err)) < 0)
    return fd;
  /* The usual directory holds only the files every container has: remove
   * them by name and the directory with them. A directory listing costs a
   * 32 KiB buffer (page faults) and six calls more; it only runs when
   * something else is left (a reset pin, notify/, an older brig's files). */
  static const char *const usual[] = { "state.json", "config.json", BRIG_STATE_RECORD };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (usual); i++)
    unlinkat (dirfd, usual[i], 0);
  if (rmdir (path) == 0)
    return 0;
  fd = openat (dirfd, ".", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    d = fdopendir (fd);
  if (d)
    while ((de = readdir (d)) != NULL)
      {
        if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
          continue;
        if (unlinkat (dirfd, de->d_name, 0) == 0)
          continue;
        if (errno == EBUSY)
          {
            /* a bind mount on a file: a namespace an extension pinned
             * there (brig reset's network namespace) */
            char p[300];
            snprintf (p, sizeof p, "/proc/self/fd/%d/%s", dirfd, de->d_name);
            umount2 (p, MNT_DETACH | UMOUNT_NOFOLLOW);
            unlinkat (dirfd, de->d_name, 0);
          }
        else if (errno == EISDIR)
          {
            /* notify/ (notify.h) holds the container's socket. */
            if (strcmp (de->d_name, "notify") == 0)
              unlinkat (dirfd, "notify/notify.sock", 0);
            unlinkat (dirfd, de->d_name, AT_REMOVEDIR);
          }
      }
  if (rmdir (path) < 0 && errno != ENOENT)
    return brig_error_errno (err, "remove state directory %s", path);
  return 0;
}

/* The proleptic Gregorian date of a day count since 1970-01-01: glibc's
 * gmtime_r first loads the time zone (/etc/localtime: seven syscalls on
 * every create) although UTC needs none. Eras of 400 years (146097 days)
 * repeat exactly; the year is taken to start on 1 March so that the leap
 * day is the last day of it. */
static void
civil_from_days (int64_t days, int64_t *year, unsigned *month, unsigned *day)
{
  int64_t z = days + 719468; /* days since 0000-03-01 */
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned) (z - era * 146097);                          /* [0, 146096] */
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  /* [0, 399] */
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                /* [0, 365] */
  unsigned mp = (5 * doy + 2) / 153;                                     /* [0, 11], 0 = March */

  *day = doy - (153 * mp + 2) / 5 + 1;
  *month = mp < 10 ? mp + 3 : mp - 9;
  *year = (int64_t) yoe + era * 400 + (*month <= 2);
}

char *
brig_state_format_time (int64_t sec, long nsec)
{
  int64_t days = sec / 86400, rem = sec % 86400, year;
  unsigned month, day;

  if (rem < 0)
    {
      rem += 86400;
      days--;
    }
  civil_from_days (days, &year, &month, &day);
  return xasprintf ("%04" PRId64 "-%02u-%02uT%02u:%02u:%02u.%09ldZ", year, month, day,
                    (unsigned) (rem / 3600), (unsigned) (rem / 60 % 60), (unsigned) (rem % 60),
                    nsec);
}

char *
brig_state_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  return brig_state_format_time ((int64_t) ts.tv_sec, ts.tv_nsec);
}
