/* JSON in and out of brig serve (yajl), base64 and random tokens.
 * Request bodies are checked for nesting before yajl's tree parser sees
 * them: the tree is freed recursively, on a connection thread's small
 * stack. */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "serve/internal.h"
#include "utils.h"

#define SERVE_JSON_MAX_DEPTH 32

/* Deepest nesting of [ and { outside strings. */
static int
json_depth (const char *s, size_t n)
{
  int depth = 0, max = 0;
  bool in_str = false;

  for (size_t i = 0; i < n; i++)
    {
      char ch = s[i];
      if (in_str)
        {
          if (ch == '\\')
            i++;
          else if (ch == '"')
            in_str = false;
          continue;
        }
      if (ch == '"')
        in_str = true;
      else if (ch == '[' || ch == '{')
        {
          if (++depth > max)
            max = depth;
        }
      else if (ch == ']' || ch == '}')
        depth--;
    }
  return max;
}

yajl_val
serve_json_parse (const char *body, size_t len, char *msg, size_t msglen)
{
  _cleanup_free_ char *text = NULL;
  yajl_val v;

  if (len == 0)
    {
      snprintf (msg, msglen, "the request body is empty: expected a JSON object");
      return NULL;
    }
  if (memchr (body, '\0', len) != NULL)
    {
      snprintf (msg, msglen, "the request body holds a NUL byte");
      return NULL;
    }
  if (json_depth (body, len) > SERVE_JSON_MAX_DEPTH)
    {
      snprintf (msg, msglen, "the request body nests deeper than %d", SERVE_JSON_MAX_DEPTH);
      return NULL;
    }
  text = xmalloc0 (len + 1);
  memcpy (text, body, len);
  v = yajl_tree_parse (text, msg, msglen);
  if (v == NULL)
    {
      /* yajl's message spans lines; keep the first */
      char *nl = strchr (msg, '\n');
      if (nl)
        *nl = '\0';
      if (msg[0] == '\0')
        snprintf (msg, msglen, "the request body is not JSON");
      return NULL;
    }
  if (!YAJL_IS_OBJECT (v))
    {
      yajl_tree_free (v);
      snprintf (msg, msglen, "the request body is not a JSON object");
      return NULL;
    }
  return v;
}

yajl_val
serve_json_get (yajl_val obj, const char *key, yajl_type t)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      {
        yajl_val v = obj->u.object.values[i];
        if (t == yajl_t_any || v->type == t)
          return v;
        /* yajl_t_true stands for "a boolean" */
        if (t == yajl_t_true && v->type == yajl_t_false)
          return v;
        return NULL;
      }
  return NULL;
}

const char *
serve_json_str (yajl_val obj, const char *key, bool *bad)
{
  yajl_val v = serve_json_get (obj, key, yajl_t_any);

  *bad = false;
  if (v == NULL || v->type == yajl_t_null)
    return NULL;
  if (!YAJL_IS_STRING (v))
    {
      *bad = true;
      return NULL;
    }
  return v->u.string;
}

yajl_gen
serve_jg_new (void)
{
  yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    abort ();
  return g;
}

void
serve_jg_strn (yajl_gen g, const char *s, size_t n)
{
  yajl_gen_string (g, (const unsigned char *) s, n);
}

void
serve_jg_str (yajl_gen g, const char *s)
{
  serve_jg_strn (g, s, strlen (s));
}

void
serve_jg_kstr (yajl_gen g, const char *k, const char *v)
{
  serve_jg_str (g, k);
  serve_jg_str (g, v);
}

void
serve_jg_kint (yajl_gen g, const char *k, long long v)
{
  serve_jg_str (g, k);
  yajl_gen_integer (g, v);
}

void
serve_jg_knull (yajl_gen g, const char *k)
{
  serve_jg_str (g, k);
  yajl_gen_null (g);
}

char *
serve_jg_done (yajl_gen g, size_t *len)
{
  const unsigned char *buf;
  size_t n = 0;
  char *out;

  yajl_gen_get_buf (g, &buf, &n);
  out = xmalloc0 (n + 1);
  memcpy (out, buf, n);
  yajl_gen_free (g);
  if (len)
    *len = n;
  return out;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *
serve_b64_encode (const void *data, size_t n, size_t *outlen)
{
  const unsigned char *p = data;
  char *out = xmalloc0 ((n + 2) / 3 * 4 + 1), *o = out;

  for (size_t i = 0; i < n; i += 3)
    {
      unsigned v = (unsigned) p[i] << 16;
      if (i + 1 < n)
        v |= (unsigned) p[i + 1] << 8;
      if (i + 2 < n)
        v |= p[i + 2];
      *o++ = b64[(v >> 18) & 63];
      *o++ = b64[(v >> 12) & 63];
      *o++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
      *o++ = i + 2 < n ? b64[v & 63] : '=';
    }
  *o = '\0';
  if (outlen)
    *outlen = (size_t) (o - out);
  return out;
}

static int
b64_value (char ch)
{
  const char *p = ch ? strchr (b64, ch) : NULL;
  if (p)
    return (int) (p - b64);
  /* the URL-safe alphabet too: protobuf-JSON accepts both */
  if (ch == '-')
    return 62;
  if (ch == '_')
    return 63;
  return -1;
}

int
serve_b64_decode (const char *s, size_t n, unsigned char **out, size_t *outlen)
{
  unsigned char *o = xmalloc0 (n / 4 * 3 + 3);
  unsigned v = 0;
  size_t bits = 0, k = 0;

  while (n > 0 && s[n - 1] == '=')
    n--;
  for (size_t i = 0; i < n; i++)
    {
      int d = b64_value (s[i]);
      if (d < 0)
        {
          free (o);
          return -EINVAL;
        }
      v = (v << 6) | (unsigned) d;
      bits += 6;
      if (bits >= 8)
        {
          bits -= 8;
          o[k++] = (unsigned char) (v >> bits);
        }
    }
  *out = o;
  *outlen = k;
  return 0;
}

int
serve_random_hex (char *buf, size_t n)
{
  unsigned char raw[64];

  if (n > sizeof raw || getrandom (raw, n, 0) != (ssize_t) n)
    return -EIO;
  for (size_t i = 0; i < n; i++)
    snprintf (buf + 2 * i, 3, "%02x", raw[i]);
  return 0;
}

void
serve_strv_add (char ***v, const char *s)
{
  size_t n = 0;

  while (*v && (*v)[n])
    n++;
  *v = xrealloc (*v, (n + 2) * sizeof **v);
  (*v)[n] = xstrdup (s);
  (*v)[n + 1] = NULL;
}
