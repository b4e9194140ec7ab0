/*
 * builder.c -- the ckernel ABI helpers (kernel.h), the kernel builder, the
 * kernel-description registry and the kernel tree dump (builder.h).
 */
#include "core/core_internal.h"
#include "kernels/builder_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdalign.h>
#include <string.h>

/* The layout promised in builder.h and to the cffi cdef. */
_Static_assert(offsetof(ck_kernel_builder, inline_buf) % 16 == 0,
               "inline_buf must be 16-aligned by field layout alone");
_Static_assert(offsetof(ck_kernel_builder, inline_buf) ==
                   sizeof(char *) + 3 * sizeof(size_t),
               "no hidden padding before inline_buf");
_Static_assert(alignof(ck_kernel_builder) >= CK_KERNEL_ALIGN,
               "inline kernel data is CK_KERNEL_ALIGN-aligned");
_Static_assert(sizeof(ck_kernel_builder) ==
                   offsetof(ck_kernel_builder, inline_buf) +
                       CK_KERNEL_BUILDER_INLINE_SIZE,
               "no tail padding");
/* The prefix stores entry points as void *; POSIX guarantees the
 * representation, we check the size. */
_Static_assert(sizeof(void *) == sizeof(ck_expr_single_t) &&
                   sizeof(void *) == sizeof(ck_expr_strided_t),
               "function pointers must fit the prefix's void *");
_Static_assert(sizeof(ck_prefix) == 2 * sizeof(void *), "prefix is two pointers");
_Static_assert(CK_KERNEL_BUILDER_INLINE_SIZE % 16 == 0, "inline size");

/* ---- kernel.h ---- */

extern inline ck_status ck_prefix_set_function(ck_prefix *self,
                                               ck_kernel_request req,
                                               ck_expr_single_t single,
                                               ck_expr_strided_t strided);
extern inline ck_expr_single_t ck_prefix_single(const ck_prefix *self);
extern inline ck_expr_strided_t ck_prefix_strided(const ck_prefix *self);
extern inline void ck_prefix_destroy_child(ck_prefix *child);
extern inline ck_prefix *ck_prefix_child(ck_prefix *self, size_t rel_offset);

int ck_kernel_abi_version(void) { return CK_KERNEL_ABI_VERSION; }

ck_status ck__prefix_bad_request(ck_kernel_request req) {
  if (req != CK_KERNEL_REQUEST_SINGLE && req != CK_KERNEL_REQUEST_STRIDED) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_prefix_set_function",
                     "unknown kernel request %d", (int)req);
  }
  return ck__error(CK_ERR_INVALID_ARGUMENT, "ck_prefix_set_function",
                   "NULL %s function for the requested entry point",
                   req == CK_KERNEL_REQUEST_SINGLE ? "single" : "strided");
}

int ck_kernel_call_single(ck_prefix *self, char *dst, const char *const *src) {
  if (self == NULL || self->function == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "kernel has no function (not built)");
  }
  return ck_prefix_single(self)(dst, src, self);
}

int ck_kernel_call_strided(ck_prefix *self, char *dst, intptr_t dst_stride,
                           const char *const *src, const intptr_t *src_stride,
                           size_t count) {
  if (self == NULL || self->function == NULL) {
    return CK_ERROR(CK_ERR_INVALID_STATE, "kernel has no function (not built)");
  }
  return ck_prefix_strided(self)(dst, dst_stride, src, src_stride, count, self);
}

/* ---- the builder ---- */

static inline char *ck__kb_data(const ck_kernel_builder *ckb) {
  return ckb->heap != NULL ? ckb->heap : (char *)ckb->inline_buf;
}

static inline size_t ck__kb_cap(const ck_kernel_builder *ckb) {
  return ckb->heap != NULL ? ckb->capacity : CK_KERNEL_BUILDER_INLINE_SIZE;
}

void ck_kernel_builder_init(ck_kernel_builder *ckb) {
  if (ckb != NULL) {
    memset(ckb, 0, sizeof *ckb);
  }
}

/* Destroy the root kernel and leave its prefix zeroed. */
static void ck__kb_destroy_root(ck_kernel_builder *ckb) {
  ck_prefix *root = (ck_prefix *)(void *)ck__kb_data(ckb);
  ck_prefix_destroy_child(root);
}

void ck_kernel_builder_destroy(ck_kernel_builder *ckb) {
  if (ckb == NULL) {
    return;
  }
  ck__kb_destroy_root(ckb);
  ck__free(ckb->heap);
  memset(ckb, 0, sizeof *ckb);
}

void ck_kernel_builder_reset(ck_kernel_builder *ckb) {
  if (ckb == NULL) {
    return;
  }
  ck__kb_destroy_root(ckb);
  memset(ck__kb_data(ckb), 0, ck__kb_cap(ckb));
}

/* Grow to at least `need` bytes.  On failure nothing changes. */
static ck_status ck__kb_grow(ck_kernel_builder *ckb, size_t need,
                             const char *func) {
  size_t cap = ck__kb_cap(ckb);
  if (need <= cap) {
    return CK_OK;
  }
  if (need > (size_t)PTRDIFF_MAX) {
    return ck__error(CK_ERR_OVERFLOW, func,
                     "kernel buffer of %zu bytes is too large", need);
  }
  /* at least 1.5x, so n appends cost O(n) copying; rounded to 16 */
  size_t newcap = cap + cap / 2;
  if (newcap < need) {
    newcap = need;
  }
  if (newcap <= (size_t)PTRDIFF_MAX - 15) {
    newcap = (newcap + 15) & ~(size_t)15;
  }
  char *p;
  if (ckb->heap != NULL) {
    p = ck__realloc(ckb->heap, newcap, func);
    if (p == NULL) {
      return CK_ERR_NO_MEMORY; /* the old block is intact */
    }
  } else {
    p = ck__malloc(newcap, func);
    if (p == NULL) {
      return CK_ERR_NO_MEMORY;
    }
    memcpy(p, ckb->inline_buf, CK_KERNEL_BUILDER_INLINE_SIZE);
    /* keep the unused inline buffer zeroed like everything else */
    memset(ckb->inline_buf, 0, CK_KERNEL_BUILDER_INLINE_SIZE);
  }
  memset(p + cap, 0, newcap - cap);
  ckb->heap = p;
  ckb->capacity = newcap;
  return CK_OK;
}

ck_status ck_kernel_builder_ensure_capacity(ck_kernel_builder *ckb,
                                            size_t requested_size) {
  if (ckb == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL kernel builder");
  }
  size_t need;
  if (!ck__add_size(requested_size, sizeof(ck_prefix), &need)) {
    return CK_ERROR(CK_ERR_OVERFLOW,
                    "kernel size %zu plus a child prefix overflows",
                    requested_size);
  }
  return ck__kb_grow(ckb, need, __func__);
}

ck_status ck_kernel_builder_ensure_capacity_leaf(ck_kernel_builder *ckb,
                                                 size_t requested_size) {
  if (ckb == NULL) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL kernel builder");
  }
  return ck__kb_grow(ckb, requested_size, __func__);
}

size_t ck_kernel_builder_capacity(const ck_kernel_builder *ckb) {
  return ckb != NULL ? ck__kb_cap(ckb) : 0;
}

bool ck_kernel_builder_is_inline(const ck_kernel_builder *ckb) {
  return ckb != NULL && ckb->heap == NULL;
}

char *ck_kernel_builder_data(ck_kernel_builder *ckb) {
  return ckb != NULL ? ck__kb_data(ckb) : NULL;
}

ck_prefix *ck_kernel_builder_get(ck_kernel_builder *ckb, size_t offset) {
  if (ckb == NULL) {
    return NULL;
  }
  size_t cap = ck__kb_cap(ckb);
  if (offset > cap || cap - offset < sizeof(ck_prefix)) {
    return NULL;
  }
  return (ck_prefix *)(void *)(ck__kb_data(ckb) + offset);
}

size_t ck_kernel_align_offset(size_t offset) {
  return (offset + (CK_KERNEL_ALIGN - 1)) & ~(size_t)(CK_KERNEL_ALIGN - 1);
}

/* ---- kernel descriptions ---- */

size_t ck_kernel_children_after_data(const ck_prefix *self,
                                     const ck_kernel_info *info,
                                     size_t *rel_offsets, size_t max) {
  (void)self;
  if (max > 0) {
    rel_offsets[0] = ck_kernel_align_offset(info->data_size);
  }
  return 1;
}

/*
 * Registered descriptions: a growing array of spans (a pointer to a table of
 * descriptions and its length; ck_kernel_info_register adds spans of one),
 * under a mutex.  The first CK__INFO_INLINE spans live in static storage, so
 * the library's own factories register their tables without allocating.
 * Lookups are linear: only dumps and kernel reprs use them.
 */
typedef struct ck__info_span {
  const ck_kernel_info *infos;
  size_t n;
  ck_kernel_fields_fn fields; /* decoder of every entry's data, or NULL */
} ck__info_span;

enum { CK__INFO_INLINE = 256 };
static pthread_mutex_t ck__info_lock = PTHREAD_MUTEX_INITIALIZER;
static ck__info_span ck__info_inline[CK__INFO_INLINE];
static ck__info_span *ck__info_spans = ck__info_inline;
static size_t ck__info_count, ck__info_cap = CK__INFO_INLINE;

static ck__info_span *ck__info_present_locked(const ck_kernel_info *infos, size_t n) {
  for (size_t i = 0; i < ck__info_count; i++) {
    if (ck__info_spans[i].infos == infos && ck__info_spans[i].n == n) {
      return &ck__info_spans[i];
    }
  }
  return NULL;
}

static ck_status ck__info_add(const char *func, const ck_kernel_info *infos,
                              size_t n, ck_kernel_fields_fn fields) {
  ck_status st = CK_OK;
  pthread_mutex_lock(&ck__info_lock);
  ck__info_span *have = ck__info_present_locked(infos, n);
  if (have != NULL) {
    if (have->fields == NULL) {
      have->fields = fields;
    }
  } else {
    if (ck__info_count == ck__info_cap) {
      size_t cap = ck__info_cap * 2;
      ck__info_span *v = ck__malloc(cap * sizeof *v, func);
      if (v == NULL) {
        st = CK_ERR_NO_MEMORY;
      } else {
        memcpy(v, ck__info_spans, ck__info_count * sizeof *v);
        if (ck__info_spans != ck__info_inline) {
          ck__free(ck__info_spans);
        }
        ck__info_spans = v;
        ck__info_cap = cap;
      }
    }
    if (st == CK_OK) {
      ck__info_spans[ck__info_count].infos = infos;
      ck__info_spans[ck__info_count].n = n;
      ck__info_spans[ck__info_count].fields = fields;
      ck__info_count++;
    }
  }
  pthread_mutex_unlock(&ck__info_lock);
  return st;
}

ck_status ck_kernel_info_register(const ck_kernel_info *info) {
  if (info == NULL || info->name == NULL ||
      (info->single == NULL && info->strided == NULL)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "a kernel description needs a name and an entry point");
  }
  if (info->data_size < sizeof(ck_prefix)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                    "data_size %zu of '%s' is smaller than the prefix",
                    info->data_size, info->name);
  }
  return ck__info_add(__func__, info, 1, NULL);
}

void ck__kernel_info_register_table(const ck_kernel_info *infos, size_t n) {
  ck__kernel_info_register_decoded(infos, n, NULL);
}

void ck__kernel_info_register_decoded(const ck_kernel_info *infos, size_t n,
                                      ck_kernel_fields_fn fields) {
  if (infos == NULL || n == 0) {
    return;
  }
  /* for dumps only: a failure (out of memory) must not disturb the caller's
   * error state */
  ck_status prev = ck_last_status();
  char saved[CK__SAVED_MESSAGE];
  snprintf(saved, sizeof saved, "%s", ck_last_error());
  if (ck__info_add("ck_kernel_info_register", infos, n, fields) != CK_OK) {
    if (prev == CK_OK) {
      ck_clear_error();
    } else {
      ck_set_error(prev, saved);
    }
  }
}

ck_status ck_kernel_info_unregister(const ck_kernel_info *info) {
  ck_status st = CK_OK;
  pthread_mutex_lock(&ck__info_lock);
  size_t i = 0;
  while (i < ck__info_count &&
         !(ck__info_spans[i].infos == info && ck__info_spans[i].n == 1)) {
    i++;
  }
  if (i == ck__info_count || info == NULL) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT, "kernel description not registered");
  } else {
    ck__info_spans[i] = ck__info_spans[--ck__info_count];
    ck__info_spans[ck__info_count].infos = NULL;
    ck__info_spans[ck__info_count].n = 0;
    ck__info_spans[ck__info_count].fields = NULL;
  }
  pthread_mutex_unlock(&ck__info_lock);
  return st;
}

ck_status ck_kernel_info_set_fields(const ck_kernel_info *info,
                                    ck_kernel_fields_fn fields) {
  ck_status st = CK_OK;
  pthread_mutex_lock(&ck__info_lock);
  ck__info_span *span = info == NULL ? NULL : ck__info_present_locked(info, 1);
  if (span == NULL) {
    st = CK_ERROR(CK_ERR_INVALID_ARGUMENT,
                  "kernel description not registered (ck_kernel_info_register it first)");
  } else {
    span->fields = fields;
  }
  pthread_mutex_unlock(&ck__info_lock);
  return st;
}

/* The description of `kernel` and its decoder (either may be NULL). */
static const ck_kernel_info *ck__info_lookup(const ck_prefix *kernel,
                                             ck_kernel_request *out_req,
                                             ck_kernel_fields_fn *out_fields) {
  if (kernel == NULL || kernel->function == NULL) {
    return NULL;
  }
  ck_kernel_request req = CK_KERNEL_REQUEST_SINGLE;
  const ck_kernel_info *found = NULL;
  ck_kernel_fields_fn fields = NULL;
  pthread_mutex_lock(&ck__info_lock);
  for (size_t i = 0; i < ck__info_count && found == NULL; i++) {
    for (size_t j = 0; j < ck__info_spans[i].n && found == NULL; j++) {
      const ck_kernel_info *info = &ck__info_spans[i].infos[j];
      if (info->single != NULL && ck__single_ptr(info->single) == kernel->function) {
        found = info;
        req = CK_KERNEL_REQUEST_SINGLE;
      } else if (info->strided != NULL &&
                 ck__strided_ptr(info->strided) == kernel->function) {
        found = info;
        req = CK_KERNEL_REQUEST_STRIDED;
      }
      if (found != NULL) {
        fields = ck__info_spans[i].fields;
      }
    }
  }
  pthread_mutex_unlock(&ck__info_lock);
  if (found != NULL && out_req != NULL) {
    *out_req = req;
  }
  if (out_fields != NULL) {
    *out_fields = fields;
  }
  return found;
}

const ck_kernel_info *ck_kernel_info_find(const ck_prefix *kernel,
                                          ck_kernel_request *out_req) {
  return ck__info_lookup(kernel, out_req, NULL);
}

ck_status ck_kernel_fields(const ck_prefix *kernel, ck_kernel_field *out, size_t max,
                           size_t *out_count) {
  if (kernel == NULL || out_count == NULL || (out == NULL && max != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL kernel or output");
  }
  ck_kernel_fields_fn fields = NULL;
  const ck_kernel_info *info = ck__info_lookup(kernel, NULL, &fields);
  *out_count = info != NULL && fields != NULL ? fields(kernel, info, out, max) : 0;
  return CK_OK;
}

/* ---- dump ---- */

typedef struct ck__dump {
  char *buf;
  size_t size;
  size_t pos;
  const char *data; /* the builder's buffer */
  size_t cap;
} ck__dump;

enum { CK__DUMP_MAX_DEPTH = 32, CK__DUMP_MAX_CHILDREN = 16 };

/* The dynamic symbol at exactly `addr`, else "0x...(object+0xoff)", else
 * "0x...".  Static functions have no dynamic symbol; registered kernels get
 * their names from their descriptions instead. */
static void ck__symbol_name(char *out, size_t n, void *addr) {
  Dl_info dl;
  memset(&dl, 0, sizeof dl);
  if (dladdr(addr, &dl) != 0) {
    if (dl.dli_sname != NULL && dl.dli_saddr == addr) {
      snprintf(out, n, "%s", dl.dli_sname);
      return;
    }
    if (dl.dli_fname != NULL && dl.dli_fbase != NULL) {
      const char *base = strrchr(dl.dli_fname, '/');
      snprintf(out, n, "%p(%s+0x%tx)", addr, base ? base + 1 : dl.dli_fname,
               (char *)addr - (char *)dl.dli_fbase);
      return;
    }
  }
  snprintf(out, n, "%p", addr);
}

/* One decoded field as "name=value" / "name[i]=value". */
static void ck__dump_field(ck__dump *d, const ck_kernel_field *f) {
  char idx[24] = "";
  if (f->index >= 0) {
    snprintf(idx, sizeof idx, "[%d]", (int)f->index);
  }
  ck__appendf(d->buf, d->size, &d->pos, " %s%s=", f->name ? f->name : "?", idx);
  switch ((ck_kernel_field_kind)f->kind) {
  case CK_KERNEL_FIELD_INT:
    ck__appendf(d->buf, d->size, &d->pos, "%lld", (long long)f->value);
    break;
  case CK_KERNEL_FIELD_CHILD: /* 0: no child there (not built, or not needed) */
    if (f->value == 0) {
      ck__appendf(d->buf, d->size, &d->pos, "none");
    } else {
      ck__appendf(d->buf, d->size, &d->pos, "+%lld", (long long)f->value);
    }
    break;
  case CK_KERNEL_FIELD_TYPE: {
    char t[160];
    size_t len = 0;
    if (f->pointer == NULL ||
        ck_type_print((ck_type)f->pointer, t, sizeof t, &len) != CK_OK) {
      snprintf(t, sizeof t, "%s", f->pointer == NULL ? "none" : "?");
    }
    ck__appendf(d->buf, d->size, &d->pos, "'%s'", t);
    break;
  }
  case CK_KERNEL_FIELD_MEMBLOCK: {
    const ck_memblock *mb = (const ck_memblock *)f->pointer;
    if (mb == NULL) {
      ck__appendf(d->buf, d->size, &d->pos, "none");
    } else {
      ck__appendf(d->buf, d->size, &d->pos, "%p(%s,refcount=%u)", f->pointer,
                  ck_memblock_kind_name(mb->kind), (unsigned)ck_memblock_refcount(mb));
    }
    break;
  }
  case CK_KERNEL_FIELD_POINTER:
    ck__appendf(d->buf, d->size, &d->pos, "%p", f->pointer);
    break;
  case CK_KERNEL_FIELD_TEXT:
    ck__appendf(d->buf, d->size, &d->pos, "%s", f->text ? f->text : "");
    break;
  default:
    ck__appendf(d->buf, d->size, &d->pos, "?");
  }
}

enum { CK__DUMP_MAX_FIELDS = 64, CK__DUMP_LINE = 72 };

/* The decoded fields of one kernel, wrapped into lines of about
 * CK__DUMP_LINE characters: "  fields size=4 dst_stride=8 ...". */
static void ck__dump_fields(ck__dump *d, const ck_prefix *p, const ck_kernel_info *info,
                            ck_kernel_fields_fn fields, int ind) {
  ck_kernel_field fl[CK__DUMP_MAX_FIELDS];
  size_t n = fields(p, info, fl, CK__DUMP_MAX_FIELDS);
  size_t line_start = d->pos;
  for (size_t i = 0; i < n && i < CK__DUMP_MAX_FIELDS; i++) {
    if (i == 0 || d->pos - line_start > (size_t)CK__DUMP_LINE) {
      if (i != 0) {
        ck__appendf(d->buf, d->size, &d->pos, "\n");
      }
      line_start = d->pos;
      ck__appendf(d->buf, d->size, &d->pos, "%*s  %s", ind, "", i == 0 ? "fields" : "      ");
    }
    ck__dump_field(d, &fl[i]);
  }
  if (n > CK__DUMP_MAX_FIELDS) {
    ck__appendf(d->buf, d->size, &d->pos, " ... %zu more", n - CK__DUMP_MAX_FIELDS);
  }
  if (n > 0) {
    ck__appendf(d->buf, d->size, &d->pos, "\n");
  }
}

static void ck__dump_kernel(ck__dump *d, size_t offset, int depth) {
  int ind = 2 * depth;
  const ck_prefix *p = (const ck_prefix *)(const void *)(d->data + offset);
  if (p->function == NULL && p->destructor == NULL) {
    ck__appendf(d->buf, d->size, &d->pos, "%*s@%zu (empty prefix)\n", ind, "",
                offset);
    return;
  }
  ck_kernel_request req = CK_KERNEL_REQUEST_SINGLE;
  ck_kernel_fields_fn fields = NULL;
  const ck_kernel_info *info = ck__info_lookup(p, &req, &fields);
  char fname[256], dname[256];
  if (info != NULL) {
    snprintf(fname, sizeof fname, "%s [%s]", info->name,
             req == CK_KERNEL_REQUEST_SINGLE ? "single" : "strided");
  } else if (p->function != NULL) {
    ck__symbol_name(fname, sizeof fname, p->function);
  } else {
    snprintf(fname, sizeof fname, "(no function)");
  }
  if (p->destructor != NULL) {
    union {
      ck_destructor_t fn;
      void *ptr;
    } u;
    u.fn = p->destructor;
    ck__symbol_name(dname, sizeof dname, u.ptr);
  } else {
    snprintf(dname, sizeof dname, "none");
  }
  ck__appendf(d->buf, d->size, &d->pos, "%*s@%zu %s destructor=%s\n", ind, "",
              offset, fname, dname);
  if (info == NULL) {
    ck__appendf(d->buf, d->size, &d->pos,
                "%*s  (undescribed kernel: data and children not shown)\n",
                ind, "");
    return;
  }
  if (fields != NULL) {
    ck__dump_fields(d, p, info, fields, ind);
  }
  /* the kernel's own data after the prefix, clipped to the buffer */
  size_t end = offset + info->data_size;
  if (end > d->cap || end < offset || fields != NULL) {
    end = fields != NULL ? 0 : d->cap;
  }
  for (size_t at = offset + sizeof(ck_prefix); at < end; at += 16) {
    ck__appendf(d->buf, d->size, &d->pos, "%*s  data +%-4zu", ind, "",
                at - offset);
    for (size_t i = at; i < end && i < at + 16; i++) {
      ck__appendf(d->buf, d->size, &d->pos, " %02x",
                  (unsigned)(unsigned char)d->data[i]);
    }
    ck__appendf(d->buf, d->size, &d->pos, "\n");
  }
  if (info->children == NULL) {
    return;
  }
  size_t rel[CK__DUMP_MAX_CHILDREN];
  size_t n = info->children(p, info, rel, CK__DUMP_MAX_CHILDREN);
  for (size_t i = 0; i < n && i < CK__DUMP_MAX_CHILDREN; i++) {
    size_t child = offset + rel[i];
    if (rel[i] < sizeof(ck_prefix) || child < offset || child > d->cap ||
        d->cap - child < sizeof(ck_prefix) || child % alignof(ck_prefix) != 0) {
      ck__appendf(d->buf, d->size, &d->pos,
                  "%*s  child at +%zu is outside the buffer\n", ind, "", rel[i]);
    } else if (depth + 1 >= CK__DUMP_MAX_DEPTH) {
      ck__appendf(d->buf, d->size, &d->pos, "%*s  ... (deeper kernels)\n", ind,
                  "");
    } else {
      ck__dump_kernel(d, child, depth + 1);
    }
  }
  if (n > CK__DUMP_MAX_CHILDREN) {
    ck__appendf(d->buf, d->size, &d->pos, "%*s  ... %zu more children\n", ind,
                "", n - CK__DUMP_MAX_CHILDREN);
  }
}

/* ---- the tree as nodes ---- */

typedef struct ck__walk {
  ck_kernel_node *out;
  size_t max;
  size_t n;
  const char *data;
  size_t cap;
} ck__walk;

/* The same traversal and checks as ck__dump_kernel. */
static void ck__walk_kernel(ck__walk *w, size_t offset, intptr_t parent, int depth) {
  const ck_prefix *p = (const ck_prefix *)(const void *)(w->data + offset);
  size_t me = w->n++;
  ck_kernel_node node;
  memset(&node, 0, sizeof node);
  node.offset = offset;
  node.parent = parent;
  node.depth = (uint32_t)depth;
  node.request = -1;
  node.function = p->function;
  union {
    ck_destructor_t fn;
    void *ptr;
  } u;
  u.fn = p->destructor;
  node.destructor = p->destructor != NULL ? u.ptr : NULL;
  ck_kernel_request req = CK_KERNEL_REQUEST_SINGLE;
  const ck_kernel_info *info = ck__info_lookup(p, &req, NULL);
  size_t rel[CK__DUMP_MAX_CHILDREN];
  size_t nchildren = 0;
  if (info != NULL) {
    node.info = info;
    node.request = (int32_t)req;
    if (info->children != NULL) {
      nchildren = info->children(p, info, rel, CK__DUMP_MAX_CHILDREN);
    }
  }
  node.nchildren = nchildren;
  if (me < w->max) {
    w->out[me] = node;
  }
  for (size_t i = 0; i < nchildren && i < CK__DUMP_MAX_CHILDREN; i++) {
    size_t child = offset + rel[i];
    bool inside = rel[i] >= sizeof(ck_prefix) && child > offset && child <= w->cap &&
                  w->cap - child >= sizeof(ck_prefix) &&
                  child % alignof(ck_prefix) == 0;
    if (inside && depth + 1 < CK__DUMP_MAX_DEPTH) {
      ck__walk_kernel(w, child, (intptr_t)me, depth + 1);
    }
  }
}

ck_status ck_kernel_builder_nodes(const ck_kernel_builder *ckb, ck_kernel_node *out,
                                  size_t max, size_t *out_count) {
  if (ckb == NULL || out_count == NULL || (out == NULL && max != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL builder or output");
  }
  ck__walk w = {out, max, 0, ck__kb_data(ckb), ck__kb_cap(ckb)};
  ck__walk_kernel(&w, 0, -1, 0);
  *out_count = w.n;
  return CK_OK;
}

ck_status ck_kernel_builder_dump(const ck_kernel_builder *ckb, char *buf,
                                 size_t bufsize, size_t *out_len) {
  if (ckb == NULL || (buf == NULL && bufsize != 0)) {
    return CK_ERROR(CK_ERR_INVALID_ARGUMENT, "NULL builder or buffer");
  }
  ck__dump d = {buf, bufsize, 0, ck__kb_data(ckb), ck__kb_cap(ckb)};
  if (bufsize > 0) {
    buf[0] = '\0';
  }
  ck__appendf(buf, bufsize, &d.pos, "ck_kernel_builder capacity=%zu (%s)\n",
              d.cap, ckb->heap != NULL ? "heap" : "inline");
  ck__dump_kernel(&d, 0, 0);
  if (out_len != NULL) {
    *out_len = d.pos;
  }
  return CK_OK;
}

ck_status ck__check_kernel_args(const char *func, ck_kernel_builder *ckb,
                                size_t offset, ck_kernel_request req) {
  if (ckb == NULL) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "NULL kernel builder");
  }
  if (offset % CK_KERNEL_ALIGN != 0) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func,
                     "kernel offset %zu is not a multiple of %d", offset,
                     CK_KERNEL_ALIGN);
  }
  if (req != CK_KERNEL_REQUEST_SINGLE && req != CK_KERNEL_REQUEST_STRIDED) {
    return ck__error(CK_ERR_INVALID_ARGUMENT, func, "unknown kernel request %d",
                     (int)req);
  }
  return ck__check_kernel_slot(func, ckb, offset);
}

ck_status ck__check_kernel_slot(const char *func, const ck_kernel_builder *ckb,
                                size_t offset) {
  size_t cap = ck__kb_cap(ckb);
  if (offset > cap || cap - offset < sizeof(ck_prefix)) {
    return CK_OK; /* beyond the buffer: zeroed once it grows */
  }
  const ck_prefix *p = (const ck_prefix *)(const void *)(ck__kb_data(ckb) + offset);
  if (p->function != NULL || p->destructor != NULL) {
    return ck__error(CK_ERR_INVALID_STATE, func,
                     "the builder already holds a kernel at offset %zu "
                     "(ck_kernel_builder_reset or _destroy it first)",
                     offset);
  }
  return CK_OK;
}
