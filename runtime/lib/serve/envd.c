/* The envd API of a brig serve sandbox (docs/serve.md "Processes"): the
 * Connect protocol with the JSON codec, as the e2b SDK speaks it.
 *
 * A request names its sandbox in E2b-Sandbox-Id and must carry that
 * sandbox's envdAccessToken as X-Access-Token: envd requests carry no API
 * key, so the token is what keeps one tenant out of another's sandbox.
 * Unary calls answer 200 with the JSON message or an error status with
 * {"code": "not_found", ...}; server streams (Start, Connect) always
 * answer 200 and end with an end-stream envelope, also on errors (a
 * non-200 stream loses its message in the SDK). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "serve/internal.h"
#include "utils.h"

struct call {
  struct serve *srv;
  struct MHD_Connection *c;
  struct serve_sandbox *sb;
  const char *method;        /* the RPC: "process.Process/Start" */
  bool stream;
  yajl_val req;
};

/* An error in the call's own shape (stream or unary). */
static enum MHD_Result
fail (struct call *k, const char *code, const char *msg)
{
  if (k->stream)
    return serve_stream_error (k->c, code, "%s", msg);
  return serve_connect_error (k->c, code, "%s", msg);
}

/* The pid of the request's process selector; false when there is none. */
static bool
selected_pid (yajl_val req, uint32_t *pid)
{
  yajl_val sel = serve_json_get (req, "process", yajl_t_object);
  yajl_val v = serve_json_get (sel, "pid", yajl_t_any);
  char *end;
  unsigned long long n;

  if (v && YAJL_IS_INTEGER (v) && YAJL_GET_INTEGER (v) >= 0 && YAJL_GET_INTEGER (v) <= UINT32_MAX)
    {
      *pid = (uint32_t) YAJL_GET_INTEGER (v);
      return true;
    }
  if (v && YAJL_IS_STRING (v))
    {
      n = strtoull (v->u.string, &end, 10);
      if (*v->u.string >= '0' && *v->u.string <= '9' && *end == '\0' && n <= UINT32_MAX)
        {
          *pid = (uint32_t) n;
          return true;
        }
    }
  return false;
}

static struct serve_proc *
find_proc (struct call *k, uint32_t *pid, enum MHD_Result *ret)
{
  struct serve_proc *p;
  char msg[96];

  if (!selected_pid (k->req, pid))
    {
      *ret = fail (k, "invalid_argument", "process.pid: expected the pid of a process");
      return NULL;
    }
  p = serve_proc_get (k->srv, k->sb, *pid);
  if (p == NULL)
    {
      snprintf (msg, sizeof msg, "process with pid %u not found", *pid);
      *ret = fail (k, "not_found", msg);
    }
  return p;
}

static int64_t
header_ms (struct MHD_Connection *c, const char *name, int64_t unit, int64_t dflt)
{
  const char *v = serve_header (c, name);
  char *end;
  long long n;

  if (v == NULL)
    return dflt;
  n = strtoll (v, &end, 10);
  if (*v < '0' || *v > '9' || *end != '\0' || n < 0 || n > INT32_MAX)
    return -1;
  return n * unit;
}

/* Keepalive-Ping-Interval in ms: 1 s to 1 h, envd's 90 s when absent or
 * invalid. */
static int64_t
keepalive_ms (struct MHD_Connection *c)
{
  int64_t v = header_ms (c, "Keepalive-Ping-Interval", 1000, 90000);
  return v < 1000 ? 90000 : v > 3600000 ? 3600000 : v;
}

/* StartRequest.process into st: [cmd, args...], K=V, cwd, and the
 * ProcessConfig JSON that List gives back. NULL or a message. */
static const char *
start_config (yajl_val proc, struct serve_start *st)
{
  yajl_val args = serve_json_get (proc, "args", yajl_t_any);
  yajl_val envs = serve_json_get (proc, "envs", yajl_t_any);
  yajl_val cwd = serve_json_get (proc, "cwd", yajl_t_any);
  const char *cmd;
  size_t na = 0, ne = 0;
  yajl_gen g;
  bool bad;

  cmd = serve_json_str (proc, "cmd", &bad);
  if (cmd == NULL || *cmd == '\0')
    return "process.cmd: expected a command";
  if (args && args->type != yajl_t_null && !YAJL_IS_ARRAY (args))
    return "process.args: expected an array of strings";
  if (envs && envs->type != yajl_t_null && !YAJL_IS_OBJECT (envs))
    return "process.envs: expected an object of strings";
  if (cwd && cwd->type != yajl_t_null && (!YAJL_IS_STRING (cwd) || cwd->u.string[0] == '\0'))
    return "process.cwd: expected a path";
  na = YAJL_IS_ARRAY (args) ? args->u.array.len : 0;
  ne = YAJL_IS_OBJECT (envs) ? envs->u.object.len : 0;
  for (size_t i = 0; i < na; i++)
    if (!YAJL_IS_STRING (args->u.array.values[i]))
      return "process.args: expected an array of strings";
  for (size_t i = 0; i < ne; i++)
    if (!YAJL_IS_STRING (envs->u.object.values[i]) || envs->u.object.keys[i][0] == '\0'
        || strchr (envs->u.object.keys[i], '=') != NULL)
      return "process.envs: expected names without '=' and string values";
  st->args = xmalloc0 ((na + 2) * sizeof *st->args);
  st->args[0] = xstrdup (cmd);
  for (size_t i = 0; i < na; i++)
    st->args[i + 1] = xstrdup (args->u.array.values[i]->u.string);
  st->env = xmalloc0 ((ne + 1) * sizeof *st->env);
  for (size_t i = 0; i < ne; i++)
    st->env[i] = xasprintf ("%s=%s", envs->u.object.keys[i], envs->u.object.values[i]->u.string);
  st->cwd = YAJL_IS_STRING (cwd) ? cwd->u.string : NULL;
  g = serve_jg_new ();
  yajl_gen_map_open (g);
  serve_jg_kstr (g, "cmd", cmd);
  serve_jg_str (g, "args");
  yajl_gen_array_open (g);
  for (size_t i = 0; i < na; i++)
    serve_jg_str (g, args->u.array.values[i]->u.string);
  yajl_gen_array_close (g);
  serve_jg_str (g, "envs");
  yajl_gen_map_open (g);
  for (size_t i = 0; i < ne; i++)
    serve_jg_kstr (g, envs->u.object.keys[i], envs->u.object.values[i]->u.string);
  yajl_gen_map_close (g);
  if (st->cwd)
    serve_jg_kstr (g, "cwd", st->cwd);
  yajl_gen_map_close (g);
  st->config = serve_jg_done (g, NULL);
  return NULL;
}

static enum MHD_Result
reply_stream (struct call *k, struct serve_stream *s)
{
  struct MHD_Response *r = serve_stream_response (s);
  enum MHD_Result ret;

  if (r == NULL)
    return MHD_NO;
  /* libmicrohttpd's inactivity timeout does not see a reader that waits
   * here: a silent process would be cut off at the first frame after it.
   * The keepalive frames keep a stream active; a client that reads none of
   * them is dropped a --request-timeout later. */
  MHD_set_connection_option (k->c, MHD_CONNECTION_OPTION_TIMEOUT,
                             (unsigned) (s->keepalive_ms / 1000) + k->srv->o->request_timeout);
  ret = MHD_queue_response (k->c, 200, r);
  MHD_destroy_response (r);
  return ret;
}

static enum MHD_Result
start (struct call *k)
{
  yajl_val proc = serve_json_get (k->req, "process", yajl_t_object);
  yajl_val pty = serve_json_get (k->req, "pty", yajl_t_any);
  yajl_val in = serve_json_get (k->req, "stdin", yajl_t_any);
  struct serve_start st = { 0 };
  struct serve_stream *s = NULL;
  brig_error err = { 0 };
  enum MHD_Result ret;
  const char *msg;

  if (proc == NULL)
    return fail (k, "invalid_argument", "process: expected a ProcessConfig object");
  if (k->sb->gone)
    return fail (k, "unavailable", "the sandbox was killed");
  if (pty && pty->type != yajl_t_null)
    return fail (k, "unimplemented", "pty is not supported by brig serve yet (docs/serve.md)");
  if (in && in->type != yajl_t_null && !YAJL_IS_TRUE (in) && !YAJL_IS_FALSE (in))
    return fail (k, "invalid_argument", "stdin: expected a boolean");
  st.stdin = in && YAJL_IS_TRUE (in);
  st.timeout_ms = header_ms (k->c, "Connect-Timeout-Ms", 1, 0);
  st.keepalive_ms = keepalive_ms (k->c);
  if (st.timeout_ms < 0)
    return fail (k, "invalid_argument", "Connect-Timeout-Ms: expected milliseconds");
  if ((msg = start_config (proc, &st)) != NULL)
    ret = fail (k, "invalid_argument", msg);
  else if (serve_proc_start (k->srv, k->sb, &st, &s, &err) < 0)
    {
      ret = fail (k, err.code == EMFILE ? "resource_exhausted"
                     : err.code == EPROTO || err.code == ENOMEM ? "internal" : "invalid_argument",
                  err.msg ? err.msg : "cannot start the process");
      brig_error_clear (&err);
    }
  else
    ret = reply_stream (k, s);
  brig_strv_free (st.args);
  brig_strv_free (st.env);
  free (st.config);
  return ret;
}

static enum MHD_Result
connect_ (struct call *k)
{
  enum MHD_Result ret;
  struct serve_stream *s;
  struct serve_proc *p;
  uint32_t pid;
  char msg[96];

  if ((p = find_proc (k, &pid, &ret)) == NULL)
    return ret;
  s = serve_proc_subscribe (p, keepalive_ms (k->c));
  serve_proc_unref (p);
  if (s == NULL)
    {
      snprintf (msg, sizeof msg, "process with pid %u not found", pid);
      return fail (k, "not_found", msg);
    }
  return reply_stream (k, s);
}

static enum MHD_Result
list (struct call *k)
{
  yajl_gen g = serve_jg_new ();
  size_t len;
  char *body;

  yajl_gen_map_open (g);
  serve_jg_str (g, "processes");
  yajl_gen_array_open (g);
  pthread_mutex_lock (&k->srv->mu);
  for (struct serve_proc *p = k->sb->procs; p; p = p->next)
    {
      yajl_gen_map_open (g);
      serve_jg_kint (g, "pid", p->pid);
      serve_jg_str (g, "config");
      /* the ProcessConfig as generated at Start, inserted as it is */
      yajl_gen_number (g, p->config, strlen (p->config));
      yajl_gen_map_close (g);
    }
  pthread_mutex_unlock (&k->srv->mu);
  yajl_gen_array_close (g);
  yajl_gen_map_close (g);
  body = serve_jg_done (g, &len);
  return serve_reply (k->c, 200, body, len, "application/json");
}

static enum MHD_Result
send_input (struct call *k)
{
  yajl_val input = serve_json_get (k->req, "input", yajl_t_object);
  yajl_val data = serve_json_get (input, "stdin", yajl_t_string);
  _cleanup_free_ unsigned char *bytes = NULL;
  brig_error err = { 0 };
  enum MHD_Result ret;
  struct serve_proc *p;
  uint32_t pid;
  size_t n;

  if (serve_json_get (input, "pty", yajl_t_any))
    return fail (k, "unimplemented", "pty input is not supported by brig serve yet");
  if (data == NULL || serve_b64_decode (data->u.string, strlen (data->u.string), &bytes, &n) < 0)
    return fail (k, "invalid_argument", "input.stdin: expected base64 bytes");
  if ((p = find_proc (k, &pid, &ret)) == NULL)
    return ret;
  if (serve_proc_write (p, bytes, n, &err) < 0)
    ret = fail (k, "internal", err.msg);
  else
    ret = serve_empty (k->c, 200);
  brig_error_clear (&err);
  serve_proc_unref (p);
  return ret;
}

static enum MHD_Result
close_stdin (struct call *k)
{
  enum MHD_Result ret;
  struct serve_proc *p;
  uint32_t pid;

  if ((p = find_proc (k, &pid, &ret)) == NULL)
    return ret;
  serve_proc_close_stdin (p);
  serve_proc_unref (p);
  return serve_empty (k->c, 200);
}

static enum MHD_Result
send_signal (struct call *k)
{
  yajl_val v = serve_json_get (k->req, "signal", yajl_t_any);
  enum MHD_Result ret;
  struct serve_proc *p;
  uint32_t pid;
  int sig = 0;

  if (v && YAJL_IS_STRING (v))
    sig = strcmp (v->u.string, "SIGNAL_SIGKILL") == 0   ? SIGKILL
          : strcmp (v->u.string, "SIGNAL_SIGTERM") == 0 ? SIGTERM
                                                        : 0;
  else if (v && YAJL_IS_INTEGER (v) && (YAJL_GET_INTEGER (v) == 9 || YAJL_GET_INTEGER (v) == 15))
    sig = (int) YAJL_GET_INTEGER (v);
  if (sig == 0)
    return fail (k, "unimplemented", "signal: only SIGNAL_SIGKILL and SIGNAL_SIGTERM");
  if ((p = find_proc (k, &pid, &ret)) == NULL)
    return ret;
  if (serve_proc_signal (p, sig) < 0)
    {
      char msg[96];
      snprintf (msg, sizeof msg, "process with pid %u not found", pid);
      ret = fail (k, "not_found", msg);
    }
  else
    ret = serve_empty (k->c, 200);
  serve_proc_unref (p);
  return ret;
}

/* Filesystem calls (fscall.c): a path (Move: source and destination),
 * ListDir's depth; errno to the Connect code envd uses. */
static enum MHD_Result
fs_rpc (struct call *k, enum serve_fs_op op)
{
  struct serve_fs_args a = { .op = op, .depth = 1 };
  yajl_val depth = serve_json_get (k->req, "depth", yajl_t_any);
  _cleanup_free_ char *json = NULL, *body = NULL;
  brig_error err = { 0 };
  enum MHD_Result ret;
  bool bad1, bad2;

  a.path = serve_json_str (k->req, op == SERVE_FS_MOVE ? "source" : "path", &bad1);
  a.dest = serve_json_str (k->req, "destination", &bad2);
  if (bad1 || a.path == NULL || *a.path == '\0')
    return fail (k, "invalid_argument", op == SERVE_FS_MOVE ? "source: expected a path"
                                                             : "path: expected a path");
  if (op == SERVE_FS_MOVE && (bad2 || a.dest == NULL || *a.dest == '\0'))
    return fail (k, "invalid_argument", "destination: expected a path");
  if (depth && depth->type != yajl_t_null)
    {
      if (!YAJL_IS_INTEGER (depth) || YAJL_GET_INTEGER (depth) < 1 || YAJL_GET_INTEGER (depth) > 64)
        return fail (k, "invalid_argument", "depth: expected 1..64");
      a.depth = (unsigned) YAJL_GET_INTEGER (depth);
    }
  if (serve_fs_call (k->srv, k->sb->member, &a, &json, &err) < 0)
    {
      ret = fail (k, err.code == ENOENT ? "not_found" : err.code == EEXIST ? "already_exists"
                     : err.code == ENOTDIR || err.code == EISDIR || err.code == EINVAL
                           || err.code == ELOOP || err.code == ENAMETOOLONG || err.code == EXDEV
                         ? "invalid_argument" : "internal",
                  err.msg ? err.msg : "failed");
      brig_error_clear (&err);
      return ret;
    }
  body = op == SERVE_FS_REMOVE ? xstrdup ("{}")
         : xasprintf ("{\"%s\":%s}", op == SERVE_FS_LIST ? "entries" : "entry", json);
  ret = serve_reply (k->c, 200, body, strlen (body), "application/json");
  body = NULL;
  return ret;
}

static enum MHD_Result fs_stat (struct call *k) { return fs_rpc (k, SERVE_FS_STAT); }
static enum MHD_Result fs_list (struct call *k) { return fs_rpc (k, SERVE_FS_LIST); }
static enum MHD_Result fs_mkdir (struct call *k) { return fs_rpc (k, SERVE_FS_MKDIR); }
static enum MHD_Result fs_move (struct call *k) { return fs_rpc (k, SERVE_FS_MOVE); }
static enum MHD_Result fs_remove (struct call *k) { return fs_rpc (k, SERVE_FS_REMOVE); }

/* The request message: a whole body (unary) or one envelope (stream). */
static enum MHD_Result
parse_request (struct call *k, const char *body, size_t len, bool *ok)
{
  char msg[256];

  *ok = false;
  if (k->stream)
    {
      const unsigned char *b = (const unsigned char *) body;
      size_t n;
      if (len < 5)
        return fail (k, "invalid_argument", "protocol error: incomplete envelope");
      n = (size_t) b[1] << 24 | (size_t) b[2] << 16 | (size_t) b[3] << 8 | b[4];
      if (b[0] != 0)
        return fail (k, "invalid_argument", "protocol error: compressed or end-stream request envelope");
      if (n != len - 5)
        return fail (k, "invalid_argument", "protocol error: the envelope's length is not the body's");
      body += 5;
      len = n;
    }
  k->req = serve_json_parse (body, len, msg, sizeof msg);
  if (k->req == NULL)
    return fail (k, "invalid_argument", msg);
  *ok = true;
  return MHD_YES;
}

static enum MHD_Result
rpc (struct call *k, const char *body, size_t len)
{
  static const struct {
    const char *name;
    bool stream;
    enum MHD_Result (*fn) (struct call *k);
  } rpcs[] = {
    { "process.Process/Start", true, start },
    { "process.Process/Connect", true, connect_ },
    { "process.Process/List", false, list },
    { "process.Process/SendInput", false, send_input },
    { "process.Process/CloseStdin", false, close_stdin },
    { "process.Process/SendSignal", false, send_signal },
    { "filesystem.Filesystem/Stat", false, fs_stat },
    { "filesystem.Filesystem/ListDir", false, fs_list },
    { "filesystem.Filesystem/MakeDir", false, fs_mkdir },
    { "filesystem.Filesystem/Move", false, fs_move },
    { "filesystem.Filesystem/Remove", false, fs_remove },
  };
  enum MHD_Result ret;
  char msg[160];
  bool ok;

  for (size_t i = 0; i < sizeof rpcs / sizeof rpcs[0]; i++)
    if (strcmp (k->method, rpcs[i].name) == 0)
      {
        if (rpcs[i].stream != k->stream)
          return fail (k, "invalid_argument", rpcs[i].stream
                       ? "a server stream: Content-Type must be application/connect+json"
                       : "a unary call: Content-Type must be application/json");
        ret = parse_request (k, body, len, &ok);
        if (!ok)
          return ret;
        ret = rpcs[i].fn (k);
        yajl_tree_free (k->req);
        return ret;
      }
  snprintf (msg, sizeof msg, "%s is not implemented by brig serve", k->method);
  return fail (k, "unimplemented", msg);
}

enum MHD_Result
serve_envd (struct serve *srv, struct MHD_Connection *c, const char *method, const char *url,
            const char *sandbox_id, const char *body, size_t len)
{
  const char *ct = serve_header (c, MHD_HTTP_HEADER_CONTENT_TYPE);
  struct call k = { .srv = srv, .c = c, .method = url + 1 };
  enum MHD_Result ret;

  k.stream = ct && strncmp (ct, "application/connect+", 20) == 0;
  k.sb = serve_sandbox_get (srv, sandbox_id, NULL);
  if (k.sb == NULL)
    {
      yajl_gen g = serve_jg_new ();
      char *out;
      size_t n;
      yajl_gen_map_open (g);
      serve_jg_kstr (g, "sandboxId", sandbox_id);
      serve_jg_kstr (g, "message", "The sandbox was not found");
      serve_jg_kint (g, "code", 502);
      yajl_gen_map_close (g);
      out = serve_jg_done (g, &n);
      return serve_reply (c, 502, out, n, "application/json");
    }
  if (!serve_token_ok (serve_header (c, "X-Access-Token"), k.sb->token))
    ret = k.stream ? serve_error (c, 401, "missing or wrong X-Access-Token")
                   : serve_connect_error (c, "unauthenticated", "missing or wrong X-Access-Token");
  else if (strcmp (url, "/health") == 0)
    ret = serve_empty (c, 204);
  else if (strcmp (url, "/files") == 0 && strcmp (method, "GET") == 0)
    ret = serve_files_get (srv, c, k.sb);
  else if (strcmp (url, "/files") == 0)
    ret = serve_error (c, 405, "%s /files: GET or POST", method);
  else if (strcmp (method, "POST") != 0)
    ret = serve_connect_error (c, "unimplemented", "%s %s: Connect calls are POST", method, url);
  else if (ct && !k.stream && strncmp (ct, "application/json", 16) != 0)
    ret = serve_connect_error (c, "unimplemented", "Content-Type %s: only the JSON codec", ct);
  else if (k.stream && strncmp (ct, "application/connect+json", 24) != 0)
    ret = serve_stream_error (c, "unimplemented", "Content-Type %s: only the JSON codec", ct);
  else
    ret = rpc (&k, body, len);
  serve_sandbox_unref (k.sb);
  return ret;
}
