/* Type strings: print(parse(s)) == canonical(s) over a table, parse errors
 * with their columns and messages, limits, and allocation failure at every
 * step of parsing a nested type. */
#include "ck_test.h"

static char pbuf[1024];

static const char *print_type(ck_type t) {
  if (ck_type_print(t, pbuf, sizeof pbuf, NULL) != CK_OK) {
    return "<print failed>";
  }
  return pbuf;
}

/* {input, canonical form}. */
static const char *const round_trips[][2] = {
    {"int32", "int32"},
    {"bool", "bool"},
    {"uint64", "uint64"},
    {"float16", "float16"},
    {"complex64", "complex64"},
    {"complex[float32]", "complex64"},
    {"complex[float64]", "complex128"},
    {"complex [ float64 ]", "complex128"},
    {"complex", "complex128"},
    {"string", "string"},
    {"bytes", "bytes"},
    {"bytes[align=1]", "bytes"},
    {"bytes[align=16]", "bytes[align=16]"},
    {"bytes [ align = 4 ]", "bytes[align=4]"},
    {"3 * int32", "3 * int32"},
    {"3*int32", "3 * int32"},
    {"  3   *\tint32  ", "3 * int32"},
    {"007 * int8", "7 * int8"},
    {"0 * int8", "0 * int8"},
    {"3 * var * string", "3 * var * string"},
    {"var*var*string", "var * var * string"},
    {"strided * int32", "strided * int32"},
    {"strided * strided * 2 * float64", "strided * strided * 2 * float64"},
    {"strided * {x: float64, tags: var * string}",
     "strided * {x: float64, tags: var * string}"},
    {"{x:float64,tags:var*string}", "{x: float64, tags: var * string}"},
    {"{ x : float64 , y : int8 }", "{x: float64, y: int8}"},
    {"{}", "{}"},
    {"{ }", "{}"},
    {"{a: {b: {c: int8}}}", "{a: {b: {c: int8}}}"},
    {"{a: 2 * {b: var * {c: string}}}", "{a: 2 * {b: var * {c: string}}}"},
    {"pointer[int32]", "pointer[int32]"},
    {"pointer[ pointer[3 * int8] ]", "pointer[pointer[3 * int8]]"},
    {"var * pointer[{s: string}]", "var * pointer[{s: string}]"},
    {"{p: pointer[string], b: bytes[align=8]}", "{p: pointer[string], b: bytes[align=8]}"},
    {"{'a b': int8, \"c'd\": int8}", "{'a b': int8, 'c\\'d': int8}"},
    {"{'x': int8}", "{x: int8}"},
    {"{'1st': int8}", "{'1st': int8}"},
    {"{\"q\\\"\": int8}", "{'q\"': int8}"},
    {"{'back\\\\slash': int8}", "{'back\\\\slash': int8}"},
    {"{'caf\xc3\xa9': int8}", "{'caf\xc3\xa9': int8}"},
    {"{string: int32, var: int8, strided: bool}", "{string: int32, var: int8, strided: bool}"},
    {"{_x1: int8}", "{_x1: int8}"},
    {"\n{x: int8}\r\n", "{x: int8}"},
    {"9223372036854775807 * {}", "9223372036854775807 * {}"},
    /* dimension variables (pattern types) */
    {"N * float64", "N * float64"},
    {"N*float64", "N * float64"},
    {"M * N * float64", "M * N * float64"},
    {"var * N * int32", "var * N * int32"},
    {"N * var * string", "N * var * string"},
    {"3 * N * 2 * float32", "3 * N * 2 * float32"},
    {"Rows_2 * {x: float64, y: N * int8}", "Rows_2 * {x: float64, y: N * int8}"},
    {"{p: N * {q: M * bool}}", "{p: N * {q: M * bool}}"},
    {"pointer[N * int8]", "pointer[N * int8]"},
    {"{N: int8}", "{N: int8}"},
};

static void test_round_trips(void) {
  int64_t live = ck_type_live_count();
  size_t n = sizeof round_trips / sizeof round_trips[0];
  CHECK(n >= 40);
  for (size_t i = 0; i < n; i++) {
    ck_type t = NULL, u = NULL;
    ck_status st = ck_type_parse(round_trips[i][0], &t);
    if (st != CK_OK) {
      fprintf(stderr, "parse '%s': %s\n", round_trips[i][0], ck_last_error());
    }
    CHECK(st == CK_OK);
    if (st != CK_OK) {
      continue;
    }
    const char *out = print_type(t);
    if (strcmp(out, round_trips[i][1]) != 0) {
      fprintf(stderr, "'%s' printed as '%s', expected '%s'\n", round_trips[i][0], out,
              round_trips[i][1]);
      CHECK(0);
    }
    /* The canonical form is a fixed point and parses to an equal type. */
    CHECK_OK(ck_type_parse(round_trips[i][1], &u));
    CHECK(ck_type_equal(t, u));
    CHECK(ck_type_hash(t) == ck_type_hash(u));
    CHECK(strcmp(print_type(u), round_trips[i][1]) == 0);
    ck_type_decref(u);
    ck_type_decref(t);
  }
  CHECK(ck_type_live_count() == live);
}

static void test_parse_n(void) {
  ck_type t;
  REQUIRE_OK(ck_type_parse_n("3 * int32 trailing", 9, &t));
  CHECK(strcmp(print_type(t), "3 * int32") == 0);
  ck_type_decref(t);
  CHECK_ERR(ck_type_parse_n("int32\0x", 7, &t), CK_ERR_PARSE,
            "at column 5: expected the end of the type, found a NUL byte");
  CHECK_ERR(ck_type_parse_n("{'a\0b': int8}", 13, &t), CK_ERR_PARSE,
            "at column 3: control character (byte 0x00)");
  CHECK_ERR(ck_type_parse(NULL, &t), CK_ERR_INVALID_ARGUMENT, "text must not be NULL");
  CHECK_ERR(ck_type_parse("int8", NULL), CK_ERR_INVALID_ARGUMENT, "out must not be NULL");
}

/* {input, status, expected message fragment}. */
static const struct {
  const char *text;
  ck_status code;
  const char *msg;
} errors[] = {
    {"", CK_ERR_PARSE, "ck_type_parse: at column 0: expected a type, found end of input"},
    {"   ", CK_ERR_PARSE, "at column 3: expected a type, found end of input"},
    {"3 * )", CK_ERR_PARSE,
     "ck_type_parse: at column 4: expected a type after '*', found ')'"},
    {"3 *", CK_ERR_PARSE, "at column 3: expected a type after '*', found end of input"},
    {"3 int32", CK_ERR_PARSE,
     "at column 2: expected '*' after dimension size 3, found 'int32'"},
    {"var int32", CK_ERR_PARSE, "at column 4: expected '*' after 'var', found 'int32'"},
    {"strided", CK_ERR_PARSE, "at column 7: expected '*' after 'strided', found end"},
    {"int33", CK_ERR_PARSE, "at column 0: expected a type, found unknown type name 'int33'"},
    {"3 * foo", CK_ERR_PARSE, "at column 4: expected a type after '*', found unknown type name 'foo'"},
    {"int32 int32", CK_ERR_PARSE, "at column 6: expected the end of the type, found 'int32'"},
    {"int32]", CK_ERR_PARSE, "at column 5: expected the end of the type, found ']'"},
    {"{x: int32", CK_ERR_PARSE,
     "at column 9: expected ',' or '}' after a struct field, found end of input"},
    {"{x int32}", CK_ERR_PARSE, "at column 3: expected ':' after a field name, found 'int32'"},
    {"{: int32}", CK_ERR_PARSE, "at column 1: expected a field name after '{', found ':'"},
    {"{x: int8,}", CK_ERR_PARSE, "at column 9: expected a field name after ',', found '}'"},
    {"{x: int8, x: int16}", CK_ERR_PARSE, "at column 10: duplicate field name 'x'"},
    {"{x: int8, 'x': int16}", CK_ERR_PARSE, "at column 10: duplicate field name 'x'"},
    {"{x: }", CK_ERR_PARSE, "at column 4: expected a type after ':', found '}'"},
    {"{'x: int8}", CK_ERR_PARSE, "at column 1: unterminated quoted field name"},
    {"{'': int8}", CK_ERR_PARSE, "at column 1: empty field name"},
    {"{'a\\n': int8}", CK_ERR_PARSE, "at column 3: invalid escape"},
    {"{'a\tb': int8}", CK_ERR_PARSE, "at column 3: control character (byte 0x09)"},
    {"{'\xc3': int8}", CK_ERR_PARSE, "at column 1: quoted field name is not valid UTF-8"},
    {"{x: strided * int8}", CK_ERR_PARSE,
     "at column 0: ck_struct_type_new: a struct field needs a fixed data size"},
    {"3 * strided * int8", CK_ERR_PARSE,
     "at column 0: ck_fixed_dim_type_new: the element of a fixed dim needs a fixed data size"},
    {"var * strided * int8", CK_ERR_PARSE, "at column 0: ck_var_dim_type_new"},
    {"pointer[strided * int8]", CK_ERR_PARSE, "at column 0: ck_pointer_type_new"},
    {"pointer int8", CK_ERR_PARSE, "at column 8: expected '[' after 'pointer', found 'int8'"},
    {"pointer[int8", CK_ERR_PARSE, "at column 12: expected ']' to close 'pointer[', found end"},
    {"pointer[]", CK_ERR_PARSE, "at column 8: expected a type after 'pointer[', found ']'"},
    {"complex[int8]", CK_ERR_PARSE,
     "at column 8: expected 'float32' or 'float64' after 'complex[', found 'int8'"},
    {"complex[float32", CK_ERR_PARSE, "expected ']' to close 'complex['"},
    {"bytes[alignment=4]", CK_ERR_PARSE, "at column 6: expected 'align' after 'bytes['"},
    {"bytes[align=3]", CK_ERR_PARSE, "at column 12: alignment 3 is not a power of two"},
    {"bytes[align=8192]", CK_ERR_PARSE, "alignment 8192 is not a power of two in [1, 4096]"},
    {"bytes[align=]", CK_ERR_PARSE, "at column 12: expected an alignment after 'align='"},
    {"bytes[align 4]", CK_ERR_PARSE, "expected '=' after 'align', found '4'"},
    {"99999999999999999999 * int8", CK_ERR_PARSE,
     "at column 0: dimension size 99999999999999999999 is too large"},
    {"9223372036854775808 * int8", CK_ERR_PARSE, "is too large"},
    {"9223372036854775807 * int16", CK_ERR_PARSE,
     "at column 0: ck_fixed_dim_type_new: data size of 9223372036854775807 elements"},
    {"4294967296 * 4294967296 * int8", CK_ERR_PARSE, "overflows"},
    {"-3 * int8", CK_ERR_PARSE, "at column 0: expected a type, found '-'"},
    {"3 * \x80", CK_ERR_PARSE, "at column 4: expected a type after '*', found byte 0x80"},
    {"int32\n*", CK_ERR_PARSE, "at column 6: expected the end of the type, found '*'"},
    {"N", CK_ERR_PARSE,
     "at column 1: expected '*' after dimension variable N, found end of input (an "
     "upper-case name is a dimension variable"},
    {"Int32", CK_ERR_PARSE,
     "at column 5: expected '*' after dimension variable Int32, found end of input"},
    {"N * )", CK_ERR_PARSE, "at column 4: expected a type after '*', found ')'"},
    {"N * strided * int8", CK_ERR_PARSE,
     "at column 0: ck_symbolic_dim_type_new: the element of a symbolic dim needs a fixed "
     "data size"},
    {"A234567890123456789012345678901234567890123456789012345678901234 * int8", CK_ERR_PARSE,
     "at column 0: dimension variable 'A234567890123456789012345678901234567890...' is "
     "longer than 63 bytes"},
};

static void test_errors(void) {
  int64_t live = ck_type_live_count();
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
    ck_type t = CK_BUILTIN(CK_TYPE_INT8);
    CHECK_ERR(ck_type_parse(errors[i].text, &t), errors[i].code, errors[i].msg);
    CHECK(t == NULL);
  }
  CHECK(ck_type_live_count() == live);
}

static void test_depth(void) {
  int64_t live = ck_type_live_count();
  char buf[2048];
  /* 63 dims + the scalar = 64 levels: accepted. */
  size_t pos = 0;
  for (int i = 0; i < 63; i++) {
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "1 * ");
  }
  snprintf(buf + pos, sizeof buf - pos, "int8");
  ck_type t;
  REQUIRE_OK(ck_type_parse(buf, &t));
  CHECK(ck_type_ndim(t) == 63);
  ck_type_decref(t);
  /* One more level: rejected with the position of the 65th level. */
  char buf2[2100];
  snprintf(buf2, sizeof buf2, "1 * %s", buf);
  CHECK_ERR(ck_type_parse(buf2, &t), CK_ERR_PARSE,
            "at column 256: type nesting is deeper than 64 levels");
  /* Deep struct nesting and very long input fail cleanly too. */
  pos = 0;
  for (int i = 0; i < 500; i++) {
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "{a:");
  }
  CHECK_ERR(ck_type_parse(buf, &t), CK_ERR_PARSE, "type nesting is deeper than 64 levels");
  pos = 0;
  for (int i = 0; i < 500; i++) {
    pos += (size_t)snprintf(buf + pos, sizeof buf - pos, "pointer[");
    if (pos > sizeof buf - 16) break;
  }
  CHECK_ERR(ck_type_parse(buf, &t), CK_ERR_PARSE, "deeper than 64");
  CHECK(ck_type_live_count() == live);
}

static void test_wide_struct(void) {
  /* Many fields exercise the growth of the field arrays. */
  enum { N = 300 };
  char *text = malloc(N * 20 + 4);
  REQUIRE(text != NULL);
  size_t pos = 0;
  text[pos++] = '{';
  for (int i = 0; i < N; i++) {
    pos += (size_t)sprintf(text + pos, "%sf%d: %s", i ? ", " : "", i,
                           i % 3 == 0 ? "string" : i % 3 == 1 ? "int8" : "float64");
  }
  text[pos++] = '}';
  text[pos] = '\0';
  ck_type t;
  REQUIRE_OK(ck_type_parse(text, &t));
  CHECK(ck_struct_field_count(t) == N);
  size_t n = 0;
  REQUIRE_OK(ck_type_print(t, NULL, 0, &n));
  CHECK(n == pos);
  char *out = malloc(n + 1);
  REQUIRE(out != NULL);
  REQUIRE_OK(ck_type_print(t, out, n + 1, NULL));
  CHECK(strcmp(out, text) == 0);
  free(out);
  ck_type_decref(t);
  free(text);
}

/* 100k fields parse, print and reject a duplicate in linear time (the
 * duplicate check used to compare every pair: 30 s for 100k fields). */
static void test_very_wide_struct(void) {
  size_t nfields = (size_t)ck_test_scaled(100000);
  char *text = malloc(nfields * 24 + 64);
  REQUIRE(text != NULL);
  size_t pos = 0;
  text[pos++] = '{';
  for (size_t i = 0; i < nfields; i++) {
    pos += (size_t)sprintf(text + pos, "%sfield_%zu: %s", i ? ", " : "", i,
                           i % 2 ? "int32" : "string");
  }
  text[pos++] = '}';
  text[pos] = '\0';
  ck_type t = NULL;
  REQUIRE_OK(ck_type_parse(text, &t));
  CHECK(ck_struct_field_count(t) == nfields);
  size_t idx = 0;
  CHECK_OK(ck_struct_field_index(t, "field_7", &idx));
  CHECK(idx == 7);
  size_t n = 0;
  CHECK_OK(ck_type_print(t, NULL, 0, &n));
  CHECK(n == pos);
  ck_type_decref(t);

  /* the same names with the last one repeating the first */
  size_t cut = pos - 1;
  while (text[cut] != ',') {
    cut--;
  }
  sprintf(text + cut, ", field_0: int8}");
  t = NULL;
  CHECK_ERR(ck_type_parse(text, &t), CK_ERR_PARSE, "duplicate field name 'field_0'");
  CHECK(t == NULL);

  /* ck_struct_type_new directly: names, types, and a duplicate */
  const char **names = malloc(nfields * sizeof *names);
  ck_type *types = malloc(nfields * sizeof *types);
  char *chars = malloc(nfields * 16);
  REQUIRE(names != NULL && types != NULL && chars != NULL);
  for (size_t i = 0; i < nfields; i++) {
    sprintf(chars + 16 * i, "f%zu", i);
    names[i] = chars + 16 * i;
    types[i] = CK_BUILTIN(CK_TYPE_FLOAT64);
  }
  REQUIRE_OK(ck_struct_type_new(nfields, names, types, &t));
  CHECK(ck_type_data_size(t) == 8 * nfields);
  ck_type_decref(t);
  names[nfields - 1] = names[nfields / 2];
  CHECK_ERR(ck_struct_type_new(nfields, names, types, &t), CK_ERR_INVALID_ARGUMENT,
            "duplicate field name");
  free(names);
  free(types);
  free(chars);
  free(text);
}

/* Fail the k-th allocation while parsing a nested type, for every k. */
static void test_fault_injection(void) {
  static const char *text =
      "strided * {name: string, tags: var * string, 'the p': pointer[{a: bytes[align=4], "
      "b: 3 * var * {c: string, d: float64}}], e: {f: {g: int8}}, h: int8, i: int8, "
      "j: int8, k: int8}";
  int64_t live = ck_type_live_count();
  ck_test_faults f = CK_TEST_FAULTS(10000);
  while (ck_test_faults_arm(&f)) {
    ck_type t = CK_BUILTIN(CK_TYPE_INT8);
    ck_status st = ck_type_parse(text, &t);
    if (!ck_test_faults_fired(&f)) {
      CHECK(st == CK_OK);
      ck_type_decref(t);
      break;
    }
    CHECK(st == CK_ERR_NO_MEMORY);
    CHECK(t == NULL);
    CHECK(strstr(ck_last_error(), "out of memory") != NULL);
    CHECK(ck_type_live_count() == live);
  }
  CHECK(f.runs >= 20);
  CHECK(ck_type_live_count() == live);
}

/* Dimension variables: queries, equality, and arrays refusing patterns. */
static void test_dimension_variables(void) {
  int64_t live = ck_type_live_count(), blocks = ck_memblock_live_count();
  ck_type t, u, v, w;
  REQUIRE_OK(ck_type_parse("M * N * float64", &t));
  CHECK(ck_type_id_of(t) == CK_TYPE_SYMBOLIC_DIM);
  CHECK(strcmp(ck_type_id_name(CK_TYPE_SYMBOLIC_DIM), "symbolic_dim") == 0);
  CHECK(strcmp(ck_symbolic_dim_name(t), "M") == 0);
  CHECK(strcmp(ck_symbolic_dim_name(ck_type_element(t)), "N") == 0);
  CHECK(ck_symbolic_dim_name(ck_type_dtype(t)) == NULL);
  CHECK(ck_type_ndim(t) == 2);
  CHECK(ck_type_flags(t) & CK_TYPE_FLAG_PATTERN);
  CHECK(ck_type_flags(t) & CK_TYPE_FLAG_DIM);
  CHECK(ck_type_arrmeta_size(t) == 2 * sizeof(ck_dim_arrmeta));
  REQUIRE_OK(ck_type_parse("M*N*float64", &u));
  CHECK(ck_type_equal(t, u) && ck_type_hash(t) == ck_type_hash(u));
  REQUIRE_OK(ck_type_parse("N * M * float64", &v));
  CHECK(!ck_type_equal(t, v));
  REQUIRE_OK(ck_type_parse("3 * N * float64", &w));
  CHECK(ck_type_flags(w) & CK_TYPE_FLAG_PATTERN); /* inherited */
  /* arrays refuse patterns, naming the variable */
  ck_array_preamble *a = NULL;
  intptr_t shape[2] = {2, 3};
  CHECK_ERR(ck_array_empty(t, shape, 2, CK_ARRAY_DEFAULT_FLAGS, &a), CK_ERR_TYPE,
            "'M * N * float64' is a pattern type: the dimension variable M is bound");
  CHECK(a == NULL);
  CHECK_ERR(ck_array_empty(w, shape, 1, CK_ARRAY_DEFAULT_FLAGS, &a), CK_ERR_TYPE,
            "the dimension variable N");
  ck_type s;
  REQUIRE_OK(ck_type_parse("{x: int8, y: var * K * int8}", &s));
  CHECK(ck_type_flags(s) & CK_TYPE_FLAG_PATTERN);
  CHECK_ERR(ck_array_empty(s, NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &a), CK_ERR_TYPE,
            "the dimension variable K");
  ck_type_decref(s);
  /* the constructor checks its name */
  ck_type bad = CK_BUILTIN(CK_TYPE_INT8);
  CHECK_ERR(ck_symbolic_dim_type_new("n", CK_BUILTIN(CK_TYPE_INT8), &bad),
            CK_ERR_INVALID_ARGUMENT, "'n' is not a dimension variable");
  CHECK(bad == NULL);
  CHECK_ERR(ck_symbolic_dim_type_new("N-1", CK_BUILTIN(CK_TYPE_INT8), &bad),
            CK_ERR_INVALID_ARGUMENT, "is not a dimension variable");
  CHECK_ERR(ck_symbolic_dim_type_new("", CK_BUILTIN(CK_TYPE_INT8), &bad),
            CK_ERR_INVALID_ARGUMENT, "is not a dimension variable");
  CHECK_ERR(ck_symbolic_dim_type_new(NULL, CK_BUILTIN(CK_TYPE_INT8), &bad),
            CK_ERR_INVALID_ARGUMENT, "must not be NULL");
  REQUIRE_OK(ck_symbolic_dim_type_new("X9", CK_BUILTIN(CK_TYPE_BOOL), &bad));
  CHECK(strcmp(print_type(bad), "X9 * bool") == 0);
  ck_type_decref(bad);
  ck_type_decref(t);
  ck_type_decref(u);
  ck_type_decref(v);
  ck_type_decref(w);
  CHECK(ck_type_live_count() == live);
  CHECK(ck_memblock_live_count() == blocks);
}

CK_TEST_MAIN(CK_TEST(test_round_trips), CK_TEST(test_parse_n), CK_TEST(test_errors),
             CK_TEST(test_dimension_variables),
             CK_TEST(test_depth), CK_TEST(test_wide_struct),
             CK_TEST(test_very_wide_struct),
             CK_TEST(test_fault_injection))
