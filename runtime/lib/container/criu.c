/* Checkpoint/restore through the criu binary; see criu.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/criu.h"
#include "container/extension.h"
#include "log.h"
#include "ocispec.h"
#include "container/state.h"
#include "utils.h"

/* A growing NULL-terminated argv for criu; every element is malloc'd. */
struct argv_buf {
  char **v;
  size_t n, cap;
};

static void
arg_add (struct argv_buf *a, char *s)
{
  if (a->n + 2 > a->cap)
    {
      a->cap = a->cap ? a->cap * 2 : 32;
      a->v = xrealloc (a->v, a->cap * sizeof *a->v);
    }
  a->v[a->n++] = s;
  a->v[a->n] = NULL;
}

#define ARG(a, ...) arg_add ((a), xasprintf (__VA_ARGS__))

static void
argv_buf_clear (struct argv_buf *a)
{
  brig_strv_free (a->v);
  a->v = NULL;
  a->n = a->cap = 0;
}

int
brig_criu_check_cgroups_mode (const char *mode)
{
  static const char *const modes[] = { "soft", "full", "strict", "ignore" };
  for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
    if (strcmp (mode, modes[i]) == 0)
      return 0;
  return -EINVAL;
}

/* runc's namespace names for --empty-ns mapped to criu's (only the network
 * namespace can be left empty by criu). */
static const char *
criu_ns_name (const char *ns)
{
  if (strcmp (ns, "network") == 0 || strcmp (ns, "net") == 0)
    return "net";
  return NULL;
}

/* Make path absolute (creating it when mkdir is true) into a malloc'd string. */
static int
abs_dir (const char *path, bool mkdir_it, char **out, brig_error *err)
{
  char buf[PATH_MAX];
  if (mkdir_it && brig_mkdir_p (path, 0700) < 0)
    return brig_error_errno (err, "create %s", path);
  if (realpath (path, buf) == NULL)
    return brig_error_errno (err, "%s", path);
  *out = xstrdup (buf);
  return 0;
}

/* The first few "Error" lines of criu's log, joined by "; " (malloc'd), or
 * NULL when the log has none. */
static char *
criu_log_errors (const char *log_path)
{
  _cleanup_fclose_ FILE *f = fopen (log_path, "re");
  _cleanup_free_ char *line = NULL;
  size_t cap = 0, used = 0, n = 0;
  char *out = NULL;

  if (f == NULL)
    return NULL;
  while (n < 4 && getline (&line, &cap, f) > 0)
    {
      char *e = strstr (line, "Error (");
      size_t l;
      if (e == NULL)
        continue;
      l = strcspn (e, "\n");
      out = xrealloc (out, used + l + 3);
      if (used)
        {
          memcpy (out + used, "; ", 2);
          used += 2;
        }
      memcpy (out + used, e, l);
      used += l;
      out[used] = '\0';
      n++;
    }
  return out;
}

/* Work done in the forked child before it execs criu (restore only). */
struct criu_child_setup {
  const char *rootfs;     /* bind-mounted on itself in a private mount ns */
  brig_cgroup *cg;        /* entered, so the restored tree starts in it */
};

static void __attribute__ ((noreturn))
criu_child (struct argv_buf *a, const struct criu_child_setup *s)
{
  if (s && s->cg)
    {
      brig_error e = { 0 };
      if (brig_cgroup_enter (s->cg, getpid (), &e) < 0)
        {
          fprintf (stderr, "brig: %s\n", e.msg ? e.msg : "enter the cgroup");
          _exit (126);
        }
    }
  /* criu needs the restore root to be a mount point; bind it in a mount
   * namespace of criu's own so the host's mount table is never changed. */
  if (s && s->rootfs)
    {
      if (unshare (CLONE_NEWNS) < 0
          || mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0
          || mount (s->rootfs, s->rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
        {
          fprintf (stderr, "brig: prepare the restore root %s: %s\n", s->rootfs,
                   strerror (errno));
          _exit (126);
        }
    }
  execvp ("criu", a->v);
  fprintf (stderr, "brig: exec criu: %s\n", strerror (errno));
  _exit (errno == ENOENT ? 127 : 126);
}

/* Run criu with argv a; on failure fill err with criu's own error lines. */
static int
run_criu (struct argv_buf *a, const char *action, const char *log_path,
          const struct criu_child_setup *s, brig_error *err)
{
  _cleanup_free_ char *cmdline = NULL;
  pid_t pid;
  int status;

  if (brig_log_debug_enabled ())
    {
      size_t len = 0;
      for (size_t i = 0; i < a->n; i++)
        len += strlen (a->v[i]) + 1;
      cmdline = xmalloc0 (len + 1);
      for (size_t i = 0; i < a->n; i++)
        {
          strcat (cmdline, a->v[i]);
          if (i + 1 < a->n)
            strcat (cmdline, " ");
        }
      brig_debug ("running %s", cmdline);
    }
  fflush (NULL);
  pid = fork ();
  if (pid < 0)
    return brig_error_errno (err, "fork for criu");
  if (pid == 0)
    criu_child (a, s);
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return brig_error_errno (err, "wait for criu");
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status) && WEXITSTATUS (status) == 127)
    return brig_error_say (err, ENOENT, "criu %s: criu is not installed (not found in $PATH)",
                           action);
  {
    _cleanup_free_ char *errs = criu_log_errors (log_path);
    /* errno 0: criu's own words are the error, no strerror appended. */
    if (WIFSIGNALED (status))
      return brig_error_set (err, 0, "criu %s killed by signal %d (log %s)%s%s", action,
                             WTERMSIG (status), log_path, errs ? ": " : "", errs ? errs : "");
    return brig_error_set (err, 0, "criu %s failed (exit status %d, log %s)%s%s", action,
                           WEXITSTATUS (status), log_path, errs ? ": " : "", errs ? errs : "");
  }
}

/* Options common to dump and restore; image, work and log files. */
static int
add_common (struct argv_buf *a, const struct brig_criu_common *c, const char *images,
            const char *work, const char *log_name, brig_error *err)
{
  ARG (a, "--images-dir=%s", images);
  ARG (a, "--work-dir=%s", work);
  ARG (a, "--log-file=%s", log_name);
  arg_add (a, xstrdup ("-v4"));
  if (c->tcp_established)
    arg_add (a, xstrdup ("--tcp-established"));
  if (c->ext_unix_sk)
    arg_add (a, xstrdup ("--ext-unix-sk"));
  if (c->shell_job)
    arg_add (a, xstrdup ("--shell-job"));
  if (c->file_locks)
    arg_add (a, xstrdup ("--file-locks"));
  if (c->lazy_pages)
    arg_add (a, xstrdup ("--lazy-pages"));
  if (c->auto_dedup)
    arg_add (a, xstrdup ("--auto-dedup"));
  if (c->manage_cgroups_mode)
    ARG (a, "--manage-cgroups=%s", c->manage_cgroups_mode);
  for (int i = 0; i < c->empty_ns_len; i++)
    {
      const char *ns = criu_ns_name (c->empty_ns[i]);
      if (ns == NULL)
        return brig_error_say (err, EINVAL,
                               "--empty-ns %s: criu can only leave the network namespace empty",
                               c->empty_ns[i]);
      ARG (a, "--empty-ns=%s", ns);
    }
  return 0;
}

static bool
is_bind_mount (const oci_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  for (size_t i = 0; m->options && m->options[i]; i++)
    if (strcmp (m->options[i], "bind") == 0 || strcmp (m->options[i], "rbind") == 0)
      return true;
  return false;
}

/* Bind mounts come from outside the container: criu must be told they are
 * external, keyed by their destination, so restore can bind the source again. */
static void
add_external_mounts (struct argv_buf *a, const oci_config *cfg, bool restore)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      if (!is_bind_mount (m) || m->source == NULL)
        continue;
      if (restore)
        ARG (a, "--external=mnt[%s]:%s", m->destination, m->source);
      else
        ARG (a, "--external=mnt[%s]:%s", m->destination, m->destination);
    }
}

/* The init's stdio as /proc/PID/fd/N names, saved at dump time in the image
 * directory (descriptors.json, as runc names it) so that restore can hand
 * criu the caller's pipes in their place (--inherit-fd). */
#define DESCRIPTORS_FILE "descriptors.json"

static int
save_descriptors (pid_t pid, const char *images, brig_error *err)
{
  _cleanup_close_ int dfd = -1;
  char *json = xstrdup ("[");
  int r;

  for (int fd = 0; fd < 3; fd++)
    {
      char link[64], target[PATH_MAX];
      _cleanup_free_ char *esc = NULL;
      ssize_t n;
      size_t j = 0;
      char *old = json;

      snprintf (link, sizeof link, "/proc/%d/fd/%d", (int) pid, fd);
      n = readlink (link, target, sizeof target - 1);
      target[n < 0 ? 0 : n] = '\0';
      esc = xmalloc0 (2 * strlen (target) + 1);
      for (char *t = target; *t; t++)
        {
          if (*t == '"' || *t == '\\')
            esc[j++] = '\\';
          esc[j++] = (unsigned char) *t < 0x20 ? '?' : *t;
        }
      json = xasprintf ("%s%s\"%s\"", old, fd ? "," : "", esc);
      free (old);
    }
  {
    char *old = json;
    json = xasprintf ("%s]\n", old);
    free (old);
  }
  dfd = open (images, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (dfd < 0)
    r = brig_error_errno (err, "%s", images);
  else
    r = brig_write_file_atomic (dfd, DESCRIPTORS_FILE, json, strlen (json), 0600, err);
  free (json);
  return r;
}

/* For each of the saved stdio names that is a pipe or socket, let criu use
 * our own fd of the same number instead (the caller's new stdio). */
static void
add_inherit_fds (struct argv_buf *a, const char *images)
{
  _cleanup_free_ char *path = xasprintf ("%s/" DESCRIPTORS_FILE, images);
  _cleanup_free_ char *buf = NULL;
  brig_error e = { 0 };
  size_t len;
  int fd = 0;

  if (brig_read_file_at (AT_FDCWD, path, &buf, &len, &e) < 0)
    {
      brig_error_clear (&e);
      return;
    }
  for (char *p = buf; fd < 3 && (p = strchr (p, '"')) != NULL; fd++)
    {
      char *end = strchr (++p, '"');
      if (end == NULL)
        break;
      *end = '\0';
      if (strncmp (p, "pipe:[", 6) == 0 || strncmp (p, "socket:[", 8) == 0)
        ARG (a, "--inherit-fd=fd[%d]:%s", fd, p);
      p = end + 1;
    }
}

/* criu resolves --prev-images-dir against the images directory (it becomes
 * a symlink "parent" there), so an absolute path would name another place
 * than the user meant: refuse it with runc's words, and check the parent
 * images exist before criu runs. */
static int
check_parent_path (const char *images, const char *parent, brig_error *err)
{
  _cleanup_free_ char *full = NULL;
  struct stat st;

  if (parent[0] == '/')
    return brig_error_set (err, 0, "--parent-path must be relative");
  full = xasprintf ("%s/%s", images, parent);
  if (stat (full, &st) < 0)
    return brig_error_errno (err, "invalid --parent-path: stat %s", full);
  if (!S_ISDIR (st.st_mode))
    return brig_error_set (err, ENOTDIR, "invalid --parent-path: %s", full);
  return 0;
}

int
brig_container_checkpoint (const struct brig_context *ctx,
                           const struct brig_checkpoint_opts *o, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  _cleanup_free_ char *images = NULL, *work = NULL, *log_path = NULL;
  struct argv_buf a = { 0 };
  oci_config *cfg = NULL;
  const char *action = o->pre_dump ? "pre-dump" : "dump";
  int r;

  r = brig_container_load (ctx, o->id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r < 0)
    return r;
  if (c->status != BRIG_STATUS_RUNNING && c->status != BRIG_STATUS_PAUSED)
    return brig_error_say (err, EINVAL, "container \"%s\" is %s, not running", o->id,
                           brig_status_name (c->status));
  r = brig_container_config (c, &cfg, err);
  if (r < 0)
    return r;
  r = abs_dir (o->c.image_path ? o->c.image_path : "checkpoint", true, &images, err);
  if (r == 0)
    r = abs_dir (o->c.work_path ? o->c.work_path : images, true, &work, err);
  if (r == 0 && o->parent_path)
    r = check_parent_path (images, o->parent_path, err);
  if (r < 0)
    goto out;
  log_path = xasprintf ("%s/%s.log", work, action);

  arg_add (&a, xstrdup ("criu"));
  arg_add (&a, xstrdup (action));
  ARG (&a, "--tree=%d", (int) c->st.pid);
  r = add_common (&a, &o->c, images, work, o->pre_dump ? "pre-dump.log" : "dump.log", err);
  if (r < 0)
    goto out;
  if (c->st.rootfs)
    ARG (&a, "--root=%s", c->st.rootfs);
  if (o->parent_path)
    ARG (&a, "--prev-images-dir=%s", o->parent_path);
  /* Memory tracking lets a later dump with --parent-path store only what
   * changed since the pre-dump. */
  if (o->pre_dump || o->parent_path)
    arg_add (&a, xstrdup ("--track-mem"));
  if (o->leave_running && !o->pre_dump)
    arg_add (&a, xstrdup ("--leave-running"));
  if (c->st.cgroup_path && c->st.cgroup_path[0] == '/')
    ARG (&a, "--cgroup-root=%s", c->st.cgroup_path);
  add_external_mounts (&a, cfg, false);

  r = save_descriptors (c->st.pid, images, err);
  if (r < 0)
    goto out;
  r = run_criu (&a, action, log_path, NULL, err);
out:
  argv_buf_clear (&a);
  oci_config_free (cfg);
  return r;
}

/* What restore reads from the bundle. */
struct restore_bundle {
  char *dir;        /* absolute bundle path */
  char *rootfs;     /* absolute root.path */
  char *buf;        /* config.json as read */
  size_t len;
  oci_config *cfg;
};

static void
restore_bundle_clear (struct restore_bundle *b)
{
  free (b->dir);
  free (b->rootfs);
  free (b->buf);
  oci_config_free (b->cfg);
}

static int
restore_bundle_load (const char *bundle, struct restore_bundle *b, brig_error *err)
{
  _cleanup_close_ int bfd = -1;
  _cleanup_free_ char *root = NULL;
  oci_error perr = { NULL };
  int r;

  r = abs_dir (bundle && *bundle ? bundle : ".", false, &b->dir, err);
  if (r < 0)
    return brig_error_wrap (err, "bundle");
  bfd = open (b->dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (bfd < 0)
    return brig_error_errno (err, "bundle %s", b->dir);
  r = brig_read_file_at (bfd, "config.json", &b->buf, &b->len, err);
  if (r < 0)
    return brig_error_wrap (err, "bundle %s", b->dir);
  b->cfg = oci_config_parse_data (b->buf, b->len, "config.json", &perr);
  if (b->cfg == NULL)
    {
      r = brig_error_say (err, EINVAL, "%s", perr.msg ? perr.msg : "config.json: invalid");
      free (perr.msg);
      return r;
    }
  if (b->cfg->root == NULL || b->cfg->root->path == NULL || *b->cfg->root->path == '\0')
    return brig_error_say (err, EINVAL, "config.json: root.path is required");
  root = b->cfg->root->path[0] == '/' ? xstrdup (b->cfg->root->path)
                                      : xasprintf ("%s/%s", b->dir, b->cfg->root->path);
  return abs_dir (root, false, &b->rootfs, err) < 0
           ? brig_error_wrap (err, "config.json: root.path") : 0;
}

static bool
config_has_new_ns (const oci_config *cfg, const char *type)
{
  if (cfg->linux == NULL)
    return false;
  for (size_t i = 0; i < cfg->linux->namespaces_len; i++)
    if (strcmp (cfg->linux->namespaces[i].type, type) == 0 && cfg->linux->namespaces[i].path == NULL)
      return true;
  return false;
}

static int
read_pid (const char *path, pid_t *pid, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;
  char *end;
  long v;
  int r = brig_read_file_at (AT_FDCWD, path, &buf, &len, err);
  if (r < 0)
    return r;
  errno = 0;
  v = strtol (buf, &end, 10);
  if (errno || end == buf || v <= 0)
    return brig_error_say (err, EINVAL, "criu's pid file %s: no pid", path);
  *pid = (pid_t) v;
  return 0;
}

/* Restore into the claimed state directory dirfd; on success the state is
 * written and *pid is the restored init. */
static int
restore_into (const struct brig_context *ctx, const struct brig_restore_opts *o,
              struct restore_bundle *b, int dirfd, brig_cgroup **cg, pid_t *pid,
              brig_error *err)
{
  _cleanup_free_ char *images = NULL, *work = NULL, *log_path = NULL, *pidfile = NULL;
  struct brig_state_file st = { 0 };
  struct brig_cgroup_config cgc;
  struct argv_buf a = { 0 };
  struct criu_child_setup setup;
  bool rootless = ctx->rootless == 1 || (ctx->rootless == -1 && geteuid () != 0);
  int r;

  /* what criu restores an extension could not hold: fail closed */
  if (BRIG_EXT_HOOK (restore_check) && (r = brig_ext->restore_check (b->cfg, err)) < 0)
    return r;
  cgc = (struct brig_cgroup_config) {
    .id = o->id,
    .cgroups_path = b->cfg->linux ? b->cfg->linux->cgroups_path : NULL,
    .resources = b->cfg->linux ? b->cfg->linux->resources : NULL,
    .systemd = ctx->systemd_cgroup,
    .rootless = rootless,
    .annotations = b->cfg->annotations,
  };
  r = brig_cgroup_create (&cgc, cg, err);
  if (r < 0)
    return r;
  r = brig_write_file_atomic (dirfd, "config.json", b->buf, b->len, 0600, err);
  if (r < 0)
    return r;
  r = abs_dir (o->c.image_path ? o->c.image_path : "checkpoint", false, &images, err);
  if (r < 0)
    return brig_error_wrap (err, "--image-path");
  r = abs_dir (o->c.work_path ? o->c.work_path : images, true, &work, err);
  if (r < 0)
    return brig_error_wrap (err, "--work-path");
  log_path = xasprintf ("%s/restore.log", work);
  pidfile = xasprintf ("%s/restore.pid", work);
  unlink (pidfile);

  arg_add (&a, xstrdup ("criu"));
  arg_add (&a, xstrdup ("restore"));
  r = add_common (&a, &o->c, images, work, "restore.log", err);
  if (r < 0)
    goto out;
  ARG (&a, "--root=%s", b->rootfs);
  /* criu returns once the tree runs; the restored init becomes brig's child
   * (a sibling of criu), so a non-detached restore can wait for it. */
  arg_add (&a, xstrdup ("--restore-detached"));
  arg_add (&a, xstrdup ("--restore-sibling"));
  ARG (&a, "--pidfile=%s", pidfile);
  const char *cg_path = brig_cgroup_path (*cg);
  if (cg_path && cg_path[0] == '/')
    ARG (&a, "--cgroup-root=%s", cg_path);
  if (o->lsm_profile)
    ARG (&a, "--lsm-profile=%s", o->lsm_profile);
  if (o->lsm_mount_context)
    ARG (&a, "--lsm-mount-context=%s", o->lsm_mount_context);
  add_external_mounts (&a, b->cfg, true);
  add_inherit_fds (&a, images);

  if (!o->detach && !o->no_subreaper)
    prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  setup = (struct criu_child_setup) { .rootfs = b->rootfs, .cg = *cg };
  r = run_criu (&a, "restore", log_path, &setup, err);
  if (r < 0)
    goto out;
  r = read_pid (pidfile, pid, err);
  if (r < 0)
    goto out;

  st.id = xstrdup (o->id);
  st.bundle = xstrdup (b->dir);
  st.rootfs = xstrdup (b->rootfs);
  st.pid = *pid;
  st.created = brig_state_now ();
  st.owner = xstrdup ("");
  if (b->cfg->annotations)
    for (size_t i = 0; i < b->cfg->annotations->len; i++)
      oci_map_set (&st.annotations, b->cfg->annotations->keys[i], b->cfg->annotations->values[i]);
  st.cgroup_manager = xstrdup (brig_cgroup_manager_name (*cg));
  st.cgroup_path = xstrdup (cg_path ? cg_path : "");
  st.systemd_cgroup = ctx->systemd_cgroup;
  st.rootless = rootless;
  st.new_pidns = config_has_new_ns (b->cfg, "pid");
  if (brig_proc_stat (*pid, NULL, &st.pid_start_time) < 0)
    {
      r = brig_error_say (err, ESRCH, "the restored process %d exited at once", (int) *pid);
      goto out;
    }
  r = brig_state_write (dirfd, &st, err);
  if (r < 0)
    goto out;
  if (o->pid_file && *o->pid_file)
    {
      char buf[16];
      int n = snprintf (buf, sizeof buf, "%d", (int) *pid);
      r = brig_write_file_atomic (AT_FDCWD, o->pid_file, buf, (size_t) n, 0644, err);
      if (r < 0)
        r = brig_error_wrap (err, "--pid-file");
    }
out:
  brig_state_file_clear (&st);
  argv_buf_clear (&a);
  return r;
}

int
brig_container_restore (const struct brig_context *ctx, const struct brig_restore_opts *o,
                        int *exit_status, brig_error *err)
{
  struct restore_bundle b = { 0 };
  _cleanup_close_ int dirfd = -1;
  brig_cgroup *cg = NULL;
  pid_t pid = 0;
  int r, status;

  *exit_status = 0;
  r = brig_state_check_id (o->id, err);
  if (r < 0)
    return r;
  r = restore_bundle_load (o->bundle, &b, err);
  if (r < 0)
    goto out_nostate;
  /* Restore makes a container from a bundle too: an extension (the node
   * policy) judges it as it judges create. */
  if (BRIG_EXT_HOOK (restore_begin) && (r = brig_ext->restore_begin (ctx, b.cfg, b.dir, err)) < 0)
    goto out_nostate;
  if (b.cfg->process && b.cfg->process->has_terminal && b.cfg->process->terminal)
    {
      /* The restored tty would need a new pty passed via --inherit-fd and
       * the console socket; not implemented. */
      r = brig_error_say (err, ENOTSUP, "restore of a container with process.terminal is not supported");
      goto out_nostate;
    }
  r = brig_state_claim (ctx, o->id, &dirfd, err);
  if (r < 0)
    goto out_nostate;
  r = restore_into (ctx, o, &b, dirfd, &cg, &pid, err);
  if (r < 0)
    {
      if (pid > 0)
        kill (pid, SIGKILL);
      goto out_remove;
    }
  if (o->detach)
    goto out_keep;
  /* Like run: wait for the restored init, then delete the container. */
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        r = brig_error_errno (err, "wait for the restored process %d", (int) pid);
        goto out_remove;
      }
  *exit_status = WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
out_remove:
  {
    brig_error e = { 0 };
    if (cg && brig_cgroup_destroy (cg, true, &e) < 0)
      brig_warn ("%s", e.msg ? e.msg : "remove the cgroup");
    brig_error_clear (&e);
  }
  brig_state_remove (ctx, o->id, dirfd, NULL);
out_keep:
  if (cg)
    brig_cgroup_free (cg);
out_nostate:
  restore_bundle_clear (&b);
  return r;
}
