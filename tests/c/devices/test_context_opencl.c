/* The opencl context on whatever device the ICD loader offers (PoCL in CI):
 * the shared device suite (device_suite.h) and OpenCL specifics.
 * Exits 77 (ctest: Skipped) when no OpenCL platform is available, or under
 * valgrind (CK_UNDER_VALGRIND): PoCL's own allocations drown the report
 * (suite_main). */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"
#include "device_suite.h"
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
_Static_assert(CK_CL_DEVICE_MAX_WORK_GROUP_SIZE == CL_DEVICE_MAX_WORK_GROUP_SIZE, "");
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
_Static_assert(CK_CL_DEVICE_PLATFORM == CL_DEVICE_PLATFORM, "");
_Static_assert(CK_CL_CONTEXT_DEVICES == CL_CONTEXT_DEVICES, "");
_Static_assert(CK_CL_CONTEXT_NUM_DEVICES == CL_CONTEXT_NUM_DEVICES, "");
_Static_assert(CK_CL_QUEUE_CONTEXT == CL_QUEUE_CONTEXT, "");
_Static_assert(CK_CL_QUEUE_DEVICE == CL_QUEUE_DEVICE, "");
_Static_assert(CK_CL_MEM_FLAGS == CL_MEM_FLAGS, "");
_Static_assert(CK_CL_MEM_SIZE == CL_MEM_SIZE, "");
_Static_assert(CK_CL_MEM_HOST_PTR == CL_MEM_HOST_PTR, "");
_Static_assert(CK_CL_MEM_CONTEXT == CL_MEM_CONTEXT, "");
_Static_assert(CK_CL_MEM_ASSOCIATED_MEMOBJECT == CL_MEM_ASSOCIATED_MEMOBJECT, "");
_Static_assert(sizeof(ck_cl_int) == sizeof(cl_int), "");
_Static_assert(sizeof(ck_cl_bitfield) == sizeof(cl_bitfield), "");
_Static_assert(sizeof(ck_cl_buffer_region) == sizeof(cl_buffer_region), "");
#define CK_HAVE_CL_HEADERS 1
#endif
#endif

static const char SRC[] =
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

static void test_error_names(void) {
  CHECK(strcmp(ck__opencl_error_name(-11), "CL_BUILD_PROGRAM_FAILURE") == 0);
  CHECK(strcmp(ck__opencl_error_name(-5), "CL_OUT_OF_RESOURCES") == 0);
  CHECK(strcmp(ck__opencl_error_name(-46), "CL_INVALID_KERNEL_NAME") == 0);
  CHECK(strcmp(ck__opencl_error_name(-12345), "CL_UNKNOWN_ERROR") == 0);
}

/* OpenCL only: choosing a platform and device by number. */
static void test_platform_device_range(void) {
  ck_context *bad = NULL;
  CHECK_ERR(ck_context_new_opencl(99, 0, &bad), CK_ERR_INDEX, "platform 99 out of range");
  CHECK_ERR(ck_context_new_opencl(0, 999, &bad), CK_ERR_INDEX, "device 999 out of range");
  CHECK(bad == NULL);
}

/* OpenCL only: a sub-buffer origin must be base-address aligned. */
static void test_subbuffer_alignment(void) {
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, SRC, NULL, &p));
  ck_buffer *bx = NULL, *by = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 64, &bx));
  REQUIRE_OK(ck_buffer_new(ctx, 64, &by));
  uint64_t n64 = 4;
  ck_kernel_arg args[3];
  suite_affine_args(args, by, bx, 4, &n64); /* x not base-address aligned */
  CHECK_ERR(ck_context_launch(ctx, p, "affine", 3, args, 4), CK_ERR_INVALID_ARGUMENT,
            "base address alignment");
  ck_buffer_decref(bx);
  ck_buffer_decref(by);
  ck_program_decref(p);
  ck_context_decref(ctx);
}

static const device_backend OPENCL = {
    .kind = "opencl",
    .src = SRC,
    .broken_src = "__kernel void broken(__global float *x) { x[0] = undeclared_thing + ; }",
    .build_error = "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11): ",
    .alt_options = "-cl-fast-relaxed-math",
    .bad_options_error = "clBuildProgram failed: CL_INVALID_BUILD_OPTIONS",
    .missing_kernel_error = "clCreateKernel failed for 'nope': CL_INVALID_KERNEL_NAME (-46)",
    .missing_kernel_error_short = "CL_INVALID_KERNEL_NAME",
    .no_compiler = NULL,
    .describe_text = "OpenCL", /* the device version string */
    .device_env = "CK_OPENCL_DEVICE",
    .device_env_bad = "0:999",
    .device_env_bad_error = "device 999",
    .device_env_good = "0:0",
    .valgrind_why = "PoCL/LLVM internals",
};

#define main ck_test_main_
CK_TEST_MAIN(CK_TEST(test_error_names), CK_TEST(suite_describe_and_select),
             CK_TEST(test_platform_device_range), CK_TEST(suite_buffers),
             CK_TEST(suite_fill_patterns), CK_TEST(suite_build_errors_and_cache),
             CK_TEST(suite_launch), CK_TEST(test_subbuffer_alignment),
             CK_TEST(suite_device_ckernel), CK_TEST(suite_fault_injection))
#undef main

int main(int argc, char **argv) { return suite_main(argc, argv, &OPENCL); }
