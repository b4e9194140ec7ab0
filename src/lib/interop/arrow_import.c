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
 * Over 1000 lines and one concept: `fill` and the schema parser it checks
 * against are one recursion over the Arrow formats; each format's case needs
 * the owner and the checks above it (arrow_export.c is the other direction).
 */
#include "interop/arrow_internal.h"
#include "types/type_internal.h"
#include "ckernel/validity.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the owner of the imported array ------------------------------------------ */

typedef struct iowner {
  struct ArrowArray array;      /* moved from the caller */
  ck_array_preamble **keep;     /* fill values converted to leaf types */
  size_t nkeep, capkeep;
} iowner;

static void iowner_release(void *obj) {
  iowner *o = obj;
  ck__arrow_array_release(&o->array);
  for (size_t i = 0; i < o->nkeep; i++) {
    ck_array_decref(o->keep[i]);
  }
  ck__free(o->keep);
  ck__free(o);
}

typedef struct ictx {
  ck_memblock *owner_mb;
  iowner *owner;
  const ck_array_preamble *fill;
  ck__arrow_path path;
  /* > 0 while a node is filled row by row (fixed-size lists in a struct):
   * then the same var dim arrmeta is met several times and its elements
   * are always copied into its arena -- sharing Arrow's buffer in a later
   * row would point its blockref at the owner and free the earlier rows'
   * copies */
  int per_row;
  /* set by fill for the value of an option `?T` and taken by the node
   * filled next: its nulls are let through (a null leaf slot gets zero
   * bytes, a null row no elements; the bitmap says they are null) */
  bool nulls_ok;
} ictx;

static const char *iwhat(ictx *c, char *buf, size_t n) {
  return ck__arrow_path_what(&c->path, buf, n);
}

#define BAD(c, ...) bad_input((c), __VA_ARGS__)

static ck_status bad_input(ictx *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static ck_status bad_input(ictx *c, const char *fmt, ...) {
  char what[300], msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_arrow_import", "%s: %s",
                   iwhat(c, what, sizeof what), msg);
}

/* Point a blockref slot at the owner (once per arrmeta node). */
static void use_owner(ictx *c, ck_memblock **slot) {
  if (*slot != c->owner_mb) {
    ck_memblock_decref(*slot);
    ck_memblock_incref(c->owner_mb);
    *slot = c->owner_mb;
  }
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
static ck_status check_node(ictx *c, const struct ArrowSchema *s, const struct ArrowArray *a,
                            const ck__arrow_format *f, int64_t start, int64_t count) {
  if (a == NULL) {
    return BAD(c, "the array is NULL");
  }
  if (a->release == NULL) {
    char what[300];
    return ck__error(CK_ERR_INVALID_STATE, "ck_arrow_import", "%s: the array is released",
                     iwhat(c, what, sizeof what));
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
     * (checked per element by fill_strings); a view array without variadic
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

static inline bool is_valid(const uint8_t *bits, int64_t i) {
  return bits == NULL || (bits[i >> 3] >> (i & 7)) & 1;
}

/* Nulls among physical indices [from, from + count); the validity bitmap
 * in *bits (NULL when there are none). */
static ck_status count_nulls(ictx *c, const struct ArrowArray *a, int64_t from,
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
  int64_t n = 0;
  for (int64_t i = from; i < from + count; i++) {
    n += !is_valid(b, i);
  }
  *bits = n > 0 ? b : NULL;
  *out = n;
  return CK_OK;
}

static ck_status null_error(ictx *c, int64_t nulls, int64_t count, bool fillable) {
  char what[300];
  if (fillable) {
    return ck__error(CK_ERR_VALUE, "ck_arrow_import",
                     "%s holds %lld nulls (of %lld values); ckernels arrays have no "
                     "missing values: give a fill value", iwhat(c, what, sizeof what),
                     (long long)nulls, (long long)count);
  }
  return ck__error(CK_ERR_VALUE, "ck_arrow_import",
                   "%s holds %lld nulls (of %lld values); null structs and fixed-size "
                   "lists cannot be filled", iwhat(c, what, sizeof what),
                   (long long)nulls, (long long)count);
}

/* The fill value converted to `leaf`: a 0-d array kept by the owner (its
 * strings' bytes stay alive with it); *out points at its data. */
static ck_status fill_value(ictx *c, ck_type leaf, const char **out) {
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
                             iwhat(c, what, sizeof what));
  }
  iowner *o = c->owner;
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
static ck_status leaf_nulls(ictx *c, ck_type t, const struct ArrowArray *a, int64_t from,
                            int64_t count, const uint8_t **bits, const char **fv) {
  int64_t nulls;
  *fv = NULL;
  bool nullable = c->nulls_ok;
  c->nulls_ok = false;
  ck_status st = count_nulls(c, a, from, count, bits, &nulls);
  if (st != CK_OK || nulls == 0) {
    return st;
  }
  if (nullable) {
    static const char zeros[32]; /* the widest leaf: a complex128 or a ck_string */
    *fv = zeros;
    return CK_OK;
  }
  if (c->fill == NULL) {
    return null_error(c, nulls, count, true);
  }
  return fill_value(c, t, fv);
}

/* Read offset i of an int32 or int64 offsets buffer. */
static inline int64_t offset_at(const void *buf, bool large, int64_t i) {
  return large ? ((const int64_t *)buf)[i] : ((const int32_t *)buf)[i];
}

/* Row k of a list or list view as (offset, size), checked: both
 * non-negative, offset + size within int64 (list offsets: not decreasing). */
static ck_status list_row(ictx *c, const void *offsets, const void *sizes, bool large,
                          int64_t k, int64_t *o, int64_t *n) {
  *o = offset_at(offsets, large, k);
  if (*o < 0) {
    return BAD(c, "row %lld has negative offset %lld", (long long)k, (long long)*o);
  }
  if (sizes == NULL) {
    int64_t next = offset_at(offsets, large, k + 1);
    if (next < *o) {
      return BAD(c, "offsets %lld and %lld decrease (%lld > %lld)", (long long)k,
                 (long long)(k + 1), (long long)*o, (long long)next);
    }
    *n = next - *o;
    return CK_OK;
  }
  *n = offset_at(sizes, large, k);
  if (*n < 0) {
    return BAD(c, "row %lld has negative size %lld", (long long)k, (long long)*n);
  }
  if (*n > INT64_MAX - *o) {
    return BAD(c, "row %lld: offset %lld + size %lld overflows", (long long)k,
               (long long)*o, (long long)*n);
  }
  return CK_OK;
}

/* ---- the recursive pass ---------------------------------------------------------- */

static ck_status fill(ictx *c, ck_type t, char *arrmeta, char *dst, intptr_t dstride,
                      const struct ArrowSchema *s, const struct ArrowArray *a,
                      int64_t start, int64_t count);

static ck_status fill_numbers(ictx *c, ck_type t, char *dst, intptr_t dstride,
                              const struct ArrowArray *a, const ck__arrow_format *f,
                              int64_t from, int64_t count) {
  const uint8_t *bits;
  const char *fv;
  ck_status st = leaf_nulls(c, t, a, from, count, &bits, &fv);
  if (st != CK_OK) {
    return st;
  }
  size_t es = ck_type_data_size(t);
  if (f->kind == CK__ARROW_BOOL) {
    const uint8_t *src = a->buffers[1];
    for (int64_t i = 0; i < count; i++) {
      int64_t k = from + i;
      if (bits != NULL && !is_valid(bits, k)) {
        dst[i * dstride] = *fv;
      } else {
        dst[i * dstride] = (char)((src[k >> 3] >> (k & 7)) & 1);
      }
    }
    return CK_OK;
  }
  if (count == 0) {
    return CK_OK; /* the values may be NULL then (check_node) */
  }
  const char *src = (const char *)a->buffers[1] + (size_t)from * es;
  if (bits == NULL && dstride == (intptr_t)es) {
    if (count > 0) {
      memcpy(dst, src, (size_t)count * es);
    }
    return CK_OK;
  }
  for (int64_t i = 0; i < count; i++) {
    memcpy(dst + i * dstride, bits != NULL && !is_valid(bits, from + i) ? fv : src + i * es,
           es);
  }
  return CK_OK;
}

/* A view's text: inline in the views buffer or in a variadic buffer. */
static ck_status view_text(ictx *c, const struct ArrowArray *a, int64_t k,
                           const char **begin, size_t *len) {
  const char *v = (const char *)a->buffers[1] + 16 * (size_t)k;
  int32_t size, buf, off;
  memcpy(&size, v, 4);
  if (size < 0) {
    return BAD(c, "view %lld has negative size %d", (long long)k, size);
  }
  *len = (size_t)size;
  if (size <= 12) {
    *begin = v + 4;
    return CK_OK;
  }
  memcpy(&buf, v + 8, 4);
  memcpy(&off, v + 12, 4);
  int64_t nvar = a->n_buffers - 3;
  if (buf < 0 || buf >= nvar) {
    return BAD(c, "view %lld refers to buffer %d of %lld", (long long)k, buf,
               (long long)nvar);
  }
  int64_t bsize = ((const int64_t *)a->buffers[a->n_buffers - 1])[buf];
  if (off < 0 || (int64_t)off + size > bsize || a->buffers[2 + buf] == NULL) {
    return BAD(c, "view %lld (offset %d, size %d) lies outside buffer %d of %lld bytes",
               (long long)k, off, size, buf, (long long)bsize);
  }
  *begin = (const char *)a->buffers[2 + buf] + off;
  return CK_OK;
}

/* UTF-8 validity with a fast path over ASCII: 8 bytes at a time while no
 * high bit is set (every position after pure ASCII is a character
 * boundary), then the library's validator for the rest. */
static bool utf8_valid(const char *p, size_t n) {
  size_t i = 0;
  while (i + 8 <= n) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if (w & UINT64_C(0x8080808080808080)) {
      break;
    }
    i += 8;
  }
  while (i < n && (unsigned char)p[i] < 0x80) {
    i++;
  }
  return i == n || ck_utf8_validate(p + i, n - i);
}

static inline size_t str_bytes(const ck_string *e) {
  return e->begin == NULL ? 0 : (size_t)(e->end - e->begin);
}

/* The slots of `count` strings with offsets of type T (int32 or int64),
 * none null: one branch-free pass that writes every slot and folds the two
 * per-element checks -- offsets do not decrease, and (`utf8`: the text is
 * validated once as a whole afterwards; `data` is not NULL then) every
 * non-empty element starts on a character boundary -- into `bad`; the caller names the element only when
 * `bad` is set.  *last gets the offset after the last element. */
#define CK__SLOTS_FN(NAME, T)                                                              \
  static bool NAME(const T *off, const char *data, bool utf8, char *dst, intptr_t dstride, \
                   int64_t count, int64_t *last) {                                        \
    int64_t prev = off[0];                                                                 \
    const int64_t end = off[count];                                                        \
    unsigned bad = 0;                                                                      \
    for (int64_t i = 0; i < count; i++) {                                                  \
      int64_t next = off[i + 1];                                                           \
      ck_string *out = (ck_string *)(void *)(dst + i * dstride);                           \
      bad |= next < prev;                                                                  \
      /* address arithmetic on integers: a bad offset makes a slot that is    \
       * never used (the caller starts over), never undefined behaviour */    \
      uintptr_t b = data == NULL ? 0 : (uintptr_t)data + (uintptr_t)prev;                  \
      out->begin = (char *)b;                                                              \
      out->end = data == NULL ? NULL : (char *)((uintptr_t)data + (uintptr_t)next);        \
      /* read a byte only inside [first, end) of offsets that rose so far */  \
      if (utf8 && next > prev && bad == 0 && next <= end) {                                \
        bad |= (*(const unsigned char *)b & 0xc0) == 0x80;                                 \
      }                                                                                    \
      prev = next;                                                                         \
    }                                                                                      \
    *last = prev;                                                                          \
    return bad == 0;                                                                       \
  }
CK__SLOTS_FN(slots_i32, int32_t)
CK__SLOTS_FN(slots_i64, int64_t)
#undef CK__SLOTS_FN

static ck_status fill_strings(ictx *c, ck_type t, char *arrmeta, char *dst,
                              intptr_t dstride, const struct ArrowArray *a,
                              const ck__arrow_format *f, int64_t from, int64_t count) {
  const uint8_t *bits;
  const char *fv;
  ck_status st = leaf_nulls(c, t, a, from, count, &bits, &fv);
  if (st != CK_OK) {
    return st;
  }
  use_owner(c, &((ck_string_arrmeta *)arrmeta)->blockref);
  bool utf8 = ck_type_id_of(t) == CK_TYPE_STRING;
  bool view = f->kind == CK__ARROW_UTF8_VIEW || f->kind == CK__ARROW_BINARY_VIEW;
  bool large = f->kind == CK__ARROW_LARGE_UTF8 || f->kind == CK__ARROW_LARGE_BINARY;
  const void *offsets = view ? NULL : a->buffers[1];
  const char *data = view ? NULL : a->buffers[2];
  int64_t prev = 0;
  if (!view && count > 0) {
    prev = offset_at(offsets, large, from);
    if (prev < 0) {
      return BAD(c, "offset %lld is negative (%lld)", (long long)from, (long long)prev);
    }
  }
  /* utf8 without nulls: the text of the elements is one range of the data
   * buffer, validated once; each element must then start on a character
   * boundary (the bytes of null elements are unspecified: checked one by
   * one) */
  bool whole = utf8 && !view && data != NULL && count > 0;
  int64_t first = prev, i = 0;
  const int64_t end = view || count == 0 ? 0 : offset_at(offsets, large, from + count);
  if (!view && count > 0) {
    /* the fast pass; on a bad element the loop below starts over and names
     * it.  With nulls the whole text (the bytes under nulls included) is
     * validated here: if that fails, the bytes under a null may be to blame
     * (Arrow leaves them unspecified), so the loop checks element by element */
    int64_t last;
    bool ok = large ? slots_i64((const int64_t *)offsets + from, data, whole, dst, dstride,
                                count, &last)
                    : slots_i32((const int32_t *)offsets + from, data, whole, dst, dstride,
                                count, &last);
    ok = ok && (data != NULL || last == first);
    if (ok && bits != NULL && whole && !utf8_valid(data + first, (size_t)(last - first))) {
      ok = false;
    }
    if (ok) {
      i = count;
      prev = last;
      if (bits != NULL) {
        whole = false; /* validated above */
        for (int64_t j = 0; j < count; j++) {
          if (!is_valid(bits, from + j)) {
            memcpy(dst + j * dstride, fv, sizeof(ck_string));
          }
        }
      }
    } else if (bits != NULL) {
      whole = false;
    }
  }
  for (; i < count; i++) {
    int64_t k = from + i;
    ck_string *out = (ck_string *)(dst + i * dstride);
    const char *begin = NULL;
    size_t len = 0;
    if (view) {
      if (bits != NULL && !is_valid(bits, k)) {
        memcpy(out, fv, sizeof *out);
        continue;
      }
      if ((st = view_text(c, a, k, &begin, &len)) != CK_OK) {
        return st;
      }
    } else {
      int64_t next = offset_at(offsets, large, k + 1);
      if (next < prev) {
        return BAD(c, "offsets %lld and %lld decrease (%lld > %lld)", (long long)k,
                   (long long)(k + 1), (long long)prev, (long long)next);
      }
      if (next > end) { /* past the last offset: a later pair decreases (named) */
        for (int64_t j = k + 2, p = next; j <= from + count; j++) {
          int64_t q = offset_at(offsets, large, j);
          if (q < p) {
            return BAD(c, "offsets %lld and %lld decrease (%lld > %lld)", (long long)(j - 1),
                       (long long)j, (long long)p, (long long)q);
          }
          p = q;
        }
        return BAD(c, "offset %lld (%lld) lies past the last offset (%lld)",
                   (long long)(k + 1), (long long)next, (long long)end);
      }
      len = (size_t)(next - prev);
      if (data == NULL && len > 0) {
        return BAD(c, "element %lld has %zu bytes but the data buffer is NULL",
                   (long long)(k - a->offset), len);
      }
      begin = data == NULL ? NULL : data + prev;
      prev = next;
      if (bits != NULL && !is_valid(bits, k)) {
        memcpy(out, fv, sizeof *out);
        continue;
      }
    }
    if (whole ? len > 0 && ((unsigned char)*begin & 0xc0) == 0x80
              : utf8 && !utf8_valid(begin, len)) {
      return BAD(c, "element %lld is not valid UTF-8", (long long)(k - a->offset));
    }
    out->begin = (char *)begin;
    out->end = begin == NULL ? NULL : (char *)begin + len;
  }
  if (whole && !utf8_valid(data + first, (size_t)(prev - first))) {
    for (int64_t j = 0; j < count; j++) { /* name the first bad element */
      const ck_string *e = (const ck_string *)(dst + j * dstride);
      if (!utf8_valid(e->begin, str_bytes(e))) {
        return BAD(c, "element %lld is not valid UTF-8", (long long)(from + j - a->offset));
      }
    }
    return BAD(c, "the text is not valid UTF-8");
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

static ck_status fill_list(ictx *c, ck_type t, char *arrmeta, char *dst, intptr_t dstride,
                           const struct ArrowSchema *s, const struct ArrowArray *a,
                           const ck__arrow_format *f, int64_t from, int64_t count) {
  const uint8_t *bits;
  int64_t nulls;
  bool nullable = c->nulls_ok;
  c->nulls_ok = false;
  ck_status st = count_nulls(c, a, from, count, &bits, &nulls);
  if (st != CK_OK) {
    return st;
  }
  if (nulls > 0 && c->fill == NULL && !nullable) {
    return null_error(c, nulls, count, true); /* with a fill: empty lists */
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
    lo = offset_at(offsets, large, from);
    hi = offset_at(offsets, large, from + count);
    if (hi == lo) {
      lo = hi = 0;
    }
  }
  for (int64_t i = 0; !plain && i < count; i++) {
    int64_t k = from + i, o = 0, n = 0;
    if (bits != NULL && !is_valid(bits, k)) {
      continue; /* a null row's offsets are not read */
    }
    if ((st = list_row(c, offsets, sizes, large, k, &o, &n)) != CK_OK) {
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
             ? check_node(c, cs, child, &cf, 0, 0)
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
    st = check_node(c, cs, child, &cf, lo, hi - lo);
    const uint8_t *cbits;
    int64_t cnulls = 0;
    if (st == CK_OK) {
      st = count_nulls(c, child, child->offset + lo, hi - lo, &cbits, &cnulls);
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
    use_owner(c, &vm->blockref);
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
        memset(block, 0, nbytes); /* strings and bytes: fill_strings writes every slot */
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
    if (!(bits != NULL && !is_valid(bits, k))) {
      (void)list_row(c, offsets, sizes, large, k, &o, &n); /* checked above */
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

static ck_status fill(ictx *c, ck_type t, char *arrmeta, char *dst, intptr_t dstride,
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
  ck_status st = check_node(c, s, a, &f, start, count);
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
    return fill_strings(c, t, arrmeta, dst, dstride, a, &f, from, count);
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
    if ((st = count_nulls(c, a, from, count, &bits, &nulls)) != CK_OK) {
      return st;
    }
    if (nulls > 0 && !nullable) {
      return null_error(c, nulls, count, false);
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
static const char *shared_block(ictx *c, const struct ArrowSchema *s,
                                const struct ArrowArray *a, ck_type el) {
  int64_t phys = a->offset, count = a->length;
  for (int depth = 0; depth < CK_TYPE_MAX_DEPTH; depth++) {
    ck__arrow_format f;
    const uint8_t *bits;
    int64_t nulls;
    if (!ck__arrow_parse_format(s->format, &f) ||
        check_node(c, s, a, &f, phys - a->offset, count) != CK_OK ||
        count_nulls(c, a, phys, count, &bits, &nulls) != CK_OK || nulls > 0) {
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

/* ---- nulls as option types ------------------------------------------------------- */

/* The exact nulls of a checked root, counted from its validity bitmap --
 * the producer's null_count is never trusted: one that is known (not -1)
 * and disagrees with the bitmap is refused. */
static ck_status root_null_count(ictx *c, const struct ArrowArray *a) {
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
  iowner *o = CK_CALLOC(1, sizeof *o);
  if (o == NULL) {
    ck__arrow_array_release(array);
    return CK_ERR_NO_MEMORY;
  }
  o->array = *array;
  array->release = NULL;
  ictx c = {NULL, o, fill_arr, {{0}, 0}, 0, false};
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
    st = check_node(&c, schema, root, &f, 0, root->length);
  }
  ck_array_preamble *res = NULL;
  if (st == CK_OK && fill_arr == NULL) {
    /* nulls kept as option types (without a fill value) */
    ck_type oel = NULL;
    st = root_null_count(&c, root);
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
      st = ck_array_empty(t, &n, 1, CK_ARRAY_READ | CK_ARRAY_IMMUTABLE, &res);
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

static ck_status stream_error(struct ArrowArrayStream *s, int rc, const char *what) {
  const char *msg = s->get_last_error != NULL ? s->get_last_error(s) : NULL;
  /* ENOMEM (12) stays out of memory; any other errno is the producer's */
  return ck__error(rc == 12 ? CK_ERR_NO_MEMORY : CK_ERR_BACKEND, "ck_arrow_import_stream",
                   "%s failed (error %d): %s",
                   what, rc, msg != NULL ? msg : "no message");
}

/* `strided * ?el` in *out (new reference). */
static ck_status option_of(ck_type el, ck_type *out) {
  ck_type opt;
  ck_status st = ck_option_type_new(el, &opt);
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(opt, out);
    ck_type_decref(opt);
  }
  return st;
}

ck_status ck_arrow_import_stream(struct ArrowArrayStream *stream,
                                 const ck_array_preamble *fill_arr,
                                 ck_array_preamble **out) {
  if (out == NULL) {
    if (stream != NULL && stream->release != NULL) stream->release(stream);
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  *out = NULL;
  if (stream == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "the stream is NULL");
  }
  if (stream->release == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "the stream is released (already imported?)");
  }
  struct ArrowArrayStream s = *stream; /* moved */
  stream->release = NULL;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  ck_array_preamble **parts = NULL;
  size_t nparts = 0, cap = 0;
  ck_type el = NULL, t = NULL;
  ck_array_preamble *res = NULL;
  ck_status st = CK_OK;
  int rc = s.get_schema != NULL ? s.get_schema(&s, &schema) : 22;
  if (rc != 0) {
    st = stream_error(&s, rc, "get_schema");
  } else if (schema.release == NULL) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT, "get_schema gave a released schema");
  } else {
    st = ck_arrow_schema_type(&schema, &el);
  }
  if (st == CK_OK) {
    st = ck_strided_dim_type_new(el, &t);
  }
  intptr_t total = 0;
  while (st == CK_OK) {
    struct ArrowArray arr;
    memset(&arr, 0, sizeof arr);
    rc = s.get_next != NULL ? s.get_next(&s, &arr) : 22;
    if (rc != 0) {
      st = stream_error(&s, rc, "get_next");
      break;
    }
    if (arr.release == NULL) {
      break; /* the end */
    }
    if (nparts == cap) {
      size_t ncap = cap ? 2 * cap : 4;
      ck_array_preamble **np = ck__realloc(parts, ncap * sizeof *np, __func__);
      if (np == NULL) {
        arr.release(&arr);
        st = CK_ERR_NO_MEMORY;
        break;
      }
      parts = np;
      cap = ncap;
    }
    st = ck_arrow_import(&schema, &arr, fill_arr, &parts[nparts]);
    if (st != CK_OK) {
      st = ck__error_context(st, "ck_arrow_import_stream", "array %zu of the stream",
                             nparts);
      break;
    }
    intptr_t len;
    (void)ck_array_shape(parts[nparts], &len, 1, NULL);
    nparts++;
    if (total > INTPTR_MAX - len) {
      st = CK_ERROR(CK_ERR_OVERFLOW, "the stream holds more than INTPTR_MAX elements");
      break;
    }
    total += len;
  }
  if (st == CK_OK && nparts == 1) {
    res = parts[0];
    parts[0] = NULL;
  } else if (st == CK_OK) {
    /* concatenate: one copy of every part into a new array of its own, an
     * option array `N * ?T` when any part has nulls */
    for (size_t i = 0; st == CK_OK && i < nparts; i++) {
      if (ck_type_is_option(ck_type_dtype(ck_array_type(parts[i])))) {
        ck_type_decref(t);
        t = NULL;
        st = option_of(el, &t);
        break;
      }
    }
    if (st == CK_OK) {
      st = ck_array_empty(t, &total, 1, CK_ARRAY_DEFAULT_FLAGS, &res);
    }
    intptr_t pos = 0;
    for (size_t i = 0; st == CK_OK && i < nparts; i++) {
      intptr_t len;
      ck_array_preamble *view = NULL;
      (void)ck_array_shape(parts[i], &len, 1, NULL);
      st = ck_array_slice(res, 0, pos, pos + len, 1, &view);
      if (st == CK_OK) {
        st = ck_array_assign(view, parts[i], CK_ERRMODE_DEFAULT);
      }
      ck_array_decref(view);
      pos += len;
    }
  }
  for (size_t i = 0; i < nparts; i++) {
    ck_array_decref(parts[i]);
  }
  ck__free(parts);
  ck__arrow_schema_release(&schema);
  if (s.release != NULL) {
    s.release(&s);
  }
  ck_type_decref(el);
  ck_type_decref(t);
  if (st != CK_OK) {
    ck_array_decref(res);
    return st;
  }
  *out = res;
  return CK_OK;
}
