/* The ckernel ABI helpers and the kernel builder: inline storage with no heap
 * allocation, growth that zero-fills, reserved child prefixes, moving a
 * builder with memcpy, reset/destroy, destroying half-built kernel trees at
 * every failing allocation, the description registry and the dump. */
#include "ck_test.h"

#include <stdalign.h>
#include <stddef.h>

/* ---- a test-local parent kernel: "chain" ----
 * chain(x) = child(x) + add, on int64 results; it owns a memblock (a dynamic
 * resource whose leak the live counter sees) and has one child right after
 * its data.  Padding makes it big enough to leave the inline buffer at a
 * depth of 3. */
typedef struct chain_ck {
  ck_prefix base;
  int64_t add;
  ck_memblock *mb;
  char bulk[24];
} chain_ck;

static int chain_destroyed;

static ck_prefix *chain_child(ck_prefix *self) {
  return ck_prefix_child(self, sizeof(chain_ck));
}

static int chain_single(char *dst, const char *const *src, ck_prefix *self) {
  const chain_ck *e = (const chain_ck *)(void *)self;
  ck_prefix *child = chain_child(self);
  int st = ck_prefix_single(child)(dst, src, child);
  if (st != 0) {
    return st;
  }
  int64_t v;
  memcpy(&v, dst, sizeof v);
  v += e->add;
  memcpy(dst, &v, sizeof v);
  return 0;
}

static int chain_strided(char *dst, intptr_t dst_stride, const char *const *src,
                         const intptr_t *src_stride, size_t count,
                         ck_prefix *self) {
  const chain_ck *e = (const chain_ck *)(void *)self;
  ck_prefix *child = chain_child(self);
  int st = ck_prefix_strided(child)(dst, dst_stride, src, src_stride, count,
                                    child);
  if (st != 0) {
    return st;
  }
  for (size_t i = 0; i < count; i++) {
    int64_t v;
    memcpy(&v, dst + (intptr_t)i * dst_stride, sizeof v);
    v += e->add;
    memcpy(dst + (intptr_t)i * dst_stride, &v, sizeof v);
  }
  return 0;
}

static void chain_destruct(ck_prefix *self) {
  chain_ck *e = (chain_ck *)(void *)self;
  chain_destroyed++;
  ck_memblock_decref(e->mb); /* NULL while half-built: a no-op */
  ck_prefix_destroy_child(chain_child(self));
}

static const ck_kernel_info chain_info = {
    "test_chain", chain_single, chain_strided, sizeof(chain_ck),
    ck_kernel_children_after_data};

/* `depth` chain kernels, then an int32 -> int64 assignment leaf.  Built in
 * DyND's order: reserve (with the child prefix), destructor first, then the
 * resource, then the child. */
static ck_status make_chain(ck_kernel_builder *ckb, size_t offset, int depth,
                            bool resource, ck_kernel_request req,
                            size_t *end) {
  if (depth == 0) {
    return ck_make_builtin_assignment_kernel(ckb, offset, CK_TYPE_INT64,
                                             CK_TYPE_INT32, req,
                                             CK_ERRMODE_DEFAULT, end);
  }
  ck_status st = ck_kernel_builder_ensure_capacity(ckb, offset + sizeof(chain_ck));
  if (st != CK_OK) {
    return st;
  }
  chain_ck *e = (chain_ck *)(void *)ck_kernel_builder_get(ckb, offset);
  e->base.destructor = chain_destruct;
  st = ck_prefix_set_function(&e->base, req, chain_single, chain_strided);
  if (st != CK_OK) {
    return st;
  }
  e->add = depth;
  if (resource) {
    ck_memblock *mb = NULL;
    st = ck_pod_memblock_new(64, &mb);
    if (st != CK_OK) {
      return st;
    }
    /* re-fetch: the rule is to re-get after anything that may grow (this
     * call cannot, but the habit is what the test documents) */
    e = (chain_ck *)(void *)ck_kernel_builder_get(ckb, offset);
    e->mb = mb;
  }
  return make_chain(ckb, offset + sizeof(chain_ck), depth - 1, resource, req,
                    end);
}

static bool all_zero(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] != 0) {
      return false;
    }
  }
  return true;
}

static int64_t call_single_i32(ck_kernel_builder *ckb, int32_t x) {
  int64_t out = -1;
  const char *src[1] = {(const char *)&x};
  ck_prefix *root = ck_kernel_builder_get(ckb, 0);
  int st = ck_prefix_single(root)((char *)&out, src, root);
  return st == 0 ? out : INT64_MIN;
}

/* ---- tests ---- */

static void test_abi_basics(void) {
  CHECK(ck_kernel_abi_version() == CK_KERNEL_ABI_VERSION);
  CHECK(sizeof(ck_prefix) == 2 * sizeof(void *));
  CHECK(offsetof(ck_prefix, function) == 0);
  CHECK(offsetof(ck_prefix, destructor) == sizeof(void *));
  CHECK(offsetof(ck_kernel_builder, inline_buf) % 16 == 0);
  CHECK(alignof(ck_kernel_builder) >= CK_KERNEL_ALIGN);
  CHECK(sizeof(((ck_kernel_builder *)0)->inline_buf) == CK_KERNEL_BUILDER_INLINE_SIZE);
  CHECK(CK_KERNEL_REQUEST_SINGLE == 0 && CK_KERNEL_REQUEST_STRIDED == 1);

  /* the layout table lists the kernel structs as compiled */
  size_t n = 0;
  const ck_layout_entry *t = ck_layout_table(&n);
  int rows = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcmp(t[i].type, "ck_kernel_builder") == 0 &&
        strcmp(t[i].field, "inline_buf") == 0) {
      CHECK(t[i].offset == offsetof(ck_kernel_builder, inline_buf));
      CHECK(t[i].size == CK_KERNEL_BUILDER_INLINE_SIZE);
      rows++;
    }
    if (strcmp(t[i].type, "ck_prefix") == 0 && t[i].field[0] == '\0') {
      CHECK(t[i].size == sizeof(ck_prefix));
      rows++;
    }
  }
  CHECK(rows == 2);

  ck_prefix p = {NULL, NULL};
  CHECK_ERR(ck_prefix_set_function(&p, (ck_kernel_request)7, chain_single,
                                   chain_strided),
            CK_ERR_INVALID_ARGUMENT, "unknown kernel request 7");
  CHECK_ERR(ck_prefix_set_function(&p, CK_KERNEL_REQUEST_STRIDED, chain_single, NULL),
            CK_ERR_INVALID_ARGUMENT, "NULL strided function");
  CHECK(p.function == NULL);
  CHECK_OK(ck_prefix_set_function(&p, CK_KERNEL_REQUEST_SINGLE, chain_single, NULL));
  CHECK(ck_prefix_single(&p) == chain_single);
  CHECK_OK(ck_prefix_set_function(&p, CK_KERNEL_REQUEST_STRIDED, NULL, chain_strided));
  CHECK(ck_prefix_strided(&p) == chain_strided);
  ck_prefix_destroy_child(NULL);   /* no-op */
  ck_prefix q = {NULL, NULL};
  ck_prefix_destroy_child(&q);     /* no destructor: no-op */

  /* FFI entry points refuse an unbuilt kernel */
  char out[8];
  const char *src[1] = {out};
  intptr_t ss[1] = {0};
  CHECK_ERR((ck_status)ck_kernel_call_single(&q, out, src), CK_ERR_INVALID_STATE,
            "no function");
  CHECK_ERR((ck_status)ck_kernel_call_strided(NULL, out, 0, src, ss, 1),
            CK_ERR_INVALID_STATE, "no function");
}

static void test_zeroed_builder_is_empty(void) {
  ck_kernel_builder kb;
  memset(&kb, 0, sizeof kb);
  uint64_t a0 = ck_debug_alloc_count();
  CHECK(ck_kernel_builder_capacity(&kb) == CK_KERNEL_BUILDER_INLINE_SIZE);
  CHECK(ck_kernel_builder_is_inline(&kb));
  CHECK(ck_kernel_builder_data(&kb) == kb.inline_buf);
  CHECK(ck_kernel_builder_get(&kb, 0) == (ck_prefix *)(void *)kb.inline_buf);
  CHECK(ck_kernel_builder_get(&kb, 112) != NULL);
  CHECK(ck_kernel_builder_get(&kb, 113) == NULL); /* a prefix would not fit */
  CHECK(ck_kernel_builder_get(&kb, SIZE_MAX) == NULL);
  ck_kernel_builder_reset(&kb);
  ck_kernel_builder_destroy(&kb);
  ck_kernel_builder_destroy(&kb); /* twice is fine */
  ck_kernel_builder_destroy(NULL);
  CHECK(ck_debug_alloc_count() == a0);
  CHECK(all_zero((const char *)&kb, sizeof kb));
}

static void test_small_tree_allocates_nothing(void) {
  /* two chain levels (2 x 56 bytes) + a 16-byte leaf = exactly 128 bytes */
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  uint64_t a0 = ck_debug_alloc_count();
  size_t end = 0;
  chain_destroyed = 0;
  REQUIRE_OK(make_chain(&kb, 0, 2, false, CK_KERNEL_REQUEST_SINGLE, &end));
  CHECK(end == 2 * sizeof(chain_ck) + sizeof(ck_prefix));
  CHECK(end == CK_KERNEL_BUILDER_INLINE_SIZE);
  CHECK(ck_kernel_builder_is_inline(&kb));
  CHECK(call_single_i32(&kb, 40) == 40 + 2 + 1);
  CHECK(call_single_i32(&kb, -7) == -7 + 3);
  ck_kernel_builder_destroy(&kb);
  CHECK(chain_destroyed == 2);
  CHECK(ck_debug_alloc_count() == a0);

  /* the same for the strided request, and through the FFI entry point */
  ck_kernel_builder_init(&kb);
  REQUIRE_OK(make_chain(&kb, 0, 1, false, CK_KERNEL_REQUEST_STRIDED, &end));
  int32_t in[4] = {1, 2, 3, 4};
  int64_t out[4] = {0};
  const char *src[1] = {(const char *)in};
  intptr_t ss[1] = {sizeof(int32_t)};
  CHECK(ck_kernel_call_strided(ck_kernel_builder_get(&kb, 0), (char *)out,
                               sizeof(int64_t), src, ss, 4) == 0);
  CHECK(out[0] == 2 && out[3] == 5);
  ck_kernel_builder_destroy(&kb);
  CHECK(ck_debug_alloc_count() == a0);
}

static void test_growth_zero_fills(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  /* dirty the inline buffer as a kernel would, then grow past it */
  memset(kb.inline_buf, 0xab, CK_KERNEL_BUILDER_INLINE_SIZE);
  uint64_t a0 = ck_debug_alloc_count();
  REQUIRE_OK(ck_kernel_builder_ensure_capacity_leaf(&kb, 129));
  CHECK(ck_debug_alloc_count() == a0 + 1);
  CHECK(!ck_kernel_builder_is_inline(&kb));
  size_t cap = ck_kernel_builder_capacity(&kb);
  CHECK(cap >= 129 && cap >= CK_KERNEL_BUILDER_INLINE_SIZE * 3 / 2);
  char *d = ck_kernel_builder_data(&kb);
  bool kept = true;
  for (size_t i = 0; i < CK_KERNEL_BUILDER_INLINE_SIZE; i++) {
    kept = kept && (unsigned char)d[i] == 0xab;
  }
  CHECK(kept);
  CHECK(all_zero(d + CK_KERNEL_BUILDER_INLINE_SIZE, cap - CK_KERNEL_BUILDER_INLINE_SIZE));
  CHECK(all_zero(kb.inline_buf, CK_KERNEL_BUILDER_INLINE_SIZE));

  /* repeated growth: each step at least 1.5x, old bytes kept, tail zeroed */
  memset(d, 0xcd, cap);
  for (int i = 0; i < 8; i++) {
    size_t old = ck_kernel_builder_capacity(&kb);
    REQUIRE_OK(ck_kernel_builder_ensure_capacity_leaf(&kb, old + 1));
    size_t now = ck_kernel_builder_capacity(&kb);
    CHECK(now >= old + old / 2);
    d = ck_kernel_builder_data(&kb);
    CHECK((unsigned char)d[0] == 0xcd && (unsigned char)d[old - 1] == 0xcd);
    CHECK(all_zero(d + old, now - old));
    memset(d, 0xcd, now);
  }
  /* no growth when it fits */
  uint64_t a1 = ck_debug_alloc_count();
  REQUIRE_OK(ck_kernel_builder_ensure_capacity_leaf(&kb, 10));
  CHECK(ck_debug_alloc_count() == a1);

  /* reset keeps the storage and zeroes it (the prefix must be a valid,
   * here empty, kernel: reset runs its destructor) */
  size_t cap2 = ck_kernel_builder_capacity(&kb);
  memset(ck_kernel_builder_data(&kb), 0, sizeof(ck_prefix));
  ck_kernel_builder_reset(&kb);
  CHECK(ck_kernel_builder_capacity(&kb) == cap2);
  CHECK(all_zero(ck_kernel_builder_data(&kb), cap2));
  ck_kernel_builder_destroy(&kb);
  CHECK(ck_kernel_builder_is_inline(&kb));
}

static void test_ensure_capacity_reserves_child_prefix(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  REQUIRE_OK(ck_kernel_builder_ensure_capacity(&kb, 200));
  CHECK(ck_kernel_builder_capacity(&kb) >= 200 + sizeof(ck_prefix));
  ck_prefix *child = ck_kernel_builder_get(&kb, 200);
  REQUIRE(child != NULL);
  CHECK(child->function == NULL && child->destructor == NULL);
  REQUIRE_OK(ck_kernel_builder_ensure_capacity_leaf(&kb, 1000));
  CHECK(ck_kernel_builder_capacity(&kb) >= 1000);
  /* inline case: 112 + prefix fits exactly, 113 + prefix does not */
  ck_kernel_builder k2;
  ck_kernel_builder_init(&k2);
  REQUIRE_OK(ck_kernel_builder_ensure_capacity(&k2, 112));
  CHECK(ck_kernel_builder_is_inline(&k2));
  REQUIRE_OK(ck_kernel_builder_ensure_capacity(&k2, 113));
  CHECK(!ck_kernel_builder_is_inline(&k2));
  ck_kernel_builder_destroy(&k2);
  ck_kernel_builder_destroy(&kb);
}

static void test_size_errors(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  CHECK_ERR(ck_kernel_builder_ensure_capacity(&kb, SIZE_MAX - 4), CK_ERR_OVERFLOW,
            "overflows");
  CHECK_ERR(ck_kernel_builder_ensure_capacity_leaf(&kb, SIZE_MAX), CK_ERR_OVERFLOW,
            "too large");
  CHECK_ERR(ck_kernel_builder_ensure_capacity(NULL, 8), CK_ERR_INVALID_ARGUMENT,
            "NULL");
  /* a failed allocation leaves the builder (and its kernel) unchanged */
  size_t end;
  REQUIRE_OK(make_chain(&kb, 0, 1, false, CK_KERNEL_REQUEST_SINGLE, &end));
  ck_debug_fail_alloc_after(1);
  CHECK_ERR(ck_kernel_builder_ensure_capacity_leaf(&kb, 4096), CK_ERR_NO_MEMORY,
            "ck_kernel_builder_ensure_capacity_leaf: out of memory");
  ck_debug_fail_alloc_after(0);
  CHECK(ck_kernel_builder_is_inline(&kb));
  CHECK(call_single_i32(&kb, 1) == 2);
  REQUIRE_OK(ck_kernel_builder_ensure_capacity_leaf(&kb, 4096));
  ck_debug_fail_alloc_after(1);
  CHECK_ERR(ck_kernel_builder_ensure_capacity_leaf(&kb, 1 << 20), CK_ERR_NO_MEMORY,
            "out of memory");
  ck_debug_fail_alloc_after(0);
  CHECK(ck_kernel_builder_capacity(&kb) < (1 << 20));
  CHECK(call_single_i32(&kb, 1) == 2);
  ck_kernel_builder_destroy(&kb);
}

static void test_memcpy_move(void) {
  for (int heap = 0; heap < 2; heap++) {
    ck_kernel_builder a;
    ck_kernel_builder_init(&a);
    size_t end;
    int depth = heap ? 5 : 2;
    REQUIRE_OK(make_chain(&a, 0, depth, true, CK_KERNEL_REQUEST_SINGLE, &end));
    CHECK(ck_kernel_builder_is_inline(&a) == !heap);
    /* move the builder struct itself: its data pointer follows */
    ck_kernel_builder b;
    memcpy(&b, &a, sizeof b);
    memset(&a, 0x5a, sizeof a); /* the old copy is dead */
    int64_t expect = 10 + (int64_t)depth * (depth + 1) / 2;
    CHECK(call_single_i32(&b, 10) == expect);
    /* and the kernel data can be moved too (memcpy-movable) */
    ck_kernel_builder c;
    ck_kernel_builder_init(&c);
    REQUIRE_OK(ck_kernel_builder_ensure_capacity_leaf(&c, end));
    memcpy(ck_kernel_builder_data(&c), ck_kernel_builder_data(&b), end);
    CHECK(call_single_i32(&c, 10) == expect);
    /* ownership went with the bytes: clear b without destroying its tree */
    memset(ck_kernel_builder_data(&b), 0, end);
    ck_kernel_builder_destroy(&b);
    chain_destroyed = 0;
    ck_kernel_builder_destroy(&c);
    CHECK(chain_destroyed == depth);
  }
}

static void test_reset_destroys_and_reuses(void) {
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  size_t end;
  REQUIRE_OK(make_chain(&kb, 0, 6, true, CK_KERNEL_REQUEST_SINGLE, &end));
  int64_t live = ck_memblock_live_count();
  chain_destroyed = 0;
  ck_kernel_builder_reset(&kb);
  CHECK(chain_destroyed == 6);
  CHECK(ck_memblock_live_count() == live - 6);
  /* same shape again: no builder growth (only the 6 memblocks allocate) */
  uint64_t a0 = ck_debug_alloc_count();
  REQUIRE_OK(make_chain(&kb, 0, 6, false, CK_KERNEL_REQUEST_SINGLE, &end));
  CHECK(ck_debug_alloc_count() == a0);
  CHECK(call_single_i32(&kb, 0) == 21);
  ck_kernel_builder_destroy(&kb);
}

static void test_fault_injection_nested(void) {
  /* 10 chain levels (560 bytes: three heap growths) each owning a memblock;
   * fail every allocation in turn; each failure must unwind cleanly through
   * the half-built tree's destructors. */
  const int depth = 10;
  int64_t live = ck_memblock_live_count();
  ck_test_faults f = CK_TEST_FAULTS(200);
  while (ck_test_faults_arm(&f)) {
    ck_kernel_builder kb;
    ck_kernel_builder_init(&kb); /* no allocation: the builder's inline storage */
    size_t end = 0;
    ck_status st = make_chain(&kb, 0, depth, true, CK_KERNEL_REQUEST_STRIDED, &end);
    if (!ck_test_faults_fired(&f)) {
      CHECK(st == CK_OK);
      int32_t in[3] = {0, 1, -1};
      int64_t out[3];
      const char *src[1] = {(const char *)in};
      intptr_t ss[1] = {sizeof(int32_t)};
      ck_prefix *root = ck_kernel_builder_get(&kb, 0);
      CHECK(ck_prefix_strided(root)((char *)out, sizeof(int64_t), src, ss, 3, root) == 0);
      CHECK(out[0] == 55 && out[1] == 56 && out[2] == 54);
      ck_kernel_builder_destroy(&kb);
      CHECK(ck_memblock_live_count() == live);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(strstr(ck_last_error(), "out of memory") != NULL);
    ck_kernel_builder_destroy(&kb);
    CHECK(ck_memblock_live_count() == live);
  }
  CHECK(f.runs >= depth + 3); /* every memblock and every growth was hit */
}

static void test_registry_and_dump(void) {
  REQUIRE_OK(ck_kernel_info_register(&chain_info));
  REQUIRE_OK(ck_kernel_info_register(&chain_info)); /* idempotent */
  CHECK_ERR(ck_kernel_info_register(NULL), CK_ERR_INVALID_ARGUMENT, "name");
  static const ck_kernel_info tiny = {"tiny", chain_single, NULL, 4, NULL};
  CHECK_ERR(ck_kernel_info_register(&tiny), CK_ERR_INVALID_ARGUMENT,
            "smaller than the prefix");

  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  size_t end;
  REQUIRE_OK(make_chain(&kb, 0, 2, false, CK_KERNEL_REQUEST_SINGLE, &end));
  ck_kernel_request req = CK_KERNEL_REQUEST_STRIDED;
  CHECK(ck_kernel_info_find(ck_kernel_builder_get(&kb, 0), &req) == &chain_info);
  CHECK(req == CK_KERNEL_REQUEST_SINGLE);
  const ck_kernel_info *leaf = ck_kernel_info_find(ck_kernel_builder_get(&kb, 112), &req);
  REQUIRE(leaf != NULL);
  CHECK(strncmp(leaf->name, "assign_int32_to_int64_", 22) == 0);

  char buf[2048];
  size_t len = 0;
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, &len));
  CHECK(len == strlen(buf));
  CHECK(strstr(buf, "capacity=128 (inline)") != NULL);
  CHECK(strstr(buf, "@0 test_chain [single]") != NULL);
  CHECK(strstr(buf, "\n  @56 test_chain [single]") != NULL);
  CHECK(strstr(buf, "\n    @112 assign_int32_to_int64_") != NULL);
  CHECK(strstr(buf, "destructor=none") != NULL);
  /* the data of the root: add = 2 (little-endian int64) */
  CHECK(strstr(buf, "data +16   02 00 00 00 00 00 00 00") != NULL);
  /* snprintf rules: truncation still reports the full length */
  char small[20];
  size_t len2 = 0;
  REQUIRE_OK(ck_kernel_builder_dump(&kb, small, sizeof small, &len2));
  CHECK(len2 == len);
  CHECK(strlen(small) == sizeof small - 1);
  CHECK(strncmp(small, buf, sizeof small - 1) == 0);
  REQUIRE_OK(ck_kernel_builder_dump(&kb, NULL, 0, &len2));
  CHECK(len2 == len);
  CHECK_ERR(ck_kernel_builder_dump(&kb, NULL, 5, &len2), CK_ERR_INVALID_ARGUMENT,
            "NULL");
  printf("%s", buf);

  /* an undescribed kernel prints its prefix only */
  REQUIRE_OK(ck_kernel_info_unregister(&chain_info));
  CHECK_ERR(ck_kernel_info_unregister(&chain_info), CK_ERR_INVALID_ARGUMENT,
            "not registered");
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, &len));
  CHECK(strstr(buf, "undescribed kernel") != NULL);
  CHECK(strstr(buf, "test_chain") == NULL);
  ck_kernel_builder_destroy(&kb);

  /* an empty builder, and a heap one */
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, &len));
  CHECK(strstr(buf, "@0 (empty prefix)") != NULL);
  REQUIRE_OK(ck_kernel_info_register(&chain_info));
  REQUIRE_OK(make_chain(&kb, 0, 4, false, CK_KERNEL_REQUEST_STRIDED, &end));
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, &len));
  CHECK(strstr(buf, "(heap)") != NULL);
  CHECK(strstr(buf, "@168 test_chain [strided]") != NULL);
  CHECK(strstr(buf, "@224 assign_int32_to_int64_") != NULL);
  REQUIRE_OK(ck_kernel_info_unregister(&chain_info));
  ck_kernel_builder_destroy(&kb);
}

/* A decoder for the chain kernel: its `add` and its memblock. */
static size_t chain_fields(const ck_prefix *self, const ck_kernel_info *info,
                           ck_kernel_field *out, size_t max) {
  (void)info;
  const chain_ck *e = (const chain_ck *)(const void *)self;
  ck_kernel_field all[2] = {
      {"add", -1, CK_KERNEL_FIELD_INT, (intptr_t)offsetof(chain_ck, add), e->add, NULL,
       NULL},
      {"mb", -1, CK_KERNEL_FIELD_MEMBLOCK, (intptr_t)offsetof(chain_ck, mb), 0, e->mb,
       NULL}};
  for (size_t i = 0; i < 2 && i < max; i++) {
    out[i] = all[i];
  }
  return 2;
}

/* ck_kernel_builder_nodes and ck_kernel_fields: the tree as nodes in the
 * dump's order, decoded fields of a user description and of the builtin
 * leaves, and the dump printing fields instead of hex bytes. */
static void test_nodes_and_fields(void) {
  REQUIRE_OK(ck_kernel_info_register(&chain_info));
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  size_t end, n = 0;
  REQUIRE_OK(make_chain(&kb, 0, 2, true, CK_KERNEL_REQUEST_STRIDED, &end));
  ck_kernel_node nodes[8];
  REQUIRE_OK(ck_kernel_builder_nodes(&kb, nodes, 8, &n));
  REQUIRE(n == 3);
  size_t want_off[3] = {0, 56, 112};
  for (size_t i = 0; i < 3; i++) {
    CHECK(nodes[i].offset == want_off[i] && nodes[i].depth == i);
    CHECK(nodes[i].parent == (intptr_t)i - 1);
    CHECK(nodes[i].request == CK_KERNEL_REQUEST_STRIDED);
    CHECK(nodes[i].function == ck_kernel_builder_get(&kb, want_off[i])->function);
    CHECK(nodes[i].nchildren == (i < 2 ? 1u : 0u));
  }
  CHECK(nodes[0].info == &chain_info && nodes[0].destructor != NULL);
  CHECK(nodes[2].info != NULL && nodes[2].destructor == NULL);
  /* max smaller than the count */
  REQUIRE_OK(ck_kernel_builder_nodes(&kb, nodes, 1, &n));
  CHECK(n == 3 && nodes[0].offset == 0);
  CHECK_ERR(ck_kernel_builder_nodes(&kb, NULL, 1, &n), CK_ERR_INVALID_ARGUMENT, "NULL");

  /* no decoder yet: no fields, hex in the dump */
  ck_kernel_field f[4];
  CHECK_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, 0), f, 4, &n));
  CHECK(n == 0);
  char buf[2048];
  size_t len = 0;
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, &len));
  CHECK(strstr(buf, "data +16   02 00 00 00 00 00 00 00") != NULL);
  /* the builtin leaf decodes its implied types and error mode */
  REQUIRE_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, 112), f, 4, &n));
  REQUIRE(n == 3);
  CHECK(strcmp(f[0].name, "dst_type") == 0 && strcmp(f[0].text, "int64") == 0);
  CHECK(strcmp(f[1].name, "src_type") == 0 && strcmp(f[1].text, "int32") == 0);
  CHECK(strcmp(f[2].name, "errmode") == 0 && strcmp(f[2].text, "fractional") == 0);
  CHECK(f[0].kind == CK_KERNEL_FIELD_TEXT && f[0].offset == -1 && f[0].index == -1);

  /* with a decoder */
  CHECK_OK(ck_kernel_info_set_fields(&chain_info, chain_fields));
  REQUIRE_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, 56), f, 4, &n));
  REQUIRE(n == 2);
  CHECK(f[0].kind == CK_KERNEL_FIELD_INT && f[0].value == 1 && f[0].offset == 16);
  const chain_ck *mid = (const chain_ck *)(const void *)ck_kernel_builder_get(&kb, 56);
  CHECK(f[1].kind == CK_KERNEL_FIELD_MEMBLOCK && f[1].pointer == mid->mb);
  REQUIRE_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, 0), f, 1, &n));
  CHECK(n == 2 && f[0].value == 2); /* max 1 of 2 */
  REQUIRE_OK(ck_kernel_builder_dump(&kb, buf, sizeof buf, &len));
  CHECK(strstr(buf, "\n  fields add=2 mb=0x") != NULL);
  CHECK(strstr(buf, "(pod,refcount=1)") != NULL);
  CHECK(strstr(buf, "fields dst_type=int64 src_type=int32 errmode=fractional") != NULL);
  CHECK(strstr(buf, "data +16") == NULL);
  printf("%s", buf);
  CHECK_OK(ck_kernel_info_set_fields(&chain_info, NULL));
  REQUIRE_OK(ck_kernel_fields(ck_kernel_builder_get(&kb, 0), f, 4, &n));
  CHECK(n == 0);
  CHECK_ERR(ck_kernel_fields(NULL, f, 4, &n), CK_ERR_INVALID_ARGUMENT, "NULL");
  static const ck_kernel_info stray = {"stray", chain_single, NULL, sizeof(chain_ck), NULL};
  CHECK_ERR(ck_kernel_info_set_fields(&stray, chain_fields), CK_ERR_INVALID_ARGUMENT,
            "not registered");

  /* an undescribed kernel: one node, request -1, no children listed */
  REQUIRE_OK(ck_kernel_info_unregister(&chain_info));
  REQUIRE_OK(ck_kernel_builder_nodes(&kb, nodes, 8, &n));
  CHECK(n == 1 && nodes[0].request == -1 && nodes[0].info == NULL &&
        nodes[0].nchildren == 0);
  ck_kernel_builder_destroy(&kb);
  /* an empty builder: one empty node */
  REQUIRE_OK(ck_kernel_builder_nodes(&kb, nodes, 8, &n));
  CHECK(n == 1 && nodes[0].function == NULL && nodes[0].destructor == NULL);
}

CK_TEST_MAIN(CK_TEST(test_abi_basics), CK_TEST(test_zeroed_builder_is_empty),
             CK_TEST(test_small_tree_allocates_nothing),
             CK_TEST(test_growth_zero_fills),
             CK_TEST(test_ensure_capacity_reserves_child_prefix),
             CK_TEST(test_size_errors), CK_TEST(test_memcpy_move),
             CK_TEST(test_reset_destroys_and_reuses),
             CK_TEST(test_fault_injection_nested),
             CK_TEST(test_registry_and_dump), CK_TEST(test_nodes_and_fields))
