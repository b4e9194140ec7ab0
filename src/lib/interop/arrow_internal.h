/*
 * arrow_internal.h -- what the Arrow export and import share: format
 * strings, schema structs the library makes, field paths for messages.
 * Not installed; nothing here is ABI.
 */
#ifndef CKERNEL_ARROW_INTERNAL_H
#define CKERNEL_ARROW_INTERNAL_H

#include "core/core_internal.h"
#include "ckernel/arrow.h"
#include "ckernel/datetime.h"

/* The layouts of the Arrow formats the library reads or writes. */
typedef enum ck__arrow_kind {
  CK__ARROW_NULL,         /* "n": every value null                      */
  CK__ARROW_BOOL,         /* "b": bit-packed                            */
  CK__ARROW_PRIMITIVE,    /* fixed-width numbers                        */
  CK__ARROW_UTF8,         /* "u"  int32 offsets  (+ data)               */
  CK__ARROW_LARGE_UTF8,   /* "U"  int64 offsets                          */
  CK__ARROW_UTF8_VIEW,    /* "vu" 16-byte views + variadic buffers       */
  CK__ARROW_BINARY,       /* "z"                                         */
  CK__ARROW_LARGE_BINARY, /* "Z"                                         */
  CK__ARROW_BINARY_VIEW,  /* "vz"                                        */
  CK__ARROW_LIST,         /* "+l" int32 offsets, one child               */
  CK__ARROW_LARGE_LIST,   /* "+L"                                        */
  CK__ARROW_LIST_VIEW,    /* "+vl" int32 offsets and sizes               */
  CK__ARROW_LARGE_LIST_VIEW, /* "+vL"                                    */
  CK__ARROW_FIXED_LIST,   /* "+w:N"                                      */
  CK__ARROW_STRUCT        /* "+s"                                        */
} ck__arrow_kind;

typedef struct ck__arrow_format {
  ck__arrow_kind kind;
  ck_type_id prim;      /* CK__ARROW_PRIMITIVE: the builtin id; BOOL: CK_TYPE_BOOL */
  int64_t fixed_size;   /* CK__ARROW_FIXED_LIST: N                          */
  /* time formats (timestamp, date32/64, time32/64, duration): primitives of
   * prim's width whose element type is a time type (ckernel/datetime.h) */
  int time_id;          /* CK_TYPE_DATETIME..CK_TYPE_TIME, 0 for none       */
  int time_unit;        /* ck_time_unit                                     */
  const char *tz;       /* timestamps: the zone (points into the format), or
                           NULL                                             */
} ck__arrow_format;

/* The Arrow format of time type `t` into buf ("tsu:UTC", "tdD", ...);
 * false when Arrow has no such type (instants and durations in units other
 * than s, ms, us, ns). */
bool ck__arrow_time_format(ck_type t, char *buf, size_t n);

/* Parse a format string; false for formats the library does not map (the
 * caller reports them with the field's path). */
bool ck__arrow_parse_format(const char *format, ck__arrow_format *out);

/* The format string of a builtin id ("l" for int64), NULL for complex. */
const char *ck__arrow_builtin_format(ck_type_id id);

/* True for the string kinds (u, U, vu) / the binary kinds (z, Z, vz). */
static inline bool ck__arrow_is_utf8(ck__arrow_kind k) {
  return k == CK__ARROW_UTF8 || k == CK__ARROW_LARGE_UTF8 || k == CK__ARROW_UTF8_VIEW;
}
static inline bool ck__arrow_is_binary(ck__arrow_kind k) {
  return k == CK__ARROW_BINARY || k == CK__ARROW_LARGE_BINARY ||
         k == CK__ARROW_BINARY_VIEW;
}
static inline bool ck__arrow_is_list(ck__arrow_kind k) {
  return k == CK__ARROW_LIST || k == CK__ARROW_LARGE_LIST ||
         k == CK__ARROW_LIST_VIEW || k == CK__ARROW_LARGE_LIST_VIEW;
}

/* The ckernels field names of the children of struct schema `s` (its
 * n_children non-NULL children): each Arrow name as it is when ckernels can
 * hold it (non-empty UTF-8 without control characters, not the name of an
 * earlier field), else "_i" (i the field's position) with '_' appended
 * while another field has that name.  Arrow allows any name, empty and
 * duplicate ones too; import names the fields so, and an export asked for
 * such a schema writes the requested names back.  *out: n_children strings
 * for ck__arrow_names_free. */
ck_status ck__arrow_struct_names(const struct ArrowSchema *s, char ***out);
void ck__arrow_names_free(char **names, size_t n);

/* A field path for messages: "point.x", "tags[]", "" at the top. */
typedef struct ck__arrow_path {
  char text[256];
  size_t len;
} ck__arrow_path;

/* Append ".name" (or "name" at the top, "[]" for name NULL); returns the
 * length to restore with ck__arrow_path_pop.  Truncates silently. */
size_t ck__arrow_path_push(ck__arrow_path *p, const char *name);
static inline void ck__arrow_path_pop(ck__arrow_path *p, size_t len) {
  p->len = len;
  p->text[len] = '\0';
}
/* "field 'point.x'" or "the top level" (a static or the path's own text). */
const char *ck__arrow_path_what(const ck__arrow_path *p, char *buf, size_t n);

/*
 * A schema the library owns: copies of `format` and `name`, room for
 * `n_children` children (each zeroed, released), metadata NULL, the given
 * flags.  *s is left released on failure.
 */
ck_status ck__arrow_schema_init(struct ArrowSchema *s, const char *format,
                                const char *name, int64_t flags,
                                int64_t n_children);

/* Deep copy of any schema (format, name, metadata, flags, children,
 * dictionary) into a schema the library owns. */
ck_status ck__arrow_schema_copy(const struct ArrowSchema *src,
                                struct ArrowSchema *dst);

/* Release a schema if it is not released (NULL-safe). */
static inline void ck__arrow_schema_release(struct ArrowSchema *s) {
  if (s != NULL && s->release != NULL) {
    s->release(s);
  }
}
static inline void ck__arrow_array_release(struct ArrowArray *a) {
  if (a != NULL && a->release != NULL) {
    a->release(a);
  }
}

/*
 * The schema's element type `t` with the option types the array needs: a
 * number, bool, string, bytes, struct or list node that declares nulls
 * becomes `?T` (a list `?var * T`), recursively through struct fields and
 * list elements.  Fixed-size lists keep refusing nulls (their elements are
 * not a regular progression under a struct).  A node without a validity
 * buffer (or null count 0) stays `T`: an Arrow array without nulls imports
 * as before, zero-copy.  New reference in *out.
 */
ck_status ck__arrow_with_options(ck_type t, const struct ArrowSchema *s,
                                 const struct ArrowArray *a, int depth, ck_type *out);

/* ---- dictionary-encoded arrays (arrow_dictionary.c) ------------------------ */

/*
 * Split a dictionary-encoded array for its import: `array` is moved into an
 * owner; *idx (the indices: the array without its dictionary, described by
 * *idx_schema, a shallow copy of `schema` without its dictionary, to be
 * read only) and *vals (the dictionary, described by schema->dictionary)
 * are arrays whose release drops a reference to that owner, to be imported
 * (moved) by the caller.  On failure `array` is released.
 */
ck_status ck__arrow_dictionary_split(const struct ArrowSchema *schema,
                                     struct ArrowArray *array,
                                     struct ArrowSchema *idx_schema,
                                     struct ArrowArray *idx, struct ArrowArray *vals);

/* The imported parts as one dictionary column (ck_dictionary_array_new):
 * refuses values with nulls, naming the field.  New array in *out. */
ck_status ck__arrow_dictionary_join(const struct ArrowSchema *schema,
                                    ck_array_preamble *indices,
                                    ck_array_preamble *values, ck_array_preamble **out);

/*
 * Give an exported indices schema `s` and array `a` (either may be NULL)
 * the exported values `vs` / `va` as their dictionary (both moved in; the
 * release callbacks of `s` and `a` release them too), and the ordered flag.
 * On failure everything given is released.
 */
ck_status ck__arrow_dictionary_attach(struct ArrowSchema *s, struct ArrowArray *a,
                                      struct ArrowSchema *vs, struct ArrowArray *va,
                                      bool ordered);

#endif /* CKERNEL_ARROW_INTERNAL_H */
