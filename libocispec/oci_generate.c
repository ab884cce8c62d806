/* Generation: walk the tables of oci_tables.c and emit JSON with yajl_gen,
 * printing straight into the buffer handed back to the caller. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "oci_internal.h"

struct out {
  char *s;
  size_t len, cap;
  bool oom;
  /* Indentation: yajl's own beautifier splits empty containers over lines
   * ("[\n\n  ]"), so yajl writes compact JSON and out_pretty indents it. */
  bool pretty, in_str, esc, open;
  unsigned depth;
};

static bool
out_reserve (struct out *o, size_t n)
{
  if (o->oom)
    return false;
  if (o->len + n + 1 > o->cap)
    {
      size_t cap = o->cap ? o->cap : 4096;
      while (cap < o->len + n + 1)
        cap *= 2;
      char *p = realloc (o->s, cap);
      if (p == NULL)
        {
          o->oom = true;
          return false;
        }
      o->s = p;
      o->cap = cap;
    }
  return true;
}

static void
out_newline (struct out *o)
{
  if (!out_reserve (o, 1 + 2 * (size_t) o->depth))
    return;
  o->s[o->len++] = '\n';
  memset (o->s + o->len, ' ', 2 * (size_t) o->depth);
  o->len += 2 * (size_t) o->depth;
}

static void
out_char (struct out *o, char ch)
{
  if (out_reserve (o, 1))
    o->s[o->len++] = ch;
}

/* Indent compact JSON as it streams by: a newline after an opening bracket
 * (unless the container is empty) and after each comma, a space after each
 * colon; strings pass through untouched. */
static void
out_pretty (struct out *o, const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      char ch = s[i];
      if (o->in_str)
        {
          out_char (o, ch);
          if (o->esc)
            o->esc = false;
          else if (ch == '\\')
            o->esc = true;
          else if (ch == '"')
            o->in_str = false;
          continue;
        }
      if (o->open)
        {
          o->open = false;
          if (ch == '}' || ch == ']')
            {
              out_char (o, ch);
              continue;
            }
          o->depth++;
          out_newline (o);
        }
      switch (ch)
        {
        case '{':
        case '[':
          out_char (o, ch);
          o->open = true;
          break;
        case '}':
        case ']':
          o->depth--;
          out_newline (o);
          out_char (o, ch);
          break;
        case ',':
          out_char (o, ch);
          out_newline (o);
          break;
        case ':':
          out_char (o, ch);
          out_char (o, ' ');
          break;
        case '"':
          o->in_str = true;
          out_char (o, ch);
          break;
        default:
          out_char (o, ch);
        }
    }
}

static void
out_print (void *ctx, const char *s, size_t n)
{
  struct out *o = ctx;

  if (o->pretty)
    out_pretty (o, s, n);
  else if (out_reserve (o, n))
    {
      memcpy (o->s + o->len, s, n);
      o->len += n;
    }
}

/* Integers go out as literals so uint64 keeps its whole range (yajl_gen's
 * integer call takes a long long). */
static yajl_gen_status
gen_uint (yajl_gen g, uint64_t v, bool neg)
{
  char buf[24], *p = buf + sizeof buf;

  do
    {
      *--p = (char) ('0' + v % 10);
      v /= 10;
    }
  while (v != 0);
  if (neg)
    *--p = '-';
  return yajl_gen_number (g, p, (size_t) (buf + sizeof buf - p));
}

static yajl_gen_status
gen_int (yajl_gen g, int64_t v)
{
  return v < 0 ? gen_uint (g, 0 - (uint64_t) v, true) : gen_uint (g, (uint64_t) v, false);
}

static yajl_gen_status
gen_str (yajl_gen g, const char *s)
{
  if (s == NULL) /* a caller's hole in a vector: keep the document valid */
    s = "";
  return yajl_gen_string (g, (const unsigned char *) s, strlen (s));
}

static yajl_gen_status gen_object (yajl_gen g, const oci_type *t, const void *obj);

#define TRY(x)                                                               \
  do                                                                         \
    {                                                                        \
      yajl_gen_status st_ = (x);                                             \
      if (st_ != yajl_gen_status_ok)                                         \
        return st_;                                                          \
    }                                                                        \
  while (0)

static yajl_gen_status
gen_field (yajl_gen g, const oci_field *f, const void *obj)
{
  const void *p = oci_at (obj, f->off);
  bool vector = f->kind == OCI_K_STRV || f->kind == OCI_K_UINT32V || f->kind == OCI_K_ARR
                || f->kind == OCI_K_OBJMAP;
  size_t len = vector ? *(const size_t *) oci_at (obj, f->aux) : 0;

  switch (f->kind)
    {
    case OCI_K_STR:
      return gen_str (g, *(char *const *) p);
    case OCI_K_BOOL:
      return yajl_gen_bool (g, *(const bool *) p);
    case OCI_K_INT32:
      return gen_int (g, *(const int32_t *) p);
    case OCI_K_UINT32:
      return gen_uint (g, *(const uint32_t *) p, false);
    case OCI_K_INT64:
      return gen_int (g, *(const int64_t *) p);
    case OCI_K_UINT64:
      return gen_uint (g, *(const uint64_t *) p, false);
    case OCI_K_STRV:
      TRY (yajl_gen_array_open (g));
      for (size_t i = 0; i < len; i++)
        TRY (gen_str (g, (*(char **const *) p)[i]));
      return yajl_gen_array_close (g);
    case OCI_K_UINT32V:
      TRY (yajl_gen_array_open (g));
      for (size_t i = 0; i < len; i++)
        TRY (gen_uint (g, (*(uint32_t *const *) p)[i], false));
      return yajl_gen_array_close (g);
    case OCI_K_MAP:
      {
        const oci_map *m = *(oci_map *const *) p;
        TRY (yajl_gen_map_open (g));
        for (size_t i = 0; i < m->len; i++)
          {
            TRY (gen_str (g, m->keys[i]));
            TRY (gen_str (g, m->values[i] ? m->values[i] : ""));
          }
        return yajl_gen_map_close (g);
      }
    case OCI_K_OBJ:
      return gen_object (g, f->sub, *(void *const *) p);
    case OCI_K_ARR:
      {
        const char *a = *(char *const *) p;
        TRY (yajl_gen_array_open (g));
        for (size_t i = 0; i < len; i++)
          TRY (gen_object (g, f->sub, a + i * f->sub->size));
        return yajl_gen_array_close (g);
      }
    case OCI_K_OBJMAP:
      {
        const char *a = *(char *const *) p;
        char **keys = *(char **const *) oci_at (obj, f->keys);
        TRY (yajl_gen_map_open (g));
        for (size_t i = 0; i < len; i++)
          {
            TRY (gen_str (g, keys[i]));
            TRY (gen_object (g, f->sub, a + i * f->sub->size));
          }
        return yajl_gen_map_close (g);
      }
    }
  return yajl_gen_invalid_string;
}

static yajl_gen_status
gen_object (yajl_gen g, const oci_type *t, const void *obj)
{
  const oci_field *fields = t->fields ();

  TRY (yajl_gen_map_open (g));
  for (unsigned i = 0; i < t->nfields; i++)
    {
      const oci_field *f = &fields[i];
      if (!oci_field_present (f, obj))
        continue;
      TRY (yajl_gen_string (g, (const unsigned char *) f->json, f->json_len));
      TRY (gen_field (g, f, obj));
    }
  return yajl_gen_map_close (g);
}

char *
oci_generate (const oci_type *t, const void *obj, bool pretty, size_t *len)
{
  struct out o = { 0 };
  yajl_gen g;

  if (obj == NULL)
    {
      errno = EINVAL;
      return NULL;
    }
  g = yajl_gen_alloc (NULL);
  if (g == NULL)
    {
      errno = ENOMEM;
      return NULL;
    }
  o.pretty = pretty;
  yajl_gen_config (g, yajl_gen_print_callback, out_print, &o);
  yajl_gen_config (g, yajl_gen_validate_utf8, 1);

  yajl_gen_status st = gen_object (g, t, obj);
  yajl_gen_free (g);
  if (pretty)
    out_char (&o, '\n');
  if (out_reserve (&o, 0))
    o.s[o.len] = '\0';
  if (st != yajl_gen_status_ok || o.oom)
    {
      free (o.s);
      errno = o.oom ? ENOMEM : st == yajl_gen_invalid_string ? EILSEQ : EINVAL;
      return NULL;
    }
  if (len != NULL)
    *len = o.len;
  return o.s;
}

void *
oci_copy (const oci_type *t, const void *obj)
{
  size_t len;
  char *json = oci_generate (t, obj, false, &len);
  void *copy;
  int e;

  if (json == NULL)
    return NULL;
  copy = oci_parse_data (t, json, len, NULL, NULL);
  e = errno;
  free (json);
  errno = e;
  return copy;
}
