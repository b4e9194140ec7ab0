/*
 * arrow_import_strings.c -- Arrow utf8 / large_utf8 / binary / large_binary
 * (offsets + data) and string_view / binary_view nodes as ck strings: the
 * slots point into Arrow's buffers (kept by the owner), offsets and views
 * checked, strings' text validated as UTF-8 (arrow_import_internal.h).
 */
#include "interop/arrow_import_internal.h"

#include <string.h>

/* A view's text: inline in the views buffer or in a variadic buffer. */
static ck_status view_text(ck__ictx *c, const struct ArrowArray *a, int64_t k,
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

ck_status ck__ifill_strings(ck__ictx *c, ck_type t, char *arrmeta, char *dst,
                            intptr_t dstride, const struct ArrowArray *a,
                            const ck__arrow_format *f, int64_t from, int64_t count) {
  const uint8_t *bits;
  const char *fv;
  ck_status st = ck__ileaf_nulls(c, t, a, from, count, &bits, &fv);
  if (st != CK_OK) {
    return st;
  }
  ck__iuse_owner(c, &((ck_string_arrmeta *)arrmeta)->blockref);
  bool utf8 = ck_type_id_of(t) == CK_TYPE_STRING;
  bool view = f->kind == CK__ARROW_UTF8_VIEW || f->kind == CK__ARROW_BINARY_VIEW;
  bool large = f->kind == CK__ARROW_LARGE_UTF8 || f->kind == CK__ARROW_LARGE_BINARY;
  const void *offsets = view ? NULL : a->buffers[1];
  const char *data = view ? NULL : a->buffers[2];
  int64_t prev = 0;
  if (!view && count > 0) {
    prev = ck__ioffset_at(offsets, large, from);
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
  const int64_t end = view || count == 0 ? 0 : ck__ioffset_at(offsets, large, from + count);
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
        ck__ifill_nulls(bits, from, count, dst, dstride, fv, sizeof(ck_string));
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
      if (bits != NULL && !ck__ivalid(bits, k)) {
        memcpy(out, fv, sizeof *out);
        continue;
      }
      if ((st = view_text(c, a, k, &begin, &len)) != CK_OK) {
        return st;
      }
    } else {
      int64_t next = ck__ioffset_at(offsets, large, k + 1);
      if (next < prev) {
        return BAD(c, "offsets %lld and %lld decrease (%lld > %lld)", (long long)k,
                   (long long)(k + 1), (long long)prev, (long long)next);
      }
      if (next > end) { /* past the last offset: a later pair decreases (named) */
        for (int64_t j = k + 2, p = next; j <= from + count; j++) {
          int64_t q = ck__ioffset_at(offsets, large, j);
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
      if (bits != NULL && !ck__ivalid(bits, k)) {
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
