/*
 * opencl_loader_internal.h -- the part of the OpenCL 1.2 API the library uses,
 * declared here so that the library builds without the OpenCL headers, and
 * loaded at run time from the ICD loader (dlopen) -- libOpenCL is never
 * linked.  tests/c/test_context_opencl.c checks these values against
 * <CL/cl.h> where that header exists.  Not installed; nothing here is ABI.
 */
#ifndef CKERNEL_OPENCL_LOADER_INTERNAL_H
#define CKERNEL_OPENCL_LOADER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t ck_cl_int;
typedef uint32_t ck_cl_uint;
typedef uint64_t ck_cl_ulong;
typedef uint64_t ck_cl_bitfield;
typedef struct ck__cl_platform *ck_cl_platform_id;
typedef struct ck__cl_device *ck_cl_device_id;
typedef struct ck__cl_context *ck_cl_context;
typedef struct ck__cl_queue *ck_cl_command_queue;
typedef struct ck__cl_mem *ck_cl_mem;
typedef struct ck__cl_program *ck_cl_program;
typedef struct ck__cl_kernel *ck_cl_kernel;
typedef struct ck__cl_event *ck_cl_event;

#define CK_CL_SUCCESS 0
#define CK_CL_DEVICE_NOT_FOUND (-1)
#define CK_CL_BUILD_PROGRAM_FAILURE (-11)
#define CK_CL_PLATFORM_NOT_FOUND_KHR (-1001)
#define CK_CL_TRUE 1u
#define CK_CL_FALSE 0u

#define CK_CL_PLATFORM_VERSION 0x0901
#define CK_CL_PLATFORM_NAME 0x0902
#define CK_CL_DEVICE_TYPE 0x1000
#define CK_CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CK_CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CK_CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019
#define CK_CL_DEVICE_NAME 0x102B
#define CK_CL_DEVICE_VERSION 0x102F
#define CK_CL_DEVICE_EXTENSIONS 0x1030
#define CK_CL_DEVICE_PLATFORM 0x1031
#define CK_CL_DEVICE_DOUBLE_FP_CONFIG 0x1032
#define CK_CL_CONTEXT_DEVICES 0x1081
#define CK_CL_CONTEXT_NUM_DEVICES 0x1083
#define CK_CL_QUEUE_CONTEXT 0x1090
#define CK_CL_QUEUE_DEVICE 0x1091
#define CK_CL_QUEUE_PROPERTIES 0x1093
#define CK_CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE (1u << 0)
#define CK_CL_MEM_FLAGS 0x1101
#define CK_CL_MEM_SIZE 0x1102
#define CK_CL_MEM_HOST_PTR 0x1103
#define CK_CL_MEM_REFERENCE_COUNT 0x1105
#define CK_CL_MEM_CONTEXT 0x1106
#define CK_CL_MEM_ASSOCIATED_MEMOBJECT 0x1107
#define CK_CL_DEVICE_TYPE_CPU (1u << 1)
#define CK_CL_DEVICE_TYPE_ALL 0xFFFFFFFFu
#define CK_CL_MEM_READ_WRITE (1u << 0)
#define CK_CL_MEM_USE_HOST_PTR (1u << 3)
#define CK_CL_MAP_READ (1u << 0)
#define CK_CL_MAP_WRITE (1u << 1)
#define CK_CL_PROGRAM_BUILD_LOG 0x1183
#define CK_CL_BUFFER_CREATE_TYPE_REGION 0x1220

typedef struct ck_cl_buffer_region {
  size_t origin;
  size_t size;
} ck_cl_buffer_region;

/* X(return type, name, parameter list) for every entry point used. */
#define CK_CL_FUNCTIONS(X)                                                     \
  X(ck_cl_int, clGetPlatformIDs,                                               \
    (ck_cl_uint, ck_cl_platform_id *, ck_cl_uint *))                           \
  X(ck_cl_int, clGetPlatformInfo,                                              \
    (ck_cl_platform_id, ck_cl_uint, size_t, void *, size_t *))                 \
  X(ck_cl_int, clGetDeviceIDs,                                                 \
    (ck_cl_platform_id, ck_cl_bitfield, ck_cl_uint, ck_cl_device_id *,         \
     ck_cl_uint *))                                                            \
  X(ck_cl_int, clGetDeviceInfo,                                                \
    (ck_cl_device_id, ck_cl_uint, size_t, void *, size_t *))                   \
  X(ck_cl_context, clCreateContext,                                            \
    (const intptr_t *, ck_cl_uint, const ck_cl_device_id *, void *, void *,    \
     ck_cl_int *))                                                             \
  X(ck_cl_int, clReleaseContext, (ck_cl_context))                              \
  X(ck_cl_int, clRetainContext, (ck_cl_context))                               \
  X(ck_cl_int, clGetContextInfo,                                               \
    (ck_cl_context, ck_cl_uint, size_t, void *, size_t *))                     \
  X(ck_cl_command_queue, clCreateCommandQueue,                                 \
    (ck_cl_context, ck_cl_device_id, ck_cl_bitfield, ck_cl_int *))             \
  X(ck_cl_int, clReleaseCommandQueue, (ck_cl_command_queue))                   \
  X(ck_cl_int, clRetainCommandQueue, (ck_cl_command_queue))                    \
  X(ck_cl_int, clGetCommandQueueInfo,                                          \
    (ck_cl_command_queue, ck_cl_uint, size_t, void *, size_t *))               \
  X(ck_cl_mem, clCreateBuffer,                                                 \
    (ck_cl_context, ck_cl_bitfield, size_t, void *, ck_cl_int *))              \
  X(ck_cl_mem, clCreateSubBuffer,                                              \
    (ck_cl_mem, ck_cl_bitfield, ck_cl_uint, const void *, ck_cl_int *))        \
  X(ck_cl_int, clReleaseMemObject, (ck_cl_mem))                                \
  X(ck_cl_int, clRetainMemObject, (ck_cl_mem))                                 \
  X(ck_cl_int, clGetMemObjectInfo,                                             \
    (ck_cl_mem, ck_cl_uint, size_t, void *, size_t *))                         \
  X(ck_cl_int, clSetMemObjectDestructorCallback,                               \
    (ck_cl_mem, void (*)(ck_cl_mem, void *), void *))                          \
  X(ck_cl_int, clEnqueueWriteBuffer,                                           \
    (ck_cl_command_queue, ck_cl_mem, ck_cl_uint, size_t, size_t, const void *, \
     ck_cl_uint, const ck_cl_event *, ck_cl_event *))                          \
  X(ck_cl_int, clEnqueueReadBuffer,                                            \
    (ck_cl_command_queue, ck_cl_mem, ck_cl_uint, size_t, size_t, void *,       \
     ck_cl_uint, const ck_cl_event *, ck_cl_event *))                          \
  X(ck_cl_int, clEnqueueCopyBuffer,                                            \
    (ck_cl_command_queue, ck_cl_mem, ck_cl_mem, size_t, size_t, size_t,        \
     ck_cl_uint, const ck_cl_event *, ck_cl_event *))                          \
  X(ck_cl_int, clEnqueueFillBuffer,                                            \
    (ck_cl_command_queue, ck_cl_mem, const void *, size_t, size_t, size_t,     \
     ck_cl_uint, const ck_cl_event *, ck_cl_event *))                          \
  X(void *, clEnqueueMapBuffer,                                                \
    (ck_cl_command_queue, ck_cl_mem, ck_cl_uint, ck_cl_bitfield, size_t,       \
     size_t, ck_cl_uint, const ck_cl_event *, ck_cl_event *, ck_cl_int *))     \
  X(ck_cl_int, clEnqueueUnmapMemObject,                                        \
    (ck_cl_command_queue, ck_cl_mem, void *, ck_cl_uint, const ck_cl_event *,  \
     ck_cl_event *))                                                           \
  X(ck_cl_program, clCreateProgramWithSource,                                  \
    (ck_cl_context, ck_cl_uint, const char **, const size_t *, ck_cl_int *))   \
  X(ck_cl_int, clBuildProgram,                                                 \
    (ck_cl_program, ck_cl_uint, const ck_cl_device_id *, const char *, void *, \
     void *))                                                                  \
  X(ck_cl_int, clGetProgramBuildInfo,                                          \
    (ck_cl_program, ck_cl_device_id, ck_cl_uint, size_t, void *, size_t *))    \
  X(ck_cl_int, clReleaseProgram, (ck_cl_program))                              \
  X(ck_cl_kernel, clCreateKernel, (ck_cl_program, const char *, ck_cl_int *))  \
  X(ck_cl_int, clReleaseKernel, (ck_cl_kernel))                                \
  X(ck_cl_int, clSetKernelArg, (ck_cl_kernel, ck_cl_uint, size_t, const void *)) \
  X(ck_cl_int, clEnqueueNDRangeKernel,                                         \
    (ck_cl_command_queue, ck_cl_kernel, ck_cl_uint, const size_t *,            \
     const size_t *, const size_t *, ck_cl_uint, const ck_cl_event *,          \
     ck_cl_event *))                                                           \
  X(ck_cl_int, clFinish, (ck_cl_command_queue))

#define CK_CL_DECLARE_FIELD(ret, name, params) ret(*name) params;
typedef struct ck_cl_api {
  CK_CL_FUNCTIONS(CK_CL_DECLARE_FIELD)
} ck_cl_api;
#undef CK_CL_DECLARE_FIELD

/* The loaded table (process-wide, loaded once, never unloaded), or NULL
 * with CK_ERR_BACKEND recorded. */
const ck_cl_api *ck__opencl_api(void);

/* "CL_BUILD_PROGRAM_FAILURE" for -11; "CL_UNKNOWN_ERROR" otherwise. */
const char *ck__opencl_error_name(ck_cl_int code);

#endif /* CKERNEL_OPENCL_LOADER_INTERNAL_H */
