/* envd's filesystem calls run in the sandbox (fsops.c), from a forked
 * child joined to the member's user and mount namespaces and root, as the
 * container's root user: what it makes belongs to the container's ids, and
 * no host path is reachable from it. Non-dumpable before it joins
 * anything, so nothing in the container can reach it through /proc.
 * Unlike brig cp's child (container/copy.c) it does not join the memory
 * and pids cgroups (docs/serve.md "Not yet"). */
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container/state.h"
#include "serve/fsops.h"
#include "serve/internal.h"
#include "utils.h"

static int
join (struct serve *srv, const char *member, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  _cleanup_close_ int rootfd = -1;
  struct stat a, b;
  char path[64];
  bool userns;
  int r = brig_container_load_visible (srv->ctx, member, &c, err);

  if (r < 0)
    return r;
  if (c->status != BRIG_STATUS_RUNNING || c->pidfd < 0)
    return brig_error_say (err, ESRCH, "the sandbox's container is not running");
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) c->st.pid);
  if (stat (path, &a) < 0 || stat ("/proc/self/ns/user", &b) < 0)
    return brig_error_errno (err, "the container's user namespace");
  userns = a.st_ino != b.st_ino || a.st_dev != b.st_dev;
  snprintf (path, sizeof path, "/proc/%d/root", (int) c->st.pid);
  rootfd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return brig_error_errno (err, "open the container's root");
  /* opened by pid: the pidfd says whether that is still the init */
  if (serve_pidfd_alive (c->pidfd) < 0)
    return brig_error_say (err, ESRCH, "the sandbox's container is not running");
  if (setns (c->pidfd, CLONE_NEWNS | (userns ? CLONE_NEWUSER : 0)) < 0)
    return brig_error_errno (err, "join the container's namespaces");
  if (fchdir (rootfd) < 0 || chroot (".") < 0 || chdir ("/") < 0)
    return brig_error_errno (err, "enter the container's root");
  if (userns && ((setgroups (0, NULL) < 0 && errno != EPERM) || setresgid (0, 0, 0) < 0
                 || setresuid (0, 0, 0) < 0))
    return brig_error_errno (err, "become the container's root");
  return 0;
}

struct fs_call {
  const char *member;
  const struct serve_fs_args *a;
};

/* In the child of serve_in_child: join the member, make the call. */
static int
fs_fn (struct serve *srv, const void *arg, char **out, brig_error *err)
{
  const struct fs_call *fc = arg;
  const struct serve_fs_args *a = fc->a;
  yajl_gen g = serve_jg_new ();
  int r, root;

  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    r = brig_error_errno (err, "prctl");
  else
    {
      /* a call that hangs on the tenant's file system ends (SIGALRM kills) */
      signal (SIGALRM, SIG_DFL);
      alarm (60);
      r = join (srv, fc->member, err);
    }
  if (r == 0 && (root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
    r = brig_error_errno (err, "open /");
  if (r == 0)
    switch (a->op)
      {
      case SERVE_FS_STAT: r = serve_fs_stat (root, a->path, g, err); break;
      case SERVE_FS_LIST: r = serve_fs_list (root, a->path, a->depth, g, err); break;
      case SERVE_FS_MKDIR: r = serve_fs_mkdir (root, a->path, g, err); break;
      case SERVE_FS_MOVE: r = serve_fs_move (root, a->path, a->dest, g, err); break;
      default: r = serve_fs_remove (root, a->path, err); break;
      }
  *out = serve_jg_done (g, NULL);
  return r;
}

int
serve_fs_call (struct serve *srv, const char *member, const struct serve_fs_args *a, char **json,
               brig_error *err)
{
  struct fs_call fc = { member, a };

  return serve_in_child (srv, fs_fn, &fc, -1, json, err);
}
