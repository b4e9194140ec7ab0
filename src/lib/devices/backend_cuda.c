/*
 * backend_cuda.c -- the "cuda" backend, over the CUDA driver API loaded at
 * run time (cuda_loader_internal.h); programs are CUDA C compiled by NVRTC
 * (nvrtc_loader_internal.h, nvrtc.c) to PTX and loaded with cuModuleLoadDataEx.
 *
 * Context.  The device's *primary* context (cuDevicePrimaryCtxRetain), the
 * one the CUDA runtime -- and so CuPy, numba-cuda, PyTorch -- uses, so that
 * device pointers can be exchanged with those libraries.  It is retained
 * once per ck_context and released when the ck_context dies.  Every entry
 * point pushes it onto the calling thread (cuCtxPushCurrent) and pops it
 * afterwards, so any thread may use a context and the caller's own current
 * context is left as it was.
 *
 * Commands.  One stream per context, created with CU_STREAM_DEFAULT (it
 * synchronises with the legacy NULL stream, so work other libraries queue
 * there is ordered with ours).  Every operation is blocking: the async
 * copies, memsets and launches are followed by cuStreamSynchronize, as the
 * OpenCL backend follows its commands with clFinish.
 *
 * Memory.  cuMemAlloc; the devmem handle is the CUdeviceptr (cast to
 * void *), never host addressable.  A zero-capacity buffer has no
 * allocation (cuMemAlloc rejects 0 bytes): its pointer is 0.
 *
 * Launch geometry.  1-d: blocks of min(256, the kernel's max threads per
 * block) threads and ceil(n / block) blocks, so the last block is partial:
 * kernels must guard their index (`if (i >= n) return;`), as the generated
 * kernels and the device-kernel convention do.  Launch errors that CUDA
 * reports asynchronously (illegal address, ...) surface from the
 * cuStreamSynchronize after the launch and are sticky: CUDA then refuses
 * every further call in the primary context of that process.
 */
#include "devices/backend_internal.h"
#include "devices/cuda_loader_internal.h"
#include "devices/nvrtc_loader_internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- driver loader ----------------------------------------------------- */

static pthread_mutex_t ck__cu_load_lock = PTHREAD_MUTEX_INITIALIZER;
static ck_cu_api ck__cu_table;
static _Atomic(bool) ck__cu_loaded;
/* The cuInit result of the latest failed attempt (-1: the library did not
 * load), for ck_cuda_device_count. */
static _Atomic(int) ck__cu_last_init = -1;

const char *ck__cuda_error_name(ck_cu_result code) {
  switch (code) {
#define E(n, v) case v: return #n;
    E(CUDA_SUCCESS, 0)
    E(CUDA_ERROR_INVALID_VALUE, 1)
    E(CUDA_ERROR_OUT_OF_MEMORY, 2)
    E(CUDA_ERROR_NOT_INITIALIZED, 3)
    E(CUDA_ERROR_DEINITIALIZED, 4)
    E(CUDA_ERROR_STUB_LIBRARY, 34)
    E(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36)
    E(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)
    E(CUDA_ERROR_NO_DEVICE, 100)
    E(CUDA_ERROR_INVALID_DEVICE, 101)
    E(CUDA_ERROR_DEVICE_NOT_LICENSED, 102)
    E(CUDA_ERROR_INVALID_IMAGE, 200)
    E(CUDA_ERROR_INVALID_CONTEXT, 201)
    E(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)
    E(CUDA_ERROR_ECC_UNCORRECTABLE, 214)
    E(CUDA_ERROR_INVALID_PTX, 218)
    E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)
    E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)
    E(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)
    E(CUDA_ERROR_INVALID_SOURCE, 300)
    E(CUDA_ERROR_FILE_NOT_FOUND, 301)
    E(CUDA_ERROR_INVALID_HANDLE, 400)
    E(CUDA_ERROR_ILLEGAL_STATE, 401)
    E(CUDA_ERROR_NOT_FOUND, 500)
    E(CUDA_ERROR_NOT_READY, 600)
    E(CUDA_ERROR_ILLEGAL_ADDRESS, 700)
    E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)
    E(CUDA_ERROR_LAUNCH_TIMEOUT, 702)
    E(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)
    E(CUDA_ERROR_ASSERT, 710)
    E(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)
    E(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)
    E(CUDA_ERROR_MISALIGNED_ADDRESS, 716)
    E(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)
    E(CUDA_ERROR_INVALID_PC, 718)
    E(CUDA_ERROR_LAUNCH_FAILED, 719)
    E(CUDA_ERROR_NOT_PERMITTED, 800)
    E(CUDA_ERROR_NOT_SUPPORTED, 801)
    E(CUDA_ERROR_SYSTEM_NOT_READY, 802)
    E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)
    E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)
    E(CUDA_ERROR_UNKNOWN, 999)
#undef E
  default:
    return "CUDA_ERROR_UNKNOWN_CODE";
  }
}

/* The file behind a dlopen handle (dlinfo), else `name`. */
static void ck__cu_library_path(void *lib, const char *name, char *out,
                                size_t n) {
  struct link_map *lm = NULL;
  const char *p = name;
  if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL &&
      lm->l_name != NULL && lm->l_name[0] != '\0') {
    p = lm->l_name;
  }
  snprintf(out, n, "%s", p);
}

ck_status ck__cuda_load_table(const char *name, ck_cu_api *t, void **out_handle) {
  memset(t, 0, sizeof *t);
  *out_handle = NULL;
  void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *e = dlerror();
    return CK_ERROR(CK_ERR_BACKEND,
                    "no CUDA driver found: cannot load %s (%s); install the "
                    "NVIDIA driver, or point CK_CUDA_DRIVER_LIBRARY at "
                    "libcuda.so.1", name, e != NULL ? e : "dlopen failed");
  }
#define CK_CU_LOAD(ret, sym, params)                                           \
  {                                                                            \
    void *p = dlsym(lib, #sym);                                                \
    if (p == NULL) {                                                           \
      dlclose(lib);                                                            \
      return CK_ERROR(CK_ERR_BACKEND,                                          \
                      "the CUDA driver library %s lacks %s (a driver for "     \
                      "CUDA 11.0 or newer is needed)", name, #sym);            \
    }                                                                          \
    memcpy(&t->sym, &p, sizeof p);                                             \
  }
#define CK_CU_LOAD_OPTIONAL(ret, sym, params)                                  \
  {                                                                            \
    void *p = dlsym(lib, #sym);                                                \
    memcpy(&t->sym, &p, sizeof p);                                             \
  }
  CK_CU_FUNCTIONS(CK_CU_LOAD)
  CK_CU_OPTIONAL_FUNCTIONS(CK_CU_LOAD_OPTIONAL)
#undef CK_CU_LOAD
#undef CK_CU_LOAD_OPTIONAL
  ck__cu_library_path(lib, name, t->path, sizeof t->path);
  *out_handle = lib;
  return CK_OK;
}

ck_status ck__cuda_init_error(ck_cu_result code, const char *path) {
  switch (code) {
  case CK_CUDA_ERROR_STUB_LIBRARY:
    return CK_ERROR(CK_ERR_BACKEND,
                    "no CUDA driver found: %s is the CUDA toolkit's stub "
                    "library, not a driver (cuInit: CUDA_ERROR_STUB_LIBRARY "
                    "(34)); install the NVIDIA driver (libcuda.so.1)", path);
  case CK_CUDA_ERROR_NO_DEVICE:
    return CK_ERROR(CK_ERR_BACKEND,
                    "CUDA driver present but no device (cuInit: "
                    "CUDA_ERROR_NO_DEVICE (100); driver %s; check nvidia-smi "
                    "and CUDA_VISIBLE_DEVICES)", path);
  default:
    return CK_ERROR(CK_ERR_BACKEND,
                    "CUDA driver present but cuInit failed: %s (%d) (driver %s)",
                    ck__cuda_error_name(code), (int)code, path);
  }
}

const ck_cu_api *ck__cuda_api(void) {
  if (atomic_load_explicit(&ck__cu_loaded, memory_order_acquire)) {
    return &ck__cu_table;
  }
  const ck_cu_api *result = NULL;
  pthread_mutex_lock(&ck__cu_load_lock);
  if (atomic_load_explicit(&ck__cu_loaded, memory_order_relaxed)) {
    result = &ck__cu_table;
    goto done;
  }
  const char *env = getenv("CK_CUDA_DRIVER_LIBRARY");
  const char *names[2] = {"libcuda.so.1", "libcuda.so"};
  size_t nnames = 2;
  if (env != NULL && env[0] != '\0') {
    names[0] = env;
    nnames = 1;
  }
  ck_cu_api t;
  void *lib = NULL;
  ck_status st = CK_ERR_BACKEND;
  for (size_t i = 0; i < nnames && st != CK_OK; i++) {
    char first[1024];
    if (i > 0) { /* keep the message of the preferred name */
      snprintf(first, sizeof first, "%s", ck_last_error());
    }
    st = ck__cuda_load_table(names[i], &t, &lib);
    if (st != CK_OK && i > 0) {
      ck_set_error(CK_ERR_BACKEND, first);
    }
  }
  if (st != CK_OK) {
    atomic_store(&ck__cu_last_init, -1);
    goto done;
  }
  ck_cu_result r = t.cuInit(0);
  if (r != CK_CUDA_SUCCESS) {
    /* Not cached, so a later call may load another library.  A real
     * driver's handle is deliberately kept open (unloading a driver after
     * cuInit is unsafe); the stub does nothing and is closed, so that it
     * does not answer a later dlopen("libcuda.so.1") by its soname. */
    atomic_store(&ck__cu_last_init, (int)r);
    ck__cuda_init_error(r, t.path);
    if (r == CK_CUDA_ERROR_STUB_LIBRARY) {
      dlclose(lib);
    }
    goto done;
  }
  if (t.cuDriverGetVersion(&t.driver_version) != CK_CUDA_SUCCESS) {
    t.driver_version = 0;
  }
  ck__cu_table = t; /* the driver stays loaded for the process */
  atomic_store_explicit(&ck__cu_loaded, true, memory_order_release);
  result = &ck__cu_table;
done:
  pthread_mutex_unlock(&ck__cu_load_lock);
  return result;
}

/* "<call> failed: CUDA_ERROR_X (n): <description><extra>", recorded as
 * CK_ERR_NO_MEMORY for CUDA_ERROR_OUT_OF_MEMORY, CK_ERR_BACKEND otherwise. */
static ck_status ck__cu_fail(const ck_cu_api *cu, const char *func,
                             const char *call, ck_cu_result r,
                             const char *extra) {
  const char *name = NULL, *desc = NULL;
  if (cu->cuGetErrorName(r, &name) != CK_CUDA_SUCCESS || name == NULL) {
    name = ck__cuda_error_name(r);
  }
  if (cu->cuGetErrorString(r, &desc) != CK_CUDA_SUCCESS || desc == NULL) {
    desc = "no description";
  }
  return ck__error(r == CK_CUDA_ERROR_OUT_OF_MEMORY ? CK_ERR_NO_MEMORY
                                                     : CK_ERR_BACKEND,
                   func, "%s failed: %s (%d): %s%s", call, name, (int)r, desc,
                   extra);
}

#define CU_FAIL(s, call, r) ck__cu_fail((s)->cu, __func__, (call), (r), "")

/* ---- state ------------------------------------------------------------- */

typedef struct cu_state {
  const ck_cu_api *cu;
  ck_cu_device dev;
  uint32_t ordinal;
  ck_cu_context pctx;   /* the retained primary context */
  ck_cu_stream stream;
  int cc_major, cc_minor;
  int sm_count;
  int max_grid_x;
  size_t total_mem;
  int arch;             /* NVRTC architecture, chosen at the first build */
  char name[256];
  /* Page-locked staging bytes for the small read after a launch
   * (ck_context_launch_read), made on first use (NULL: none, or the driver
   * could not make them: the copy then goes to the caller's memory);
   * used under ctx->lock only. */
  void *staging;
  bool staging_tried;
} cu_state;

enum { CU_STAGING_BYTES = 64 };

#define ST(ctx) ((cu_state *)(ctx)->state)

static ck_status ck__cu_push(cu_state *s, const char *func) {
  ck_cu_result r = s->cu->cuCtxPushCurrent_v2(s->pctx);
  return r == CK_CUDA_SUCCESS
             ? CK_OK
             : ck__cu_fail(s->cu, func, "cuCtxPushCurrent_v2", r, "");
}

static void ck__cu_pop(cu_state *s) {
  ck_cu_context popped = NULL;
  (void)s->cu->cuCtxPopCurrent_v2(&popped);
}

/* Wait for the stream; `what` names the work in the message. */
static ck_status ck__cu_sync(cu_state *s, const char *func, const char *what) {
  ck_cu_result r = s->cu->cuStreamSynchronize(s->stream);
  if (r == CK_CUDA_SUCCESS) {
    return CK_OK;
  }
  char extra[160];
  snprintf(extra, sizeof extra, " (after %s)", what);
  return ck__cu_fail(s->cu, func, "cuStreamSynchronize", r, extra);
}

ck_status ck__cuda_init(ck_context *ctx, uint32_t ordinal) {
  const ck_cu_api *cu = ck__cuda_api();
  if (cu == NULL) {
    return CK_ERR_BACKEND;
  }
  int n = 0;
  ck_cu_result r = cu->cuDeviceGetCount(&n);
  if (r != CK_CUDA_SUCCESS) {
    return ck__cu_fail(cu, __func__, "cuDeviceGetCount", r, "");
  }
  if (n <= 0) {
    return CK_ERROR(CK_ERR_BACKEND,
                    "CUDA driver present but no device (cuDeviceGetCount: 0; "
                    "check CUDA_VISIBLE_DEVICES)");
  }
  if (ordinal >= (uint32_t)n) {
    return CK_ERROR(CK_ERR_INDEX,
                    "CUDA device %u out of range (%d device%s visible)",
                    (unsigned)ordinal, n, n == 1 ? "" : "s");
  }
  cu_state *s = CK_CALLOC(1, sizeof *s);
  if (s == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  s->cu = cu;
  s->ordinal = ordinal;
  ck_status st = CK_OK;
  r = cu->cuDeviceGet(&s->dev, (int)ordinal);
  if (r != CK_CUDA_SUCCESS) {
    st = CU_FAIL(s, "cuDeviceGet", r);
    goto fail;
  }
  struct {
    int attr;
    int *out;
    const char *what;
  } attrs[] = {
      {CK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &s->cc_major, "major"},
      {CK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &s->cc_minor, "minor"},
      {CK_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &s->sm_count, "SMs"},
      {CK_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &s->max_grid_x, "grid"},
  };
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    r = cu->cuDeviceGetAttribute(attrs[i].out, attrs[i].attr, s->dev);
    if (r != CK_CUDA_SUCCESS) {
      st = CU_FAIL(s, "cuDeviceGetAttribute", r);
      goto fail;
    }
  }
  if (s->max_grid_x <= 0) {
    s->max_grid_x = 65535;
  }
  if (cu->cuDeviceGetName(s->name, (int)sizeof s->name - 1, s->dev) !=
      CK_CUDA_SUCCESS) {
    strcpy(s->name, "?");
  }
  s->name[sizeof s->name - 1] = '\0';
  if (cu->cuDeviceTotalMem_v2(&s->total_mem, s->dev) != CK_CUDA_SUCCESS) {
    s->total_mem = 0;
  }
  r = cu->cuDevicePrimaryCtxRetain(&s->pctx, s->dev);
  if (r != CK_CUDA_SUCCESS) {
    st = CU_FAIL(s, "cuDevicePrimaryCtxRetain", r);
    goto fail;
  }
  st = ck__cu_push(s, __func__);
  if (st == CK_OK) {
    r = cu->cuStreamCreate(&s->stream, CK_CU_STREAM_DEFAULT);
    ck__cu_pop(s);
    if (r != CK_CUDA_SUCCESS) {
      st = CU_FAIL(s, "cuStreamCreate", r);
    }
  }
  if (st != CK_OK) {
    (void)cu->cuDevicePrimaryCtxRelease_v2(s->dev);
    goto fail;
  }
  ctx->state = s;
  ctx->fp64 = true; /* every device CUDA 11+ supports has fp64 */
  ctx->host_accessible = false;
  return CK_OK;
fail:
  ck__free(s);
  return st;
}

static void ck__cu_release(ck_context *ctx) {
  cu_state *s = ST(ctx);
  if (s == NULL) {
    return;
  }
  /* Errors are ignored: at process exit the driver may be shut down. */
  if (s->cu->cuCtxPushCurrent_v2(s->pctx) == CK_CUDA_SUCCESS) {
    (void)s->cu->cuStreamDestroy_v2(s->stream);
    if (s->staging != NULL) {
      (void)s->cu->cuMemFreeHost(s->staging);
    }
    ck__cu_pop(s);
  }
  (void)s->cu->cuDevicePrimaryCtxRelease_v2(s->dev);
  ck__free(s);
  ctx->state = NULL;
}

static ck_status ck__cu_describe(ck_context *ctx, char *buf, size_t bufsize,
                             size_t *pos) {
  cu_state *s = ST(ctx);
  int v = s->cu->driver_version;
  ck__appendf(buf, bufsize, pos,
              "cuda: %s (device %u, compute capability %d.%d, %d SMs, "
              "%.1f GiB), driver %d.%d, fp64: yes, host-accessible "
              "buffers: no",
              s->name, (unsigned)s->ordinal, s->cc_major, s->cc_minor,
              s->sm_count, (double)s->total_mem / (1024.0 * 1024.0 * 1024.0),
              v / 1000, (v % 1000) / 10);
  return CK_OK;
}

/* ---- memory ------------------------------------------------------------ */

static ck_cu_deviceptr ck__cu_ptr(const ck__devmem *m, size_t off) {
  return (ck_cu_deviceptr)(uintptr_t)m->handle + (ck_cu_deviceptr)off;
}

static ck_status ck__cu_alloc(ck_context *ctx, size_t size, ck__devmem *out) {
  cu_state *s = ST(ctx);
  out->handle = NULL;
  out->host = NULL;
  out->size = size;
  if (size == 0) {
    return CK_OK;
  }
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_cu_deviceptr p = 0;
  ck_cu_result r = s->cu->cuMemAlloc_v2(&p, size);
  ck__cu_pop(s);
  if (r != CK_CUDA_SUCCESS) {
    char extra[64];
    snprintf(extra, sizeof extra, " (%zu bytes)", size);
    return ck__cu_fail(s->cu, __func__, "cuMemAlloc_v2", r, extra);
  }
  out->handle = (void *)(uintptr_t)p;
  return CK_OK;
}

static void ck__cu_free(ck_context *ctx, ck__devmem *mem) {
  cu_state *s = ST(ctx);
  if (mem->handle != NULL && ck__cu_push(s, __func__) == CK_OK) {
    (void)s->cu->cuMemFree_v2(ck__cu_ptr(mem, 0));
    ck__cu_pop(s);
  }
  mem->handle = NULL;
  mem->host = NULL;
  mem->size = 0;
}

static ck_status ck__cu_h2d(ck_context *ctx, ck__devmem *dst, size_t off,
                        const void *src, size_t n) {
  cu_state *s = ST(ctx);
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_cu_result r =
      s->cu->cuMemcpyHtoDAsync_v2(ck__cu_ptr(dst, off), src, n, s->stream);
  st = r != CK_CUDA_SUCCESS ? CU_FAIL(s, "cuMemcpyHtoDAsync_v2", r)
                            : ck__cu_sync(s, __func__, "a host-to-device copy");
  ck__cu_pop(s);
  return st;
}

static ck_status ck__cu_d2h(ck_context *ctx, void *dst, ck__devmem *src, size_t off,
                        size_t n) {
  cu_state *s = ST(ctx);
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_cu_result r =
      s->cu->cuMemcpyDtoHAsync_v2(dst, ck__cu_ptr(src, off), n, s->stream);
  st = r != CK_CUDA_SUCCESS ? CU_FAIL(s, "cuMemcpyDtoHAsync_v2", r)
                            : ck__cu_sync(s, __func__, "a device-to-host copy");
  ck__cu_pop(s);
  return st;
}

static ck_status ck__cu_d2d(ck_context *ctx, ck__devmem *dst, size_t doff,
                        ck__devmem *src, size_t soff, size_t n) {
  cu_state *s = ST(ctx);
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_cu_result r = s->cu->cuMemcpyDtoDAsync_v2(ck__cu_ptr(dst, doff),
                                               ck__cu_ptr(src, soff), n, s->stream);
  st = r != CK_CUDA_SUCCESS ? CU_FAIL(s, "cuMemcpyDtoDAsync_v2", r)
                            : ck__cu_sync(s, __func__, "a device-to-device copy");
  ck__cu_pop(s);
  return st;
}

/* The shortest period (1, 2 or 4 bytes) of a pattern, or its size. */
static size_t ck__cu_pattern_period(const unsigned char *p, size_t size) {
  for (size_t per = 1; per <= 4 && per < size; per *= 2) {
    bool ok = true;
    for (size_t i = per; i < size && ok; i++) {
      ok = p[i] == p[i - per];
    }
    if (ok) {
      return per;
    }
  }
  return size;
}

/* Patterns of period 1, 2, 4: cuMemsetD8/16/32 (the offset and size are
 * multiples of the pattern size, and allocations are 256-byte aligned, so
 * the alignment rules of D16/D32 hold).  Longer periods: the pattern is
 * written once and doubled with device-to-device copies (log2(n/size)
 * copies), all on the one stream. */
static ck_status ck__cu_fill(ck_context *ctx, ck__devmem *dst, size_t off,
                         const void *pattern, size_t psize, size_t n) {
  cu_state *s = ST(ctx);
  const unsigned char *pb = pattern;
  size_t per = ck__cu_pattern_period(pb, psize);
  ck_cu_deviceptr d = ck__cu_ptr(dst, off);
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_cu_result r = CK_CUDA_SUCCESS;
  const char *call = "";
  if (per == 1) {
    call = "cuMemsetD8Async";
    r = s->cu->cuMemsetD8Async(d, pb[0], n, s->stream);
  } else if (per == 2) {
    unsigned short v;
    memcpy(&v, pb, 2);
    call = "cuMemsetD16Async";
    r = s->cu->cuMemsetD16Async(d, v, n / 2, s->stream);
  } else if (per == 4) {
    unsigned int v;
    memcpy(&v, pb, 4);
    call = "cuMemsetD32Async";
    r = s->cu->cuMemsetD32Async(d, v, n / 4, s->stream);
  } else {
    call = "cuMemcpyHtoDAsync_v2";
    r = s->cu->cuMemcpyHtoDAsync_v2(d, pb, psize, s->stream);
    size_t done = psize;
    while (r == CK_CUDA_SUCCESS && done < n) {
      size_t c = done < n - done ? done : n - done;
      call = "cuMemcpyDtoDAsync_v2";
      r = s->cu->cuMemcpyDtoDAsync_v2(d + done, d, c, s->stream);
      done += c;
    }
  }
  st = r != CK_CUDA_SUCCESS ? CU_FAIL(s, call, r)
                            : ck__cu_sync(s, __func__, "a fill");
  ck__cu_pop(s);
  return st;
}

/* ---- programs and kernels ---------------------------------------------- */

/* The NVRTC architecture for the device: the highest one NVRTC supports
 * that is not newer than the device (PTX is forward compatible: the driver
 * compiles it for the actual device). */
static ck_status ck__cu_pick_arch(cu_state *s, const ck_nvrtc_api *nv) {
  int cc = s->cc_major * 10 + s->cc_minor;
  if (nv->narchs == 0) {
    s->arch = cc;
    return CK_OK;
  }
  int best = 0;
  for (int i = 0; i < nv->narchs; i++) {
    if (nv->archs[i] <= cc && nv->archs[i] > best) {
      best = nv->archs[i];
    }
  }
  if (best == 0) {
    return CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "NVRTC %d.%d (%s) cannot compile for compute capability "
                    "%d.%d (its oldest architecture is compute_%d); use an "
                    "older NVRTC through CK_NVRTC_LIBRARY",
                    nv->major, nv->minor, nv->path, s->cc_major, s->cc_minor,
                    nv->archs[0]);
  }
  s->arch = best;
  return CK_OK;
}

static ck_status ck__cu_build(ck_context *ctx, const char *source,
                          const char *options, void **out) {
  cu_state *s = ST(ctx);
  const ck_nvrtc_api *nv = ck__nvrtc_api();
  if (nv == NULL) {
    return CK_ERR_BACKEND;
  }
  ck_status st = s->arch != 0 ? CK_OK : ck__cu_pick_arch(s, nv);
  if (st != CK_OK) {
    return st;
  }
  char *ptx = NULL;
  size_t ptx_size = 0;
  st = ck__nvrtc_compile(nv, source, options, s->arch, "", &ptx, &ptx_size,
                         NULL);
  if (st != CK_OK) {
    return st;
  }
  st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    ck__free(ptx);
    return st;
  }
  enum { LOG = 2048 };
  char err[LOG];
  err[0] = '\0';
  ck_cu_jit_option opts[2] = {CK_CU_JIT_ERROR_LOG_BUFFER,
                              CK_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  /* The size is an unsigned int passed in the pointer-sized slot. */
  void *vals[2] = {err, (void *)(uintptr_t)(LOG - 1)};
  ck_cu_module mod = NULL;
  ck_cu_result r = s->cu->cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
  ck__cu_pop(s);
  ck__free(ptx);
  err[LOG - 1] = '\0';
  if (r != CK_CUDA_SUCCESS) {
    char extra[LOG + 256];
    if (r == CK_CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
      int v = s->cu->driver_version;
      snprintf(extra, sizeof extra,
               ": the PTX of NVRTC %d.%d is newer than the driver (CUDA "
               "%d.%d) accepts; use an NVRTC no newer than the driver "
               "(CK_NVRTC_LIBRARY) or update the driver",
               nv->major, nv->minor, v / 1000, (v % 1000) / 10);
    } else {
      snprintf(extra, sizeof extra, ": %s", err[0] ? err : "(no JIT log)");
    }
    return ck__cu_fail(s->cu, __func__, "cuModuleLoadDataEx", r, extra);
  }
  *out = mod;
  return CK_OK;
}

static void ck__cu_release_program(ck_context *ctx, void *native) {
  cu_state *s = ST(ctx);
  if (native != NULL && ck__cu_push(s, __func__) == CK_OK) {
    (void)s->cu->cuModuleUnload((ck_cu_module)native);
    ck__cu_pop(s);
  }
}

typedef struct cu_kernel {
  ck_cu_function f;
  unsigned block; /* threads per block */
  /* The parameters' sizes (cuFuncGetParamInfo), read at the first launch:
   * params_known 0 not yet read, 1 read (nparams, psizes), -1 the driver
   * cannot tell (no check). */
  int params_known;
  size_t nparams;
  size_t *psizes;
} cu_kernel;

static ck_status ck__cu_kernel_create(ck_context *ctx, void *program,
                                  const char *name, void **out) {
  cu_state *s = ST(ctx);
  cu_kernel *k = CK_CALLOC(1, sizeof *k);
  if (k == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    ck__free(k);
    return st;
  }
  ck_cu_result r = s->cu->cuModuleGetFunction(&k->f, (ck_cu_module)program, name);
  int maxt = 0;
  if (r == CK_CUDA_SUCCESS &&
      s->cu->cuFuncGetAttribute(&maxt, CK_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                k->f) != CK_CUDA_SUCCESS) {
    maxt = 0;
  }
  ck__cu_pop(s);
  if (r != CK_CUDA_SUCCESS) {
    ck__free(k);
    char extra[200];
    snprintf(extra, sizeof extra,
             " (kernel '%.64s'; CUDA C kernels are declared extern \"C\" "
             "__global__ so that their names are not mangled)", name);
    return ck__cu_fail(s->cu, __func__, "cuModuleGetFunction", r, extra);
  }
  k->block = maxt >= 256 || maxt <= 0 ? 256u : (unsigned)maxt;
  *out = k;
  return CK_OK;
}

static void ck__cu_kernel_release(ck_context *ctx, void *kernel) {
  (void)ctx;
  if (kernel != NULL) {
    ck__free(((cu_kernel *)kernel)->psizes);
  }
  ck__free(kernel);
}

/* The kernel's parameter sizes, read once (cuFuncGetParamInfo, CUDA 12.4+):
 * k->params_known becomes 1 with nparams/psizes, or -1 when the driver
 * cannot tell (no such entry point, an unexpected answer). */
enum { CU_MAX_PARAMS = 4096 };

static ck_status ck__cu_read_params(cu_state *s, cu_kernel *k) {
  k->params_known = -1;
  if (s->cu->cuFuncGetParamInfo == NULL) {
    return CK_OK;
  }
  size_t cap = 16, count = 0, off = 0, psize = 0;
  size_t *sizes = CK_MALLOC(cap * sizeof *sizes);
  if (sizes == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  ck_cu_result r = CK_CUDA_SUCCESS;
  while (count < CU_MAX_PARAMS &&
         (r = s->cu->cuFuncGetParamInfo(k->f, count, &off, &psize)) ==
             CK_CUDA_SUCCESS) {
    if (count == cap) {
      size_t *grown = CK_REALLOC(sizes, 2 * cap * sizeof *sizes);
      if (grown == NULL) {
        ck__free(sizes);
        return CK_ERR_NO_MEMORY;
      }
      sizes = grown;
      cap *= 2;
    }
    sizes[count++] = psize;
  }
  if (count < CU_MAX_PARAMS && r != CK_CUDA_ERROR_INVALID_VALUE) {
    ck__free(sizes); /* the driver cannot tell: no check */
    return CK_OK;
  }
  k->psizes = sizes;
  k->nparams = count;
  k->params_known = 1;
  return CK_OK;
}

/* With cuFuncGetParamInfo (CUDA 12.4+): the number of parameters matches
 * and every argument has its parameter's size.  Without it: CK_OK.  The
 * sizes are read at the first launch, so a launch compares, calling nothing. */
static ck_status ck__cu_check_params(cu_state *s, cu_kernel *k,
                                 const char *name, size_t nargs,
                                 const size_t *sizes) {
  if (k->params_known == 0) {
    ck_status st = ck__cu_read_params(s, k);
    if (st != CK_OK) {
      return st;
    }
  }
  if (k->params_known < 0) {
    return CK_OK;
  }
  size_t count = k->nparams;
  for (size_t i = 0; i < nargs; i++) {
    if (i == count) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "kernel '%s' takes %zu parameter%s, %zu arguments given",
                      name, i, i == 1 ? "" : "s", nargs);
    }
    if (k->psizes[i] != sizes[i]) {
      return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                      "kernel '%s' argument %zu: %zu bytes given, the "
                      "parameter has %zu bytes", name, i, sizes[i], k->psizes[i]);
    }
  }
  if (count != nargs) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "kernel '%s' takes %s%zu parameters, %zu argument%s given",
                    name, count == CU_MAX_PARAMS ? "at least " : "", count,
                    nargs, nargs == 1 ? "" : "s");
  }
  return CK_OK;
}

enum { CU_INLINE_ARGS = 32 };

/* The launch, then (src != NULL) `n` bytes at `off` of `src` copied to `dst`
 * behind it on the stream, and one synchronisation for both.  The copy
 * goes through the context's page-locked staging bytes when they fit: a
 * copy into pageable memory is staged by the driver and waits apart. */
static ck_status ck__cu_launch_common(ck_context *ctx, void *kernel,
                                      const char *name, size_t nargs,
                                      const ck_kernel_arg *args, size_t global,
                                      ck__devmem *src, size_t off, void *dst,
                                      size_t n) {
  cu_state *s = ST(ctx);
  cu_kernel *k = kernel;
  void *params_inline[CU_INLINE_ARGS];
  ck_cu_deviceptr ptrs_inline[CU_INLINE_ARGS];
  size_t sizes_inline[CU_INLINE_ARGS];
  void **params = params_inline;
  ck_cu_deviceptr *ptrs = ptrs_inline;
  size_t *sizes = sizes_inline;
  void *heap = NULL;
  if (nargs > CU_INLINE_ARGS) {
    size_t each = sizeof(void *) + sizeof(ck_cu_deviceptr) + sizeof(size_t);
    size_t total;
    if (!ck__mul_size(nargs, each, &total)) {
      return CK_ERROR(CK_ERR_OVERFLOW, "%zu arguments", nargs);
    }
    heap = CK_MALLOC(total);
    if (heap == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    params = heap;
    ptrs = (ck_cu_deviceptr *)(void *)(params + nargs);
    sizes = (size_t *)(void *)(ptrs + nargs);
  }
  for (size_t i = 0; i < nargs; i++) {
    const ck_kernel_arg *a = &args[i];
    if (a->kind == CK_KERNEL_ARG_BUFFER) {
      ptrs[i] = ck__cu_ptr(ck__buffer_devmem(a->buffer), a->offset);
      params[i] = &ptrs[i];
      sizes[i] = sizeof(ck_cu_deviceptr);
    } else {
      params[i] = (void *)(uintptr_t)a->value; /* the driver only reads it */
      sizes[i] = a->size;
    }
  }
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    ck__free(heap);
    return st;
  }
  /* An empty range launches nothing and checks nothing (as on OpenCL). */
  st = global != 0 ? ck__cu_check_params(s, k, name, nargs, sizes) : CK_OK;
  if (st == CK_OK && global != 0) {
    size_t blocks = global / k->block + (global % k->block != 0);
    if (blocks > (size_t)s->max_grid_x) {
      st = CK_ERROR(CK_ERR_NOT_SUPPORTED,
                    "kernel '%s': %zu work-items need %zu blocks of %u, more "
                    "than the device's grid limit %d",
                    name, global, blocks, k->block, s->max_grid_x);
    } else {
      ck_cu_result r = s->cu->cuLaunchKernel(
          k->f, (unsigned)blocks, 1, 1, k->block, 1, 1, 0, s->stream,
          nargs != 0 ? params : NULL, NULL);
      if (r != CK_CUDA_SUCCESS) {
        char extra[100];
        snprintf(extra, sizeof extra, " (kernel '%.64s')", name);
        st = ck__cu_fail(s->cu, __func__, "cuLaunchKernel", r, extra);
      } else if (src == NULL || n == 0) {
        char what[100];
        snprintf(what, sizeof what, "kernel '%.64s'", name);
        st = ck__cu_sync(s, __func__, what);
      }
    }
  }
  if (st == CK_OK && src != NULL && n != 0) {
    if (!s->staging_tried) {
      s->staging_tried = true;
      if (s->cu->cuMemAllocHost_v2 == NULL || s->cu->cuMemFreeHost == NULL ||
          s->cu->cuMemAllocHost_v2(&s->staging, CU_STAGING_BYTES) != CK_CUDA_SUCCESS) {
        s->staging = NULL;
      }
    }
    void *to = s->staging != NULL && n <= CU_STAGING_BYTES ? s->staging : dst;
    ck_cu_result r = s->cu->cuMemcpyDtoHAsync_v2(to, ck__cu_ptr(src, off), n, s->stream);
    if (r != CK_CUDA_SUCCESS) {
      st = CU_FAIL(s, "cuMemcpyDtoHAsync_v2", r);
    } else {
      char what[140];
      snprintf(what, sizeof what, "kernel '%.64s' and the read after it", name);
      st = ck__cu_sync(s, __func__, what);
      if (st == CK_OK && to != dst) {
        memcpy(dst, to, n);
      }
    }
  }
  ck__cu_pop(s);
  ck__free(heap);
  return st;
}

static ck_status ck__cu_launch(ck_context *ctx, void *kernel, const char *name,
                           size_t nargs, const ck_kernel_arg *args,
                           size_t global) {
  return ck__cu_launch_common(ctx, kernel, name, nargs, args, global, NULL, 0,
                              NULL, 0);
}

static ck_status ck__cu_launch_read(ck_context *ctx, void *kernel,
                                    const char *name, size_t nargs,
                                    const ck_kernel_arg *args, size_t global,
                                    size_t local, ck__devmem *src, size_t off,
                                    void *dst, size_t n) {
  (void)local; /* whole blocks of the kernel's size, as ck__cu_launch */
  return ck__cu_launch_common(ctx, kernel, name, nargs, args, global, src, off,
                              dst, n);
}

static ck_status ck__cu_finish(ck_context *ctx) {
  cu_state *s = ST(ctx);
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  ck_cu_result r = s->cu->cuCtxSynchronize();
  ck__cu_pop(s);
  return r == CK_CUDA_SUCCESS ? CK_OK : CU_FAIL(s, "cuCtxSynchronize", r);
}

/* Foreign device memory (another library's allocation): on this device,
 * and [ptr, ptr + size) inside one allocation. */
static ck_status ck__cu_wrap(ck_context *ctx, void *native, size_t size,
                         ck__devmem *out) {
  cu_state *s = ST(ctx);
  ck_cu_deviceptr p = (ck_cu_deviceptr)(uintptr_t)native;
  ck_status st = ck__cu_push(s, __func__);
  if (st != CK_OK) {
    return st;
  }
  int ordinal = -1;
  ck_cu_deviceptr base = 0;
  size_t extent = 0;
  ck_cu_result r = s->cu->cuPointerGetAttribute(
      &ordinal, CK_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p);
  const char *call = "cuPointerGetAttribute";
  if (r == CK_CUDA_SUCCESS) {
    call = "cuMemGetAddressRange_v2";
    r = s->cu->cuMemGetAddressRange_v2(&base, &extent, p);
  }
  ck__cu_pop(s);
  if (r != CK_CUDA_SUCCESS) {
    return ck__cu_fail(s->cu, __func__, call, r,
                       " (the pointer is not CUDA device memory)");
  }
  if (ordinal != (int)s->ordinal) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "device pointer 0x%llx is on CUDA device %d, the context "
                    "on device %u", (unsigned long long)p, ordinal,
                    (unsigned)s->ordinal);
  }
  if (p - base > extent || size > extent - (size_t)(p - base)) {
    return CK_ERROR(CK_ERR_INDEX,
                    "[0x%llx, +%zu) exceeds its allocation [0x%llx, +%zu)",
                    (unsigned long long)p, size, (unsigned long long)base,
                    extent);
  }
  out->handle = native;
  out->host = NULL;
  out->size = size;
  return CK_OK;
}

const ck__backend_vtable ck__cuda_backend = {
    .kind = "cuda",
    .alloc = ck__cu_alloc,
    .free = ck__cu_free,
    .copy_h2d = ck__cu_h2d,
    .copy_d2h = ck__cu_d2h,
    .copy_d2d = ck__cu_d2d,
    .fill = ck__cu_fill,
    .build_program = ck__cu_build,
    .release_program = ck__cu_release_program,
    .kernel_create = ck__cu_kernel_create,
    .kernel_release = ck__cu_kernel_release,
    .launch = ck__cu_launch,
    .launch_read = ck__cu_launch_read,
    .finish = ck__cu_finish,
    .release = ck__cu_release,
    .describe = ck__cu_describe,
    .wrap = ck__cu_wrap,
};

/* ---- public CUDA queries (ckernel/cuda.h) ------------------------------- */

ck_status ck_cuda_device_count(uint32_t *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = 0;
  const ck_cu_api *cu = ck__cuda_api();
  if (cu == NULL) {
    /* A driver without devices is an answer, not a failure. */
    return atomic_load(&ck__cu_last_init) == CK_CUDA_ERROR_NO_DEVICE
               ? CK_OK
               : CK_ERR_BACKEND;
  }
  int n = 0;
  ck_cu_result r = cu->cuDeviceGetCount(&n);
  if (r != CK_CUDA_SUCCESS) {
    return ck__cu_fail(cu, __func__, "cuDeviceGetCount", r, "");
  }
  *out = n > 0 ? (uint32_t)n : 0u;
  return CK_OK;
}

ck_status ck_cuda_driver_version(int32_t *out) {
  if (out == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
  }
  *out = 0;
  const ck_cu_api *cu = ck__cuda_api();
  if (cu == NULL) {
    return CK_ERR_BACKEND;
  }
  *out = cu->driver_version;
  return CK_OK;
}

static ck_status ck__cuda_state(const ck_context *ctx, const char *func,
                                cu_state **out) {
  if (ctx == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "ctx must not be NULL");
  }
  if (ctx->vt != &ck__cuda_backend) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "not a cuda context (kind '%s')", ctx->vt->kind);
  }
  *out = ST(ctx);
  return CK_OK;
}

ck_status ck_cuda_context_device(const ck_context *ctx, int32_t *ordinal,
                                 int32_t *cc_major, int32_t *cc_minor) {
  cu_state *s = NULL;
  ck_status st = ck__cuda_state(ctx, __func__, &s);
  if (st != CK_OK) {
    return st;
  }
  if (ordinal != NULL) {
    *ordinal = (int32_t)s->ordinal;
  }
  if (cc_major != NULL) {
    *cc_major = s->cc_major;
  }
  if (cc_minor != NULL) {
    *cc_minor = s->cc_minor;
  }
  return CK_OK;
}

ck_status ck_cuda_context_handles(const ck_context *ctx, void **cu_context,
                                  void **cu_stream) {
  cu_state *s = NULL;
  ck_status st = ck__cuda_state(ctx, __func__, &s);
  if (st != CK_OK) {
    return st;
  }
  if (cu_context != NULL) {
    *cu_context = s->pctx;
  }
  if (cu_stream != NULL) {
    *cu_stream = s->stream;
  }
  return CK_OK;
}
