/*
 * string_loops.c -- the loops of jitted signatures with `string` arguments or
 * results, over NumPy's StringDType (NpyString C API).
 *
 * A jitted kernel reads a string argument as a `ck_string {begin, end}` view
 * and writes a string result into the arena of its destination.  NumPy's
 * StringDType keeps packed strings (short ones inline, long ones in the
 * array's allocator).  The loop here works in chunks of CKS_CHUNK elements:
 *
 *   1. every string input of the chunk is loaded (NpyString_load) into
 *      `ck_string` views of NumPy's own bytes -- no copy;
 *   2. the kernel runs over the chunk (its strided entry point; numeric
 *      operands straight from NumPy's buffers);
 *   3. a string result: the kernel wrote `ck_string`s into an arena of this
 *      chunk (a kernel built for it, ck_jit_make_kernel with the arena as its
 *      destination), which are packed into the output (NpyString_pack) and
 *      the arena dropped; a numeric result was written in place.
 *
 * The allocators of every StringDType operand are held for the whole loop
 * (NpyString_acquire_allocators: one lock each, a shared allocator once), as
 * NumPy's own string loops do.  Inputs are loaded before any output of the
 * chunk is packed, so an output sharing an input's allocator (in place) never
 * moves bytes a view still points at.  Reductions and accumulations (output
 * stride 0, or an input overlapping the output other than exactly in place)
 * run one element at a time.
 *
 * Missing values (`StringDType(na_object=...)` nulls) propagate: an element
 * where any string input is null is null in a string output (packed with
 * NpyString_pack_null; a new output gets the first input's na_object), and
 * the kernel never runs on it (it runs on the runs of valid elements of each
 * chunk).  A numeric output cannot hold a null: a CKValueError naming the
 * number of null elements of the run and the first.  Where the dtype's
 * na_object is itself a string, NumPy's rule applies: it stands for that
 * string.
 *
 * Threads.  Long runs are split over the library's pool when a first chunk,
 * timed, says the rest is worth it (the threshold of parallel.c).  Workers
 * load inputs (reading the held allocators: nothing writes them meanwhile)
 * and run the kernel, each chunk with its own kernel and arena for a string
 * result; outputs are packed by the calling thread after the workers are
 * done, a block of CKS_BLOCK elements at a time (packing writes the output's
 * allocator, which has one writer).  Loops run without the GIL.
 */
#include "ufuncs_internal.h"
#include "ckernel/utf8.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Elements per chunk (views of each string input, results of a string
 * output), and per block of a split run whose results are packed together. */
#define CKS_CHUNK 1024
#define CKS_BLOCK (64 * CKS_CHUNK)

typedef struct {
  ckd_loop *L;
  npy_intp n;              /* elements of the run                           */
  char *const *data;
  const npy_intp *strides;
  npy_string_allocator *alloc[CKD_MAX_ARGS];
  const PyArray_StringDTypeObject *descr[CKD_MAX_ARGS];
} cks_run;

/* Scratch of one chunk: the views of each string input, the results, which
 * elements are null (any string input null there). */
typedef struct {
  ck_string *views[CKD_MAX_NIN];
  ck_string *out;
  uint8_t *nulls;
} cks_scratch;

/* A null result in the results array: both ends point here (never text). */
static const char cks_null_mark = 0;

static void cks_scratch_free(cks_scratch *s, int nin) {
  for (int j = 0; j < nin; j++) {
    free(s->views[j]);
  }
  free(s->out);
  free(s->nulls);
}

static ck_status cks_scratch_init(cks_scratch *s, const ckd_loop *L, size_t n_out) {
  memset(s, 0, sizeof *s);
  for (int j = 0; j < L->nin; j++) {
    if (L->strings & (1u << j)) {
      s->views[j] = malloc(CKS_CHUNK * sizeof(ck_string));
      if (s->views[j] == NULL) {
        cks_scratch_free(s, L->nin);
        return ck_set_error(CK_ERR_NO_MEMORY, "string loop: no memory for views");
      }
    }
  }
  s->nulls = malloc(CKS_CHUNK);
  if (s->nulls == NULL) {
    cks_scratch_free(s, L->nin);
    return ck_set_error(CK_ERR_NO_MEMORY, "string loop: no memory for views");
  }
  if (n_out > 0) {
    s->out = malloc(n_out * sizeof(ck_string));
    if (s->out == NULL) {
      cks_scratch_free(s, L->nin);
      return ck_set_error(CK_ERR_NO_MEMORY, "string loop: no memory for results");
    }
  }
  return CK_OK;
}

/* Null elements of the run: those where any string input is null (not a
 * string na_object); *first gets the first one (-1: none). */
static npy_intp cks_count_nulls(const cks_run *r, npy_intp *first) {
  npy_intp count = 0;
  *first = -1;
  for (npy_intp i = 0; i < r->n; i++) {
    for (int j = 0; j < r->L->nin; j++) {
      npy_static_string v = {0, NULL};
      if ((r->L->strings & (1u << j)) && !r->descr[j]->has_string_na &&
          NpyString_load(r->alloc[j],
                         (const npy_packed_static_string *)(r->data[j] + i * r->strides[j]),
                         &v) == 1) {
        if (count++ == 0) {
          *first = i;
        }
        break;
      }
    }
  }
  return count;
}

/* Views of input j's strings [begin, begin + m); nulls[i] set where one is
 * null (its view empty), *any set when there is one. */
static ck_status cks_load(const cks_run *r, int j, npy_intp begin, npy_intp m,
                          ck_string *views, uint8_t *nulls, int *any) {
  const char *p = r->data[j] + begin * r->strides[j];
  npy_intp stride = r->strides[j];
  npy_string_allocator *alloc = r->alloc[j];
  for (npy_intp i = 0; i < m; i++, p += stride) {
    npy_static_string s = {0, NULL};
    int rc = NpyString_load(alloc, (const npy_packed_static_string *)p, &s);
    if (rc < 0) {
      return ck_set_error(CK_ERR_NO_MEMORY, "string loop: NpyString_load failed");
    }
    if (rc == 1) {
      if (!r->descr[j]->has_string_na) {
        nulls[i] = 1;
        *any = 1;
        s.size = 0;
        s.buf = "";
      } else {
        s = r->descr[j]->default_string;
      }
    }
    /* NumPy's bytes: its ufunc cast from `S` does not decode them, so they
     * are checked here (the kernel takes views as valid UTF-8) */
    ck_status st = ck_utf8_check(s.buf, (int64_t)s.size, NULL);
    if (st != CK_OK) {
      return st;
    }
    views[i].begin = (char *)s.buf;
    views[i].end = (char *)s.buf + s.size;
  }
  return CK_OK;
}

/* The error of nulls that a numeric output (or one without an na_object)
 * cannot hold. */
static ck_status cks_null_error(const cks_run *r) {
  npy_intp first;
  npy_intp count = cks_count_nulls(r, &first);
  char msg[512];
  snprintf(msg, sizeof msg,
           "%s: %zd missing value%s (StringDType nulls) in the arguments, the first at element "
           "%zd of the run, and the result's NumPy dtype cannot hold a null; fill them first "
           "(numpy.where, or a StringDType with a string na_object) or call the function on "
           "ckernels arrays (ckernels.array(x)), whose results are option types",
           r->L->name, (Py_ssize_t)count, count == 1 ? "" : "s", (Py_ssize_t)first);
  return ck_set_error(CK_ERR_VALUE, msg);
}

/* Run the kernel over [begin, begin + m): numeric results in place, string
 * results as ck_strings into `out` (an arena made here: *arena, owned by the
 * caller afterwards). */
static ck_status cks_compute(const cks_run *r, npy_intp begin, npy_intp m, cks_scratch *s,
                             ck_string *out, ck_memblock **arena) {
  ckd_loop *L = r->L;
  int nin = L->nin;
  const char *src[CKD_MAX_NIN];
  intptr_t ss[CKD_MAX_NIN];
  for (npy_intp off = 0; off < m; off += CKS_CHUNK) {
    npy_intp k = m - off < CKS_CHUNK ? m - off : CKS_CHUNK;
    int any = 0;
    memset(s->nulls, 0, (size_t)k);
    for (int j = 0; j < nin; j++) {
      if (L->strings & (1u << j)) {
        ck_status st = cks_load(r, j, begin + off, k, s->views[j], s->nulls, &any);
        if (st != CK_OK) {
          return st;
        }
        src[j] = (const char *)s->views[j];
        ss[j] = (intptr_t)sizeof(ck_string);
      } else {
        src[j] = r->data[j] + (begin + off) * r->strides[j];
        ss[j] = r->strides[j];
      }
    }
    if (any && (!(L->strings & (1u << nin)) || r->descr[nin]->na_object == NULL)) {
      return cks_null_error(r);
    }
    ck_status st;
    if (!(L->strings & (1u << nin))) {
      st = L->strided(r->data[nin] + (begin + off) * r->strides[nin], r->strides[nin], src, ss,
                      (size_t)k, L->kernel);
    } else {
      if (*arena == NULL) {
        st = ck_pod_memblock_new((size_t)m * 16, arena);
        if (st != CK_OK) {
          return st;
        }
      }
      /* a kernel writing into this arena (the destination's arrmeta) */
      ck_string_arrmeta am = {*arena};
      ck_kernel_builder ckb;
      ck_kernel_builder_init(&ckb);
      st = ck_jit_make_kernel(&ckb, 0, &L->desc, (const char *)&am, CK_KERNEL_REQUEST_STRIDED,
                              NULL);
      if (st == CK_OK && !any) {
        ck_prefix *kernel = ck_kernel_builder_get(&ckb, 0);
        st = ck_prefix_strided(kernel)((char *)(out + off), (intptr_t)sizeof(ck_string), src, ss,
                                       (size_t)k, kernel);
      } else if (st == CK_OK) { /* the runs of valid elements; nulls marked */
        ck_prefix *kernel = ck_kernel_builder_get(&ckb, 0);
        for (npy_intp a = 0; st == CK_OK && a < k;) {
          if (s->nulls[a]) {
            out[off + a].begin = out[off + a].end = (char *)&cks_null_mark;
            a++;
            continue;
          }
          npy_intp e = a;
          while (e < k && !s->nulls[e]) {
            e++;
          }
          const char *rs[CKD_MAX_NIN];
          for (int j = 0; j < nin; j++) {
            rs[j] = src[j] + a * ss[j];
          }
          st = ck_prefix_strided(kernel)((char *)(out + off + a), (intptr_t)sizeof(ck_string),
                                         rs, ss, (size_t)(e - a), kernel);
          a = e;
        }
      }
      /* the loop's own kernel holds the code: this never releases it */
      ck_kernel_builder_destroy(&ckb);
    }
    if (st != CK_OK) {
      return st;
    }
  }
  return CK_OK;
}

/* Pack results [begin, begin + m) into the output. */
static ck_status cks_pack(const cks_run *r, npy_intp begin, npy_intp m, const ck_string *res) {
  int nin = r->L->nin;
  char *p = r->data[nin] + begin * r->strides[nin];
  npy_intp stride = r->strides[nin];
  npy_string_allocator *alloc = r->alloc[nin];
  for (npy_intp i = 0; i < m; i++, p += stride) {
    const ck_string *v = &res[i];
    if (v->begin == &cks_null_mark) {
      if (NpyString_pack_null(alloc, (npy_packed_static_string *)p) < 0) {
        return ck_set_error(CK_ERR_NO_MEMORY, "string loop: NpyString_pack_null failed");
      }
      continue;
    }
    size_t n = v->begin != NULL ? (size_t)(v->end - v->begin) : 0;
    if (NpyString_pack(alloc, (npy_packed_static_string *)p, n ? v->begin : "", n) < 0) {
      return ck_set_error(CK_ERR_NO_MEMORY, "string loop: NpyString_pack failed");
    }
  }
  return CK_OK;
}

/* [begin, begin + m) on the calling thread, chunk by chunk (one element at
 * a time when `one`: reductions and accumulations read what was written). */
static ck_status cks_serial(const cks_run *r, npy_intp begin, npy_intp m, int one) {
  ckd_loop *L = r->L;
  int string_out = (L->strings >> L->nin) & 1u;
  cks_scratch s;
  npy_intp step = one ? 1 : CKS_CHUNK;
  ck_status st = cks_scratch_init(&s, L, string_out ? (size_t)step : 0);
  if (st != CK_OK) {
    return st;
  }
  for (npy_intp off = 0; st == CK_OK && off < m; off += step) {
    npy_intp k = m - off < step ? m - off : step;
    ck_memblock *arena = NULL;
    st = cks_compute(r, begin + off, k, &s, s.out, &arena);
    if (st == CK_OK && string_out) {
      st = cks_pack(r, begin + off, k, s.out);
    }
    if (arena != NULL) {
      ck_memblock_decref(arena);
    }
  }
  cks_scratch_free(&s, L->nin);
  return st;
}

/* ---- the pool --------------------------------------------------------------- */

typedef struct {
  const cks_run *run;
  npy_intp base;           /* first element of the block                    */
  ck_string *out;          /* the block's results (string output)           */
  ck_memblock **arenas;    /* one per worker call, released after packing   */
  atomic_size_t narenas;
  size_t max_arenas;
} cks_par;

static ck_status cks_par_chunk(void *vctx, size_t begin, size_t end, unsigned thread) {
  (void)thread;
  cks_par *c = vctx;
  const cks_run *r = c->run;
  cks_scratch s;
  ck_status st = cks_scratch_init(&s, r->L, 0);
  if (st != CK_OK) {
    return st;
  }
  ck_memblock *arena = NULL;
  st = cks_compute(r, c->base + (npy_intp)begin, (npy_intp)(end - begin), &s,
                   c->out != NULL ? c->out + begin : NULL, &arena);
  if (arena != NULL) {
    size_t slot = atomic_fetch_add(&c->narenas, 1);
    if (slot < c->max_arenas) {
      c->arenas[slot] = arena; /* its strings are packed after the pool is done */
    } else {
      ck_memblock_decref(arena); /* not reached: one slot per call */
      st = ck_set_error(CK_ERR_INVALID_STATE, "string loop: too many chunks");
    }
  }
  cks_scratch_free(&s, r->L->nin);
  return st;
}

static int64_t cks_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* [begin, n) on the pool, a block at a time; `per_ns` the probed cost of an
 * element (chunks of about 20 us of work, at least CKS_CHUNK elements). */
static ck_status cks_parallel(const cks_run *r, npy_intp begin, npy_intp n, double per_ns) {
  ckd_loop *L = r->L;
  int string_out = (L->strings >> L->nin) & 1u;
  double want = 20000.0 / (per_ns > 0 ? per_ns : 1.0);
  size_t min_chunk = want < CKS_CHUNK ? CKS_CHUNK : want > CKS_BLOCK ? CKS_BLOCK : (size_t)want;
  size_t max_arenas = CKS_BLOCK / min_chunk + 2;
  cks_par c = {.run = r};
  if (string_out) {
    c.out = malloc(CKS_BLOCK * sizeof(ck_string));
    c.arenas = malloc(max_arenas * sizeof(ck_memblock *));
    if (c.out == NULL || c.arenas == NULL) {
      free(c.out);
      free(c.arenas);
      return ck_set_error(CK_ERR_NO_MEMORY, "string loop: no memory for a block");
    }
    c.max_arenas = max_arenas;
  }
  ck_status st = CK_OK;
  for (npy_intp b = begin; st == CK_OK && b < n; b += CKS_BLOCK) {
    npy_intp m = n - b < CKS_BLOCK ? n - b : CKS_BLOCK;
    c.base = b;
    atomic_store(&c.narenas, 0);
    st = ck_parallel_for((size_t)m, min_chunk, cks_par_chunk, &c);
    if (st == CK_OK && string_out) {
      st = cks_pack(r, b, m, c.out);
    }
    size_t na = atomic_load(&c.narenas);
    for (size_t i = 0; i < na && i < c.max_arenas; i++) {
      ck_memblock_decref(c.arenas[i]);
    }
  }
  free(c.out);
  free(c.arenas);
  return st;
}

static ck_status cks_run_all(const cks_run *r, npy_intp n) {
  ckd_loop *L = r->L;
  if (!ckd_splittable(L, r->data, r->strides, n)) { /* reductions, accumulations */
    return cks_serial(r, 0, n, 1);
  }
  if (n < 4 * CKS_CHUNK || ck_get_num_threads() <= 1) {
    return cks_serial(r, 0, n, 0);
  }
  /* time a first chunk, then decide whether the rest is worth the pool */
  int64_t t0 = cks_now_ns();
  ck_status st = cks_serial(r, 0, CKS_CHUNK, 0);
  if (st != CK_OK) {
    return st;
  }
  double per = (double)(cks_now_ns() - t0) / CKS_CHUNK;
  if (per * (double)(n - CKS_CHUNK) >= (double)ckd_get_parallel_min_ns()) {
    return cks_parallel(r, CKS_CHUNK, n, per);
  }
  return cks_serial(r, CKS_CHUNK, n - CKS_CHUNK, 0);
}

int ckd_string_loop(PyArrayMethod_Context *context, char *const *data,
                    const npy_intp *dimensions, const npy_intp *strides, NpyAuxData *aux) {
  ckd_loop *L = (ckd_loop *)aux;
  npy_intp n = dimensions[0];
  if (n <= 0) {
    return 0;
  }
  int nargs = L->nin + 1;
  cks_run r = {.L = L, .n = n, .data = data, .strides = strides};
  for (int i = 0; i < nargs; i++) {
    r.descr[i] = (L->strings & (1u << i))
                     ? (const PyArray_StringDTypeObject *)context->descriptors[i]
                     : NULL;
  }
  NpyString_acquire_allocators((size_t)nargs, context->descriptors, r.alloc);
  ck_status st = cks_run_all(&r, n);
  NpyString_release_allocators((size_t)nargs, r.alloc);
  if (st != CK_OK) {
    ckpy_raise_last(st);
    return -1;
  }
  return 0;
}

/* ---- descriptors --------------------------------------------------------------- */

/* A new StringDType for an output, with the na_object of the first string
 * input of `given` that has one. */
static PyArray_Descr *cks_new_string_descr(int nargs, PyArray_DTypeMeta *const *dtypes,
                                           PyArray_Descr *const *given) {
  for (int j = 0; j < nargs - 1; j++) {
    if (given[j] != NULL && dtypes[j] == &PyArray_StringDType &&
        ((PyArray_StringDTypeObject *)given[j])->na_object != NULL) {
      PyObject *na = ((PyArray_StringDTypeObject *)given[j])->na_object;
      PyObject *args = PyTuple_New(0);
      PyObject *kw = args != NULL ? Py_BuildValue("{s:O}", "na_object", na) : NULL;
      PyObject *d = kw != NULL ? PyObject_Call((PyObject *)&PyArray_StringDType, args, kw)
                               : NULL;
      Py_XDECREF(kw);
      Py_XDECREF(args);
      return (PyArray_Descr *)d;
    }
  }
  return (PyArray_Descr *)PyObject_CallNoArgs((PyObject *)&PyArray_StringDType);
}

/* The descriptors of `nargs` operands (the method object is opaque: one
 * resolver per operand count, below). */
static NPY_CASTING cks_resolve(int nargs, PyArray_DTypeMeta *const *dtypes,
                               PyArray_Descr *const *given, PyArray_Descr **loop_descrs) {
  for (int i = 0; i < nargs; i++) {
    PyArray_Descr *d = given[i];
    if (d != NULL && dtypes[i] != &PyArray_StringDType && !PyArray_ISNBO(d->byteorder)) {
      d = PyArray_DescrNewByteorder(d, NPY_NATIVE);
    } else if (d != NULL) {
      Py_INCREF(d);
    } else if (dtypes[i] == &PyArray_StringDType) {
      /* a new StringDType() for a new output: its own allocator, and the
       * na_object of the first string input that has one (nulls propagate) */
      d = cks_new_string_descr(nargs, dtypes, given);
    } else {
      d = dtypes[i]->singleton;
      Py_XINCREF(d);
      if (d == NULL) {
        PyErr_SetString(PyExc_TypeError, "ckernels string loop: an operand without a dtype");
      }
    }
    if (d == NULL) {
      for (int k = 0; k < i; k++) {
        Py_CLEAR(loop_descrs[k]);
      }
      return (NPY_CASTING)-1;
    }
    loop_descrs[i] = d;
  }
  return NPY_NO_CASTING;
}

#define CKS_RESOLVER(N)                                                                    \
  static NPY_CASTING cks_resolve_##N(struct PyArrayMethodObject_tag *method,                    \
                                     PyArray_DTypeMeta *const *dtypes,                     \
                                     PyArray_Descr *const *given,                          \
                                     PyArray_Descr **loop_descrs, npy_intp *view_offset) { \
    (void)method;                                                                          \
    (void)view_offset;                                                                     \
    return cks_resolve(N, dtypes, given, loop_descrs);                                     \
  }
CKS_RESOLVER(2)
CKS_RESOLVER(3)
CKS_RESOLVER(4)
CKS_RESOLVER(5)
CKS_RESOLVER(6)
CKS_RESOLVER(7)
CKS_RESOLVER(8)
CKS_RESOLVER(9)
CKS_RESOLVER(10)
CKS_RESOLVER(11)
CKS_RESOLVER(12)
CKS_RESOLVER(13)
CKS_RESOLVER(14)
CKS_RESOLVER(15)
CKS_RESOLVER(16)
CKS_RESOLVER(17)

_Static_assert(CKD_MAX_NIN == 16, "one resolver per operand count");

PyArrayMethod_ResolveDescriptors *ckd_string_resolver(int nin) {
  static PyArrayMethod_ResolveDescriptors *const table[] = {
      cks_resolve_2,  cks_resolve_3,  cks_resolve_4,  cks_resolve_5,  cks_resolve_6,
      cks_resolve_7,  cks_resolve_8,  cks_resolve_9,  cks_resolve_10, cks_resolve_11,
      cks_resolve_12, cks_resolve_13, cks_resolve_14, cks_resolve_15, cks_resolve_16,
      cks_resolve_17,
  };
  return nin >= 1 && nin <= CKD_MAX_NIN ? table[nin - 1] : NULL;
}
