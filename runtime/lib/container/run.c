/* `run`: create and start in one process, without the exec socket's round
 * trip; in the foreground it proxies the terminal and signals, relays
 * sd_notify, waits for the container's exit and deletes it (from the state
 * directory and cgroup it kept). Split from container/create.c. */
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "container/create.h"
#include "container/internal.h"
#include "log.h"
#include "container/sdnotify.h"
#include "seccomp/seccomp.h"
#include "sync.h"
#include "process/terminal.h"
#include "utils.h"

/* The foreground run's sd_notify relay: brig stays the unit's process. */
static bool
relay_notify (void *arg)
{
  int r = brig_notify_forward (arg, getpid ());
  if (r < 0)
    brig_warn ("NOTIFY_SOCKET: relay to the host: %s", strerror (-r));
  if (r != 0)
    brig_notify_close (arg);
  return r == 0;
}

int
brig_container_run (const struct brig_context *ctx, const struct brig_create_opts *o,
                    bool detach, bool keep, int *exit_status, brig_error *err)
{
  struct create_ctx c;
  struct brig_sync_msg m = { .fd = -1 };
  int master = -1, r;

  *exit_status = 0;
  create_ctx_init (&c, ctx, o, detach ? MODE_RUN_DETACHED : MODE_RUN);
  r = create_common (&c, err);
  if (r == 0)
    {
      /* The init is about to execve: the sync socket (close-on-exec) reads
       * EOF then, or an error if the last steps failed. startContainer
       * hooks come first and have timeouts of their own. */
      const oci_hooks *h = c.cfg->hooks;
      if (c.cfg->process && brig_seccomp_uses_notify (c.seccomp)
          && !(h && h->start_container_len > 0))
        r = brig_seccomp_await_process (c.sync_fd, c.cfg->linux->seccomp, err);
      if (r == 0)
        {
          r = brig_sync_recv (c.sync_fd, &m);
          if (r == 0 && m.type == BRIG_SYNC_ERROR)
            r = brig_error_set_raw (err, m.code, m.data);
          else
            r = 0;
          brig_sync_msg_clear (&m);
        }
    }
  if (r == 0 && c.console_fd >= 0)
    {
      r = brig_terminal_recv_master (c.console_fd, &master, err);
      if (r < 0)
        brig_error_wrap (err, "receive the container's terminal");
    }
  if (r < 0)
    {
      create_ctx_undo (&c);
      create_ctx_free (&c);
      if (master >= 0)
        close (master);
      return r;
    }
  /* Other commands (kill, state, exec) may act on it from now on. */
  flock (c.dirfd, LOCK_UN);
  if (c.cfg->hooks && c.cfg->hooks->poststart_len)
    {
      brig_container bc = { .id = (char *) o->id, .dirfd = c.dirfd, .st = c.st,
                            .status = BRIG_STATUS_RUNNING, .pidfd = c.pidfd };
      r = brig_container_poststart (c.cfg->hooks, &bc, err);
    }
  /* As runc: run --detach returns once the process said READY=1 (or
   * exited); a foreground run relays from its proxy loop, as the unit's
   * main process itself. */
  if (r == 0 && detach)
    brig_notify_relay (&c.notify, c.pid, c.pidfd);
  struct brig_notify notify = c.notify;
  c.notify.fd = c.notify.host_fd = -1;
  pid_t pid = c.pid;
  unsigned long long start = c.st.pid_start_time;
  bool poststop = c.cfg->hooks && c.cfg->hooks->poststop_len;
  /* The foreground run deletes its container at the end: it keeps what
   * that needs, instead of reading state.json and the record again. */
  int own_dirfd = -1;
  brig_cgroup *own_cg = NULL;
  if (r == 0 && !detach && !keep && !poststop)
    {
      own_dirfd = c.dirfd;
      own_cg = c.cg;
      c.dirfd = -1;
      c.cg = NULL;
    }
  create_ctx_free (&c);
  if (r < 0)
    {
      if (!keep)
        {
          while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
            ;
          brig_container_delete (ctx, o->id, true, NULL);
        }
      if (master >= 0)
        close (master);
      brig_notify_close (&notify);
      return r;
    }
  if (detach)
    {
      brig_notify_close (&notify);
      return 0;
    }

  {
    struct brig_proxy_watch w = { .fd = notify.fd, .on_readable = relay_notify,
                                  .arg = &notify };
    r = brig_terminal_proxy_watch (master, pid, &w, exit_status, err);
  }
  /* What the process sent just before it exited (the proxy loop stops at
   * the exit). */
  while (notify.fd >= 0 && brig_notify_pending (&notify))
    relay_notify (&notify);
  brig_notify_close (&notify);
  if (master >= 0)
    close (master);
  if (r < 0)
    {
      if (own_dirfd >= 0)
        close (own_dirfd);
      brig_cgroup_free (own_cg);
      return r;
    }
  if (!keep)
    {
      brig_error e = { 0 };
      if ((own_dirfd >= 0
           ? brig_container_delete_after_run_owned (ctx, o->id, own_dirfd, own_cg, pid, start,
                                                    &e)
           : brig_container_delete_after_run (ctx, o->id, poststop, &e)) < 0)
        brig_warn ("delete container \"%s\": %s", o->id, e.msg ? e.msg : "failed");
      brig_error_clear (&e);
    }
  return 0;
}
