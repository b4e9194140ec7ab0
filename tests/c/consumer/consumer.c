/*
 * consumer.c -- a program that uses libckernel the way a C (or, compiled as
 * consumer.cpp, C++) consumer does: only the installed public headers, linked
 * against the shared library.  Built at -O0 (no inlining: every inline
 * helper of the headers must resolve to an exported symbol), at -O2 and as
 * C++ (where the helpers are plain declarations).  Exits 0 and prints "ok"
 * when every call behaved; otherwise prints what failed and exits 1.
 */
#include <ckernel/ckernel.h>

#include <stdio.h>
#include <string.h>

static int failures;

#define EXPECT(cond)                                                          \
  do {                                                                        \
    if (!(cond)) {                                                            \
      printf("FAILED %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond,            \
             ck_last_error());                                                \
      failures++;                                                             \
    }                                                                         \
  } while (0)

static int twice_single(char *dst, const char *const *src, ck_prefix *self) {
  (void)self;
  double v;
  memcpy(&v, src[0], sizeof v);
  v *= 2.0;
  memcpy(dst, &v, sizeof v);
  return 0;
}

static int twice_strided(char *dst, intptr_t ds, const char *const *src,
                         const intptr_t *ss, size_t n, ck_prefix *self) {
  for (size_t i = 0; i < n; i++) {
    const char *s = src[0] + (intptr_t)i * ss[0];
    int st = twice_single(dst + (intptr_t)i * ds, &s, self);
    if (st != 0) {
      return st;
    }
  }
  return 0;
}

int main(void) {
  /* memblock.h: the inline reference counting */
  ck_memblock *mb = NULL;
  EXPECT(ck_pod_memblock_new(0, &mb) == CK_OK);
  ck_memblock_incref(mb);
  EXPECT(ck_memblock_refcount(mb) == 2);
  ck_memblock_decref(mb);
  EXPECT(ck_memblock_refcount(mb) == 1);
  ck_memblock_decref(mb);

  /* kernel.h: the inline prefix helpers */
  ck_prefix p;
  memset(&p, 0, sizeof p);
  EXPECT(ck_prefix_set_function(&p, CK_KERNEL_REQUEST_SINGLE, twice_single,
                                twice_strided) == CK_OK);
  EXPECT(ck_prefix_single(&p) == twice_single);
  EXPECT(ck_prefix_set_function(&p, CK_KERNEL_REQUEST_STRIDED, twice_single,
                                twice_strided) == CK_OK);
  EXPECT(ck_prefix_strided(&p) == twice_strided);
  EXPECT(ck_prefix_child(&p, 16) == (ck_prefix *)(void *)((char *)&p + 16));
  ck_prefix_destroy_child(&p); /* no destructor: a no-op */
  EXPECT(ck_prefix_set_function(&p, (ck_kernel_request)7, twice_single,
                                twice_strided) == CK_ERR_INVALID_ARGUMENT);

  /* a library kernel, built and called through the helpers */
  ck_kernel_builder kb;
  ck_kernel_builder_init(&kb);
  EXPECT(ck_make_builtin_assignment_kernel(&kb, 0, CK_TYPE_FLOAT64, CK_TYPE_INT32,
                                           CK_KERNEL_REQUEST_STRIDED,
                                           CK_ERRMODE_DEFAULT, NULL) == CK_OK);
  int32_t in[3] = {1, -2, 3};
  double out[3] = {0, 0, 0};
  const char *src[1] = {(const char *)in};
  intptr_t ss[1] = {sizeof(int32_t)};
  ck_prefix *root = ck_kernel_builder_get(&kb, 0);
  EXPECT(ck_prefix_strided(root)((char *)out, sizeof(double), src, ss, 3, root) == 0);
  EXPECT(out[0] == 1.0 && out[1] == -2.0 && out[2] == 3.0);
  ck_kernel_builder_destroy(&kb);

  /* an operation over arrays */
  intptr_t shape[1] = {4};
  ck_array_preamble *a = NULL, *r = NULL;
  ck_type t = NULL;
  EXPECT(ck_type_parse("4 * float64", &t) == CK_OK);
  EXPECT(ck_array_empty(t, shape, 0, CK_ARRAY_DEFAULT_FLAGS, &a) == CK_OK);
  ck_type_decref(t);
  if (a != NULL) {
    double *d = (double *)(void *)a->data;
    for (int i = 0; i < 4; i++) {
      d[i] = i;
    }
    ck_array_preamble *srcs[2] = {a, a};
    EXPECT(ck_array_apply_op("add", 2, srcs, NULL, &r) == CK_OK);
    if (r != NULL) {
      EXPECT(((const double *)(const void *)ck_array_data(r))[3] == 6.0);
      ck_array_decref(r);
    }
    ck_array_decref(a);
  }
  EXPECT(ck_memblock_live_count() == 0);
  printf("%s (library %s, kernel ABI %d)\n", failures ? "FAILED" : "ok",
         ck_version_string(), ck_kernel_abi_version());
  return failures ? 1 : 0;
}
