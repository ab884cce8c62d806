/* brig reset's checks of the new init, while it waits for `start`: what
 * the previous tenant could have left and the new init could see, each a
 * named check in the report (docs/sandbox.md "Reset", the threat model).
 * Everything is read from the host side (/proc/PID of the new init, the
 * cgroup) or from a short-lived child that joined one namespace; nothing
 * runs inside the container. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "paths.h"
#include "sandbox/ephemeral.h"
#include "sandbox/reset_internal.h"
#include "container/state.h"
#include "utils.h"

/* include/linux/magic.h of the kernel sources; not in the uapi header */
#ifndef MQUEUE_MAGIC
#define MQUEUE_MAGIC 0x19800202
#endif
#ifndef FSCONFIG_CMD_CREATE
#define FSCONFIG_CMD_CREATE 6
#endif

/* Append "what" to a comma list (at most 4 items, then "..."). */
static void
note (char **list, size_t *n, const char *what)
{
  char *s;
  if ((*n)++ >= 4)
    {
      if (*n == 5)
        {
          s = xasprintf ("%s, ...", *list);
          free (*list);
          *list = s;
        }
      return;
    }
  s = xasprintf ("%s%s%s", *list ? *list : "", *list ? ", " : "", what);
  free (*list);
  *list = s;
}

/* The namespace's own socket counters (sockstat, sockstat6): "sockets:
 * used", every "inuse" and TCP's "tw". True when all are 0. Cheap, where
 * /proc/net/tcp walks the host's whole connection hash table (5 ms here). */
static int
sockstat_empty (const char *dir)
{
  static const char *const files[] = { "sockstat", "sockstat6" };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *path = xasprintf ("%s/%s", dir, files[i]), *text = NULL;
      char *save = NULL;
      bool want = false;
      size_t counted = 0;
      int r = brig_read_file_at (AT_FDCWD, path, &text, NULL, NULL);
      if (r == -ENOENT && i == 1)
        continue;   /* no IPv6 */
      if (r < 0)
        return r;   /* not looked at: never "empty" */
      for (char *w = strtok_r (text, " \n", &save); w; w = strtok_r (NULL, " \n", &save))
        {
          if (want && strcmp (w, "0") != 0)
            return 0;
          counted += want;
          want = strcmp (w, "used") == 0 || strcmp (w, "inuse") == 0 || strcmp (w, "tw") == 0;
        }
      if (counted == 0)
        return -EBADMSG;   /* a file without the counters is not an empty one */
    }
  return 1;
}

int
reset_sockets (const char *dir, char **detail)
{
  static const char *const files[] = { "tcp", "tcp6", "udp", "udp6", "raw", "raw6", "unix",
                                       "packet" };
  size_t n = 0;

  int r;

  *detail = NULL;
  r = sockstat_empty (dir);
  if (r != 0)
    return r < 0 ? r : 0;
  /* Something is there: say what, from the per-protocol tables. */
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *path = xasprintf ("%s/%s", dir, files[i]);
      _cleanup_fclose_ FILE *f = fopen (path, "re");
      char line[512];
      bool header = true;
      if (f == NULL)
        {
          if (errno == ENOENT)
            continue;   /* no IPv6, no packet sockets in this kernel */
          return -errno;
        }
      while (fgets (line, sizeof line, f))
        {
          char what[128];
          unsigned st = 0;
          if (header)
            {
              header = false;
              continue;
            }
          /* tcp/udp: "sl local rem st ..." (st in hex) */
          if (files[i][0] == 't' || files[i][0] == 'u' || files[i][0] == 'r')
            sscanf (line, "%*s %*s %*s %x", &st);
          if (strcmp (files[i], "unix") == 0 || strcmp (files[i], "packet") == 0)
            snprintf (what, sizeof what, "a %s socket", files[i]);
          else
            snprintf (what, sizeof what, "a %s socket (state %02X)", files[i], st);
          note (detail, &n, what);
        }
    }
  return 0;
}

/* An octal-escaped mountinfo field (\040 for a space) decoded in place. */
static void
unescape (char *s)
{
  char *o = s;
  for (; *s; s++)
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0'
        && s[3] <= '7')
      {
        *o++ = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
        s += 3;
      }
    else
      *o++ = *s;
  *o = '\0';
}

static bool
under (const char *path, const char *dir)
{
  size_t l = strlen (dir);
  return strncmp (path, dir, l) == 0 && path[l] == '/';
}

/* How many mounts the config makes at mount point mp (the root, its
 * mounts, masked and read-only paths, the device nodes brig binds under
 * /dev): a mount anywhere else, or one more on top of them, came from the
 * host, e.g. propagated there by the previous tenant. SIZE_MAX: any
 * number (below a cgroup mount: one per v1 hierarchy). */
static size_t
mounts_expected (const oci_config *cfg, const char *mp)
{
  static const char *const dev[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random",
                                     "/dev/urandom", "/dev/tty", "/dev/console" };
  const oci_linux *lx = cfg->linux;
  size_t n = strcmp (mp, "/") == 0;

  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      _cleanup_free_ char *d = cfg->mounts[i].destination
        ? brig_path_clean (cfg->mounts[i].destination) : NULL;
      const char *type = cfg->mounts[i].type ? cfg->mounts[i].type : "";
      if (d == NULL)
        continue;
      if (strcmp (mp, d) == 0)
        n++;
      /* a v1 cgroup mount is one mount per hierarchy below it */
      if ((strcmp (type, "cgroup") == 0 || strcmp (type, "cgroup2") == 0) && under (mp, d))
        return SIZE_MAX;
    }
  for (size_t i = 0; lx && i < lx->masked_paths_len; i++)
    n += strcmp (mp, lx->masked_paths[i]) == 0;
  for (size_t i = 0; lx && i < lx->readonly_paths_len; i++)
    n += strcmp (mp, lx->readonly_paths[i]) == 0;
  for (size_t i = 0; lx && i < lx->devices_len; i++)
    n += lx->devices[i].path && strcmp (mp, lx->devices[i].path) == 0;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (dev); i++)
    n += strcmp (mp, dev[i]) == 0;
  return n;
}

/* The mount points seen so far and how often. */
struct seen {
  char **mp;
  size_t *count, n;
};

static size_t
seen_add (struct seen *s, const char *mp)
{
  for (size_t i = 0; i < s->n; i++)
    if (strcmp (s->mp[i], mp) == 0)
      return ++s->count[i];
  s->mp = xrealloc (s->mp, (s->n + 1) * sizeof *s->mp);
  s->count = xrealloc (s->count, (s->n + 1) * sizeof *s->count);
  s->mp[s->n] = xstrdup (mp);
  s->count[s->n++] = 1;
  return 1;
}

static void
check_mounts (const oci_config *cfg, pid_t pid, struct brig_reset_report *rep)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/mountinfo", (int) pid);
  _cleanup_fclose_ FILE *f = fopen (path, "re");
  char *line = NULL, *extra = NULL;
  size_t cap = 0, n = 0, lines = 0;
  struct seen seen = { NULL, NULL, 0 };

  if (f == NULL)
    {
      reset_check_add (rep, "mounts.exact", false, xasprintf ("%s: %s", path, strerror (errno)));
      return;
    }
  while (getline (&line, &cap, f) > 0)
    {
      char mp[4096];
      size_t want;
      lines++;
      /* id parent major:minor root mountpoint ... */
      if (sscanf (line, "%*s %*s %*s %*s %4095s", mp) != 1)
        {
          note (&extra, &n, "a line that cannot be read");
          continue;
        }
      unescape (mp);
      want = mounts_expected (cfg, mp);
      if (want != SIZE_MAX && seen_add (&seen, mp) > want)
        {
          char *w = want ? xasprintf ("%s (one more on top)", mp) : xstrdup (mp);
          note (&extra, &n, w);
          free (w);
        }
    }
  free (line);
  for (size_t i = 0; i < seen.n; i++)
    free (seen.mp[i]);
  free (seen.mp);
  free (seen.count);
  /* not even the root: nothing was looked at */
  if (lines == 0)
    note (&extra, &n, "no mount at all listed");
  reset_check_add (rep, "mounts.exact", n == 0,
                   extra ? xasprintf ("mounts the config does not ask for: %s", extra) : NULL);
  free (extra);
}

/* Entries of a directory (no "." or ".."), listed in *list. */
static int
dir_entries (int dfd, char **list, size_t *n)
{
  DIR *d = fdopendir (dfd);
  struct dirent *de;
  if (d == NULL)
    {
      close (dfd);
      return -errno;
    }
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      note (list, n, de->d_name);
  closedir (d);
  return 0;
}

/* The writable places that come new with the reset: the ephemeral layer
 * and the config's tmpfs mounts, /dev/shm first among them. */
static void
check_writable (const oci_config *cfg, pid_t pid, int dirfd, struct brig_reset_report *rep)
{
  _cleanup_free_ char *rootp = xasprintf ("/proc/%d/root", (int) pid);
  _cleanup_close_ int rootfd = open (rootp, O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct brig_ephemeral e = { 0 };
  char *found = NULL;
  size_t n = 0;

  if (rootfd < 0)
    {
      reset_check_add (rep, "tmpfs.empty", false, xasprintf ("not checked: %s: %s", rootp,
                                                             strerror (errno)));
      return;
    }
  if (brig_ephemeral_parse (cfg, &e, NULL) == 0 && e.mode == BRIG_EPHEMERAL_TMPFS)
    {
      /* An overlay reports its upper layer's file system: a new tmpfs
       * holds no page, the layer's own directories and at most the
       * mount targets brig made in it (a destination's components the
       * bundle's rootfs lacks: copied up as empty directories). */
      struct statfs sf;
      unsigned long long bound = 8;
      for (size_t i = 0; i < cfg->mounts_len; i++)
        for (const char *c = cfg->mounts[i].destination; c && *c; c++)
          bound += *c == '/' && c[1] != '/' && c[1] != '\0';
      if (fstatfs (rootfd, &sf) < 0)
        reset_check_add (rep, "rootfs.layer", false,
                         xasprintf ("not checked: statfs of the new root: %s", strerror (errno)));
      else
        reset_check_add (rep, "rootfs.layer", sf.f_blocks - sf.f_bfree == 0
                         && sf.f_files - sf.f_ffree <= bound,
                         xasprintf ("the tmpfs layer holds %llu blocks and %llu inodes "
                                    "(bound %llu)",
                                    (unsigned long long) (sf.f_blocks - sf.f_bfree),
                                    (unsigned long long) (sf.f_files - sf.f_ffree), bound));
    }
  else if (e.mode == BRIG_EPHEMERAL_DISK)
    {
      int fd = openat (dirfd, BRIG_EPHEMERAL_DIR "/upper", O_RDONLY | O_DIRECTORY | O_CLOEXEC
                       | O_NOFOLLOW);
      int r = fd < 0 ? -errno : dir_entries (fd, &found, &n);
      reset_check_add (rep, "rootfs.layer", r == 0 && n == 0,
                       r < 0 ? xasprintf ("not checked: the disk layer: %s", strerror (-r))
                       : xasprintf ("the disk layer holds: %s", found ? found : ""));
      free (found);
      found = NULL;
      n = 0;
    }

  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      _cleanup_free_ char *d = m->destination ? brig_path_clean (m->destination) : NULL;
      char *here = NULL;
      size_t k = 0;
      int fd;
      /* /dev is filled by brig with the device nodes */
      if (d == NULL || m->type == NULL || strcmp (m->type, "tmpfs") != 0 || strcmp (d, "/dev") == 0)
        continue;
      fd = brig_path_open_in_root (rootfd, d, O_RDONLY | O_DIRECTORY);
      if (fd < 0 || dir_entries (fd, &here, &k) < 0)
        {
          char *w = xasprintf ("%s not checked (cannot list it)", d);
          note (&found, &n, w);
          free (w);
          continue;
        }
      if (k > 0)
        {
          char *w = xasprintf ("%s holds %s", d, here);
          note (&found, &n, w);
          free (w);
        }
      free (here);
    }
  reset_check_add (rep, "tmpfs.empty", n == 0, found);
}

/* What a child that joined the new init's uts and ipc namespaces sees. */
struct ns_probe {
  int uts_ok, ipc_ok;
  char host[65], domain[65];
  int shm, sem, msg, mq;
};

/* Rows of a /proc table after its header; -1 when it cannot be read (or
 * has no header): not looked at. */
static int
count_lines (const char *path)
{
  FILE *f = fopen (path, "re");
  char line[512];
  int n = -1;   /* the header */
  if (f == NULL)
    return -1;
  while (fgets (line, sizeof line, f))
    n++;
  fclose (f);
  return n;
}

/* The entries of an mqueue directory (dfd, taken; -1 on error). */
static int
count_queues (int dfd)
{
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  struct dirent *de;
  int n = 0;

  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return -1;
    }
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      n++;
  closedir (d);
  return n;
}

/* The POSIX message queues of the current ipc namespace: a new mqueue
 * instance (fsopen makes it for the caller's ipc namespace), never mounted
 * anywhere. */
static int
count_mqueues (void)
{
  int fs = (int) syscall (SYS_fsopen, "mqueue", 1 /* FSOPEN_CLOEXEC */);
  int mnt, dfd;

  if (fs < 0)
    return -1;
  if (syscall (SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0
      || (mnt = (int) syscall (SYS_fsmount, fs, 1 /* FSMOUNT_CLOEXEC */, 0)) < 0)
    {
      close (fs);
      return -1;
    }
  close (fs);
  dfd = openat (mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  close (mnt);
  return count_queues (dfd);
}

/* The same through the config's own mqueue mounts, when it has any: the
 * new init mounted them after it unshared its ipc namespace, in a mount
 * namespace no tenant code has run in (mounts.exact checks what is
 * there), and an mqueue mount made in an ipc namespace is that
 * namespace's one instance. Every one is listed, as the next tenant would
 * see it at its path (something else there, not mqueue, is not looked at
 * and fails). Saves making a detached mount, whose last close waits for
 * an expedited RCU grace period (0.1-4 ms on the test VM). -2: the config
 * mounts none. */
static int
count_mqueues_mounted (const oci_config *cfg, pid_t pid)
{
  char root[64];
  _cleanup_close_ int rootfd = -1;
  int total = -2;

  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      _cleanup_free_ char *d = NULL;
      struct statfs sf;
      int fd, n;
      if (m->type == NULL || strcmp (m->type, "mqueue") != 0 || m->destination == NULL)
        continue;
      snprintf (root, sizeof root, "/proc/%d/root", (int) pid);
      if (rootfd < 0 && (rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return -1;
      d = brig_path_clean (m->destination);
      fd = brig_path_open_in_root (rootfd, d, O_RDONLY | O_DIRECTORY);
      if (fd < 0)
        return -1;
      if (fstatfs (fd, &sf) < 0 || sf.f_type != MQUEUE_MAGIC)
        {
          close (fd);
          return -1;
        }
      n = count_queues (fd);
      if (n < 0)
        return -1;
      total = (total < 0 ? 0 : total) + n;
    }
  return total;
}

/* What a thread that joined the new init's uts and ipc namespaces sees:
 * setns of these two changes only the calling thread's namespaces, so the
 * thread needs no way back and brig's own thread never leaves. A thread
 * costs less than the child process this was (fork, its page faults, its
 * exit and reaping). */
struct ns_probe_arg {
  int uts_fd, ipc_fd;
  bool mq_mounted;   /* the mqueue count comes from the config's mount */
  struct ns_probe p;
};

static void *
probe_thread (void *arg)
{
  struct ns_probe_arg *a = arg;
  struct utsname u;

  if (a->uts_fd >= 0 && setns (a->uts_fd, CLONE_NEWUTS) == 0 && uname (&u) == 0)
    {
      a->p.uts_ok = 1;
      snprintf (a->p.host, sizeof a->p.host, "%s", u.nodename);
      snprintf (a->p.domain, sizeof a->p.domain, "%s", u.domainname);
    }
  if (a->ipc_fd >= 0 && setns (a->ipc_fd, CLONE_NEWIPC) == 0)
    {
      a->p.ipc_ok = 1;
      a->p.shm = count_lines ("/proc/sysvipc/shm");
      a->p.sem = count_lines ("/proc/sysvipc/sem");
      a->p.msg = count_lines ("/proc/sysvipc/msg");
      if (!a->mq_mounted)
        a->p.mq = count_mqueues ();
    }
  return NULL;
}

static void
check_uts_ipc (const oci_config *cfg, unsigned long new_flags, pid_t pid,
               struct brig_reset_report *rep)
{
  struct ns_probe_arg a = { .uts_fd = -1, .ipc_fd = -1 };
  struct ns_probe *p = &a.p;
  struct utsname self;
  char path[64];
  pthread_t t;
  bool got;

  if (!(new_flags & (CLONE_NEWUTS | CLONE_NEWIPC)))
    return;
  snprintf (path, sizeof path, "/proc/%d/ns/uts", (int) pid);
  if (new_flags & CLONE_NEWUTS)
    a.uts_fd = open (path, O_RDONLY | O_CLOEXEC);
  snprintf (path, sizeof path, "/proc/%d/ns/ipc", (int) pid);
  if (new_flags & CLONE_NEWIPC)
    {
      a.ipc_fd = open (path, O_RDONLY | O_CLOEXEC);
      p->mq = count_mqueues_mounted (cfg, pid);
      a.mq_mounted = p->mq != -2;
    }
  got = pthread_create (&t, NULL, probe_thread, &a) == 0 && pthread_join (t, NULL) == 0;
  if (a.uts_fd >= 0)
    close (a.uts_fd);
  if (a.ipc_fd >= 0)
    close (a.ipc_fd);
  if (new_flags & CLONE_NEWUTS)
    {
      /* Without a hostname in the config the new namespace keeps brig's. */
      const char *want_h = cfg->hostname && *cfg->hostname ? cfg->hostname : NULL;
      const char *want_d = cfg->domainname && *cfg->domainname ? cfg->domainname : NULL;
      uname (&self);
      if (want_h == NULL)
        want_h = self.nodename;
      if (want_d == NULL)
        want_d = self.domainname;
      reset_check_add (rep, "uts.config", got && p->uts_ok && strcmp (p->host, want_h) == 0
                       && strcmp (p->domain, want_d) == 0,
                       got && p->uts_ok ? xasprintf ("hostname \"%s\", domainname \"%s\"",
                                                     p->host, p->domain)
                       : xstrdup ("not checked: cannot join the uts namespace"));
    }
  if (new_flags & CLONE_NEWIPC)
    {
      reset_check_add (rep, "ipc.empty", got && p->ipc_ok && p->shm == 0 && p->sem == 0
                       && p->msg == 0,
                       !(got && p->ipc_ok) ? xstrdup ("not checked: cannot join the ipc namespace")
                       : p->shm < 0 || p->sem < 0 || p->msg < 0
                       ? xstrdup ("not checked: cannot read /proc/sysvipc")
                       : xasprintf ("%d shm, %d sem, %d msg", p->shm, p->sem, p->msg));
      reset_check_add (rep, "mqueue.empty", got && p->ipc_ok && p->mq == 0,
                       !(got && p->ipc_ok) || p->mq < 0
                       ? xstrdup ("not checked: cannot list the POSIX message queues")
                       : xasprintf ("%d POSIX message queues", p->mq));
    }
}

static void
check_sockets (pid_t pid, struct brig_reset_report *rep)
{
  _cleanup_free_ char *dir = xasprintf ("/proc/%d/net", (int) pid);
  char *detail = NULL;
  int r = reset_sockets (dir, &detail);
  if (r < 0)
    return reset_check_add (rep, "net.sockets", false, xasprintf ("not checked: %s: %s", dir,
                                                                  strerror (-r)));
  reset_check_add (rep, "net.sockets", detail == NULL, detail);
}

/* /proc/PID/limits row titles of the rlimits a config may set. */
static const struct { const char *type, *title; } limit_rows[] = {
  { "RLIMIT_CPU", "Max cpu time" }, { "RLIMIT_FSIZE", "Max file size" },
  { "RLIMIT_DATA", "Max data size" }, { "RLIMIT_STACK", "Max stack size" },
  { "RLIMIT_CORE", "Max core file size" }, { "RLIMIT_RSS", "Max resident set" },
  { "RLIMIT_NPROC", "Max processes" }, { "RLIMIT_NOFILE", "Max open files" },
  { "RLIMIT_MEMLOCK", "Max locked memory" }, { "RLIMIT_AS", "Max address space" },
  { "RLIMIT_LOCKS", "Max file locks" }, { "RLIMIT_SIGPENDING", "Max pending signals" },
  { "RLIMIT_MSGQUEUE", "Max msgqueue size" }, { "RLIMIT_NICE", "Max nice priority" },
  { "RLIMIT_RTPRIO", "Max realtime priority" }, { "RLIMIT_RTTIME", "Max realtime timeout" },
};

static uint64_t
limit_value (const char *s)
{
  return strcmp (s, "unlimited") == 0 ? UINT64_MAX : strtoull (s, NULL, 10);
}

static void
check_rlimits (const oci_config *cfg, pid_t pid, struct brig_reset_report *rep)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/limits", (int) pid), *text = NULL;
  const oci_process *p = cfg->process;
  char *bad = NULL;
  size_t n = 0;

  /* nothing to compare: the check does not apply */
  if (p == NULL || p->rlimits_len == 0)
    return;
  if (brig_read_file_at (AT_FDCWD, path, &text, NULL, NULL) < 0)
    return reset_check_add (rep, "rlimits.config", false,
                            xasprintf ("not checked: cannot read %s", path));
  for (size_t i = 0; p && i < p->rlimits_len; i++)
    for (size_t j = 0; j < BRIG_ARRAY_SIZE (limit_rows); j++)
      {
        char soft[32], hard[32], *row;
        if (strcmp (p->rlimits[i].type, limit_rows[j].type) != 0)
          continue;
        row = strstr (text, limit_rows[j].title);
        if (row == NULL || sscanf (row + strlen (limit_rows[j].title), "%31s %31s", soft,
                                   hard) != 2
            || limit_value (soft) != p->rlimits[i].soft
            || limit_value (hard) != p->rlimits[i].hard)
          {
            char *w = xasprintf ("%s is %s/%s", p->rlimits[i].type, row ? soft : "?",
                                 row ? hard : "?");
            note (&bad, &n, w);
            free (w);
          }
      }
  reset_check_add (rep, "rlimits.config", n == 0, bad);
}

/* Before start, what is observable of the filter is how many the init runs
 * under: exactly one (the program prepared from the seccomp cache at the
 * respawn; its bytes would need ptrace) when it loads it before waiting for
 * start (no noNewPrivileges), none when it loads it last before execve
 * (noNewPrivileges: after start) or without linux.seccomp. */
static void
check_seccomp (const oci_config *cfg, pid_t pid, struct brig_reset_report *rep)
{
  _cleanup_free_ char *path = xasprintf ("/proc/%d/status", (int) pid), *text = NULL;
  bool want = cfg->linux && cfg->linux->seccomp && cfg->process
              && !cfg->process->no_new_privileges;
  const char *m, *f;
  int mode = -1, filters = -1;

  if (brig_read_file_at (AT_FDCWD, path, &text, NULL, NULL) == 0)
    {
      if ((m = strstr (text, "\nSeccomp:")) != NULL)
        mode = atoi (m + 9);
      if ((f = strstr (text, "\nSeccomp_filters:")) != NULL)
        filters = atoi (f + 17);
    }
  reset_check_add (rep, "seccomp.config", want ? mode == 2 && filters == 1 : mode == 0,
                   mode < 0 ? xasprintf ("not checked: no Seccomp line in %s", path)
                   : xasprintf ("Seccomp: %d, Seccomp_filters: %d (%s)", mode, filters,
                                want ? "want one filter" : "want none before start"));
}

/* pids.current is 1 (the new init) plus the zombies not reaped yet (dead
 * processes whose parent, the engine's subreaper or pid 1 for the inits
 * brig create and reset left, has not reaped them: they hold a pid and
 * nothing else); live processes of the old tenant are cgroup.empty's.
 * Memory under a bound. */
static void
check_usage (brig_cgroup *cg, int dirfd, pid_t old_pid, unsigned long long old_start,
             struct brig_reset_report *rep)
{
  struct reset_zombies zs;
  uint64_t mem, pids;

  /* The usual case: the old init and those of earlier resets, known. */
  reset_zombies_load (dirfd, brig_cgroup_path (cg), old_pid, old_start, &zs);
  brig_cgroup_usage (cg, &mem, &pids);
  /* A killed task leaves cgroup.procs before it is a zombie and stays
   * charged until it is reaped, so exits the kill started may still be
   * finishing: count the zombies, then read pids.current again (a reap in
   * between only lowers it), for up to ~1.1 s: every 2 ms for the first
   * 100 ms, then every 10 ms (a tenant's large address space takes a while
   * to tear down on a loaded machine). Live tasks of the old tenant are
   * cgroup.empty's and ns.unused's to find, not this check's. */
  for (int i = 0; pids < BRIG_CGROUP_UNREADABLE && pids > 1 + zs.n && i < 150; i++)
    {
      if (i > 0)
        nanosleep (&(struct timespec) { 0, (i < 50 ? 2 : 10) * 1000 * 1000 }, NULL);
      reset_zombies_scan (brig_cgroup_path (cg), old_pid, old_start, &zs);
      brig_cgroup_usage (cg, &mem, &pids);
    }
  reset_zombies_save (dirfd, &zs);
  /* UINT64_MAX: the cgroup lacks the controller (the check does not
   * apply); one it has but cannot be read is not checked, never ok. */
  if (pids == BRIG_CGROUP_UNREADABLE)
    reset_check_add (rep, "pids.usage", false, xstrdup ("not checked: pids.current cannot be read"));
  else if (pids != UINT64_MAX)
    reset_check_add (rep, "pids.usage", pids <= 1 + zs.n,
                     xasprintf ("pids.current is %" PRIu64 ", want 1 (the new init) and %zu"
                                " zombies not reaped yet", pids, zs.n));
  if (mem == BRIG_CGROUP_UNREADABLE)
    reset_check_add (rep, "memory.usage", false, xstrdup ("not checked: the memory usage "
                                                          "cannot be read"));
  else if (mem != UINT64_MAX)
    reset_check_add (rep, "memory.usage", mem <= BRIG_RESET_MEMORY_BOUND,
                     xasprintf ("%" PRIu64 " bytes in use, bound %" PRIu64, mem,
                                BRIG_RESET_MEMORY_BOUND));
}

void
reset_verify_init (const oci_config *cfg, unsigned long new_flags, pid_t pid, int dirfd,
                   brig_cgroup *cg, pid_t old_pid, unsigned long long old_start,
                   struct brig_reset_report *rep)
{
  if (new_flags & CLONE_NEWNS)
    {
      check_mounts (cfg, pid, rep);
      check_writable (cfg, pid, dirfd, rep);
    }
  check_uts_ipc (cfg, new_flags, pid, rep);
  if (new_flags & CLONE_NEWNET)
    check_sockets (pid, rep);
  check_rlimits (cfg, pid, rep);
  check_seccomp (cfg, pid, rep);
  if (cg)
    check_usage (cg, dirfd, old_pid, old_start, rep);
}

void
reset_check_add (struct brig_reset_report *rep, const char *name, bool ok, char *detail)
{
  rep->checks = xrealloc (rep->checks, (rep->n + 1) * sizeof *rep->checks);
  rep->checks[rep->n++] = (struct brig_reset_check) { .name = xstrdup (name), .ok = ok,
                                                      .detail = ok ? NULL : detail };
  if (ok)
    free (detail);
  if (!ok)
    rep->ok = false;
}
