/*
 * lift.c -- dimension lifting (see ckernel/lift.h): the strided and var dim
 * kernels, the recursive builder with NumPy broadcasting, the broadcast
 * helpers, and the (parallel) runner used by the array-level entry points.
 */
#include "kernels/lift_internal.h"
#include "types/type_internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>

/* ---- the strided dim kernel ------------------------------------------------ */

static int ck__sdim_single(char *dst, const char *const *src, ck_prefix *self) {
  const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(void *)self;
  if (k->size == 0) {
    return 0;
  }
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  return ck_prefix_strided(child)(dst, k->dst_stride, src, k->src_stride,
                                  (size_t)k->size, child);
}

static int ck__sdim_strided(char *dst, intptr_t dst_stride,
                            const char *const *src, const intptr_t *src_stride,
                            size_t count, ck_prefix *self) {
  const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(void *)self;
  if (k->size == 0) {
    return 0;
  }
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  ck_expr_strided_t fn = ck_prefix_strided(child);
  const char *s[CK_LIFT_MAX_NSRC];
  size_t nsrc = k->nsrc;
  for (size_t i = 0; i < count; i++) {
    for (size_t j = 0; j < nsrc; j++) {
      s[j] = src[j] + (intptr_t)i * src_stride[j];
    }
    int st = fn(dst + (intptr_t)i * dst_stride, k->dst_stride, s, k->src_stride,
                (size_t)k->size, child);
    if (st != 0) {
      ck_error_prepend_element((int64_t)i); /* error.h: where it failed */
      return st;
    }
  }
  return 0;
}

static void ck__sdim_destruct(ck_prefix *self) {
  ck__strided_dim_kernel *k = (ck__strided_dim_kernel *)(void *)self;
  if (k->child_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->child_offset));
  }
}

/* ---- the var (general) dim kernel ------------------------------------------ */

enum { CK__SRC_STRIDED = 0, CK__SRC_VAR = 1, CK__SRC_BCAST = 2 };
enum { CK__DST_STRIDED = 0, CK__DST_VAR = 1 };

typedef struct ck__lift_src {
  intptr_t kind;   /* CK__SRC_*                                  */
  intptr_t size;   /* STRIDED: the dim size                       */
  intptr_t stride; /* STRIDED: dim stride; VAR: element stride    */
  intptr_t offset; /* VAR: the arrmeta offset added to begin      */
} ck__lift_src;

/* Used when any source or the destination is a var dim.  Sizes are checked
 * on every call (var sizes are per element). */
typedef struct ck__var_dim_kernel {
  ck_prefix base;
  intptr_t dst_kind;     /* CK__DST_*                                     */
  intptr_t dst_size;     /* STRIDED                                       */
  intptr_t dst_stride;   /* STRIDED: dim stride; VAR: element stride      */
  intptr_t dst_offset;   /* VAR: arrmeta offset                           */
  ck_type dst_var_type;  /* VAR: owned reference                          */
  ck_memblock *dst_arena; /* VAR: owned reference (may be NULL: no alloc) */
  size_t nsrc;
  size_t child_offset;   /* relative to self; 0 while not built           */
  ck__lift_src src[];
} ck__var_dim_kernel;

static int ck__vdim_broadcast_error(intptr_t from, intptr_t to) {
  return ck__error(CK_ERR_VALUE, "elementwise",
                   "cannot broadcast a var dim of size %" PRIdPTR
                   " to size %" PRIdPTR,
                   from, to);
}

static int ck__vdim_one(const ck__var_dim_kernel *k, ck_prefix *self,
                        char *dst, const char *const *src) {
  const char *s[CK_LIFT_MAX_NSRC];
  intptr_t ss[CK_LIFT_MAX_NSRC];
  intptr_t sz[CK_LIFT_MAX_NSRC];
  size_t nsrc = k->nsrc;
  intptr_t bsize = -1; /* broadcast size of the sources (-1: all are 1) */
  for (size_t j = 0; j < nsrc; j++) {
    const ck__lift_src *d = &k->src[j];
    switch (d->kind) {
    case CK__SRC_STRIDED:
      s[j] = src[j];
      sz[j] = d->size;
      ss[j] = d->stride;
      break;
    case CK__SRC_VAR: {
      ck_var_dim_data v;
      memcpy(&v, src[j], sizeof v);
      sz[j] = (intptr_t)v.size;
      s[j] = v.size == 0 || v.begin == NULL ? src[j] : v.begin + d->offset;
      ss[j] = d->stride;
      break;
    }
    default:
      s[j] = src[j];
      sz[j] = 1;
      ss[j] = 0;
      break;
    }
    if (sz[j] == 1) {
      ss[j] = 0;
    } else if (bsize == -1) {
      bsize = sz[j];
    } else if (bsize != sz[j]) {
      return ck__vdim_broadcast_error(sz[j], bsize);
    }
  }
  char *d;
  intptr_t n, ds;
  if (k->dst_kind == CK__DST_STRIDED) {
    d = dst;
    n = k->dst_size;
    ds = k->dst_stride;
  } else {
    ck_var_dim_data v;
    memcpy(&v, dst, sizeof v);
    if (v.begin == NULL && v.size == 0) {
      /* unallocated: allocate the broadcast size from the dst arena */
      n = bsize == -1 ? (nsrc == 0 ? 0 : 1) : bsize;
      ck_var_dim_arrmeta m = {k->dst_arena, k->dst_stride, k->dst_offset};
      ck_status st = ck_var_dim_alloc(k->dst_var_type, dst, (const char *)&m,
                                      (size_t)n);
      if (st != CK_OK) {
        return st;
      }
      memcpy(&v, dst, sizeof v);
    } else {
      n = (intptr_t)v.size;
    }
    d = v.begin + k->dst_offset;
    ds = k->dst_stride;
  }
  for (size_t j = 0; j < nsrc; j++) {
    if (sz[j] != 1 && sz[j] != n) {
      return ck__vdim_broadcast_error(sz[j], n);
    }
  }
  if (n == 0) {
    return 0;
  }
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  return ck_prefix_strided(child)(d, ds, s, ss, (size_t)n, child);
}

static int ck__vdim_single(char *dst, const char *const *src, ck_prefix *self) {
  return ck__vdim_one((const ck__var_dim_kernel *)(void *)self, self, dst, src);
}

static int ck__vdim_strided(char *dst, intptr_t dst_stride,
                            const char *const *src, const intptr_t *src_stride,
                            size_t count, ck_prefix *self) {
  const ck__var_dim_kernel *k = (const ck__var_dim_kernel *)(void *)self;
  const char *s[CK_LIFT_MAX_NSRC];
  for (size_t i = 0; i < count; i++) {
    for (size_t j = 0; j < k->nsrc; j++) {
      s[j] = src[j] + (intptr_t)i * src_stride[j];
    }
    int st = ck__vdim_one(k, self, dst + (intptr_t)i * dst_stride, s);
    if (st != 0) {
      ck_error_prepend_element((int64_t)i);
      return st;
    }
  }
  return 0;
}

static void ck__vdim_destruct(ck_prefix *self) {
  ck__var_dim_kernel *k = (ck__var_dim_kernel *)(void *)self;
  if (k->child_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->child_offset));
  }
  ck_memblock_decref(k->dst_arena);
  ck_type_decref(k->dst_var_type);
  k->dst_arena = NULL;
  k->dst_var_type = NULL;
}

/* ---- dump descriptions ----------------------------------------------------- */

static size_t ck__sdim_children(const ck_prefix *self, const ck_kernel_info *info,
                                size_t *rel, size_t max) {
  (void)info;
  const ck__strided_dim_kernel *k = (const ck__strided_dim_kernel *)(const void *)self;
  if (k->child_offset == 0) {
    return 0;
  }
  if (max > 0) {
    rel[0] = k->child_offset;
  }
  return 1;
}

static size_t ck__vdim_children(const ck_prefix *self, const ck_kernel_info *info,
                                size_t *rel, size_t max) {
  (void)info;
  const ck__var_dim_kernel *k = (const ck__var_dim_kernel *)(const void *)self;
  if (k->child_offset == 0) {
    return 0;
  }
  if (max > 0) {
    rel[0] = k->child_offset;
  }
  return 1;
}

static size_t ck__sdim_fields(const ck_prefix *self, const ck_kernel_info *info,
                              ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__strided_dim_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_INT(&f, K, k, size);
  CK__FIELD_INT(&f, K, k, dst_stride);
  CK__FIELD_INT(&f, K, k, nsrc);
  CK__FIELD_CHILD(&f, K, k, child_offset);
  for (size_t j = 0; j < k->nsrc && j < CK_LIFT_MAX_NSRC; j++) {
    ck__field(&f, "src_stride", (int32_t)j, CK_KERNEL_FIELD_INT,
              (intptr_t)(offsetof(K, src_stride) + j * sizeof(intptr_t)),
              (int64_t)k->src_stride[j], NULL, NULL);
  }
  return f.n;
}

static size_t ck__vdim_fields(const ck_prefix *self, const ck_kernel_info *info,
                              ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__var_dim_kernel K;
  static const char *const src_kinds[] = {"strided", "var", "broadcast"};
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  ck__field(&f, "dst_kind", -1, CK_KERNEL_FIELD_TEXT, (intptr_t)offsetof(K, dst_kind), 0,
            NULL, k->dst_kind == CK__DST_VAR ? "var" : "strided");
  if (k->dst_kind == CK__DST_VAR) {
    CK__FIELD_INT(&f, K, k, dst_stride);
    CK__FIELD_INT(&f, K, k, dst_offset);
    CK__FIELD_PTR(&f, CK_KERNEL_FIELD_TYPE, K, k, dst_var_type);
    CK__FIELD_PTR(&f, CK_KERNEL_FIELD_MEMBLOCK, K, k, dst_arena);
  } else {
    CK__FIELD_INT(&f, K, k, dst_size);
    CK__FIELD_INT(&f, K, k, dst_stride);
  }
  CK__FIELD_INT(&f, K, k, nsrc);
  CK__FIELD_CHILD(&f, K, k, child_offset);
  for (size_t j = 0; j < k->nsrc && j < CK_LIFT_MAX_NSRC; j++) {
    const ck__lift_src *s = &k->src[j];
    intptr_t at = (intptr_t)(offsetof(K, src) + j * sizeof(ck__lift_src));
    int32_t i = (int32_t)j;
    const char *kind = s->kind >= 0 && s->kind <= CK__SRC_BCAST ? src_kinds[s->kind] : "?";
    ck__field(&f, "src_kind", i, CK_KERNEL_FIELD_TEXT, at, 0, NULL, kind);
    if (s->kind == CK__SRC_STRIDED) {
      ck__field(&f, "src_size", i, CK_KERNEL_FIELD_INT,
                at + (intptr_t)offsetof(ck__lift_src, size), (int64_t)s->size, NULL, NULL);
    }
    if (s->kind != CK__SRC_BCAST) {
      ck__field(&f, "src_stride", i, CK_KERNEL_FIELD_INT,
                at + (intptr_t)offsetof(ck__lift_src, stride), (int64_t)s->stride, NULL,
                NULL);
    }
    if (s->kind == CK__SRC_VAR) {
      ck__field(&f, "src_offset", i, CK_KERNEL_FIELD_INT,
                at + (intptr_t)offsetof(ck__lift_src, offset), (int64_t)s->offset, NULL,
                NULL);
    }
  }
  return f.n;
}

static const ck_kernel_info ck__sdim_info = {
    "strided_dim", ck__sdim_single, ck__sdim_strided,
    sizeof(ck__strided_dim_kernel), ck__sdim_children};
static const ck_kernel_info ck__vdim_info = {
    "var_dim", ck__vdim_single, ck__vdim_strided, sizeof(ck__var_dim_kernel),
    ck__vdim_children};

static pthread_once_t ck__lift_info_once = PTHREAD_ONCE_INIT;
static void ck__lift_info_init(void) {
  ck__kernel_info_register_decoded(&ck__sdim_info, 1, ck__sdim_fields);
  ck__kernel_info_register_decoded(&ck__vdim_info, 1, ck__vdim_fields);
}

bool ck__is_strided_dim_kernel(const ck_prefix *root) {
  return root != NULL && (root->function == ck__single_ptr(ck__sdim_single) ||
                          root->function == ck__strided_ptr(ck__sdim_strided));
}

/* ---- construction ---------------------------------------------------------- */

static size_t ck__round8(size_t n) { return (n + 7u) & ~(size_t)7u; }

ck_status ck__make_strided_dim_kernel(ck_kernel_builder *ckb, size_t offset,
                                      intptr_t size, intptr_t dst_stride,
                                      size_t nsrc, const intptr_t *src_stride,
                                      ck_kernel_request req,
                                      size_t *out_child) {
  (void)pthread_once(&ck__lift_info_once, ck__lift_info_init);
  size_t data = ck__round8(sizeof(ck__strided_dim_kernel) + nsrc * sizeof(intptr_t));
  size_t child;
  if (!ck__add_size(offset, data, &child)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu overflows", offset);
  }
  ck_status st = ck_kernel_builder_ensure_capacity(ckb, child);
  if (st != CK_OK) {
    return st;
  }
  ck__strided_dim_kernel *k =
      (ck__strided_dim_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__sdim_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__sdim_single, ck__sdim_strided);
  k->size = size;
  k->dst_stride = dst_stride;
  k->nsrc = nsrc;
  for (size_t j = 0; j < nsrc; j++) {
    k->src_stride[j] = src_stride[j];
  }
  k->child_offset = child - offset;
  *out_child = child;
  return CK_OK;
}

void ck__append_shape(ck_type t, const char *arrmeta, char *buf, size_t bufsize,
                      size_t *pos) {
  ck__appendf(buf, bufsize, pos, "(");
  size_t n = 0;
  while (ck__is_dim(t)) {
    ck__appendf(buf, bufsize, pos, "%s", n ? ", " : "");
    if (t->id == CK_TYPE_VAR_DIM) {
      ck__appendf(buf, bufsize, pos, "var");
    } else if (arrmeta != NULL) {
      ck__appendf(buf, bufsize, pos, "%" PRIdPTR,
                  ((const ck_dim_arrmeta *)(const void *)arrmeta)->size);
    } else if (t->id == CK_TYPE_FIXED_DIM) {
      ck__appendf(buf, bufsize, pos, "%" PRIdPTR, t->fixed_size);
    } else {
      ck__appendf(buf, bufsize, pos, "?");
    }
    if (arrmeta != NULL) {
      arrmeta += ck__dim_header_size(t);
    }
    t = t->element;
    n++;
  }
  ck__appendf(buf, bufsize, pos, n == 1 ? ",)" : ")");
}

/* Context of one ck_make_lifted_kernel call. */
typedef struct ck__lift_ctx {
  ck_kernel_builder *ckb;
  size_t nsrc;
  ck_child_kernel_factory child;
  void *child_data;
  /* the trailing dims of each operand that belong to the child */
  size_t dst_core;
  size_t src_core[CK_LIFT_MAX_NSRC];
  /* the top-level types, for messages */
  ck_type dst_type;
  const char *dst_arrmeta;
  const ck_type *src_types;
  const char *const *src_arrmeta;
  /* assignment: an option over dims (`?var * T`) is a level of its own, so
   * `?var * T <- var * T` lines the two rows up; the child (the assignment
   * dispatch) is called at that level and handles the option */
  bool through_options;
} ck__lift_ctx;

static ck_status ck__broadcast_error(const ck__lift_ctx *cx, size_t j) {
  char a[160], b[160];
  size_t pa = 0, pb = 0;
  ck__append_shape(cx->src_types[j], cx->src_arrmeta[j], a, sizeof a, &pa);
  ck__append_shape(cx->dst_type, cx->dst_arrmeta, b, sizeof b, &pb);
  if (cx->dst_core == 0 && cx->src_core[j] == 0) {
    return ck__error(CK_ERR_VALUE, "ck_make_elementwise_kernel",
                     "cannot broadcast shape %s to %s", a, b);
  }
  return ck__error(CK_ERR_VALUE, "ck_make_lifted_kernel",
                   "cannot broadcast shape %s to %s (outside the last %zu and %zu core "
                   "dims)", a, b, cx->src_core[j], cx->dst_core);
}

/* Dims of `t` outside the `core` trailing ones (callers checked
 * ndim >= core). */
static size_t ck__outer(ck_type t, size_t core) { return ck_type_ndim(t) - core; }

/* The levels of `t` outside its core: its dims, and under an assignment
 * (through_options, no core dims) also the dims under an option over dims. */
static size_t ck__lvl(const ck__lift_ctx *cx, ck_type t, size_t core) {
  if (!cx->through_options) {
    return ck__outer(t, core);
  }
  size_t n = 0;
  for (;;) {
    if (ck__is_dim(t)) {
      n++;
      t = t->element;
    } else if (ck_type_is_option(t) && ck__is_dim(t->element)) {
      t = t->element;
    } else {
      return n;
    }
  }
}

/*
 * One step of dimension coalescing.  At a fixed/strided level of size *size
 * and destination stride *dstride (sources' strides in ss, their element
 * types and arrmeta in est/esm, the destination's element arrmeta at *edm):
 * if the element of *dt is again a fixed/strided dim (the destination) over
 * sources that are fixed/strided dims of the same size, size-1 dims or
 * missing (broadcast), and for every array stride == next_size *
 * next_stride, merge the next level into this one and return true.
 */
static bool ck__coalesce_next(const ck__lift_ctx *cx, ck_type *dt, const char **edm,
                              ck_type *est, const char **esm, intptr_t *size,
                              intptr_t *dstride, intptr_t *ss) {
  size_t nsrc = cx->nsrc;
  ck_type next = (*dt)->element;
  if (!ck__is_dim(next) || ck__outer(next, cx->dst_core) == 0 ||
      next->id == CK_TYPE_VAR_DIM || *size <= 0) {
    return false;
  }
  const ck_dim_arrmeta *nm = (const ck_dim_arrmeta *)(const void *)*edm;
  intptr_t nsize = nm->size, nstride = nm->stride;
  if (nsize <= 0 || *dstride != nsize * nstride) {
    return false;
  }
  size_t nnd = ck__lvl(cx, next, cx->dst_core);
  intptr_t nss[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < nsrc; j++) {
    if (ck__lvl(cx, est[j], cx->src_core[j]) < nnd) {
      nss[j] = 0; /* missing at the next level: broadcast */
    } else if (!ck__is_dim(est[j]) || est[j]->id == CK_TYPE_VAR_DIM || esm[j] == NULL) {
      return false;
    } else {
      const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)(const void *)esm[j];
      if (m->size != 1 && m->size != nsize) {
        return false; /* the regular path reports the broadcast error */
      }
      nss[j] = m->size == 1 ? 0 : m->stride;
    }
    if (ss[j] != nsize * nss[j]) {
      return false;
    }
  }
  for (size_t j = 0; j < nsrc; j++) {
    if (ck__lvl(cx, est[j], cx->src_core[j]) >= nnd) {
      esm[j] += sizeof(ck_dim_arrmeta);
      est[j] = est[j]->element;
    }
    ss[j] = nss[j];
  }
  *size *= nsize; /* the element count of an existing array: no overflow */
  *dstride = nstride;
  *edm += sizeof(ck_dim_arrmeta);
  *dt = next;
  return true;
}

static ck_status ck__lift(const ck__lift_ctx *cx, size_t offset, ck_type dt,
                          const char *dm, const ck_type *st_in,
                          const char *const *sm_in, ck_kernel_request req,
                          size_t *out_end) {
  size_t nsrc = cx->nsrc;
  ck_type st[CK_LIFT_MAX_NSRC];
  const char *sm[CK_LIFT_MAX_NSRC];
  size_t dnd = ck__lvl(cx, dt, cx->dst_core);
  bool option_level = dnd > 0 && !ck__is_dim(dt); /* `?var * T` (assignment) */
  for (size_t j = 0; j < nsrc; j++) {
    st[j] = st_in[j];
    sm[j] = sm_in[j];
    /* extra leading source dims must be fixed/strided of size 1 */
    while (ck__lvl(cx, st[j], cx->src_core[j]) > dnd) {
      if (!ck__is_dim(st[j]) || st[j]->id == CK_TYPE_VAR_DIM || sm[j] == NULL ||
          ((const ck_dim_arrmeta *)(const void *)sm[j])->size != 1) {
        return ck__broadcast_error(cx, j);
      }
      sm[j] += sizeof(ck_dim_arrmeta);
      st[j] = st[j]->element;
    }
    if (dnd > 0 && ck__lvl(cx, st[j], cx->src_core[j]) == dnd && !ck__is_dim(st[j])) {
      option_level = true; /* `var * T <- ?var * T` */
    }
  }
  if (dnd == 0 || option_level) {
    /* the option's level: the assignment dispatch builds the option kernel,
     * whose value conversion lifts the dims under it */
    return cx->child(cx->child_data, cx->ckb, offset, dt, dm, nsrc, st, sm, req,
                     out_end);
  }
  if (dm == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "destination arrmeta is NULL");
  }
  ck__lift_src desc[CK_LIFT_MAX_NSRC];
  ck_type est[CK_LIFT_MAX_NSRC];
  const char *esm[CK_LIFT_MAX_NSRC];
  bool any_var = dt->id == CK_TYPE_VAR_DIM;
  intptr_t dsize = 0, dstride = 0;
  if (!any_var) {
    const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)(const void *)dm;
    dsize = m->size;
    dstride = m->stride;
  }
  for (size_t j = 0; j < nsrc; j++) {
    memset(&desc[j], 0, sizeof desc[j]);
    if (ck__lvl(cx, st[j], cx->src_core[j]) < dnd) {
      desc[j].kind = CK__SRC_BCAST;
      est[j] = st[j];
      esm[j] = sm[j];
      continue;
    }
    if (sm[j] == NULL) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "source %zu arrmeta is NULL", j);
    }
    if (st[j]->id == CK_TYPE_VAR_DIM) {
      const ck_var_dim_arrmeta *m = (const ck_var_dim_arrmeta *)(const void *)sm[j];
      desc[j].kind = CK__SRC_VAR;
      desc[j].stride = m->stride;
      desc[j].offset = m->offset;
      esm[j] = sm[j] + sizeof(ck_var_dim_arrmeta);
      any_var = true;
    } else {
      const ck_dim_arrmeta *m = (const ck_dim_arrmeta *)(const void *)sm[j];
      desc[j].kind = CK__SRC_STRIDED;
      desc[j].size = m->size;
      desc[j].stride = m->size == 1 ? 0 : m->stride;
      esm[j] = sm[j] + sizeof(ck_dim_arrmeta);
      if (dt->id != CK_TYPE_VAR_DIM && m->size != 1 && m->size != dsize) {
        return ck__broadcast_error(cx, j);
      }
    }
    est[j] = st[j]->element;
  }
  const char *edm = dm + ck__dim_header_size(dt);
  size_t child;
  ck_status s;
  if (!any_var) {
    intptr_t ss[CK_LIFT_MAX_NSRC];
    for (size_t j = 0; j < nsrc; j++) {
      ss[j] = desc[j].stride; /* BCAST: 0 */
    }
    /* Coalesce: absorb the next dims while every array walks them and this
     * one as a single run (C-contiguous data, or broadcast in both), so a
     * contiguous N-d operation is one leaf call over all its elements. */
    while (ck__coalesce_next(cx, &dt, &edm, est, esm, &dsize, &dstride, ss)) {
    }
    s = ck__make_strided_dim_kernel(cx->ckb, offset, dsize, dstride, nsrc, ss,
                                    req, &child);
  } else {
    (void)pthread_once(&ck__lift_info_once, ck__lift_info_init);
    size_t data = ck__round8(sizeof(ck__var_dim_kernel) + nsrc * sizeof(ck__lift_src));
    if (!ck__add_size(offset, data, &child)) {
      return CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu overflows", offset);
    }
    s = ck_kernel_builder_ensure_capacity(cx->ckb, child);
    if (s == CK_OK) {
      ck__var_dim_kernel *k =
          (ck__var_dim_kernel *)(void *)ck_kernel_builder_get(cx->ckb, offset);
      k->base.destructor = ck__vdim_destruct;
      (void)ck_prefix_set_function(&k->base, req, ck__vdim_single, ck__vdim_strided);
      if (dt->id == CK_TYPE_VAR_DIM) {
        const ck_var_dim_arrmeta *m = (const ck_var_dim_arrmeta *)(const void *)dm;
        k->dst_kind = CK__DST_VAR;
        k->dst_stride = m->stride;
        k->dst_offset = m->offset;
        ck_type_incref(dt);
        k->dst_var_type = dt;
        ck_memblock_incref(m->blockref);
        k->dst_arena = m->blockref;
      } else {
        k->dst_kind = CK__DST_STRIDED;
        k->dst_size = dsize;
        k->dst_stride = dstride;
      }
      k->nsrc = nsrc;
      for (size_t j = 0; j < nsrc; j++) {
        k->src[j] = desc[j];
      }
      k->child_offset = child - offset;
    }
  }
  if (s != CK_OK) {
    return s;
  }
  return ck__lift(cx, child, dt->element, edm, est, esm, CK_KERNEL_REQUEST_STRIDED,
                  out_end);
}

static ck_status ck__make_lifted(const char *func, ck_kernel_builder *ckb, size_t offset,
                                 ck_type dst_type, const char *dst_arrmeta, size_t nsrc,
                                 const ck_type *src_types,
                                 const char *const *src_arrmeta, const size_t *core_ndim,
                                 ck_kernel_request req, ck_child_kernel_factory child,
                                 void *child_data, bool through_options, size_t *out_end) {
  ck_status st = ck__check_kernel_args(func, ckb, offset, req);
  if (st != CK_OK) {
    return st;
  }
  if (child == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL child factory");
  }
  if (nsrc > CK_LIFT_MAX_NSRC) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%zu sources (at most %d)", nsrc,
                    CK_LIFT_MAX_NSRC);
  }
  if (nsrc > 0 && (src_types == NULL || src_arrmeta == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL source types or arrmeta");
  }
  if (!ck_type_is_valid(dst_type)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "invalid destination type");
  }
  ck__lift_ctx cx = {ckb, nsrc, child, child_data, 0, {0},
                     dst_type, dst_arrmeta, src_types, src_arrmeta,
                     through_options && core_ndim == NULL};
  if (core_ndim != NULL) {
    cx.dst_core = core_ndim[0];
    if (cx.dst_core > ck_type_ndim(dst_type)) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                       "the destination has %zu dims, fewer than its %zu core dims",
                      ck_type_ndim(dst_type), cx.dst_core);
    }
  }
  for (size_t j = 0; j < nsrc; j++) {
    if (!ck_type_is_valid(src_types[j])) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func, "invalid source type %zu", j);
    }
    if (core_ndim != NULL) {
      cx.src_core[j] = core_ndim[1 + j];
      if (cx.src_core[j] > ck_type_ndim(src_types[j])) {
        return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                         "source %zu has %zu dims, fewer than its %zu core dims", j,
                        ck_type_ndim(src_types[j]), cx.src_core[j]);
      }
    }
  }
  size_t end = 0;
  st = ck__lift(&cx, offset, dst_type, dst_arrmeta, src_types, src_arrmeta, req,
                &end);
  if (st == CK_OK && out_end != NULL) {
    *out_end = end;
  }
  return st;
}

ck_status ck_make_lifted_kernel(ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
                                const char *dst_arrmeta, size_t nsrc,
                                const ck_type *src_types, const char *const *src_arrmeta,
                                const size_t *core_ndim, ck_kernel_request req,
                                ck_child_kernel_factory child, void *child_data,
                                size_t *out_end) {
  return ck__make_lifted(__func__, ckb, offset, dst_type, dst_arrmeta, nsrc, src_types,
                         src_arrmeta, core_ndim, req, child, child_data, false, out_end);
}

ck_status ck_make_elementwise_kernel(ck_kernel_builder *ckb, size_t offset,
                                     ck_type dst_type, const char *dst_arrmeta,
                                     size_t nsrc, const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_kernel_request req,
                                     ck_child_kernel_factory child,
                                     void *child_data, size_t *out_end) {
  return ck__make_lifted(__func__, ckb, offset, dst_type, dst_arrmeta, nsrc, src_types,
                         src_arrmeta, NULL, req, child, child_data, false, out_end);
}

ck_status ck__make_assignment_lifted(ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
                                     const char *dst_arrmeta, const ck_type *src_types,
                                     const char *const *src_arrmeta, ck_kernel_request req,
                                     ck_child_kernel_factory child, void *child_data,
                                     size_t *out_end) {
  return ck__make_lifted("ck_make_elementwise_kernel", ckb, offset, dst_type, dst_arrmeta, 1,
                         src_types, src_arrmeta, NULL, req, child, child_data, true,
                         out_end);
}

/* ---- broadcast helpers ----------------------------------------------------- */

static void ck__append_plain_shape(const intptr_t *shape, size_t nd, char *buf,
                                   size_t bufsize, size_t *pos) {
  ck__appendf(buf, bufsize, pos, "(");
  for (size_t i = 0; i < nd; i++) {
    if (shape[i] == CK_VAR_DIM_SIZE) {
      ck__appendf(buf, bufsize, pos, "%svar", i ? ", " : "");
    } else {
      ck__appendf(buf, bufsize, pos, "%s%" PRIdPTR, i ? ", " : "", shape[i]);
    }
  }
  ck__appendf(buf, bufsize, pos, nd == 1 ? ",)" : ")");
}

ck_status ck_broadcast_shapes(size_t nshapes, const intptr_t *const *shapes,
                              const size_t *ndims, intptr_t *out_shape,
                              size_t max, size_t *out_ndim) {
  if ((nshapes > 0 && (shapes == NULL || ndims == NULL)) || out_ndim == NULL ||
      (max > 0 && out_shape == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  size_t nd = 0;
  for (size_t i = 0; i < nshapes; i++) {
    if (ndims[i] > 0 && shapes[i] == NULL) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "shape %zu is NULL", i);
    }
    for (size_t k = 0; k < ndims[i]; k++) {
      if (shapes[i][k] < 0 && shapes[i][k] != CK_VAR_DIM_SIZE) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "negative size %" PRIdPTR
                        " in shape %zu", shapes[i][k], i);
      }
    }
    nd = ndims[i] > nd ? ndims[i] : nd;
  }
  *out_ndim = nd;
  if (nd > max) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "the result has %zu dims, room for %zu", nd, max);
  }
  for (size_t a = 0; a < nd; a++) {
    intptr_t r = 1; /* 1 broadcasts; CK_VAR_DIM_SIZE wins over 1 and n */
    bool var = false;
    for (size_t i = 0; i < nshapes; i++) {
      if (a + ndims[i] < nd) {
        continue; /* missing leading dim */
      }
      intptr_t v = shapes[i][a + ndims[i] - nd];
      if (v == CK_VAR_DIM_SIZE) {
        var = true;
      } else if (v != 1) {
        if (r != 1 && r != v) {
          char buf[512];
          size_t pos = 0;
          for (size_t k = 0; k < nshapes; k++) {
            if (k) {
              ck__appendf(buf, sizeof buf, &pos, " ");
            }
            ck__append_plain_shape(shapes[k], ndims[k], buf, sizeof buf, &pos);
          }
          return CK_ERROR(CK_ERR_VALUE,
                          "operands could not be broadcast together with shapes %s",
                          buf);
        }
        r = v;
      }
    }
    out_shape[a] = var ? CK_VAR_DIM_SIZE : r;
  }
  return CK_OK;
}

ck_status ck__dims_type_new(ck_type dtype, const intptr_t *sizes, size_t n, size_t first_var,
                            ck_type *out) {
  ck_type t = dtype;
  ck_type_incref(t);
  for (size_t a = n; a-- > 0;) {
    ck_type nt = NULL;
    ck_status st;
    if (a < first_var) {
      st = ck_strided_dim_type_new(t, &nt);
    } else if (sizes[a] == CK_VAR_DIM_SIZE) {
      st = ck_var_dim_type_new(t, &nt);
    } else {
      st = ck_fixed_dim_type_new(sizes[a], t, &nt);
    }
    ck_type_decref(t);
    if (st != CK_OK) {
      return st;
    }
    t = nt;
  }
  *out = t;
  return CK_OK;
}

ck_status ck_elementwise_result_type(ck_type dst_dtype, size_t nsrc,
                                     const ck_type *src_types,
                                     const char *const *src_arrmeta,
                                     ck_type *out_type, intptr_t *out_shape,
                                     size_t max, size_t *out_nstrided) {
  if (out_type == NULL || (nsrc > 0 && src_types == NULL) ||
      (max > 0 && out_shape == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  *out_type = NULL;
  if (!ck_type_is_valid(dst_dtype)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid dtype");
  }
  if (ck__is_dim(dst_dtype)) {
    return CK_ERROR(CK_ERR_TYPE, "the result dtype must not be a dim type");
  }
  if (nsrc > CK_LIFT_MAX_NSRC) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "%zu sources (at most %d)", nsrc,
                    CK_LIFT_MAX_NSRC);
  }
  intptr_t shapes[CK_LIFT_MAX_NSRC][CK_TYPE_MAX_DEPTH];
  const intptr_t *sp[CK_LIFT_MAX_NSRC];
  size_t nds[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < nsrc; j++) {
    ck_type t = src_types[j];
    if (!ck_type_is_valid(t)) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "invalid source type %zu", j);
    }
    const char *m = src_arrmeta != NULL ? src_arrmeta[j] : NULL;
    size_t n = 0;
    while (ck__is_dim(t)) {
      if (t->id == CK_TYPE_VAR_DIM) {
        shapes[j][n] = CK_VAR_DIM_SIZE;
      } else if (m != NULL) {
        shapes[j][n] = ((const ck_dim_arrmeta *)(const void *)m)->size;
      } else if (t->id == CK_TYPE_FIXED_DIM) {
        shapes[j][n] = t->fixed_size;
      } else {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                        "source %zu has a strided dim but no arrmeta", j);
      }
      if (m != NULL) {
        m += ck__dim_header_size(t);
      }
      t = t->element;
      n++;
    }
    sp[j] = shapes[j];
    nds[j] = n;
  }
  intptr_t res[CK_TYPE_MAX_DEPTH];
  size_t nd = 0;
  ck_status st = ck_broadcast_shapes(nsrc, sp, nds, res, CK_TYPE_MAX_DEPTH, &nd);
  if (st != CK_OK) {
    return st;
  }
  size_t first_var = nd;
  for (size_t a = 0; a < nd; a++) {
    if (res[a] == CK_VAR_DIM_SIZE) {
      first_var = a;
      break;
    }
  }
  if (first_var > max) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "the result has %zu strided dims, room for %zu", first_var, max);
  }
  ck_type t;
  if ((st = ck__dims_type_new(dst_dtype, res, nd, first_var, &t)) != CK_OK) {
    return st;
  }
  for (size_t a = 0; a < first_var; a++) {
    out_shape[a] = res[a];
  }
  if (out_nstrided != NULL) {
    *out_nstrided = first_var;
  }
  *out_type = t;
  return CK_OK;
}
