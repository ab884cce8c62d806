/* libocispec: the OCI runtime-spec JSON documents as typed C structs.
 * Parsing and generation use yajl internally; nothing of yajl leaks here,
 * and nothing here knows about Linux. */
#ifndef BRIG_OCISPEC_H
#define BRIG_OCISPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OCI_REQ 1

/* GNU C predefines `linux` as 1; the spec has a member of that name. */
#undef linux

/* A JSON object of string values, in document order. */
typedef struct oci_map {
  char **keys;
  char **values;
  size_t len;
} oci_map;

/* Forward declarations of every struct described in oci_spec.def. */
#define OCI_FWD(T) typedef struct T T;
#include "oci_spec.def"
OCI_ALL_STRUCTS (OCI_FWD)
#undef OCI_FWD

#define OCI_MEMBER_STR(n, T) char *n;
#define OCI_MEMBER_BOOL(n, T) bool n; bool has_##n;
#define OCI_MEMBER_INT32(n, T) int32_t n; bool has_##n;
#define OCI_MEMBER_UINT32(n, T) uint32_t n; bool has_##n;
#define OCI_MEMBER_INT64(n, T) int64_t n; bool has_##n;
#define OCI_MEMBER_UINT64(n, T) uint64_t n; bool has_##n;
#define OCI_MEMBER_STRV(n, T) char **n; size_t n##_len;
#define OCI_MEMBER_MAP(n, T) oci_map *n;
#define OCI_MEMBER_UINT32V(n, T) uint32_t *n; size_t n##_len;
#define OCI_MEMBER_OBJ(n, T) T *n;
#define OCI_MEMBER_ARR(n, T) T *n; size_t n##_len;
#define OCI_MEMBER_OBJMAP(n, T) T *n; char **n##_keys; size_t n##_len;
#define OCI_MEMBER(KIND, n, json, flags, T) OCI_MEMBER_##KIND (n, T)
#define OCI_DEFINE(T) struct T { T##_FIELDS (OCI_MEMBER) };
OCI_ALL_STRUCTS (OCI_DEFINE)
#undef OCI_DEFINE

/* Kinds of fields; the tables in oci_tables.c use them. */
enum oci_kind {
  OCI_K_STR, OCI_K_BOOL, OCI_K_INT32, OCI_K_UINT32, OCI_K_INT64, OCI_K_UINT64,
  OCI_K_STRV, OCI_K_MAP, OCI_K_UINT32V, OCI_K_OBJ, OCI_K_ARR, OCI_K_OBJMAP,
};

/* A description of one struct, used by the generic parse/generate/free. */
typedef struct oci_type oci_type;
#define OCI_TYPE_DECL(T) extern const oci_type T##_type;
OCI_ALL_STRUCTS (OCI_TYPE_DECL)
#undef OCI_TYPE_DECL

/* An error from parsing: "config.json: linux.resources.memory.limit: expected
 * integer, got string". The message is malloc'd; free it with free(). */
typedef struct oci_error {
  char *msg;
} oci_error;

/* Parse a JSON document held in buf (len bytes) into a new struct of type t.
 * name is used as the message prefix ("config.json"; NULL: no prefix).
 * Returns NULL on failure with errno set (EINVAL for a bad document) and
 * err->msg set (err may be NULL; msg stays NULL if even it cannot be
 * allocated). Unknown properties are ignored, null counts as absent, and a
 * duplicate key replaces the earlier value. */
void *oci_parse_data (const oci_type *t, const char *buf, size_t len,
                      const char *name, oci_error *err);

/* Parse the file at path into a new struct of type t (see oci_parse_data);
 * the message prefix is the file's basename. Documents over 64 MiB are
 * refused. */
void *oci_parse_file (const oci_type *t, const char *path, oci_error *err);

/* Serialise obj (of type t) to a malloc'd NUL-terminated JSON string;
 * pretty selects 2-space indented output ending in a newline; absent fields
 * are omitted. len (may be NULL) receives the length. Returns NULL with errno
 * set on failure (EILSEQ: a string is not valid UTF-8). */
char *oci_generate (const oci_type *t, const void *obj, bool pretty, size_t *len);

/* A deep copy of obj (of type t), made through its JSON form so that every
 * field is covered. Returns NULL with errno set on failure. */
void *oci_copy (const oci_type *t, const void *obj);

/* Whether a and b (both of type t, either may be NULL) hold the same values,
 * presence included. */
bool oci_equal (const oci_type *t, const void *a, const void *b);

/* Release obj (of type t) and everything it owns; NULL is fine. */
void oci_free (const oci_type *t, void *obj);

/* Convenience wrappers for the common documents. */
static inline oci_config *oci_config_parse_file (const char *path, oci_error *err)
{ return oci_parse_file (&oci_config_type, path, err); }
static inline oci_config *oci_config_parse_data (const char *buf, size_t len, const char *name, oci_error *err)
{ return oci_parse_data (&oci_config_type, buf, len, name, err); }
static inline void oci_config_free (oci_config *c) { oci_free (&oci_config_type, c); }
static inline oci_process *oci_process_parse_file (const char *path, oci_error *err)
{ return oci_parse_file (&oci_process_type, path, err); }
static inline void oci_process_free (oci_process *p) { oci_free (&oci_process_type, p); }

/* Look up key in a string map; NULL when absent. */
const char *oci_map_get (const oci_map *m, const char *key);

/* Set key to a copy of value in *m (allocating the map when *m is NULL):
 * an existing key keeps its place, a new one is appended. 0 or -ENOMEM. */
int oci_map_set (oci_map **m, const char *key, const char *value);

#endif
