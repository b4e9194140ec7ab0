/*
 * assign_option.c -- assignment kernels involving option types `?T`
 * (ckernel/assign_array.h, docs/kernel-abi.md "Option types"):
 *
 *   ?U <- ?T   the value conversion runs on valid slots only, in runs of
 *              consecutive valid slots (one strided child call per run);
 *              nulls are copied as nulls (the value bytes stay as they were)
 *   ?U <- T    every slot converted and marked valid (a time type's NaT
 *              becomes a null: ckernel/datetime.h)
 *   U  <- ?T   CK_ERR_VALUE at the first null, unless a fill value is given:
 *              then each null receives the fill value (converted to U)
 *
 * The child conversion is built with the caller's error mode, so no
 * conversion error is ever raised on a null slot.  The kernel keeps copies
 * of both option arrmeta (and a reference to each bitmap's block) and finds
 * the bits of each strided run once, from the run's first and last data
 * addresses (ck_option_slot_bits); runs of valid slots are found 64 bits at
 * a time where the bits are consecutive.
 */
#include "kernels/lift_internal.h"
#include "kernels/builder_internal.h"
#include "types/type_internal.h"
#include "ckernel/validity.h"
#include "ckernel/datetime.h"

#include <inttypes.h>
#include <pthread.h>
#include <string.h>

enum { CK__OPT_BOTH = 0, CK__OPT_TO = 1, CK__OPT_FROM = 2 };

typedef struct ck__option_kernel {
  ck_prefix base;
  int32_t kind;           /* CK__OPT_* */
  int32_t has_fill;       /* FROM: nulls take the fill value */
  ck_option_arrmeta dst;  /* copies; blockref holds one reference */
  ck_option_arrmeta src;
  const char *fill_data;  /* FROM with fill: the fill value (dst's type) */
  ck_memblock *fill_ref;  /* keeps fill_data alive */
  size_t value_offset;    /* the value conversion (strided), 0 while not built */
  size_t fill_offset;     /* copy of the fill value (strided), 0 when none */
  size_t nat_size;        /* U a time type: its data size (a NaT value is a
                             null), else 0 */
} ck__option_kernel;

/* Whether the converted time value at `p` (nat_size bytes) is NaT. */
static bool ck__is_nat(const char *p, size_t nat_size) {
  if (nat_size == 4) {
    int32_t v;
    memcpy(&v, p, 4);
    return v == INT32_MIN;
  }
  int64_t v;
  memcpy(&v, p, 8);
  return v == INT64_MIN;
}

/* Mark the destination slots [i, j) valid: a byte-wide range when their bits
 * are consecutive, bit by bit otherwise. */
static ck_status ck__set_valid_run(const ck__option_kernel *k, int64_t d0, int64_t dstep,
                                   size_t i, size_t j) {
  if (k->dst.bits == NULL) {
    return CK_OK;
  }
  if (dstep == 1) {
    ck_bitmap_set_range(k->dst.bits, d0 + (int64_t)i, (int64_t)(j - i), true);
    return CK_OK;
  }
  for (size_t q = i; q < j; q++) {
    ck_bitmap_set(k->dst.bits, d0 + (int64_t)q * dstep, true);
  }
  return CK_OK;
}

/* The end of the run of valid source slots that starts at i: 64 bits at a
 * time when the bits are consecutive. */
static size_t ck__valid_run_end(const ck__option_kernel *k, int64_t s0, int64_t sstep,
                                size_t i, size_t count) {
  if (k->kind == CK__OPT_TO || k->src.bits == NULL) {
    return count;
  }
  if (sstep == 1) {
    int64_t off = ck_bitmap_find_unset(k->src.bits, s0 + (int64_t)i, (int64_t)(count - i));
    return off < 0 ? count : i + (size_t)off;
  }
  size_t j = i;
  while (j < count && ck_bitmap_get(k->src.bits, s0 + (int64_t)j * sstep)) {
    j++;
  }
  return j;
}

static int ck__option_strided(char *dst, intptr_t ds, const char *const *src,
                              const intptr_t *ss, size_t count, ck_prefix *self) {
  const ck__option_kernel *k = (const ck__option_kernel *)(void *)self;
  ck_prefix *value = ck_prefix_child(self, k->value_offset);
  ck_expr_strided_t vf = ck_prefix_strided(value);
  const char *s0 = src[0];
  intptr_t sstride = ss[0];
  /* every slot's bit, found once for the run (each slot checked in range) */
  int64_t sb0 = -1, sstep = 0, db0 = -1, dstep = 0;
  ck_status st;
  if ((k->kind != CK__OPT_TO &&
       (st = ck_option_slot_bits(&k->src, s0, sstride, count, &sb0, &sstep)) != CK_OK) ||
      (k->kind != CK__OPT_FROM &&
       (st = ck_option_slot_bits(&k->dst, dst, ds, count, &db0, &dstep)) != CK_OK)) {
    return st;
  }
  size_t i = 0;
  while (i < count) {
    size_t j = ck__valid_run_end(k, sb0, sstep, i, count);
    if (j > i) {
      char *d = (char *)((uintptr_t)dst + (uintptr_t)((intptr_t)i * ds));
      const char *s = (const char *)((uintptr_t)s0 + (uintptr_t)((intptr_t)i * sstride));
      int r = vf(d, ds, &s, &sstride, j - i, value);
      if (r != 0) {
        return r;
      }
      if (k->kind != CK__OPT_FROM &&
          (st = ck__set_valid_run(k, db0, dstep, i, j)) != CK_OK) {
        return st;
      }
      if (k->kind != CK__OPT_FROM && k->nat_size != 0) {
        for (size_t q = i; q < j; q++) { /* a NaT converted is a null */
          const char *dq = (const char *)((uintptr_t)dst + (uintptr_t)((intptr_t)q * ds));
          if (!ck__is_nat(dq, k->nat_size)) {
            continue;
          }
          if (k->dst.bits == NULL) {
            return CK_ERROR(CK_ERR_INVALID_STATE, "the destination option slot has no "
                            "validity bitmap to hold a null (a NaT)");
          }
          ck_bitmap_set(k->dst.bits, db0 + (int64_t)q * dstep, false);
        }
      }
      i = j;
      continue;
    }
    /* slot i is null */
    char *d = (char *)((uintptr_t)dst + (uintptr_t)((intptr_t)i * ds));
    if (k->kind == CK__OPT_BOTH) {
      if (k->dst.bits == NULL) {
        return CK_ERROR(CK_ERR_INVALID_STATE,
                        "the destination option slot has no validity bitmap to hold "
                        "a null (option items of var rows get one when an assignment "
                        "allocates the rows of a new array, not of a view: "
                        "docs/nulls.md \"Assigning rows with nulls\")");
      }
      ck_bitmap_set(k->dst.bits, db0 + (int64_t)i * dstep, false);
    } else if (k->has_fill) {
      ck_prefix *fill = ck_prefix_child(self, k->fill_offset);
      intptr_t zero = 0;
      int r = ck_prefix_strided(fill)(d, ds, &k->fill_data, &zero, 1, fill);
      if (r != 0) {
        return r;
      }
    } else {
      return CK_ERROR(CK_ERR_VALUE,
                      "element %zu of this run is null and the destination is not an "
                      "option type: give a fill value or assign to an option type", i);
    }
    i++;
  }
  return 0;
}

static int ck__option_single(char *dst, const char *const *src, ck_prefix *self) {
  intptr_t zero = 0;
  return ck__option_strided(dst, 0, src, &zero, 1, self);
}

static void ck__option_destruct(ck_prefix *self) {
  ck__option_kernel *k = (ck__option_kernel *)(void *)self;
  ck_memblock_decref(k->dst.blockref);
  ck_memblock_decref(k->src.blockref);
  ck_memblock_decref(k->fill_ref);
  if (k->value_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->value_offset));
  }
  if (k->fill_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->fill_offset));
  }
}

static size_t ck__option_children(const ck_prefix *self, const ck_kernel_info *info,
                                  size_t *rel, size_t max) {
  (void)info;
  const ck__option_kernel *k = (const ck__option_kernel *)(const void *)self;
  size_t n = 0;
  size_t offs[2] = {k->value_offset, k->fill_offset};
  for (size_t i = 0; i < 2; i++) {
    if (offs[i] != 0) {
      if (n < max) {
        rel[n] = offs[i];
      }
      n++;
    }
  }
  return n;
}

static const ck_kernel_info ck__option_info = {
    "option_assign", ck__option_single, ck__option_strided, sizeof(ck__option_kernel),
    ck__option_children};
static pthread_once_t ck__option_info_once = PTHREAD_ONCE_INIT;
static void ck__option_info_init(void) {
  (void)ck_kernel_info_register(&ck__option_info);
}

ck_status ck__make_option_assign(ck_kernel_builder *ckb, size_t offset, ck_type dt,
                                 const char *dm, ck_type st, const char *sm,
                                 ck_kernel_request req, ck_errmode mode,
                                 const ck_array_preamble *fill,
                                 ck_child_kernel_factory assign, size_t *out_end) {
  const char *func = "ck_make_assignment_kernel";
  bool dopt = ck_type_is_option(dt), sopt = ck_type_is_option(st);
  if (dm == NULL || sm == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL option arrmeta");
  }
  (void)pthread_once(&ck__option_info_once, ck__option_info_init);
  size_t cur = ck_kernel_align_offset(offset + sizeof(ck__option_kernel));
  ck_status s = ck_kernel_builder_ensure_capacity(ckb, cur);
  if (s != CK_OK) {
    return s;
  }
  ck__option_kernel *k = (ck__option_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__option_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__option_single, ck__option_strided);
  int32_t kind = dopt && sopt ? CK__OPT_BOTH : dopt ? CK__OPT_TO : CK__OPT_FROM;
  k->kind = kind;
  if (dopt) {
    k->dst = *(const ck_option_arrmeta *)(const void *)dm;
    ck_memblock_incref(k->dst.blockref);
    dm += sizeof(ck_option_arrmeta);
    dt = dt->element;
    k->nat_size = ck_type_is_time(dt) ? ck_type_data_size(dt) : 0;
  }
  if (sopt) {
    k->src = *(const ck_option_arrmeta *)(const void *)sm;
    ck_memblock_incref(k->src.blockref);
    sm += sizeof(ck_option_arrmeta);
    st = st->element;
  }
  if (fill != NULL && kind == CK__OPT_FROM) {
    k->has_fill = 1;
    k->fill_data = fill->data;
    k->fill_ref = (ck_memblock *)(uintptr_t)&fill->memblock;
    ck_memblock_incref(k->fill_ref);
  }
  /* the value conversion, then the fill copy */
  if ((s = ck_kernel_builder_ensure_capacity_leaf(ckb, cur + sizeof(ck_prefix))) != CK_OK) {
    return s;
  }
  k = (ck__option_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->value_offset = cur - offset;
  size_t end;
  s = assign(&mode, ckb, cur, dt, dm, 1, &st, &sm, CK_KERNEL_REQUEST_STRIDED, &end);
  if (s != CK_OK) {
    return s;
  }
  cur = ck_kernel_align_offset(end);
  if (fill != NULL && kind == CK__OPT_FROM) {
    if ((s = ck_kernel_builder_ensure_capacity_leaf(ckb, cur + sizeof(ck_prefix))) !=
        CK_OK) {
      return s;
    }
    k = (ck__option_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
    k->fill_offset = cur - offset;
    ck_type ft = fill->type;
    const char *fm = ck_array_arrmeta(fill);
    s = assign(&mode, ckb, cur, dt, dm, 1, &ft, &fm, CK_KERNEL_REQUEST_STRIDED, &end);
    if (s != CK_OK) {
      return ck__error_context(s, func, "the fill value");
    }
    cur = ck_kernel_align_offset(end);
  }
  if (out_end != NULL) {
    *out_end = cur;
  }
  return CK_OK;
}
