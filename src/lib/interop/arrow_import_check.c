/*
 * arrow_import_check.c -- the checks of a foreign ArrowArray node before
 * the import reads it: its own fields, buffer and child lists, the address
 * space its offsets may reach, list rows, null counts against the
 * validity bitmap, and nulls against the fill policy (let through, filled,
 * or refused) (arrow_import_internal.h).
 */
#include "interop/arrow_import_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

ck_status ck__ibad(ck__ictx *c, const char *fmt, ...) {
  char what[300], msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_arrow_import", "%s: %s",
                   ck__iwhat(c, what, sizeof what), msg);
}

/* ---- checks ------------------------------------------------------------------- */

/* The buffers each layout has (views: at least; their variadic buffers come
 * on top) and its children. */
static int64_t want_buffers(ck__arrow_kind k) {
  switch (k) {
  case CK__ARROW_NULL: return 0;
  case CK__ARROW_FIXED_LIST:
  case CK__ARROW_STRUCT: return 1;
  case CK__ARROW_BOOL:
  case CK__ARROW_PRIMITIVE:
  case CK__ARROW_LIST:
  case CK__ARROW_LARGE_LIST: return 2;
  default: return 3; /* offsets + data, views + sizes, list views */
  }
}

/* The bytes per element of buffer 1 (values, offsets, views; list views'
 * sizes in buffer 2 have the same width), 0 for layouts without one. */
static int64_t index_width(const ck__arrow_format *f) {
  switch (f->kind) {
  case CK__ARROW_PRIMITIVE: return (int64_t)ck_type_data_size(CK_BUILTIN(f->prim));
  case CK__ARROW_UTF8:
  case CK__ARROW_BINARY:
  case CK__ARROW_LIST:
  case CK__ARROW_LIST_VIEW: return 4;
  case CK__ARROW_LARGE_UTF8:
  case CK__ARROW_LARGE_BINARY:
  case CK__ARROW_LARGE_LIST:
  case CK__ARROW_LARGE_LIST_VIEW: return 8;
  case CK__ARROW_UTF8_VIEW:
  case CK__ARROW_BINARY_VIEW: return 16;
  default: return 0; /* bits, or nothing but children */
  }
}

/* Check the node's own fields and that logical [start, start + count) is
 * inside it. */
ck_status ck__icheck_node(ck__ictx *c, const struct ArrowSchema *s, const struct ArrowArray *a,
                          const ck__arrow_format *f, int64_t start, int64_t count) {
  if (a == NULL) {
    return BAD(c, "the array is NULL");
  }
  if (a->release == NULL) {
    char what[300];
    return ck__error(CK_ERR_INVALID_STATE, "ck_arrow_import", "%s: the array is released",
                     ck__iwhat(c, what, sizeof what));
  }
  if (a->length < 0 || a->offset < 0 || a->null_count < -1) {
    return BAD(c, "negative length, offset or null count (%lld, %lld, %lld)",
               (long long)a->length, (long long)a->offset, (long long)a->null_count);
  }
  if (a->offset > INT64_MAX - a->length) {
    return BAD(c, "offset %lld + length %lld overflows", (long long)a->offset,
               (long long)a->length);
  }
  if (a->null_count > a->length) {
    return BAD(c, "null count %lld exceeds the length %lld", (long long)a->null_count,
               (long long)a->length);
  }
  /* every element the layout indexes (one more offset than elements) lies
   * within the address space, so no byte offset below wraps */
  int64_t width = index_width(f), last = a->offset + a->length;
  if (width > 0 && last > PTRDIFF_MAX / width - 1) {
    return BAD(c, "offset %lld + length %lld elements of %lld bytes overflow the "
               "address space", (long long)a->offset, (long long)a->length,
               (long long)width);
  }
  if (start < 0 || count < 0 || start > a->length - count) {
    return BAD(c, "has %lld elements, its parent refers to elements %lld..%lld",
               (long long)a->length, (long long)start, (long long)(start + count));
  }
  int64_t nb = want_buffers(f->kind);
  bool view = f->kind == CK__ARROW_UTF8_VIEW || f->kind == CK__ARROW_BINARY_VIEW;
  if (view ? a->n_buffers < nb : a->n_buffers != nb) {
    return BAD(c, "format '%s' has %lld buffers, expected %s%lld", s->format,
               (long long)a->n_buffers, view ? "at least " : "", (long long)nb);
  }
  if (a->n_buffers > 0 && a->buffers == NULL) {
    return BAD(c, "the buffer list is NULL");
  }
  if (a->n_children != s->n_children) {
    return BAD(c, "%lld children, the schema has %lld", (long long)a->n_children,
               (long long)s->n_children);
  }
  if (a->n_children > 0 && a->children == NULL) {
    return BAD(c, "the child list is NULL");
  }
  for (int64_t i = 0; i < a->n_children; i++) {
    if (a->children[i] == NULL) {
      return BAD(c, "child %lld is NULL", (long long)i);
    }
  }
  if (a->dictionary != NULL) {
    return BAD(c, "has a dictionary its schema does not declare");
  }
  for (int64_t i = 1; i < nb && count > 0; i++) {
    /* the data buffer of utf8/binary may be NULL when every value is empty
     * (checked per element by ck__ifill_strings); a view array without variadic
     * buffers may have NULL sizes */
    bool data_of_offsets = i == 2 && (f->kind == CK__ARROW_UTF8 ||
                                      f->kind == CK__ARROW_LARGE_UTF8 ||
                                      f->kind == CK__ARROW_BINARY ||
                                      f->kind == CK__ARROW_LARGE_BINARY);
    if (a->buffers[i] == NULL && !data_of_offsets && !(view && i == 2)) {
      return BAD(c, "buffer %lld is NULL", (long long)i);
    }
  }
  if (view && a->n_buffers > 3 && a->buffers[a->n_buffers - 1] == NULL) {
    return BAD(c, "the variadic buffer sizes are NULL");
  }
  return CK_OK;
}

/* Nulls among physical indices [from, from + count); the validity bitmap
 * in *bits (NULL when there are none). */
ck_status ck__icount_nulls(ck__ictx *c, const struct ArrowArray *a, int64_t from,
                           int64_t count, const uint8_t **bits, int64_t *out) {
  *bits = NULL;
  *out = 0;
  if (a->null_count == 0 || a->n_buffers == 0 || a->buffers[0] == NULL) {
    if (a->null_count > 0 && a->n_buffers > 0) {
      return BAD(c, "null count %lld without a validity buffer", (long long)a->null_count);
    }
    return CK_OK;
  }
  const uint8_t *b = a->buffers[0];
  int64_t n = count - ck_bitmap_count_set(b, from, count); /* 64 bits at a time */
  *bits = n > 0 ? b : NULL;
  *out = n;
  return CK_OK;
}

void ck__ifill_nulls(const uint8_t *bits, int64_t from, int64_t count, char *dst,
                     intptr_t dstride, const char *fv, size_t size) {
  for (int64_t j = 0; j < count; j += 64) {
    int n = count - j >= 64 ? 64 : (int)(count - j);
    uint64_t nulls = ~ck_bitmap_word(bits, from + j, n);
    if (n < 64) {
      nulls &= (UINT64_C(1) << n) - 1;
    }
    while (nulls != 0) {
      int64_t k = j + __builtin_ctzll(nulls);
      memcpy(dst + k * dstride, fv, size);
      nulls &= nulls - 1;
    }
  }
}

ck_status ck__inull_error(ck__ictx *c, int64_t nulls, int64_t count, bool fillable) {
  char what[300];
  if (fillable) {
    return ck__error(CK_ERR_VALUE, "ck_arrow_import",
                     "%s holds %lld nulls (of %lld values); ckernels arrays have no "
                     "missing values: give a fill value", ck__iwhat(c, what, sizeof what),
                     (long long)nulls, (long long)count);
  }
  return ck__error(CK_ERR_VALUE, "ck_arrow_import",
                   "%s holds %lld nulls (of %lld values); null structs and fixed-size "
                   "lists cannot be filled", ck__iwhat(c, what, sizeof what),
                   (long long)nulls, (long long)count);
}

/* The fill value converted to `leaf`: a 0-d array kept by the owner (its
 * strings' bytes stay alive with it); *out points at its data. */
static ck_status fill_value(ck__ictx *c, ck_type leaf, const char **out) {
  ck_array_preamble *v;
  ck_status st = ck_array_empty(leaf, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &v);
  if (st != CK_OK) {
    return st;
  }
  st = ck_array_assign(v, c->fill, CK_ERRMODE_DEFAULT);
  if (st != CK_OK) {
    char what[300];
    ck_array_decref(v);
    return ck__error_context(st, "ck_arrow_import", "the fill value for %s",
                             ck__iwhat(c, what, sizeof what));
  }
  ck__iowner *o = c->owner;
  if (o->nkeep == o->capkeep) {
    size_t cap = o->capkeep ? 2 * o->capkeep : 4;
    ck_array_preamble **k = ck__realloc(o->keep, cap * sizeof *k, "ck_arrow_import");
    if (k == NULL) {
      ck_array_decref(v);
      return CK_ERR_NO_MEMORY;
    }
    o->keep = k;
    o->capkeep = cap;
  }
  o->keep[o->nkeep++] = v;
  *out = v->data;
  return CK_OK;
}

/* The nulls of a leaf among physical [from, from + count): *bits is the
 * validity bitmap (NULL when none is null) and *fv the fill value converted
 * to `t`; nulls without a fill value are the error. */
ck_status ck__ileaf_nulls(ck__ictx *c, ck_type t, const struct ArrowArray *a, int64_t from,
                          int64_t count, const uint8_t **bits, const char **fv) {
  int64_t nulls;
  *fv = NULL;
  bool nullable = c->nulls_ok;
  c->nulls_ok = false;
  ck_status st = ck__icount_nulls(c, a, from, count, bits, &nulls);
  if (st != CK_OK || nulls == 0) {
    return st;
  }
  if (nullable) {
    static const char zeros[32]; /* the widest leaf: a complex128 or a ck_string */
    *fv = zeros;
    return CK_OK;
  }
  if (c->fill == NULL) {
    return ck__inull_error(c, nulls, count, true);
  }
  return fill_value(c, t, fv);
}

/* Row k of a list or list view as (offset, size), checked: both
 * non-negative, offset + size within int64 (list offsets: not decreasing). */
ck_status ck__ilist_row(ck__ictx *c, const void *offsets, const void *sizes, bool large,
                        int64_t k, int64_t *o, int64_t *n) {
  *o = ck__ioffset_at(offsets, large, k);
  if (*o < 0) {
    return BAD(c, "row %lld has negative offset %lld", (long long)k, (long long)*o);
  }
  if (sizes == NULL) {
    int64_t next = ck__ioffset_at(offsets, large, k + 1);
    if (next < *o) {
      return BAD(c, "offsets %lld and %lld decrease (%lld > %lld)", (long long)k,
                 (long long)(k + 1), (long long)*o, (long long)next);
    }
    *n = next - *o;
    return CK_OK;
  }
  *n = ck__ioffset_at(sizes, large, k);
  if (*n < 0) {
    return BAD(c, "row %lld has negative size %lld", (long long)k, (long long)*n);
  }
  if (*n > INT64_MAX - *o) {
    return BAD(c, "row %lld: offset %lld + size %lld overflows", (long long)k,
               (long long)*o, (long long)*n);
  }
  return CK_OK;
}

/* ---- nulls as option types ------------------------------------------------------- */

/* The exact nulls of a checked root, counted from its validity bitmap --
 * the producer's null_count is never trusted: one that is known (not -1)
 * and disagrees with the bitmap is refused. */
ck_status ck__iroot_null_count(ck__ictx *c, const struct ArrowArray *a) {
  if (a->n_buffers == 0 || a->buffers[0] == NULL || a->null_count == -1) {
    return CK_OK;
  }
  int64_t n = a->length - ck_bitmap_count_set(a->buffers[0], a->offset, a->length);
  if (a->null_count != n) {
    return BAD(c, "null count %lld disagrees with the validity bitmap, which holds %lld "
               "nulls", (long long)a->null_count, (long long)n);
  }
  return CK_OK;
}
