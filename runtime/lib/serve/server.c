/* brig serve's HTTP side (docs/serve.md): libmicrohttpd with one thread per
 * connection, requests read whole (up to --max-body) and routed by the
 * E2b-Sandbox-Id header: with it to envd.c, without to control.c.
 *
 * Slow clients: libmicrohttpd's timeout is one of inactivity, so a client
 * that sends a byte a second is never cut off by it. The sweeper thread
 * closes (shutdown) every connection that has been waiting for, or reading,
 * a request longer than --request-timeout; a connection that is answering
 * (a stream) is not bounded by it. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "serve/internal.h"
#include "utils.h"

/* A connection, as the sweeper sees it. */
struct serve_conn {
  struct serve_conn *next;
  int fd;
  int64_t since;             /* monotonic ms the current wait or read began */
  bool reading;              /* false while a response is being sent */
};

struct serve_req {
  char *body;
  size_t len;
  bool refused;              /* over --max-body */
  bool answered;             /* refused at once (Content-Length) */
  struct serve_upload *up;   /* POST /files: the body is spooled there (files.c) */
};

static struct serve_conn *
conn_of (struct MHD_Connection *c)
{
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info (c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

static void
conn_reading (struct serve *srv, struct MHD_Connection *c, bool reading)
{
  struct serve_conn *k = conn_of (c);

  if (k == NULL)
    return;
  pthread_mutex_lock (&srv->mu);
  k->reading = reading;
  k->since = brig_mono_ms ();
  pthread_mutex_unlock (&srv->mu);
}

static void
on_connection (void *cls, struct MHD_Connection *c, void **socket_context,
               enum MHD_ConnectionNotificationCode toe)
{
  struct serve *srv = cls;
  struct serve_conn *k, **pp;

  if (toe == MHD_CONNECTION_NOTIFY_STARTED)
    {
      const union MHD_ConnectionInfo *ci = MHD_get_connection_info (c, MHD_CONNECTION_INFO_CONNECTION_FD);
      int one = 1;
      k = xmalloc0 (sizeof *k);
      k->fd = ci ? ci->connect_fd : -1;
      k->since = brig_mono_ms ();
      k->reading = true;
      /* small frames of a stream go out at once (MHD sets it too) */
      if (k->fd >= 0)
        setsockopt (k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      pthread_mutex_lock (&srv->mu);
      k->next = srv->conns;
      srv->conns = k;
      pthread_mutex_unlock (&srv->mu);
      *socket_context = k;
      return;
    }
  /* closed: before MHD closes the fd, so the sweeper never shuts a reused one */
  k = *socket_context;
  pthread_mutex_lock (&srv->mu);
  for (pp = &srv->conns; *pp; pp = &(*pp)->next)
    if (*pp == k)
      {
        *pp = k->next;
        break;
      }
  pthread_mutex_unlock (&srv->mu);
  free (k);
  *socket_context = NULL;
}

static void
on_completed (void *cls, struct MHD_Connection *c, void **con_cls,
              enum MHD_RequestTerminationCode toe)
{
  struct serve_req *rq = *con_cls;

  if (rq)
    {
      free (rq->body);
      serve_upload_free (rq->up);
      free (rq);
      *con_cls = NULL;
    }
  conn_reading (cls, c, true);
}

static void *
sweeper (void *arg)
{
  struct serve *srv = arg;
  int64_t limit = (int64_t) srv->o->request_timeout * 1000;
  unsigned round = 0;

  while (!__atomic_load_n (&srv->stopping, __ATOMIC_ACQUIRE))
    {
      /* once a second: records of sandboxes whose lease ended go */
      if (round++ % 5 == 0)
        serve_sandboxes_sweep (srv);
      int64_t now = brig_mono_ms ();
      pthread_mutex_lock (&srv->mu);
      for (struct serve_conn *k = srv->conns; k; k = k->next)
        if (k->reading && k->fd >= 0 && now - k->since > limit)
          {
            brig_debug ("serve: closing a connection that sent no whole request in %us",
                        srv->o->request_timeout);
            shutdown (k->fd, SHUT_RDWR);
            k->since = INT64_MAX / 2;
          }
      pthread_mutex_unlock (&srv->mu);
      brig_sleep_ms (200);
    }
  return NULL;
}

static enum MHD_Result
dispatch (struct serve *srv, struct MHD_Connection *c, const char *url, const char *method,
          struct serve_req *rq)
{
  const char *sid = serve_header (c, "E2b-Sandbox-Id");

  if (sid)
    return serve_envd (srv, c, method, url, sid, rq->body, rq->len);
  if (strcmp (url, "/health") == 0 && strcmp (method, "GET") == 0)
    return serve_empty (c, 204);
  return serve_control (srv, c, method, url, rq->body, rq->len);
}

static enum MHD_Result
handle (void *cls, struct MHD_Connection *c, const char *url, const char *method,
        const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
  struct serve *srv = cls;
  struct serve_req *rq = *con_cls;
  size_t max = srv->o->max_body;

  if (rq == NULL)
    {
      const char *cl = serve_header (c, MHD_HTTP_HEADER_CONTENT_LENGTH);
      const char *sid = serve_header (c, "E2b-Sandbox-Id");
      rq = xmalloc0 (sizeof *rq);
      *con_cls = rq;
      /* a file upload is not bounded by --max-body: it is spooled */
      if (sid && strcmp (method, "POST") == 0 && strcmp (url, "/files") == 0)
        {
          enum MHD_Result r = serve_upload_begin (srv, c, sid, &rq->up);
          if (rq->up == NULL)
            rq->refused = rq->answered = true;
          return r;
        }
      if (cl && strtoull (cl, NULL, 10) > max)
        {
          rq->refused = rq->answered = true;
          return serve_error (c, 413, "request body of %s bytes is over the limit of %zu", cl, max);
        }
      return MHD_YES;
    }
  if (*upload_size > 0)
    {
      size_t n = *upload_size;
      *upload_size = 0;
      if (rq->refused)
        return MHD_YES;
      if (rq->up)
        {
          serve_upload_feed (rq->up, upload, n);
          return MHD_YES;
        }
      /* libmicrohttpd takes no answer in the middle of a body: the rest
       * is read and dropped (within --request-timeout), then 413 */
      if (rq->len + n > max)
        {
          rq->refused = true;
          free (rq->body);
          rq->body = NULL;
          return MHD_YES;
        }
      rq->body = xrealloc (rq->body, rq->len + n + 1);
      memcpy (rq->body + rq->len, upload, n);
      rq->len += n;
      return MHD_YES;
    }
  if (rq->answered)
    return MHD_YES;
  if (rq->refused)
    {
      rq->answered = true;
      return serve_error (c, 413, "request body over the limit of %zu bytes", max);
    }
  conn_reading (srv, c, false);
  if (rq->up)
    {
      rq->answered = true;
      return serve_upload_end (rq->up, c);
    }
  return dispatch (srv, c, url, method, rq);
}

/* libmicrohttpd's messages, at debug level (it hands a format and its
 * va_list, so the format cannot be a literal here). */
static void __attribute__ ((format (printf, 2, 0)))
mhd_log (void *cls, const char *fmt, va_list ap)
{
  char msg[512];
  size_t n;

  vsnprintf (msg, sizeof msg, fmt, ap);
  n = strlen (msg);
  while (n > 0 && msg[n - 1] == '\n')
    msg[--n] = '\0';
  brig_debug ("serve: libmicrohttpd: %s", msg);
}

/* ADDR:PORT or [V6]:PORT into sa; *loopback: 127/8 or ::1. */
static int
parse_listen (const char *s, struct sockaddr_storage *sa, bool *v6, bool *loopback,
              brig_error *err)
{
  char host[256];
  const char *colon = strrchr (s, ':'), *h = s;
  size_t hl;
  char *end;
  unsigned long port;

  if (colon == NULL)
    return brig_error_say (err, EINVAL, "--listen \"%s\": expected ADDR:PORT", s);
  port = strtoul (colon + 1, &end, 10);
  if (colon[1] == '\0' || *end != '\0' || port > 65535)
    return brig_error_say (err, EINVAL, "--listen \"%s\": invalid port", s);
  hl = (size_t) (colon - s);
  if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']')
    h = s + 1, hl -= 2;
  if (hl == 0 || hl >= sizeof host)
    return brig_error_say (err, EINVAL, "--listen \"%s\": expected ADDR:PORT", s);
  memcpy (host, h, hl);
  host[hl] = '\0';
  memset (sa, 0, sizeof *sa);
  if (inet_pton (AF_INET, host, &((struct sockaddr_in *) sa)->sin_addr) == 1)
    {
      struct sockaddr_in *in = (struct sockaddr_in *) sa;
      in->sin_family = AF_INET;
      in->sin_port = htons ((uint16_t) port);
      *v6 = false;
      *loopback = (ntohl (in->sin_addr.s_addr) >> 24) == 127;
      return 0;
    }
  if (inet_pton (AF_INET6, host, &((struct sockaddr_in6 *) sa)->sin6_addr) == 1)
    {
      struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) sa;
      in6->sin6_family = AF_INET6;
      in6->sin6_port = htons ((uint16_t) port);
      *v6 = true;
      *loopback = IN6_IS_ADDR_LOOPBACK (&in6->sin6_addr);
      return 0;
    }
  return brig_error_say (err, EINVAL, "--listen \"%s\": \"%s\" is not an IPv4 or IPv6 address "
                         "(names are not resolved)", s, host);
}

static int
start_daemon (struct serve *srv, brig_error *err)
{
  struct sockaddr_storage sa;
  const union MHD_DaemonInfo *di;
  char host[INET6_ADDRSTRLEN];
  bool v6 = false, loopback = false;
  int r = parse_listen (srv->o->listen, &sa, &v6, &loopback, err);

  if (r < 0)
    return r;
  if (!loopback && srv->o->api_key_file == NULL)
    return brig_error_say (err, EINVAL, "--listen %s is not a loopback address: "
                           "it needs --api-key-file", srv->o->listen);
  srv->d = MHD_start_daemon (
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL
          | MHD_USE_ERROR_LOG | (v6 ? MHD_USE_IPv6 : 0),
      0, NULL, NULL, handle, srv,
      MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &sa,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned) SERVE_MAX_CONNECTIONS,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t) 64 * 1024,
      MHD_OPTION_CONNECTION_TIMEOUT, srv->o->request_timeout,
      MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, srv,
      MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
      MHD_OPTION_THREAD_STACK_SIZE, (size_t) 512 * 1024,
      MHD_OPTION_END);
  if (srv->d == NULL)
    return brig_error_errno (err, "listen on %s", srv->o->listen);
  di = MHD_get_daemon_info (srv->d, MHD_DAEMON_INFO_BIND_PORT);
  if (v6)
    inet_ntop (AF_INET6, &((struct sockaddr_in6 *) &sa)->sin6_addr, host, sizeof host);
  else
    inet_ntop (AF_INET, &((struct sockaddr_in *) &sa)->sin_addr, host, sizeof host);
  printf ("brig serve: listening on http://%s%s%s:%u\n", v6 ? "[" : "", host, v6 ? "]" : "",
          di ? (unsigned) di->port : 0u);
  fflush (stdout);
  return 0;
}

/* Release every sandbox still handed out (SIGTERM). */
static void
release_all (struct serve *srv)
{
  for (;;)
    {
      struct serve_sandbox *sb;
      brig_error err = { 0 };
      pthread_mutex_lock (&srv->mu);
      sb = srv->sandboxes;
      if (sb)
        __atomic_add_fetch (&sb->refs, 1, __ATOMIC_ACQ_REL);
      pthread_mutex_unlock (&srv->mu);
      if (sb == NULL)
        return;
      if (serve_sandbox_kill (srv, sb, &err) < 0)
        brig_warn ("serve: release %s (%s): %s", sb->id, sb->member, err.msg);
      brig_error_clear (&err);
      serve_sandbox_unref (sb);
    }
}

/* Each process holds five fds and each connection one: the soft limit
 * (often 1024) up to the hard one. */
static void
raise_fd_limit (void)
{
  struct rlimit rl;

  if (getrlimit (RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max)
    {
      rl.rlim_cur = rl.rlim_max;
      setrlimit (RLIMIT_NOFILE, &rl);
    }
}

int
brig_serve (const struct brig_context *ctx, const struct brig_serve_opts *o, brig_error *err)
{
  struct serve srv = { .ctx = ctx, .o = o, .dirfd = -1 };
  sigset_t stop;
  pthread_t sw;
  int r, sig;

  pthread_mutex_init (&srv.mu, NULL);
  raise_fd_limit ();
  /* SIGTERM and SIGINT are taken by sigwait below, in no other thread;
   * a closed stdin pipe is an error, not a signal */
  sigemptyset (&stop);
  sigaddset (&stop, SIGTERM);
  sigaddset (&stop, SIGINT);
  pthread_sigmask (SIG_BLOCK, &stop, NULL);
  signal (SIGPIPE, SIG_IGN);
  r = serve_keys_load (&srv, err);
  if (r == 0)
    r = serve_records_open (&srv, err);
  if (r == 0)
    r = start_daemon (&srv, err);
  if (r < 0)
    {
      release_all (&srv);
      serve_keys_free (&srv);
      if (srv.dirfd >= 0)
        close (srv.dirfd);
      return brig_error_wrap (err, "serve");
    }
  if (pthread_create (&sw, NULL, sweeper, &srv) != 0)
    abort ();
  while (sigwait (&stop, &sig) != 0)
    ;
  brig_log (BRIG_LOG_INFO, "serve: %s: releasing what was handed out", strsignal (sig));
  MHD_quiesce_daemon (srv.d);
  __atomic_store_n (&srv.stopping, 1, __ATOMIC_RELEASE);
  release_all (&srv);
  MHD_stop_daemon (srv.d);
  /* a create that was claiming while the first pass ran */
  release_all (&srv);
  pthread_join (sw, NULL);
  serve_keys_free (&srv);
  close (srv.dirfd);
  return 0;
}
