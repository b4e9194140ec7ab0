/* ck_device_scan_exclusive_i64 (device_scan.h): exclusive prefix sums of
 * int64 values in a buffer against a host loop, on the CPU context and on
 * OpenCL (PoCL in CI; that half is skipped without a platform and under
 * valgrind, whose report would be PoCL's): sizes around the chunk and its
 * square (one, two and three levels), an offset into the buffer, negative
 * values and wrap-around, the refusals. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static int64_t next_value(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (int64_t)(rng_state % 41) - 5; /* lengths mostly, a few negatives */
}

/* Scan n random values at byte offset 16 of a buffer of ctx; compare. */
static void check_scan(ck_context *ctx, size_t n) {
  size_t bytes = 16 + n * 8 + 8;
  int64_t *in = malloc(n * 8 + 8), *out = malloc(n * 8 + 8);
  REQUIRE(in != NULL && out != NULL);
  for (size_t i = 0; i < n; i++) {
    in[i] = next_value();
  }
  ck_buffer *buf = NULL;
  CHECK(ck_buffer_new(ctx, bytes, &buf) == CK_OK);
  size_t off = 1;
  CHECK(ck_buffer_allocate(buf, bytes, 8, &off) == CK_OK && off == 0);
  if (n) {
    CHECK(ck_buffer_write(buf, 16, in, n * 8) == CK_OK);
  }
  int64_t total = -1;
  ck_status st = ck_device_scan_exclusive_i64(buf, 16, n, &total);
  CHECK(st == CK_OK);
  if (st != CK_OK) {
    fprintf(stderr, "scan of %zu: %s\n", n, ck_last_error());
  }
  if (n) {
    CHECK(ck_buffer_read(buf, 16, out, n * 8) == CK_OK);
  }
  int64_t s = 0;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    bad += out[i] != s;
    s += in[i];
  }
  CHECK(bad == 0);
  CHECK(total == s);
  ck_buffer_decref(buf);
  free(in);
  free(out);
}

static const size_t SIZES[] = {0, 1, 2, 255, 256, 257, 1000, 65536, 65537, 300000};

static void run_sizes(ck_context *ctx) {
  for (size_t i = 0; i < sizeof SIZES / sizeof SIZES[0]; i++) {
    check_scan(ctx, SIZES[i]);
  }
}

static void test_cpu(void) {
  ck_context *ctx = NULL;
  REQUIRE(ck_context_new("cpu", &ctx) == CK_OK);
  run_sizes(ctx);
  ck_context_decref(ctx);
}

static void test_opencl(void) {
  ck_context *ctx = NULL;
  if (getenv("CK_UNDER_VALGRIND") != NULL || ck_context_new("opencl", &ctx) != CK_OK) {
    printf("(no OpenCL context: the device half is skipped)\n");
    return;
  }
  run_sizes(ctx);
  /* wrap-around is two's complement, as on the CPU */
  int64_t v[3] = {INT64_MAX, 2, 5};
  ck_buffer *buf = NULL;
  REQUIRE(ck_buffer_new(ctx, sizeof v, &buf) == CK_OK);
  CHECK(ck_buffer_write(buf, 0, v, sizeof v) == CK_OK);
  int64_t total = 0;
  CHECK(ck_device_scan_exclusive_i64(buf, 0, 3, &total) == CK_OK);
  CHECK(ck_buffer_read(buf, 0, v, sizeof v) == CK_OK);
  CHECK(v[0] == 0 && v[1] == INT64_MAX && v[2] == INT64_MIN + 1 && total == INT64_MIN + 6);
  ck_buffer_decref(buf);
  ck_context_decref(ctx);
}

static void test_refusals(void) {
  ck_context *ctx = NULL;
  REQUIRE(ck_context_new("cpu", &ctx) == CK_OK);
  ck_buffer *buf = NULL;
  REQUIRE(ck_buffer_new(ctx, 64, &buf) == CK_OK);
  static const int64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(ck_buffer_write(buf, 0, ones, sizeof ones) == CK_OK);
  int64_t total = 7;
  CHECK(ck_device_scan_exclusive_i64(NULL, 0, 1, &total) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_device_scan_exclusive_i64(buf, 4, 1, &total) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_device_scan_exclusive_i64(buf, 0, 9, &total) == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "do not fit") != NULL);
  CHECK(ck_device_scan_exclusive_i64(buf, 64, 0, &total) == CK_OK && total == 0);
  CHECK(ck_device_scan_exclusive_i64(buf, 0, 8, NULL) == CK_OK);
  ck_buffer_decref(buf);
  ck_context_decref(ctx);
}

CK_TEST_MAIN(CK_TEST(test_cpu), CK_TEST(test_opencl), CK_TEST(test_refusals))
