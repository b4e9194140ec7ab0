/*
 * arrow_import.c -- Arrow C data (ArrowSchema + ArrowArray, device arrays on
 * the CPU, streams) as ck arrays (arrow.h).
 *
 * The imported ArrowArray is moved into an "owner" held by an external
 * memblock; whatever the new array shares with Arrow (a primitive buffer,
 * the text of strings, the elements of lists of primitives) is kept alive by
 * a reference to that memblock (the data reference, a string arrmeta's or a
 * var dim's blockref).  The rest is copied into the array's own memory.
 *
 * One recursive pass, `fill`, writes `count` elements of one Arrow node
 * (logical indices start .. start + count) into ck memory, checking the
 * node as it goes: every node is visited once, so checks and copies are
 * linear in the data.
 *
 * The checks of a node, the strings' case and the stream import are files
 * of their own (arrow_import_internal.h maps them; arrow_export.c is the
 * other direction).
 */
#include "interop/arrow_import_internal.h"
#include "types/type_internal.h"
#include "arrays/array_internal.h"
#include "ckernel/validity.h"

#include <string.h>

/* ---- the owner of the imported array ------------------------------------------ */

static void iowner_release(void *obj) {
  ck__iowner *o = obj;
  ck__arrow_array_release(&o->array);
  for (size_t i = 0; i < o->nkeep; i++) {
    ck_array_decref(o->keep[i]);
  }
  ck__free(o->keep);
  ck__free(o);
}

/* ---- the recursive pass ---------------------------------------------------------- */

static ck_status fill(ck__ictx *c, ck_type t, char *arrmeta, char *dst, intptr_t dstride,
                      const struct ArrowSchema *s, const struct ArrowArray *a,
                      int64_t start, int64_t count);

static ck_status fill_numbers(ck__ictx *c, ck_type t, char *dst, intptr_t dstride,
                              const struct ArrowArray *a, const ck__arrow_format *f,
                              int64_t from, int64_t count) {
  const uint8_t *bits;
  const char *fv;
  ck_status st = ck__ileaf_nulls(c, t, a, from, count, &bits, &fv);
  if (st != CK_OK) {
    return st;
  }
  size_t es = ck_type_data_size(t);
  if (f->kind == CK__ARROW_BOOL) {
    const uint8_t *src = a->buffers[1];
    for (int64_t i = 0; i < count; i++) {
      int64_t k = from + i;
      if (bits != NULL && !ck__ivalid(bits, k)) {
        dst[i * dstride] = *fv;
      } else {
        dst[i * dstride] = (char)((src[k >> 3] >> (k & 7)) & 1);
      }
    }
    return CK_OK;
  }
  if (count == 0) {
    return CK_OK; /* the values may be NULL then (ck__icheck_node) */
  }
  const char *src = (const char *)a->buffers[1] + (size_t)from * es;
  if (dstride == (intptr_t)es) { /* the values, then the fill value over the nulls */
    memcpy(dst, src, (size_t)count * es);
    if (bits != NULL) {
      ck__ifill_nulls(bits, from, count, dst, dstride, fv, es);
    }
    return CK_OK;
  }
  for (int64_t i = 0; i < count; i++) {
    memcpy(dst + i * dstride, bits != NULL && !ck__ivalid(bits, from + i) ? fv : src + i * es,
           es);
  }
  return CK_OK;
}

/* Lists without nulls (offsets of type T): whether offsets [0, count] do
 * not decrease from a non-negative first (one branch-free pass), and the
 * rows' {begin, size} written over the elements at `block` (`estride`
 * bytes apart, element `lo` first). */
#define CK__ROWS_FN(T)                                                                     \
  static bool rows_ok_##T(const T *off, int64_t count) {                                   \
    unsigned bad = off[0] < 0;                                                             \
    for (int64_t i = 0; i < count; i++) {                                                  \
      bad |= off[i + 1] < off[i];                                                          \
    }                                                                                      \
    return bad == 0;                                                                       \
  }                                                                                        \
  static void rows_write_##T(const T *off, int64_t count, char *block, int64_t lo,         \
                             intptr_t estride, char *dst, intptr_t dstride) {              \
    for (int64_t i = 0; i < count; i++) {                                                  \
      ck_var_dim_data *d = (ck_var_dim_data *)(void *)(dst + i * dstride);                 \
      int64_t n = (int64_t)off[i + 1] - off[i];                                            \
      d->begin = n == 0 ? NULL : block + (off[i] - lo) * estride;                          \
      d->size = (size_t)n;                                                                 \
    }                                                                                      \
  }
CK__ROWS_FN(int32_t)
CK__ROWS_FN(int64_t)
#undef CK__ROWS_FN

static ck_status fill_list(ck__ictx *c, ck_type t, char *arrmeta, char *dst, intptr_t dstride,
                           const struct ArrowSchema *s, const struct ArrowArray *a,
                           const ck__arrow_format *f, int64_t from, int64_t count) {
  const uint8_t *bits;
  int64_t nulls;
  bool nullable = c->nulls_ok;
  c->nulls_ok = false;
  ck_status st = ck__icount_nulls(c, a, from, count, &bits, &nulls);
  if (st != CK_OK) {
    return st;
  }
  if (nulls > 0 && c->fill == NULL && !nullable) {
    return ck__inull_error(c, nulls, count, true); /* with a fill: empty lists */
  }
  bool large = f->kind == CK__ARROW_LARGE_LIST || f->kind == CK__ARROW_LARGE_LIST_VIEW;
  bool listview = f->kind == CK__ARROW_LIST_VIEW || f->kind == CK__ARROW_LARGE_LIST_VIEW;
  const void *offsets = a->buffers[1];
  const void *sizes = listview ? a->buffers[2] : NULL;
  const struct ArrowArray *child = a->children[0];
  const struct ArrowSchema *cs = s->children[0];
  /* the children's range [lo, hi), checked row by row (lists without
   * nulls: one pass over the offsets) */
  int64_t lo = INT64_MAX, hi = 0;
  bool plain = bits == NULL && sizes == NULL && count > 0 &&
               (large ? rows_ok_int64_t((const int64_t *)offsets + from, count)
                      : rows_ok_int32_t((const int32_t *)offsets + from, count));
  if (plain) {
    lo = ck__ioffset_at(offsets, large, from);
    hi = ck__ioffset_at(offsets, large, from + count);
    if (hi == lo) {
      lo = hi = 0;
    }
  }
  for (int64_t i = 0; !plain && i < count; i++) {
    int64_t k = from + i, o = 0, n = 0;
    if (bits != NULL && !ck__ivalid(bits, k)) {
      continue; /* a null row's offsets are not read */
    }
    if ((st = ck__ilist_row(c, offsets, sizes, large, k, &o, &n)) != CK_OK) {
      return st;
    }
    if (n > 0) {
      lo = o < lo ? o : lo;
      hi = o + n > hi ? o + n : hi;
    }
  }
  if (hi == 0) {
    lo = 0;
  }
  ck__arrow_format cf;
  (void)ck__arrow_parse_format(cs->format, &cf); /* checked by the schema pass */
  size_t mark = ck__arrow_path_push(&c->path, NULL);
  if (child == NULL || child->release == NULL || hi > child->length) {
    st = child == NULL || child->release == NULL
             ? ck__icheck_node(c, cs, child, &cf, 0, 0)
             : BAD(c, "has %lld elements, the list offsets reach %lld",
                   (long long)child->length, (long long)hi);
    ck__arrow_path_pop(&c->path, mark);
    return st;
  }
  ck_var_dim_arrmeta *vm = (ck_var_dim_arrmeta *)arrmeta;
  ck_type el = ck_type_element(t);
  size_t es = ck_type_data_size(el);
  /* zero-copy: numbers (not bools) without nulls, aligned */
  bool share = false;
  int64_t cfrom = 0;
  if (cf.kind == CK__ARROW_PRIMITIVE && c->per_row == 0) {
    st = ck__icheck_node(c, cs, child, &cf, lo, hi - lo);
    const uint8_t *cbits;
    int64_t cnulls = 0;
    if (st == CK_OK) {
      st = ck__icount_nulls(c, child, child->offset + lo, hi - lo, &cbits, &cnulls);
    }
    if (st != CK_OK) {
      ck__arrow_path_pop(&c->path, mark);
      return st;
    }
    cfrom = child->offset + lo; /* checked: within the child */
    share = cnulls == 0 && hi > lo &&
            ((uintptr_t)child->buffers[1] % ck_type_data_alignment(el)) == 0;
  }
  char *block = NULL;
  intptr_t estride;
  if (share) {
    ck__iuse_owner(c, &vm->blockref);
    vm->stride = (intptr_t)es;
    vm->offset = 0;
    estride = (intptr_t)es;
    block = (char *)child->buffers[1] + (size_t)cfrom * es;
  } else if (hi > lo) {
    estride = vm->stride;
    size_t nbytes;
    if (!ck__mul_size((size_t)(hi - lo), (size_t)estride, &nbytes)) {
      ck__arrow_path_pop(&c->path, mark);
      return CK_ERROR(CK_ERR_OVERFLOW, "%lld list elements", (long long)(hi - lo));
    }
    char *end;
    st = ck_pod_allocate(vm->blockref, nbytes, ck_type_data_alignment(el), &block, &end);
    if (st == CK_OK) {
      ck_type_id eid = ck_type_id_of(el);
      if (eid != CK_TYPE_STRING && eid != CK_TYPE_BYTES) {
        memset(block, 0, nbytes); /* strings and bytes: ck__ifill_strings writes every slot */
      }
      st = fill(c, el, arrmeta + sizeof *vm, block, estride, cs, child, lo, hi - lo);
    }
    if (st != CK_OK) {
      ck__arrow_path_pop(&c->path, mark);
      return st;
    }
  } else {
    estride = vm->stride;
  }
  ck__arrow_path_pop(&c->path, mark);
  if (plain && large) {
    rows_write_int64_t((const int64_t *)offsets + from, count, block, lo, estride, dst,
                       dstride);
    return CK_OK;
  }
  if (plain) {
    rows_write_int32_t((const int32_t *)offsets + from, count, block, lo, estride, dst,
                       dstride);
    return CK_OK;
  }
  for (int64_t i = 0; i < count; i++) {
    int64_t k = from + i, o = 0, n = 0;
    ck_var_dim_data *d = (ck_var_dim_data *)(dst + i * dstride);
    if (!(bits != NULL && !ck__ivalid(bits, k))) {
      (void)ck__ilist_row(c, offsets, sizes, large, k, &o, &n); /* checked above */
    }
    if (n == 0) {
      d->begin = NULL;
      d->size = 0;
    } else {
      d->begin = block + (o - lo) * estride;
      d->size = (size_t)n;
    }
  }
  return CK_OK;
}

static ck_status fill(ck__ictx *c, ck_type t, char *arrmeta, char *dst, intptr_t dstride,
                      const struct ArrowSchema *s, const struct ArrowArray *a,
                      int64_t start, int64_t count) {
  if (ck_type_is_option(t)) {
    /* the value with its nulls let through, then Arrow's bitmap (zero-copy,
     * kept by the owner) over the slots just written */
    if (c->per_row > 0) {
      return BAD(c, "nulls under a fixed-size list in a struct are not imported");
    }
    c->nulls_ok = true;
    ck_status st = fill(c, ck_type_element(t), arrmeta + sizeof(ck_option_arrmeta), dst,
                        dstride, s, a, start, count);
    c->nulls_ok = false;
    if (st == CK_OK && count > 0 && a->buffers[0] != NULL) {
      st = ck_option_attach_bitmap(t, arrmeta, (uint8_t *)a->buffers[0], c->owner_mb,
                                   a->offset + start, dst, dstride, count);
    }
    return st;
  }
  bool nullable = c->nulls_ok;
  c->nulls_ok = false;
  ck__arrow_format f;
  if (!ck__arrow_parse_format(s->format, &f)) {
    return BAD(c, "unknown format"); /* the schema pass refused it first */
  }
  ck_status st = ck__icheck_node(c, s, a, &f, start, count);
  if (st != CK_OK) {
    return st;
  }
  int64_t from = a->offset + start;
  switch (f.kind) {
  case CK__ARROW_BOOL:
  case CK__ARROW_PRIMITIVE:
    c->nulls_ok = nullable;
    return fill_numbers(c, t, dst, dstride, a, &f, from, count);
  case CK__ARROW_UTF8:
  case CK__ARROW_LARGE_UTF8:
  case CK__ARROW_UTF8_VIEW:
  case CK__ARROW_BINARY:
  case CK__ARROW_LARGE_BINARY:
  case CK__ARROW_BINARY_VIEW:
    c->nulls_ok = nullable;
    return ck__ifill_strings(c, t, arrmeta, dst, dstride, a, &f, from, count);
  case CK__ARROW_LIST:
  case CK__ARROW_LARGE_LIST:
  case CK__ARROW_LIST_VIEW:
  case CK__ARROW_LARGE_LIST_VIEW:
    c->nulls_ok = nullable;
    return fill_list(c, t, arrmeta, dst, dstride, s, a, &f, from, count);
  case CK__ARROW_FIXED_LIST:
  case CK__ARROW_STRUCT: {
    const uint8_t *bits;
    int64_t nulls;
    if ((st = ck__icount_nulls(c, a, from, count, &bits, &nulls)) != CK_OK) {
      return st;
    }
    if (nulls > 0 && !nullable) {
      return ck__inull_error(c, nulls, count, false);
    }
    if (f.kind == CK__ARROW_FIXED_LIST) {
      const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)arrmeta;
      int64_t n = f.fixed_size;
      ck_type el = ck_type_element(t);
      size_t mark = ck__arrow_path_push(&c->path, NULL);
      if (from + count > INT64_MAX / (n > 0 ? n : 1)) { /* from + count: checked */
        st = BAD(c, "fixed-size list indices overflow");
      } else if (dstride == n * dm->stride) {
        st = fill(c, el, arrmeta + sizeof *dm, dst, dm->stride, s->children[0],
                  a->children[0], from * n, count * n);
      } else {
        c->per_row++;
        for (int64_t i = 0; st == CK_OK && i < count; i++) {
          st = fill(c, el, arrmeta + sizeof *dm, dst + i * dstride, dm->stride,
                    s->children[0], a->children[0], (from + i) * n, n);
        }
        c->per_row--;
      }
      ck__arrow_path_pop(&c->path, mark);
      return st;
    }
    size_t nf = ck_struct_field_count(t);
    const uintptr_t *offs = (const uintptr_t *)arrmeta;
    for (size_t i = 0; st == CK_OK && i < nf; i++) {
      const char *name;
      ck_type ft;
      size_t moff;
      (void)ck_struct_field(t, i, &name, &ft, NULL, &moff);
      size_t mark = ck__arrow_path_push(&c->path, name);
      st = fill(c, ft, arrmeta + moff, dst + offs[i], dstride, s->children[i],
                a->children[i], from, count);
      ck__arrow_path_pop(&c->path, mark);
    }
    return st;
  }
  case CK__ARROW_NULL:
    break;
  }
  return BAD(c, "format '%s' cannot be imported", s->format);
}

/* The first element when the root holds numbers (not bools), or fixed-size
 * lists of them at any depth, without nulls and aligned: then the whole
 * array is one C-contiguous block of Arrow's leaf buffer, shared.  NULL
 * otherwise (the array is filled; malformed input is reported there). */
static const char *shared_block(ck__ictx *c, const struct ArrowSchema *s,
                                const struct ArrowArray *a, ck_type el) {
  int64_t phys = a->offset, count = a->length;
  for (int depth = 0; depth < CK_TYPE_MAX_DEPTH; depth++) {
    ck__arrow_format f;
    const uint8_t *bits;
    int64_t nulls;
    if (!ck__arrow_parse_format(s->format, &f) ||
        ck__icheck_node(c, s, a, &f, phys - a->offset, count) != CK_OK ||
        ck__icount_nulls(c, a, phys, count, &bits, &nulls) != CK_OK || nulls > 0) {
      ck_clear_error();
      return NULL;
    }
    if (f.kind == CK__ARROW_PRIMITIVE) {
      const char *data = (const char *)a->buffers[1];
      size_t es = ck_type_data_size(el);
      return (uintptr_t)data % ck_type_data_alignment(el) == 0 ? data + (size_t)phys * es
                                                                 : NULL;
    }
    if (f.kind != CK__ARROW_FIXED_LIST || f.fixed_size == 0) {
      return NULL;
    }
    int64_t n = f.fixed_size;
    const struct ArrowArray *child = a->children[0];
    if (phys + count > INT64_MAX / n || child->release == NULL ||
        child->offset < 0 || child->offset > INT64_MAX - phys * n) {
      return NULL;
    }
    phys = child->offset + phys * n;
    count *= n;
    s = s->children[0];
    a = child;
  }
  return NULL;
}

/* ---- entry points --------------------------------------------------------------- */

/* A dictionary-encoded array: its indices and its dictionary imported as two
 * arrays (each zero-copy where it can be), joined (arrow_dictionary.c). */
static ck_status import_dictionary(const struct ArrowSchema *schema, struct ArrowArray *array,
                                   const ck_array_preamble *fill_arr, ck_array_preamble **out) {
  if (fill_arr != NULL) {
    ck__arrow_array_release(array);
    return CK_ERROR(CK_ERR_NOT_SUPPORTED, "the top level is dictionary-encoded: import it "
                    "without a fill value (null indices become ?dictionary[...]) and fill "
                    "after decoding");
  }
  struct ArrowSchema is;
  struct ArrowArray ia, va;
  ck_status st = ck__arrow_dictionary_split(schema, array, &is, &ia, &va);
  if (st != CK_OK) {
    return st;
  }
  ck_array_preamble *ix = NULL, *vx = NULL;
  st = ck_arrow_import(&is, &ia, NULL, &ix);
  if (st != CK_OK) {
    ck__arrow_array_release(&va);
  } else {
    st = ck_arrow_import(schema->dictionary, &va, NULL, &vx);
  }
  if (st == CK_OK) {
    st = ck__arrow_dictionary_join(schema, ix, vx, out);
  }
  ck_array_decref(ix);
  ck_array_decref(vx);
  return st;
}

ck_status ck_arrow_import(const struct ArrowSchema *schema, struct ArrowArray *array,
                          const ck_array_preamble *fill_arr, ck_array_preamble **out) {
  if (out == NULL) {
    ck__arrow_array_release(array);
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  *out = NULL;
  if (array == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the array is NULL");
  }
  if (array->release == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the array is released (already imported?)");
  }
  if (fill_arr != NULL && ck_array_ndim(fill_arr) != 0) {
    ck__arrow_array_release(array);
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the fill value must be a 0-d array");
  }
  if (schema != NULL && schema->release != NULL && schema->dictionary != NULL) {
    return import_dictionary(schema, array, fill_arr, out);
  }
  /* move the array into its owner first: from here on it is ours */
  ck__iowner *o = CK_CALLOC(1, sizeof *o);
  if (o == NULL) {
    ck__arrow_array_release(array);
    return CK_ERR_NO_MEMORY;
  }
  o->array = *array;
  array->release = NULL;
  ck__ictx c = {NULL, o, fill_arr, {{0}, 0}, 0, false};
  ck_status st = ck_external_memblock_new(o, iowner_release, &c.owner_mb);
  if (st != CK_OK) {
    iowner_release(o);
    return st;
  }
  ck_type el = NULL, t = NULL;
  st = ck_arrow_schema_type(schema, &el);
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(el, &t);
  }
  const struct ArrowArray *root = &o->array;
  ck__arrow_format f;
  if (st == CK_OK) {
    (void)ck__arrow_parse_format(schema->format, &f);
    st = ck__icheck_node(&c, schema, root, &f, 0, root->length);
  }
  ck_array_preamble *res = NULL;
  if (st == CK_OK && fill_arr == NULL) {
    /* nulls kept as option types (without a fill value) */
    ck_type oel = NULL;
    st = ck__iroot_null_count(&c, root);
    if (st == CK_OK) {
      st = ck__arrow_with_options(el, schema, root, 0, &oel);
    }
    if (st == CK_OK && oel != el) {
      ck_type_decref(t);
      t = NULL;
      ck_type_decref(el);
      el = oel;
      oel = NULL;
      st = ck_strided_dim_type_new(el, &t);
    }
    ck_type_decref(oel);
  }
  if (st == CK_OK) {
    intptr_t n = (intptr_t)root->length;
    size_t es = ck_type_data_size(el);
    bool opt = ck_type_is_option(el);
    const char *block = n > 0 && !opt ? shared_block(&c, schema, root, ck_type_dtype(el))
                                      : NULL;
    if (opt && f.kind == CK__ARROW_PRIMITIVE && n > 0 &&
        (uintptr_t)root->buffers[1] % ck_type_data_alignment(el) == 0) {
      /* numbers with nulls: Arrow's values and bitmap, both shared */
      st = ck_array_view_external_option(
          t, (char *)root->buffers[1] + (size_t)root->offset * es, &n, 1,
          CK_ARRAY_READ | CK_ARRAY_IMMUTABLE, c.owner_mb, (uint8_t *)root->buffers[0],
          root->offset, c.owner_mb, &res);
    } else if (block != NULL) {
      st = ck_array_view_external(t, (char *)block, &n, NULL, 1,
                                  CK_ARRAY_READ | CK_ARRAY_IMMUTABLE, c.owner_mb, &res);
    } else {
      /* string leaves write every slot before the array is handed out (a
       * failed import only releases it): their slots are not zero-filled
       * first -- 16 bytes an element, the largest write of the import */
      ck_type_id leaf = ck_type_id_of(opt ? ck_type_element(el) : el);
      st = leaf == CK_TYPE_STRING || leaf == CK_TYPE_BYTES
               ? ck__array_empty_unfilled(t, &n, 1, CK_ARRAY_READ | CK_ARRAY_IMMUTABLE, &res)
               : ck_array_empty(t, &n, 1, CK_ARRAY_READ | CK_ARRAY_IMMUTABLE, &res);
      if (st == CK_OK) {
        st = fill(&c, el, ck_array_arrmeta(res) + sizeof(ck_dim_arrmeta), res->data,
                  (intptr_t)es, schema, root, 0, root->length);
      }
    }
  }
  ck_type_decref(el);
  ck_type_decref(t);
  ck_memblock_decref(c.owner_mb); /* the array holds what it needs */
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}

ck_status ck_arrow_import_device(const struct ArrowSchema *schema,
                                 struct ArrowDeviceArray *array,
                                 const ck_array_preamble *fill_arr,
                                 ck_array_preamble **out) {
  if (array == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the array is NULL");
  }
  if (array->device_type != ARROW_DEVICE_CPU &&
      array->device_type != ARROW_DEVICE_CUDA_HOST) {
    int32_t dt = array->device_type;
    ck__arrow_array_release(&array->array);
    if (out != NULL) {
      *out = NULL;
    }
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "device type %d is not host memory (only ARROW_DEVICE_CPU and "
                    "ARROW_DEVICE_CUDA_HOST arrays are imported)", dt);
  }
  return ck_arrow_import(schema, &array->array, fill_arr, out);
}
