/* The user process: see process.h for the order of the steps. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process/caps.h"
#include "process/groups.h"
#include "log.h"
#include "process/handshake.h"
#include "process/process.h"
#include "process/sysctl.h"
#include "utils.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static const struct {
  const char *name;
  int resource;
} rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

/* -1 when name is not an rlimit. */
static int
rlimit_from_name (const char *name)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (rlimit_names); i++)
    if (strcmp (rlimit_names[i].name, name) == 0)
      return rlimit_names[i].resource;
  return -1;
}

void
brig_process_init (struct brig_process *pr, const oci_process *p, brig_seccomp *seccomp,
                   int preserve_fds)
{
  memset (pr, 0, sizeof *pr);
  pr->p = p;
  pr->seccomp = seccomp;
  pr->preserve_fds = preserve_fds;
  pr->notify_fd = -1;
  pr->notify_sock = -1;
}

void
brig_process_clear (struct brig_process *pr)
{
  free (pr->exec_path);
  pr->exec_path = NULL;
  brig_strv_free (pr->envp);
  pr->envp = NULL;
  if (pr->notify_fd >= 0)
    close (pr->notify_fd);
  pr->notify_fd = -1;
}

int
brig_process_set_rlimits (const oci_process *p, brig_error *err)
{
  for (size_t i = 0; p && i < p->rlimits_len; i++)
    {
      const oci_rlimit *rl = &p->rlimits[i];
      int res = rlimit_from_name (rl->type);
      struct rlimit lim = { .rlim_cur = rl->soft, .rlim_max = rl->hard };
      if (res < 0)
        return brig_error_say (err, EINVAL, "process.rlimits[%zu]: unknown rlimit \"%s\"", i,
                               rl->type);
      if (setrlimit (res, &lim) < 0)
        return brig_error_errno (err, "setrlimit %s", rl->type);
    }
  return 0;
}

static bool
setgroups_denied (void)
{
  char buf[16] = "";
  _cleanup_close_ int fd = open ("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  if (read (fd, buf, sizeof buf - 1) < 0)
    return false;
  return strncmp (buf, "deny", 4) == 0;
}

int
brig_process_set_user (const oci_user *u, bool keep_groups, brig_error *err)
{
  uid_t uid = u && u->has_uid ? u->uid : 0;
  gid_t gid = u && u->has_gid ? u->gid : 0;
  mode_t mask = u && u->has_umask ? (mode_t) u->umask : 0022;

  /* Checked at create and exec already; here too because (uid_t) -1 would
   * leave the process as root ("unchanged") rather than fail. */
  if (brig_process_validate_user (u, err) < 0)
    return -EINVAL;
  /* setgroups with an empty list too: the container must not keep brig's
   * supplementary groups, unless the config asks for them (groups.h). */
  if (keep_groups)
    {
      int r = brig_keep_groups_apply (u, err);
      if (r < 0)
        return r;
    }
  else if (setgroups (u ? u->additional_gids_len : 0, u ? u->additional_gids : NULL) < 0)
    {
      if (!(errno == EPERM && setgroups_denied () && (u == NULL || u->additional_gids_len == 0)))
        return brig_error_errno (err, "setgroups (process.user.additionalGids)");
    }
  if (setresgid (gid, gid, gid) < 0)
    return brig_error_errno (err, "setgid %u (process.user.gid)", (unsigned) gid);
  if (setresuid (uid, uid, uid) < 0)
    return brig_error_errno (err, "setuid %u (process.user.uid)", (unsigned) uid);
  umask (mask);
  return 0;
}

int
brig_process_fix_stdio_owner (uid_t uid, gid_t gid, brig_error *err)
{
  return brig_process_fix_stdio_owner_known (uid, gid, NULL, 0, err);
}

int
brig_process_fix_stdio_owner_known (uid_t uid, gid_t gid, const struct stat known[3],
                                    unsigned mask, brig_error *err)
{
  struct stat pts;
  int have_pts = -1; /* /dev/pts looked up only for a terminal */

  for (int fd = 0; fd < 3; fd++)
    {
      struct stat st;
      if (mask & (1u << fd))
        st = known[fd];
      else if (fstat (fd, &st) < 0)
        continue;
      if (st.st_uid == uid && st.st_gid == gid)
        continue;
      /* Only what the user could not reopen through /proc/self/fd/N: a pipe,
       * a socket, or a terminal of the container's own devpts (the pty brig
       * made). /dev/null, regular files and the caller's terminal on the
       * host are left alone: the process still uses them through its fds. */
      if (S_ISCHR (st.st_mode))
        {
          if (have_pts < 0)
            have_pts = stat ("/dev/pts", &pts) == 0;
          if (!have_pts || st.st_dev != pts.st_dev || !isatty (fd))
            continue;
        }
      else if (!S_ISFIFO (st.st_mode) && !S_ISSOCK (st.st_mode))
        continue;
      /* Both ids, as runc: a process that reopens the fd as its group (a
       * setgid helper, a uid that differs from the owner) gets the same
       * access. A gid that is not mapped (EINVAL) still leaves the uid. */
      if (fchown (fd, uid, gid) == 0
          || (errno == EINVAL && gid != (gid_t) -1 && fchown (fd, uid, (gid_t) -1) == 0))
        continue;
      /* EINVAL: uid is not mapped in this user namespace; EPERM: the owner
       * is not (or a seccomp filter refuses); EROFS: a read-only /dev. The
       * process can still use the fd it has: go on as runc does. */
      if (errno == EINVAL || errno == EPERM || errno == EROFS)
        continue;
      return brig_error_errno (err, "chown stdio fd %d to %u:%u", fd, (unsigned) uid,
                               (unsigned) gid);
    }
  return 0;
}

int
brig_process_chdir (const char *cwd, brig_error *err)
{
  if (cwd == NULL || *cwd == '\0')
    cwd = "/";
  if (chdir (cwd) < 0)
    return brig_error_errno (err, "chdir to cwd (\"%s\") set in config.json", cwd);
  return 0;
}

static const char *
env_get (char *const *env, const char *name)
{
  size_t n = strlen (name);
  for (; env && *env; env++)
    if (strncmp (*env, name, n) == 0 && (*env)[n] == '=')
      return *env + n + 1;
  return NULL;
}

/* X_OK as execve will check it: with the effective uid, gids and
 * capabilities the process holds now (AT_EACCESS). access() would use the
 * real ids and, for a non-root uid, no capabilities at all, refusing what
 * CAP_DAC_OVERRIDE lets execve run. */
static int
may_execute (const char *path)
{
  struct stat st;

  if (faccessat (AT_FDCWD, path, X_OK, AT_EACCESS) == 0)
    return 0;
  /* X_OK never yields EPERM from a file system: a seccomp filter loaded
   * already (no noNewPrivileges) refuses faccessat2. Then any execute bit
   * will do here, and execve gives the kernel's answer. */
  if (errno != EPERM && errno != ENOSYS)
    return -1;
  if (stat (path, &st) < 0)
    return -1;
  if (!(st.st_mode & 0111))
    {
      errno = EACCES;
      return -1;
    }
  return 0;
}

static bool
is_executable_file (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISREG (st.st_mode) && may_execute (path) == 0;
}

/* strerror(e) as Go (runc) words it: no capital ("no such file or
 * directory"), so that what engines match in runc's message (podman:
 * "no such file or directory", "permission denied") is in brig's. No
 * system call: this also runs after a failed execve, under seccomp. */
static const char *
errno_words (int e, char buf[64])
{
  snprintf (buf, 64, "%s", strerror (e));
  if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
    buf[0] = (char) (buf[0] - 'A' + 'a');
  return buf;
}

/* runc's "exec: \"ARG0\": <errno>" for a process.args[0] that cannot be
 * run, errno taken from errno. */
static int
exec_lookup_error (const char *arg0, brig_error *err)
{
  char words[64];
  int e = errno;
  return brig_error_say (err, e, "exec: \"%s\": %s (process.args[0])", arg0,
                         errno_words (e, words));
}

int
brig_process_find_executable (const char *arg0, char *const *env, char **path,
                              brig_error *err)
{
  const char *p, *dirs;

  if (arg0 == NULL || *arg0 == '\0')
    return brig_error_say (err, EINVAL, "process.args must not be empty");
  if (strchr (arg0, '/'))
    {
      struct stat st;
      if (stat (arg0, &st) < 0)
        return exec_lookup_error (arg0, err);
      if (S_ISDIR (st.st_mode))
        return brig_error_say (err, EACCES, "exec: \"%s\": is a directory (process.args[0])",
                               arg0);
      if (may_execute (arg0) < 0)
        return exec_lookup_error (arg0, err);
      *path = xstrdup (arg0);
      return 0;
    }
  dirs = env_get (env, "PATH");
  for (p = dirs; p && *p;)
    {
      const char *end = strchrnul (p, ':');
      _cleanup_free_ char *cand = NULL;
      if (end == p)
        cand = xasprintf ("./%s", arg0); /* empty element: the cwd */
      else
        cand = xasprintf ("%.*s/%s", (int) (end - p), p, arg0);
      if (is_executable_file (cand))
        {
          *path = brig_steal_ptr (cand);
          return 0;
        }
      p = *end ? end + 1 : end;
    }
  if (dirs == NULL)
    return brig_error_say (err, ENOENT, "exec: \"%s\": executable file not found in $PATH "
                           "(process.env has no PATH)", arg0);
  return brig_error_say (err, ENOENT, "exec: \"%s\": executable file not found in $PATH "
                         "(PATH=%.200s%s)", arg0, dirs, strlen (dirs) > 200 ? "..." : "");
}

/* Index of NAME's entry in v[0..n), or n. */
static size_t
env_find (char *const *v, size_t n, const char *name, size_t len)
{
  for (size_t i = 0; i < n; i++)
    if (strncmp (v[i], name, len) == 0 && v[i][len] == '=')
      return i;
  return n;
}

/* Length of the name of "NAME=value" (the whole string without '='). */
static size_t
env_name_len (const char *kv)
{
  const char *eq = strchr (kv, '=');
  return eq ? (size_t) (eq - kv) : strlen (kv);
}

/* Whether two entries set the same variable. */
static bool
env_cmp_names (const char *a, const char *b)
{
  size_t la = env_name_len (a);
  return la == env_name_len (b) && memcmp (a, b, la) == 0;
}

/* qsort_r order of indices into the env array arg: by name, then by
 * position, so each name's entries end up together, first one first. */
static int
env_cmp (const void *a, const void *b, void *arg)
{
  char *const *env = arg;
  size_t i = *(const size_t *) a, j = *(const size_t *) b;
  const char *x = env[i], *y = env[j];
  size_t lx = env_name_len (x), ly = env_name_len (y);
  int c = memcmp (x, y, lx < ly ? lx : ly);

  if (c == 0 && lx != ly)
    c = lx < ly ? -1 : 1;
  if (c == 0)
    c = i < j ? -1 : i > j;
  return c;
}

char **
brig_process_env_list (const oci_process *p)
{
  size_t n = p && p->env ? p->env_len : 0;
  char **v = xmalloc0 ((n + 2) * sizeof (char *));
  _cleanup_free_ size_t *order = xmalloc0 ((n + 1) * sizeof (size_t));
  _cleanup_free_ const char **value = xmalloc0 ((n + 1) * sizeof (char *));
  size_t k = 0;

  /* As runc: a variable given twice keeps its first place and its last
   * value, once. A program's getenv would see the first (glibc), a shell
   * the last: one entry leaves no room for the two to disagree. Sorted,
   * not compared pairwise: an image may bring any number of variables. */
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  if (n > 1)
    qsort_r (order, n, sizeof *order, env_cmp, p->env);
  for (size_t g = 0; g < n;)
    {
      size_t e = g + 1;
      while (e < n && env_cmp_names (p->env[order[g]], p->env[order[e]]))
        e++;
      /* value[first place] = last value; the others stay NULL */
      value[order[g]] = p->env[order[e - 1]];
      g = e;
    }
  for (size_t i = 0; i < n; i++)
    if (value[i] != NULL)
      v[k++] = xstrdup (value[i]);
  v[k] = NULL;
  return v;
}

char **
brig_process_build_env (const oci_process *p)
{
  char **v = brig_process_env_list (p);
  size_t k = 0, at;

  while (v[k])
    k++;
  at = env_find (v, k, "HOME", 4);
  /* An empty HOME is as good as none (runc): the user's home from the
   * container's /etc/passwd, or "/". env_list left room for one more. */
  if (at == k || v[at][5] == '\0')
    {
      uid_t uid = p && p->user && p->user->has_uid ? p->user->uid : 0;
      _cleanup_free_ char *home = brig_passwd_field (uid, 5);
      char *kv = xasprintf ("HOME=%s", home && *home ? home : "/");
      if (at < k)
        free (v[at]);
      else
        v[k + 1] = NULL;
      v[at] = kv;
    }
  return v;
}

int
brig_process_validate_env (const oci_process *p, brig_error *err)
{
  /* execve would pass "FOO" along, and what a program makes of an entry
   * without '=' is undefined: refused, as runc does. */
  for (size_t i = 0; p && p->env && i < p->env_len; i++)
    if (p->env[i] == NULL || strchr (p->env[i], '=') == NULL || p->env[i][0] == '=')
      return brig_error_say (err, EINVAL, "process.env[%zu]: invalid environment variable \"%s\"",
                             i, p->env[i] ? p->env[i] : "");
  return 0;
}

int
brig_process_validate_user (const oci_user *u, brig_error *err)
{
  if (u == NULL)
    return 0;
  if (u->has_uid && u->uid > BRIG_ID_MAX)
    return brig_error_say (err, EINVAL, "process.user.uid: %u is out of range (0-%u)",
                           (unsigned) u->uid, BRIG_ID_MAX);
  if (u->has_gid && u->gid > BRIG_ID_MAX)
    return brig_error_say (err, EINVAL, "process.user.gid: %u is out of range (0-%u)",
                           (unsigned) u->gid, BRIG_ID_MAX);
  for (size_t i = 0; i < u->additional_gids_len; i++)
    if (u->additional_gids[i] > BRIG_ID_MAX)
      return brig_error_say (err, EINVAL, "process.user.additionalGids[%zu]: %u is out of range "
                             "(0-%u)", i, (unsigned) u->additional_gids[i], BRIG_ID_MAX);
  return 0;
}

int
brig_process_listen_fds (void)
{
  const char *fds = getenv ("LISTEN_FDS"), *pid = getenv ("LISTEN_PID");
  char *end;
  long n, owner;

  if (fds == NULL || pid == NULL)
    return 0;
  errno = 0;
  owner = strtol (pid, &end, 10);
  if (errno || end == pid || *end || owner != (long) getpid ())
    return 0;
  n = strtol (fds, &end, 10);
  if (errno || end == fds || *end || n <= 0 || n > INT_MAX - 3)
    return 0;
  return (int) n;
}

/* Replace or append NAME=value in the malloc'd vector *env. */
static void
env_put (char ***env, const char *name, const char *value)
{
  size_t n = strlen (name), k = 0;
  char *kv = xasprintf ("%s=%s", name, value);

  for (; (*env)[k]; k++)
    if (strncmp ((*env)[k], name, n) == 0 && (*env)[k][n] == '=')
      {
        free ((*env)[k]);
        (*env)[k] = kv;
        return;
      }
  *env = xrealloc (*env, (k + 2) * sizeof (char *));
  (*env)[k] = kv;
  (*env)[k + 1] = NULL;
}

void
brig_process_add_listen_env (char ***env, int listen_fds)
{
  char buf[16];

  snprintf (buf, sizeof buf, "%d", listen_fds);
  env_put (env, "LISTEN_FDS", buf);
  /* The pid the process will have: execve keeps ours (1 in a new pid ns). */
  snprintf (buf, sizeof buf, "%d", (int) getpid ());
  env_put (env, "LISTEN_PID", buf);
  /* The names systemd gave the same fds (sd_listen_fds_with_names(3)). */
  const char *names = getenv ("LISTEN_FDNAMES");
  if (names)
    env_put (env, "LISTEN_FDNAMES", names);
}

int
brig_process_close_fds (int preserve_fds, brig_error *err)
{
  unsigned int first = 3 + (unsigned int) (preserve_fds > 0 ? preserve_fds : 0);

  for (unsigned int fd = 0; fd < first; fd++)
    {
      int fl = fcntl ((int) fd, F_GETFD);
      if (fl >= 0 && (fl & FD_CLOEXEC))
        fcntl ((int) fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
  /* close-on-exec rather than close: brig's own fds (the sync socket, a log
   * file) stay usable until the execve. */
  if (syscall (SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
    return 0;
  _cleanup_closedir_ DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return brig_error_errno (err, "open /proc/self/fd");
  for (struct dirent *de; (de = readdir (d)) != NULL;)
    {
      int fd = atoi (de->d_name);
      if (de->d_name[0] < '0' || de->d_name[0] > '9' || (unsigned int) fd < first
          || fd == dirfd (d))
        continue;
      int fl = fcntl (fd, F_GETFD);
      if (fl >= 0)
        fcntl (fd, F_SETFD, fl | FD_CLOEXEC);
    }
  return 0;
}

int
brig_process_validate_hostname (const char *hostname, const char *domainname,
                                brig_error *err)
{
  /* The kernel's limit for both (sethostname/setdomainname EINVAL): refused
   * here, before anything exists, rather than by the init. */
  if (hostname && strlen (hostname) > HOST_NAME_MAX)
    return brig_error_say (err, EINVAL, "config.json: hostname is %zu bytes long: at most %d "
                           "are allowed", strlen (hostname), HOST_NAME_MAX);
  if (domainname && strlen (domainname) > HOST_NAME_MAX)
    return brig_error_say (err, EINVAL, "config.json: domainname is %zu bytes long: at most %d "
                           "are allowed", strlen (domainname), HOST_NAME_MAX);
  return 0;
}

int
brig_process_set_hostname (const char *hostname, const char *domainname, brig_error *err)
{
  /* The value is quoted cut short: it came from the config, any length. */
  if (hostname && sethostname (hostname, strlen (hostname)) < 0)
    return brig_error_errno (err, "hostname \"%.*s%s\": sethostname", HOST_NAME_MAX, hostname,
                             strlen (hostname) > HOST_NAME_MAX ? "..." : "");
  if (domainname && setdomainname (domainname, strlen (domainname)) < 0)
    return brig_error_errno (err, "domainname \"%.*s%s\": setdomainname", HOST_NAME_MAX,
                             domainname, strlen (domainname) > HOST_NAME_MAX ? "..." : "");
  return 0;
}

int
brig_process_check_fds (int listen_fds, int preserve_fds, brig_error *err)
{
  if (preserve_fds < 0)
    return brig_error_say (err, EINVAL, "--preserve-fds must not be negative");
  /* Stops at the first hole: a huge count costs one syscall, not millions. */
  for (int fd = 3; fd < 3 + listen_fds + preserve_fds; fd++)
    if (fcntl (fd, F_GETFD) < 0)
      {
        bool listen = fd < 3 + listen_fds;
        return brig_error_say (err, EBADF, "%s=%d: fd %d (%s-fd %d) is not open",
                               listen ? "LISTEN_FDS" : "--preserve-fds",
                               listen ? listen_fds : preserve_fds, fd,
                               listen ? "listen" : "preserved",
                               listen ? fd - 3 : fd - 3 - listen_fds);
      }
  return 0;
}

int
brig_process_apply_sysctl (const oci_map *sysctl, brig_error *err)
{
  for (size_t i = 0; sysctl && i < sysctl->len; i++)
    {
      /* create checked every key (sysctl.c); the same spelling rules here. */
      _cleanup_free_ char *name = brig_sysctl_path (sysctl->keys[i]);
      _cleanup_free_ char *path = NULL;
      int r;
      if (name == NULL)
        return brig_error_say (err, EINVAL, "linux.sysctl: invalid key \"%s\"", sysctl->keys[i]);
      path = xasprintf ("/proc/sys/%s", name);
      r = brig_write_string_at (AT_FDCWD, path, sysctl->values[i]);
      if (r < 0)
        return brig_error_set (err, -r, "linux.sysctl: write %s", path);
    }
  return 0;
}

int
brig_process_set_oom_score_adj (pid_t pid, int value, brig_error *err)
{
  char path[64], buf[16];
  int r;

  if (pid > 0)
    snprintf (path, sizeof path, "/proc/%d/oom_score_adj", (int) pid);
  else
    snprintf (path, sizeof path, "/proc/self/oom_score_adj");
  snprintf (buf, sizeof buf, "%d", value);
  r = brig_write_string_at (AT_FDCWD, path, buf);
  if (r < 0)
    return brig_error_set (err, -r, "process.oomScoreAdj: write %s", path);
  return 0;
}

int
brig_process_load_seccomp (struct brig_process *pr, brig_error *err)
{
  int r;
  if (pr->seccomp == NULL || pr->seccomp_loaded)
    return 0;
  r = brig_seccomp_load (pr->seccomp, &pr->notify_fd, err);
  if (r < 0)
    return r;
  pr->seccomp_loaded = true;
  /* No syscall before this one: any of them may wait for the agent. */
  if (pr->notify_fd >= 0 && pr->notify_sock >= 0)
    {
      int fd = pr->notify_fd;
      pr->notify_fd = -1;
      r = brig_hs_seccomp_send (pr->seccomp, pr->notify_sock, fd);
      if (r < 0)
        return brig_error_set (err, -r, "hand the seccomp listener fd to the runtime");
    }
  return 0;
}

int
brig_process_become (struct brig_process *pr, brig_error *err)
{
  const oci_process *p = pr->p;
  const oci_user *u = p->user;
  bool chdir_done = false;
  int r;

  /* A session (and process group) of its own, as runc gives every process:
   * the one brig had lies outside the container's pid namespace, where
   * getpgrp() and getsid() read 0. A terminal made us a leader already. */
  if (setsid () < 0 && getsid (0) != getpid ())
    return brig_error_errno (err, "setsid");
  r = brig_process_fix_stdio_owner_known (u && u->has_uid ? u->uid : 0,
                                          u && u->has_gid ? u->gid : 0, pr->stdio_st,
                                          pr->stdio_known, err);
  if (r < 0)
    return r;
  r = brig_process_set_rlimits (p, err);
  if (r < 0)
    return r;
  r = brig_caps_prepare (p->capabilities, u && u->has_uid ? u->uid : 0, !pr->caps_checked,
                         err);
  if (r < 0)
    return r;
  if (pr->seccomp_early)
    {
      r = brig_process_load_seccomp (pr, err);
      if (r < 0)
        return r;
    }
  /* cwd first as root (it may be reachable only with brig's rights), and
   * again as the user if that was refused. */
  if (pr->at_root && (p->cwd == NULL || strcmp (p->cwd, "/") == 0))
    chdir_done = true;
  else if (chdir (p->cwd && *p->cwd ? p->cwd : "/") == 0)
    chdir_done = true;
  else if (errno != EACCES && errno != EPERM)
    return brig_process_chdir (p->cwd, err);
  r = brig_process_set_user (u, pr->keep_groups, err);
  if (r < 0)
    return r;
  /* Non-dumpable before the capabilities drop, which is what would let a
   * process of the container (an exec, a container sharing the pid
   * namespace) ptrace us or open /proc/PID/{environ,fd,mem} until execve:
   * the init waits for `start` here with brig's environment and fds, its
   * seccomp filter (noNewPrivileges) and LSM label not yet applied. Here
   * and not earlier: the uid change above resets the flag to
   * fs.suid_dumpable. execve makes the container's program dumpable. */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return brig_error_errno (err, "prctl PR_SET_DUMPABLE");
  r = brig_caps_apply (p->capabilities, err);
  if (r < 0)
    return r;
  if (!chdir_done)
    {
      r = brig_process_chdir (p->cwd, err);
      if (r < 0)
        return r;
    }
  /* A cwd reached through an inherited fd (/proc/self/fd/N) lies outside
   * the root, which the kernel reports as unreachable (CVE-2024-21626).
   * "/" resolves from the process's root itself: nothing to ask. */
  if (p->cwd && *p->cwd && strcmp (p->cwd, "/") != 0)
    {
      char here[4096];
      if (getcwd (here, sizeof here) == NULL && errno == ENOENT)
        return brig_error_say (err, EPERM, "cwd (\"%s\") is outside the container", p->cwd);
    }
  pr->envp = brig_process_build_env (p);
  if (pr->listen_fds > 0)
    brig_process_add_listen_env (&pr->envp, pr->listen_fds);
  if (!pr->no_exec
      && (r = brig_process_find_executable (p->args ? p->args[0] : NULL, pr->envp,
                                            &pr->exec_path, err)) < 0)
    return r;
  if (p->no_new_privileges && prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return brig_error_errno (err, "prctl PR_SET_NO_NEW_PRIVS");
  return 0;
}

int
brig_process_exec (struct brig_process *pr, brig_error *err)
{
  int r;

  r = brig_process_close_fds (pr->listen_fds + pr->preserve_fds, err);
  if (r < 0)
    return r;
  /* Nothing but execve may follow the filter. */
  r = brig_process_load_seccomp (pr, err);
  if (r < 0)
    return r;
  execve (pr->exec_path, pr->p->args, pr->envp);
  /* E2BIG, or what changed since the lookup (ENOENT, EACCES, ENOEXEC).
   * runc's words first ("exec PATH: <errno>"), then which field and what
   * the errno means here. */
  char words[64];
  int e = errno;
  const char *why = e == ENOENT ? ": the file or its #! interpreter is missing"
                    : e == E2BIG ? ": the arguments and environment exceed the kernel's limit"
                    : "";
  return brig_error_say (err, e, "exec %s: %s (process.args[0] \"%s\"%s)", pr->exec_path,
                         errno_words (e, words), pr->p->args[0], why);
}

int
brig_process_join_session_keyring (const char *name, brig_error *err)
{
  if (syscall (SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, name) >= 0)
    return 0;
  if (errno == ENOSYS || errno == EPERM)
    {
      brig_debug ("join a new session keyring: %s", strerror (errno));
      return 0;
    }
  return brig_error_errno (err, "join a new session keyring");
}
