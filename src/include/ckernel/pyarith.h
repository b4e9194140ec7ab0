/*
 * pyarith.h -- Python's floor division, modulo and integer power, written
 * once for every C dialect the library speaks: C11 (the registry's built-in
 * kernels, src/lib/ops/ops_arith.c), OpenCL C and CUDA C++ (the Python
 * package places this header's text in front of the device code it
 * generates: the built-in operations on device arrays and the jit's emitter).
 *
 * The header only defines macros; an includer instantiates the functions it
 * needs for its own type names, so nothing depends on <stdint.h> (absent from
 * OpenCL C and NVRTC) and every dialect spells its types and math functions
 * its own way:
 *
 *   CK_PYARITH_SINT(SUF, T)                  signed integer type T:
 *       T ck_py_floordiv_SUF(T a, T b)       a // b, rounded toward -inf
 *       T ck_py_mod_SUF(T a, T b)            a % b, the sign of b
 *   CK_PYARITH_POW(SUF, T, WU, U64)          integer type T, WU an unsigned
 *                                            type at least as wide as T and
 *                                            int, U64 a 64-bit unsigned type:
 *       T ck_py_pow_SUF(T a, U64 e)          a ** e modulo 2^N (e >= 0), by
 *                                            repeated squaring in WU (no
 *                                            signed overflow)
 *   CK_PYARITH_FLOAT(SUF, T, FMOD, FLOOR, COPYSIGN)
 *                                            real float type T with the
 *                                            dialect's fmod/floor/copysign:
 *       T ck_py_divmod_SUF(T a, T b, T *mod) NumPy's npy_divmod: returns the
 *                                            floor quotient, *mod the
 *                                            remainder with the divisor's
 *                                            sign; 1.0 // 0.1 == 9.0 and
 *                                            a // b * b + a % b stays close
 *                                            to a; b == 0 gives a / b and
 *                                            fmod's nan
 *       T ck_py_floordiv_SUF(T a, T b)       b == 0: a / b only (its flags,
 *                                            not fmod's "invalid")
 *       T ck_py_mod_SUF(T a, T b)            b == 0: fmod's nan only (not
 *                                            a / b's "divide by zero")
 *   The sign tests of a remainder are quiet comparisons where the includer
 *   defines CK_PYARITH_LT / CK_PYARITH_GT (C11: isless/isgreater, so a NaN
 *   operand raises no "invalid", as NumPy's npy_divmod); they default to
 *   < and > (devices keep no floating-point flags).
 *
 * Preconditions (what differs between callers is decided by them, before the
 * call): integer floor division and modulo need b != 0 (callers raise their
 * own ZeroDivisionError, or return 0 under NumPy's error model) and b != -1
 * (the registry wraps INT_MIN // -1 to INT_MIN as NumPy does, the jit gives
 * 0 as Numba does; x % -1 is 0 for both).  Unsigned integers need no helper
 * (C's / and % are Python's there); a negative integer exponent is an error
 * (registry) or a special case (jit) decided by the caller.
 *
 * Qualifiers: CK_PYARITH_FN, defined by the includer before this header
 * ("static inline" when it does not: C11; the device code generators define
 * their dialect's device-function qualifiers).
 */
#ifndef CKERNEL_PYARITH_H
#define CKERNEL_PYARITH_H

#ifndef CK_PYARITH_FN
#define CK_PYARITH_FN static inline
#endif
#ifndef CK_PYARITH_LT
#define CK_PYARITH_LT(a, b) ((a) < (b))
#endif
#ifndef CK_PYARITH_GT
#define CK_PYARITH_GT(a, b) ((a) > (b))
#endif

#define CK_PYARITH_SINT(SUF, T)                                                \
  CK_PYARITH_FN T ck_py_floordiv_##SUF(T a, T b) {                             \
    T q = (T)(a / b);                                                          \
    if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) {                            \
      q = (T)(q - 1);                                                          \
    }                                                                          \
    return q;                                                                  \
  }                                                                            \
  CK_PYARITH_FN T ck_py_mod_##SUF(T a, T b) {                                  \
    T m = (T)(a % b);                                                          \
    if (m != 0 && ((m < 0) != (b < 0))) {                                      \
      m = (T)(m + b);                                                          \
    }                                                                          \
    return m;                                                                  \
  }

#define CK_PYARITH_POW(SUF, T, WU, U64)                                        \
  CK_PYARITH_FN T ck_py_pow_##SUF(T a, U64 e) {                                \
    WU base = (WU)a, acc = 1;                                                  \
    for (; e != 0; e >>= 1) {                                                  \
      if (e & 1u) {                                                            \
        acc *= base;                                                           \
      }                                                                        \
      base *= base;                                                            \
    }                                                                          \
    return (T)acc;                                                             \
  }

#define CK_PYARITH_FLOAT(SUF, T, FMOD, FLOOR, COPYSIGN)                        \
  CK_PYARITH_FN T ck_py_divmod_##SUF(T a, T b, T *modulus) {                   \
    T mod = FMOD(a, b);                                                        \
    if (b == (T)0) {                                                           \
      *modulus = mod;                                                          \
      return a / b;                                                            \
    }                                                                          \
    T div = (a - mod) / b;                                                     \
    if (mod != (T)0) {                                                         \
      if (CK_PYARITH_LT(b, (T)0) != CK_PYARITH_LT(mod, (T)0)) {                \
        mod += b;                                                              \
        div -= (T)1;                                                           \
      }                                                                        \
    } else {                                                                   \
      mod = COPYSIGN((T)0, b);                                                 \
    }                                                                          \
    T floordiv;                                                                \
    if (div != (T)0) {                                                         \
      floordiv = FLOOR(div);                                                   \
      if (CK_PYARITH_GT(div - floordiv, (T)0.5)) {                             \
        floordiv += (T)1;                                                      \
      }                                                                        \
    } else {                                                                   \
      floordiv = COPYSIGN((T)0, a / b);                                        \
    }                                                                          \
    *modulus = mod;                                                            \
    return floordiv;                                                           \
  }                                                                            \
  CK_PYARITH_FN T ck_py_floordiv_##SUF(T a, T b) {                             \
    T mod;                                                                     \
    if (b == (T)0) {                                                           \
      return a / b;                                                            \
    }                                                                          \
    return ck_py_divmod_##SUF(a, b, &mod);                                     \
  }                                                                            \
  CK_PYARITH_FN T ck_py_mod_##SUF(T a, T b) {                                  \
    T mod;                                                                     \
    if (b == (T)0) {                                                           \
      return FMOD(a, b);                                                       \
    }                                                                          \
    (void)ck_py_divmod_##SUF(a, b, &mod);                                      \
    return mod;                                                                \
  }

#endif /* CKERNEL_PYARITH_H */
