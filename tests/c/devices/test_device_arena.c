/* ckernel/device_arena.h: rows of data-dependent length appended into an
 * arena with an atomic bump pointer, overflow detected, one retry with the
 * capacity the counter reports, then ck_device_arena_compact into Arrow
 * offsets + values.  The device half is instantiated for C11 (work items run
 * one after another on the host, the CPU context compacts) and compiled into
 * an OpenCL program (PoCL in CI; skipped without a platform and under
 * valgrind, whose report would be PoCL's); both against a host loop keeping
 * the positive values of random ragged rows (empty and long rows too).  The
 * option row (CK_DEVICE_ARENA_OPTION_ROW: a presence byte per item) on the
 * host: every value appended, the negative ones as nulls, through an
 * overflow and the retry, then values and bytes compacted by the CPU context. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"

#define CK_DA_I64 int64_t
#define CK_DA_ATOMIC_ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#include "ckernel/device_arena.h"

CK_DEVICE_ARENA_ROW(i64, int64_t, )
CK_DEVICE_ARENA_OPTION_ROW(oi64, int64_t, )

/* REQUIRE for helpers that return a value: a failed set-up aborts. */
#define MUST(c)                                                                \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "%s:%d: set-up failed: %s\n", __FILE__, __LINE__, #c);    \
      abort();                                                                 \
    }                                                                          \
  } while (0)

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static uint64_t next_u64(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

/* Ragged rows: n rows, lengths 0..40 with a few long ones; values -50..49. */
typedef struct {
  size_t n;
  int64_t *offs; /* n + 1 */
  int64_t *vals;
  int64_t *want_offs; /* the positive values: n + 1 offsets */
  int64_t *want;
} rows_t;

static rows_t make_rows(size_t n) {
  rows_t r = {n, malloc((n + 1) * 8), NULL, malloc((n + 1) * 8), NULL};
  MUST(r.offs != NULL && r.want_offs != NULL);
  r.offs[0] = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t k = next_u64() % 50;
    size_t len = k == 0 ? 0 : k < 45 ? (size_t)(k % 41) : (size_t)(100 + next_u64() % 400);
    r.offs[i + 1] = r.offs[i] + (int64_t)len;
  }
  size_t total = (size_t)r.offs[n];
  r.vals = malloc(total * 8 + 8);
  r.want = malloc(total * 8 + 8);
  MUST(r.vals != NULL && r.want != NULL);
  size_t w = 0;
  r.want_offs[0] = 0;
  for (size_t i = 0; i < n; i++) {
    for (int64_t j = r.offs[i]; j < r.offs[i + 1]; j++) {
      r.vals[j] = (int64_t)(next_u64() % 100) - 50;
      if (r.vals[j] > 0) {
        r.want[w++] = r.vals[j];
      }
    }
    r.want_offs[i + 1] = (int64_t)w;
  }
  return r;
}

static void free_rows(rows_t *r) {
  free(r->offs);
  free(r->vals);
  free(r->want_offs);
  free(r->want);
}

static ck_buffer *upload(ck_context *ctx, const void *data, size_t bytes) {
  ck_buffer *b = NULL;
  MUST(ck_buffer_new(ctx, bytes ? bytes : 8, &b) == CK_OK);
  if (bytes && data != NULL) {
    MUST(ck_buffer_write(b, 0, data, bytes) == CK_OK);
  }
  return b;
}

/* lens (n + 1, last 0) -> offsets, values buffer, compaction; compare. */
static void compact_and_check(ck_context *ctx, const rows_t *r, ck_buffer *arena,
                              ck_buffer *starts, ck_buffer *lens) {
  int64_t total = -1;
  CHECK(ck_device_scan_exclusive_i64(lens, 0, r->n + 1, &total) == CK_OK);
  CHECK(total == r->want_offs[r->n]);
  ck_buffer *values = NULL;
  MUST(ck_buffer_new(ctx, (size_t)(total > 0 ? total : 1) * 8, &values) == CK_OK);
  ck_status st = ck_device_arena_compact(arena, 0, starts, 0, lens, 0, r->n, 8, values, 0);
  CHECK(st == CK_OK);
  if (st != CK_OK) {
    fprintf(stderr, "compact: %s\n", ck_last_error());
  }
  int64_t *offs = malloc((r->n + 1) * 8), *got = malloc((size_t)total * 8 + 8);
  MUST(offs != NULL && got != NULL);
  CHECK(ck_buffer_read(lens, 0, offs, (r->n + 1) * 8) == CK_OK);
  if (total > 0) {
    CHECK(ck_buffer_read(values, 0, got, (size_t)total * 8) == CK_OK);
  }
  CHECK(memcmp(offs, r->want_offs, (r->n + 1) * 8) == 0);
  CHECK(total <= 0 || memcmp(got, r->want, (size_t)total * 8) == 0);
  free(offs);
  free(got);
  ck_buffer_decref(values);
}

/* The C11 instantiation: work items one after another (in reverse order: the
 * counter's final value does not depend on the order). */
static int64_t run_host(const rows_t *r, int64_t *arena, int64_t capacity, int64_t *starts,
                        int64_t *lens) {
  int64_t counter = 0;
  for (size_t k = r->n; k-- > 0;) {
    ck_arow_i64_t row;
    ck_arow_init_i64(&row, arena, &counter, capacity);
    for (int64_t j = r->offs[k]; j < r->offs[k + 1]; j++) {
      if (r->vals[j] > 0) {
        ck_arow_append_i64(&row, r->vals[j]);
      }
    }
    starts[k] = row.start;
    lens[k] = row.len;
  }
  lens[r->n] = 0;
  return counter;
}

static void test_host_rows(void) {
  ck_context *ctx = NULL;
  MUST(ck_context_new("cpu", &ctx) == CK_OK);
  static const size_t SIZES[] = {0, 1, 7, 300, 5000};
  for (size_t s = 0; s < sizeof SIZES / sizeof SIZES[0]; s++) {
    rows_t r = make_rows(SIZES[s]);
    size_t n = r.n;
    int64_t *starts = malloc(n * 8 + 8), *lens = malloc(n * 8 + 8);
    int64_t cap = 16; /* too small unless (almost) nothing is kept */
    int64_t *arena = malloc((size_t)cap * 8);
    MUST(starts != NULL && lens != NULL && arena != NULL);
    int64_t need = run_host(&r, arena, cap, starts, lens);
    bool overflowed = false;
    for (size_t i = 0; i < n; i++) {
      overflowed |= starts[i] < 0;
      CHECK(lens[i] == r.want_offs[i + 1] - r.want_offs[i]);
    }
    CHECK(overflowed == (need > cap));
    if (need > cap) { /* the retry with the capacity the counter gives */
      free(arena);
      cap = need;
      arena = malloc((size_t)cap * 8);
      MUST(arena != NULL);
      CHECK(run_host(&r, arena, cap, starts, lens) == need);
      for (size_t i = 0; i < n; i++) {
        CHECK(starts[i] >= 0);
      }
    }
    ck_buffer *ab = upload(ctx, arena, (size_t)cap * 8);
    ck_buffer *sb = upload(ctx, starts, n * 8);
    ck_buffer *lb = upload(ctx, lens, (n + 1) * 8);
    compact_and_check(ctx, &r, ab, sb, lb);
    ck_buffer_decref(ab);
    ck_buffer_decref(sb);
    ck_buffer_decref(lb);
    free(arena);
    free(starts);
    free(lens);
    free_rows(&r);
  }
  ck_context_decref(ctx);
}

/* The header's text (the OpenCL program includes it as the jit does). */
/* The option row: each value, a null where it is negative (value slot 0,
 * presence byte 0); the first arena too small, the retry with the counter's
 * capacity; values and presence bytes compacted with the same offsets. */
static void test_host_option_rows(void) {
  ck_context *ctx = NULL;
  MUST(ck_context_new("cpu", &ctx) == CK_OK);
  rows_t r = make_rows(200);
  size_t n = r.n;
  int64_t total = r.offs[n];
  int64_t capacity = 16, counter = 0;
  int64_t *starts = malloc(n * 8 + 8), *lens = malloc((n + 1) * 8);
  int64_t *arena = NULL;
  unsigned char *present = NULL;
  MUST(starts != NULL && lens != NULL);
  for (int attempt = 0; attempt < 2; attempt++) {
    free(arena);
    free(present);
    arena = malloc((size_t)capacity * 8 + 8);
    present = malloc((size_t)capacity + 1);
    MUST(arena != NULL && present != NULL);
    memset(present, 7, (size_t)capacity + 1);
    counter = 0;
    for (size_t k = n; k-- > 0;) {
      ck_aorow_oi64_t row;
      ck_aorow_init_oi64(&row, arena, present, &counter, capacity);
      for (int64_t j = r.offs[k]; j < r.offs[k + 1]; j++) {
        ck_aorow_append_oi64(&row, r.vals[j], r.vals[j] >= 0);
      }
      starts[k] = row.start;
      lens[k] = row.len;
      CHECK(row.len == r.offs[k + 1] - r.offs[k]);
    }
    lens[n] = 0;
    if (counter <= capacity) {
      break;
    }
    CHECK(attempt == 0); /* the retry has the room */
    capacity = counter;
  }
  CHECK(counter <= capacity);
  ck_buffer *ab = upload(ctx, arena, (size_t)capacity * 8);
  ck_buffer *pb = upload(ctx, present, (size_t)capacity);
  ck_buffer *sb = upload(ctx, starts, n * 8 + 8);
  ck_buffer *ob = upload(ctx, r.offs, (n + 1) * 8); /* every value kept: the row offsets */
  ck_buffer *vals = NULL, *bytes = NULL;
  MUST(ck_buffer_new(ctx, (size_t)total * 8 + 8, &vals) == CK_OK);
  MUST(ck_buffer_new(ctx, (size_t)total + 1, &bytes) == CK_OK);
  CHECK(ck_device_arena_compact(ab, 0, sb, 0, ob, 0, n, 8, vals, 0) == CK_OK);
  CHECK(ck_device_arena_compact(pb, 0, sb, 0, ob, 0, n, 1, bytes, 0) == CK_OK);
  int64_t *got = malloc((size_t)total * 8 + 8);
  unsigned char *ok = malloc((size_t)total + 1);
  MUST(got != NULL && ok != NULL);
  CHECK(ck_buffer_read(vals, 0, got, (size_t)total * 8) == CK_OK);
  CHECK(ck_buffer_read(bytes, 0, ok, (size_t)total) == CK_OK);
  for (int64_t j = 0; j < total; j++) {
    CHECK(ok[j] == (r.vals[j] >= 0));
    CHECK(got[j] == (r.vals[j] >= 0 ? r.vals[j] : 0));
  }
  free(got);
  free(ok);
  ck_buffer_decref(vals);
  ck_buffer_decref(bytes);
  ck_buffer_decref(ab);
  ck_buffer_decref(pb);
  ck_buffer_decref(sb);
  ck_buffer_decref(ob);
  free(arena);
  free(present);
  free(starts);
  free(lens);
  free_rows(&r);
  ck_context_decref(ctx);
}

static char *read_header(void) {
  FILE *f = fopen(CK_INCLUDE_DIR "/ckernel/device_arena.h", "rb");
  MUST(f != NULL);
  char *text = malloc(1 << 16);
  MUST(text != NULL);
  size_t got = fread(text, 1, (1 << 16) - 1, f);
  fclose(f);
  text[got] = '\0';
  return text;
}

static const char CL_PRELUDE[] =
    "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n"
    "#define CK_DA_FN static inline\n"
    "#define CK_DA_I64 long\n"
    "#define CK_DA_ATOMIC_ADD(p, v) atom_add((volatile __global long *)(p), (v))\n";

static const char CL_KERNEL[] =
    "CK_DEVICE_ARENA_ROW(i64, long, __global)\n"
    "__kernel void keep_positive(__global const long *offs, __global const long *vals,\n"
    "    ulong n, __global long *arena, __global long *counter, long capacity,\n"
    "    __global long *starts, __global long *lens) {\n"
    "  ulong i = get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  ck_arow_i64_t row;\n"
    "  ck_arow_init_i64(&row, arena, counter, capacity);\n"
    "  for (long j = offs[i]; j < offs[i + 1]; j++)\n"
    "    if (vals[j] > 0) ck_arow_append_i64(&row, vals[j]);\n"
    "  starts[i] = row.start;\n"
    "  lens[i] = row.len;\n"
    "}\n";

static int64_t run_opencl(ck_context *ctx, ck_program *p, const rows_t *r, ck_buffer *ob,
                          ck_buffer *vb, ck_buffer *arena, int64_t capacity, ck_buffer *starts,
                          ck_buffer *lens) {
  int64_t zero = 0;
  ck_buffer *counter = upload(ctx, &zero, 8);
  MUST(ck_buffer_write(lens, r->n * 8, &zero, 8) == CK_OK);
  uint64_t n = r->n;
  ck_kernel_arg a[8];
  memset(a, 0, sizeof a);
  ck_buffer *bufs[8] = {ob, vb, NULL, arena, counter, NULL, starts, lens};
  for (int k = 0; k < 8; k++) {
    a[k].kind = bufs[k] ? CK_KERNEL_ARG_BUFFER : CK_KERNEL_ARG_SCALAR;
    a[k].buffer = bufs[k];
    a[k].size = 8;
  }
  a[2].value = &n;
  a[5].value = &capacity;
  ck_status st = ck_context_launch(ctx, p, "keep_positive", 8, a, r->n);
  CHECK(st == CK_OK);
  if (st != CK_OK) {
    fprintf(stderr, "launch: %s\n", ck_last_error());
  }
  int64_t need = -1;
  CHECK(ck_buffer_read(counter, 0, &need, 8) == CK_OK);
  ck_buffer_decref(counter);
  return need;
}

static void test_opencl_rows(void) {
  ck_context *ctx = NULL;
  if (getenv("CK_UNDER_VALGRIND") != NULL || ck_context_new("opencl", &ctx) != CK_OK) {
    printf("(no OpenCL context: the device half is skipped)\n");
    return;
  }
  char *header = read_header();
  size_t len = strlen(CL_PRELUDE) + strlen(header) + strlen(CL_KERNEL) + 1;
  char *source = malloc(len);
  MUST(source != NULL);
  snprintf(source, len, "%s%s%s", CL_PRELUDE, header, CL_KERNEL);
  ck_program *p = NULL;
  ck_status st = ck_context_build_program(ctx, source, NULL, &p);
  CHECK(st == CK_OK);
  if (st != CK_OK) {
    fprintf(stderr, "build: %s\n", ck_last_error());
  }
  static const size_t SIZES[] = {1, 300, 20000};
  for (size_t s = 0; st == CK_OK && s < sizeof SIZES / sizeof SIZES[0]; s++) {
    rows_t r = make_rows(SIZES[s]);
    ck_buffer *ob = upload(ctx, r.offs, (r.n + 1) * 8);
    ck_buffer *vb = upload(ctx, r.vals, (size_t)r.offs[r.n] * 8);
    ck_buffer *starts = upload(ctx, NULL, r.n * 8);
    ck_buffer *lens = upload(ctx, NULL, (r.n + 1) * 8);
    int64_t cap = 64;
    ck_buffer *arena = upload(ctx, NULL, (size_t)cap * 8);
    int64_t need = run_opencl(ctx, p, &r, ob, vb, arena, cap, starts, lens);
    CHECK(need > cap || r.n < 10); /* 300 rows keep more than 64 */
    if (need > cap) {
      ck_buffer_decref(arena);
      arena = upload(ctx, NULL, (size_t)need * 8);
      CHECK(run_opencl(ctx, p, &r, ob, vb, arena, need, starts, lens) == need);
    }
    int64_t *hs = malloc(r.n * 8);
    MUST(hs != NULL);
    CHECK(ck_buffer_read(starts, 0, hs, r.n * 8) == CK_OK);
    size_t over = 0;
    for (size_t i = 0; i < r.n; i++) {
      over += hs[i] < 0;
    }
    CHECK(over == 0);
    free(hs);
    compact_and_check(ctx, &r, arena, starts, lens);
    ck_buffer_decref(arena);
    ck_buffer_decref(ob);
    ck_buffer_decref(vb);
    ck_buffer_decref(starts);
    ck_buffer_decref(lens);
    free_rows(&r);
  }
  if (p != NULL) {
    ck_program_decref(p);
  }
  free(source);
  free(header);
  ck_context_decref(ctx);
}

static void test_refusals(void) {
  ck_context *ctx = NULL, *other = NULL;
  MUST(ck_context_new("cpu", &ctx) == CK_OK);
  MUST(ck_context_new("cpu", &other) == CK_OK);
  int64_t starts[2] = {0, 5}, offs[3] = {0, 2, 4};
  ck_buffer *a = upload(ctx, NULL, 64), *s = upload(ctx, starts, 16);
  ck_buffer *o = upload(ctx, offs, 24), *v = upload(ctx, NULL, 32);
  ck_buffer *x = upload(other, NULL, 32);
  CHECK(ck_device_arena_compact(NULL, 0, s, 0, o, 0, 2, 8, v, 0) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 2, 8, x, 0) == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "different contexts") != NULL);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 2, 3, v, 0) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 3, 8, v, 0) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_device_arena_compact(a, 4, s, 0, o, 0, 2, 8, v, 0) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 0, 8, v, 0) == CK_OK);
  /* row 1's chunk [5, 7) fits the 8-element arena; [7, 9) does not */
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 2, 8, v, 0) == CK_OK);
  starts[1] = 7;
  CHECK(ck_buffer_write(s, 0, starts, 16) == CK_OK);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 2, 8, v, 0) == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "outside the arena") != NULL);
  starts[1] = -1; /* an overflowed row may not be compacted */
  CHECK(ck_buffer_write(s, 0, starts, 16) == CK_OK);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 2, 8, v, 0) == CK_ERR_INVALID_ARGUMENT);
  int64_t dec[3] = {0, 3, 1}; /* decreasing offsets */
  starts[1] = 0;
  CHECK(ck_buffer_write(s, 0, starts, 16) == CK_OK);
  CHECK(ck_buffer_write(o, 0, dec, 24) == CK_OK);
  CHECK(ck_device_arena_compact(a, 0, s, 0, o, 0, 2, 8, v, 0) == CK_ERR_INVALID_ARGUMENT);
  ck_buffer *bufs[5] = {a, s, o, v, x};
  for (int k = 0; k < 5; k++) {
    ck_buffer_decref(bufs[k]);
  }
  ck_context_decref(ctx);
  ck_context_decref(other);
}

CK_TEST_MAIN(CK_TEST(test_host_rows), CK_TEST(test_host_option_rows), CK_TEST(test_opencl_rows),
             CK_TEST(test_refusals))
