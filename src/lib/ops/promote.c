/*
 * promote.c -- NumPy's type rules over the builtin scalars: safe casts
 * (ck_can_cast_safely), promotion (ck_promote_types) and the NEP 50 rule
 * for Python scalars (ck_weak_result), declared in ckernel/registry.h, and the type order the registry's dispatch ranks
 * kernels by (ops/promote_internal.h).
 */
#include "ops/promote_internal.h"
#include "core/scalar_internal.h"

/* kind: 0 bool, 1 signed, 2 unsigned, 3 float, 4 complex; and "size", in
 * bits of the (component) precision that safe casts compare: integers their
 * width, floats their mantissa-ish class (16, 32, 64) -- both from the
 * builtin table (scalar_internal.h). */
static int ck__kind(ck_type_id t) {
  switch (ck__builtin_kind(t)) {
  case 'b': return 0;
  case 'i': return 1;
  case 'u': return 2;
  case 'f': return 3;
  default: return 4;
  }
}

static int ck__bits(ck_type_id t) {
  return ck__builtin_precision_bits(t);
}

bool ck_can_cast_safely(ck_type_id from, ck_type_id to) {
  if (!ck__is_builtin_id(from) || !ck__is_builtin_id(to)) {
    return false;
  }
  if (from == to || from == CK_TYPE_BOOL) {
    return true;
  }
  int kf = ck__kind(from), kt = ck__kind(to);
  int bf = ck__bits(from), bt = ck__bits(to);
  switch (kt) {
  case 0:
    return false;
  case 1: /* signed: from signed no wider, or unsigned strictly narrower */
    return (kf == 1 && bf <= bt) || (kf == 2 && bf < bt);
  case 2:
    return kf == 2 && bf <= bt;
  default: {
    /* float / complex (component width bt): integers of up to 8 bits fit
     * float16, up to 16 bits float32, any float64 (NumPy's rule); floats
     * by width; complex only into complex */
    if (kf == 4 && kt != 4) {
      return false;
    }
    if (kf == 1 || kf == 2) {
      return bt == 64 || (bt == 32 && bf <= 16) || (bt == 16 && bf <= 8);
    }
    return bf <= bt;
  }
  }
}

ck_status ck_promote_types(ck_type_id a, ck_type_id b, ck_type_id *out) {
  if (!ck__is_builtin_id(a) || !ck__is_builtin_id(b) || out == NULL) {
    return CK_ERROR(out == NULL ? CK_ERR_INVALID_ARGUMENT : CK_ERR_TYPE,
                    "no promotion between %s and %s", ck_type_id_name(a),
                    ck_type_id_name(b));
  }
  /* the first type in NumPy's order, from the higher of the two, that both
   * cast to safely (complex128 takes everything) */
  unsigned from = ck__type_rank(a) > ck__type_rank(b) ? ck__type_rank(a) : ck__type_rank(b);
  ck_type_id best = CK_TYPE_COMPLEX128;
  for (int t = CK_TYPE_BOOL; t <= CK_TYPE_COMPLEX128; t++) {
    unsigned r = ck__type_rank((ck_type_id)t);
    if (r >= from && r < ck__type_rank(best) && ck_can_cast_safely(a, (ck_type_id)t) &&
        ck_can_cast_safely(b, (ck_type_id)t)) {
      best = (ck_type_id)t;
    }
  }
  *out = best;
  return CK_OK;
}

ck_status ck_weak_result(ck_type_id strong, ck_weak_kind weak, ck_type_id *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out is NULL");
  }
  if (weak < CK_WEAK_INT || weak > CK_WEAK_COMPLEX) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown weak scalar kind %d", (int)weak);
  }
  if (!ck__is_builtin_id(strong)) {
    return CK_ERROR(CK_ERR_TYPE, "no promotion between %s and a Python %s",
                    ck_type_id_name(strong),
                    weak == CK_WEAK_INT ? "int" : weak == CK_WEAK_FLOAT ? "float" : "complex");
  }
  /* kinds in order: bool 0, integers 1 (signed and unsigned alike), float
   * 2, complex 3; the weak kinds are 1..3 */
  int k = ck__kind(strong);
  int have = k == 0 ? 0 : k <= 2 ? 1 : k - 1;
  if (have >= (int)weak) {
    *out = strong;
  } else if (weak == CK_WEAK_INT) {
    *out = CK_TYPE_INT64;
  } else if (weak == CK_WEAK_FLOAT) {
    *out = CK_TYPE_FLOAT64;
  } else {
    *out = have == 2 && ck__bits(strong) <= 32 ? CK_TYPE_COMPLEX64 : CK_TYPE_COMPLEX128;
  }
  return CK_OK;
}

unsigned ck__type_rank(ck_type_id t) {
  return ck__builtin_rank(t);
}
