/* memblock.c -- reference-counted memory blocks (see ckernel/memblock.h). */
#include "memory/memblock_internal.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

_Static_assert(sizeof(ck_memblock) == 8, "ck_memblock must be 8 bytes");
_Static_assert(offsetof(ck_memblock, refcount) == 0, "refcount at offset 0");
_Static_assert(offsetof(ck_memblock, kind) == 4, "kind at offset 4");
_Static_assert(sizeof(_Atomic(uint32_t)) == sizeof(uint32_t),
               "atomic uint32 must have the size of uint32 (cffi sees plain)");

/* The one external definition of each inline function (C11 6.7.4). */
extern inline void ck_memblock_incref(ck_memblock *mb);
extern inline void ck_memblock_decref(ck_memblock *mb);

/* Process-wide live-block counter (documented in memblock.h). */
static atomic_int_fast64_t ck_live_blocks;

/* The ops of the kinds implemented elsewhere, indexed by kind (set by
 * ck__memblock_init before the first block of the kind exists). */
enum { CK__MEMBLOCK_KINDS = CK_MEMBLOCK_ZEROINIT + 1 };
static _Atomic(const ck__memblock_ops *) ck__kind_ops[CK__MEMBLOCK_KINDS];

void ck__memblock_init(ck_memblock *mb, ck_memblock_kind kind,
                       const ck__memblock_ops *ops) {
  if (ops != NULL) {
    atomic_store_explicit(&ck__kind_ops[kind], ops, memory_order_relaxed);
  }
  atomic_init(&mb->refcount, 1u);
  mb->kind = (uint32_t)kind;
  atomic_fetch_add_explicit(&ck_live_blocks, 1, memory_order_relaxed);
}

static const ck__memblock_ops *ck__ops_of(uint32_t kind) {
  return kind < CK__MEMBLOCK_KINDS
             ? atomic_load_explicit(&ck__kind_ops[kind], memory_order_relaxed)
             : NULL;
}

int64_t ck_memblock_live_count(void) {
  return (int64_t)atomic_load_explicit(&ck_live_blocks, memory_order_relaxed);
}

uint32_t ck_memblock_refcount(const ck_memblock *mb) {
  if (mb == NULL) {
    return 0;
  }
  return atomic_load_explicit(&((ck_memblock *)mb)->refcount, memory_order_relaxed);
}

const char *ck_memblock_kind_name(uint32_t kind) {
  switch (kind) {
  case CK_MEMBLOCK_ARRAY: return "array";
  case CK_MEMBLOCK_EXTERNAL: return "external";
  case CK_MEMBLOCK_FIXED_SIZE_POD: return "fixed_size_pod";
  case CK_MEMBLOCK_POD: return "pod";
  case CK_MEMBLOCK_ZEROINIT: return "zeroinit";
  }
  return "invalid";
}

/* ---- fixed-size POD --------------------------------------------------- */

typedef struct ck_fixed_size_pod_memblock {
  ck_memblock base;
  size_t size;
  size_t data_offset; /* from the start of this struct */
} ck_fixed_size_pod_memblock;

ck_status ck_fixed_size_pod_memblock_new(size_t size, size_t align,
                                         ck_memblock **out, char **out_data) {
  if (out == NULL || out_data == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out and out_data must not be NULL");
  }
  *out = NULL;
  *out_data = NULL;
  if (!ck__is_pow2(align) || align > CK_POD_MAX_ALIGN) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "alignment %zu is not a power of two in [1, %d]", align,
                    CK_POD_MAX_ALIGN);
  }
  size_t block_align = align > alignof(max_align_t) ? align : alignof(max_align_t);
  size_t data_offset = (sizeof(ck_fixed_size_pod_memblock) + align - 1) & ~(align - 1);
  size_t total;
  if (size > PTRDIFF_MAX || !ck__add_size(data_offset, size, &total)) {
    return CK_ERROR(CK_ERR_OVERFLOW, "size %zu is too large", size);
  }
  ck_fixed_size_pod_memblock *mb = CK_ALIGNED_ALLOC(block_align, total);
  if (mb == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  memset(mb, 0, total);
  ck__memblock_init(&mb->base, CK_MEMBLOCK_FIXED_SIZE_POD, NULL);
  mb->size = size;
  mb->data_offset = data_offset;
  *out = &mb->base;
  *out_data = (char *)mb + data_offset;
  return CK_OK;
}

ck_status ck_fixed_size_pod_memblock_data(const ck_memblock *mb, char **out_data,
                                          size_t *out_size) {
  if (mb == NULL || out_data == NULL || out_size == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  if (mb->kind != CK_MEMBLOCK_FIXED_SIZE_POD) {
    return CK_ERROR(CK_ERR_TYPE, "memblock of kind '%s' is not fixed_size_pod",
                    ck_memblock_kind_name(mb->kind));
  }
  const ck_fixed_size_pod_memblock *f = (const ck_fixed_size_pod_memblock *)mb;
  *out_data = (char *)f + f->data_offset;
  *out_size = f->size;
  return CK_OK;
}

/* ---- external --------------------------------------------------------- */

typedef struct ck_external_memblock {
  ck_memblock base;
  void *object;
  ck_release_fn release;
} ck_external_memblock;

ck_status ck_external_memblock_new(void *object, ck_release_fn release,
                                   ck_memblock **out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = NULL;
  ck_external_memblock *mb = CK_MALLOC(sizeof *mb);
  if (mb == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  ck__memblock_init(&mb->base, CK_MEMBLOCK_EXTERNAL, NULL);
  mb->object = object;
  mb->release = release;
  *out = &mb->base;
  return CK_OK;
}

ck_status ck_external_memblock_object(const ck_memblock *mb, void **out_object) {
  if (mb == NULL || out_object == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "arguments must not be NULL");
  }
  if (mb->kind != CK_MEMBLOCK_EXTERNAL) {
    return CK_ERROR(CK_ERR_TYPE, "memblock of kind '%s' is not external",
                    ck_memblock_kind_name(mb->kind));
  }
  *out_object = ((const ck_external_memblock *)mb)->object;
  return CK_OK;
}

/* ---- free dispatch ---------------------------------------------------- */

void ck_memblock_free(ck_memblock *mb) {
  if (mb == NULL) {
    return;
  }
  switch (mb->kind) {
  case CK_MEMBLOCK_ARRAY:
  case CK_MEMBLOCK_POD:
  case CK_MEMBLOCK_ZEROINIT: {
    const ck__memblock_ops *ops = ck__ops_of(mb->kind);
    if (ops != NULL && ops->release != NULL) {
      ops->release(mb);
    }
    break;
  }
  case CK_MEMBLOCK_FIXED_SIZE_POD:
    break;
  case CK_MEMBLOCK_EXTERNAL: {
    ck_external_memblock *e = (ck_external_memblock *)mb;
    if (e->release != NULL) {
      e->release(e->object);
    }
    break;
  }
  default:
    /* Corrupted or already-freed block: never free unknown memory. */
    CK_ERROR(CK_ERR_INVALID_STATE,
             "memblock %p has invalid kind %u (corrupted or freed); not freed",
             (void *)mb, (unsigned)mb->kind);
    return;
  }
  mb->kind = 0; /* poison: a second free of a dangling pointer is reported */
  ck__free(mb);
  atomic_fetch_sub_explicit(&ck_live_blocks, 1, memory_order_relaxed);
}

/* ---- debug printing --------------------------------------------------- */

ck_status ck_memblock_debug_print(const ck_memblock *mb, char *buf,
                                  size_t bufsize, size_t *out_len) {
  if (mb == NULL || (buf == NULL && bufsize != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "mb must not be NULL");
  }
  size_t pos = 0;
  if (bufsize != 0) {
    buf[0] = '\0';
  }
  ck__appendf(buf, bufsize, &pos, "memblock %p: kind=%s refcount=%u", (void *)mb,
              ck_memblock_kind_name(mb->kind), (unsigned)ck_memblock_refcount(mb));
  switch (mb->kind) {
  case CK_MEMBLOCK_ARRAY:
  case CK_MEMBLOCK_POD:
  case CK_MEMBLOCK_ZEROINIT: {
    const ck__memblock_ops *ops = ck__ops_of(mb->kind);
    if (ops != NULL && ops->debug != NULL) {
      ops->debug(mb, buf, bufsize, &pos);
    }
    break;
  }
  case CK_MEMBLOCK_FIXED_SIZE_POD: {
    const ck_fixed_size_pod_memblock *f = (const ck_fixed_size_pod_memblock *)mb;
    ck__appendf(buf, bufsize, &pos, " size=%zu data=%p", f->size,
                (void *)((char *)f + f->data_offset));
    break;
  }
  case CK_MEMBLOCK_EXTERNAL: {
    const ck_external_memblock *e = (const ck_external_memblock *)mb;
    ck__appendf(buf, bufsize, &pos, " object=%p release=%s", e->object,
                e->release ? "set" : "none");
    break;
  }
  default:
    break;
  }
  if (out_len != NULL) {
    *out_len = pos;
  }
  return CK_OK;
}
