/* The tables that drive parse/generate/free/compare, built from
 * oci_spec.def, and the generic free and compare walks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci_internal.h"

/* Companion offsets and subtypes per kind. */
#define OCI_AUX_STR(S, n) 0
#define OCI_AUX_BOOL(S, n) offsetof (S, has_##n)
#define OCI_AUX_INT32(S, n) offsetof (S, has_##n)
#define OCI_AUX_UINT32(S, n) offsetof (S, has_##n)
#define OCI_AUX_INT64(S, n) offsetof (S, has_##n)
#define OCI_AUX_UINT64(S, n) offsetof (S, has_##n)
#define OCI_AUX_STRV(S, n) offsetof (S, n##_len)
#define OCI_AUX_MAP(S, n) 0
#define OCI_AUX_UINT32V(S, n) offsetof (S, n##_len)
#define OCI_AUX_OBJ(S, n) 0
#define OCI_AUX_ARR(S, n) offsetof (S, n##_len)
#define OCI_AUX_OBJMAP(S, n) offsetof (S, n##_len)

#define OCI_KEYS_OBJMAP(S, n) offsetof (S, n##_keys)
#define OCI_KEYS_STR(S, n) 0
#define OCI_KEYS_BOOL(S, n) 0
#define OCI_KEYS_INT32(S, n) 0
#define OCI_KEYS_UINT32(S, n) 0
#define OCI_KEYS_INT64(S, n) 0
#define OCI_KEYS_UINT64(S, n) 0
#define OCI_KEYS_STRV(S, n) 0
#define OCI_KEYS_MAP(S, n) 0
#define OCI_KEYS_UINT32V(S, n) 0
#define OCI_KEYS_OBJ(S, n) 0
#define OCI_KEYS_ARR(S, n) 0

#define OCI_SUB_STR(T) NULL
#define OCI_SUB_BOOL(T) NULL
#define OCI_SUB_INT32(T) NULL
#define OCI_SUB_UINT32(T) NULL
#define OCI_SUB_INT64(T) NULL
#define OCI_SUB_UINT64(T) NULL
#define OCI_SUB_STRV(T) NULL
#define OCI_SUB_MAP(T) NULL
#define OCI_SUB_UINT32V(T) NULL
#define OCI_SUB_OBJ(T) &T##_type
#define OCI_SUB_ARR(T) &T##_type
#define OCI_SUB_OBJMAP(T) &T##_type

/* One table entry; oci_self is a block-scope typedef of the struct. */
#define OCI_ENTRY(KIND, n, json, flags, T)                                   \
  { json, OCI_SUB_##KIND (T), offsetof (oci_self, n),                        \
    OCI_AUX_##KIND (oci_self, n), OCI_KEYS_##KIND (oci_self, n), OCI_K_##KIND, \
    ((flags) &OCI_REQ) != 0, sizeof (json) - 1 },

#define OCI_COUNT(KIND, n, json, flags, T) +1

#define OCI_TABLE(T)                                                         \
  enum { T##_nfields = 0 T##_FIELDS (OCI_COUNT) };                           \
  _Static_assert (T##_nfields <= 64, #T " has too many fields");            \
  _Static_assert (sizeof (T) < 65536, #T " is too large");                 \
  static const oci_field *T##_fields (void)                                  \
  {                                                                          \
    typedef T oci_self;                                                      \
    static const oci_field table[] = { T##_FIELDS (OCI_ENTRY) };             \
    return table;                                                            \
  }                                                                          \
  const oci_type T##_type = { #T, sizeof (T), T##_fields, T##_nfields };

OCI_ALL_STRUCTS (OCI_TABLE)

#define OCI_TYPE_PTR(T) &T##_type,
const oci_type *const oci_all_types[] = { OCI_ALL_STRUCTS (OCI_TYPE_PTR) };
const size_t oci_all_types_len = sizeof oci_all_types / sizeof oci_all_types[0];

bool
oci_field_present (const oci_field *f, const void *obj)
{
  switch (f->kind)
    {
    case OCI_K_BOOL:
    case OCI_K_INT32:
    case OCI_K_UINT32:
    case OCI_K_INT64:
    case OCI_K_UINT64:
      return *(const bool *) oci_at (obj, f->aux);
    default:
      return *(void *const *) oci_at (obj, f->off) != NULL;
    }
}

void
oci_field_clear (const oci_field *f, void *obj)
{
  void *p = oci_at (obj, f->off);
  size_t *lenp = (size_t *) oci_at (obj, f->aux); /* vectors only */

  switch (f->kind)
    {
    case OCI_K_STR:
      free (*(char **) p);
      *(char **) p = NULL;
      break;
    case OCI_K_BOOL:
      *(bool *) p = false;
      *(bool *) oci_at (obj, f->aux) = false;
      break;
    case OCI_K_INT32:
    case OCI_K_UINT32:
      *(uint32_t *) p = 0;
      *(bool *) oci_at (obj, f->aux) = false;
      break;
    case OCI_K_INT64:
    case OCI_K_UINT64:
      *(uint64_t *) p = 0;
      *(bool *) oci_at (obj, f->aux) = false;
      break;
    case OCI_K_STRV:
      {
        char **v = *(char ***) p;
        if (v != NULL)
          for (size_t i = 0; i < *lenp; i++)
            free (v[i]);
        free (v);
        *(char ***) p = NULL;
        *lenp = 0;
        break;
      }
    case OCI_K_MAP:
      oci_map_free (*(oci_map **) p);
      *(oci_map **) p = NULL;
      break;
    case OCI_K_UINT32V:
      free (*(uint32_t **) p);
      *(uint32_t **) p = NULL;
      *lenp = 0;
      break;
    case OCI_K_OBJ:
      oci_free (f->sub, *(void **) p);
      *(void **) p = NULL;
      break;
    case OCI_K_ARR:
    case OCI_K_OBJMAP:
      {
        char *a = *(char **) p;
        if (a != NULL)
          for (size_t i = 0; i < *lenp; i++)
            oci_free_fields (f->sub, a + i * f->sub->size);
        free (a);
        *(void **) p = NULL;
        if (f->kind == OCI_K_OBJMAP)
          {
            char **keys = *(char ***) oci_at (obj, f->keys);
            if (keys != NULL)
              for (size_t i = 0; i < *lenp; i++)
                free (keys[i]);
            free (keys);
            *(char ***) oci_at (obj, f->keys) = NULL;
          }
        *lenp = 0;
        break;
      }
    }
}

void
oci_free_fields (const oci_type *t, void *obj)
{
  const oci_field *fields = t->fields ();

  for (unsigned i = 0; i < t->nfields; i++)
    oci_field_clear (&fields[i], obj);
}

void
oci_free (const oci_type *t, void *obj)
{
  if (obj == NULL)
    return;
  oci_free_fields (t, obj);
  free (obj);
}

static bool
str_equal (const char *a, const char *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return strcmp (a, b) == 0;
}

static bool
map_equal (const oci_map *a, const oci_map *b)
{
  if (a == NULL || b == NULL)
    return a == b;
  if (a->len != b->len)
    return false;
  for (size_t i = 0; i < a->len; i++)
    if (!str_equal (a->keys[i], b->keys[i]) || !str_equal (a->values[i], b->values[i]))
      return false;
  return true;
}

static bool
field_equal (const oci_field *f, const void *a, const void *b)
{
  const void *pa = oci_at (a, f->off), *pb = oci_at (b, f->off);

  if (oci_field_present (f, a) != oci_field_present (f, b))
    return false;
  if (!oci_field_present (f, a))
    return true;

  size_t len = 0;
  if (f->kind == OCI_K_STRV || f->kind == OCI_K_UINT32V || f->kind == OCI_K_ARR
      || f->kind == OCI_K_OBJMAP)
    {
      len = *(const size_t *) oci_at (a, f->aux);
      if (len != *(const size_t *) oci_at (b, f->aux))
        return false;
    }

  switch (f->kind)
    {
    case OCI_K_STR:
      return str_equal (*(char *const *) pa, *(char *const *) pb);
    case OCI_K_BOOL:
      return *(const bool *) pa == *(const bool *) pb;
    case OCI_K_INT32:
    case OCI_K_UINT32:
      return *(const uint32_t *) pa == *(const uint32_t *) pb;
    case OCI_K_INT64:
    case OCI_K_UINT64:
      return *(const uint64_t *) pa == *(const uint64_t *) pb;
    case OCI_K_STRV:
      for (size_t i = 0; i < len; i++)
        if (!str_equal ((*(char **const *) pa)[i], (*(char **const *) pb)[i]))
          return false;
      return true;
    case OCI_K_MAP:
      return map_equal (*(oci_map *const *) pa, *(oci_map *const *) pb);
    case OCI_K_UINT32V:
      return len == 0 || memcmp (*(uint32_t *const *) pa, *(uint32_t *const *) pb, len * sizeof (uint32_t)) == 0;
    case OCI_K_OBJ:
      return oci_equal (f->sub, *(void *const *) pa, *(void *const *) pb);
    case OCI_K_ARR:
    case OCI_K_OBJMAP:
      {
        const char *ea = *(char *const *) pa, *eb = *(char *const *) pb;
        if (f->kind == OCI_K_OBJMAP)
          {
            char **ka = *(char **const *) oci_at (a, f->keys);
            char **kb = *(char **const *) oci_at (b, f->keys);
            for (size_t i = 0; i < len; i++)
              if (!str_equal (ka[i], kb[i]))
                return false;
          }
        for (size_t i = 0; i < len; i++)
          if (!oci_equal (f->sub, ea + i * f->sub->size, eb + i * f->sub->size))
            return false;
        return true;
      }
    }
  return false;
}

bool
oci_equal (const oci_type *t, const void *a, const void *b)
{
  if (a == NULL || b == NULL)
    return a == b;

  const oci_field *fields = t->fields ();
  for (unsigned i = 0; i < t->nfields; i++)
    if (!field_equal (&fields[i], a, b))
      return false;
  return true;
}

void
oci_map_free (oci_map *m)
{
  if (m == NULL)
    return;
  for (size_t i = 0; i < m->len; i++)
    {
      free (m->keys[i]);
      free (m->values[i]);
    }
  free (m->keys);
  free (m->values);
  free (m);
}
