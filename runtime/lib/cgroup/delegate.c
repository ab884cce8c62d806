/* Controllers brig enables in a hybrid host's cgroup2 hierarchy, and
 * takes back. There the kernel gives a cgroup a controller only when its
 * parent lists it in cgroup.subtree_control, so a hugetlb limit on a
 * container (v1 without hugetlb) needs "+hugetlb" in every ancestor, the
 * host's root included. Left there for good it changes what every other
 * runtime and service meets (a cgroup whose subtree_control is not empty
 * takes no process: EBUSY), so brig
 *   - enables only where the controller is missing, writing down that it
 *     did (the trusted.brig.enabled attribute of that directory: the host
 *     owns the directory, brig owns the attribute);
 *   - marks the leaf of a container that uses it (trusted.brig.needs);
 *   - after delete removes a leaf, takes a controller it enabled back,
 *     bottom-up, where no child cgroup needs it any more: one marked, or
 *     one with a limit of that controller set (another runtime's that
 *     came after), or one that hands it on (the kernel refuses then).
 * Enabling (through the limits' writes) and releasing hold an flock on
 * the hierarchy's root directory, so a create never sees its controller
 * taken back between enabling it and using it (waited for 5 s at most). Nothing here runs for a
 * container without such a limit, but for a few getxattr calls at delete
 * (docs/cgroups.md "A hybrid host's cgroup2"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

#define XATTR_ENABLED "trusted.brig.enabled"
#define XATTR_NEEDS "trusted.brig.needs"

int
brig_cgroup_v2_lock (const char *mountpoint)
{
  long delay = 1, waited = 0;
  int fd = open (mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  /* Bounded: anyone who can open the directory can flock it (a container
   * given the host's cgroup2 root by a cgroup2 mount without a cgroup
   * namespace), and must not hold brig up for good. Without the lock a
   * create goes on (no release holds it either: races lose nothing) and
   * a release leaves everything enabled for a later delete. */
  while (flock (fd, LOCK_EX | LOCK_NB) < 0)
    {
      struct timespec ts = { 0, delay * 1000000L };
      if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= BRIG_CGROUP_V2_LOCK_MS)
        {
          int e = errno == EINTR ? EWOULDBLOCK : errno;
          close (fd);
          return -e;
        }
      nanosleep (&ts, NULL);
      waited += delay;
      delay = delay < 50 ? delay * 2 : 50;
    }
  return fd;
}

/* The space-separated words of attribute name on dir ("" when none). */
static void
read_words (const char *dir, const char *name, char *buf, size_t len)
{
  ssize_t n = getxattr (dir, name, buf, len - 1);
  buf[n > 0 ? n : 0] = '\0';
}

static bool
has_word (const char *words, const char *w)
{
  size_t n = strlen (w);
  for (const char *p = words; (p = strstr (p, w)) != NULL; p += n)
    if ((p == words || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
      return true;
  return false;
}

/* Add (or, with add false, drop) word w in attribute name of dir. */
static int
edit_words (const char *dir, const char *name, const char *w, bool add)
{
  char cur[256], out[256] = "";
  size_t o = 0;

  read_words (dir, name, cur, sizeof cur);
  if (has_word (cur, w) == add)
    return 0;
  for (char *save = NULL, *t = strtok_r (cur, " ", &save); t && o < sizeof out;
       t = strtok_r (NULL, " ", &save))
    if (strcmp (t, w) != 0)
      o += (size_t) snprintf (out + o, sizeof out - o, "%s%s", o ? " " : "", t);
  if (add && o < sizeof out)
    o += (size_t) snprintf (out + o, sizeof out - o, "%s%s", o ? " " : "", w);
  if (o >= sizeof out)
    return -E2BIG;
  if (o == 0)
    return removexattr (dir, name) < 0 && errno != ENODATA ? -errno : 0;
  return setxattr (dir, name, out, o, 0) < 0 ? -errno : 0;
}

int
brig_cgroup_v2_enable_marked (const char *dir, const char *ctl, brig_error *err)
{
  int r;

  /* written down first: a brig killed in between leaves a mark whose
   * controller is not enabled, which a release takes back harmlessly,
   * never a controller enabled with no mark to take it back */
  if (edit_words (dir, XATTR_ENABLED, ctl, true) < 0)
    brig_debug ("cgroup: %s: cannot note that brig enables %s there", dir, ctl);
  r = brig_cgroup_writef (dir, "cgroup.subtree_control", err, "+%s", ctl);
  if (r < 0)
    edit_words (dir, XATTR_ENABLED, ctl, false);
  return r;
}

void
brig_cgroup_v2_need (const char *leaf, const char *ctl)
{
  if (edit_words (leaf, XATTR_NEEDS, ctl, true) < 0)
    brig_debug ("cgroup: %s: cannot mark it as needing %s", leaf, ctl);
}

/* An unlimited page counter as cgroupfs prints it for a huge page size:
 * PAGE_COUNTER_MAX pages of 4 KiB (hugetlb.*.max says this, not "max"). */
#define COUNTER_UNLIMITED UINT64_C (9223372036854771712)

/* True when a "CTL.*max" file's text sets a limit. */
static bool
is_limit (const char *v)
{
  uint64_t n;
  char *end;

  if (strcmp (v, "max") == 0)
    return false;
  errno = 0;
  n = strtoull (v, &end, 10);
  return errno != 0 || end == v || n < COUNTER_UNLIMITED;
}

/* True when child dir (of a cgroup whose subtree_control has ctl) needs
 * it: marked by brig, or with a limit of ctl set (a "CTL.*max" file that
 * does not say unlimited). */
static bool
child_needs (int dfd, const char *name, const char *path, const char *ctl)
{
  _cleanup_closedir_ DIR *d = NULL;
  char words[256];
  struct dirent *de;
  size_t cl = strlen (ctl);
  int fd;

  read_words (path, XATTR_NEEDS, words, sizeof words);
  if (has_word (words, ctl))
    return true;
  fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return errno != ENOENT;  /* unknown: keep the controller */
    }
  while ((de = readdir (d)))
    {
      size_t n = strlen (de->d_name);
      _cleanup_free_ char *v = NULL;
      if (strncmp (de->d_name, ctl, cl) != 0 || de->d_name[cl] != '.' || n < 4
          || strcmp (de->d_name + n - 4, ".max") != 0)
        continue;
      if (brig_cgroup_read (path, de->d_name, &v) == 0 && is_limit (v))
        return true;
    }
  return false;
}

/* True when a child cgroup of dir needs ctl. */
static bool
needed_below (const char *dir, const char *ctl)
{
  _cleanup_closedir_ DIR *d = opendir (dir);
  struct dirent *de;

  if (d == NULL)
    return true;
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *sub = NULL;
      if (de->d_type != DT_DIR || de->d_name[0] == '.')
        continue;
      sub = xasprintf ("%s/%s", dir, de->d_name);
      if (child_needs (dirfd (d), de->d_name, sub, ctl))
        return true;
    }
  return false;
}

/* Take back from dir what brig enabled there and nothing below needs. */
static void
release_dir (const char *dir)
{
  char words[256];

  read_words (dir, XATTR_ENABLED, words, sizeof words);
  for (char *save = NULL, *t = strtok_r (words, " ", &save); t; t = strtok_r (NULL, " ", &save))
    {
      brig_error e = { 0 };
      if (needed_below (dir, t))
        continue;
      /* EBUSY: a child hands it on (someone else's); left as it is */
      if (brig_cgroup_writef (dir, "cgroup.subtree_control", &e, "-%s", t) == 0)
        {
          brig_debug ("cgroup: %s: took back %s, which brig had enabled", dir, t);
          edit_words (dir, XATTR_ENABLED, t, false);
        }
      else
        brig_debug ("cgroup: %s: %s stays: %s", dir, t, e.msg);
      brig_error_clear (&e);
    }
}

void
brig_cgroup_v2_release (const char *mountpoint, const char *path)
{
  _cleanup_free_ char *leaf = xasprintf ("%s%s", mountpoint, path);
  _cleanup_close_ int lock = -1;
  char words[256];
  bool any = false;
  char *end;

  /* the usual delete: no ancestor carries brig's mark, one getxattr each */
  for (end = leaf + strlen (leaf); !any && end > leaf + strlen (mountpoint);)
    {
      while (end > leaf && *--end != '/')
        ;
      *end = '\0';
      read_words (*leaf ? leaf : "/", XATTR_ENABLED, words, sizeof words);
      any = words[0] != '\0';
    }
  if (!any)
    return;
  lock = brig_cgroup_v2_lock (mountpoint);
  if (lock < 0)
    {
      brig_debug ("cgroup: %s: no lock (%s): what brig enabled stays for a later delete",
                  mountpoint, strerror (-lock));
      return;
    }
  free (leaf);
  leaf = xasprintf ("%s%s", mountpoint, path);
  /* a leaf delete left in place (found, not made) needs nothing any more */
  if (removexattr (leaf, XATTR_NEEDS) < 0 && errno != ENODATA && errno != ENOENT)
    brig_debug ("cgroup: %s: cannot drop its mark", leaf);
  /* bottom-up: a parent's controller can go only once no child has it
   * enabled for its own children */
  for (end = leaf + strlen (leaf); end > leaf + strlen (mountpoint);)
    {
      while (end > leaf && *--end != '/')
        ;
      *end = '\0';
      release_dir (*leaf ? leaf : "/");
    }
}
