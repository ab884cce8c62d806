/* `update` records what it applied in the container's saved config.json, so
 * that the next `update`, `exec` or a later reader sees the limits in force
 * rather than those of create (runc keeps them in its state the same way). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "container/resources_record.h"
#include "utils.h"

#define SWAP(a, b)                                                                            \
  do                                                                                          \
    {                                                                                         \
      __typeof__ (a) tmp_ = (a);                                                              \
      (a) = (b);                                                                              \
      (b) = tmp_;                                                                             \
    }                                                                                         \
  while (0)

/* One field of a leaf object (memory, cpu, pids, blockIO, network): a value
 * given in s wins. Pointers are swapped, not copied: s is a private copy
 * and, freed afterwards, takes the replaced values with it. */
#define MERGE_SCALAR(n)                                                                       \
  if (s->has_##n)                                                                             \
    {                                                                                         \
      d->n = s->n;                                                                            \
      d->has_##n = true;                                                                      \
    }
#define MERGE_BOOL(n, T) MERGE_SCALAR (n)
#define MERGE_INT32(n, T) MERGE_SCALAR (n)
#define MERGE_UINT32(n, T) MERGE_SCALAR (n)
#define MERGE_INT64(n, T) MERGE_SCALAR (n)
#define MERGE_UINT64(n, T) MERGE_SCALAR (n)
#define MERGE_STR(n, T)                                                                       \
  if (s->n)                                                                                   \
    SWAP (d->n, s->n);
#define MERGE_MAP(n, T)                                                                       \
  if (s->n)                                                                                   \
    SWAP (d->n, s->n);
#define MERGE_OBJ(n, T)                                                                       \
  if (s->n)                                                                                   \
    SWAP (d->n, s->n);
#define MERGE_VEC(n, T)                                                                       \
  if (s->n)                                                                                   \
    {                                                                                         \
      SWAP (d->n, s->n);                                                                      \
      SWAP (d->n##_len, s->n##_len);                                                          \
    }
#define MERGE_STRV(n, T) MERGE_VEC (n, T)
#define MERGE_UINT32V(n, T) MERGE_VEC (n, T)
#define MERGE_ARR(n, T) MERGE_VEC (n, T)
#define MERGE_OBJMAP(n, T)                                                                    \
  if (s->n)                                                                                   \
    {                                                                                         \
      SWAP (d->n, s->n);                                                                      \
      SWAP (d->n##_keys, s->n##_keys);                                                        \
      SWAP (d->n##_len, s->n##_len);                                                          \
    }
#define MERGE_FIELD(KIND, n, json, flags, T) MERGE_##KIND (n, T)

#define DEFINE_MERGE(T)                                                                       \
  static void merge_##T (T *d, T *s) { T##_FIELDS (MERGE_FIELD) }

DEFINE_MERGE (oci_memory)
DEFINE_MERGE (oci_cpu)
DEFINE_MERGE (oci_pids)
DEFINE_MERGE (oci_block_io)
DEFINE_MERGE (oci_network)

/* An object of s merged into d's, or moved there when d has none. */
#define MERGE_CHILD(T, n)                                                                     \
  if (s->n && d->n)                                                                           \
    merge_##T (d->n, s->n);                                                                   \
  else if (s->n)                                                                              \
    SWAP (d->n, s->n);

/* Hugepage limits are keyed by page size: a new size is added, a known one
 * gets the new limit, the others stay. */
static void
merge_hugepages (oci_resources *d, oci_resources *s)
{
  for (size_t i = 0; i < s->hugepage_limits_len; i++)
    {
      oci_hugepage_limit *from = &s->hugepage_limits[i], *to = NULL;
      for (size_t j = 0; j < d->hugepage_limits_len && to == NULL; j++)
        if (d->hugepage_limits[j].page_size && from->page_size
            && strcmp (d->hugepage_limits[j].page_size, from->page_size) == 0)
          to = &d->hugepage_limits[j];
      if (to == NULL)
        {
          d->hugepage_limits = xrealloc (d->hugepage_limits,
                                         (d->hugepage_limits_len + 1) * sizeof *to);
          to = &d->hugepage_limits[d->hugepage_limits_len++];
          memset (to, 0, sizeof *to);
        }
      SWAP (to->page_size, from->page_size);
      to->limit = from->limit;
      to->has_limit = from->has_limit;
    }
}

static void
merge_resources (oci_resources *d, oci_resources *s)
{
  MERGE_CHILD (oci_memory, memory)
  MERGE_CHILD (oci_cpu, cpu)
  MERGE_CHILD (oci_pids, pids)
  MERGE_CHILD (oci_block_io, block_io)
  MERGE_CHILD (oci_network, network)
  if (s->devices)
    {
      SWAP (d->devices, s->devices);
      SWAP (d->devices_len, s->devices_len);
    }
  merge_hugepages (d, s);
  if (s->rdma)
    {
      SWAP (d->rdma, s->rdma);
      SWAP (d->rdma_keys, s->rdma_keys);
      SWAP (d->rdma_len, s->rdma_len);
    }
  for (size_t i = 0; s->unified && i < s->unified->len; i++)
    oci_map_set (&d->unified, s->unified->keys[i], s->unified->values[i]);
}

int
brig_resources_merge (oci_config *cfg, const oci_resources *res, brig_error *err)
{
  oci_resources *copy;

  if (res == NULL)
    return 0;
  copy = oci_copy (&oci_resources_type, res);
  if (copy == NULL)
    return brig_error_set (err, errno ? errno : ENOMEM, "copy linux.resources");
  if (cfg->linux == NULL)
    cfg->linux = xmalloc0 (sizeof *cfg->linux);
  if (cfg->linux->resources == NULL)
    cfg->linux->resources = xmalloc0 (sizeof *cfg->linux->resources);
  merge_resources (cfg->linux->resources, copy);
  oci_free (&oci_resources_type, copy);
  return 0;
}

int
brig_container_record_resources (brig_container *c, const oci_resources *res, brig_error *err)
{
  oci_config *cfg = NULL;
  _cleanup_free_ char *json = NULL;
  size_t len;
  int r;

  r = brig_container_config (c, &cfg, err);
  if (r < 0)
    return r;
  r = brig_resources_merge (cfg, res, err);
  if (r == 0)
    {
      json = oci_generate (&oci_config_type, cfg, false, &len);
      if (json == NULL)
        r = brig_error_set (err, errno ? errno : ENOMEM, "container \"%s\": encode config.json",
                            c->id);
    }
  if (r == 0)
    r = brig_write_file_atomic (c->dirfd, "config.json", json, len, 0600, err);
  oci_config_free (cfg);
  if (r < 0)
    return brig_error_wrap (err, "record the new resources of container \"%s\"", c->id);
  return 0;
}
