/*
 * builder_internal.h -- links between builder.c and the kernel factories.
 * Private; nothing here is ABI.
 */
#ifndef CKERNEL_BUILDER_INTERNAL_H
#define CKERNEL_BUILDER_INTERNAL_H

#include "core/core_internal.h"

#include "ckernel/builder.h"

/* Register a static table of `n` kernel descriptions for dumps (as
 * ck_kernel_info_register does for one; idempotent, thread-safe).  Each
 * factory registers its own table once, before it first builds a kernel.
 * Never fails visibly: out of memory leaves the table undescribed and the
 * caller's error state untouched. */
void ck__kernel_info_register_table(const ck_kernel_info *infos, size_t n);

/* The same with a decoder of the kernels' fields (ck_kernel_fields) for
 * every description of the table; registering a table again adds the
 * decoder if it had none. */
void ck__kernel_info_register_decoded(const ck_kernel_info *infos, size_t n,
                                      ck_kernel_fields_fn fields);

/* Writing decoded fields: an output array, its room, and the count so far
 * (which may exceed the room: decoders return the full count). */
typedef struct ck__fields {
  ck_kernel_field *out;
  size_t max;
  size_t n;
} ck__fields;

static inline void ck__field(ck__fields *f, const char *name, int32_t index,
                             ck_kernel_field_kind kind, intptr_t offset,
                             int64_t value, const void *pointer, const char *text) {
  if (f->n < f->max) {
    ck_kernel_field *x = &f->out[f->n];
    x->name = name;
    x->index = index;
    x->kind = (uint32_t)kind;
    x->offset = offset;
    x->value = value;
    x->pointer = pointer;
    x->text = text;
  }
  f->n++;
}

/* A scalar field `member` of kernel struct T at `k` (one of each kind). */
#define CK__FIELD_INT(f, T, k, member)                                         \
  ck__field((f), #member, -1, CK_KERNEL_FIELD_INT,                             \
            (intptr_t)offsetof(T, member), (int64_t)(k)->member, NULL, NULL)
#define CK__FIELD_CHILD(f, T, k, member)                                       \
  ck__field((f), #member, -1, CK_KERNEL_FIELD_CHILD,                           \
            (intptr_t)offsetof(T, member), (int64_t)(k)->member, NULL, NULL)
#define CK__FIELD_PTR(f, KIND, T, k, member)                                   \
  ck__field((f), #member, -1, (KIND), (intptr_t)offsetof(T, member), 0,        \
            (const void *)(k)->member, NULL)
/* A fact the description implies (offset -1). */
#define CK__FIELD_IMPLIED(f, name, text)                                       \
  ck__field((f), (name), -1, CK_KERNEL_FIELD_TEXT, -1, 0, NULL, (text))

/* Bytes of a saved error message (ck__kernel_info_register_table). */
enum { CK__SAVED_MESSAGE = 512 };

/* Reinterpret between the prefix's void * and the entry-point types. */
static inline void *ck__single_ptr(ck_expr_single_t f) {
  ck__fnptr u;
  u.single = f;
  return u.ptr;
}
static inline void *ck__strided_ptr(ck_expr_strided_t f) {
  ck__fnptr u;
  u.strided = f;
  return u.ptr;
}

/* The argument checks every kernel factory starts with (builder.c):
 * non-NULL builder, offset a multiple of CK_KERNEL_ALIGN, a known request,
 * and an empty slot (ck__check_kernel_slot).  `func` names the factory in
 * the message. */
ck_status ck__check_kernel_args(const char *func, ck_kernel_builder *ckb,
                                size_t offset, ck_kernel_request req);

/* CK_ERR_INVALID_STATE if the builder already holds a kernel at `offset`
 * (its prefix has a function or a destructor): building over it would lose
 * the old kernel's resources (docs/kernel-abi.md, "One kernel per slot"). */
ck_status ck__check_kernel_slot(const char *func, const ck_kernel_builder *ckb,
                                size_t offset);

#endif /* CKERNEL_BUILDER_INTERNAL_H */
