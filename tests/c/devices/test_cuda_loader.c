/* The CUDA driver and NVRTC loaders, on any machine (no GPU needed):
 *  - every constant and every prototype of cuda_loader_internal.h / nvrtc_loader_internal.h
 *    against <cuda.h> / <nvrtc.h> (compile time, when the toolkit's headers
 *    are found: CK_HAVE_CUDA_HEADERS);
 *  - the toolkit's stub libcuda.so (CK_TEST_CUDA_STUB) exports every
 *    versioned symbol the table names, and ck_context_new("cuda") on it
 *    fails with "no CUDA driver found ... stub";
 *  - no driver at all (a nonexistent CK_CUDA_DRIVER_LIBRARY): a clean
 *    "no CUDA driver found";
 *  - the messages for CUDA_ERROR_NO_DEVICE & co, CK_CUDA_DEVICE parsing,
 *    CUDA-only queries on other contexts. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"
#include "devices/cuda_loader_internal.h"
#include "devices/nvrtc_loader_internal.h"

#include <dlfcn.h>

#ifdef CK_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <nvrtc.h>

_Static_assert(sizeof(void *) == 8, "the cuda backend needs a 64-bit host");
_Static_assert(sizeof(ck_cu_deviceptr) == sizeof(CUdeviceptr), "");
_Static_assert(sizeof(ck_cu_result) == sizeof(CUresult), "");
_Static_assert(sizeof(ck_cu_device) == sizeof(CUdevice), "");
_Static_assert(sizeof(ck_cu_jit_option) == sizeof(CUjit_option), "");
_Static_assert(sizeof(ck_cu_device_attribute) == sizeof(CUdevice_attribute), "");
_Static_assert(sizeof(ck_cu_function_attribute) == sizeof(CUfunction_attribute), "");
_Static_assert(sizeof(ck_cu_pointer_attribute) == sizeof(CUpointer_attribute), "");
_Static_assert(sizeof(ck_nvrtc_result) == sizeof(nvrtcResult), "");
_Static_assert(CK_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, "");
_Static_assert(CK_CUDA_SUCCESS == CUDA_SUCCESS, "");
_Static_assert(CK_CUDA_ERROR_INVALID_VALUE == CUDA_ERROR_INVALID_VALUE, "");
_Static_assert(CK_CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY, "");
_Static_assert(CK_CUDA_ERROR_NOT_INITIALIZED == CUDA_ERROR_NOT_INITIALIZED, "");
_Static_assert(CK_CUDA_ERROR_DEINITIALIZED == CUDA_ERROR_DEINITIALIZED, "");
_Static_assert(CK_CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY, "");
_Static_assert(CK_CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "");
_Static_assert(CK_CUDA_ERROR_INVALID_DEVICE == CUDA_ERROR_INVALID_DEVICE, "");
_Static_assert(CK_CUDA_ERROR_INVALID_PTX == CUDA_ERROR_INVALID_PTX, "");
_Static_assert(CK_CUDA_ERROR_UNSUPPORTED_PTX_VERSION == CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "");
_Static_assert(CK_CUDA_ERROR_NOT_FOUND == CUDA_ERROR_NOT_FOUND, "");
_Static_assert(CK_CUDA_ERROR_ILLEGAL_ADDRESS == CUDA_ERROR_ILLEGAL_ADDRESS, "");
_Static_assert(CK_CUDA_ERROR_LAUNCH_FAILED == CUDA_ERROR_LAUNCH_FAILED, "");
_Static_assert(CK_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "");
_Static_assert(CK_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "");
_Static_assert(CK_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "");
_Static_assert(CK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "");
_Static_assert(CK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "");
_Static_assert(CK_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "");
_Static_assert(CK_CU_JIT_INFO_LOG_BUFFER == CU_JIT_INFO_LOG_BUFFER, "");
_Static_assert(CK_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, "");
_Static_assert(CK_CU_JIT_ERROR_LOG_BUFFER == CU_JIT_ERROR_LOG_BUFFER, "");
_Static_assert(CK_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, "");
_Static_assert(CK_CU_STREAM_DEFAULT == CU_STREAM_DEFAULT, "");
_Static_assert(CK_NVRTC_SUCCESS == NVRTC_SUCCESS, "");
_Static_assert(CK_NVRTC_ERROR_INVALID_OPTION == NVRTC_ERROR_INVALID_OPTION, "");
_Static_assert(CK_NVRTC_ERROR_COMPILATION == NVRTC_ERROR_COMPILATION, "");

/* Every prototype of the tables, with the library's type names replaced by
 * the header's: the versioned symbol each field is loaded from must be the
 * very function <cuda.h> declares (cuMemAlloc is #defined to cuMemAlloc_v2
 * there, so `cuMemAlloc_v2` below is the header's declaration). */
#define ck_cu_result CUresult
#define ck_cu_device CUdevice
#define ck_cu_deviceptr CUdeviceptr
#define ck_cu_jit_option CUjit_option
#define ck_cu_device_attribute CUdevice_attribute
#define ck_cu_function_attribute CUfunction_attribute
#define ck_cu_pointer_attribute CUpointer_attribute
#define ck_cu_context CUcontext
#define ck_cu_module CUmodule
#define ck_cu_function CUfunction
#define ck_cu_stream CUstream
#define ck_nvrtc_result nvrtcResult
#define ck_nvrtc_program nvrtcProgram
#define CK_CHECK_PROTO(ret, sym, params)                                       \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&sym), ret(*) params), \
                 #sym " matches the toolkit's header");
CK_CU_FUNCTIONS(CK_CHECK_PROTO)
CK_CU_OPTIONAL_FUNCTIONS(CK_CHECK_PROTO)
CK_NVRTC_FUNCTIONS(CK_CHECK_PROTO)
CK_NVRTC_OPTIONAL_FUNCTIONS(CK_CHECK_PROTO)
#undef CK_CHECK_PROTO
#undef ck_cu_result
#undef ck_cu_device
#undef ck_cu_deviceptr
#undef ck_cu_jit_option
#undef ck_cu_device_attribute
#undef ck_cu_function_attribute
#undef ck_cu_pointer_attribute
#undef ck_cu_context
#undef ck_cu_module
#undef ck_cu_function
#undef ck_cu_stream
#undef ck_nvrtc_result
#undef ck_nvrtc_program
#endif

static void test_headers_checked(void) {
#ifdef CK_HAVE_CUDA_HEADERS
  printf("  prototypes and constants checked against <cuda.h> %d and <nvrtc.h>\n",
         CUDA_VERSION);
#else
  printf("  (no <cuda.h>: prototypes not checked at compile time)\n");
#endif
  CHECK(1);
}

static void test_error_names(void) {
  CHECK(strcmp(ck__cuda_error_name(34), "CUDA_ERROR_STUB_LIBRARY") == 0);
  CHECK(strcmp(ck__cuda_error_name(100), "CUDA_ERROR_NO_DEVICE") == 0);
  CHECK(strcmp(ck__cuda_error_name(700), "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
  CHECK(strcmp(ck__cuda_error_name(123456), "CUDA_ERROR_UNKNOWN_CODE") == 0);
  CHECK(strcmp(ck__nvrtc_error_name(6), "NVRTC_ERROR_COMPILATION") == 0);
  CHECK(strcmp(ck__nvrtc_error_name(77), "NVRTC_ERROR_UNKNOWN") == 0);
}

static void test_init_error_messages(void) {
  CHECK_ERR(ck__cuda_init_error(CK_CUDA_ERROR_NO_DEVICE, "/x/libcuda.so.1"),
            CK_ERR_BACKEND, "CUDA driver present but no device");
  CHECK(strstr(ck_last_error(), "CUDA_ERROR_NO_DEVICE (100)") != NULL);
  CHECK_ERR(ck__cuda_init_error(CK_CUDA_ERROR_STUB_LIBRARY, "/x/stubs/libcuda.so"),
            CK_ERR_BACKEND, "no CUDA driver found: /x/stubs/libcuda.so is the "
                            "CUDA toolkit's stub library");
  CHECK_ERR(ck__cuda_init_error(803, "d"), CK_ERR_BACKEND,
            "cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)");
  CHECK_ERR(ck__cuda_init_error(999, "d"), CK_ERR_BACKEND,
            "cuInit failed: CUDA_ERROR_UNKNOWN (999)");
}

static void test_no_driver(void) {
  setenv("CK_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  for (int i = 0; i < 2; i++) { /* a failed load is retried, same answer */
    ck_context *ctx = (ck_context *)&ctx;
    CHECK_ERR(ck_context_new("cuda", &ctx), CK_ERR_BACKEND,
              "no CUDA driver found: cannot load /nonexistent/libcuda.so.1");
    CHECK(ctx == NULL);
  }
  ck_context *ctx = NULL;
  CHECK_ERR(ck_context_new_cuda(0, &ctx), CK_ERR_BACKEND, "no CUDA driver found");
  uint32_t n = 99;
  CHECK_ERR(ck_cuda_device_count(&n), CK_ERR_BACKEND, "no CUDA driver found");
  CHECK(n == 0);
  int32_t v = 99;
  CHECK_ERR(ck_cuda_driver_version(&v), CK_ERR_BACKEND, "no CUDA driver found");
  CHECK(v == 0);
  unsetenv("CK_CUDA_DRIVER_LIBRARY");
}

static void test_stub_driver(void) {
  const char *stub = getenv("CK_TEST_CUDA_STUB");
  if (stub == NULL || stub[0] == '\0') {
    printf("  SKIP: no stub libcuda.so (CK_TEST_CUDA_STUB unset: no CUDA toolkit)\n");
    return;
  }
  /* Every versioned entry point of the table is exported by the stub, which
   * exports what the real driver does. */
  ck_cu_api t;
  void *h = NULL;
  REQUIRE_OK(ck__cuda_load_table(stub, &t, &h));
  CHECK(t.cuMemAlloc_v2 != NULL && t.cuMemcpyHtoDAsync_v2 != NULL &&
        t.cuDevicePrimaryCtxRelease_v2 != NULL && t.cuLaunchKernel != NULL);
  CHECK(t.cuFuncGetParamInfo != NULL); /* CUDA >= 12.4 stubs have it */
  CHECK(strstr(t.path, "libcuda.so") != NULL);
  CHECK(t.cuInit(0) == CK_CUDA_SUCCESS || t.cuInit(0) == CK_CUDA_ERROR_STUB_LIBRARY);
  dlclose(h);
  setenv("CK_CUDA_DRIVER_LIBRARY", stub, 1);
  for (int i = 0; i < 2; i++) {
    ck_context *ctx = NULL;
    CHECK_ERR(ck_context_new("cuda", &ctx), CK_ERR_BACKEND, "no CUDA driver found");
    CHECK(strstr(ck_last_error(), "stub") != NULL);
    CHECK(strstr(ck_last_error(), "CUDA_ERROR_STUB_LIBRARY") != NULL);
    printf("  %s\n", ck_last_error());
    CHECK(ctx == NULL);
  }
  uint32_t n = 99;
  CHECK_ERR(ck_cuda_device_count(&n), CK_ERR_BACKEND, "stub");
  CHECK(n == 0);
  unsetenv("CK_CUDA_DRIVER_LIBRARY");
}

/* The machine's own driver, whatever it is: a context or a clean reason. */
static void test_default_driver(void) {
  ck_context *ctx = NULL;
  ck_status st = ck_context_new("cuda", &ctx);
  if (st == CK_OK) {
    CHECK(strcmp(ck_context_kind(ctx), "cuda") == 0);
    ck_context_decref(ctx);
    uint32_t n = 0;
    CHECK_OK(ck_cuda_device_count(&n));
    CHECK(n >= 1);
    printf("  a CUDA device is present (%u)\n", (unsigned)n);
    return;
  }
  CHECK(st == CK_ERR_BACKEND || st == CK_ERR_INDEX);
  CHECK(ctx == NULL);
  CHECK(strstr(ck_last_error(), "no CUDA driver found") != NULL ||
        strstr(ck_last_error(), "CUDA driver present but") != NULL);
  printf("  %s\n", ck_last_error());
}

static void test_arguments(void) {
  ck_context *ctx = NULL;
  CHECK_ERR(ck_context_new_cuda(0, NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  setenv("CK_CUDA_DEVICE", "gpu0", 1);
  CHECK_ERR(ck_context_new("cuda", &ctx), CK_ERR_PARSE, "CK_CUDA_DEVICE='gpu0'");
  setenv("CK_CUDA_DEVICE", "0:1", 1);
  CHECK_ERR(ck_context_new("cuda", &ctx), CK_ERR_PARSE, "not a device ordinal");
  unsetenv("CK_CUDA_DEVICE");
  CHECK(ctx == NULL);
  ck_context *cpu = NULL;
  REQUIRE_OK(ck_context_new("cpu", &cpu));
  int32_t ord = -1;
  void *h = NULL;
  CHECK_ERR(ck_cuda_context_device(cpu, &ord, NULL, NULL), CK_ERR_INVALID_ARGUMENT,
            "not a cuda context (kind 'cpu')");
  CHECK_ERR(ck_cuda_context_handles(cpu, &h, NULL), CK_ERR_INVALID_ARGUMENT,
            "not a cuda context");
  CHECK_ERR(ck_cuda_context_device(NULL, &ord, NULL, NULL), CK_ERR_INVALID_ARGUMENT,
            "NULL");
  CHECK(ord == -1 && h == NULL);
  CHECK_ERR(ck_cuda_device_count(NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(ck_cuda_driver_version(NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_context_decref(cpu);
  ck_cuda_free(NULL);
}

CK_TEST_MAIN(CK_TEST(test_headers_checked), CK_TEST(test_error_names),
             CK_TEST(test_init_error_messages), CK_TEST(test_no_driver),
             CK_TEST(test_stub_driver), CK_TEST(test_default_driver),
             CK_TEST(test_arguments))
