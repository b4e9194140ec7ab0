/* ck_arrow_wrap (arrow_wrap.h): Arrow device arrays over buffers someone
 * else owns -- the tree it makes, when it calls the owner's release (once,
 * after the root and every moved-out child), the refusals; a string array
 * uploaded to OpenCL buffers (PoCL in CI), wrapped as ARROW_DEVICE_OPENCL,
 * read back in one copy per buffer and imported on the host
 * (ck_arrow_import of the CPU wrap). */
#define _POSIX_C_SOURCE 200809L
#include "ck_test.h"

static int released;
static void *released_handle;

static void on_release(void *handle) {
  released++;
  released_handle = handle;
}

static void schema_noop_release(struct ArrowSchema *s) { s->release = NULL; }

static void test_string_tree(void) {
  static const int64_t offsets[] = {0, 1, 3, 3};
  static const char data[] = "abb";
  ck_arrow_node n = {3, 3, {NULL, offsets, data}, NULL, 0};
  struct ArrowDeviceArray d;
  released = 0;
  REQUIRE(ck_arrow_wrap(&n, ARROW_DEVICE_OPENCL, 0, on_release, &n, &d) == CK_OK);
  CHECK(d.device_type == ARROW_DEVICE_OPENCL && d.device_id == 0 && d.sync_event == NULL);
  CHECK(d.array.length == 3 && d.array.null_count == 0 && d.array.offset == 0);
  CHECK(d.array.n_buffers == 3 && d.array.n_children == 0 && d.array.children == NULL);
  CHECK(d.array.buffers[0] == NULL && d.array.buffers[1] == offsets &&
        d.array.buffers[2] == data);
  CHECK(released == 0);
  d.array.release(&d.array);
  CHECK(released == 1 && released_handle == &n && d.array.release == NULL);
}

static void test_nested_move_child(void) {
  /* 2 * var * var * float64: the consumer moves the innermost child out and
   * releases the parent first; the owner is released after the child */
  static const double values[] = {1, 2, 3};
  static const int64_t inner[] = {0, 2, 3};
  static const int64_t outer[] = {0, 2, 2};
  ck_arrow_node v = {3, 2, {NULL, values, NULL}, NULL, 0};
  ck_arrow_node i = {2, 2, {NULL, inner, NULL}, &v, 0};
  ck_arrow_node o = {2, 2, {NULL, outer, NULL}, &i, 0};
  struct ArrowDeviceArray d;
  released = 0;
  REQUIRE(ck_arrow_wrap(&o, ARROW_DEVICE_CUDA, 1, on_release, NULL, &d) == CK_OK);
  REQUIRE(d.array.n_children == 1);
  struct ArrowArray *mid = d.array.children[0];
  CHECK(mid->length == 2 && mid->buffers[1] == inner && mid->n_children == 1);
  struct ArrowArray leaf = *mid->children[0]; /* moved out */
  mid->children[0]->release = NULL;
  CHECK(leaf.length == 3 && leaf.n_buffers == 2 && leaf.buffers[1] == values);
  d.array.release(&d.array);
  CHECK(released == 0); /* the moved child still holds the owner */
  leaf.release(&leaf);
  CHECK(released == 1);
}

static void test_refusals(void) {
  static const int64_t offsets[] = {0, 1};
  struct ArrowDeviceArray d;
  memset(&d, 0, sizeof d);
  released = 0;
  ck_arrow_node bad_len = {-1, 2, {NULL, offsets, NULL}, NULL, 0};
  CHECK(ck_arrow_wrap(&bad_len, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "negative length") != NULL);
  ck_arrow_node bad_nbuf = {1, 4, {NULL, offsets, NULL}, NULL, 0};
  CHECK(ck_arrow_wrap(&bad_nbuf, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  /* null counts the bitmap or the length contradict */
  ck_arrow_node no_bitmap = {1, 2, {NULL, offsets, NULL}, NULL, 1};
  CHECK(ck_arrow_wrap(&no_bitmap, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "validity") != NULL);
  ck_arrow_node too_many = {1, 2, {offsets, offsets, NULL}, NULL, 2};
  CHECK(ck_arrow_wrap(&too_many, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  ck_arrow_node below = {1, 2, {offsets, offsets, NULL}, NULL, -2};
  CHECK(ck_arrow_wrap(&below, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  ck_arrow_node null_data = {1, 3, {NULL, offsets, NULL}, NULL, 0};
  CHECK(ck_arrow_wrap(&null_data, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  ck_arrow_node empty = {0, 3, {NULL, offsets, NULL}, NULL, 0}; /* no data needed */
  CHECK(ck_arrow_wrap(&empty, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) == CK_OK);
  d.array.release(&d.array);
  CHECK(released == 1);
  /* a chain deeper than the limit (a cycle, too, is refused, not followed) */
  ck_arrow_node loop = {0, 2, {NULL, offsets, NULL}, NULL, 0};
  loop.child = &loop;
  released = 0;
  CHECK(ck_arrow_wrap(&loop, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_arrow_wrap(NULL, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) ==
        CK_ERR_INVALID_ARGUMENT);
  CHECK(released == 0); /* a failed wrap never calls release */
}

/* Wrap host buffers as a CPU device array and import it: zero-copy, the
 * owner released when the imported array dies. */
static ck_array_preamble *import_strings(const int64_t *offsets, const char *data, int64_t n) {
  ck_arrow_node node = {n, 3, {NULL, offsets, data}, NULL, 0};
  struct ArrowDeviceArray d;
  struct ArrowSchema s = {"U", "", NULL, 0, 0, NULL, NULL, schema_noop_release, NULL};
  ck_array_preamble *out = NULL;
  if (ck_arrow_wrap(&node, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) != CK_OK) {
    return NULL;
  }
  if (ck_arrow_import_device(&s, &d, NULL, &out) != CK_OK) {
    fprintf(stderr, "import: %s\n", ck_last_error());
    return NULL;
  }
  return out;
}

static void test_import_host_wrap(void) {
  static const int64_t offsets[] = {0, 1, 4, 4};
  static const char data[] = "a\xc3\xa9z";
  released = 0;
  ck_array_preamble *a = import_strings(offsets, data, 3);
  REQUIRE(a != NULL);
  char ts[64];
  CHECK(ck_type_print(ck_array_type(a), ts, sizeof ts, NULL) == CK_OK);
  CHECK(strcmp(ts, "3 * string") == 0 || strstr(ts, "string") != NULL);
  ck_array_decref(a);
  CHECK(released == 1);
}

/* A validity bitmap and its null count travel into the made array; the
 * import reads the nulls (strings with a null in slot 1, `?string`). */
static void test_wrap_validity(void) {
  static const int64_t offsets[] = {0, 1, 1, 3};
  static const char data[] = "abc";
  static const uint8_t bits[] = {0x05}; /* slots 0 and 2 valid */
  ck_arrow_node node = {3, 3, {bits, offsets, data}, NULL, 1};
  struct ArrowDeviceArray d;
  released = 0;
  REQUIRE(ck_arrow_wrap(&node, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) == CK_OK);
  CHECK(d.array.null_count == 1 && d.array.buffers[0] == bits && d.array.offset == 0);
  struct ArrowSchema s = {"U", "", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL,
                          schema_noop_release, NULL};
  ck_array_preamble *a = NULL;
  REQUIRE(ck_arrow_import_device(&s, &d, NULL, &a) == CK_OK);
  int64_t nulls = -1;
  CHECK(ck_array_null_count(a, &nulls, NULL) == CK_OK && nulls == 1);
  char ts[64];
  CHECK(ck_type_print(ck_array_type(a), ts, sizeof ts, NULL) == CK_OK);
  CHECK(strstr(ts, "?string") != NULL);
  ck_array_decref(a);
  CHECK(released == 1);
  /* an unknown count (-1) is accepted and passed on */
  node.null_count = -1;
  REQUIRE(ck_arrow_wrap(&node, ARROW_DEVICE_CPU, -1, on_release, NULL, &d) == CK_OK);
  CHECK(d.array.null_count == -1);
  d.array.release(&d.array);
  CHECK(released == 2);
}

/* The device half: offsets and data uploaded to OpenCL buffers in one write
 * each, wrapped with the cl_mem handles, read back in one read each and
 * imported on the host.  Skipped (not failed) without an OpenCL platform or
 * under valgrind (PoCL's allocations drown its report). */
static void test_opencl_round_trip(void) {
  ck_context *ctx = NULL;
  if (getenv("CK_UNDER_VALGRIND") != NULL || ck_context_new("opencl", &ctx) != CK_OK) {
    printf("(no OpenCL context: the device half is skipped)\n");
    return;
  }
  static const int64_t offsets[] = {0, 0, 2, 7};
  static const char data[] = "bb\xe2\x82\xac" "cd";
  ck_buffer *ob = NULL, *db = NULL;
  REQUIRE(ck_buffer_new(ctx, sizeof offsets, &ob) == CK_OK);
  REQUIRE(ck_buffer_new(ctx, 7, &db) == CK_OK);
  size_t oo = 1, od = 1;
  CHECK(ck_buffer_allocate(ob, sizeof offsets, 8, &oo) == CK_OK && oo == 0);
  CHECK(ck_buffer_allocate(db, 7, 8, &od) == CK_OK && od == 0);
  CHECK(ck_buffer_write(ob, 0, offsets, sizeof offsets) == CK_OK);
  CHECK(ck_buffer_write(db, 0, data, 7) == CK_OK);
  ck_arrow_node node = {3, 3, {NULL, ck_buffer_native_handle(ob), ck_buffer_native_handle(db)},
                        NULL, 0};
  struct ArrowDeviceArray d;
  released = 0;
  REQUIRE(ck_arrow_wrap(&node, ARROW_DEVICE_OPENCL, 0, on_release, NULL, &d) == CK_OK);
  CHECK(d.array.buffers[1] == ck_buffer_native_handle(ob));
  int64_t back_off[4];
  char back_data[8] = {0};
  CHECK(ck_buffer_read(ob, 0, back_off, sizeof back_off) == CK_OK);
  CHECK(ck_buffer_read(db, 0, back_data, 7) == CK_OK);
  CHECK(memcmp(back_off, offsets, sizeof offsets) == 0 && memcmp(back_data, data, 7) == 0);
  d.array.release(&d.array);
  CHECK(released == 1);
  ck_array_preamble *a = import_strings(back_off, back_data, 3);
  CHECK(a != NULL);
  if (a != NULL) {
    ck_array_decref(a);
  }
  ck_buffer_decref(ob);
  ck_buffer_decref(db);
  ck_context_decref(ctx);
}

CK_TEST_MAIN(CK_TEST(test_string_tree), CK_TEST(test_nested_move_child),
             CK_TEST(test_refusals), CK_TEST(test_import_host_wrap), CK_TEST(test_wrap_validity),
             CK_TEST(test_opencl_round_trip))
