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
/* Mappings whose pages were written before: ck__map_spare returns one of at
 * least `size` bytes (its byte count in *got, at most twice `size`; its
 * contents are left over from earlier use, NOT zero), or else a fresh
 * zero-filled ck__map of exactly `size` bytes.  ck__unmap_spare hands back a
 * whole mapping (as returned by either, possibly shrunk from its end by
 * ck__unmap); a few of them (CK__SPARE_SLOTS, CK__SPARE_BYTES in all) are
 * kept for reuse, so a loop that frees and makes an arena of the same size
 * writes into pages that are already there (no page faults, no zeroing by
 * the kernel), the rest are unmapped.  Thread-safe. */
enum { CK__SPARE_SLOTS = 8 };
#define CK__SPARE_BYTES ((size_t)64 << 20)
void *ck__map_spare(size_t size, size_t *got, const char *func);
void ck__unmap_spare(void *p, size_t size);
size_t ck__page_size(void);
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
