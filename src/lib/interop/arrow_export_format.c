/*
 * arrow_export_format.c -- the Arrow format each ck type exports as, by
 * default or under a requested schema (a request within the array's own
 * family chooses an encoding; one of another family is a mismatch), and the
 * schema-only export (ck_arrow_export_schema) (arrow_export_internal.h).
 */
#include "interop/arrow_export_internal.h"
#include "types/type_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- formats ------------------------------------------------------------------ */

static ck_status mismatch(ck__xctx *c, ck_type t, const struct ArrowSchema *req) {
  char what[300], ts[128];
  return ck__error(CK_ERR_TYPE, "ck_arrow_export",
                   "the requested schema does not match the array at %s: requested "
                   "Arrow format '%s', the array holds '%s'",
                   ck__xwhat(c, what, sizeof what), req->format != NULL ? req->format : "(null)",
                   ck__type_str(t, ts, sizeof ts));
}

/* Families of formats: a request within the array's own family chooses an
 * encoding; a request of another family is a different structure. */
typedef enum { FAM_NUMBER, FAM_UTF8, FAM_BINARY, FAM_LIST, FAM_FIXED, FAM_STRUCT,
               FAM_UNKNOWN } xfamily;

static xfamily family(const struct ArrowSchema *req, ck__arrow_format *f) {
  if (req->dictionary != NULL || !ck__arrow_parse_format(req->format, f) ||
      f->kind == CK__ARROW_NULL) {
    return FAM_UNKNOWN;
  }
  if (f->kind == CK__ARROW_BOOL || f->kind == CK__ARROW_PRIMITIVE) return FAM_NUMBER;
  if (ck__arrow_is_utf8(f->kind)) return FAM_UTF8;
  if (ck__arrow_is_binary(f->kind)) return FAM_BINARY;
  if (ck__arrow_is_list(f->kind)) return FAM_LIST;
  if (f->kind == CK__ARROW_FIXED_LIST) return FAM_FIXED;
  return FAM_STRUCT;
}

/* The size of a fixed or strided dim from its arrmeta. */
static int64_t dim_size(const char *arrmeta) {
  return ((const ck_dim_arrmeta *)arrmeta)->size;
}

/*
 * The format of element type `t` (arrmeta `arrmeta`) under request `req`
 * (NULL: the defaults).  *use_req tells whether the request's children
 * apply to the children (same family).
 */
ck_status ck__xchoose(ck__xctx *c, ck_type t, const char *arrmeta,
                      const struct ArrowSchema *req, char *fmt, size_t fmtsize,
                      ck__arrow_kind *kind, bool *use_req) {
  char what[300], ts[128];
  ck__arrow_format f = {CK__ARROW_NULL, CK_TYPE_UNINITIALIZED, 0, 0, 0, NULL};
  xfamily fam = req != NULL ? family(req, &f) : FAM_UNKNOWN;
  ck_type_id id = ck_type_id_of(t);
  *use_req = false;
  if (ck_type_is_builtin(t)) {
    const char *bf = ck__arrow_builtin_format(id);
    if (bf == NULL) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s holds %s, which has no Arrow type (export the real and "
                       "imaginary parts as two float fields)",
                       ck__xwhat(c, what, sizeof what), ck__type_str(t, ts, sizeof ts));
    }
    if (fam != FAM_UNKNOWN && fam != FAM_NUMBER) {
      return mismatch(c, t, req);
    }
    snprintf(fmt, fmtsize, "%s", bf);
    *kind = id == CK_TYPE_BOOL ? CK__ARROW_BOOL : CK__ARROW_PRIMITIVE;
    return CK_OK;
  }
  if (ck_type_is_time(t)) {
    if (!ck__arrow_time_format(t, fmt, fmtsize)) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s holds %s, which has no Arrow type (Arrow's timestamps and "
                       "durations count s, ms, us or ns: convert it first)",
                       ck__xwhat(c, what, sizeof what), ck__type_str(t, ts, sizeof ts));
    }
    if (fam != FAM_UNKNOWN && fam != FAM_NUMBER) {
      return mismatch(c, t, req);
    }
    *kind = CK__ARROW_PRIMITIVE;
    return CK_OK;
  }
  switch (id) {
  case CK_TYPE_STRING:
  case CK_TYPE_BYTES: {
    bool str = id == CK_TYPE_STRING;
    /* By default large_utf8 / large_binary: every pyarrow.compute kernel,
     * pandas (string[pyarrow]), polars and duckdb take it, its type does not
     * depend on the data's size, and the text is copied once into one
     * buffer.  The views (string_view, no copy of the text) when asked. */
    ck__arrow_kind k = str ? CK__ARROW_LARGE_UTF8 : CK__ARROW_LARGE_BINARY;
    if (fam == FAM_UTF8 && str) {
      k = f.kind;
    } else if (fam == FAM_BINARY) {
      k = f.kind; /* a string's bytes as binary; bytes in any binary encoding */
    } else if (fam == FAM_UTF8) {
      k = CK__ARROW_BINARY_VIEW; /* bytes are not UTF-8: our own encoding */
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    }
    static const struct { ck__arrow_kind k; const char *f; } names[] = {
        {CK__ARROW_UTF8, "u"}, {CK__ARROW_LARGE_UTF8, "U"}, {CK__ARROW_UTF8_VIEW, "vu"},
        {CK__ARROW_BINARY, "z"}, {CK__ARROW_LARGE_BINARY, "Z"},
        {CK__ARROW_BINARY_VIEW, "vz"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      if (names[i].k == k) {
        snprintf(fmt, fmtsize, "%s", names[i].f);
      }
    }
    *kind = k;
    return CK_OK;
  }
  case CK_TYPE_VAR_DIM:
    if (fam == FAM_LIST) {
      *use_req = true;
      *kind = f.kind == CK__ARROW_LARGE_LIST ? CK__ARROW_LARGE_LIST : CK__ARROW_LIST;
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    } else {
      *kind = CK__ARROW_LIST;
    }
    snprintf(fmt, fmtsize, "%s", *kind == CK__ARROW_LIST ? "+l" : "+L");
    return CK_OK;
  case CK_TYPE_FIXED_DIM:
  case CK_TYPE_STRIDED_DIM: {
    int64_t n = dim_size(arrmeta);
    if (n > INT32_MAX) {
      return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                       "%s: a dim of %lld elements is longer than an Arrow "
                       "fixed-size list can be", ck__xwhat(c, what, sizeof what),
                       (long long)n);
    }
    if (fam == FAM_FIXED) {
      if (f.fixed_size != n) {
        return mismatch(c, t, req);
      }
      *use_req = true;
    } else if (fam == FAM_LIST) {
      *use_req = true; /* a list was asked for: the same data as a fixed-size list */
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    }
    snprintf(fmt, fmtsize, "+w:%lld", (long long)n);
    *kind = CK__ARROW_FIXED_LIST;
    return CK_OK;
  }
  case CK_TYPE_STRUCT: {
    if (fam == FAM_STRUCT) {
      size_t n = ck_struct_field_count(t);
      if (req->n_children != (int64_t)n || (n > 0 && req->children == NULL)) {
        return ck__error(CK_ERR_TYPE, "ck_arrow_export",
                         "the requested schema does not match the array at %s: "
                         "requested %lld fields, the struct has %zu",
                         ck__xwhat(c, what, sizeof what), (long long)req->n_children, n);
      }
      /* the requested names as an import would name them ("" as "_0"):
       * the export then writes the requested names back */
      char **mapped = NULL;
      ck_status st = ck__arrow_struct_names(req, &mapped);
      if (st != CK_OK) {
        return st;
      }
      for (size_t i = 0; i < n; i++) {
        const char *name;
        (void)ck_struct_field(t, i, &name, NULL, NULL, NULL);
        const struct ArrowSchema *rc = req->children[i];
        if (rc == NULL || rc->name == NULL || strcmp(mapped[i], name) != 0) {
          st = ck__error(CK_ERR_TYPE, "ck_arrow_export",
                         "the requested schema does not match the array at %s: "
                         "requested field %zu '%s', the struct has '%s'",
                         ck__xwhat(c, what, sizeof what), i,
                         rc != NULL && rc->name != NULL ? rc->name : "(null)", name);
          break;
        }
      }
      ck__arrow_names_free(mapped, n);
      if (st != CK_OK) {
        return st;
      }
      *use_req = true;
    } else if (fam != FAM_UNKNOWN) {
      return mismatch(c, t, req);
    }
    snprintf(fmt, fmtsize, "+s");
    *kind = CK__ARROW_STRUCT;
    return CK_OK;
  }
  default:
    return ck__error(CK_ERR_NOT_SUPPORTED, "ck_arrow_export",
                     "%s holds %s, which has no Arrow type",
                     ck__xwhat(c, what, sizeof what), ck__type_str(t, ts, sizeof ts));
  }
}

/* ---- schema only ------------------------------------------------------------------ */

static ck_status schema_node(ck__xctx *c, ck_type t, const char *arrmeta,
                             const struct ArrowSchema *req, const char *name,
                             struct ArrowSchema *out) {
  if (ck_type_is_option(t)) { /* every exported field is nullable already */
    return schema_node(c, ck_type_element(t), arrmeta + sizeof(ck_option_arrmeta), req,
                       name, out);
  }
  char fmt[96];
  ck__arrow_kind kind;
  bool use_req;
  ck_status st = ck__xchoose(c, t, arrmeta, req, fmt, sizeof fmt, &kind, &use_req);
  if (st != CK_OK) {
    return st;
  }
  ck_type_id id = ck_type_id_of(t);
  int64_t nch = 0;
  if (id == CK_TYPE_VAR_DIM || id == CK_TYPE_FIXED_DIM || id == CK_TYPE_STRIDED_DIM) {
    nch = 1;
  } else if (id == CK_TYPE_STRUCT) {
    nch = (int64_t)ck_struct_field_count(t);
  }
  st = ck__arrow_schema_init(out, fmt, name, ARROW_FLAG_NULLABLE, nch);
  if (st != CK_OK) {
    return st;
  }
  for (int64_t i = 0; i < nch; i++) {
    ck_type ct;
    const char *cname = "item", *cmeta;
    if (id == CK_TYPE_STRUCT) {
      size_t moff;
      (void)ck_struct_field(t, (size_t)i, &cname, &ct, NULL, &moff);
      cmeta = arrmeta + moff;
    } else {
      ct = ck_type_element(t);
      cmeta = arrmeta + (id == CK_TYPE_VAR_DIM ? sizeof(ck_var_dim_arrmeta)
                                               : sizeof(ck_dim_arrmeta));
    }
    size_t mark = ck__arrow_path_push(&c->path, id == CK_TYPE_STRUCT ? cname : NULL);
    const struct ArrowSchema *rc = ck__xreq_child(req, use_req, i);
    st = schema_node(c, ct, cmeta, rc, ck__xfield_name(id, rc, cname), out->children[i]);
    ck__arrow_path_pop(&c->path, mark);
    if (st != CK_OK) {
      out->release(out);
      return st;
    }
  }
  return CK_OK;
}

/* The schema of a ck array that is not a dictionary column. */
ck_status ck__xschema_of(const ck_array_preamble *a, const struct ArrowSchema *requested,
                         struct ArrowSchema *out) {
  ck__xctx c = {(ck_array_preamble *)a, {{0}, 0}};
  ck_type el;
  const char *elmeta;
  ck__xruns runs = {NULL, 0, 0, 0};
  ck_status st = ck__xtop_level(a, "ck_arrow_export_schema", &el, &elmeta, &runs);
  ck__xruns_free(&runs);
  if (st != CK_OK) {
    return st;
  }
  return schema_node(&c, el, elmeta, requested, "", out);
}
