/* The cuda context on device CK_CUDA_DEVICE (default 0): the shared device
 * suite (device_suite.h) and CUDA specifics -- describe and queries, device
 * selection, argument checks against the kernel's parameters (driver >=
 * 12.4), buffer arguments at any offset, JIT (cuModuleLoadDataEx) errors,
 * two threads on one context.
 * Exits 77 (ctest: Skipped) with the reason when no context can be made (no
 * driver, the stub driver, no device: every machine without a GPU), and
 * under valgrind (CK_UNDER_VALGRIND): the driver's own allocations drown
 * the report (suite_main). */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"
#include "device_suite.h"

#include <pthread.h>

static const char SRC[] =
    "extern \"C\" __global__ void affine(float *y, const float *x,\n"
    "                                    unsigned long long n) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x\n"
    "                         + threadIdx.x;\n"
    "  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void affine_dev(char *dst, unsigned long long doff,\n"
    "    long long dstr, const char *src, unsigned long long soff,\n"
    "    long long sstr, unsigned long long n) {\n"
    "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x\n"
    "                         + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  const float *x = (const float *)(src + soff + (long long)i * sstr);\n"
    "  float *y = (float *)(dst + doff + (long long)i * dstr);\n"
    "  *y = 2.0f * *x + 1.0f;\n"
    "}\n";

static const device_backend CUDA = {
    .kind = "cuda",
    .src = SRC,
    .broken_src = "extern \"C\" __global__ void broken(float *x) { x[0] = undeclared_thing + ; }",
    .build_error = "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION (6): ",
    .alt_options = "-lineinfo --use_fast_math",
    .bad_options_error = "nvrtcCompileProgram failed: NVRTC_ERROR_INVALID_OPTION (5)",
    .missing_kernel_error = "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (500)",
    .missing_kernel_error_short = "CUDA_ERROR_NOT_FOUND",
    .no_compiler = NULL, /* set in main when NVRTC cannot be found */
    .describe_text = "compute capability",
    .device_env = "CK_CUDA_DEVICE",
    .device_env_bad = "4099", /* more devices than any machine has */
    .device_env_bad_error = "CUDA device",
    .device_env_good = "0",
    .valgrind_why = "the CUDA driver's internals",
};

/* CUDA queries, device numbers and the primary context (kind, describe
 * and the CK_CUDA_DEVICE variable: suite_describe_and_select). */
static void test_queries(void) {
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  CHECK(ck_context_supports_fp64(ctx));
  CHECK(!ck_context_host_accessible(ctx));
  int32_t ord = -1, major = 0, minor = -1, drv = 0;
  CHECK_OK(ck_cuda_context_device(ctx, &ord, &major, &minor));
  CHECK(major >= 3 && minor >= 0);
  const char *env = getenv("CK_CUDA_DEVICE");
  CHECK(ord == (env != NULL && env[0] != '\0' ? atoi(env) : 0));
  void *cu_ctx = NULL, *stream = NULL;
  CHECK_OK(ck_cuda_context_handles(ctx, &cu_ctx, &stream));
  CHECK(cu_ctx != NULL && stream != NULL);
  CHECK_OK(ck_cuda_driver_version(&drv));
  CHECK(drv >= 11000);
  uint32_t n = 0;
  CHECK_OK(ck_cuda_device_count(&n));
  CHECK(n >= 1 && (uint32_t)ord < n);
  /* device numbers; the same primary context serves every context of a
   * device */
  ck_context *other = NULL;
  CHECK_ERR(ck_context_new_cuda(n, &other), CK_ERR_INDEX, "out of range");
  CHECK(other == NULL);
  CHECK_OK(ck_context_new_cuda((uint32_t)ord, &other));
  void *cu_ctx2 = NULL;
  CHECK_OK(ck_cuda_context_handles(other, &cu_ctx2, NULL));
  CHECK(cu_ctx2 == cu_ctx);
  ck_context_decref(other);
  /* a zero-capacity buffer has no allocation; native handles are pointers */
  ck_buffer *z = NULL, *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 0, &z));
  CHECK(ck_buffer_native_handle(z) == NULL);
  REQUIRE_OK(ck_buffer_new(ctx, 1000, &b));
  CHECK(ck_buffer_native_handle(b) != NULL);
  CHECK((uintptr_t)ck_buffer_native_handle(b) % 256 == 0);
  ck_buffer_decref(z);
  ck_buffer_decref(b);
  CHECK_OK(ck_context_finish(ctx));
  ck_context_decref(ctx);
}

/* Arguments: any buffer offset is passed as pointer + offset; counts and
 * sizes are checked against the kernel where the driver can tell. */
static void test_launch_arguments(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  enum { N = 1000 };
  float x[N + 1], y[N];
  for (int i = 0; i <= N; i++) {
    x[i] = (float)i * 0.5f - 7.0f;
  }
  ck_buffer *bx = NULL, *by = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, sizeof x, &bx));
  REQUIRE_OK(ck_buffer_new(ctx, sizeof y, &by));
  CHECK_OK(ck_buffer_write(bx, 0, x, sizeof x));
  uint64_t n64 = N;
  ck_kernel_arg args[4];
  /* x + 1: no alignment rule beyond float's */
  suite_affine_args(args, by, bx, sizeof(float), &n64);
  CHECK_OK(ck_context_launch(ctx, p, "affine", 3, args, N));
  CHECK_OK(ck_buffer_read(by, 0, y, sizeof y));
  CHECK(suite_check_affine(x + 1, y, N));
  int32_t drv = 0;
  CHECK_OK(ck_cuda_driver_version(&drv));
  if (drv >= 12040) {
    CHECK_ERR(ck_context_launch(ctx, p, "affine", 2, args, N), CK_ERR_INVALID_ARGUMENT,
              "kernel 'affine' takes 3 parameters, 2 arguments given");
    args[3] = args[2];
    CHECK_ERR(ck_context_launch(ctx, p, "affine", 4, args, N), CK_ERR_INVALID_ARGUMENT,
              "kernel 'affine' takes 3 parameter");
    uint32_t n32 = N;
    args[2].value = &n32;
    args[2].size = sizeof n32;
    CHECK_ERR(ck_context_launch(ctx, p, "affine", 3, args, N), CK_ERR_INVALID_ARGUMENT,
              "argument 2: 4 bytes given, the parameter has 8 bytes");
  } else {
    printf("  (driver %d < 12.4: no cuFuncGetParamInfo, arguments unchecked)\n",
           (int)drv);
  }
  ck_buffer_decref(bx);
  ck_buffer_decref(by);
  ck_program_decref(p);
  ck_context_decref(ctx);
}

/* A PTX the driver rejects: NVRTC's newest architecture when it is newer
 * than the device (the JIT cannot target a newer GPU). */
static void test_jit_error(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  int32_t major = 0, minor = 0;
  CHECK_OK(ck_cuda_context_device(ctx, NULL, &major, &minor));
  char *ptx = NULL;
  /* The newest architecture NVRTC knows, from a failed compile's message. */
  int newest = 0;
  for (int a = 130; a >= 75 && newest == 0; a--) {
    char arch[16];
    snprintf(arch, sizeof arch, "%d", a);
    if (ck_cuda_compile_ptx("__global__ void k(void) {}", NULL, arch, &ptx, NULL,
                            NULL) == CK_OK) {
      newest = a;
      ck_cuda_free(ptx);
      ptx = NULL;
    }
  }
  if (newest <= major * 10 + minor) {
    printf("  SKIP: NVRTC's newest architecture (%d) is not newer than the "
           "device (%d.%d)\n", newest, (int)major, (int)minor);
    ck_context_decref(ctx);
    return;
  }
  char opts[64];
  snprintf(opts, sizeof opts, "--gpu-architecture=compute_%d", newest);
  ck_program *p = NULL;
  CHECK_ERR(ck_context_build_program(ctx, SRC, opts, &p), CK_ERR_BACKEND,
            "cuModuleLoadDataEx failed: ");
  printf("  %.200s\n", ck_last_error());
  CHECK(p == NULL);
  ck_context_decref(ctx);
}

typedef struct worker {
  ck_context *ctx;
  ck_program *p;
  int seed;
  int ok;
} worker;

static void *worker_run(void *arg) {
  worker *w = arg;
  enum { N = 4099 };
  float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
  ck_buffer *bx = NULL, *by = NULL;
  w->ok = x != NULL && y != NULL && ck_buffer_new(w->ctx, N * sizeof(float), &bx) == CK_OK &&
          ck_buffer_new(w->ctx, N * sizeof(float), &by) == CK_OK;
  for (int round = 0; round < 20 && w->ok; round++) {
    for (int i = 0; i < N; i++) {
      x[i] = (float)(i * w->seed + round);
    }
    uint64_t n64 = N;
    ck_kernel_arg args[3];
    suite_affine_args(args, by, bx, 0, &n64);
    w->ok = ck_buffer_write(bx, 0, x, N * sizeof(float)) == CK_OK &&
            ck_context_launch(w->ctx, w->p, "affine", 3, args, N) == CK_OK &&
            ck_buffer_read(by, 0, y, N * sizeof(float)) == CK_OK &&
            suite_check_affine(x, y, N);
  }
  ck_buffer_decref(bx);
  ck_buffer_decref(by);
  free(x);
  free(y);
  return NULL;
}

/* Two threads on one context: each pushes the primary context itself. */
static void test_threads(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  worker w[2] = {{ctx, p, 3, 0}, {ctx, p, 5, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    REQUIRE(pthread_create(&t[i], NULL, worker_run, &w[i]) == 0);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    CHECK(w[i].ok);
  }
  ck_program_decref(p);
  ck_context_decref(ctx);
}

static void count_release(void *arg) { (*(int *)arg)++; }

/* Foreign device memory (here: part of another buffer's allocation) used in
 * place; pointers that are not device memory of this device are refused. */
static void test_wrap(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_buffer *own = NULL, *w = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 4096, &own));
  char *base = ck_buffer_native_handle(own);
  int released = 0;
  REQUIRE_OK(ck_buffer_wrap(ctx, base + 1024, 2048, count_release, &released, &w));
  CHECK(ck_buffer_native_handle(w) == base + 1024);
  float v[4] = {1.5f, -2.0f, 3.25f, 8.0f}, back[4] = {0};
  CHECK_OK(ck_buffer_write(w, 16, v, sizeof v));
  CHECK_OK(ck_buffer_read(own, 1024 + 16, back, sizeof back));
  CHECK(memcmp(v, back, sizeof v) == 0);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  uint64_t n64 = 4;
  ck_kernel_arg args[3];
  suite_affine_args(args, own, w, 16, &n64);
  CHECK_OK(ck_context_launch(ctx, p, "affine", 3, args, 4));
  CHECK_OK(ck_buffer_read(own, 0, back, sizeof back));
  CHECK(suite_check_affine(v, back, 4));
  CHECK_ERR(ck_buffer_grow(w, 8192), CK_ERR_NOT_SUPPORTED, "cannot grow");
  ck_buffer *bad = NULL;
  CHECK_ERR(ck_buffer_wrap(ctx, base + 1024, 4096, NULL, NULL, &bad), CK_ERR_INDEX,
            "exceeds its allocation");
  static char host[64];
  CHECK_ERR(ck_buffer_wrap(ctx, host, sizeof host, NULL, NULL, &bad), CK_ERR_BACKEND,
            "not CUDA device memory");
  CHECK(bad == NULL);
  ck_buffer_decref(w);
  CHECK(released == 1);
  ck_program_decref(p);
  ck_buffer_decref(own);
  ck_context_decref(ctx);
}

#define main ck_test_main_
CK_TEST_MAIN(CK_TEST(suite_describe_and_select), CK_TEST(test_queries),
             CK_TEST(suite_buffers), CK_TEST(suite_fill_patterns),
             CK_TEST(suite_build_errors_and_cache), CK_TEST(suite_launch),
             CK_TEST(test_launch_arguments), CK_TEST(test_jit_error),
             CK_TEST(suite_device_ckernel), CK_TEST(test_wrap), CK_TEST(test_threads),
             CK_TEST(suite_fault_injection))
#undef main

int main(int argc, char **argv) {
  static device_backend be;
  be = CUDA;
  /* Without NVRTC the buffers are still tested; programs are skipped.
   * Under valgrind suite_main skips at once: loading NVRTC there first took
   * ~10-36 s for nothing (test_cuda_loader checks the loaders under it). */
  static char why[1100];
  if (getenv("CK_UNDER_VALGRIND") == NULL &&
      ck_cuda_nvrtc_version(NULL, NULL, NULL, 0, NULL) != CK_OK) {
    snprintf(why, sizeof why, "%s", ck_last_error());
    be.no_compiler = why;
  }
  return suite_main(argc, argv, &be);
}
