/*
 * core_internal.h -- helpers shared by the library's translation units.
 * Not installed; nothing here is ABI.
 */
#ifndef CKERNEL_CORE_INTERNAL_H
#define CKERNEL_CORE_INTERNAL_H

#include "ckernel/ckernel.h"

#include <stdarg.h>

/* Record a failure: "<func>: <formatted message>".  Returns `status`. */
ck_status ck__error(ck_status status, const char *func, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
#define CK_ERROR(status, ...) ck__error((status), __func__, __VA_ARGS__)

/* Append context to the current message: "<func>: <fmt>: <old message>". */
ck_status ck__error_context(ck_status status, const char *func,
                            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Every heap allocation of the library goes through these (debug.h counts
 * them and can make them fail).  On failure they return NULL and record
 * CK_ERR_NO_MEMORY naming `func`. */
void *ck__malloc(size_t size, const char *func);
void *ck__calloc(size_t n, size_t size, const char *func);
void *ck__realloc(void *p, size_t size, const char *func);
void *ck__aligned_alloc(size_t align, size_t size, const char *func);
/* Page mappings (anonymous, zero-filled); ck__unmap takes any page range of
 * a mapping. */
void *ck__map(size_t size, const char *func);
void ck__unmap(void *p, size_t size);
size_t ck__page_size(void);
/* A page mapping of `need` bytes or more, *size wanted, whose contents are
 * undefined: one that ck__unmap_retain kept (*size becomes its size: in
 * [*size, 2 * *size], else in [need, *size)), else a fresh ck__map of *size.
 * ck__unmap_retain gives a whole mapping back: kept for reuse (a few,
 * bounded in total; alloc.c) or unmapped. */
void *ck__map_reuse(size_t need, size_t *size, const char *func);
void ck__unmap_retain(void *p, size_t size);
void ck__free(void *p);

#define CK_MALLOC(n) ck__malloc((n), __func__)
#define CK_CALLOC(n, s) ck__calloc((n), (s), __func__)
#define CK_REALLOC(p, n) ck__realloc((p), (n), __func__)
#define CK_ALIGNED_ALLOC(a, n) ck__aligned_alloc((a), (n), __func__)


/* Arithmetic helpers. */
static inline bool ck__is_pow2(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

/* a + b, false on overflow. */
static inline bool ck__add_size(size_t a, size_t b, size_t *out) {
  return !__builtin_add_overflow(a, b, out);
}
static inline bool ck__mul_size(size_t a, size_t b, size_t *out) {
  return !__builtin_mul_overflow(a, b, out);
}

/* snprintf into (buf + *pos), tracking the full length in *pos even past
 * bufsize, so callers can report the size they need. */
void ck__appendf(char *buf, size_t bufsize, size_t *pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif /* CKERNEL_CORE_INTERNAL_H */
