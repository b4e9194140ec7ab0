/* The Arrow C data interface (arrow.h): export, import, streams, bad input,
 * fault injection.  Arrow arrays made by hand below play the foreign
 * producer; exports are read back field by field. */
#include "arrow_hand.h"

static void test_export_numbers_zero_copy(void) {
  intptr_t n = 5;
  ck_array_preamble *a = arr("strided * int32", 1, &n);
  REQUIRE(a != NULL);
  for (int i = 0; i < 5; i++) ((int32_t *)a->data)[i] = i * 10;
  struct ArrowSchema s;
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s, &x));
  CHECK(strcmp(s.format, "i") == 0);
  CHECK(strcmp(s.name, "") == 0);
  CHECK(s.flags == ARROW_FLAG_NULLABLE && s.n_children == 0);
  CHECK(x.length == 5 && x.null_count == 0 && x.offset == 0 && x.n_buffers == 2);
  CHECK(x.buffers[0] == NULL);
  CHECK(x.buffers[1] == a->data); /* shared */
  ck_array_decref(a);              /* the export keeps the memory */
  CHECK(((const int32_t *)x.buffers[1])[4] == 40);
  x.release(&x);
  s.release(&s);
  CHECK(x.release == NULL && s.release == NULL);
}

static void test_export_2d_and_transposed(void) {
  intptr_t shape[2] = {2, 3};
  ck_array_preamble *a = arr("strided * strided * float64", 2, shape);
  REQUIRE(a != NULL);
  for (int i = 0; i < 6; i++) ((double *)a->data)[i] = i;
  struct ArrowSchema s;
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s, &x));
  CHECK(strcmp(s.format, "+w:3") == 0);
  CHECK(s.n_children == 1 && strcmp(s.children[0]->format, "g") == 0);
  CHECK(x.length == 2 && x.n_children == 1 && x.children[0]->length == 6);
  CHECK(x.children[0]->buffers[1] == a->data);
  x.release(&x);
  s.release(&s);
  /* the transpose: a copy in logical order */
  intptr_t tshape[2] = {3, 2}, tstrides[2] = {8, 24};
  ck_array_preamble *t = NULL;
  REQUIRE_OK(ck_array_view_dims(a, 2, 2, tshape, tstrides, 0, &t));
  REQUIRE_OK(ck_arrow_export(t, NULL, &s, &x));
  CHECK(strcmp(s.format, "+w:2") == 0 && x.length == 3);
  const double *v = x.children[0]->buffers[1];
  CHECK(v != (const double *)a->data);
  CHECK(v[0] == 0 && v[1] == 3 && v[2] == 1 && v[3] == 4 && v[4] == 2 && v[5] == 5);
  x.release(&x);
  s.release(&s);
  ck_array_decref(t);
  ck_array_decref(a);
}

static void test_export_bool_bits(void) {
  intptr_t n = 10;
  ck_array_preamble *a = arr("strided * bool", 1, &n);
  REQUIRE(a != NULL);
  a->data[0] = a->data[3] = a->data[9] = 1;
  struct ArrowSchema s;
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s, &x));
  CHECK(strcmp(s.format, "b") == 0);
  const uint8_t *bits = x.buffers[1];
  CHECK(bits[0] == 0x09 && bits[1] == 0x02);
  x.release(&x);
  s.release(&s);
  ck_array_decref(a);
}

static ck_array_preamble *strings(const char *const *texts, intptr_t n) {
  ck_array_preamble *a = arr("strided * string", 1, &n);
  for (intptr_t i = 0; a != NULL && i < n; i++) {
    if (ck_string_assign(a->data + 16 * i, ck_array_arrmeta(a) + 16, texts[i],
                         strlen(texts[i])) != CK_OK) {
      fprintf(stderr, "assign: %s\n", ck_last_error());
    }
  }
  return a;
}

static const char *const TEXTS[] = {"", "short", "exactly12byt", "a longer string, héllo wörld",
                                    "😀 emoji and more text here"};

/* The default for strings: large_utf8 (int64 offsets, the text copied once). */
static void test_export_strings_default_large_utf8(void) {
  ck_array_preamble *a = strings(TEXTS, 5);
  REQUIRE(a != NULL);
  struct ArrowSchema s;
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s, &x));
  CHECK(strcmp(s.format, "U") == 0);
  REQUIRE(x.n_buffers == 3 && x.length == 5 && x.null_count == 0);
  const int64_t *offs = x.buffers[1];
  CHECK(offs[0] == 0);
  for (int i = 0; i < 5; i++) {
    CHECK(offs[i + 1] - offs[i] == (int64_t)strlen(TEXTS[i]));
    CHECK(memcmp((const char *)x.buffers[2] + offs[i], TEXTS[i], strlen(TEXTS[i])) == 0);
  }
  struct ArrowSchema s2;
  REQUIRE_OK(ck_arrow_export_schema(a, NULL, &s2));
  CHECK(strcmp(s2.format, "U") == 0); /* the schema-only export agrees */
  s2.release(&s2);
  ck_array_preamble *b = import_ok(&s, &x);
  REQUIRE(b != NULL);
  for (int i = 0; i < 5; i++) CHECK(str_eq(str_at(b, i), TEXTS[i]));
  s.release(&s);
  ck_array_decref(a);
  ck_array_decref(b);
}

/* Texts adjacent in the arena are copied as runs: slots that point out of
 * order, twice at the same text, at empty texts or at a text in the middle
 * of a run export their own bytes (the run breaks where they are not
 * adjacent). */
static void test_export_strings_out_of_order(void) {
  static const char *const words[] = {"ab", "cde", "", "f", "ghij", "k"};
  ck_array_preamble *a = strings(words, 6);
  REQUIRE(a != NULL);
  ck_string *v = (ck_string *)a->data;
  ck_string orig[6];
  memcpy(orig, v, sizeof orig);
  /* ghij, ab, ab, cde, "", k, f: a repeat, a break, a run resumed after an empty */
  const int order[] = {4, 0, 0, 1, 2, 5, 3};
  intptr_t n = 7;
  ck_array_preamble *b = arr("strided * string", 1, &n);
  REQUIRE(b != NULL);
  for (int i = 0; i < 7; i++) {
    REQUIRE_OK(ck_string_assign(b->data + 16 * i, ck_array_arrmeta(b) + 16, "", 0));
  }
  for (int i = 0; i < 7; i++) ((ck_string *)b->data)[i] = orig[order[i]];
  const char *formats[] = {"U", "u"};
  for (int f = 0; f < 2; f++) {
    struct ArrowSchema req = sc(formats[f], "", 0, NULL), s;
    struct ArrowArray x;
    REQUIRE_OK(ck_arrow_export(b, &req, &s, &x));
    int64_t at = 0;
    for (int i = 0; i < 7; i++) {
      const char *w = words[order[i]];
      int64_t o0 = f == 0 ? ((const int64_t *)x.buffers[1])[i]
                          : ((const int32_t *)x.buffers[1])[i];
      int64_t o1 = f == 0 ? ((const int64_t *)x.buffers[1])[i + 1]
                          : ((const int32_t *)x.buffers[1])[i + 1];
      CHECK(o0 == at && o1 - o0 == (int64_t)strlen(w));
      CHECK(memcmp((const char *)x.buffers[2] + o0, w, strlen(w)) == 0);
      at = o1;
    }
    CHECK(at == 13);
    x.release(&x);
    s.release(&s);
  }
  /* the slots of b point into a's arena, not b's: give b its own again */
  for (int i = 0; i < 7; i++) ((ck_string *)b->data)[i] = (ck_string){NULL, NULL};
  ck_array_decref(b);
  ck_array_decref(a);
}

static void test_export_string_view(void) {
  ck_array_preamble *a = strings(TEXTS, 5);
  REQUIRE(a != NULL);
  struct ArrowSchema req = sc("vu", "", 0, NULL), s; /* asked for: no copy of the text */
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, &req, &s, &x));
  CHECK(strcmp(s.format, "vu") == 0);
  REQUIRE(x.n_buffers == 4); /* validity, views, one chunk, sizes */
  const char *views = x.buffers[1];
  int32_t size, buf, off;
  memcpy(&size, views + 16 * 1, 4);
  CHECK(size == 5 && memcmp(views + 16 + 4, "short", 5) == 0);
  memcpy(&size, views + 16 * 3, 4);
  memcpy(&buf, views + 16 * 3 + 8, 4);
  memcpy(&off, views + 16 * 3 + 12, 4);
  CHECK(size == (int32_t)strlen(TEXTS[3]) && buf == 0);
  CHECK(memcmp((const char *)x.buffers[2] + off, TEXTS[3], (size_t)size) == 0);
  CHECK((const char *)x.buffers[2] + off == str_at(a, 3)->begin); /* not copied */
  CHECK(((const int64_t *)x.buffers[3])[0] >= off + size);
  /* round trip: the import points into the exported views and chunks */
  ck_array_preamble *b = import_ok(&s, &x);
  REQUIRE(b != NULL);
  for (int i = 0; i < 5; i++) CHECK(str_eq(str_at(b, i), TEXTS[i]));
  CHECK(!(ck_array_flags(b) & CK_ARRAY_WRITE));
  s.release(&s);
  ck_array_decref(a);
  for (int i = 0; i < 5; i++) CHECK(str_eq(str_at(b, i), TEXTS[i])); /* still alive */
  ck_array_decref(b);
}

static void test_export_utf8_requested(void) {
  ck_array_preamble *a = strings(TEXTS, 5);
  REQUIRE(a != NULL);
  const char *formats[] = {"u", "U", "z", "vz"};
  for (int f = 0; f < 4; f++) {
    struct ArrowSchema req = sc(formats[f], "", 0, NULL), s;
    struct ArrowArray x;
    REQUIRE_OK(ck_arrow_export(a, &req, &s, &x));
    CHECK(strcmp(s.format, formats[f]) == 0);
    if (f < 3) {
      bool large = f == 1;
      int64_t o4 = large ? ((const int64_t *)x.buffers[1])[4]
                         : ((const int32_t *)x.buffers[1])[4];
      int64_t o5 = large ? ((const int64_t *)x.buffers[1])[5]
                         : ((const int32_t *)x.buffers[1])[5];
      CHECK(o5 - o4 == (int64_t)strlen(TEXTS[4]));
      CHECK(memcmp((const char *)x.buffers[2] + o4, TEXTS[4], strlen(TEXTS[4])) == 0);
    }
    ck_array_preamble *b = import_ok(&s, &x);
    REQUIRE(b != NULL);
    for (int i = 0; i < 5; i++) CHECK(str_eq(str_at(b, i), TEXTS[i]));
    ck_array_decref(b);
    s.release(&s);
  }
  ck_array_decref(a);
}

static void test_export_var_struct_roundtrip(void) {
  ck_type t = P("strided * {x: int32, tags: var * string, p: 2 * float32}");
  intptr_t n = 3;
  ck_array_preamble *a = NULL;
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  const char *am = ck_array_arrmeta(a) + 16; /* the struct's arrmeta */
  size_t tags_meta;
  REQUIRE_OK(ck_struct_field(ck_type_element(a->type), 1, NULL, NULL, NULL, &tags_meta));
  for (int i = 0; i < 3; i++) {
    char *el = a->data + 32 * i;
    *(int32_t *)el = i + 1;
    ck_type vt = NULL;
    REQUIRE_OK(ck_struct_field(ck_type_element(a->type), 1, NULL, &vt, NULL, NULL));
    REQUIRE_OK(ck_var_dim_alloc(vt, el + 8, am + tags_meta, (size_t)i));
    ck_var_dim_data *d = (ck_var_dim_data *)(el + 8);
    for (int j = 0; j < i; j++) {
      REQUIRE_OK(ck_string_assign(d->begin + 16 * j, am + tags_meta + 24, TEXTS[3 + j % 2],
                                  strlen(TEXTS[3 + j % 2])));
    }
    ((float *)(el + 24))[0] = (float)i;
    ((float *)(el + 24))[1] = -(float)i;
  }
  struct ArrowSchema s;
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s, &x));
  CHECK(strcmp(s.format, "+s") == 0 && s.n_children == 3);
  CHECK(strcmp(s.children[0]->name, "x") == 0 && strcmp(s.children[0]->format, "i") == 0);
  CHECK(strcmp(s.children[1]->format, "+l") == 0);
  CHECK(strcmp(s.children[1]->children[0]->format, "U") == 0);
  CHECK(strcmp(s.children[2]->format, "+w:2") == 0);
  const int32_t *offs = x.children[1]->buffers[1];
  CHECK(offs[0] == 0 && offs[1] == 0 && offs[2] == 1 && offs[3] == 3);
  /* the same through the schema-only export */
  struct ArrowSchema s2;
  REQUIRE_OK(ck_arrow_export_schema(a, NULL, &s2));
  CHECK(strcmp(s2.children[1]->children[0]->format, "U") == 0);
  s2.release(&s2);
  ck_array_preamble *b = import_ok(&s, &x);
  REQUIRE(b != NULL);
  char buf[256];
  CHECK(ck_type_print(b->type, buf, sizeof buf, NULL) == CK_OK);
  CHECK(strcmp(buf, "strided * {x: int32, tags: var * string, p: 2 * float32}") == 0);
  const char *bel = b->data + 32 * 2;
  const ck_var_dim_data *d = (const ck_var_dim_data *)(bel + 8);
  CHECK(*(const int32_t *)bel == 3 && d->size == 2);
  CHECK(str_eq((const ck_string *)d->begin, TEXTS[3]));
  CHECK(str_eq((const ck_string *)(d->begin + 16), TEXTS[4]));
  CHECK(((const float *)(bel + 24))[1] == -2.0f);
  ck_array_decref(b);
  s.release(&s);
  ck_array_decref(a);
}

static void test_export_refusals(void) {
  intptr_t n = 2;
  ck_array_preamble *c = arr("strided * complex128", 1, &n);
  ck_array_preamble *zero_d = arr("int32", 0, NULL);
  ck_array_preamble *i = arr("strided * int64", 1, &n);
  ck_array_preamble *f = arr("strided * 3 * int64", 1, &n);
  REQUIRE(c != NULL && zero_d != NULL && i != NULL && f != NULL);
  struct ArrowSchema s;
  struct ArrowArray x;
  CHECK_ERR(ck_arrow_export(c, NULL, &s, &x), CK_ERR_NOT_SUPPORTED, "complex128");
  CHECK(s.release == NULL && x.release == NULL);
  CHECK_ERR(ck_arrow_export(zero_d, NULL, &s, &x), CK_ERR_INVALID_ARGUMENT, "0-d");
  struct ArrowSchema item = sc("l", "item", 0, NULL), *kids[1] = {&item};
  struct ArrowSchema want_struct = sc("+s", "", 1, kids);
  CHECK_ERR(ck_arrow_export(i, &want_struct, &s, &x), CK_ERR_TYPE, "requested schema");
  struct ArrowSchema want_utf8 = sc("u", "", 0, NULL);
  CHECK_ERR(ck_arrow_export(i, &want_utf8, &s, &x), CK_ERR_TYPE, "'u'");
  struct ArrowSchema want_w4 = sc("+w:4", "", 1, kids);
  CHECK_ERR(ck_arrow_export(f, &want_w4, &s, &x), CK_ERR_TYPE, "'+w:4'");
  struct ArrowSchema released = sc("l", "", 0, NULL);
  released.release = NULL;
  CHECK_ERR(ck_arrow_export(i, &released, &s, &x), CK_ERR_INVALID_STATE, "released");
  /* another leaf type: best effort, our own */
  struct ArrowSchema want_i32 = sc("i", "", 0, NULL);
  REQUIRE_OK(ck_arrow_export(i, &want_i32, &s, &x));
  CHECK(strcmp(s.format, "l") == 0);
  x.release(&x);
  s.release(&s);
  ck_array_decref(c);
  ck_array_decref(zero_d);
  ck_array_decref(i);
  ck_array_decref(f);
}

static void test_child_moved_out(void) {
  ck_type t = P("strided * {a: int64, b: string}");
  intptr_t n = 4;
  ck_array_preamble *a = NULL;
  REQUIRE_OK(ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a));
  ck_type_decref(t);
  size_t bmeta;
  REQUIRE_OK(ck_struct_field(ck_type_element(a->type), 1, NULL, NULL, NULL, &bmeta));
  for (int i = 0; i < 4; i++) {
    *(int64_t *)(a->data + 24 * i) = 7 * i;
    REQUIRE_OK(ck_string_assign(a->data + 24 * i + 8, ck_array_arrmeta(a) + 16 + bmeta,
                                TEXTS[3], strlen(TEXTS[3])));
  }
  struct ArrowArray x;
  REQUIRE_OK(ck_arrow_export(a, NULL, NULL, &x));
  ck_array_decref(a);
  struct ArrowArray c0 = *x.children[0], c1 = *x.children[1]; /* moved */
  x.children[0]->release = NULL;
  x.children[1]->release = NULL;
  x.release(&x);
  CHECK(((const int64_t *)c0.buffers[1])[3] == 21);
  int32_t off;
  memcpy(&off, (const char *)c1.buffers[1] + 16 * 2 + 12, 4);
  CHECK(memcmp((const char *)c1.buffers[2] + off, TEXTS[3], strlen(TEXTS[3])) == 0);
  c0.release(&c0);
  c1.release(&c1);
}

/* ---- import of foreign arrays ---------------------------------------------------------- */

static void test_import_primitive_zero_copy_and_offset(void) {
  static const int16_t vals[6] = {1, 2, 3, 4, 5, 6};
  const void *bufs[2] = {NULL, vals};
  struct ArrowArray x = mk(4, 0, 2, bufs, 0, NULL);
  x.offset = 2;
  struct ArrowSchema s = sc("s", "", 0, NULL);
  int before = released_arrays;
  ck_array_preamble *a = import_ok(&s, &x);
  REQUIRE(a != NULL);
  CHECK(x.release == NULL); /* moved */
  CHECK(a->data == (const char *)(vals + 2));
  CHECK(released_arrays == before);
  ck_array_decref(a);
  CHECK(released_arrays == before + 1); /* the memblock released the array */
}

static void test_import_nulls(void) {
  static const int32_t vals[5] = {1, 2, 3, 4, 5};
  static const uint8_t validity[1] = {0x1b}; /* 11011: element 2 is null */
  const void *bufs[2] = {validity, vals};
  struct ArrowSchema s = sc("i", "", 0, NULL);
  struct ArrowArray x = mk(5, 1, 2, bufs, 0, NULL);
  ck_array_preamble *a = NULL;
  /* without a fill value: an option array `5 * ?int32` (test_arrow_nulls.c) */
  REQUIRE_OK(ck_arrow_import(&s, &x, NULL, &a));
  CHECK(x.release == NULL && ck_type_is_option(ck_type_dtype(ck_array_type(a))));
  ck_array_decref(a);
  a = NULL;
  /* a fill value (a float converted to int32) */
  ck_array_preamble *fill = arr("float64", 0, NULL);
  *(double *)fill->data = -1.0;
  x = mk(5, -1, 2, bufs, 0, NULL); /* null count unknown: counted */
  REQUIRE_OK(ck_arrow_import(&s, &x, fill, &a));
  const int32_t *v = (const int32_t *)a->data;
  CHECK(v[0] == 1 && v[1] == 2 && v[2] == -1 && v[3] == 4 && v[4] == 5);
  ck_array_decref(a);
  /* a fill that does not fit */
  *(double *)fill->data = 0.5;
  x = mk(5, 1, 2, bufs, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, fill, &a), CK_ERR_VALUE, "fill value");
  ck_array_decref(fill);
  /* strings in a struct: the field's path and count */
  static const int32_t offs[4] = {0, 1, 1, 3};
  static const char text[] = "abc";
  static const uint8_t v2[1] = {0x05}; /* 101: element 1 null */
  const void *sbufs[3] = {v2, offs, text};
  struct ArrowArray kid = mk(3, 1, 3, sbufs, 0, NULL);
  const void *pbufs[1] = {NULL};
  struct ArrowArray parent = mk(3, 0, 1, pbufs, 1, &kid);
  struct ArrowSchema name = sc("u", "name", 0, NULL), *kids[1] = {&name};
  struct ArrowSchema ps = sc("+s", "", 1, kids);
  /* without a fill value: the field is an option, `{name: ?string}` */
  REQUIRE_OK(ck_arrow_import(&ps, &parent, NULL, &a));
  CHECK(strcmp(tstr(ck_type_dtype(ck_array_type(a))), "{name: ?string}") == 0);
  ck_array_preamble *fname = NULL;
  REQUIRE_OK(ck_array_field(a, "name", 4, &fname));
  bool valid[3] = {false, true, false};
  for (intptr_t i = 0; i < 3; i++) CHECK_OK(ck_array_valid_at(fname, i, &valid[i]));
  CHECK(valid[0] && !valid[1] && valid[2]);
  ck_array_decref(fname);
  ck_array_decref(a);
  a = NULL;
  ck_array_preamble *sfill = strings((const char *const[]){"<NA>"}, 1);
  ck_array_preamble *sfill0 = NULL;
  REQUIRE_OK(ck_array_index(sfill, 0, 0, &sfill0));
  kid = mk(3, 1, 3, sbufs, 0, NULL);
  parent = mk(3, 0, 1, pbufs, 1, &kid);
  REQUIRE_OK(ck_arrow_import(&ps, &parent, sfill0, &a));
  ck_array_decref(sfill);
  ck_array_decref(sfill0); /* the import keeps its own converted copy */
  CHECK(str_eq((const ck_string *)(a->data + 0), "a"));
  CHECK(str_eq((const ck_string *)(a->data + 16), "<NA>"));
  CHECK(str_eq((const ck_string *)(a->data + 32), "bc"));
  ck_array_decref(a);
  /* a null struct cannot be filled; without a fill value it is `?{...}` */
  static const uint8_t v3[1] = {0x06};
  const void *nbufs[1] = {v3};
  kid = mk(3, 0, 3, sbufs + 0, 0, NULL);
  kid.buffers[0] = NULL;
  parent = mk(3, 1, 1, nbufs, 1, &kid);
  ck_array_preamble *ifill = arr("int64", 0, NULL);
  REQUIRE(ifill != NULL);
  CHECK_ERR(ck_arrow_import(&ps, &parent, ifill, &a), CK_ERR_VALUE, "holds 1 nulls");
  ck_array_decref(ifill);
  kid = mk(3, 0, 3, sbufs + 0, 0, NULL);
  kid.buffers[0] = NULL;
  parent = mk(3, 1, 1, nbufs, 1, &kid);
  REQUIRE_OK(ck_arrow_import(&ps, &parent, NULL, &a));
  CHECK(strcmp(tstr(ck_type_dtype(ck_array_type(a))), "?{name: string}") == 0);
  int64_t nulls = -1, first = -1;
  CHECK_OK(ck_array_null_count(a, &nulls, &first));
  CHECK(nulls == 1 && first == 0);
  ck_array_decref(a);
}

static void test_import_malformed(void) {
  static const int32_t vals[4] = {1, 2, 3, 4};
  static const int32_t bad_offs[3] = {0, 3, 1};
  static const char text[] = "abcd";
  static const char bad_utf8[] = "ab\xff";
  const void *bufs[3] = {NULL, vals, NULL};
  struct ArrowSchema s = sc("i", "", 0, NULL);
  ck_array_preamble *a = NULL;
  struct ArrowArray x = mk(4, 0, 2, bufs, 0, NULL);
  x.release = NULL; /* released */
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_STATE, "released");
  x.release = hand_release;
  x.release(&x);
  x = mk(-1, 0, 2, bufs, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "negative");
  x = mk(4, 0, 3, bufs, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "3 buffers");
  x = mk(4, 0, 2, bufs, 0, NULL);
  x.offset = -2;
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "negative");
  const void *nullbuf[2] = {NULL, NULL};
  x = mk(4, 0, 2, nullbuf, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "buffer 1 is NULL");
  struct ArrowSchema us = sc("u", "", 0, NULL);
  const void *sb[3] = {NULL, bad_offs, text};
  x = mk(2, 0, 3, sb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&us, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "decrease");
  /* offsets that fall far below the first and rise again: no byte is read
   * (or address formed) at them; the decrease is named (found by make fuzz) */
  static const int32_t wild_offs[5] = {0, INT32_MIN, INT32_MIN + 5, 2, 4};
  const void *wb[3] = {NULL, wild_offs, text};
  x = mk(4, 0, 3, wb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&us, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "offsets 0 and 1 decrease");
  static const int32_t past_offs[4] = {0, 9, 1, 2};
  const void *pb[3] = {NULL, past_offs, text};
  x = mk(3, 0, 3, pb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&us, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "offsets 1 and 2 decrease");
  static const int32_t offs3[2] = {0, 3};
  const void *ub[3] = {NULL, offs3, bad_utf8};
  x = mk(1, 0, 3, ub, 0, NULL);
  CHECK_ERR(ck_arrow_import(&us, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "UTF-8");
  /* a string starting inside another's character (the whole-range check) */
  static const char two_e[] = "\xc3\xa9\xc3\xa9";
  static const int32_t mid[3] = {0, 1, 4};
  const void *mb[3] = {NULL, mid, two_e};
  x = mk(2, 0, 3, mb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&us, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "element 1");
  /* binary takes any bytes */
  struct ArrowSchema zs = sc("z", "", 0, NULL);
  x = mk(1, 0, 3, ub, 0, NULL);
  REQUIRE_OK(ck_arrow_import(&zs, &x, NULL, &a));
  ck_array_decref(a);
  /* list offsets past the child */
  static const int32_t loffs[3] = {0, 2, 9};
  const void *cb[2] = {NULL, vals};
  struct ArrowArray kid = mk(4, 0, 2, cb, 0, NULL);
  const void *lb[2] = {NULL, loffs};
  x = mk(2, 0, 2, lb, 1, &kid);
  struct ArrowSchema item = sc("i", "item", 0, NULL), *kids[1] = {&item};
  struct ArrowSchema ls = sc("+l", "", 1, kids);
  CHECK_ERR(ck_arrow_import(&ls, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "reach 9");
  /* a view into a missing buffer */
  static char views[16];
  int32_t vsize = 20, vbuf = 1, voff = 0;
  memcpy(views, &vsize, 4);
  memcpy(views + 8, &vbuf, 4);
  memcpy(views + 12, &voff, 4);
  static const int64_t vsizes[1] = {4};
  const void *vb[4] = {NULL, views, text, vsizes};
  struct ArrowSchema vs = sc("vu", "", 0, NULL);
  x = mk(1, 0, 4, vb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&vs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "buffer 1 of 1");
  vbuf = 0;
  memcpy(views + 8, &vbuf, 4);
  x = mk(1, 0, 4, vb, 0, NULL);
  CHECK_ERR(ck_arrow_import(&vs, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT, "outside buffer 0");
  /* formats without a ckernels type */
  struct ArrowSchema ts = sc("tiM", "", 0, NULL);
  x = mk(4, 0, 2, bufs, 0, NULL);
  CHECK_ERR(ck_arrow_import(&ts, &x, NULL, &a), CK_ERR_NOT_SUPPORTED, "'tiM'");
  struct ArrowSchema dict_values = sc("u", "", 0, NULL);
  struct ArrowSchema ds = sc("i", "", 0, NULL);
  ds.dictionary = &dict_values;
  x = mk(4, 0, 2, bufs, 0, NULL);
  /* a dictionary declared by the schema but missing from the array */
  CHECK_ERR(ck_arrow_import(&ds, &x, NULL, &a), CK_ERR_INVALID_ARGUMENT,
            "declares a dictionary");
  struct ArrowSchema rel = sc("i", "", 0, NULL);
  rel.release = NULL;
  x = mk(4, 0, 2, bufs, 0, NULL);
  CHECK_ERR(ck_arrow_import(&rel, &x, NULL, &a), CK_ERR_INVALID_STATE, "released");
  CHECK(x.release == NULL);
}

static void test_import_list_views_and_fixed(void) {
  static const int64_t vals[6] = {10, 11, 12, 13, 14, 15};
  static const int32_t offs[3] = {4, 0, 1};
  static const int32_t sizes[3] = {2, 0, 3};
  const void *cb[2] = {NULL, vals};
  struct ArrowArray kid = mk(6, 0, 2, cb, 0, NULL);
  const void *lb[3] = {NULL, offs, sizes};
  struct ArrowArray x = mk(3, 0, 3, lb, 1, &kid);
  struct ArrowSchema item = sc("l", "item", 0, NULL), *kids[1] = {&item};
  struct ArrowSchema ls = sc("+vl", "", 1, kids);
  ck_array_preamble *a = import_ok(&ls, &x);
  REQUIRE(a != NULL);
  const ck_var_dim_data *d = (const ck_var_dim_data *)a->data;
  CHECK(d[0].size == 2 && ((const int64_t *)d[0].begin)[0] == 14);
  CHECK(d[1].size == 0);
  CHECK(d[2].size == 3 && ((const int64_t *)d[2].begin)[2] == 13);
  CHECK(d[2].begin == (const char *)(vals + 1)); /* shared */
  ck_array_decref(a);
  /* fixed-size list with a parent offset */
  kid = mk(6, 0, 2, cb, 0, NULL);
  const void *fb[1] = {NULL};
  x = mk(2, 0, 1, fb, 1, &kid);
  x.offset = 1;
  struct ArrowSchema fs = sc("+w:2", "", 1, kids);
  a = import_ok(&fs, &x);
  REQUIRE(a != NULL);
  const int64_t *v = (const int64_t *)a->data;
  CHECK(v[0] == 12 && v[1] == 13 && v[2] == 14 && v[3] == 15);
  CHECK(a->data == (const char *)(vals + 2)); /* numbers in fixed-size lists: shared */
  CHECK(strcmp(tstr(a->type), "strided * 2 * int64") == 0);
  ck_array_decref(a);
  /* ... unless a child holds nulls: a copy, with the error naming the field */
  static const uint8_t cvalid[1] = {0xfe};
  const void *cbn[2] = {cvalid, vals};
  kid = mk(6, 1, 2, cbn, 0, NULL);
  x = mk(2, 0, 1, fb, 1, &kid);
  CHECK_ERR(ck_arrow_import(&fs, &x, NULL, &a), CK_ERR_VALUE, "field '[]' holds 1 nulls");
  /* bools */
  static const uint8_t bits[1] = {0xa5};
  const void *bb[2] = {NULL, bits};
  x = mk(8, 0, 2, bb, 0, NULL);
  struct ArrowSchema bs = sc("b", "", 0, NULL);
  a = import_ok(&bs, &x);
  REQUIRE(a != NULL);
  CHECK(a->data[0] == 1 && a->data[1] == 0 && a->data[2] == 1 && a->data[7] == 1);
  ck_array_decref(a);
}

/* ---- streams ------------------------------------------------------------------------------ */

typedef struct two_chunks {
  ck_array_preamble *parts[2];
  int next;
} two_chunks;

static int tc_schema(struct ArrowArrayStream *s, struct ArrowSchema *out) {
  two_chunks *p = s->private_data;
  return ck_arrow_export_schema(p->parts[0], NULL, out) == CK_OK ? 0 : 5;
}
static int tc_next(struct ArrowArrayStream *s, struct ArrowArray *out) {
  two_chunks *p = s->private_data;
  if (p->next == 2) {
    memset(out, 0, sizeof *out);
    return 0;
  }
  return ck_arrow_export(p->parts[p->next++], NULL, NULL, out) == CK_OK ? 0 : 5;
}
static const char *tc_error(struct ArrowArrayStream *s) { (void)s; return "boom"; }
static void tc_release(struct ArrowArrayStream *s) {
  two_chunks *p = s->private_data;
  ck_array_decref(p->parts[0]);
  ck_array_decref(p->parts[1]);
  free(p);
  s->release = NULL;
}

static void test_streams(void) {
  ck_array_preamble *a = strings(TEXTS, 5);
  REQUIRE(a != NULL);
  struct ArrowArrayStream st;
  REQUIRE_OK(ck_arrow_export_stream(a, NULL, &st));
  struct ArrowSchema s;
  CHECK(st.get_schema(&st, &s) == 0 && strcmp(s.format, "U") == 0);
  s.release(&s);
  ck_array_preamble *b = NULL;
  REQUIRE_OK(ck_arrow_import_stream(&st, NULL, &b));
  CHECK(st.release == NULL);
  for (int i = 0; i < 5; i++) CHECK(str_eq(str_at(b, i), TEXTS[i]));
  ck_array_decref(b);
  CHECK_ERR(ck_arrow_import_stream(&st, NULL, &b), CK_ERR_INVALID_STATE, "released");
  /* two chunks: concatenated into an array of its own */
  two_chunks *p = calloc(1, sizeof *p);
  p->parts[0] = a;
  p->parts[1] = strings(TEXTS + 2, 3);
  struct ArrowArrayStream two = {tc_schema, tc_next, tc_error, tc_release, p};
  REQUIRE_OK(ck_arrow_import_stream(&two, NULL, &b));
  intptr_t n;
  CHECK_OK(ck_array_shape(b, &n, 1, NULL));
  CHECK(n == 8);
  CHECK(str_eq(str_at(b, 4), TEXTS[4]) && str_eq(str_at(b, 7), TEXTS[4]));
  CHECK(ck_array_flags(b) & CK_ARRAY_WRITE);
  ck_array_decref(b);
  /* a failing producer */
  p = calloc(1, sizeof *p);
  p->parts[0] = strings(TEXTS, 1);
  p->parts[1] = arr("strided * int32", 1, &n); /* another type: export of a bad chunk */
  p->next = 0;
  two = (struct ArrowArrayStream){tc_schema, tc_next, tc_error, tc_release, p};
  CHECK_ERR(ck_arrow_import_stream(&two, NULL, &b), CK_ERR_INVALID_ARGUMENT, "array 1");
}

/* ---- allocation failures ------------------------------------------------------------------- */

static ck_status alloc_sequence(void) {
  ck_type t = NULL;
  ck_array_preamble *a = NULL, *b = NULL, *c = NULL;
  struct ArrowSchema s = {0};
  struct ArrowArray x = {0};
  struct ArrowArrayStream st = {0};
  intptr_t n = 3;
  ck_status r = ck_type_parse("strided * {x: int32, tags: var * string, w: 2 * bool}", &t);
  if (r == CK_OK) r = ck_array_empty(t, &n, 1, CK_ARRAY_DEFAULT_FLAGS, &a);
  if (r == CK_OK) {
    ck_type vt = NULL;
    size_t vm;
    (void)ck_struct_field(ck_type_element(t), 1, NULL, &vt, NULL, &vm);
    char *am = ck_array_arrmeta(a) + 16;
    for (int i = 0; r == CK_OK && i < 3; i++) {
      r = ck_var_dim_alloc(vt, a->data + 32 * i + 8, am + vm, 2);
      ck_var_dim_data *d = (ck_var_dim_data *)(a->data + 32 * i + 8);
      for (int j = 0; r == CK_OK && j < 2; j++) {
        r = ck_string_assign(d->begin + 16 * j, am + vm + 24, TEXTS[3], strlen(TEXTS[3]));
      }
    }
  }
  if (r == CK_OK) r = ck_arrow_export(a, NULL, &s, &x);
  if (r == CK_OK) r = ck_arrow_import(&s, &x, NULL, &b);
  if (r == CK_OK) r = ck_arrow_export_stream(b, NULL, &st);
  if (r == CK_OK) r = ck_arrow_import_stream(&st, NULL, &c);
  if (st.release != NULL) st.release(&st);
  if (x.release != NULL) x.release(&x);
  if (s.release != NULL) s.release(&s);
  ck_array_decref(a);
  ck_array_decref(b);
  ck_array_decref(c);
  ck_type_decref(t);
  return r;
}

static void test_fail_every_allocation(void) {
  int64_t live = ck_memblock_live_count();
  ck_test_faults f = CK_TEST_FAULTS(2000);
  while (ck_test_faults_arm(&f)) {
    ck_status st = alloc_sequence();
    bool fired = ck_test_faults_fired(&f);
    CHECK(ck_memblock_live_count() == live);
    if (!fired) {
      CHECK(st == CK_OK);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    if (st != CK_ERR_NO_MEMORY) {
      fprintf(stderr, "k=%d: %s %s\n", (int)f.k, ck_status_name(st), ck_last_error());
    }
  }
  CHECK(f.runs >= 20);
  CHECK(alloc_sequence() == CK_OK);
}

CK_TEST_MAIN(CK_TEST(test_export_numbers_zero_copy), CK_TEST(test_export_2d_and_transposed),
             CK_TEST(test_export_bool_bits), CK_TEST(test_export_strings_default_large_utf8),
             CK_TEST(test_export_string_view), CK_TEST(test_export_strings_out_of_order),
             CK_TEST(test_export_utf8_requested), CK_TEST(test_export_var_struct_roundtrip),
             CK_TEST(test_export_refusals), CK_TEST(test_child_moved_out),
             CK_TEST(test_import_primitive_zero_copy_and_offset), CK_TEST(test_import_nulls),
             CK_TEST(test_import_malformed), CK_TEST(test_import_list_views_and_fixed),
             CK_TEST(test_streams), CK_TEST(test_fail_every_allocation))
