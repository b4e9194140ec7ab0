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

/* The length of the ASCII prefix of [p, p + n): 8 bytes at a time while no
 * high bit is set. */
static size_t ascii_prefix(const char *p, size_t n) {
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
  return i;
}

/* UTF-8 validity with a fast path over ASCII (every position after pure
 * ASCII is a character boundary), then the library's validator for the
 * rest. */
static bool utf8_valid(const char *p, size_t n) {
  size_t i = ascii_prefix(p, n);
  return i == n || ck_utf8_validate(p + i, n - i);
}

static inline size_t str_bytes(const ck_string *e) {
  return e->begin == NULL ? 0 : (size_t)(e->end - e->begin);
}

/* The slots of `count` strings with offsets of type T (int32 or int64),
 * none null: one branch-free pass that writes every slot and checks that
 * the offsets do not decrease; the caller names the element only when that
 * fails.  *last gets the offset after the last element. */
#define CK__SLOTS_FN(NAME, T)                                                              \
  static bool NAME(const T *off, const char *data, char *dst, intptr_t dstride,            \
                   int64_t count, int64_t *last) {                                         \
    int64_t prev = off[0];                                                                 \
    unsigned bad = 0;                                                                      \
    for (int64_t i = 0; i < count; i++) {                                                  \
      int64_t next = off[i + 1];                                                           \
      ck_string *out = (ck_string *)(void *)(dst + i * dstride);                           \
      bad |= next < prev;                                                                  \
      /* address arithmetic on integers: a bad offset makes a slot that is    \
       * never used (the caller starts over), never undefined behaviour */    \
      out->begin = data == NULL ? NULL : (char *)((uintptr_t)data + (uintptr_t)prev);      \
      out->end = data == NULL ? NULL : (char *)((uintptr_t)data + (uintptr_t)next);        \
      prev = next;                                                                         \
    }                                                                                      \
    *last = prev;                                                                          \
    return bad == 0;                                                                       \
  }
CK__SLOTS_FN(slots_i32, int32_t)
CK__SLOTS_FN(slots_i64, int64_t)
#undef CK__SLOTS_FN

/* Whether every non-empty element among physical [from, from + count)
 * whose text starts at or after byte `at` starts on a character boundary
 * (offsets already known not to decrease: the first such element found by
 * bisection; the elements before lie in text known to be ASCII). */
static bool boundaries_from(const void *offsets, bool large, int64_t from, int64_t count,
                            const char *data, int64_t at) {
  int64_t lo = 0, hi = count;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (ck__ioffset_at(offsets, large, from + mid) < at) lo = mid + 1; else hi = mid;
  }
  for (int64_t j = lo; j < count; j++) {
    int64_t b = ck__ioffset_at(offsets, large, from + j);
    if (ck__ioffset_at(offsets, large, from + j + 1) > b &&
        ((unsigned char)data[b] & 0xc0) == 0x80) {
      return false;
    }
  }
  return true;
}

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
  /* utf8: the text of the elements is one range of the data buffer,
   * validated once; each element must then start on a character boundary.
   * When that fails the loop below checks element by element (the bytes of
   * null elements are unspecified: never read there) */
  bool whole = utf8 && !view && data != NULL && count > 0;
  int64_t first = prev, i = 0;
  const int64_t end = view || count == 0 ? 0 : ck__ioffset_at(offsets, large, from + count);
  if (!view && count > 0) {
    /* the fast pass; on a bad element the loop below starts over and names
     * it.  With nulls the whole text (the bytes under nulls included) is
     * validated here: if that fails, the bytes under a null may be to blame
     * (Arrow leaves them unspecified), so the loop checks element by element */
    int64_t last;
    bool ok = large ? slots_i64((const int64_t *)offsets + from, data, dst, dstride, count,
                                &last)
                    : slots_i32((const int32_t *)offsets + from, data, dst, dstride, count,
                                &last);
    ok = ok && (data != NULL || last == first);
    if (ok && whole) {
      /* the text as a whole: its ASCII prefix (every position in it a
       * character boundary) read 8 bytes at a time, the rest validated and
       * the elements starting in it checked for a character boundary */
      size_t n = (size_t)(last - first), p = ascii_prefix(data + first, n);
      ok = p == n || (ck_utf8_validate(data + first + p, n - p) &&
                      boundaries_from(offsets, large, from, count, data, first + (int64_t)p));
    }
    if (ok) {
      i = count;
      prev = last;
      whole = false; /* validated above */
      if (bits != NULL) {
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
