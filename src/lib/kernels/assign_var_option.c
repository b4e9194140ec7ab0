/*
 * assign_var_option.c -- the storage of `var * ?T` rows an assignment
 * allocates (ck__var_option_rows_prepare, lift_internal.h).
 *
 * An option's bitmap is keyed by data address (docs/kernel-abi.md "Option
 * types"): one option arrmeta serves every row, so the `?T` elements of rows
 * in separate allocations have no bitmap that covers them.  Before such an
 * assignment runs, this pass lays the destination out as Arrow does and as
 * ck_jit_var_option_finish lays out the jit's `var * ?R` results: the rows'
 * elements one after another (C order of the outer dim) in one allocation of
 * the var dim's arena, one bitmap over them (bit offset 0, all null until
 * the assignment marks the values it writes valid), every row's
 * ck_var_dim_data pointing at its part.  The assignment then finds its rows
 * allocated and writes into them.
 *
 * Shapes handled: a destination `N * var * ?T` or `N * ?var * ?T` (one
 * fixed/strided dim, T without dims) whose rows are all unallocated
 * ({NULL, 0}) and whose element option has no bitmap yet, filled from
 * sources `M_k * var * U` or `M_k * ?var * U` that cover the N rows in order
 * (sum of M_k == N; a null source row takes no room).  Anything else is left
 * to the assignment as it is.
 */
#include "kernels/lift_internal.h"
#include "types/type_internal.h"
#include "ckernel/pod_allocator.h"
#include "ckernel/validity.h"

#include <string.h>

/* The row type under the outer dim of `t` (`var * X` or `?var * X`), its
 * option arrmeta (or NULL) and var arrmeta; false when `t` is not that. */
static bool ck__rows_of(ck_type t, const char *meta, ck_type *out_var,
                        const ck_option_arrmeta **out_rows,
                        const ck_var_dim_arrmeta **out_vm) {
  if (!ck__is_dim(t) || t->id == CK_TYPE_VAR_DIM || meta == NULL) {
    return false;
  }
  ck_type r = t->element;
  meta += sizeof(ck_dim_arrmeta);
  *out_rows = NULL;
  if (ck_type_is_option(r)) {
    *out_rows = (const ck_option_arrmeta *)(const void *)meta;
    meta += sizeof(ck_option_arrmeta);
    r = r->element;
  }
  if (ck_type_id_of(r) != CK_TYPE_VAR_DIM) {
    return false;
  }
  *out_var = r;
  *out_vm = (const ck_var_dim_arrmeta *)(const void *)meta;
  return true;
}

/* The size of source row i (0 for a null row). */
static ck_status ck__src_row_size(const ck_array_preamble *p, intptr_t i, size_t *out) {
  const char *meta = ck_array_arrmeta(p);
  const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)meta;
  ck_type var;
  const ck_option_arrmeta *rows;
  const ck_var_dim_arrmeta *vm;
  (void)ck__rows_of(p->type, meta, &var, &rows, &vm);
  const char *row = p->data + i * dm->stride;
  if (rows != NULL) {
    bool valid = true;
    ck_status st = ck_option_get_valid(rows, row, &valid);
    if (st != CK_OK) {
      return st;
    }
    if (!valid) {
      *out = 0;
      return CK_OK;
    }
  }
  ck_var_dim_data d;
  memcpy(&d, row, sizeof d);
  *out = d.size;
  return CK_OK;
}

ck_status ck__var_option_rows_prepare(ck_array_preamble *dst, size_t nparts,
                                      const ck_array_preamble *const *parts) {
  char *meta = ck_array_arrmeta(dst);
  ck_type var;
  const ck_option_arrmeta *drows;
  const ck_var_dim_arrmeta *vm;
  if (!ck__rows_of(dst->type, meta, &var, &drows, &vm) || !ck_type_is_option(var->element) ||
      ck_type_ndim(var->element->element) != 0) {
    return CK_OK;
  }
  char *opt_meta = (char *)(uintptr_t)vm + sizeof(ck_var_dim_arrmeta);
  const ck_option_arrmeta *om = (const ck_option_arrmeta *)(const void *)opt_meta;
  ck_type vt = var->element->element;
  size_t esize = ck_type_data_size(vt);
  if (om->bits != NULL || vm->blockref == NULL || vm->offset != 0 ||
      vm->stride != (intptr_t)esize || esize == 0) {
    return CK_OK; /* a bitmap already, or a view: the assignment as it is */
  }
  const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)meta;
  intptr_t n = dm->size, covered = 0;
  for (size_t k = 0; k < nparts; k++) {
    ck_type pv;
    const ck_option_arrmeta *pr;
    const ck_var_dim_arrmeta *pvm;
    if (parts[k] == NULL ||
        !ck__rows_of(parts[k]->type, ck_array_arrmeta(parts[k]), &pv, &pr, &pvm)) {
      return CK_OK;
    }
    covered += ((const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(parts[k]))->size;
  }
  if (covered != n) {
    return CK_OK; /* broadcasting: the assignment reports what does not fit */
  }
  for (intptr_t i = 0; i < n; i++) {
    ck_var_dim_data d;
    memcpy(&d, dst->data + i * dm->stride, sizeof d);
    if (d.begin != NULL || d.size != 0) {
      return CK_OK; /* rows allocated already */
    }
  }
  /* pass 1: the elements over every row */
  size_t total = 0;
  for (size_t k = 0; k < nparts; k++) {
    intptr_t m = ((const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(parts[k]))->size;
    for (intptr_t i = 0; i < m; i++) {
      size_t sz;
      ck_status st = ck__src_row_size(parts[k], i, &sz);
      if (st != CK_OK) {
        return st;
      }
      if (sz > (SIZE_MAX - 64) / esize - total) {
        return CK_ERROR(CK_ERR_OVERFLOW, "rows of more than SIZE_MAX bytes in all");
      }
      total += sz;
    }
  }
  if (total == 0) {
    return CK_OK; /* no element: nothing to hold a null */
  }
  char *begin = NULL, *end = NULL;
  ck_status st = ck_pod_allocate(vm->blockref, total * esize, ck_type_data_alignment(vt),
                                 &begin, &end);
  if (st != CK_OK) {
    return st;
  }
  memset(begin, 0, total * esize); /* elements holding strings read as empty */
  ck_memblock *bitmap = NULL;
  uint8_t *bits = NULL;
  st = ck_fixed_size_pod_memblock_new(((total + 63) / 64) * 8, 8, &bitmap, (char **)&bits);
  if (st != CK_OK) {
    return st;
  }
  st = ck_option_attach_bitmap(var->element, opt_meta, bits, bitmap, 0, begin,
                               (intptr_t)esize, (int64_t)total);
  ck_memblock_decref(bitmap);
  if (st != CK_OK) {
    return st;
  }
  /* pass 2: each row's part (zero bits: null until the assignment writes it) */
  size_t at = 0;
  intptr_t i = 0;
  for (size_t k = 0; k < nparts; k++) {
    intptr_t m = ((const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(parts[k]))->size;
    for (intptr_t q = 0; q < m; q++, i++) {
      size_t sz = 0;
      (void)ck__src_row_size(parts[k], q, &sz); /* pass 1 read it */
      ck_var_dim_data d = {sz > 0 ? begin + at * esize : NULL, sz};
      memcpy(dst->data + i * dm->stride, &d, sizeof d);
      at += sz;
    }
  }
  return CK_OK;
}
