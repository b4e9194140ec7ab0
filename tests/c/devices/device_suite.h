/*
 * device_suite.h -- the context/buffer/program/launch/device-ckernel tests
 * every device backend passes (included by test_context_opencl.c and
 * test_context_cuda.c, which add their own backend-specific tests).
 *
 * The including file describes its backend (the kind, a program source with
 * the two kernels below, the texts its errors contain, how a device is
 * chosen) and hands it to suite_main, which skips or runs its tests with `B`
 * pointing at it.  Kernels (any backend's dialect):
 *   affine(float *y, const float *x, ulong n):  y[i] = 2 x[i] + 1, i < n
 *   affine_dev(char *dst, ulong doff, long dstr, char *src, ulong soff,
 *              long sstr, ulong n): the device-ckernel convention
 */
#ifndef CK_DEVICE_SUITE_H
#define CK_DEVICE_SUITE_H

#include "ck_test.h"

typedef struct device_backend {
  const char *kind;                /* "opencl", "cuda" */
  const char *src;                 /* affine, affine_dev */
  const char *broken_src;          /* a compile error naming undeclared_thing */
  const char *build_error;         /* message head of that failure */
  const char *alt_options;         /* valid options: another cache entry */
  const char *bad_options_error;   /* for the option "-no-such-option-xyz" */
  const char *missing_kernel_error; /* launching kernel "nope" */
  const char *missing_kernel_error_short; /* kernel "missing" */
  const char *no_compiler;         /* non-NULL: why programs cannot be built
                                      here; the program tests say so and
                                      return (buffers are still tested) */
  const char *describe_text;       /* in ck_context_describe's text */
  const char *device_env;          /* the variable choosing the device */
  const char *device_env_bad;      /* a value naming no device ... */
  const char *device_env_bad_error; /* ... and the error's text */
  const char *device_env_good;     /* a value naming the first device */
  const char *valgrind_why;        /* whose allocations drown valgrind */
} device_backend;

static const device_backend *B;

/* In a test that builds programs: true (and a SKIP line) without a compiler. */
static bool no_compiler(void) {
  if (B->no_compiler != NULL) {
    printf("  SKIP (programs): %s\n", B->no_compiler);
    return true;
  }
  return false;
}

static ck_context *dev_ctx(void) {
  ck_context *ctx = NULL;
  if (ck_context_new(B->kind, &ctx) != CK_OK) {
    fprintf(stderr, "ck_context_new(%s): %s\n", B->kind, ck_last_error());
    return NULL;
  }
  return ctx;
}

/* The three arguments of affine(y, x, n): buffers y and x (at x_offset)
 * and the scalar *n. */
static void suite_affine_args(ck_kernel_arg args[3], ck_buffer *y, ck_buffer *x,
                              size_t x_offset, const uint64_t *n) {
  memset(args, 0, 3 * sizeof *args);
  args[0].kind = CK_KERNEL_ARG_BUFFER;
  args[0].buffer = y;
  args[1].kind = CK_KERNEL_ARG_BUFFER;
  args[1].buffer = x;
  args[1].offset = x_offset;
  args[2].kind = CK_KERNEL_ARG_SCALAR;
  args[2].value = n;
  args[2].size = sizeof *n;
}

/* What every backend's context says about itself, and choosing its device
 * through the environment. */
static void suite_describe_and_select(void) {
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  CHECK(strcmp(ck_context_kind(ctx), B->kind) == 0);
  char buf[512], head[32];
  size_t len = 0;
  CHECK_OK(ck_context_describe(ctx, buf, sizeof buf, &len));
  printf("  %s\n", buf);
  snprintf(head, sizeof head, "%s: ", B->kind);
  CHECK(strncmp(buf, head, strlen(head)) == 0 && len == strlen(buf));
  CHECK(strstr(buf, B->describe_text) != NULL);
  CHECK(strstr(buf, ck_context_supports_fp64(ctx) ? "fp64: yes" : "fp64: no") != NULL);
  const char *env = getenv(B->device_env);
  char saved[64] = "";
  if (env != NULL) {
    snprintf(saved, sizeof saved, "%s", env);
  }
  ck_context *other = NULL;
  setenv(B->device_env, B->device_env_bad, 1);
  CHECK_ERR(ck_context_new(B->kind, &other), CK_ERR_INDEX, B->device_env_bad_error);
  CHECK(other == NULL);
  setenv(B->device_env, B->device_env_good, 1);
  CHECK_OK(ck_context_new(B->kind, &other));
  ck_context_decref(other);
  if (saved[0] != '\0') {
    setenv(B->device_env, saved, 1);
  } else {
    unsetenv(B->device_env);
  }
  CHECK_OK(ck_context_finish(ctx));
  ck_context_decref(ctx);
}

static void suite_buffers(void) {
  ck_context *ctx = dev_ctx();
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
  ck_context *ctx2 = dev_ctx();
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

static void suite_build_errors_and_cache(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL, *q = NULL;
  CHECK_ERR(ck_context_build_program(ctx, B->broken_src, NULL, &p), CK_ERR_BACKEND,
            B->build_error);
  CHECK(strstr(ck_last_error(), "undeclared_thing") != NULL ||
        strstr(ck_last_error(), "error") != NULL);
  printf("  build error: %.160s...\n", ck_last_error());
  CHECK(p == NULL);
  REQUIRE_OK(ck_context_build_program(ctx, B->src, NULL, &p));
  CHECK(ck_context_refcount(ctx) == 2);
  REQUIRE_OK(ck_context_build_program(ctx, B->src, "", &q));
  CHECK(p == q);
  ck_program_decref(q);
  REQUIRE_OK(ck_context_build_program(ctx, B->src, B->alt_options, &q));
  CHECK(p != q);
  CHECK(ck_program_context(q) == ctx);
  /* what the program was built from, and its build log (snprintf rules) */
  CHECK(strcmp(ck_program_source(q), B->src) == 0);
  CHECK(strcmp(ck_program_options(q), B->alt_options) == 0);
  CHECK(strcmp(ck_program_options(p), "") == 0);
  CHECK(ck_program_source(NULL) == NULL && ck_program_options(NULL) == NULL);
  size_t log_len = 12345;
  CHECK_OK(ck_program_build_log(q, NULL, 0, &log_len));
  CHECK(log_len < 12345);
  char *log = malloc(log_len + 1);
  REQUIRE(log != NULL);
  size_t again = 0;
  CHECK_OK(ck_program_build_log(q, log, log_len + 1, &again));
  CHECK(again == log_len && strlen(log) == log_len);
  free(log);
  CHECK_ERR(ck_program_build_log(NULL, NULL, 0, &log_len), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_program_decref(q);
  /* bad options, bad kernel name */
  CHECK_ERR(ck_context_build_program(ctx, B->src, "-no-such-option-xyz", &q),
            CK_ERR_BACKEND, B->bad_options_error);
  ck_kernel_arg none[1];
  memset(none, 0, sizeof none);
  CHECK_ERR(ck_context_launch(ctx, p, "nope", 0, none, 1), CK_ERR_BACKEND,
            B->missing_kernel_error);
  ck_program_decref(p);
  CHECK(ck_context_refcount(ctx) == 1);
  ck_context_decref(ctx);
}

static bool suite_check_affine(const float *x, const float *y, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (y[i] != 2.0f * x[i] + 1.0f) {
      fprintf(stderr, "  y[%zu] = %g, want %g\n", i, y[i], 2.0f * x[i] + 1.0f);
      return false;
    }
  }
  return true;
}

static void suite_launch(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, B->src, NULL, &p));
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
  suite_affine_args(args, by, bx, 0, &n64);
  CHECK_OK(ck_context_launch(ctx, p, "affine", 3, args, n));
  memset(y, 0, n * sizeof *y);
  CHECK_OK(ck_buffer_read(by, 0, y, n * sizeof(float)));
  CHECK(suite_check_affine(x, y, n));
  /* argument checks */
  args[1].kind = 99;
  CHECK_ERR(ck_context_launch(ctx, p, "affine", 3, args, n), CK_ERR_INVALID_ARGUMENT,
            "bad kind");
  args[1].kind = CK_KERNEL_ARG_BUFFER;
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
static void suite_device_ckernel(void) {
  if (no_compiler()) {
    return;
  }
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_program *p = NULL;
  REQUIRE_OK(ck_context_build_program(ctx, B->src, NULL, &p));
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
  REQUIRE_OK(ck_context_build_program(ctx, B->src, NULL, &p));
  ck_kernel_builder_init(&ckb);
  CHECK_ERR(ck_make_device_kernel(&ckb, 0, CK_KERNEL_REQUEST_SINGLE, ctx, p,
                                  "missing", 0, 1, 4, NULL, NULL),
            CK_ERR_BACKEND, B->missing_kernel_error_short);
  ck_kernel_builder_destroy(&ckb);
  ck_program_decref(p);
  CHECK(ck_context_refcount(ctx) == 2);
  ck_buffer_decref(buf);
  ck_context_decref(ctx);
  free(x);
  free(y);
}

static void suite_fault_injection(void) {
  if (no_compiler()) {
    return;
  }
  ck_test_faults f = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&f)) {
    ck_context *ctx = NULL;
    ck_buffer *b = NULL;
    ck_program *p = NULL;
    ck_status st = ck_context_new(B->kind, &ctx);
    if (st == CK_OK) {
      st = ck_buffer_new(ctx, 64, &b);
    }
    size_t o = 0;
    for (int i = 0; i < 10 && st == CK_OK; i++) {
      st = ck_buffer_allocate(b, 40, 8, &o);
    }
    if (st == CK_OK) {
      st = ck_context_build_program(ctx, B->src, NULL, &p);
    }
    bool fired = ck_test_faults_fired(&f); /* not fired: the clean run, the last */
    if (st != CK_OK) {
      CHECK(st == CK_ERR_NO_MEMORY);
      CHECK(fired);
    }
    ck_program_decref(p);
    ck_buffer_decref(b);
    ck_context_decref(ctx);
  }
  CHECK(f.done);
}

/* Fills of every pattern size, periodic and not, at an offset: the bytes
 * around the range stay as they were. */
static void suite_fill_patterns(void) {
  ck_context *ctx = dev_ctx();
  REQUIRE(ctx != NULL);
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 4096, &b));
  unsigned char pat[128], back[4096], want[4096];
  for (size_t psize = 1; psize <= 128; psize *= 2) {
    for (int periodic = 0; periodic < 2; periodic++) {
      for (size_t i = 0; i < psize; i++) {
        pat[i] = periodic ? (unsigned char)(0xA0 + i % 2) : (unsigned char)(i * 37 + psize);
      }
      memset(want, 0x5c, sizeof want);
      CHECK_OK(ck_buffer_fill(b, 0, want, 1, sizeof want));
      size_t off = 3 * 128, n = psize * 21;
      for (size_t i = 0; i < n; i++) {
        want[off + i] = pat[i % psize];
      }
      CHECK_OK(ck_buffer_fill(b, off, pat, psize, n));
      CHECK_OK(ck_buffer_read(b, 0, back, sizeof back));
      if (memcmp(back, want, sizeof back) != 0) {
        CHECK(!"fill pattern mismatch");
        fprintf(stderr, "  pattern size %zu, periodic %d\n", psize, periodic);
      }
    }
  }
  CHECK_ERR(ck_buffer_fill(b, 4, pat, 8, 16), CK_ERR_INVALID_ARGUMENT, "multiples");
  CHECK_ERR(ck_buffer_fill(b, 4088, pat, 8, 16), CK_ERR_INDEX, "outside");
  ck_buffer_decref(b);
  ck_context_decref(ctx);
}

/* The tests' main (CK_TEST_MAIN renamed ck_test_main_ by the including
 * file) for `be`: exits 77 (ctest: Skipped) under valgrind
 * (CK_UNDER_VALGRIND) and when no context of the kind can be made, saying
 * why; otherwise runs the tests with B = be. */
int ck_test_main_(int argc, char **argv);
static int suite_main(int argc, char **argv, const device_backend *be) {
  if (getenv("CK_UNDER_VALGRIND") != NULL) {
    printf("SKIP: not run under valgrind (%s are noisy)\n", be->valgrind_why);
    return 77;
  }
  ck_context *ctx = NULL;
  if (ck_context_new(be->kind, &ctx) != CK_OK) {
    printf("SKIP: no %s context: %s\n", be->kind, ck_last_error());
    return 77;
  }
  ck_context_decref(ctx);
  B = be;
  return ck_test_main_(argc, argv);
}

#endif /* CK_DEVICE_SUITE_H */
