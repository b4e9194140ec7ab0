/* Buffers on the cpu context: the allocator (model-checked random runs,
 * merging, errors), copies, fill, memblocks, context API, fault injection. */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"

static ck_context *cpu_ctx(void) {
  ck_context *ctx = NULL;
  return ck_context_new("cpu", &ctx) == CK_OK ? ctx : NULL;
}

static void test_context_api(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  CHECK(strcmp(ck_context_kind(ctx), "cpu") == 0);
  CHECK(ck_context_supports_fp64(ctx));
  CHECK(ck_context_host_accessible(ctx));
  CHECK(ck_context_refcount(ctx) == 1);
  char buf[128];
  size_t len = 0;
  CHECK_OK(ck_context_describe(ctx, buf, sizeof buf, &len));
  CHECK(strstr(buf, "cpu") != NULL && len == strlen(buf));
  CHECK_OK(ck_context_describe(ctx, NULL, 0, &len));
  CHECK(len == strlen(buf));
  CHECK_OK(ck_context_finish(ctx));
  ck_program *p = NULL;
  CHECK_ERR(ck_context_build_program(ctx, "kernel void f(void){}", NULL, &p),
            CK_ERR_NOT_SUPPORTED, "no device program compiler");
  CHECK(p == NULL);
  ck_context *bad = NULL;
  CHECK_ERR(ck_context_new("vulkan", &bad), CK_ERR_INVALID_ARGUMENT,
            "unknown context kind 'vulkan'");
  /* cuda: a context where a driver and a device exist, else a reason */
  ck_status cst = ck_context_new("cuda", &bad);
  CHECK(cst == CK_OK || (cst == CK_ERR_BACKEND && strstr(ck_last_error(), "CUDA") != NULL));
  ck_context_decref(bad);
  bad = NULL;
  setenv("CK_OPENCL_DEVICE", "zero:1", 1);
  CHECK_ERR(ck_context_new("opencl", &bad), CK_ERR_PARSE, "CK_OPENCL_DEVICE");
  setenv("CK_OPENCL_DEVICE", "0:", 1);
  CHECK_ERR(ck_context_new("opencl", &bad), CK_ERR_PARSE, "platform:device");
  unsetenv("CK_OPENCL_DEVICE");
  CHECK(bad == NULL);
  ck_context_incref(ctx);
  CHECK(ck_context_refcount(ctx) == 2);
  ck_context_decref(ctx);
  ck_context_decref(ctx);
}

static void test_basic_copies(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  ck_buffer *b = NULL, *c = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 0, &b));
  CHECK(ck_context_refcount(ctx) == 2); /* the buffer holds one */
  CHECK(ck_buffer_capacity(b) == 0);
  size_t off = 99;
  REQUIRE_OK(ck_buffer_allocate(b, 100, 8, &off));
  CHECK(off == 0 && ck_buffer_capacity(b) >= 100 && ck_buffer_used(b) == 100);
  char msg[100];
  for (int i = 0; i < 100; i++) {
    msg[i] = (char)(i * 3 + 1);
  }
  CHECK_OK(ck_buffer_write(b, off, msg, sizeof msg));
  char back[100] = {0};
  CHECK_OK(ck_buffer_read(b, off, back, sizeof back));
  CHECK(memcmp(msg, back, 100) == 0);
  void *host = NULL;
  CHECK_OK(ck_buffer_host_pointer(b, &host));
  CHECK(host != NULL && memcmp(host, msg, 100) == 0);
  CHECK(((uintptr_t)host & 4095) == 0);
  CHECK(ck_buffer_native_handle(b) == host);

  REQUIRE_OK(ck_buffer_new(ctx, 256, &c));
  CHECK_OK(ck_buffer_copy(c, 10, b, 0, 100));
  memset(back, 0, sizeof back);
  CHECK_OK(ck_buffer_read(c, 10, back, 100));
  CHECK(memcmp(msg, back, 100) == 0);
  /* same buffer, disjoint ranges: fine; overlapping: error */
  CHECK_OK(ck_buffer_copy(c, 150, c, 10, 100));
  CHECK_OK(ck_buffer_read(c, 150, back, 100));
  CHECK(memcmp(msg, back, 100) == 0);
  CHECK_ERR(ck_buffer_copy(c, 20, c, 10, 100), CK_ERR_INVALID_ARGUMENT, "overlap");

  uint32_t pat = 0xA1B2C3D4u;
  CHECK_OK(ck_buffer_fill(c, 16, &pat, 4, 64));
  uint32_t words[16];
  CHECK_OK(ck_buffer_read(c, 16, words, sizeof words));
  int ok = 1;
  for (int i = 0; i < 16; i++) {
    ok &= words[i] == pat;
  }
  CHECK(ok);
  unsigned char z = 0x5a, bytes[7];
  CHECK_OK(ck_buffer_fill(c, 3, &z, 1, 7));
  CHECK_OK(ck_buffer_read(c, 3, bytes, 7));
  CHECK(bytes[0] == 0x5a && bytes[6] == 0x5a);
  CHECK_ERR(ck_buffer_fill(c, 2, &pat, 4, 8), CK_ERR_INVALID_ARGUMENT, "multiples");
  CHECK_ERR(ck_buffer_fill(c, 0, &pat, 3, 9), CK_ERR_INVALID_ARGUMENT, "pattern size 3");
  CHECK_ERR(ck_buffer_fill(c, 0, &pat, 4, 1024), CK_ERR_INDEX, "capacity 256");
  CHECK_ERR(ck_buffer_read(c, 250, back, 10), CK_ERR_INDEX, "outside the buffer's capacity");
  CHECK_ERR(ck_buffer_write(c, SIZE_MAX, msg, 2), CK_ERR_INDEX, "outside");
  CHECK_ERR(ck_buffer_copy(c, 0, b, 100, SIZE_MAX), CK_ERR_INDEX, "outside");

  /* different contexts */
  ck_context *ctx2 = cpu_ctx();
  ck_buffer *d = NULL;
  REQUIRE_OK(ck_buffer_new(ctx2, 64, &d));
  CHECK_ERR(ck_buffer_copy(d, 0, c, 0, 8), CK_ERR_INVALID_ARGUMENT,
            "buffers belong to different contexts");
  ck_buffer_decref(d);
  ck_context_decref(ctx2);

  /* memblock keeps the buffer alive */
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_buffer_memblock(c, &mb));
  CHECK(ck_buffer_refcount(c) == 2);
  void *obj = NULL;
  CHECK_OK(ck_external_memblock_object(mb, &obj));
  CHECK(obj == c);
  ck_buffer_decref(c);
  CHECK(ck_buffer_refcount(c) == 1);
  CHECK_OK(ck_buffer_read(c, 150, back, 100)); /* still alive */
  CHECK(memcmp(msg, back, 100) == 0);
  ck_memblock_decref(mb); /* frees c */
  ck_buffer_decref(b);
  CHECK(ck_context_refcount(ctx) == 1);
  ck_context_decref(ctx);
}

static void test_allocator_errors(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 1024, &b));
  size_t o;
  CHECK_ERR(ck_buffer_allocate(b, 0, 8, &o), CK_ERR_INVALID_ARGUMENT, "size must be > 0");
  CHECK_ERR(ck_buffer_allocate(b, 8, 3, &o), CK_ERR_INVALID_ARGUMENT, "power of two");
  CHECK_ERR(ck_buffer_allocate(b, 8, 8192, &o), CK_ERR_INVALID_ARGUMENT, "power of two");
  CHECK_ERR(ck_buffer_allocate(b, SIZE_MAX, 8, &o), CK_ERR_OVERFLOW, "too large");
  CHECK_ERR(ck_buffer_allocate(b, SIZE_MAX - 4, 8, &o), CK_ERR_OVERFLOW, "too large");
  CHECK(ck_buffer_capacity(b) == 1024);
  size_t a1, a2;
  REQUIRE_OK(ck_buffer_allocate(b, 100, 16, &a1));
  REQUIRE_OK(ck_buffer_allocate(b, 100, 16, &a2));
  CHECK(a1 == 0 && a2 == 112);
  CHECK_ERR(ck_buffer_free(b, a1, 0), CK_ERR_INVALID_ARGUMENT, "size must be > 0");
  CHECK_ERR(ck_buffer_free(b, 1000, 100), CK_ERR_INDEX, "outside the buffer's capacity 1024");
  CHECK_ERR(ck_buffer_free(b, SIZE_MAX, 2), CK_ERR_INDEX, "outside");
  CHECK_ERR(ck_buffer_free(b, a1, 50), CK_ERR_INVALID_ARGUMENT, "not an allocation");
  CHECK_ERR(ck_buffer_free(b, a1 + 50, 100), CK_ERR_INVALID_ARGUMENT, "not an allocation");
  CHECK_ERR(ck_buffer_free(b, 500, 10), CK_ERR_INVALID_STATE, "already free");
  CHECK_OK(ck_buffer_free(b, a1, 100));
  CHECK_ERR(ck_buffer_free(b, a1, 100), CK_ERR_INVALID_STATE, "double free");
  CHECK_ERR(ck_buffer_grow(b, 10), CK_ERR_INVALID_ARGUMENT, "smaller");
  CHECK_OK(ck_buffer_grow(b, 1024)); /* no-op */
  CHECK(ck_buffer_used(b) == 100 && ck_buffer_allocation_count(b) == 1);
  ck_buffer *nb = NULL;
  CHECK_ERR(ck_buffer_new(NULL, 8, &nb), CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_buffer_decref(b);
  ck_context_decref(ctx);
}

/* Freed neighbours merge: a block the size of the merged range fits without
 * growing. */
static void test_merging(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 400, &b));
  size_t o[4];
  for (int i = 0; i < 4; i++) {
    REQUIRE_OK(ck_buffer_allocate(b, 100, 1, &o[i]));
    CHECK(o[i] == (size_t)i * 100);
  }
  CHECK(ck_buffer_free_block_count(b) == 0);
  CHECK_OK(ck_buffer_free(b, o[0], 100));
  CHECK_OK(ck_buffer_free(b, o[2], 100));
  CHECK(ck_buffer_free_block_count(b) == 2);
  CHECK_OK(ck_buffer_free(b, o[1], 100)); /* merges with both neighbours */
  CHECK(ck_buffer_free_block_count(b) == 1);
  size_t big;
  REQUIRE_OK(ck_buffer_allocate(b, 300, 1, &big));
  CHECK(big == 0 && ck_buffer_capacity(b) == 400);
  CHECK_OK(ck_buffer_free(b, big, 300));
  CHECK_OK(ck_buffer_free(b, o[3], 100));
  CHECK(ck_buffer_free_block_count(b) == 1 && ck_buffer_used(b) == 0);
  REQUIRE_OK(ck_buffer_allocate(b, 400, 1, &big));
  CHECK(big == 0 && ck_buffer_capacity(b) == 400);
  /* full: the next allocation grows (doubling), keeping contents */
  CHECK_OK(ck_buffer_fill(b, 0, "\x77", 1, 400));
  REQUIRE_OK(ck_buffer_allocate(b, 10, 1, &o[0]));
  CHECK(o[0] == 400 && ck_buffer_capacity(b) == 800);
  unsigned char probe[400];
  CHECK_OK(ck_buffer_read(b, 0, probe, 400));
  CHECK(probe[0] == 0x77 && probe[399] == 0x77);
  ck_buffer_decref(b);
  ck_context_decref(ctx);
}

/* ck_buffer_ranges: allocations (as allocated) and free blocks, sorted,
 * tiling [0, capacity) exactly, the free blocks never adjacent.  Returns the
 * number of problems found. */
static int check_ranges(ck_buffer *b, size_t nlive) {
  ck_buffer_range al[300], fr[300];
  size_t na = 0, nf = 0;
  if (ck_buffer_ranges(b, CK_BUFFER_RANGES_ALLOCATED, al, 300, &na) != CK_OK ||
      ck_buffer_ranges(b, CK_BUFFER_RANGES_FREE, fr, 300, &nf) != CK_OK || na > 300 ||
      nf > 300) {
    return 1;
  }
  int bad = na != nlive || na != ck_buffer_allocation_count(b) ||
            nf != ck_buffer_free_block_count(b);
  size_t at = 0, i = 0, j = 0, used = 0;
  bool prev_free = false;
  while (i < na || j < nf) { /* walk both lists in offset order */
    bool take_free = j < nf && (i == na || fr[j].offset < al[i].offset);
    const ck_buffer_range *r = take_free ? &fr[j++] : &al[i++];
    bad += r->offset != at || r->size == 0 || (take_free && prev_free);
    used += take_free ? 0 : r->size;
    at = r->offset + r->size;
    prev_free = take_free;
  }
  bad += at != ck_buffer_capacity(b) || used != ck_buffer_used(b);
  return bad;
}

static void test_ranges(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  ck_buffer *b = NULL;
  REQUIRE_OK(ck_buffer_new(ctx, 256, &b));
  size_t n = 99, o1, o2;
  ck_buffer_range r[4];
  CHECK_OK(ck_buffer_ranges(b, CK_BUFFER_RANGES_ALLOCATED, NULL, 0, &n));
  CHECK(n == 0);
  REQUIRE_OK(ck_buffer_ranges(b, CK_BUFFER_RANGES_FREE, r, 4, &n));
  CHECK(n == 1 && r[0].offset == 0 && r[0].size == 256);
  REQUIRE_OK(ck_buffer_allocate(b, 10, 1, &o1));
  REQUIRE_OK(ck_buffer_allocate(b, 20, 64, &o2)); /* padding 10..64 stays free */
  REQUIRE_OK(ck_buffer_ranges(b, CK_BUFFER_RANGES_ALLOCATED, r, 4, &n));
  CHECK(n == 2 && r[0].offset == 0 && r[0].size == 10 && r[1].offset == 64 &&
        r[1].size == 20);
  REQUIRE_OK(ck_buffer_ranges(b, CK_BUFFER_RANGES_FREE, r, 1, &n));
  CHECK(n == 2 && r[0].offset == 10 && r[0].size == 54); /* max 1 of 2 */
  CHECK(check_ranges(b, 2) == 0);
  CHECK_ERR(ck_buffer_ranges(b, (ck_buffer_range_kind)7, r, 4, &n),
            CK_ERR_INVALID_ARGUMENT, "unknown range kind 7");
  CHECK_ERR(ck_buffer_ranges(b, CK_BUFFER_RANGES_FREE, NULL, 4, &n),
            CK_ERR_INVALID_ARGUMENT, "NULL");
  CHECK_ERR(ck_buffer_ranges(NULL, CK_BUFFER_RANGES_FREE, r, 4, &n),
            CK_ERR_INVALID_ARGUMENT, "NULL");
  ck_buffer_decref(b);
  ck_context_decref(ctx);
}

/* Random allocate / free / grow against a model. */
typedef struct {
  size_t off, size;
  unsigned seed;
} live_t;

static unsigned rng_state = 12345;
static unsigned rnd(void) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (rng_state >> 8) & 0xffffff;
}

static bool check_contents(ck_buffer *b, const live_t *l) {
  unsigned char tmp[512];
  if (ck_buffer_read(b, l->off, tmp, l->size) != CK_OK) {
    return false;
  }
  for (size_t i = 0; i < l->size; i++) {
    if (tmp[i] != (unsigned char)(l->seed + i * 31)) {
      return false;
    }
  }
  return true;
}

static void test_random_model(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  for (int run = 0; run < 4; run++) {
    ck_buffer *b = NULL;
    REQUIRE_OK(ck_buffer_new(ctx, run == 0 ? 0 : (size_t)run * 1000, &b));
    live_t live[256];
    size_t nlive = 0, used = 0;
    long steps = ck_test_scaled(4000);
    int bad_overlap = 0, bad_align = 0, bad_contents = 0, bad_used = 0, bad_ranges = 0;
    for (long step = 0; step < steps; step++) {
      unsigned r = rnd() % 100;
      if (r < 55 && nlive < 256) {
        size_t size = 1 + rnd() % 500;
        size_t align = (size_t)1 << (rnd() % 7);
        size_t off;
        size_t cap0 = ck_buffer_capacity(b);
        REQUIRE_OK(ck_buffer_allocate(b, size, align, &off));
        bad_align += off % align != 0;
        bad_overlap += off + size > ck_buffer_capacity(b);
        for (size_t i = 0; i < nlive; i++) {
          bad_overlap += off < live[i].off + live[i].size && live[i].off < off + size;
        }
        if (ck_buffer_capacity(b) != cap0) {
          /* grew: everything live must have survived */
          for (size_t i = 0; i < nlive; i++) {
            bad_contents += !check_contents(b, &live[i]);
          }
        }
        live_t l = {off, size, rnd()};
        unsigned char tmp[512];
        for (size_t i = 0; i < size; i++) {
          tmp[i] = (unsigned char)(l.seed + i * 31);
        }
        REQUIRE_OK(ck_buffer_write(b, off, tmp, size));
        live[nlive++] = l;
        used += size;
      } else if (r < 95 && nlive > 0) {
        size_t k = rnd() % nlive;
        bad_contents += !check_contents(b, &live[k]);
        REQUIRE_OK(ck_buffer_free(b, live[k].off, live[k].size));
        used -= live[k].size;
        live[k] = live[--nlive];
      } else {
        size_t cap = ck_buffer_capacity(b) + rnd() % 300;
        REQUIRE_OK(ck_buffer_grow(b, cap));
        CHECK(ck_buffer_capacity(b) == cap);
      }
      bad_used += ck_buffer_used(b) != used || ck_buffer_allocation_count(b) != nlive;
      bad_ranges += check_ranges(b, nlive);
    }
    for (size_t i = 0; i < nlive; i++) {
      bad_contents += !check_contents(b, &live[i]);
    }
    CHECK(bad_overlap == 0);
    CHECK(bad_align == 0);
    CHECK(bad_contents == 0);
    CHECK(bad_used == 0);
    CHECK(bad_ranges == 0);
    /* free everything: one merged block spanning the buffer */
    while (nlive > 0) {
      nlive--;
      CHECK_OK(ck_buffer_free(b, live[nlive].off, live[nlive].size));
    }
    size_t cap = ck_buffer_capacity(b), off;
    CHECK(ck_buffer_used(b) == 0);
    CHECK(cap == 0 || ck_buffer_free_block_count(b) == 1);
    if (cap != 0) {
      CHECK_OK(ck_buffer_allocate(b, cap, 1, &off));
      CHECK(off == 0 && ck_buffer_capacity(b) == cap);
    }
    ck_buffer_decref(b);
  }
  ck_context_decref(ctx);
}

/* Fail every allocation in turn: no leak, no crash, clean errors. */
static void test_fault_injection(void) {
  ck_test_faults f = CK_TEST_FAULTS(1000);
  while (ck_test_faults_arm(&f)) {
    ck_context *ctx = NULL;
    ck_buffer *b = NULL;
    ck_memblock *mb = NULL;
    ck_status st = ck_context_new("cpu", &ctx);
    if (st == CK_OK) {
      st = ck_buffer_new(ctx, 16, &b);
    }
    size_t o = 0;
    for (int i = 0; i < 40 && st == CK_OK; i++) {
      st = ck_buffer_allocate(b, 24, 8, &o);
    }
    if (st == CK_OK) {
      st = ck_buffer_free(b, o, 24);
    }
    if (st == CK_OK) {
      st = ck_buffer_grow(b, ck_buffer_capacity(b) * 2);
    }
    if (st == CK_OK) {
      st = ck_buffer_memblock(b, &mb);
    }
    bool fired = ck_test_faults_fired(&f); /* not fired: the clean run, the last */
    if (st != CK_OK) {
      CHECK(st == CK_ERR_NO_MEMORY);
      CHECK(fired);
    }
    ck_memblock_decref(mb);
    ck_buffer_decref(b);
    ck_context_decref(ctx);
  }
  CHECK(f.done);
}

static void count_release(void *arg) { (*(int *)arg)++; }

/* ck_buffer_wrap on host memory: no copy, no growth, released once. */
static void test_wrap(void) {
  ck_context *ctx = cpu_ctx();
  REQUIRE(ctx != NULL);
  static char mem[1024];
  memset(mem, 7, sizeof mem);
  int released = 0;
  ck_buffer *b = NULL;
  CHECK_ERR(ck_buffer_wrap(ctx, NULL, 16, NULL, NULL, &b), CK_ERR_INVALID_ARGUMENT,
            "NULL");
  CHECK_ERR(ck_buffer_wrap(ctx, mem, 0, NULL, NULL, &b), CK_ERR_INVALID_ARGUMENT,
            "capacity must be > 0");
  CHECK(b == NULL);
  REQUIRE_OK(ck_buffer_wrap(ctx, mem + 64, 512, count_release, &released, &b));
  CHECK(ck_buffer_capacity(b) == 512 && ck_buffer_used(b) == 0);
  CHECK(ck_buffer_native_handle(b) == mem + 64);
  void *host = NULL;
  CHECK_OK(ck_buffer_host_pointer(b, &host));
  CHECK(host == mem + 64);
  CHECK_OK(ck_buffer_write(b, 8, "hello", 5));
  CHECK(memcmp(mem + 72, "hello", 5) == 0); /* in place */
  char back[5];
  mem[64] = 42;
  CHECK_OK(ck_buffer_read(b, 0, back, 1));
  CHECK(back[0] == 42);
  size_t off = 0;
  CHECK_OK(ck_buffer_allocate(b, 400, 64, &off));
  CHECK(off == 0);
  CHECK_ERR(ck_buffer_allocate(b, 200, 8, &off), CK_ERR_NOT_SUPPORTED,
            "a wrapped buffer cannot grow");
  CHECK_ERR(ck_buffer_grow(b, 4096), CK_ERR_NOT_SUPPORTED, "cannot grow");
  CHECK(ck_buffer_capacity(b) == 512);
  CHECK_OK(ck_buffer_free(b, 0, 400));
  CHECK_ERR(ck_buffer_write(b, 510, "abc", 3), CK_ERR_INDEX, "outside");
  /* an array's memblock keeps it alive; release runs once, at the end */
  ck_memblock *mb = NULL;
  REQUIRE_OK(ck_buffer_memblock(b, &mb));
  ck_buffer_decref(b);
  CHECK(released == 0);
  ck_memblock_decref(mb);
  CHECK(released == 1);
  CHECK(mem[72] == 'h'); /* never freed, still ours */
  /* no release callback is fine */
  REQUIRE_OK(ck_buffer_wrap(ctx, mem, sizeof mem, NULL, NULL, &b));
  ck_buffer_decref(b);
  ck_context_decref(ctx);
}

CK_TEST_MAIN(CK_TEST(test_context_api), CK_TEST(test_basic_copies),
             CK_TEST(test_allocator_errors), CK_TEST(test_merging),
             CK_TEST(test_random_model), CK_TEST(test_wrap), CK_TEST(test_ranges),
             CK_TEST(test_fault_injection))
