/*
 * jit_option.c -- null-aware jitted kernels: signatures with option types
 * `?T` (ck_jit_option_child_factory, ckernel/jit.h).
 *
 * The wrapper runs the jitted leaf's strided entry point over each run of
 * slots where every argument is valid, and over each slot holding a null
 * alone (a call of one element): an argument declared `?T` whose slot is
 * null is passed as a NULL source pointer (the generated code gives the
 * function `None`); an argument declared `T` whose slot is null makes the
 * result null without a call (propagation).  A `?R` result is written by the
 * leaf into scratch records `{value; uint8 valid}` (CK_JIT_OPTION_SCRATCH
 * bytes each), copied to the destination and its bit set from the flag.
 */
#include "core/core_internal.h"
#include "kernels/builder_internal.h"
#include "ckernel/jit.h"
#include "ckernel/validity.h"
#include "strings/strings_internal.h"

#include <pthread.h>
#include <string.h>

typedef struct ck__jit_option_kernel {
  ck_prefix base;
  uint32_t nsrc;
  uint32_t src_nullable;    /* bit j: argument j is `?T` in the signature */
  uint32_t dst_nullable;    /* the signature's result is `?R`             */
  uint32_t dst_option;      /* the destination is an option               */
  size_t value_size;        /* bytes of the result value                  */
  size_t child_offset;
  ck_option_arrmeta dst;    /* copies; each blockref holds one reference  */
  ck_option_arrmeta src[CK_LIFT_MAX_NSRC];
  uint32_t src_option[CK_LIFT_MAX_NSRC]; /* operand j is an option        */
} ck__jit_option_kernel;

/* Where slot i's validity bits are: bit0 + i * step of each bitmap
 * (ck_option_slot_bits checks the first and last slots once; no address
 * division per slot); bit0 < 0: no bitmap (not an option, or no nulls). */
typedef struct ck__opt_bits {
  int64_t b0[CK_LIFT_MAX_NSRC], bs[CK_LIFT_MAX_NSRC];
  int64_t d0, dstep;
} ck__opt_bits;

enum { CK__OPT_CHUNK = 64 }; /* `?R` results of a run: scratch records per call */

static inline const char *ck__opt_at(const char *p, intptr_t stride, size_t i) {
  return (const char *)((uintptr_t)p + (uintptr_t)((intptr_t)i * stride));
}

/* The end of the run of slots from i (before count) where every argument is
 * valid: 64 bits at a time for bitmaps of step 1 (ck_bitmap_find_unset). */
static size_t ck__opt_valid_end(const ck__jit_option_kernel *k, const ck__opt_bits *b,
                                size_t i, size_t count) {
  size_t end = count;
  for (uint32_t j = 0; j < k->nsrc && end > i; j++) {
    if (b->b0[j] < 0) {
      continue;
    }
    if (b->bs[j] == 1) {
      int64_t f =
          ck_bitmap_find_unset(k->src[j].bits, b->b0[j] + (int64_t)i, (int64_t)(end - i));
      if (f >= 0) {
        end = i + (size_t)f;
      }
    } else {
      size_t e = i;
      while (e < end && ck_bitmap_get(k->src[j].bits, b->b0[j] + (int64_t)e * b->bs[j])) {
        e++;
      }
      end = e;
    }
  }
  return end;
}

/* The destination's validity of slot i (and the refusal of a null where it
 * cannot be held). */
static int ck__opt_set(const ck__jit_option_kernel *k, const ck__opt_bits *b, char *d,
                       size_t i, bool valid) {
  if (k->dst_option) {
    if (b->d0 >= 0) {
      ck_bitmap_set(k->dst.bits, b->d0 + (int64_t)i * b->dstep, valid);
      return 0;
    }
    return valid ? 0 : ck_option_set_valid(&k->dst, d, valid); /* no bitmap: an error */
  }
  if (!valid) {
    return CK_ERROR(CK_ERR_VALUE, "a null result at element %zu, and the destination is "
                    "not an option type", i);
  }
  return 0;
}

/* Slot i, which holds a null somewhere, alone (a strided call of one
 * element): a null `?T` argument is a NULL source, a null plain argument a
 * null result without a call. */
static int ck__opt_one(const ck__jit_option_kernel *k, const ck__opt_bits *b,
                       ck_prefix *child, char *dst, intptr_t ds, const char *const *src,
                       const intptr_t *ss, size_t i) {
  ck_expr_strided_t fn = ck_prefix_strided(child);
  _Alignas(16) char scratch[CK_JIT_OPTION_SCRATCH];
  const char *s[CK_LIFT_MAX_NSRC];
  bool valid = true;
  for (uint32_t j = 0; j < k->nsrc; j++) {
    s[j] = ck__opt_at(src[j], ss[j], i);
    if (b->b0[j] >= 0 && !ck_bitmap_get(k->src[j].bits, b->b0[j] + (int64_t)i * b->bs[j])) {
      if (k->src_nullable & (1u << j)) {
        s[j] = NULL; /* the function gets None */
      } else {
        valid = false; /* a plain argument: the result is null */
      }
    }
  }
  char *d = (char *)(uintptr_t)ck__opt_at(dst, ds, i);
  if (valid) {
    int r;
    if (k->dst_nullable) {
      memset(scratch, 0, sizeof scratch);
      if ((r = fn(scratch, CK_JIT_OPTION_SCRATCH, s, ss, 1, child)) != 0) {
        ck_error_offset_element((int64_t)i);
        return r;
      }
      valid = scratch[k->value_size] != 0;
      if (valid) {
        memcpy(d, scratch, k->value_size);
      }
    } else if ((r = fn(d, ds, s, ss, 1, child)) != 0) {
      ck_error_offset_element((int64_t)i);
      return r;
    }
  }
  return ck__opt_set(k, b, d, i, valid);
}

/* Slots [i, j), every argument valid, through the strided entry point: into
 * the destination, or (`?R` results) into scratch records of
 * CK_JIT_OPTION_SCRATCH bytes, CK__OPT_CHUNK at a time, copied out. */
static int ck__opt_run(const ck__jit_option_kernel *k, const ck__opt_bits *b,
                       ck_prefix *child, char *dst, intptr_t ds, const char *const *src,
                       const intptr_t *ss, size_t i, size_t j) {
  ck_expr_strided_t sfn = ck_prefix_strided(child);
  const char *s[CK_LIFT_MAX_NSRC];
  if (!k->dst_nullable) {
    for (uint32_t q = 0; q < k->nsrc; q++) {
      s[q] = ck__opt_at(src[q], ss[q], i);
    }
    int r = sfn((char *)(uintptr_t)ck__opt_at(dst, ds, i), ds, s, ss, j - i, child);
    if (r != 0) {
      ck_error_offset_element((int64_t)i);
      return r;
    }
    if (k->dst_option && b->d0 >= 0) {
      if (b->dstep == 1) {
        ck_bitmap_set_range(k->dst.bits, b->d0 + (int64_t)i, (int64_t)(j - i), true);
      } else {
        for (size_t e = i; e < j; e++) {
          ck_bitmap_set(k->dst.bits, b->d0 + (int64_t)e * b->dstep, true);
        }
      }
    }
    return 0;
  }
  _Alignas(16) char rec[CK__OPT_CHUNK * CK_JIT_OPTION_SCRATCH];
  for (size_t c = i; c < j; c += CK__OPT_CHUNK) {
    size_t n = j - c < CK__OPT_CHUNK ? j - c : CK__OPT_CHUNK;
    for (uint32_t q = 0; q < k->nsrc; q++) {
      s[q] = ck__opt_at(src[q], ss[q], c);
    }
    memset(rec, 0, n * CK_JIT_OPTION_SCRATCH);
    int r = sfn(rec, CK_JIT_OPTION_SCRATCH, s, ss, n, child);
    if (r != 0) {
      ck_error_offset_element((int64_t)c);
      return r;
    }
    for (size_t e = 0; e < n; e++) {
      const char *v = rec + e * CK_JIT_OPTION_SCRATCH;
      bool valid = v[k->value_size] != 0;
      char *d = (char *)(uintptr_t)ck__opt_at(dst, ds, c + e);
      if (valid) {
        memcpy(d, v, k->value_size);
      }
      if ((r = ck__opt_set(k, b, d, c + e, valid)) != 0) {
        return r;
      }
    }
  }
  return 0;
}

static int ck__jit_option_run(char *dst, intptr_t ds, const char *const *src,
                              const intptr_t *ss, size_t count, ck_prefix *self) {
  const ck__jit_option_kernel *k = (const ck__jit_option_kernel *)(void *)self;
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  if (count == 0) {
    return 0;
  }
  ck__opt_bits b;
  b.d0 = -1;
  b.dstep = 0;
  ck_status st;
  for (uint32_t j = 0; j < k->nsrc; j++) {
    b.b0[j] = -1;
    b.bs[j] = 0;
    if (k->src_option[j] &&
        (st = ck_option_slot_bits(&k->src[j], src[j], ss[j], count, &b.b0[j], &b.bs[j])) !=
            CK_OK) {
      return st;
    }
  }
  if (k->dst_option &&
      (st = ck_option_slot_bits(&k->dst, dst, ds, count, &b.d0, &b.dstep)) != CK_OK) {
    return st;
  }
  /* runs of slots where every argument is valid go through the leaf's strided
   * entry point in one call; a slot with a null goes alone */
  size_t i = 0;
  while (i < count) {
    size_t j = ck__opt_valid_end(k, &b, i, count);
    int r = j > i ? ck__opt_run(k, &b, child, dst, ds, src, ss, i, j)
                  : ck__opt_one(k, &b, child, dst, ds, src, ss, i);
    if (r != 0) {
      return r;
    }
    i = j > i ? j : i + 1;
  }
  return 0;
}

/* The string scratch arena is held for the loop: every call of the leaf
 * (a run, or a slot with a null alone) would otherwise make and free one. */
static int ck__jit_option_strided(char *dst, intptr_t ds, const char *const *src,
                                  const intptr_t *ss, size_t count, ck_prefix *self) {
  ck__str_scratch_hold();
  int r = ck__jit_option_run(dst, ds, src, ss, count, self);
  ck__str_scratch_release();
  return r;
}

static int ck__jit_option_single(char *dst, const char *const *src, ck_prefix *self) {
  intptr_t ss[CK_LIFT_MAX_NSRC] = {0};
  return ck__jit_option_strided(dst, 0, src, ss, 1, self);
}

static void ck__jit_option_destruct(ck_prefix *self) {
  ck__jit_option_kernel *k = (ck__jit_option_kernel *)(void *)self;
  ck_memblock_decref(k->dst.blockref);
  for (uint32_t j = 0; j < k->nsrc; j++) {
    ck_memblock_decref(k->src[j].blockref);
  }
  if (k->child_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->child_offset));
  }
}

static size_t ck__jit_option_children(const ck_prefix *self, const ck_kernel_info *info,
                                      size_t *rel, size_t max) {
  (void)info;
  const ck__jit_option_kernel *k = (const ck__jit_option_kernel *)(const void *)self;
  if (k->child_offset == 0) {
    return 0;
  }
  if (max > 0) {
    rel[0] = k->child_offset;
  }
  return 1;
}

static const ck_kernel_info ck__jit_option_info = {
    "jit_nullable", ck__jit_option_single, ck__jit_option_strided,
    sizeof(ck__jit_option_kernel), ck__jit_option_children};
static pthread_once_t ck__jit_option_once = PTHREAD_ONCE_INIT;
static void ck__jit_option_info_init(void) {
  (void)ck_kernel_info_register(&ck__jit_option_info);
}

ck_status ck_jit_option_child_factory(void *child_data, ck_kernel_builder *ckb,
                                      size_t offset, ck_type dst_type,
                                      const char *dst_arrmeta, size_t nsrc,
                                      const ck_type *src_types,
                                      const char *const *src_arrmeta,
                                      ck_kernel_request req, size_t *out_end) {
  const ck_jit_option_desc *od = child_data;
  if (od == NULL || od->desc == NULL || nsrc != od->desc->nsrc ||
      nsrc > CK_LIFT_MAX_NSRC || (nsrc > 0 && (src_types == NULL || src_arrmeta == NULL))) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "bad null-aware jit kernel arguments");
  }
  bool dst_option = ck_type_is_option(dst_type);
  ck_type dvalue = dst_option ? ck_type_element(dst_type) : dst_type;
  if (od->dst_nullable && !dst_option) {
    return CK_ERROR(CK_ERR_TYPE, "the jitted function '%.*s' returns an option type, so the "
                    "destination must be one", CK_JIT_NAME_MAX - 1, od->desc->name);
  }
  if (ck_type_id_of(dvalue) != od->desc->dst_id) {
    return CK_ERROR(CK_ERR_TYPE, "jitted kernel '%.*s': the destination has another type",
                    CK_JIT_NAME_MAX - 1, od->desc->name);
  }
  size_t vsize = ck_type_data_size(dvalue);
  if (od->dst_nullable && vsize + 1 > CK_JIT_OPTION_SCRATCH) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED, "an option result of %zu bytes", vsize);
  }
  if ((dst_option || od->dst_nullable) && dst_arrmeta == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL destination arrmeta");
  }
  for (size_t j = 0; j < nsrc; j++) {
    ck_type v = ck_type_is_option(src_types[j]) ? ck_type_element(src_types[j]) : src_types[j];
    if (ck_type_id_of(v) != od->desc->src_ids[j]) {
      return CK_ERROR(CK_ERR_TYPE, "jitted kernel '%.*s': argument %zu has another type",
                      CK_JIT_NAME_MAX - 1, od->desc->name, j);
    }
    if (ck_type_is_option(src_types[j]) && src_arrmeta[j] == NULL) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL option arrmeta of source %zu", j);
    }
  }
  (void)pthread_once(&ck__jit_option_once, ck__jit_option_info_init);
  size_t cur = ck_kernel_align_offset(offset + sizeof(ck__jit_option_kernel));
  ck_status s = ck_kernel_builder_ensure_capacity(ckb, cur);
  if (s != CK_OK) {
    return s;
  }
  ck__jit_option_kernel *k =
      (ck__jit_option_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__jit_option_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__jit_option_single, ck__jit_option_strided);
  k->nsrc = (uint32_t)nsrc;
  k->src_nullable = od->src_nullable;
  k->dst_nullable = od->dst_nullable ? 1u : 0u;
  k->dst_option = dst_option ? 1u : 0u;
  k->value_size = vsize;
  if (dst_option) {
    k->dst = *(const ck_option_arrmeta *)(const void *)dst_arrmeta;
    ck_memblock_incref(k->dst.blockref);
  }
  for (size_t j = 0; j < nsrc; j++) {
    if (ck_type_is_option(src_types[j])) {
      k->src[j] = *(const ck_option_arrmeta *)(const void *)src_arrmeta[j];
      ck_memblock_incref(k->src[j].blockref);
      k->src_option[j] = 1u;
    }
  }
  if ((s = ck_kernel_builder_ensure_capacity_leaf(ckb, cur + sizeof(ck_prefix))) != CK_OK) {
    return s;
  }
  k = (ck__jit_option_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->child_offset = cur - offset;
  return ck_jit_make_kernel(ckb, cur, od->desc,
                            dst_option ? dst_arrmeta + sizeof(ck_option_arrmeta) : dst_arrmeta,
                            CK_KERNEL_REQUEST_STRIDED, out_end);
}
