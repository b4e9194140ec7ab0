/*
 * assign_var_option.c -- the storage of var rows with option items that an
 * assignment allocates (ck__var_option_rows_prepare, lift_internal.h).
 *
 * An option's bitmap is keyed by data address (docs/kernel-abi.md "Option
 * types"): one option arrmeta serves every row, so the `?T` items of rows in
 * separate allocations have no bitmap that covers them.  Before such an
 * assignment runs, this pass lays the destination out as Arrow does and as
 * ck_jit_var_option_finish lays out the jit's `var * ?R` results: the rows'
 * items one after another (C order of the outer dim) in one allocation of
 * the var dim's arena, each option slot set of the items (`?T`, option
 * fields of a struct, null-able inner rows) one bitmap over them (bit offset
 * 0, as ck_array_empty gives: all valid, the assignment then copies the
 * nulls), every row's ck_var_dim_data pointing at its part.  Inner var dims
 * of the items (`var * ?var * ?T`) get the same, level by level.  The
 * assignment then finds its rows allocated, of the sources' sizes, and
 * writes into them.
 *
 * Shapes handled: a destination `N * R`, R = `var * E` or `?var * E` (one
 * fixed/strided dim, E holding an option), whose rows are all unallocated
 * ({NULL, 0}), filled from sources `M_k * var * F` or `M_k * ?var * F` that
 * cover the N rows in order (sum of M_k == N; a null source row takes no
 * room).  Anything else (broadcasting, rows allocated already) is left to
 * the assignment as it is.
 */
#include "kernels/lift_internal.h"
#include "arrays/array_internal.h"
#include "types/type_internal.h"
#include "ckernel/pod_allocator.h"
#include "ckernel/validity.h"

#include <stdatomic.h>
#include <string.h>

/* A row slot type `var * X` or `?var * X` with its arrmeta, parsed. */
typedef struct ck__row_kind {
  const ck_option_arrmeta *rows; /* the rows' option, or NULL */
  ck_type var;
  char *vmeta;                   /* the var dim's arrmeta */
} ck__row_kind;

static bool ck__parse_row(ck_type t, const char *meta, ck__row_kind *out) {
  out->rows = NULL;
  if (ck_type_is_option(t)) {
    out->rows = (const ck_option_arrmeta *)(const void *)meta;
    meta += sizeof(ck_option_arrmeta);
    t = t->element;
  }
  out->var = t;
  out->vmeta = (char *)(uintptr_t)meta;
  return ck_type_id_of(t) == CK_TYPE_VAR_DIM;
}

/* Source row at `p`: its size (0 for a null row) and first item. */
static ck_status ck__src_row(const ck__row_kind *k, const char *p, size_t *out_size,
                             const char **out_first) {
  if (k->rows != NULL) {
    bool valid = true;
    ck_status st = ck_option_get_valid(k->rows, p, &valid);
    if (st != CK_OK) {
      return st;
    }
    if (!valid) {
      *out_size = 0;
      *out_first = NULL;
      return CK_OK;
    }
  }
  ck_var_dim_data d;
  memcpy(&d, p, sizeof d);
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(const void *)k->vmeta;
  *out_size = d.size;
  *out_first = d.size > 0 && d.begin != NULL ? d.begin + vm->offset : NULL;
  return CK_OK;
}

/* One level: n destination row slots (type dt, arrmeta dmeta) at drows[i],
 * filled from source row slots of type st at srows[i], arrmeta smetas[i]
 * (the parts of a stream have arrmeta of their own). */
static ck_status ck__prepare_rows(ck_type dt, const char *dmeta, size_t n, char *const *drows,
                                  const ck_type *stypes, const char *const *smetas,
                                  const char *const *srows) {
  ck__row_kind dk, sk;
  if (!ck__parse_row(dt, dmeta, &dk)) {
    return CK_OK;
  }
  for (size_t i = 0; i < n; i++) {
    if (!ck__parse_row(stypes[i], smetas[i], &sk)) {
      return CK_OK; /* not a row: the assignment reports it */
    }
  }
  ck_type et = dk.var->element;
  char *emeta = dk.vmeta + sizeof(ck_var_dim_arrmeta);
  ck_var_dim_arrmeta *vm = (ck_var_dim_arrmeta *)(void *)dk.vmeta;
  size_t esize = ck_type_data_size(et);
  if (!(ck_type_flags(et) & CK_TYPE_FLAG_OPTION) || vm->blockref == NULL ||
      vm->offset != 0 || esize == 0 || vm->stride != (intptr_t)esize) {
    return CK_OK; /* nothing to hold a null, or a view: the assignment as it is */
  }
  for (size_t i = 0; i < n; i++) {
    ck_var_dim_data d;
    memcpy(&d, drows[i], sizeof d);
    if (d.begin != NULL || d.size != 0) {
      return CK_OK; /* rows allocated already */
    }
  }
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    size_t sz;
    const char *first;
    (void)ck__parse_row(stypes[i], smetas[i], &sk);
    ck_status s = ck__src_row(&sk, srows[i], &sz, &first);
    if (s != CK_OK) {
      return s;
    }
    if (sz > (size_t)INTPTR_MAX / esize - total) {
      return CK_ERROR(CK_ERR_OVERFLOW, "var rows of more than INTPTR_MAX bytes in all");
    }
    total += sz;
  }
  if (total == 0) {
    return CK_OK;
  }
  char *begin = NULL, *end = NULL;
  ck_status s = ck_pod_allocate(vm->blockref, total * esize, ck_type_data_alignment(et),
                                &begin, &end);
  if (s != CK_OK) {
    return s;
  }
  memset(begin, 0, total * esize); /* items holding strings or rows read as empty */
  if ((s = ck__validity_alloc_slots(et, emeta, begin, (intptr_t)esize, (intptr_t)total)) !=
      CK_OK) {
    return s;
  }
  /* the inner level: items that are (null-able) rows themselves */
  ck__row_kind ik;
  bool inner = ck__parse_row(et, emeta, &ik) &&
               (ck_type_flags(ik.var->element) & CK_TYPE_FLAG_OPTION);
  char **idst = NULL;
  const char **isrc = NULL, **imeta = NULL;
  ck_type *itype = NULL;
  if (inner) {
    idst = ck__calloc(total, sizeof *idst, "ck_array_assign");
    isrc = ck__calloc(total, sizeof *isrc, "ck_array_assign");
    imeta = ck__calloc(total, sizeof *imeta, "ck_array_assign");
    itype = ck__calloc(total, sizeof *itype, "ck_array_assign");
    if (idst == NULL || isrc == NULL || imeta == NULL || itype == NULL) {
      ck__free(idst);
      ck__free((void *)isrc);
      ck__free((void *)imeta);
      ck__free(itype);
      return CK_ERR_NO_MEMORY;
    }
  }
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    size_t sz = 0;
    const char *first = NULL;
    (void)ck__parse_row(stypes[i], smetas[i], &sk);
    (void)ck__src_row(&sk, srows[i], &sz, &first); /* read above */
    ck_var_dim_data d = {sz > 0 ? begin + at * esize : NULL, sz};
    memcpy(drows[i], &d, sizeof d);
    const ck_var_dim_arrmeta *svm = (const ck_var_dim_arrmeta *)(const void *)sk.vmeta;
    for (size_t q = 0; inner && q < sz; q++) {
      idst[at + q] = begin + (at + q) * esize;
      isrc[at + q] = first + (intptr_t)q * svm->stride;
      imeta[at + q] = sk.vmeta + sizeof(ck_var_dim_arrmeta);
      itype[at + q] = sk.var->element;
    }
    at += sz;
  }
  if (inner) {
    s = ck__prepare_rows(et, emeta, total, idst, itype, imeta, isrc);
    ck__free(idst);
    ck__free((void *)isrc);
    ck__free((void *)imeta);
    ck__free(itype);
  }
  return s;
}

ck_status ck__var_option_rows_prepare(ck_array_preamble *dst, size_t nparts,
                                      const ck_array_preamble *const *parts) {
  ck_type t = dst->type;
  char *meta = ck_array_arrmeta(dst);
  if (!ck__is_dim(t) || t->id == CK_TYPE_VAR_DIM || !(ck_type_flags(t) & CK_TYPE_FLAG_OPTION) ||
      dst->data == NULL) {
    return CK_OK;
  }
  if (dst->data_ref != NULL ||
      atomic_load_explicit(&dst->memblock.refcount, memory_order_acquire) != 1) {
    /* a view, or an array others hold: a bitmap attached to this arrmeta
     * would not be seen through theirs (the assignment refuses a null) */
    return CK_OK;
  }
  ck__row_kind dk;
  const char *rmeta = meta + sizeof(ck_dim_arrmeta);
  if (!ck__parse_row(t->element, rmeta, &dk)) {
    return CK_OK;
  }
  const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)meta;
  intptr_t covered = 0;
  for (size_t k = 0; k < nparts; k++) {
    const ck_array_preamble *p = parts[k];
    ck__row_kind sk;
    if (p == NULL || !ck__is_dim(p->type) || p->type->id == CK_TYPE_VAR_DIM ||
        !ck__parse_row(p->type->element, ck_array_arrmeta(p) + sizeof(ck_dim_arrmeta), &sk)) {
      return CK_OK; /* the assignment reports what does not fit */
    }
    covered += ((const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(p))->size;
  }
  if (covered != dm->size || dm->size <= 0) {
    return CK_OK; /* broadcasting, or nothing */
  }
  size_t n = (size_t)dm->size;
  char **drows = ck__calloc(n, sizeof *drows, "ck_array_assign");
  const char **srows = ck__calloc(n, sizeof *srows, "ck_array_assign");
  const char **smetas = ck__calloc(n, sizeof *smetas, "ck_array_assign");
  ck_type *stypes = ck__calloc(n, sizeof *stypes, "ck_array_assign");
  if (drows == NULL || srows == NULL || smetas == NULL || stypes == NULL) {
    ck__free(drows);
    ck__free((void *)srows);
    ck__free((void *)smetas);
    ck__free(stypes);
    return CK_ERR_NO_MEMORY;
  }
  ck_status s = CK_OK;
  size_t i = 0;
  for (size_t k = 0; k < nparts; k++) {
    const ck_dim_arrmeta *pm = (const ck_dim_arrmeta *)(const void *)ck_array_arrmeta(parts[k]);
    for (intptr_t q = 0; q < pm->size; q++, i++) {
      drows[i] = dst->data + (intptr_t)i * dm->stride;
      srows[i] = parts[k]->data + q * pm->stride;
      smetas[i] = ck_array_arrmeta(parts[k]) + sizeof(ck_dim_arrmeta);
      stypes[i] = parts[k]->type->element;
    }
  }
  s = ck__prepare_rows(t->element, rmeta, n, drows, stypes, smetas, srows);
  ck__free(drows);
  ck__free((void *)srows);
  ck__free((void *)smetas);
  ck__free(stypes);
  return s;
}
