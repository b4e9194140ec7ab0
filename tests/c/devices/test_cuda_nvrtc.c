/* CUDA C -> PTX through NVRTC without a device (ck_cuda_compile_ptx), for
 * sm_80 and sm_90, the PTX assembled by ptxas (CK_PTXAS, set by CMake).
 * The kernels use what generated code uses: float and double math
 * built-ins, Python's integer division and modulo helpers with a
 * division-by-zero error code, the error flag set with atomicCAS, 64-bit
 * index math over byte offsets and strides, N-d index decomposition.
 * Also: NVRTC errors and logs, architecture parsing, and the order in which
 * NVRTC is looked for (CK_NVRTC_LIBRARY, the search path, the Python
 * environment's wheel folders, CUDA_HOME, /usr/local/cuda).
 * Exits 77 (Skipped) when no NVRTC can be found, and under valgrind. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"
#include "devices/nvrtc_loader_internal.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the kernels ------------------------------------------------------- */

/* In parts: ISO C guarantees string literals of 4095 characters only. */
static const char *KERNEL_PARTS[] = {
    "#define CK_ERR_ZERO_DIVISION 9\n"
    "typedef unsigned char uchar;\n"
    "typedef unsigned long long ulong_t;\n"
    "typedef long long long_t;\n"
    "\n"
    "/* Python semantics: floor division and modulo, errors by code. */\n"
    "__device__ static long_t ck_floordiv_i64(long_t a, long_t b, int *err) {\n"
    "  if (b == 0) { *err = CK_ERR_ZERO_DIVISION; return 0; }\n"
    "  long_t q = a / b;\n"
    "  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;\n"
    "  return q;\n"
    "}\n"
    "__device__ static long_t ck_mod_i64(long_t a, long_t b, int *err) {\n"
    "  if (b == 0) { *err = CK_ERR_ZERO_DIVISION; return 0; }\n"
    "  long_t r = a % b;\n"
    "  if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
    "  return r;\n"
    "}\n"
    "__device__ static int ck_floordiv_i32(int a, int b, int *err) {\n"
    "  if (b == 0) { *err = CK_ERR_ZERO_DIVISION; return 0; }\n"
    "  int q = a / b;\n"
    "  if ((a % b != 0) && ((a < 0) != (b < 0))) q -= 1;\n"
    "  return q;\n"
    "}\n"
    "__device__ static ulong_t ck_floordiv_u64(ulong_t a, ulong_t b, int *err) {\n"
    "  if (b == 0) { *err = CK_ERR_ZERO_DIVISION; return 0; }\n"
    "  return a / b;\n"
    "}\n"
    "__device__ static double ck_fmod_py(double a, double b) {\n"
    "  double r = fmod(a, b);\n"
    "  if (r != 0.0 && ((r < 0.0) != (b < 0.0))) r += b;\n"
    "  return r;\n"
    "}\n"
    "\n",
    "__device__ static double f_f64(double x, double y, int *err) {\n"
    "  double r = sin(x) * cos(y) + tan(x) + exp(x) - log(fabs(y) + 1.0)\n"
    "      + log1p(fabs(x)) + log2(fabs(y) + 2.0) + log10(fabs(x) + 3.0)\n"
    "      + pow(fabs(x), y) + ck_fmod_py(x, y) + floor(x) + ceil(y) + trunc(x)\n"
    "      + rint(y) + round(x) + sqrt(fabs(x)) + cbrt(y) + tanh(x) + sinh(y)\n"
    "      + cosh(x) + asin(fmin(fmax(y, -1.0), 1.0)) + acos(0.5) + atan(x)\n"
    "      + atan2(y, x) + asinh(x) + acosh(fabs(y) + 1.0) + atanh(0.25)\n"
    "      + erf(x) + erfc(y) + lgamma(fabs(x) + 1.0) + tgamma(2.5) + hypot(x, y)\n"
    "      + expm1(y) + exp2(x) + copysign(x, y) + fmax(x, y) + fmin(x, y)\n"
    "      + ldexp(x, 3);\n"
    "  if (isnan(r) || isinf(r) || !isfinite(x)) *err = 1;\n"
    "  if (signbit(y)) r = -r;\n"
    "  return r;\n"
    "}\n"
    "__device__ static float f_f32(float x, float y, int *err) {\n"
    "  float r = sinf(x) * cosf(y) + tanf(x) + expf(x) - logf(fabsf(y) + 1.0f)\n"
    "      + log1pf(fabsf(x)) + log2f(fabsf(y) + 2.0f) + log10f(fabsf(x) + 3.0f)\n"
    "      + powf(fabsf(x), y) + fmodf(x, y) + floorf(x) + ceilf(y) + truncf(x)\n"
    "      + rintf(y) + roundf(x) + sqrtf(fabsf(x)) + cbrtf(y) + tanhf(x)\n"
    "      + sinhf(y) + coshf(x) + asinf(0.5f) + acosf(0.5f) + atanf(x)\n"
    "      + atan2f(y, x) + asinhf(x) + acoshf(fabsf(y) + 1.0f) + atanhf(0.25f)\n"
    "      + erff(x) + erfcf(y) + lgammaf(fabsf(x) + 1.0f) + tgammaf(2.5f)\n"
    "      + hypotf(x, y) + expm1f(y) + exp2f(x) + copysignf(x, y)\n"
    "      + fmaxf(x, y) + fminf(x, y) + ldexpf(x, 3);\n"
    "  if (isnan(r) || isinf(r)) *err = 1;\n"
    "  return r;\n"
    "}\n"
    "__device__ static long_t f_i64(long_t a, long_t b, int *err) {\n"
    "  long_t q = ck_floordiv_i64(a, b, err);\n"
    "  long_t m = ck_mod_i64(a, b, err);\n"
    "  int s = ck_floordiv_i32((int)a, (int)(b | 1), err);\n"
    "  ulong_t u = ck_floordiv_u64((ulong_t)a, (ulong_t)b | 1u, err);\n"
    "  return q * 31 + m + s + (long_t)(u >> 3) + (a << 2) + (b >> 1) + (a ^ b);\n"
    "}\n"
    "\n",
    "/* The generated kernel's frame: output and inputs as (bytes, byte\n"
    " * offset, byte stride), N-d metadata, count, error buffer. */\n"
    "#define CK_FRAME(NAME, T, F)                                              \\\n"
    "extern \"C\" __global__ void NAME(uchar *ck_out, ulong_t ck_out_off,         \\\n"
    "    long_t ck_out_stride, const uchar *ck_in0, ulong_t ck_in0_off,         \\\n"
    "    long_t ck_in0_stride, const uchar *ck_in1, ulong_t ck_in1_off,         \\\n"
    "    long_t ck_in1_stride, const long_t *ck_meta, int ck_ndim,              \\\n"
    "    ulong_t ck_n, int *ck_errbuf) {                                        \\\n"
    "  ulong_t i = (ulong_t)blockIdx.x * (ulong_t)blockDim.x + threadIdx.x;     \\\n"
    "  if (i >= ck_n) return;                                                   \\\n"
    "  ulong_t o_out = ck_out_off, o_in0 = ck_in0_off, o_in1 = ck_in1_off;      \\\n"
    "  if (ck_ndim == 1) {                                                      \\\n"
    "    o_out += i * ck_out_stride;                                            \\\n"
    "    o_in0 += i * ck_in0_stride;                                            \\\n"
    "    o_in1 += i * ck_in1_stride;                                            \\\n"
    "  } else {                                                                 \\\n"
    "    ulong_t rest = i;                                                      \\\n"
    "    for (int d = ck_ndim - 1; d >= 0; d--) {                               \\\n"
    "      ulong_t idx = rest % (ulong_t)ck_meta[d];                            \\\n"
    "      rest /= (ulong_t)ck_meta[d];                                         \\\n"
    "      o_out += idx * ck_meta[ck_ndim + d];                                 \\\n"
    "      o_in0 += idx * ck_meta[2 * ck_ndim + d];                             \\\n"
    "      o_in1 += idx * ck_meta[3 * ck_ndim + d];                             \\\n"
    "    }                                                                      \\\n"
    "  }                                                                        \\\n"
    "  T x0 = *(const T *)(ck_in0 + o_in0);                                     \\\n"
    "  T x1 = *(const T *)(ck_in1 + o_in1);                                     \\\n"
    "  int err = 0;                                                             \\\n"
    "  T r = F(x0, x1, &err);                                                   \\\n"
    "  if (err) { atomicCAS(ck_errbuf, 0, err); return; }                       \\\n"
    "  *(T *)(ck_out + o_out) = r;                                              \\\n"
    "}\n"
    "CK_FRAME(ck_kernel_f64, double, f_f64)\n"
    "CK_FRAME(ck_kernel_f32, float, f_f32)\n"
    "CK_FRAME(ck_kernel_i64, long_t, f_i64)\n"
    "\n"
    "/* bool output, a 64-bit atomic counter, unsigned 32-bit math */\n"
    "extern \"C\" __global__ void ck_kernel_bool(uchar *out, const float *x,\n"
    "    ulong_t n, unsigned long long *count) {\n"
    "  ulong_t i = (ulong_t)blockIdx.x * (ulong_t)blockDim.x + threadIdx.x;\n"
    "  if (i >= n) return;\n"
    "  bool b = x[i] > 0.5f && (unsigned)i % 3u != 1u;\n"
    "  out[i] = b ? 1 : 0;\n"
    "  if (b) atomicAdd(count, 1ull);\n"
    "}\n"};

static char KERNELS[16384];

static void join_kernels(void) {
  KERNELS[0] = '\0';
  for (size_t i = 0; i < sizeof KERNEL_PARTS / sizeof KERNEL_PARTS[0]; i++) {
    strncat(KERNELS, KERNEL_PARTS[i], sizeof KERNELS - strlen(KERNELS) - 1);
  }
}

/* ---- helpers ----------------------------------------------------------- */

static char tmpdir[256];

static bool write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    return false;
  }
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

static long file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* ptxas -arch=<arch> on `ptx`: true if it assembles (the cubin is
 * non-empty); prints ptxas's output otherwise. */
static bool ptxas_ok(const char *ptxas, const char *arch, const char *ptx) {
  char in[512], out[512], cmd[2048];
  snprintf(in, sizeof in, "%s/k_%s.ptx", tmpdir, arch);
  snprintf(out, sizeof out, "%s/k_%s.cubin", tmpdir, arch);
  if (!write_file(in, ptx)) {
    fprintf(stderr, "  cannot write %s\n", in);
    return false;
  }
  snprintf(cmd, sizeof cmd, "'%s' -arch=%s -o '%s' '%s' 2>&1", ptxas, arch, out, in);
  int rc = system(cmd);
  bool ok = rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0 && file_size(out) > 0;
  if (!ok) {
    fprintf(stderr, "  ptxas failed (%d): %s\n", rc, cmd);
  }
  return ok;
}

/* ---- tests ------------------------------------------------------------- */

static void test_compile_and_assemble(void) {
  const char *ptxas = getenv("CK_PTXAS");
  const char *archs[] = {"sm_80", "sm_90", "sm_86", "sm_90a"};
  for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
    char *ptx = NULL, *log = NULL;
    size_t size = 0;
    CHECK_OK(ck_cuda_compile_ptx(KERNELS, NULL, archs[a], &ptx, &size, &log));
    if (ptx == NULL) {
      fprintf(stderr, "  log: %s\n", log != NULL ? log : "(none)");
      ck_cuda_free(log);
      continue;
    }
    CHECK(size == strlen(ptx));
    CHECK(log != NULL);
    char target[32];
    snprintf(target, sizeof target, ".target %s", archs[a]);
    CHECK(strstr(ptx, target) != NULL);
    CHECK(strstr(ptx, ".address_size 64") != NULL);
    const char *entries[] = {".entry ck_kernel_f64(", ".entry ck_kernel_f32(",
                             ".entry ck_kernel_i64(", ".entry ck_kernel_bool("};
    for (size_t e = 0; e < 4; e++) {
      CHECK(strstr(ptx, entries[e]) != NULL); /* extern "C": unmangled */
    }
    CHECK(strstr(ptx, "atom.global.cas.b32") != NULL); /* the error flag */
    CHECK(strstr(ptx, "atom.global.add.u64") != NULL);
    CHECK(strstr(ptx, ".f64") != NULL && strstr(ptx, "div.rn.f64") != NULL);
    CHECK(strstr(ptx, "div.u64") != NULL && strstr(ptx, "div.s64") != NULL);
    if (ptxas != NULL && ptxas[0] != '\0') {
      CHECK(ptxas_ok(ptxas, archs[a], ptx));
    }
    printf("  %-6s PTX %zu bytes%s\n", archs[a], size,
           ptxas != NULL && ptxas[0] != '\0' ? ", assembled by ptxas" : "");
    ck_cuda_free(ptx);
    ck_cuda_free(log);
  }
  if (ptxas == NULL || ptxas[0] == '\0') {
    printf("  SKIP (ptxas): CK_PTXAS unset -- no ptxas in the CUDA toolkit "
           "nor in the nvidia-cuda-nvcc wheel (make cuda-tools)\n");
  }
}

static void test_arch_spellings(void) {
  const char *spell[] = {"compute_80", "80", "sm_80"};
  for (size_t i = 0; i < 3; i++) {
    char *ptx = NULL;
    CHECK_OK(ck_cuda_compile_ptx("extern \"C\" __global__ void k(int *x) { *x = 1; }",
                                 "", spell[i], &ptx, NULL, NULL));
    CHECK(ptx != NULL && strstr(ptx, ".target sm_80") != NULL);
    ck_cuda_free(ptx);
  }
  /* an architecture in the options wins over `arch` */
  char *ptx = NULL;
  CHECK_OK(ck_cuda_compile_ptx("extern \"C\" __global__ void k(int *x) { *x = 1; }",
                               "-lineinfo --gpu-architecture=compute_86", "sm_80",
                               &ptx, NULL, NULL));
  CHECK(ptx != NULL && strstr(ptx, ".target sm_86") != NULL);
  ck_cuda_free(ptx);
  /* NULL arch: NVRTC's default */
  ptx = NULL;
  CHECK_OK(ck_cuda_compile_ptx("__global__ void k(void) {}", NULL, NULL, &ptx, NULL,
                               NULL));
  CHECK(ptx != NULL && strstr(ptx, ".target sm_") != NULL);
  ck_cuda_free(ptx);
  /* quoted options */
  ptx = NULL;
  CHECK_OK(ck_cuda_compile_ptx("extern \"C\" __global__ void k(int *x) { *x = VAL; }",
                               "\"-DVAL=4 + 3\"", "sm_80", &ptx, NULL, NULL));
  CHECK(ptx != NULL && strstr(ptx, "7") != NULL);
  ck_cuda_free(ptx);
}

static void test_errors(void) {
  char *ptx = (char *)&ptx, *log = NULL;
  CHECK_ERR(ck_cuda_compile_ptx(
                "extern \"C\" __global__ void broken(float *x) { x[0] = undeclared_thing + ; }",
                NULL, "sm_80", &ptx, NULL, &log),
            CK_ERR_BACKEND, "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION (6): ");
  CHECK(strstr(ck_last_error(), "undeclared_thing") != NULL);
  CHECK(ptx == NULL);
  CHECK(log != NULL && strstr(log, "ckernel.cu") != NULL &&
        strstr(log, "undeclared_thing") != NULL);
  printf("  %.150s\n", ck_last_error());
  ck_cuda_free(log);
  log = NULL;
  CHECK_ERR(ck_cuda_compile_ptx("__global__ void k(void) {}", "--no-such-option-xyz",
                                "sm_80", &ptx, NULL, &log),
            CK_ERR_BACKEND, "NVRTC_ERROR_INVALID_OPTION (5)");
  ck_cuda_free(log);
  CHECK_ERR(ck_cuda_compile_ptx("__global__ void k(void) {}", "\"-DX=1", "sm_80", &ptx,
                                NULL, NULL),
            CK_ERR_PARSE, "unbalanced");
  CHECK_ERR(ck_cuda_compile_ptx("__global__ void k(void) {}", NULL, "sm_8", &ptx, NULL,
                                NULL),
            CK_ERR_INVALID_ARGUMENT, "architecture 'sm_8' is not sm_XY");
  CHECK_ERR(ck_cuda_compile_ptx("__global__ void k(void) {}", NULL, "gfx90a", &ptx,
                                NULL, NULL),
            CK_ERR_INVALID_ARGUMENT, "gfx90a");
  CHECK_ERR(ck_cuda_compile_ptx("__global__ void k(void) {}", NULL, "sm_20", &ptx, NULL,
                                NULL),
            CK_ERR_NOT_SUPPORTED, "does not compile for compute_20");
  CHECK_ERR(ck_cuda_compile_ptx(NULL, NULL, "sm_80", &ptx, NULL, NULL),
            CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(ck_cuda_compile_ptx("__global__ void k(void) {}", NULL, "sm_80", NULL, NULL,
                                NULL),
            CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK(ptx == NULL);
}

static void test_version(void) {
  int32_t major = 0, minor = -1;
  char path[1024];
  size_t len = 0;
  CHECK_OK(ck_cuda_nvrtc_version(&major, &minor, path, sizeof path, &len));
  CHECK(major >= 11 && minor >= 0 && len == strlen(path) && len > 0);
  printf("  NVRTC %d.%d from %s\n", (int)major, (int)minor, path);
  CHECK_OK(ck_cuda_nvrtc_version(NULL, NULL, NULL, 0, &len));
  CHECK_ERR(ck_cuda_nvrtc_version(NULL, NULL, NULL, 5, NULL), CK_ERR_INVALID_ARGUMENT,
            "path is NULL");
}

/* The search order, each case on real files: folders holding a symlink to
 * the NVRTC this machine has. */
static void test_search_order(void) {
  char real[1024];
  REQUIRE_OK(ck__nvrtc_locate(real, sizeof real));
  char sp[512], venv_lib[768], conda_lib[768], link[1024];
  snprintf(sp, sizeof sp, "%s/sp", tmpdir);
  snprintf(venv_lib, sizeof venv_lib,
           "%s/venv/lib/python3.99/site-packages/nvidia/cu13/lib", tmpdir);
  snprintf(conda_lib, sizeof conda_lib,
           "%s/conda/lib/python3.98/site-packages/nvidia/cuda_nvrtc/lib", tmpdir);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s' '%s'", sp, venv_lib, conda_lib);
  REQUIRE(system(cmd) == 0);
  const char *dirs[3] = {sp, venv_lib, conda_lib};
  const char *names[3] = {"libnvrtc.so.13", "libnvrtc.so.13", "libnvrtc.so.12"};
  for (int i = 0; i < 3; i++) {
    snprintf(link, sizeof link, "%s/%s", dirs[i], names[i]);
    unlink(link);
    REQUIRE(symlink(real, link) == 0);
  }
  char got[1024], want[1200], venv[512], conda[512], spath[1200];
  snprintf(venv, sizeof venv, "%s/venv", tmpdir);
  snprintf(conda, sizeof conda, "%s/conda", tmpdir);
  unsetenv("CK_NVRTC_LIBRARY");
  setenv("VIRTUAL_ENV", venv, 1);
  setenv("CONDA_PREFIX", conda, 1);
  /* 1. the search path first (a missing folder is skipped) */
  snprintf(spath, sizeof spath, "/nonexistent/x:%s", sp);
  CHECK_OK(ck_cuda_set_nvrtc_search_path(spath));
  CHECK_OK(ck__nvrtc_locate(got, sizeof got));
  snprintf(want, sizeof want, "%s/libnvrtc.so.13", sp);
  CHECK(strcmp(got, want) == 0);
  /* 2. CK_NVRTC_LIBRARY wins over everything */
  setenv("CK_NVRTC_LIBRARY", real, 1);
  CHECK_OK(ck__nvrtc_locate(got, sizeof got));
  CHECK(strcmp(got, real) == 0);
  setenv("CK_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13", 1);
  CHECK_ERR(ck__nvrtc_locate(got, sizeof got), CK_ERR_BACKEND,
            "CK_NVRTC_LIBRARY='/nonexistent/libnvrtc.so.13' does not load");
  setenv("CK_NVRTC_LIBRARY", "/etc/hostname", 1);
  CHECK_ERR(ck__nvrtc_locate(got, sizeof got), CK_ERR_BACKEND, "/etc/hostname");
  unsetenv("CK_NVRTC_LIBRARY");
  /* 3. the virtual environment's wheel (CUDA 13 layout) */
  CHECK_OK(ck_cuda_set_nvrtc_search_path(NULL));
  CHECK_OK(ck__nvrtc_locate(got, sizeof got));
  snprintf(want, sizeof want, "%s/libnvrtc.so.13", venv_lib);
  CHECK(strcmp(got, want) == 0);
  /* 4. conda's (CUDA 12 layout) */
  unsetenv("VIRTUAL_ENV");
  CHECK_OK(ck__nvrtc_locate(got, sizeof got));
  snprintf(want, sizeof want, "%s/libnvrtc.so.12", conda_lib);
  CHECK(strcmp(got, want) == 0);
  unsetenv("CONDA_PREFIX");
  /* 5. the toolkit: CUDA_HOME, else /usr/local/cuda; 6. the system path */
  const char *home = getenv("CUDA_HOME");
  char saved_home[512] = "";
  if (home != NULL) {
    snprintf(saved_home, sizeof saved_home, "%s", home);
  }
  setenv("CUDA_HOME", venv, 1); /* no lib64 there */
  CHECK_OK(ck__nvrtc_locate(got, sizeof got));
  printf("  without CUDA_HOME's lib64: %s\n", got);
  CHECK(strstr(got, "libnvrtc.so") != NULL);
  snprintf(link, sizeof link, "%s/lib64", venv);
  REQUIRE(symlink(venv_lib, link) == 0);
  CHECK_OK(ck__nvrtc_locate(got, sizeof got));
  snprintf(want, sizeof want, "%s/lib64/libnvrtc.so.13", venv);
  CHECK(strcmp(got, want) == 0);
  if (saved_home[0] != '\0') {
    setenv("CUDA_HOME", saved_home, 1);
  } else {
    unsetenv("CUDA_HOME");
  }
}

#define main ck_test_main_
CK_TEST_MAIN(CK_TEST(test_search_order), CK_TEST(test_version),
             CK_TEST(test_compile_and_assemble), CK_TEST(test_arch_spellings),
             CK_TEST(test_errors))
#undef main

int main(int argc, char **argv) {
  if (getenv("CK_UNDER_VALGRIND") != NULL) {
    printf("SKIP: not run under valgrind (NVRTC is slow there and its own "
           "allocations drown the report)\n");
    return 77;
  }
  char where[1024];
  if (ck__nvrtc_locate(where, sizeof where) != CK_OK) {
    printf("SKIP: %s\n", ck_last_error());
    return 77;
  }
  const char *t = getenv("TMPDIR");
  snprintf(tmpdir, sizeof tmpdir, "%s/ck_nvrtc_XXXXXX",
           t != NULL && t[0] != '\0' ? t : "/tmp");
  if (mkdtemp(tmpdir) == NULL) {
    perror("mkdtemp");
    return 1;
  }
  join_kernels();
  int rc = ck_test_main_(argc, argv);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0) {
    fprintf(stderr, "could not remove %s\n", tmpdir);
  }
  return rc;
}
