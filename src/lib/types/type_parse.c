/* type_parse.c -- the datashape type-string parser (grammar:
 * docs/type-grammar.md; printing is in types.c, next to each kind).
 *
 * A recursive-descent parser over a byte range.  Recursion depth is bounded
 * by CK_TYPE_MAX_DEPTH (checked before descending), so hostile input cannot
 * exhaust the stack.  Every error is CK_ERR_PARSE "at column C: ..." (C the
 * 0-based byte offset), except out-of-memory, which stays CK_ERR_NO_MEMORY
 * so callers can tell the two apart.  Every path releases what it built.
 */
#include "types/type_internal.h"
#include "core/scalar_internal.h"
#include "types/time_internal.h"
#include "ckernel/dictionary.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct ck_parser {
  const char *text;
  size_t len;
  size_t pos;
} ck_parser;

static const char *const ck_parse_func = "ck_type_parse";

static bool ck__is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool ck__is_digit(int c) { return c >= '0' && c <= '9'; }

static int peek(const ck_parser *p) {
  return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static void ck__skip_ws(ck_parser *p) {
  while (p->pos < p->len) {
    char c = p->text[p->pos];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      break;
    }
    p->pos++;
  }
}

/* Describe the token at `at` for "found ..." (bounded, printable). */
static void describe(const ck_parser *p, size_t at, char *buf, size_t n) {
  if (at >= p->len) {
    snprintf(buf, n, "end of input");
    return;
  }
  unsigned char c = (unsigned char)p->text[at];
  if (ck__is_alpha(c) || ck__is_digit(c)) {
    size_t e = at;
    while (e < p->len && e - at < 32 &&
           (ck__is_alpha((unsigned char)p->text[e]) || ck__is_digit((unsigned char)p->text[e]))) {
      e++;
    }
    snprintf(buf, n, "'%.*s'", (int)(e - at), p->text + at);
  } else if (c == 0) {
    snprintf(buf, n, "a NUL byte");
  } else if (c < 0x20 || c >= 0x7f) {
    snprintf(buf, n, "byte 0x%02x", c);
  } else {
    snprintf(buf, n, "'%c'", c);
  }
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static ck_status ck__perr(const ck_parser *p, size_t at, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  (void)p;
  return ck__error(CK_ERR_PARSE, ck_parse_func, "at column %zu: %s", at, msg);
}

/* "expected X, found Y" at the current (whitespace-skipped) position. */
static ck_status ck__expected(ck_parser *p, const char *what) {
  char found[48];
  ck__skip_ws(p);
  describe(p, p->pos, found, sizeof found);
  return ck__perr(p, p->pos, "expected %s, found %s", what, found);
}

/* Re-report a constructor's failure as a parse error at `at`. */
static ck_status ck__wrap(ck_parser *p, size_t at, ck_status st) {
  if (st == CK_ERR_NO_MEMORY) {
    return st;
  }
  char msg[400];
  snprintf(msg, sizeof msg, "%s", ck_last_error());
  return ck__perr(p, at, "%s", msg);
}

/* Consume `c` (after whitespace) or fail with "expected 'c' <ctx>". */
static ck_status ck__expect_char(ck_parser *p, char c, const char *ctx) {
  ck__skip_ws(p);
  if (peek(p) == (unsigned char)c) {
    p->pos++;
    return CK_OK;
  }
  char what[96];
  snprintf(what, sizeof what, "'%c' %s", c, ctx);
  return ck__expected(p, what);
}

/* An identifier at the current position: [A-Za-z_][A-Za-z0-9_]*. */
static size_t ck__ident_len(const ck_parser *p) {
  size_t e = p->pos;
  if (e < p->len && ck__is_alpha((unsigned char)p->text[e])) {
    e++;
    while (e < p->len &&
           (ck__is_alpha((unsigned char)p->text[e]) || ck__is_digit((unsigned char)p->text[e]))) {
      e++;
    }
  }
  return e - p->pos;
}

static bool ck__word_is(const char *w, size_t n, const char *kw) {
  return strlen(kw) == n && memcmp(w, kw, n) == 0;
}

/* A decimal integer (leading zeros allowed) that fits in intptr_t. */
static ck_status ck__parse_dim_size(ck_parser *p, const char *what, intptr_t *out) {
  size_t start = p->pos;
  uintptr_t v = 0;
  bool too_big = false;
  while (p->pos < p->len && ck__is_digit((unsigned char)p->text[p->pos])) {
    unsigned d = (unsigned)(p->text[p->pos] - '0');
    if (v > ((uintptr_t)INTPTR_MAX - d) / 10) {
      too_big = true;
    } else {
      v = v * 10 + d;
    }
    p->pos++;
  }
  if (too_big) {
    size_t n = p->pos - start;
    return ck__perr(p, start, "%s %.*s%s is too large (the limit is %" PRIdPTR ")", what,
                (int)(n > 40 ? 40 : n), p->text + start, n > 40 ? "..." : "",
                (intptr_t)INTPTR_MAX);
  }
  *out = (intptr_t)v;
  return CK_OK;
}

static ck_status ck__parse_type(ck_parser *p, unsigned depth, const char *ctx, ck_type *out);

/* A field name: identifier, or quoted with ' or " (escapes \\ \' \"). */
static ck_status ck__parse_name(ck_parser *p, const char *ctx, char **out) {
  *out = NULL;
  ck__skip_ws(p);
  size_t start = p->pos;
  int q = peek(p);
  if (q != '\'' && q != '"') {
    size_t n = ck__ident_len(p);
    if (n == 0) {
      char what[64];
      snprintf(what, sizeof what, "a field name %s", ctx);
      return ck__expected(p, what);
    }
    char *s = CK_MALLOC(n + 1);
    if (s == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    memcpy(s, p->text + start, n);
    s[n] = '\0';
    p->pos += n;
    *out = s;
    return CK_OK;
  }
  /* Quoted: first find the end and the unescaped length. */
  size_t i = start + 1, n = 0;
  for (;;) {
    if (i >= p->len) {
      return ck__perr(p, start, "unterminated quoted field name");
    }
    unsigned char c = (unsigned char)p->text[i];
    if (c == q) {
      break;
    }
    if (c == '\\') {
      char e = i + 1 < p->len ? p->text[i + 1] : '\0';
      if (e != '\\' && e != '\'' && e != '"') {
        return ck__perr(p, i, "invalid escape in a quoted field name (only \\\\, \\' "
                    "and \\\" are allowed)");
      }
      i++;
    } else if (c < 0x20 || c == 0x7f) {
      return ck__perr(p, i, "control character (byte 0x%02x) in a quoted field name", c);
    }
    i++;
    n++;
  }
  if (n == 0) {
    return ck__perr(p, start, "empty field name");
  }
  char *s = CK_MALLOC(n + 1);
  if (s == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  size_t k = 0;
  for (size_t j = start + 1; j < i; j++) {
    if (p->text[j] == '\\') {
      j++;
    }
    s[k++] = p->text[j];
  }
  s[k] = '\0';
  if (!ck_utf8_validate(s, n)) {
    ck__free(s);
    return ck__perr(p, start, "quoted field name is not valid UTF-8");
  }
  p->pos = i + 1;
  *out = s;
  return CK_OK;
}

static ck_status ck__parse_struct(ck_parser *p, unsigned depth, ck_type *out) {
  size_t start = p->pos;
  p->pos++; /* '{' */
  char **names = NULL;
  ck_type *types = NULL;
  size_t n = 0, cap = 0;
  ck_status st = CK_OK;
  ck__name_set seen; /* duplicate names in O(n) */
  ck__name_set_init(&seen);
  ck__skip_ws(p);
  if (peek(p) == '}') {
    p->pos++;
  } else {
    const char *ctx = "after '{'";
    for (;;) {
      if (n == cap) {
        size_t ncap = cap ? 2 * cap : 4;
        char **nn = CK_REALLOC(names, ncap * sizeof *nn);
        if (nn == NULL) {
          st = CK_ERR_NO_MEMORY;
          break;
        }
        names = nn;
        ck_type *nt = CK_REALLOC(types, ncap * sizeof *nt);
        if (nt == NULL) {
          st = CK_ERR_NO_MEMORY;
          break;
        }
        types = nt;
        cap = ncap;
      }
      ck__skip_ws(p);
      size_t name_at = p->pos;
      char *name;
      if ((st = ck__parse_name(p, ctx, &name)) != CK_OK) {
        break;
      }
      names[n] = name;
      types[n] = NULL;
      n++;
      int added = ck__name_set_add(&seen, name, "ck_type_parse");
      if (added <= 0) {
        st = added < 0 ? CK_ERR_NO_MEMORY
                       : ck__perr(p, name_at, "duplicate field name '%.64s'", name);
        break;
      }
      if ((st = ck__expect_char(p, ':', "after a field name")) != CK_OK) {
        break;
      }
      if ((st = ck__parse_type(p, depth + 1, "after ':'", &types[n - 1])) != CK_OK) {
        break;
      }
      ck__skip_ws(p);
      if (peek(p) == ',') {
        p->pos++;
        ctx = "after ','";
        continue;
      }
      if (peek(p) == '}') {
        p->pos++;
        break;
      }
      st = ck__expected(p, "',' or '}' after a struct field");
      break;
    }
  }
  ck__name_set_free(&seen);
  if (st == CK_OK) {
    st = ck_struct_type_new(n, (const char *const *)names, types, out);
    if (st != CK_OK) {
      st = ck__wrap(p, start, st);
    }
  }
  for (size_t i = 0; i < n; i++) {
    ck__free(names[i]);
    ck_type_decref(types[i]);
  }
  ck__free(names);
  ck__free(types);
  return st;
}

/* `dim * type` after the dim token; builds the dim of kind `id` from the
 * element (`fixed`: a fixed dim's size; `var_name`: a symbolic dim's name). */
static ck_status ck__parse_dim_rest(ck_parser *p, unsigned depth, size_t start,
                                const char *dimname, intptr_t fixed, const char *var_name,
                                ck_type_id id, ck_type *out) {
  char ctx[80];
  snprintf(ctx, sizeof ctx, "after %s", dimname);
  ck_status st = ck__expect_char(p, '*', ctx);
  if (st != CK_OK) {
    return st;
  }
  ck_type elem;
  if ((st = ck__parse_type(p, depth + 1, "after '*'", &elem)) != CK_OK) {
    return st;
  }
  switch (id) {
  case CK_TYPE_FIXED_DIM: st = ck_fixed_dim_type_new(fixed, elem, out); break;
  case CK_TYPE_STRIDED_DIM: st = ck_strided_dim_type_new(elem, out); break;
  case CK_TYPE_SYMBOLIC_DIM: st = ck_symbolic_dim_type_new(var_name, elem, out); break;
  default: st = ck_var_dim_type_new(elem, out); break;
  }
  ck_type_decref(elem);
  return st == CK_OK ? st : ck__wrap(p, start, st);
}

/* A quoted parameter value ('...' or "...", no escapes) at the current
 * position: [*b, *b + *n). */
static ck_status ck__parse_quoted(ck_parser *p, const char *what, const char **b, size_t *n) {
  ck__skip_ws(p);
  int q = peek(p);
  if (q != '\'' && q != '"') {
    return ck__expected(p, what);
  }
  size_t s = ++p->pos;
  while (p->pos < p->len && p->text[p->pos] != (char)q) {
    p->pos++;
  }
  if (p->pos >= p->len) {
    return ck__perr(p, s - 1, "unterminated quoted %s", what);
  }
  *b = p->text + s;
  *n = p->pos - s;
  p->pos++;
  return CK_OK;
}

/* The time types (ckernel/datetime.h): `datetime[unit='s', tz='UTC']`,
 * `timedelta[unit='ns']`, `date[unit='ms']`, `time[unit='us']`, the bare
 * names, and NumPy's `datetime64[s]` / `timedelta64[s]`. */
static ck_status ck__parse_time(ck_parser *p, size_t start, const char *w, size_t n,
                                ck_type *out) {
  bool numpy = ck__word_is(w, n, "datetime64") || ck__word_is(w, n, "timedelta64");
  ck_type_id id = (w[0] == 'd' && n >= 8) ? CK_TYPE_DATETIME
                  : w[1] == 'i' && n >= 9 ? CK_TYPE_TIMEDELTA
                  : w[1] == 'a'           ? CK_TYPE_DATE
                                          : CK_TYPE_TIME;
  int unit = id == CK_TYPE_DATE ? CK_UNIT_D : CK_UNIT_US;
  char tz[CK_TIME_ZONE_MAX];
  tz[0] = '\0';
  ck_status st;
  ck__skip_ws(p);
  if (peek(p) != '[') {
    if (numpy) {
      return ck__perr(p, start, "%.*s needs a unit: %.*s[s] (a generic unit is not a "
                      "time type)", (int)n, w, (int)n, w);
    }
  } else {
    p->pos++;
    bool seen_unit = false, seen_tz = false;
    for (;;) {
      ck__skip_ws(p);
      size_t at = p->pos;
      size_t m = ck__ident_len(p);
      const char *k = p->text + p->pos;
      const char *vb = NULL;
      size_t vn = 0;
      if (numpy) { /* datetime64[s] */
        if (m == 0) {
          return ck__expected(p, "a unit after '['");
        }
        p->pos += m;
        vb = k;
        vn = m;
      } else if (ck__word_is(k, m, "unit") && !seen_unit) {
        p->pos += m;
        if ((st = ck__expect_char(p, '=', "after 'unit'")) != CK_OK ||
            (st = ck__parse_quoted(p, "unit name", &vb, &vn)) != CK_OK) {
          return st;
        }
      } else if (ck__word_is(k, m, "tz") && id == CK_TYPE_DATETIME && !seen_tz) {
        p->pos += m;
        const char *zb;
        size_t zn;
        if ((st = ck__expect_char(p, '=', "after 'tz'")) != CK_OK ||
            (st = ck__parse_quoted(p, "time zone", &zb, &zn)) != CK_OK) {
          return st;
        }
        if (!ck__tz_valid(zb, zn)) {
          return ck__perr(p, at, "time zone '%.*s' is not a zone name (1 to %d characters "
                          "of A-Z a-z 0-9 _ + - / :)", (int)(zn > 80 ? 80 : zn), zb,
                          CK_TIME_ZONE_MAX - 1);
        }
        memcpy(tz, zb, zn);
        tz[zn] = '\0';
        seen_tz = true;
      } else {
        return ck__expected(p, id == CK_TYPE_DATETIME
                                   ? "unit='...' or tz='...' (once each) after '['"
                                   : "unit='...' after '['");
      }
      if (vb != NULL) {
        char un[8];
        if (vn == 0 || vn >= sizeof un) {
          return ck__perr(p, at, "unknown time unit '%.*s' (the units are Y, M, W, D, h, "
                          "m, s, ms, us, ns)", (int)(vn > 40 ? 40 : vn), vb);
        }
        memcpy(un, vb, vn);
        un[vn] = '\0';
        ck_time_unit u;
        if (ck_time_unit_from_name(un, &u) != CK_OK) {
          return ck__perr(p, at, "unknown time unit '%s' (the units are Y, M, W, D, h, m, "
                          "s, ms, us, ns)", un);
        }
        unit = (int)u;
        seen_unit = true;
      }
      ck__skip_ws(p);
      if (!numpy && peek(p) == ',') {
        p->pos++;
        continue;
      }
      if ((st = ck__expect_char(p, ']', "to close the time type's parameters")) != CK_OK) {
        return st;
      }
      break;
    }
  }
  switch (id) {
  case CK_TYPE_DATETIME: st = ck_datetime_type_new((ck_time_unit)unit, tz, out); break;
  case CK_TYPE_TIMEDELTA: st = ck_timedelta_type_new((ck_time_unit)unit, out); break;
  case CK_TYPE_DATE: st = ck_date_type_new((ck_time_unit)unit, out); break;
  default: st = ck_time_type_new((ck_time_unit)unit, out); break;
  }
  return st == CK_OK ? st : ck__wrap(p, start, st);
}

/* `dictionary[I, V]` / `dictionary[I, V, ordered]` (after the word). */
static ck_status ck__parse_dictionary(ck_parser *p, unsigned depth, size_t start,
                                      ck_type *out) {
  ck_status st;
  if ((st = ck__expect_char(p, '[', "after 'dictionary'")) != CK_OK) {
    return st;
  }
  ck__skip_ws(p);
  size_t at = p->pos;
  ck_type index;
  if ((st = ck__parse_type(p, depth + 1, "after 'dictionary['", &index)) != CK_OK) {
    return st;
  }
  ck_type_id iid = ck_type_id_of(index);
  char k = ck_type_is_builtin(index) ? ck_type_id_kind(iid) : 0;
  ck_type_decref(index);
  if (k != 'i' && k != 'u') {
    return ck__perr(p, at, "expected an integer index type (int8..int64, uint8..uint64) "
                    "after 'dictionary['");
  }
  if ((st = ck__expect_char(p, ',', "after the index type of 'dictionary['")) != CK_OK) {
    return st;
  }
  ck_type value;
  if ((st = ck__parse_type(p, depth + 1, "after 'dictionary[I,'", &value)) != CK_OK) {
    return st;
  }
  bool ordered = false;
  ck__skip_ws(p);
  if (peek(p) == ',') {
    p->pos++;
    ck__skip_ws(p);
    size_t m = ck__ident_len(p);
    if (!ck__word_is(p->text + p->pos, m, "ordered")) {
      ck_type_decref(value);
      return ck__expected(p, "'ordered' after the value type of 'dictionary['");
    }
    p->pos += m;
    ordered = true;
  }
  if ((st = ck__expect_char(p, ']', "to close 'dictionary['")) != CK_OK) {
    ck_type_decref(value);
    return st;
  }
  st = ck_dictionary_type_new(iid, value, ordered, out);
  ck_type_decref(value);
  return st == CK_OK ? st : ck__wrap(p, start, st);
}

static ck_status ck__parse_type(ck_parser *p, unsigned depth, const char *ctx, ck_type *out) {
  *out = NULL;
  ck__skip_ws(p);
  size_t start = p->pos;
  if (depth > CK_TYPE_MAX_DEPTH) {
    return ck__perr(p, start, "type nesting is deeper than %d levels", CK_TYPE_MAX_DEPTH);
  }
  int c = peek(p);
  ck_status st;
  if (ck__is_digit(c)) {
    intptr_t n;
    if ((st = ck__parse_dim_size(p, "dimension size", &n)) != CK_OK) {
      return st;
    }
    char what[64];
    snprintf(what, sizeof what, "dimension size %" PRIdPTR, n);
    return ck__parse_dim_rest(p, depth, start, what, n, NULL, CK_TYPE_FIXED_DIM, out);
  }
  if (c == '{') {
    return ck__parse_struct(p, depth, out);
  }
  if (c == '?') { /* `?T`: an option of whatever type follows */
    p->pos++;
    ck_type value;
    if ((st = ck__parse_type(p, depth + 1, "after '?'", &value)) != CK_OK) {
      return st;
    }
    st = ck_option_type_new(value, out);
    ck_type_decref(value);
    return st == CK_OK ? st : ck__wrap(p, start, st);
  }
  size_t n = ck__ident_len(p);
  if (n == 0) {
    char what[64];
    snprintf(what, sizeof what, "a type%s%s", *ctx ? " " : "", ctx);
    return ck__expected(p, what);
  }
  const char *w = p->text + start;
  p->pos += n;
  if (ck__word_is(w, n, "strided")) {
    return ck__parse_dim_rest(p, depth, start, "'strided'", 0, NULL, CK_TYPE_STRIDED_DIM,
                              out);
  }
  if (ck__word_is(w, n, "var")) {
    return ck__parse_dim_rest(p, depth, start, "'var'", 0, NULL, CK_TYPE_VAR_DIM, out);
  }
  if (c >= 'A' && c <= 'Z') { /* a dimension variable: `N * type` */
    if (n >= CK_DIM_NAME_MAX) {
      return ck__perr(p, start, "dimension variable '%.40s...' is longer than %d bytes", w,
                      CK_DIM_NAME_MAX - 1);
    }
    ck__skip_ws(p);
    if (peek(p) != '*') {
      char found[48];
      describe(p, p->pos, found, sizeof found);
      return ck__perr(p, p->pos,
                      "expected '*' after dimension variable %.*s, found %s (an "
                      "upper-case name is a dimension variable: 'N * float64'; type "
                      "names are lower-case)", (int)n, w, found);
    }
    char name[CK_DIM_NAME_MAX];
    memcpy(name, w, n);
    name[n] = '\0';
    char what[CK_DIM_NAME_MAX + 32];
    snprintf(what, sizeof what, "dimension variable %s", name);
    return ck__parse_dim_rest(p, depth, start, what, 0, name, CK_TYPE_SYMBOLIC_DIM, out);
  }
  int scalar = ck__builtin_by_name(w, n); /* the builtin table's names */
  if (scalar != 0) {
    *out = CK_BUILTIN((ck_type_id)scalar);
    return CK_OK;
  }
  if (ck__word_is(w, n, "complex")) { /* complex == complex[float64] */
    ck__skip_ws(p);
    if (peek(p) != '[') {
      *out = CK_BUILTIN(CK_TYPE_COMPLEX128);
      return CK_OK;
    }
    p->pos++;
    ck__skip_ws(p);
    size_t m = ck__ident_len(p);
    ck_type_id id = CK_TYPE_UNINITIALIZED;
    if (ck__word_is(p->text + p->pos, m, "float32")) {
      id = CK_TYPE_COMPLEX64;
    } else if (ck__word_is(p->text + p->pos, m, "float64")) {
      id = CK_TYPE_COMPLEX128;
    } else {
      return ck__expected(p, "'float32' or 'float64' after 'complex['");
    }
    p->pos += m;
    if ((st = ck__expect_char(p, ']', "to close 'complex['")) != CK_OK) {
      return st;
    }
    *out = CK_BUILTIN(id);
    return CK_OK;
  }
  if (ck__word_is(w, n, "datetime") || ck__word_is(w, n, "timedelta") ||
      ck__word_is(w, n, "date") || ck__word_is(w, n, "time") ||
      ck__word_is(w, n, "datetime64") || ck__word_is(w, n, "timedelta64")) {
    return ck__parse_time(p, start, w, n, out);
  }
  if (ck__word_is(w, n, "string")) {
    return ck_string_type_new(out);
  }
  if (ck__word_is(w, n, "bytes")) {
    size_t align = 1;
    ck__skip_ws(p);
    if (peek(p) == '[') {
      p->pos++;
      ck__skip_ws(p);
      size_t m = ck__ident_len(p);
      if (!ck__word_is(p->text + p->pos, m, "align")) {
        return ck__expected(p, "'align' after 'bytes['");
      }
      p->pos += m;
      if ((st = ck__expect_char(p, '=', "after 'align'")) != CK_OK) {
        return st;
      }
      ck__skip_ws(p);
      size_t num_at = p->pos;
      if (!ck__is_digit(peek(p))) {
        return ck__expected(p, "an alignment after 'align='");
      }
      intptr_t a;
      if ((st = ck__parse_dim_size(p, "alignment", &a)) != CK_OK) {
        return st;
      }
      if (!ck__is_pow2((size_t)a) || a > CK_BYTES_MAX_ALIGN) {
        return ck__perr(p, num_at, "alignment %" PRIdPTR " is not a power of two in [1, %d]",
                    a, CK_BYTES_MAX_ALIGN);
      }
      align = (size_t)a;
      if ((st = ck__expect_char(p, ']', "to close 'bytes['")) != CK_OK) {
        return st;
      }
    }
    return ck_bytes_type_new(align, out);
  }
  if (ck__word_is(w, n, "pointer")) {
    if ((st = ck__expect_char(p, '[', "after 'pointer'")) != CK_OK) {
      return st;
    }
    ck_type target;
    if ((st = ck__parse_type(p, depth + 1, "after 'pointer['", &target)) != CK_OK) {
      return st;
    }
    if ((st = ck__expect_char(p, ']', "to close 'pointer['")) != CK_OK) {
      ck_type_decref(target);
      return st;
    }
    st = ck_pointer_type_new(target, out);
    ck_type_decref(target);
    return st == CK_OK ? st : ck__wrap(p, start, st);
  }
  if (ck__word_is(w, n, "dictionary")) {
    return ck__parse_dictionary(p, depth, start, out);
  }
  return ck__perr(p, start, "expected a type%s%s, found unknown type name '%.*s'",
              *ctx ? " " : "", ctx, (int)(n > 40 ? 40 : n), w);
}

ck_status ck_type_parse_n(const char *text, size_t len, ck_type *out) {
  if (out == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, ck_parse_func, "out must not be NULL");
  }
  *out = NULL;
  if (text == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, ck_parse_func, "text must not be NULL");
  }
  ck_parser p = {text, len, 0};
  ck_type t;
  ck_status st = ck__parse_type(&p, 1, "", &t);
  if (st != CK_OK) {
    return st;
  }
  ck__skip_ws(&p);
  if (p.pos != p.len) {
    ck_type_decref(t);
    return ck__expected(&p, "the end of the type");
  }
  *out = t;
  return CK_OK;
}

ck_status ck_type_parse(const char *text, ck_type *out) {
  if (text == NULL) {
    if (out != NULL) {
      *out = NULL;
    }
    return ck__error(CK_ERR_INVALID_ARGUMENT, ck_parse_func, "text must not be NULL");
  }
  return ck_type_parse_n(text, strlen(text), out);
}
