/* Applying kernels to whole arrays (apply.h): sources that overlap the
 * destination (forward, backward, strided, reversed, 2-d, broadcast) give
 * NumPy's results through a temporary, in-place application copies nothing,
 * out= of another dtype is converted once, concurrent writers of one string
 * destination are serialised by the arena's writer lock, string and var-dim
 * results split over the pool give the serial results (each thread writing
 * into an arena of its own, adopted by the result's), and a builder slot
 * holding a kernel cannot be built over. */
#define _GNU_SOURCE /* pthread barriers */
#include "ck_test.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

/* A 1-d int64 array 0, 1, ..., n-1 (strided). */
static ck_array_preamble *iota(intptr_t n) {
  ck_array_preamble *a = arr("strided * int64", 1, &n);
  if (a != NULL) {
    for (intptr_t i = 0; i < n; i++) {
      ((int64_t *)(void *)a->data)[i] = i;
    }
  }
  return a;
}

static ck_array_preamble *slice(ck_array_preamble *a, size_t axis, intptr_t b,
                                intptr_t e, intptr_t step) {
  ck_array_preamble *v = NULL;
  if (ck_array_slice(a, axis, b, e, step, &v) != CK_OK) {
    fprintf(stderr, "slice: %s\n", ck_last_error());
  }
  return v;
}

static const int64_t *I64(const ck_array_preamble *a) {
  return (const int64_t *)(const void *)a->data;
}

/* assign(x[1:], x[:-1]) and assign(x[:-1], x[1:]) as NumPy. */
static void test_assign_shifted_views(void) {
  enum { N = 10 };
  ck_array_preamble *x = iota(N);
  REQUIRE(x != NULL);
  ck_array_preamble *d = slice(x, 0, 1, CK_SLICE_NONE, 1);
  ck_array_preamble *s = slice(x, 0, 0, -1, 1);
  REQUIRE_OK(ck_array_assign(d, s, CK_ERRMODE_DEFAULT));
  for (int i = 0; i < N; i++) {
    CHECK(I64(x)[i] == (i == 0 ? 0 : i - 1)); /* 0 0 1 2 ... 8 */
  }
  ck_array_decref(d);
  ck_array_decref(s);
  for (int i = 0; i < N; i++) {
    ((int64_t *)(void *)x->data)[i] = i;
  }
  d = slice(x, 0, 0, -1, 1);
  s = slice(x, 0, 1, CK_SLICE_NONE, 1);
  REQUIRE_OK(ck_array_assign(d, s, CK_ERRMODE_DEFAULT));
  for (int i = 0; i < N; i++) {
    CHECK(I64(x)[i] == (i == N - 1 ? N - 1 : i + 1)); /* 1 2 ... 9 9 */
  }
  ck_array_decref(d);
  ck_array_decref(s);
  /* reversed in place: x = x[::-1] */
  s = slice(x, 0, CK_SLICE_NONE, CK_SLICE_NONE, -1);
  int64_t before[N];
  memcpy(before, x->data, sizeof before);
  REQUIRE_OK(ck_array_assign(x, s, CK_ERRMODE_DEFAULT));
  for (int i = 0; i < N; i++) {
    CHECK(I64(x)[i] == before[N - 1 - i]);
  }
  ck_array_decref(s);
  ck_array_decref(x);
}

/* ops.add(b[:8], b[:8], out=b[1:9]) and strided/2-d/broadcast variants. */
static void test_apply_op_overlapping_out(void) {
  ck_array_preamble *b = iota(10);
  REQUIRE(b != NULL);
  ck_array_preamble *in = slice(b, 0, 0, 8, 1);
  ck_array_preamble *out = slice(b, 0, 1, 9, 1);
  ck_array_preamble *srcs[2] = {in, in};
  ck_array_preamble *r = NULL;
  REQUIRE_OK(ck_array_apply_op("add", 2, srcs, out, &r));
  CHECK(r == out);
  ck_array_decref(r);
  static const int64_t want[10] = {0, 0, 2, 4, 6, 8, 10, 12, 14, 9};
  CHECK(memcmp(b->data, want, sizeof want) == 0);
  ck_array_decref(in);
  ck_array_decref(out);
  ck_array_decref(b);

  /* strided: out = b[2::2] from b[0:-2:2] + b[1::2] (interleaved memory) */
  b = iota(12);
  int64_t old[12];
  memcpy(old, b->data, sizeof old);
  ck_array_preamble *s0 = slice(b, 0, 0, -2, 2), *s1 = slice(b, 0, 1, -2, 2);
  out = slice(b, 0, 2, CK_SLICE_NONE, 2);
  ck_array_preamble *srcs2[2] = {s0, s1};
  REQUIRE_OK(ck_array_apply_op("add", 2, srcs2, out, &r));
  ck_array_decref(r);
  for (int i = 0; i < 5; i++) {
    CHECK(I64(b)[2 + 2 * i] == old[2 * i] + old[2 * i + 1]);
    CHECK(I64(b)[2 * i + 1] == old[2 * i + 1]);
  }
  ck_array_decref(s0);
  ck_array_decref(s1);
  ck_array_decref(out);
  ck_array_decref(b);

  /* 2-d: a[1:, :] = a[:-1, :] * 2 (multiply), rows shifted down */
  intptr_t shape[2] = {4, 5};
  ck_array_preamble *a = arr("strided * strided * int64", 2, shape);
  REQUIRE(a != NULL);
  for (int i = 0; i < 20; i++) {
    ((int64_t *)(void *)a->data)[i] = i;
  }
  ck_array_preamble *top = slice(a, 0, 0, -1, 1), *bottom = slice(a, 0, 1, CK_SLICE_NONE, 1);
  ck_array_preamble *srcs3[2] = {top, top};
  REQUIRE_OK(ck_array_apply_op("add", 2, srcs3, bottom, &r));
  ck_array_decref(r);
  for (int i = 0; i < 5; i++) {
    CHECK(I64(a)[i] == i);
  }
  for (int row = 1; row < 4; row++) {
    for (int c = 0; c < 5; c++) {
      CHECK(I64(a)[row * 5 + c] == 2 * ((row - 1) * 5 + c));
    }
  }
  ck_array_decref(top);
  ck_array_decref(bottom);

  /* broadcast source overlapping: a += a[0] (row 0 broadcast over rows) */
  for (int i = 0; i < 20; i++) {
    ((int64_t *)(void *)a->data)[i] = i;
  }
  ck_array_preamble *row0 = NULL;
  REQUIRE_OK(ck_array_index(a, 0, 0, &row0));
  ck_array_preamble *srcs4[2] = {a, row0};
  REQUIRE_OK(ck_array_apply_op("add", 2, srcs4, a, &r));
  ck_array_decref(r);
  for (int i = 0; i < 20; i++) {
    CHECK(I64(a)[i] == i + i % 5); /* row 0 doubled, the others + old row 0 */
  }
  ck_array_decref(row0);
  ck_array_decref(a);
}

/* In place (the destination is a source): read directly, no temporary. */
static void test_in_place_copies_nothing(void) {
  intptr_t n = 1000;
  ck_array_preamble *x = iota(n), *y = iota(n);
  REQUIRE(x != NULL && y != NULL);
  ck_array_preamble *r = NULL;
  ck_array_preamble *xy[2] = {x, y};
  REQUIRE_OK(ck_array_apply_op("add", 2, xy, x, &r)); /* warm up */
  ck_array_decref(r);
  uint64_t a0 = ck_debug_alloc_count();
  REQUIRE_OK(ck_array_apply_op("add", 2, xy, x, &r));
  ck_array_decref(r);
  uint64_t with_other = ck_debug_alloc_count() - a0;
  ck_array_preamble *xx[2] = {x, x};
  a0 = ck_debug_alloc_count();
  REQUIRE_OK(ck_array_apply_op("add", 2, xx, x, &r));
  ck_array_decref(r);
  CHECK(ck_debug_alloc_count() - a0 == with_other);
  bool all = true; /* x + y twice, then doubled: 6i */
  for (intptr_t i = 0; i < n; i++) {
    all = all && I64(x)[i] == 6 * i;
  }
  CHECK(all);
  /* the same for assignment of an array to itself */
  a0 = ck_debug_alloc_count();
  REQUIRE_OK(ck_array_assign(x, x, CK_ERRMODE_DEFAULT));
  CHECK(ck_debug_alloc_count() == a0);
  CHECK(I64(x)[n - 1] == 6 * (n - 1));
  ck_array_decref(x);
  ck_array_decref(y);
}

/* out= of another dtype: computed in the kernel's type, then converted. */
static void test_out_of_another_dtype(void) {
  ck_array_preamble *x = iota(5);
  intptr_t n = 5;
  ck_array_preamble *f = arr("strided * float64", 1, &n);
  ck_array_preamble *u8 = arr("strided * uint8", 1, &n);
  REQUIRE(x != NULL && f != NULL && u8 != NULL);
  ck_array_preamble *xx[2] = {x, x}, *r = NULL;
  REQUIRE_OK(ck_array_apply_op("multiply", 2, xx, f, &r));
  CHECK(r == f);
  ck_array_decref(r);
  for (int i = 0; i < 5; i++) {
    CHECK(((const double *)(const void *)f->data)[i] == (double)(i * i));
  }
  ((int64_t *)(void *)x->data)[4] = 300; /* 300 * 300 does not fit uint8 */
  CHECK_ERR(ck_array_apply_op("multiply", 2, xx, u8, &r), CK_ERR_OVERFLOW, "uint8");
  CHECK(r == NULL);
  ck_array_decref(x);
  ck_array_decref(f);
  ck_array_decref(u8);
}

/* A string result made by ck_array_apply holds about the bytes of its
 * strings: its arena is trimmed after the kernel ran (and stays open). */
static void test_string_result_arena_trimmed(void) {
  intptr_t n = 200000; /* not scaled: the last chunk must be a page mapping */
  ck_array_preamble *x = iota(n), *r = NULL;
  REQUIRE(x != NULL);
  ck_errmode mode = CK_ERRMODE_DEFAULT;
  ck_type str = NULL;
  REQUIRE_OK(ck_string_type_new(&str));
  REQUIRE_OK(ck_array_apply(ck_assignment_child_factory, &mode, str, 1, &x, NULL, &r));
  ck_type_decref(str);
  size_t payload = 0;
  char text[32];
  for (intptr_t i = 0; i < n; i++) {
    payload += (size_t)snprintf(text, sizeof text, "%" PRIdPTR, i);
  }
  ck_memblock *arena = ((const ck_string_arrmeta *)(const void *)(
                            ck_array_arrmeta(r) + sizeof(ck_dim_arrmeta)))->blockref;
  ck_pod_stats st;
  REQUIRE_OK(ck_pod_memblock_stats(arena, &st));
  CHECK(st.used == payload);
  /* the tails of older chunks, and a page per arena a thread wrote into
   * (their chunks are the result's: ck_pod_memblock_adopt) */
  CHECK(st.capacity <= payload + 4096 * (size_t)ck_get_num_threads() + 8 * st.chunks);
  CHECK(!st.finalized);
  const ck_string *s0 = (const ck_string *)(const void *)r->data;
  CHECK(s0[n - 1].end - s0[n - 1].begin == snprintf(text, sizeof text, "%" PRIdPTR, n - 1));
  ck_array_decref(r);
  ck_array_decref(x);
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

/* ---- one string destination, many writer threads ---------------------------- */

enum { NROWS = 4000, NWRITERS = 4 };
static pthread_barrier_t start_line;

typedef struct {
  ck_array_preamble *dst;
  ck_array_preamble *src;
  int rounds;
  ck_status st;
} writer_arg;

static void *writer(void *p) {
  writer_arg *w = p;
  pthread_barrier_wait(&start_line);
  for (int r = 0; r < w->rounds && w->st == CK_OK; r++) {
    w->st = ck_array_assign(w->dst, w->src, CK_ERRMODE_DEFAULT);
  }
  return NULL;
}

/* Which writer's array `dst` holds, whole: its index, NWRITERS while it is
 * still all empty strings, -1 if its rows come from different writers or a
 * string matches none. */
static int whole_writer(const ck_array_preamble *dst, ck_array_preamble *const *src) {
  const ck_string *d = (const ck_string *)(const void *)dst->data;
  if (d[0].begin == d[0].end) {
    for (int i = 0; i < NROWS; i++) {
      if (d[i].begin != d[i].end) {
        return -1;
      }
    }
    return NWRITERS;
  }
  for (int t = 0; t < NWRITERS; t++) {
    const ck_string *s = (const ck_string *)(const void *)src[t]->data;
    bool all = true;
    for (int i = 0; i < NROWS && all; i++) {
      all = d[i].end - d[i].begin == s[i].end - s[i].begin &&
            memcmp(d[i].begin, s[i].begin, (size_t)(s[i].end - s[i].begin)) == 0;
    }
    if (all) {
      return t;
    }
  }
  return -1;
}

typedef struct {
  ck_array_preamble *dst;
  ck_array_preamble **src;
  ck_memblock *arena;
  atomic_bool *stop;
  int checks, torn;
} checker_arg;

/* Under the arena's writer lock, the destination is always one writer's
 * whole array: every assignment holds the lock from its first row to its
 * last. */
static void *checker(void *p) {
  checker_arg *c = p;
  while (!atomic_load(c->stop)) {
    if (ck_pod_memblock_writer_lock(c->arena) != CK_OK) {
      c->torn++;
      return NULL;
    }
    c->torn += whole_writer(c->dst, c->src) < 0;
    c->checks++;
    (void)ck_pod_memblock_writer_unlock(c->arena);
    /* let a writer take the lock (under valgrind, which runs one thread at
       a time, the checker would otherwise re-take it for its whole slice) */
    sched_yield();
  }
  return NULL;
}

static void test_concurrent_string_writers(void) {
  intptr_t n = NROWS;
  ck_array_preamble *dst = arr("strided * string", 1, &n);
  ck_array_preamble *src[NWRITERS];
  REQUIRE(dst != NULL);
  char text[128];
  for (int t = 0; t < NWRITERS; t++) {
    src[t] = arr("strided * string", 1, &n);
    REQUIRE(src[t] != NULL);
    bool ok = true;
    for (int i = 0; i < NROWS && ok; i++) {
      int len = snprintf(text, sizeof text, "writer %d row %d %.*s", t, i, i % 61,
                         "=============================================================");
      ok = ck_string_assign(src[t]->data + i * sizeof(ck_string),
                            ck_array_arrmeta(src[t]) + sizeof(ck_dim_arrmeta), text,
                            (size_t)len) == CK_OK;
    }
    REQUIRE(ok);
  }
  ck_memblock *arena = ((const ck_string_arrmeta *)(const void *)(
                            ck_array_arrmeta(dst) + sizeof(ck_dim_arrmeta)))->blockref;
  atomic_bool stop;
  atomic_init(&stop, false);
  checker_arg chk = {dst, src, arena, &stop, 0, 0};
  pthread_t checker_th;
  writer_arg args[NWRITERS];
  pthread_t th[NWRITERS];
  int rounds = (int)ck_test_scaled(400);
  REQUIRE(pthread_barrier_init(&start_line, NULL, NWRITERS) == 0);
  REQUIRE(pthread_create(&checker_th, NULL, checker, &chk) == 0);
  for (int t = 0; t < NWRITERS; t++) {
    args[t] = (writer_arg){dst, src[t], rounds, CK_OK};
    REQUIRE(pthread_create(&th[t], NULL, writer, &args[t]) == 0);
  }
  for (int t = 0; t < NWRITERS; t++) {
    pthread_join(th[t], NULL);
    CHECK(args[t].st == CK_OK);
  }
  atomic_store(&stop, true);
  pthread_join(checker_th, NULL);
  pthread_barrier_destroy(&start_line);
  CHECK(chk.torn == 0);
  CHECK(chk.checks > 0);
  /* each assignment ran whole: the result is one writer's array, intact */
  int w = whole_writer(dst, src);
  CHECK(w >= 0 && w < NWRITERS);
  /* the lock is the arena's: recursive, and only its holder may unlock */
  REQUIRE_OK(ck_pod_memblock_writer_lock(arena));
  REQUIRE_OK(ck_pod_memblock_writer_lock(arena));
  CHECK_OK(ck_pod_memblock_writer_unlock(arena));
  CHECK_OK(ck_pod_memblock_writer_unlock(arena));
  CHECK_ERR(ck_pod_memblock_writer_unlock(arena), CK_ERR_INVALID_STATE, "does not hold");
  CHECK_ERR(ck_pod_memblock_writer_lock(&dst->memblock), CK_ERR_TYPE, "no pod allocator");
  for (int t = 0; t < NWRITERS; t++) {
    ck_array_decref(src[t]);
  }
  ck_array_decref(dst);
}


/* ---- string and var-dim destinations on the pool ------------------------------ */

static ck_memblock *string_arena(const ck_array_preamble *a) {
  return ((const ck_string_arrmeta *)(const void *)(ck_array_arrmeta(a) +
                                                     sizeof(ck_dim_arrmeta)))->blockref;
}

static size_t chunk_count(const ck_memblock *arena) {
  ck_pod_stats st;
  return ck_pod_memblock_stats(arena, &st) == CK_OK ? st.chunks : 0;
}

/* Does every one of the n ranges [b[i], b[i] + len[i]) lie in a chunk of
 * `arena` (what keeps it alive)? */
static bool ranges_in_arena(const ck_memblock *arena, size_t n, const char *const *b,
                            const size_t *len) {
  size_t nc = 0;
  if (ck_pod_memblock_chunks(arena, NULL, 0, &nc) != CK_OK) {
    return false;
  }
  ck_pod_chunk_info *info = calloc(nc ? nc : 1, sizeof *info);
  bool ok = info != NULL && ck_pod_memblock_chunks(arena, info, nc, &nc) == CK_OK;
  for (size_t i = 0; ok && i < n; i++) {
    bool in = len[i] == 0;
    for (size_t c = 0; c < nc && !in; c++) {
      in = b[i] >= info[c].begin && b[i] + len[i] <= info[c].begin + info[c].used;
    }
    ok = in;
  }
  free(info);
  return ok;
}

/* The strings of a 1-d string array: same texts as `want`, each inside the
 * array's own arena. */
static bool same_strings_in_arena(const ck_array_preamble *a, const ck_array_preamble *want,
                                  intptr_t n) {
  const ck_string *s = (const ck_string *)(const void *)a->data;
  const ck_string *w = (const ck_string *)(const void *)want->data;
  const char **b = calloc((size_t)n, sizeof *b);
  size_t *len = calloc((size_t)n, sizeof *len);
  bool ok = b != NULL && len != NULL;
  for (intptr_t i = 0; ok && i < n; i++) {
    ok = s[i].end - s[i].begin == w[i].end - w[i].begin &&
         memcmp(s[i].begin, w[i].begin, (size_t)(w[i].end - w[i].begin)) == 0;
    b[i] = s[i].begin;
    len[i] = (size_t)(s[i].end - s[i].begin);
  }
  ok = ok && ranges_in_arena(string_arena(a), (size_t)n, b, len);
  free(b);
  free(len);
  return ok;
}

/* Numbers formatted into a new string result and into a given one (out=),
 * with two threads allowed: the serial run's strings, every one inside the
 * result's arena (whichever thread wrote it: how the rows spread over the
 * threads depends on scheduling; test_parallel_string_failure checks that a
 * second thread's rows land there). */
static void test_parallel_string_results(void) {
  intptr_t n = 300000;
  ck_array_preamble *x = iota(n), *r1 = NULL, *r2 = NULL;
  REQUIRE(x != NULL);
  ck_errmode mode = CK_ERRMODE_DEFAULT;
  ck_type str = NULL;
  REQUIRE_OK(ck_string_type_new(&str));
  REQUIRE_OK(ck_set_num_threads(1));
  CHECK_OK(ck_array_apply(ck_assignment_child_factory, &mode, str, 1, &x, NULL, &r1));
  REQUIRE_OK(ck_set_num_threads(2)); /* two threads even on one CPU */
  CHECK_OK(ck_array_apply(ck_assignment_child_factory, &mode, str, 1, &x, NULL, &r2));
  ck_type_decref(str);
  REQUIRE(r1 != NULL && r2 != NULL);
  CHECK(same_strings_in_arena(r2, r1, n));
  /* into a destination that holds strings already */
  ck_array_preamble *out = arr("strided * string", 1, &n);
  REQUIRE(out != NULL);
  REQUIRE_OK(ck_array_assign(out, r1, CK_ERRMODE_DEFAULT)); /* copies: another arena */
  CHECK_OK(ck_array_assign(out, x, CK_ERRMODE_DEFAULT));
  CHECK(same_strings_in_arena(out, r1, n));
  /* a source sharing the destination's arena: strings shared (the kernel
   * built for it), so the run stays on one thread and adopts nothing */
  ck_array_preamble *view = slice(out, 0, 0, n, 1);
  REQUIRE(view != NULL);
  const ck_string *s = (const ck_string *)(const void *)out->data;
  const char *first = s[0].begin;
  size_t before = chunk_count(string_arena(out));
  CHECK_OK(ck_array_assign(out, view, CK_ERRMODE_DEFAULT));
  CHECK(s[0].begin == first && chunk_count(string_arena(out)) == before);
  ck_array_decref(view);
  ck_array_decref(out);
  ck_array_decref(r2);
  ck_array_decref(r1);
  ck_array_decref(x);
  CHECK_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

/* Var dims: rows allocated from each thread's arena end up in the
 * destination's var arena, with the serial values. */
static void test_parallel_var_results(void) {
  intptr_t n = 200000;
  ck_array_preamble *src = arr("strided * var * int32", 1, &n);
  ck_array_preamble *dst = arr("strided * var * int32", 1, &n);
  REQUIRE(src != NULL && dst != NULL);
  ck_type vt = src->type->element;
  const char *vam = ck_array_arrmeta(src) + sizeof(ck_dim_arrmeta);
  bool ok = true;
  for (intptr_t i = 0; i < n && ok; i++) {
    char *el = src->data + i * (intptr_t)sizeof(ck_var_dim_data);
    ok = ck_var_dim_alloc(vt, el, vam, (size_t)(i % 5)) == CK_OK;
    ck_var_dim_data *d = (ck_var_dim_data *)(void *)el;
    for (size_t j = 0; ok && j < d->size; j++) {
      ((int32_t *)(void *)d->begin)[j] = (int32_t)(i + (intptr_t)j);
    }
  }
  REQUIRE(ok);
  REQUIRE_OK(ck_set_num_threads(2));
  CHECK_OK(ck_array_assign(dst, src, CK_ERRMODE_DEFAULT));
  ck_memblock *arena =
      ((const ck_var_dim_arrmeta *)(const void *)(ck_array_arrmeta(dst) +
                                                   sizeof(ck_dim_arrmeta)))->blockref;
  const char **b = calloc((size_t)n, sizeof *b);
  size_t *len = calloc((size_t)n, sizeof *len);
  REQUIRE(b != NULL && len != NULL);
  for (intptr_t i = 0; i < n && ok; i++) {
    const ck_var_dim_data *d = (const ck_var_dim_data *)(const void *)(
        dst->data + i * (intptr_t)sizeof(ck_var_dim_data));
    ok = d->size == (size_t)(i % 5);
    for (size_t j = 0; ok && j < d->size; j++) {
      ok = ((const int32_t *)(const void *)d->begin)[j] == (int32_t)(i + (intptr_t)j);
    }
    b[i] = d->begin;
    len[i] = d->size * sizeof(int32_t);
  }
  CHECK(ok);
  CHECK(ranges_in_arena(arena, (size_t)n, b, len));
  CHECK(chunk_count(arena) > 1);
  free(b);
  free(len);
  ck_array_decref(dst);
  ck_array_decref(src);
  CHECK_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

/* A string-writing kernel that fails on one element (a user kernel: its
 * arena taken from the destination arrmeta it is built for).  It notes
 * whether a thread other than the test's wrote a string. */
static pthread_t label_caller;
static atomic_bool label_other_thread;

typedef struct {
  ck_prefix base;
  ck_memblock *arena;
  int64_t fail_at;
} label_kernel;

static int label_strided(char *dst, intptr_t dst_stride, const char *const *src,
                         const intptr_t *src_stride, size_t n, ck_prefix *self) {
  const label_kernel *k = (const label_kernel *)(void *)self;
  for (size_t i = 0; i < n; i++) {
    int64_t v = *(const int64_t *)(const void *)(src[0] + (intptr_t)i * src_stride[0]);
    if (v == k->fail_at) {
      return ck_set_error(CK_ERR_VALUE, "label: the failing element");
    }
    char text[32];
    int len = snprintf(text, sizeof text, "label-%" PRId64, v);
    char *b, *e;
    ck_status st = ck_pod_allocate(k->arena, (size_t)len, 1, &b, &e);
    if (st != CK_OK) {
      return st;
    }
    memcpy(b, text, (size_t)len);
    if (!pthread_equal(pthread_self(), label_caller)) {
      atomic_store(&label_other_thread, true);
    }
    ck_string *s = (ck_string *)(void *)(dst + (intptr_t)i * dst_stride);
    s->begin = b;
    s->end = e;
  }
  return CK_OK;
}

static int label_single(char *dst, const char *const *src, ck_prefix *self) {
  intptr_t stride = 0;
  return label_strided(dst, 0, src, &stride, 1, self);
}

static void label_destruct(ck_prefix *self) {
  label_kernel *k = (label_kernel *)(void *)self;
  ck_memblock_decref(k->arena);
  k->arena = NULL;
}

static ck_status label_factory(void *child_data, ck_kernel_builder *ckb, size_t offset,
                               ck_type dst_type, const char *dst_arrmeta, size_t nsrc,
                               const ck_type *src_types, const char *const *src_arrmeta,
                               ck_kernel_request req, size_t *out_end) {
  (void)dst_type, (void)nsrc, (void)src_types, (void)src_arrmeta;
  size_t end = offset + sizeof(label_kernel);
  ck_status st = ck_kernel_builder_ensure_capacity_leaf(ckb, end);
  if (st != CK_OK) {
    return st;
  }
  label_kernel *k = (label_kernel *)(void *)ck_kernel_builder_get(ckb, offset);
  k->base.destructor = label_destruct;
  k->arena = ((const ck_string_arrmeta *)(const void *)dst_arrmeta)->blockref;
  ck_memblock_incref(k->arena);
  k->fail_at = *(const int64_t *)child_data;
  (void)ck_prefix_set_function(&k->base, req, label_single, label_strided);
  if (out_end != NULL) {
    *out_end = end;
  }
  return CK_OK;
}

/* A failure on one thread: its status and message reach the caller, a new
 * result is dropped whole (no memblock leaks), and in a given destination
 * every row written before the failure points into its arena (the
 * threads' arenas were adopted, not freed: ASan and valgrind check the
 * reads). */
static void test_parallel_string_failure(void) {
  intptr_t n = 300000;
  ck_array_preamble *x = iota(n), *r = NULL;
  ck_array_preamble *out = arr("strided * string", 1, &n);
  REQUIRE(x != NULL && out != NULL);
  ck_type str = NULL;
  REQUIRE_OK(ck_string_type_new(&str));
  REQUIRE_OK(ck_set_num_threads(2));
  int64_t fail_at = n / 2 + 7;
  CHECK_ERR(ck_array_apply(label_factory, &fail_at, str, 1, &x, NULL, &r), CK_ERR_VALUE,
            "the failing element");
  CHECK(r == NULL);
  CHECK_ERR(ck_array_apply(label_factory, &fail_at, str, 1, &x, out, NULL), CK_ERR_VALUE,
            "the failing element");
  const ck_string *s = (const ck_string *)(const void *)out->data;
  const char **b = calloc((size_t)n, sizeof *b);
  size_t *len = calloc((size_t)n, sizeof *len);
  REQUIRE(b != NULL && len != NULL);
  bool ok = true;
  size_t written = 0;
  for (intptr_t i = 0; i < n && ok; i++) {
    b[i] = s[i].begin;
    len[i] = (size_t)(s[i].end - s[i].begin);
    if (len[i] > 0) {
      char text[32];
      int tl = snprintf(text, sizeof text, "label-%" PRIdPTR, i);
      ok = len[i] == (size_t)tl && memcmp(b[i], text, len[i]) == 0;
      written++;
    }
  }
  CHECK(ok && written > 0 && written < (size_t)n);
  CHECK(ranges_in_arena(string_arena(out), (size_t)n, b, len));
  free(b);
  free(len);
  /* the same kernel without the failure fills every row; run until the
   * second thread took part (scheduling decides; one run nearly always):
   * the rows it wrote are in the destination's arena too */
  fail_at = -1;
  label_caller = pthread_self();
  atomic_store(&label_other_thread, false);
  b = calloc((size_t)n, sizeof *b);
  len = calloc((size_t)n, sizeof *len);
  REQUIRE(b != NULL && len != NULL);
  for (int tries = 0; tries < 50 && !atomic_load(&label_other_thread); tries++) {
    CHECK_OK(ck_array_apply(label_factory, &fail_at, str, 1, &x, out, NULL));
    ok = true;
    for (intptr_t i = 0; i < n && ok; i++) {
      char text[32];
      int tl = snprintf(text, sizeof text, "label-%" PRIdPTR, i);
      b[i] = s[i].begin;
      len[i] = (size_t)(s[i].end - s[i].begin);
      ok = len[i] == (size_t)tl && memcmp(b[i], text, len[i]) == 0;
    }
    CHECK(ok && ranges_in_arena(string_arena(out), (size_t)n, b, len));
  }
  CHECK(atomic_load(&label_other_thread));
  free(b);
  free(len);
  ck_type_decref(str);
  ck_array_decref(out);
  ck_array_decref(x);
  CHECK_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

/* Every allocation of a parallel string application failing in turn (the
 * workers' arenas, trees and chunks included, on whichever thread): a
 * CK_ERR_NO_MEMORY status, no result, nothing leaked. */
static void test_parallel_string_allocation_failures(void) {
  intptr_t n = 70000; /* just above the split threshold */
  ck_array_preamble *x = iota(n), *r = NULL;
  REQUIRE(x != NULL);
  ck_errmode mode = CK_ERRMODE_DEFAULT;
  ck_type str = NULL;
  REQUIRE_OK(ck_string_type_new(&str));
  REQUIRE_OK(ck_set_num_threads(2));
  int failures = 0;
  ck_test_faults f = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&f)) {
    ck_status st = ck_array_apply(ck_assignment_child_factory, &mode, str, 1, &x, NULL, &r);
    bool fired = ck_test_faults_fired(&f);
    if (st != CK_OK) {
      CHECK(st == CK_ERR_NO_MEMORY && r == NULL);
      failures++;
    } else {
      CHECK(r != NULL);
      ck_array_decref(r);
      r = NULL;
    }
    if (!fired) {
      break;
    }
  }
  CHECK(failures > 10);
  ck_type_decref(str);
  ck_array_decref(x);
  CHECK_OK(ck_set_num_threads(0));
  CHECK_OK(ck_thread_pool_shutdown()); /* no worker outlives the test (valgrind) */
}

/* ---- one kernel per builder slot ---------------------------------------------- */

static void test_builder_slot_holds_one_kernel(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  ck_type t = P("strided * string");
  ck_array_preamble *a = arr("strided * string", 1, (intptr_t[]){3});
  REQUIRE(t != NULL && a != NULL);
  /* a kernel with a destructor (it holds a reference to the arena) */
  REQUIRE_OK(ck_make_assignment_kernel(&kb, 0, a->type, ck_array_arrmeta(a), a->type,
                                       ck_array_arrmeta(a), CK_KERNEL_REQUEST_SINGLE,
                                       CK_ERRMODE_DEFAULT, NULL));
  /* building a second one into the same slot is refused, whatever the factory */
  CHECK_ERR(ck_make_assignment_kernel(&kb, 0, a->type, ck_array_arrmeta(a), a->type,
                                      ck_array_arrmeta(a), CK_KERNEL_REQUEST_SINGLE,
                                      CK_ERRMODE_DEFAULT, NULL),
            CK_ERR_INVALID_STATE, "already holds a kernel at offset 0");
  CHECK_ERR(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_INT32, CK_TYPE_INT8,
                                              CK_KERNEL_REQUEST_SINGLE,
                                              CK_ERRMODE_DEFAULT, NULL),
            CK_ERR_INVALID_STATE, "ck_kernel_builder_reset");
  CHECK_ERR(ck_make_pod_copy_kernel(&kb, 0, 8, CK_KERNEL_REQUEST_SINGLE, NULL),
            CK_ERR_INVALID_STATE, "already holds");
  const ck_op *add = NULL;
  REQUIRE_OK(ck_op_find("add", &add));
  ck_type_id ids[2] = {CK_TYPE_INT32, CK_TYPE_INT32};
  CHECK_ERR(ck_op_make_kernel(add, &kb, 0, CK_KERNEL_REQUEST_SINGLE, 2, ids, NULL, NULL),
            CK_ERR_INVALID_STATE, "already holds");
  /* after a reset the slot is free again (and the first kernel was destroyed:
   * valgrind and the memblock count see no leak) */
  ck_kernel_builder_reset(&kb);
  CHECK_OK(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_INT32, CK_TYPE_INT8,
                                             CK_KERNEL_REQUEST_SINGLE,
                                             CK_ERRMODE_DEFAULT, NULL));
  ck_kernel_builder_destroy(&kb);
  ck_type_decref(t);
  ck_array_decref(a);
}

CK_TEST_MAIN(CK_TEST(test_assign_shifted_views), CK_TEST(test_apply_op_overlapping_out),
             CK_TEST(test_in_place_copies_nothing), CK_TEST(test_out_of_another_dtype),
             CK_TEST(test_string_result_arena_trimmed),
             CK_TEST(test_concurrent_string_writers),
             CK_TEST(test_parallel_string_results), CK_TEST(test_parallel_var_results),
             CK_TEST(test_parallel_string_failure),
             CK_TEST(test_parallel_string_allocation_failures),
             CK_TEST(test_builder_slot_holds_one_kernel))
