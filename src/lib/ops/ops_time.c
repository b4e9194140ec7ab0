/*
 * ops_time.c -- arithmetic and comparison kernels over the time types
 * (ck_make_time_op_kernel, ckernel/datetime.h): NumPy's rules and result
 * units.  Time operands are brought to the common (finer) unit when the
 * kernel is built (the conversion is checked per element: CK_ERR_OVERFLOW
 * names the operation); NaT propagates as NumPy's loops do.
 */
#include "core/core_internal.h"
#include "types/type_internal.h"
#include "types/time_internal.h"

#include <math.h>
#include <string.h>

enum { CK__T_ADD, CK__T_SUB, CK__T_MUL, CK__T_FLOORDIV, CK__T_TRUEDIV, CK__T_EQ, CK__T_NE,
       CK__T_LT, CK__T_LE, CK__T_GT, CK__T_GE, CK__T_MIN, CK__T_MAX, CK__T_NEG, CK__T_ABS };

static const char *const ck__top_names[] = {
    "add",   "subtract",   "multiply", "floor_divide", "true_divide",
    "equal", "not_equal",  "less",     "less_equal",   "greater",
    "greater_equal", "minimum", "maximum", "negative", "absolute"};

/* operand classes */
enum { CK__O_TIME = 0, CK__O_INT = 1, CK__O_FLOAT = 2 };

typedef struct ck__top_kernel {
  ck_prefix base;
  int32_t op, nargs;
  int32_t cls[2];        /* CK__O_* */
  int32_t from[2];       /* time operands: their unit */
  int32_t instant[2];    /* time operands: an instant (calendar conversion) */
  int32_t unit;          /* the common unit */
  int32_t ret_kind;      /* 0 time (ret_type), 1 bool, 2 int64, 3 float64 */
  int32_t wide[2];       /* time operands: 8-byte data (else 4) */
  int64_t factor[2];     /* time operands: exact multiplier to `unit`, 0 when the
                            conversion goes through the calendar */
  ck_type arg[2];        /* owned references */
  ck_type ret;           /* owned reference */
} ck__top_kernel;

static void ck__top_destruct(ck_prefix *self) {
  ck__top_kernel *k = (ck__top_kernel *)(void *)self;
  ck_type_decref(k->arg[0]);
  ck_type_decref(k->arg[1]);
  ck_type_decref(k->ret);
  k->arg[0] = k->arg[1] = k->ret = NULL;
}

static int ck__top_overflow(const ck__top_kernel *k) {
  return ck__error(CK_ERR_OVERFLOW, ck__top_names[k->op], "integer overflow in %s of %s",
                   ck__top_names[k->op], ck_type_id_name(ck_type_id_of(k->arg[0])));
}

typedef struct ck__opnd {
  int64_t i;
  double f;
  bool nat;
} ck__opnd;

static int ck__load(const ck__top_kernel *k, int j, const char *p, ck__opnd *o) {
  o->nat = false;
  if (k->cls[j] == CK__O_TIME) {
    int64_t v;
    if (k->wide[j]) {
      memcpy(&v, p, 8);
    } else {
      v = ck__time_load(k->arg[j], p);
    }
    if (v == CK_NAT) {
      o->nat = true;
      return 0;
    }
    if (k->factor[j] != 0) { /* linear: an exact multiplication */
      if (__builtin_mul_overflow(v, k->factor[j], &o->i) || o->i == CK_NAT) {
        return ck__top_overflow(k);
      }
      return 0;
    }
    if (k->from[j] != k->unit &&
        ck_time_convert(v, (ck_time_unit)k->from[j], (ck_time_unit)k->unit,
                        k->instant[j] != 0, &o->i, NULL) != CK_OK) {
      return ck__top_overflow(k);
    }
    if (k->from[j] == k->unit) {
      o->i = v;
    }
    return 0;
  }
  ck_type_id id = ck_type_id_of(k->arg[j]);
  if (k->cls[j] == CK__O_INT) {
    return ck_assign_builtin_value(CK_TYPE_INT64, &o->i, id, p, CK_ERRMODE_OVERFLOW);
  }
  return ck_assign_builtin_value(CK_TYPE_FLOAT64, &o->f, id, p, CK_ERRMODE_NOCHECK);
}

static int64_t ck__fdiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* a double duration back to int64 (truncated, NumPy's cast); NaT when not finite
 * or out of range */
static int64_t ck__from_double(double d) {
  if (!isfinite(d) || d >= 9223372036854775808.0 || d <= -9223372036854775808.0) {
    return CK_NAT;
  }
  return (int64_t)d;
}

static int ck__top_one(const ck__top_kernel *k, char *dst, const char *const *src) {
  ck__opnd a, b = {0, 0.0, false};
  int st;
  if ((st = ck__load(k, 0, src[0], &a)) != 0) {
    return st;
  }
  if (k->nargs == 2 && (st = ck__load(k, 1, src[1], &b)) != 0) {
    return st;
  }
  bool nat = a.nat || b.nat;
  int64_t r = CK_NAT;
  switch (k->op) {
  case CK__T_EQ: case CK__T_NE: case CK__T_LT: case CK__T_LE: case CK__T_GT:
  case CK__T_GE: {
    uint8_t c;
    if (nat) {
      c = k->op == CK__T_NE;
    } else {
      switch (k->op) {
      case CK__T_EQ: c = a.i == b.i; break;
      case CK__T_NE: c = a.i != b.i; break;
      case CK__T_LT: c = a.i < b.i; break;
      case CK__T_LE: c = a.i <= b.i; break;
      case CK__T_GT: c = a.i > b.i; break;
      default: c = a.i >= b.i; break;
      }
    }
    memcpy(dst, &c, 1);
    return 0;
  }
  case CK__T_TRUEDIV:
    if (k->ret_kind == 3) { /* duration / duration */
      double q = nat ? NAN : (double)a.i / (double)b.i;
      memcpy(dst, &q, sizeof q);
      return 0;
    }
    if (!nat) {
      double d = k->cls[1] == CK__O_FLOAT ? b.f : (double)b.i;
      r = ck__from_double((double)a.i / d);
    }
    break;
  case CK__T_FLOORDIV:
    if (k->ret_kind == 2) { /* duration // duration -> int64 (NaT or /0 -> 0, NumPy) */
      int64_t q = 0;
      if (!nat && b.i != 0) {
        q = (a.i == INT64_MIN + 1 && b.i == -1) ? INT64_MAX : ck__fdiv64(a.i, b.i);
      }
      memcpy(dst, &q, sizeof q);
      return 0;
    }
    if (!nat) {
      if (k->cls[1] == CK__O_FLOAT) {
        r = ck__from_double((double)a.i / b.f);
      } else if (b.i != 0 && !(b.i == -1 && a.i == INT64_MIN + 1)) {
        r = a.i / b.i; /* NumPy truncates duration // integer */
      }
    }
    break;
  case CK__T_MUL:
    if (!nat) {
      int ti = k->cls[0] == CK__O_TIME ? 0 : 1;
      int64_t t = ti == 0 ? a.i : b.i;
      const ck__opnd *n = ti == 0 ? &b : &a;
      if (k->cls[1 - ti] == CK__O_FLOAT) {
        r = ck__from_double((double)t * n->f);
      } else if (__builtin_mul_overflow(t, n->i, &r) || r == CK_NAT) {
        return ck__top_overflow(k);
      }
    }
    break;
  case CK__T_ADD:
    if (!nat && (__builtin_add_overflow(a.i, b.i, &r) || r == CK_NAT)) {
      return ck__top_overflow(k);
    }
    break;
  case CK__T_SUB:
    if (!nat && (__builtin_sub_overflow(a.i, b.i, &r) || r == CK_NAT)) {
      return ck__top_overflow(k);
    }
    break;
  case CK__T_MIN: r = nat ? CK_NAT : (a.i < b.i ? a.i : b.i); break;
  case CK__T_MAX: r = nat ? CK_NAT : (a.i > b.i ? a.i : b.i); break;
  case CK__T_NEG: r = nat ? CK_NAT : -a.i; break; /* -(INT64_MIN + 1) fits */
  default: r = nat ? CK_NAT : (a.i < 0 ? -a.i : a.i); break;
  }
  if (!ck__time_store(k->ret, dst, r)) {
    return ck__top_overflow(k);
  }
  return 0;
}

static int ck__top1(char *dst, const char *const *src, ck_prefix *self) {
  return ck__top_one((const ck__top_kernel *)(void *)self, dst, src);
}

/* add / subtract of two 8-byte time operands with linear conversions: one
 * tight loop (NaT, the factors and overflow still checked per element) */
static int ck__top_addsub(const ck__top_kernel *k, char *dst, intptr_t ds, const char *a,
                          intptr_t as, const char *b, intptr_t bs, size_t count) {
  const int64_t fa = k->factor[0], fb = k->factor[1];
  const bool sub = k->op == CK__T_SUB;
  for (size_t i = 0; i < count; i++) {
    int64_t x, y, r;
    memcpy(&x, a + (intptr_t)i * as, 8);
    memcpy(&y, b + (intptr_t)i * bs, 8);
    if (x == CK_NAT || y == CK_NAT) {
      r = CK_NAT;
    } else {
      bool o = __builtin_mul_overflow(x, fa, &x);
      o |= __builtin_mul_overflow(y, fb, &y);
      o |= sub ? __builtin_sub_overflow(x, y, &r) : __builtin_add_overflow(x, y, &r);
      if (o || r == CK_NAT) {
        return ck__top_overflow(k);
      }
    }
    memcpy(dst + (intptr_t)i * ds, &r, 8);
  }
  return 0;
}

static int ck__topN(char *dst, intptr_t dst_stride, const char *const *src,
                    const intptr_t *src_stride, size_t count, ck_prefix *self) {
  const ck__top_kernel *k = (const ck__top_kernel *)(void *)self;
  if ((k->op == CK__T_ADD || k->op == CK__T_SUB) && k->nargs == 2 && k->ret_kind == 0 &&
      k->cls[0] == CK__O_TIME && k->cls[1] == CK__O_TIME && k->wide[0] && k->wide[1] &&
      k->factor[0] != 0 && k->factor[1] != 0) {
    return ck__top_addsub(k, dst, dst_stride, src[0], src_stride[0], src[1], src_stride[1],
                          count);
  }
  const char *s[2] = {src[0], k->nargs == 2 ? src[1] : NULL};
  for (size_t i = 0; i < count; i++) {
    int st = ck__top_one(k, dst, s);
    if (st != 0) {
      return st;
    }
    dst += dst_stride;
    s[0] += src_stride[0];
    if (k->nargs == 2) {
      s[1] += src_stride[1];
    }
  }
  return 0;
}

/* ---- resolution ------------------------------------------------------------------------ */

static int ck__cls_of(ck_type t) {
  if (ck_type_is_time(t)) {
    return CK__O_TIME;
  }
  char kind = ck_type_is_builtin(t) ? ck_type_id_kind(ck_type_id_of(t)) : 0;
  if (kind == 'i' || kind == 'u' || kind == 'b') {
    return CK__O_INT;
  }
  return kind == 'f' ? CK__O_FLOAT : -1;
}

static ck_status ck__top_refuse(const char *op, size_t nargs, const ck_type *t,
                                const char *why) {
  char a[96], b[96];
  return ck__error(CK_ERR_TYPE, "ck_make_time_op_kernel", "%s(%s%s%s) is not defined%s%s",
                   op, ck__type_str(t[0], a, sizeof a), nargs == 2 ? ", " : "",
                   nargs == 2 ? ck__type_str(t[1], b, sizeof b) : "", *why ? ": " : "", why);
}

static bool ck__calendar_unit(int u) { return u == CK_UNIT_Y || u == CK_UNIT_M; }

ck_status ck_make_time_op_kernel(const char *op_name, ck_kernel_builder *ckb, size_t offset,
                                 ck_kernel_request req, size_t nargs,
                                 const ck_type *arg_types, ck_type *out_ret,
                                 size_t *out_end) {
  if (op_name == NULL || ckb == NULL || arg_types == NULL || out_ret == NULL ||
      (nargs != 1 && nargs != 2)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "an operation name, a builder, 1 or 2 argument types and out_ret are "
                    "needed");
  }
  *out_ret = NULL;
  int op = -1;
  for (int i = 0; i < (int)(sizeof ck__top_names / sizeof ck__top_names[0]); i++) {
    if (strcmp(op_name, ck__top_names[i]) == 0) {
      op = i;
    }
  }
  if (strcmp(op_name, "divide") == 0) {
    op = CK__T_TRUEDIV;
  }
  if (op < 0) {
    return CK_ERROR(CK_ERR_TYPE, "operation '%.60s' has no kernels over time types",
                    op_name);
  }
  size_t want = op >= CK__T_NEG ? 1 : 2;
  if (nargs != want) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "%s takes %zu arguments, not %zu", op_name,
                    want, nargs);
  }
  int cls[2] = {ck__cls_of(arg_types[0]), nargs == 2 ? ck__cls_of(arg_types[1]) : -2};
  for (size_t j = 0; j < nargs; j++) {
    if (cls[j] < 0 || !ck_type_is_valid(arg_types[j])) {
      return ck__top_refuse(op_name, nargs, arg_types, "");
    }
  }
  ck_type_id id0 = ck_type_id_of(arg_types[0]);
  ck_type_id id1 = nargs == 2 ? ck_type_id_of(arg_types[1]) : CK_TYPE_UNINITIALIZED;
  bool t0 = cls[0] == CK__O_TIME, t1 = nargs == 2 && cls[1] == CK__O_TIME;
  if (!t0 && !t1) {
    return ck__top_refuse(op_name, nargs, arg_types, "no time type");
  }
  int u0 = t0 ? ck_time_type_unit(arg_types[0]) : -1;
  int u1 = t1 ? ck_time_type_unit(arg_types[1]) : -1;
  int unit = u0 > u1 ? u0 : u1;
  /* result: kind and type id (time results take `unit`) */
  ck_type_id ret_id = CK_TYPE_UNINITIALIZED;
  int ret_kind = 0;
  const char *tz = NULL;
  bool cmp = op >= CK__T_EQ && op <= CK__T_GE;
  bool minmax = op == CK__T_MIN || op == CK__T_MAX;
  if (t0 && t1) {
    bool same = id0 == id1;
    const char *z0 = ck_datetime_type_tz(arg_types[0]), *z1 = ck_datetime_type_tz(arg_types[1]);
    if (id0 == CK_TYPE_DATETIME && id1 == CK_TYPE_DATETIME &&
        ((z0 == NULL) != (z1 == NULL) || (z0 != NULL && strcmp(z0, z1) != 0))) {
      return ck__top_refuse(op_name, nargs, arg_types,
                            "the instants have different time zones (convert one)");
    }
    tz = z0;
    if (cmp && same) {
      ret_kind = 1;
    } else if (minmax && same && id0 != CK_TYPE_DATE && id0 != CK_TYPE_TIME) {
      ret_id = id0;
    } else if (op == CK__T_SUB && same && (id0 == CK_TYPE_DATETIME || id0 == CK_TYPE_DATE)) {
      ret_id = CK_TYPE_TIMEDELTA;
      if (id0 == CK_TYPE_DATE) {
        unit = unit == CK_UNIT_D ? CK_UNIT_D : unit;
      }
      tz = NULL;
    } else if ((op == CK__T_ADD || op == CK__T_SUB) && id0 == CK_TYPE_DATETIME &&
               id1 == CK_TYPE_TIMEDELTA) {
      ret_id = CK_TYPE_DATETIME;
    } else if (op == CK__T_ADD && id0 == CK_TYPE_TIMEDELTA && id1 == CK_TYPE_DATETIME) {
      ret_id = CK_TYPE_DATETIME;
      tz = z1;
    } else if ((op == CK__T_ADD || op == CK__T_SUB) && same && id0 == CK_TYPE_TIMEDELTA) {
      ret_id = CK_TYPE_TIMEDELTA;
    } else if (op == CK__T_TRUEDIV && same && id0 == CK_TYPE_TIMEDELTA) {
      ret_kind = 3;
    } else if (op == CK__T_FLOORDIV && same && id0 == CK_TYPE_TIMEDELTA) {
      ret_kind = 2;
    } else {
      return ck__top_refuse(op_name, nargs, arg_types, "");
    }
    /* a calendar duration (Y, M) mixes only with calendar units */
    bool cal0 = ck__calendar_unit(u0), cal1 = ck__calendar_unit(u1);
    if ((id0 == CK_TYPE_TIMEDELTA && cal0 && !cal1) ||
        (id1 == CK_TYPE_TIMEDELTA && cal1 && !cal0)) {
      return ck__top_refuse(op_name, nargs, arg_types,
                            "a duration in years or months has no fixed length in "
                            "smaller units (NumPy refuses it too)");
    }
  } else {
    /* one time operand and one number */
    ck_type_id tid = t0 ? id0 : id1;
    int ncls = t0 ? cls[1] : cls[0];
    bool counted = tid == CK_TYPE_DATETIME || tid == CK_TYPE_TIMEDELTA;
    if (nargs == 2 && counted && ncls == CK__O_INT &&
        (op == CK__T_ADD || (op == CK__T_SUB && (t0 || tid == CK_TYPE_TIMEDELTA)))) {
      /* NumPy: an integer counts units of the time operand (M8[D] + 3 is three
       * days later; 3 - M8 is refused) */
      ret_id = tid;
      tz = ck_datetime_type_tz(t0 ? arg_types[0] : arg_types[1]);
    } else if (tid != CK_TYPE_TIMEDELTA) {
      return ck__top_refuse(op_name, nargs, arg_types, "");
    } else if (nargs == 1 && (op == CK__T_NEG || op == CK__T_ABS)) {
      ret_id = CK_TYPE_TIMEDELTA;
    } else if (op == CK__T_MUL && (ncls == CK__O_INT || ncls == CK__O_FLOAT)) {
      ret_id = CK_TYPE_TIMEDELTA;
    } else if ((op == CK__T_TRUEDIV || op == CK__T_FLOORDIV) && t0) {
      ret_id = CK_TYPE_TIMEDELTA;
    } else {
      return ck__top_refuse(op_name, nargs, arg_types, "");
    }
  }
  ck_type ret = NULL;
  ck_status st;
  if (ret_kind == 1) {
    ret = CK_BUILTIN(CK_TYPE_BOOL);
  } else if (ret_kind == 2) {
    ret = CK_BUILTIN(CK_TYPE_INT64);
  } else if (ret_kind == 3) {
    ret = CK_BUILTIN(CK_TYPE_FLOAT64);
  } else if (ret_id == CK_TYPE_DATETIME) {
    if ((st = ck_datetime_type_new((ck_time_unit)unit, tz, &ret)) != CK_OK) {
      return st;
    }
  } else {
    if ((st = ck_timedelta_type_new((ck_time_unit)unit, &ret)) != CK_OK) {
      return st;
    }
  }
  size_t end = offset + sizeof(ck__top_kernel);
  if ((st = ck_kernel_builder_ensure_capacity_leaf(ckb, end)) != CK_OK) {
    ck_type_decref(ret);
    return st;
  }
  ck__top_kernel *k = (ck__top_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__top_destruct;
  k->op = op;
  k->nargs = (int32_t)nargs;
  k->unit = unit;
  k->ret_kind = ret_kind;
  for (size_t j = 0; j < nargs; j++) {
    k->cls[j] = cls[j];
    k->from[j] = cls[j] == CK__O_TIME ? ck_time_type_unit(arg_types[j]) : -1;
    ck_type_id tj = ck_type_id_of(arg_types[j]);
    k->instant[j] = tj == CK_TYPE_DATETIME || tj == CK_TYPE_DATE;
    k->wide[j] = ck_type_data_size(arg_types[j]) == 8;
    k->factor[j] = 0;
    if (cls[j] == CK__O_TIME) {
      /* `unit` is never coarser than an operand's: linear units (and calendar
       * durations Y -> M) convert by an exact integer factor */
      bool cal_from = k->from[j] == CK_UNIT_Y || k->from[j] == CK_UNIT_M;
      bool cal_to = unit == CK_UNIT_Y || unit == CK_UNIT_M;
      if (!k->instant[j] || cal_from == cal_to || !cal_from) {
        int64_t f;
        bool exact;
        if (ck_time_convert(1, (ck_time_unit)k->from[j], (ck_time_unit)unit, false, &f,
                            &exact) == CK_OK && exact && f > 0) {
          k->factor[j] = f;
        }
      }
    }
    ck_type_incref(arg_types[j]);
    k->arg[j] = arg_types[j];
  }
  ck_type_incref(ret);
  k->ret = ret;
  (void)ck_prefix_set_function(&k->base, req, ck__top1, ck__topN);
  *out_ret = ret;
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}
