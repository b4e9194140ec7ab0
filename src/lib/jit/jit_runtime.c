/*
 * jit_runtime.c -- the runtime of natively cached jitted code (jit.h): the
 * calls Numba-compiled code makes into Numba's runtime, served by the
 * library's allocator.
 */
#include "ckernel/jit.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "core/core_internal.h"

_Static_assert(offsetof(ck_jit_meminfo, refct) == 0, "meminfo: refct @0");
_Static_assert(offsetof(ck_jit_meminfo, dtor) == 8, "meminfo: dtor @8");
_Static_assert(offsetof(ck_jit_meminfo, dtor_info) == 16, "meminfo: dtor_info @16");
_Static_assert(offsetof(ck_jit_meminfo, data) == 24, "meminfo: data @24");
_Static_assert(offsetof(ck_jit_meminfo, size) == 32, "meminfo: size @32");
_Static_assert(sizeof(ck_jit_meminfo) == 48, "meminfo: 48 bytes");
_Static_assert(sizeof(void *) == sizeof(ck_jit_dtor_fn), "a destructor fits dtor_info");

static ck_jit_meminfo *ck__meminfo_new(size_t size, size_t align, const char *func) {
  size_t total;
  if (!ck__add_size(sizeof(ck_jit_meminfo), size, &total) ||
      !ck__add_size(total, align, &total)) {
    ck__error(CK_ERR_NO_MEMORY, func, "%zu bytes is too large", size);
    return NULL;
  }
  char *base = ck__malloc(total, func);
  if (base == NULL) {
    return NULL;
  }
  ck_jit_meminfo *mi = (ck_jit_meminfo *)(void *)base;
  char *data = base + sizeof(ck_jit_meminfo);
  size_t rem = (size_t)(uintptr_t)data & (align - 1);
  if (rem != 0) {
    data += align - rem;
  }
  atomic_init(&mi->refct, 1);
  mi->dtor = NULL;
  mi->dtor_info = NULL;
  mi->data = data;
  mi->size = size;
  mi->external = NULL;
  return mi;
}

ck_jit_meminfo *ck_jit_meminfo_alloc(size_t size) {
  return ck__meminfo_new(size, 1, __func__);
}

ck_jit_meminfo *ck_jit_meminfo_alloc_aligned(size_t size, unsigned align) {
  if (!ck__is_pow2(align)) {
    ck__error(CK_ERR_INVALID_ARGUMENT, __func__, "alignment %u is not a power of two", align);
    return NULL;
  }
  return ck__meminfo_new(size, align, __func__);
}

/* dtor_info holds the user's destructor (Numba's nrt_internal_custom_dtor) */
static void ck__custom_dtor(void *data, size_t size, void *info) {
  ck_jit_dtor_fn dtor;
  memcpy(&dtor, &info, sizeof dtor);
  if (dtor != NULL) {
    dtor(data, size, NULL);
  }
}

ck_jit_meminfo *ck_jit_meminfo_alloc_dtor(size_t size, ck_jit_dtor_fn dtor) {
  ck_jit_meminfo *mi = ck__meminfo_new(size, 1, __func__);
  if (mi != NULL) {
    mi->dtor = ck__custom_dtor;
    memcpy(&mi->dtor_info, &dtor, sizeof dtor);
  }
  return mi;
}

void ck_jit_meminfo_call_dtor(ck_jit_meminfo *mi) {
  if (mi == NULL) {
    return;
  }
  if (mi->dtor != NULL) {
    mi->dtor(mi->data, mi->size, mi->dtor_info);
  }
  ck__free(mi);
}

/* varsize: data freed with the header, after the element destructor */
static void ck__varsize_dtor(void *data, size_t size, void *info) {
  (void)size;
  if (info != NULL) {
    void (*elem)(void *);
    memcpy(&elem, &info, sizeof elem);
    elem(data);
  }
  ck__free(data);
}

ck_jit_meminfo *ck_jit_meminfo_new_varsize(size_t size) {
  void *data = ck__malloc(size == 0 ? 1 : size, __func__);
  if (data == NULL) {
    return NULL;
  }
  ck_jit_meminfo *mi = CK_MALLOC(sizeof *mi);
  if (mi == NULL) {
    ck__free(data);
    return NULL;
  }
  atomic_init(&mi->refct, 1);
  mi->dtor = ck__varsize_dtor;
  mi->dtor_info = NULL;
  mi->data = data;
  mi->size = size;
  mi->external = NULL;
  return mi;
}

ck_jit_meminfo *ck_jit_meminfo_new_varsize_dtor(size_t size, void (*elem_dtor)(void *data)) {
  ck_jit_meminfo *mi = ck_jit_meminfo_new_varsize(size);
  if (mi != NULL) {
    memcpy(&mi->dtor_info, &elem_dtor, sizeof elem_dtor);
  }
  return mi;
}

static bool ck__is_varsize(ck_jit_meminfo *mi, const char *func) {
  if (mi == NULL || mi->dtor != ck__varsize_dtor) {
    ck__error(CK_ERR_INVALID_STATE, func, "not a varsize meminfo");
    return false;
  }
  return true;
}

void *ck_jit_meminfo_varsize_alloc(ck_jit_meminfo *mi, size_t size) {
  if (!ck__is_varsize(mi, __func__)) {
    return NULL;
  }
  mi->data = ck__malloc(size == 0 ? 1 : size, __func__);
  if (mi->data != NULL) {
    mi->size = size;
  }
  return mi->data;
}

void *ck_jit_meminfo_varsize_realloc(ck_jit_meminfo *mi, size_t size) {
  if (!ck__is_varsize(mi, __func__)) {
    return NULL;
  }
  void *p = ck__realloc(mi->data, size == 0 ? 1 : size, __func__);
  if (p == NULL) { /* as Numba: the old data is the caller's to free */
    return NULL;
  }
  mi->data = p;
  mi->size = size;
  return p;
}

void ck_jit_meminfo_varsize_free(ck_jit_meminfo *mi, void *p) {
  ck__free(p);
  if (mi != NULL && p == mi->data) {
    mi->data = NULL;
  }
}

void *ck_jit_allocate(size_t size) { return ck__malloc(size == 0 ? 1 : size, __func__); }

void ck_jit_free(void *p) { ck__free(p); }
