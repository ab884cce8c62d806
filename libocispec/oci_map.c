/* The duplicate-key rule shared by both kinds of maps (freeing a map is one
 * of the free walks of oci_tables.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci_internal.h"

struct dedup_ent {
  const char *key;
  size_t idx;
};

static int
dedup_cmp (const void *a, const void *b)
{
  const struct dedup_ent *x = a, *y = b;
  int r = strcmp (x->key, y->key);
  if (r != 0)
    return r;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Release one value: a string when t is NULL, else a struct of type t. */
static void
drop (const oci_type *t, void *elem)
{
  if (t == NULL)
    free (*(char **) elem);
  else
    oci_free_fields (t, elem);
}

bool
oci_dedup_keys (char **keys, void *values, size_t *lenp, const oci_type *t)
{
  char *vals = values;
  size_t sz = t ? t->size : sizeof (char *);
  size_t len = *lenp;
  /* dest[i]: the slot entry i's value moves to (i itself when unique). */
  size_t small_dest[32];
  size_t *dest = small_dest;
  bool any = false;

  if (len < 2)
    return true;
  if (len > 32)
    {
      struct dedup_ent *e = malloc (len * sizeof *e);
      dest = malloc (len * sizeof *dest);
      if (e == NULL || dest == NULL)
        {
          free (e);
          free (dest);
          return false;
        }
      for (size_t i = 0; i < len; i++)
        {
          e[i] = (struct dedup_ent){ keys[i], i };
          dest[i] = i;
        }
      qsort (e, len, sizeof *e, dedup_cmp);
      for (size_t i = 1; i < len; i++)
        if (strcmp (e[i].key, e[i - 1].key) == 0)
          {
            dest[e[i].idx] = dest[e[i - 1].idx];
            any = true;
          }
      free (e);
    }
  else
    for (size_t i = 0; i < len; i++)
      {
        dest[i] = i;
        for (size_t j = 0; j < i; j++)
          if (dest[j] == j && strcmp (keys[i], keys[j]) == 0)
            {
              dest[i] = j;
              any = true;
              break;
            }
      }

  if (any)
    {
      /* Move each later value into its first slot, then compact. */
      for (size_t i = 0; i < len; i++)
        if (dest[i] != i)
          {
            drop (t, vals + dest[i] * sz);
            memcpy (vals + dest[i] * sz, vals + i * sz, sz);
            free (keys[i]);
            keys[i] = NULL;
          }
      size_t n = 0;
      for (size_t i = 0; i < len; i++)
        if (keys[i] != NULL)
          {
            keys[n] = keys[i];
            if (n != i)
              memcpy (vals + n * sz, vals + i * sz, sz);
            n++;
          }
      *lenp = n;
    }
  if (dest != small_dest)
    free (dest);
  return true;
}

const char *
oci_map_get (const oci_map *m, const char *key)
{
  if (m == NULL || key == NULL)
    return NULL;
  for (size_t i = 0; i < m->len; i++)
    if (strcmp (m->keys[i], key) == 0)
      return m->values[i];
  return NULL;
}

int
oci_map_set (oci_map **m, const char *key, const char *value)
{
  char *v = strdup (value);
  if (v == NULL)
    return -ENOMEM;

  if (*m != NULL)
    for (size_t i = 0; i < (*m)->len; i++)
      if (strcmp ((*m)->keys[i], key) == 0)
        {
          free ((*m)->values[i]);
          (*m)->values[i] = v;
          return 0;
        }

  bool fresh = *m == NULL;
  oci_map *map = fresh ? calloc (1, sizeof *map) : *m;
  char *k = strdup (key);
  char **keys = map ? realloc (map->keys, (map->len + 1) * sizeof (char *)) : NULL;
  if (keys != NULL)
    map->keys = keys;
  char **values = keys ? realloc (map->values, (map->len + 1) * sizeof (char *)) : NULL;
  if (values != NULL)
    map->values = values;
  if (k == NULL || values == NULL)
    {
      free (k);
      free (v);
      if (fresh)
        oci_map_free (map);
      return -ENOMEM;
    }
  map->keys[map->len] = k;
  map->values[map->len] = v;
  map->len++;
  *m = map;
  return 0;
}
