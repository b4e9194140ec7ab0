/*
 * jit_var_option.c -- `var * ?R`, `?var * R` and `?var * ?R` results of
 * jitted kernels with core dims (ck_jit_var_option_finish, ckernel/jit.h).
 *
 * The compiled code builds each result row as one allocation of the
 * destination's var arena, like a `var * R` row, but of records: R's value
 * then one validity byte (1 = valid), CK_JIT_VAR_OPTION_RECORD bytes each.
 * The rows are separate allocations (a row is grown in place while it is
 * built), which one address-keyed bitmap cannot cover, so once every row is
 * written this pass lays the result out as Arrow does: every row's values
 * one after another in one new allocation (C order of the outer dims), the
 * elements' bitmap over them, the records' arena released with the last
 * reference to it.
 *
 * Null-able rows (`?var * R`): the compiled code marks a null row by writing
 * {CK_JIT_NULL_ROW, 0} into its ck_var_dim_data (threads write neighbouring
 * rows, so no bit is written there: two rows share a byte of the bitmap);
 * this pass clears the rows' bits of those (a bitmap the array got from
 * ck_array_empty) and makes them empty rows {NULL, 0}.
 */
#include "core/core_internal.h"
#include "ckernel/jit.h"
#include "ckernel/pod_allocator.h"
#include "ckernel/validity.h"

#include <string.h>

typedef struct ck__vopt_state {
  bool elements;     /* `?R` elements: records to lay out       */
  const ck_option_arrmeta *rows; /* the rows' option, or NULL    */
  size_t null_rows;  /* pass 1: rows marked CK_JIT_NULL_ROW      */
  size_t value_size; /* bytes of R                              */
  size_t rec_size;   /* bytes of one record                     */
  const ck_var_dim_arrmeta *core; /* the core var dim's arrmeta */
  size_t total;      /* elements over every row                 */
  char *values;      /* pass 2: the next value's slot           */
  uint8_t *bits;     /* pass 2: the bitmap                      */
  size_t at;         /* pass 2: elements written                */
  bool write;        /* pass 2                                  */
} ck__vopt_state;

/* One row's records -> values and bits, a fixed-size copy per element for
 * the sizes of the jit's element types (the compiler inlines it), zeros
 * under a null (never the bytes of the record). */
#define CK__VOPT_COPY(SIZE)                                                      \
  for (size_t i = 0; i < n; i++, rec += rs, out += (SIZE), at++) {               \
    unsigned ok = rec[(SIZE)] != 0;                                              \
    memcpy(out, rec, (SIZE));                                                    \
    if (!ok) {                                                                   \
      memset(out, 0, (SIZE));                                                    \
    }                                                                            \
    bits[at >> 3] = (uint8_t)(bits[at >> 3] | (ok << (at & 7)));                 \
  }

static void ck__vopt_copy_row(ck__vopt_state *s, const char *rec, size_t n) {
  char *out = s->values;
  uint8_t *bits = s->bits;
  size_t at = s->at, rs = s->rec_size;
  switch (s->value_size) {
  case 1:
    CK__VOPT_COPY(1)
    break;
  case 2:
    CK__VOPT_COPY(2)
    break;
  case 4:
    CK__VOPT_COPY(4)
    break;
  case 8:
    CK__VOPT_COPY(8)
    break;
  case 16:
    CK__VOPT_COPY(16)
    break;
  default:
    for (size_t i = 0; i < n; i++, rec += rs, out += s->value_size, at++) {
      unsigned ok = rec[s->value_size] != 0;
      if (ok) {
        memcpy(out, rec, s->value_size);
      } else {
        memset(out, 0, s->value_size);
      }
      bits[at >> 3] = (uint8_t)(bits[at >> 3] | (ok << (at & 7)));
    }
  }
  s->values = out;
  s->at = at;
}
#undef CK__VOPT_COPY

/* A row the code marked null ({CK_JIT_NULL_ROW, 0}): pass 1 counts it and
 * checks its bit is covered; pass 2 clears the bit and makes it {NULL, 0}. */
static ck_status ck__vopt_null_row(ck__vopt_state *s, ck_var_dim_data *d) {
  if (d->size != 0) {
    return CK_ERROR(CK_ERR_VALUE, "a ?var * R result row marked null holds %zu elements",
                    d->size);
  }
  if (!s->write) {
    int64_t bit;
    s->null_rows++;
    return ck_option_slot_bit(s->rows, (const char *)d, &bit); /* covered (or none) */
  }
  d->begin = NULL;
  /* pass 1 checked that the bitmap exists and covers the row */
  return ck_option_set_valid(s->rows, (const char *)d, false);
}

static ck_status ck__vopt_walk(ck_type t, const char *meta, char *data, ck__vopt_state *s) {
  switch (ck_type_id_of(t)) {
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)(const void *)meta;
    const char *em = meta + sizeof(ck_dim_arrmeta);
    if (!s->elements && s->rows != NULL && ck_type_is_option(t->element) &&
        (const void *)(em + sizeof(ck_option_arrmeta)) == (const void *)s->core) {
      /* `?var * R` rows right under this dim: only the marks, one tight loop */
      for (intptr_t i = 0; i < dm->size; i++) {
        ck_var_dim_data *d = (ck_var_dim_data *)(void *)(data + i * dm->stride);
        if (d->begin == CK_JIT_NULL_ROW) {
          ck_status st = ck__vopt_null_row(s, d);
          if (st != CK_OK) {
            return st;
          }
        }
      }
      return CK_OK;
    }
    for (intptr_t i = 0; i < dm->size; i++) {
      ck_status st = ck__vopt_walk(t->element, meta + sizeof(ck_dim_arrmeta),
                                   data + i * dm->stride, s);
      if (st != CK_OK) {
        return st;
      }
    }
    return CK_OK;
  }
  case CK_TYPE_OPTION: /* the null-able rows over the core var dim */
    return ck__vopt_walk(t->element, meta + sizeof(ck_option_arrmeta), data, s);
  case CK_TYPE_VAR_DIM: {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)(const void *)meta;
    ck_var_dim_data *d = (ck_var_dim_data *)(void *)data;
    if (vm == s->core && s->rows != NULL && d->begin == CK_JIT_NULL_ROW) {
      return ck__vopt_null_row(s, d);
    }
    if (vm == s->core && !s->elements) {
      return CK_OK;
    }
    if (vm == s->core) { /* a result row of records */
      if (!s->write) {
        if (d->size > SIZE_MAX - s->total) {
          return CK_ERROR(CK_ERR_OVERFLOW, "a var * ?R result of more than SIZE_MAX elements");
        }
        s->total += d->size;
        return CK_OK;
      }
      char *first = s->values;
      if (d->size > 0) {
        ck__vopt_copy_row(s, d->begin + vm->offset, d->size);
      }
      d->begin = d->size > 0 ? first : NULL; /* the core dim's offset becomes 0 */
      return CK_OK;
    }
    for (size_t i = 0; i < d->size; i++) {
      ck_status st = ck__vopt_walk(t->element, meta + sizeof(ck_var_dim_arrmeta),
                                   d->begin + vm->offset + (intptr_t)i * vm->stride, s);
      if (st != CK_OK) {
        return st;
      }
    }
    return CK_OK;
  }
  default:
    return CK_ERROR(CK_ERR_TYPE, "ck_jit_var_option_finish: a dim above the result's "
                    "core var dim is neither fixed, strided nor var");
  }
}

size_t ck_jit_var_option_record_size(ck_type value_type) {
  size_t size = ck_type_data_size(value_type);
  size_t align = ck_type_data_alignment(value_type);
  return CK_JIT_VAR_OPTION_RECORD(size, align);
}

ck_status ck_jit_var_option_finish(ck_array_preamble *a) {
  if (a == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL array");
  }
  /* the core: the last dim, var (under an option for null-able rows), over
   * R or ?R (one of the two options at least) */
  ck_type t = a->type;
  char *meta = ck_array_arrmeta(a);
  char *core_meta = NULL;
  const ck_option_arrmeta *rows = NULL;
  ck_type opt = NULL;
  for (;;) {
    if (ck_type_is_option(t) && ck_type_id_of(t->element) == CK_TYPE_VAR_DIM &&
        ck_type_ndim(t->element) == 1) {
      rows = (const ck_option_arrmeta *)(const void *)meta;
      meta += sizeof(ck_option_arrmeta);
      t = t->element;
    }
    if (ck_type_ndim(t) == 0) {
      break;
    }
    bool row_below = ck_type_is_option(t->element) && ck_type_ndim(t->element->element) > 0;
    if (ck_type_id_of(t) == CK_TYPE_VAR_DIM && ck_type_ndim(t) == 1 && !row_below) {
      core_meta = meta;
      opt = ck_type_is_option(t->element) ? t->element : NULL;
      break;
    }
    rows = NULL;
    meta += ck_type_id_of(t) == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta)
                                                 : sizeof(ck_dim_arrmeta);
    t = t->element;
  }
  if (core_meta == NULL || (opt == NULL && rows == NULL)) {
    return CK_ERROR(CK_ERR_TYPE, "ck_jit_var_option_finish: the array's last dim is not "
                    "var * ?R, ?var * R or ?var * ?R");
  }
  ck_var_dim_arrmeta *vm = (ck_var_dim_arrmeta *)(void *)core_meta;
  char *opt_meta = core_meta + sizeof(ck_var_dim_arrmeta);
  ck__vopt_state s;
  memset(&s, 0, sizeof s);
  s.elements = opt != NULL;
  s.rows = rows;
  s.value_size = opt != NULL ? ck_type_data_size(opt->element) : 0;
  s.rec_size = opt != NULL ? ck_jit_var_option_record_size(opt->element) : 0;
  s.core = vm;
  ck_status st = ck__vopt_walk(a->type, ck_array_arrmeta(a), a->data, &s);
  if (st != CK_OK) {
    return st;
  }
  if (s.null_rows > 0 && rows->bits == NULL) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED, "a ?var * R result with %zu null rows under a "
                    "var dim: no bitmap covers rows in separate allocations (null rows "
                    "under fixed or strided dims only)", s.null_rows);
  }
  if (opt == NULL) { /* `?var * R`: the rows' bits only */
    s.write = true;
    return ck__vopt_walk(a->type, ck_array_arrmeta(a), a->data, &s);
  }
  if (s.total > (SIZE_MAX - 64) / (s.value_size > 0 ? s.value_size : 1)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "a var * ?R result of %zu elements", s.total);
  }
  size_t nbytes = s.total * s.value_size;
  ck_memblock *arena = NULL, *bitmap = NULL;
  st = ck_pod_memblock_new(nbytes > 0 ? nbytes : 64, &arena);
  if (st != CK_OK) {
    return st;
  }
  char *begin = NULL, *end = NULL;
  if (nbytes > 0) {
    st = ck_pod_allocate(arena, nbytes, ck_type_data_alignment(opt->element), &begin, &end);
    if (st == CK_OK) {
      size_t nbits = ((s.total + 63) / 64) * 8;
      st = ck_fixed_size_pod_memblock_new(nbits, 8, &bitmap, (char **)&s.bits);
    }
    if (st != CK_OK) {
      ck_memblock_decref(arena);
      return st;
    }
  }
  s.values = begin;
  s.write = true;
  st = ck__vopt_walk(a->type, ck_array_arrmeta(a), a->data, &s);
  if (st == CK_OK && nbytes > 0) {
    st = ck_option_attach_bitmap(opt, opt_meta, s.bits, bitmap, 0, begin,
                                 (intptr_t)s.value_size, (int64_t)s.total);
  }
  ck_memblock_decref(bitmap);
  if (st != CK_OK) { /* not reached for a walk that counted: the same dims */
    ck_memblock_decref(arena);
    return st;
  }
  ck_memblock *old = vm->blockref;
  vm->blockref = arena; /* the arrmeta's reference */
  vm->stride = (intptr_t)s.value_size;
  vm->offset = 0;
  ck_memblock_decref(old);
  return CK_OK;
}
