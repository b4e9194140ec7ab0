/*
 * arrow_export_node.c -- the Arrow export's runs (the elements of one node
 * in ck memory) and exported nodes: ArrowArrays whose release frees what
 * they own (arrow_export_internal.h).
 */
#include "interop/arrow_export_internal.h"
#include "types/type_internal.h"

#include <string.h>

/* ---- runs ------------------------------------------------------------------ */

void ck__xruns_free(ck__xruns *r) {
  ck__free(r->v);
  r->v = NULL;
  r->n = r->cap = 0;
  r->total = 0;
}

ck_status ck__xruns_add(ck__xruns *r, const char *base, intptr_t stride, int64_t count) {
  if (count <= 0) {
    return CK_OK;
  }
  r->total += count;
  if (r->n > 0) {
    ck__xrun *last = &r->v[r->n - 1];
    if (last->count == 1 && count >= 1 && base == last->base + stride) {
      last->stride = stride; /* a single element takes the stride that follows */
    }
    if (last->stride == stride && base == last->base + last->count * stride) {
      last->count += count;
      return CK_OK;
    }
    if (count == 1 && base == last->base + last->count * last->stride) {
      last->count += 1;
      return CK_OK;
    }
  }
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 8;
    ck__xrun *v = ck__realloc(r->v, cap * sizeof *v, "ck_arrow_export");
    if (v == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n++] = (ck__xrun){base, stride, count};
  return CK_OK;
}

/* ---- exported nodes ---------------------------------------------------------- */

static void xnode_release_cb(struct ArrowArray *a) {
  if (a == NULL || a->release == NULL) {
    return;
  }
  ck__xnode *p = a->private_data;
  if (p != NULL) {
    for (int64_t i = 0; p->child_ptrs != NULL && i < a->n_children; i++) {
      ck__arrow_array_release(p->child_ptrs[i]);
    }
    for (size_t i = 0; i < p->nowned; i++) {
      if (p->owned_map[i] != 0) {
        ck__unmap_retain(p->owned[i], p->owned_map[i]); /* kept for the next export */
      } else {
        ck__free(p->owned[i]);
      }
    }
    ck__free(p->owned);
    ck__free(p->owned_map);
    ck__free(p->buffers);
    ck__free(p->child_structs);
    ck__free(p->child_ptrs);
    if (p->keep != NULL) {
      ck_array_decref(p->keep);
    }
    ck__free(p);
  }
  a->release = NULL;
}

/* A node of `length` elements with `n_buffers` buffer slots (NULL) and
 * `n_children` released children.  Left released on failure. */
ck_status ck__xnode_init(struct ArrowArray *a, int64_t length, int64_t n_buffers,
                         int64_t n_children) {
  memset(a, 0, sizeof *a);
  ck__xnode *p = CK_CALLOC(1, sizeof *p);
  if (p == NULL) {
    return CK_ERR_NO_MEMORY;
  }
  a->private_data = p;
  a->release = xnode_release_cb;
  p->buffers = CK_CALLOC((size_t)n_buffers, sizeof *p->buffers);
  if (p->buffers == NULL) {
    a->release(a);
    return CK_ERR_NO_MEMORY;
  }
  if (n_children > 0) {
    p->child_structs = CK_CALLOC((size_t)n_children, sizeof *p->child_structs);
    p->child_ptrs = CK_CALLOC((size_t)n_children, sizeof *p->child_ptrs);
    if (p->child_structs == NULL || p->child_ptrs == NULL) {
      a->release(a);
      return CK_ERR_NO_MEMORY;
    }
    for (int64_t i = 0; i < n_children; i++) {
      p->child_ptrs[i] = &p->child_structs[i];
    }
  }
  a->length = length;
  a->null_count = 0;
  a->offset = 0;
  a->n_buffers = n_buffers;
  a->n_children = n_children;
  a->buffers = p->buffers;
  a->children = p->child_ptrs;
  a->dictionary = NULL;
  return CK_OK;
}

/* Take over `mem` (released by the node's release: a page mapping of
 * `mapped` bytes, or heap memory when 0); releases it on failure. */
static ck_status xnode_own_mem(struct ArrowArray *a, void *mem, size_t mapped) {
  ck__xnode *p = a->private_data;
  if (p->nowned == p->capowned) {
    size_t cap = p->capowned ? 2 * p->capowned : 4;
    void **v = ck__realloc(p->owned, cap * sizeof *v, "ck_arrow_export");
    if (v != NULL) {
      p->owned = v;
    }
    size_t *m = v == NULL ? NULL
                          : ck__realloc(p->owned_map, cap * sizeof *m, "ck_arrow_export");
    if (m == NULL) {
      if (mapped != 0) {
        ck__unmap_retain(mem, mapped);
      } else {
        ck__free(mem);
      }
      return CK_ERR_NO_MEMORY;
    }
    p->owned_map = m;
    p->capowned = cap;
  }
  p->owned_map[p->nowned] = mapped;
  p->owned[p->nowned++] = mem;
  return CK_OK;
}

ck_status ck__xnode_own(struct ArrowArray *a, void *mem) {
  return xnode_own_mem(a, mem, 0);
}

/* Buffers of at least this many bytes are page mappings, reused from the
 * retained mappings of released ones (core_internal.h): a loop exporting one column per
 * call writes into pages already mapped instead of faulting fresh ones in. */
#define CK__EXPORT_MAP_BYTES ((size_t)1 << 20)

/* A 64-byte aligned buffer of `size` bytes (at least one cache line, so a
 * buffer is never NULL) owned by the node, or NULL. */
void *ck__xnode_alloc(struct ArrowArray *a, size_t size, bool zero) {
  size_t rounded;
  if (!ck__add_size(size, 63, &rounded)) {
    (void)CK_ERROR(CK_ERR_OVERFLOW, "a buffer of %zu bytes is too large", size);
    return NULL;
  }
  rounded &= ~(size_t)63;
  if (rounded == 0) {
    rounded = 64;
  }
  void *mem;
  size_t mapped = 0;
  if (rounded >= CK__EXPORT_MAP_BYTES) {
    size_t ps = ck__page_size();
    if (!ck__add_size(rounded, ps - 1, &mapped)) {
      (void)CK_ERROR(CK_ERR_OVERFLOW, "a buffer of %zu bytes is too large", size);
      return NULL;
    }
    mapped &= ~(ps - 1);
    mem = ck__map_reuse(mapped, &mapped, "ck_arrow_export"); /* page aligned */
  } else {
    mem = ck__aligned_alloc(64, rounded, "ck_arrow_export");
  }
  if (mem == NULL) {
    return NULL;
  }
  if (zero) {
    memset(mem, 0, rounded);
  } else {
    memset((char *)mem + (rounded - 64), 0, 64); /* no uninitialised padding */
  }
  return xnode_own_mem(a, mem, mapped) == CK_OK ? mem : NULL;
}

void ck__xnode_keep(struct ArrowArray *a, ck_array_preamble *src) {
  ck__xnode *p = a->private_data;
  if (p->keep == NULL) {
    ck_array_incref(src);
    p->keep = src;
  }
}

/* ---- the outermost dim ------------------------------------------------------------ */

/* The element type, its arrmeta and the runs of the outermost dim of `a`. */
ck_status ck__xtop_level(const ck_array_preamble *a, const char *func, ck_type *el,
                         const char **elmeta, ck__xruns *runs) {
  if (a == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "the array is NULL");
  }
  ck_type t = ck_array_type(a);
  const char *arrmeta = ck_array_arrmeta(a);
  ck_type_id id = ck_type_id_of(t);
  if (id == CK_TYPE_VAR_DIM) {
    const ck_var_dim_arrmeta *vm = (const ck_var_dim_arrmeta *)arrmeta;
    const ck_var_dim_data *d = (const ck_var_dim_data *)a->data;
    *elmeta = arrmeta + sizeof *vm;
    *el = ck_type_element(t);
    return ck__xruns_add(runs, d->begin + vm->offset, vm->stride, (int64_t)d->size);
  }
  if (id == CK_TYPE_FIXED_DIM || id == CK_TYPE_STRIDED_DIM) {
    const ck_dim_arrmeta *dm = (const ck_dim_arrmeta *)arrmeta;
    *elmeta = arrmeta + sizeof *dm;
    *el = ck_type_element(t);
    return ck__xruns_add(runs, a->data, dm->stride, dm->size);
  }
  char ts[128];
  return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                   "a 0-d array (type %s) has no Arrow form: make it 1-d first "
                   "(a[None] or reshape(1))", ck__type_str(t, ts, sizeof ts));
}
