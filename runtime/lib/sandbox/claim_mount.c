/* A claim's --mount: a host directory bound into a running member.
 *
 * The tree is cloned (open_tree, not recursive: host submounts below SRC
 * stay out) from the O_PATH fd claim opened without following a symlink,
 * so what was checked is what is bound; nosuid and nodev always, read-only
 * with :ro. A child made with clone(CLONE_VM | CLONE_VFORK) on its own
 * stack (its own fs_struct and thread group, so setns of a user and a
 * mount namespace is allowed; no copy of brig's memory) enters the init's
 * user and mount namespaces through its pidfd, becomes root there (host
 * root is unmapped in a user namespace: creating DST as an unmapped id
 * fails with EOVERFLOW), resolves DST from the container's root with
 * RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS (a symlink anywhere, the image's
 * or not, is refused), makes its last component when missing and
 * move_mounts the tree there. It is non-dumpable before it enters. The
 * member's root is rslave: nothing mounted here propagates to the host.
 * The mount goes with the mount namespace at the reset (mounts.exact). */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "paths.h"
#include "sandbox/claim.h"
#include "utils.h"

#define CHILD_STACK (64 * 1024)

struct mount_child {
  int pidfd, tree, nsflags;
  const char *dst, *parent, *base;  /* dst, its parent and last component */
  int err;                           /* errno of the step that failed */
  const char *step;
};

static int
open_nolinks (int dirfd, const char *path, unsigned long long resolve)
{
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = resolve | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  return (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
}

/* In the child: only system calls (it shares brig's memory). */
static int
mount_child_run (void *data)
{
  struct mount_child *a = data;
  int root, dst;

#define FAIL(what) do { a->err = errno; a->step = what; return 1; } while (0)
  if (syscall (SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    FAIL ("prctl");
  if (syscall (SYS_setns, a->pidfd, a->nsflags) < 0)
    FAIL ("enter the member's namespaces");
  if ((a->nsflags & CLONE_NEWUSER)
      && (syscall (SYS_setresgid, 0, 0, 0) < 0 || syscall (SYS_setresuid, 0, 0, 0) < 0))
    FAIL ("become root of the member's user namespace");
  root = (int) syscall (SYS_openat, AT_FDCWD, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    FAIL ("open the container's root");
  dst = open_nolinks (root, a->dst, RESOLVE_IN_ROOT);
  if (dst < 0 && errno == ENOENT)
    {
      int parent = open_nolinks (root, a->parent, RESOLVE_IN_ROOT);
      if (parent < 0)
        FAIL ("open DST's parent");
      if (syscall (SYS_mkdirat, parent, a->base, 0755) < 0 && errno != EEXIST)
        FAIL ("create DST");
      dst = open_nolinks (parent, a->base, RESOLVE_BENEATH);
    }
  if (dst < 0)
    FAIL ("open DST");
  if (syscall (SYS_move_mount, a->tree, "", dst, "",
               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    FAIL ("move_mount");
  return 0;
#undef FAIL
}

static int
run_child (struct mount_child *a)
{
  char *stack = malloc (CHILD_STACK);
  int status = 0;
  pid_t pid;

  if (stack == NULL)
    return -ENOMEM;
  a->err = 0;
  pid = clone (mount_child_run, stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
  if (pid < 0)
    {
      int e = errno;
      free (stack);
      return -e;
    }
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  free (stack);
  if (a->err == 0 && !(WIFEXITED (status) && WEXITSTATUS (status) == 0))
    {
      a->err = EIO;
      a->step = "the mount helper died";
    }
  return -a->err;
}

int
brig_claim_mount (int init_pidfd, int srcfd, const char *dst, bool ro, brig_error *err)
{
  _cleanup_close_ int tree = -1;
  _cleanup_free_ char *parent = xstrdup (dst);
  char *slash = strrchr (parent, '/');
  struct mount_child a = { .pidfd = init_pidfd, .dst = dst, .nsflags = CLONE_NEWUSER | CLONE_NEWNS };
  int r;

  if (init_pidfd < 0)
    return brig_error_say (err, ESRCH, "the member's init is gone");
  a.base = dst + (slash - parent) + 1;
  if (slash == parent)
    slash[1] = '\0';
  else
    *slash = '\0';
  a.parent = parent;
  tree = brig_open_tree (srcfd, "", OPEN_TREE_CLONE | AT_EMPTY_PATH);
  if (tree < 0)
    return brig_error_set (err, -tree, "clone the source's tree");
  r = brig_mount_setattr_fd (tree, false,
                             MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
                             0, 0, -1);
  if (r < 0)
    return brig_error_set (err, -r, "set nosuid, nodev%s on the tree", ro ? ", ro" : "");
  a.tree = tree;
  r = run_child (&a);
  /* no user namespace of its own: the member shares brig's */
  if (r == -EINVAL && a.step && strncmp (a.step, "enter", 5) == 0)
    {
      a.nsflags = CLONE_NEWNS;
      r = run_child (&a);
    }
  if (r == -ELOOP)
    return brig_error_say (err, ELOOP, "DST goes through a symlink inside the container: give "
                           "the real path");
  if (r == -EROFS)
    return brig_error_say (err, EROFS, "DST does not exist and the container's root is "
                           "read-only: name a directory that exists");
  if (r < 0)
    return brig_error_set (err, -r, "%s", a.step ? a.step : "bind");
  return 0;
}
