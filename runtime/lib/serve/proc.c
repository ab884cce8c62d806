/* Processes of brig serve's sandboxes, with envd's lifetime (docs/serve.md
 * "Processes"): a process outlives the stream that started it (background
 * commands, disconnect then Connect), and ends by itself, on SendSignal,
 * at its Connect-Timeout-Ms deadline (SIGKILL) or with its sandbox.
 *
 * One pump thread per process reads stdout and stderr (chunks of up to
 * 32 KiB, each one data event) and the runner's socket (the wait status),
 * and appends Connect envelopes to every stream subscribed; a stream is
 * the body of one Start or Connect response, read by libmicrohttpd on the
 * connection's thread, which may block here (thread per connection). A
 * stream that falls more than STREAM_MAX behind is ended with
 * resource_exhausted rather than hold the process or the other streams. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "serve/internal.h"
#include "utils.h"

#define CHUNK (32 * 1024)
#define STREAM_MAX (2 * 1024 * 1024)
/* After the exit, output still in the pipes is read for this long (a
 * background child of the process may hold them open for ever). */
#define DRAIN_MS 200

static void
stream_put (struct serve_stream *s, unsigned flags, const char *json, size_t n)
{
  if (s->done)
    return;
  if (s->off > 0 && s->off == s->len)
    s->off = s->len = 0;
  serve_envelope (&s->buf, &s->len, &s->cap, flags, json, n);
}

static const char START_FMT[] = "{\"event\":{\"start\":{\"pid\":%d}}}";

static struct serve_stream *
stream_new (struct serve_proc *p, int64_t keepalive_ms)
{
  struct serve_stream *s = xmalloc0 (sizeof *s);
  char json[64];
  int n = snprintf (json, sizeof json, START_FMT, (int) p->pid);

  s->p = p;
  s->srv = p->srv;
  s->keepalive_ms = keepalive_ms > 0 ? keepalive_ms : 90000;
  stream_put (s, 0, json, (size_t) n);
  s->next = p->streams;
  p->streams = s;
  __atomic_add_fetch (&p->refs, 1, __ATOMIC_ACQ_REL);
  return s;
}

/* Append to every stream of p (p->mu held). */
static void
publish (struct serve_proc *p, unsigned flags, const char *json, size_t n, bool last)
{
  static const char slow[] = "{\"error\":{\"code\":\"resource_exhausted\","
                             "\"message\":\"the client reads the output too slowly\"}}";

  for (struct serve_stream *s = p->streams; s; s = s->next)
    {
      if (s->done)
        continue;
      if (s->len - s->off > STREAM_MAX)
        {
          stream_put (s, 2, slow, sizeof slow - 1);
          s->done = true;
          continue;
        }
      stream_put (s, flags, json, n);
      if (last)
        s->done = true;
    }
  pthread_cond_broadcast (&p->cond);
}

static void
publish_data (struct serve_proc *p, const char *which, const char *data, size_t n)
{
  _cleanup_free_ char *b64 = serve_b64_encode (data, n, NULL);
  _cleanup_free_ char *json = xasprintf ("{\"event\":{\"data\":{\"%s\":\"%s\"}}}", which, b64);

  pthread_mutex_lock (&p->mu);
  publish (p, 0, json, strlen (json), false);
  pthread_mutex_unlock (&p->mu);
}

/* The end event as envd sends it (Go's ProcessState). */
static void
publish_end (struct serve_proc *p, int status, bool known)
{
  char what[96], sig[64];
  yajl_gen g = serve_jg_new ();
  _cleanup_free_ char *json = NULL;
  int code = -1;
  bool exited = known && WIFEXITED (status);
  size_t n;

  if (!known)
    snprintf (what, sizeof what, "the process's status is unknown");
  else if (exited)
    snprintf (what, sizeof what, "exit status %d", code = WEXITSTATUS (status));
  else
    {
      snprintf (sig, sizeof sig, "%s", strsignal (WTERMSIG (status)));
      sig[0] = (char) (sig[0] >= 'A' && sig[0] <= 'Z' ? sig[0] + 32 : sig[0]);
      snprintf (what, sizeof what, "signal: %s", sig);
    }
  yajl_gen_map_open (g);
  serve_jg_str (g, "event");
  yajl_gen_map_open (g);
  serve_jg_str (g, "end");
  yajl_gen_map_open (g);
  serve_jg_kint (g, "exitCode", code);
  serve_jg_str (g, "exited");
  yajl_gen_bool (g, exited);
  serve_jg_kstr (g, "status", what);
  if (code != 0)
    serve_jg_kstr (g, "error", what);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  json = serve_jg_done (g, &n);
  pthread_mutex_lock (&p->mu);
  publish (p, 0, json, n, false);
  publish (p, 2, "{}", 2, true);
  p->ended = true;
  pthread_mutex_unlock (&p->mu);
}

/* One read from *fd into the streams; EOF or an error closes it. */
static void
pump_read (struct serve_proc *p, int *fd, const char *which)
{
  char buf[CHUNK];
  ssize_t n = read (*fd, buf, sizeof buf);

  if (n > 0)
    publish_data (p, which, buf, (size_t) n);
  else if (n == 0 || (errno != EINTR && errno != EAGAIN))
    {
      close (*fd);
      *fd = -1;
    }
}

static void
unlist (struct serve_proc *p)
{
  struct serve *srv = p->srv;

  pthread_mutex_lock (&srv->mu);
  for (struct serve_proc **pp = &p->sb->procs; *pp; pp = &(*pp)->next)
    if (*pp == p)
      {
        *pp = p->next;
        break;
      }
  pthread_mutex_unlock (&srv->mu);
}

static void *
pump (void *arg)
{
  struct serve_proc *p = arg;
  int64_t deadline = p->deadline, drain_until = 0;
  bool exited = false, known = false;
  int status = 0, rs;

  while (p->out >= 0 || p->err >= 0 || !exited)
    {
      struct pollfd fds[3] = {
        { .fd = p->out, .events = POLLIN }, { .fd = p->err, .events = POLLIN },
        { .fd = exited ? -1 : p->sock, .events = POLLIN },
      };
      int64_t now = brig_mono_ms (), until = exited ? drain_until : deadline;
      int timeout = until > 0 ? (int) (until > now ? until - now : 0) : -1;

      if (poll (fds, 3, timeout) == 0)
        {
          if (exited)
            break;
          brig_debug ("serve: pid %d reached its deadline: SIGKILL", (int) p->pid);
          serve_proc_signal (p, SIGKILL);
          deadline = 0;
          continue;
        }
      if (fds[0].revents)
        pump_read (p, &p->out, "stdout");
      if (fds[1].revents)
        pump_read (p, &p->err, "stderr");
      if (fds[2].revents)
        {
          char msg[64] = "";
          ssize_t k = recv (p->sock, msg, sizeof msg - 1, 0);
          if (k < 0 && errno == EINTR)
            continue;
          exited = true;
          known = k > 1 && msg[0] == 'S';
          if (known)
            status = atoi (msg + 1);
          drain_until = brig_mono_ms () + DRAIN_MS;
        }
    }
  while (waitpid (p->runner, &rs, 0) < 0 && errno == EINTR)
    ;
  /* out of List before the end event reaches a client */
  unlist (p);
  publish_end (p, status, known);
  serve_proc_unref (p);
  return NULL;
}

int
serve_proc_start (struct serve *srv, struct serve_sandbox *sb, struct serve_start *st,
                  struct serve_stream **out, brig_error *err)
{
  struct serve_spawned sp;
  struct serve_proc *p;
  pthread_condattr_t ca;
  pthread_attr_t ta;
  pthread_t t;
  size_t n = 0;
  int r;

  pthread_mutex_lock (&srv->mu);
  for (struct serve_proc *q = sb->procs; q; q = q->next)
    n++;
  pthread_mutex_unlock (&srv->mu);
  if (n >= SERVE_MAX_PROCS)
    return brig_error_say (err, EMFILE, "the sandbox runs %d processes already", SERVE_MAX_PROCS);
  r = serve_spawn (srv, sb->member, st, &sp, err);
  if (r < 0)
    return r;
  p = xmalloc0 (sizeof *p);
  p->srv = srv;
  p->sb = sb;
  __atomic_add_fetch (&sb->refs, 1, __ATOMIC_ACQ_REL);
  p->pid = sp.pid;
  p->runner = sp.runner;
  p->pidfd = sp.pidfd;
  p->sock = sp.sock;
  p->out = sp.out;
  p->err = sp.err;
  p->in = sp.in;
  /* a process that reads no stdin must not hold SendInput for ever */
  if (p->in >= 0)
    fcntl (p->in, F_SETFL, O_NONBLOCK);
  p->config = st->config;
  st->config = NULL;
  p->deadline = st->timeout_ms > 0 ? brig_mono_ms () + st->timeout_ms : 0;
  p->refs = 1; /* the pump's */
  pthread_mutex_init (&p->mu, NULL);
  pthread_mutex_init (&p->in_mu, NULL);
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&p->cond, &ca);
  pthread_condattr_destroy (&ca);
  *out = stream_new (p, st->keepalive_ms);
  pthread_mutex_lock (&srv->mu);
  p->next = sb->procs;
  sb->procs = p;
  /* killed meanwhile: the release kills it too, this only does it now */
  if (sb->gone)
    serve_proc_signal (p, SIGKILL);
  pthread_mutex_unlock (&srv->mu);
  pthread_attr_init (&ta);
  pthread_attr_setdetachstate (&ta, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&ta, 256 * 1024);
  if (pthread_create (&t, &ta, pump, p) != 0)
    abort ();
  pthread_attr_destroy (&ta);
  return 0;
}

struct serve_proc *
serve_proc_get (struct serve *srv, struct serve_sandbox *sb, uint32_t pid)
{
  struct serve_proc *p;

  pthread_mutex_lock (&srv->mu);
  for (p = sb->procs; p; p = p->next)
    if ((uint32_t) p->pid == pid)
      {
        __atomic_add_fetch (&p->refs, 1, __ATOMIC_ACQ_REL);
        break;
      }
  pthread_mutex_unlock (&srv->mu);
  return p;
}

void
serve_proc_unref (struct serve_proc *p)
{
  int fds[5];

  if (p == NULL || __atomic_sub_fetch (&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  fds[0] = p->pidfd, fds[1] = p->sock, fds[2] = p->out, fds[3] = p->err, fds[4] = p->in;
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  pthread_mutex_destroy (&p->mu);
  pthread_mutex_destroy (&p->in_mu);
  pthread_cond_destroy (&p->cond);
  serve_sandbox_unref (p->sb);
  free (p->config);
  free (p);
}

struct serve_stream *
serve_proc_subscribe (struct serve_proc *p, int64_t keepalive_ms)
{
  struct serve_stream *s = NULL;

  pthread_mutex_lock (&p->mu);
  if (!p->ended)
    s = stream_new (p, keepalive_ms);
  pthread_mutex_unlock (&p->mu);
  return s;
}

static ssize_t
stream_read (void *cls, uint64_t pos, char *buf, size_t max)
{
  static const char keepalive[] = "{\"event\":{\"keepalive\":{}}}";
  static const char gone[] = "{\"error\":{\"code\":\"unavailable\",\"message\":\"brig serve stops\"}}";
  struct serve_stream *s = cls;
  struct serve_proc *p = s->p;
  int64_t ping = brig_mono_ms () + s->keepalive_ms;
  ssize_t n;

  pthread_mutex_lock (&p->mu);
  while (s->off == s->len && !s->done)
    {
      struct timespec ts;
      int64_t now = brig_mono_ms (), until = ping < now + 1000 ? ping : now + 1000;
      if (__atomic_load_n (&s->srv->stopping, __ATOMIC_ACQUIRE))
        {
          stream_put (s, 2, gone, sizeof gone - 1);
          s->done = true;
          break;
        }
      if (now >= ping)
        {
          stream_put (s, 0, keepalive, sizeof keepalive - 1);
          break;
        }
      ts.tv_sec = until / 1000;
      ts.tv_nsec = (until % 1000) * 1000000;
      pthread_cond_timedwait (&p->cond, &p->mu, &ts);
    }
  if (s->off < s->len)
    {
      n = (ssize_t) (s->len - s->off < max ? s->len - s->off : max);
      memcpy (buf, s->buf + s->off, (size_t) n);
      s->off += (size_t) n;
    }
  else
    n = MHD_CONTENT_READER_END_OF_STREAM;
  pthread_mutex_unlock (&p->mu);
  return n;
}

static void
stream_free (void *cls)
{
  struct serve_stream *s = cls;
  struct serve_proc *p = s->p;

  pthread_mutex_lock (&p->mu);
  for (struct serve_stream **pp = &p->streams; *pp; pp = &(*pp)->next)
    if (*pp == s)
      {
        *pp = s->next;
        break;
      }
  pthread_mutex_unlock (&p->mu);
  free (s->buf);
  free (s);
  serve_proc_unref (p);
}

struct MHD_Response *
serve_stream_response (struct serve_stream *s)
{
  struct MHD_Response *r = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, CHUNK + 64,
                                                              stream_read, s, stream_free);
  if (r)
    MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/connect+json");
  return r;
}

int
serve_proc_write (struct serve_proc *p, const void *data, size_t n, brig_error *err)
{
  const char *d = data;
  int r = 0;

  pthread_mutex_lock (&p->in_mu);
  if (p->in < 0)
    r = brig_error_say (err, EPIPE, "error writing to stdin: stdin not enabled or closed");
  while (r == 0 && n > 0)
    {
      struct pollfd pf = { .fd = p->in, .events = POLLOUT };
      ssize_t k;
      if (poll (&pf, 1, 10000) == 0)
        {
          r = brig_error_say (err, EAGAIN, "error writing to stdin: the process reads none");
          break;
        }
      k = write (p->in, d, n);
      if (k < 0 && errno == EINTR)
        continue;
      if (k < 0)
        {
          r = brig_error_errno (err, "error writing to stdin");
          break;
        }
      d += k;
      n -= (size_t) k;
    }
  pthread_mutex_unlock (&p->in_mu);
  return r;
}

int
serve_proc_close_stdin (struct serve_proc *p)
{
  pthread_mutex_lock (&p->in_mu);
  if (p->in >= 0)
    close (p->in);
  p->in = -1;
  pthread_mutex_unlock (&p->in_mu);
  return 0;
}
