/* ro_breaker: the attacker of tests/integration/boundary_rootfs_ro.bats,
 * run inside a container with CAP_SYS_ADMIN in its user namespace. It tries
 * every way to make a read-only mount writable that is not a remount by
 * mount(8): mount_setattr(2) clearing MOUNT_ATTR_RDONLY on PATH, and on a
 * new detached clone of PATH (open_tree), and then writes a file through
 * each.
 *
 *   ro_breaker PATH NAME
 *
 * Prints "setattr: ok|ERRNO", "write: ok|ERRNO", "clone: ok|ERRNO",
 * "clone-setattr: ok|ERRNO", "clone-write: ok|ERRNO" (the file NAME, then
 * NAME.clone, created under PATH), then "done". Built -static to run in the
 * busybox rootfs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

#ifndef SYS_open_tree
# define SYS_open_tree 428
#endif
#ifndef SYS_mount_setattr
# define SYS_mount_setattr 442
#endif

static void
say (const char *what, int r)
{
  printf ("%s: %s\n", what, r == 0 ? "ok" : strerror (errno));
}

/* Clear MOUNT_ATTR_RDONLY on what dirfd/path names. */
static int
clear_ro (int dirfd, const char *path, unsigned flags)
{
  struct mount_attr a = { .attr_clr = MOUNT_ATTR_RDONLY };
  return (int) syscall (SYS_mount_setattr, dirfd, path, flags, &a, sizeof a);
}

/* Create name in dirfd and write to it. */
static int
try_write (int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    return -1;
  int r = write (fd, "pwn\n", 4) == 4 ? 0 : -1;
  close (fd);
  return r;
}

int
main (int argc, char **argv)
{
  char clone_name[256];
  int dir, tree;

  if (argc != 3)
    {
      fprintf (stderr, "usage: ro_breaker PATH NAME\n");
      return 2;
    }
  say ("setattr", clear_ro (AT_FDCWD, argv[1], 0));
  dir = open (argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
  say ("write", dir < 0 ? -1 : try_write (dir, argv[2]));
  tree = (int) syscall (SYS_open_tree, AT_FDCWD, argv[1], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  say ("clone", tree < 0 ? -1 : 0);
  snprintf (clone_name, sizeof clone_name, "%s.clone", argv[2]);
  if (tree >= 0)
    {
      say ("clone-setattr", clear_ro (tree, "", AT_EMPTY_PATH));
      say ("clone-write", try_write (tree, clone_name));
    }
  printf ("done\n");
  return 0;
}
