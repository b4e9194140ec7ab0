/*
 * ckernel/varlen_element.h -- setting the value of one variable-length
 * element (a string, a bytes value, a var dim's element list) in the arena
 * that the element's arrmeta references: a copy of given bytes, or zeroed
 * elements.  What the library's kernels (assignment, lifting),
 * ck_array_string_assign and ck_array_var_dim_alloc use; jitted code
 * builds its strings through the pod allocator API directly
 * (ckernels._numba).
 *
 * The arena is a POD memblock (memblock.h, pod_allocator.h); the element's
 * arrmeta holds a reference to it (its "blockref").  An arena has a single
 * writer at a time: the array-level entry points (apply.h) hold the arena's
 * writer lock (ck_pod_memblock_writer_lock) while a kernel writes into it;
 * direct callers of these functions from several threads must do the same.
 */
#ifndef CKERNEL_VARLEN_ELEMENT_H
#define CKERNEL_VARLEN_ELEMENT_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Set the string at `data` (a ck_string, arrmeta a ck_string_arrmeta) to a
 * copy of `len` bytes allocated from the arrmeta's arena.  The bytes are
 * copied as given (validate with ck_utf8_validate first if they come from
 * outside).  The previous value stays in the arena until the arena is freed.
 * `bytes` may be NULL when len is 0. */
CK_API ck_status ck_string_assign(char *data, const char *arrmeta,
                                  const char *bytes, size_t len);

/* The same for a bytes value of type `bytes_type` (its alignment is used). */
CK_API ck_status ck_bytes_assign(ck_type bytes_type, char *data,
                                 const char *arrmeta, const char *bytes,
                                 size_t len);

/* Allocate `count` zero-filled elements for the var dim element at `data`
 * (a ck_var_dim_data with arrmeta `arrmeta` of type `var_type`) from the
 * arrmeta's arena, and set begin/size.  The arrmeta must have offset 0 and
 * a stride >= the element data size (true for constructed arrmeta).  The
 * previous elements stay in the arena until it is freed. */
CK_API ck_status ck_var_dim_alloc(ck_type var_type, char *data,
                                  const char *arrmeta, size_t count);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_VARLEN_ELEMENT_H */
