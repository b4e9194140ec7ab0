/*
 * lift_option.c -- null propagation around an elementwise child kernel
 * (ck_null_propagating_child_factory, ckernel/lift.h).
 *
 * The wrapper computes each destination slot's validity as the AND of its
 * option sources' validity -- with ck_bitmap_and, 64 bits at a time, when
 * the destination and every option source are laid out one slot after the
 * other (stride == step), slot by slot otherwise -- and runs the child only
 * on runs of valid slots, so a child with checked errors (integer division
 * by zero, overflow, checked casts) never sees the value under a null.
 * Kleene and/or (Arrow's and_kleene / or_kleene) give a value where the
 * known operands decide it: false AND null = false, true OR null = true.
 * CK_NULLS_PROPAGATE_ALL_SLOTS (a child that cannot fail) computes the
 * validity the same way and then runs the child once over every slot: no
 * search for runs, one call whatever the number of nulls.
 */
#include "kernels/lift_internal.h"
#include "kernels/builder_internal.h"
#include "types/type_internal.h"
#include "ckernel/validity.h"

#include <pthread.h>
#include <string.h>

typedef struct ck__nullprop_kernel {
  ck_prefix base;
  uint32_t nsrc;
  uint32_t kleene;        /* CK_NULLS_PROPAGATE / _KLEENE_AND / _KLEENE_OR */
  size_t child_offset;    /* the value kernel (strided); 0 while not built */
  ck_option_arrmeta dst;  /* copies; each blockref holds one reference */
  ck_option_arrmeta src[CK_LIFT_MAX_NSRC]; /* bits NULL: no nulls (or not an option) */
} ck__nullprop_kernel;

static inline const char *ck__at(const char *p, intptr_t stride, size_t i) {
  return (const char *)((uintptr_t)p + (uintptr_t)((intptr_t)i * stride));
}

/* Validity of slot i of source j (true without a bitmap). */
static ck_status ck__src_valid(const ck__nullprop_kernel *k, size_t j, const char *p,
                               bool *out) {
  *out = true;
  if (k->src[j].bits == NULL) {
    return CK_OK;
  }
  int64_t bit;
  ck_status st = ck_option_slot_bit(&k->src[j], p, &bit);
  if (st == CK_OK) {
    *out = ck_bitmap_get(k->src[j].bits, bit);
  }
  return st;
}

/* The fast path: every bitmap walked one bit per slot.  Writes the AND of
 * the sources' bits into the destination's; false when it does not apply. */
static ck_status ck__and_words(const ck__nullprop_kernel *k, char *dst, intptr_t ds,
                               const char *const *src, const intptr_t *ss, size_t count,
                               int64_t *out_dbit, bool *done) {
  *done = false;
  if ((k->kleene != CK_NULLS_PROPAGATE && k->kleene != CK_NULLS_PROPAGATE_ALL_SLOTS) ||
      k->dst.bits == NULL || ds != k->dst.step) {
    return CK_OK;
  }
  for (uint32_t j = 0; j < k->nsrc; j++) {
    if (k->src[j].bits != NULL && ss[j] != k->src[j].step) {
      return CK_OK;
    }
  }
  int64_t d0, d1;
  ck_status st = ck_option_slot_bit(&k->dst, dst, &d0);
  if (st == CK_OK) {
    st = ck_option_slot_bit(&k->dst, ck__at(dst, ds, count - 1), &d1);
  }
  if (st != CK_OK) {
    return st;
  }
  ck_bitmap_set_range(k->dst.bits, d0, (int64_t)count, true);
  for (uint32_t j = 0; j < k->nsrc; j++) {
    if (k->src[j].bits == NULL) {
      continue;
    }
    int64_t s0, s1;
    st = ck_option_slot_bit(&k->src[j], src[j], &s0);
    if (st == CK_OK) {
      st = ck_option_slot_bit(&k->src[j], ck__at(src[j], ss[j], count - 1), &s1);
    }
    if (st != CK_OK) {
      return st;
    }
    ck_bitmap_and(k->dst.bits, d0, k->dst.bits, d0, k->src[j].bits, s0, (int64_t)count);
  }
  *out_dbit = d0;
  *done = true;
  return CK_OK;
}

/* Run the child on slots [i, j). */
static int ck__run_child(const ck__nullprop_kernel *k, ck_prefix *child, char *dst,
                         intptr_t ds, const char *const *src, const intptr_t *ss, size_t i,
                         size_t j) {
  const char *s[CK_LIFT_MAX_NSRC];
  for (uint32_t q = 0; q < k->nsrc; q++) {
    s[q] = ck__at(src[q], ss[q], i);
  }
  int st = ck_prefix_strided(child)((char *)(uintptr_t)ck__at(dst, ds, i), ds, s, ss, j - i,
                                     child);
  if (st != 0) {
    ck_error_offset_element((int64_t)i); /* the run starts at slot i */
  }
  return st;
}

/* Kleene and/or at a slot where some operand is null: whether the known
 * operands decide the result, and its value. */
static ck_status ck__kleene(const ck__nullprop_kernel *k, const char *const *src,
                            const intptr_t *ss, size_t i, bool *decided, bool *value) {
  bool absorbing = k->kleene == CK_NULLS_KLEENE_OR; /* true for or, false for and */
  *decided = false;
  for (uint32_t j = 0; j < k->nsrc; j++) {
    const char *p = ck__at(src[j], ss[j], i);
    bool v;
    ck_status st = ck__src_valid(k, j, p, &v);
    if (st != CK_OK) {
      return st;
    }
    if (v && ((*p != 0) == absorbing)) {
      *decided = true;
      *value = absorbing;
      return CK_OK;
    }
  }
  return CK_OK;
}

/* CK_NULLS_PROPAGATE_ALL_SLOTS: the destination's validity (already
 * written when `words`), then the child over all `count` slots at once. */
static int ck__all_slots(const ck__nullprop_kernel *k, ck_prefix *child, char *dst,
                         intptr_t ds, const char *const *src, const intptr_t *ss,
                         size_t count, bool words) {
  ck_status st;
  for (size_t i = 0; i < count && !words; i++) {
    bool all = true;
    for (uint32_t q = 0; q < k->nsrc && all; q++) {
      if ((st = ck__src_valid(k, q, ck__at(src[q], ss[q], i), &all)) != CK_OK) {
        return st;
      }
    }
    if ((st = ck_option_set_valid(&k->dst, ck__at(dst, ds, i), all)) != CK_OK) {
      return st;
    }
  }
  return ck__run_child(k, child, dst, ds, src, ss, 0, count);
}

static int ck__nullprop_strided(char *dst, intptr_t ds, const char *const *src,
                                const intptr_t *ss, size_t count, ck_prefix *self) {
  const ck__nullprop_kernel *k = (const ck__nullprop_kernel *)(void *)self;
  ck_prefix *child = ck_prefix_child(self, k->child_offset);
  if (count == 0) {
    return 0;
  }
  int64_t d0 = 0;
  bool words;
  ck_status st = ck__and_words(k, dst, ds, src, ss, count, &d0, &words);
  if (st != CK_OK) {
    return st;
  }
  if (k->kleene == CK_NULLS_PROPAGATE_ALL_SLOTS) {
    return ck__all_slots(k, child, dst, ds, src, ss, count, words);
  }
  size_t i = 0;
  while (i < count) {
    size_t j = i;
    if (words) { /* the destination bits already hold the result */
      int64_t off = ck_bitmap_find_unset(k->dst.bits, d0 + (int64_t)i, (int64_t)(count - i));
      j = off < 0 ? count : i + (size_t)off;
    } else {
      for (; j < count; j++) {
        bool all = true;
        for (uint32_t q = 0; q < k->nsrc && all; q++) {
          if ((st = ck__src_valid(k, q, ck__at(src[q], ss[q], j), &all)) != CK_OK) {
            return st;
          }
        }
        if (!all) {
          break;
        }
      }
    }
    if (j > i) {
      int r = ck__run_child(k, child, dst, ds, src, ss, i, j);
      if (r != 0) {
        return r;
      }
      if (!words) {
        for (size_t q = i; q < j; q++) {
          if ((st = ck_option_set_valid(&k->dst, ck__at(dst, ds, q), true)) != CK_OK) {
            return st;
          }
        }
      }
      i = j;
      continue;
    }
    /* slot i has a null operand */
    char *d = (char *)(uintptr_t)ck__at(dst, ds, i);
    bool decided = false, value = false;
    if (k->kleene != CK_NULLS_PROPAGATE &&
        (st = ck__kleene(k, src, ss, i, &decided, &value)) != CK_OK) {
      return st;
    }
    if (decided) {
      *d = (char)value;
    }
    if (!words || decided) {
      if ((st = ck_option_set_valid(&k->dst, d, decided)) != CK_OK) {
        return st;
      }
    }
    i++;
  }
  return 0;
}

static int ck__nullprop_single(char *dst, const char *const *src, ck_prefix *self) {
  intptr_t ss[CK_LIFT_MAX_NSRC] = {0};
  return ck__nullprop_strided(dst, 0, src, ss, 1, self);
}

static void ck__nullprop_destruct(ck_prefix *self) {
  ck__nullprop_kernel *k = (ck__nullprop_kernel *)(void *)self;
  ck_memblock_decref(k->dst.blockref);
  for (uint32_t j = 0; j < k->nsrc; j++) {
    ck_memblock_decref(k->src[j].blockref);
  }
  if (k->child_offset != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, k->child_offset));
  }
}

static size_t ck__nullprop_children(const ck_prefix *self, const ck_kernel_info *info,
                                    size_t *rel, size_t max) {
  (void)info;
  const ck__nullprop_kernel *k = (const ck__nullprop_kernel *)(const void *)self;
  if (k->child_offset == 0) {
    return 0;
  }
  if (max > 0) {
    rel[0] = k->child_offset;
  }
  return 1;
}

static const ck_kernel_info ck__nullprop_info = {
    "null_propagation", ck__nullprop_single, ck__nullprop_strided,
    sizeof(ck__nullprop_kernel), ck__nullprop_children};
static pthread_once_t ck__nullprop_once = PTHREAD_ONCE_INIT;
static void ck__nullprop_info_init(void) {
  (void)ck_kernel_info_register(&ck__nullprop_info);
}

ck_status ck_null_propagating_child_factory(void *child_data, ck_kernel_builder *ckb,
                                            size_t offset, ck_type dst_type,
                                            const char *dst_arrmeta, size_t nsrc,
                                            const ck_type *src_types,
                                            const char *const *src_arrmeta,
                                            ck_kernel_request req, size_t *out_end) {
  const ck_null_propagation *np = child_data;
  if (np == NULL || np->child == NULL || nsrc > CK_LIFT_MAX_NSRC ||
      (nsrc > 0 && (src_types == NULL || src_arrmeta == NULL))) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "bad null propagation arguments");
  }
  bool any = false;
  for (size_t j = 0; j < nsrc; j++) {
    any = any || ck_type_is_option(src_types[j]);
  }
  if (!any && !ck_type_is_option(dst_type)) {
    return np->child(np->child_data, ckb, offset, dst_type, dst_arrmeta, nsrc, src_types,
                     src_arrmeta, req, out_end);
  }
  char tb[96];
  if (!ck_type_is_option(dst_type)) {
    return CK_ERROR(CK_ERR_TYPE, "a source is an option type, so the result must be one "
                    "too, not '%s'", ck__type_str(dst_type, tb, sizeof tb));
  }
  if (dst_arrmeta == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL destination arrmeta");
  }
  if (np->kleene < CK_NULLS_PROPAGATE || np->kleene > CK_NULLS_PROPAGATE_ALL_SLOTS) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "unknown null propagation mode %d", np->kleene);
  }
  if (np->kleene == CK_NULLS_KLEENE_AND || np->kleene == CK_NULLS_KLEENE_OR) {
    bool ok = dst_type->element == CK_BUILTIN(CK_TYPE_BOOL);
    for (size_t j = 0; j < nsrc; j++) {
      ck_type v = ck_type_is_option(src_types[j]) ? src_types[j]->element : src_types[j];
      ok = ok && v == CK_BUILTIN(CK_TYPE_BOOL);
    }
    if (!ok) {
      return CK_ERROR(CK_ERR_TYPE, "Kleene logic needs bool operands and a ?bool result");
    }
  }
  (void)pthread_once(&ck__nullprop_once, ck__nullprop_info_init);
  size_t cur = ck_kernel_align_offset(offset + sizeof(ck__nullprop_kernel));
  ck_status s = ck_kernel_builder_ensure_capacity(ckb, cur);
  if (s != CK_OK) {
    return s;
  }
  ck__nullprop_kernel *k = (ck__nullprop_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = ck__nullprop_destruct;
  (void)ck_prefix_set_function(&k->base, req, ck__nullprop_single, ck__nullprop_strided);
  k->nsrc = (uint32_t)nsrc;
  k->kleene = (uint32_t)np->kleene;
  k->dst = *(const ck_option_arrmeta *)(const void *)dst_arrmeta;
  ck_memblock_incref(k->dst.blockref);
  ck_type vtypes[CK_LIFT_MAX_NSRC];
  const char *vmeta[CK_LIFT_MAX_NSRC];
  for (size_t j = 0; j < nsrc; j++) {
    vtypes[j] = src_types[j];
    vmeta[j] = src_arrmeta[j];
    if (ck_type_is_option(src_types[j])) {
      if (src_arrmeta[j] == NULL) {
        return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL option arrmeta of source %zu", j);
      }
      k->src[j] = *(const ck_option_arrmeta *)(const void *)src_arrmeta[j];
      ck_memblock_incref(k->src[j].blockref);
      vtypes[j] = src_types[j]->element;
      vmeta[j] = src_arrmeta[j] + sizeof(ck_option_arrmeta);
    }
  }
  if ((s = ck_kernel_builder_ensure_capacity_leaf(ckb, cur + sizeof(ck_prefix))) != CK_OK) {
    return s;
  }
  k = (ck__nullprop_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->child_offset = cur - offset;
  return np->child(np->child_data, ckb, cur, dst_type->element,
                   dst_arrmeta + sizeof(ck_option_arrmeta), nsrc, vtypes, vmeta,
                   CK_KERNEL_REQUEST_STRIDED, out_end);
}
