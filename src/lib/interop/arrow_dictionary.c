/* arrow_dictionary.c -- Arrow dictionary-encoded arrays in and out
 * (ckernel/arrow.h, ckernel/dictionary.h): the split of an imported array
 * into its indices and its dictionary, their join into one dictionary
 * column, and the dictionary attached to an exported indices array. */
#include "interop/arrow_internal.h"
#include "arrays/dictionary_internal.h"
#include "ckernel/dictionary.h"
#include "ckernel/validity.h"

#include <string.h>

/* ---- import ------------------------------------------------------------------- */

typedef struct downer {
  struct ArrowArray array; /* moved from the caller */
} downer;

static void downer_release(void *obj) {
  downer *o = obj;
  ck__arrow_array_release(&o->array);
  ck__free(o);
}

/* The release of a part: drops its reference to the owner. */
static void dpart_release(struct ArrowArray *a) {
  if (a != NULL && a->release != NULL) {
    ck_memblock_decref(a->private_data);
    a->private_data = NULL;
    a->release = NULL;
  }
}

ck_status ck__arrow_dictionary_split(const struct ArrowSchema *schema,
                                     struct ArrowArray *array,
                                     struct ArrowSchema *idx_schema,
                                     struct ArrowArray *idx, struct ArrowArray *vals) {
  static const char *const func = "ck_arrow_import";
  memset(idx, 0, sizeof *idx);
  memset(vals, 0, sizeof *vals);
  if (array->dictionary == NULL || array->dictionary->release == NULL) {
    ck__arrow_array_release(array);
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "the top level: the schema declares a dictionary (format '%s' with a "
                     "dictionary) but the array has %s", schema->format,
                     array->dictionary == NULL ? "none" : "a released one");
  }
  downer *o = CK_CALLOC(1, sizeof *o);
  if (o == NULL) {
    ck__arrow_array_release(array);
    return CK_ERR_NO_MEMORY;
  }
  o->array = *array;
  array->release = NULL;
  ck_memblock *mb = NULL;
  ck_status st = ck_external_memblock_new(o, downer_release, &mb);
  if (st != CK_OK) {
    downer_release(o);
    return st;
  }
  *idx_schema = *schema;
  idx_schema->dictionary = NULL;
  *idx = o->array;
  idx->dictionary = NULL;
  idx->release = dpart_release;
  idx->private_data = mb; /* the reference made above */
  *vals = *o->array.dictionary;
  vals->release = dpart_release;
  ck_memblock_incref(mb);
  vals->private_data = mb;
  return CK_OK;
}

ck_status ck__arrow_dictionary_join(const struct ArrowSchema *schema,
                                    ck_array_preamble *indices,
                                    ck_array_preamble *values, ck_array_preamble **out) {
  static const char *const func = "ck_arrow_import";
  *out = NULL;
  if (ck_type_is_option(ck_type_dtype(values->type))) {
    int64_t nulls = 0, first = -1;
    ck_status st = ck_array_null_count(values, &nulls, &first);
    if (st != CK_OK) {
      return st;
    }
    if (nulls > 0) {
      return ck__error(CK_ERR_VALUE, func,
                       "the top level: the dictionary holds %lld null value%s (the first at "
                       "position %lld); a missing value must be a null index, not a null in "
                       "the dictionary", (long long)nulls, nulls == 1 ? "" : "s",
                       (long long)first);
    }
  }
  /* O(1): the indices are checked where they are read (Arrow's own split
   * between cheap validation and full validation) */
  ck_status st = ck__dictionary_array_wrap(
      indices, values, (schema->flags & ARROW_FLAG_DICTIONARY_ORDERED) != 0, false, out);
  if (st != CK_OK) {
    st = ck__error_context(st, func, "the top level (dictionary-encoded, format '%s')",
                           schema->format);
  }
  return st;
}

/* ---- export ------------------------------------------------------------------- */

typedef struct dschema_wrap {
  void (*release)(struct ArrowSchema *);
  void *private_data;
  struct ArrowSchema dict;
} dschema_wrap;

typedef struct darray_wrap {
  void (*release)(struct ArrowArray *);
  void *private_data;
  struct ArrowArray dict;
} darray_wrap;

static void dschema_release(struct ArrowSchema *s) {
  if (s == NULL || s->release == NULL) {
    return;
  }
  dschema_wrap *w = s->private_data;
  ck__arrow_schema_release(&w->dict);
  s->dictionary = NULL;
  s->private_data = w->private_data;
  s->release = w->release;
  ck__free(w);
  ck__arrow_schema_release(s);
}

static void darray_release(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) {
    return;
  }
  darray_wrap *w = a->private_data;
  ck__arrow_array_release(&w->dict);
  a->dictionary = NULL;
  a->private_data = w->private_data;
  a->release = w->release;
  ck__free(w);
  ck__arrow_array_release(a);
}

ck_status ck__arrow_dictionary_attach(struct ArrowSchema *s, struct ArrowArray *a,
                                      struct ArrowSchema *vs, struct ArrowArray *va,
                                      bool ordered) {
  dschema_wrap *ws = s != NULL ? CK_CALLOC(1, sizeof *ws) : NULL;
  darray_wrap *wa = a != NULL ? CK_CALLOC(1, sizeof *wa) : NULL;
  if ((s != NULL && ws == NULL) || (a != NULL && wa == NULL)) {
    ck__free(ws);
    ck__free(wa);
    ck__arrow_schema_release(s);
    ck__arrow_array_release(a);
    ck__arrow_schema_release(vs);
    ck__arrow_array_release(va);
    return CK_ERR_NO_MEMORY;
  }
  if (s != NULL) {
    ws->dict = *vs;
    vs->release = NULL;
    ws->release = s->release;
    ws->private_data = s->private_data;
    s->private_data = ws;
    s->release = dschema_release;
    s->dictionary = &ws->dict;
    s->flags = (s->flags & ~(int64_t)ARROW_FLAG_DICTIONARY_ORDERED) |
               (ordered ? ARROW_FLAG_DICTIONARY_ORDERED : 0);
  }
  ck__arrow_schema_release(vs);
  if (a != NULL) {
    wa->dict = *va;
    va->release = NULL;
    wa->release = a->release;
    wa->private_data = a->private_data;
    a->private_data = wa;
    a->release = darray_release;
    a->dictionary = &wa->dict;
  }
  ck__arrow_array_release(va);
  return CK_OK;
}
