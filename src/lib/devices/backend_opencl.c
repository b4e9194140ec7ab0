/*
 * backend_opencl.c -- the "opencl" backend, over the ICD loader loaded at run
 * time (opencl_loader_internal.h).
 *
 * Memory.  On devices of type CPU the library allocates the memory itself
 * (page aligned) and wraps it with CL_MEM_USE_HOST_PTR, so buffers are host
 * addressable (ck_buffer_host_pointer) and the ICD (PoCL) works in place
 * without staging copies.  Other devices get plain CL_MEM_READ_WRITE
 * buffers.  A zero-capacity buffer has no cl_mem (OpenCL forbids size 0).
 *
 * Commands.  One in-order queue per context; every operation is blocking
 * (blocking reads/writes, clFinish after copies, fills and launches).
 *
 * Launch geometry.  ck_context_launch: global size = the element count,
 * local size NULL: legal for any global size on OpenCL 1.2 (a local size
 * must divide the global size there), the implementation picks the
 * work-group size -- which on PoCL depends on the global size, and every new
 * work-group size compiles the kernel again (0.2-0.5 s).
 * ck_context_launch_local: a fixed work-group size (at most the device's
 * maximum) and the global size rounded up to whole groups, so one compiled
 * work-group function serves every size; the kernel guards its index.
 */
#include "devices/backend_internal.h"
#include "devices/opencl_loader_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* ---- loader ------------------------------------------------------------ */

static pthread_mutex_t ck__cl_load_lock = PTHREAD_MUTEX_INITIALIZER;
static ck_cl_api ck__cl_table;
static _Atomic(bool) ck__cl_loaded;

const ck_cl_api *ck__opencl_api(void) {
  if (atomic_load_explicit(&ck__cl_loaded, memory_order_acquire)) {
    return &ck__cl_table;
  }
  const ck_cl_api *result = NULL;
  pthread_mutex_lock(&ck__cl_load_lock);
  if (atomic_load_explicit(&ck__cl_loaded, memory_order_relaxed)) {
    result = &ck__cl_table;
    goto done;
  }
  /* CK_OPENCL_LIBRARY overrides the loader's name (tests, odd installs). */
  const char *names[3] = {getenv("CK_OPENCL_LIBRARY"), NULL, NULL};
  if (names[0] == NULL || names[0][0] == '\0') {
    names[0] = "libOpenCL.so.1";
    names[1] = "libOpenCL.so";
  }
  void *lib = NULL;
  const char *why = "";
  for (int i = 0; i < 2 && names[i] != NULL && lib == NULL; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      const char *e = dlerror();
      why = e != NULL ? e : "dlopen failed";
    }
  }
  if (lib == NULL) {
    CK_ERROR(CK_ERR_BACKEND,
             "cannot load the OpenCL ICD loader (%s): %s; install an OpenCL "
             "runtime (e.g. ocl-icd-libopencl1 + pocl-opencl-icd)",
             names[0], why);
    goto done;
  }
  ck_cl_api t;
#define CK_CL_LOAD(ret, name, params)                                          \
  {                                                                            \
    void *sym = dlsym(lib, #name);                                             \
    if (sym == NULL) {                                                         \
      CK_ERROR(CK_ERR_BACKEND, "the OpenCL loader %s lacks %s", names[0],      \
               #name);                                                         \
      dlclose(lib);                                                            \
      goto done;                                                               \
    }                                                                          \
    memcpy(&t.name, &sym, sizeof sym);                                         \
  }
  CK_CL_FUNCTIONS(CK_CL_LOAD)
#undef CK_CL_LOAD
  ck__cl_table = t; /* the library stays loaded for the process */
  atomic_store_explicit(&ck__cl_loaded, true, memory_order_release);
  result = &ck__cl_table;
done:
  pthread_mutex_unlock(&ck__cl_load_lock);
  return result;
}

const char *ck__opencl_error_name(ck_cl_int code) {
  switch (code) {
#define E(n, v) case v: return #n;
    E(CL_SUCCESS, 0)
    E(CL_DEVICE_NOT_FOUND, -1)
    E(CL_DEVICE_NOT_AVAILABLE, -2)
    E(CL_COMPILER_NOT_AVAILABLE, -3)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4)
    E(CL_OUT_OF_RESOURCES, -5)
    E(CL_OUT_OF_HOST_MEMORY, -6)
    E(CL_PROFILING_INFO_NOT_AVAILABLE, -7)
    E(CL_MEM_COPY_OVERLAP, -8)
    E(CL_IMAGE_FORMAT_MISMATCH, -9)
    E(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10)
    E(CL_BUILD_PROGRAM_FAILURE, -11)
    E(CL_MAP_FAILURE, -12)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13)
    E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14)
    E(CL_COMPILE_PROGRAM_FAILURE, -15)
    E(CL_LINKER_NOT_AVAILABLE, -16)
    E(CL_LINK_PROGRAM_FAILURE, -17)
    E(CL_DEVICE_PARTITION_FAILED, -18)
    E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19)
    E(CL_INVALID_VALUE, -30)
    E(CL_INVALID_DEVICE_TYPE, -31)
    E(CL_INVALID_PLATFORM, -32)
    E(CL_INVALID_DEVICE, -33)
    E(CL_INVALID_CONTEXT, -34)
    E(CL_INVALID_QUEUE_PROPERTIES, -35)
    E(CL_INVALID_COMMAND_QUEUE, -36)
    E(CL_INVALID_HOST_PTR, -37)
    E(CL_INVALID_MEM_OBJECT, -38)
    E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39)
    E(CL_INVALID_IMAGE_SIZE, -40)
    E(CL_INVALID_SAMPLER, -41)
    E(CL_INVALID_BINARY, -42)
    E(CL_INVALID_BUILD_OPTIONS, -43)
    E(CL_INVALID_PROGRAM, -44)
    E(CL_INVALID_PROGRAM_EXECUTABLE, -45)
    E(CL_INVALID_KERNEL_NAME, -46)
    E(CL_INVALID_KERNEL_DEFINITION, -47)
    E(CL_INVALID_KERNEL, -48)
    E(CL_INVALID_ARG_INDEX, -49)
    E(CL_INVALID_ARG_VALUE, -50)
    E(CL_INVALID_ARG_SIZE, -51)
    E(CL_INVALID_KERNEL_ARGS, -52)
    E(CL_INVALID_WORK_DIMENSION, -53)
    E(CL_INVALID_WORK_GROUP_SIZE, -54)
    E(CL_INVALID_WORK_ITEM_SIZE, -55)
    E(CL_INVALID_GLOBAL_OFFSET, -56)
    E(CL_INVALID_EVENT_WAIT_LIST, -57)
    E(CL_INVALID_EVENT, -58)
    E(CL_INVALID_OPERATION, -59)
    E(CL_INVALID_GL_OBJECT, -60)
    E(CL_INVALID_BUFFER_SIZE, -61)
    E(CL_INVALID_MIP_LEVEL, -62)
    E(CL_INVALID_GLOBAL_WORK_SIZE, -63)
    E(CL_INVALID_PROPERTY, -64)
    E(CL_INVALID_IMAGE_DESCRIPTOR, -65)
    E(CL_INVALID_COMPILER_OPTIONS, -66)
    E(CL_INVALID_LINKER_OPTIONS, -67)
    E(CL_INVALID_DEVICE_PARTITION_COUNT, -68)
    E(CL_INVALID_PIPE_SIZE, -69)
    E(CL_INVALID_DEVICE_QUEUE, -70)
    E(CL_INVALID_SPEC_ID, -71)
    E(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72)
    E(CL_PLATFORM_NOT_FOUND_KHR, -1001)
#undef E
  default:
    return "CL_UNKNOWN_ERROR";
  }
}

/* "<func>: clXxx failed: CL_NAME (code)". */
#define CK_CL_FAIL(call, err)                                                  \
  ck__error(CK_ERR_BACKEND, __func__, "%s failed: %s (%d)", (call),            \
            ck__opencl_error_name(err), (int)(err))

/* ---- state ------------------------------------------------------------- */

typedef struct ocl_state {
  const ck_cl_api *cl;
  ck_cl_device_id device;
  ck_cl_context context;     /* one reference (created or retained) */
  ck_cl_command_queue queue; /* one reference (created or retained) */
  bool is_cpu;
  bool wrapped; /* ck_context_new_opencl_wrap: context and queue are foreign */
  /* A foreign queue executing out of order (or whose properties cannot be
   * read): a read after a launch waits for the launch with clFinish first. */
  bool out_of_order;
  size_t base_align; /* bytes: sub-buffer origin alignment */
  size_t max_work_group; /* CL_DEVICE_MAX_WORK_GROUP_SIZE */
  ck_cl_uint compute_units;
  char device_name[128];
  char device_version[128];
  char platform_name[128];
  char platform_version[128];
} ocl_state;

#define ST(ctx) ((ocl_state *)(ctx)->state)

static void ck__ocl_info_str(const ck_cl_api *cl, ck_cl_device_id dev,
                         ck_cl_uint what, char *out, size_t n) {
  out[0] = '\0';
  if (cl->clGetDeviceInfo(dev, what, n - 1, out, NULL) != CK_CL_SUCCESS) {
    strcpy(out, "?");
  }
  out[n - 1] = '\0';
}

/* The device's properties into a new state (context and queue not set). */
static ck_status ck__ocl_state_new(const ck_cl_api *cl, ck_cl_device_id dev,
                                   ocl_state **out, bool *fp64_out) {
  ocl_state *s = CK_CALLOC(1, sizeof *s);
  if (s == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  s->cl = cl;
  s->device = dev;
  ck_cl_bitfield type = 0;
  ck_cl_uint align_bits = 0;
  ck_cl_ulong fp64 = 0;
  ck_cl_platform_id plat = NULL;
  (void)cl->clGetDeviceInfo(dev, CK_CL_DEVICE_TYPE, sizeof type, &type, NULL);
  (void)cl->clGetDeviceInfo(dev, CK_CL_DEVICE_MEM_BASE_ADDR_ALIGN,
                            sizeof align_bits, &align_bits, NULL);
  (void)cl->clGetDeviceInfo(dev, CK_CL_DEVICE_MAX_COMPUTE_UNITS,
                            sizeof s->compute_units, &s->compute_units, NULL);
  if (cl->clGetDeviceInfo(dev, CK_CL_DEVICE_MAX_WORK_GROUP_SIZE,
                          sizeof s->max_work_group, &s->max_work_group,
                          NULL) != CK_CL_SUCCESS ||
      s->max_work_group == 0) {
    s->max_work_group = 1;
  }
  if (cl->clGetDeviceInfo(dev, CK_CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64,
                          &fp64, NULL) != CK_CL_SUCCESS) {
    fp64 = 0;
  }
  s->is_cpu = (type & CK_CL_DEVICE_TYPE_CPU) != 0;
  s->base_align = align_bits >= 8 ? align_bits / 8 : 1;
  ck__ocl_info_str(cl, dev, CK_CL_DEVICE_NAME, s->device_name,
               sizeof s->device_name);
  ck__ocl_info_str(cl, dev, CK_CL_DEVICE_VERSION, s->device_version,
               sizeof s->device_version);
  s->platform_name[0] = s->platform_version[0] = '\0';
  if (cl->clGetDeviceInfo(dev, CK_CL_DEVICE_PLATFORM, sizeof plat, &plat,
                          NULL) == CK_CL_SUCCESS && plat != NULL) {
    (void)cl->clGetPlatformInfo(plat, CK_CL_PLATFORM_NAME,
                                sizeof s->platform_name - 1, s->platform_name,
                                NULL);
    (void)cl->clGetPlatformInfo(plat, CK_CL_PLATFORM_VERSION,
                                sizeof s->platform_version - 1,
                                s->platform_version, NULL);
  }
  *fp64_out = fp64 != 0;
  *out = s;
  return CK_OK;
}

static void ck__ocl_attach(ck_context *ctx, ocl_state *s, bool fp64) {
  ctx->state = s;
  ctx->fp64 = fp64;
  ctx->host_accessible = s->is_cpu;
}

ck_status ck__opencl_init(ck_context *ctx, uint32_t platform, uint32_t device) {
  const ck_cl_api *cl = ck__opencl_api();
  if (cl == NULL) {
    return CK_ERR_BACKEND;
  }
  ck_cl_uint np = 0;
  ck_cl_int err = cl->clGetPlatformIDs(0, NULL, &np);
  if (err == CK_CL_PLATFORM_NOT_FOUND_KHR || (err == CK_CL_SUCCESS && np == 0)) {
    return CK_ERROR(CK_ERR_BACKEND,
                    "no OpenCL platform is available (the ICD loader found no "
                    "driver; check /etc/OpenCL/vendors)");
  }
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clGetPlatformIDs", err);
  }
  ck_cl_platform_id plats[16];
  if (np > 16) {
    np = 16;
  }
  err = cl->clGetPlatformIDs(np, plats, NULL);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clGetPlatformIDs", err);
  }
  if (platform >= np) {
    return CK_ERROR(CK_ERR_INDEX, "OpenCL platform %u out of range (%u platform%s)",
                    (unsigned)platform, (unsigned)np, np == 1 ? "" : "s");
  }
  ck_cl_uint nd = 0;
  err = cl->clGetDeviceIDs(plats[platform], CK_CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
  if (err != CK_CL_SUCCESS && err != CK_CL_DEVICE_NOT_FOUND) {
    return CK_CL_FAIL("clGetDeviceIDs", err);
  }
  if (device >= nd) {
    return CK_ERROR(CK_ERR_INDEX,
                    "OpenCL device %u out of range (platform %u has %u device%s)",
                    (unsigned)device, (unsigned)platform, (unsigned)nd,
                    nd == 1 ? "" : "s");
  }
  ck_cl_device_id devs[64];
  if (nd > 64) {
    nd = 64;
  }
  err = cl->clGetDeviceIDs(plats[platform], CK_CL_DEVICE_TYPE_ALL, nd, devs, NULL);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clGetDeviceIDs", err);
  }
  ocl_state *s = NULL;
  bool fp64 = false;
  ck_status st = ck__ocl_state_new(cl, devs[device], &s, &fp64);
  if (st != CK_OK) {
    return st;
  }
  s->context = cl->clCreateContext(NULL, 1, &s->device, NULL, NULL, &err);
  if (s->context == NULL || err != CK_CL_SUCCESS) {
    ck__free(s);
    return CK_CL_FAIL("clCreateContext", err);
  }
  s->queue = cl->clCreateCommandQueue(s->context, s->device, 0, &err);
  if (s->queue == NULL || err != CK_CL_SUCCESS) {
    cl->clReleaseContext(s->context);
    ck__free(s);
    return CK_CL_FAIL("clCreateCommandQueue", err);
  }
  ck__ocl_attach(ctx, s, fp64);
  return CK_OK;
}

ck_status ck__opencl_init_wrap(ck_context *ctx, void *cl_context, void *cl_device,
                               void *cl_queue) {
  const ck_cl_api *cl = ck__opencl_api();
  if (cl == NULL) {
    return CK_ERR_BACKEND;
  }
  ck_cl_context cctx = (ck_cl_context)cl_context;
  ck_cl_device_id dev = (ck_cl_device_id)cl_device;
  ck_cl_command_queue q = (ck_cl_command_queue)cl_queue;
  /* The device must be one of the context's (this also checks that
   * `cl_context` is a context: anything else is CL_INVALID_CONTEXT). */
  ck_cl_uint ndev = 0;
  ck_cl_int err = cl->clGetContextInfo(cctx, CK_CL_CONTEXT_NUM_DEVICES,
                                       sizeof ndev, &ndev, NULL);
  if (err != CK_CL_SUCCESS) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, __func__,
                     "cl_context %p is not a valid OpenCL context: "
                     "clGetContextInfo failed: %s (%d)",
                     cl_context, ck__opencl_error_name(err), (int)err);
  }
  ck_cl_device_id devs[64];
  if (ndev > 64) {
    ndev = 64;
  }
  err = cl->clGetContextInfo(cctx, CK_CL_CONTEXT_DEVICES, ndev * sizeof devs[0],
                             devs, NULL);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clGetContextInfo", err);
  }
  bool found = false;
  for (ck_cl_uint i = 0; i < ndev; i++) {
    found = found || devs[i] == dev;
  }
  if (!found) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "cl_device_id %p is not a device of cl_context %p "
                    "(it has %u device%s)",
                    cl_device, cl_context, (unsigned)ndev, ndev == 1 ? "" : "s");
  }
  if (q != NULL) {
    ck_cl_context qctx = NULL;
    ck_cl_device_id qdev = NULL;
    err = cl->clGetCommandQueueInfo(q, CK_CL_QUEUE_CONTEXT, sizeof qctx, &qctx,
                                    NULL);
    if (err == CK_CL_SUCCESS) {
      err = cl->clGetCommandQueueInfo(q, CK_CL_QUEUE_DEVICE, sizeof qdev, &qdev,
                                      NULL);
    }
    if (err != CK_CL_SUCCESS) {
      return ck__error(CK_ERR_INVALID_ARGUMENT, __func__,
                       "cl_command_queue %p is not a valid command queue: "
                       "clGetCommandQueueInfo failed: %s (%d)",
                       cl_queue, ck__opencl_error_name(err), (int)err);
    }
    if (qctx != cctx || qdev != dev) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "cl_command_queue %p belongs to %s (context %p, device "
                      "%p), not to context %p and device %p",
                      cl_queue, qctx != cctx ? "another context" : "another device",
                      (void *)qctx, (void *)qdev, cl_context, cl_device);
    }
  }
  ocl_state *s = NULL;
  bool fp64 = false;
  ck_status st = ck__ocl_state_new(cl, dev, &s, &fp64);
  if (st != CK_OK) {
    return st;
  }
  if (q == NULL) {
    q = cl->clCreateCommandQueue(cctx, dev, 0, &err);
    if (q == NULL || err != CK_CL_SUCCESS) {
      ck__free(s);
      return CK_CL_FAIL("clCreateCommandQueue", err);
    }
  } else {
    err = cl->clRetainCommandQueue(q);
    if (err != CK_CL_SUCCESS) {
      ck__free(s);
      return CK_CL_FAIL("clRetainCommandQueue", err);
    }
  }
  err = cl->clRetainContext(cctx);
  if (err != CK_CL_SUCCESS) {
    cl->clReleaseCommandQueue(q);
    ck__free(s);
    return CK_CL_FAIL("clRetainContext", err);
  }
  s->context = cctx;
  s->queue = q;
  s->wrapped = true;
  ck_cl_bitfield props = 0;
  s->out_of_order =
      cl->clGetCommandQueueInfo(q, CK_CL_QUEUE_PROPERTIES, sizeof props, &props,
                                NULL) != CK_CL_SUCCESS ||
      (props & CK_CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
  ck__ocl_attach(ctx, s, fp64);
  return CK_OK;
}

static void ck__ocl_release(ck_context *ctx) {
  ocl_state *s = ST(ctx);
  if (s != NULL) {
    s->cl->clReleaseCommandQueue(s->queue);
    s->cl->clReleaseContext(s->context);
    ck__free(s);
    ctx->state = NULL;
  }
}

static ck_status ck__ocl_describe(ck_context *ctx, char *buf, size_t bufsize,
                              size_t *pos) {
  ocl_state *s = ST(ctx);
  ck__appendf(buf, bufsize, pos,
              "opencl: %s [%s] (%s, %s), %u compute units, fp64: %s, "
              "host-accessible buffers: %s%s",
              s->device_name, s->is_cpu ? "CPU" : "accelerator",
              s->platform_name, s->device_version, (unsigned)s->compute_units,
              ctx->fp64 ? "yes" : "no", s->is_cpu ? "yes" : "no",
              s->wrapped ? ", wrapped cl_context" : "");
  return CK_OK;
}

/* ---- memory ------------------------------------------------------------ */

/* The host memory behind a CL_MEM_USE_HOST_PTR buffer must live as long as
 * the cl_mem, which others may have retained (pyopencl through
 * ck_buffer_native_handle, clRetainMemObject): it is freed by the cl_mem's
 * destructor callback, run by the OpenCL implementation when the last
 * reference goes.  If registering the callback fails, ck__ocl_free frees it
 * after releasing the library's reference (the pre-callback behaviour). */
static void ck__ocl_free_host(ck_cl_mem mem, void *host) {
  (void)mem;
  ck__free(host);
}

static ck_status ck__ocl_alloc(ck_context *ctx, size_t size, ck__devmem *out) {
  ocl_state *s = ST(ctx);
  out->handle = NULL;
  out->host = NULL;
  out->free_host = false;
  out->size = size;
  if (size == 0) {
    return CK_OK;
  }
  ck_cl_int err = CK_CL_SUCCESS;
  if (s->is_cpu) {
    char *host = CK_ALIGNED_ALLOC(4096, size);
    if (host == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    out->handle = s->cl->clCreateBuffer(
        s->context, CK_CL_MEM_READ_WRITE | CK_CL_MEM_USE_HOST_PTR, size, host, &err);
    if (out->handle == NULL || err != CK_CL_SUCCESS) {
      ck__free(host);
      out->handle = NULL;
      return CK_CL_FAIL("clCreateBuffer", err);
    }
    out->host = host;
    out->free_host = s->cl->clSetMemObjectDestructorCallback(
                          (ck_cl_mem)out->handle, ck__ocl_free_host, host) !=
                      CK_CL_SUCCESS;
    return CK_OK;
  }
  out->handle = s->cl->clCreateBuffer(s->context, CK_CL_MEM_READ_WRITE, size,
                                      NULL, &err);
  if (out->handle == NULL || err != CK_CL_SUCCESS) {
    out->handle = NULL;
    return CK_CL_FAIL("clCreateBuffer", err);
  }
  return CK_OK;
}

static void ck__ocl_free(ck_context *ctx, ck__devmem *mem) {
  ocl_state *s = ST(ctx);
  if (mem->handle != NULL) {
    s->cl->clReleaseMemObject((ck_cl_mem)mem->handle);
  }
  if (mem->free_host) {
    ck__free(mem->host); /* after the cl_mem that uses it */
  }
  mem->free_host = false;
  mem->handle = NULL;
  mem->host = NULL;
  mem->size = 0;
}

static ck_status ck__ocl_h2d(ck_context *ctx, ck__devmem *dst, size_t off,
                         const void *src, size_t n) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = s->cl->clEnqueueWriteBuffer(s->queue, (ck_cl_mem)dst->handle,
                                              CK_CL_TRUE, off, n, src, 0, NULL,
                                              NULL);
  return err == CK_CL_SUCCESS ? CK_OK : CK_CL_FAIL("clEnqueueWriteBuffer", err);
}

static ck_status ck__ocl_d2h(ck_context *ctx, void *dst, ck__devmem *src, size_t off,
                         size_t n) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = s->cl->clEnqueueReadBuffer(s->queue, (ck_cl_mem)src->handle,
                                             CK_CL_TRUE, off, n, dst, 0, NULL,
                                             NULL);
  return err == CK_CL_SUCCESS ? CK_OK : CK_CL_FAIL("clEnqueueReadBuffer", err);
}

/* Only the library holds the cl_mem (a handed-out one retained by another
 * library keeps its contents: it never goes to another buffer). */
static bool ck__ocl_reusable(ck_context *ctx, const ck__devmem *mem) {
  ck_cl_uint refs = 0;
  return ST(ctx)->cl->clGetMemObjectInfo((ck_cl_mem)mem->handle,
                                         CK_CL_MEM_REFERENCE_COUNT, sizeof refs,
                                         &refs, NULL) == CK_CL_SUCCESS &&
         refs == 1;
}

static ck_status ck__ocl_finish(ck_context *ctx) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = s->cl->clFinish(s->queue);
  return err == CK_CL_SUCCESS ? CK_OK : CK_CL_FAIL("clFinish", err);
}

static ck_status ck__ocl_d2d(ck_context *ctx, ck__devmem *dst, size_t doff,
                         ck__devmem *src, size_t soff, size_t n) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = s->cl->clEnqueueCopyBuffer(
      s->queue, (ck_cl_mem)src->handle, (ck_cl_mem)dst->handle, soff, doff, n,
      0, NULL, NULL);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clEnqueueCopyBuffer", err);
  }
  return ck__ocl_finish(ctx);
}

static ck_status ck__ocl_fill(ck_context *ctx, ck__devmem *dst, size_t off,
                          const void *pattern, size_t psize, size_t n) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = s->cl->clEnqueueFillBuffer(s->queue, (ck_cl_mem)dst->handle,
                                             pattern, psize, off, n, 0, NULL,
                                             NULL);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clEnqueueFillBuffer", err);
  }
  return ck__ocl_finish(ctx);
}

/* A buffer over a cl_mem someone else made (ck_buffer_wrap): it must belong
 * to this context's cl_context and hold `size` bytes.  The library takes one
 * reference (clRetainMemObject), dropped by ck__ocl_unwrap, so the cl_mem
 * stays valid while the buffer lives even if its maker releases it.
 * Sub-buffers are refused: kernel launches may make sub-buffers of a buffer
 * argument, which OpenCL forbids for sub-buffers. */
static ck_status ck__ocl_wrap(ck_context *ctx, void *native, size_t size,
                              ck__devmem *out) {
  ocl_state *s = ST(ctx);
  ck_cl_mem mem = (ck_cl_mem)native;
  ck_cl_context mctx = NULL;
  ck_cl_int err = s->cl->clGetMemObjectInfo(mem, CK_CL_MEM_CONTEXT, sizeof mctx,
                                            &mctx, NULL);
  if (err != CK_CL_SUCCESS) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, __func__,
                     "%p is not a valid cl_mem: clGetMemObjectInfo failed: "
                     "%s (%d)", native, ck__opencl_error_name(err), (int)err);
  }
  if (mctx != s->context) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "the cl_mem %p belongs to another cl_context (%p) than "
                    "this context's (%p)",
                    native, (void *)mctx, (void *)s->context);
  }
  size_t msize = 0;
  ck_cl_mem parent = NULL;
  ck_cl_bitfield flags = 0;
  void *host = NULL;
  err = s->cl->clGetMemObjectInfo(mem, CK_CL_MEM_SIZE, sizeof msize, &msize, NULL);
  if (err == CK_CL_SUCCESS) {
    err = s->cl->clGetMemObjectInfo(mem, CK_CL_MEM_ASSOCIATED_MEMOBJECT,
                                    sizeof parent, &parent, NULL);
  }
  if (err == CK_CL_SUCCESS) {
    err = s->cl->clGetMemObjectInfo(mem, CK_CL_MEM_FLAGS, sizeof flags, &flags,
                                    NULL);
  }
  if (err == CK_CL_SUCCESS) {
    err = s->cl->clGetMemObjectInfo(mem, CK_CL_MEM_HOST_PTR, sizeof host, &host,
                                    NULL);
  }
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clGetMemObjectInfo", err);
  }
  if (parent != NULL) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "the cl_mem %p is a sub-buffer; wrap its parent buffer and "
                    "address the region by offset", native);
  }
  if (size > msize) {
    return CK_ERROR(CK_ERR_INDEX,
                    "capacity %zu exceeds the cl_mem's size %zu", size, msize);
  }
  err = s->cl->clRetainMemObject(mem);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clRetainMemObject", err);
  }
  out->handle = mem;
  /* host-addressable only where this library would make it so: a CPU device
   * with the memory at the host pointer */
  out->host = s->is_cpu && (flags & CK_CL_MEM_USE_HOST_PTR) != 0 ? host : NULL;
  out->free_host = false;
  out->size = size;
  return CK_OK;
}

static void ck__ocl_unwrap(ck_context *ctx, ck__devmem *mem) {
  if (mem->handle != NULL) {
    ST(ctx)->cl->clReleaseMemObject((ck_cl_mem)mem->handle);
  }
  mem->handle = NULL;
  mem->host = NULL;
  mem->size = 0;
}

static void ck__ocl_native(ck_context *ctx, void **context, void **device,
                           void **queue) {
  ocl_state *s = ST(ctx);
  *context = s->context;
  *device = s->device;
  *queue = s->queue;
}

/* ---- programs and kernels ---------------------------------------------- */

static ck_status ck__ocl_build(ck_context *ctx, const char *source,
                           const char *options, void **out) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = CK_CL_SUCCESS;
  size_t len = strlen(source);
  ck_cl_program prog =
      s->cl->clCreateProgramWithSource(s->context, 1, &source, &len, &err);
  if (prog == NULL || err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clCreateProgramWithSource", err);
  }
  err = s->cl->clBuildProgram(prog, 1, &s->device, options, NULL, NULL);
  if (err != CK_CL_SUCCESS) {
    char log[900];
    size_t got = 0;
    log[0] = '\0';
    if (s->cl->clGetProgramBuildInfo(prog, s->device, CK_CL_PROGRAM_BUILD_LOG,
                                     sizeof log - 1, log, &got) != CK_CL_SUCCESS) {
      /* The log is longer than our buffer (or unavailable): fetch it whole
       * and keep the head. */
      size_t need = 0;
      log[0] = '\0';
      if (s->cl->clGetProgramBuildInfo(prog, s->device, CK_CL_PROGRAM_BUILD_LOG,
                                       0, NULL, &need) == CK_CL_SUCCESS &&
          need > 0) {
        char *full = CK_MALLOC(need + 1);
        if (full != NULL &&
            s->cl->clGetProgramBuildInfo(prog, s->device, CK_CL_PROGRAM_BUILD_LOG,
                                         need, full, NULL) == CK_CL_SUCCESS) {
          full[need] = '\0';
          strncpy(log, full, sizeof log - 1);
        }
        ck__free(full);
      }
    }
    log[sizeof log - 1] = '\0';
    s->cl->clReleaseProgram(prog);
    return ck__error(CK_ERR_BACKEND, __func__, "clBuildProgram failed: %s (%d): %s",
                     ck__opencl_error_name(err), (int)err,
                     log[0] ? log : "(no build log)");
  }
  *out = prog;
  return CK_OK;
}

static ck_status ck__ocl_build_log(ck_context *ctx, void *native, char *buf,
                                   size_t bufsize, size_t *pos) {
  ocl_state *s = ST(ctx);
  ck_cl_program prog = (ck_cl_program)native;
  size_t need = 0;
  ck_cl_int err = s->cl->clGetProgramBuildInfo(prog, s->device, CK_CL_PROGRAM_BUILD_LOG,
                                               0, NULL, &need);
  if (err != CK_CL_SUCCESS) {
    return CK_CL_FAIL("clGetProgramBuildInfo", err);
  }
  if (need <= 1) {
    return CK_OK; /* empty: just the NUL */
  }
  char *log = CK_MALLOC(need + 1);
  if (log == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  err = s->cl->clGetProgramBuildInfo(prog, s->device, CK_CL_PROGRAM_BUILD_LOG, need, log,
                                     NULL);
  if (err != CK_CL_SUCCESS) {
    ck__free(log);
    return CK_CL_FAIL("clGetProgramBuildInfo", err);
  }
  log[need] = '\0';
  ck__appendf(buf, bufsize, pos, "%s", log);
  ck__free(log);
  return CK_OK;
}

static void ck__ocl_release_program(ck_context *ctx, void *native) {
  if (native != NULL) {
    ST(ctx)->cl->clReleaseProgram((ck_cl_program)native);
  }
}

static ck_status ck__ocl_kernel_create(ck_context *ctx, void *program,
                                   const char *name, void **out) {
  ocl_state *s = ST(ctx);
  ck_cl_int err = CK_CL_SUCCESS;
  ck_cl_kernel k = s->cl->clCreateKernel((ck_cl_program)program, name, &err);
  if (k == NULL || err != CK_CL_SUCCESS) {
    return ck__error(CK_ERR_BACKEND, __func__,
                     "clCreateKernel failed for '%s': %s (%d)", name,
                     ck__opencl_error_name(err), (int)err);
  }
  *out = k;
  return CK_OK;
}

static void ck__ocl_kernel_release(ck_context *ctx, void *kernel) {
  if (kernel != NULL) {
    ST(ctx)->cl->clReleaseKernel((ck_cl_kernel)kernel);
  }
}

enum { OCL_MAX_SUBBUFFERS = 64 };

/* The launch, then (src != NULL) `n` bytes at `off` of `src` read into
 * `dst`: a blocking read enqueued behind the kernel on the in-order queue
 * is the one wait for both (an out-of-order queue: clFinish first). */
static ck_status ck__ocl_launch_common(ck_context *ctx, void *kernel,
                                       const char *name, size_t nargs,
                                       const ck_kernel_arg *args, size_t global,
                                       size_t local, ck__devmem *src, size_t off,
                                       void *dst, size_t n) {
  ocl_state *s = ST(ctx);
  ck_cl_mem subs[OCL_MAX_SUBBUFFERS];
  size_t nsubs = 0;
  ck_status st = CK_OK;
  ck_cl_int err;
  for (size_t i = 0; i < nargs && st == CK_OK; i++) {
    const ck_kernel_arg *a = &args[i];
    if (a->kind == CK_KERNEL_ARG_SCALAR) {
      err = s->cl->clSetKernelArg((ck_cl_kernel)kernel, (ck_cl_uint)i, a->size,
                                  a->value);
    } else {
      ck_cl_mem mem = (ck_cl_mem)ck__buffer_devmem(a->buffer)->handle;
      if (a->offset != 0) {
        if (a->offset % s->base_align != 0 || nsubs == OCL_MAX_SUBBUFFERS) {
          st = CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                        "kernel '%s' argument %zu: buffer offset %zu is not a "
                        "multiple of the device's base address alignment %zu "
                        "(pass offset 0 and the offset as a scalar)",
                        name, i, a->offset, s->base_align);
          break;
        }
        ck_cl_buffer_region region = {a->offset,
                                      ck__buffer_devmem(a->buffer)->size - a->offset};
        err = CK_CL_SUCCESS;
        ck_cl_mem sub = s->cl->clCreateSubBuffer(mem, CK_CL_MEM_READ_WRITE,
                                                 CK_CL_BUFFER_CREATE_TYPE_REGION,
                                                 &region, &err);
        if (sub == NULL || err != CK_CL_SUCCESS) {
          st = CK_CL_FAIL("clCreateSubBuffer", err);
          break;
        }
        subs[nsubs++] = sub;
        mem = sub;
      }
      err = s->cl->clSetKernelArg((ck_cl_kernel)kernel, (ck_cl_uint)i,
                                  sizeof mem, &mem);
    }
    if (err != CK_CL_SUCCESS) {
      st = ck__error(CK_ERR_BACKEND, __func__,
                     "clSetKernelArg failed for '%s' argument %zu: %s (%d)",
                     name, i, ck__opencl_error_name(err), (int)err);
    }
  }
  if (st == CK_OK && global != 0) {
    size_t gsize = global;
    size_t lsize = local < s->max_work_group ? local : s->max_work_group;
    if (lsize != 0) { /* whole work-groups: the kernel guards its index */
      gsize = (global + lsize - 1) / lsize * lsize;
    }
    err = s->cl->clEnqueueNDRangeKernel(s->queue, (ck_cl_kernel)kernel, 1, NULL,
                                        &gsize, lsize != 0 ? &lsize : NULL, 0,
                                        NULL, NULL);
    if (err != CK_CL_SUCCESS) {
      st = ck__error(CK_ERR_BACKEND, __func__,
                     "clEnqueueNDRangeKernel failed for '%s': %s (%d)", name,
                     ck__opencl_error_name(err), (int)err);
    } else if (src == NULL || n == 0 || s->out_of_order) {
      st = ck__ocl_finish(ctx);
    }
  }
  if (st == CK_OK && src != NULL && n != 0) {
    st = ck__ocl_d2h(ctx, dst, src, off, n);
  }
  for (size_t i = 0; i < nsubs; i++) {
    s->cl->clReleaseMemObject(subs[i]);
  }
  return st;
}

static ck_status ck__ocl_launch_local(ck_context *ctx, void *kernel,
                                     const char *name, size_t nargs,
                                     const ck_kernel_arg *args, size_t global,
                                     size_t local) {
  return ck__ocl_launch_common(ctx, kernel, name, nargs, args, global, local,
                               NULL, 0, NULL, 0);
}

static ck_status ck__ocl_launch_read(ck_context *ctx, void *kernel,
                                    const char *name, size_t nargs,
                                    const ck_kernel_arg *args, size_t global,
                                    size_t local, ck__devmem *src, size_t off,
                                    void *dst, size_t n) {
  return ck__ocl_launch_common(ctx, kernel, name, nargs, args, global, local,
                               src, off, dst, n);
}

static ck_status ck__ocl_launch(ck_context *ctx, void *kernel, const char *name,
                                size_t nargs, const ck_kernel_arg *args,
                                size_t global) {
  return ck__ocl_launch_local(ctx, kernel, name, nargs, args, global, 0);
}

const ck__backend_vtable ck__opencl_backend = {
    .kind = "opencl",
    .alloc = ck__ocl_alloc,
    .free = ck__ocl_free,
    .copy_h2d = ck__ocl_h2d,
    .copy_d2h = ck__ocl_d2h,
    .copy_d2d = ck__ocl_d2d,
    .fill = ck__ocl_fill,
    .build_program = ck__ocl_build,
    .build_log = ck__ocl_build_log,
    .release_program = ck__ocl_release_program,
    .kernel_create = ck__ocl_kernel_create,
    .kernel_release = ck__ocl_kernel_release,
    .launch = ck__ocl_launch,
    .launch_local = ck__ocl_launch_local,
    .launch_read = ck__ocl_launch_read,
    .reusable = ck__ocl_reusable,
    .finish = ck__ocl_finish,
    .release = ck__ocl_release,
    .describe = ck__ocl_describe,
    .wrap = ck__ocl_wrap,
    .unwrap = ck__ocl_unwrap,
    .native = ck__ocl_native,
};
