/*
 * jit_kernel.c -- leaf kernels around JIT-compiled entry points (jit.h).
 */
#include "ckernel/jit.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ckernel/registry.h"
#include "kernels/builder_internal.h"

_Static_assert(offsetof(ck_jit_kernel, code) == 16, "jit kernel: code @16");
_Static_assert(offsetof(ck_jit_kernel, dst_arena) == 24, "jit kernel: dst_arena @24");
_Static_assert(sizeof(ck_jit_kernel) == 32, "jit kernel: 32 bytes");
_Static_assert(offsetof(ck_jit_core_kernel, ndims) == 32, "jit core kernel: ndims @32");
_Static_assert(offsetof(ck_jit_core_kernel, dims) == 48, "jit core kernel: dims @48");
_Static_assert(sizeof(ck_jit_core_dim) == 32, "jit core dim: 4 words");
_Static_assert(offsetof(ck_jit_struct_kernel, narenas) == 32, "jit struct kernel: narenas @32");
_Static_assert(offsetof(ck_jit_struct_kernel, arenas) == 40, "jit struct kernel: arenas @40");

void ck_jit_kernel_layout(size_t *out_size, size_t *out_code_offset,
                          size_t *out_arena_offset) {
  if (out_size != NULL) {
    *out_size = sizeof(ck_jit_kernel);
  }
  if (out_code_offset != NULL) {
    *out_code_offset = offsetof(ck_jit_kernel, code);
  }
  if (out_arena_offset != NULL) {
    *out_arena_offset = offsetof(ck_jit_kernel, dst_arena);
  }
}

size_t ck_jit_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                            ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck_jit_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_MEMBLOCK, K, k, code);
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_MEMBLOCK, K, k, dst_arena);
  return f.n;
}

size_t ck_jit_struct_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                                   ck_kernel_field *out, size_t max) {
  typedef ck_jit_struct_kernel K;
  const K *k = (const K *)(const void *)self;
  size_t n = ck_jit_kernel_fields(self, info, out, max);
  ck__fields f = {out, max, n};
  CK__FIELD_INT(&f, K, k, narenas);
  for (intptr_t i = 0; i < k->narenas && i < 64; i++) {
    ck__field(&f, "arenas", (int32_t)i, CK_KERNEL_FIELD_MEMBLOCK,
              (intptr_t)(offsetof(K, arenas) + (size_t)i * sizeof(ck_memblock *)), 0,
              k->arenas[i], NULL);
  }
  return f.n;
}

size_t ck_jit_core_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                                 ck_kernel_field *out, size_t max) {
  typedef ck_jit_core_kernel K;
  const K *k = (const K *)(const void *)self;
  size_t n = ck_jit_kernel_fields(self, info, out, max);
  ck__fields f = {out, max, n};
  CK__FIELD_INT(&f, K, k, ndims);
  static const char *const kinds[] = {"strided", "var"};
  for (intptr_t i = 0; i < k->ndims && i < 64; i++) {
    const ck_jit_core_dim *d = &k->dims[i];
    intptr_t at = (intptr_t)(offsetof(K, dims) + (size_t)i * sizeof *d);
    int32_t ix = (int32_t)i;
    ck__field(&f, "dim_kind", ix, CK_KERNEL_FIELD_TEXT, at, 0, NULL,
              d->kind == CK_JIT_DIM_VAR ? kinds[1] : kinds[0]);
    if (d->kind != CK_JIT_DIM_VAR) {
      ck__field(&f, "dim_size", ix, CK_KERNEL_FIELD_INT,
                at + (intptr_t)offsetof(ck_jit_core_dim, size), (int64_t)d->size, NULL, NULL);
    }
    ck__field(&f, "dim_stride", ix, CK_KERNEL_FIELD_INT,
              at + (intptr_t)offsetof(ck_jit_core_dim, stride), (int64_t)d->stride, NULL,
              NULL);
    if (d->kind == CK_JIT_DIM_VAR) {
      ck__field(&f, "dim_offset", ix, CK_KERNEL_FIELD_INT,
                at + (intptr_t)offsetof(ck_jit_core_dim, offset), (int64_t)d->offset, NULL,
                NULL);
    }
  }
  return f.n;
}

/* Does `desc` provide the entry point of request `req`? */
static bool ck__jit_has_entry(const ck_jit_kernel_desc *desc, ck_kernel_request req) {
  return (req == CK_KERNEL_REQUEST_SINGLE && desc->single != NULL) ||
         (req == CK_KERNEL_REQUEST_STRIDED && desc->strided != NULL);
}

static void ck__jit_kernel_destruct(ck_prefix *self) {
  ck_jit_kernel *k = (ck_jit_kernel *)(void *)self;
  ck_memblock_decref(k->dst_arena);
  k->dst_arena = NULL;
  ck_memblock_decref(k->code);
  k->code = NULL;
}

static void ck__jit_core_kernel_destruct(ck_prefix *self) {
  ck_jit_core_kernel *k = (ck_jit_core_kernel *)(void *)self;
  ck_memblock_decref(k->text_arena);
  k->text_arena = NULL;
  ck__jit_kernel_destruct(self);
}

static void ck__jit_struct_kernel_destruct(ck_prefix *self) {
  ck_jit_struct_kernel *k = (ck_jit_struct_kernel *)(void *)self;
  for (intptr_t i = 0; i < k->narenas; i++) {
    ck_memblock_decref(k->arenas[i]);
    k->arenas[i] = NULL;
  }
  k->narenas = 0;
  ck__jit_kernel_destruct(self);
}

/* The string fields of struct `t` (depth-first, nested structs inside):
 * their count in *n and, when `meta` is not NULL, the blockref of each in
 * `out` (borrowed; NULL where the arrmeta has none).  Anything else that
 * needs an arena (var dims, strings under fixed dims, bytes) is refused. */
static ck_status ck__jit_struct_strings(const ck_jit_kernel_desc *d, ck_type t,
                                        const char *meta, ck_memblock **out, size_t *n,
                                        unsigned depth) {
  size_t nf = ck_struct_field_count(t);
  for (size_t i = 0; i < nf; i++) {
    const char *name;
    ck_type ft;
    size_t moff;
    (void)ck_struct_field(t, i, &name, &ft, NULL, &moff);
    ck_type_id id = ck_type_id_of(ft);
    if (id == CK_TYPE_STRING) {
      if (out != NULL) {
        out[*n] = meta == NULL ? NULL
                               : ((const ck_string_arrmeta *)(const void *)(meta + moff))
                                     ->blockref;
      }
      (*n)++;
    } else if (id == CK_TYPE_STRUCT && depth < CK_TYPE_MAX_DEPTH) {
      ck_status st = ck__jit_struct_strings(d, ft, meta == NULL ? NULL : meta + moff, out,
                                            n, depth + 1);
      if (st != CK_OK) {
        return st;
      }
    } else if (ck_type_flags(ft) & CK_TYPE_FLAG_BLOCKREF) {
      return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                      "jitted kernel '%.*s': struct result field '%s' needs an arena; "
                      "struct results hold numbers, bool, strings, nested structs and "
                      "fixed dims of numbers", CK_JIT_NAME_MAX - 1, d->name, name);
    }
  }
  return CK_OK;
}

/* The leaf of a desc with dst_struct: one arena per string field. */
static ck_status ck__jit_make_struct_kernel(ck_kernel_builder *ckb, size_t offset,
                                            const ck_jit_kernel_desc *desc,
                                            const char *dst_arrmeta, ck_kernel_request req,
                                            size_t *out_end) {
  ck_type t = desc->dst_struct;
  if (ck_type_id_of(t) != CK_TYPE_STRUCT || desc->dst_id != CK_TYPE_STRUCT) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s': dst_struct is not the struct result type",
                    CK_JIT_NAME_MAX - 1, desc->name);
  }
  size_t n = 0;
  ck_status st = ck__jit_struct_strings(desc, t, NULL, NULL, &n, 0);
  if (st != CK_OK) {
    return st;
  }
  size_t end;
  if (!ck__mul_size(n, sizeof(ck_memblock *), &end) ||
      !ck__add_size(end, sizeof(ck_jit_struct_kernel), &end) ||
      !ck__add_size(end, offset, &end)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu too large", offset);
  }
  st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    return st;
  }
  ck_jit_struct_kernel *k = (ck_jit_struct_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  /* the destination's arenas straight into the kernel, then a reference to
   * each (fresh ones where the destination has none) */
  size_t got = 0;
  (void)ck__jit_struct_strings(desc, t, dst_arrmeta, k->arenas, &got, 0);
  for (size_t i = 0; i < n; i++) {
    if (k->arenas[i] != NULL) {
      ck_memblock_incref(k->arenas[i]);
    } else if ((st = ck_pod_memblock_new(0, &k->arenas[i])) != CK_OK) {
      while (i > 0) {
        ck_memblock_decref(k->arenas[--i]);
      }
      return st;
    }
  }
  k->narenas = (intptr_t)n;
  k->base.base.destructor = ck__jit_struct_kernel_destruct;
  ck_memblock_incref(desc->code);
  k->base.code = desc->code;
  k->base.dst_arena = NULL;
  (void)ck_prefix_set_function(&k->base.base, req, desc->single, desc->strided);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

ck_status ck_jit_make_kernel(ck_kernel_builder *ckb, size_t offset,
                             const ck_jit_kernel_desc *desc,
                             const char *dst_arrmeta, ck_kernel_request req,
                             size_t *out_end) {
  if (ckb == NULL || desc == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (offset % CK_KERNEL_ALIGN != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "offset %zu is not a multiple of %d",
                    offset, CK_KERNEL_ALIGN);
  }
  ck_status slot = ck__check_kernel_slot(__func__, ckb, offset);
  if (slot != CK_OK) {
    return slot;
  }
  if (desc->dst_pattern != NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' has core dims: build it with "
                    "ck_jit_make_core_kernel (or apply it with ck_array_apply_core)",
                    CK_JIT_NAME_MAX - 1, desc->name);
  }
  if (!ck__jit_has_entry(desc, req)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' has no entry point for request %d",
                    CK_JIT_NAME_MAX - 1, desc->name, (int)req);
  }
  if (desc->dst_struct != NULL) {
    return ck__jit_make_struct_kernel(ckb, offset, desc, dst_arrmeta, req, out_end);
  }
  size_t end = offset + sizeof(ck_jit_kernel);
  if (end < offset) {
    return CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu too large", offset);
  }
  ck_memblock *arena = NULL;
  if (desc->dst_id == CK_TYPE_STRING) {
    if (dst_arrmeta != NULL &&
        ((const ck_string_arrmeta *)(const void *)dst_arrmeta)->blockref != NULL) {
      arena = ((const ck_string_arrmeta *)(const void *)dst_arrmeta)->blockref;
      ck_memblock_incref(arena);
    } else {
      ck_status st = ck_pod_memblock_new(0, &arena);
      if (st != CK_OK) {
        return st;
      }
    }
  }
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    ck_memblock_decref(arena);
    return st;
  }
  ck_jit_kernel *k = (ck_jit_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__jit_kernel_destruct;
  ck_memblock_incref(desc->code);
  k->code = desc->code;
  k->dst_arena = arena;
  (void)ck_prefix_set_function(&k->base, req, desc->single, desc->strided);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

/* A pattern of null-able rows, `?var * T` (ck_core_match takes it whole as
 * the element: an option is no dim); its dims are core dims all the same. */
static bool ck__jit_is_row_option(ck_type t) {
  return ck_type_is_option(t) && ck_type_ndim(t->element) > 0;
}

/* The core dims of a signature pattern (those under a null-able row too). */
static size_t ck__jit_pattern_ndim(ck_type p) {
  return ck__jit_is_row_option(p) ? ck_type_ndim(p->element) : ck_type_ndim(p);
}

/* Past the option of null-able rows (`?var * T` -> `var * T`, its arrmeta
 * after the ck_option_arrmeta; `m` may be NULL). */
static ck_type ck__jit_strip_rows(ck_type t, const char **m) {
  if (!ck__jit_is_row_option(t)) {
    return t;
  }
  if (*m != NULL) {
    *m += sizeof(ck_option_arrmeta);
  }
  return t->element;
}

/* The core dims of one operand (its core type and the arrmeta of its first
 * core dim) into `out`; returns how many were written. */
static size_t ck__jit_core_dims(ck_type t, const char *m, size_t ndim, ck_jit_core_dim *out) {
  t = ck__jit_strip_rows(t, &m);
  for (size_t i = 0; i < ndim; i++) {
    if (t->id == CK_TYPE_VAR_DIM) {
      const ck_var_dim_arrmeta *v = (const ck_var_dim_arrmeta *)(const void *)m;
      out[i].kind = CK_JIT_DIM_VAR;
      out[i].size = 0;
      out[i].stride = v->stride;
      out[i].offset = v->offset;
      m += sizeof(ck_var_dim_arrmeta);
    } else {
      const ck_dim_arrmeta *d = (const ck_dim_arrmeta *)(const void *)m;
      out[i].kind = CK_JIT_DIM_STRIDED;
      out[i].size = d->size;
      out[i].stride = d->stride;
      out[i].offset = 0;
      m += sizeof(ck_dim_arrmeta);
    }
    t = t->element;
  }
  return ndim;
}

/* The arrmeta of the element under an operand's `ndim` core dims (its core
 * type `t` and the arrmeta `m` of its first core dim, NULL when absent) in
 * *out_meta; the element type is returned. */
static ck_type ck__jit_core_element(ck_type t, const char *m, size_t ndim,
                                    const char **out_meta) {
  t = ck__jit_strip_rows(t, &m);
  for (size_t i = 0; i < ndim; i++) {
    if (m != NULL) {
      m += t->id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta) : sizeof(ck_dim_arrmeta);
    }
    t = t->element;
  }
  *out_meta = m;
  return t;
}

/* The option record of an operand whose pattern's element `p` is an option
 * (its own element: type `t`, arrmeta `m`; a plain `T` there has no nulls);
 * returns whether `p` is one. */
static bool ck__jit_core_option(ck_type p, ck_type t, const char *m, ck_jit_core_option *out) {
  if (!ck_type_is_option(p)) {
    return false;
  }
  if (!ck_type_is_option(t)) {
    m = NULL;
  }
  if (out != NULL) {
    const ck_option_arrmeta *o = (const ck_option_arrmeta *)(const void *)m;
    out->bits = o != NULL ? o->bits : NULL;
    out->bit_offset = o != NULL ? o->bit_offset : 0;
    out->origin = o != NULL ? o->origin : NULL;
    out->step = o != NULL && o->step > 0 ? o->step : 1;
  }
  return true;
}

ck_status ck_jit_make_core_kernel(ck_kernel_builder *ckb, size_t offset,
                                  const ck_jit_kernel_desc *desc, ck_type dst_type,
                                  const char *dst_arrmeta, size_t nsrc,
                                  const ck_type *src_types, const char *const *src_arrmeta,
                                  ck_kernel_request req, size_t *out_end) {
  if (ckb == NULL || desc == NULL || (nsrc > 0 && (src_types == NULL || src_arrmeta == NULL))) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (offset % CK_KERNEL_ALIGN != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "offset %zu is not a multiple of %d",
                    offset, CK_KERNEL_ALIGN);
  }
  ck_status st = ck__check_kernel_slot(__func__, ckb, offset);
  if (st != CK_OK) {
    return st;
  }
  const int nm = CK_JIT_NAME_MAX - 1;
  if (desc->dst_pattern == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' has no core dims: build it with "
                    "ck_jit_make_kernel", nm, desc->name);
  }
  if (nsrc != desc->nsrc) {
    return CK_ERROR(CK_ERR_TYPE, "jitted kernel '%.*s' takes %u arguments, not %zu", nm,
                    desc->name, (unsigned)desc->nsrc, nsrc);
  }
  if (!ck__jit_has_entry(desc, req)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' has no entry point for request %d", nm,
                    desc->name, (int)req);
  }
  if (ck__jit_is_row_option(desc->dst_pattern) &&
      (ck_type_ndim(desc->dst_pattern->element) != 1 ||
       ck_type_id_of(desc->dst_pattern->element) != CK_TYPE_VAR_DIM)) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "jitted kernel '%.*s': a result of null-able rows is one var dim "
                    "(?var * R)", nm, desc->name);
  }
  /* the operands are exactly the core: no outer dims left */
  ck_dim_bindings b;
  memset(&b, 0, sizeof b);
  size_t outer = 0, ndims = 0;
  char what[CK_JIT_NAME_MAX + 32];
  for (size_t j = 0; j < nsrc; j++) {
    snprintf(what, sizeof what, "%.*s: argument %zu", nm, desc->name, j);
    st = ck_core_match(desc->src_patterns[j], src_types[j], src_arrmeta[j], what, &b, &outer);
    if (st == CK_OK && outer != 0) {
      st = CK_ERROR(CK_ERR_TYPE, "%s: %zu dims more than the core (lift the kernel with "
                    "ck_make_core_kernel)", what, outer);
    }
    if (st != CK_OK) {
      return st;
    }
    ndims += ck__jit_pattern_ndim(desc->src_patterns[j]);
  }
  snprintf(what, sizeof what, "%.*s: the result", nm, desc->name);
  st = ck_core_match(desc->dst_pattern, dst_type, dst_arrmeta, what, &b, &outer);
  if (st == CK_OK && outer != 0) {
    st = CK_ERROR(CK_ERR_TYPE, "%s: %zu dims more than the core", what, outer);
  }
  if (st != CK_OK) {
    return st;
  }
  size_t dst_nd = ck__jit_pattern_ndim(desc->dst_pattern);
  ndims += dst_nd;
  /* the arena of the result's var core dim (at most one); null-able rows
   * (`?var * R`): past their option, whose bitmap ck_jit_var_option_finish
   * writes from the rows the code marked CK_JIT_NULL_ROW */
  const ck_var_dim_arrmeta *var_meta = NULL;
  size_t nvar = 0;
  const char *m = dst_arrmeta;
  ck_type t = ck__jit_strip_rows(dst_type, &m);
  for (size_t i = 0; i < dst_nd; i++) {
    if (t->id == CK_TYPE_VAR_DIM) {
      var_meta = (const ck_var_dim_arrmeta *)(const void *)m;
      nvar++;
    }
    m += t->id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta) : sizeof(ck_dim_arrmeta);
    t = t->element;
  }
  /* string elements: `var * string`, `var * ?string` (the text goes to the
   * string arena) and `N * ?string` (into the string arena as a `?string`
   * result's: the kernel's dst_arena) */
  bool opt_el = ck_type_is_option(t);
  ck_type vt = opt_el ? t->element : t;
  const char *vm_str = m != NULL && opt_el ? m + sizeof(ck_option_arrmeta) : m;
  bool var_strings = dst_nd == 1 && nvar == 1 && ck_type_id_of(vt) == CK_TYPE_STRING;
  bool fixed_strings = dst_nd > 0 && nvar == 0 && opt_el &&
                       ck_type_id_of(vt) == CK_TYPE_STRING;
  if (nvar > 1 || (dst_nd > 0 && ck_type_id_of(vt) == CK_TYPE_STRING && !var_strings &&
                   !fixed_strings)) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "jitted kernel '%.*s': results with core dims have at most one var "
                    "dim, and string elements only as var * string, var * ?string or "
                    "N * ?string", nm, desc->name);
  }
  ck_memblock *text = NULL;
  if (var_strings) {
    text = vm_str != NULL ? ((const ck_string_arrmeta *)(const void *)vm_str)->blockref
                          : NULL;
    if (text == NULL) {
      st = ck_pod_memblock_new(0, &text); /* no destination arena: one of its own */
      if (st != CK_OK) {
        return st;
      }
    } else {
      ck_memblock_incref(text);
    }
  }
  /* one option record per operand with option elements (result first) */
  const char *em, *pm;
  ck_type dst_el = ck__jit_core_element(dst_type, dst_arrmeta, dst_nd, &em);
  ck_type dst_pel = ck__jit_core_element(desc->dst_pattern, NULL, dst_nd, &pm);
  size_t nopt = ck__jit_core_option(dst_pel, dst_el, em, NULL) ? 1 : 0;
  for (size_t j = 0; j < nsrc; j++) {
    size_t nd = ck__jit_pattern_ndim(desc->src_patterns[j]);
    nopt += ck__jit_is_row_option(desc->src_patterns[j]) ? 1 : 0; /* the rows' bitmap */
    nopt += ck__jit_core_option(ck__jit_core_element(desc->src_patterns[j], NULL, nd, &pm),
                                src_types[j], NULL, NULL) ? 1 : 0;
  }
  size_t end;
  if (!ck__mul_size(ndims, sizeof(ck_jit_core_dim), &end) ||
      !ck__add_size(end, nopt * sizeof(ck_jit_core_option), &end) ||
      !ck__add_size(end, sizeof(ck_jit_core_kernel), &end) ||
      !ck__add_size(end, offset, &end)) {
    ck_memblock_decref(text);
    return CK_ERROR(CK_ERR_OVERFLOW, "kernel offset %zu too large", offset);
  }
  ck_memblock *arena = NULL;
  if (var_meta != NULL) {
    arena = var_meta->blockref;
  } else if (dst_nd == 0 && desc->dst_id == CK_TYPE_STRING) {
    /* a `?string` result: the string arrmeta after the option's */
    const char *sm = dst_arrmeta;
    if (sm != NULL && ck_type_is_option(dst_type)) {
      sm += sizeof(ck_option_arrmeta);
    }
    arena = sm != NULL ? ((const ck_string_arrmeta *)(const void *)sm)->blockref : NULL;
  } else if (fixed_strings) { /* `N * ?string`: the elements' string arena */
    arena = vm_str != NULL ? ((const ck_string_arrmeta *)(const void *)vm_str)->blockref
                           : NULL;
  }
  st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    ck_memblock_decref(text);
    return st;
  }
  if (arena == NULL &&
      (var_meta != NULL || desc->dst_id == CK_TYPE_STRING || fixed_strings)) {
    st = ck_pod_memblock_new(0, &arena); /* no destination arena: one of its own */
    if (st != CK_OK) {
      ck_memblock_decref(text);
      return st;
    }
  } else {
    ck_memblock_incref(arena);
  }
  ck_jit_core_kernel *k = (ck_jit_core_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.base.destructor = ck__jit_core_kernel_destruct;
  ck_memblock_incref(desc->code);
  k->base.code = desc->code;
  k->base.dst_arena = arena;
  k->text_arena = text;
  k->ndims = (intptr_t)ndims;
  size_t at = ck__jit_core_dims(dst_type, dst_arrmeta, dst_nd, k->dims);
  for (size_t j = 0; j < nsrc; j++) {
    at += ck__jit_core_dims(src_types[j], src_arrmeta[j],
                            ck__jit_pattern_ndim(desc->src_patterns[j]), k->dims + at);
  }
  ck_jit_core_option *opts = (ck_jit_core_option *)(void *)(k->dims + ndims);
  size_t o = 0;
  if (ck__jit_core_option(dst_pel, dst_el, em, &opts[o])) {
    o++;
  }
  for (size_t j = 0; j < nsrc; j++) {
    size_t nd = ck__jit_pattern_ndim(desc->src_patterns[j]);
    /* null-able rows: their own bitmap's record first (the slot at `p` is a
     * row's ck_var_dim_data), then the elements' */
    if (ck__jit_is_row_option(desc->src_patterns[j]) &&
        ck__jit_core_option(desc->src_patterns[j], src_types[j], src_arrmeta[j], &opts[o])) {
      o++;
    }
    ck_type pel = ck__jit_core_element(desc->src_patterns[j], NULL, nd, &pm);
    ck_type el = ck__jit_core_element(src_types[j], src_arrmeta[j], nd, &em);
    if (ck__jit_core_option(pel, el, em, &opts[o])) {
      o++;
    }
  }
  (void)ck_prefix_set_function(&k->base.base, req, desc->single, desc->strided);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

static void ck__jit_sig_text(const ck_jit_kernel_desc *d, char *buf, size_t n) {
  size_t pos = 0;
  int w = snprintf(buf, n, "(");
  pos = w > 0 ? (size_t)w : 0;
  for (uint32_t i = 0; i < d->nsrc && pos < n; i++) {
    w = snprintf(buf + pos, n - pos, "%s%s", i ? ", " : "",
                 ck_type_id_name(d->src_ids[i]));
    pos += w > 0 ? (size_t)w : 0;
  }
  if (pos < n) {
    (void)snprintf(buf + pos, n - pos, ") -> %s", ck_type_id_name(d->dst_id));
  }
}

ck_status ck_jit_child_factory(void *child_data, ck_kernel_builder *ckb,
                               size_t offset, ck_type dst_type,
                               const char *dst_arrmeta, size_t nsrc,
                               const ck_type *src_types,
                               const char *const *src_arrmeta,
                               ck_kernel_request req, size_t *out_end) {
  const ck_jit_kernel_desc *d = (const ck_jit_kernel_desc *)child_data;
  if (d == NULL || (nsrc > 0 && src_types == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (d->dst_pattern != NULL) {
    return ck_jit_make_core_kernel(ckb, offset, d, dst_type, dst_arrmeta, nsrc, src_types,
                                   src_arrmeta, req, out_end);
  }
  bool ok = nsrc == d->nsrc && ck_type_id_of(dst_type) == d->dst_id;
  for (size_t i = 0; ok && i < nsrc; i++) {
    ok = ck_type_id_of(src_types[i]) == d->src_ids[i];
  }
  if (!ok) {
    char want[256];
    char got[256];
    ck__jit_sig_text(d, want, sizeof want);
    size_t pos = 0;
    int w = snprintf(got, sizeof got, "(");
    pos = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < nsrc && pos < sizeof got; i++) {
      w = snprintf(got + pos, sizeof got - pos, "%s%s", i ? ", " : "",
                   ck_type_id_name(ck_type_id_of(src_types[i])));
      pos += w > 0 ? (size_t)w : 0;
    }
    if (pos < sizeof got) {
      (void)snprintf(got + pos, sizeof got - pos, ") -> %s",
                     ck_type_id_name(ck_type_id_of(dst_type)));
    }
    return CK_ERROR(CK_ERR_TYPE, "jitted kernel '%.*s' is compiled for %s, not %s",
                    CK_JIT_NAME_MAX - 1, d->name, want, got);
  }
  return ck_jit_make_kernel(ckb, offset, d, dst_arrmeta, req, out_end);
}

/* ---- registry ------------------------------------------------------------ */

static ck_status ck__jit_registry_factory(ck_kernel_builder *ckb, size_t offset,
                                          ck_kernel_request req, void *user_data,
                                          size_t *out_end) {
  return ck_jit_make_kernel(ckb, offset, (const ck_jit_kernel_desc *)user_data,
                            NULL, req, out_end);
}

static void ck__jit_registry_release(void *user_data) {
  ck_jit_kernel_desc *d = (ck_jit_kernel_desc *)user_data;
  if (d != NULL) {
    ck_memblock_decref(d->code);
    ck__free(d);
  }
}

ck_status ck_jit_register(const char *op_name, const ck_jit_kernel_desc *desc) {
  if (op_name == NULL || desc == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (desc->nsrc > CK_LIFT_MAX_NSRC || desc->nsrc > CK_OP_MAX_ARGS ||
      desc->nsrc == 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' takes %u arguments; operations take 1..%d",
                    CK_JIT_NAME_MAX - 1, desc->name, (unsigned)desc->nsrc,
                    CK_OP_MAX_ARGS);
  }
  if (desc->single == NULL || desc->strided == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "jitted kernel '%.*s' lacks an entry point",
                    CK_JIT_NAME_MAX - 1, desc->name);
  }
  if (desc->dst_pattern != NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' has core dims; operations are elementwise",
                    CK_JIT_NAME_MAX - 1, desc->name);
  }
  if (desc->dst_struct != NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "jitted kernel '%.*s' returns a struct holding strings; operations "
                    "return single elements", CK_JIT_NAME_MAX - 1, desc->name);
  }
  ck_jit_kernel_desc *copy = CK_MALLOC(sizeof *copy);
  if (copy == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  memcpy(copy, desc, sizeof *copy);
  copy->name[CK_JIT_NAME_MAX - 1] = '\0';
  ck_memblock_incref(copy->code);
  /* on failure the registry has already released `copy` */
  return ck_op_register_factory(op_name, desc->nsrc, desc->dst_id, desc->src_ids,
                                ck__jit_registry_factory, copy,
                                ck__jit_registry_release);
}
