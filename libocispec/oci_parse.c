/* Parsing: yajl's streaming parser feeds a stack of frames that fill the
 * typed structs directly, driven by the tables of oci_tables.c. No document
 * tree is built: the only allocations are the structs, strings and vectors
 * that the caller gets back. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "oci_internal.h"

/* The spec nests at most 7 typed levels (config.linux.seccomp.syscalls[].
 * args[]); anything deeper is an ignored property, counted in skip. */
#define MAX_FRAMES 16

enum jtype { J_NULL, J_BOOL, J_INT, J_NUM, J_STR, J_OBJ, J_ARR };

static const char *const jtype_name[] = {
  [J_NULL] = "null", [J_BOOL] = "boolean", [J_INT] = "integer", [J_NUM] = "number",
  [J_STR] = "string", [J_OBJ] = "object", [J_ARR] = "array",
};

enum frame_kind { FR_OBJ, FR_ARR, FR_STRV, FR_U32V, FR_MAP, FR_OBJMAP };

struct frame {
  uint8_t kind;
  const oci_type *t;        /* FR_OBJ: the struct; FR_ARR, FR_OBJMAP: the element */
  const oci_field *fields;  /* FR_OBJ: t's table */
  void *obj;                /* FR_OBJ: the struct; FR_MAP: the oci_map;
                               others: the field holding the vector */
  size_t *lenp;             /* vectors and maps: the length */
  char ***keysp;            /* FR_OBJMAP: the keys */
  size_t cap;               /* allocated elements (values for maps) */
  size_t kcap;              /* FR_MAP, FR_OBJMAP: allocated keys */
  size_t idx;               /* vectors: index of the element being read */
  const oci_field *cur;     /* FR_OBJ: field of the value to come; NULL: ignore it */
  uint64_t seen;            /* FR_OBJ: fields met so far, to free duplicates */
};

struct pctx {
  const oci_type *type;
  void *root;
  const char *name;
  oci_error *err;
  int errnum;
  bool failed;
  unsigned depth;           /* frames in use */
  unsigned skip;            /* nesting inside an ignored value */
  struct frame fr[MAX_FRAMES];
};

/* A tiny string builder for error messages. */
struct sbuf {
  char *s;
  size_t len, cap;
  bool oom;
};

static void
sb_add (struct sbuf *b, const char *s, size_t n)
{
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap)
    {
      size_t cap = b->cap ? b->cap : 64;
      while (cap < b->len + n + 1)
        cap *= 2;
      char *p = realloc (b->s, cap);
      if (p == NULL)
        {
          b->oom = true;
          return;
        }
      b->s = p;
      b->cap = cap;
    }
  memcpy (b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

static void
sb_str (struct sbuf *b, const char *s)
{
  sb_add (b, s, strlen (s));
}

/* Append the JSON path of frames [0, nframes): "linux.resources.devices[3]". */
static void
sb_path (struct sbuf *b, const struct pctx *c, unsigned nframes)
{
  for (unsigned i = 0; i < nframes; i++)
    {
      const struct frame *f = &c->fr[i];
      switch (f->kind)
        {
        case FR_OBJ:
          if (f->cur == NULL)
            return;
          if (b->len > 0)
            sb_add (b, ".", 1);
          sb_add (b, f->cur->json, f->cur->json_len);
          break;
        case FR_MAP:
        case FR_OBJMAP:
          {
            char **keys = f->kind == FR_MAP ? ((oci_map *) f->obj)->keys : *f->keysp;
            if (*f->lenp == 0)
              return;
            if (b->len > 0)
              sb_add (b, ".", 1);
            sb_str (b, keys[*f->lenp - 1]);
            break;
          }
        default:
          {
            char idx[32];
            sb_add (b, idx, (size_t) snprintf (idx, sizeof idx, "[%zu]", f->idx));
            break;
          }
        }
    }
}

/* Record the error "NAME: PATH: MSG" (PATH from the first nframes frames,
 * then leaf when not NULL) and stop the parse. */
static int __attribute__ ((format (printf, 5, 6)))
fail_at (struct pctx *c, int errnum, unsigned nframes, const char *leaf, const char *fmt, ...)
{
  struct sbuf path = { 0 }, msg = { 0 };
  char tmp[512];
  va_list ap;

  c->failed = true;
  c->errnum = errnum;
  if (c->err == NULL)
    return 0;

  sb_path (&path, c, nframes);
  if (leaf != NULL)
    {
      if (path.len > 0)
        sb_add (&path, ".", 1);
      sb_str (&path, leaf);
    }

  va_start (ap, fmt);
  vsnprintf (tmp, sizeof tmp, fmt, ap);
  va_end (ap);

  if (c->name != NULL)
    {
      sb_str (&msg, c->name);
      sb_add (&msg, ": ", 2);
    }
  if (path.len > 0)
    {
      sb_add (&msg, path.s, path.len);
      sb_add (&msg, ": ", 2);
    }
  sb_str (&msg, tmp);
  free (path.s);
  free (c->err->msg);
  c->err->msg = msg.oom ? NULL : msg.s;
  if (msg.oom)
    free (msg.s);
  return 0;
}

#define fail(c, ...) fail_at ((c), EINVAL, (c)->depth, NULL, __VA_ARGS__)

static int
fail_oom (struct pctx *c)
{
  return fail_at (c, ENOMEM, 0, NULL, "%s", strerror (ENOMEM));
}

static int
fail_type (struct pctx *c, const char *want, enum jtype got)
{
  return fail (c, "expected %s, got %s", want, jtype_name[got]);
}

static const char *
kind_want (int kind)
{
  switch (kind)
    {
    case OCI_K_STR:
      return "string";
    case OCI_K_BOOL:
      return "boolean";
    case OCI_K_INT32:
    case OCI_K_UINT32:
    case OCI_K_INT64:
    case OCI_K_UINT64:
      return "integer";
    case OCI_K_STRV:
    case OCI_K_UINT32V:
    case OCI_K_ARR:
      return "array";
    default:
      return "object";
    }
}

/* Grow the vector *vec of elements of size sz so that it holds at least
 * need elements; new elements are zeroed. */
static bool
grow (void **vec, size_t *cap, size_t need, size_t sz)
{
  if (need <= *cap)
    return true;
  size_t ncap = *cap ? *cap * 2 : 4;
  while (ncap < need)
    ncap *= 2;
  if (ncap > SIZE_MAX / sz)
    return false;
  char *p = realloc (*vec, ncap * sz);
  if (p == NULL)
    return false;
  memset (p + *cap * sz, 0, (ncap - *cap) * sz);
  *vec = p;
  *cap = ncap;
  return true;
}

static char *
copy_string (struct pctx *c, const char *s, size_t len)
{
  if (memchr (s, '\0', len) != NULL)
    {
      fail (c, "string contains a NUL character");
      return NULL;
    }
  char *p = malloc (len + 1);
  if (p == NULL)
    {
      fail_oom (c);
      return NULL;
    }
  memcpy (p, s, len);
  p[len] = '\0';
  return p;
}

/* Read an integer literal as sign + magnitude; false when it does not fit
 * 64 bits of magnitude. */
static bool
read_int (const char *s, size_t len, bool *neg, uint64_t *mag)
{
  size_t i = 0;
  uint64_t v = 0;

  *neg = len > 0 && s[0] == '-';
  if (*neg)
    i++;
  for (; i < len; i++)
    {
      unsigned d = (unsigned) (s[i] - '0');
      if (v > (UINT64_MAX - d) / 10)
        return false;
      v = v * 10 + d;
    }
  *mag = v;
  return true;
}

/* Store the integer literal s into *p as kind; false (error set) when it is
 * out of the kind's range. */
static bool
store_int (struct pctx *c, int kind, void *p, const char *s, size_t len)
{
  bool neg;
  uint64_t mag;
  bool fits = read_int (s, len, &neg, &mag);
  const char *range = NULL;

  switch (kind)
    {
    case OCI_K_UINT32:
      if (fits && (mag == 0 || !neg) && mag <= UINT32_MAX)
        {
          *(uint32_t *) p = (uint32_t) mag;
          return true;
        }
      range = "0..4294967295";
      break;
    case OCI_K_INT32:
      if (fits && mag <= (neg ? (uint64_t) INT32_MAX + 1 : (uint64_t) INT32_MAX))
        {
          *(int32_t *) p = neg ? (int32_t) (0 - mag) : (int32_t) mag;
          return true;
        }
      range = "-2147483648..2147483647";
      break;
    case OCI_K_UINT64:
      if (fits && (mag == 0 || !neg))
        {
          *(uint64_t *) p = mag;
          return true;
        }
      range = "0..18446744073709551615";
      break;
    case OCI_K_INT64:
      if (fits && mag <= (neg ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX))
        {
          *(int64_t *) p = neg ? (int64_t) (0 - mag) : (int64_t) mag;
          return true;
        }
      range = "-9223372036854775808..9223372036854775807";
      break;
    }
  if (len > 40)
    fail (c, "expected integer in range %s, got %.40s...", range, s);
  else
    fail (c, "expected integer in range %s, got %.*s", range, (int) len, s);
  return false;
}

static bool
push (struct pctx *c, uint8_t kind, const oci_type *t, void *obj, size_t *lenp)
{
  if (c->depth == MAX_FRAMES)
    {
      fail (c, "JSON nested too deeply");
      return false;
    }
  struct frame *f = &c->fr[c->depth++];
  memset (f, 0, sizeof *f);
  f->kind = kind;
  f->t = t;
  f->obj = obj;
  f->lenp = lenp;
  if (kind == FR_OBJ)
    f->fields = t->fields ();
  return true;
}

/* Start reading an array into the vector field at p (len at lenp) whose
 * elements have size sz; present-but-empty vectors are non-NULL. */
static int
begin_vector (struct pctx *c, uint8_t kind, const oci_type *sub, void *p, size_t *lenp, size_t sz)
{
  size_t cap = 0;
  void *vec = NULL;
  if (!grow (&vec, &cap, 4, sz))
    return fail_oom (c);
  *(void **) p = vec;
  *lenp = 0;
  if (!push (c, kind, sub, p, lenp))
    return 0;
  c->fr[c->depth - 1].cap = cap;
  return 1;
}

/* Start reading an object into the field at p of the given kind. */
static int
begin_object (struct pctx *c, int kind, const oci_type *sub, void *p, size_t *lenp, char ***keysp)
{
  switch (kind)
    {
    case OCI_K_OBJ:
      {
        void *o = calloc (1, sub->size);
        if (o == NULL)
          return fail_oom (c);
        *(void **) p = o;
        return push (c, FR_OBJ, sub, o, NULL);
      }
    case OCI_K_MAP:
      {
        oci_map *m = calloc (1, sizeof *m);
        if (m == NULL)
          return fail_oom (c);
        *(oci_map **) p = m;
        return push (c, FR_MAP, NULL, m, &m->len);
      }
    default: /* OCI_K_OBJMAP */
      {
        size_t cap = 0;
        void *vec = NULL;
        if (!grow (&vec, &cap, 2, sub->size))
          return fail_oom (c);
        *(void **) p = vec;
        *lenp = 0;
        if (!push (c, FR_OBJMAP, sub, p, lenp))
          return 0;
        c->fr[c->depth - 1].keysp = keysp;
        c->fr[c->depth - 1].cap = cap;
        return 1;
      }
    }
}

/* A value for the field f of the object frame fr. */
static int
field_value (struct pctx *c, struct frame *fr, enum jtype jt, const char *s, size_t len, bool b)
{
  const oci_field *f = fr->cur;
  void *p = oci_at (fr->obj, f->off);
  bool *has = (bool *) oci_at (fr->obj, f->aux);
  size_t *lenp = (size_t *) oci_at (fr->obj, f->aux);

  if (jt == J_NULL)
    return 1;

  switch (f->kind)
    {
    case OCI_K_STR:
      if (jt != J_STR)
        break;
      return (*(char **) p = copy_string (c, s, len)) != NULL;
    case OCI_K_BOOL:
      if (jt != J_BOOL)
        break;
      *(bool *) p = b;
      *has = true;
      return 1;
    case OCI_K_INT32:
    case OCI_K_UINT32:
    case OCI_K_INT64:
    case OCI_K_UINT64:
      if (jt != J_INT)
        break;
      if (!store_int (c, f->kind, p, s, len))
        return 0;
      *has = true;
      return 1;
    case OCI_K_STRV:
      if (jt != J_ARR)
        break;
      return begin_vector (c, FR_STRV, NULL, p, lenp, sizeof (char *));
    case OCI_K_UINT32V:
      if (jt != J_ARR)
        break;
      return begin_vector (c, FR_U32V, NULL, p, lenp, sizeof (uint32_t));
    case OCI_K_ARR:
      if (jt != J_ARR)
        break;
      return begin_vector (c, FR_ARR, f->sub, p, lenp, f->sub->size);
    default: /* OBJ, MAP, OBJMAP */
      if (jt != J_OBJ)
        break;
      return begin_object (c, f->kind, f->sub, p, lenp, (char ***) oci_at (fr->obj, f->keys));
    }
  return fail_type (c, kind_want (f->kind), jt);
}

/* Make room for element fr->idx = *lenp of a vector frame. */
static bool
vector_slot (struct pctx *c, struct frame *fr, size_t sz, size_t extra)
{
  if (!grow ((void **) fr->obj, &fr->cap, *fr->lenp + 1 + extra, sz))
    {
      fail_oom (c);
      return false;
    }
  return true;
}

/* Every value of the document goes through here. */
static int
on_value (struct pctx *c, enum jtype jt, const char *s, size_t len, bool b)
{
  if (c->skip > 0)
    {
      if (jt == J_OBJ || jt == J_ARR)
        {
          if (c->depth + c->skip >= OCI_MAX_NESTING)
            return fail_at (c, EINVAL, 0, NULL, "JSON nested deeper than %d levels", OCI_MAX_NESTING);
          c->skip++;
        }
      return 1;
    }

  if (c->depth == 0)
    {
      if (jt != J_OBJ)
        return fail_type (c, "object", jt);
      c->root = calloc (1, c->type->size);
      if (c->root == NULL)
        return fail_oom (c);
      return push (c, FR_OBJ, c->type, c->root, NULL);
    }

  struct frame *fr = &c->fr[c->depth - 1];
  switch (fr->kind)
    {
    case FR_OBJ:
      if (fr->cur == NULL)
        {
          if (jt == J_OBJ || jt == J_ARR)
            c->skip = 1;
          return 1;
        }
      return field_value (c, fr, jt, s, len, b);

    case FR_STRV:
      fr->idx = *fr->lenp;
      if (jt != J_STR)
        return fail_type (c, "string", jt);
      if (!vector_slot (c, fr, sizeof (char *), 1))
        return 0;
      {
        char **v = *(char ***) fr->obj;
        if ((v[fr->idx] = copy_string (c, s, len)) == NULL)
          return 0;
        v[++*fr->lenp] = NULL;
      }
      return 1;

    case FR_U32V:
      fr->idx = *fr->lenp;
      if (jt != J_INT)
        return fail_type (c, "integer", jt);
      if (!vector_slot (c, fr, sizeof (uint32_t), 0))
        return 0;
      if (!store_int (c, OCI_K_UINT32, *(uint32_t **) fr->obj + fr->idx, s, len))
        return 0;
      ++*fr->lenp;
      return 1;

    case FR_ARR:
      fr->idx = *fr->lenp;
      if (jt != J_OBJ)
        return fail_type (c, "object", jt);
      if (!vector_slot (c, fr, fr->t->size, 0))
        return 0;
      ++*fr->lenp;
      return push (c, FR_OBJ, fr->t, *(char **) fr->obj + fr->idx * fr->t->size, NULL);

    case FR_MAP:
      {
        oci_map *m = fr->obj;
        if (jt == J_NULL)
          {
            free (m->keys[--m->len]);
            return 1;
          }
        if (jt != J_STR)
          return fail_type (c, "string", jt);
        return (m->values[m->len - 1] = copy_string (c, s, len)) != NULL;
      }

    default: /* FR_OBJMAP */
      if (jt == J_NULL)
        {
          free ((*fr->keysp)[--*fr->lenp]);
          return 1;
        }
      if (jt != J_OBJ)
        return fail_type (c, "object", jt);
      return push (c, FR_OBJ, fr->t, *(char **) fr->obj + (*fr->lenp - 1) * fr->t->size, NULL);
    }
}

static int
cb_null (void *ctx)
{
  return on_value (ctx, J_NULL, NULL, 0, false);
}

static int
cb_boolean (void *ctx, int v)
{
  return on_value (ctx, J_BOOL, NULL, 0, v != 0);
}

static int
cb_number (void *ctx, const char *s, size_t len)
{
  bool integer = memchr (s, '.', len) == NULL && memchr (s, 'e', len) == NULL
                 && memchr (s, 'E', len) == NULL;
  return on_value (ctx, integer ? J_INT : J_NUM, s, len, false);
}

static int
cb_string (void *ctx, const unsigned char *s, size_t len)
{
  return on_value (ctx, J_STR, (const char *) s, len, false);
}

static int
cb_start_map (void *ctx)
{
  return on_value (ctx, J_OBJ, NULL, 0, false);
}

static int
cb_start_array (void *ctx)
{
  return on_value (ctx, J_ARR, NULL, 0, false);
}

static int
cb_map_key (void *ctx, const unsigned char *key, size_t len)
{
  struct pctx *c = ctx;
  struct frame *fr = &c->fr[c->depth - 1];

  if (c->skip > 0)
    return 1;

  if (fr->kind == FR_OBJ)
    {
      fr->cur = NULL;
      for (unsigned i = 0; i < fr->t->nfields; i++)
        {
          const oci_field *f = &fr->fields[i];
          if (f->json_len == len && memcmp (f->json, key, len) == 0)
            {
              /* A repeated key: the last value wins. */
              if (fr->seen & (UINT64_C (1) << i))
                oci_field_clear (f, fr->obj);
              fr->seen |= UINT64_C (1) << i;
              fr->cur = f;
              break;
            }
        }
      return 1;
    }

  if (memchr (key, '\0', len) != NULL)
    return fail_at (c, EINVAL, c->depth - 1, NULL, "key contains a NUL character");
  char *k = copy_string (c, (const char *) key, len);
  if (k == NULL)
    return 0;
  if (fr->kind == FR_MAP)
    {
      oci_map *m = fr->obj;
      if (!grow ((void **) &m->keys, &fr->kcap, m->len + 1, sizeof (char *))
          || !grow ((void **) &m->values, &fr->cap, m->len + 1, sizeof (char *)))
        {
          free (k);
          return fail_oom (c);
        }
      m->keys[m->len] = k;
      m->values[m->len++] = NULL;
      return 1;
    }

  /* FR_OBJMAP: the keys array grows in step with the elements. */
  if (!grow ((void **) fr->keysp, &fr->kcap, *fr->lenp + 1, sizeof (char *))
      || !grow ((void **) fr->obj, &fr->cap, *fr->lenp + 1, fr->t->size))
    {
      free (k);
      return fail_oom (c);
    }
  (*fr->keysp)[(*fr->lenp)++] = k;
  return 1;
}

static int
cb_end_map (void *ctx)
{
  struct pctx *c = ctx;
  struct frame *fr = &c->fr[c->depth - 1];

  if (c->skip > 0)
    {
      c->skip--;
      return 1;
    }

  if (fr->kind == FR_OBJ)
    {
      for (unsigned i = 0; i < fr->t->nfields; i++)
        {
          const oci_field *f = &fr->fields[i];
          if (f->required && !oci_field_present (f, fr->obj))
            return fail_at (c, EINVAL, c->depth - 1, f->json, "missing required property");
        }
    }
  else if (fr->kind == FR_MAP)
    {
      oci_map *m = fr->obj;
      if (!oci_dedup_keys (m->keys, m->values, &m->len, NULL))
        return fail_oom (c);
    }
  else if (!oci_dedup_keys (*fr->keysp, *(void **) fr->obj, fr->lenp, fr->t))
    return fail_oom (c);

  c->depth--;
  return 1;
}

static int
cb_end_array (void *ctx)
{
  struct pctx *c = ctx;

  if (c->skip > 0)
    c->skip--;
  else
    c->depth--;
  return 1;
}

static const yajl_callbacks callbacks = {
  .yajl_null = cb_null,
  .yajl_boolean = cb_boolean,
  .yajl_number = cb_number,
  .yajl_string = cb_string,
  .yajl_start_map = cb_start_map,
  .yajl_map_key = cb_map_key,
  .yajl_end_map = cb_end_map,
  .yajl_start_array = cb_start_array,
  .yajl_end_array = cb_end_array,
};

/* yajl says "parse error: invalid object key (must be a string)\n"; keep
 * the reason and say where it is. */
static void
fail_syntax (struct pctx *c, yajl_handle h, const char *buf, size_t len, bool at_end)
{
  unsigned char *ymsg = yajl_get_error (h, 0, (const unsigned char *) buf, len);
  const char *m = ymsg ? (const char *) ymsg : "syntax error";
  /* yajl counts the bytes it consumed, the offending one included. */
  size_t off = at_end ? len : yajl_get_bytes_consumed (h);
  if (!at_end && off > 0)
    off--;
  size_t line = 1, col = 1;

  if (strncmp (m, "parse error: ", 13) == 0)
    m += 13;
  else if (strncmp (m, "lexical error: ", 15) == 0)
    m += 15;
  size_t mlen = strlen (m);
  while (mlen > 0 && (m[mlen - 1] == '\n' || m[mlen - 1] == ' ' || m[mlen - 1] == '.'))
    mlen--;

  if (off > len)
    off = len;
  for (size_t i = 0; i < off; i++)
    if (buf[i] == '\n')
      {
        line++;
        col = 1;
      }
    else
      col++;
  fail_at (c, EINVAL, 0, NULL, "malformed JSON: %.*s at line %zu, column %zu", (int) mlen, m, line, col);
  if (ymsg)
    yajl_free_error (h, ymsg);
}

static bool
blank (const char *buf, size_t len)
{
  for (size_t i = 0; i < len; i++)
    if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r')
      return false;
  return true;
}

void *
oci_parse_data (const oci_type *t, const char *buf, size_t len, const char *name, oci_error *err)
{
  const char *pfx = name ? name : "", *sep = name ? ": " : "";

  if (err != NULL)
    err->msg = NULL;
  if (len > OCI_MAX_DOCUMENT)
    {
      oci_set_error (err, EFBIG, "%s%sfile too large (%zu bytes, limit %zu MiB)", pfx, sep, len,
                 OCI_MAX_DOCUMENT >> 20);
      return NULL;
    }
  if (buf == NULL || blank (buf, len))
    {
      oci_set_error (err, EINVAL, "%s%sempty document", pfx, sep);
      return NULL;
    }

  struct pctx c = { .type = t, .name = name, .err = err };
  yajl_handle h = yajl_alloc (&callbacks, NULL, &c);
  if (h == NULL)
    {
      oci_set_error (err, ENOMEM, "%s%s%s", pfx, sep, strerror (ENOMEM));
      return NULL;
    }

  yajl_status st = yajl_parse (h, (const unsigned char *) buf, len);
  bool at_end = st == yajl_status_ok;
  if (at_end)
    st = yajl_complete_parse (h);
  if (st != yajl_status_ok && !c.failed)
    fail_syntax (&c, h, buf, len, at_end);
  yajl_free (h);

  if (c.failed)
    {
      oci_free (t, c.root);
      errno = c.errnum;
      return NULL;
    }
  return c.root;
}

void
oci_set_error (oci_error *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  if (err != NULL)
    {
      free (err->msg);
      err->msg = NULL;
      va_start (ap, fmt);
      if (vasprintf (&err->msg, fmt, ap) < 0)
        err->msg = NULL;
      va_end (ap);
    }
  errno = errnum;
}
