/*
 * apply.c -- applying a kernel to whole arrays (see ckernel/apply.h):
 * ck_array_apply (any child factory, lifted with broadcasting; a new result
 * or a given destination, converting into it when its dtype differs) and
 * ck_array_assign; both run the outermost dimension on the thread pool when
 * the work is large.  Destinations holding strings, bytes or var dims run
 * there too: each thread but the caller writes into arenas of its own (a
 * kernel tree built for a copy of the destination's arrmeta naming them),
 * whose chunks the destination's arenas adopt afterwards
 * (ck_pod_memblock_adopt: no byte moves).
 */
#include "ckernel/core_dims.h"
#include "kernels/lift_internal.h"
#include "kernels/parallel_internal.h"
#include "types/type_internal.h"

#include <inttypes.h>
#include <string.h>

/* ---- checks ------------------------------------------------------------------ */

static ck_status ck__check_array(const ck_array_preamble *a, const char *what) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_array", "%s is NULL", what);
  }
  if (a->memblock.kind != CK_MEMBLOCK_ARRAY) {
    return ck__error(CK_ERR_TYPE, "ck_array", "%s is not an array memblock", what);
  }
  return CK_OK;
}

/* ---- overlap ----------------------------------------------------------------- */

/* Where an array's own data lies: its leading fixed/strided dims and the
 * item after them (a scalar, string, struct or var dim's {begin, size}). */
typedef struct ck__extent {
  const char *lo, *hi; /* [lo, hi); lo == hi: no bytes */
  size_t ndim;
  intptr_t size[CK_TYPE_MAX_DEPTH];
  intptr_t stride[CK_TYPE_MAX_DEPTH];
  ck_type item;
} ck__extent;

static void ck__extent_of(const ck_array_preamble *a, ck__extent *e) {
  ck_type t = a->type;
  const char *m = (const char *)(a + 1);
  intptr_t lo = 0, hi = 0;
  bool empty = false;
  e->ndim = 0;
  while (ck__is_dim(t) && t->id != CK_TYPE_VAR_DIM) {
    const ck_dim_arrmeta *d = (const ck_dim_arrmeta *)(const void *)m;
    e->size[e->ndim] = d->size;
    e->stride[e->ndim] = d->stride;
    e->ndim++;
    if (d->size <= 0) {
      empty = true;
    } else if (d->stride < 0) {
      lo += (d->size - 1) * d->stride; /* within the array: no overflow */
    } else {
      hi += (d->size - 1) * d->stride;
    }
    m += sizeof(ck_dim_arrmeta);
    t = t->element;
  }
  e->item = t;
  size_t isz = ck_type_data_size(t);
  if (empty || isz == 0 || a->data == NULL) {
    e->lo = e->hi = a->data;
    return;
  }
  e->lo = a->data + lo;
  e->hi = a->data + hi + (intptr_t)isz;
}

/* Does the source's memory overlap the destination's, other than as the
 * destination itself (same data, item and strides as broadcast: in-place)? */
static bool ck__partial_overlap(const ck__extent *d, const ck_array_preamble *dst,
                                const ck_array_preamble *src) {
  ck__extent s;
  ck__extent_of(src, &s);
  if (s.lo == s.hi || d->lo == d->hi || s.hi <= d->lo || d->hi <= s.lo) {
    return false;
  }
  if (src->data != dst->data || s.ndim > d->ndim ||
      !ck_type_equal(s.item, d->item)) {
    return true;
  }
  /* aligned from the right; a missing or size-1 source dim broadcasts
   * (stride 0), which matches only a destination dim of size 1 */
  for (size_t i = 0; i < d->ndim; i++) {
    size_t k = d->ndim - 1 - i;
    intptr_t dsz = d->size[k], dst_stride = d->stride[k];
    intptr_t ssz = 1, sst = 0;
    if (i < s.ndim) {
      ssz = s.size[s.ndim - 1 - i];
      sst = s.stride[s.ndim - 1 - i];
    }
    if (dsz == 1) {
      continue;
    }
    if (ssz != dsz || sst != dst_stride) {
      return true;
    }
  }
  return false;
}

/* A new C-contiguous copy of `a` (strided dims; its own arenas). */
static ck_status ck__copy_of(const ck_array_preamble *a, ck_array_preamble **out) {
  const char *meta = ck_array_arrmeta(a);
  ck_type rt;
  intptr_t shape[CK_TYPE_MAX_DEPTH];
  size_t nstrided = 0;
  ck_status st = ck_elementwise_result_type(ck_type_dtype(a->type), 1, &a->type,
                                            &meta, &rt, shape, CK_TYPE_MAX_DEPTH,
                                            &nstrided);
  if (st != CK_OK) {
    return st;
  }
  st = ck_array_empty_uninit(rt, shape, nstrided, CK_ARRAY_DEFAULT_FLAGS, out);
  ck_type_decref(rt);
  if (st == CK_OK) {
    st = ck_array_assign(*out, a, CK_ERRMODE_NOCHECK);
    if (st != CK_OK) {
      ck_array_decref(*out);
      *out = NULL;
    }
  }
  return st;
}

/* Replace every source that partially overlaps `dst` by a copy (NumPy's
 * rule): tmp[j] holds the copy (a new reference) or NULL; data[j] and
 * meta[j] are updated. */
static ck_status ck__copy_overlapping(const ck_array_preamble *dst, size_t nsrc,
                                     const ck_array_preamble *const *srcs,
                                     const char **data, const char **meta,
                                     ck_type *types, ck_array_preamble **tmp) {
  ck__extent d;
  ck__extent_of(dst, &d);
  for (size_t j = 0; j < nsrc; j++) {
    tmp[j] = NULL;
    if (!ck__partial_overlap(&d, dst, srcs[j])) {
      continue;
    }
    for (size_t k = 0; k < j && tmp[j] == NULL; k++) {
      if (srcs[k] == srcs[j] && tmp[k] != NULL) { /* the same source twice */
        ck_array_incref(tmp[k]);
        tmp[j] = tmp[k];
      }
    }
    if (tmp[j] == NULL) {
      ck_status st = ck__copy_of(srcs[j], &tmp[j]);
      if (st != CK_OK) {
        return ck__error_context(st, "ck_array_apply",
                                 "copying source %zu, which overlaps the "
                                 "destination", j);
      }
    }
    data[j] = tmp[j]->data;
    meta[j] = ck_array_arrmeta(tmp[j]);
    types[j] = tmp[j]->type;
  }
  return CK_OK;
}

/* ---- destination arenas ---------------------------------------------------------- */

/* The arenas a destination's arrmeta references (strings, bytes, var dims,
 * nested in dims and struct fields), each once, sorted by address so that
 * every caller locks them in the same order. */
enum { CK__MAX_ARENAS = 64 };
typedef struct ck__arenas {
  size_t n;
  ck_memblock *mb[CK__MAX_ARENAS];
  bool other; /* a blockref that is NULL or no arena (not collected) */
} ck__arenas;

static ck_status ck__collect_arenas(ck_type t, const char *m, ck__arenas *out,
                                    unsigned depth) {
  if (!ck__is_desc(t) || !(t->flags & CK_TYPE_FLAG_BLOCKREF) || m == NULL ||
      depth > CK_TYPE_MAX_DEPTH) {
    return CK_OK;
  }
  ck_memblock *mb = NULL;
  switch (t->id) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM:
    return ck__collect_arenas(t->element, m + sizeof(ck_dim_arrmeta), out, depth + 1);
  case CK_TYPE_VAR_DIM: {
    mb = ((const ck_var_dim_arrmeta *)(const void *)m)->blockref;
    ck_status st = ck__collect_arenas(t->element, m + sizeof(ck_var_dim_arrmeta), out,
                                      depth + 1);
    if (st != CK_OK) {
      return st;
    }
    break;
  }
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES:
    mb = ((const ck_string_arrmeta *)(const void *)m)->blockref;
    break;
  case CK_TYPE_OPTION:
    /* validity bits of neighbouring slots share bytes: one writer (serial) */
    out->other = true;
    return ck__collect_arenas(t->element, m + sizeof(ck_option_arrmeta), out, depth + 1);
  case CK_TYPE_STRUCT:
    for (size_t i = 0; i < t->field_count; i++) {
      ck_status st = ck__collect_arenas(t->field_types[i],
                                        m + t->field_arrmeta_offsets[i], out,
                                        depth + 1);
      if (st != CK_OK) {
        return st;
      }
    }
    return CK_OK;
  default:
    return CK_OK; /* pointers: the target is not written through the arrmeta */
  }
  if (mb == NULL ||
      (mb->kind != CK_MEMBLOCK_POD && mb->kind != CK_MEMBLOCK_ZEROINIT)) {
    out->other = true;
    return CK_OK;
  }
  size_t i = 0;
  while (i < out->n && (uintptr_t)out->mb[i] < (uintptr_t)mb) {
    i++;
  }
  if (i < out->n && out->mb[i] == mb) {
    return CK_OK;
  }
  if (out->n == CK__MAX_ARENAS) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "the destination references more than %d arenas",
                    CK__MAX_ARENAS);
  }
  memmove(out->mb + i + 1, out->mb + i, (out->n - i) * sizeof out->mb[0]);
  out->mb[i] = mb;
  out->n++;
  return CK_OK;
}

static void ck__unlock_arenas(const ck__arenas *a, size_t n) {
  while (n > 0) {
    (void)ck_pod_memblock_writer_unlock(a->mb[--n]);
  }
}

static ck_status ck__lock_arenas(const ck_array_preamble *dst, ck__arenas *a) {
  a->n = 0;
  a->other = false;
  ck_status st = ck__collect_arenas(dst->type, ck_array_arrmeta(dst), a, 0);
  for (size_t i = 0; st == CK_OK && i < a->n; i++) {
    st = ck_pod_memblock_writer_lock(a->mb[i]);
    if (st != CK_OK) {
      ck__unlock_arenas(a, i);
    }
  }
  if (st != CK_OK) {
    a->n = 0;
  }
  return st;
}

/* ---- running a built tree ---------------------------------------------------------- */

/* A kernel with core dims: the signature's patterns (NULL for an
 * elementwise kernel). */
typedef struct ck__core_sig {
  ck_type dst;
  const ck_type *src;
} ck__core_sig;

/* What builds the single-request tree of one application for an arrmeta of
 * its destination: the destination's own, or a worker's copy naming the
 * worker's arenas. */
typedef struct ck__tree_spec {
  ck_child_kernel_factory child; /* NULL: an assignment under `mode`    */
  void *child_data;
  const ck__core_sig *core;      /* kernels with core dims, else NULL   */
  ck_errmode mode;
  ck_type dst_type;
  size_t nsrc;
  const ck_type *types;
  const char *const *meta;
} ck__tree_spec;

static ck_status ck__build_tree(const ck__tree_spec *s, ck_kernel_builder *kb,
                                const char *dst_arrmeta) {
  if (s->child == NULL) {
    return ck_make_assignment_kernel(kb, 0, s->dst_type, dst_arrmeta, s->types[0],
                                     s->meta[0], CK_KERNEL_REQUEST_SINGLE, s->mode, NULL);
  }
  if (s->core != NULL) {
    return ck_make_core_kernel(kb, 0, s->core->dst, s->dst_type, dst_arrmeta, s->nsrc,
                               s->core->src, s->types, s->meta, CK_KERNEL_REQUEST_SINGLE,
                               s->child, s->child_data, NULL);
  }
  return ck_make_elementwise_kernel(kb, 0, s->dst_type, dst_arrmeta, s->nsrc, s->types,
                                    s->meta, CK_KERNEL_REQUEST_SINGLE, s->child,
                                    s->child_data, NULL);
}

/* Whether a tree whose root is `root` splits over the pool, and how: the
 * rows of the root's dim and the fewest rows per chunk.  The work is the
 * destination's leading fixed/strided elements (a var dim below them, or a
 * string, counts as one element); see apply.h for the thresholds. */
static bool ck__parallel_plan(const ck_prefix *root, ck_type dst_type,
                              const char *dst_arrmeta, size_t *rows, size_t *min_chunk) {
  if (!ck__is_strided_dim_kernel(root) || !ck__is_dim(dst_type) ||
      ck_get_num_threads() <= 1) {
    return false;
  }
  /* the root may have absorbed inner dims (lift.c coalesces contiguous
   * ones): elements per row are every leading element over its rows */
  const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(const void *)root;
  size_t total = 1;
  ck_type t = dst_type;
  const char *m = dst_arrmeta;
  while (ck__is_dim(t) && t->id != CK_TYPE_VAR_DIM) {
    intptr_t n = ((const ck_dim_arrmeta *)(const void *)m)->size;
    if (!ck__mul_size(total, (size_t)n, &total)) {
      return false;
    }
    m += ck__dim_header_size(t);
    t = t->element;
  }
  size_t r = (size_t)k->size;
  size_t inner = r > 0 ? total / r : 0;
  if (inner == 0 || total < CK_PARALLEL_MIN_ELEMENTS) {
    return false;
  }
  size_t mc = (CK_PARALLEL_MIN_CHUNK_ELEMENTS + inner - 1) / inner;
  if (r < 2 * mc) {
    return false;
  }
  *rows = r;
  *min_chunk = mc;
  return true;
}

/* Rows [begin, end) of the root's dim, by the child kernel of the thread's
 * tree (one tree shared by every thread, or one per thread). */
typedef struct ck__par_ctx {
  ck_prefix *const *child; /* indexed by thread (per_thread) or [0]   */
  bool per_thread;
  char *dst;
  intptr_t dst_stride;
  const char *const *src;
  const intptr_t *src_stride;
  size_t nsrc;
} ck__par_ctx;

static ck_status ck__par_rows(void *ctx, size_t begin, size_t end,
                              unsigned thread_index) {
  const ck__par_ctx *c = ctx;
  ck_prefix *child = c->child[c->per_thread ? thread_index : 0];
  const char *s[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < c->nsrc; j++) {
    s[j] = c->src[j] + (intptr_t)begin * c->src_stride[j];
  }
  ck_status st = (ck_status)ck_prefix_strided(child)(
      c->dst + (intptr_t)begin * c->dst_stride, c->dst_stride, s, c->src_stride,
      end - begin, child);
  if (st != CK_OK) {
    ck_error_offset_element((int64_t)begin); /* the failing row counts from begin */
  }
  return st;
}

/* In `m`, a copy of arrmeta of type `t`, every blockref that is one of the
 * arenas `from` becomes the arena at the same index in `to`. */
static void ck__swap_arenas(ck_type t, char *m, const ck__arenas *from,
                            ck_memblock *const *to, unsigned depth) {
  if (!ck__is_desc(t) || !(t->flags & CK_TYPE_FLAG_BLOCKREF) || depth > CK_TYPE_MAX_DEPTH) {
    return;
  }
  ck_memblock **slot;
  switch (t->id) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM:
    ck__swap_arenas(t->element, m + sizeof(ck_dim_arrmeta), from, to, depth + 1);
    return;
  case CK_TYPE_VAR_DIM:
    slot = &((ck_var_dim_arrmeta *)(void *)m)->blockref;
    ck__swap_arenas(t->element, m + sizeof(ck_var_dim_arrmeta), from, to, depth + 1);
    break;
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES:
    slot = &((ck_string_arrmeta *)(void *)m)->blockref;
    break;
  case CK_TYPE_STRUCT:
    for (size_t i = 0; i < t->field_count; i++) {
      ck__swap_arenas(t->field_types[i], m + t->field_arrmeta_offsets[i], from, to,
                      depth + 1);
    }
    return;
  default:
    return;
  }
  for (size_t i = 0; i < from->n; i++) {
    if (*slot == from->mb[i]) {
      *slot = to[i];
      return;
    }
  }
}

/* May the threads write into arenas of their own?  Not when a blockref of
 * the destination is no arena (or NULL), when one of its arenas is
 * finalized (the kernels report that), or when a source references one of
 * them: kernels may behave differently when source and destination share
 * an arena (strings are then shared, not copied). */
static bool ck__thread_arenas_ok(const ck__tree_spec *spec, const ck__arenas *dst) {
  if (dst->n == 0 || dst->other) {
    return false;
  }
  for (size_t i = 0; i < dst->n; i++) {
    ck_pod_stats stats;
    if (ck_pod_memblock_stats(dst->mb[i], &stats) != CK_OK || stats.finalized) {
      return false;
    }
  }
  for (size_t j = 0; j < spec->nsrc; j++) {
    ck__arenas src = {.n = 0};
    if (ck__collect_arenas(spec->types[j], spec->meta[j], &src, 0) != CK_OK) {
      return false;
    }
    for (size_t a = 0; a < src.n; a++) {
      for (size_t i = 0; i < dst->n; i++) {
        if (src.mb[a] == dst->mb[i]) {
          return false;
        }
      }
    }
  }
  return true;
}

/* The rows split over the pool into a destination holding arenas: thread 0
 * (the caller) runs `kb0`, built for the destination itself; each other
 * thread a tree built for a copy of the destination's arrmeta whose arenas
 * (`dst`) are new ones of its own, of the same kinds.  Afterwards -- after
 * a failure too, since rows written before it point into them -- the
 * destination's arenas adopt the chunks of the threads' arenas. */
static ck_status ck__run_thread_arenas(const ck__tree_spec *spec, ck_kernel_builder *kb0,
                                       const ck__arenas *dst, const char *dst_arrmeta,
                                       char *dst_data, const char *const *src, size_t rows,
                                       size_t min_chunk) {
  unsigned nt = ck_get_num_threads();
  if (nt > CK_MAX_THREADS) {
    nt = CK_MAX_THREADS;
  }
  if (rows / min_chunk < nt) {
    nt = (unsigned)(rows / min_chunk); /* >= 2: ck__parallel_plan */
  }
  size_t extra = nt - 1, na = dst->n;
  size_t amsize = ck_type_arrmeta_size(spec->dst_type);
  ck_kernel_builder *kbs = CK_CALLOC(extra, sizeof *kbs);
  ck_memblock **mbs = CK_CALLOC(extra * na, sizeof *mbs);
  char *metas = CK_CALLOC(extra, amsize);
  if (kbs == NULL || mbs == NULL || metas == NULL) {
    ck__free(kbs);
    ck__free(mbs);
    ck__free(metas);
    return CK_ERR_NO_MEMORY;
  }
  for (size_t t = 0; t < extra; t++) {
    ck_kernel_builder_init(&kbs[t]);
  }
  ck_prefix *root0 = ck_kernel_builder_get(kb0, 0);
  const ck__strided_dim_kernel *k0 = (const ck__strided_dim_kernel *)(const void *)root0;
  ck_prefix *children[CK_MAX_THREADS];
  children[0] = ck_prefix_child(root0, k0->child_offset);
  ck_status st = CK_OK;
  for (size_t t = 0; st == CK_OK && t < extra; t++) {
    ck_memblock **own = &mbs[t * na];
    for (size_t i = 0; st == CK_OK && i < na; i++) {
      st = dst->mb[i]->kind == CK_MEMBLOCK_ZEROINIT ? ck_zeroinit_memblock_new(0, &own[i])
                                                   : ck_pod_memblock_new(0, &own[i]);
    }
    char *meta = metas + t * amsize;
    if (st == CK_OK) {
      memcpy(meta, dst_arrmeta, amsize);
      ck__swap_arenas(spec->dst_type, meta, dst, own, 0);
      st = ck__build_tree(spec, &kbs[t], meta);
    }
    if (st == CK_OK) {
      ck_prefix *root = ck_kernel_builder_get(&kbs[t], 0);
      const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(const void *)root;
      if (!ck__is_strided_dim_kernel(root) || k->size != k0->size) {
        st = CK_ERROR(CK_ERR_INVALID_STATE, "a worker's kernel tree differs in shape");
      } else {
        children[t + 1] = ck_prefix_child(root, k->child_offset);
      }
    }
  }
  if (st == CK_OK) {
    ck__par_ctx c = {children, true, dst_data, k0->dst_stride, src, k0->src_stride,
                     spec->nsrc};
    st = ck__parallel_for_threads(rows, min_chunk, nt, ck__par_rows, &c);
  }
  for (size_t t = 0; t < extra; t++) {
    ck_kernel_builder_destroy(&kbs[t]); /* the leaves' references to the arenas */
    for (size_t i = 0; i < na; i++) {
      ck_memblock *own = mbs[t * na + i];
      if (own != NULL) {
        /* cannot fail: same kind, distinct, the destination's open
         * (ck__thread_arenas_ok) */
        (void)ck_pod_memblock_adopt(dst->mb[i], own);
        ck_memblock_decref(own);
      }
    }
  }
  ck__free(kbs);
  ck__free(mbs);
  ck__free(metas);
  return st;
}

/* Run the tree in `kb0` (built for the destination's own arrmeta) over the
 * destination data, on the pool when the plan says so. */
static ck_status ck__run_tree(const ck__tree_spec *spec, ck_kernel_builder *kb0,
                              const ck__arenas *arenas, const char *dst_arrmeta,
                              char *dst_data, const char *const *src) {
  ck_prefix *root = ck_kernel_builder_get(kb0, 0);
  size_t rows, min_chunk;
  if (ck__parallel_plan(root, spec->dst_type, dst_arrmeta, &rows, &min_chunk)) {
    if (!(ck_type_flags(spec->dst_type) & CK_TYPE_FLAG_BLOCKREF)) {
      /* no arenas: every thread calls the same tree (kernels are threadsafe) */
      const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(void *)root;
      ck_prefix *child = ck_prefix_child(root, k->child_offset);
      ck__par_ctx c = {&child, false, dst_data, k->dst_stride, src, k->src_stride,
                       spec->nsrc};
      return ck_parallel_for(rows, min_chunk, ck__par_rows, &c);
    }
    if (ck__thread_arenas_ok(spec, arenas)) {
      return ck__run_thread_arenas(spec, kb0, arenas, dst_arrmeta, dst_data, src, rows,
                                   min_chunk);
    }
  }
  return (ck_status)ck_prefix_single(root)(dst_data, src, root);
}

/* error.h: the failing element's index in the destination's outer dims.
 * The lifted tree may have coalesced contiguous dims (lift.c), so the layers
 * may have recorded fewer indices than the destination has outer dims; then
 * the element's address decides (fixed/strided outer dims, no overlap). */
static void ck__locate_failure(const ck__tree_spec *spec, const ck_array_preamble *dst,
                               const char *dst_data) {
  const void *addr;
  int64_t idx[CK_ERROR_MAX_INDEX];
  size_t n = ck_last_error_element(idx, CK_ERROR_MAX_INDEX, &addr);
  size_t all = ck_type_ndim(dst->type);
  size_t core = spec->core != NULL ? ck_type_ndim(spec->core->dst) : 0;
  size_t nd = all > core ? all - core : 0;
  if (n == 0 || addr == NULL || n == nd || nd == 0 || nd > CK_ERROR_MAX_INDEX) {
    return;
  }
  intptr_t size[CK_ERROR_MAX_INDEX], stride[CK_ERROR_MAX_INDEX];
  ck_type t = dst->type;
  const char *m = ck_array_arrmeta(dst);
  intptr_t lo = 0; /* the lowest element's offset from dst_data */
  for (size_t k = 0; k < nd; k++) {
    if (t->id != CK_TYPE_FIXED_DIM && t->id != CK_TYPE_STRIDED_DIM) {
      return;
    }
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)m;
    size[k] = dm->size;
    stride[k] = dm->stride;
    if (size[k] <= 0) {
      return;
    }
    if (stride[k] < 0) {
      lo += (size[k] - 1) * stride[k];
    }
    m += ck__dim_header_size(t);
    t = t->element;
  }
  intptr_t off = (intptr_t)((uintptr_t)addr - (uintptr_t)dst_data) - lo;
  bool used[CK_ERROR_MAX_INDEX] = {false};
  int64_t pos[CK_ERROR_MAX_INDEX];
  for (size_t r = 0; r < nd; r++) { /* dims by decreasing |stride| */
    size_t k = nd;
    for (size_t j = 0; j < nd; j++) {
      intptr_t aj = stride[j] < 0 ? -stride[j] : stride[j];
      intptr_t ak = k < nd ? (stride[k] < 0 ? -stride[k] : stride[k]) : -1;
      if (!used[j] && aj > ak) {
        k = j;
      }
    }
    if (k == nd) { /* the rest have stride 0: index 0 */
      for (size_t j = 0; j < nd; j++) {
        if (!used[j]) {
          used[j] = true;
          pos[j] = 0;
        }
      }
      break;
    }
    used[k] = true;
    intptr_t a = stride[k] < 0 ? -stride[k] : stride[k];
    intptr_t q = off / a;
    if (off < 0 || q >= size[k]) {
      return;
    }
    off -= q * a;
    pos[k] = stride[k] < 0 ? size[k] - 1 - q : q;
  }
  if (off != 0) {
    return;
  }
  ck_error_set_element(pos[nd - 1], addr);
  for (size_t k = nd - 1; k > 0; k--) {
    ck_error_prepend_element(pos[k - 1]);
  }
}

/* Build and run the tree of `spec` over dst, holding the writer lock of
 * every arena of the destination; a result made here (`fresh`) gives back
 * its arenas' unused capacity. */
static ck_status ck__run(const ck__tree_spec *spec, ck_array_preamble *dst, char *dst_data,
                         const char *const *data, bool fresh) {
  ck__arenas arenas;
  ck_status st = ck__lock_arenas(dst, &arenas);
  if (st != CK_OK) {
    return st;
  }
  const char *dst_arrmeta = ck_array_arrmeta(dst);
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  st = ck__build_tree(spec, &kb, dst_arrmeta);
  if (st == CK_OK) {
    st = ck__run_tree(spec, &kb, &arenas, dst_arrmeta, dst_data, data);
    if (st != CK_OK) {
      ck__locate_failure(spec, dst, dst_data);
    }
  }
  ck_kernel_builder_destroy(&kb);
  for (size_t i = 0; st == CK_OK && fresh && i < arenas.n; i++) {
    st = ck_pod_trim(arenas.mb[i]);
  }
  ck__unlock_arenas(&arenas, arenas.n);
  return st;
}

/* ---- the entry points -------------------------------------------------------------- */

/* The child of ck_array_assign_fill: `?T -> U` with the fill value, any
 * other pair as ck_array_assign. */
typedef struct ck__fill_data {
  ck_errmode mode;
  const ck_array_preamble *fill;
} ck__fill_data;

static ck_status ck__fill_child(void *child_data, ck_kernel_builder *ckb, size_t offset,
                                ck_type dst_type, const char *dst_arrmeta, size_t nsrc,
                                const ck_type *src_types, const char *const *src_arrmeta,
                                ck_kernel_request req, size_t *out_end) {
  ck__fill_data *fd = child_data;
  if (nsrc == 1 && ck_type_is_option(src_types[0]) && !ck_type_is_option(dst_type)) {
    return ck__make_option_assign(ckb, offset, dst_type, dst_arrmeta, src_types[0],
                                  src_arrmeta[0], req, fd->mode, fd->fill,
                                  ck__assignment_any_factory, out_end);
  }
  return ck_assignment_child_factory(&fd->mode, ckb, offset, dst_type, dst_arrmeta, nsrc,
                                     src_types, src_arrmeta, req, out_end);
}

static ck_status ck__assign(const char *func, ck_array_preamble *dst,
                            const ck_array_preamble *src, const ck_array_preamble *fill,
                            ck_errmode mode) {
  ck_status st = ck__check_array(dst, "dst");
  if (st == CK_OK) {
    st = ck__check_array(src, "src");
  }
  if (st != CK_OK) {
    return st;
  }
  char *dst_data;
  if ((st = ck_array_writable_data(dst, &dst_data)) != CK_OK) {
    return st;
  }
  ck_type sdt = ck_type_dtype(src->type), ddt = ck_type_dtype(dst->type);
  if (fill == NULL && ck_type_is_option(sdt) && !ck_type_is_option(ddt)) {
    /* `?T -> T`: refuse before writing anything, naming the count and where */
    int64_t nulls = 0, first = -1;
    if ((st = ck_array_null_count(src, &nulls, &first)) != CK_OK) {
      return st;
    }
    if (nulls > 0) {
      char db[96], sb[96];
      return ck__error(CK_ERR_VALUE, func,
                       "the source ('%s') has %" PRId64 " null%s (the first at flat "
                       "index %" PRId64 ") and the destination type '%s' has no "
                       "nulls: give a fill value (ck_array_assign_fill) or assign to "
                       "an option type", ck__type_str(src->type, sb, sizeof sb), nulls,
                       nulls == 1 ? "" : "s", first, ck__type_str(dst->type, db, sizeof db));
    }
  }
  const char *data = src->data;
  const char *meta = ck_array_arrmeta(src);
  ck_type type = src->type;
  ck_array_preamble *tmp = NULL;
  st = ck__var_option_rows_prepare(dst, 1, &src);
  if (st == CK_OK) {
    st = ck__copy_overlapping(dst, 1, &src, &data, &meta, &type, &tmp);
  }
  if (st == CK_OK) {
    ck__fill_data fd = {mode, fill};
    ck__tree_spec spec = {.child = fill != NULL ? ck__fill_child : NULL,
                          .child_data = &fd, .mode = mode, .dst_type = dst->type,
                          .nsrc = 1, .types = &type, .meta = &meta};
    st = ck__run(&spec, dst, dst_data, &data, false);
  }
  ck_array_decref(tmp);
  return st;
}

ck_status ck_array_assign(ck_array_preamble *dst, const ck_array_preamble *src,
                          ck_errmode mode) {
  return ck__assign(__func__, dst, src, NULL, mode);
}

ck_status ck_array_assign_fill(ck_array_preamble *dst, const ck_array_preamble *src,
                               const ck_array_preamble *fill, ck_errmode mode) {
  ck_status st = ck__check_array(fill, "fill");
  if (st != CK_OK) {
    return st;
  }
  if (ck_array_ndim(fill) != 0 || ck_type_is_option(fill->type)) {
    char fb[96];
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the fill value must be a 0-d array of a "
                    "non-option type, got '%s'", ck__type_str(fill->type, fb, sizeof fb));
  }
  return ck__assign(__func__, dst, src, fill, mode);
}

/* ck_array_apply and ck_array_apply_core. */
static ck_status ck__apply(const char *func, ck_child_kernel_factory child,
                           void *child_data, const ck__core_sig *core, ck_type dst_dtype,
                           size_t nsrc, ck_array_preamble *const *srcs,
                           ck_array_preamble *dst_or_null, ck_array_preamble **out) {
  if (out != NULL) {
    *out = NULL;
  }
  if (child == NULL || (nsrc > 0 && srcs == NULL) ||
      (dst_or_null == NULL && out == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL argument");
  }
  if (nsrc > CK_LIFT_MAX_NSRC) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%zu sources (at most %d)", nsrc,
                     CK_LIFT_MAX_NSRC);
  }
  ck_type types[CK_LIFT_MAX_NSRC];
  const char *meta[CK_LIFT_MAX_NSRC];
  const char *data[CK_LIFT_MAX_NSRC];
  ck_status st;
  for (size_t j = 0; j < nsrc; j++) {
    if ((st = ck__check_array(srcs[j], "source")) != CK_OK) {
      return st;
    }
    types[j] = srcs[j]->type;
    meta[j] = ck_array_arrmeta(srcs[j]);
    data[j] = srcs[j]->data;
  }
  if (dst_or_null != NULL) {
    if ((st = ck__check_array(dst_or_null, "dst")) != CK_OK) {
      return st;
    }
    if (core == NULL && ck_type_is_valid(dst_dtype) &&
        !ck_type_equal(dst_dtype, ck_type_dtype(dst_or_null->type))) {
      /* out= of another dtype: compute in dst_dtype, then convert (the
       * default error mode), as NumPy's ufuncs do */
      char *unused;
      if ((st = ck_array_writable_data(dst_or_null, &unused)) != CK_OK) {
        return st;
      }
      ck_array_preamble *res = NULL;
      st = ck__apply(func, child, child_data, core, dst_dtype, nsrc, srcs, NULL, &res);
      if (st == CK_OK) {
        st = ck_array_assign(dst_or_null, res, CK_ERRMODE_DEFAULT);
      }
      ck_array_decref(res);
      if (st == CK_OK && out != NULL) {
        ck_array_incref(dst_or_null);
        *out = dst_or_null;
      }
      return st;
    }
  }
  ck_array_preamble *dst = dst_or_null;
  if (dst == NULL) {
    ck_type rt;
    intptr_t shape[CK_TYPE_MAX_DEPTH];
    size_t nstrided = 0;
    if (core != NULL) {
      st = ck_core_result_type(core->dst, nsrc, core->src, types, meta, &rt, shape,
                               CK_TYPE_MAX_DEPTH, &nstrided, NULL);
    } else {
      st = ck_elementwise_result_type(dst_dtype, nsrc, types, meta, &rt, shape,
                                      CK_TYPE_MAX_DEPTH, &nstrided);
    }
    if (st != CK_OK) {
      return st;
    }
    st = ck_array_empty_uninit(rt, shape, nstrided, CK_ARRAY_DEFAULT_FLAGS, &dst);
    ck_type_decref(rt);
    if (st != CK_OK) {
      return st;
    }
  } else {
    ck_array_incref(dst);
  }
  ck_array_preamble *tmp[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < nsrc; j++) {
    tmp[j] = NULL;
  }
  char *dst_data = NULL;
  st = ck_array_writable_data(dst, &dst_data);
  if (st == CK_OK && dst_or_null != NULL) {
    st = ck__copy_overlapping(dst, nsrc, (const ck_array_preamble *const *)srcs,
                              data, meta, types, tmp);
  }
  if (st == CK_OK) {
    ck__tree_spec spec = {.child = child, .child_data = child_data, .core = core,
                          .dst_type = dst->type, .nsrc = nsrc, .types = types,
                          .meta = meta};
    st = ck__run(&spec, dst, dst_data, data, dst_or_null == NULL);
  }
  for (size_t j = 0; j < nsrc; j++) {
    ck_array_decref(tmp[j]);
  }
  if (st != CK_OK || out == NULL) {
    ck_array_decref(dst);
  } else {
    *out = dst;
  }
  return st;
}

ck_status ck_array_apply(ck_child_kernel_factory child, void *child_data,
                         ck_type dst_dtype, size_t nsrc,
                         ck_array_preamble *const *srcs,
                         ck_array_preamble *dst_or_null,
                         ck_array_preamble **out) {
  return ck__apply(__func__, child, child_data, NULL, dst_dtype, nsrc, srcs, dst_or_null,
                   out);
}

ck_status ck_array_apply_core(ck_child_kernel_factory child, void *child_data,
                              ck_type dst_pattern, size_t nsrc, const ck_type *src_patterns,
                              ck_array_preamble *const *srcs,
                              ck_array_preamble *dst_or_null, ck_array_preamble **out) {
  if (out != NULL) {
    *out = NULL;
  }
  if (!ck_type_is_valid(dst_pattern) || (nsrc > 0 && src_patterns == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL or invalid signature types");
  }
  ck__core_sig core = {dst_pattern, src_patterns};
  return ck__apply(__func__, child, child_data, &core, ck_type_dtype(dst_pattern), nsrc,
                   srcs, dst_or_null, out);
}
