/*
 * jit_option.c -- null-aware jitted kernels: signatures with option types
 * `?T` (ck_jit_option_child_factory, ckernel/jit.h).
 *
 * The wrapper runs the jitted leaf one element at a time through its single
 * entry point.  An argument declared `?T` whose slot is null is passed as a
 * NULL source pointer (the generated code gives the function `None`); an
 * argument declared `T` whose slot is null makes the result null without a
 * call (propagation).  A `?R` result is written by the leaf into a scratch
 * `{value; uint8 valid}` (CK_JIT_OPTION_SCRATCH bytes), copied to the
 * destination and its bit set from the flag.
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

static int ck__jit_option_run(char *dst, intptr_t ds, const char *const *src,
                              const intptr_t *ss, size_t count, ck_prefix *self) {
  const ck__jit_option_kernel *k = (const ck__jit_option_kernel *)(void *)self;
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  ck_expr_single_t fn = ck_prefix_single(child);
  _Alignas(16) char scratch[CK_JIT_OPTION_SCRATCH];
  if (count == 0) {
    return 0;
  }
  /* Each bitmap's bit of slot i is bit0 + i * step (ck_option_slot_bits
   * checks the first and last slots once): no address division per slot. */
  int64_t b0[CK_LIFT_MAX_NSRC], bs[CK_LIFT_MAX_NSRC], d0 = -1, dstep = 0;
  ck_status st;
  for (uint32_t j = 0; j < k->nsrc; j++) {
    b0[j] = -1;
    bs[j] = 0;
    if (k->src_option[j] &&
        (st = ck_option_slot_bits(&k->src[j], src[j], ss[j], count, &b0[j], &bs[j])) !=
            CK_OK) {
      return st;
    }
  }
  if (k->dst_option && (st = ck_option_slot_bits(&k->dst, dst, ds, count, &d0, &dstep)) !=
                           CK_OK) {
    return st;
  }
  for (size_t i = 0; i < count; i++) {
    const char *s[CK_LIFT_MAX_NSRC];
    bool valid = true;
    for (uint32_t j = 0; j < k->nsrc; j++) {
      s[j] = (const char *)((uintptr_t)src[j] + (uintptr_t)((intptr_t)i * ss[j]));
      if (b0[j] < 0) {    /* not an option, or no nulls */
        continue;
      }
      bool v = ck_bitmap_get(k->src[j].bits, b0[j] + (int64_t)i * bs[j]);
      if (!v) {
        if (k->src_nullable & (1u << j)) {
          s[j] = NULL; /* the function gets None */
        } else {
          valid = false; /* a plain argument: the result is null */
        }
      }
    }
    char *d = (char *)((uintptr_t)dst + (uintptr_t)((intptr_t)i * ds));
    if (valid) {
      if (k->dst_nullable) {
        memset(scratch, 0, sizeof scratch);
        int r = fn(scratch, s, child);
        if (r != 0) {
          return r;
        }
        valid = scratch[k->value_size] != 0;
        if (valid) {
          memcpy(d, scratch, k->value_size);
        }
      } else {
        int r = fn(d, s, child);
        if (r != 0) {
          return r;
        }
      }
    }
    if (k->dst_option) {
      if (d0 >= 0) {
        ck_bitmap_set(k->dst.bits, d0 + (int64_t)i * dstep, valid);
      } else if (!valid && (st = ck_option_set_valid(&k->dst, d, valid)) != CK_OK) {
        return st;   /* no bitmap to hold the null */
      }
    } else if (!valid) {
      return CK_ERROR(CK_ERR_VALUE, "a null result at element %zu, and the destination is "
                      "not an option type", i);
    }
  }
  return 0;
}

/* The elements run one by one through the leaf's single entry point: the
 * string scratch arena is held for the loop, not made and freed per element. */
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
                            CK_KERNEL_REQUEST_SINGLE, out_end);
}
