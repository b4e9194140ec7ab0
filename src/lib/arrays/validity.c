/*
 * validity.c -- Arrow validity bitmaps of option types (ckernel/validity.h):
 * word-at-a-time bitmap primitives, the address-keyed slot lookup, and the
 * array-level accessors.  Reads the array preamble directly (array.c calls
 * ck_array_validity_alloc from ck_array_empty, so nothing here calls back
 * into array.c).
 */
#include "types/type_internal.h"
#include "arrays/array_internal.h"
#include "ckernel/validity.h"

#include <inttypes.h>
#include <string.h>

/* ---- bitmaps ---------------------------------------------------------------- */

static inline uint64_t ck__load64(const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, sizeof w);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

/* Bits [bit, bit + n) (n <= 64) as the low bits of a word, reading only the
 * bytes that hold them. */
static inline uint64_t ck__bits_at(const uint8_t *bits, int64_t bit, int n) {
  const uint8_t *p = bits + (bit >> 3);
  int sh = (int)(bit & 7);
  int nbytes = (sh + n + 7) >> 3; /* 1..9 */
  uint64_t w;
  if (nbytes >= 8) {
    w = ck__load64(p) >> sh;
    if (nbytes == 9 && sh != 0) {
      w |= (uint64_t)p[8] << (64 - sh);
    }
  } else {
    w = 0;
    for (int i = 0; i < nbytes; i++) {
      w |= (uint64_t)p[i] << (8 * i);
    }
    w >>= sh;
  }
  return n == 64 ? w : (w & ((UINT64_C(1) << n) - 1));
}

uint64_t ck_bitmap_word(const uint8_t *bits, int64_t offset, int n) {
  return ck__bits_at(bits, offset, n);
}

int64_t ck_bitmap_count_set(const uint8_t *bits, int64_t offset, int64_t length) {
  int64_t count = 0;
  if (bits == NULL || length <= 0) {
    return length > 0 ? length : 0;
  }
  while (length > 0) {
    int n = length >= 64 ? 64 : (int)length;
    count += __builtin_popcountll(ck__bits_at(bits, offset, n));
    offset += n;
    length -= n;
  }
  return count;
}

int64_t ck_bitmap_find_unset(const uint8_t *bits, int64_t offset, int64_t length) {
  if (bits == NULL) {
    return -1;
  }
  for (int64_t done = 0; done < length;) {
    int n = length - done >= 64 ? 64 : (int)(length - done);
    uint64_t w = ~ck__bits_at(bits, offset + done, n);
    if (n < 64) {
      w &= (UINT64_C(1) << n) - 1;
    }
    if (w != 0) {
      return done + __builtin_ctzll(w);
    }
    done += n;
  }
  return -1;
}

void ck_bitmap_set_range(uint8_t *bits, int64_t offset, int64_t length, bool valid) {
  while (length > 0 && (offset & 7) != 0) {
    ck_bitmap_set(bits, offset++, valid);
    length--;
  }
  if (length >= 8) {
    memset(bits + (offset >> 3), valid ? 0xff : 0x00, (size_t)(length >> 3));
    offset += length & ~(int64_t)7;
    length &= 7;
  }
  while (length-- > 0) {
    ck_bitmap_set(bits, offset++, valid);
  }
}

void ck_bitmap_and(uint8_t *dst, int64_t dst_off, const uint8_t *a, int64_t a_off,
                   const uint8_t *b, int64_t b_off, int64_t length) {
  if (length <= 0) {
    return;
  }
  int64_t i = 0;
  bool aligned = (dst_off & 7) == (a_off & 7) && (b == NULL || (dst_off & 7) == (b_off & 7));
  if (aligned) {
    /* head bit by bit up to a byte boundary, whole words, tail bit by bit */
    for (; i < length && ((dst_off + i) & 7) != 0; i++) {
      bool v = ck_bitmap_get(a, a_off + i) && (b == NULL || ck_bitmap_get(b, b_off + i));
      ck_bitmap_set(dst, dst_off + i, v);
    }
    for (; i + 64 <= length; i += 64) {
      uint64_t w = ck__load64(a + ((a_off + i) >> 3));
      if (b != NULL) {
        w &= ck__load64(b + ((b_off + i) >> 3));
      }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      w = __builtin_bswap64(w);
#endif
      memcpy(dst + ((dst_off + i) >> 3), &w, sizeof w);
    }
  } else {
    /* unaligned offsets: 8 bits at a time, gathered by ck__bits_at */
    for (; i + 8 <= length; i += 8) {
      uint64_t w = ck__bits_at(a, a_off + i, 8);
      if (b != NULL) {
        w &= ck__bits_at(b, b_off + i, 8);
      }
      int64_t d = dst_off + i;
      int sh = (int)(d & 7);
      uint8_t *p = dst + (d >> 3);
      if (sh == 0) {
        *p = (uint8_t)w;
      } else {
        p[0] = (uint8_t)((p[0] & ((1u << sh) - 1)) | (uint8_t)(w << sh));
        p[1] = (uint8_t)((p[1] & ~((1u << sh) - 1)) | (uint8_t)(w >> (8 - sh)));
      }
    }
  }
  for (; i < length; i++) {
    bool v = ck_bitmap_get(a, a_off + i) && (b == NULL || ck_bitmap_get(b, b_off + i));
    ck_bitmap_set(dst, dst_off + i, v);
  }
}

/* ---- slots ---------------------------------------------------------------------- */

ck_status ck_option_slot_bit(const ck_option_arrmeta *m, const char *data,
                             int64_t *out_bit) {
  if (m == NULL || out_bit == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arrmeta and out_bit must not be NULL");
  }
  *out_bit = -1;
  if (m->bits == NULL) {
    return CK_OK;
  }
  /* unsigned difference: no pointer arithmetic outside an object */
  intptr_t diff = (intptr_t)((uintptr_t)data - (uintptr_t)m->origin);
  if (m->step <= 0 || diff < 0 || diff % m->step != 0 || diff / m->step >= m->length) {
    return CK_ERROR(CK_ERR_INDEX,
                    "data address %p is not one of the %" PRIdPTR " option slots the "
                    "validity bitmap covers (from %p, %" PRIdPTR " bytes apart)",
                    (const void *)data, m->length, (const void *)m->origin, m->step);
  }
  *out_bit = (int64_t)m->bit_offset + (int64_t)(diff / m->step);
  return CK_OK;
}

ck_status ck_option_slot_bits(const ck_option_arrmeta *m, const char *data,
                              intptr_t stride, size_t count, int64_t *out_bit0,
                              int64_t *out_bit_step) {
  if (m == NULL || out_bit0 == NULL || out_bit_step == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arrmeta and the outputs must not be NULL");
  }
  *out_bit0 = -1;
  *out_bit_step = 0;
  if (m->bits == NULL || count == 0) {
    return CK_OK;
  }
  int64_t b0, b1;
  ck_status st = ck_option_slot_bit(m, data, &b0);
  if (st != CK_OK || count == 1) {
    *out_bit0 = st == CK_OK ? b0 : -1;
    return st;
  }
  if (stride % m->step != 0) { /* slot 1 lies between two slots of the bitmap */
    return ck_option_slot_bit(m, (const char *)((uintptr_t)data + (uintptr_t)stride), &b1);
  }
  /* the slots are monotonic in memory: the first and the last in range puts
   * every one in range */
  const char *last = (const char *)((uintptr_t)data +
                                    (uintptr_t)((intptr_t)(count - 1) * stride));
  if ((st = ck_option_slot_bit(m, last, &b1)) != CK_OK) {
    return st;
  }
  *out_bit0 = b0;
  *out_bit_step = (int64_t)(stride / m->step);
  return CK_OK;
}

ck_status ck_option_get_valid(const ck_option_arrmeta *m, const char *data,
                              bool *out_valid) {
  if (out_valid == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out_valid must not be NULL");
  }
  *out_valid = true;
  int64_t bit;
  ck_status st = ck_option_slot_bit(m, data, &bit);
  if (st == CK_OK && bit >= 0) {
    *out_valid = ck_bitmap_get(m->bits, bit);
  }
  return st;
}

ck_status ck_option_set_valid(const ck_option_arrmeta *m, const char *data, bool valid) {
  int64_t bit;
  ck_status st = ck_option_slot_bit(m, data, &bit);
  if (st != CK_OK) {
    return st;
  }
  if (bit < 0) {
    return valid ? CK_OK
                 : CK_ERROR(CK_ERR_INVALID_STATE,
                            "this option slot has no validity bitmap to hold a null "
                            "(options under var dims get one with "
                            "ck_option_attach_bitmap)");
  }
  ck_bitmap_set(m->bits, bit, valid);
  return CK_OK;
}

ck_status ck_option_attach_bitmap(ck_type option_type, char *arrmeta, uint8_t *bits,
                                  ck_memblock *owner, int64_t bit_offset, char *origin,
                                  intptr_t step, int64_t length) {
  if (!ck_type_is_option(option_type) || arrmeta == NULL) {
    char tb[96];
    return CK_ERROR(CK_ERR_TYPE, "'%s' is not an option type (or arrmeta is NULL)",
                    ck__type_str(option_type, tb, sizeof tb));
  }
  if (bit_offset < 0 || length < 0 || step <= 0 || length > INTPTR_MAX / step ||
      (length > 0 && (bits == NULL || origin == NULL))) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "bad bitmap: bits %p, bit offset %" PRId64 ", origin %p, step %" PRIdPTR
                    ", length %" PRId64, (const void *)bits, bit_offset,
                    (const void *)origin, step, length);
  }
  ck_option_arrmeta *m = (ck_option_arrmeta *)arrmeta;
  ck_memblock_incref(owner);
  ck_memblock_decref(m->blockref);
  m->blockref = owner;
  m->bits = bits;
  m->bit_offset = (intptr_t)bit_offset;
  m->origin = origin;
  m->step = step;
  m->length = (intptr_t)length;
  return CK_OK;
}

/* ---- arrays ------------------------------------------------------------------------ */

static char *ck__arrmeta_of(const ck_array_preamble *a) {
  return (char *)(uintptr_t)a + sizeof(ck_array_preamble);
}

static ck_status ck__need_option(const ck_array_preamble *a, const char *func) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "array must not be NULL");
  }
  if (!ck_type_is_option(a->type)) {
    char tb[96];
    return ck__error(CK_ERR_TYPE, func, "the array's type '%s' is not an option type '?T'",
                     ck__type_str(a->type, tb, sizeof tb));
  }
  return CK_OK;
}

ck_status ck_array_is_valid(const ck_array_preamble *a, bool *out_valid) {
  ck_status st = ck__need_option(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  return ck_option_get_valid((const ck_option_arrmeta *)ck__arrmeta_of(a), a->data,
                             out_valid);
}

ck_status ck_array_set_valid(ck_array_preamble *a, bool valid) {
  ck_status st = ck__need_option(a, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (!(a->flags & CK_ARRAY_WRITE)) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "array is read-only");
  }
  return ck_option_set_valid((const ck_option_arrmeta *)ck__arrmeta_of(a), a->data, valid);
}

/* Data address of slot i of a `dim * ?T` array, and the option's arrmeta. */
static ck_status ck__slot_at(const ck_array_preamble *a, intptr_t i, const char **out_data,
                             const ck_option_arrmeta **out_m, const char *func) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "array must not be NULL");
  }
  ck_type t = a->type;
  char tb[96];
  if (!ck__is_dim(t) || !ck_type_is_option(t->element)) {
    return ck__error(CK_ERR_TYPE, func, "the array's type '%s' is not 'dim * ?T'",
                     ck__type_str(t, tb, sizeof tb));
  }
  const char *meta = ck__arrmeta_of(a);
  intptr_t size, stride;
  const char *base;
  if (t->id == CK_TYPE_VAR_DIM) {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)meta;
    const ck_var_dim_data *vd = (const ck_var_dim_data *)(const void *)a->data;
    size = (intptr_t)vd->size;
    stride = vm->stride;
    base = vd->begin == NULL ? NULL : vd->begin + vm->offset;
  } else {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)meta;
    size = dm->size;
    stride = dm->stride;
    base = a->data;
  }
  intptr_t j = i < 0 ? i + size : i;
  if (j < 0 || j >= size) {
    return ck__error(CK_ERR_INDEX, func,
                     "index %" PRIdPTR " is out of bounds for axis 0 with size %" PRIdPTR,
                     i, size);
  }
  *out_data = (const char *)((uintptr_t)base + (uintptr_t)(j * stride));
  *out_m = (const ck_option_arrmeta *)(meta + ck__dim_header_size(t));
  return CK_OK;
}

ck_status ck_array_valid_at(const ck_array_preamble *a, intptr_t i, bool *out_valid) {
  const char *d = NULL;
  const ck_option_arrmeta *m = NULL;
  ck_status st = ck__slot_at(a, i, &d, &m, __func__);
  return st != CK_OK ? st : ck_option_get_valid(m, d, out_valid);
}

ck_status ck_array_set_valid_at(ck_array_preamble *a, intptr_t i, bool valid) {
  const char *d = NULL;
  const ck_option_arrmeta *m = NULL;
  ck_status st = ck__slot_at(a, i, &d, &m, __func__);
  if (st != CK_OK) {
    return st;
  }
  if (!(a->flags & CK_ARRAY_WRITE)) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "array is read-only");
  }
  return ck_option_set_valid(m, d, valid);
}

/* ---- null count ----------------------------------------------------------------- */

typedef struct ck__count_state {
  int64_t count;
  int64_t first;   /* flat index of the first null, -1 */
  int64_t index;   /* flat index of the next slot visited */
} ck__count_state;

/* `n` slots at data, data + stride, ... of option arrmeta m. */
static ck_status ck__count_run(const ck_option_arrmeta *m, const char *data, intptr_t stride,
                               intptr_t n, ck__count_state *s) {
  if (n <= 0) {
    return CK_OK;
  }
  if (m->bits == NULL) {
    s->index += n;
    return CK_OK;
  }
  int64_t b0, b1;
  ck_status st = ck_option_slot_bit(m, data, &b0);
  if (st == CK_OK) {
    st = ck_option_slot_bit(m, (const char *)((uintptr_t)data + (uintptr_t)((n - 1) * stride)),
                            &b1);
  }
  if (st != CK_OK) {
    return st;
  }
  if (stride == m->step) { /* consecutive bits: a word at a time */
    int64_t nulls = (int64_t)n - ck_bitmap_count_set(m->bits, b0, n);
    if (nulls > 0 && s->first < 0) {
      s->first = s->index + ck_bitmap_find_unset(m->bits, b0, n);
    }
    s->count += nulls;
    s->index += n;
    return CK_OK;
  }
  for (intptr_t i = 0; i < n; i++) {
    int64_t bit;
    st = ck_option_slot_bit(m, (const char *)((uintptr_t)data + (uintptr_t)(i * stride)), &bit);
    if (st != CK_OK) {
      return st;
    }
    if (!ck_bitmap_get(m->bits, bit)) {
      if (s->first < 0) {
        s->first = s->index;
      }
      s->count++;
    }
    s->index++;
  }
  return CK_OK;
}

static ck_status ck__count_walk(ck_type t, const char *meta, const char *data,
                                ck__count_state *s) {
  if (ck_type_is_option(t)) {
    return ck__count_run((const ck_option_arrmeta *)meta, data, 0, 1, s);
  }
  const char *em = meta + ck__dim_header_size(t);
  intptr_t size, stride;
  const char *base;
  if (t->id == CK_TYPE_VAR_DIM) {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)meta;
    const ck_var_dim_data *vd = (const ck_var_dim_data *)(const void *)data;
    size = (intptr_t)vd->size;
    stride = vm->stride;
    base = vd->begin == NULL ? NULL : vd->begin + vm->offset;
  } else {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)meta;
    size = dm->size;
    stride = dm->stride;
    base = data;
  }
  if (ck_type_is_option(t->element)) {
    return ck__count_run((const ck_option_arrmeta *)em, base, stride, size, s);
  }
  for (intptr_t i = 0; i < size; i++) {
    ck_status st = ck__count_walk(t->element, em,
                                  (const char *)((uintptr_t)base + (uintptr_t)(i * stride)), s);
    if (st != CK_OK) {
      return st;
    }
  }
  return CK_OK;
}

ck_status ck_array_null_count(const ck_array_preamble *a, int64_t *out_count,
                              int64_t *out_first_null) {
  if (out_first_null != NULL) {
    *out_first_null = -1;
  }
  if (out_count == NULL || a == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "array and out_count must not be NULL");
  }
  *out_count = 0;
  if (!ck_type_is_option(ck_type_dtype(a->type))) {
    char tb[96];
    return CK_ERROR(CK_ERR_TYPE, "the array's dtype is not an option type: '%s'",
                    ck__type_str(a->type, tb, sizeof tb));
  }
  ck__count_state s = {0, -1, 0};
  ck_status st = ck__count_walk(a->type, ck__arrmeta_of(a), a->data, &s);
  if (st != CK_OK) {
    return st;
  }
  *out_count = s.count;
  if (out_first_null != NULL) {
    *out_first_null = s.first;
  }
  return CK_OK;
}

/* ---- allocation ------------------------------------------------------------------- */

/* Slots of type t at base + k * step, k < count (step 0: count is 1 and the
 * step is t's data size). */
static ck_status ck__alloc_walk(ck_type t, char *meta, char *base, intptr_t step,
                                intptr_t count, const char *func) {
  if (!ck__is_desc(t) || !(t->flags & CK_TYPE_FLAG_OPTION) || count == 0) {
    return CK_OK;
  }
  switch (t->id) {
  case CK_TYPE_OPTION: {
    intptr_t s = step != 0 ? step : (intptr_t)t->data_size;
    size_t nbytes = (((size_t)count + 63) / 64) * 8;
    ck_memblock *mb;
    char *bits;
    ck_status st = ck_fixed_size_pod_memblock_new(nbytes, 8, &mb, &bits);
    if (st != CK_OK) {
      return st;
    }
    memset(bits, 0xff, nbytes);
    st = ck_option_attach_bitmap(t, meta, (uint8_t *)bits, mb, 0, base, s, count);
    ck_memblock_decref(mb);
    if (st != CK_OK) {
      return st;
    }
    return ck__alloc_walk(t->element, meta + sizeof(ck_option_arrmeta), base, step, count,
                          func);
  }
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)meta;
    char *em = meta + sizeof(ck_dim_arrmeta);
    if (dm->size == 0) {
      return CK_OK;
    }
    intptr_t s, n;
    if (dm->size == 1) {
      s = step; /* the same slots */
      n = count;
    } else if (dm->stride > 0 && (count == 1 || step == dm->size * dm->stride)) {
      s = dm->stride; /* one progression of addresses */
      if (__builtin_mul_overflow(count, dm->size, &n)) {
        return ck__error(CK_ERR_OVERFLOW, func, "slot count overflows");
      }
    } else {
      return CK_OK; /* not one progression of addresses: left without a bitmap */
    }
    return ck__alloc_walk(t->element, em, base, s, n, func);
  }
  case CK_TYPE_STRUCT: {
    const uintptr_t *offs = (const uintptr_t *)(const void *)meta;
    for (size_t i = 0; i < t->field_count; i++) {
      ck_status st = ck__alloc_walk(t->field_types[i], meta + t->field_arrmeta_offsets[i],
                                    base + offs[i],
                                    step != 0 ? step : (intptr_t)t->data_size, count, func);
      if (st != CK_OK) {
        return st;
      }
    }
    return CK_OK;
  }
  default: /* var dims, pointers: elements are not allocated yet */
    return CK_OK;
  }
}

ck_status ck__validity_alloc_slots(ck_type t, char *meta, char *base, intptr_t step,
                                   intptr_t count) {
  return ck__alloc_walk(t, meta, base, step, count, "ck_array_validity_alloc");
}

ck_status ck_array_validity_alloc(ck_array_preamble *a) {
  if (a == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "array must not be NULL");
  }
  if (!(a->flags & CK_ARRAY_WRITE)) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "array is read-only");
  }
  return ck__alloc_walk(a->type, ck__arrmeta_of(a), a->data, 0, 1, __func__);
}
