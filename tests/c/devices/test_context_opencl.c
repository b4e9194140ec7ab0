/* The opencl context on whatever device the ICD loader offers (PoCL in CI).
 * Exits 77 (ctest: Skipped) when no OpenCL platform is available, or under
 * valgrind (CK_UNDER_VALGRIND): PoCL's own allocations drown the report. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"
#include "devices/opencl_loader_internal.h"

#include <math.h>

#if defined(__has_include)
#if __has_include(<CL/cl.h>)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
/* The library's self-contained declarations match the real headers. */
_Static_assert(CK_CL_SUCCESS == CL_SUCCESS, "");
_Static_assert(CK_CL_DEVICE_NOT_FOUND == CL_DEVICE_NOT_FOUND, "");
_Static_assert(CK_CL_BUILD_PROGRAM_FAILURE == CL_BUILD_PROGRAM_FAILURE, "");
_Static_assert(CK_CL_PLATFORM_VERSION == CL_PLATFORM_VERSION, "");
_Static_assert(CK_CL_PLATFORM_NAME == CL_PLATFORM_NAME, "");
_Static_assert(CK_CL_DEVICE_TYPE == CL_DEVICE_TYPE, "");
_Static_assert(CK_CL_DEVICE_MAX_COMPUTE_UNITS == CL_DEVICE_MAX_COMPUTE_UNITS, "");
_Static_assert(CK_CL_DEVICE_MEM_BASE_ADDR_ALIGN == CL_DEVICE_MEM_BASE_ADDR_ALIGN, "");
_Static_assert(CK_CL_DEVICE_NAME == CL_DEVICE_NAME, "");
_Static_assert(CK_CL_DEVICE_VERSION == CL_DEVICE_VERSION, "");
_Static_assert(CK_CL_DEVICE_EXTENSIONS == CL_DEVICE_EXTENSIONS, "");
_Static_assert(CK_CL_DEVICE_DOUBLE_FP_CONFIG == CL_DEVICE_DOUBLE_FP_CONFIG, "");
_Static_assert(CK_CL_DEVICE_TYPE_CPU == CL_DEVICE_TYPE_CPU, "");
_Static_assert(CK_CL_DEVICE_TYPE_ALL == CL_DEVICE_TYPE_ALL, "");
_Static_assert(CK_CL_MEM_READ_WRITE == CL_MEM_READ_WRITE, "");
_Static_assert(CK_CL_MEM_USE_HOST_PTR == CL_MEM_USE_HOST_PTR, "");
_Static_assert(CK_CL_MAP_READ == CL_MAP_READ, "");
_Static_assert(CK_CL_MAP_WRITE == CL_MAP_WRITE, "");
_Static_assert(CK_CL_PROGRAM_BUILD_LOG == CL_PROGRAM_BUILD_LOG, "");
_Static_assert(CK_CL_BUFFER_CREATE_TYPE_REGION == CL_BUFFER_CREATE_TYPE_REGION, "");
_Static_assert(sizeof(ck_cl_int) == sizeof(cl_int), "");
_Static_assert(sizeof(ck_cl_bitfield) == sizeof(cl_bitfield), "");
_Static_assert(sizeof(ck_cl_buffer_region) == sizeof(cl_buffer_region), "");
#define CK_HAVE_CL_HEADERS 1
#endif
#endif

static const char *SRC =
    "__kernel void affine(__global float *y, __global const float *x,\n"
    "                     const ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n"
    "}\n"
    "__kernel void affine_dev(__global char *dst, ulong doff, long dstr,\n"
    "                         __global char *src, ulong soff, long sstr,\n"
    "                         ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  __global const float *x = (__global const float *)(src + soff + (long)i * sstr);\n"
    "  __global float *y = (__global float *)(dst + doff + (long)i * dstr);\n"
    "  *y = 2.0f * *x + 1.0f;\n"
    "}\n";

static ck_context *ocl(void) {
  ck_context *ctx = NULL;
  ck_status st = ck_context_new("opencl", &ctx);
  if (st != CK_OK) {
    fprintf(stderr, "ck_context_new(opencl): %s\n", ck_last_error());
    return NULL;
  }
  return ctx;
}

static void test_error_names(void) {
  CHECK(strcmp(ck__opencl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE") == 0);
  CHECK(strcmp(ck__opencl_error_name(-5), "CL_OUT_OF_RESOURCES") == 0);
  CHECK(strcmp(ck__opencl_error_name(-46), "CL_INVALID_KERNEL_NAME") == 0);
  CHECK(strcmp(ck__opencl_error_name(-12345), "CL_UNKNOWN_ERROR") == 0);
}

static void test_context_describe(void) {
  ck_context *ctx = ocl();
  REQUIRE(ctx != NULL);
  CHECK(strcmp(ck_context_kind(ctx), "opencl") == 0);
  char buf[512];
  size_t len = 0;
  CHECK_OK(ck_context_describe(ctx, buf, sizeof buf, &len));
  printf("  %s\n", buf);
  CHECK(strncmp(buf, "opencl: ", 8) == 0 && len == strlen(buf));
  CHECK(strstr(buf, ck_context_supports_fp64(ctx) ? "fp64: yes" : "fp64: no") != NULL);
  CHECK(strstr(buf, "OpenCL") != NULL); /* the device version string */
  ck_context *bad = NULL;
  CHECK_ERR(ck_context_new_opencl(99, 0, &bad), CK_ERR_INDEX, "platform 99 out of range");
  CHECK_ERR(ck_context_new_opencl(0, 999, &bad), CK_ERR_INDEX, "device 999 out of range");
  setenv("CK_OPENCL_DEVICE", "0:999", 1);
  CHECK_ERR(ck_context_new("opencl", &bad), CK_ERR_INDEX, "device 999");
  setenv("CK_OPENCL_DEVICE", "0:0", 1);
  CHECK_OK(ck_context_new("opencl", &bad));
  unsetenv("CK_OPENCL_DEVICE");
  ck_context_decref(bad);
  CHECK_OK(ck_context_finish(ctx));
  ck_context_decref(ctx);
}

static void test_buffers(void) {
  ck_context *ctx = ocl();
  REQUIRE(ctx != NULL);
  ck_buffer *a = NULL, *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 0, &a));
  REQUIRE_OK(ck_buffer_new(ctx, 8192, &b));
  enum { N = 1000 };
  int32_t src[N], dst[N];
  for (int i = 0; i < N; i++) {
    src[i] = i * 7 - 3;
  }
  size_t off;
  REQUIRE_OK(ck_buffer_allocate(a, sizeof src, 64, &off)); /* grows from 0 */
  CHECK(off % 64 == 0);
  CHECK_OK(ck_buffer_write(a, off, src, sizeof src));
  memset(dst, 0, sizeof dst);
  CHECK_OK(ck_buffer_read(a, off, dst, sizeof dst));
  CHECK(memcmp(src, dst, sizeof src) == 0);
  /* device -> device, same and different buffers */
  CHECK_OK(ck_buffer_copy(b, 100, a, off, sizeof src));
  memset(dst, 0, sizeof dst);
  CHECK_OK(ck_buffer_read(b, 100, dst, sizeof dst));
  CHECK(memcmp(src, dst, sizeof src) == 0);
  CHECK_ERR(ck_buffer_copy(b, 0, b, 100, 400), CK_ERR_INVALID_ARGUMENT, "overlap");
  /* fill */
  uint64_t pat = 0x0123456789abcdefull, w[64];
  CHECK_OK(ck_buffer_fill(b, 2048, &pat, 8, sizeof w));
  CHECK_OK(ck_buffer_read(b, 2048, w, sizeof w));
  int ok = 1;
  for (int i = 0; i < 64; i++) {
    ok &= w[i] == pat;
  }
  CHECK(ok);
  /* grow preserves contents */
  size_t cap = ck_buffer_capacity(a);
  CHECK_OK(ck_buffer_grow(a, cap * 3 + 5));
  CHECK(ck_buffer_capacity(a) == cap * 3 + 5);
  memset(dst, 0, sizeof dst);
  CHECK_OK(ck_buffer_read(a, off, dst, sizeof dst));
  CHECK(memcmp(src, dst, sizeof src) == 0);
  /* host pointer: available exactly on CPU devices */
  void *host = NULL;
  if (ck_context_host_accessible(ctx)) {
    CHECK_OK(ck_buffer_host_pointer(a, &host));
    CHECK(host != NULL && memcmp((char *)host + off, src, sizeof src) == 0);
  } else {
    CHECK_ERR(ck_buffer_host_pointer(a, &host), CK_ERR_NOT_SUPPORTED, "not host");
  }
  /* wrong-context copies */
  ck_context *cpu = NULL;
  REQUIRE_OK(ck_context_new("cpu", &cpu));
  ck_buffer *c = NULL;
  REQUIRE_OK(ck_buffer_new(cpu, 64, &c));
  CHECK_ERR(ck_buffer_copy(c, 0, a, 0, 8), CK_ERR_INVALID_ARGUMENT,
            "buffers belong to different contexts");
  ck_context *ctx2 = ocl();
  ck_buffer *d = NULL;
  REQUIRE(ctx2 != NULL);
  REQUIRE_OK(ck_buffer_new(ctx2, 64, &d));
  CHECK_ERR(ck_buffer_copy(d, 0, a, 0, 8), CK_ERR_INVALID_ARGUMENT,
            "buffers belong to different contexts");
  ck_buffer_decref(d);
  ck_context_decref(ctx2);
  ck_buffer_decref(c);
  ck_context_decref(cpu);
  /* memblock keeps the buffer (and context) alive */
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_buffer_memblock(a, &mb));
  ck_buffer_decref(a);
  ck_buffer_decref(b);
  ck_context_decref(ctx);
  void *obj = NULL;
  CHECK_OK(ck_external_memblock_object(mb, &obj));
  memset(dst, 0, sizeof dst);
  CHECK_OK(ck_buffer_read((ck_buffer *)obj, off, dst, sizeof dst));
  CHECK(memcmp(src, dst, sizeof src) == 0);
  ck_memblock_decref(mb);
}

static void test_build_errors_and_cache(void) {
  ck_context *ctx = ocl();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL, *q = NULL;
  CHECK_ERR(ck_context_build_program(ctx, "__kernel void broken(__global float *x) "
                                          "{ x[0] = undeclared_thing + ; }",
                                     NULL, &p),
            CK_ERR_BACKEND, "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11): ");
  CHECK(strstr(ck_last_error(), "undeclared_thing") != NULL ||
        strstr(ck_last_error(), "error") != NULL);
  printf("  build error: %.160s...\n", ck_last_error());
  CHECK(p == NULL);
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  CHECK(ck_context_refcount(ctx) == 2);
  REQUIRE_OK(ck_context_build_program(ctx, SRC, "", &q));
  CHECK(p == q);
  ck_program_decref(q);
  REQUIRE_OK(ck_context_build_program(ctx, SRC, "-cl-fast-relaxed-math", &q));
  CHECK(p != q);
  CHECK(ck_program_context(q) == ctx);
  ck_program_decref(q);
  /* bad options, bad kernel name */
  CHECK_ERR(ck_context_build_program(ctx, SRC, "-no-such-option-xyz", &q),
            CK_ERR_BACKEND, "clBuildProgram failed: CL_INVALID_BUILD_OPTIONS");
  ck_kernel_arg none[1];
  memset(none, 0, sizeof none);
  CHECK_ERR(ck_context_launch(ctx, p, "nope", 0, none, 1), CK_ERR_BACKEND,
            "clCreateKernel failed for 'nope': CL_INVALID_KERNEL_NAME (-46)");
  ck_program_decref(p);
  CHECK(ck_context_refcount(ctx) == 1);
  ck_context_decref(ctx);
}

static bool check_affine(const float *x, const float *y, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (y[i] != 2.0f * x[i] + 1.0f) {
      fprintf(stderr, "  y[%zu] = %g, want %g\n", i, y[i], 2.0f * x[i] + 1.0f);
      return false;
    }
  }
  return true;
}

static void test_launch(void) {
  ck_context *ctx = ocl();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  size_t n = 1000003; /* odd and prime: no work-group size divides it */
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  REQUIRE(x != NULL && y != NULL);
  for (size_t i = 0; i < n; i++) {
    x[i] = (float)i * 0.25f - 1000.0f;
  }
  ck_buffer *bx = NULL, *by = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, n * sizeof(float), &bx));
  REQUIRE_OK(ck_buffer_new(ctx, n * sizeof(float), &by));
  CHECK_OK(ck_buffer_write(bx, 0, x, n * sizeof(float)));
  uint64_t n64 = n;
  ck_kernel_arg args[3];
  memset(args, 0, sizeof args);
  args[0].kind = CK_KERNEL_ARG_BUFFER;
  args[0].buffer = by;
  args[1].kind = CK_KERNEL_ARG_BUFFER;
  args[1].buffer = bx;
  args[2].kind = CK_KERNEL_ARG_SCALAR;
  args[2].value = &n64;
  args[2].size = sizeof n64;
  CHECK_OK(ck_context_launch(ctx, p, "affine", 3, args, n));
  memset(y, 0, n * sizeof *y);
  CHECK_OK(ck_buffer_read(by, 0, y, n * sizeof(float)));
  CHECK(check_affine(x, y, n));
  /* argument checks */
  args[1].kind = 99;
  CHECK_ERR(ck_context_launch(ctx, p, "affine", 3, args, n), CK_ERR_INVALID_ARGUMENT,
            "bad kind");
  args[1].kind = CK_KERNEL_ARG_BUFFER;
  args[1].offset = 4; /* not base-address aligned */
  CHECK_ERR(ck_context_launch(ctx, p, "affine", 3, args, 16), CK_ERR_INVALID_ARGUMENT,
            "base address alignment");
  args[1].offset = 0;
  ck_context *cpu = NULL;
  ck_buffer *cb = NULL;
  REQUIRE_OK(ck_context_new("cpu", &cpu));
  REQUIRE_OK(ck_buffer_new(cpu, 16, &cb));
  args[0].buffer = cb;
  CHECK_ERR(ck_context_launch(ctx, p, "affine", 3, args, n), CK_ERR_INVALID_ARGUMENT,
            "different context");
  ck_buffer_decref(cb);
  ck_context_decref(cpu);
  CHECK_OK(ck_context_launch(ctx, p, "affine", 0, args, 0)); /* empty range */
  ck_buffer_decref(bx);
  ck_buffer_decref(by);
  ck_program_decref(p);
  ck_context_decref(ctx);
  free(x);
  free(y);
}

/* y = 2x + 1 through the ckernel ABI: a host leaf whose entry enqueues. */
static void test_device_ckernel(void) {
  ck_context *ctx = ocl();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  size_t n = 4097;
  float *x = malloc(2 * n * sizeof *x), *y = malloc(n * sizeof *y);
  REQUIRE(x != NULL && y != NULL);
  for (size_t i = 0; i < 2 * n; i++) {
    x[i] = (float)i - 77.5f;
  }
  ck_buffer *buf = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 0, &buf));
  size_t xo, yo;
  REQUIRE_OK(ck_buffer_allocate(buf, 2 * n * sizeof(float), 16, &xo));
  REQUIRE_OK(ck_buffer_allocate(buf, n * sizeof(float), 16, &yo));
  CHECK(yo != 0);
  CHECK_OK(ck_buffer_write(buf, xo, x, 2 * n * sizeof(float)));

  ck_kernel_builder ckb;
  ck_kernel_builder_init(&ckb);
  intptr_t sstride = 2 * (intptr_t)sizeof(float); /* every other x */
  size_t end = 0;
  CHECK_ERR(ck_make_device_kernel(&ckb, 0, CK_KERNEL_REQUEST_STRIDED, ctx, p,
                                  "affine_dev", 1, n, 4, &sstride, &end),
            CK_ERR_NOT_SUPPORTED, "SINGLE only");
  REQUIRE_OK(ck_make_device_kernel(&ckb, 0, CK_KERNEL_REQUEST_SINGLE, ctx, p,
                                   "affine_dev", 1, n, sizeof(float), &sstride,
                                   &end));
  CHECK(end > 0);
  ck_program_decref(p); /* the kernel holds its own references */
  CHECK(ck_context_refcount(ctx) == 4); /* us, buffer, kernel, its program ref */
  ck_device_ptr dst = {buf, yo}, src0 = {buf, xo};
  const char *srcs[1] = {(const char *)&src0};
  ck_prefix *k = ck_kernel_builder_get(&ckb, 0);
  CHECK_OK(ck_kernel_call_single(k, (char *)&dst, srcs));
  CHECK_OK(ck_buffer_read(buf, yo, y, n * sizeof(float)));
  int ok = 1;
  for (size_t i = 0; i < n; i++) {
    ok &= y[i] == 2.0f * x[2 * i] + 1.0f;
  }
  CHECK(ok);
  /* an operand from another context is rejected by the entry point */
  ck_context *cpu = NULL;
  ck_buffer *cb = NULL;
  REQUIRE_OK(ck_context_new("cpu", &cpu));
  REQUIRE_OK(ck_buffer_new(cpu, 16, &cb));
  ck_device_ptr wrong = {cb, 0};
  CHECK(ck_prefix_single(k)((char *)&wrong, srcs, k) == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "different context") != NULL);
  ck_buffer_decref(cb);
  ck_context_decref(cpu);
  ck_kernel_builder_destroy(&ckb); /* releases kernel, program, context */
  CHECK(ck_context_refcount(ctx) == 2);
  /* unknown kernel name: clean failure, the destructor copes */
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  ck_kernel_builder_init(&ckb);
  CHECK_ERR(ck_make_device_kernel(&ckb, 0, CK_KERNEL_REQUEST_SINGLE, ctx, p,
                                  "missing", 0, 1, 4, NULL, NULL),
            CK_ERR_BACKEND, "CL_INVALID_KERNEL_NAME");
  ck_kernel_builder_destroy(&ckb);
  ck_program_decref(p);
  CHECK(ck_context_refcount(ctx) == 2);
  ck_buffer_decref(buf);
  ck_context_decref(ctx);
  free(x);
  free(y);
}

static void test_fault_injection(void) {
  int completed = 0;
  for (uint64_t k = 1; k < 1000 && !completed; k++) {
    ck_debug_fail_alloc_after(k);
    ck_context *ctx = NULL;
    ck_buffer *b = NULL;
    ck_program *p = NULL;
    ck_status st = ck_context_new("opencl", &ctx);
    if (st == CK_OK) {
      st = ck_buffer_new(ctx, 64, &b);
    }
    size_t o = 0;
    for (int i = 0; i < 10 && st == CK_OK; i++) {
      st = ck_buffer_allocate(b, 40, 8, &o);
    }
    if (st == CK_OK) {
      st = ck_context_build_program(ctx, SRC, NULL, &p);
    }
    bool fired = ck_debug_fail_alloc_fired();
    ck_debug_fail_alloc_after(0);
    if (st != CK_OK) {
      CHECK(st == CK_ERR_NO_MEMORY);
      CHECK(fired);
    } else if (!fired) {
      completed = 1;
    }
    ck_program_decref(p);
    ck_buffer_decref(b);
    ck_context_decref(ctx);
  }
  CHECK(completed);
}

#define main ck_test_main_
CK_TEST_MAIN(CK_TEST(test_error_names), CK_TEST(test_context_describe),
             CK_TEST(test_buffers), CK_TEST(test_build_errors_and_cache),
             CK_TEST(test_launch), CK_TEST(test_device_ckernel),
             CK_TEST(test_fault_injection))
#undef main

int main(int argc, char **argv) {
  if (getenv("CK_UNDER_VALGRIND") != NULL) {
    printf("SKIP: not run under valgrind (PoCL/LLVM internals are noisy)\n");
    return 77;
  }
  ck_context *ctx = NULL;
  if (ck_context_new("opencl", &ctx) != CK_OK) {
    printf("SKIP: no OpenCL device: %s\n", ck_last_error());
    return 77;
  }
  ck_context_decref(ctx);
  return ck_test_main_(argc, argv);
}
