/*
 * assign_internal.h -- the generator of the builtin assignment kernels.
 * Private to src/lib/assign*.c; nothing here is ABI.
 *
 * One always-inline function, ck__assign_elem(D, S, MODE, dst, src), holds
 * the conversion rules for every (destination, source, mode).  It is only
 * ever called with compile-time constant D, S and MODE, so each
 * instantiation folds down to the few instructions its pair needs (and, for
 * NOCHECK, to branch-free code the compiler vectorises in the contiguous
 * loop).  CK__ASSIGN_DEFINE_DST(token, "name", id, ctype) instantiates the single and
 * strided entry points for one destination type from all 14 sources under
 * the four modes, and the table ck__assign_info_<name>[source id][mode]
 * that ck_make_builtin_assignment_kernel dispatches on.  Each assign_to_*.c
 * file instantiates a few destinations so the work splits across
 * translation units.
 *
 * Rules (see assign.h / docs/kernel-abi.md for the user-facing table):
 * every source is first widened exactly to a canonical value -- int64 for
 * signed ints, uint64 for unsigned ints and bool (0/1), float64 (re, im)
 * for float16/32/64 and complex -- then converted to the destination with
 * the checks of the mode.  The conversions themselves are always defined
 * behaviour in C: float -> int conversions happen only after a range check.
 */
#ifndef CKERNEL_ASSIGN_INTERNAL_H
#define CKERNEL_ASSIGN_INTERNAL_H

#include "core/core_internal.h"
#include "core/scalar_internal.h"

#include "ckernel/assign.h"
#include "ckernel/builder.h"

#include <math.h>

#if defined(__GNUC__)
#define CK__ALWAYS_INLINE inline __attribute__((always_inline))
#define CK__COLD __attribute__((cold, noinline))
#else
#define CK__ALWAYS_INLINE inline
#define CK__COLD
#endif

/* What went wrong, for the message and the status. */
enum {
  CK__AE_OVERFLOW = 1,   /* CK_ERR_OVERFLOW */
  CK__AE_FRACTIONAL = 2, /* CK_ERR_VALUE */
  CK__AE_INEXACT = 3,    /* CK_ERR_VALUE */
  CK__AE_IMAG = 4        /* CK_ERR_VALUE */
};

/* Record the error for a source value of each canonical class; return the
 * status (assign.c).  Cold and out of line: only the failing element pays. */
int ck__assign_fail_i(int what, int dst, int src, int64_t v) CK__COLD;
int ck__assign_fail_u(int what, int dst, int src, uint64_t v) CK__COLD;
int ck__assign_fail_f(int what, int dst, int src, double v) CK__COLD;
int ck__assign_fail_c(int what, int dst, int src, double re, double im) CK__COLD;

/* Canonical classes. */
enum { CK__CLS_I = 1, CK__CLS_U = 2, CK__CLS_F = 3, CK__CLS_C = 4, CK__CLS_B = 5 };

/* The class of a type, from its kind (scalar_internal.h); anything that is
 * not a builtin counts as complex. */
static inline int ck__cls(int t) {
  switch (ck__builtin_kind(t)) {
  case 'b': return CK__CLS_B;
  case 'i': return CK__CLS_I;
  case 'u': return CK__CLS_U;
  case 'f': return CK__CLS_F;
  default: return CK__CLS_C;
  }
}

/* Bits of an integer type (64 for anything else). */
static inline int ck__int_bits(int t) {
  int cls = ck__cls(t);
  return cls == CK__CLS_I || cls == CK__CLS_U ? ck__builtin_bits(t) : 64;
}

static inline int64_t ck__smin(int t) {
  switch (ck__int_bits(t)) {
  case 8: return INT8_MIN;
  case 16: return INT16_MIN;
  case 32: return INT32_MIN;
  default: return INT64_MIN;
  }
}

static inline int64_t ck__smax(int t) {
  switch (ck__int_bits(t)) {
  case 8: return INT8_MAX;
  case 16: return INT16_MAX;
  case 32: return INT32_MAX;
  default: return INT64_MAX;
  }
}

static inline uint64_t ck__umax(int t) {
  switch (ck__int_bits(t)) {
  case 8: return UINT8_MAX;
  case 16: return UINT16_MAX;
  case 32: return UINT32_MAX;
  default: return UINT64_MAX;
  }
}

/* 2^bits as a double (exact). */
static inline double ck__pow2(int bits) {
  switch (bits) {
  case 7: return 0x1p7;
  case 8: return 0x1p8;
  case 15: return 0x1p15;
  case 16: return 0x1p16;
  case 31: return 0x1p31;
  case 32: return 0x1p32;
  case 63: return 0x1p63;
  default: return 0x1p64;
  }
}

/* Round a float64 to the float destination/component type D and return the
 * result as float64 (exact), plus the bits to store. */
static CK__ALWAYS_INLINE double ck__round_f(int D, double v, float *f32,
                                            uint16_t *f16) {
  if (D == CK_TYPE_FLOAT16) {
    *f16 = ck__f64_to_f16(v);
    return ck__f16_to_f64(*f16);
  } else if (D == CK_TYPE_FLOAT32) {
    *f32 = (float)v;
    return (double)*f32;
  }
  return v;
}

/* Is the float64 v, truncated toward zero, inside the signed/unsigned
 * integer type D?  NaN: no.  `v > lo - 1` is what we want; where lo - 1 is
 * not representable (int64) no float64 lies strictly between lo - 1 and lo,
 * so `v >= lo` is the same test. */
static CK__ALWAYS_INLINE bool ck__f_fits_int(int D, double v) {
  int bits = ck__int_bits(D);
  if (ck__cls(D) == CK__CLS_U) {
    return v > -1.0 && v < ck__pow2(bits);
  }
  double hi = ck__pow2(bits - 1);
  return v < hi && (v >= -hi || v > -hi - 1.0);
}

/*
 * Convert one element.  D, S: destination/source type ids; MODE: 0..3
 * (CK_ERRMODE_NOCHECK..INEXACT).  All three are constants at every call.
 */
static CK__ALWAYS_INLINE int ck__assign_elem(int D, int S, int MODE, char *dst,
                                             const char *src) {
  const int scls = ck__cls(S) == CK__CLS_B ? CK__CLS_U : ck__cls(S);
  const int dcls = ck__cls(D);
  int64_t si = 0;
  uint64_t ui = 0;
  double re = 0.0, im = 0.0;

  /* ---- load the source, widened exactly ---- */
  switch (S) {
  case CK_TYPE_BOOL: { uint8_t x; memcpy(&x, src, 1); ui = x != 0; break; }
  case CK_TYPE_INT8: { int8_t x; memcpy(&x, src, sizeof x); si = x; break; }
  case CK_TYPE_INT16: { int16_t x; memcpy(&x, src, sizeof x); si = x; break; }
  case CK_TYPE_INT32: { int32_t x; memcpy(&x, src, sizeof x); si = x; break; }
  case CK_TYPE_INT64: { int64_t x; memcpy(&x, src, sizeof x); si = x; break; }
  case CK_TYPE_UINT8: { uint8_t x; memcpy(&x, src, sizeof x); ui = x; break; }
  case CK_TYPE_UINT16: { uint16_t x; memcpy(&x, src, sizeof x); ui = x; break; }
  case CK_TYPE_UINT32: { uint32_t x; memcpy(&x, src, sizeof x); ui = x; break; }
  case CK_TYPE_UINT64: { uint64_t x; memcpy(&x, src, sizeof x); ui = x; break; }
  case CK_TYPE_FLOAT16: { uint16_t x; memcpy(&x, src, sizeof x); re = ck__f16_to_f64(x); break; }
  case CK_TYPE_FLOAT32: { float x; memcpy(&x, src, sizeof x); re = x; break; }
  case CK_TYPE_FLOAT64: { memcpy(&re, src, sizeof re); break; }
  case CK_TYPE_COMPLEX64: { ck__complex64 x; memcpy(&x, src, sizeof x); re = x.re; im = x.im; break; }
  default: { ck__complex128 x; memcpy(&x, src, sizeof x); re = x.re; im = x.im; break; }
  }

  /* Same type: the bits, unchanged (NaN payloads and all). */
  if (D == S) {
    memcpy(dst, src, ck__builtin_size(S));
    return 0;
  }

/* Fail with the source value in its class. */
#define CK__FAIL(what)                                                         \
  (scls == CK__CLS_I   ? ck__assign_fail_i((what), D, S, si)                   \
   : scls == CK__CLS_U ? ck__assign_fail_u((what), D, S, ui)                   \
   : scls == CK__CLS_F ? ck__assign_fail_f((what), D, S, re)                   \
                       : ck__assign_fail_c((what), D, S, re, im))

  /* complex -> anything but complex: a nonzero (or NaN) imaginary part is
   * lost, an error from OVERFLOW up. */
  if (MODE >= CK_ERRMODE_OVERFLOW && scls == CK__CLS_C && dcls != CK__CLS_C &&
      im != 0.0) {
    return CK__FAIL(CK__AE_IMAG);
  }

  switch (dcls) {
  case CK__CLS_B: {
    bool out;
    if (scls == CK__CLS_I) {
      if (MODE >= CK_ERRMODE_OVERFLOW && si != 0 && si != 1) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      out = si != 0;
    } else if (scls == CK__CLS_U) {
      if (MODE >= CK_ERRMODE_OVERFLOW && ui > 1) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      out = ui != 0;
    } else {
      if (MODE >= CK_ERRMODE_OVERFLOW && !(re == 0.0 || re == 1.0)) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      out = re != 0.0 || im != 0.0; /* NaN compares unequal: true */
    }
    uint8_t b = out;
    memcpy(dst, &b, 1);
    return 0;
  }

  case CK__CLS_I: {
    int64_t r;
    if (MODE == CK_ERRMODE_NOCHECK && (scls == CK__CLS_F || scls == CK__CLS_C) &&
        ck__int_bits(D) <= 32) {
      /* the same saturating result as below, written as selects (NaN -> 0
       * first, then a max and a min the compiler maps to maxpd/minpd) and a
       * float -> int32 conversion, so the contiguous loop vectorises */
      double c = re == re ? re : 0.0;
      c = (double)ck__smin(D) > c ? (double)ck__smin(D) : c;
      c = (double)ck__smax(D) < c ? (double)ck__smax(D) : c;
      r = (int32_t)c;
    } else if (scls == CK__CLS_I) {
      if (MODE >= CK_ERRMODE_OVERFLOW && (si < ck__smin(D) || si > ck__smax(D))) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      r = si;
    } else if (scls == CK__CLS_U) {
      if (MODE >= CK_ERRMODE_OVERFLOW && ui > (uint64_t)ck__smax(D)) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      /* wrap modulo 2^64 without an implementation-defined conversion */
      r = ui > (uint64_t)INT64_MAX ? (int64_t)(ui - (uint64_t)INT64_MAX - 1) + INT64_MIN
                                  : (int64_t)ui;
    } else if (ck__f_fits_int(D, re)) {
      r = (int64_t)re;
      if (MODE >= CK_ERRMODE_FRACTIONAL && (double)r != re) {
        return CK__FAIL(CK__AE_FRACTIONAL);
      }
    } else {
      if (MODE >= CK_ERRMODE_OVERFLOW) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      r = re != re ? 0 : re < 0.0 ? ck__smin(D) : ck__smax(D); /* saturate */
    }
    /* store the low bits (two's complement wrap for NOCHECK narrowing) */
    switch (ck__int_bits(D)) {
    case 8: { uint8_t x = (uint8_t)(uint64_t)r; memcpy(dst, &x, 1); break; }
    case 16: { uint16_t x = (uint16_t)(uint64_t)r; memcpy(dst, &x, 2); break; }
    case 32: { uint32_t x = (uint32_t)(uint64_t)r; memcpy(dst, &x, 4); break; }
    default: { uint64_t x = (uint64_t)r; memcpy(dst, &x, 8); break; }
    }
    return 0;
  }

  case CK__CLS_U: {
    uint64_t r;
    if (MODE == CK_ERRMODE_NOCHECK && (scls == CK__CLS_F || scls == CK__CLS_C) &&
        ck__int_bits(D) <= 16) {
      double c = re == re ? re : 0.0; /* as for signed destinations */
      c = 0.0 > c ? 0.0 : c;
      c = (double)ck__umax(D) < c ? (double)ck__umax(D) : c;
      r = (uint64_t)(int32_t)c;
    } else if (scls == CK__CLS_I) {
      if (MODE >= CK_ERRMODE_OVERFLOW && (si < 0 || (uint64_t)si > ck__umax(D))) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      r = (uint64_t)si;
    } else if (scls == CK__CLS_U) {
      if (MODE >= CK_ERRMODE_OVERFLOW && ui > ck__umax(D)) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      r = ui;
    } else if (ck__f_fits_int(D, re)) {
      r = (uint64_t)re;
      if (MODE >= CK_ERRMODE_FRACTIONAL && (double)r != re) {
        return CK__FAIL(CK__AE_FRACTIONAL);
      }
    } else {
      if (MODE >= CK_ERRMODE_OVERFLOW) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
      r = re > 0.0 ? ck__umax(D) : 0; /* saturate; NaN gives 0 */
    }
    switch (ck__int_bits(D)) {
    case 8: { uint8_t x = (uint8_t)r; memcpy(dst, &x, 1); break; }
    case 16: { uint16_t x = (uint16_t)r; memcpy(dst, &x, 2); break; }
    case 32: { uint32_t x = (uint32_t)r; memcpy(dst, &x, 4); break; }
    default: memcpy(dst, &r, 8); break;
    }
    return 0;
  }

  default: { /* float16/32/64, complex64/128 */
    const int comp = D == CK_TYPE_COMPLEX64    ? CK_TYPE_FLOAT32
                     : D == CK_TYPE_COMPLEX128 ? CK_TYPE_FLOAT64
                                               : D;
    float re32 = 0.0f, im32 = 0.0f;
    uint16_t re16 = 0, im16 = 0;
    double rre, rim = 0.0;
    bool exact_re;
    /* the real part: integers convert straight to the component type (one
     * rounding; float16 goes through float64, exact below 2^53, and every
     * integer above that overflows float16 anyway) */
    if (scls == CK__CLS_I) {
      if (comp == CK_TYPE_FLOAT32) {
        re32 = (float)si;
        rre = re32;
      } else {
        rre = ck__round_f(comp, (double)si, &re32, &re16);
      }
      /* exact iff the result converts back to si; the range test keeps the
       * conversion back defined (2^63 is out of range) */
      exact_re = rre >= -0x1p63 && rre < 0x1p63 && (int64_t)rre == si;
    } else if (scls == CK__CLS_U) {
      if (comp == CK_TYPE_FLOAT32) {
        re32 = (float)ui;
        rre = re32;
      } else {
        rre = ck__round_f(comp, (double)ui, &re32, &re16);
      }
      exact_re = rre < 0x1p64 && (uint64_t)rre == ui;
    } else {
      rre = ck__round_f(comp, re, &re32, &re16);
      exact_re = rre == re || re != re;
    }
    if (scls == CK__CLS_C) {
      rim = ck__round_f(comp, im, &im32, &im16);
    }
    if (MODE >= CK_ERRMODE_OVERFLOW && comp != CK_TYPE_FLOAT64) {
      /* a finite value that became infinite (integers are finite) */
      bool re_ovf = isinf(rre) && !isinf(re);
      bool im_ovf = scls == CK__CLS_C && isinf(rim) && !isinf(im);
      if (re_ovf || im_ovf) {
        return CK__FAIL(CK__AE_OVERFLOW);
      }
    }
    if (MODE >= CK_ERRMODE_INEXACT) {
      bool exact_im = scls != CK__CLS_C || rim == im || im != im;
      if (!exact_re || !exact_im) {
        return CK__FAIL(CK__AE_INEXACT);
      }
    }
    switch (D) {
    case CK_TYPE_FLOAT16: memcpy(dst, &re16, 2); break;
    case CK_TYPE_FLOAT32: memcpy(dst, &re32, 4); break;
    case CK_TYPE_FLOAT64: memcpy(dst, &rre, 8); break;
    case CK_TYPE_COMPLEX64: {
      ck__complex64 c = {re32, im32};
      memcpy(dst, &c, sizeof c);
      break;
    }
    default: {
      ck__complex128 c = {rre, rim};
      memcpy(dst, &c, sizeof c);
      break;
    }
    }
    return 0;
  }
  }
#undef CK__FAIL
}

/* ---- instantiation ---- */

#define CK__MODES(X, ...)                                                      \
  X(nocheck, 0, __VA_ARGS__)                                                   \
  X(overflow, 1, __VA_ARGS__)                                                  \
  X(fractional, 2, __VA_ARGS__)                                                \
  X(inexact, 3, __VA_ARGS__)

/* Entry points for one (src, dst, mode). */
#define CK__ASSIGN_FUNCS(MN, MODE, SN, SS, SID, ST, DN, DS, DID, DT)                   \
  static int ck__assign1_##SN##_##DN##_##MN(char *dst, const char *const *src, \
                                           ck_prefix *self) {                  \
    (void)self;                                                                \
    return ck__assign_elem(DID, SID, MODE, dst, src[0]);                       \
  }                                                                            \
  static int ck__assignN_##SN##_##DN##_##MN(                                   \
      char *dst, intptr_t dst_stride, const char *const *src,                  \
      const intptr_t *src_stride, size_t count, ck_prefix *self) {             \
    (void)self;                                                                \
    const char *s = src[0];                                                    \
    intptr_t ss = src_stride[0];                                               \
    if (MODE == CK_ERRMODE_NOCHECK && dst_stride == (intptr_t)sizeof(DT) &&    \
        ss == (intptr_t)sizeof(ST)) {                                          \
      /* contiguous, cannot fail: a plain loop the compiler vectorises */      \
      for (size_t i = 0; i < count; i++) {                                     \
        (void)ck__assign_elem(DID, SID, MODE, dst + i * sizeof(DT),            \
                              s + i * sizeof(ST));                             \
      }                                                                        \
      return 0;                                                                \
    }                                                                          \
    /* running byte offsets, not pointers: no pointer is ever formed past \
     * the last element (negative strides would otherwise step before the  \
     * array, which C leaves undefined) */                                    \
    intptr_t doff = 0, soff = 0;                                               \
    for (size_t i = 0; i < count; i++, doff += dst_stride, soff += ss) {       \
      int st = ck__assign_elem(DID, SID, MODE, dst + doff, s + soff);          \
      if (MODE != CK_ERRMODE_NOCHECK && st != 0) {                             \
        return st;                                                             \
      }                                                                        \
    }                                                                          \
    return 0;                                                                  \
  }

#define CK__ASSIGN_PAIR(SN, SS, SID, ST, SK, DN, DS, DID, DT)                  \
  CK__MODES(CK__ASSIGN_FUNCS, SN, SS, SID, ST, DN, DS, DID, DT)

#define CK__ASSIGN_INFO(MN, MODE, SN, SS, DN, DS)                              \
  {"assign_" SS "_to_" DS "_" #MN, ck__assign1_##SN##_##DN##_##MN,             \
   ck__assignN_##SN##_##DN##_##MN, sizeof(ck_prefix), NULL},

#define CK__ASSIGN_ROW(SN, SS, SID, ST, SK, DN, DS, DID, DT)                   \
  [SID] = {CK__MODES(CK__ASSIGN_INFO, SN, SS, DN, DS)},

/* All entry points into destination DN ("DS"), and its table. */
#define CK__ASSIGN_DEFINE_DST(DN, DS, DID, DT)                                 \
  CK__BUILTIN_TYPES(CK__ASSIGN_PAIR, DN, DS, DID, DT)                          \
  const ck_kernel_info ck__assign_info_##DN[CK_BUILTIN_TYPE_COUNT][4] = {      \
      CK__BUILTIN_TYPES(CK__ASSIGN_ROW, DN, DS, DID, DT)};

/* The tables ([src id][mode]; row 0 unused), one per destination. */
#define CK__ASSIGN_DECLARE_TABLE(DN, DS, DID, DT, DK, unused)                  \
  extern const ck_kernel_info ck__assign_info_##DN[CK_BUILTIN_TYPE_COUNT][4];
CK__BUILTIN_TYPES(CK__ASSIGN_DECLARE_TABLE, 0)

#endif /* CKERNEL_ASSIGN_INTERNAL_H */
