/*
 * text.c -- UTF-8 <-> code-unit arrays and Python's format() of str values
 * as UTF-8 (ckernel/text.h).  The other format() pieces of text.h:
 * format_spec.c (the spec parser), format_number.c (ints, bools, floats)
 * and float_text.c (a float's digits and notation).
 */
#include "core/text_internal.h"

#include <string.h>

/* ---- UTF-8 ---------------------------------------------------------------- */

ck_status ck_utf8_measure(const char *bytes, size_t n, size_t *out_length,
                          uint32_t *out_maxchar) {
  if ((bytes == NULL && n != 0) || out_length == NULL || out_maxchar == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  const unsigned char *p = (const unsigned char *)bytes, *e = p + n;
  size_t len = 0;
  uint32_t maxc = 0;
  while (p < e) {
    /* ASCII runs, eight bytes at a time */
    while (e - p >= 8) {
      uint64_t w;
      memcpy(&w, p, 8);
      if (w & UINT64_C(0x8080808080808080)) {
        break;
      }
      p += 8;
      len += 8;
    }
    if (p == e) {
      break;
    }
    if (*p < 0x80) {
      p++;
      len++;
      continue;
    }
    const unsigned char *next;
    int32_t cp = ck__utf8_next(p, e, &next);
    if (cp < 0) {
      return CK_ERROR(CK_ERR_VALUE, "invalid UTF-8 data in a ckernel string (byte %zu)",
                      (size_t)(p - (const unsigned char *)bytes));
    }
    if ((uint32_t)cp > maxc) {
      maxc = (uint32_t)cp;
    }
    p = next;
    len++;
  }
  if (maxc == 0 && n != 0) { /* ASCII: the largest byte */
    for (size_t i = 0; i < n; i++) {
      if ((unsigned char)bytes[i] > maxc) {
        maxc = (unsigned char)bytes[i];
      }
    }
  }
  *out_length = len;
  *out_maxchar = maxc;
  return CK_OK;
}

ck_status ck_utf8_decode(const char *bytes, size_t n, void *out, int kind) {
  if ((bytes == NULL || out == NULL) && n != 0) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (kind != 1 && kind != 2 && kind != 4) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "kind %d is not 1, 2 or 4", kind);
  }
  const unsigned char *p = (const unsigned char *)bytes, *e = p + n;
  size_t i = 0;
  while (p < e) {
    const unsigned char *next = p + 1;
    int32_t cp = *p < 0x80 ? (int32_t)*p : ck__utf8_next(p, e, &next);
    if (cp < 0 || (kind == 1 && cp > 0xFF) || (kind == 2 && cp > 0xFFFF)) {
      return CK_ERROR(CK_ERR_VALUE,
                      "invalid UTF-8 data, or a code point wider than kind %d (byte %zu)",
                      kind, (size_t)(p - (const unsigned char *)bytes));
    }
    if (kind == 1) {
      ((uint8_t *)out)[i] = (uint8_t)cp;
    } else if (kind == 2) {
      ((uint16_t *)out)[i] = (uint16_t)cp;
    } else {
      ((uint32_t *)out)[i] = (uint32_t)cp;
    }
    i++;
    p = next;
  }
  return CK_OK;
}

/* ---- text ------------------------------------------------------------------- */

static uint32_t ck__unit(const void *data, int kind, size_t i) {
  return kind == 1 ? ((const uint8_t *)data)[i]
                   : kind == 2 ? ((const uint16_t *)data)[i] : ((const uint32_t *)data)[i];
}

ck_status ck_format_text(char *out, size_t cap, const ck_format_spec *spec,
                         const void *data, int kind, size_t length, size_t *out_len) {
  if (out_len == NULL || (out == NULL && cap != 0) || (data == NULL && length != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (kind != 1 && kind != 2 && kind != 4) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "kind %d is not 1, 2 or 4", kind);
  }
  ck_status st = ck__check_spec(spec, true, __func__);
  if (st != CK_OK) {
    return st;
  }
  size_t n = length;
  if (spec != NULL && spec->precision >= 0 && (uint64_t)spec->precision < n) {
    n = (size_t)spec->precision;
  }
  size_t bytes = n;
  if (kind != 1) {
    bytes = 0;
    for (size_t i = 0; i < n; i++) {
      uint32_t cp = ck__unit(data, kind, i);
      if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
        return CK_ERROR(CK_ERR_VALUE,
                        "code point U+%04X at index %zu cannot be encoded to UTF-8 "
                        "(surrogates not allowed)",
                        (unsigned)cp, i);
      }
      bytes += ck__cp_len(cp);
    }
  } else {
    const uint8_t *u = data;
    for (size_t i = 0; i < n; i++) {
      bytes += u[i] >= 0x80;
    }
  }
  size_t lpad = 0, rpad = 0;
  if (spec != NULL && spec->width > 0 && (uint64_t)spec->width > n) {
    size_t pad = (size_t)spec->width - n;
    if (spec->align == '>') {
      lpad = pad;
    } else if (spec->align == '^') {
      lpad = pad / 2;
      rpad = pad - lpad;
    } else {
      rpad = pad;
    }
  }
  uint32_t fill = spec != NULL ? spec->fill : ' ';
  size_t fl = ck__cp_len(fill);
  if (lpad + rpad > (SIZE_MAX - bytes) / fl) {
    return CK_ERROR(CK_ERR_OVERFLOW, "formatted text too long");
  }
  size_t total = bytes + (lpad + rpad) * fl;
  *out_len = total;
  if (total > cap || out == NULL) {
    return CK_OK;
  }
  char *p = ck__fill(out, fill, lpad);
  if (kind == 1 && bytes == n) {
    if (n != 0) { /* an empty text's data may be NULL */
      memcpy(p, data, n);
      p += n;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      p = ck__put_cp(p, ck__unit(data, kind, i));
    }
  }
  ck__fill(p, fill, rpad);
  return CK_OK;
}
