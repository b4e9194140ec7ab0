/*
 * cuda_loader_internal.h -- the part of the CUDA driver API the library uses,
 * declared here so that the library builds without the CUDA headers, and
 * loaded at run time with dlopen("libcuda.so.1") -- libcuda is never linked.
 * Not installed; nothing here is ABI.
 *
 * Versioned entry points.  <cuda.h> renames several functions with macros
 * (cuMemAlloc -> cuMemAlloc_v2, ...); the unversioned symbols still exported
 * by libcuda are the legacy ones (32-bit sizes, old semantics).  dlsym sees
 * no macros, so the table below names the exact symbols <cuda.h> selects
 * when neither CUDA_API_PER_THREAD_DEFAULT_STREAM nor CUDA_FORCE_API_VERSION
 * is defined.  tests/c/devices/test_cuda_loader.c checks every constant and
 * every prototype against <cuda.h> (when the toolkit is installed) and that
 * the toolkit's stub libcuda.so exports every symbol.
 *
 * Types: CUresult and the enums are int-sized; CUdevice is an int;
 * CUdeviceptr is unsigned long long on 64-bit hosts (the only hosts this
 * backend supports); the handles are opaque pointers.
 */
#ifndef CKERNEL_CUDA_LOADER_INTERNAL_H
#define CKERNEL_CUDA_LOADER_INTERNAL_H

#include "ckernel/error.h"

#include <stddef.h>
#include <stdint.h>

typedef int ck_cu_result;            /* CUresult */
typedef int ck_cu_device;            /* CUdevice */
typedef unsigned long long ck_cu_deviceptr; /* CUdeviceptr (64-bit) */
typedef int ck_cu_jit_option;        /* CUjit_option */
typedef int ck_cu_device_attribute;  /* CUdevice_attribute */
typedef int ck_cu_function_attribute; /* CUpointer_attribute */
#define CK_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
/* CUfunction_attribute */
typedef int ck_cu_pointer_attribute; /* CUpointer_attribute */
typedef struct ck__cu_ctx *ck_cu_context;   /* CUcontext */
typedef struct ck__cu_mod *ck_cu_module;    /* CUmodule */
typedef struct ck__cu_func *ck_cu_function; /* CUfunction */
typedef struct ck__cu_stream *ck_cu_stream; /* CUstream */

/* CUresult values the library reacts to (names of all others come from
 * cuGetErrorName, or from ck__cuda_error_name's table). */
#define CK_CUDA_SUCCESS 0
#define CK_CUDA_ERROR_INVALID_VALUE 1
#define CK_CUDA_ERROR_OUT_OF_MEMORY 2
#define CK_CUDA_ERROR_NOT_INITIALIZED 3
#define CK_CUDA_ERROR_DEINITIALIZED 4
#define CK_CUDA_ERROR_STUB_LIBRARY 34
#define CK_CUDA_ERROR_NO_DEVICE 100
#define CK_CUDA_ERROR_INVALID_DEVICE 101
#define CK_CUDA_ERROR_INVALID_PTX 218
#define CK_CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
#define CK_CUDA_ERROR_NOT_FOUND 500
#define CK_CUDA_ERROR_ILLEGAL_ADDRESS 700
#define CK_CUDA_ERROR_LAUNCH_FAILED 719

/* CUdevice_attribute */
#define CK_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK 1
#define CK_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X 5
#define CK_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
/* CUfunction_attribute */
#define CK_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
/* CUjit_option */
#define CK_CU_JIT_INFO_LOG_BUFFER 3
#define CK_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CK_CU_JIT_ERROR_LOG_BUFFER 5
#define CK_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6
/* CUstream_flags: CU_STREAM_DEFAULT synchronises with the legacy NULL
 * stream, so work other libraries put there is ordered with ours. */
#define CK_CU_STREAM_DEFAULT 0u

/* X(return type, symbol, parameter list) for every required entry point.
 * The symbol is the name passed to dlsym and the field name. */
#define CK_CU_FUNCTIONS(X)                                                     \
  X(ck_cu_result, cuInit, (unsigned int))                                      \
  X(ck_cu_result, cuDriverGetVersion, (int *))                                 \
  X(ck_cu_result, cuGetErrorName, (ck_cu_result, const char **))               \
  X(ck_cu_result, cuGetErrorString, (ck_cu_result, const char **))             \
  X(ck_cu_result, cuDeviceGetCount, (int *))                                   \
  X(ck_cu_result, cuDeviceGet, (ck_cu_device *, int))                          \
  X(ck_cu_result, cuDeviceGetName, (char *, int, ck_cu_device))                \
  X(ck_cu_result, cuDeviceGetAttribute,                                        \
    (int *, ck_cu_device_attribute, ck_cu_device))                             \
  X(ck_cu_result, cuDeviceTotalMem_v2, (size_t *, ck_cu_device))               \
  X(ck_cu_result, cuDevicePrimaryCtxRetain, (ck_cu_context *, ck_cu_device))   \
  X(ck_cu_result, cuDevicePrimaryCtxRelease_v2, (ck_cu_device))                \
  X(ck_cu_result, cuCtxPushCurrent_v2, (ck_cu_context))                        \
  X(ck_cu_result, cuCtxPopCurrent_v2, (ck_cu_context *))                       \
  X(ck_cu_result, cuCtxSynchronize, (void))                                    \
  X(ck_cu_result, cuStreamCreate, (ck_cu_stream *, unsigned int))              \
  X(ck_cu_result, cuStreamDestroy_v2, (ck_cu_stream))                          \
  X(ck_cu_result, cuStreamSynchronize, (ck_cu_stream))                         \
  X(ck_cu_result, cuMemAlloc_v2, (ck_cu_deviceptr *, size_t))                  \
  X(ck_cu_result, cuMemFree_v2, (ck_cu_deviceptr))                             \
  X(ck_cu_result, cuMemGetAddressRange_v2,                                     \
    (ck_cu_deviceptr *, size_t *, ck_cu_deviceptr))                            \
  X(ck_cu_result, cuPointerGetAttribute,                                       \
    (void *, ck_cu_pointer_attribute, ck_cu_deviceptr))                        \
  X(ck_cu_result, cuMemcpyHtoDAsync_v2,                                        \
    (ck_cu_deviceptr, const void *, size_t, ck_cu_stream))                     \
  X(ck_cu_result, cuMemcpyDtoHAsync_v2,                                        \
    (void *, ck_cu_deviceptr, size_t, ck_cu_stream))                           \
  X(ck_cu_result, cuMemcpyDtoDAsync_v2,                                        \
    (ck_cu_deviceptr, ck_cu_deviceptr, size_t, ck_cu_stream))                  \
  X(ck_cu_result, cuMemsetD8Async,                                             \
    (ck_cu_deviceptr, unsigned char, size_t, ck_cu_stream))                    \
  X(ck_cu_result, cuMemsetD16Async,                                            \
    (ck_cu_deviceptr, unsigned short, size_t, ck_cu_stream))                   \
  X(ck_cu_result, cuMemsetD32Async,                                            \
    (ck_cu_deviceptr, unsigned int, size_t, ck_cu_stream))                     \
  X(ck_cu_result, cuModuleLoadDataEx,                                          \
    (ck_cu_module *, const void *, unsigned int, ck_cu_jit_option *, void **)) \
  X(ck_cu_result, cuModuleUnload, (ck_cu_module))                              \
  X(ck_cu_result, cuModuleGetFunction,                                         \
    (ck_cu_function *, ck_cu_module, const char *))                            \
  X(ck_cu_result, cuFuncGetAttribute,                                          \
    (int *, ck_cu_function_attribute, ck_cu_function))                         \
  X(ck_cu_result, cuLaunchKernel,                                              \
    (ck_cu_function, unsigned int, unsigned int, unsigned int, unsigned int,   \
     unsigned int, unsigned int, unsigned int, ck_cu_stream, void **, void **))

/* Optional entry points (NULL when the driver predates them). */
#define CK_CU_OPTIONAL_FUNCTIONS(X)                                            \
  /* CUDA 12.4: lets launches check the argument count and sizes */           \
  X(ck_cu_result, cuFuncGetParamInfo,                                          \
    (ck_cu_function, size_t, size_t *, size_t *))                              \
  /* page-locked host memory: the staging word of ck_context_launch_read */   \
  X(ck_cu_result, cuMemAllocHost_v2, (void **, size_t))                        \
  X(ck_cu_result, cuMemFreeHost, (void *))

#define CK_CU_DECLARE_FIELD(ret, name, params) ret(*name) params;
typedef struct ck_cu_api {
  CK_CU_FUNCTIONS(CK_CU_DECLARE_FIELD)
  CK_CU_OPTIONAL_FUNCTIONS(CK_CU_DECLARE_FIELD)
  int driver_version;   /* cuDriverGetVersion: 1000 * major + 10 * minor */
  char path[256];       /* the library actually loaded (dlinfo), or its name */
} ck_cu_api;
#undef CK_CU_DECLARE_FIELD

/* dlopen `name` and resolve every entry point into *out (no cuInit).  On
 * failure records CK_ERR_BACKEND naming the library and the missing symbol
 * and closes the library.  On success *out_handle is the dlopen handle. */
ck_status ck__cuda_load_table(const char *name, ck_cu_api *out, void **out_handle);

/* The process-wide driver table: loaded from CK_CUDA_DRIVER_LIBRARY, else
 * "libcuda.so.1", else "libcuda.so", and initialised with cuInit(0).  Only
 * a fully successful load is kept (so a failed attempt -- no driver, the
 * toolkit's stub, no device -- is retried on the next call, honouring a
 * changed CK_CUDA_DRIVER_LIBRARY).  NULL with CK_ERR_BACKEND recorded:
 * "no CUDA driver found: ..." (no library, or the stub library) or "CUDA
 * driver present but no device ..." (CUDA_ERROR_NO_DEVICE). */
const ck_cu_api *ck__cuda_api(void);

/* The message ck__cuda_api records when cuInit(0) of the library `path`
 * returns `code` (exposed for the tests: no-device cannot be produced on a
 * machine without a GPU).  Returns CK_ERR_BACKEND. */
ck_status ck__cuda_init_error(ck_cu_result code, const char *path);

/* "CUDA_ERROR_OUT_OF_MEMORY" for 2 ... from a built-in table (used when the
 * driver cannot name a code); "CUDA_ERROR_UNKNOWN_CODE" otherwise. */
const char *ck__cuda_error_name(ck_cu_result code);

#endif /* CKERNEL_CUDA_LOADER_INTERNAL_H */
