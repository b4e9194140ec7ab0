/*
 * assign_string.c -- scalar assignment kernels involving strings and bytes
 * (see ckernel/assign_array.h for the rules):
 *   string/bytes <- same kind   share (same arena) or copy into dst arena
 *   builtin      <- string      strict parse, range checked under the mode
 *   string       <- builtin     Python-repr formatting
 * The text itself is parsed and formatted by core/numtext.c (always in the
 * "C" locale).
 */
#include "kernels/lift_internal.h"
#include "core/numtext_internal.h"
#include "core/scalar_internal.h"
#include "types/type_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- share / copy ---------------------------------------------------------- */

static int ck__str_share1(char *dst, const char *const *src, ck_prefix *self) {
  (void)self;
  memmove(dst, src[0], sizeof(ck_string));
  return 0;
}

static int ck__str_shareN(char *dst, intptr_t dst_stride, const char *const *src,
                          const intptr_t *src_stride, size_t count,
                          ck_prefix *self) {
  (void)self;
  for (size_t i = 0; i < count; i++) {
    memmove(dst + (intptr_t)i * dst_stride, src[0] + (intptr_t)i * src_stride[0],
            sizeof(ck_string));
  }
  return 0;
}

typedef struct ck__str_copy_kernel {
  ck_prefix base;
  ck_memblock *arena; /* owned reference */
  size_t align;
} ck__str_copy_kernel;

static void ck__str_copy_destruct(ck_prefix *self) {
  ck__str_copy_kernel *k = (ck__str_copy_kernel *)(void *)self;
  ck_memblock_decref(k->arena);
  k->arena = NULL;
}

static int ck__str_copy_one(const ck__str_copy_kernel *k, char *dst,
                            const char *src) {
  ck_string s;
  memcpy(&s, src, sizeof s);
  size_t len = s.begin == NULL ? 0 : (size_t)(s.end - s.begin);
  ck_string d = {NULL, NULL};
  if (len > 0) {
    ck_status st = ck_pod_allocate(k->arena, len, k->align, &d.begin, &d.end);
    if (st != CK_OK) {
      return st;
    }
    memcpy(d.begin, s.begin, len);
  }
  memcpy(dst, &d, sizeof d);
  return 0;
}

static int ck__str_copy1(char *dst, const char *const *src, ck_prefix *self) {
  return ck__str_copy_one((const ck__str_copy_kernel *)(void *)self, dst, src[0]);
}

static int ck__str_copyN(char *dst, intptr_t dst_stride, const char *const *src,
                         const intptr_t *src_stride, size_t count,
                         ck_prefix *self) {
  const ck__str_copy_kernel *k = (const ck__str_copy_kernel *)(void *)self;
  for (size_t i = 0; i < count; i++) {
    int st = ck__str_copy_one(k, dst + (intptr_t)i * dst_stride,
                              src[0] + (intptr_t)i * src_stride[0]);
    if (st != 0) {
      return st;
    }
  }
  return 0;
}

/* ---- parse ------------------------------------------------------------------ */

typedef struct ck__str_parse_kernel {
  ck_prefix base;
  intptr_t dst_id;
  intptr_t mode;
} ck__str_parse_kernel;

static int ck__parse_fail(const char *b, size_t n, int dst_id) {
  char q[300];
  ck__quote_text(b, n, q, sizeof q);
  return ck__error(CK_ERR_VALUE, "assign", "cannot parse '%s' as %s", q,
                   ck__builtin_name(dst_id));
}

static int ck__parse_one(int dst_id, int mode, char *dst, const char *src) {
  ck_string s;
  memcpy(&s, src, sizeof s);
  const char *b = s.begin, *e = s.begin == NULL ? s.begin : s.end;
  size_t n0 = b == NULL ? 0 : (size_t)(e - b);
  const char *b0 = b;
  while (b < e && ck__is_space(*b)) b++;
  while (e > b && ck__is_space(e[-1])) e--;
  size_t n = (size_t)(e - b);
  if (n == 0 || memchr(b, '\0', n) != NULL) {
    return ck__parse_fail(b0, n0, dst_id);
  }
  ck_status st;
  switch (dst_id) {
  case CK_TYPE_BOOL: {
    uint8_t v;
    if ((n == 4 && (memcmp(b, "True", 4) == 0 || memcmp(b, "true", 4) == 0)) ||
        (n == 1 && *b == '1')) {
      v = 1;
    } else if ((n == 5 && (memcmp(b, "False", 5) == 0 || memcmp(b, "false", 5) == 0)) ||
               (n == 1 && *b == '0')) {
      v = 0;
    } else {
      return ck__parse_fail(b, n, dst_id);
    }
    memcpy(dst, &v, 1);
    return 0;
  }
  case CK_TYPE_INT8: case CK_TYPE_INT16: case CK_TYPE_INT32: case CK_TYPE_INT64:
  case CK_TYPE_UINT8: case CK_TYPE_UINT16: case CK_TYPE_UINT32: case CK_TYPE_UINT64: {
    bool neg = *b == '-';
    const char *d = (*b == '-' || *b == '+') ? b + 1 : b;
    uint64_t mag;
    bool ovf;
    if (!ck__parse_uint(d, e, &mag, &ovf)) {
      return ck__parse_fail(b, n, dst_id);
    }
    char q[300];
    if (ovf || (neg && mag > (uint64_t)INT64_MAX + 1u)) {
      ck__quote_text(b, n, q, sizeof q);
      return ck__error(CK_ERR_OVERFLOW, "assign", "value '%s' is out of range for %s",
                       q, ck__builtin_name(dst_id));
    }
    if (neg) {
      int64_t v = mag == (uint64_t)INT64_MAX + 1u ? INT64_MIN : -(int64_t)mag;
      st = ck_assign_builtin_value((ck_type_id)dst_id, dst, CK_TYPE_INT64, &v,
                                   (ck_errmode)mode);
    } else {
      st = ck_assign_builtin_value((ck_type_id)dst_id, dst, CK_TYPE_UINT64, &mag,
                                   (ck_errmode)mode);
    }
    if (st != CK_OK) {
      ck__quote_text(b, n, q, sizeof q);
      return ck__error_context(st, "assign", "parsing '%s' as %s", q,
                               ck__builtin_name(dst_id));
    }
    return 0;
  }
  default: {
    /* floats: range checks only (decimal text is rarely exact in binary) */
    ck_errmode fmode = mode == CK_ERRMODE_NOCHECK ? CK_ERRMODE_NOCHECK
                                                  : CK_ERRMODE_OVERFLOW;
    double re = 0.0, im = 0.0;
    bool range = false;
    int ok;
    bool cplx = dst_id == CK_TYPE_COMPLEX64 || dst_id == CK_TYPE_COMPLEX128;
    if (cplx) {
      ok = ck__parse_complex(b, e, &re, &im, &range);
    } else {
      ok = ck__parse_double(b, n, &re, &range);
    }
    if (ok < 0) {
      return CK_ERR_NO_MEMORY;
    }
    if (ok == 0) {
      return ck__parse_fail(b, n, dst_id);
    }
    char q[300];
    if (range && fmode != CK_ERRMODE_NOCHECK) {
      ck__quote_text(b, n, q, sizeof q);
      return ck__error(CK_ERR_OVERFLOW, "assign", "value '%s' is out of range for %s",
                       q, ck__builtin_name(dst_id));
    }
    if (cplx) {
      ck__complex128 c = {re, im};
      st = ck_assign_builtin_value((ck_type_id)dst_id, dst, CK_TYPE_COMPLEX128, &c,
                                   fmode);
    } else {
      st = ck_assign_builtin_value((ck_type_id)dst_id, dst, CK_TYPE_FLOAT64, &re,
                                   fmode);
    }
    if (st != CK_OK) {
      ck__quote_text(b, n, q, sizeof q);
      return ck__error_context(st, "assign", "parsing '%s' as %s", q,
                               ck__builtin_name(dst_id));
    }
    return 0;
  }
  }
}

static int ck__str_parse1(char *dst, const char *const *src, ck_prefix *self) {
  const ck__str_parse_kernel *k = (const ck__str_parse_kernel *)(void *)self;
  return ck__parse_one((int)k->dst_id, (int)k->mode, dst, src[0]);
}

static int ck__str_parseN(char *dst, intptr_t dst_stride, const char *const *src,
                          const intptr_t *src_stride, size_t count,
                          ck_prefix *self) {
  const ck__str_parse_kernel *k = (const ck__str_parse_kernel *)(void *)self;
  for (size_t i = 0; i < count; i++) {
    int st = ck__parse_one((int)k->dst_id, (int)k->mode,
                           dst + (intptr_t)i * dst_stride,
                           src[0] + (intptr_t)i * src_stride[0]);
    if (st != 0) {
      return st;
    }
  }
  return 0;
}


typedef struct ck__str_format_kernel {
  ck_prefix base;
  ck_memblock *arena; /* owned reference */
  intptr_t src_id;
} ck__str_format_kernel;

static void ck__str_format_destruct(ck_prefix *self) {
  ck__str_format_kernel *k = (ck__str_format_kernel *)(void *)self;
  ck_memblock_decref(k->arena);
  k->arena = NULL;
}

static int ck__format_one(const ck__str_format_kernel *k, char *dst,
                          const char *src) {
  char text[128];
  size_t n = ck__format_value(text, sizeof text, (int)k->src_id, src);
  ck_string d;
  ck_status st = ck_pod_allocate(k->arena, n, 1, &d.begin, &d.end);
  if (st != CK_OK) {
    return st;
  }
  memcpy(d.begin, text, n);
  memcpy(dst, &d, sizeof d);
  return 0;
}

static int ck__str_format1(char *dst, const char *const *src, ck_prefix *self) {
  return ck__format_one((const ck__str_format_kernel *)(void *)self, dst, src[0]);
}

static int ck__str_formatN(char *dst, intptr_t dst_stride, const char *const *src,
                           const intptr_t *src_stride, size_t count,
                           ck_prefix *self) {
  const ck__str_format_kernel *k = (const ck__str_format_kernel *)(void *)self;
  for (size_t i = 0; i < count; i++) {
    int st = ck__format_one(k, dst + (intptr_t)i * dst_stride,
                            src[0] + (intptr_t)i * src_stride[0]);
    if (st != 0) {
      return st;
    }
  }
  return 0;
}

/* ---- descriptions & factory --------------------------------------------------- */

static size_t ck__str_copy_fields(const ck_prefix *self, const ck_kernel_info *info,
                                  ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__str_copy_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_MEMBLOCK, K, k, arena);
  CK__FIELD_INT(&f, K, k, align);
  return f.n;
}

static size_t ck__str_parse_fields(const ck_prefix *self, const ck_kernel_info *info,
                                   ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__str_parse_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  const char *mode = ck_errmode_name((ck_errmode)k->mode);
  ck__field(&f, "dst_id", -1, CK_KERNEL_FIELD_TEXT, (intptr_t)offsetof(K, dst_id), 0, NULL,
            ck_type_id_name((ck_type_id)k->dst_id));
  ck__field(&f, "mode", -1, CK_KERNEL_FIELD_TEXT, (intptr_t)offsetof(K, mode), 0, NULL,
            mode != NULL ? mode : "?");
  return f.n;
}

static size_t ck__str_format_fields(const ck_prefix *self, const ck_kernel_info *info,
                                    ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__str_format_kernel K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_PTR(&f, CK_KERNEL_FIELD_MEMBLOCK, K, k, arena);
  ck__field(&f, "src_id", -1, CK_KERNEL_FIELD_TEXT, (intptr_t)offsetof(K, src_id), 0, NULL,
            ck_type_id_name((ck_type_id)k->src_id));
  return f.n;
}

static const ck_kernel_info ck__string_infos[] = {
    {"string_share", ck__str_share1, ck__str_shareN, sizeof(ck_prefix), NULL},
    {"string_copy", ck__str_copy1, ck__str_copyN, sizeof(ck__str_copy_kernel), NULL},
    {"string_parse", ck__str_parse1, ck__str_parseN, sizeof(ck__str_parse_kernel), NULL},
    {"string_format", ck__str_format1, ck__str_formatN, sizeof(ck__str_format_kernel), NULL},
};
static pthread_once_t ck__string_info_once = PTHREAD_ONCE_INIT;
static void ck__string_info_init(void) {
  static const ck_kernel_fields_fn decoders[] = {
      NULL, ck__str_copy_fields, ck__str_parse_fields, ck__str_format_fields};
  _Static_assert(sizeof decoders / sizeof decoders[0] ==
                     sizeof ck__string_infos / sizeof ck__string_infos[0],
                 "one decoder per string kernel");
  for (size_t i = 0; i < sizeof ck__string_infos / sizeof ck__string_infos[0]; i++) {
    ck__kernel_info_register_decoded(&ck__string_infos[i], 1, decoders[i]);
  }
}

static bool ck__is_strlike(ck_type t) {
  return ck__is_desc(t) && (t->id == CK_TYPE_STRING || t->id == CK_TYPE_BYTES);
}

static ck_memblock *ck__arena_of(const char *arrmeta) {
  return arrmeta == NULL ? NULL
                         : ((const ck_string_arrmeta *)(const void *)arrmeta)->blockref;
}

ck_status ck__make_string_assignment_kernel(ck_kernel_builder *ckb,
                                            size_t offset, ck_type dst_type,
                                            const char *dst_arrmeta,
                                            ck_type src_type,
                                            const char *src_arrmeta,
                                            ck_kernel_request req,
                                            ck_errmode mode, size_t *out_end) {
  const char *func = "ck_make_assignment_kernel";
  (void)pthread_once(&ck__string_info_once, ck__string_info_init);
  size_t end;
  ck_status st;
  if (ck__is_strlike(dst_type) && ck__is_strlike(src_type) &&
      dst_type->id == src_type->id) {
    ck_memblock *da = ck__arena_of(dst_arrmeta);
    ck_memblock *sa = ck__arena_of(src_arrmeta);
    size_t dalign = dst_type->id == CK_TYPE_BYTES ? dst_type->target_alignment : 1;
    size_t salign = src_type->id == CK_TYPE_BYTES ? src_type->target_alignment : 1;
    if (da != NULL && da == sa && salign >= dalign) {
      end = offset + sizeof(ck_prefix);
      if ((st = ck_kernel_builder_ensure_capacity_leaf(ckb, end)) != CK_OK) {
        return st;
      }
      ck_prefix *k = ck_kernel_builder_get(ckb, offset);
      (void)ck_prefix_set_function(k, req, ck__str_share1, ck__str_shareN);
    } else {
      if (da == NULL) {
        return ck__error(CK_ERR_INVALID_STATE, func,
                         "the destination %s arrmeta has no arena",
                         ck_type_id_name((ck_type_id)dst_type->id));
      }
      end = offset + sizeof(ck__str_copy_kernel);
      if ((st = ck_kernel_builder_ensure_capacity_leaf(ckb, end)) != CK_OK) {
        return st;
      }
      ck__str_copy_kernel *k =
          (ck__str_copy_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
      k->base.destructor = ck__str_copy_destruct;
      ck_memblock_incref(da);
      k->arena = da;
      k->align = dalign;
      (void)ck_prefix_set_function(&k->base, req, ck__str_copy1, ck__str_copyN);
    }
  } else if (ck_type_is_builtin(dst_type) && ck__is_desc(src_type) &&
             src_type->id == CK_TYPE_STRING) {
    end = offset + sizeof(ck__str_parse_kernel);
    if ((st = ck_kernel_builder_ensure_capacity_leaf(ckb, end)) != CK_OK) {
      return st;
    }
    ck__str_parse_kernel *k =
        (ck__str_parse_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
    k->dst_id = (intptr_t)ck_type_id_of(dst_type);
    k->mode = mode == CK_ERRMODE_DEFAULT ? CK_ERRMODE_FRACTIONAL : (intptr_t)mode;
    (void)ck_prefix_set_function(&k->base, req, ck__str_parse1, ck__str_parseN);
  } else if (ck_type_is_builtin(src_type) && ck__is_desc(dst_type) &&
             dst_type->id == CK_TYPE_STRING) {
    ck_memblock *da = ck__arena_of(dst_arrmeta);
    if (da == NULL) {
      return ck__error(CK_ERR_INVALID_STATE, func,
                       "the destination string arrmeta has no arena");
    }
    end = offset + sizeof(ck__str_format_kernel);
    if ((st = ck_kernel_builder_ensure_capacity_leaf(ckb, end)) != CK_OK) {
      return st;
    }
    ck__str_format_kernel *k =
        (ck__str_format_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
    k->base.destructor = ck__str_format_destruct;
    ck_memblock_incref(da);
    k->arena = da;
    k->src_id = (intptr_t)ck_type_id_of(src_type);
    (void)ck_prefix_set_function(&k->base, req, ck__str_format1, ck__str_formatN);
  } else {
    return ck__assign_type_error(func, dst_type, src_type);
  }
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}
