/* The pod allocator API: sequences, alignments, misuse, limits, zero-init,
 * finalize, and a randomized run checked against a simple model. */
#include "ck_test.h"
#include "core/core_internal.h" /* CK__SPARE_SLOTS */

static ck_memblock *new_arena(bool zero, size_t cap) {
  ck_memblock *mb = NULL;
  ck_status st = zero ? ck_zeroinit_memblock_new(cap, &mb)
                      : ck_pod_memblock_new(cap, &mb);
  return st == CK_OK ? mb : NULL;
}

static void test_api_table(void) {
  ck_memblock *mb = new_arena(false, 0);
  REQUIRE(mb != NULL);
  const ck_pod_allocator_api *api = ck_memblock_pod_allocator_api(mb);
  REQUIRE(api != NULL);
  CHECK(api->allocate == ck_pod_allocate);
  CHECK(api->resize == ck_pod_resize);
  CHECK(api->finalize == ck_pod_finalize);
  ck_memblock_decref(mb);

  char *data;
  REQUIRE_OK(ck_fixed_size_pod_memblock_new(8, 8, &mb, &data));
  ck_clear_error();
  CHECK(ck_memblock_pod_allocator_api(mb) == NULL);
  CHECK(ck_last_status() == CK_ERR_TYPE);
  CHECK(strstr(ck_last_error(), "has no pod allocator") != NULL);
  char *b, *e;
  CHECK_ERR(ck_pod_allocate(mb, 8, 1, &b, &e), CK_ERR_TYPE, "fixed_size_pod");
  ck_memblock_decref(mb);
  CHECK(ck_memblock_pod_allocator_api(NULL) == NULL);
}

/* The seed's protocol: allocate a guess, grow by doubling, trim, finalize. */
static void test_grow_shrink_finalize(void) {
  for (int z = 0; z <= 1; z++) {
    ck_memblock *mb = new_arena(z, 32);
    REQUIRE(mb != NULL);
    const ck_pod_allocator_api *api = ck_memblock_pod_allocator_api(mb);
    char *keep_b, *keep_e;
    REQUIRE_OK(api->allocate(mb, 5, 1, &keep_b, &keep_e));
    memcpy(keep_b, "hello", 5);

    char *b, *e;
    REQUIRE_OK(api->allocate(mb, 4, 1, &b, &e));
    size_t n = 0;
    for (size_t cap = 4; cap < 100000; cap *= 2) {
      REQUIRE_OK(api->resize(mb, cap, &b, &e));
      CHECK((size_t)(e - b) == cap);
      for (; n < cap; n++) {
        if (z) {
          CHECK(b[n] == 0); /* zero-init: new bytes read as zero */
        }
        b[n] = (char)(n * 7);
      }
    }
    int intact = 1;
    for (size_t i = 0; i < n; i++) {
      intact &= b[i] == (char)(i * 7);
    }
    CHECK(intact);                         /* contents survive moves   */
    CHECK(memcmp(keep_b, "hello", 5) == 0); /* earlier data never moves */
    REQUIRE_OK(api->resize(mb, 1000, &b, &e)); /* trim */
    CHECK(e - b == 1000);
    ck_pod_stats before, after;
    REQUIRE_OK(ck_pod_memblock_stats(mb, &before));
    CHECK(before.allocations == 2);
    REQUIRE_OK(api->finalize(mb));
    REQUIRE_OK(ck_pod_memblock_stats(mb, &after));
    CHECK(after.finalized);
    CHECK(after.capacity <= before.capacity);
    CHECK(after.used == before.used);
    CHECK(memcmp(keep_b, "hello", 5) == 0);
    intact = 1;
    for (size_t i = 0; i < 1000; i++) {
      intact &= b[i] == (char)(i * 7);
    }
    CHECK(intact);
    /* After finalize: no allocate, no resize; finalize again is fine. */
    char *b2, *e2;
    CHECK_ERR(api->allocate(mb, 1, 1, &b2, &e2), CK_ERR_INVALID_STATE, "finalized");
    CHECK_ERR(api->resize(mb, 10, &b, &e), CK_ERR_INVALID_STATE, "finalized");
    CHECK_OK(api->finalize(mb));
    ck_memblock_decref(mb);
  }
}

/* finalize returns the unused tail of a large (mapped) chunk. */
static void test_finalize_trims(void) {
  ck_memblock *mb = new_arena(false, 1 << 20);
  REQUIRE(mb != NULL);
  char *b, *e;
  REQUIRE_OK(ck_pod_allocate(mb, 100, 1, &b, &e));
  memset(b, 1, 100);
  ck_pod_stats st;
  REQUIRE_OK(ck_pod_memblock_stats(mb, &st));
  CHECK(st.capacity >= (1 << 20));
  REQUIRE_OK(ck_pod_finalize(mb));
  REQUIRE_OK(ck_pod_memblock_stats(mb, &st));
  CHECK(st.capacity < 8192);
  CHECK(st.used == 100);
  CHECK(b[99] == 1);
  ck_memblock_decref(mb);

  /* An arena that never allocated holds nothing after finalize. */
  mb = new_arena(false, 0);
  REQUIRE_OK(ck_pod_finalize(mb));
  REQUIRE_OK(ck_pod_memblock_stats(mb, &st));
  CHECK(st.capacity == 0 && st.chunks == 0);
  ck_memblock_decref(mb);
}

static void test_alignments(void) {
  for (int z = 0; z <= 1; z++) {
    ck_memblock *mb = new_arena(z, 16);
    REQUIRE(mb != NULL);
    for (size_t align = 1; align <= 4096; align *= 2) {
      for (size_t size = 0; size < 40; size += 13) {
        char *b, *e;
        REQUIRE_OK(ck_pod_allocate(mb, size, align, &b, &e));
        CHECK(((uintptr_t)b & (align - 1)) == 0);
        CHECK((size_t)(e - b) == size);
        memset(b, 0x5A, size);
        /* Growing keeps the alignment even when the allocation moves. */
        REQUIRE_OK(ck_pod_resize(mb, size + 5000, &b, &e));
        CHECK(((uintptr_t)b & (align - 1)) == 0);
      }
    }
    char *b, *e;
    size_t bad[] = {0, 3, 6, 12, 100, 8192, SIZE_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      CHECK_ERR(ck_pod_allocate(mb, 8, bad[i], &b, &e), CK_ERR_INVALID_ARGUMENT,
                "not a power of two");
    }
    ck_memblock_decref(mb);
  }
}

static void test_resize_only_latest(void) {
  ck_memblock *mb = new_arena(false, 0);
  REQUIRE(mb != NULL);
  char *b1, *e1, *b2, *e2;
  char *nb = NULL, *ne = NULL;
  CHECK_ERR(ck_pod_resize(mb, 4, &nb, &ne), CK_ERR_INVALID_STATE,
            "not the most recent allocation");
  REQUIRE_OK(ck_pod_allocate(mb, 8, 1, &b1, &e1));
  REQUIRE_OK(ck_pod_allocate(mb, 8, 1, &b2, &e2));
  char *ob = b1, *oe = e1;
  CHECK_ERR(ck_pod_resize(mb, 16, &b1, &e1), CK_ERR_INVALID_STATE,
            "not the most recent allocation");
  CHECK(b1 == ob && e1 == oe); /* untouched on error */
  /* A forged pair (right begin, wrong end) is rejected too. */
  char *fe = e2 + 1;
  CHECK_ERR(ck_pod_resize(mb, 16, &b2, &fe), CK_ERR_INVALID_STATE,
            "most recent");
  CHECK_OK(ck_pod_resize(mb, 16, &b2, &e2));
  CHECK_ERR(ck_pod_resize(mb, 4, NULL, &e2), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_memblock_decref(mb);
}

static void test_limits(void) {
  ck_memblock *mb = new_arena(false, 0);
  REQUIRE(mb != NULL);
  char *b = NULL, *e = NULL;
  /* Size 0: valid, begin == end, non-NULL. */
  REQUIRE_OK(ck_pod_allocate(mb, 0, 8, &b, &e));
  CHECK(b != NULL && b == e);
  CHECK_OK(ck_pod_resize(mb, 0, &b, &e));
  CHECK_OK(ck_pod_resize(mb, 3, &b, &e));
  CHECK(e - b == 3);
  /* Huge sizes are overflow errors and leave the arena usable. */
  CHECK_ERR(ck_pod_allocate(mb, SIZE_MAX, 1, &b, &e), CK_ERR_OVERFLOW, "too large");
  CHECK_ERR(ck_pod_allocate(mb, SIZE_MAX - 4095, 4096, &b, &e), CK_ERR_OVERFLOW,
            "too large");
  CHECK_ERR(ck_pod_allocate(mb, (size_t)PTRDIFF_MAX + 1, 1, &b, &e),
            CK_ERR_OVERFLOW, "too large");
  REQUIRE_OK(ck_pod_allocate(mb, 4, 1, &b, &e));
  CHECK_ERR(ck_pod_resize(mb, SIZE_MAX, &b, &e), CK_ERR_OVERFLOW, "too large");
  CHECK(e - b == 4); /* unchanged */
  CHECK_OK(ck_pod_resize(mb, 8, &b, &e));
  CHECK_ERR(ck_pod_allocate(NULL, 1, 1, &b, &e), CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(ck_pod_allocate(mb, 1, 1, NULL, &e), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_memblock *m2 = NULL;
  CHECK_ERR(ck_pod_memblock_new(SIZE_MAX, &m2), CK_ERR_OVERFLOW, "too large");
  CHECK(m2 == NULL);
  ck_memblock_decref(mb);
}

/* Zero-init: shrinking then growing in place must expose zeros again. */
static void test_zeroinit_regrow(void) {
  ck_memblock *mb = new_arena(true, 256);
  REQUIRE(mb != NULL);
  char *b, *e;
  REQUIRE_OK(ck_pod_allocate(mb, 100, 1, &b, &e));
  memset(b, 0xFF, 100);
  REQUIRE_OK(ck_pod_resize(mb, 10, &b, &e));
  REQUIRE_OK(ck_pod_resize(mb, 100, &b, &e));
  int zeros = 1;
  for (int i = 10; i < 100; i++) {
    zeros &= b[i] == 0;
  }
  CHECK(zeros);
  char *b2, *e2;
  REQUIRE_OK(ck_pod_allocate(mb, 50, 16, &b2, &e2));
  zeros = 1;
  for (int i = 0; i < 50; i++) {
    zeros &= b2[i] == 0;
  }
  CHECK(zeros);
  ck_memblock_decref(mb);
}

/* ---- randomized run against a model ------------------------------------ */

typedef struct {
  char *begin;
  size_t size;
  unsigned char fill;
} model_alloc;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static int model_intact(const model_alloc *m, size_t n) {
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < m[i].size; j++) {
      if ((unsigned char)m[i].begin[j] != m[i].fill) {
        return 0;
      }
    }
  }
  return 1;
}

static void test_randomized_model(void) {
  enum { MAXA = 600 };
  static model_alloc m[MAXA];
  long rounds = ck_test_scaled(40);
  for (long round = 0; round < rounds; round++) {
    bool zero = round % 2;
    ck_memblock *mb = new_arena(zero, (size_t)(rng() % 200));
    REQUIRE(mb != NULL);
    size_t n = 0;
    size_t expect_used_min = 0;
    for (int op = 0; op < MAXA * 2 && n < MAXA; op++) {
      uint64_t r = rng() % 10;
      if (r < 6 || n == 0) {
        size_t align = (size_t)1 << (rng() % 13);
        size_t size = (size_t)(rng() % 300);
        if (rng() % 50 == 0) {
          size = 70000 + (size_t)(rng() % 70000); /* a mapped chunk */
        }
        char *b, *e;
        REQUIRE_OK(ck_pod_allocate(mb, size, align, &b, &e));
        CHECK(((uintptr_t)b & (align - 1)) == 0);
        if (zero) {
          for (size_t j = 0; j < size; j++) {
            if (b[j] != 0) {
              CHECK(b[j] == 0);
              break;
            }
          }
        }
        m[n].begin = b;
        m[n].size = size;
        m[n].fill = (unsigned char)(rng() | 1);
        memset(b, m[n].fill, size);
        n++;
        expect_used_min += size;
      } else if (r < 9) {
        model_alloc *last = &m[n - 1];
        size_t size = (size_t)(rng() % 2000);
        char *b = last->begin, *e = last->begin + last->size;
        REQUIRE_OK(ck_pod_resize(mb, size, &b, &e));
        size_t keep = size < last->size ? size : last->size;
        for (size_t j = 0; j < keep; j++) {
          if ((unsigned char)b[j] != last->fill) {
            CHECK((unsigned char)b[j] == last->fill);
            break;
          }
        }
        if (zero) {
          for (size_t j = keep; j < size; j++) {
            if (b[j] != 0) {
              CHECK(b[j] == 0);
              break;
            }
          }
        }
        memset(b, last->fill, size);
        expect_used_min = expect_used_min - last->size + size;
        last->begin = b;
        last->size = size;
      } else if (n >= 2) {
        /* Resizing anything but the latest must fail and change nothing. */
        size_t i = (size_t)(rng() % (n - 1));
        char *b = m[i].begin, *e = m[i].begin + m[i].size;
        ck_status st = ck_pod_resize(mb, m[i].size + 1, &b, &e);
        /* Zero-size allocations can coincide with the latest's begin. */
        if (m[i].begin != m[n - 1].begin || m[i].size != m[n - 1].size) {
          CHECK(st == CK_ERR_INVALID_STATE);
          CHECK(b == m[i].begin);
        }
      }
    }
    CHECK(model_intact(m, n));
    ck_pod_stats st;
    REQUIRE_OK(ck_pod_memblock_stats(mb, &st));
    CHECK(st.used >= expect_used_min);
    CHECK(st.capacity >= st.used);
    CHECK(st.allocations == n);
    REQUIRE_OK(ck_pod_finalize(mb));
    CHECK(model_intact(m, n));
    ck_memblock_decref(mb);
  }
}

/* trim gives back the unused pages of the newest chunk, keeps the arena
 * open (allocate and resize go on, old bytes intact), and gives back a
 * newest chunk that never handed out a byte. */
static void test_trim_keeps_the_arena_open(void) {
  for (int zero = 0; zero < 2; zero++) {
    ck_memblock *mb = NULL;
    REQUIRE_OK(zero ? ck_zeroinit_memblock_new(0, &mb) : ck_pod_memblock_new(0, &mb));
    char *first = NULL, *b = NULL, *e = NULL;
    size_t total = 0;
    for (int i = 0; i < 30000; i++) { /* ~330 KB of small strings */
      char text[32];
      int len = snprintf(text, sizeof text, "item-%d", i);
      REQUIRE_OK(ck_pod_allocate(mb, (size_t)len, 1, &b, &e));
      memcpy(b, text, (size_t)len);
      first = first ? first : b;
      total += (size_t)len;
    }
    ck_pod_stats before, after;
    REQUIRE_OK(ck_pod_memblock_stats(mb, &before));
    CHECK_OK(ck_pod_trim(mb));
    REQUIRE_OK(ck_pod_memblock_stats(mb, &after));
    CHECK(after.capacity < before.capacity);
    CHECK(after.used == before.used && !after.finalized);
    CHECK(after.capacity <= total + total / 8 + 3 * 4096 + 4096); /* page slack */
    CHECK(memcmp(first, "item-0", 6) == 0);
    /* the latest allocation can still be resized, and allocation goes on */
    CHECK_OK(ck_pod_resize(mb, 40000, &b, &e));
    CHECK(memcmp(b, "item-29999", 10) == 0);
    if (zero) {
      bool zeros = true;
      for (char *p = b + 10; p < e; p++) {
        zeros = zeros && *p == 0;
      }
      CHECK(zeros);
    }
    CHECK_OK(ck_pod_allocate(mb, 100, 8, &b, &e));
    memset(b, 'x', 100);
    CHECK_OK(ck_pod_trim(mb));
    CHECK_OK(ck_pod_trim(mb)); /* idempotent */
    CHECK_OK(ck_pod_allocate(mb, 5, 1, &b, &e));
    CHECK_OK(ck_pod_finalize(mb));
    CHECK_OK(ck_pod_trim(mb)); /* no-op once finalized */
    CHECK_ERR(ck_pod_allocate(mb, 5, 1, &b, &e), CK_ERR_INVALID_STATE, "finalized");
    ck_memblock_decref(mb);
  }
  /* a fresh arena and a non-arena block */
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_pod_memblock_new(0, &mb));
  CHECK_OK(ck_pod_trim(mb));
  char *b = NULL, *e = NULL;
  CHECK_OK(ck_pod_allocate(mb, 3, 1, &b, &e));
  ck_memblock_decref(mb);
  char *data = NULL;
  REQUIRE_OK(ck_fixed_size_pod_memblock_new(8, 8, &mb, &data));
  CHECK_ERR(ck_pod_trim(mb), CK_ERR_TYPE, "no pod allocator");
  ck_memblock_decref(mb);
}

/* ck_pod_memblock_chunks: oldest first, every allocation inside the chunk
 * it came from, the used bytes adding up to the stats, the max/count
 * protocol, and errors for NULLs and non-arenas. */
static void test_chunk_list(void) {
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_pod_memblock_new(64, &mb));
  size_t n = 99;
  CHECK_OK(ck_pod_memblock_chunks(mb, NULL, 0, &n));
  CHECK(n == 0); /* no chunk before the first allocation */
  char *b[4], *e[4];
  size_t sizes[4] = {40, 100, 200, 5};
  for (int i = 0; i < 4; i++) {
    REQUIRE_OK(ck_pod_allocate(mb, sizes[i], 1, &b[i], &e[i]));
  }
  ck_pod_chunk_info info[8];
  memset(info, 0xab, sizeof info);
  REQUIRE_OK(ck_pod_memblock_chunks(mb, info, 8, &n));
  ck_pod_stats st;
  REQUIRE_OK(ck_pod_memblock_stats(mb, &st));
  REQUIRE(n == st.chunks && n == 3); /* 64: {40}, 128: {100}, 256: {200, 5} */
  size_t used = 0, cap = 0;
  for (size_t i = 0; i < n; i++) {
    used += info[i].used;
    cap += info[i].capacity;
    CHECK(info[i].used <= info[i].capacity && info[i].mapped == 0 &&
          info[i].reserved_ == 0);
  }
  CHECK(used == st.used && cap == st.capacity);
  CHECK(info[0].capacity == 64 && info[1].capacity == 128 && info[2].capacity == 256);
  /* allocation i lies in the chunk the growth rule put it in */
  size_t chunk_of[4] = {0, 1, 2, 2};
  for (int i = 0; i < 4; i++) {
    const ck_pod_chunk_info *c = &info[chunk_of[i]];
    CHECK(b[i] >= c->begin && e[i] <= c->begin + c->used);
  }
  /* max smaller than the count: the oldest entries, the full count */
  ck_pod_chunk_info two[2];
  REQUIRE_OK(ck_pod_memblock_chunks(mb, two, 2, &n));
  CHECK(n == 3 && two[0].begin == info[0].begin && two[1].begin == info[1].begin);
  /* finalize: the head keeps its used bytes */
  CHECK_OK(ck_pod_finalize(mb));
  REQUIRE_OK(ck_pod_memblock_chunks(mb, info, 8, &n));
  CHECK(n == 3 && info[2].used == 205);
  CHECK_ERR(ck_pod_memblock_chunks(mb, NULL, 1, &n), CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(ck_pod_memblock_chunks(mb, info, 8, NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_memblock_decref(mb);
  /* large chunks are page mappings */
  REQUIRE_OK(ck_zeroinit_memblock_new(0, &mb));
  REQUIRE_OK(ck_pod_allocate(mb, 100000, 16, &b[0], &e[0]));
  REQUIRE_OK(ck_pod_memblock_chunks(mb, info, 8, &n));
  CHECK(n == 1 && info[0].mapped == 1 && info[0].used == 100000);
  ck_memblock_decref(mb);
  char *data = NULL;
  REQUIRE_OK(ck_fixed_size_pod_memblock_new(8, 8, &mb, &data));
  CHECK_ERR(ck_pod_memblock_chunks(mb, info, 8, &n), CK_ERR_TYPE, "no pod allocator");
  ck_memblock_decref(mb);
  CHECK_ERR(ck_pod_memblock_chunks(NULL, info, 8, &n), CK_ERR_INVALID_ARGUMENT, "NULL");
}

/* Fill `mb` with `count` strings "<tag>-<i>": their pointers into b/e. */
static bool fill_tagged(ck_memblock *mb, char tag, int count, char **b, char **e) {
  for (int i = 0; i < count; i++) {
    char text[32];
    int len = snprintf(text, sizeof text, "%c-%d", tag, i);
    if (ck_pod_allocate(mb, (size_t)len, 1, &b[i], &e[i]) != CK_OK) {
      return false;
    }
    memcpy(b[i], text, (size_t)len);
  }
  return true;
}

static bool tagged_intact(char tag, int count, char *const *b, char *const *e) {
  bool ok = true;
  for (int i = 0; i < count && ok; i++) {
    char text[32];
    int len = snprintf(text, sizeof text, "%c-%d", tag, i);
    ok = e[i] - b[i] == len && memcmp(b[i], text, (size_t)len) == 0;
  }
  return ok;
}

/* Does every allocation lie inside one chunk of `mb`? */
static bool inside_chunks(const ck_memblock *mb, int count, char *const *b, char *const *e) {
  ck_pod_chunk_info info[64];
  size_t n = 0;
  if (ck_pod_memblock_chunks(mb, info, 64, &n) != CK_OK || n > 64) {
    return false;
  }
  for (int i = 0; i < count; i++) {
    bool in = false;
    for (size_t c = 0; c < n && !in; c++) {
      in = b[i] >= info[c].begin && e[i] <= info[c].begin + info[c].used;
    }
    if (!in) {
      return false;
    }
  }
  return true;
}

/* ck_pod_memblock_adopt: the source's chunks move into the destination
 * without a byte moving (its data outlives the source), the destination's
 * head and latest allocation stay its own, the source is left empty and
 * open; a destination without chunks takes the source's newest; errors
 * change nothing. */
static void test_adopt(void) {
  enum { N = 20000 }; /* several chunks each, the newest a page mapping */
  static char *ab[N], *ae[N], *bb[N], *be[N];
  for (int zero = 0; zero < 2; zero++) {
    ck_memblock *a = new_arena(zero, 0), *b = new_arena(zero, 0);
    REQUIRE(a != NULL && b != NULL);
    REQUIRE(fill_tagged(a, 'a', N, ab, ae) && fill_tagged(b, 'b', N, bb, be));
    ck_pod_stats sa, sb, after;
    REQUIRE_OK(ck_pod_memblock_stats(a, &sa));
    REQUIRE_OK(ck_pod_memblock_stats(b, &sb));
    REQUIRE_OK(ck_pod_memblock_adopt(a, b));
    REQUIRE_OK(ck_pod_memblock_stats(a, &after));
    CHECK(after.chunks == sa.chunks + sb.chunks);
    CHECK(after.used == sa.used + sb.used);
    CHECK(after.allocations == sa.allocations + sb.allocations);
    CHECK(after.capacity <= sa.capacity + sb.capacity); /* b's unused pages went back */
    REQUIRE_OK(ck_pod_memblock_stats(b, &sb));
    CHECK(sb.chunks == 0 && sb.used == 0 && sb.allocations == 0 && !sb.finalized);
    /* b's strings live on in a's chunks after b is gone */
    ck_memblock_decref(b);
    CHECK(tagged_intact('a', N, ab, ae) && tagged_intact('b', N, bb, be));
    CHECK(inside_chunks(a, N, ab, ae) && inside_chunks(a, N, bb, be));
    /* a's latest allocation is still the one resize takes, in a's head */
    char *rb = ab[N - 1], *re = ae[N - 1];
    CHECK_OK(ck_pod_resize(a, 6, &rb, &re));
    CHECK(rb == ab[N - 1]);
    char *nb, *ne;
    REQUIRE_OK(ck_pod_allocate(a, 8, 1, &nb, &ne));
    CHECK(nb >= re); /* from a's own head, after its latest allocation */
    if (zero) {
      CHECK(memcmp(nb, "\0\0\0\0\0\0\0\0", 8) == 0);
    }
    ck_memblock_decref(a);
  }
  /* a destination without chunks takes the source's newest chunk: it goes
   * on allocating there, and has no latest allocation to resize */
  ck_memblock *a = new_arena(false, 0), *b = new_arena(false, 0);
  REQUIRE(a != NULL && b != NULL);
  REQUIRE(fill_tagged(b, 'b', 10, bb, be));
  REQUIRE_OK(ck_pod_memblock_adopt(a, b));
  char *rb = bb[9], *re = be[9];
  CHECK_ERR(ck_pod_resize(a, 20, &rb, &re), CK_ERR_INVALID_STATE, "most recent");
  char *nb, *ne;
  REQUIRE_OK(ck_pod_allocate(a, 4, 1, &nb, &ne));
  CHECK(nb == be[9]); /* right after b's last string, in the same chunk */
  ck_pod_stats st;
  REQUIRE_OK(ck_pod_memblock_stats(a, &st));
  CHECK(st.chunks == 1 && st.allocations == 11);
  /* b is open: a new chunk of its own */
  REQUIRE_OK(ck_pod_allocate(b, 4, 1, &nb, &ne));
  REQUIRE_OK(ck_pod_memblock_stats(b, &st));
  CHECK(st.chunks == 1 && st.allocations == 1);
  /* an empty source and a finalized source */
  ck_memblock *c = new_arena(false, 0);
  REQUIRE(c != NULL);
  CHECK_OK(ck_pod_memblock_adopt(a, c));
  REQUIRE(fill_tagged(c, 'c', 10, ab, ae));
  CHECK_OK(ck_pod_finalize(c));
  CHECK_OK(ck_pod_memblock_adopt(a, c));
  ck_memblock_decref(c);
  CHECK(tagged_intact('c', 10, ab, ae) && inside_chunks(a, 10, ab, ae));
  /* errors change nothing */
  ck_memblock *z = new_arena(true, 0);
  REQUIRE(z != NULL);
  REQUIRE_OK(ck_pod_memblock_stats(b, &st));
  CHECK_ERR(ck_pod_memblock_adopt(z, b), CK_ERR_TYPE, "arena into a");
  CHECK_ERR(ck_pod_memblock_adopt(a, a), CK_ERR_INVALID_ARGUMENT, "its own");
  CHECK_ERR(ck_pod_memblock_adopt(NULL, b), CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(ck_pod_memblock_adopt(a, NULL), CK_ERR_INVALID_ARGUMENT, "NULL");
  char *data = NULL;
  ck_memblock *fixed = NULL;
  REQUIRE_OK(ck_fixed_size_pod_memblock_new(8, 8, &fixed, &data));
  CHECK_ERR(ck_pod_memblock_adopt(a, fixed), CK_ERR_TYPE, "no pod allocator");
  ck_memblock_decref(fixed);
  CHECK_OK(ck_pod_finalize(z));
  ck_memblock *z2 = new_arena(true, 0);
  REQUIRE(z2 != NULL);
  CHECK_OK(ck_pod_allocate(z2, 4, 1, &nb, &ne));
  CHECK_ERR(ck_pod_memblock_adopt(z, z2), CK_ERR_INVALID_STATE, "finalized");
  ck_pod_stats st2;
  REQUIRE_OK(ck_pod_memblock_stats(b, &st2));
  CHECK(st2.chunks == st.chunks && st2.allocations == st.allocations);
  REQUIRE_OK(ck_pod_memblock_stats(z2, &st2));
  CHECK(st2.chunks == 1 && st2.allocations == 1);
  ck_memblock_decref(z2);
  ck_memblock_decref(z);
  ck_memblock_decref(b);
  ck_memblock_decref(a);
}

/* Released page-mapped chunks are kept (a few) and reused by the next pod
 * arena: the new arena's bytes are the old pages, still holding what was
 * written (no fresh, kernel-zeroed mapping, no page faults), while a
 * zero-init arena never takes them and still reads zero. */
static void test_spare_chunks(void) {
  const size_t n = ((size_t)1 << 20) + 12345; /* a size no other test leaves */
  char *b, *e;
  for (int round = 1; round <= 3; round++) {
    ck_memblock *mb = new_arena(false, n);
    REQUIRE(mb != NULL);
    REQUIRE_OK(ck_pod_allocate(mb, n, 1, &b, &e));
    if (round > 1) { /* the pages of the previous round's arena */
      CHECK(b[0] == (char)(round - 1) && b[n / 2] == (char)(round - 1) &&
            b[n - 1] == (char)(round - 1));
    }
    memset(b, round, n);
    CHECK_OK(ck_pod_finalize(mb));
    ck_memblock_decref(mb);
  }
  ck_memblock *z = new_arena(true, n);
  REQUIRE(z != NULL);
  REQUIRE_OK(ck_pod_allocate(z, n, 1, &b, &e));
  size_t nonzero = 0;
  for (size_t i = 0; i < n; i++) {
    nonzero += b[i] != 0;
  }
  CHECK(nonzero == 0);
  ck_memblock_decref(z);
  /* more arenas alive at once than there are spare slots: the extra chunks
   * are unmapped on release (valgrind/ASan: nothing lost) */
  ck_memblock *many[CK__SPARE_SLOTS + 4];
  for (size_t i = 0; i < CK__SPARE_SLOTS + 4; i++) {
    many[i] = new_arena(false, (size_t)CK_POD_MAP_THRESHOLD << (i % 3));
    REQUIRE(many[i] != NULL);
    REQUIRE_OK(ck_pod_allocate(many[i], 100, 1, &b, &e));
    memset(b, 7, 100);
  }
  for (size_t i = 0; i < CK__SPARE_SLOTS + 4; i++) {
    ck_memblock_decref(many[i]);
  }
}

CK_TEST_MAIN(CK_TEST(test_api_table), CK_TEST(test_grow_shrink_finalize),
             CK_TEST(test_finalize_trims), CK_TEST(test_alignments),
             CK_TEST(test_resize_only_latest), CK_TEST(test_limits),
             CK_TEST(test_zeroinit_regrow), CK_TEST(test_randomized_model),
             CK_TEST(test_trim_keeps_the_arena_open), CK_TEST(test_chunk_list),
             CK_TEST(test_adopt), CK_TEST(test_spare_chunks))
