/*
 * backend_internal.h -- the backend vtable behind ck_context, and the private parts
 * of contexts, programs and buffers.  Not installed; nothing here is ABI.
 *
 * A backend (cpu, opencl, cuda) implements the vtable below.  Device
 * memory is a ck__devmem: `handle` is the native object (cl_mem; CUdeviceptr
 * for cuda; for cpu the host pointer), `host` the host address of byte 0 when the memory is host
 * addressable (else NULL).  Every entry returns a ck_status having recorded
 * the message; `ctx->lock` is held by the caller for build_program and
 * launch.
 */
#ifndef CKERNEL_BACKEND_INTERNAL_H
#define CKERNEL_BACKEND_INTERNAL_H

#include "core/core_internal.h"

#include <pthread.h>
#include <stdatomic.h>

typedef struct ck__devmem {
  void *handle;
  char *host;
  size_t size;
  bool free_host; /* backend-private: the backend's free() releases `host` */
} ck__devmem;

typedef struct ck__backend_vtable {
  const char *kind;
  ck_status (*alloc)(ck_context *ctx, size_t size, ck__devmem *out);
  void (*free)(ck_context *ctx, ck__devmem *mem);
  ck_status (*copy_h2d)(ck_context *ctx, ck__devmem *dst, size_t off,
                        const void *src, size_t n);
  ck_status (*copy_d2h)(ck_context *ctx, void *dst, ck__devmem *src,
                        size_t off, size_t n);
  ck_status (*copy_d2d)(ck_context *ctx, ck__devmem *dst, size_t dst_off,
                        ck__devmem *src, size_t src_off, size_t n);
  ck_status (*fill)(ck_context *ctx, ck__devmem *dst, size_t off,
                    const void *pattern, size_t pattern_size, size_t n);
  ck_status (*build_program)(ck_context *ctx, const char *source,
                             const char *options, void **out_native);
  void (*release_program)(ck_context *ctx, void *native);
  ck_status (*kernel_create)(ck_context *ctx, void *program_native,
                             const char *name, void **out_kernel);
  void (*kernel_release)(ck_context *ctx, void *kernel);
  /* args: BUFFER args carry their buffer's devmem through ck__buffer_devmem */
  ck_status (*launch)(ck_context *ctx, void *kernel, const char *name,
                      size_t nargs, const ck_kernel_arg *args,
                      size_t global_size);
  /* Optional: launch with a work-group size (0: the implementation's
   * choice), the global size rounded up to whole groups (NULL: `launch`,
   * which may run extra guarded items anyway, as CUDA's whole blocks do). */
  ck_status (*launch_local)(ck_context *ctx, void *kernel, const char *name,
                            size_t nargs, const ck_kernel_arg *args,
                            size_t global_size, size_t local_size);
  /* Optional: launch (local as launch_local), then copy `n` bytes at `off`
   * of `src` to the host `dst` once the kernel is done, one wait for both
   * (NULL: launch_local or launch, then copy_d2h). */
  ck_status (*launch_read)(ck_context *ctx, void *kernel, const char *name,
                           size_t nargs, const ck_kernel_arg *args,
                           size_t global_size, size_t local_size,
                           ck__devmem *src, size_t off, void *dst, size_t n);
  /* Optional: whether the memory of a dead buffer may go to another buffer
   * (ck__pool_give), i.e. nobody else holds it: an OpenCL cl_mem handed out
   * and retained elsewhere must keep its contents (NULL: always). */
  bool (*reusable)(ck_context *ctx, const ck__devmem *mem);
  ck_status (*finish)(ck_context *ctx);
  void (*release)(ck_context *ctx);
  ck_status (*describe)(ck_context *ctx, char *buf, size_t bufsize,
                        size_t *pos);
  /* Optional (NULL: ck_buffer_wrap is CK_ERR_NOT_SUPPORTED): check that
   * `native` is `size` bytes of this context's memory and describe it in
   * *out, without taking ownership (free is never called on it). */
  ck_status (*wrap)(ck_context *ctx, void *native, size_t size,
                    ck__devmem *out);
  /* Optional (NULL: no log kept): append the build log of a built program
   * to buf (ck__appendf rules). */
  ck_status (*build_log)(ck_context *ctx, void *program_native, char *buf,
                         size_t bufsize, size_t *pos);
  /* Optional: undo what wrap took (a reference on the native object) when
   * a wrapped buffer dies.  NULL: nothing to undo. */
  void (*unwrap)(ck_context *ctx, ck__devmem *mem);
  /* Optional (NULL: ck_context_native_handles is CK_ERR_NOT_SUPPORTED): the
   * backend's native context, device and queue/stream handles (borrowed). */
  void (*native)(ck_context *ctx, void **context, void **device, void **queue);
} ck__backend_vtable;

/* A native kernel object made from a program for one kernel name, kept for
 * later launches (used and changed under ctx->lock only). */
typedef struct ck__program_kernel {
  char *name;
  void *kernel;
  struct ck__program_kernel *next;
} ck__program_kernel;

struct ck_program {
  _Atomic(uint32_t) refcount;
  ck_context *ctx;       /* borrowed: see context.c on program lifetime */
  void *native;
  char *source;
  char *options;
  ck__program_kernel *kernels; /* made by ck_context_launch, by name */
  struct ck_program *next; /* cache chain */
};

struct ck_context {
  _Atomic(uint32_t) refcount;
  const ck__backend_vtable *vt;
  void *state;             /* backend state */
  bool fp64;
  bool host_accessible;
  pthread_mutex_t lock;    /* program cache, launches */
  struct ck_program *cache;
  /* Device memory of dead buffers kept for new buffers of the same size
   * (ck__pool_take / ck__pool_give; device kinds only), freed with the
   * context: a repeated call's result costs no allocation of the backend. */
  pthread_mutex_t pool_lock;
  ck__devmem pool[8];
  size_t pool_n;
};

/* The largest allocation the pool keeps. */
#define CK__POOL_MAX_BYTES ((size_t)1 << 20)

/* Memory of exactly `size` bytes from the context's pool into *out (true),
 * or false when it holds none. */
bool ck__pool_take(ck_context *ctx, size_t size, ck__devmem *out);

/* Keep `mem` (allocated by ctx->vt->alloc) in the pool (true), or false:
 * the caller frees it (a host context, too large, the pool full, memory
 * someone else still holds: vt->reusable). */
bool ck__pool_give(ck_context *ctx, const ck__devmem *mem);

extern const ck__backend_vtable ck__cpu_backend;
extern const ck__backend_vtable ck__opencl_backend;
extern const ck__backend_vtable ck__cuda_backend;

/* Fill ctx->state/fp64/host_accessible for an OpenCL device. */
ck_status ck__opencl_init(ck_context *ctx, uint32_t platform, uint32_t device);

/* The same over a cl_context, cl_device_id and (optional: NULL makes one)
 * cl_command_queue made elsewhere; retains them (ck_context_new_opencl_wrap). */
ck_status ck__opencl_init_wrap(ck_context *ctx, void *cl_context, void *cl_device,
                               void *cl_queue);

/* Fill ctx->state/fp64/host_accessible for CUDA device `ordinal`
 * (backend_cuda.c). */
ck_status ck__cuda_init(ck_context *ctx, uint32_t ordinal);

/* The first fields of every struct ck_buffer (buffer.c has the rest and
 * checks that they line up): contexts and backends read a buffer's context
 * and device memory through them, so they need not call into buffer.c. */
typedef struct ck__buffer_head {
  _Atomic(uint32_t) refcount;
  ck_context *ctx;
  ck__devmem mem;
} ck__buffer_head;

static inline ck__devmem *ck__buffer_devmem(ck_buffer *buf) {
  return &((ck__buffer_head *)(void *)buf)->mem;
}
static inline ck_context *ck__buffer_ctx(const ck_buffer *buf) {
  return ((const ck__buffer_head *)(const void *)buf)->ctx;
}
static inline size_t ck__buffer_size(const ck_buffer *buf) {
  return ((const ck__buffer_head *)(const void *)buf)->mem.size;
}

/* The first lines of the library's own device programs (the scan, the arena
 * compaction): the kernel qualifier, the buffer address space, the work
 * item's flat index and the 64-bit integer types, for OpenCL C and CUDA. */
#define CK__DEVICE_PRELUDE_OPENCL                                                          \
  "#define CK_KERNEL __kernel\n"                                                            \
  "#define CK_GLOBAL __global\n"                                                            \
  "#define CK_GID get_global_id(0)\n"                                                       \
  "typedef long ck_i64;\n"                                                                  \
  "typedef ulong ck_u64;\n"
#define CK__DEVICE_PRELUDE_CUDA                                                            \
  "#define CK_KERNEL extern \"C\" __global__\n"                                            \
  "#define CK_GLOBAL\n"                                                                     \
  "#define CK_GID (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x)\n"             \
  "typedef long long ck_i64;\n"                                                             \
  "typedef unsigned long long ck_u64;\n"

#endif /* CKERNEL_BACKEND_INTERNAL_H */
