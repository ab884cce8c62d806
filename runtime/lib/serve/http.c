/* Answers of brig serve: JSON bodies, the control plane's error shape
 * {"code": N, "message": ...} (the SDK tests body.code), Connect's
 * {"code": "not_found", ...} with connect-go's status for each code, and
 * Connect envelopes (flags, big-endian length, JSON). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/internal.h"
#include "utils.h"

const char *
serve_header (struct MHD_Connection *c, const char *name)
{
  return MHD_lookup_connection_value (c, MHD_HEADER_KIND, name);
}

enum MHD_Result
serve_reply (struct MHD_Connection *c, unsigned status, char *body, size_t len,
             const char *content_type)
{
  struct MHD_Response *r = MHD_create_response_from_buffer (len, body, MHD_RESPMEM_MUST_FREE);
  enum MHD_Result ret;

  if (r == NULL)
    {
      free (body);
      return MHD_NO;
    }
  if (content_type)
    MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  ret = MHD_queue_response (c, status, r);
  MHD_destroy_response (r);
  return ret;
}

static char *
error_body (const char *code_str, long code, const char *msg, size_t *len)
{
  yajl_gen g = serve_jg_new ();

  yajl_gen_map_open (g);
  if (code_str)
    serve_jg_kstr (g, "code", code_str);
  else
    serve_jg_kint (g, "code", code);
  serve_jg_kstr (g, "message", msg);
  yajl_gen_map_close (g);
  return serve_jg_done (g, len);
}

/* {"code": code_str or status, "message": fmt...}. */
static enum MHD_Result __attribute__ ((format (printf, 4, 0)))
verror (struct MHD_Connection *c, unsigned status, const char *code_str, const char *fmt,
        va_list ap)
{
  char msg[1024];
  size_t len;
  char *body;

  vsnprintf (msg, sizeof msg, fmt, ap);
  body = error_body (code_str, status, msg, &len);
  return serve_reply (c, status, body, len, "application/json");
}

enum MHD_Result
serve_error (struct MHD_Connection *c, unsigned status, const char *fmt, ...)
{
  enum MHD_Result ret;
  va_list ap;

  va_start (ap, fmt);
  ret = verror (c, status, NULL, fmt, ap);
  va_end (ap);
  return ret;
}

/* connect-go's HTTP status for a Connect error code. */
static unsigned
connect_status (const char *code)
{
  static const struct { const char *code; unsigned status; } map[] = {
    { "invalid_argument", 400 }, { "failed_precondition", 400 }, { "out_of_range", 400 },
    { "unauthenticated", 401 }, { "permission_denied", 403 }, { "not_found", 404 },
    { "already_exists", 409 }, { "aborted", 409 }, { "resource_exhausted", 429 },
    { "canceled", 499 }, { "unimplemented", 501 }, { "unavailable", 503 },
    { "deadline_exceeded", 504 },
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp (map[i].code, code) == 0)
      return map[i].status;
  return 500;
}

enum MHD_Result
serve_connect_error (struct MHD_Connection *c, const char *code, const char *fmt, ...)
{
  enum MHD_Result ret;
  va_list ap;

  va_start (ap, fmt);
  ret = verror (c, connect_status (code), code, fmt, ap);
  va_end (ap);
  return ret;
}

enum MHD_Result
serve_empty (struct MHD_Connection *c, unsigned status)
{
  if (status == 204)
    return serve_reply (c, 204, xstrdup (""), 0, NULL);
  return serve_reply (c, status, xstrdup ("{}"), 2, "application/json");
}

void
serve_envelope (char **buf, size_t *len, size_t *cap, unsigned flags, const char *json, size_t n)
{
  unsigned char *p;

  if (*len + 5 + n > *cap)
    {
      *cap = (*len + 5 + n) * 2;
      *buf = xrealloc (*buf, *cap);
    }
  p = (unsigned char *) *buf + *len;
  p[0] = (unsigned char) flags;
  p[1] = (unsigned char) (n >> 24);
  p[2] = (unsigned char) (n >> 16);
  p[3] = (unsigned char) (n >> 8);
  p[4] = (unsigned char) n;
  memcpy (p + 5, json, n);
  *len += 5 + n;
}

enum MHD_Result
serve_stream_error (struct MHD_Connection *c, const char *code, const char *fmt, ...)
{
  char msg[1024], *buf = NULL, *json;
  size_t len = 0, cap = 0, n;
  yajl_gen g = serve_jg_new ();
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  yajl_gen_map_open (g);
  serve_jg_str (g, "error");
  yajl_gen_map_open (g);
  serve_jg_kstr (g, "code", code);
  serve_jg_kstr (g, "message", msg);
  yajl_gen_map_close (g);
  yajl_gen_map_close (g);
  json = serve_jg_done (g, &n);
  serve_envelope (&buf, &len, &cap, 2, json, n);
  free (json);
  return serve_reply (c, 200, buf, len, "application/connect+json");
}
