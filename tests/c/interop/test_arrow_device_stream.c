/* ck_arrow_device_stream_of (arrow_device_stream.h): a stream of one device
 * array made by ck_arrow_wrap -- the schema copied on every get_schema, the
 * array moved out by the first get_next and the end after it, the owner
 * released exactly once (array consumed or not), the refusals. */
#include "ck_test.h"

static int released;

static void on_release(void *handle) {
  (void)handle;
  released++;
}

static const int64_t values[] = {1, 2, 3};

static void make(struct ArrowSchema *schema, struct ArrowDeviceArray *d, int32_t dev) {
  ck_arrow_node n = {3, 2, {NULL, values, NULL}, NULL, 0};
  ck_array_preamble *a = NULL;
  ck_type t = NULL;
  memset(schema, 0, sizeof *schema);
  intptr_t len = 3;
  if (ck_type_parse("strided * int64", &t) == CK_OK &&
      ck_array_empty(t, &len, 1, CK_ARRAY_DEFAULT_FLAGS, &a) == CK_OK) {
    CHECK_OK(ck_arrow_export_schema(a, NULL, schema));
  }
  if (a != NULL) {
    ck_array_decref(a);
  }
  if (t != NULL) {
    ck_type_decref(t);
  }
  CHECK_OK(ck_arrow_wrap(&n, dev, 0, on_release, NULL, d));
}

static void test_one_array(void) {
  struct ArrowSchema schema, got;
  struct ArrowDeviceArray d, out;
  struct ArrowDeviceArrayStream s;
  released = 0;
  make(&schema, &d, ARROW_DEVICE_OPENCL);
  REQUIRE(schema.release != NULL && d.array.release != NULL);
  REQUIRE_OK(ck_arrow_device_stream_of(&schema, &d, &s));
  CHECK(schema.release == NULL && d.array.release == NULL); /* moved in */
  CHECK(s.device_type == ARROW_DEVICE_OPENCL);
  for (int k = 0; k < 2; k++) { /* a copy each time */
    REQUIRE(s.get_schema(&s, &got) == 0);
    CHECK(strcmp(got.format, "l") == 0);
    got.release(&got);
  }
  CHECK(s.get_last_error(&s) == NULL);
  REQUIRE(s.get_next(&s, &out) == 0);
  CHECK(out.array.release != NULL && out.array.length == 3 && out.array.buffers[1] == values);
  CHECK(out.device_type == ARROW_DEVICE_OPENCL && out.device_id == 0);
  struct ArrowDeviceArray end;
  REQUIRE(s.get_next(&s, &end) == 0);
  CHECK(end.array.release == NULL); /* the end */
  s.release(&s);
  CHECK(s.release == NULL && released == 0); /* the consumer holds the array */
  out.array.release(&out.array);
  CHECK(released == 1);
  CHECK(s.get_next(&s, &end) == 22); /* a released stream */
}

static void test_released_unread(void) {
  struct ArrowSchema schema;
  struct ArrowDeviceArray d;
  struct ArrowDeviceArrayStream s;
  released = 0;
  make(&schema, &d, ARROW_DEVICE_CUDA);
  REQUIRE_OK(ck_arrow_device_stream_of(&schema, &d, &s));
  CHECK(s.device_type == ARROW_DEVICE_CUDA);
  s.release(&s);
  CHECK(released == 1 && s.release == NULL); /* marked released */
  struct ArrowSchema got;
  CHECK(s.get_schema(&s, &got) == 22 && s.get_last_error(&s) == NULL);
}

static void test_refusals(void) {
  struct ArrowSchema schema;
  struct ArrowDeviceArray d;
  struct ArrowDeviceArrayStream s;
  released = 0;
  make(&schema, &d, ARROW_DEVICE_OPENCL);
  CHECK(ck_arrow_device_stream_of(NULL, &d, &s) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_arrow_device_stream_of(&schema, NULL, &s) == CK_ERR_INVALID_ARGUMENT);
  CHECK(ck_arrow_device_stream_of(&schema, &d, NULL) == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "NULL") != NULL);
  CHECK(schema.release != NULL && d.array.release != NULL); /* nothing moved */
  d.array.release(&d.array);
  CHECK(ck_arrow_device_stream_of(&schema, &d, &s) == CK_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ck_last_error(), "released") != NULL);
  schema.release(&schema);
  CHECK(released == 1);
}

CK_TEST_MAIN(CK_TEST(test_one_array), CK_TEST(test_released_unread), CK_TEST(test_refusals))
