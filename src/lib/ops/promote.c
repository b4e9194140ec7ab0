/*
 * promote.c -- NumPy's type rules over the builtin scalars: safe casts
 * (ck_can_cast_safely) and promotion (ck_promote_types), both declared in
 * ckernel/registry.h, and the type order the registry's dispatch ranks
 * kernels by (ops/promote_internal.h).
 */
#include "ops/promote_internal.h"
#include "core/scalar_internal.h"

/* NumPy's type order (position in "?bBhHiIlLefdFD"), indexed by ck_type_id. */
static const uint8_t ck__rank_of[CK_BUILTIN_TYPE_COUNT] = {
    [CK_TYPE_BOOL] = 0,     [CK_TYPE_INT8] = 1,     [CK_TYPE_UINT8] = 2,
    [CK_TYPE_INT16] = 3,    [CK_TYPE_UINT16] = 4,   [CK_TYPE_INT32] = 5,
    [CK_TYPE_UINT32] = 6,   [CK_TYPE_INT64] = 7,    [CK_TYPE_UINT64] = 8,
    [CK_TYPE_FLOAT16] = 9,  [CK_TYPE_FLOAT32] = 10, [CK_TYPE_FLOAT64] = 11,
    [CK_TYPE_COMPLEX64] = 12, [CK_TYPE_COMPLEX128] = 13};

static const ck_type_id ck__by_rank[14] = {
    CK_TYPE_BOOL,    CK_TYPE_INT8,    CK_TYPE_UINT8,     CK_TYPE_INT16,
    CK_TYPE_UINT16,  CK_TYPE_INT32,   CK_TYPE_UINT32,    CK_TYPE_INT64,
    CK_TYPE_UINT64,  CK_TYPE_FLOAT16, CK_TYPE_FLOAT32,   CK_TYPE_FLOAT64,
    CK_TYPE_COMPLEX64, CK_TYPE_COMPLEX128};

/* kind: 0 bool, 1 signed, 2 unsigned, 3 float, 4 complex; and "size", in
 * bits of the (component) precision that safe casts compare: integers their
 * width, floats their mantissa-ish class (16, 32, 64). */
static int ck__kind(ck_type_id t) {
  switch (t) {
  case CK_TYPE_BOOL: return 0;
  case CK_TYPE_INT8: case CK_TYPE_INT16: case CK_TYPE_INT32: case CK_TYPE_INT64:
    return 1;
  case CK_TYPE_UINT8: case CK_TYPE_UINT16: case CK_TYPE_UINT32: case CK_TYPE_UINT64:
    return 2;
  case CK_TYPE_FLOAT16: case CK_TYPE_FLOAT32: case CK_TYPE_FLOAT64:
    return 3;
  default:
    return 4;
  }
}

static int ck__bits(ck_type_id t) {
  switch (t) {
  case CK_TYPE_INT8: case CK_TYPE_UINT8: return 8;
  case CK_TYPE_INT16: case CK_TYPE_UINT16: case CK_TYPE_FLOAT16: return 16;
  case CK_TYPE_INT32: case CK_TYPE_UINT32: case CK_TYPE_FLOAT32:
  case CK_TYPE_COMPLEX64: return 32; /* complex: component width */
  default: return 64;
  }
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
  for (int r = ck__rank_of[a] > ck__rank_of[b] ? ck__rank_of[a] : ck__rank_of[b]; r < 14; r++) {
    ck_type_id t = ck__by_rank[r];
    if (ck_can_cast_safely(a, t) && ck_can_cast_safely(b, t)) {
      *out = t;
      return CK_OK;
    }
  }
  *out = CK_TYPE_COMPLEX128; /* unreachable: everything casts to complex128 */
  return CK_OK;
}

unsigned ck__type_rank(ck_type_id t) {
  return ck__is_builtin_id(t) ? ck__rank_of[t] : 0;
}
