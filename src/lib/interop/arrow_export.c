/*
 * arrow_export.c -- ck arrays as Arrow C data (ArrowSchema + ArrowArray),
 * as device arrays on the CPU and as one-array streams (arrow.h).
 *
 * The elements of one Arrow node are described as "runs": (base, stride,
 * count) triples in ck memory, merged when one continues the other.  A dim
 * of contiguous numbers is one run and exports zero-copy; a var dim's
 * children are one run per row; a fixed dim's children one run per element
 * (merged back to one when the data is C-contiguous).
 *
 * Every exported node owns what it allocated and, when it points into the
 * ck array's memory (numbers, arena chunks), a reference to the array: a
 * consumer may move a child out and release the parent first.
 *
 * Over 1000 lines and one concept: every Arrow layout (numbers, bits, the
 * three string layouts, lists, fixed-size lists, structs, validity) is one
 * case of the same recursive export over runs, and the release callbacks
 * they share are private to it (arrow_import.c is the other direction).
 */
#include "interop/arrow_internal.h"
#include "ckernel/dictionary.h"
#include "types/type_internal.h"
#include "ckernel/validity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- runs ------------------------------------------------------------------ */

typedef struct xrun {
  const char *base;
  intptr_t stride;
  int64_t count;
} xrun;

typedef struct xruns {
  xrun *v;
  size_t n, cap;
  int64_t total;
} xruns;

static void runs_free(xruns *r) {
  ck__free(r->v);
  r->v = NULL;
  r->n = r->cap = 0;
  r->total = 0;
}

static ck_status runs_add(xruns *r, const char *base, intptr_t stride, int64_t count) {
  if (count <= 0) {
    return CK_OK;
  }
  r->total += count;
  if (r->n > 0) {
    xrun *last = &r->v[r->n - 1];
    if (last->count == 1 && count >= 1 && base == last->base + stride) {
      last->stride = stride; /* a single element takes the stride that follows */
    }
    if (last->stride == stride && base == last->base + last->count * stride) {
      last->count += count;
      return CK_OK;
    }
    if (count == 1 && base == last->base + last->count * last->stride) {
      last->count += 1;
      return CK_OK;
    }
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 8;
    xrun *v = ck__realloc(r->v, cap * sizeof *v, "ck_arrow_export");
    if (v == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n++] = (xrun){base, stride, count};
  return CK_OK;
}

/* ---- exported nodes ---------------------------------------------------------- */

typedef struct xnode {
  ck_array_preamble *keep;  /* a reference to the source array, or NULL */
  void **owned;             /* allocations to free */
  size_t *owned_map;        /* per allocation: bytes of a page mapping, 0: heap */
  size_t nowned, capowned;
  const void **buffers;
  struct ArrowArray *child_structs;
  struct ArrowArray **child_ptrs;
} xnode;

static void xnode_release_cb(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) {
    return;
  }
  xnode *p = a->private_data;
  if (p != NULL) {
    for (int64_t i = 0; p->child_ptrs != NULL && i < a->n_children; i++) {
      ck__arrow_array_release(p->child_ptrs[i]);
    }
    for (size_t i = 0; i < p->nowned; i++) {
      if (p->owned_map[i] != 0) {
        ck__unmap_retain(p->owned[i], p->owned_map[i]); /* kept for the next export */
      } else {
        ck__free(p->owned[i]);
      }
    }
    ck__free(p->owned);
    ck__free(p->owned_map);
    ck__free(p->buffers);
    ck__free(p->child_structs);
    ck__free(p->child_ptrs);
    if (p->keep != NULL) {
      ck_array_decref(p->keep);
    }
    ck__free(p);
  }
  a->release = NULL;
}

/* A node of `length` elements with `n_buffers` buffer slots (NULL) and
 * `n_children` released children.  Left released on failure. */
static ck_status xnode_init(struct ArrowArray *a, int64_t length, int64_t n_buffers,
                            int64_t n_children) {
  memset(a, 0, sizeof *a);
  xnode *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  a->private_data = p;
  a->release = xnode_release_cb;
  p->buffers = CK_CALLOC((size_t)n_buffers, sizeof *p->buffers);
  if (p->buffers == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  if (n_children > 0) {
    p->child_structs = CK_CALLOC((size_t)n_children, sizeof *p->child_structs);
    p->child_ptrs = CK_CALLOC((size_t)n_children, sizeof *p->child_ptrs);
    if (p->child_structs == NULL || p->child_ptrs == NULL) {
      a->release(a);
      return CK_ERR_NO_MEMORY;
    }
    for (int64_t i = 0; i < n_children; i++) {
      p->child_ptrs[i] = &p->child_structs[i];
    }
  }
  a->length = length;
  a->null_count = 0;
  a->offset = 0;
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = p->buffers;
  a->children = p->child_ptrs;
  a->dictionary = NULL;
  return CK_OK;
}

/* Take over `mem` (released by the node's release: a page mapping of
 * `mapped` bytes, or heap memory when 0); releases it on failure. */
static ck_status xnode_own_mem(struct ArrowArray *a, void *mem, size_t mapped) {
  xnode *p = a->private_data;
  if (p->nowned == p->capowned) {
    size_t cap = p->capowned ? 2 * p->capowned : 4;
    void **v = ck__realloc(p->owned, cap * sizeof *v, "ck_arrow_export");
    if (v != NULL) {
      p->owned = v;
    }
    size_t *m = v == NULL ? NULL
                          : ck__realloc(p->owned_map, cap * sizeof *m, "ck_arrow_export");
    if (m == NULL) {
      if (mapped != 0) {
        ck__unmap_retain(mem, mapped);
      } else {
        ck__free(mem);
      }
      return CK_ERR_NO_MEMORY;
    }
    p->owned_map = m;
    p->capowned = cap;
  }
  p->owned_map[p->nowned] = mapped;
  p->owned[p->nowned++] = mem;
  return CK_OK;
}

static ck_status xnode_own(struct ArrowArray *a, void *mem) {
  return xnode_own_mem(a, mem, 0);
}

/* Buffers of at least this many bytes are page mappings, reused from the
 * retained mappings of released ones (core_internal.h): a loop exporting one column per
 * call writes into pages already mapped instead of faulting fresh ones in. */
#define CK__EXPORT_MAP_BYTES ((size_t)1 << 20)

/* A 64-byte aligned buffer of `size` bytes (at least one cache line, so a
 * buffer is never NULL) owned by the node, or NULL. */
static void *xnode_alloc(struct ArrowArray *a, size_t size, bool zero) {
  size_t rounded;
  if (!ck__add_size(size, 63, &rounded)) {
    (void)CK_ERROR(CK_ERR_OVERFLOW, "a buffer of %zu bytes is too large", size);
    return NULL;
  }
  rounded &= ~(size_t)63;
  if (rounded == 0) {
    rounded = 64;
  }
  void *mem;
  size_t mapped = 0;
  if (rounded >= CK__EXPORT_MAP_BYTES) {
    size_t ps = ck__page_size();
    if (!ck__add_size(rounded, ps - 1, &mapped)) {
      (void)CK_ERROR(CK_ERR_OVERFLOW, "a buffer of %zu bytes is too large", size);
      return NULL;
    }
    mapped &= ~(ps - 1);
    mem = ck__map_reuse(mapped, &mapped, "ck_arrow_export"); /* page aligned */
  } else {
    mem = ck__aligned_alloc(64, rounded, "ck_arrow_export");
  }
  if (mem == NULL) {
    return NULL;
  }
  if (zero) {
    memset(mem, 0, rounded);
  } else {
    memset((char *)mem + (rounded - 64), 0, 64); /* no uninitialised padding */
  }
  return xnode_own_mem(a, mem, mapped) == CK_OK ? mem : NULL;
}

static void xnode_keep(struct ArrowArray *a, ck_array_preamble *src) {
  xnode *p = a->private_data;
  if (p->keep == NULL) {
    ck_array_incref(src);
    p->keep = src;
  }
}

/* ---- formats ------------------------------------------------------------------ */

typedef struct xctx {
  ck_array_preamble *src;
  ck__arrow_path path;
} xctx;

static const char *xwhat(xctx *c, char *buf, size_t n) {
  return ck__arrow_path_what(&c->path, buf, n);
}

static ck_status mismatch(xctx *c, ck_type t, const struct ArrowSchema *req) {
  char what[300], ts[128];
  return ck__error(CK_ERR_TYPE, "ck_arrow_export",
                   "the requested schema does not match the array at %s: requested "
                   "Arrow format '%s', the array holds '%s'",
                   xwhat(c, what, sizeof what), req->format != NULL ? req->format : "(null)",
                   ck__type_str(t, ts, sizeof ts));
}

/* Families of formats: a request within the array's own family chooses an
 * encoding; a request of another family is a different structure. */
typedef enum { FAM_NUMBER, FAM_UTF8, FAM_BINARY, FAM_LIST, FAM_FIXED, FAM_STRUCT,
               FAM_UNKNOWN } xfamily;

static xfamily family(const struct ArrowSchema *req, ck__arrow_format *f) {
  if (req->dictionary != NULL || !ck__arrow_parse_format(req->format, f) ||
      f->kind == CK__ARROW_NULL) {
    return FAM_UNKNOWN;
  }
  if (f->kind == CK__ARROW_BOOL || f->kind == CK__ARROW_PRIMITIVE) return FAM_NUMBER;
  if (ck__arrow_is_utf8(f->kind)) return FAM_UTF8;
  if (ck__arrow_is_binary(f->kind)) return FAM_BINARY;
  if (ck__arrow_is_list(f->kind)) return FAM_LIST;
  if (f->kind == CK__ARROW_FIXED_LIST) return FAM_FIXED;
  return FAM_STRUCT;
}

/* The size of a fixed or strided dim from its arrmeta. */
static int64_t dim_size(const char *arrmeta) {
  return ((const ck_dim_arrmeta *)arrmeta)->size;
}

/*
 * The format of element type `t` (arrmeta `arrmeta`) under request `req`
 * (NULL: the defaults).  *use_req tells whether the request's children
 * apply to the children (same family).
 */
static ck_status choose(xctx *c, ck_type t, const char *arrmeta,
                        const struct ArrowSchema *req, char *fmt, size_t fmtsize,
                        ck__arrow_kind *kind, bool *use_req) {
  char what[300], ts[128];
  ck__arrow_format f = {CK__ARROW_NULL, CK_TYPE_UNINITIALIZED, 0, 0, 0, NULL};
  xfamily fam = req != NULL ? family(req, &f) : FAM_UNKNOWN;
  ck_type_id id = ck_type_id_of(t);
  *use_req = false;
  if (ck_type_is_builtin(t)) {
    const char *bf = ck__arrow_builtin_format(id);
    if (bf == NULL) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s holds %s, which has no Arrow type (export the real and "
                       "imaginary parts as two float fields)",
                       xwhat(c, what, sizeof what), ck__type_str(t, ts, sizeof ts));
    }
    if (fam != FAM_UNKNOWN && fam != FAM_NUMBER) {
      return mismatch(c, t, req);
    }
    snprintf(fmt, fmtsize, "%s", bf);
    *kind = id == CK_TYPE_BOOL ? CK__ARROW_BOOL : CK__ARROW_PRIMITIVE;
    return CK_OK;
  }
  if (ck_type_is_time(t)) {
    if (!ck__arrow_time_format(t, fmt, fmtsize)) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s holds %s, which has no Arrow type (Arrow's timestamps and "
                       "durations count s, ms, us or ns: convert it first)",
                       xwhat(c, what, sizeof what), ck__type_str(t, ts, sizeof ts));
    }
    if (fam != FAM_UNKNOWN && fam != FAM_NUMBER) {
      return mismatch(c, t, req);
    }
    *kind = CK__ARROW_PRIMITIVE;
    return CK_OK;
  }
  switch (id) {
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES: {
    bool str = id == CK_TYPE_STRING;
    /* By default large_utf8 / large_binary: every pyarrow.compute kernel,
     * pandas (string[pyarrow]), polars and duckdb take it, its type does not
     * depend on the data's size, and the text is copied once into one
     * buffer.  The views (string_view, no copy of the text) when asked. */
    ck__arrow_kind k = str ? CK__ARROW_LARGE_UTF8 : CK__ARROW_LARGE_BINARY;
    if (fam == FAM_UTF8 && str) {
      k = f.kind;
    } else if (fam == FAM_BINARY) {
      k = f.kind; /* a string's bytes as binary; bytes in any binary encoding */
    } else if (fam == FAM_UTF8) {
      k = CK__ARROW_BINARY_VIEW; /* bytes are not UTF-8: our own encoding */
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    }
    static const struct { ck__arrow_kind k; const char *f; } names[] = {
        {CK__ARROW_UTF8, "u"}, {CK__ARROW_LARGE_UTF8, "U"}, {CK__ARROW_UTF8_VIEW, "vu"},
        {CK__ARROW_BINARY, "z"}, {CK__ARROW_LARGE_BINARY, "Z"},
        {CK__ARROW_BINARY_VIEW, "vz"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      if (names[i].k == k) {
        snprintf(fmt, fmtsize, "%s", names[i].f);
      }
    }
    *kind = k;
    return CK_OK;
  }
  case CK_TYPE_VAR_DIM:
    if (fam == FAM_LIST) {
      *use_req = true;
      *kind = f.kind == CK__ARROW_LARGE_LIST ? CK__ARROW_LARGE_LIST : CK__ARROW_LIST;
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    } else {
      *kind = CK__ARROW_LIST;
    }
    snprintf(fmt, fmtsize, "%s", *kind == CK__ARROW_LIST ? "+l" : "+L");
    return CK_OK;
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    int64_t n = dim_size(arrmeta);
    if (n > INT32_MAX) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s: a dim of %lld elements is longer than an Arrow "
                       "fixed-size list can be", xwhat(c, what, sizeof what),
                       (long long)n);
    }
    if (fam == FAM_FIXED) {
      if (f.fixed_size != n) {
        return mismatch(c, t, req);
      }
      *use_req = true;
    } else if (fam == FAM_LIST) {
      *use_req = true; /* a list was asked for: the same data as a fixed-size list */
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    }
    snprintf(fmt, fmtsize, "+w:%lld", (long long)n);
    *kind = CK__ARROW_FIXED_LIST;
    return CK_OK;
  }
  case CK_TYPE_STRUCT: {
    if (fam == FAM_STRUCT) {
      size_t n = ck_struct_field_count(t);
      if (req->n_children != (int64_t)n || (n > 0 && req->children == NULL)) {
        return ck__error(CK_ERR_TYPE, "ck_arrow_export",
                         "the requested schema does not match the array at %s: "
                         "requested %lld fields, the struct has %zu",
                         xwhat(c, what, sizeof what), (long long)req->n_children, n);
      }
      /* the requested names as an import would name them ("" as "_0"):
       * the export then writes the requested names back */
      char **mapped = NULL;
      ck_status st = ck__arrow_struct_names(req, &mapped);
      if (st != CK_OK) {
        return st;
      }
      for (size_t i = 0; i < n; i++) {
        const char *name;
        (void)ck_struct_field(t, i, &name, NULL, NULL, NULL);
        const struct ArrowSchema *rc = req->children[i];
        if (rc == NULL || rc->name == NULL || strcmp(mapped[i], name) != 0) {
          st = ck__error(CK_ERR_TYPE, "ck_arrow_export",
                         "the requested schema does not match the array at %s: "
                         "requested field %zu '%s', the struct has '%s'",
                         xwhat(c, what, sizeof what), i,
                         rc != NULL && rc->name != NULL ? rc->name : "(null)", name);
          break;
        }
      }
      ck__arrow_names_free(mapped, n);
      if (st != CK_OK) {
        return st;
      }
      *use_req = true;
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    }
    snprintf(fmt, fmtsize, "+s");
    *kind = CK__ARROW_STRUCT;
    return CK_OK;
  }
  default:
    return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                     "%s holds %s, which has no Arrow type",
                     xwhat(c, what, sizeof what), ck__type_str(t, ts, sizeof ts));
  }
}

/* The request for child i of a node whose request applies, else NULL. */
static const struct ArrowSchema *req_child(const struct ArrowSchema *req, bool use_req,
                                           int64_t i) {
  if (!use_req || req == NULL || i >= req->n_children || req->children == NULL) {
    return NULL;
  }
  return req->children[i];
}

/* The name a child gets: a struct field's requested name when its request
 * applies (it matched, as ck__arrow_struct_names maps it), else its own. */
static const char *field_name(ck_type_id id, const struct ArrowSchema *rc, const char *own) {
  return id == CK_TYPE_STRUCT && rc != NULL && rc->name != NULL ? rc->name : own;
}

/* ---- schema only ------------------------------------------------------------------ */

static ck_status schema_node(xctx *c, ck_type t, const char *arrmeta,
                             const struct ArrowSchema *req, const char *name,
                             struct ArrowSchema *out) {
  if (ck_type_is_option(t)) { /* every exported field is nullable already */
    return schema_node(c, ck_type_element(t), arrmeta + sizeof(ck_option_arrmeta), req,
                       name, out);
  }
  char fmt[96];
  ck__arrow_kind kind;
  bool use_req;
  ck_status st = choose(c, t, arrmeta, req, fmt, sizeof fmt, &kind, &use_req);
  if (st != CK_OK) {
    return st;
  }
  ck_type_id id = ck_type_id_of(t);
  int64_t nch = 0;
  if (id == CK_TYPE_VAR_DIM || id == CK_TYPE_FIXED_DIM || id == CK_TYPE_STRIDED_DIM) {
    nch = 1;
  } else if (id == CK_TYPE_STRUCT) {
    nch = (int64_t)ck_struct_field_count(t);
  }
  st = ck__arrow_schema_init(out, fmt, name, ARROW_FLAG_NULLABLE, nch);
  if (st != CK_OK) {
    return st;
  }
  for (int64_t i = 0; i < nch; i++) {
    ck_type ct;
    const char *cname = "item", *cmeta;
    if (id == CK_TYPE_STRUCT) {
      size_t moff;
      (void)ck_struct_field(t, (size_t)i, &cname, &ct, NULL, &moff);
      cmeta = arrmeta + moff;
    } else {
      ct = ck_type_element(t);
      cmeta = arrmeta + (id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta)
                                               : sizeof(ck_dim_arrmeta));
    }
    size_t mark = ck__arrow_path_push(&c->path, id == CK_TYPE_STRUCT ? cname : NULL);
    const struct ArrowSchema *rc = req_child(req, use_req, i);
    st = schema_node(c, ct, cmeta, rc, field_name(id, rc, cname), out->children[i]);
    ck__arrow_path_pop(&c->path, mark);
    if (st != CK_OK) {
      out->release(out);
      return st;
    }
  }
  return CK_OK;
}

/* ---- arrays -------------------------------------------------------------------------- */

static ck_status export_node(xctx *c, ck_type t, const char *arrmeta, const xruns *runs,
                             const struct ArrowSchema *req, const char *name,
                             struct ArrowSchema *sout, struct ArrowArray *aout);

static ck_status export_numbers(xctx *c, ck_type t, const xruns *runs,
                                struct ArrowArray *a) {
  size_t es = ck_type_data_size(t);
  int64_t n = runs->total;
  ck_status st = xnode_init(a, n, 2, 0);
  if (st != CK_OK) {
    return st;
  }
  if (ck_type_id_of(t) == CK_TYPE_BOOL) {
    uint8_t *bits = xnode_alloc(a, (size_t)(n + 7) / 8, true);
    if (bits == NULL) {
      a->release(a);
      return CK_ERR_NO_MEMORY;
    }
    int64_t k = 0;
    for (size_t r = 0; r < runs->n; r++) {
      const xrun *run = &runs->v[r];
      for (int64_t i = 0; i < run->count; i++, k++) {
        if (run->base[i * run->stride] != 0) {
          bits[k >> 3] |= (uint8_t)(1u << (k & 7));
        }
      }
    }
    a->buffers[1] = bits;
    return CK_OK;
  }
  if (runs->n == 1 && runs->v[0].stride == (intptr_t)es) {
    a->buffers[1] = runs->v[0].base; /* zero-copy: the node keeps the array */
    xnode_keep(a, c->src);
    return CK_OK;
  }
  char *dst = xnode_alloc(a, (size_t)n * es, false);
  if (dst == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  a->buffers[1] = dst;
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    if (run->stride == (intptr_t)es) {
      memcpy(dst, run->base, (size_t)run->count * es);
      dst += (size_t)run->count * es;
    } else {
      for (int64_t i = 0; i < run->count; i++, dst += es) {
        memcpy(dst, run->base + i * run->stride, es);
      }
    }
  }
  return CK_OK;
}

static inline size_t str_len(const ck_string *s) {
  return s->begin == NULL ? 0 : (size_t)(s->end - s->begin);
}

/* utf8 / large_utf8 / binary / large_binary: offsets and a copy of the text. */
static ck_status export_offsets_strings(xctx *c, const xruns *runs, ck__arrow_kind *kind,
                                        struct ArrowArray *a) {
  char what[300];
  int64_t n = runs->total;
  size_t total = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++) {
      total += str_len((const ck_string *)(run->base + i * run->stride));
    }
  }
  bool large = *kind == CK__ARROW_LARGE_UTF8 || *kind == CK__ARROW_LARGE_BINARY;
  if (!large && total > (size_t)INT32_MAX) {
    large = true; /* 32-bit offsets cannot hold it: the 64-bit form */
    *kind = *kind == CK__ARROW_UTF8 ? CK__ARROW_LARGE_UTF8 : CK__ARROW_LARGE_BINARY;
  }
  if (total > (size_t)INT64_MAX) {
    return ck__error(CK_ERR_OVERFLOW, "ck_arrow_export", "%s: %zu bytes of text",
                     xwhat(c, what, sizeof what), total);
  }
  ck_status st = xnode_init(a, n, 3, 0);
  if (st != CK_OK) {
    return st;
  }
  size_t osize = large ? 8 : 4;
  char *offsets = xnode_alloc(a, ((size_t)n + 1) * osize, false);
  char *data = offsets == NULL ? NULL : xnode_alloc(a, total, false);
  if (data == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  a->buffers[1] = offsets;
  a->buffers[2] = data;
  int64_t k = 0, pos = 0;
  int32_t *o32 = (int32_t *)offsets;
  int64_t *o64 = (int64_t *)offsets;
  /* Strings written one after another into an arena (a jitted function's
   * results) are adjacent: each run of adjacent texts is one memcpy, not
   * one call per (short) string.  [span_b, span_e) is the pending run; it
   * goes to data + span_at. */
  const char *span_b = NULL, *span_e = NULL;
  int64_t span_at = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++, k++) {
      const ck_string *s = (const ck_string *)(run->base + i * run->stride);
      size_t len = str_len(s);
      if (large) o64[k] = pos; else o32[k] = (int32_t)pos;
      if (len > 0) {
        if (s->begin != span_e) {
          if (span_e != span_b) {
            memcpy(data + span_at, span_b, (size_t)(span_e - span_b));
          }
          span_b = s->begin;
          span_at = pos;
        }
        span_e = s->end;
      }
      pos += (int64_t)len;
    }
  }
  if (span_e != span_b) {
    memcpy(data + span_at, span_b, (size_t)(span_e - span_b));
  }
  if (large) o64[k] = pos; else o32[k] = (int32_t)pos;
  return CK_OK;
}

/* An arena chunk as a candidate variadic buffer. */
typedef struct xchunk {
  const char *begin;
  size_t used;
  int32_t index; /* its variadic buffer index, -1 while unused */
} xchunk;

static int chunk_cmp(const void *a, const void *b) {
  const char *x = ((const xchunk *)a)->begin, *y = ((const xchunk *)b)->begin;
  return x < y ? -1 : x > y;
}

/* A 16-byte view: {int32 size; inline[12]} or {int32 size; prefix[4];
 * int32 buffer; int32 offset}. */
typedef struct xview {
  int32_t size;
  char prefix[4];
  int32_t buffer;
  int32_t offset;
} xview;

enum { POOL_LIMIT = INT32_MAX };

/* string_view / binary_view: inline short values, point into the arena's
 * chunks, copy what lies elsewhere into buffers of the node. */
static ck_status export_views(xctx *c, const char *arrmeta, const xruns *runs,
                              struct ArrowArray *a) {
  char what[300];
  int64_t n = runs->total;
  ck_memblock *arena = ((const ck_string_arrmeta *)arrmeta)->blockref;
  bool is_arena = arena != NULL && (arena->kind == CK_MEMBLOCK_POD ||
                                    arena->kind == CK_MEMBLOCK_ZEROINIT);
  size_t nchunks = 0;
  xchunk *chunks = NULL;
  ck_pod_chunk_info *info = NULL;
  char **pool = NULL;        /* copies of text found in no chunk */
  size_t *pool_used = NULL, npool = 0, pool_cap = 0, pool_bufcap = 0;
  ck_status st = CK_OK;
  bool locked = false;

  if (is_arena) {
    st = ck_pod_memblock_writer_lock(arena);
    if (st != CK_OK) {
      return st;
    }
    locked = true;
    st = ck_pod_memblock_chunks(arena, NULL, 0, &nchunks);
    if (st == CK_OK && nchunks > 0) {
      info = CK_CALLOC(nchunks, sizeof *info);
      chunks = CK_CALLOC(nchunks, sizeof *chunks);
      if (info == NULL || chunks == NULL) {
        st = CK_ERR_NO_MEMORY;
      } else {
        st = ck_pod_memblock_chunks(arena, info, nchunks, &nchunks);
      }
    }
    if (st == CK_OK) {
      for (size_t i = 0; i < nchunks; i++) {
        chunks[i] = (xchunk){info[i].begin, info[i].used, -1};
      }
      if (nchunks > 1) { /* chunks is NULL when there are none */
        qsort(chunks, nchunks, sizeof *chunks, chunk_cmp);
      }
    }
    ck__free(info);
  }
  if (st == CK_OK) {
    st = xnode_init(a, n, 3, 0); /* buffer count set below */
  }
  xview *views = NULL;
  if (st == CK_OK) {
    views = xnode_alloc(a, (size_t)n * sizeof(xview), true);
    if (views == NULL) {
      st = CK_ERR_NO_MEMORY;
    }
  }
  int32_t nused = 0;
  int64_t k = 0;
  for (size_t r = 0; st == CK_OK && r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; st == CK_OK && i < run->count; i++, k++) {
      const ck_string *s = (const ck_string *)(run->base + i * run->stride);
      size_t len = str_len(s);
      xview *v = &views[k];
      if (len > (size_t)INT32_MAX) {
        st = ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s: element %lld holds %zu bytes, more than a view can "
                       "address; request large_utf8/large_binary",
                       xwhat(c, what, sizeof what), (long long)k, len);
        break;
      }
      v->size = (int32_t)len;
      if (len <= 12) {
        if (len > 0) {
          memcpy(v->prefix, s->begin, len);
        }
        continue;
      }
      memcpy(v->prefix, s->begin, 4);
      /* the last chunk starting at or below the text */
      size_t lo = 0, hi = nchunks;
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (chunks[mid].begin <= s->begin) lo = mid + 1; else hi = mid;
      }
      if (lo > 0) {
        xchunk *ch = &chunks[lo - 1];
        size_t off = (size_t)(s->begin - ch->begin);
        if (off <= (size_t)INT32_MAX && off + len <= ch->used) {
          if (ch->index < 0) {
            ch->index = nused++;
          }
          v->buffer = ch->index;
          v->offset = (int32_t)off;
          continue;
        }
      }
      /* not in a chunk: copy into the pool (buffer indices after the chunks,
       * fixed up below) */
      if (npool == 0 || pool_used[npool - 1] + len > pool_bufcap) {
        if (npool == pool_cap) {
          size_t cap = pool_cap ? 2 * pool_cap : 4;
          char **np = ck__realloc(pool, cap * sizeof *np, "ck_arrow_export");
          size_t *nu = np == NULL ? NULL
                                  : ck__realloc(pool_used, cap * sizeof *nu, "ck_arrow_export");
          if (np != NULL) pool = np;
          if (nu != NULL) pool_used = nu;
          if (np == NULL || nu == NULL) {
            st = CK_ERR_NO_MEMORY;
            break;
          }
          pool_cap = cap;
        }
        /* the rest of the text, capped at what one view offset reaches */
        size_t want = 0;
        for (size_t r2 = r; r2 < runs->n && want < (size_t)POOL_LIMIT; r2++) {
          want += (size_t)runs->v[r2].count * 16;
        }
        want = want < len ? len : want;
        want = want > (size_t)POOL_LIMIT ? (size_t)POOL_LIMIT : want;
        pool[npool] = CK_MALLOC(want);
        if (pool[npool] == NULL) {
          st = CK_ERR_NO_MEMORY;
          break;
        }
        pool_used[npool] = 0;
        pool_bufcap = want;
        npool++;
      }
      size_t pi = npool - 1;
      if (pool_used[pi] + len > pool_bufcap) {
        /* grow the newest pool buffer (offsets stay valid: they are relative) */
        size_t cap = pool_bufcap * 2;
        cap = cap < pool_used[pi] + len ? pool_used[pi] + len : cap;
        cap = cap > (size_t)POOL_LIMIT ? (size_t)POOL_LIMIT : cap;
        char *np = ck__realloc(pool[pi], cap, "ck_arrow_export");
        if (np == NULL) {
          st = CK_ERR_NO_MEMORY;
          break;
        }
        pool[pi] = np;
        pool_bufcap = cap;
      }
      memcpy(pool[pi] + pool_used[pi], s->begin, len);
      v->buffer = -1 - (int32_t)pi; /* fixed up below */
      v->offset = (int32_t)pool_used[pi];
      pool_used[pi] += len;
    }
  }
  if (locked) {
    (void)ck_pod_memblock_writer_unlock(arena);
  }
  /* the buffers: validity, views, the used chunks, the pool, their sizes */
  const void **buffers = NULL;
  int64_t *sizes = NULL;
  int64_t nvar = (int64_t)nused + (int64_t)npool;
  if (st == CK_OK) {
    buffers = CK_CALLOC((size_t)(3 + nvar), sizeof *buffers);
    sizes = buffers == NULL ? NULL : xnode_alloc(a, (size_t)(nvar > 0 ? nvar : 1) * 8, true);
    if (sizes == NULL) {
      ck__free(buffers);
      st = CK_ERR_NO_MEMORY;
    }
  }
  if (st == CK_OK) {
    xnode *p = a->private_data;
    ck__free(p->buffers);
    p->buffers = buffers;
    a->buffers = buffers;
    a->n_buffers = 3 + nvar;
    buffers[1] = views;
    for (size_t i = 0; i < nchunks; i++) {
      if (chunks[i].index >= 0) {
        buffers[2 + chunks[i].index] = chunks[i].begin;
        sizes[chunks[i].index] = (int64_t)chunks[i].used;
      }
    }
    if (nused > 0) {
      xnode_keep(a, c->src);
    }
    for (size_t i = 0; i < npool; i++) {
      buffers[2 + nused + (int64_t)i] = pool[i];
      sizes[nused + (int64_t)i] = (int64_t)pool_used[i];
    }
    buffers[2 + nvar] = sizes;
    if (npool > 0) {
      for (int64_t j = 0; j < n; j++) {
        if (views[j].size > 12 && views[j].buffer < 0) {
          views[j].buffer = nused + (-1 - views[j].buffer);
        }
      }
    }
    /* the pool buffers belong to the node now */
    for (size_t i = 0; i < npool; i++) {
      char *mem = pool[i];
      pool[i] = NULL;
      if (st == CK_OK) {
        st = xnode_own(a, mem); /* frees mem on failure */
      } else {
        ck__free(mem);
      }
    }
    npool = 0;
  }
  for (size_t i = 0; i < npool; i++) {
    ck__free(pool[i]);
  }
  ck__free(pool);
  ck__free(pool_used);
  ck__free(chunks);
  if (st != CK_OK) {
    ck__arrow_array_release(a);
  }
  return st;
}

/* Runs of the children when every element of `runs` holds `n` children
 * `stride` apart (fixed and strided dims). */
static ck_status child_runs_fixed(const xruns *runs, int64_t n, intptr_t stride,
                                  xruns *out) {
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++) {
      ck_status st = runs_add(out, run->base + i * run->stride, stride, n);
      if (st != CK_OK) {
        return st;
      }
    }
  }
  return CK_OK;
}

/* The runs of a struct field: every run moved by the field's offset. */
static ck_status child_runs_shifted(const xruns *runs, uintptr_t shift, xruns *out) {
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    ck_status st = runs_add(out, run->base + shift, run->stride, run->count);
    if (st != CK_OK) {
      return st;
    }
  }
  return CK_OK;
}

/* A list node: the offsets from the rows' sizes, the rows' elements as the
 * child's runs (switching to 64-bit offsets when 32 bits cannot hold them). */
static ck_status export_list(const char *arrmeta, const xruns *runs, ck__arrow_kind *kind,
                             struct ArrowArray *a, xruns *children) {
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)arrmeta;
  int64_t n = runs->total;
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++) {
      const ck_var_dim_data *d = (const ck_var_dim_data *)(run->base + i * run->stride);
      if (d->size > 0) {
        ck_status st = runs_add(children, d->begin + vm->offset, vm->stride,
                                (int64_t)d->size);
        if (st != CK_OK) {
          return st;
        }
      }
    }
  }
  bool large = *kind == CK__ARROW_LARGE_LIST;
  if (!large && children->total > INT32_MAX) {
    large = true;
    *kind = CK__ARROW_LARGE_LIST;
  }
  ck_status st = xnode_init(a, n, 2, 1);
  if (st != CK_OK) {
    return st;
  }
  size_t osize = large ? 8 : 4;
  char *offsets = xnode_alloc(a, ((size_t)n + 1) * osize, false);
  if (offsets == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  a->buffers[1] = offsets;
  int64_t k = 0, pos = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++, k++) {
      const ck_var_dim_data *d = (const ck_var_dim_data *)(run->base + i * run->stride);
      if (large) ((int64_t *)offsets)[k] = pos; else ((int32_t *)offsets)[k] = (int32_t)pos;
      pos += (int64_t)d->size;
    }
  }
  if (large) ((int64_t *)offsets)[k] = pos; else ((int32_t *)offsets)[k] = (int32_t)pos;
  return CK_OK;
}

/*
 * The validity buffer and exact null count of node `a`, whose elements
 * (`runs`) are the slots of an option with arrmeta `m`.  One run along the
 * bitmap's own progression shares the bitmap when its first bit starts a
 * byte (Arrow applies the node's one offset, 0 here, to every buffer) and
 * copies it shifted otherwise; any other layout (a slice with a step, a
 * transpose, list rows) is read slot by slot.  No buffer when nothing is
 * null.
 */
static ck_status export_validity(xctx *c, const ck_option_arrmeta *m, const xruns *runs,
                                 struct ArrowArray *a) {
  int64_t n = runs->total;
  if (m->bits == NULL || n == 0) {
    return CK_OK;
  }
  if (runs->n == 1 && runs->v[0].stride == m->step) {
    const xrun *r = &runs->v[0];
    int64_t b0 = -1, b1 = -1;
    if (ck_option_slot_bit(m, r->base, &b0) == CK_OK &&
        ck_option_slot_bit(m, r->base + (r->count - 1) * r->stride, &b1) == CK_OK &&
        b0 >= 0 && b1 == b0 + n - 1) {
      int64_t nulls = n - ck_bitmap_count_set(m->bits, b0, n);
      if (nulls > 0 && b0 % 8 == 0) {
        a->buffers[0] = m->bits + b0 / 8; /* zero-copy: the node keeps the array */
        xnode_keep(a, c->src);
      } else if (nulls > 0) {
        uint8_t *dst = xnode_alloc(a, (size_t)(n + 7) / 8, true);
        if (dst == NULL) {
          return CK_ERR_NO_MEMORY;
        }
        ck_bitmap_and(dst, 0, m->bits, b0, NULL, 0, n);
        a->buffers[0] = dst;
      }
      a->null_count = nulls;
      return CK_OK;
    }
    ck_clear_error();
  }
  uint8_t *dst = xnode_alloc(a, (size_t)(n + 7) / 8, true);
  if (dst == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  int64_t k = 0, nulls = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++, k++) {
      bool valid;
      ck_status st = ck_option_get_valid(m, run->base + i * run->stride, &valid);
      if (st != CK_OK) {
        return st;
      }
      if (valid) {
        dst[k >> 3] |= (uint8_t)(1u << (k & 7));
      } else {
        nulls++;
      }
    }
  }
  if (nulls > 0) {
    a->buffers[0] = dst;
  }
  a->null_count = nulls;
  return CK_OK;
}

static ck_status export_node(xctx *c, ck_type t, const char *arrmeta, const xruns *runs,
                             const struct ArrowSchema *req, const char *name,
                             struct ArrowSchema *sout, struct ArrowArray *aout) {
  if (ck_type_is_option(t)) {
    /* the value's node with the option's bitmap as its validity buffer */
    ck_status st = export_node(c, ck_type_element(t), arrmeta + sizeof(ck_option_arrmeta),
                               runs, req, name, sout, aout);
    if (st == CK_OK) {
      st = export_validity(c, (const ck_option_arrmeta *)(const void *)arrmeta, runs, aout);
      if (st != CK_OK) {
        ck__arrow_schema_release(sout);
        ck__arrow_array_release(aout);
      }
    }
    return st;
  }
  char fmt[96];
  ck__arrow_kind kind;
  bool use_req;
  memset(sout, 0, sizeof *sout);
  memset(aout, 0, sizeof *aout);
  ck_status st = choose(c, t, arrmeta, req, fmt, sizeof fmt, &kind, &use_req);
  if (st != CK_OK) {
    return st;
  }
  ck_type_id id = ck_type_id_of(t);
  int64_t nch = 0;
  xruns children = {NULL, 0, 0, 0};
  switch (id) {
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES:
    if (kind == CK__ARROW_UTF8_VIEW || kind == CK__ARROW_BINARY_VIEW) {
      st = export_views(c, arrmeta, runs, aout);
    } else {
      st = export_offsets_strings(c, runs, &kind, aout);
      if (kind == CK__ARROW_LARGE_UTF8) snprintf(fmt, sizeof fmt, "U");
      if (kind == CK__ARROW_LARGE_BINARY) snprintf(fmt, sizeof fmt, "Z");
    }
    break;
  case CK_TYPE_VAR_DIM:
    nch = 1;
    st = export_list(arrmeta, runs, &kind, aout, &children);
    snprintf(fmt, sizeof fmt, "%s", kind == CK__ARROW_LARGE_LIST ? "+L" : "+l");
    break;
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)arrmeta;
    nch = 1;
    st = child_runs_fixed(runs, dm->size, dm->stride, &children);
    if (st == CK_OK) {
      st = xnode_init(aout, runs->total, 1, 1);
    }
    break;
  }
  case CK_TYPE_STRUCT:
    nch = (int64_t)ck_struct_field_count(t);
    st = xnode_init(aout, runs->total, 1, nch);
    break;
  default:
    st = export_numbers(c, t, runs, aout);
    break;
  }
  if (st == CK_OK) {
    st = ck__arrow_schema_init(sout, fmt, name, ARROW_FLAG_NULLABLE, nch);
  }
  for (int64_t i = 0; st == CK_OK && i < nch; i++) {
    ck_type ct;
    const char *cname = "item", *cmeta;
    xruns shifted = {NULL, 0, 0, 0};
    const xruns *cruns = &children;
    if (id == CK_TYPE_STRUCT) {
      size_t moff;
      (void)ck_struct_field(t, (size_t)i, &cname, &ct, NULL, &moff);
      cmeta = arrmeta + moff;
      st = child_runs_shifted(runs, ((const uintptr_t *)arrmeta)[i], &shifted);
      cruns = &shifted;
    } else {
      ct = ck_type_element(t);
      cmeta = arrmeta + (id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta)
                                               : sizeof(ck_dim_arrmeta));
    }
    if (st == CK_OK) {
      size_t mark = ck__arrow_path_push(&c->path, id == CK_TYPE_STRUCT ? cname : NULL);
      const struct ArrowSchema *rc = req_child(req, use_req, i);
      st = export_node(c, ct, cmeta, cruns, rc, field_name(id, rc, cname),
                       sout->children[i], aout->children[i]);
      ck__arrow_path_pop(&c->path, mark);
    }
    runs_free(&shifted);
  }
  runs_free(&children);
  if (st != CK_OK) {
    ck__arrow_schema_release(sout);
    ck__arrow_array_release(aout);
  }
  return st;
}

/* ---- entry points ------------------------------------------------------------------ */

/* The element type, its arrmeta and the runs of the outermost dim of `a`. */
static ck_status top_level(const ck_array_preamble *a, const char *func, ck_type *el,
                           const char **elmeta, xruns *runs) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "the array is NULL");
  }
  ck_type t = ck_array_type(a);
  const char *arrmeta = ck_array_arrmeta(a);
  ck_type_id id = ck_type_id_of(t);
  if (id == CK_TYPE_VAR_DIM) {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)arrmeta;
    const ck_var_dim_data *d = (const ck_var_dim_data *)a->data;
    *elmeta = arrmeta + sizeof *vm;
    *el = ck_type_element(t);
    return runs_add(runs, d->begin + vm->offset, vm->stride, (int64_t)d->size);
  }
  if (id == CK_TYPE_FIXED_DIM || id == CK_TYPE_STRIDED_DIM) {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)arrmeta;
    *elmeta = arrmeta + sizeof *dm;
    *el = ck_type_element(t);
    return runs_add(runs, a->data, dm->stride, dm->size);
  }
  char ts[128];
  return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                   "a 0-d array (type %s) has no Arrow form: make it 1-d first "
                   "(a[None] or reshape(1))", ck__type_str(t, ts, sizeof ts));
}

/* ---- dictionary columns ------------------------------------------------------------- */

/* A one-dim dictionary column (`strided * dictionary[I, V]`, `strided *
 * ?dictionary[...]`)? */
static bool is_dictionary_column(const ck_array_preamble *a) {
  ck_type el = a != NULL && ck_type_ndim(a->type) == 1 ? ck_type_element(a->type) : NULL;
  if (ck_type_is_option(el)) {
    el = ck_type_element(el);
  }
  return ck_type_is_dictionary(el);
}

/* Its indices exported as an integer array whose dictionary is its values
 * exported (`requested`'s dictionary, if any, shapes the values). */
static ck_status export_dictionary(ck_array_preamble *a, const struct ArrowSchema *requested,
                                   struct ArrowSchema *out_schema,
                                   struct ArrowArray *out_array) {
  ck_array_preamble *idx = NULL, *vals = NULL, *empty = NULL;
  ck_status st = ck_dictionary_array_indices(a, &idx);
  if (st == CK_OK) {
    st = ck_dictionary_array_values(a, &vals);
  }
  ck_type dict = ck_type_dtype(a->type);
  dict = ck_type_is_option(dict) ? ck_type_element(dict) : dict;
  if (st == CK_OK && vals == NULL) { /* no values: an empty dictionary */
    ck_type t = NULL;
    intptr_t zero = 0;
    st = ck_strided_dim_type_new(ck_dictionary_value_type(dict), &t);
    if (st == CK_OK) {
      st = ck_array_empty(t, &zero, 1, CK_ARRAY_READ, &empty);
    }
    ck_type_decref(t);
    vals = empty;
  }
  struct ArrowSchema is = {0}, vs = {0};
  struct ArrowArray ia = {0}, va = {0};
  const struct ArrowSchema *vreq = requested != NULL ? requested->dictionary : NULL;
  if (st == CK_OK) {
    st = out_array != NULL ? ck_arrow_export(idx, NULL, &is, &ia)
                           : ck_arrow_export_schema(idx, NULL, &is);
  }
  if (st == CK_OK) {
    st = out_array != NULL ? ck_arrow_export(vals, vreq, &vs, &va)
                           : ck_arrow_export_schema(vals, vreq, &vs);
  }
  ck_array_decref(idx);
  ck_array_decref(empty);
  if (st == CK_OK) {
    st = ck__arrow_dictionary_attach(&is, out_array != NULL ? &ia : NULL, &vs,
                                     out_array != NULL ? &va : NULL,
                                     ck_dictionary_ordered(dict));
  } else {
    ck__arrow_schema_release(&is);
    ck__arrow_array_release(&ia);
    ck__arrow_schema_release(&vs);
    ck__arrow_array_release(&va);
  }
  if (st != CK_OK) {
    return st;
  }
  if (out_schema != NULL) *out_schema = is; else is.release(&is);
  if (out_array != NULL) *out_array = ia;
  return CK_OK;
}

ck_status ck_arrow_export_schema(const ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowSchema *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  memset(out, 0, sizeof *out);
  if (requested != NULL && requested->release == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the requested schema is released");
  }
  if (is_dictionary_column(a)) {
    return export_dictionary((ck_array_preamble *)a, requested, out, NULL);
  }
  xctx c = {(ck_array_preamble *)a, {{0}, 0}};
  ck_type el;
  const char *elmeta;
  xruns runs = {NULL, 0, 0, 0};
  ck_status st = top_level(a, __func__, &el, &elmeta, &runs);
  runs_free(&runs);
  if (st != CK_OK) {
    return st;
  }
  return schema_node(&c, el, elmeta, requested, "", out);
}

ck_status ck_arrow_export(ck_array_preamble *a, const struct ArrowSchema *requested,
                          struct ArrowSchema *out_schema, struct ArrowArray *out_array) {
  if (out_schema != NULL) memset(out_schema, 0, sizeof *out_schema);
  if (out_array != NULL) memset(out_array, 0, sizeof *out_array);
  if (requested != NULL && requested->release == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the requested schema is released");
  }
  if (is_dictionary_column(a)) {
    return export_dictionary(a, requested, out_schema, out_array);
  }
  xctx c = {a, {{0}, 0}};
  ck_type el;
  const char *elmeta;
  xruns runs = {NULL, 0, 0, 0};
  ck_status st = top_level(a, __func__, &el, &elmeta, &runs);
  struct ArrowSchema s;
  struct ArrowArray arr;
  if (st == CK_OK) {
    st = export_node(&c, el, elmeta, &runs, requested, "", &s, &arr);
  }
  runs_free(&runs);
  if (st != CK_OK) {
    return st;
  }
  if (out_schema != NULL) *out_schema = s; else s.release(&s);
  if (out_array != NULL) *out_array = arr; else arr.release(&arr);
  return CK_OK;
}

ck_status ck_arrow_export_device(ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowSchema *out_schema,
                                 struct ArrowDeviceArray *out_array) {
  if (out_array == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out_array is NULL");
  }
  memset(out_array, 0, sizeof *out_array);
  ck_status st = ck_arrow_export(a, requested, out_schema, &out_array->array);
  out_array->device_id = -1;
  out_array->device_type = ARROW_DEVICE_CPU;
  out_array->sync_event = NULL;
  return st;
}

/* ---- streams of one array ---------------------------------------------------------- */

typedef struct xstream {
  struct ArrowSchema schema;
  struct ArrowArray array;  /* released once handed out */
  char error[256];
} xstream;

static int xstream_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  if (s == NULL || s->release == NULL || out == NULL) {
    return 22; /* EINVAL */
  }
  xstream *p = s->private_data;
  if (ck__arrow_schema_copy(&p->schema, out) != CK_OK) {
    snprintf(p->error, sizeof p->error, "%s", ck_last_error());
    return 12; /* ENOMEM */
  }
  return 0;
}

static int xstream_get_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  if (s == NULL || s->release == NULL || out == NULL) {
    return 22;
  }
  xstream *p = s->private_data;
  *out = p->array; /* moved out; after the first call, a released array: the end */
  p->array.release = NULL;
  return 0;
}

static const char *xstream_get_last_error(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) {
    return NULL;
  }
  xstream *p = s->private_data;
  return p->error[0] != '\0' ? p->error : NULL;
}

static void xstream_release(struct ArrowArrayStream *s) {
  if (s == NULL || s->release == NULL) {
    return;
  }
  xstream *p = s->private_data;
  ck__arrow_schema_release(&p->schema);
  ck__arrow_array_release(&p->array);
  ck__free(p);
  s->release = NULL;
}

ck_status ck_arrow_export_stream(ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowArrayStream *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  memset(out, 0, sizeof *out);
  xstream *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  ck_status st = ck_arrow_export(a, requested, &p->schema, &p->array);
  if (st != CK_OK) {
    ck__free(p);
    return st;
  }
  out->get_schema = xstream_get_schema;
  out->get_next = xstream_get_next;
  out->get_last_error = xstream_get_last_error;
  out->release = xstream_release;
  out->private_data = p;
  return CK_OK;
}
