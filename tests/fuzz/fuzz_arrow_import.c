/* libFuzzer target for the Arrow importer (ck_arrow_import, arrow.h).
 *
 * Each input is decoded into a synthetic ArrowSchema + ArrowArray tree (up
 * to 4 levels: numbers, bools, timestamps and dates, utf8/binary and their
 * large and view forms,
 * lists, large lists, list views, fixed-size lists, structs, and formats
 * the library refuses) whose buffers are allocated here.  What the C data
 * interface makes the producer vouch for and the importer cannot check --
 * that each buffer holds (offset + length) elements of its width, that a
 * utf8 data buffer reaches its largest offset, the declared sizes of view
 * buffers -- is made true; everything the importer must check is taken
 * from the input as is: offsets, list-view sizes, views (sizes, buffer
 * indices, offsets), null counts, child lengths, buffer and child counts,
 * NULL or released buffers and children, field names, formats, and
 * offsets so large that (offset + length) * width leaves the address space.
 *
 * Properties checked on every input (abort() = finding):
 *   - import never crashes, reads outside the buffers, leaks or trips a
 *     sanitizer; the array is released by the call whatever its result;
 *   - a failure has a status other than CK_OK and a message naming
 *     ck_arrow_import or ck_arrow_schema_type;
 *   - on success the array has the length of the Arrow array and every
 *     element can be read: it is copied (ck_array_assign, which reads each
 *     string and variable-length row) and exported back to Arrow;
 *   - every descriptor and memblock is released.
 *
 * Build and run: see tests/fuzz/CMakeLists.txt. */
#include "ckernel/ckernel.h"
#include "ckernel/arrow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- the input ------------------------------------------------------------ */

typedef struct rd {
  const uint8_t *p;
  size_t n;
} rd;

static uint8_t u8(rd *r) {
  if (r->n == 0) return 0;
  r->n--;
  return *r->p++;
}

static uint64_t u64(rd *r) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)u8(r) << (8 * i);
  return v;
}

/* Values at the edges of int32 and int64 arithmetic. */
static const int64_t EDGES[] = {INT64_MAX,       INT64_MAX - 1,   INT64_MAX - 4,
                                INT64_MIN,       -1,              (int64_t)1 << 62,
                                (int64_t)1 << 61, (int64_t)1 << 60, (int64_t)1 << 59,
                                INT32_MAX,       INT32_MIN,       (int64_t)INT32_MAX + 1,
                                (int64_t)UINT32_MAX};

/* An offset, size or index: mostly small, sometimes an edge, sometimes raw. */
static int64_t wild(rd *r, int64_t small) {
  uint8_t m = u8(r);
  if (m < 200) return small > 0 ? (int64_t)(m % (uint8_t)(small + 1)) : 0;
  if (m < 240) return EDGES[m % (sizeof EDGES / sizeof EDGES[0])];
  return (int64_t)u64(r);
}

/* ---- the nodes (owned by the harness until moved into the importer) ------- */

#define MAXBUF 8
#define MAXKIDS 4
#define DATA_LIMIT 4096

typedef struct node {
  void *bufs[MAXBUF];
  const void *bufptrs[MAXBUF];
  struct ArrowArray *kidptrs[MAXKIDS];
  struct ArrowArray kids[MAXKIDS];
  int nkids; /* kids[] owned (released by the release callback) */
} node;

typedef struct snode {
  struct ArrowSchema *kidptrs[MAXKIDS];
  struct ArrowSchema kids[MAXKIDS];
  int nkids;
  char format[16];
} snode;

static int64_t arrays_made, arrays_released;

static void array_release(struct ArrowArray *a) {
  node *h = a->private_data;
  for (int i = 0; i < h->nkids; i++) {
    if (h->kids[i].release != NULL) h->kids[i].release(&h->kids[i]);
  }
  for (int i = 0; i < MAXBUF; i++) free(h->bufs[i]);
  free(h);
  a->release = NULL;
  arrays_released++;
}

static void schema_release(struct ArrowSchema *s) {
  snode *h = s->private_data;
  for (int i = 0; i < h->nkids; i++) {
    if (h->kids[i].release != NULL) h->kids[i].release(&h->kids[i]);
  }
  free(h);
  s->release = NULL;
}

/* A buffer of n bytes (at least 1) from the input, zeros when it runs out. */
static void *bytes(rd *r, node *h, int slot, size_t n) {
  uint8_t *b = calloc(n > 0 ? n : 1, 1);
  if (b == NULL) abort();
  for (size_t i = 0; i < n && r->n > 0; i++) b[i] = u8(r);
  h->bufs[slot] = b;
  h->bufptrs[slot] = b;
  return b;
}

enum { K_BOOL, K_I8, K_I32, K_I64, K_F64, K_TS, K_DATE, K_UTF8, K_LUTF8, K_BIN, K_LBIN, K_VU, K_VZ,
       K_LIST, K_LLIST, K_LV, K_LLV, K_FIXED, K_STRUCT, K_OTHER, K_COUNT };

static const char *const FORMATS[K_COUNT] = {"b", "c", "i", "l", "g", "tsu:", "tdD", "u", "U", "z", "Z",
                                             "vu", "vz", "+l", "+L", "+vl", "+vL", NULL,
                                             "+s", NULL};
/* formats the importer refuses (a buffer of 16 bytes whatever the length:
 * never read) */
static const char *const OTHERS[] = {"n", "w:16", "tiM", "+m", "+ud:0,1", "d:10,2",
                                     "+w:", "+w:01", "tin", "", "+w:2147483648"};
static const char *const NAMES[] = {"a", "b", "", "a", "x.y", "\xc3\xa9", "\x01", "\xff"};

static int64_t width_of(int k) {
  switch (k) {
  case K_I8: return 1;
  case K_I32: case K_DATE: case K_UTF8: case K_BIN: case K_LIST: case K_LV: return 4;
  case K_I64: case K_F64: case K_TS: case K_LUTF8: case K_LBIN: case K_LLIST: case K_LLV: return 8;
  case K_VU: case K_VZ: return 16;
  default: return 0;
  }
}

static void put_offset(void *buf, bool large, int64_t i, int64_t v) {
  if (large) ((int64_t *)buf)[i] = v;
  else ((int32_t *)buf)[i] = (int32_t)v;
}

/* Make one node: *s and *a are filled (both with release callbacks). */
static void make(rd *r, int depth, struct ArrowSchema *s, struct ArrowArray *a) {
  node *h = calloc(1, sizeof *h);
  snode *sh = calloc(1, sizeof *sh);
  if (h == NULL || sh == NULL) abort();
  memset(s, 0, sizeof *s);
  memset(a, 0, sizeof *a);
  int k = u8(r) % K_COUNT;
  if (depth >= 3 && k >= K_LIST && k <= K_STRUCT) k = K_I32;
  int64_t length = u8(r) % 17, offset = u8(r) % 5;
  int64_t w = width_of(k);
  /* an offset past the address space for the node's element width (the
   * importer must refuse it before reading) */
  if (w > 0 && u8(r) >= 224) {
    int64_t e = EDGES[u8(r) % 9];
    if ((__int128)e + length + 1 > (__int128)(PTRDIFF_MAX / w)) offset = e;
  }
  bool huge = offset > 64;
  int64_t end = huge ? 0 : offset + length; /* elements of the buffers */
  const char *fmt = FORMATS[k];
  if (k == K_FIXED) {
    snprintf(sh->format, sizeof sh->format, "+w:%d", u8(r) % 4);
    fmt = sh->format;
  } else if (k == K_OTHER) {
    fmt = OTHERS[u8(r) % (sizeof OTHERS / sizeof OTHERS[0])];
  }
  int nb = 2, nkids = 0;
  uint8_t nullmode = u8(r) % 6;
  if (!huge && nullmode >= 2) bytes(r, h, 0, (size_t)(end + 7) / 8); /* validity */
  int64_t null_count = nullmode == 0 ? 0 : nullmode == 1 ? -1 : (int64_t)(u8(r) % 20) - 1;
  switch (k) {
  case K_BOOL: bytes(r, h, 1, (size_t)(end + 7) / 8); break;
  case K_I8: case K_I32: case K_I64: case K_F64: case K_TS: case K_DATE:
    bytes(r, h, 1, (size_t)(end * w));
    break;
  case K_UTF8: case K_LUTF8: case K_BIN: case K_LBIN: {
    bool large = w == 8;
    void *offs = bytes(r, h, 1, (size_t)((end + 1) * w));
    uint8_t mode = u8(r);
    int64_t acc = 0, maxv = 0;
    for (int64_t i = 0; i <= end; i++) {
      int64_t v;
      if (mode < 160) { acc += u8(r) % 9; v = acc; } /* well-formed */
      else v = wild(r, 40);
      if (!large && (v > INT32_MAX || v < INT32_MIN)) v = (int32_t)v;
      /* a positive offset must lie in the data buffer (the producer vouches
       * for that; only order is checkable) */
      if (v > DATA_LIMIT) v %= DATA_LIMIT + 1;
      put_offset(offs, large, i, v);
      if (v > maxv) maxv = v;
    }
    if (u8(r) < 250 || maxv > 0) bytes(r, h, 2, (size_t)maxv); /* else NULL data */
    nb = 3;
    break;
  }
  case K_VU: case K_VZ: {
    char *views = bytes(r, h, 1, (size_t)(end * 16));
    int nvar = u8(r) % 3;
    int64_t *sizes = calloc((size_t)nvar + 1, 8);
    if (sizes == NULL) abort();
    for (int i = 0; i < nvar; i++) {
      sizes[i] = u8(r) % 64;
      bytes(r, h, 2 + i, (size_t)sizes[i]);
    }
    for (int64_t i = 0; i < end; i++) { /* mostly plausible views */
      uint8_t m = u8(r);
      if (m < 128) {
        int32_t len = (int32_t)(u8(r) % 40), bi = (int32_t)(u8(r) % (nvar + 1)),
                off = (int32_t)(u8(r) % 64);
        memcpy(views + 16 * i, &len, 4);
        memcpy(views + 16 * i + 8, &bi, 4);
        memcpy(views + 16 * i + 12, &off, 4);
      }
    }
    h->bufs[2 + nvar] = sizes;
    h->bufptrs[2 + nvar] = sizes;
    nb = 3 + nvar;
    break;
  }
  case K_LIST: case K_LLIST: case K_LV: case K_LLV: {
    bool large = w == 8, view = k == K_LV || k == K_LLV;
    void *offs = bytes(r, h, 1, (size_t)((end + 1) * w));
    void *sizes = view ? bytes(r, h, 2, (size_t)(end * w)) : NULL;
    uint8_t mode = u8(r);
    int64_t acc = 0;
    for (int64_t i = 0; i <= end; i++) {
      if (mode < 128 && !view) { acc += u8(r) % 4; put_offset(offs, large, i, acc); }
      else put_offset(offs, large, i, wild(r, 20));
      if (view && i < end) put_offset(sizes, large, i, wild(r, 6));
    }
    nb = view ? 3 : 2;
    nkids = 1;
    break;
  }
  case K_FIXED: nb = 1; nkids = 1; break;
  case K_STRUCT: nb = 1; nkids = u8(r) % 4; break;
  default: nb = u8(r) % 3; if (nb > 1) bytes(r, h, 1, 16); break;
  }
  for (int i = 0; i < nkids; i++) {
    make(r, depth + 1, &sh->kids[i], &h->kids[i]);
    sh->kidptrs[i] = &sh->kids[i];
    h->kidptrs[i] = &h->kids[i];
    if (k == K_STRUCT) sh->kids[i].name = NAMES[u8(r) % (sizeof NAMES / sizeof NAMES[0])];
  }
  sh->nkids = h->nkids = nkids;
  s->format = fmt;
  s->name = "f";
  s->flags = ARROW_FLAG_NULLABLE;
  s->n_children = nkids;
  s->children = nkids ? sh->kidptrs : NULL;
  s->release = schema_release;
  s->private_data = sh;
  a->length = length;
  a->offset = offset;
  a->null_count = null_count;
  a->n_buffers = nb;
  a->buffers = h->bufptrs;
  a->n_children = nkids;
  a->children = nkids ? h->kidptrs : NULL;
  a->release = array_release;
  a->private_data = h;
  arrays_made++;
  /* corruptions the importer must notice (not of views: their buffer count
   * says where the sizes are, which the producer vouches for) */
  uint8_t c = u8(r);
  if (c >= 240) {
    switch (c % 8) {
    case 0: if (k != K_VU && k != K_VZ && nb < MAXBUF) a->n_buffers = nb + 1; break;
    case 1: if (nb > 1 && k != K_VU && k != K_VZ) h->bufptrs[1] = NULL; break;
    case 2: if (nkids > 0) h->kids[0].release(&h->kids[0]); break; /* released child */
    case 3: if (nkids > 0) h->kidptrs[0] = NULL; break;
    case 4: a->n_children = nkids + 1; break;
    case 5: a->length = -a->length - 1; break;
    case 6: a->offset = -1; break;
    default: a->null_count = length + 1; break;
    }
  }
}

/* ---- the target ------------------------------------------------------------- */

static void read_back(ck_array_preamble *a) {
  ck_array_preamble *copy = NULL;
  intptr_t shape[CK_TYPE_MAX_DEPTH];
  size_t nd = 0; /* the leading dims whose sizes the arrmeta holds */
  if (ck_array_shape(a, shape, CK_TYPE_MAX_DEPTH, NULL) != CK_OK) abort();
  for (ck_type d = a->type; ck_type_flags(d) & CK_TYPE_FLAG_ARRMETA_SIZED;
       d = ck_type_element(d)) {
    nd++;
  }
  if (ck_array_empty(a->type, shape, nd, CK_ARRAY_DEFAULT_FLAGS, &copy) != CK_OK) abort();
  ck_status st = ck_array_assign(copy, a, CK_ERRMODE_DEFAULT);
  /* a null under a var dim: ck_array_empty gives options there no bitmap
   * (their elements do not exist yet), so a copy cannot hold that null --
   * the option core's documented limit (ckernel/validity.h), refused with
   * a message; the import itself is still exported below */
  bool copied = st == CK_OK;
  if (!copied && !(st == CK_ERR_INVALID_STATE && (ck_type_flags(a->type) &
                                                  CK_TYPE_FLAG_OPTION) &&
                   strstr(ck_last_error(), "no validity bitmap") != NULL)) {
    fprintf(stderr, "copy of an import failed: %s\n", ck_last_error());
    abort();
  }
  struct ArrowSchema s;
  struct ArrowArray x;
  st = copied ? ck_arrow_export(copy, NULL, &s, &x) : CK_ERR_NOT_SUPPORTED;
  if (st == CK_OK) {
    s.release(&s);
    x.release(&x);
  } else if (st != CK_ERR_NOT_SUPPORTED && st != CK_ERR_TYPE) {
    abort();
  }
  /* the import itself exported: an option root (Arrow's bitmap, shared) has
   * the same exact null count both ways */
  struct ArrowSchema s0;
  struct ArrowArray x0;
  st = ck_arrow_export(a, NULL, &s0, &x0);
  if (st == CK_OK) {
    int64_t nulls;
    if (ck_type_is_option(ck_type_element(a->type)) &&
        (ck_array_null_count(a, &nulls, NULL) != CK_OK || nulls != x0.null_count)) {
      char ts[256];
      (void)ck_type_print(a->type, ts, sizeof ts, NULL);
      fprintf(stderr, "null count of %s: %lld, exported %lld (%s)\n", ts, (long long)nulls,
              (long long)x0.null_count, ck_last_error());
      abort();
    }
    s0.release(&s0);
    x0.release(&x0);
  } else if (st != CK_ERR_NOT_SUPPORTED && st != CK_ERR_TYPE) {
    abort();
  }
  char buf[256];
  size_t n;
  if (ck_array_debug_repr(a, buf, sizeof buf, &n) != CK_OK) abort();
  ck_array_decref(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t types = ck_type_live_count(), blocks = ck_memblock_live_count();
  rd r = {data, size};
  uint8_t opts = u8(&r);
  struct ArrowSchema s;
  struct ArrowArray a;
  arrays_made = arrays_released = 0;
  make(&r, 0, &s, &a);
  int64_t length = a.length;
  ck_array_preamble *fill = NULL;
  if (opts & 1) {
    if (ck_array_empty(CK_BUILTIN(CK_TYPE_INT64), NULL, 0, CK_ARRAY_DEFAULT_FLAGS, &fill) !=
        CK_OK) abort();
    *(int64_t *)fill->data = 7;
  }
  ck_type t = NULL;
  ck_clear_error();
  if (ck_arrow_schema_type(&s, &t) == CK_OK) {
    ck_type_decref(t);
  } else if (strstr(ck_last_error(), "ck_arrow_schema_type") == NULL) {
    abort();
  }
  ck_array_preamble *out = NULL;
  ck_clear_error();
  ck_status st;
  if (opts & 2) {
    struct ArrowDeviceArray d;
    memset(&d, 0, sizeof d);
    d.array = a;
    d.device_id = -1;
    d.device_type = (opts & 4) ? ARROW_DEVICE_CUDA : ARROW_DEVICE_CPU;
    st = ck_arrow_import_device(&s, &d, fill, &out);
    if (d.array.release != NULL) abort();
  } else {
    st = ck_arrow_import(&s, &a, fill, &out);
    if (a.release != NULL) abort();
  }
  if (st == CK_OK) {
    intptr_t n;
    if (out == NULL || ck_array_ndim(out) < 1 || ck_array_shape(out, &n, 1, NULL) != CK_OK ||
        n != length) abort();
    read_back(out);
    ck_array_decref(out);
  } else {
    const char *msg = ck_last_error();
    if (out != NULL || msg[0] == '\0') abort();
  }
  ck_array_decref(fill);
  s.release(&s);
  if (arrays_released != arrays_made) {
    fprintf(stderr, "%lld of %lld arrays released\n", (long long)arrays_released,
            (long long)arrays_made);
    abort();
  }
  if (ck_type_live_count() != types || ck_memblock_live_count() != blocks) abort();
  return 0;
}
