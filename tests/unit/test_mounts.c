/* Unit tests for the rootfs helpers: the mount option table (flags,
 * propagation, plain and recursive mount_setattr attributes, data),
 * container path cleaning, mountinfo parsing, resolution inside a root
 * (symlinks never lead out), and config validation messages. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootfs/devices.h"
#include "mountinfo.h"
#include "rootfs/mounts.h"
#include "ocispec.h"
#include "paths.h"
#include "rootfs/rootfs.h"
#include "tap.h"
#include "utils.h"

static int
parse_opts (struct brig_mount_options *o, const char *csv)
{
  char *copy = xstrdup (csv), *v[64], *save = NULL;
  size_t n = 0;
  int r;
  for (char *t = strtok_r (copy, ",", &save); t && n < 63; t = strtok_r (NULL, ",", &save))
    v[n++] = t;
  v[n] = NULL;
  r = brig_mount_options_parse (v, n, o, NULL);
  free (copy);
  return r;
}

struct flag_case {
  const char *opts;
  unsigned long flags;    /* expected o.flags */
  unsigned long cleared;  /* bits expected in o.cleared */
};

static void
test_flags (void)
{
  static const struct flag_case cases[] = {
    { "ro", MS_RDONLY, 0 },
    { "rw", 0, MS_RDONLY },
    { "ro,rw", 0, MS_RDONLY },
    { "rw,ro", MS_RDONLY, 0 },
    { "nosuid", MS_NOSUID, 0 },
    { "suid", 0, MS_NOSUID },
    { "nodev", MS_NODEV, 0 },
    { "dev", 0, MS_NODEV },
    { "noexec", MS_NOEXEC, 0 },
    { "exec", 0, MS_NOEXEC },
    { "sync", MS_SYNCHRONOUS, 0 },
    { "async", 0, MS_SYNCHRONOUS },
    { "dirsync", MS_DIRSYNC, 0 },
    { "remount", MS_REMOUNT, 0 },
    { "mand", MS_MANDLOCK, 0 },
    { "nomand", 0, MS_MANDLOCK },
    { "noatime", MS_NOATIME, 0 },
    { "atime", 0, MS_NOATIME },
    { "nodiratime", MS_NODIRATIME, 0 },
    { "diratime", 0, MS_NODIRATIME },
    { "relatime", MS_RELATIME, MS_NOATIME | MS_STRICTATIME },
    { "norelatime", 0, MS_RELATIME },
    { "strictatime", MS_STRICTATIME, MS_NOATIME | MS_RELATIME },
    { "nostrictatime", 0, MS_STRICTATIME },
    { "noatime,strictatime", MS_STRICTATIME, MS_NOATIME },
    { "lazytime", MS_LAZYTIME, 0 },
    { "nolazytime", 0, MS_LAZYTIME },
    { "iversion", MS_I_VERSION, 0 },
    { "noiversion", 0, MS_I_VERSION },
    { "silent", MS_SILENT, 0 },
    { "loud", 0, MS_SILENT },
    { "nosymfollow", 256, 0 },
    { "bind", MS_BIND, 0 },
    { "rbind", MS_BIND | MS_REC, 0 },
    { "defaults", 0, 0 },
    { "nosuid,nodev,noexec,ro", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, 0 },
  };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (cases); i++)
    {
      struct brig_mount_options o;
      bool ok = parse_opts (&o, cases[i].opts) == 0 && o.flags == cases[i].flags
                && (o.cleared & cases[i].cleared) == cases[i].cleared && o.data == NULL;
      tap_ok (ok, "flags of \"%s\" (got %#lx, cleared %#lx)", cases[i].opts, o.flags, o.cleared);
      brig_mount_options_free (&o);
    }
}

static void
test_bind_and_extensions (void)
{
  struct brig_mount_options o;

  parse_opts (&o, "bind");
  tap_ok (o.bind && !o.recursive, "bind is a non-recursive bind");
  brig_mount_options_free (&o);
  parse_opts (&o, "rbind");
  tap_ok (o.bind && o.recursive, "rbind is a recursive bind");
  brig_mount_options_free (&o);
  parse_opts (&o, "idmap");
  tap_ok (o.idmap && !o.ridmap && o.data == NULL, "idmap is recorded, not passed as data");
  brig_mount_options_free (&o);
  parse_opts (&o, "ridmap");
  tap_ok (o.idmap && o.ridmap && o.data == NULL, "ridmap is a recursive idmap");
  brig_mount_options_free (&o);
  parse_opts (&o, "tmpcopyup");
  tap_ok (o.tmpcopyup && o.data == NULL, "tmpcopyup is recorded, not passed as data");
  brig_mount_options_free (&o);
  parse_opts (&o, "auto,noauto,nofail,_netdev,user,nouser,x-systemd.automount,comment=foo");
  tap_ok (o.flags == 0 && o.data == NULL, "fstab-only options are dropped");
  brig_mount_options_free (&o);
}

static void
test_propagation (void)
{
  struct brig_mount_options o;

  parse_opts (&o, "rbind,rprivate");
  tap_ok (o.n_propagation == 1 && o.propagation[0] == (MS_PRIVATE | MS_REC)
          && !(o.flags & MS_PRIVATE), "rprivate is a propagation change, not a mount flag");
  brig_mount_options_free (&o);
  parse_opts (&o, "shared,slave,private,unbindable");
  tap_ok (o.n_propagation == 4 && o.propagation[0] == MS_SHARED && o.propagation[1] == MS_SLAVE
          && o.propagation[2] == MS_PRIVATE && o.propagation[3] == MS_UNBINDABLE,
          "propagation changes keep their order");
  brig_mount_options_free (&o);
  parse_opts (&o, "rshared,rslave,runbindable");
  tap_ok (o.n_propagation == 3 && o.propagation[0] == (MS_SHARED | MS_REC)
          && o.propagation[1] == (MS_SLAVE | MS_REC) && o.propagation[2] == (MS_UNBINDABLE | MS_REC),
          "recursive propagation forms carry MS_REC");
  brig_mount_options_free (&o);
  tap_ok (brig_mount_propagation_parse ("rslave") == (MS_SLAVE | MS_REC)
          && brig_mount_propagation_parse ("private") == MS_PRIVATE
          && brig_mount_propagation_parse ("ro") == 0 && brig_mount_propagation_parse ("bogus") == 0,
          "brig_mount_propagation_parse");
}

static void
test_attrs (void)
{
  struct brig_mount_options o;

  parse_opts (&o, "ro,nosuid,nodev,noexec,nosymfollow");
  tap_ok (o.attr_set == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
                         | MOUNT_ATTR_NOSYMFOLLOW) && o.attr_clr == 0
          && o.rec_attr_set == 0, "plain flags map to plain attributes");
  brig_mount_options_free (&o);
  /* runc's bind atime: a setting option replaces mode and nodiratime */
  parse_opts (&o, "nodiratime");
  tap_ok (o.attr_set == (MOUNT_ATTR_RELATIME | MOUNT_ATTR_NODIRATIME)
          && o.attr_clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME),
          "nodiratime alone: relatime,nodiratime replace the source's atime");
  brig_mount_options_free (&o);
  parse_opts (&o, "nodiratime,strictatime");
  tap_ok (o.attr_set == (MOUNT_ATTR_STRICTATIME | MOUNT_ATTR_NODIRATIME)
          && o.attr_clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME), "nodiratime,strictatime");
  brig_mount_options_free (&o);
  parse_opts (&o, "nodiratime,norelatime");
  tap_ok (o.attr_set == (MOUNT_ATTR_RELATIME | MOUNT_ATTR_NODIRATIME),
          "nodiratime,norelatime: a clearing option sets no mode (relatime, as runc)");
  brig_mount_options_free (&o);
  parse_opts (&o, "strictatime");
  tap_ok (o.attr_set == MOUNT_ATTR_STRICTATIME
          && o.attr_clr == (MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME),
          "strictatime clears a source's nodiratime");
  brig_mount_options_free (&o);
  parse_opts (&o, "diratime");
  tap_ok (o.attr_set == 0 && o.attr_clr == 0, "diratime alone keeps the source's atime");
  brig_mount_options_free (&o);
  parse_opts (&o, "rw,suid,dev,exec");
  tap_ok (o.attr_clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
          && o.attr_set == 0, "rw/suid/dev/exec clear attributes");
  brig_mount_options_free (&o);
  parse_opts (&o, "noatime");
  tap_ok ((o.attr_clr & MOUNT_ATTR__ATIME) == MOUNT_ATTR__ATIME
          && (o.attr_set & MOUNT_ATTR__ATIME) == MOUNT_ATTR_NOATIME, "noatime sets the atime mode");
  brig_mount_options_free (&o);
  parse_opts (&o, "bind,noatime");
  tap_ok (brig_mount_implied_clr (&o) == MOUNT_ATTR_RDONLY, "an attribute without ro implies rw");
  brig_mount_options_free (&o);
  parse_opts (&o, "bind,nosuid,ro");
  tap_ok (brig_mount_implied_clr (&o) == 0, "ro implies nothing");
  brig_mount_options_free (&o);
  parse_opts (&o, "rbind,rprivate,rro");
  tap_ok (brig_mount_implied_clr (&o) == 0, "no plain attribute: the source's flags stay");
  brig_mount_options_free (&o);
  parse_opts (&o, "atime,norelatime,nostrictatime");
  tap_ok (o.attr_set == 0 && o.attr_clr == 0, "atime/norelatime/nostrictatime keep the atime mode of a bind");
  brig_mount_options_free (&o);
  parse_opts (&o, "rro,rnosuid,rnodev,rnoexec,rnodiratime,rnosymfollow");
  tap_ok (o.rec_attr_set == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
                             | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW)
          && o.attr_set == 0 && o.flags == 0, "r* options are recursive attributes only");
  brig_mount_options_free (&o);
  parse_opts (&o, "rrw,rsuid,rdev,rexec,rdiratime,rsymfollow");
  tap_ok (o.rec_attr_clr == (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC
                             | MOUNT_ATTR_NODIRATIME | MOUNT_ATTR_NOSYMFOLLOW)
          && o.rec_attr_set == 0, "rrw/rsuid/... clear recursive attributes");
  brig_mount_options_free (&o);
  parse_opts (&o, "rro,rrw");
  tap_ok (o.rec_attr_set == 0 && o.rec_attr_clr == MOUNT_ATTR_RDONLY, "the last of rro/rrw wins");
  brig_mount_options_free (&o);
  static const struct { const char *opt; uint64_t v; } atimes[] = {
    { "rnoatime", MOUNT_ATTR_NOATIME }, { "rstrictatime", MOUNT_ATTR_STRICTATIME },
    { "rrelatime", MOUNT_ATTR_RELATIME }, { "ratime", MOUNT_ATTR_RELATIME },
    { "rnorelatime", MOUNT_ATTR_STRICTATIME }, { "rnostrictatime", MOUNT_ATTR_RELATIME },
  };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (atimes); i++)
    {
      parse_opts (&o, atimes[i].opt);
      tap_ok ((o.rec_attr_clr & MOUNT_ATTR__ATIME) == MOUNT_ATTR__ATIME
              && (o.rec_attr_set & MOUNT_ATTR__ATIME) == atimes[i].v,
              "%s is a recursive atime mode (valid for mount_setattr)", atimes[i].opt);
      brig_mount_options_free (&o);
    }
}

static void
test_data (void)
{
  struct brig_mount_options o;
  char *empty[] = { "ro", "", NULL };
  brig_error err = { 0 };

  parse_opts (&o, "nosuid,size=65536k,mode=755,noexec,uid=1000");
  tap_ok (o.data && strcmp (o.data, "size=65536k,mode=755,uid=1000") == 0
          && o.flags == (MS_NOSUID | MS_NOEXEC), "unknown options become data in order (%s)",
          o.data ? o.data : "(null)");
  brig_mount_options_free (&o);
  parse_opts (&o, "lowerdir=/a:/b,upperdir=/u,workdir=/w");
  tap_ok (o.data && strcmp (o.data, "lowerdir=/a:/b,upperdir=/u,workdir=/w") == 0, "overlay data");
  brig_mount_options_free (&o);
  parse_opts (&o, "newinstance,ptmxmode=0666,mode=0620,gid=5");
  tap_ok (o.data && strcmp (o.data, "newinstance,ptmxmode=0666,mode=0620,gid=5") == 0, "devpts data");
  brig_mount_options_free (&o);
  parse_opts (&o, "foo");
  tap_ok (o.data && strcmp (o.data, "foo") == 0 && !brig_mount_option_known ("foo")
          && brig_mount_option_known ("rro"), "an unknown option is data, not an error");
  brig_mount_options_free (&o);
  tap_ok (brig_mount_options_parse (NULL, 0, &o, NULL) == 0 && o.flags == 0 && o.data == NULL,
          "no options");
  tap_ok (brig_mount_options_parse (empty, 2, &o, &err) == -EINVAL && err.msg
          && strstr (err.msg, "options[1]"), "an empty option is an error naming it (%s)",
          err.msg ? err.msg : "");
  brig_error_clear (&err);
}

static void
test_clean (void)
{
  static const char *const cases[][2] = {
    { "/proc", "/proc" }, { "proc", "/proc" }, { "rel/dest/", "/rel/dest" },
    { "//a//./b/", "/a/b" }, { "", "/" }, { "/", "/" }, { "./", "/" },
    { "/a/../b", "/a/../b" },
  };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (cases); i++)
    {
      char *c = brig_path_clean (cases[i][0]);
      tap_ok (strcmp (c, cases[i][1]) == 0, "clean \"%s\" -> \"%s\" (got \"%s\")", cases[i][0],
              cases[i][1], c);
      free (c);
    }
}

static void
test_below (void)
{
  /* { root, path, expected (NULL: not below) } */
  static const char *const cases[][3] = {
    { "/b/rootfs", "/b/rootfs/mnt/x", "/mnt/x" }, { "/b/rootfs", "/b/rootfs", "/" },
    { "/b/rootfs", "/b/rootfs/", "/" }, { "/b/rootfs", "/b/rootfsx/y", NULL },
    { "/b/rootfs", "/b/rootfs/../config.json", NULL },
    { "/b/rootfs", "/b/rootfs/up/../../config.json", NULL },
    { "/b/rootfs", "/b/x/../rootfs/a", "/a" }, { "/b/rootfs", "/b//rootfs/./a/../c", "/c" },
    { "/b/rootfs", "/mnt", NULL }, { "/b/rootfs", "/../../b/rootfs/z", "/z" },
  };
  char *c = brig_path_clean_lexical ("/a/b/../../../c/./d/");
  tap_ok (strcmp (c, "/c/d") == 0, "lexical clean takes \"..\" as written (got \"%s\")", c);
  free (c);
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (cases); i++)
    {
      char *r = brig_path_below (cases[i][0], cases[i][1]);
      tap_ok ((r == NULL && cases[i][2] == NULL)
              || (r && cases[i][2] && strcmp (r, cases[i][2]) == 0),
              "below %s: \"%s\" -> %s (got %s)", cases[i][0], cases[i][1],
              cases[i][2] ? cases[i][2] : "NULL", r ? r : "NULL");
      free (r);
    }
}

static void
test_mountinfo (void)
{
  char path[] = "/tmp/brig-test-mountinfo.XXXXXX";
  int fd = mkstemp (path);
  const char *text =
    "26 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n"
    "30 26 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw master:3 - cgroup cgroup rw,cpu,cpuacct\n"
    "40 26 0:40 /x /mnt/with\\040space rw - tmpfs my\\134src rw\n";
  struct brig_mountinfo *mi = NULL;
  size_t n = 0;
  brig_error err = { 0 };
  const struct brig_mountinfo *p;

  if (write (fd, text, strlen (text)) < 0)
    tap_diag ("write: %m");
  close (fd);
  tap_ok (brig_mountinfo_read (path, &mi, &n, &err) == 0 && n == 4, "mountinfo: 4 entries");
  unlink (path);
  if (n != 4)
    {
      for (int i = 0; i < 6; i++)
        tap_ok (false, "mountinfo entries");
      return;
    }
  tap_ok (mi[0].id == 26 && mi[0].parent_id == 1 && strcmp (mi[0].optional, "shared:1") == 0
          && strcmp (mi[0].fstype, "ext4") == 0 && strcmp (mi[0].super_options, "rw,discard") == 0,
          "mountinfo: ids, optional fields, type, super options");
  tap_ok (strcmp (mi[1].optional, "") == 0 && strcmp (mi[1].options, "rw,relatime") == 0,
          "mountinfo: no optional fields");
  tap_ok (strcmp (mi[3].mountpoint, "/mnt/with space") == 0 && strcmp (mi[3].source, "my\\src") == 0
          && strcmp (mi[3].root, "/x") == 0, "mountinfo: octal escapes");
  p = brig_mountinfo_find_parent (mi, n, "/sys/fs/cgroup/cpu,cpuacct/x");
  tap_ok (p && p->id == 31, "find_parent: the deepest mount");
  p = brig_mountinfo_find_parent (mi, n, "/sys/fs/cgroupx");
  tap_ok (p && p->id == 26, "find_parent: component-wise prefix");
  tap_ok (brig_path_has_prefix ("/a/b", "/a") && !brig_path_has_prefix ("/ab", "/a")
          && brig_path_has_prefix ("/a", "/a") && brig_path_has_prefix ("/x", "/"),
          "brig_path_has_prefix");
  brig_mountinfo_free (mi, n);
}

static char *
fd_path (int fd, const char *root)
{
  return brig_path_of_fd_in_root (fd, root);
}

static void
test_resolve (void)
{
  char tmpl[] = "/tmp/brig-test-root.XXXXXX";
  char *root = mkdtemp (tmpl), *real = NULL, *p;
  brig_error err = { 0 };
  int rootfd, fd;
  const char *outside = "/nonexistent-brig-test-target";

  real = realpath (root, NULL);
  rootfd = open (real, O_PATH | O_DIRECTORY | O_CLOEXEC);
  mkdirat (rootfd, "etc", 0755);
  (void) !symlinkat (outside, rootfd, "evil");          /* dangling, absolute */
  (void) !symlinkat ("../../../../etc", rootfd, "up");    /* climbs out */
  (void) !symlinkat ("/etc", rootfd, "abs");              /* absolute, exists */
  (void) !symlinkat ("loop2", rootfd, "loop1");
  (void) !symlinkat ("loop1", rootfd, "loop2");
  close (openat (rootfd, "file", O_CREAT | O_WRONLY | O_CLOEXEC, 0644));

  fd = brig_path_open_in_root (rootfd, "/up", O_PATH);
  p = fd >= 0 ? fd_path (fd, real) : NULL;
  tap_ok (p && strcmp (p, "/etc") == 0, "a symlink with .. stays in the root (%s)", p ? p : "?");
  free (p);
  close (fd);
  fd = brig_path_open_in_root (rootfd, "abs", O_PATH);
  p = fd >= 0 ? fd_path (fd, real) : NULL;
  tap_ok (p && strcmp (p, "/etc") == 0, "an absolute symlink is resolved in the root");
  free (p);
  close (fd);
  tap_ok (brig_path_open_in_root (rootfd, "/evil", O_PATH) == -ENOENT,
          "a dangling absolute symlink does not reach the host");

  fd = brig_path_create_in_root (rootfd, "/evil/sub/dir", BRIG_PATH_DIR, &err);
  p = fd >= 0 ? fd_path (fd, real) : NULL;
  tap_ok (p && strcmp (p, "/nonexistent-brig-test-target/sub/dir") == 0
          && access (outside, F_OK) < 0, "create through a dangling symlink creates inside the root (%s)",
          p ? p : err.msg);
  free (p);
  close (fd);
  fd = brig_path_create_in_root (rootfd, "up/newfile", BRIG_PATH_FILE, &err);
  p = fd >= 0 ? fd_path (fd, real) : NULL;
  tap_ok (p && strcmp (p, "/etc/newfile") == 0 && access ("/etc/newfile", F_OK) < 0,
          "create a file through a climbing symlink stays inside (%s)", p ? p : err.msg);
  free (p);
  close (fd);
  fd = brig_path_create_in_root (rootfd, "rel/../a/./b", BRIG_PATH_DIR, &err);
  p = fd >= 0 ? fd_path (fd, real) : NULL;
  tap_ok (p && strcmp (p, "/a/b") == 0, "create with . and .. (%s)", p ? p : err.msg);
  free (p);
  close (fd);
  brig_error_clear (&err);
  fd = brig_path_create_in_root (rootfd, "/file/sub", BRIG_PATH_DIR, &err);
  tap_ok (fd == -ENOTDIR && err.msg && strstr (err.msg, "/file/sub"),
          "a file in the middle is an error naming the path (%s)", err.msg ? err.msg : "");
  brig_error_clear (&err);
  fd = brig_path_create_in_root (rootfd, "/loop1/x", BRIG_PATH_DIR, &err);
  tap_ok (fd == -ELOOP, "a symlink loop is an error (%d)", fd);
  brig_error_clear (&err);
  close (rootfd);
  free (real);
  {
    char cmd[128];
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", root);
    (void) !system (cmd);
  }
}

/* The userspace walker (used without openat2) gives the same answers. */
static void
test_walk (void)
{
  char tmpl[] = "/tmp/brig-test-walk.XXXXXX";
  char *root = mkdtemp (tmpl), *real = realpath (root, NULL), *p;
  int rootfd = open (real, O_PATH | O_DIRECTORY | O_CLOEXEC), fd;
  static const char *const cases[][2] = {
    { "/up", "/etc" },               /* ../../.. clamped at the root */
    { "abs/x", "/etc/x" },           /* absolute symlink from the root */
    { "rel/x", "/etc/x" },           /* relative symlink */
    { "/etc/../etc/./x", "/etc/x" },
    { "../../etc", "/etc" },
    { "/", "/" },
    { "etc/x/", "/etc/x" },
  };

  mkdirat (rootfd, "etc", 0755);
  mkdirat (rootfd, "etc/x", 0755);
  (void) !symlinkat ("../../../../etc", rootfd, "up");
  (void) !symlinkat ("/etc", rootfd, "abs");
  (void) !symlinkat ("etc", rootfd, "rel");
  (void) !symlinkat ("/nonexistent-brig-walk", rootfd, "dangling");
  (void) !symlinkat ("l2", rootfd, "l1");
  (void) !symlinkat ("l1", rootfd, "l2");
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (cases); i++)
    {
      fd = brig_path_open_in_root_walk (rootfd, cases[i][0], O_PATH);
      p = fd >= 0 ? brig_path_of_fd_in_root (fd, real) : NULL;
      tap_ok (p && strcmp (p, cases[i][1]) == 0, "walk \"%s\" -> %s (got %s)", cases[i][0],
              cases[i][1], p ? p : strerror (-fd));
      free (p);
      if (fd >= 0)
        close (fd);
    }
  tap_ok (brig_path_open_in_root_walk (rootfd, "dangling", O_PATH) == -ENOENT,
          "walk: a dangling symlink does not reach the host");
  tap_ok (brig_path_open_in_root_walk (rootfd, "l1", O_PATH) == -ELOOP, "walk: a loop is ELOOP");
  fd = brig_path_open_in_root_walk (rootfd, "abs", O_RDONLY | O_DIRECTORY);
  tap_ok (fd >= 0, "walk: reopen with O_RDONLY|O_DIRECTORY");
  if (fd >= 0)
    close (fd);
  tap_ok (brig_path_open_in_root_walk (rootfd, "up/x", O_PATH | O_DIRECTORY) >= 0
          && brig_path_open_in_root_walk (rootfd, "dangling", O_PATH | O_NOFOLLOW) >= 0,
          "walk: O_DIRECTORY and O_NOFOLLOW");
  fd = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  tap_ok (brig_path_open_in_root_walk (fd, "self/fd/0", O_PATH) == -ELOOP
          && brig_path_open_in_root_walk (fd, "self/status", O_PATH) >= 0,
          "walk: magic links are refused, /proc/self is not");
  close (fd);
  close (rootfd);
  {
    char cmd[128];
    snprintf (cmd, sizeof (cmd), "rm -rf '%s'", root);
    (void) !system (cmd);
  }
  free (real);
}

static oci_config *
config (const char *json)
{
  oci_error e = { 0 };
  oci_config *c = oci_config_parse_data (json, strlen (json), "config.json", &e);
  if (c == NULL)
    {
      tap_diag ("parse: %s", e.msg);
      free (e.msg);
    }
  return c;
}

static void
expect_invalid (const char *json, const char *msg, const char *what)
{
  oci_config *c = config (json);
  brig_error err = { 0 };
  int r = c ? rootfs_validate (c, &err) : 0;
  tap_ok (r < 0 && err.msg && strstr (err.msg, msg), "%s (%s)", what, err.msg ? err.msg : "accepted");
  brig_error_clear (&err);
  oci_config_free (c);
}

#define CFG(mounts, linux) \
  "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"mounts\":[" mounts "],\"linux\":{" linux "}}"

static void
test_validate (void)
{
  oci_config *c;
  brig_error err = { 0 };

  c = config (CFG ("{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
                   "{\"destination\":\"/data\",\"source\":\"/tmp\",\"options\":[\"rbind\",\"rro\",\"rprivate\"]},"
                   "{\"destination\":\"rel\",\"type\":\"tmpfs\",\"options\":[\"size=1m\"]}",
                   "\"rootfsPropagation\":\"rslave\",\"devices\":[{\"path\":\"/dev/fuse\",\"type\":\"c\",\"major\":10,\"minor\":229}]"));
  tap_ok (c && rootfs_validate (c, &err) == 0, "a valid config passes (%s)", err.msg ? err.msg : "ok");
  brig_error_clear (&err);
  oci_config_free (c);

  expect_invalid (CFG ("{\"destination\":\"/\",\"type\":\"tmpfs\"}", ""),
                  "mounts[0]: destination \"/\" is the root: only a bind mount may replace the rootfs",
                  "destination / is refused for a tmpfs");
  expect_invalid (CFG ("{\"destination\":\"/a/..\",\"type\":\"tmpfs\"}", ""),
                  "is the root", "destination /a/.. is refused for a tmpfs");
  c = config (CFG ("{\"destination\":\"/\",\"type\":\"bind\",\"source\":\"/tmp\",\"options\":[\"rbind\"]}", ""));
  tap_ok (c && rootfs_validate (c, &err) == 0, "a bind onto / is accepted (%s)", err.msg ? err.msg : "ok");
  brig_error_clear (&err);
  oci_config_free (c);
  expect_invalid (CFG ("", "\"rootfsPropagation\":\"sideways\""),
                  "linux.rootfsPropagation: \"sideways\"", "an unknown rootfsPropagation");
  expect_invalid (CFG ("", "\"devices\":[{\"path\":\"/dev/x\",\"type\":\"x\",\"major\":1,\"minor\":1}]"),
                  "linux.devices[0].type: \"x\" is not one of c, b, u, p", "an unknown device type");
  expect_invalid (CFG ("", "\"devices\":[{\"path\":\"/dev/x\",\"type\":\"c\"}]"),
                  "linux.devices[0]: major and minor are required", "a char device without numbers");
  expect_invalid (CFG ("", "\"devices\":[{\"path\":\"dev/x\",\"type\":\"p\"}]"),
                  "linux.devices[0].path", "a relative device path");
  expect_invalid (CFG ("{\"destination\":\"/d\",\"source\":\"/tmp\",\"options\":[\"bind\",\"idmap\"]}", ""),
                  "mounts[0]: idmap needs uidMappings", "idmap without mappings or userns");
  expect_invalid (CFG ("{\"destination\":\"/d\",\"type\":\"tmpfs\",\"options\":[\"idmap\"],"
                       "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}],"
                       "\"gidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]}", ""),
                  "only supported on bind mounts", "idmap on a tmpfs");
  expect_invalid (CFG ("{\"destination\":\"/d\",\"source\":\"/tmp\",\"options\":[\"bind\",\"idmap\"],"
                       "\"uidMappings\":[{\"containerID\":0,\"hostID\":1000,\"size\":1}]}", ""),
                  "must be given together", "uidMappings without gidMappings");
  expect_invalid (CFG ("{\"destination\":\"/d\",\"options\":[\"rbind\"]}", ""),
                  "a bind mount needs a source", "a bind without source");
  expect_invalid (CFG ("{\"destination\":\"/d\",\"type\":\"tmpfs\",\"options\":[\"\"]}", ""),
                  "mounts[0]: options[0]: empty mount option", "an empty option");

  c = config (CFG ("{\"destination\":\"/d\",\"source\":\"/tmp\",\"options\":[\"bind\",\"idmap\"]}",
                   "\"namespaces\":[{\"type\":\"user\"}],"
                   "\"uidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}],"
                   "\"gidMappings\":[{\"containerID\":0,\"hostID\":100000,\"size\":65536}]"));
  tap_ok (c && rootfs_validate (c, &err) == 0, "idmap with the container's user namespace (%s)",
          err.msg ? err.msg : "ok");
  brig_error_clear (&err);
  oci_config_free (c);
}

int
main (void)
{
  tap_plan (117);
  test_flags ();
  test_bind_and_extensions ();
  test_propagation ();
  test_attrs ();
  test_data ();
  test_clean ();
  test_below ();
  test_mountinfo ();
  test_resolve ();
  test_walk ();
  test_validate ();
  return tap_done ();
}
