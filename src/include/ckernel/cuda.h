/*
 * ckernel/cuda.h -- what is particular to the "cuda" context kind, and the
 * NVRTC entry points that need no device.
 *
 * A "cuda" context (ck_context_new("cuda"), ck_context_new_cuda) is used
 * through the generic API of context.h and buffer.h like any other:
 *
 *   - Programs are CUDA C++ compiled by NVRTC to PTX for the device's
 *     architecture (the highest virtual architecture NVRTC supports that is
 *     not newer than the device: --gpu-architecture=compute_XY) and loaded
 *     with cuModuleLoadDataEx.  Kernels are looked up by name, so they are
 *     declared `extern "C" __global__`.  `options` of ck_context_build_program
 *     are NVRTC options separated by white space (double quotes group).
 *     Floating-point contraction is off (--fmad=false is added unless the
 *     options name -fmad/--fmad themselves): a*b+c rounds twice, as on the
 *     host and in OpenCL programs with FP_CONTRACT OFF, so results equal
 *     the CPU's; --fmad=true asks for fused multiply-adds.
 *   - Launches run ceil(n / block) blocks of 256 threads (fewer if the
 *     kernel allows fewer): kernels guard their index, e.g.
 *       unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x
 *                              + threadIdx.x;
 *       if (i >= n) return;
 *     A CK_KERNEL_ARG_BUFFER argument is passed as a device pointer
 *     (CUdeviceptr of the buffer + offset; any offset, no alignment rule
 *     beyond what the kernel's loads need); a CK_KERNEL_ARG_SCALAR as its
 *     bytes.  With a driver >= 12.4 the argument count and every argument's
 *     size are checked against the kernel's parameters
 *     (CK_ERR_INVALID_ARGUMENT).
 *   - ck_buffer_native_handle returns the buffer's CUdeviceptr cast to
 *     void *.  Buffers are not host accessible.
 *   - Errors name the failing driver call and the CUDA error:
 *     "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
 *     (CK_ERR_NO_MEMORY for out-of-memory, CK_ERR_BACKEND otherwise); a
 *     failed build is "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION
 *     (6): <log>" or "cuModuleLoadDataEx failed: ...: <JIT error log>".
 *
 * Loading.  The driver is dlopen'ed on first use from CK_CUDA_DRIVER_LIBRARY,
 * else libcuda.so.1, else libcuda.so, and NVRTC from CK_NVRTC_LIBRARY, else
 * the folders of ck_cuda_set_nvrtc_search_path, else the nvidia-cuda-nvrtc
 * wheel of $VIRTUAL_ENV / $CONDA_PREFIX, else $CUDA_HOME/lib64,
 * $CUDA_PATH/lib64, /usr/local/cuda/lib64, else the system library path.
 * Nothing is linked.  Without a usable driver ck_context_new("cuda") fails
 * with CK_ERR_BACKEND: "no CUDA driver found: ..." (no library, or the
 * toolkit's stub library), "CUDA driver present but no device ...".
 */
#ifndef CKERNEL_CUDA_H
#define CKERNEL_CUDA_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The number of CUDA devices the driver shows (after CUDA_VISIBLE_DEVICES).
 * A driver without devices: CK_OK and 0.  No driver: CK_ERR_BACKEND. */
CK_API ck_status ck_cuda_device_count(uint32_t *out);

/* The driver's CUDA version, 1000 * major + 10 * minor (13000 for 13.0). */
CK_API ck_status ck_cuda_driver_version(int32_t *out);

/* The device of a cuda context: its ordinal and compute capability (each
 * out pointer optional).  Other kinds: CK_ERR_INVALID_ARGUMENT. */
CK_API ck_status ck_cuda_context_device(const ck_context *ctx, int32_t *ordinal,
                                        int32_t *cc_major, int32_t *cc_minor);

/* The native handles of a cuda context (each optional): the device's
 * primary CUcontext and the CUstream every operation of the context runs on
 * (all operations are complete when the library's calls return). */
CK_API ck_status ck_cuda_context_handles(const ck_context *ctx,
                                         void **cu_context, void **cu_stream);

/* Folders (separated by ':') searched for libnvrtc.so.* after
 * CK_NVRTC_LIBRARY and before everything else; NULL or "" clears.  Takes
 * effect at the next load attempt (NVRTC stays loaded once loaded).  The
 * Python package passes the nvidia-cuda-nvrtc wheel's folders here. */
CK_API ck_status ck_cuda_set_nvrtc_search_path(const char *dirs);

/* Load NVRTC if needed; its version and the file loaded (snprintf rules
 * into path/pathsize; *path_len, optional, gets the full length).  Every out
 * argument is optional.  Not found: CK_ERR_BACKEND listing where it looked. */
CK_API ck_status ck_cuda_nvrtc_version(int32_t *major, int32_t *minor,
                                       char *path, size_t pathsize,
                                       size_t *path_len);

/*
 * Compile CUDA C++ `source` to PTX with NVRTC, without a driver or device.
 * `arch`: "sm_80", "compute_90", "90a", ... (the PTX is for the virtual
 * architecture compute_XY; NULL or "": NVRTC's default); an architecture
 * NVRTC does not support is CK_ERR_NOT_SUPPORTED.  `options`: NVRTC options
 * as for ck_context_build_program (NULL = none); if they name an
 * architecture themselves, `arch` is not added.
 * On success *out_ptx is the NUL-terminated PTX and *out_ptx_size
 * (optional) its length; *out_log (optional) is NVRTC's whole log ("" when
 * empty), also on failure.  Both are owned by the caller: ck_cuda_free.
 * A compile error is CK_ERR_BACKEND "nvrtcCompileProgram failed:
 * NVRTC_ERROR_COMPILATION (6): <log>" (the message truncated to the error
 * buffer; the log in *out_log is whole).
 */
CK_API ck_status ck_cuda_compile_ptx(const char *source, const char *options,
                                     const char *arch, char **out_ptx,
                                     size_t *out_ptx_size, char **out_log);

/* Free what ck_cuda_compile_ptx returned (NULL is a no-op). */
CK_API void ck_cuda_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_CUDA_H */
