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
#include "process/handshake.h"
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

/* create up to READY, then the init's execve (EOF on the handshake, or its
 * error), and the pty's master when brig proxies it. */
static int
run_start (struct create_ctx *c, int *master, brig_error *err)
{
  int r = create_common (c, err);
  const oci_hooks *h = r == 0 ? c->cfg->hooks : NULL;

  /* startContainer hooks come first and have timeouts of their own. */
  if (r == 0 && c->cfg->process && brig_seccomp_uses_notify (c->seccomp)
      && !(h && h->start_container_len > 0))
    r = brig_seccomp_await_process (c->sync_fd, c->cfg->linux->seccomp, err);
  if (r == 0)
    r = brig_hs_parent_await_exec (c->sync_fd, err);
  if (r == 0 && c->console_fd >= 0)
    {
      r = brig_terminal_recv_master (c->console_fd, master, err);
      if (r < 0)
        brig_error_wrap (err, "receive the container's terminal");
    }
  return r;
}

/* What a foreground run keeps of create's context for its end. */
struct run_end {
  struct brig_notify notify;
  pid_t pid;
  unsigned long long start;
  bool poststop;
  int own_dirfd;       /* the state directory and cgroup kept for the */
  brig_cgroup *own_cg; /* delete at the end, or -1 / NULL: read again */
};

/* The running container handed over: unlocked, its poststart hooks run,
 * sd_notify relayed (run --detach); create's context freed, but for what
 * the end of the run needs. */
static int
run_hand_over (struct create_ctx *c, bool detach, bool keep, struct run_end *e,
               brig_error *err)
{
  int r = 0;

  /* Other commands (kill, state, exec) may act on it from now on. */
  flock (c->dirfd, LOCK_UN);
  if (c->cfg->hooks && c->cfg->hooks->poststart_len)
    {
      brig_container bc = { .id = (char *) c->o->id, .dirfd = c->dirfd, .st = c->st,
                            .status = BRIG_STATUS_RUNNING, .pidfd = c->pidfd };
      r = brig_container_poststart (c->cfg->hooks, &bc, err);
    }
  /* As runc: run --detach returns once the process said READY=1 (or
   * exited); a foreground run relays from its proxy loop, as the unit's
   * main process itself. */
  if (r == 0 && detach)
    brig_notify_relay (&c->notify, c->pid, c->pidfd);
  e->notify = c->notify;
  c->notify.fd = c->notify.host_fd = -1;
  e->pid = c->pid;
  e->start = c->st.pid_start_time;
  e->poststop = c->cfg->hooks && c->cfg->hooks->poststop_len;
  /* The foreground run deletes its container at the end: it keeps what
   * that needs, instead of reading state.json and the record again. */
  e->own_dirfd = -1;
  e->own_cg = NULL;
  if (r == 0 && !detach && !keep && !e->poststop)
    {
      e->own_dirfd = brig_steal_fd (c->dirfd);
      e->own_cg = brig_steal_ptr (c->cg);
    }
  create_ctx_free (c);
  return r;
}

/* The foreground: proxy the terminal and signals, relay sd_notify, wait
 * for the process; then delete the container (unless kept). */
static int
run_foreground (const struct brig_context *ctx, const char *id, bool keep, int master,
                struct run_end *e, int *exit_status, brig_error *err)
{
  struct brig_proxy_watch w = { .fd = e->notify.fd, .on_readable = relay_notify,
                                .arg = &e->notify };
  brig_error de = { 0 };
  int r = brig_terminal_proxy_watch (master, e->pid, &w, exit_status, err);

  /* What the process sent just before it exited (the proxy loop stops at
   * the exit). */
  while (e->notify.fd >= 0 && brig_notify_pending (&e->notify))
    relay_notify (&e->notify);
  brig_notify_close (&e->notify);
  if (master >= 0)
    close (master);
  if (r < 0)
    {
      if (e->own_dirfd >= 0)
        close (e->own_dirfd);
      brig_cgroup_free (e->own_cg);
      return r;
    }
  if (keep)
    return 0;
  if ((e->own_dirfd >= 0
       ? brig_container_delete_after_run_owned (ctx, id, e->own_dirfd, e->own_cg, e->pid,
                                                e->start, &de)
       : brig_container_delete_after_run (ctx, id, e->poststop, &de)) < 0)
    brig_warn ("delete container \"%s\": %s", id, de.msg ? de.msg : "failed");
  brig_error_clear (&de);
  return 0;
}

int
brig_container_run (const struct brig_context *ctx, const struct brig_create_opts *o,
                    bool detach, bool keep, int *exit_status, brig_error *err)
{
  struct create_ctx c;
  struct run_end e;
  int master = -1, r;

  *exit_status = 0;
  create_ctx_init (&c, ctx, o, detach ? MODE_RUN_DETACHED : MODE_RUN);
  r = run_start (&c, &master, err);
  if (r < 0)
    {
      create_ctx_undo (&c);
      create_ctx_free (&c);
      if (master >= 0)
        close (master);
      return r;
    }
  r = run_hand_over (&c, detach, keep, &e, err);
  if (r < 0)
    {
      if (!keep)
        {
          while (waitpid (e.pid, NULL, 0) < 0 && errno == EINTR)
            ;
          brig_container_delete (ctx, o->id, true, NULL);
        }
      if (master >= 0)
        close (master);
      brig_notify_close (&e.notify);
      return r;
    }
  if (detach)
    {
      brig_notify_close (&e.notify);
      return 0;
    }
  return run_foreground (ctx, o->id, keep, master, &e, exit_status, err);
}
