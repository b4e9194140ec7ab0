/*
 * ckernel/device_arena.h -- rows of unknown length built on a device: an
 * arena with an atomic bump pointer, overflow detected, and the compaction
 * of the rows into Arrow's layout (offsets + values).
 *
 * A device has no malloc.  When each work item can compute its result's
 * length in advance, the sizing pass + ck_device_scan_exclusive_i64 + a
 * writing pass build the result (device_scan.h).  When it cannot -- a loop of
 * appends whose count depends on the data, `out.append(x)` in a jitted
 * function -- the work items append into one arena:
 *
 *   1. every work item (one row) keeps a private row state ck_arow_SUF_t: its
 *      chunk of the arena (start, room) and its element count.  The first
 *      append reserves CK_DEVICE_ARENA_FIRST elements with an atomic add on
 *      the arena's counter; a full chunk reserves one twice its room and
 *      copies the row there (the old chunk is left unused);
 *   2. a reservation past the arena's capacity marks the row overflowed
 *      (start = -1): it keeps counting its elements and reserving (the
 *      counter keeps growing) but stores nothing;
 *   3. after the launch the counter is the room every row reserved.  The
 *      reservations of a row depend only on its element count (8, 16, 32,
 *      ...), not on the order the work items ran in, so the counter is the
 *      same on every run: if it is above the capacity, one retry with an
 *      arena of exactly that capacity succeeds;
 *   4. the row lengths (in an int64 buffer of n + 1, the last 0) are scanned
 *      into offsets (ck_device_scan_exclusive_i64) and
 *      ck_device_arena_compact copies every row from its chunk to its offset
 *      in the values buffer (one work item per row).
 *
 * Arena use: a row of L > 0 elements reserves 8 * 2^k >= L elements, at most
 * 2 * max(L, 8) in its last chunk and as much again in the ones before.
 *
 * Device half (macros, no libc, no heap): the includer defines
 *   CK_DA_FN            function qualifiers (C11 default "static inline")
 *   CK_DA_I64           a signed 64-bit type
 *   CK_DA_ATOMIC_ADD(p, v)  atomically add v to *p (p: a CK_DA_I64 pointer
 *                       in the arena's address space), giving the old value
 *                       (OpenCL: atom_add with cl_khr_int64_base_atomics;
 *                       CUDA: atomicAdd on unsigned long long; C11:
 *                       __atomic_fetch_add)
 * and instantiates, per element type T in address space AS:
 *   CK_DEVICE_ARENA_ROW(SUF, T, AS)
 *     typedef struct { AS T *data; AS CK_DA_I64 *counter; CK_DA_I64 capacity;
 *                      CK_DA_I64 start, len, room; } ck_arow_SUF_t;
 *     void ck_arow_init_SUF(ck_arow_SUF_t *r, AS T *data, AS CK_DA_I64 *counter,
 *                           CK_DA_I64 capacity)       an empty row
 *     void ck_arow_append_SUF(ck_arow_SUF_t *r, T x)   append x
 *   After the function ran: r.start (-1: overflowed) and r.len are what the
 *   kernel stores for the row.
 *
 * Host half (not compiled by OpenCL C, nvcc or NVRTC, nor where the includer
 * defines CK_DEVICE_ARENA_DEVICE_ONLY, as the jit's programs do):
 * ck_device_arena_compact.
 */
#ifndef CKERNEL_DEVICE_ARENA_H
#define CKERNEL_DEVICE_ARENA_H

/* Elements the first append of a row reserves. */
#define CK_DEVICE_ARENA_FIRST 8

#ifndef CK_DA_FN
#define CK_DA_FN static inline
#endif

#define CK_DEVICE_ARENA_ROW(SUF, T, AS)                                        \
  typedef struct {                                                             \
    AS T *data;                                                                \
    AS CK_DA_I64 *counter;                                                     \
    CK_DA_I64 capacity;                                                        \
    CK_DA_I64 start; /* the chunk's first element; -1: overflowed */          \
    CK_DA_I64 len;   /* elements appended */                                   \
    CK_DA_I64 room;  /* elements the chunk holds */                            \
  } ck_arow_##SUF##_t;                                                         \
                                                                               \
  CK_DA_FN void ck_arow_init_##SUF(ck_arow_##SUF##_t *r, AS T *data,          \
                                   AS CK_DA_I64 *counter, CK_DA_I64 capacity) { \
    r->data = data;                                                            \
    r->counter = counter;                                                      \
    r->capacity = capacity;                                                    \
    r->start = 0;                                                              \
    r->len = 0;                                                                \
    r->room = 0;                                                               \
  }                                                                            \
                                                                               \
  CK_DA_FN void ck_arow_append_##SUF(ck_arow_##SUF##_t *r, T x) {             \
    if (r->len == r->room) {                                                   \
      CK_DA_I64 grow = r->room ? 2 * r->room : (CK_DA_I64)CK_DEVICE_ARENA_FIRST; \
      CK_DA_I64 at = CK_DA_ATOMIC_ADD(r->counter, grow);                       \
      if (r->start >= 0 && at <= r->capacity - grow) {                         \
        for (CK_DA_I64 i = 0; i < r->len; i++) {                               \
          r->data[at + i] = r->data[r->start + i];                             \
        }                                                                      \
        r->start = at;                                                         \
      } else {                                                                 \
        r->start = -1;                                                         \
      }                                                                        \
      r->room = grow;                                                          \
    }                                                                          \
    if (r->start >= 0) {                                                       \
      r->data[r->start + r->len] = x;                                          \
    }                                                                          \
    r->len++;                                                                  \
  }

/*
 * Rows of optional items (`var * ?T` results): the same arena and the same
 * reservations, plus one presence byte per item (1: a value, 0: a null,
 * whose value slot is 0) in a byte arena `present` of the same capacity,
 * at the item's index: a row's chunk is the same range of both, moved
 * together, and the host compacts both with the same starts and offsets
 * (ck_device_arena_compact with elem_size 1 for the bytes).
 *   CK_DEVICE_ARENA_OPTION_ROW(SUF, T, AS)
 *     typedef struct { AS T *data; AS unsigned char *present; ... } ck_aorow_SUF_t;
 *     void ck_aorow_init_SUF(ck_aorow_SUF_t *r, AS T *data, AS unsigned char *present,
 *                            AS CK_DA_I64 *counter, CK_DA_I64 capacity)
 *     void ck_aorow_append_SUF(ck_aorow_SUF_t *r, T x, int ok)
 */
#define CK_DEVICE_ARENA_OPTION_ROW(SUF, T, AS)                                 \
  typedef struct {                                                             \
    AS T *data;                                                                \
    AS unsigned char *present;                                                 \
    AS CK_DA_I64 *counter;                                                     \
    CK_DA_I64 capacity;                                                        \
    CK_DA_I64 start; /* the chunk's first item; -1: overflowed */             \
    CK_DA_I64 len;   /* items appended */                                      \
    CK_DA_I64 room;  /* items the chunk holds */                               \
  } ck_aorow_##SUF##_t;                                                        \
                                                                               \
  CK_DA_FN void ck_aorow_init_##SUF(ck_aorow_##SUF##_t *r, AS T *data,        \
                                    AS unsigned char *present,                 \
                                    AS CK_DA_I64 *counter, CK_DA_I64 capacity) { \
    r->data = data;                                                            \
    r->present = present;                                                      \
    r->counter = counter;                                                      \
    r->capacity = capacity;                                                    \
    r->start = 0;                                                              \
    r->len = 0;                                                                \
    r->room = 0;                                                               \
  }                                                                            \
                                                                               \
  CK_DA_FN void ck_aorow_append_##SUF(ck_aorow_##SUF##_t *r, T x, int ok) {   \
    if (r->len == r->room) {                                                   \
      CK_DA_I64 grow = r->room ? 2 * r->room : (CK_DA_I64)CK_DEVICE_ARENA_FIRST; \
      CK_DA_I64 at = CK_DA_ATOMIC_ADD(r->counter, grow);                       \
      if (r->start >= 0 && at <= r->capacity - grow) {                         \
        for (CK_DA_I64 i = 0; i < r->len; i++) {                               \
          r->data[at + i] = r->data[r->start + i];                             \
          r->present[at + i] = r->present[r->start + i];                       \
        }                                                                      \
        r->start = at;                                                         \
      } else {                                                                 \
        r->start = -1;                                                         \
      }                                                                        \
      r->room = grow;                                                          \
    }                                                                          \
    if (r->start >= 0) {                                                       \
      r->data[r->start + r->len] = ok ? x : (T)0;                              \
      r->present[r->start + r->len] = (unsigned char)(ok != 0);                \
    }                                                                          \
    r->len++;                                                                  \
  }

#if !defined(CK_DEVICE_ARENA_DEVICE_ONLY) && !defined(__OPENCL_VERSION__) && \
    !defined(__OPENCL_C_VERSION__) && !defined(__CUDACC__) && !defined(__CUDACC_RTC__)

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Copy `n` rows from their chunks of an arena into Arrow's values buffer.
 * Row i has `starts[i]` (int64, an element index into the arena) and its
 * elements at `offsets[i] .. offsets[i + 1]` of the result (int64, the
 * scanned lengths: n + 1 values); elements are `elem_size` bytes (1, 2, 4
 * or 8).  Every buffer is given with its byte offset (8-byte aligned for
 * the int64 ones, elem_size-aligned for the arena and the values); all four
 * belong to one context.  The copy runs on the context's device (one work
 * item per row; a "cpu" context copies in host memory).  Only rows of
 * length > 0 are read, so an empty row may have any start.
 *
 * Errors: CK_ERR_INVALID_ARGUMENT (NULL buffers, buffers of different
 * contexts, a size other than 1/2/4/8, misaligned offsets, index ranges
 * beyond a buffer; and, found by the work items, a row whose chunk or
 * destination lies outside the arena or the values buffer, or whose
 * offsets decrease: such rows are not copied, the others are),
 * CK_ERR_NOT_SUPPORTED (a context kind without programs), the backend's
 * build and launch errors.
 */
CK_API ck_status ck_device_arena_compact(ck_buffer *arena, size_t arena_offset,
                                         ck_buffer *starts, size_t starts_offset,
                                         ck_buffer *offsets, size_t offsets_offset, size_t n,
                                         size_t elem_size, ck_buffer *values,
                                         size_t values_offset);

#ifdef __cplusplus
}
#endif

#endif /* host half */

#endif /* CKERNEL_DEVICE_ARENA_H */
