/*
 * assign_time.c -- scalar assignment kernels involving the time types
 * (ckernel/datetime.h; the rules are in docs/type-grammar.md "Time types"):
 *   instant/date <- instant/date, duration <- duration, time <- time,
 *   time <- instant (its time of day, UTC)   unit conversion as NumPy's
 *                                            astype (floored), checked
 *   time type <- integer, integer <- time    the raw count (NaT is INT64_MIN)
 *   time type <- string, string <- time      ISO 8601 (ck_time_parse/format)
 * Under NOCHECK a value out of the destination's range becomes NaT; under
 * the other modes it is CK_ERR_OVERFLOW, and under FRACTIONAL, INEXACT and
 * DEFAULT a conversion to a coarser unit that drops a remainder is
 * CK_ERR_VALUE (NOCHECK and OVERFLOW floor it, as NumPy's astype).
 */
#include "kernels/lift_internal.h"
#include "kernels/builder_internal.h"
#include "core/scalar_internal.h"
#include "types/type_internal.h"
#include "types/time_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { CK__TK_CONVERT = 0, CK__TK_FROM_INT = 1, CK__TK_TO_INT = 2, CK__TK_PARSE = 3,
       CK__TK_FORMAT = 4 };

typedef struct ck__time_kernel {
  ck_prefix base;
  ck_type dst;          /* owned references (time types or builtins) */
  ck_type src;
  ck_memblock *arena;   /* string destinations: owned reference */
  intptr_t mode;
} ck__time_kernel;

static void ck__time_kernel_destruct(ck_prefix *self) {
  ck__time_kernel *k = (ck__time_kernel *)(void *)self;
  ck_type_decref(k->dst);
  ck_type_decref(k->src);
  ck_memblock_decref(k->arena);
  k->dst = k->src = NULL;
  k->arena = NULL;
}

static bool ck__strict(intptr_t mode) {
  return mode == CK_ERRMODE_FRACTIONAL || mode == CK_ERRMODE_INEXACT ||
         mode == CK_ERRMODE_DEFAULT;
}

static int ck__time_fail(const ck__time_kernel *k, ck_status st, int64_t v, const char *why) {
  char a[96], b[96];
  return ck__error(st, "assign", "%s while assigning %s value %" PRId64 " to %s", why,
                   ck__type_str(k->src, a, sizeof a), v, ck__type_str(k->dst, b, sizeof b));
}

static int ck__convert_one(const ck__time_kernel *k, char *dst, const char *src) {
  ck_type s = k->src, d = k->dst;
  int64_t v = ck__time_load(s, src), out;
  if (v == CK_NAT) {
    (void)ck__time_store(d, dst, CK_NAT);
    return 0;
  }
  bool exact = true;
  ck_time_unit su = (ck_time_unit)s->fixed_size, du = (ck_time_unit)d->fixed_size;
  bool instant = s->id == CK_TYPE_DATETIME || s->id == CK_TYPE_DATE;
  ck_status st;
  if (d->id == CK_TYPE_TIME && s->id == CK_TYPE_DATETIME) {
    /* time of day: the instant modulo one day in its own unit, then in du */
    if (su <= CK_UNIT_D) {
      out = 0;
    } else {
      int64_t sd, r;
      (void)ck_time_convert(1, CK_UNIT_D, su, false, &sd, NULL);
      r = v % sd;
      r = r < 0 ? r + sd : r;
      (void)ck_time_convert(r, su, du, false, &out, &exact);
    }
  } else {
    st = ck_time_convert(v, su, du, instant, &out, &exact);
    if (st != CK_OK) {
      if (k->mode == CK_ERRMODE_NOCHECK) {
        (void)ck__time_store(d, dst, CK_NAT);
        return 0;
      }
      return ck__time_fail(k, CK_ERR_OVERFLOW, v, "overflow");
    }
  }
  if (!exact && ck__strict(k->mode)) {
    return ck__time_fail(k, CK_ERR_VALUE, v,
                         "a remainder is dropped (the 'overflow' error mode floors it)");
  }
  if (!ck__time_store(d, dst, out)) {
    if (k->mode == CK_ERRMODE_NOCHECK) {
      (void)ck__time_store(d, dst, CK_NAT);
      return 0;
    }
    return ck__time_fail(k, CK_ERR_OVERFLOW, v, "overflow");
  }
  return 0;
}

static int ck__from_int_one(const ck__time_kernel *k, char *dst, const char *src) {
  int64_t v;
  ck_errmode m = k->mode == CK_ERRMODE_NOCHECK ? CK_ERRMODE_NOCHECK : CK_ERRMODE_OVERFLOW;
  ck_status st = ck_assign_builtin_value(CK_TYPE_INT64, &v, ck_type_id_of(k->src), src, m);
  if (st != CK_OK) {
    return st;
  }
  if (!ck__time_store(k->dst, dst, v)) {
    if (k->mode == CK_ERRMODE_NOCHECK) {
      (void)ck__time_store(k->dst, dst, CK_NAT);
      return 0;
    }
    return ck__time_fail(k, CK_ERR_OVERFLOW, v, "overflow");
  }
  return 0;
}

static int ck__to_int_one(const ck__time_kernel *k, char *dst, const char *src) {
  int64_t v = ck__time_load(k->src, src);
  ck_errmode m = k->mode == CK_ERRMODE_DEFAULT ? CK_ERRMODE_FRACTIONAL : (ck_errmode)k->mode;
  return ck_assign_builtin_value(ck_type_id_of(k->dst), dst, CK_TYPE_INT64, &v, m);
}

static int ck__parse_one(const ck__time_kernel *k, char *dst, const char *src) {
  ck_string s;
  memcpy(&s, src, sizeof s);
  size_t n = s.begin == NULL ? 0 : (size_t)(s.end - s.begin);
  return ck_time_parse(k->dst, s.begin, n, (int)k->mode, dst);
}

static int ck__format_one(const ck__time_kernel *k, char *dst, const char *src) {
  char text[96];
  size_t n;
  ck_status st = ck_time_format(k->src, src, text, sizeof text, &n);
  if (st != CK_OK) {
    return st;
  }
  ck_string d = {NULL, NULL};
  if ((st = ck_pod_allocate(k->arena, n, 1, &d.begin, &d.end)) != CK_OK) {
    return st;
  }
  memcpy(d.begin, text, n);
  memcpy(dst, &d, sizeof d);
  return 0;
}

#define CK__TIME_ENTRIES(name, one)                                                       \
  static int name##1(char *dst, const char *const *src, ck_prefix *self) {               \
    return one((const ck__time_kernel *)(void *)self, dst, src[0]);                      \
  }                                                                                       \
  static int name##N(char *dst, intptr_t dst_stride, const char *const *src,             \
                     const intptr_t *src_stride, size_t count, ck_prefix *self) {        \
    const ck__time_kernel *k = (const ck__time_kernel *)(void *)self;                    \
    for (size_t i = 0; i < count; i++) {                                                  \
      int st = one(k, dst + (intptr_t)i * dst_stride, src[0] + (intptr_t)i * src_stride[0]); \
      if (st != 0) {                                                                      \
        return st;                                                                        \
      }                                                                                   \
    }                                                                                     \
    return 0;                                                                             \
  }
CK__TIME_ENTRIES(ck__tconv, ck__convert_one)
CK__TIME_ENTRIES(ck__tfromint, ck__from_int_one)
CK__TIME_ENTRIES(ck__ttoint, ck__to_int_one)
CK__TIME_ENTRIES(ck__tparse, ck__parse_one)
CK__TIME_ENTRIES(ck__tformat, ck__format_one)

static size_t ck__time_fields(const ck_prefix *self, const ck_kernel_info *info,
                              ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__time_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  const char *mode = ck_errmode_name((ck_errmode)k->mode);
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_TYPE, K, k, dst);
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_TYPE, K, k, src);
  if (k->arena != NULL) {
    CK__FIELD_PTR(&f, CK_KERNEL_FIELD_MEMBLOCK, K, k, arena);
  }
  ck__field(&f, "mode", -1, CK_KERNEL_FIELD_TEXT, (intptr_t)offsetof(K, mode), 0, NULL,
            mode != NULL ? mode : "?");
  return f.n;
}

static const ck_kernel_info ck__time_infos[] = {
    {"time_convert", ck__tconv1, ck__tconvN, sizeof(ck__time_kernel), NULL},
    {"time_from_int", ck__tfromint1, ck__tfromintN, sizeof(ck__time_kernel), NULL},
    {"time_to_int", ck__ttoint1, ck__ttointN, sizeof(ck__time_kernel), NULL},
    {"time_parse", ck__tparse1, ck__tparseN, sizeof(ck__time_kernel), NULL},
    {"time_format", ck__tformat1, ck__tformatN, sizeof(ck__time_kernel), NULL},
};
static pthread_once_t ck__time_info_once = PTHREAD_ONCE_INIT;
static void ck__time_info_init(void) {
  ck__kernel_info_register_decoded(ck__time_infos,
                                   sizeof ck__time_infos / sizeof ck__time_infos[0],
                                   ck__time_fields);
}

static bool ck__is_int_type(ck_type t) {
  char kind = ck_type_is_builtin(t) ? ck_type_id_kind(ck_type_id_of(t)) : 0;
  return kind == 'i' || kind == 'u';
}

/* Which kernel converts src to dst, or -1. */
static int ck__time_kernel_kind(ck_type dt, ck_type st) {
  bool dtime = ck_type_is_time(dt), stime = ck_type_is_time(st);
  if (dtime && stime) {
    ck_type_id d = (ck_type_id)dt->id, s = (ck_type_id)st->id;
    bool dinst = d == CK_TYPE_DATETIME || d == CK_TYPE_DATE;
    bool sinst = s == CK_TYPE_DATETIME || s == CK_TYPE_DATE;
    if ((dinst && sinst) || (d == s) || (d == CK_TYPE_TIME && s == CK_TYPE_DATETIME)) {
      return CK__TK_CONVERT;
    }
    return -1;
  }
  if (dtime && ck__is_int_type(st)) return CK__TK_FROM_INT;
  if (stime && ck__is_int_type(dt)) return CK__TK_TO_INT;
  if (dtime && ck_type_id_of(st) == CK_TYPE_STRING) return CK__TK_PARSE;
  if (stime && ck_type_id_of(dt) == CK_TYPE_STRING) return CK__TK_FORMAT;
  return -1;
}

bool ck__is_time_assignment(ck_type dst, ck_type src) {
  return (ck_type_is_time(dst) || ck_type_is_time(src)) && !ck_type_is_option(dst) &&
         !ck_type_is_option(src);
}

ck_status ck__make_time_assignment_kernel(ck_kernel_builder *ckb, size_t offset,
                                          ck_type dst_type, const char *dst_arrmeta,
                                          ck_type src_type, ck_kernel_request req,
                                          ck_errmode mode, size_t *out_end) {
  const char *func = "ck_make_assignment_kernel";
  int kind = ck__time_kernel_kind(dst_type, src_type);
  if (kind < 0) {
    return ck__assign_type_error(func, dst_type, src_type);
  }
  ck_memblock *arena = NULL;
  if (kind == CK__TK_FORMAT) {
    arena = dst_arrmeta == NULL
                ? NULL
                : ((const ck_string_arrmeta *)(const void *)dst_arrmeta)->blockref;
    if (arena == NULL) {
      return ck__error(CK_ERR_INVALID_STATE, func,
                       "the destination string arrmeta has no arena");
    }
  }
  (void)pthread_once(&ck__time_info_once, ck__time_info_init);
  size_t end = offset + sizeof(ck__time_kernel);
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    return st;
  }
  ck__time_kernel *k = (ck__time_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__time_kernel_destruct;
  ck_type_incref(dst_type);
  ck_type_incref(src_type);
  ck_memblock_incref(arena);
  k->dst = dst_type;
  k->src = src_type;
  k->arena = arena;
  k->mode = (intptr_t)mode;
  static const ck_expr_single_t singles[] = {ck__tconv1, ck__tfromint1, ck__ttoint1,
                                             ck__tparse1, ck__tformat1};
  static const ck_expr_strided_t strideds[] = {ck__tconvN, ck__tfromintN, ck__ttointN,
                                               ck__tparseN, ck__tformatN};
  (void)ck_prefix_set_function(&k->base, req, singles[kind], strideds[kind]);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}
