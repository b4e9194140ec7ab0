/* Broadcasting strided operands (ckernel/broadcast.h): strides against the
 * definition over random shapes, coalescing that keeps the element order,
 * and every error. */
#include "ck_test.h"

#define MAXD 6

/* xorshift: deterministic shapes */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state % n);
}

/* Byte offset of flat index i in a space of `nd` dims for one stride row. */
static intptr_t offset_of(size_t i, size_t nd, const intptr_t *shape,
                          const intptr_t *strides) {
  intptr_t off = 0;
  for (size_t a = nd; a-- > 0;) {
    off += (intptr_t)(i % (size_t)shape[a]) * strides[a];
    i /= (size_t)shape[a];
  }
  return off;
}

static void test_strides_match_definition(void) {
  for (int iter = 0; iter < 2000; iter++) {
    size_t nd = rnd(MAXD + 1);
    intptr_t dshape[MAXD], dstrides[MAXD];
    intptr_t acc = 8;
    for (size_t a = nd; a-- > 0;) {
      dshape[a] = (intptr_t)rnd(4) + (rnd(8) == 0 ? 0 : 1);
      dstrides[a] = acc;
      acc *= dshape[a] > 0 ? dshape[a] : 1;
    }
    ck_strided_operand dst = {nd, dshape, dstrides};
    /* sources: a suffix of dst's dims, some sizes 1, an extra leading 1 */
    enum { NSRC = 3 };
    intptr_t sshape[NSRC][MAXD + 1], sstrides[NSRC][MAXD + 1];
    ck_strided_operand src[NSRC];
    for (size_t j = 0; j < NSRC; j++) {
      size_t drop = nd ? rnd((unsigned)nd + 1) : 0, extra = rnd(3) == 0;
      size_t sn = nd - drop + extra;
      for (size_t k = 0; k < sn; k++) {
        if (k < extra) {
          sshape[j][k] = 1;
        } else {
          intptr_t want = dshape[drop + k - extra];
          sshape[j][k] = rnd(3) == 0 ? 1 : want;
        }
        sstrides[j][k] = (intptr_t)(rnd(64) + 1) * (rnd(2) ? 1 : -1);
      }
      src[j] = (ck_strided_operand){sn, sshape[j], sstrides[j]};
    }
    size_t ond = 99;
    intptr_t shape[MAXD], strides[(NSRC + 1) * MAXD];
    REQUIRE_OK(ck_broadcast_strides(&dst, NSRC, src, MAXD, &ond, shape, strides));
    REQUIRE(ond == nd);
    for (size_t a = 0; a < nd; a++) {
      CHECK(shape[a] == dshape[a] && strides[a] == dstrides[a]);
    }
    /* the definition: source j at dst index idx reads idx clipped to its dims */
    size_t total = 1;
    for (size_t a = 0; a < nd; a++) {
      total *= (size_t)dshape[a];
    }
    for (size_t j = 0; j < NSRC; j++) {
      for (size_t i = 0; i < total; i++) {
        size_t rest = i;
        intptr_t want = 0;
        for (size_t a = nd; a-- > 0;) {
          size_t idx = rest % (size_t)dshape[a];
          rest /= (size_t)dshape[a];
          size_t sn = src[j].ndim;
          if (a + sn >= nd) { /* the source has this dim */
            size_t k = a + sn - nd;
            if (src[j].shape[k] != 1) {
              want += (intptr_t)idx * src[j].strides[k];
            }
          }
        }
        CHECK(offset_of(i, nd, shape, strides + (j + 1) * MAXD) == want);
      }
    }
    /* coalescing keeps every operand's offset sequence */
    size_t cnd = nd;
    intptr_t cshape[MAXD], cstrides[(NSRC + 1) * MAXD];
    memcpy(cshape, shape, sizeof shape);
    memcpy(cstrides, strides, sizeof strides);
    REQUIRE_OK(ck_coalesce_dims(NSRC + 1, &cnd, cshape, cstrides, MAXD));
    CHECK(cnd <= (nd ? nd : 1));
    size_t ctotal = 1;
    for (size_t a = 0; a < cnd; a++) {
      CHECK(cshape[a] != 1);
      ctotal *= (size_t)cshape[a];
    }
    CHECK(ctotal == total);
    for (size_t k = 0; k < NSRC + 1; k++) {
      for (size_t i = 0; i < total; i++) {
        CHECK(offset_of(i, cnd, cshape, cstrides + k * MAXD) ==
              offset_of(i, nd, shape, strides + k * MAXD));
      }
    }
  }
}

static void test_coalesce_cases(void) {
  /* C-contiguous (2, 3) float64 out, same in, a broadcast scalar: 1-d of 6 */
  intptr_t shape[3] = {2, 3, 1};
  intptr_t st[3 * 3] = {24, 8, 8, /**/ 24, 8, 8, /**/ 0, 0, 0};
  size_t nd = 3;
  CHECK_OK(ck_coalesce_dims(3, &nd, shape, st, 3));
  CHECK(nd == 1 && shape[0] == 6 && st[0] == 8 && st[3] == 8 && st[6] == 0);
  /* a transposed input does not merge */
  intptr_t shape2[2] = {2, 3};
  intptr_t st2[2 * 2] = {24, 8, /**/ 8, 16};
  nd = 2;
  CHECK_OK(ck_coalesce_dims(2, &nd, shape2, st2, 2));
  CHECK(nd == 2 && shape2[0] == 2 && shape2[1] == 3);
  /* no elements: 1-d of size 0 */
  intptr_t shape3[2] = {4, 0};
  intptr_t st3[2] = {0, 8};
  nd = 2;
  CHECK_OK(ck_coalesce_dims(1, &nd, shape3, st3, 2));
  CHECK(nd == 1 && shape3[0] == 0);
  /* a single element: 0-d */
  intptr_t shape4[2] = {1, 1};
  intptr_t st4[2] = {8, 8};
  nd = 2;
  CHECK_OK(ck_coalesce_dims(1, &nd, shape4, st4, 2));
  CHECK(nd == 0);
  /* 0-d stays 0-d */
  nd = 0;
  CHECK_OK(ck_coalesce_dims(1, &nd, NULL, NULL, 0));
  CHECK(nd == 0);
}

static void test_errors(void) {
  intptr_t d3[1] = {3}, d4[1] = {4}, s8[2] = {8, 8}, d23[2] = {2, 3};
  intptr_t shape[4], strides[16];
  size_t nd;
  ck_strided_operand dst = {1, d4, s8}, src = {1, d3, s8};
  CHECK_ERR(ck_broadcast_strides(&dst, 1, &src, 4, &nd, shape, strides), CK_ERR_VALUE,
            "cannot broadcast shape (3,) to (4,)");
  ck_strided_operand big = {2, d23, s8}, dst3 = {1, d3, s8};
  CHECK_ERR(ck_broadcast_strides(&dst3, 1, &big, 4, &nd, shape, strides), CK_ERR_VALUE,
            "cannot broadcast shape (2, 3) to (3,)");
  ck_strided_operand two = {2, d23, s8};
  CHECK_ERR(ck_broadcast_strides(&two, 0, NULL, 1, &nd, shape, strides),
            CK_ERR_INVALID_ARGUMENT, "room for 1");
  intptr_t neg[1] = {-2};
  ck_strided_operand bad = {1, neg, s8};
  CHECK_ERR(ck_broadcast_strides(&bad, 0, NULL, 4, &nd, shape, strides),
            CK_ERR_INVALID_ARGUMENT, "negative size -2");
  ck_strided_operand nul = {1, NULL, s8};
  CHECK_ERR(ck_broadcast_strides(&dst, 1, &nul, 4, &nd, shape, strides),
            CK_ERR_INVALID_ARGUMENT, "NULL shape");
  CHECK_ERR(ck_broadcast_strides(NULL, 0, NULL, 4, &nd, shape, strides),
            CK_ERR_INVALID_ARGUMENT, "NULL argument");
  CHECK_ERR(ck_broadcast_strides(&dst, 1, NULL, 4, &nd, shape, strides),
            CK_ERR_INVALID_ARGUMENT, "NULL argument");
  /* leading 1s of a source are fine, 0-d sources broadcast everywhere */
  intptr_t d13[2] = {1, 3};
  ck_strided_operand lead = {2, d13, s8}, scalar = {0, NULL, NULL};
  ck_strided_operand srcs[2] = {lead, scalar};
  CHECK_OK(ck_broadcast_strides(&dst3, 2, srcs, 4, &nd, shape, strides));
  CHECK(nd == 1 && shape[0] == 3 && strides[4] == 8 && strides[8] == 0);
  nd = 3;
  CHECK_ERR(ck_coalesce_dims(1, &nd, shape, strides, 2), CK_ERR_INVALID_ARGUMENT,
            "3 dims in rows of 2");
  intptr_t negs[1] = {-1};
  nd = 1;
  CHECK_ERR(ck_coalesce_dims(1, &nd, negs, strides, 1), CK_ERR_INVALID_ARGUMENT,
            "negative size");
  CHECK_ERR(ck_coalesce_dims(1, NULL, shape, strides, 1), CK_ERR_INVALID_ARGUMENT,
            "NULL argument");
}

CK_TEST_MAIN(CK_TEST(test_strides_match_definition), CK_TEST(test_coalesce_cases),
             CK_TEST(test_errors))
