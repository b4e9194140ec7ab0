/*
 * arrow_schema.c -- Arrow format strings, the schemas the library makes,
 * and the element type of a schema (ck_arrow_schema_type).
 */
#include "interop/arrow_internal.h"
#include "types/time_internal.h"
#include "ckernel/dictionary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- formats --------------------------------------------------------------- */

static const struct {
  const char *format;
  ck_type_id id;
} ck__prim_formats[] = {
    {"c", CK_TYPE_INT8},    {"C", CK_TYPE_UINT8},   {"s", CK_TYPE_INT16},
    {"S", CK_TYPE_UINT16},  {"i", CK_TYPE_INT32},   {"I", CK_TYPE_UINT32},
    {"l", CK_TYPE_INT64},   {"L", CK_TYPE_UINT64},  {"e", CK_TYPE_FLOAT16},
    {"f", CK_TYPE_FLOAT32}, {"g", CK_TYPE_FLOAT64},
};

const char *ck__arrow_builtin_format(ck_type_id id) {
  if (id == CK_TYPE_BOOL) {
    return "b";
  }
  for (size_t i = 0; i < sizeof ck__prim_formats / sizeof ck__prim_formats[0]; i++) {
    if (ck__prim_formats[i].id == id) {
      return ck__prim_formats[i].format;
    }
  }
  return NULL;
}

/* Arrow's time formats: tdD tdm, tts ttm ttu ttn, tDs tDm tDu tDn,
 * ts{s,m,u,n}:ZONE (ZONE may be empty). */
static int ck__arrow_unit(char c) {
  switch (c) {
  case 's': return CK_UNIT_S;
  case 'm': return CK_UNIT_MS;
  case 'u': return CK_UNIT_US;
  case 'n': return CK_UNIT_NS;
  default: return -1;
  }
}

static bool ck__arrow_parse_time(const char *f, ck__arrow_format *out) {
  out->kind = CK__ARROW_PRIMITIVE;
  if (strcmp(f, "tdD") == 0 || strcmp(f, "tdm") == 0) {
    out->time_id = CK_TYPE_DATE;
    out->time_unit = f[2] == 'D' ? CK_UNIT_D : CK_UNIT_MS;
    out->prim = f[2] == 'D' ? CK_TYPE_INT32 : CK_TYPE_INT64;
    return true;
  }
  if (f[1] == '\0' || f[2] == '\0' || ck__arrow_unit(f[2]) < 0) {
    return false;
  }
  out->time_unit = ck__arrow_unit(f[2]);
  if (f[1] == 't' && f[3] == '\0') {
    out->time_id = CK_TYPE_TIME;
    out->prim = out->time_unit <= CK_UNIT_MS ? CK_TYPE_INT32 : CK_TYPE_INT64;
    return true;
  }
  if (f[1] == 'D' && f[3] == '\0') {
    out->time_id = CK_TYPE_TIMEDELTA;
    out->prim = CK_TYPE_INT64;
    return true;
  }
  if (f[1] == 's' && f[3] == ':') {
    out->time_id = CK_TYPE_DATETIME;
    out->prim = CK_TYPE_INT64;
    out->tz = f[4] != '\0' ? f + 4 : NULL;
    return true;
  }
  return false;
}

bool ck__arrow_time_format(ck_type t, char *buf, size_t n) {
  int u = ck_time_type_unit(t);
  static const char units[] = "smun"; /* s, ms, us, ns */
  char uc = u >= CK_UNIT_S ? units[u - CK_UNIT_S] : '?';
  switch (ck_type_id_of(t)) {
  case CK_TYPE_DATE:
    snprintf(buf, n, "%s", u == CK_UNIT_D ? "tdD" : "tdm");
    return true;
  case CK_TYPE_TIME:
    snprintf(buf, n, "tt%c", uc);
    return true;
  case CK_TYPE_TIMEDELTA:
    snprintf(buf, n, "tD%c", uc);
    return uc != '?';
  case CK_TYPE_DATETIME: {
    const char *tz = ck_datetime_type_tz(t);
    snprintf(buf, n, "ts%c:%s", uc, tz != NULL ? tz : "");
    return uc != '?';
  }
  default: return false;
  }
}

bool ck__arrow_parse_format(const char *f, ck__arrow_format *out) {
  static const struct {
    const char *format;
    ck__arrow_kind kind;
  } fixed[] = {
      {"n", CK__ARROW_NULL},        {"b", CK__ARROW_BOOL},
      {"u", CK__ARROW_UTF8},        {"U", CK__ARROW_LARGE_UTF8},
      {"vu", CK__ARROW_UTF8_VIEW},  {"z", CK__ARROW_BINARY},
      {"Z", CK__ARROW_LARGE_BINARY}, {"vz", CK__ARROW_BINARY_VIEW},
      {"+l", CK__ARROW_LIST},       {"+L", CK__ARROW_LARGE_LIST},
      {"+vl", CK__ARROW_LIST_VIEW}, {"+vL", CK__ARROW_LARGE_LIST_VIEW},
      {"+s", CK__ARROW_STRUCT},
  };
  out->prim = CK_TYPE_UNINITIALIZED;
  out->fixed_size = 0;
  out->time_id = 0;
  out->time_unit = 0;
  out->tz = NULL;
  if (f == NULL) {
    return false;
  }
  if (f[0] == 't' && ck__arrow_parse_time(f, out)) {
    return true;
  }
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
    if (strcmp(f, fixed[i].format) == 0) {
      out->kind = fixed[i].kind;
      if (out->kind == CK__ARROW_BOOL) {
        out->prim = CK_TYPE_BOOL;
      }
      return true;
    }
  }
  for (size_t i = 0; i < sizeof ck__prim_formats / sizeof ck__prim_formats[0]; i++) {
    if (strcmp(f, ck__prim_formats[i].format) == 0) {
      out->kind = CK__ARROW_PRIMITIVE;
      out->prim = ck__prim_formats[i].id;
      return true;
    }
  }
  if (strncmp(f, "+w:", 3) == 0) {
    /* a decimal size without sign, leading zeros or trailing text */
    const char *p = f + 3;
    int64_t n = 0;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0')) {
      return false;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
      if (n > (INT64_MAX - 9) / 10) {
        return false;
      }
      n = n * 10 + (*p - '0');
    }
    if (*p != '\0' || n > INT32_MAX) {
      return false;
    }
    out->kind = CK__ARROW_FIXED_LIST;
    out->fixed_size = n;
    return true;
  }
  return false;
}

/* ---- paths ----------------------------------------------------------------- */

size_t ck__arrow_path_push(ck__arrow_path *p, const char *name) {
  size_t old = p->len;
  int n;
  if (name == NULL) {
    n = snprintf(p->text + p->len, sizeof p->text - p->len, "[]");
  } else {
    n = snprintf(p->text + p->len, sizeof p->text - p->len, "%s%s",
                 p->len == 0 ? "" : ".", name);
  }
  if (n > 0) {
    p->len += (size_t)n;
  }
  if (p->len >= sizeof p->text) {
    p->len = sizeof p->text - 1;
  }
  return old;
}

const char *ck__arrow_path_what(const ck__arrow_path *p, char *buf, size_t n) {
  if (p->len == 0) {
    return "the top level";
  }
  snprintf(buf, n, "field '%s'", p->text);
  return buf;
}

/* ---- schemas the library owns ------------------------------------------------ */

typedef struct ck__schema_private {
  char *format;
  char *name;
  char *metadata;
  struct ArrowSchema *child_structs;  /* n_children, owned */
  struct ArrowSchema **child_ptrs;    /* n_children pointers into child_structs */
  struct ArrowSchema *dictionary;     /* owned, or NULL */
} ck__schema_private;

static void ck__schema_release_cb(struct ArrowSchema *s) {
  if (s == NULL || s->release == NULL) {
    return;
  }
  ck__schema_private *p = s->private_data;
  if (p != NULL) {
    for (int64_t i = 0; i < s->n_children; i++) {
      ck__arrow_schema_release(p->child_ptrs[i]);
    }
    if (p->dictionary != NULL) {
      ck__arrow_schema_release(p->dictionary);
      ck__free(p->dictionary);
    }
    ck__free(p->child_structs);
    ck__free(p->child_ptrs);
    ck__free(p->format);
    ck__free(p->name);
    ck__free(p->metadata);
    ck__free(p);
  }
  s->release = NULL;
}

static char *ck__strdup(const char *s, const char *func) {
  size_t n = strlen(s) + 1;
  char *d = ck__malloc(n, func);
  if (d != NULL) {
    memcpy(d, s, n);
  }
  return d;
}

ck_status ck__arrow_schema_init(struct ArrowSchema *s, const char *format,
                                const char *name, int64_t flags,
                                int64_t n_children) {
  memset(s, 0, sizeof *s);
  ck__schema_private *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  s->private_data = p;
  s->release = ck__schema_release_cb;
  /* n_children stays 0 until every child slot is a released schema, so the
   * release callback is safe at every step. */
  p->format = ck__strdup(format, __func__);
  p->name = ck__strdup(name != NULL ? name : "", __func__);
  if (p->format == NULL || p->name == NULL) {
    s->release(s);
    return CK_ERR_NO_MEMORY;
  }
  if (n_children > 0) {
    p->child_structs = CK_CALLOC((size_t)n_children, sizeof *p->child_structs);
    p->child_ptrs = CK_CALLOC((size_t)n_children, sizeof *p->child_ptrs);
    if (p->child_structs == NULL || p->child_ptrs == NULL) {
      s->release(s);
      return CK_ERR_NO_MEMORY;
    }
    for (int64_t i = 0; i < n_children; i++) {
      p->child_ptrs[i] = &p->child_structs[i];
    }
  }
  s->format = p->format;
  s->name = p->name;
  s->metadata = NULL;
  s->flags = flags;
  s->n_children = n_children;
  s->children = p->child_ptrs;
  s->dictionary = NULL;
  return CK_OK;
}

/* Bytes of Arrow's binary metadata encoding ({int32 n; n * (int32 len, key,
 * int32 len, value)}); 0 for NULL. */
static size_t ck__metadata_size(const char *m) {
  if (m == NULL) {
    return 0;
  }
  int32_t n;
  size_t pos = 4;
  memcpy(&n, m, 4);
  for (int32_t i = 0; i < 2 * n; i++) {
    int32_t len;
    memcpy(&len, m + pos, 4);
    pos += 4 + (size_t)(len > 0 ? len : 0);
  }
  return pos;
}

ck_status ck__arrow_schema_copy(const struct ArrowSchema *src,
                                struct ArrowSchema *dst) {
  ck_status st = ck__arrow_schema_init(dst, src->format, src->name, src->flags,
                                       src->n_children);
  if (st != CK_OK) {
    return st;
  }
  ck__schema_private *p = dst->private_data;
  size_t msize = ck__metadata_size(src->metadata);
  if (msize > 0) {
    p->metadata = CK_MALLOC(msize);
    if (p->metadata == NULL) {
      dst->release(dst);
      return CK_ERR_NO_MEMORY;
    }
    memcpy(p->metadata, src->metadata, msize);
    dst->metadata = p->metadata;
  }
  for (int64_t i = 0; i < src->n_children; i++) {
    st = ck__arrow_schema_copy(src->children[i], dst->children[i]);
    if (st != CK_OK) {
      dst->release(dst);
      return st;
    }
  }
  if (src->dictionary != NULL) {
    p->dictionary = CK_CALLOC(1, sizeof *p->dictionary);
    if (p->dictionary == NULL) {
      dst->release(dst);
      return CK_ERR_NO_MEMORY;
    }
    st = ck__arrow_schema_copy(src->dictionary, p->dictionary);
    if (st != CK_OK) {
      dst->release(dst);
      return st;
    }
    dst->dictionary = p->dictionary;
  }
  return CK_OK;
}

/* ---- schema -> element type ---------------------------------------------------- */

/* What the importer maps, for the messages of the formats it refuses. */
#define CK__SUPPORTED                                                                  \
  "bool, integers, floats, utf8/binary and their large and view forms, lists, "       \
  "large lists, list views, fixed-size lists, structs, timestamp, date32, date64, "    \
  "time32, time64, duration"

/* The Arrow type family of a format the library refuses ("null",
 * "fixed_size_binary", "timestamp", ...), for messages. */
static const char *ck__format_type_name(const char *f) {
  static const struct {
    const char *prefix;
    const char *name;
  } names[] = {
      {"n", "null"},         {"w:", "fixed_size_binary"}, {"d:", "decimal"},
      {"tdD", "date32"},     {"tdm", "date64"},           {"tt", "time"},
      {"ts", "timestamp"},   {"tD", "duration"},          {"ti", "interval"},
      {"+m", "map"},         {"+ud", "dense union"},      {"+us", "sparse union"},
      {"+r", "run-end encoded"}, {"+w:", "fixed_size_list of a bad size"},
  };
  if (f == NULL) {
    return "(no format)";
  }
  const char *best = NULL;
  size_t blen = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    size_t n = strlen(names[i].prefix);
    bool whole = strcmp(names[i].prefix, "n") == 0;
    if ((whole ? strcmp(f, "n") == 0 : strncmp(f, names[i].prefix, n) == 0) && n > blen) {
      best = names[i].name;
      blen = n;
    }
  }
  return best != NULL ? best : "unknown";
}

/* The value of the "ARROW:extension:name" key of Arrow's binary metadata
 * ({int32 n; n * (int32 len, key, int32 len, value)}), copied into buf
 * (truncated); false when there is none.  Negative lengths end the scan. */
static bool ck__extension_name(const char *m, char *buf, size_t n) {
  static const char key[] = "ARROW:extension:name";
  if (m == NULL) {
    return false;
  }
  int32_t count;
  size_t pos = 4;
  memcpy(&count, m, 4);
  for (int32_t i = 0; i < count; i++) {
    int32_t klen, vlen;
    memcpy(&klen, m + pos, 4);
    if (klen < 0) {
      return false;
    }
    const char *k = m + pos + 4;
    pos += 4 + (size_t)klen;
    memcpy(&vlen, m + pos, 4);
    if (vlen < 0) {
      return false;
    }
    const char *v = m + pos + 4;
    pos += 4 + (size_t)vlen;
    if ((size_t)klen == sizeof key - 1 && memcmp(k, key, sizeof key - 1) == 0) {
      size_t len = (size_t)vlen < n - 1 ? (size_t)vlen : n - 1;
      for (size_t j = 0; j < len; j++) { /* one line */
        buf[j] = (unsigned char)v[j] < 0x20 || v[j] == 0x7f ? '?' : v[j];
      }
      buf[len] = '\0';
      return true;
    }
  }
  return false;
}

/* ---- struct field names --------------------------------------------------------- */

/* A name ckernels keeps as it is: non-empty UTF-8 without control
 * characters (ck_struct_type_new's rule). */
static bool ck__name_usable(const char *name) {
  size_t len = name != NULL ? strlen(name) : 0;
  if (len == 0 || !ck_utf8_validate(name, len)) {
    return false;
  }
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c < 0x20 || c == 0x7f) {
      return false;
    }
  }
  return true;
}

static bool ck__name_taken(const struct ArrowSchema *s, char **names, size_t upto,
                           const char *cand) {
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema *c = s->children[i];
    if (c != NULL && c->name != NULL && strcmp(c->name, cand) == 0) {
      return true;
    }
  }
  for (size_t i = 0; i < upto; i++) {
    if (strcmp(names[i], cand) == 0) {
      return true;
    }
  }
  return false;
}

void ck__arrow_names_free(char **names, size_t n) {
  for (size_t i = 0; names != NULL && i < n; i++) {
    ck__free(names[i]);
  }
  ck__free(names);
}

ck_status ck__arrow_struct_names(const struct ArrowSchema *s, char ***out) {
  size_t n = (size_t)s->n_children;
  char **names = CK_CALLOC(n > 0 ? n : 1, sizeof *names);
  *out = NULL;
  if (names == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  for (size_t i = 0; i < n; i++) {
    const struct ArrowSchema *c = s->children[i];
    const char *name = c != NULL ? c->name : NULL;
    bool dup = false;
    for (size_t j = 0; ck__name_usable(name) && j < i && !dup; j++) {
      dup = strcmp(names[j], name) == 0;
    }
    if (ck__name_usable(name) && !dup) {
      names[i] = ck__strdup(name, __func__);
    } else {
      /* "_i", then "_i_", "_i__", ... while the name is taken */
      char cand[64];
      int len = snprintf(cand, sizeof cand - 16, "_%zu", i);
      while (ck__name_taken(s, names, i, cand) && (size_t)len < sizeof cand - 1) {
        cand[len++] = '_';
        cand[len] = '\0';
      }
      names[i] = ck__strdup(cand, __func__);
    }
    if (names[i] == NULL) {
      ck__arrow_names_free(names, i);
      return CK_ERR_NO_MEMORY;
    }
  }
  *out = names;
  return CK_OK;
}

static ck_status ck__schema_type(const struct ArrowSchema *s, ck__arrow_path *path,
                                 int depth, ck_type *out);

/* `dictionary[I, V]` of a dictionary-encoded top level: I from its format,
 * V from its dictionary's schema. */
static ck_status ck__dictionary_schema_type(const struct ArrowSchema *s, ck__arrow_path *path,
                                            int depth, ck_type *out) {
  char what[300];
  ck__arrow_format f;
  if (!ck__arrow_parse_format(s->format, &f) || f.kind != CK__ARROW_PRIMITIVE ||
      (ck_type_id_kind(f.prim) != 'i' && ck_type_id_kind(f.prim) != 'u')) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_arrow_schema_type",
                     "%s is dictionary-encoded with index format '%s', which is not an "
                     "integer (c, C, s, S, i, I, l, L)",
                     ck__arrow_path_what(path, what, sizeof what),
                     s->format != NULL ? s->format : "(null)");
  }
  ck_type v;
  size_t mark = ck__arrow_path_push(path, "<dictionary>");
  ck_status st = ck__schema_type(s->dictionary, path, depth + 1, &v);
  if (st == CK_OK) {
    st = ck_dictionary_type_new(f.prim, v, (s->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0,
                                out);
    if (st != CK_OK) {
      st = ck__error_context(st, "ck_arrow_schema_type", "%s",
                             ck__arrow_path_what(path, what, sizeof what));
    }
    ck_type_decref(v);
  }
  ck__arrow_path_pop(path, mark);
  return st;
}

static ck_status ck__schema_type(const struct ArrowSchema *s, ck__arrow_path *path,
                                 int depth, ck_type *out) {
  char what[300];
  *out = NULL;
  if (s == NULL || s->release == NULL) {
    return ck__error(CK_ERR_INVALID_STATE, "ck_arrow_schema_type",
                     "%s: the schema is %s",
                     ck__arrow_path_what(path, what, sizeof what),
                     s == NULL ? "NULL" : "released");
  }
  if (depth >= CK_TYPE_MAX_DEPTH - 2) {
    return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_schema_type",
                     "%s: nested deeper than %d levels",
                     ck__arrow_path_what(path, what, sizeof what), CK_TYPE_MAX_DEPTH - 2);
  }
  if (s->dictionary != NULL && depth > 0) {
    return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_schema_type",
                     "%s is dictionary-encoded (format '%s' with a dictionary) inside a "
                     "struct or list, where ckernels takes no dictionaries (top-level "
                     "columns only): decode it first (e.g. pyarrow's dictionary_decode)",
                     ck__arrow_path_what(path, what, sizeof what),
                     s->format != NULL ? s->format : "(null)");
  }
  if (s->dictionary != NULL) {
    return ck__dictionary_schema_type(s, path, depth, out);
  }
  ck__arrow_format f;
  char ext[96];
  if (ck__extension_name(s->metadata, ext, sizeof ext)) {
    return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_schema_type",
                     "%s has Arrow extension type '%s' (storage format '%s'), which has "
                     "no ckernels type; import its storage array (pyarrow: .storage) "
                     "(supported: " CK__SUPPORTED ")",
                     ck__arrow_path_what(path, what, sizeof what), ext,
                     s->format != NULL ? s->format : "(null)");
  }
  if (!ck__arrow_parse_format(s->format, &f) || f.kind == CK__ARROW_NULL) {
    return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_schema_type",
                     "%s has Arrow type %s (format '%s'), which has no ckernels type "
                     "(supported: " CK__SUPPORTED ")",
                     ck__arrow_path_what(path, what, sizeof what),
                     ck__format_type_name(s->format),
                     s->format != NULL ? s->format : "(null)");
  }
  int64_t want_children = 0;
  if (ck__arrow_is_list(f.kind) || f.kind == CK__ARROW_FIXED_LIST) {
    want_children = 1;
  } else if (f.kind == CK__ARROW_STRUCT) {
    want_children = s->n_children;
  }
  if (s->n_children != want_children || s->n_children < 0 ||
      (s->n_children > 0 && s->children == NULL)) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_arrow_schema_type",
                     "%s (format '%s') has %lld children, expected %lld",
                     ck__arrow_path_what(path, what, sizeof what), s->format,
                     (long long)s->n_children, (long long)want_children);
  }
  switch (f.kind) {
  case CK__ARROW_BOOL:
  case CK__ARROW_PRIMITIVE:
    if (f.time_id != 0) {
      ck_status tst;
      switch (f.time_id) {
      case CK_TYPE_DATETIME: {
        /* a zone ckernels cannot spell (Arrow allows "+05:30" and names) */
        if (f.tz != NULL && !ck__tz_valid(f.tz, strlen(f.tz))) {
          return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_schema_type",
                           "%s has a timestamp with time zone '%.80s', which is not a "
                           "zone name ckernels can hold",
                           ck__arrow_path_what(path, what, sizeof what), f.tz);
        }
        tst = ck_datetime_type_new((ck_time_unit)f.time_unit, f.tz, out);
        break;
      }
      case CK_TYPE_TIMEDELTA: tst = ck_timedelta_type_new((ck_time_unit)f.time_unit, out); break;
      case CK_TYPE_DATE: tst = ck_date_type_new((ck_time_unit)f.time_unit, out); break;
      default: tst = ck_time_type_new((ck_time_unit)f.time_unit, out); break;
      }
      return tst;
    }
    *out = CK_BUILTIN(f.prim);
    return CK_OK;
  case CK__ARROW_UTF8:
  case CK__ARROW_LARGE_UTF8:
  case CK__ARROW_UTF8_VIEW:
    return ck_string_type_new(out);
  case CK__ARROW_BINARY:
  case CK__ARROW_LARGE_BINARY:
  case CK__ARROW_BINARY_VIEW:
    return ck_bytes_type_new(1, out);
  case CK__ARROW_LIST:
  case CK__ARROW_LARGE_LIST:
  case CK__ARROW_LIST_VIEW:
  case CK__ARROW_LARGE_LIST_VIEW:
  case CK__ARROW_FIXED_LIST: {
    ck_type el;
    size_t mark = ck__arrow_path_push(path, NULL);
    ck_status st = ck__schema_type(s->children[0], path, depth + 1, &el);
    ck__arrow_path_pop(path, mark);
    if (st != CK_OK) {
      return st;
    }
    st = f.kind == CK__ARROW_FIXED_LIST ? ck_fixed_dim_type_new(f.fixed_size, el, out)
                                        : ck_var_dim_type_new(el, out);
    ck_type_decref(el);
    return st;
  }
  case CK__ARROW_STRUCT: {
    size_t n = (size_t)s->n_children;
    ck_type *types = CK_CALLOC(n > 0 ? n : 1, sizeof *types);
    char **names = NULL;
    ck_status st = CK_OK;
    if (types == NULL) {
      st = CK_ERR_NO_MEMORY;
    } else {
      st = ck__arrow_struct_names(s, &names);
    }
    for (size_t i = 0; st == CK_OK && i < n; i++) {
      const struct ArrowSchema *c = s->children[i];
      size_t mark = ck__arrow_path_push(path, names[i]);
      st = ck__schema_type(c, path, depth + 1, &types[i]);
      ck__arrow_path_pop(path, mark);
    }
    if (st == CK_OK) {
      st = ck_struct_type_new(n, (const char *const *)names, types, out);
      if (st != CK_OK) {
        st = ck__error_context(st, "ck_arrow_schema_type", "%s",
                               ck__arrow_path_what(path, what, sizeof what));
      }
    }
    for (size_t i = 0; types != NULL && i < n; i++) {
      ck_type_decref(types[i]);
    }
    ck__free(types);
    ck__arrow_names_free(names, n);
    return st;
  }
  case CK__ARROW_NULL:
    break;
  }
  return CK_ERROR(CK_ERR_INVALID_STATE, "unreachable format kind");
}

ck_status ck_arrow_schema_type(const struct ArrowSchema *schema, ck_type *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  ck__arrow_path path = {{0}, 0};
  return ck__schema_type(schema, &path, 0, out);
}
