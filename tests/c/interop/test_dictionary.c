/* Dictionary columns `strided * dictionary[I, V]`: the type (grammar, print,
 * equality, refusals), columns over indices and values (zero-copy, index
 * checks, null indices), decoding, and Arrow dictionary arrays in and out
 * (zero-copy indices and text, the ordered flag, null indices, dictionaries
 * with nulls refused, a round trip through export and import). */
#include "arrow_hand.h"
#include "ckernel/dictionary.h"
#include "ckernel/validity.h"

static void test_type_grammar(void) {
  static const char *const round[] = {
      "dictionary[int32, string]", "dictionary[uint8, string, ordered]",
      "dictionary[int64, float64]", "?dictionary[int16, {x: int32, s: string}]",
      "3 * dictionary[int8, bytes[align=4]]", "var * dictionary[uint64, var * int32]"};
  for (size_t i = 0; i < sizeof round / sizeof round[0]; i++) {
    ck_type t = P(round[i]);
    REQUIRE(t != NULL);
    CHECK(strcmp(tstr(t), round[i]) == 0);
    ck_type_decref(t);
  }
  ck_type a = P("dictionary[ int32 ,string ]"), b = P("dictionary[int32, string]");
  ck_type c = P("dictionary[int32, string, ordered]"), d = P("dictionary[int8, string]");
  REQUIRE(a && b && c && d);
  CHECK(ck_type_equal(a, b) && ck_type_hash(a) == ck_type_hash(b));
  CHECK(!ck_type_equal(a, c) && !ck_type_equal(a, d));
  CHECK(ck_type_is_dictionary(a) && !ck_type_is_dictionary(CK_BUILTIN(CK_TYPE_INT32)));
  CHECK(ck_dictionary_index_id(d) == CK_TYPE_INT8);
  CHECK(ck_dictionary_ordered(c) && !ck_dictionary_ordered(a));
  CHECK(ck_type_id_of(ck_dictionary_value_type(a)) == CK_TYPE_STRING);
  CHECK(ck_type_data_size(d) == 1 && ck_type_data_size(a) == 4);
  CHECK(ck_type_arrmeta_size(a) == sizeof(ck_dictionary_arrmeta));
  CHECK(strcmp(ck_type_id_name(CK_TYPE_DICTIONARY), "dictionary") == 0);
  ck_type_decref(a);
  ck_type_decref(b);
  ck_type_decref(c);
  ck_type_decref(d);
  ck_type t = NULL;
  CHECK_ERR(ck_type_parse("dictionary[float32, string]", &t), CK_ERR_PARSE,
            "integer index type");
  CHECK_ERR(ck_type_parse("dictionary[int32, ?string]", &t), CK_ERR_PARSE, "no nulls");
  CHECK_ERR(ck_type_parse("dictionary[int32, string, sorted]", &t), CK_ERR_PARSE,
            "'ordered'");
  CHECK_ERR(ck_type_parse("dictionary[int32]", &t), CK_ERR_PARSE, "','");
  CHECK_ERR(ck_type_parse("dictionary[int32, dictionary[int8, string]]", &t), CK_ERR_PARSE,
            "dictionary");
  CHECK_ERR(ck_dictionary_type_new(CK_TYPE_BOOL, CK_BUILTIN(CK_TYPE_INT32), false, &t),
            CK_ERR_TYPE, "integer");
}

/* `n * int32` indices (an array of its own) over 3 strings. */
static ck_array_preamble *strings3(void) {
  intptr_t n = 3;
  ck_array_preamble *v = arr("strided * string", 1, &n);
  static const char *const w[3] = {"apple", "banana", "cherry"};
  for (intptr_t i = 0; i < 3; i++) {
    ck_array_preamble *e = NULL;
    if (ck_array_index(v, 0, i, &e) != CK_OK ||
        ck_array_string_assign(e, w[i], strlen(w[i])) != CK_OK) {
      fprintf(stderr, "strings3: %s\n", ck_last_error());
    }
    ck_array_decref(e);
  }
  return v;
}

static void test_new_and_decode(void) {
  intptr_t n = 6;
  ck_array_preamble *idx = arr("strided * int16", 1, &n);
  ck_array_preamble *vals = strings3();
  REQUIRE(idx && vals);
  static const int16_t ix[6] = {2, 0, 0, 1, 2, 1};
  memcpy(idx->data, ix, sizeof ix);
  ck_array_preamble *d = NULL;
  REQUIRE_OK(ck_dictionary_array_new(idx, vals, true, &d));
  CHECK(strcmp(tstr(ck_array_type(d)), "strided * dictionary[int16, string, ordered]") == 0);
  CHECK(d->data == idx->data); /* the indices, not copied */
  ck_array_preamble *got = NULL;
  CHECK_OK(ck_dictionary_array_values(d, &got));
  CHECK(got == vals); /* the values, not copied */
  ck_array_preamble *back = NULL;
  REQUIRE_OK(ck_dictionary_array_indices(d, &back));
  CHECK(strcmp(tstr(ck_array_type(back)), "strided * int16") == 0 && back->data == idx->data);
  ck_array_decref(back);
  /* a slice of the column is a dictionary column over the same values */
  ck_array_preamble *sl = NULL;
  REQUIRE_OK(ck_array_slice(d, 0, 1, 5, 2, &sl));
  ck_array_preamble *dec = NULL;
  REQUIRE_OK(ck_dictionary_decode(sl, &dec));
  CHECK(strcmp(tstr(ck_array_type(dec)), "strided * string") == 0);
  CHECK(str_eq(str_at(dec, 0), "apple") && str_eq(str_at(dec, 1), "banana"));
  CHECK(str_at(dec, 0)->begin == str_at(vals, 0)->begin); /* text shared */
  ck_array_decref(dec);
  ck_array_decref(sl);
  ck_array_decref(idx); /* the column keeps the indices' memory alive */
  ck_array_decref(vals);
  REQUIRE_OK(ck_dictionary_decode(d, &dec));
  static const char *const want[6] = {"cherry", "apple", "apple", "banana", "cherry",
                                      "banana"};
  for (intptr_t i = 0; i < 6; i++) CHECK(str_eq(str_at(dec, i), want[i]));
  ck_array_decref(dec);
  ck_array_decref(d);
}

static void test_bad_indices(void) {
  intptr_t n = 4;
  ck_array_preamble *vals = strings3();
  static const char *const types[] = {"strided * int8", "strided * uint64",
                                      "strided * int64"};
  for (size_t k = 0; k < 3; k++) {
    ck_array_preamble *idx = arr(types[k], 1, &n);
    REQUIRE(idx != NULL);
    size_t es = ck_type_data_size(ck_type_element(ck_array_type(idx)));
    memset(idx->data + 2 * es, 0xff, es); /* -1 (or UINT64_MAX) at position 2 */
    ck_array_preamble *d = NULL;
    CHECK_ERR(ck_dictionary_array_new(idx, vals, false, &d), CK_ERR_INDEX, "at position 2");
    CHECK(d == NULL);
    memset(idx->data + 2 * es, 0, es);
    idx->data[3 * es] = 3; /* one past the end */
    CHECK_ERR(ck_dictionary_array_new(idx, vals, false, &d), CK_ERR_INDEX,
              "dictionary index 3 at position 3 is out of range (the dictionary holds 3");
    ck_array_decref(idx);
  }
  ck_array_preamble *fl = arr("strided * float32", 1, &n), *d = NULL;
  CHECK_ERR(ck_dictionary_array_new(fl, vals, false, &d), CK_ERR_TYPE, "integers");
  CHECK_ERR(ck_dictionary_decode(fl, &d), CK_ERR_TYPE, "not a dictionary column");
  ck_array_decref(fl);
  ck_array_decref(vals);
}

static void test_null_indices(void) {
  intptr_t n = 5;
  ck_array_preamble *idx = arr("strided * ?int32", 1, &n), *vals = strings3();
  REQUIRE(idx && vals);
  static const int32_t ix[5] = {1, 77, 2, -5, 0}; /* nulls under 77 and -5 */
  memcpy(idx->data, ix, sizeof ix);
  REQUIRE_OK(ck_array_set_valid_at(idx, 1, false));
  REQUIRE_OK(ck_array_set_valid_at(idx, 3, false));
  ck_array_preamble *d = NULL, *dec = NULL;
  REQUIRE_OK(ck_dictionary_array_new(idx, vals, false, &d));
  CHECK(strcmp(tstr(ck_array_type(d)), "strided * ?dictionary[int32, string]") == 0);
  int64_t nulls = 0;
  CHECK_OK(ck_array_null_count(d, &nulls, NULL));
  CHECK(nulls == 2);
  REQUIRE_OK(ck_dictionary_decode(d, &dec));
  CHECK(strcmp(tstr(ck_array_type(dec)), "strided * ?string") == 0);
  for (intptr_t i = 0; i < 5; i++) {
    bool v = false;
    CHECK_OK(ck_array_valid_at(dec, i, &v));
    CHECK(v == (i != 1 && i != 3));
  }
  CHECK(str_eq(str_at(dec, 0), "banana") && str_eq(str_at(dec, 4), "apple"));
  ck_array_decref(dec);
  ck_array_decref(d);
  ck_array_decref(idx);
  ck_array_decref(vals);
}

/* A hand-made Arrow dictionary array: int8 indices over utf8 values. */
static void test_arrow_import(void) {
  static const int32_t offs[4] = {0, 3, 6, 10};
  static const char text[] = "redtanblue";
  static const int8_t ix[6] = {0, 2, 2, 1, 0, 2};
  const void *vb[3] = {NULL, offs, text};
  const void *ib[2] = {NULL, ix};
  struct ArrowSchema vs = sc("u", "", 0, NULL);
  struct ArrowSchema s = sc("c", "colour", 0, NULL);
  s.dictionary = &vs;
  s.flags = ARROW_FLAG_DICTIONARY_ORDERED;
  struct ArrowArray dict = mk(3, 0, 3, vb, 0, NULL);
  struct ArrowArray x = mk(6, 0, 2, ib, 0, NULL);
  x.dictionary = &dict;
  ck_type et = NULL;
  CHECK_OK(ck_arrow_schema_type(&s, &et));
  CHECK(strcmp(tstr(et), "dictionary[int8, string, ordered]") == 0);
  ck_type_decref(et);
  int before = released_arrays;
  ck_array_preamble *a = import_ok(&s, &x);
  REQUIRE(a != NULL);
  CHECK(x.release == NULL);
  CHECK(strcmp(tstr(ck_array_type(a)), "strided * dictionary[int8, string, ordered]") == 0);
  CHECK(a->data == (const char *)ix); /* indices shared */
  ck_array_preamble *v = NULL;
  CHECK_OK(ck_dictionary_array_values(a, &v));
  REQUIRE(v != NULL);
  CHECK(str_at(v, 2)->begin == text + 6); /* text shared */
  CHECK(released_arrays == before);       /* Arrow's memory still held */
  /* out again: a dictionary array whose indices are the same memory */
  struct ArrowSchema s2;
  struct ArrowArray y;
  REQUIRE_OK(ck_arrow_export(a, NULL, &s2, &y));
  CHECK(strcmp(s2.format, "c") == 0 && s2.dictionary != NULL && y.dictionary != NULL);
  CHECK((s2.flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0);
  CHECK(y.length == 6 && y.buffers[1] == (const void *)ix);
  CHECK(y.dictionary->length == 3);
  ck_array_decref(a);
  CHECK(released_arrays == before); /* the export still holds it */
  /* and back in: the round trip */
  ck_array_preamble *b = NULL;
  REQUIRE_OK(ck_arrow_import(&s2, &y, NULL, &b));
  ck_array_preamble *dec = NULL;
  REQUIRE_OK(ck_dictionary_decode(b, &dec));
  static const char *const want[6] = {"red", "blue", "blue", "tan", "red", "blue"};
  for (intptr_t i = 0; i < 6; i++) CHECK(str_eq(str_at(dec, i), want[i]));
  ck_array_decref(dec);
  ck_array_decref(b);
  s2.release(&s2);
  CHECK(released_arrays == before + 1); /* the hand array, released once */
  /* the hand producer's release leaves the dictionary to its owner: here */
  CHECK(dict.release != NULL);
  dict.release(&dict);
}

static void test_arrow_bad(void) {
  static const int32_t offs[3] = {0, 1, 2};
  static const char text[] = "ab";
  static const uint8_t vvalid[1] = {0x1}; /* value 1 is null */
  static const int16_t ix[3] = {0, 1, 2};
  const void *vb[3] = {vvalid, offs, text};
  const void *vb_ok[3] = {NULL, offs, text};
  const void *ib[2] = {NULL, ix};
  struct ArrowSchema vs = sc("u", "", 0, NULL);
  struct ArrowSchema s = sc("s", "", 0, NULL);
  s.dictionary = &vs;
  ck_array_preamble *out = NULL;
  /* a null in the dictionary */
  struct ArrowArray dict = mk(2, 1, 3, vb, 0, NULL);
  struct ArrowArray x = mk(2, 0, 2, ib, 0, NULL);
  x.dictionary = &dict;
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &out), CK_ERR_VALUE,
            "the dictionary holds 1 null value (the first at position 1)");
  CHECK(out == NULL && x.release == NULL);
  dict.release(&dict); /* the hand producer leaves its dictionary to us */
  /* index 2 of a dictionary of 2 */
  dict = mk(2, 0, 3, vb_ok, 0, NULL);
  x = mk(3, 0, 2, ib, 0, NULL);
  x.dictionary = &dict;
  /* the import is O(1): the index is refused where it is read */
  REQUIRE_OK(ck_arrow_import(&s, &x, NULL, &out));
  ck_array_preamble *dec = NULL;
  CHECK_ERR(ck_dictionary_decode(out, &dec), CK_ERR_INDEX,
            "dictionary index 2 at position 2 is out of range");
  CHECK(dec == NULL);
  ck_array_decref(out);
  out = NULL;
  dict.release(&dict);
  /* the schema declares a dictionary the array lacks */
  x = mk(2, 0, 2, ib, 0, NULL);
  CHECK_ERR(ck_arrow_import(&s, &x, NULL, &out), CK_ERR_INVALID_ARGUMENT,
            "but the array has none");
  /* float indices */
  struct ArrowSchema fs = sc("f", "", 0, NULL);
  fs.dictionary = &vs;
  ck_type t = NULL;
  CHECK_ERR(ck_arrow_schema_type(&fs, &t), CK_ERR_INVALID_ARGUMENT, "not an integer");
  /* a dictionary inside a struct stays refused */
  struct ArrowSchema inner = sc("i", "k", 0, NULL);
  inner.dictionary = &vs;
  struct ArrowSchema *kids[1] = {&inner};
  struct ArrowSchema st = sc("+s", "", 1, kids);
  CHECK_ERR(ck_arrow_schema_type(&st, &t), CK_ERR_NOT_SUPPORTED, "inside a struct or list");
  /* decimal128 keeps its one-line refusal naming the supported types */
  struct ArrowSchema d128 = sc("d:10,2", "", 0, NULL);
  CHECK_ERR(ck_arrow_schema_type(&d128, &t), CK_ERR_NOT_SUPPORTED, "supported:");
}

CK_TEST_MAIN(CK_TEST(test_type_grammar), CK_TEST(test_new_and_decode),
             CK_TEST(test_bad_indices), CK_TEST(test_null_indices),
             CK_TEST(test_arrow_import), CK_TEST(test_arrow_bad))
