/*
 * format_spec.c -- Python's format-spec mini-language (ckernel/text.h):
 *     [[fill]align][sign][z][#][0][width][grouping][.precision][type]
 * parsed and checked per kind of value (int, bool, float, str) with
 * CPython's error messages, in CPython's order (Python 3.11,
 * Python/formatter_unicode.c).
 */
#include "core/text_internal.h"

#include <limits.h>
#include <string.h>

_Static_assert(sizeof(ck_format_spec) == 32, "ck_format_spec: 32 bytes");

static bool ck__is_align(char c) { return c == '<' || c == '>' || c == '=' || c == '^'; }

static const char *ck__kind_name(int kind) {
  switch (kind) {
  case CK_FORMAT_INT: return "int";
  case CK_FORMAT_BOOL: return "bool";
  case CK_FORMAT_FLOAT: return "float";
  default: return "str";
  }
}

/* Digits at *pp as a non-negative count: the number of digits read, or -1
 * (recorded) when they overflow. */
static int ck__spec_integer(const char **pp, const char *e, int64_t *out) {
  const char *p = *pp;
  int64_t acc = 0;
  int n = 0;
  for (; p < e && *p >= '0' && *p <= '9'; p++, n++) {
    int d = *p - '0';
    if (acc > (INT64_MAX - d) / 10) {
      CK_ERROR(CK_ERR_VALUE, "Too many decimal digits in format string");
      return -1;
    }
    acc = acc * 10 + d;
  }
  *pp = p;
  *out = acc;
  return n;
}

ck_status ck_format_spec_parse(const char *spec, size_t len, ck_format_kind kind,
                               ck_format_spec *out) {
  if ((spec == NULL && len != 0) || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (kind < CK_FORMAT_INT || kind > CK_FORMAT_TEXT) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown format kind %d", (int)kind);
  }
  bool text = kind == CK_FORMAT_TEXT;
  memset(out, 0, sizeof *out);
  out->width = -1;
  out->precision = -1;
  out->fill = ' ';
  out->kind = (uint8_t)kind;
  out->align = text ? '<' : '>';
  out->type = kind == CK_FORMAT_FLOAT ? 0 : (text ? 's' : 'd');
  if (len == 0) {
    out->flags = CK_FORMAT_EMPTY;
    return CK_OK;
  }
  const char *p = spec, *e = spec + len;
  bool fill_given = false, align_given = false;
  /* [[fill]align]: the fill is one code point, any */
  const unsigned char *next = (const unsigned char *)p + 1;
  int32_t cp = (unsigned char)*p < 0x80 ? (unsigned char)*p
                                        : ck__utf8_next((const unsigned char *)p,
                                                        (const unsigned char *)e, &next);
  if (cp < 0) {
    return CK_ERROR(CK_ERR_VALUE, "the format spec is not valid UTF-8");
  }
  if ((const char *)next < e && ck__is_align(*(const char *)next)) {
    out->fill = (uint32_t)cp;
    out->align = *(const char *)next;
    p = (const char *)next + 1;
    fill_given = align_given = true;
  } else if (ck__is_align(*p)) {
    out->align = *p++;
    align_given = true;
  }
  if (p < e && (*p == '+' || *p == '-' || *p == ' ')) {
    out->sign = *p++;
  }
  if (p < e && *p == 'z') {
    out->flags |= CK_FORMAT_NO_NEG_ZERO;
    p++;
  }
  if (p < e && *p == '#') {
    out->flags |= CK_FORMAT_ALT;
    p++;
  }
  if (!fill_given && p < e && *p == '0') {
    out->fill = '0';
    if (!align_given && !text) {
      out->align = '=';
    }
    p++;
  }
  int64_t v;
  int nd = ck__spec_integer(&p, e, &v);
  if (nd < 0) {
    return CK_ERR_VALUE;
  }
  if (nd > 0) {
    out->width = v;
  }
  if (p < e && (*p == ',' || *p == '_')) {
    out->grouping = *p++;
    if (p < e && (*p == ',' || *p == '_')) {
      return CK_ERROR(CK_ERR_VALUE, "Cannot specify both ',' and '_'.");
    }
  }
  if (p < e && *p == '.') {
    p++;
    nd = ck__spec_integer(&p, e, &v);
    if (nd < 0) {
      return CK_ERR_VALUE;
    }
    if (nd == 0) {
      return CK_ERROR(CK_ERR_VALUE, "Format specifier missing precision");
    }
    out->precision = v;
  }
  if (e - p > 1) {
    return CK_ERROR(CK_ERR_VALUE, "Invalid format specifier '%.*s' for object of type '%s'",
                    (int)len, spec, ck__kind_name(kind));
  }
  if (p < e) {
    out->type = *p;
  }
  char t = out->type;
  if (out->grouping != 0) {
    bool ok = strchr("deEfFgG%", t) != NULL || t == 0 ||
              (out->grouping == '_' && strchr("boxX", t) != NULL);
    if (!ok) {
      if (t > 32 && t < 127) {
        return CK_ERROR(CK_ERR_VALUE, "Cannot specify '%c' with '%c'.", out->grouping, t);
      }
      return CK_ERROR(CK_ERR_VALUE, "Cannot specify '%c' with '\\x%x'.", out->grouping,
                      (unsigned)(unsigned char)t);
    }
  }
  if (t == 'n') {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "format type 'n' depends on the process locale; use 'd', 'g' or "
                    "grouping (',' / '_') instead");
  }
  bool int_type = t != 0 && strchr("bcdoxX", t) != NULL;
  bool float_type = t != 0 && strchr("eEfFgG%", t) != NULL;
  bool known = text ? t == 's'
                    : (kind == CK_FORMAT_FLOAT ? (t == 0 || float_type) : (int_type || float_type));
  if (!known) {
    if (t > 32 && t < 127) {
      return CK_ERROR(CK_ERR_VALUE, "Unknown format code '%c' for object of type '%s'", t,
                      ck__kind_name(kind));
    }
    return CK_ERROR(CK_ERR_VALUE, "Unknown format code '\\x%x' for object of type '%s'",
                    (unsigned)(unsigned char)t, ck__kind_name(kind));
  }
  /* the checks in Python's order */
  if (text) {
    if (out->sign != 0) {
      return CK_ERROR(CK_ERR_VALUE, "%s not allowed in string format specifier",
                      out->sign == ' ' ? "Space" : "Sign");
    }
    if (out->flags & CK_FORMAT_NO_NEG_ZERO) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Negative zero coercion (z) not allowed in string format specifier");
    }
    if (out->flags & CK_FORMAT_ALT) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Alternate form (#) not allowed in string format specifier");
    }
    if (out->align == '=') {
      return CK_ERROR(CK_ERR_VALUE, "'=' alignment not allowed in string format specifier");
    }
    return CK_OK;
  }
  if (int_type) {
    if (out->precision != -1) {
      return CK_ERROR(CK_ERR_VALUE, "Precision not allowed in integer format specifier");
    }
    if (out->flags & CK_FORMAT_NO_NEG_ZERO) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Negative zero coercion (z) not allowed in integer format specifier");
    }
    if (t == 'c' && out->sign != 0) {
      return CK_ERROR(CK_ERR_VALUE, "Sign not allowed with integer format specifier 'c'");
    }
    if (t == 'c' && (out->flags & CK_FORMAT_ALT)) {
      return CK_ERROR(CK_ERR_VALUE,
                      "Alternate form (#) not allowed with integer format specifier 'c'");
    }
  } else if (out->precision > INT_MAX) {
    return CK_ERROR(CK_ERR_VALUE, "precision too big");
  }
  return CK_OK;
}

ck_status ck__check_spec(const ck_format_spec *spec, bool text, const char *func) {
  if (spec == NULL) {
    return CK_OK;
  }
  bool ok = text ? spec->kind == CK_FORMAT_TEXT
                 : (spec->kind >= CK_FORMAT_INT && spec->kind <= CK_FORMAT_FLOAT);
  if (!ok) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "the spec was parsed for %s values",
                     ck__kind_name(spec->kind));
  }
  return CK_OK;
}
