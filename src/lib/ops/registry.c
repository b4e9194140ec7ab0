/*
 * registry.c -- the process-wide operation registry: lookup, registration,
 * dispatch and kernel building (see ckernel/registry.h and
 * docs/kernel-registry.md).  The built-in kernels come from the constant
 * tables of ops_*.c; the type rules from promote.c; the converting parent
 * kernel from promote_kernel.c.
 *
 * State: an array of operations in registration order (for enumeration)
 * and the same pointers sorted by name (for lookup), both under one
 * pthread rwlock.  Operations are never freed, so `const ck_op *` and names
 * stay valid without the lock.  Each operation holds an array of kernel
 * records (pointers, so a record outlives its slot); a record is reference
 * counted: the registration holds one reference, ck_op_make_kernel holds
 * one while it calls a factory outside the lock, and the user_data release
 * runs when the last one goes.
 */
#include "ops/ops_internal.h"
#include "ops/promote_internal.h"
#include "kernels/builder_internal.h"

#include "ckernel/assign.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>

/* ---- records -------------------------------------------------------------- */

typedef struct ck__opk {
  atomic_uint refs;
  ck_type_id ret;
  ck_type_id args[CK_OP_MAX_ARGS];
  ck_expr_single_t single;
  ck_expr_strided_t strided;
  ck_kernel_factory_t factory;
  void *user_data;
  ck_user_data_release_t release;
  const ck_kernel_info *info; /* built-in leaves: registered lazily */
  atomic_bool info_tried;
} ck__opk;

struct ck_op {
  size_t arity;
  unsigned flags;
  size_t count, cap;
  ck__opk **kernels;
  char name[CK_OP_NAME_MAX + 1];
};

static pthread_rwlock_t ck__reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static ck_op **ck__ops;    /* registration order */
static ck_op **ck__sorted; /* by name */
static size_t ck__nops, ck__ops_cap;
static atomic_bool ck__inited;

static void ck__opk_decref(ck__opk *k) {
  if (k != NULL && atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) == 1) {
    if (k->release != NULL) {
      k->release(k->user_data);
    }
    ck__free(k);
  }
}

/* ---- small helpers -------------------------------------------------------- */

static bool ck__valid_type_id(ck_type_id id) {
  return strcmp(ck_type_id_name(id), "invalid") != 0;
}

/* "(int8, int8) -> int8" */
static void ck__append_sig(char *buf, size_t bufsize, size_t *pos, size_t n,
                           const ck_type_id *args, ck_type_id ret) {
  ck__appendf(buf, bufsize, pos, "(");
  for (size_t i = 0; i < n; i++) {
    ck__appendf(buf, bufsize, pos, "%s%s", i ? ", " : "", ck_type_id_name(args[i]));
  }
  ck__appendf(buf, bufsize, pos, ") -> %s", ck_type_id_name(ret));
}

static ck_status ck__check_name(const char *func, const char *name) {
  if (name == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL operation name");
  }
  size_t n = strlen(name);
  if (n == 0 || n > CK_OP_NAME_MAX) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "operation names are 1 to %d bytes long", CK_OP_NAME_MAX);
  }
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_')) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                       "operation name '%s' has a character outside [A-Za-z0-9_]",
                       name);
    }
  }
  return CK_OK;
}

/* Binary search in ck__sorted; *pos gets the insertion point.  Lock held. */
static ck_op *ck__lookup_locked(const char *name, size_t *pos) {
  size_t lo = 0, hi = ck__nops;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(ck__sorted[mid]->name, name);
    if (c == 0) {
      if (pos) {
        *pos = mid;
      }
      return ck__sorted[mid];
    }
    if (c < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (pos) {
    *pos = lo;
  }
  return NULL;
}

static size_t ck__find_exact(const ck_op *op, const ck_type_id *args) {
  for (size_t i = 0; i < op->count; i++) {
    if (memcmp(op->kernels[i]->args, args, op->arity * sizeof(ck_type_id)) == 0) {
      return i;
    }
  }
  return SIZE_MAX;
}

/*
 * Register under the write lock.  `k` is a fresh record (refs 1) whose
 * ownership passes to the registry on success; *old receives a replaced
 * record, which the caller decrefs after unlocking (its release may call
 * back into the registry).
 */
static ck_status ck__register_locked(const char *func, const char *name,
                                     size_t nargs, ck__opk *k, ck__opk **old) {
  *old = NULL;
  size_t pos;
  ck_op *op = ck__lookup_locked(name, &pos);
  if (op != NULL && op->arity != nargs) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "%s takes %zu argument%s, not %zu", name, op->arity,
                     op->arity == 1 ? "" : "s", nargs);
  }
  if (op == NULL) {
    if (ck__nops == ck__ops_cap) {
      size_t cap = ck__ops_cap ? ck__ops_cap * 2 : 64;
      ck_op **a = CK_REALLOC(ck__ops, cap * sizeof *a);
      if (a == NULL) {
        return CK_ERR_NO_MEMORY;
      }
      ck__ops = a;
      ck_op **b = CK_REALLOC(ck__sorted, cap * sizeof *b);
      if (b == NULL) {
        return CK_ERR_NO_MEMORY;
      }
      ck__sorted = b;
      ck__ops_cap = cap;
    }
    op = CK_CALLOC(1, sizeof *op);
    if (op == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    op->kernels = CK_MALLOC(4 * sizeof *op->kernels);
    if (op->kernels == NULL) {
      ck__free(op);
      return CK_ERR_NO_MEMORY;
    }
    op->cap = 4;
    op->arity = nargs;
    memcpy(op->name, name, strlen(name) + 1);
    memmove(ck__sorted + pos + 1, ck__sorted + pos,
            (ck__nops - pos) * sizeof *ck__sorted);
    ck__sorted[pos] = op;
    ck__ops[ck__nops++] = op;
  }
  size_t i = ck__find_exact(op, k->args);
  if (i != SIZE_MAX) {
    *old = op->kernels[i];
    op->kernels[i] = k;
    return CK_OK;
  }
  if (op->count == op->cap) {
    ck__opk **a = CK_REALLOC(op->kernels, op->cap * 2 * sizeof *a);
    if (a == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    op->kernels = a;
    op->cap *= 2;
  }
  op->kernels[op->count++] = k;
  return CK_OK;
}

/* ---- built-in registration ------------------------------------------------ */

static ck_status ck__register_rows(const ck__op_row *rows, size_t n) {
  for (size_t r = 0; r < n; r++) {
    ck__opk *k = CK_CALLOC(1, sizeof *k);
    if (k == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    atomic_init(&k->refs, 1);
    atomic_init(&k->info_tried, false);
    k->ret = (ck_type_id)rows[r].ret;
    for (size_t i = 0; i < rows[r].nargs; i++) {
      k->args[i] = (ck_type_id)rows[r].args[i];
    }
    k->single = rows[r].single;
    k->strided = rows[r].strided;
    k->info = rows[r].info;
    ck__opk *old;
    ck_status st = ck__register_locked("ck_op_find", rows[r].op, rows[r].nargs, k, &old);
    if (st != CK_OK) {
      ck__free(k);
      return st;
    }
    ck__opk_decref(old); /* a built-in row: no release callback */
  }
  return CK_OK;
}

static ck_status ck__set_flags(const char *name, unsigned flags) {
  ck_op *op = ck__lookup_locked(name, NULL);
  if (op == NULL) {
    return ck__error(CK_ERR_INVALID_STATE, __func__, "no operation %s", name);
  }
  op->flags |= flags;
  return CK_OK;
}

/* The built-in families, in registration order. */
static const ck__op_table *const ck__builtin_tables[] = {
    &ck__ops_arith_table, &ck__ops_compare_table, &ck__ops_logic_table,
    &ck__ops_minmax_table, &ck__ops_math_table};
enum { CK__NTABLES = sizeof ck__builtin_tables / sizeof ck__builtin_tables[0] };

static ck_status ck__ensure_init(void) {
  if (atomic_load_explicit(&ck__inited, memory_order_acquire)) {
    return CK_OK;
  }
  ck_status st = CK_OK;
  pthread_rwlock_wrlock(&ck__reg_lock);
  if (!atomic_load_explicit(&ck__inited, memory_order_relaxed)) {
    /* On failure the families registered so far stay; the next call
     * retries and re-registers them (replacing identical rows). */
    for (size_t t = 0; st == CK_OK && t < CK__NTABLES; t++) {
      const ck__op_table *tab = ck__builtin_tables[t];
      st = ck__register_rows(tab->rows, tab->nrows);
      for (size_t f = 0; st == CK_OK && f < tab->nflags; f++) {
        st = ck__set_flags(tab->flags[f].op, tab->flags[f].flags);
      }
    }
    if (st == CK_OK) {
      atomic_store_explicit(&ck__inited, true, memory_order_release);
    }
  }
  pthread_rwlock_unlock(&ck__reg_lock);
  return st;
}

/* ---- queries ------------------------------------------------------------- */

ck_status ck_op_find(const char *name, const ck_op **out) {
  if (out != NULL) {
    *out = NULL;
  }
  if (name == NULL || out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  ck_status st = ck__ensure_init();
  if (st != CK_OK) {
    return st;
  }
  pthread_rwlock_rdlock(&ck__reg_lock);
  ck_op *op = ck__lookup_locked(name, NULL);
  pthread_rwlock_unlock(&ck__reg_lock);
  if (op == NULL) {
    return CK_ERROR(CK_ERR_INDEX, "no operation named '%s'", name);
  }
  *out = op;
  return CK_OK;
}

size_t ck_op_count(void) {
  if (ck__ensure_init() != CK_OK) {
    return 0;
  }
  pthread_rwlock_rdlock(&ck__reg_lock);
  size_t n = ck__nops;
  pthread_rwlock_unlock(&ck__reg_lock);
  return n;
}

const char *ck_op_name_at(size_t i) {
  if (ck__ensure_init() != CK_OK) {
    return NULL;
  }
  pthread_rwlock_rdlock(&ck__reg_lock);
  const char *name = i < ck__nops ? ck__ops[i]->name : NULL;
  pthread_rwlock_unlock(&ck__reg_lock);
  return name;
}

const char *ck_op_name(const ck_op *op) { return op ? op->name : NULL; }

size_t ck_op_arity(const ck_op *op) { return op ? op->arity : 0; }

size_t ck_op_kernel_count(const ck_op *op) {
  if (op == NULL) {
    return 0;
  }
  pthread_rwlock_rdlock(&ck__reg_lock);
  size_t n = op->count;
  pthread_rwlock_unlock(&ck__reg_lock);
  return n;
}

ck_status ck_op_kernel_signature(const ck_op *op, size_t i, ck_type_id *out_ret,
                                 ck_type_id *out_args, size_t max_args) {
  if (op == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL operation");
  }
  ck_status st = CK_OK;
  pthread_rwlock_rdlock(&ck__reg_lock);
  if (i >= op->count) {
    st = CK_ERROR(CK_ERR_INDEX, "%s has %zu kernels, no kernel %zu", op->name,
                  op->count, i);
  } else {
    const ck__opk *k = op->kernels[i];
    if (out_ret != NULL) {
      *out_ret = k->ret;
    }
    for (size_t j = 0; out_args != NULL && j < op->arity && j < max_args; j++) {
      out_args[j] = k->args[j];
    }
  }
  pthread_rwlock_unlock(&ck__reg_lock);
  return st;
}

/* All signatures, at most `limit` characters of them, then "... (N more)".
 * Lock held. */
static void ck__format_sigs(const ck_op *op, char *buf, size_t bufsize,
                            size_t *pos, size_t limit) {
  for (size_t i = 0; i < op->count; i++) {
    const ck__opk *k = op->kernels[i];
    char one[CK_OP_MAX_ARGS * 16 + 32];
    size_t n = 0;
    ck__append_sig(one, sizeof one, &n, op->arity, k->args, k->ret);
    if (*pos + n + 2 > limit) {
      ck__appendf(buf, bufsize, pos, "%s... (%zu more)", i ? ", " : "",
                  op->count - i);
      return;
    }
    ck__appendf(buf, bufsize, pos, "%s%s", i ? ", " : "", one);
  }
  if (op->count == 0) {
    ck__appendf(buf, bufsize, pos, "no kernels");
  }
}

ck_status ck_op_signatures(const ck_op *op, char *buf, size_t bufsize,
                           size_t *out_len) {
  if (op == NULL || (buf == NULL && bufsize != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  if (bufsize != 0) {
    buf[0] = '\0';
  }
  size_t pos = 0;
  pthread_rwlock_rdlock(&ck__reg_lock);
  ck__format_sigs(op, buf, bufsize, &pos, SIZE_MAX);
  pthread_rwlock_unlock(&ck__reg_lock);
  if (out_len != NULL) {
    *out_len = pos;
  }
  return CK_OK;
}

/* ---- registration ------------------------------------------------------- */

static ck_status ck__register(const char *func, const char *name, size_t nargs,
                              ck_type_id ret, const ck_type_id *args,
                              ck__opk *k) {
  ck_status st = ck__check_name(func, name);
  if (st != CK_OK) {
    return st;
  }
  if (nargs == 0 || nargs > CK_OP_MAX_ARGS || args == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "%s: operations take 1 to %d arguments (got %zu%s)", name,
                     CK_OP_MAX_ARGS, nargs, args == NULL ? ", NULL types" : "");
  }
  if (!ck__valid_type_id(ret)) {
    return ck__error(CK_ERR_TYPE, func, "%s: invalid return type id %d", name,
                     (int)ret);
  }
  for (size_t i = 0; i < nargs; i++) {
    if (!ck__valid_type_id(args[i])) {
      return ck__error(CK_ERR_TYPE, func, "%s: invalid type id %d for argument %zu",
                       name, (int)args[i], i);
    }
  }
  st = ck__ensure_init();
  if (st != CK_OK) {
    return st;
  }
  k->ret = ret;
  memcpy(k->args, args, nargs * sizeof *args);
  ck__opk *old = NULL;
  pthread_rwlock_wrlock(&ck__reg_lock);
  st = ck__register_locked(func, name, nargs, k, &old);
  pthread_rwlock_unlock(&ck__reg_lock);
  ck__opk_decref(old);
  return st;
}

ck_status ck_op_register_kernel(const char *op_name, size_t nargs, ck_type_id ret,
                                const ck_type_id *args, ck_expr_single_t single,
                                ck_expr_strided_t strided) {
  if (single == NULL || strided == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "both the single and the strided entry point are required");
  }
  ck__opk *k = CK_CALLOC(1, sizeof *k);
  if (k == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  atomic_init(&k->refs, 1);
  atomic_init(&k->info_tried, true);
  k->single = single;
  k->strided = strided;
  ck_status st = ck__register(__func__, op_name, nargs, ret, args, k);
  if (st != CK_OK) {
    ck__free(k);
  }
  return st;
}

ck_status ck_op_register_factory(const char *op_name, size_t nargs, ck_type_id ret,
                                 const ck_type_id *args, ck_kernel_factory_t factory,
                                 void *user_data, ck_user_data_release_t release) {
  ck_status st;
  ck__opk *k = NULL;
  if (factory == NULL) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL factory");
  } else {
    k = CK_CALLOC(1, sizeof *k);
    st = k == NULL ? CK_ERR_NO_MEMORY : CK_OK;
  }
  if (st == CK_OK) {
    atomic_init(&k->refs, 1);
    atomic_init(&k->info_tried, true);
    k->factory = factory;
    k->user_data = user_data;
    k->release = release;
    st = ck__register(__func__, op_name, nargs, ret, args, k);
    if (st == CK_OK) {
      return CK_OK;
    }
    ck__free(k);
  }
  if (release != NULL) {
    release(user_data);
  }
  return st;
}

ck_status ck_op_unregister_kernel(const char *op_name, size_t nargs,
                                  const ck_type_id *args) {
  if (op_name == NULL || args == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL argument");
  }
  ck_status st = ck__ensure_init();
  if (st != CK_OK) {
    return st;
  }
  ck__opk *old = NULL;
  pthread_rwlock_wrlock(&ck__reg_lock);
  ck_op *op = ck__lookup_locked(op_name, NULL);
  size_t i = SIZE_MAX;
  if (op != NULL && op->arity == nargs) {
    i = ck__find_exact(op, args);
  }
  if (i == SIZE_MAX) {
    st = CK_ERROR(CK_ERR_INDEX, "no kernel of %s for these %zu argument types",
                  op_name, nargs);
  } else {
    old = op->kernels[i];
    memmove(op->kernels + i, op->kernels + i + 1,
            (op->count - i - 1) * sizeof *op->kernels);
    op->count--;
  }
  pthread_rwlock_unlock(&ck__reg_lock);
  ck__opk_decref(old);
  return st;
}

/* ---- dispatch --------------------------------------------------------------- */

/* The kernel for these types, or NULL (lock held). */
static ck__opk *ck__resolve_locked(const ck_op *op, const ck_type_id *t) {
  size_t n = op->arity;
  size_t i = ck__find_exact(op, t);
  if (i != SIZE_MAX) {
    return op->kernels[i];
  }
  bool builtin = true, all_bool = true;
  for (size_t j = 0; j < n; j++) {
    builtin = builtin && ck__is_builtin_id(t[j]);
    all_bool = all_bool && t[j] == CK_TYPE_BOOL;
  }
  if (!builtin || (all_bool && (op->flags & CK__OPF_NO_BOOL_PROMOTION))) {
    return NULL;
  }
  /* 2. the promoted same-type signature */
  ck_type_id p = t[0];
  for (size_t j = 1; j < n; j++) {
    (void)ck_promote_types(p, t[j], &p);
  }
  ck_type_id same[CK_OP_MAX_ARGS];
  for (size_t j = 0; j < n; j++) {
    same[j] = p;
  }
  i = ck__find_exact(op, same);
  if (i != SIZE_MAX) {
    return op->kernels[i];
  }
  /* 3. the smallest kernel every argument casts to safely */
  ck__opk *best = NULL;
  unsigned best_max = 0, best_sum = 0;
  for (i = 0; i < op->count; i++) {
    ck__opk *k = op->kernels[i];
    unsigned mx = 0, sum = 0;
    bool ok = true;
    for (size_t j = 0; ok && j < n; j++) {
      ok = ck_can_cast_safely(t[j], k->args[j]);
      if (ok) {
        unsigned r = ck__type_rank(k->args[j]);
        mx = r > mx ? r : mx;
        sum += r;
      }
    }
    if (ok && (best == NULL || mx < best_max || (mx == best_max && sum < best_sum))) {
      best = k;
      best_max = mx;
      best_sum = sum;
    }
  }
  return best;
}

static ck_status ck__no_kernel(const ck_op *op, const ck_type_id *t) {
  char msg[900];
  size_t pos = 0;
  ck__appendf(msg, sizeof msg, &pos, "no kernel for %s(", op->name);
  for (size_t j = 0; j < op->arity; j++) {
    ck__appendf(msg, sizeof msg, &pos, "%s%s", j ? ", " : "", ck_type_id_name(t[j]));
  }
  ck__appendf(msg, sizeof msg, &pos, "); %s has: ", op->name);
  ck__format_sigs(op, msg, sizeof msg, &pos, sizeof msg - 40);
  return ck__error(CK_ERR_TYPE, "ck_op_resolve", "%s", msg);
}

static ck_status ck__check_call(const char *func, const ck_op *op, size_t nargs,
                                const ck_type_id *arg_types) {
  if (op == NULL || arg_types == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL argument");
  }
  if (nargs != op->arity) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "%s takes %zu argument%s, got %zu",
                     op->name, op->arity, op->arity == 1 ? "" : "s", nargs);
  }
  return CK_OK;
}

ck_status ck_op_resolve(const ck_op *op, size_t nargs, const ck_type_id *arg_types,
                        ck_type_id *out_ret, ck_type_id *out_kernel_args) {
  ck_status st = ck__check_call(__func__, op, nargs, arg_types);
  if (st != CK_OK) {
    return st;
  }
  pthread_rwlock_rdlock(&ck__reg_lock);
  const ck__opk *k = ck__resolve_locked(op, arg_types);
  if (k == NULL) {
    st = ck__no_kernel(op, arg_types);
  } else {
    if (out_ret != NULL) {
      *out_ret = k->ret;
    }
    if (out_kernel_args != NULL) {
      memcpy(out_kernel_args, k->args, nargs * sizeof *out_kernel_args);
    }
  }
  pthread_rwlock_unlock(&ck__reg_lock);
  return st;
}

/* ---- building ------------------------------------------------------------- */

/* What ck_op_make_kernel copies out of a record under the lock. */
typedef struct ck__opk_use {
  ck__opk *rec; /* referenced while we build */
  ck_type_id ret;
  ck_type_id args[CK_OP_MAX_ARGS];
  ck_expr_single_t single;
  ck_expr_strided_t strided;
  ck_kernel_factory_t factory;
  void *user_data;
} ck__opk_use;

static ck_status ck__build_registered(ck_kernel_builder *ckb, size_t offset,
                                      ck_kernel_request req, const ck__opk_use *u,
                                      size_t *out_end) {
  if (u->factory != NULL) {
    size_t end = 0;
    ck_status st = u->factory(ckb, offset, req, u->user_data, &end);
    if (st != CK_OK) {
      if (ck_last_status() == CK_OK) {
        CK_ERROR(st, "the kernel factory failed without a message");
      }
      return st;
    }
    ck_prefix *p = ck_kernel_builder_get(ckb, offset);
    if (end <= offset || p == NULL || p->function == NULL) {
      return CK_ERROR(CK_ERR_INVALID_STATE,
                      "the kernel factory returned no kernel at offset %zu", offset);
    }
    *out_end = end;
    return CK_OK;
  }
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, offset + sizeof(ck_prefix));
  if (st != CK_OK) {
    return st;
  }
  ck_prefix *p = ck_kernel_builder_get(ckb, offset);
  st = ck_prefix_set_function(p, req, u->single, u->strided);
  if (st != CK_OK) {
    return st;
  }
  p->destructor = NULL;
  *out_end = offset + sizeof(ck_prefix);
  return CK_OK;
}

/* Describe a built-in leaf for dumps the first time it is built. */
static void ck__describe_leaf(ck__opk *rec) {
  if (atomic_load_explicit(&rec->info_tried, memory_order_relaxed) ||
      atomic_exchange_explicit(&rec->info_tried, true, memory_order_relaxed)) {
    return;
  }
  ck__kernel_info_register_table(rec->info, 1);
}

ck_status ck_op_make_kernel(const ck_op *op, ck_kernel_builder *ckb, size_t offset,
                            ck_kernel_request req, size_t nargs,
                            const ck_type_id *arg_types, ck_type_id *out_ret,
                            size_t *out_end) {
  ck_status st = ck__check_call(__func__, op, nargs, arg_types);
  if (st != CK_OK) {
    return st;
  }
  if (ckb == NULL || offset % CK_KERNEL_ALIGN != 0 ||
      (req != CK_KERNEL_REQUEST_SINGLE && req != CK_KERNEL_REQUEST_STRIDED)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "%s: NULL builder, offset %zu not a multiple of %d, or bad "
                    "request %d",
                    op->name, offset, CK_KERNEL_ALIGN, (int)req);
  }
  if ((st = ck__check_kernel_slot(__func__, ckb, offset)) != CK_OK) {
    return st;
  }
  ck__opk_use u;
  memset(&u, 0, sizeof u);
  pthread_rwlock_rdlock(&ck__reg_lock);
  ck__opk *k = ck__resolve_locked(op, arg_types);
  if (k == NULL) {
    st = ck__no_kernel(op, arg_types);
  } else {
    /* the reference keeps the record (and a factory's user_data) alive
     * while we build outside the lock, even if it is replaced meanwhile */
    atomic_fetch_add_explicit(&k->refs, 1, memory_order_relaxed);
    u.rec = k;
    u.ret = k->ret;
    memcpy(u.args, k->args, sizeof u.args);
    u.single = k->single;
    u.strided = k->strided;
    u.factory = k->factory;
    u.user_data = k->user_data;
  }
  pthread_rwlock_unlock(&ck__reg_lock);
  if (st != CK_OK) {
    return st;
  }
  size_t end = offset;
  if (memcmp(u.args, arg_types, nargs * sizeof *arg_types) == 0) {
    st = ck__build_registered(ckb, offset, req, &u, &end);
  } else {
    size_t op_child = 0;
    st = ck__make_promote_kernel(ckb, offset, req, nargs, arg_types, u.args,
                                 &op_child);
    if (st == CK_OK) {
      st = ck__build_registered(ckb, op_child, req, &u, &end);
    }
  }
  if (st == CK_OK && u.rec->info != NULL) {
    ck__describe_leaf(u.rec);
  }
  ck__opk_decref(u.rec);
  if (st != CK_OK) {
    return st;
  }
  if (out_ret != NULL) {
    *out_ret = u.ret;
  }
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

