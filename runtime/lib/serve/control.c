/* brig serve's control plane (the e2b API as the SDK calls it; docs/serve.md
 * "What maps to what"): a template is a pool, create claims a member of it,
 * kill is the pool's verified release. Every call carries X-API-KEY; a key
 * sees only its own sandboxes (any other id is 404, as a missing one).
 * Errors are {"code": N, "message": ...}: the SDK tests body.code. */
#include <crypt.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
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
      /* no deadline yet (docs/serve.md "Not yet") */
      serve_jg_kstr (g, "endAt", "9999-12-31T23:59:59Z");
      serve_jg_kstr (g, "state", "running");
      serve_jg_kint (g, "cpuCount", 0);
      serve_jg_kint (g, "memoryMB", 0);
      serve_jg_kint (g, "diskSizeMB", 0);
      serve_jg_str (g, "metadata");
      yajl_gen_map_open (g);
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
    "metadata", "envVars", "timeout", "allow_internet_access", "network", "mcp", "iam",
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

static enum MHD_Result
create (struct serve *srv, struct MHD_Connection *c, const char *owner, const char *body,
        size_t len)
{
  char msg[256];
  yajl_val req = serve_json_parse (body, len, msg, sizeof msg);
  const char *tmpl, *field;
  struct serve_sandbox *sb;
  brig_error err = { 0 };
  enum MHD_Result ret;
  char *member = NULL;
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
      yajl_tree_free (req);
      return ret;
    }
  if (__atomic_load_n (&srv->stopping, __ATOMIC_ACQUIRE))
    {
      yajl_tree_free (req);
      return serve_error (c, 503, "brig serve stops");
    }
  r = serve_claim (srv, tmpl, &member, &err);
  if (r < 0)
    {
      unsigned status = r == -EAGAIN ? 503 : r == -ENOENT ? 404 : 500;
      ret = serve_error (c, status, "template %s: %s", tmpl, err.msg);
      brig_error_clear (&err);
      yajl_tree_free (req);
      return ret;
    }
  sb = xmalloc0 (sizeof *sb);
  memcpy (sb->id, "sb", 2);
  if (serve_random_hex (sb->id + 2, 10) < 0 || serve_random_hex (sb->token, 16) < 0)
    abort ();
  snprintf (sb->owner, sizeof sb->owner, "%s", owner);
  sb->member = member;
  sb->pool = xstrdup (tmpl);
  sb->started = time (NULL);
  sb->refs = 1;
  serve_record_write (srv, sb);
  pthread_mutex_lock (&srv->mu);
  sb->next = srv->sandboxes;
  srv->sandboxes = sb;
  ret = reply_sandbox (c, 201, sb, true, false);
  pthread_mutex_unlock (&srv->mu);
  brig_log (BRIG_LOG_INFO, "serve: sandbox %s = %s claimed from pool %s", sb->id, member, tmpl);
  yajl_tree_free (req);
  return ret;
}

static int
cmp_id (const void *a, const void *b)
{
  return strcmp ((*(struct serve_sandbox *const *) a)->id, (*(struct serve_sandbox *const *) b)->id);
}

/* GET /v2/sandboxes: this key's, by id, limit per page; X-Next-Token is
 * the last id given. Nothing has metadata or is paused yet. */
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

  if (lim)
    {
      unsigned long v = strtoul (lim, &end, 10);
      if (*lim < '0' || *lim > '9' || *end != '\0' || v < 1 || v > LIST_MAX)
        return serve_error (c, 400, "limit: expected 1..%d", LIST_MAX);
      limit = v;
    }
  g = serve_jg_new ();
  yajl_gen_array_open (g);
  pthread_mutex_lock (&srv->mu);
  for (struct serve_sandbox *sb = srv->sandboxes; sb; sb = sb->next)
    if (strcmp (sb->owner, owner) == 0)
      {
        all = xrealloc (all, (n + 1) * sizeof *all);
        all[n++] = sb;
      }
  if (n > 1)
    qsort (all, n, sizeof *all, cmp_id);
  /* a metadata filter matches nothing (no sandbox has metadata yet); a
   * state filter without "running" neither */
  if ((meta == NULL || *meta == '\0') && (state == NULL || *state == '\0' || strstr (state, "running")))
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
      if (len && req == NULL)
        ret = serve_error (c, 400, "%s", msg);
      else if (field)
        ret = serve_error (c, 400, "%s is not supported by brig serve yet (docs/serve.md)", field);
      else
        ret = reply_sandbox (c, 200, sb, true, false);
      yajl_tree_free (req);
    }
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
