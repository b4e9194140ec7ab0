/*
 * ckernel/buffer.h -- byte buffers living in a context, with an allocator.
 *
 * A ck_buffer is `capacity` bytes of the context's memory (host memory for
 * "cpu", a cl_mem for "opencl") plus an allocator over them (xobjects'
 * design): allocate(size, align) returns an offset, first fit over a sorted
 * free list; free(offset, size) returns the block and merges it with free
 * neighbours; when nothing fits the buffer grows (capacity doubles until the
 * request fits) preserving its contents.  Data addresses are (buffer,
 * offset): they survive growth, host pointers do not.
 *
 * Buffers are reference counted (atomic) and hold a reference to their
 * context.  A buffer is internally locked: calls on one buffer from several
 * threads are serialised.
 *
 * Range rules: copies and fills address the whole capacity (allocated or
 * not, like xobjects' update_from_buffer); a range outside [0, capacity) is
 * CK_ERR_INDEX naming the range and the capacity.  free() must name exactly
 * one live allocation (offset and size as allocated).
 */
#ifndef CKERNEL_BUFFER_H
#define CKERNEL_BUFFER_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/memblock.h"
#include "ckernel/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest alignment allocate() accepts. */
#define CK_BUFFER_MAX_ALIGN 4096

/* A new buffer of `capacity` bytes (0 allowed; grows on demand).  Contents
 * are unspecified until written.  On device contexts the memory of a dead
 * buffer of at most 1 MiB may be kept by its context (8 allocations at most)
 * and given to a new buffer of the same capacity: repeated calls that make
 * results of one size allocate nothing from the backend; the context frees
 * what it keeps when it dies. */
CK_API ck_status ck_buffer_new(ck_context *ctx, size_t capacity,
                               ck_buffer **out);
/* A buffer over `capacity` (> 0) bytes of memory someone else owns, without
 * a copy: `native` is the context's kind of handle -- for "cuda" a device
 * pointer (CUdeviceptr cast to void *) on the context's device, inside one
 * allocation (checked: cuPointerGetAttribute, cuMemGetAddressRange); for
 * "opencl" a cl_mem of the context's cl_context (checked:
 * clGetMemObjectInfo; CK_ERR_INVALID_ARGUMENT naming both contexts
 * otherwise) holding at least `capacity` bytes (else CK_ERR_INDEX), not a
 * sub-buffer (CK_ERR_NOT_SUPPORTED), which the buffer retains
 * (clRetainMemObject) and releases when it dies; for "cpu" a host pointer.
 * Wrapping a cl_mem needs a context in the cl_context that made it: see
 * ck_context_new_opencl_wrap.  The allocator works over the memory; growth
 * is CK_ERR_NOT_SUPPORTED.  The memory is never freed by the library:
 * `release(release_arg)` (optional) is called once when the buffer dies,
 * e.g. to drop the foreign owner (a CuPy array behind a
 * __cuda_array_interface__, a pyopencl array); it is not called when the
 * wrap fails. */
CK_API ck_status ck_buffer_wrap(ck_context *ctx, void *native, size_t capacity,
                                void (*release)(void *arg), void *release_arg,
                                ck_buffer **out);
CK_API void ck_buffer_incref(ck_buffer *buf);
CK_API void ck_buffer_decref(ck_buffer *buf);
CK_API uint32_t ck_buffer_refcount(const ck_buffer *buf);
CK_API ck_context *ck_buffer_context(const ck_buffer *buf);

/* First-fit allocation of `size` (> 0) bytes aligned to `align` (a power of
 * two in [1, CK_BUFFER_MAX_ALIGN]); grows the buffer if nothing fits. */
CK_API ck_status ck_buffer_allocate(ck_buffer *buf, size_t size, size_t align,
                                    size_t *out_offset);
/* Release an allocation.  Errors: range outside the capacity (CK_ERR_INDEX),
 * a range already free (double free, CK_ERR_INVALID_STATE), a range that is
 * not exactly one allocation (CK_ERR_INVALID_ARGUMENT). */
CK_API ck_status ck_buffer_free(ck_buffer *buf, size_t offset, size_t size);
/* Grow to `new_capacity` (>= capacity; equal is a no-op), preserving the
 * contents; the new tail is free space. */
CK_API ck_status ck_buffer_grow(ck_buffer *buf, size_t new_capacity);

CK_API size_t ck_buffer_capacity(const ck_buffer *buf);
/* Bytes in live allocations (alignment padding not counted). */
CK_API size_t ck_buffer_used(const ck_buffer *buf);
/* Number of live allocations / of free blocks (for tests and dumps). */
CK_API size_t ck_buffer_allocation_count(const ck_buffer *buf);
CK_API size_t ck_buffer_free_block_count(const ck_buffer *buf);

/* A range [offset, offset + size) of a buffer. */
typedef struct ck_buffer_range {
  size_t offset;
  size_t size;
} ck_buffer_range;

/* Which ranges ck_buffer_ranges lists. */
typedef enum ck_buffer_range_kind {
  CK_BUFFER_RANGES_ALLOCATED = 1, /* live allocations, as allocated         */
  CK_BUFFER_RANGES_FREE = 2       /* free blocks (neighbours always merged) */
} ck_buffer_range_kind;

/* The allocator's map, for pictures and tests: the live allocations or the
 * free blocks, sorted by offset.  Writes min(count, max) entries (`out` may
 * be NULL when max is 0) and stores the count in *out_count, under the
 * buffer's lock.  The allocations and the free blocks together tile
 * [0, capacity) exactly (alignment padding is free space).
 * CK_ERR_INVALID_ARGUMENT for NULLs or an unknown kind. */
CK_API ck_status ck_buffer_ranges(ck_buffer *buf, ck_buffer_range_kind kind,
                                  ck_buffer_range *out, size_t max,
                                  size_t *out_count);

/* Copies (blocking). */
CK_API ck_status ck_buffer_write(ck_buffer *buf, size_t offset,
                                 const void *host_src, size_t n);
CK_API ck_status ck_buffer_read(ck_buffer *buf, size_t offset, void *host_dst,
                                size_t n);
/* Buffer to buffer in the same context (else CK_ERR_INVALID_ARGUMENT "buffers
 * belong to different contexts"); overlapping ranges of one buffer are
 * CK_ERR_INVALID_ARGUMENT (OpenCL forbids them). */
CK_API ck_status ck_buffer_copy(ck_buffer *dst, size_t dst_offset,
                                ck_buffer *src, size_t src_offset, size_t n);
/* Repeat `pattern` (pattern_size in {1,2,4,...,128}) over n bytes at offset;
 * offset and n must be multiples of pattern_size (OpenCL's rule, applied to
 * every backend). */
CK_API ck_status ck_buffer_fill(ck_buffer *buf, size_t offset,
                                const void *pattern, size_t pattern_size,
                                size_t n);

/* The host address of byte 0, for contexts where buffers are host memory:
 * "cpu", and "opencl" on a CPU device (CL_MEM_USE_HOST_PTR buffers whose
 * memory the library allocates).  Valid until the next grow.  Other devices:
 * CK_ERR_NOT_SUPPORTED. */
CK_API ck_status ck_buffer_host_pointer(ck_buffer *buf, void **out);

/* An external memblock holding a reference to `buf` (released when the
 * memblock is freed), so arrays can live in a buffer. */
CK_API ck_status ck_buffer_memblock(ck_buffer *buf, ck_memblock **out);

/* The native handle: cl_mem for opencl, the CUdeviceptr (cast to void *)
 * for cuda, the host pointer for cpu; NULL for a zero-capacity buffer.
 * Borrowed; valid until the buffer grows or dies.  An opencl cl_mem may be
 * retained (clRetainMemObject) to keep the memory past the buffer: the host
 * memory the library allocates for CPU devices is freed by the cl_mem's
 * destructor callback, when the last reference goes. */
CK_API void *ck_buffer_native_handle(const ck_buffer *buf);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_BUFFER_H */
