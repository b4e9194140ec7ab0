/*
 * arrow_export_array.c -- ck arrays as ArrowArrays: one recursion over the
 * element type whose cases are the Arrow layouts (numbers, bits, utf8 /
 * binary with offsets, lists, fixed-size lists, structs, validity from the
 * bitmaps of option types); the views are arrow_export_views.c
 * (arrow_export_internal.h).
 */
#include "interop/arrow_export_internal.h"
#include "ckernel/validity.h"

#include <stdio.h>
#include <string.h>

/* ---- arrays -------------------------------------------------------------------------- */

static ck_status export_node(ck__xctx *c, ck_type t, const char *arrmeta, const ck__xruns *runs,
                             const struct ArrowSchema *req, const char *name,
                             struct ArrowSchema *sout, struct ArrowArray *aout);

static ck_status export_numbers(ck__xctx *c, ck_type t, const ck__xruns *runs,
                                struct ArrowArray *a) {
  size_t es = ck_type_data_size(t);
  int64_t n = runs->total;
  ck_status st = ck__xnode_init(a, n, 2, 0);
  if (st != CK_OK) {
    return st;
  }
  if (ck_type_id_of(t) == CK_TYPE_BOOL) {
    uint8_t *bits = ck__xnode_alloc(a, (size_t)(n + 7) / 8, true);
    if (bits == NULL) {
      a->release(a);
      return CK_ERR_NO_MEMORY;
    }
    int64_t k = 0;
    for (size_t r = 0; r < runs->n; r++) {
      const ck__xrun *run = &runs->v[r];
      for (int64_t i = 0; i < run->count; i++, k++) {
        if (run->base[i * run->stride] != 0) {
          bits[k >> 3] |= (uint8_t)(1u << (k & 7));
        }
      }
    }
    a->buffers[1] = bits;
    return CK_OK;
  }
  if (runs->n == 1 && runs->v[0].stride == (intptr_t)es) {
    a->buffers[1] = runs->v[0].base; /* zero-copy: the node keeps the array */
    ck__xnode_keep(a, c->src);
    return CK_OK;
  }
  char *dst = ck__xnode_alloc(a, (size_t)n * es, false);
  if (dst == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  a->buffers[1] = dst;
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    if (run->stride == (intptr_t)es) {
      memcpy(dst, run->base, (size_t)run->count * es);
      dst += (size_t)run->count * es;
    } else {
      for (int64_t i = 0; i < run->count; i++, dst += es) {
        memcpy(dst, run->base + i * run->stride, es);
      }
    }
  }
  return CK_OK;
}

/* The ranges of adjacent text an export copies with one memcpy each, when
 * there are at most this many (else a second pass over the elements). */
enum { XRANGES = 64 };

/* One range of adjacent text: its first byte and where it goes. */
typedef struct xrange {
  const char *begin;
  int64_t at;
} xrange;

/* Offsets of type T over the elements of `runs` into `o` (n + 1 of them),
 * in one pass that also records the ranges of adjacent text (the first
 * XRANGES of them; *nranges counts them all); the total bytes in *total
 * (-1 past INT64_MAX). */
#define CK__OFFSETS_FN(NAME, T)                                                            \
  static void NAME(const ck__xruns *runs, T *o, xrange *ranges, size_t *nranges,          \
                   int64_t *total) {                                                       \
    int64_t k = 0, pos = 0;                                                                \
    size_t nr = 0;                                                                         \
    bool over = false;                                                                     \
    const char *at = NULL;                                                                 \
    for (size_t r = 0; r < runs->n; r++) {                                                 \
      const ck__xrun *run = &runs->v[r];                                                   \
      for (int64_t i = 0; i < run->count; i++, k++) {                                      \
        const ck_string *s = (const ck_string *)(run->base + i * run->stride);             \
        size_t len = ck__xstr_len(s);                                                      \
        o[k] = (T)pos;                                                                     \
        if (len > 0) {                                                                     \
          if (s->begin != at) {                                                            \
            if (nr < XRANGES) {                                                            \
              ranges[nr].begin = s->begin;                                                 \
              ranges[nr].at = pos;                                                         \
            }                                                                              \
            nr++;                                                                          \
          }                                                                                \
          at = s->end;                                                                     \
          over |= __builtin_add_overflow(pos, (int64_t)len, &pos) || len > INT64_MAX;      \
        }                                                                                  \
      }                                                                                    \
    }                                                                                      \
    o[k] = (T)pos;                                                                         \
    *nranges = nr;                                                                         \
    *total = over ? -1 : pos;                                                              \
  }
CK__OFFSETS_FN(offsets_i32, int32_t)
CK__OFFSETS_FN(offsets_i64, int64_t)
#undef CK__OFFSETS_FN

/* The text of the elements of `runs` copied to `data` (a second pass, for
 * more ranges than XRANGES): each run of adjacent texts one memcpy. */
static void copy_text(const ck__xruns *runs, char *data) {
  const char *span_b = NULL, *span_e = NULL;
  int64_t span_at = 0, pos = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++) {
      const ck_string *s = (const ck_string *)(run->base + i * run->stride);
      size_t len = ck__xstr_len(s);
      if (len > 0) {
        if (s->begin != span_e) {
          if (span_e != span_b) {
            memcpy(data + span_at, span_b, (size_t)(span_e - span_b));
          }
          span_b = s->begin;
          span_at = pos;
        }
        span_e = s->end;
        pos += (int64_t)len;
      }
    }
  }
  if (span_e != span_b) {
    memcpy(data + span_at, span_b, (size_t)(span_e - span_b));
  }
}

/*
 * utf8 / large_utf8 / binary / large_binary: the offsets, written in one
 * pass over the elements, and the text.  When the non-empty elements lie
 * one after another in memory, in order (a jitted function's results in one
 * region of their arena, an unsliced imported Arrow array), the text is
 * shared: the data buffer is that range, kept alive by the node's reference
 * to the array, which keeps every element's text (its arrmeta's blockref)
 * -- every byte of the range is some element's text.  Otherwise it is
 * copied, each range of adjacent texts in one memcpy.  32-bit offsets that
 * cannot hold the total are written again as 64-bit ones.
 */
static ck_status export_offsets_strings(ck__xctx *c, const ck__xruns *runs, ck__arrow_kind *kind,
                                        struct ArrowArray *a) {
  char what[300];
  int64_t n = runs->total;
  bool large = *kind == CK__ARROW_LARGE_UTF8 || *kind == CK__ARROW_LARGE_BINARY;
  ck_status st = ck__xnode_init(a, n, 3, 0);
  if (st != CK_OK) {
    return st;
  }
  xrange ranges[XRANGES];
  size_t nranges = 0;
  int64_t total = 0;
  char *offsets = NULL;
  if (!large) {
    offsets = ck__xnode_alloc(a, ((size_t)n + 1) * 4, false);
    if (offsets == NULL) {
      a->release(a);
      return CK_ERR_NO_MEMORY;
    }
    offsets_i32(runs, (int32_t *)offsets, ranges, &nranges, &total);
    if (total > INT32_MAX) {
      large = true; /* 32-bit offsets cannot hold it: the 64-bit form */
      *kind = *kind == CK__ARROW_UTF8 ? CK__ARROW_LARGE_UTF8 : CK__ARROW_LARGE_BINARY;
    }
  }
  if (large) {
    offsets = ck__xnode_alloc(a, ((size_t)n + 1) * 8, false);
    if (offsets == NULL) {
      a->release(a);
      return CK_ERR_NO_MEMORY;
    }
    offsets_i64(runs, (int64_t *)offsets, ranges, &nranges, &total);
  }
  if (total < 0) {
    a->release(a);
    return ck__error(CK_ERR_OVERFLOW, "ck_arrow_export", "%s: more than %lld bytes of text",
                     ck__xwhat(c, what, sizeof what), (long long)INT64_MAX);
  }
  a->buffers[1] = offsets;
  if (nranges == 1) { /* zero-copy: the node keeps the array */
    a->buffers[2] = ranges[0].begin;
    ck__xnode_keep(a, c->src);
    return CK_OK;
  }
  char *data = ck__xnode_alloc(a, (size_t)total, false);
  if (data == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  a->buffers[2] = data;
  if (nranges > XRANGES) {
    copy_text(runs, data);
    return CK_OK;
  }
  for (size_t r = 0; r < nranges; r++) {
    int64_t end = r + 1 < nranges ? ranges[r + 1].at : total;
    memcpy(data + ranges[r].at, ranges[r].begin, (size_t)(end - ranges[r].at));
  }
  return CK_OK;
}

/* Runs of the children when every element of `runs` holds `n` children
 * `stride` apart (fixed and strided dims). */
static ck_status child_runs_fixed(const ck__xruns *runs, int64_t n, intptr_t stride,
                                  ck__xruns *out) {
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++) {
      ck_status st = ck__xruns_add(out, run->base + i * run->stride, stride, n);
      if (st != CK_OK) {
        return st;
      }
    }
  }
  return CK_OK;
}

/* The runs of a struct field: every run moved by the field's offset. */
static ck_status child_runs_shifted(const ck__xruns *runs, uintptr_t shift, ck__xruns *out) {
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    ck_status st = ck__xruns_add(out, run->base + shift, run->stride, run->count);
    if (st != CK_OK) {
      return st;
    }
  }
  return CK_OK;
}

/* A list node: the offsets from the rows' sizes, the rows' elements as the
 * child's runs (switching to 64-bit offsets when 32 bits cannot hold them). */
static ck_status export_list(const char *arrmeta, const ck__xruns *runs, ck__arrow_kind *kind,
                             struct ArrowArray *a, ck__xruns *children) {
  const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)arrmeta;
  int64_t n = runs->total;
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++) {
      const ck_var_dim_data *d = (const ck_var_dim_data *)(run->base + i * run->stride);
      if (d->size > 0) {
        ck_status st = ck__xruns_add(children, d->begin + vm->offset, vm->stride,
                                     (int64_t)d->size);
        if (st != CK_OK) {
          return st;
        }
      }
    }
  }
  bool large = *kind == CK__ARROW_LARGE_LIST;
  if (!large && children->total > INT32_MAX) {
    large = true;
    *kind = CK__ARROW_LARGE_LIST;
  }
  ck_status st = ck__xnode_init(a, n, 2, 1);
  if (st != CK_OK) {
    return st;
  }
  size_t osize = large ? 8 : 4;
  char *offsets = ck__xnode_alloc(a, ((size_t)n + 1) * osize, false);
  if (offsets == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  a->buffers[1] = offsets;
  int64_t k = 0, pos = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++, k++) {
      const ck_var_dim_data *d = (const ck_var_dim_data *)(run->base + i * run->stride);
      if (large) ((int64_t *)offsets)[k] = pos; else ((int32_t *)offsets)[k] = (int32_t)pos;
      pos += (int64_t)d->size;
    }
  }
  if (large) ((int64_t *)offsets)[k] = pos; else ((int32_t *)offsets)[k] = (int32_t)pos;
  return CK_OK;
}

/*
 * The validity buffer and exact null count of node `a`, whose elements
 * (`runs`) are the slots of an option with arrmeta `m`.  One run along the
 * bitmap's own progression shares the bitmap when its first bit starts a
 * byte (Arrow applies the node's one offset, 0 here, to every buffer) and
 * copies it shifted otherwise; any other layout (a slice with a step, a
 * transpose, list rows) is read slot by slot.  No buffer when nothing is
 * null.
 */
static ck_status export_validity(ck__xctx *c, const ck_option_arrmeta *m, const ck__xruns *runs,
                                 struct ArrowArray *a) {
  int64_t n = runs->total;
  if (m->bits == NULL || n == 0) {
    return CK_OK;
  }
  if (runs->n == 1 && runs->v[0].stride == m->step) {
    const ck__xrun *r = &runs->v[0];
    int64_t b0 = -1, b1 = -1;
    if (ck_option_slot_bit(m, r->base, &b0) == CK_OK &&
        ck_option_slot_bit(m, r->base + (r->count - 1) * r->stride, &b1) == CK_OK &&
        b0 >= 0 && b1 == b0 + n - 1) {
      int64_t nulls = n - ck_bitmap_count_set(m->bits, b0, n);
      if (nulls > 0 && b0 % 8 == 0) {
        a->buffers[0] = m->bits + b0 / 8; /* zero-copy: the node keeps the array */
        ck__xnode_keep(a, c->src);
      } else if (nulls > 0) {
        uint8_t *dst = ck__xnode_alloc(a, (size_t)(n + 7) / 8, true);
        if (dst == NULL) {
          return CK_ERR_NO_MEMORY;
        }
        ck_bitmap_and(dst, 0, m->bits, b0, NULL, 0, n);
        a->buffers[0] = dst;
      }
      a->null_count = nulls;
      return CK_OK;
    }
    ck_clear_error();
  }
  uint8_t *dst = ck__xnode_alloc(a, (size_t)(n + 7) / 8, true);
  if (dst == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  int64_t k = 0, nulls = 0;
  for (size_t r = 0; r < runs->n; r++) {
    const ck__xrun *run = &runs->v[r];
    for (int64_t i = 0; i < run->count; i++, k++) {
      bool valid;
      ck_status st = ck_option_get_valid(m, run->base + i * run->stride, &valid);
      if (st != CK_OK) {
        return st;
      }
      if (valid) {
        dst[k >> 3] |= (uint8_t)(1u << (k & 7));
      } else {
        nulls++;
      }
    }
  }
  if (nulls > 0) {
    a->buffers[0] = dst;
  }
  a->null_count = nulls;
  return CK_OK;
}

static ck_status export_node(ck__xctx *c, ck_type t, const char *arrmeta, const ck__xruns *runs,
                             const struct ArrowSchema *req, const char *name,
                             struct ArrowSchema *sout, struct ArrowArray *aout) {
  if (ck_type_is_option(t)) {
    /* the value's node with the option's bitmap as its validity buffer */
    ck_status st = export_node(c, ck_type_element(t), arrmeta + sizeof(ck_option_arrmeta),
                               runs, req, name, sout, aout);
    if (st == CK_OK) {
      st = export_validity(c, (const ck_option_arrmeta *)(const void *)arrmeta, runs, aout);
      if (st != CK_OK) {
        ck__arrow_schema_release(sout);
        ck__arrow_array_release(aout);
      }
    }
    return st;
  }
  char fmt[96];
  ck__arrow_kind kind;
  bool use_req;
  memset(sout, 0, sizeof *sout);
  memset(aout, 0, sizeof *aout);
  ck_status st = ck__xchoose(c, t, arrmeta, req, fmt, sizeof fmt, &kind, &use_req);
  if (st != CK_OK) {
    return st;
  }
  ck_type_id id = ck_type_id_of(t);
  int64_t nch = 0;
  ck__xruns children = {NULL, 0, 0, 0};
  switch (id) {
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES:
    if (kind == CK__ARROW_UTF8_VIEW || kind == CK__ARROW_BINARY_VIEW) {
      st = ck__xexport_views(c, arrmeta, runs, aout);
    } else {
      st = export_offsets_strings(c, runs, &kind, aout);
      if (kind == CK__ARROW_LARGE_UTF8) snprintf(fmt, sizeof fmt, "U");
      if (kind == CK__ARROW_LARGE_BINARY) snprintf(fmt, sizeof fmt, "Z");
    }
    break;
  case CK_TYPE_VAR_DIM:
    nch = 1;
    st = export_list(arrmeta, runs, &kind, aout, &children);
    snprintf(fmt, sizeof fmt, "%s", kind == CK__ARROW_LARGE_LIST ? "+L" : "+l");
    break;
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)arrmeta;
    nch = 1;
    st = child_runs_fixed(runs, dm->size, dm->stride, &children);
    if (st == CK_OK) {
      st = ck__xnode_init(aout, runs->total, 1, 1);
    }
    break;
  }
  case CK_TYPE_STRUCT:
    nch = (int64_t)ck_struct_field_count(t);
    st = ck__xnode_init(aout, runs->total, 1, nch);
    break;
  default:
    st = export_numbers(c, t, runs, aout);
    break;
  }
  if (st == CK_OK) {
    st = ck__arrow_schema_init(sout, fmt, name, ARROW_FLAG_NULLABLE, nch);
  }
  for (int64_t i = 0; st == CK_OK && i < nch; i++) {
    ck_type ct;
    const char *cname = "item", *cmeta;
    ck__xruns shifted = {NULL, 0, 0, 0};
    const ck__xruns *cruns = &children;
    if (id == CK_TYPE_STRUCT) {
      size_t moff;
      (void)ck_struct_field(t, (size_t)i, &cname, &ct, NULL, &moff);
      cmeta = arrmeta + moff;
      st = child_runs_shifted(runs, ((const uintptr_t *)arrmeta)[i], &shifted);
      cruns = &shifted;
    } else {
      ct = ck_type_element(t);
      cmeta = arrmeta + (id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta)
                                               : sizeof(ck_dim_arrmeta));
    }
    if (st == CK_OK) {
      size_t mark = ck__arrow_path_push(&c->path, id == CK_TYPE_STRUCT ? cname : NULL);
      const struct ArrowSchema *rc = ck__xreq_child(req, use_req, i);
      st = export_node(c, ct, cmeta, cruns, rc, ck__xfield_name(id, rc, cname),
                       sout->children[i], aout->children[i]);
      ck__arrow_path_pop(&c->path, mark);
    }
    ck__xruns_free(&shifted);
  }
  ck__xruns_free(&children);
  if (st != CK_OK) {
    ck__arrow_schema_release(sout);
    ck__arrow_array_release(aout);
  }
  return st;
}

/* The schema and array of a ck array that is not a dictionary column. */
ck_status ck__xarray_of(ck_array_preamble *a, const struct ArrowSchema *requested,
                        struct ArrowSchema *out_schema, struct ArrowArray *out_array) {
  ck__xctx c = {a, {{0}, 0}};
  ck_type el;
  const char *elmeta;
  ck__xruns runs = {NULL, 0, 0, 0};
  ck_status st = ck__xtop_level(a, "ck_arrow_export", &el, &elmeta, &runs);
  struct ArrowSchema s;
  struct ArrowArray arr;
  if (st == CK_OK) {
    st = export_node(&c, el, elmeta, &runs, requested, "", &s, &arr);
  }
  ck__xruns_free(&runs);
  if (st != CK_OK) {
    return st;
  }
  if (out_schema != NULL) *out_schema = s; else s.release(&s);
  if (out_array != NULL) *out_array = arr; else arr.release(&arr);
  return CK_OK;
}
