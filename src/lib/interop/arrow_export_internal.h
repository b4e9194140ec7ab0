/*
 * arrow_export_internal.h -- what the files of the Arrow export share (the
 * "x" names: x for export; arrow_import_internal.h has the "i" names of the
 * other direction).  Not installed; nothing here is ABI.
 *
 *   arrow_export.c             the entry points: ck_arrow_export_schema,
 *                              ck_arrow_export, ck_arrow_export_device
 *   arrow_export_node.c        runs (the elements of one node in ck memory)
 *                              and exported nodes (what an ArrowArray owns)
 *   arrow_export_format.c      the Arrow format of each ck type under a
 *                              requested schema; the schema-only export
 *   arrow_export_array.c       the array export: numbers, bits, utf8/binary
 *                              with offsets, lists, fixed-size lists,
 *                              structs, validity
 *   arrow_export_views.c       string_view / binary_view over arena chunks
 *   arrow_export_dictionary.c  dictionary columns: indices + dictionary
 *   arrow_export_stream.c      ck_arrow_export_stream (one-array streams)
 *
 * Every exported node owns what it allocated and, when it points into the
 * ck array's memory (numbers, arena chunks), a reference to the array: a
 * consumer may move a child out and release the parent first.
 */
#ifndef CKERNEL_ARROW_EXPORT_INTERNAL_H
#define CKERNEL_ARROW_EXPORT_INTERNAL_H

#include "interop/arrow_internal.h"

/* ---- runs (arrow_export_node.c) ------------------------------------------------ */

/*
 * The elements of one Arrow node are described as "runs": (base, stride,
 * count) triples in ck memory, merged when one continues the other.  A dim
 * of contiguous numbers is one run and exports zero-copy; a var dim's
 * children are one run per row; a fixed dim's children one run per element
 * (merged back to one when the data is C-contiguous).
 */
typedef struct ck__xrun {
  const char *base;
  intptr_t stride;
  int64_t count;
} ck__xrun;

typedef struct ck__xruns {
  ck__xrun *v;
  size_t n, cap;
  int64_t total;
} ck__xruns;

void ck__xruns_free(ck__xruns *r);
/* Append `count` elements at base, base + stride, ... (merged with the last
 * run when they continue it); nothing for count <= 0. */
ck_status ck__xruns_add(ck__xruns *r, const char *base, intptr_t stride, int64_t count);

/* The element type, its arrmeta and the runs of the outermost dim of `a`
 * (errors name `func`: a 0-d array has no Arrow form). */
ck_status ck__xtop_level(const ck_array_preamble *a, const char *func, ck_type *el,
                         const char **elmeta, ck__xruns *runs);

/* ---- exported nodes (arrow_export_node.c) ---------------------------------------- */

/* The private data of an exported ArrowArray. */
typedef struct ck__xnode {
  ck_array_preamble *keep;  /* a reference to the source array, or NULL */
  void **owned;             /* allocations to free */
  size_t *owned_map;        /* per allocation: bytes of a page mapping, 0: heap */
  size_t nowned, capowned;
  const void **buffers;     /* the buffer list (ck__free'd by the release) */
  struct ArrowArray *child_structs;
  struct ArrowArray **child_ptrs;
} ck__xnode;

/* A node of `length` elements with `n_buffers` buffer slots (NULL) and
 * `n_children` released children.  Left released on failure. */
ck_status ck__xnode_init(struct ArrowArray *a, int64_t length, int64_t n_buffers,
                         int64_t n_children);
/* Take over heap memory `mem` (freed by the node's release; freed on failure). */
ck_status ck__xnode_own(struct ArrowArray *a, void *mem);
/* A 64-byte aligned buffer of `size` bytes (at least one cache line, so a
 * buffer is never NULL) owned by the node, or NULL (the error is set). */
void *ck__xnode_alloc(struct ArrowArray *a, size_t size, bool zero);
/* The node keeps a reference to `src` (its buffers point into it). */
void ck__xnode_keep(struct ArrowArray *a, ck_array_preamble *src);

/* ---- formats (arrow_export_format.c) ------------------------------------------------ */

/* One export: the source array and the path of the node being written. */
typedef struct ck__xctx {
  ck_array_preamble *src;
  ck__arrow_path path;
} ck__xctx;

static inline const char *ck__xwhat(ck__xctx *c, char *buf, size_t n) {
  return ck__arrow_path_what(&c->path, buf, n);
}

/* A released request is refused (`func` names the entry point). */
static inline ck_status ck__xcheck_request(const struct ArrowSchema *req, const char *func) {
  if (req != NULL && req->release == NULL) {
    return ck__error(CK_ERR_INVALID_STATE, func, "the requested schema is released");
  }
  return CK_OK;
}

/*
 * The format of element type `t` (arrmeta `arrmeta`) under request `req`
 * (NULL: the defaults).  *use_req tells whether the request's children
 * apply to the children (same family).
 */
ck_status ck__xchoose(ck__xctx *c, ck_type t, const char *arrmeta,
                      const struct ArrowSchema *req, char *fmt, size_t fmtsize,
                      ck__arrow_kind *kind, bool *use_req);

/* The request for child i of a node whose request applies, else NULL. */
static inline const struct ArrowSchema *ck__xreq_child(const struct ArrowSchema *req,
                                                       bool use_req, int64_t i) {
  if (!use_req || req == NULL || i >= req->n_children || req->children == NULL) {
    return NULL;
  }
  return req->children[i];
}

/* The name a child gets: a struct field's requested name when its request
 * applies (it matched, as ck__arrow_struct_names maps it), else its own. */
static inline const char *ck__xfield_name(ck_type_id id, const struct ArrowSchema *rc,
                                          const char *own) {
  return id == CK_TYPE_STRUCT && rc != NULL && rc->name != NULL ? rc->name : own;
}

/* The schema of array `a` (not a dictionary column) under `requested`,
 * as ck_arrow_export_schema gives it (the caller refused a released request). */
ck_status ck__xschema_of(const ck_array_preamble *a, const struct ArrowSchema *requested,
                         struct ArrowSchema *out);

/* ---- arrays (arrow_export_array.c, arrow_export_views.c) ---------------------------- */

/* The schema and array of `a` (not a dictionary column), as ck_arrow_export
 * gives them (either output may be NULL; the caller refused a released
 * request). */
ck_status ck__xarray_of(ck_array_preamble *a, const struct ArrowSchema *requested,
                        struct ArrowSchema *out_schema, struct ArrowArray *out_array);

/* The bytes of a ck string. */
static inline size_t ck__xstr_len(const ck_string *s) {
  return s->begin == NULL ? 0 : (size_t)(s->end - s->begin);
}

/* string_view / binary_view: inline short values, point into the arena's
 * chunks, copy what lies elsewhere into buffers of the node. */
ck_status ck__xexport_views(ck__xctx *c, const char *arrmeta, const ck__xruns *runs,
                            struct ArrowArray *a);

/* ---- dictionary columns (arrow_export_dictionary.c) -------------------------------- */

/* A one-dim dictionary column (`strided * dictionary[I, V]`, `strided *
 * ?dictionary[...]`)? */
bool ck__xis_dictionary_column(const ck_array_preamble *a);

/* Its indices exported as an integer array whose dictionary is its values
 * exported (`requested`'s dictionary, if any, shapes the values); no array
 * when out_array is NULL (the schema only). */
ck_status ck__xexport_dictionary(ck_array_preamble *a, const struct ArrowSchema *requested,
                                 struct ArrowSchema *out_schema,
                                 struct ArrowArray *out_array);

#endif /* CKERNEL_ARROW_EXPORT_INTERNAL_H */
