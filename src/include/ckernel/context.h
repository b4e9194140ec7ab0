/*
 * ckernel/context.h -- execution contexts (cpu, opencl; cuda designed in).
 *
 * A ck_context owns one backend: the memory and the queue on which buffers
 * (buffer.h) live and device programs run.  Contexts are opaque and
 * reference counted (atomic counts; ck_context_new* returns a count of 1
 * owned by the caller).  Every buffer and every program handed out holds a
 * reference to its context, so a context outlives everything made in it.
 *
 * Kinds
 *   "cpu"     host memory; always available.  Has no program compiler
 *             (ck_context_build_program: CK_ERR_NOT_SUPPORTED).
 *   "opencl"  an OpenCL device through the ICD loader, which is loaded at run
 *             time (dlopen "libOpenCL.so.1", then "libOpenCL.so"): the library
 *             never links libOpenCL.  Device: CK_OPENCL_DEVICE="p:d" (platform
 *             and device indices) or the first device of the first platform.
 *             No loader or no platform: CK_ERR_BACKEND with the reason.
 *   "cuda"    a CUDA device through the driver API, loaded at run time
 *             (dlopen "libcuda.so.1"); programs are CUDA C compiled by NVRTC,
 *             also loaded at run time.  Device: CK_CUDA_DEVICE (an ordinal)
 *             or device 0.  No driver, the toolkit's stub driver or no
 *             device: CK_ERR_BACKEND with the reason.  See ckernel/cuda.h.
 *
 * Thread safety: contexts may be shared between threads.  Program builds,
 * the program cache and kernel launches are serialised by a per-context lock.
 */
#ifndef CKERNEL_CONTEXT_H
#define CKERNEL_CONTEXT_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/builder.h"
#include "ckernel/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_context ck_context;
typedef struct ck_buffer ck_buffer;
typedef struct ck_program ck_program;

/* Make a context of `kind` ("cpu", "opencl", "cuda"). */
CK_API ck_status ck_context_new(const char *kind, ck_context **out);

/* An OpenCL context on device `device_index` of platform `platform_index`
 * (indices as listed by `clinfo -l`).  Out-of-range indices: CK_ERR_INDEX. */
CK_API ck_status ck_context_new_opencl(uint32_t platform_index,
                                       uint32_t device_index, ck_context **out);

/* An OpenCL context over objects made elsewhere (pyopencl, another library,
 * the caller's own OpenCL code), without copying anything: `cl_context` (a
 * cl_context), `cl_device` (a cl_device_id of that context) and `cl_queue`
 * (a cl_command_queue of that context and device, or NULL: the library
 * makes one).  The library retains the context and the queue
 * (clRetainContext, clRetainCommandQueue) and releases them when the
 * ck_context dies, so the caller may release its own references at any
 * time.  Buffers of such a context live in the foreign cl_context: cl_mem
 * objects of that cl_context can be wrapped (ck_buffer_wrap) and the
 * context's buffers handed out (ck_buffer_native_handle) with no copy.
 * Every launch and copy of the library waits for completion (clFinish),
 * so work the caller enqueues on the same queue is ordered with it.
 * Errors: no ICD loader: CK_ERR_BACKEND; an invalid context or queue, a
 * device that is not the context's, a queue of another context or device:
 * CK_ERR_INVALID_ARGUMENT naming the handle. */
CK_API ck_status ck_context_new_opencl_wrap(void *cl_context, void *cl_device,
                                            void *cl_queue, ck_context **out);

/* The backend's native handles, borrowed (valid while `ctx` lives; retain
 * them to keep them longer): opencl: cl_context, cl_device_id and the
 * context's cl_command_queue.  Any out pointer may be NULL.  Other kinds:
 * CK_ERR_NOT_SUPPORTED. */
CK_API ck_status ck_context_native_handles(ck_context *ctx, void **context,
                                           void **device, void **queue);

/* A CUDA context on device `device_ordinal` (the driver's numbering, after
 * CUDA_VISIBLE_DEVICES), in the device's primary context.  Out of range:
 * CK_ERR_INDEX. */
CK_API ck_status ck_context_new_cuda(uint32_t device_ordinal, ck_context **out);

/* Reference counting (NULL is a no-op). */
CK_API void ck_context_incref(ck_context *ctx);
CK_API void ck_context_decref(ck_context *ctx);
CK_API uint32_t ck_context_refcount(const ck_context *ctx);

/* "cpu", "opencl" or "cuda" (static string), "" for NULL. */
CK_API const char *ck_context_kind(const ck_context *ctx);

/* One line: kind, device name, platform, version, fp64 support.  snprintf
 * rules: writes at most bufsize bytes (buf may be NULL if bufsize is 0),
 * *out_len (optional) receives the full length without the NUL. */
CK_API ck_status ck_context_describe(ck_context *ctx, char *buf, size_t bufsize,
                                     size_t *out_len);

/* True if the device computes in double precision (cpu: always). */
CK_API bool ck_context_supports_fp64(const ck_context *ctx);

/* True if buffers of this context are directly addressable from the host
 * (cpu; opencl on a CPU device: see ck_buffer_host_pointer). */
CK_API bool ck_context_host_accessible(const ck_context *ctx);

/* Wait until every command queued on the context has completed.  All the
 * operations of this library are blocking already; this exists for callers
 * that enqueue through the native handles. */
CK_API ck_status ck_context_finish(ck_context *ctx);

/*
 * Programs.  ck_context_build_program compiles `source` with `options`
 * (NULL = "") for the context's device and returns a program reference owned
 * by the caller (release with ck_program_decref).  Builds are cached per
 * context, keyed by (source, options, device): building the same text again
 * returns the same ck_program (the cache lives as long as the context).
 * A failed build is CK_ERR_BACKEND, "clBuildProgram failed:
 * CL_BUILD_PROGRAM_FAILURE (-11): <build log>" (cuda: "nvrtcCompileProgram
 * failed: NVRTC_ERROR_COMPILATION (6): <log>"; truncated to the error
 * buffer); failures are not cached.
 */
CK_API ck_status ck_context_build_program(ck_context *ctx, const char *source,
                                          const char *options,
                                          ck_program **out);
CK_API void ck_program_incref(ck_program *program);
CK_API void ck_program_decref(ck_program *program);
CK_API ck_context *ck_program_context(const ck_program *program);

/* The source text and options the program was built from (owned by the
 * program: valid while a reference is held; NULL for NULL). */
CK_API const char *ck_program_source(const ck_program *program);
CK_API const char *ck_program_options(const ck_program *program);

/* The compiler's log of the (successful) build: warnings and remarks, often
 * empty.  Backends that keep no log of a successful build give "" (cuda:
 * NVRTC's log is dropped once the PTX is made; a failed build's log is in
 * its error message).  snprintf rules as ck_context_describe. */
CK_API ck_status ck_program_build_log(ck_program *program, char *buf,
                                      size_t bufsize, size_t *out_len);

/* Kernel arguments of a launch. */
typedef enum ck_kernel_arg_kind {
  CK_KERNEL_ARG_BUFFER = 1, /* a __global pointer: `buffer` at `offset`     */
  CK_KERNEL_ARG_SCALAR = 2  /* `size` bytes at `value`, passed by value     */
} ck_kernel_arg_kind;

/* A buffer argument with offset 0 passes the whole buffer; a non-zero offset
 * makes a sub-buffer, which OpenCL requires to be a multiple of the device's
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN (CK_ERR_INVALID_ARGUMENT otherwise).  Kernels
 * that take arbitrary offsets receive the whole buffer and the offset as a
 * scalar (the device-kernel convention below).  CUDA passes the buffer's
 * device pointer plus the offset, any offset. */
typedef struct ck_kernel_arg {
  uint32_t kind;      /* ck_kernel_arg_kind */
  uint32_t reserved_; /* zero */
  ck_buffer *buffer;  /* BUFFER */
  size_t offset;      /* BUFFER: byte offset into buffer */
  const void *value;  /* SCALAR: the bytes */
  size_t size;        /* SCALAR: their number */
} ck_kernel_arg;

/* Run `kernel_name` of `program` over a 1-d range of `global_size`
 * work-items (0: nothing is launched) and wait for completion.  The native
 * kernel object is made on the first launch of each name and kept with the
 * program (released with the context), so repeated launches cost only
 * setting the arguments, the enqueue and the wait.  OpenCL: the
 * local size is left to the implementation (NULL), which is legal for every
 * global size on OpenCL 1.2 devices.  CUDA: whole blocks are launched, so
 * up to block-1 extra threads run: kernels that should run on every backend
 * take the count and guard their index (the device-kernel convention and
 * the generated kernels do). */
CK_API ck_status ck_context_launch(ck_context *ctx, ck_program *program,
                                   const char *kernel_name, size_t nargs,
                                   const ck_kernel_arg *args,
                                   size_t global_size);

/* ck_context_launch with a work-group size of `local_size` work-items (0:
 * the implementation's choice, as ck_context_launch).  OpenCL: at most the
 * device's CL_DEVICE_MAX_WORK_GROUP_SIZE (smaller is used if larger is
 * asked), and the global size is rounded up to whole work-groups, so up to
 * local_size-1 extra work-items run: the kernel must take the count and
 * guard its index (the device-kernel convention and the generated kernels
 * do).  A fixed work-group size matters on implementations that compile
 * one work-group function per size, e.g. PoCL, where NULL makes every new
 * global size compile the kernel again.  CUDA launches whole blocks in
 * any case. */
CK_API ck_status ck_context_launch_local(ck_context *ctx, ck_program *program,
                                         const char *kernel_name, size_t nargs,
                                         const ck_kernel_arg *args,
                                         size_t global_size, size_t local_size);

/* ck_context_launch_local, then `n` bytes at `offset` of `buffer` (a buffer
 * of `ctx`) copied to `host_dst` once the kernel has completed, with one
 * wait for both: what a launch reporting through a small device word (an
 * error flag read after every launch) needs, without a synchronisation of
 * its own for the read.  CUDA queues the copy behind the kernel on the
 * context's stream (through page-locked staging bytes of the context when
 * n <= 64) and synchronises once; OpenCL enqueues a blocking read behind
 * the kernel on its in-order queue (a foreign out-of-order queue: clFinish
 * first); backends without such a path launch, then read.  A global_size
 * of 0 launches nothing and still reads.  Nothing is read when the launch
 * fails.  As for the launch's buffer arguments, the caller keeps `buffer`
 * from growing during the call.  CK_ERR_INDEX when [offset, offset + n)
 * is not inside the buffer's capacity. */
CK_API ck_status ck_context_launch_read(ck_context *ctx, ck_program *program,
                                        const char *kernel_name, size_t nargs,
                                        const ck_kernel_arg *args,
                                        size_t global_size, size_t local_size,
                                        ck_buffer *buffer, size_t offset,
                                        void *host_dst, size_t n);

/*
 * Device ckernels: an ordinary host-side leaf ckernel whose entry point
 * launches a device kernel.  Its data holds a context reference, a program
 * reference and the compiled kernel object; its destructor releases them.
 *
 * Convention.  The `dst` and `src[j]` pointers passed to the entry point are
 * `ck_device_ptr *` (cast to char *): an element address is (buffer, byte
 * offset).  Every operand must live in the kernel's context.  One call of
 * the SINGLE entry processes `count` elements (shape and strides fixed when
 * the kernel is built); the device kernel is called as
 *
 *   kernel(__global char *dst, ulong dst_offset, long dst_stride,
 *          __global char *src0, ulong src0_offset, long src0_stride, ...,
 *          ulong count)
 *
 * over `count` work-items: element i of operand k is at
 * buf_k + offset_k + i * stride_k (byte offsets and strides).  Only
 * CK_KERNEL_REQUEST_SINGLE is supported (STRIDED: CK_ERR_NOT_SUPPORTED).
 * `nsrc` <= CK_DEVICE_KERNEL_MAX_SRC.  On success *out_end (optional) is
 * the end offset of the kernel in the builder.
 */
typedef struct ck_device_ptr {
  ck_buffer *buffer;
  size_t offset;
} ck_device_ptr;

#define CK_DEVICE_KERNEL_MAX_SRC 8

CK_API ck_status ck_make_device_kernel(ck_kernel_builder *ckb, size_t offset,
                                       ck_kernel_request req, ck_context *ctx,
                                       ck_program *program,
                                       const char *kernel_name, size_t nsrc,
                                       size_t count, intptr_t dst_stride,
                                       const intptr_t *src_strides,
                                       size_t *out_end);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_CONTEXT_H */
