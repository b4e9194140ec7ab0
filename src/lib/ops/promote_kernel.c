/*
 * promote_kernel.c -- the converting parent kernel: it converts the
 * arguments whose types differ from a registered kernel's signature (safe
 * casts: nocheck builtin assignment kernels) and calls that kernel, its last
 * child.  Built by the registry (ck_op_make_kernel) when dispatch picked a
 * kernel through promotion (see ops/promote_internal.h).
 */
#include "ops/promote_internal.h"
#include "ops/ops_internal.h"
#include "kernels/builder_internal.h"

#include "ckernel/assign.h"

#include <pthread.h>
#include <stdalign.h>

/*
 * Layout: the prefix, then nargs argument slots.  Slot i has the offset of
 * its conversion child relative to the parent (0: the argument is passed
 * through unchanged) and the element size after conversion.  The op kernel
 * is the child at op_child (0 until it is being built).  Children follow
 * the slots: the conversions in argument order, then the op kernel.
 * Conversions are nocheck assignment kernels (every promotion is a safe
 * cast, so they never fail).  Scratch lives on the stack: the kernel data
 * is never written after construction.
 */
typedef struct ck__promote_arg {
  size_t child;
  size_t size;
} ck__promote_arg;

typedef struct ck__promote_ck {
  ck_prefix base;
  size_t nargs;
  size_t op_child;
  ck__promote_arg arg[]; /* nargs slots */
} ck__promote_ck;

enum {
  CK__PROMOTE_SCRATCH = 4096, /* bytes of stack per strided call */
  CK__PROMOTE_CHUNK = 128     /* elements per chunk at most */
};

static CK__OPS_INLINE int ck__promote_single_impl(char *dst, const char *const *src,
                                                  ck_prefix *self, size_t n) {
  const ck__promote_ck *e = (const ck__promote_ck *)(void *)self;
  alignas(16) char buf[CK_OP_MAX_ARGS][16];
  const char *s[CK_OP_MAX_ARGS];
  for (size_t i = 0; i < n; i++) {
    if (e->arg[i].child != 0) {
      ck_prefix *c = ck_prefix_child(self, e->arg[i].child);
      int st = ck_prefix_single(c)(buf[i], &src[i], c);
      if (st != 0) {
        return st;
      }
      s[i] = buf[i];
    } else {
      s[i] = src[i];
    }
  }
  ck_prefix *k = ck_prefix_child(self, e->op_child);
  return ck_prefix_single(k)(dst, s, k);
}

static CK__OPS_INLINE int ck__promote_strided_impl(char *dst, intptr_t ds,
                                                   const char *const *src,
                                                   const intptr_t *ss, size_t count,
                                                   ck_prefix *self, size_t n) {
  const ck__promote_ck *e = (const ck__promote_ck *)(void *)self;
  alignas(16) char scratch[CK__PROMOTE_SCRATCH];
  size_t per_elem = 0;
  for (size_t i = 0; i < n; i++) {
    per_elem += e->arg[i].child != 0 ? e->arg[i].size : 0;
  }
  size_t chunk = per_elem ? CK__PROMOTE_SCRATCH / per_elem : CK__PROMOTE_CHUNK;
  chunk = chunk > CK__PROMOTE_CHUNK ? CK__PROMOTE_CHUNK : chunk;
  ck_prefix *k = ck_prefix_child(self, e->op_child);
  ck_expr_strided_t kfn = ck_prefix_strided(k);
  const char *s[CK_OP_MAX_ARGS];
  intptr_t sst[CK_OP_MAX_ARGS];
  for (size_t done = 0; done < count;) {
    size_t m = count - done < chunk ? count - done : chunk;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
      const char *si = src[i] + (intptr_t)done * ss[i];
      if (e->arg[i].child != 0) {
        /* a broadcast argument (stride 0) is converted once per chunk */
        ck_prefix *c = ck_prefix_child(self, e->arg[i].child);
        size_t mi = ss[i] == 0 ? 1 : m;
        intptr_t out_stride = ss[i] == 0 ? 0 : (intptr_t)e->arg[i].size;
        int st = ck_prefix_strided(c)(scratch + at, out_stride, &si, &ss[i], mi, c);
        if (st != 0) {
          return st;
        }
        s[i] = scratch + at;
        sst[i] = out_stride;
        at += mi * e->arg[i].size;
      } else {
        s[i] = si;
        sst[i] = ss[i];
      }
    }
    int st = kfn(dst + (intptr_t)done * ds, ds, s, sst, m, k);
    if (st != 0) {
      return st;
    }
    done += m;
  }
  return 0;
}

static int ck__promote1_single(char *dst, const char *const *src, ck_prefix *self) {
  return ck__promote_single_impl(dst, src, self, 1);
}
static int ck__promote2_single(char *dst, const char *const *src, ck_prefix *self) {
  return ck__promote_single_impl(dst, src, self, 2);
}
static int ck__promoteN_single(char *dst, const char *const *src, ck_prefix *self) {
  return ck__promote_single_impl(dst, src, self,
                                 ((const ck__promote_ck *)(void *)self)->nargs);
}
static int ck__promote1_strided(char *dst, intptr_t ds, const char *const *src,
                                const intptr_t *ss, size_t count, ck_prefix *self) {
  return ck__promote_strided_impl(dst, ds, src, ss, count, self, 1);
}
static int ck__promote2_strided(char *dst, intptr_t ds, const char *const *src,
                                const intptr_t *ss, size_t count, ck_prefix *self) {
  return ck__promote_strided_impl(dst, ds, src, ss, count, self, 2);
}
static int ck__promoteN_strided(char *dst, intptr_t ds, const char *const *src,
                                const intptr_t *ss, size_t count, ck_prefix *self) {
  return ck__promote_strided_impl(dst, ds, src, ss, count, self,
                                  ((const ck__promote_ck *)(void *)self)->nargs);
}

static void ck__promote_destroy(ck_prefix *self) {
  ck__promote_ck *e = (ck__promote_ck *)(void *)self;
  for (size_t i = 0; i < e->nargs; i++) {
    if (e->arg[i].child != 0) {
      ck_prefix_destroy_child(ck_prefix_child(self, e->arg[i].child));
    }
  }
  if (e->op_child != 0) {
    ck_prefix_destroy_child(ck_prefix_child(self, e->op_child));
  }
}

static size_t ck__promote_children(const ck_prefix *self, const ck_kernel_info *info,
                                   size_t *rel, size_t max) {
  (void)info;
  const ck__promote_ck *e = (const ck__promote_ck *)(const void *)self;
  size_t n = 0;
  for (size_t i = 0; i < e->nargs && i < CK_OP_MAX_ARGS; i++) {
    if (e->arg[i].child != 0) {
      if (n < max) {
        rel[n] = e->arg[i].child;
      }
      n++;
    }
  }
  if (e->op_child != 0) {
    if (n < max) {
      rel[n] = e->op_child;
    }
    n++;
  }
  return n;
}

static size_t ck__promote_fields(const ck_prefix *self, const ck_kernel_info *info,
                                 ck_kernel_field *out, size_t max) {
  (void)info;
  typedef ck__promote_ck K;
  const K *k = (const K *)(const void *)self;
  ck__fields f = {out, max, 0};
  CK__FIELD_INT(&f, K, k, nargs);
  CK__FIELD_CHILD(&f, K, k, op_child);
  for (size_t i = 0; i < k->nargs && i < CK_OP_MAX_ARGS; i++) {
    intptr_t at = (intptr_t)(offsetof(K, arg) + i * sizeof(ck__promote_arg));
    /* child 0: the argument is passed as it is (no conversion) */
    ck__field(&f, "arg_child", (int32_t)i, CK_KERNEL_FIELD_CHILD,
              at + (intptr_t)offsetof(ck__promote_arg, child), (int64_t)k->arg[i].child,
              NULL, NULL);
    ck__field(&f, "arg_size", (int32_t)i, CK_KERNEL_FIELD_INT,
              at + (intptr_t)offsetof(ck__promote_arg, size), (int64_t)k->arg[i].size,
              NULL, NULL);
  }
  return f.n;
}

static const ck_kernel_info ck__promote1_info = {
    "op_promote1", ck__promote1_single, ck__promote1_strided,
    sizeof(ck__promote_ck) + 1 * sizeof(ck__promote_arg), ck__promote_children};
static const ck_kernel_info ck__promote2_info = {
    "op_promote2", ck__promote2_single, ck__promote2_strided,
    sizeof(ck__promote_ck) + 2 * sizeof(ck__promote_arg), ck__promote_children};
static const ck_kernel_info ck__promoteN_info = {
    "op_promoteN", ck__promoteN_single, ck__promoteN_strided,
    sizeof(ck__promote_ck), ck__promote_children};
static const ck_kernel_info *const ck__promote_infos[3] = {
    &ck__promote1_info, &ck__promote2_info, &ck__promoteN_info};

static pthread_once_t ck__promote_info_once = PTHREAD_ONCE_INIT;
static void ck__promote_info_init(void) {
  for (size_t i = 0; i < 3; i++) {
    ck__kernel_info_register_decoded(ck__promote_infos[i], 1, ck__promote_fields);
  }
}


/* ---- building ------------------------------------------------------------- */

/* Reserve a zeroed prefix at the aligned offset after `end`. */
static ck_status ck__reserve_child(ck_kernel_builder *ckb, size_t end, size_t *child) {
  *child = ck_kernel_align_offset(end);
  return ck_kernel_builder_ensure_capacity_leaf(ckb, *child + sizeof(ck_prefix));
}

ck_status ck__make_promote_kernel(ck_kernel_builder *ckb, size_t offset,
                                  ck_kernel_request req, size_t n,
                                  const ck_type_id *from, const ck_type_id *to,
                                  size_t *out_op_child) {
  (void)pthread_once(&ck__promote_info_once, ck__promote_info_init);
  size_t data_end = offset + sizeof(ck__promote_ck) + n * sizeof(ck__promote_arg);
  ck_status st = ck_kernel_builder_ensure_capacity(ckb, data_end);
  if (st != CK_OK) {
    return st;
  }
  ck__promote_ck *e = (ck__promote_ck *)(void *)ck_kernel_builder_get(ckb, offset);
  const ck_kernel_info *info =
      n == 1 ? &ck__promote1_info : n == 2 ? &ck__promote2_info : &ck__promoteN_info;
  e->nargs = n;
  for (size_t i = 0; i < n; i++) {
    e->arg[i].child = 0;
    e->arg[i].size = ck_type_data_size((ck_type)(uintptr_t)to[i]);
  }
  st = ck_prefix_set_function(&e->base, req, info->single, info->strided);
  if (st != CK_OK) {
    return st;
  }
  e->base.destructor = ck__promote_destroy;
  size_t end = data_end;
  for (size_t i = 0; i < n; i++) {
    if (from[i] == to[i]) {
      continue;
    }
    size_t child;
    st = ck__reserve_child(ckb, end, &child);
    if (st != CK_OK) {
      return st;
    }
    e = (ck__promote_ck *)(void *)ck_kernel_builder_get(ckb, offset);
    e->arg[i].child = child - offset;
    st = ck_make_builtin_assignment_kernel(ckb, child, to[i], from[i], req,
                                           CK_ERRMODE_NOCHECK, &end);
    if (st != CK_OK) {
      return st;
    }
  }
  size_t child;
  st = ck__reserve_child(ckb, end, &child);
  if (st != CK_OK) {
    return st;
  }
  e = (ck__promote_ck *)(void *)ck_kernel_builder_get(ckb, offset);
  e->op_child = child - offset;
  *out_op_child = child;
  return CK_OK;
}

