/* brig serve's control plane (the e2b API as the SDK calls it; docs/serve.md
 * "What maps to what"): a template is a pool, create claims a member of it,
 * kill is the pool's verified release. Every call carries X-API-KEY; a key
 * sees only its own sandboxes (any other id is 404, as a missing one).
 * Errors are {"code": N, "message": ...}: the SDK tests body.code. */
#include <crypt.h>
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sandbox/claim.h"
#include "sandbox/pool.h"
#include "serve/internal.h"
#include "utils.h"

/* crypt(3) SHA-256: what is recorded of a key under --root. */
#define KEY_SALT "$5$rounds=1000$brigserve$"
#define LIST_MAX 100

static int
fingerprint (const char *key, char *fp, size_t n)
{
  struct crypt_data cd;
  const char *h;

  memset (&cd, 0, sizeof cd);
  h = crypt_r (key, KEY_SALT, &cd);
  if (h == NULL || h[0] == '*' || strlen (h) >= n)
    return -EINVAL;
  snprintf (fp, n, "%s", h);
  return 0;
}

int
serve_keys_load (struct serve *srv, brig_error *err)
{
  const char *path = srv->o->api_key_file;
  _cleanup_free_ char *text = NULL;
  struct stat st;
  size_t len;
  char *line, *save = NULL;

  if (path == NULL)
    return 0;
  if (brig_read_file_at (AT_FDCWD, path, &text, &len, err) < 0)
    return brig_error_wrap (err, "--api-key-file");
  if (stat (path, &st) == 0 && (st.st_mode & 077) != 0)
    return brig_error_say (err, EPERM, "--api-key-file %s: readable by others (mode %04o): "
                           "make it 0600", path, st.st_mode & 07777);
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *e = line + strlen (line);
      while (*line == ' ' || *line == '\t')
        line++;
      while (e > line && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        *--e = '\0';
      if (*line == '\0' || *line == '#')
        continue;
      srv->keys = xrealloc (srv->keys, (srv->nkeys + 1) * sizeof *srv->keys);
      srv->keys[srv->nkeys].key = xstrdup (line);
      if (fingerprint (line, srv->keys[srv->nkeys].fp, sizeof srv->keys[0].fp) < 0)
        return brig_error_say (err, EINVAL, "--api-key-file: cannot hash a key");
      srv->nkeys++;
    }
  if (srv->nkeys == 0)
    return brig_error_say (err, EINVAL, "--api-key-file %s holds no key", path);
  return 0;
}

void
serve_keys_free (struct serve *srv)
{
  for (size_t i = 0; i < srv->nkeys; i++)
    {
      explicit_bzero (srv->keys[i].key, strlen (srv->keys[i].key));
      free (srv->keys[i].key);
    }
  free (srv->keys);
}

/* Equal in time independent of where they differ. */
static bool
same_key (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  unsigned char d = la != lb;

  for (size_t i = 0; i < la; i++)
    d |= (unsigned char) a[i] ^ (unsigned char) b[i % (lb ? lb : 1)];
  return d == 0;
}

/* The caller's owner fingerprint into fp; false: not a key of ours. */
static bool
authenticate (struct serve *srv, struct MHD_Connection *c, char *fp, size_t n)
{
  const char *key = serve_header (c, "X-API-KEY");

  if (key == NULL || *key == '\0' || strlen (key) > 512)
    return false;
  if (srv->nkeys == 0)
    return fingerprint (key, fp, n) == 0;
  for (size_t i = 0; i < srv->nkeys; i++)
    if (same_key (key, srv->keys[i].key))
      {
        snprintf (fp, n, "%s", srv->keys[i].fp);
        return true;
      }
  return false;
}

static void
iso_time (int64_t t, char *buf, size_t n)
{
  struct tm tm;
  time_t tt = (time_t) t;
  gmtime_r (&tt, &tm);
  strftime (buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The fields create, connect, list and get share. */
static void
gen_sandbox (yajl_gen g, const struct serve_sandbox *sb, bool with_token, bool detail)
{
  char when[32];

  yajl_gen_map_open (g);
  serve_jg_kstr (g, "sandboxID", sb->id);
  serve_jg_kstr (g, "templateID", sb->pool);
  serve_jg_kstr (g, "alias", sb->pool);
  serve_jg_kstr (g, "clientID", "brig");
  serve_jg_kstr (g, "envdVersion", SERVE_ENVD_VERSION);
  if (with_token)
    {
      serve_jg_kstr (g, "envdAccessToken", sb->token);
      serve_jg_knull (g, "trafficAccessToken");
    }
  serve_jg_knull (g, "domain");
  if (detail)
    {
      iso_time (sb->started, when, sizeof when);
      serve_jg_kstr (g, "startedAt", when);
      if (sb->end)
        iso_time (sb->end, when, sizeof when);
      /* no lease: the sandbox lives until it is killed */
      serve_jg_kstr (g, "endAt", sb->end ? when : "9999-12-31T23:59:59Z");
      serve_jg_kstr (g, "state", "running");
      serve_jg_kint (g, "cpuCount", 0);
      serve_jg_kint (g, "memoryMB", 0);
      serve_jg_kint (g, "diskSizeMB", 0);
      serve_jg_str (g, "metadata");
      yajl_gen_map_open (g);
      for (size_t i = 0; sb->meta && sb->meta[i]; i++)
        {
          const char *eq = strchr (sb->meta[i], '=');
          serve_jg_strn (g, sb->meta[i], (size_t) (eq - sb->meta[i]));
          serve_jg_str (g, eq + 1);
        }
      yajl_gen_map_close (g);
      serve_jg_str (g, "volumeMounts");
      yajl_gen_array_open (g);
      yajl_gen_array_close (g);
    }
  yajl_gen_map_close (g);
}

static enum MHD_Result
reply_sandbox (struct MHD_Connection *c, unsigned status, const struct serve_sandbox *sb,
               bool with_token, bool detail)
{
  yajl_gen g = serve_jg_new ();
  size_t len;
  char *body;

  gen_sandbox (g, sb, with_token, detail);
  body = serve_jg_done (g, &len);
  return serve_reply (c, status, body, len, "application/json");
}

/* Fields of create/connect whose brig side is not there yet: refused with
 * a reason instead of silently dropped. */
static const char *
unsupported_field (yajl_val req)
{
  static const char *const later[] = {
    "allow_internet_access", "network", "mcp", "iam",
    "autoPause", "autoPauseMemory", "autoResume", "volumeMounts", "memory",
  };
  for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
    {
      yajl_val v = serve_json_get (req, later[i], yajl_t_any);
      if (v && v->type != yajl_t_null && !(v->type == yajl_t_false))
        return later[i];
    }
  return NULL;
}

/* What create asks of the claim: envVars as --env, metadata as --label,
 * timeout as --deadline. */
struct create_opts {
  struct brig_claim_opts o;
  char **env, **labels;
  char secs[24];
  long long timeout;         /* 0: none */
};

static void
create_opts_clear (struct create_opts *co)
{
  brig_strv_free (co->env);
  brig_strv_free (co->labels);
}

/* The string map field of req as "KEY=VALUE" entries into *out; 0, or -1
 * with msg naming the field. */
static int
kv_field (yajl_val req, const char *field, char ***out, char *msg, size_t n)
{
  yajl_val v = serve_json_get (req, field, yajl_t_any);

  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_OBJECT (v))
    return snprintf (msg, n, "%s: expected an object of strings", field), -1;
  for (size_t i = 0; i < YAJL_GET_OBJECT (v)->len; i++)
    {
      const char *k = YAJL_GET_OBJECT (v)->keys[i];
      yajl_val val = YAJL_GET_OBJECT (v)->values[i];
      _cleanup_free_ char *kv = NULL;
      if (!YAJL_IS_STRING (val))
        return snprintf (msg, n, "%s.%.64s: expected a string", field, k), -1;
      if (*k == '\0' || strchr (k, '=') != NULL)
        return snprintf (msg, n, "%s: the key \"%.64s\" is empty or has a '='", field, k), -1;
      kv = xasprintf ("%s=%s", k, YAJL_GET_STRING (val));
      serve_strv_add (out, kv);
    }
  return 0;
}

/* A timeout field (seconds) into *secs; 0 (absent: *secs 0), or -1 with msg. */
static int
timeout_field (yajl_val req, long long *secs, char *msg, size_t n)
{
  yajl_val v = serve_json_get (req, "timeout", yajl_t_any);

  *secs = 0;
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < 1)
    return snprintf (msg, n, "timeout: expected whole seconds, at least 1"), -1;
  *secs = YAJL_GET_INTEGER (v);
  return 0;
}

/* Check one option as the claim will (brig_claim_prepare touches no
 * member); -1 with msg naming field. */
static int
claim_check (const struct brig_context *ctx, const char *pool, const struct brig_claim_opts *o,
             const char *field, char *msg, size_t n)
{
  struct brig_claim cl;
  brig_error err = { 0 };
  int r = brig_claim_prepare (ctx, pool, o, &cl, &err);

  brig_claim_clear (&cl);
  if (r < 0)
    snprintf (msg, n, "%s: %s", field, err.msg ? err.msg : "invalid");
  brig_error_clear (&err);
  return r < 0 ? -1 : 0;
}

static int
create_opts_from (const struct brig_context *ctx, const char *pool, yajl_val req,
                  struct create_opts *co, char *msg, size_t n)
{
  struct brig_claim_opts one = { 0 };

  if (kv_field (req, "envVars", &co->env, msg, n) < 0
      || kv_field (req, "metadata", &co->labels, msg, n) < 0
      || timeout_field (req, &co->timeout, msg, n) < 0)
    return -1;
  if (co->timeout)
    snprintf (co->secs, sizeof co->secs, "%lld", co->timeout);
  one.env = co->env;
  if (claim_check (ctx, pool, &one, "envVars", msg, n) < 0)
    return -1;
  one = (struct brig_claim_opts) { .labels = co->labels };
  if (claim_check (ctx, pool, &one, "metadata", msg, n) < 0)
    return -1;
  one = (struct brig_claim_opts) { .deadline = co->timeout ? co->secs : NULL };
  if (claim_check (ctx, pool, &one, "timeout", msg, n) < 0)
    return -1;
  co->o.env = co->env;
  co->o.labels = co->labels;
  co->o.deadline = co->timeout ? co->secs : NULL;
  return 0;
}

static enum MHD_Result
create (struct serve *srv, struct MHD_Connection *c, const char *owner, const char *body,
        size_t len)
{
  char msg[512];
  yajl_val req = serve_json_parse (body, len, msg, sizeof msg);
  const char *tmpl, *field;
  struct create_opts co = { 0 };
  struct serve_sandbox *sb;
  brig_error err = { 0 };
  enum MHD_Result ret;
  bool bad;
  int r;

  if (req == NULL)
    return serve_error (c, 400, "%s", msg);
  tmpl = serve_json_str (req, "templateID", &bad);
  if (bad || tmpl == NULL || brig_pool_check_name (tmpl, NULL) < 0)
    {
      yajl_tree_free (req);
      return serve_error (c, 400, "templateID: expected the name of a pool");
    }
  if ((field = unsupported_field (req)) != NULL)
    {
      ret = serve_error (c, 400, "%s is not supported by brig serve yet (docs/serve.md)", field);
      goto out;
    }
  if (create_opts_from (srv->ctx, tmpl, req, &co, msg, sizeof msg) < 0)
    {
      ret = serve_error (c, 400, "%s", msg);
      goto out;
    }
  if (__atomic_load_n (&srv->stopping, __ATOMIC_ACQUIRE))
    {
      ret = serve_error (c, 503, "brig serve stops");
      goto out;
    }
  sb = xmalloc0 (sizeof *sb);
  r = serve_claim (srv, tmpl, &co.o, sb, &err);
  if (r < 0)
    {
      unsigned status = r == -EAGAIN ? 503 : r == -ENOENT ? 404 : r == -EINVAL ? 400 : 500;
      ret = serve_error (c, status, "template %s: %s", tmpl, err.msg);
      brig_error_clear (&err);
      free (sb);
      goto out;
    }
  memcpy (sb->id, "sb", 2);
  if (serve_random_hex (sb->id + 2, 10) < 0 || serve_random_hex (sb->token, 16) < 0)
    abort ();
  snprintf (sb->owner, sizeof sb->owner, "%s", owner);
  sb->pool = xstrdup (tmpl);
  sb->started = time (NULL);
  sb->end = co.timeout ? sb->started + co.timeout : 0;
  sb->meta = brig_steal_ptr (co.labels);
  sb->refs = 1;
  serve_record_write (srv, sb);
  pthread_mutex_lock (&srv->mu);
  sb->next = srv->sandboxes;
  srv->sandboxes = sb;
  ret = reply_sandbox (c, 201, sb, true, false);
  pthread_mutex_unlock (&srv->mu);
  brig_log (BRIG_LOG_INFO, "serve: sandbox %s = %s claimed from pool %s", sb->id, sb->member,
            tmpl);
out:
  create_opts_clear (&co);
  yajl_tree_free (req);
  return ret;
}

static int
cmp_id (const void *a, const void *b)
{
  return strcmp ((*(struct serve_sandbox *const *) a)->id, (*(struct serve_sandbox *const *) b)->id);
}

/* %XX (and '+' as a space when plus) decoded in place. */
static void
pct_decode (char *s, bool plus)
{
  char *w = s;

  for (; *s; s++)
    if (*s == '%' && isxdigit ((unsigned char) s[1]) && isxdigit ((unsigned char) s[2]))
      {
        char hex[3] = { s[1], s[2], '\0' };
        *w++ = (char) strtol (hex, NULL, 16);
        s += 2;
      }
    else
      *w++ = plus && *s == '+' ? ' ' : *s;
  *w = '\0';
}

/* list's metadata filter, as the SDK encodes it (once by the query, once
 * as a form, once per key and value): the "KEY=VALUE" entries to match,
 * or NULL for none. */
static char **
meta_filter (const char *q)
{
  _cleanup_free_ char *text = NULL;
  char *pair, *save = NULL, **want = NULL;

  if (q == NULL || *q == '\0')
    return NULL;
  text = xstrdup (q);
  for (pair = strtok_r (text, "&", &save); pair; pair = strtok_r (NULL, "&", &save))
    {
      char *eq = strchr (pair, '='), *kv;
      const char *v = "";
      if (eq)
        *eq = '\0', v = eq + 1;
      _cleanup_free_ char *k = xstrdup (pair), *val = xstrdup (v);
      pct_decode (k, true), pct_decode (val, true);
      pct_decode (k, false), pct_decode (val, false);
      kv = xasprintf ("%s=%s", k, val);
      serve_strv_add (&want, kv);
      free (kv);
    }
  return want;
}

static bool
meta_match (const struct serve_sandbox *sb, char **want)
{
  for (size_t i = 0; want && want[i]; i++)
    {
      bool found = false;
      for (size_t j = 0; sb->meta && sb->meta[j] && !found; j++)
        found = strcmp (sb->meta[j], want[i]) == 0;
      if (!found)
        return false;
    }
  return true;
}

/* GET /v2/sandboxes: this key's, by id, limit per page; X-Next-Token is
 * the last id given; metadata filters by create's metadata. Nothing is
 * paused. */
static enum MHD_Result
list (struct serve *srv, struct MHD_Connection *c, const char *owner)
{
  const char *lim = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "limit");
  const char *next = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "nextToken");
  const char *meta = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "metadata");
  const char *state = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "state");
  struct serve_sandbox **all = NULL;
  size_t n = 0, given = 0, limit = LIST_MAX, len;
  char last[sizeof all[0]->id] = "", *end, *body;
  yajl_gen g;
  struct MHD_Response *resp;
  enum MHD_Result ret;
  bool more = false;
  _cleanup_strv_ char **want = NULL;

  if (lim)
    {
      unsigned long v = strtoul (lim, &end, 10);
      if (*lim < '0' || *lim > '9' || *end != '\0' || v < 1 || v > LIST_MAX)
        return serve_error (c, 400, "limit: expected 1..%d", LIST_MAX);
      limit = v;
    }
  want = meta_filter (meta);
  serve_sandboxes_sweep (srv);
  g = serve_jg_new ();
  yajl_gen_array_open (g);
  pthread_mutex_lock (&srv->mu);
  for (struct serve_sandbox *sb = srv->sandboxes; sb; sb = sb->next)
    if (strcmp (sb->owner, owner) == 0 && meta_match (sb, want))
      {
        all = xrealloc (all, (n + 1) * sizeof *all);
        all[n++] = sb;
      }
  if (n > 1)
    qsort (all, n, sizeof *all, cmp_id);
  /* a state filter without "running" matches nothing */
  if (state == NULL || *state == '\0' || strstr (state, "running"))
    for (size_t i = 0; i < n; i++)
      {
        if (next && *next && strcmp (all[i]->id, next) <= 0)
          continue;
        if (given == limit)
          {
            more = true;
            break;
          }
        gen_sandbox (g, all[i], false, true);
        snprintf (last, sizeof last, "%s", all[i]->id);
        given++;
      }
  pthread_mutex_unlock (&srv->mu);
  free (all);
  yajl_gen_array_close (g);
  body = serve_jg_done (g, &len);
  resp = MHD_create_response_from_buffer (len, body, MHD_RESPMEM_MUST_FREE);
  MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  if (more)
    MHD_add_response_header (resp, "X-Next-Token", last);
  ret = MHD_queue_response (c, 200, resp);
  MHD_destroy_response (resp);
  return ret;
}

static enum MHD_Result
renew_error (struct MHD_Connection *c, const char *id, brig_error *err)
{
  enum MHD_Result ret;

  if (err->code == ENOENT)
    ret = serve_error (c, 404, "sandbox \"%s\" doesn't exist or you don't have access to it", id);
  else
    ret = serve_error (c, err->code == EINVAL ? 400 : 500, "timeout: %s", err->msg);
  brig_error_clear (err);
  return ret;
}

/* POST /sandboxes/ID/timeout: the lease ends timeout seconds from now
 * (E2B: it may shorten it) = pool renew. */
static enum MHD_Result
set_timeout (struct serve *srv, struct MHD_Connection *c, struct serve_sandbox *sb,
             const char *body, size_t len)
{
  char msg[256];
  yajl_val req = serve_json_parse (body, len, msg, sizeof msg);
  brig_error err = { 0 };
  enum MHD_Result ret;
  long long t = 0;

  if (req == NULL)
    return serve_error (c, 400, "%s", msg);
  if (timeout_field (req, &t, msg, sizeof msg) < 0)
    ret = serve_error (c, 400, "%s", msg);
  else if (t == 0)
    ret = serve_error (c, 400, "timeout: required");
  else if (serve_renew (srv, sb, t, &err) < 0)
    ret = renew_error (c, sb->id, &err);
  else
    ret = serve_empty (c, 204);
  yajl_tree_free (req);
  return ret;
}

/* /sandboxes/ID[/SUB] and /v2/sandboxes/ID/connect. */
static enum MHD_Result
one_sandbox (struct serve *srv, struct MHD_Connection *c, const char *method, const char *owner,
             const char *rest, bool v2, const char *body, size_t len)
{
  char id[32];
  const char *slash = strchr (rest, '/'), *sub = slash ? slash + 1 : "";
  size_t n = slash ? (size_t) (slash - rest) : strlen (rest);
  struct serve_sandbox *sb;
  brig_error err = { 0 };
  enum MHD_Result ret;

  if (n == 0 || n >= sizeof id)
    return serve_error (c, 404, "no such sandbox");
  memcpy (id, rest, n);
  id[n] = '\0';
  sb = serve_sandbox_get (srv, id, owner);
  if (sb == NULL)
    return serve_error (c, 404, "sandbox \"%s\" doesn't exist or you don't have access to it", id);
  if (v2 && strcmp (sub, "connect") == 0 && strcmp (method, "POST") == 0)
    {
      char msg[256];
      yajl_val req = len ? serve_json_parse (body, len, msg, sizeof msg) : NULL;
      const char *field = req ? unsupported_field (req) : NULL;
      long long t = 0;
      if (len && req == NULL)
        ret = serve_error (c, 400, "%s", msg);
      else if (field)
        ret = serve_error (c, 400, "%s is not supported by brig serve yet (docs/serve.md)", field);
      else if (req && timeout_field (req, &t, msg, sizeof msg) < 0)
        ret = serve_error (c, 400, "%s", msg);
      /* connect only lengthens a lease (none: no end to lengthen) */
      else if (t && sb->end && time (NULL) + t > sb->end && serve_renew (srv, sb, t, &err) < 0)
        ret = renew_error (c, id, &err);
      else
        ret = reply_sandbox (c, 200, sb, true, false);
      yajl_tree_free (req);
    }
  else if (!v2 && strcmp (sub, "timeout") == 0 && strcmp (method, "POST") == 0)
    ret = set_timeout (srv, c, sb, body, len);
  else if (!v2 && *sub == '\0' && strcmp (method, "GET") == 0)
    ret = reply_sandbox (c, 200, sb, false, true);
  else if (!v2 && *sub == '\0' && strcmp (method, "DELETE") == 0)
    {
      if (serve_sandbox_kill (srv, sb, &err) < 0)
        ret = err.code == ENOENT ? serve_error (c, 404, "sandbox \"%s\" doesn't exist", id)
                                 : serve_error (c, 500, "%s", err.msg);
      else
        ret = serve_empty (c, 204);
      brig_error_clear (&err);
    }
  else
    ret = serve_error (c, 501, "%s /%ssandboxes/%s/%s is not implemented by brig serve yet "
                       "(docs/serve.md)", method, v2 ? "v2/" : "", id, sub);
  serve_sandbox_unref (sb);
  return ret;
}

enum MHD_Result
serve_control (struct serve *srv, struct MHD_Connection *c, const char *method, const char *url,
               const char *body, size_t len)
{
  char owner[128];

  if (!authenticate (srv, c, owner, sizeof owner))
    return serve_error (c, 401, serve_header (c, "X-API-KEY") ? "Invalid API key"
                                                             : "missing X-API-KEY header");
  if (strcmp (url, "/v2/sandboxes") == 0 || strcmp (url, "/sandboxes") == 0)
    {
      if (strcmp (method, "POST") == 0 && url[1] == 'v')
        return create (srv, c, owner, body, len);
      if (strcmp (method, "GET") == 0)
        return list (srv, c, owner);
      return serve_error (c, 405, "%s %s is not allowed", method, url);
    }
  if (strncmp (url, "/sandboxes/", 11) == 0)
    return one_sandbox (srv, c, method, owner, url + 11, false, body, len);
  if (strncmp (url, "/v2/sandboxes/", 14) == 0)
    return one_sandbox (srv, c, method, owner, url + 14, true, body, len);
  return serve_error (c, 501, "%s %s is not implemented by brig serve", method, url);
}
