/*
 * ckernel/apply.h -- applying kernels to whole arrays.
 *
 * ck_array_apply is the general entry point: a child factory
 * (ck_child_kernel_factory, lift.h) builds the scalar kernel, the dimension
 * kernels lift it over the arrays' dims with broadcasting (lift.h), and the
 * tree runs once over the arrays, its outermost dimension split over the
 * thread pool when the work is large.  ck_array_assign is the same with the
 * assignment kernel (assign_array.h); registry operations apply through
 * ck_array_apply_op (ops.h).
 *
 * Rules every entry point here follows:
 *   - the destination needs the WRITE flag (CK_ERR_INVALID_STATE "array is
 *     read-only");
 *   - a source whose memory partially overlaps the destination's is read
 *     as NumPy does: it is first copied to a temporary, so the result is as
 *     if every source had been read before anything was written.  A source
 *     that is the destination itself (same data, element type and strides
 *     as broadcast: in-place, `add(x, y, out=x)`) is read directly, without
 *     a copy.  Only the arrays' own data is compared (their leading
 *     fixed/strided dims and the item after them), not the bytes of strings
 *     or var dims in arenas;
 *   - a destination whose type holds variable-length data (strings, bytes,
 *     var dims) is written by one application at a time: the calling
 *     thread holds the writer lock of every arena its arrmeta references
 *     (ck_pod_memblock_writer_lock, taken in address order) for the whole
 *     application, so concurrent calls writing into the same arena are
 *     serialised, never interleaved (the pool's threads of one application
 *     write into arenas of their own: below).
 */
#ifndef CKERNEL_APPLY_H
#define CKERNEL_APPLY_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/types.h"
#include "ckernel/array.h"
#include "ckernel/assign.h"
#include "ckernel/lift.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Work (destination elements) from which the array-level entry points split
 * the outermost dimension over the thread pool (ck_parallel_for, thread
 * count from CK_NUM_THREADS / ck_set_num_threads).  Each chunk holds at least
 * CK_PARALLEL_MIN_CHUNK_ELEMENTS elements.  The split happens only when
 *   - the destination's outermost dim is fixed/strided (var: serial),
 *   - the destination's leading fixed/strided dims multiplied together
 *     reach CK_PARALLEL_MIN_ELEMENTS (64 Ki elements; a string, or a var
 *     dim below them, counts as one element), and the outermost dim has
 *     at least two chunks.
 * Without blockrefs in the destination type, every worker calls the same
 * built kernel (kernels are threadsafe) on its range of rows.
 *
 * Destinations holding strings, bytes or var dims allocate from arenas,
 * which have a single writer.  The calling thread writes into the
 * destination's own arenas (under their writer locks, see below); every
 * other thread into new arenas of its own, of the same kinds, through a
 * kernel tree built for a copy of the destination's arrmeta naming them.
 * When the run ends (also when it failed: rows written before a failure
 * point into them), the destination's arenas adopt those arenas' chunks
 * (ck_pod_memblock_adopt): no byte is copied, and the destination's
 * arrmeta -- one blockref per string/var field, as always -- keeps every
 * byte alive.  Results are the serial ones; only their bytes' placement
 * over chunks differs.  Such a destination stays serial when one of its
 * blockrefs is no arena (or NULL), one of its arenas is finalized, or a
 * source references one of its arenas (kernels built for a source and a
 * destination sharing an arena may share strings instead of copying
 * them).
 *
 * The first failure's status and message reach the caller; the other
 * workers stop at their next chunk.  Rows before the failure may have been
 * written, in any order.
 */
#define CK_PARALLEL_MIN_ELEMENTS 65536
#define CK_PARALLEL_MIN_CHUNK_ELEMENTS 16384

/*
 * dst = src, converting and broadcasting (ck_make_assignment_kernel).  The
 * destination needs the WRITE flag (CK_ERR_INVALID_STATE "array is
 * read-only").  Builds the kernel in a builder on the stack (no allocation
 * for small trees), runs it (in parallel when large, see above) and destroys
 * it.  Overlap and arenas as described at the top of this header.
 */
CK_API ck_status ck_array_assign(ck_array_preamble *dst,
                                 const ck_array_preamble *src, ck_errmode mode);

/*
 * Option types: `?U <- ?T` converts the valid slots (under `mode`; nothing
 * is converted, so nothing can fail, on a null slot) and copies the nulls;
 * `?U <- T` marks every slot valid.  `U <- ?T` (the source's dtype an
 * option, the destination's not) with any null in the source is refused
 * before anything is written: CK_ERR_VALUE "the source ('5 * ?float64') has
 * 2 nulls (the first at flat index 1) and the destination type '5 *
 * float64' has no nulls: ...".  ck_array_assign_fill writes `fill` (a 0-d
 * array of a non-option type assignable to U) into those slots instead.
 */
CK_API ck_status ck_array_assign_fill(ck_array_preamble *dst,
                                      const ck_array_preamble *src,
                                      const ck_array_preamble *fill, ck_errmode mode);

/*
 * Apply an elementwise operation: `child` builds the scalar kernel (see
 * ck_child_kernel_factory) producing `dst_dtype` elements from the dtypes of
 * the `nsrc` sources.  With dst_or_null == NULL a new C-contiguous result is
 * allocated with the broadcast shape (ck_elementwise_result_type: strided
 * dims, var where a source has var dims); otherwise the given destination
 * (WRITE flag needed) is written, its dims broadcasting the sources.  A
 * destination whose dtype differs from dst_dtype receives the results
 * converted as ck_array_assign does under CK_ERRMODE_DEFAULT (computed in
 * dst_dtype into a temporary first, as NumPy's out= does); with dst_dtype
 * CK_TYPE_UNINITIALIZED the child is asked for the destination's dtype
 * directly.  *out (optional when a destination is given) receives a new
 * reference to the result.  Parallel as ck_array_assign; overlap and arenas
 * as described at the top of this header.
 */
CK_API ck_status ck_array_apply(ck_child_kernel_factory child, void *child_data,
                                ck_type dst_dtype, size_t nsrc,
                                ck_array_preamble *const *srcs,
                                ck_array_preamble *dst_or_null,
                                ck_array_preamble **out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_APPLY_H */
