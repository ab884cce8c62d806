/* libocispec internals: the tables built from oci_spec.def and the helpers
 * shared by the generic parse, generate, free and compare code. Not for
 * libbrig; the unit tests use it to walk every field. */
#ifndef BRIG_OCI_INTERNAL_H
#define BRIG_OCI_INTERNAL_H

#include "ocispec.h"

/* Largest document oci_parse_data/oci_parse_file accept. */
#define OCI_MAX_DOCUMENT ((size_t) 64 << 20)

/* Deepest JSON nesting accepted (only ignored properties can nest deeper
 * than the spec's own few levels). */
#define OCI_MAX_NESTING 1000

/* One field of a struct: where its value and companions live. */
typedef struct oci_field {
  const char *json;       /* property name */
  const oci_type *sub;    /* element struct for OBJ, ARR, OBJMAP */
  uint16_t off;           /* offset of the value */
  uint16_t aux;           /* offset of has_x (BOOL, INTnn) or x_len (vectors, maps of objects) */
  uint16_t keys;          /* offset of x_keys (OBJMAP) */
  uint8_t kind;           /* enum oci_kind */
  uint8_t required;       /* a missing property is an error */
  uint8_t json_len;       /* strlen (json) */
} oci_field;

/* One struct: its size and its fields in oci_spec.def order. The fields live
 * in a block-scope table (offsetof needs the struct's name, which the F()
 * lines of oci_spec.def do not carry), reached through fields(). */
struct oci_type {
  const char *name;
  size_t size;
  const oci_field *(*fields) (void);
  unsigned nfields;
};

/* Every struct type of oci_spec.def, for code that walks them all. */
extern const oci_type *const oci_all_types[];
extern const size_t oci_all_types_len;

/* Whether field f of obj is present (non-NULL pointer, has_x set). */
bool oci_field_present (const oci_field *f, const void *obj);

/* Release the value of field f of obj and mark it absent. */
void oci_field_clear (const oci_field *f, void *obj);

/* Release everything obj (of type t) owns, but not obj itself. */
void oci_free_fields (const oci_type *t, void *obj);

/* Release a string map and its strings. */
void oci_map_free (oci_map *m);

/* Keep one entry per key of a map just read: the last value wins, in the
 * place of the first occurrence. values holds *lenp strings (t NULL) or
 * structs of type t; dropped ones are released. false: out of memory. */
bool oci_dedup_keys (char **keys, void *values, size_t *lenp, const oci_type *t);

/* Set errno to errnum and, when err is not NULL, err->msg to the message. */
void oci_set_error (oci_error *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

static inline void *
oci_at (const void *obj, size_t off)
{
  return (char *) obj + off;
}

#endif
