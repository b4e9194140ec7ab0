/*
 * ckernel/kernel.h -- the ckernel ABI (version CK_KERNEL_ABI_VERSION).
 *
 * A ckernel is a block of memory that starts with a ck_prefix: the kernel's
 * entry point and its destructor.  The kernel's own data follows the prefix,
 * and the kernel's children (if any) follow that data in the same block, each
 * starting with its own ck_prefix.  A whole kernel tree therefore lives in one
 * contiguous buffer, normally owned by a ck_kernel_builder (builder.h).  The
 * full contract is in docs/kernel-abi.md; the short version:
 *
 *   - `function` holds a ck_expr_single_t or a ck_expr_strided_t, depending
 *     on the request the kernel was built for.  The caller that built the
 *     kernel knows which one; nothing in the prefix records it.
 *   - `destructor` is NULL or releases what the kernel owns, including its
 *     children (a parent's destructor destroys its children).
 *   - Kernel data is memcpy-movable: it never points into itself (children
 *     are found by offsets), because the buffer moves when it grows.
 *   - Kernel memory starts zeroed, so a destructor run on a half-built kernel
 *     sees NULLs for everything not yet made and must cope with them.
 *   - Entry points return CK_OK (0) or a ck_status; on failure they have
 *     recorded a message through the thread-local error (ck_set_error), on
 *     the thread that called them.
 *
 * Thread safety: a built kernel may be called from several threads at once
 * if its entry points do not write to kernel data.  All kernels made by this
 * library satisfy that (their data is read-only after construction);
 * kernels that keep mutable state in their data must say so.
 */
#ifndef CKERNEL_KERNEL_H
#define CKERNEL_KERNEL_H

#include "ckernel/config.h"
#include "ckernel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever the prefix layout, the entry-point signatures or the
 * meaning of ck_kernel_request values change.  Compare with
 * ck_kernel_abi_version() at run time. */
#define CK_KERNEL_ABI_VERSION 1

/* The head of every ckernel (two pointers: 16 bytes on 64-bit targets). */
typedef struct ck_prefix {
  void *function;                               /* single or strided entry */
  void (*destructor)(struct ck_prefix *self);   /* NULL: nothing to free   */
} ck_prefix;

typedef void (*ck_destructor_t)(ck_prefix *self);

/* One element: reads src[0..N-1] (N is baked into the kernel), writes dst. */
typedef int (*ck_expr_single_t)(char *dst, const char *const *src,
                                ck_prefix *self);

/* `count` elements: element i is at dst + i*dst_stride and
 * src[j] + i*src_stride[j].  Strides may be negative or zero.  On an error
 * the kernel stops at the failing element and returns its status; elements
 * before it have been written, the others are untouched. */
typedef int (*ck_expr_strided_t)(char *dst, intptr_t dst_stride,
                                 const char *const *src,
                                 const intptr_t *src_stride, size_t count,
                                 ck_prefix *self);

/* Which entry point a factory must install.  Values are ABI. */
typedef enum ck_kernel_request {
  CK_KERNEL_REQUEST_SINGLE = 0,
  CK_KERNEL_REQUEST_STRIDED = 1
} ck_kernel_request;

/* CK_KERNEL_ABI_VERSION of the library actually loaded. */
CK_API int ck_kernel_abi_version(void);

/* Call a kernel built for CK_KERNEL_REQUEST_SINGLE / _STRIDED.  These are
 * for FFI users (cffi, ctypes); C code calls through ck_prefix_single() /
 * ck_prefix_strided() directly.  A NULL kernel or a prefix without a
 * function is CK_ERR_INVALID_STATE; calling a kernel through the entry point
 * of the other request is undefined (the prefix cannot tell). */
CK_API int ck_kernel_call_single(ck_prefix *self, char *dst,
                                 const char *const *src);
CK_API int ck_kernel_call_strided(ck_prefix *self, char *dst,
                                  intptr_t dst_stride, const char *const *src,
                                  const intptr_t *src_stride, size_t count);

/*
 * Prefix helpers.  C callers get them inlined; libckernel also exports each
 * under the same name for FFI users (the ck_memblock_incref pattern).
 *
 * ck_prefix_set_function: store `single` or `strided` according to `req`.
 *   An unknown request or a NULL function for it is CK_ERR_INVALID_ARGUMENT
 *   (the prefix is left unchanged).
 * ck_prefix_single / ck_prefix_strided: the entry point, typed.
 * ck_prefix_destroy_child: run a child's destructor if it has one (NULL
 *   child or NULL destructor: no-op).  Destructors call this on each child.
 * ck_prefix_child: the prefix `rel_offset` bytes after `self`.
 */
#if defined(CK_CFFI_CDEF) || defined(__cplusplus)
CK_API ck_status ck_prefix_set_function(ck_prefix *self, ck_kernel_request req,
                                        ck_expr_single_t single,
                                        ck_expr_strided_t strided);
CK_API ck_expr_single_t ck_prefix_single(const ck_prefix *self);
CK_API ck_expr_strided_t ck_prefix_strided(const ck_prefix *self);
CK_API void ck_prefix_destroy_child(ck_prefix *child);
CK_API ck_prefix *ck_prefix_child(ck_prefix *self, size_t rel_offset);
#else
/* ISO C has no conversion between void * and function pointers; POSIX
 * guarantees they share a representation, so a union reinterprets them. */
typedef union ck__fnptr {
  void *ptr;
  ck_expr_single_t single;
  ck_expr_strided_t strided;
} ck__fnptr;

/* Out-of-line: records the error message. */
CK_API ck_status ck__prefix_bad_request(ck_kernel_request req);

CK_API inline ck_status ck_prefix_set_function(ck_prefix *self, ck_kernel_request req,
                                        ck_expr_single_t single,
                                        ck_expr_strided_t strided) {
  ck__fnptr u;
  if (req == CK_KERNEL_REQUEST_SINGLE && single != NULL) {
    u.single = single;
  } else if (req == CK_KERNEL_REQUEST_STRIDED && strided != NULL) {
    u.strided = strided;
  } else {
    return ck__prefix_bad_request(req);
  }
  self->function = u.ptr;
  return CK_OK;
}

CK_API inline ck_expr_single_t ck_prefix_single(const ck_prefix *self) {
  ck__fnptr u;
  u.ptr = self->function;
  return u.single;
}

CK_API inline ck_expr_strided_t ck_prefix_strided(const ck_prefix *self) {
  ck__fnptr u;
  u.ptr = self->function;
  return u.strided;
}

CK_API inline void ck_prefix_destroy_child(ck_prefix *child) {
  if (child != NULL && child->destructor != NULL) {
    child->destructor(child);
  }
}

CK_API inline ck_prefix *ck_prefix_child(ck_prefix *self, size_t rel_offset) {
  return (ck_prefix *)(void *)((char *)self + rel_offset);
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_KERNEL_H */
