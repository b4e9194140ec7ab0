/*
 * ckernel/lift.h -- dimension lifting: N-ary elementwise kernels over
 * fixed, strided and var dims with NumPy broadcasting.
 *
 * A "child" factory builds the scalar (dtype-level) kernel: it sees the
 * innermost element types (the types under all leading dims) and their
 * arrmeta, and installs the entry point for the request it is given.
 * ck_make_elementwise_kernel wraps it in one dim kernel per dimension of the
 * destination (DyND's hierarchical kernels; the tree shapes are in
 * docs/kernel-abi.md, "Dimension kernels"):
 *
 *     dim kernel (axis 0) -> dim kernel (axis 1) -> ... -> child (strided)
 *
 * Every dim kernel asks its child for the STRIDED entry point, so the
 * innermost dimension costs one child call per row, not per element.
 *
 * Broadcasting (NumPy rules, right-aligned):
 *   - a source with fewer dims than the destination is broadcast along the
 *     missing leading dims (stride 0);
 *   - a fixed/strided source dim of size 1 broadcasts to any size (stride 0);
 *   - a source with MORE dims than the destination is accepted only if its
 *     extra leading dims are fixed/strided of size 1 (NumPy's assignment
 *     rule);
 *   - otherwise sizes must be equal: CK_ERR_VALUE
 *     "cannot broadcast shape (3,) to (4,)" (checked while building for
 *     fixed/strided dims).
 * Var dims:
 *   - a var destination dim takes var, fixed/strided or missing source dims.
 *     A destination element that is still unallocated ({NULL, 0}) is
 *     allocated from the destination's var arena (ck_var_dim_alloc) with the
 *     broadcast size of the sources (1 if every source has size 1); an
 *     allocated one is written in place, and each source size must equal its
 *     size or be 1;
 *   - a var source dim under a fixed/strided destination dim must have the
 *     destination's size or 1;
 *   - var sizes are only known per element, so those checks happen when the
 *     kernel runs: CK_ERR_VALUE "cannot broadcast a var dim of size 3 to
 *     size 4".
 *
 * Kernel data never points into the builder (offsets only).  Kernels that
 * allocate var elements hold their own reference to the destination arena
 * and to the var type, so they never dangle; other kernels keep only sizes
 * and strides copied from the arrmeta given at build time.
 *
 * Thread safety: building is single-threaded (one builder).  The built
 * kernels keep no mutable state; but a kernel whose destination type has
 * blockrefs (strings, bytes, var dims: CK_TYPE_FLAG_BLOCKREF) allocates from
 * the destination's arena, and an arena has a single writer, so such a kernel
 * must not be called from two threads at once for the same destination
 * arrays.  The array-level entry points (assign_array.h) follow the rule
 * "a lifted kernel whose destination type has blockrefs runs serially".
 */
#ifndef CKERNEL_LIFT_H
#define CKERNEL_LIFT_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most sources an elementwise kernel takes. */
#define CK_LIFT_MAX_NSRC 16

/*
 * A scalar kernel factory: build at `offset` of `ckb` the kernel computing
 * one element of `dst_type` from `nsrc` elements of `src_types` (none of
 * them a dim type), with the given element arrmeta (pointers into the arrays'
 * arrmeta, valid while the kernel is built; a factory that needs them later
 * copies what it needs), installing the entry point for `req`; store the
 * offset just past the kernel in *out_end.  `child_data` is passed through
 * unchanged.  On failure the kernel must stay destroyable (builder rules).
 * A kernel it builds for dst types with blockrefs allocates from the arena
 * in dst_arrmeta.
 */
typedef ck_status (*ck_child_kernel_factory)(
    void *child_data, ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
    const char *dst_arrmeta, size_t nsrc, const ck_type *src_types,
    const char *const *src_arrmeta, ck_kernel_request req, size_t *out_end);

/*
 * Build the elementwise kernel: dst = child(src...) broadcast over the dims
 * of `dst_type`.  `nsrc` is 0..CK_LIFT_MAX_NSRC.  The child factory is
 * called once (dim kernels call it for the innermost element types, always
 * with CK_KERNEL_REQUEST_STRIDED; if dst has no dims it gets `req`).
 * The root kernel at `offset` installs the entry point for `req`; its
 * source count is nsrc (entry points take nsrc source pointers).
 * *out_end (optional) gets the offset past the whole tree.
 * Errors: CK_ERR_INVALID_ARGUMENT (NULLs, misaligned offset, nsrc too big),
 * CK_ERR_VALUE (shapes that cannot broadcast), CK_ERR_TYPE (a dim under a
 * type that cannot hold it), CK_ERR_NO_MEMORY / CK_ERR_OVERFLOW from the
 * builder, and whatever the child factory returns.
 */
CK_API ck_status ck_make_elementwise_kernel(
    ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
    const char *dst_arrmeta, size_t nsrc, const ck_type *src_types,
    const char *const *src_arrmeta, ck_kernel_request req,
    ck_child_kernel_factory child, void *child_data, size_t *out_end);

/*
 * The general form: lift a child that takes sub-arrays ("core dims", as a
 * NumPy gufunc's loop does).  `core_ndim` has 1 + nsrc entries: the number
 * of trailing dims of the destination (entry 0) and of each source that
 * belong to the child; the dims before them ("outer dims") are lifted and
 * broadcast as ck_make_elementwise_kernel does.  The child factory then sees
 * the core types (e.g. `strided * float64`, `var * int32`) with the arrmeta
 * of their first core dim, which is the same for every outer element, and
 * its entry points get pointers to the first byte of each operand's core
 * element (a var core dim: its {begin, size} slot).  Core dims are never
 * broadcast or checked here: the child owns them (ck_make_core_kernel,
 * core_dims.h, matches them to a signature).  `core_ndim` NULL is all
 * zeros, i.e. ck_make_elementwise_kernel.  Errors as
 * ck_make_elementwise_kernel, plus CK_ERR_INVALID_ARGUMENT for an operand
 * with fewer dims than its core.
 */
CK_API ck_status ck_make_lifted_kernel(
    ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
    const char *dst_arrmeta, size_t nsrc, const ck_type *src_types,
    const char *const *src_arrmeta, const size_t *core_ndim, ck_kernel_request req,
    ck_child_kernel_factory child, void *child_data, size_t *out_end);

/*
 * Null propagation (option types `?T`): a ck_child_kernel_factory whose
 * child_data is a ck_null_propagation.  When no source and not the
 * destination is an option, it is `child` itself.  Otherwise the
 * destination must be an option `?U` (CK_ERR_TYPE if not) and it builds a
 * wrapper around `child`, which is built for the value types (U from T...,
 * the options stripped) with the strided request:
 *   - a destination slot is valid iff every option source is valid there
 *     (the AND of their validity bitmaps, 64 bits at a time when the
 *     destination and the option sources step one slot per element, slot by
 *     slot otherwise);
 *   - the child runs only on runs of valid slots, so its checked errors
 *     (division by zero, overflow, checked casts) never fire on the value
 *     left under a null; the destination's value bytes under a null are
 *     left as they were;
 *   - kleene = CK_NULLS_KLEENE_AND / _OR (bool operands and a ?bool
 *     result only): Arrow's and_kleene / or_kleene -- a null operand gives a
 *     null unless a valid operand decides the result (false for and, true
 *     for or);
 *   - kleene = CK_NULLS_PROPAGATE_ALL_SLOTS: the validity as for
 *     CK_NULLS_PROPAGATE, but the child runs once over every slot, nulls
 *     included (no search for runs of valid slots).  Only for a child that
 *     cannot fail and reads any bytes harmlessly (float/int arithmetic
 *     without checked errors): it then sees the values under nulls, and the
 *     destination's value bytes under a null hold whatever it computed from
 *     them (unspecified, like every value under a null).
 * `kleene` outside these modes is CK_ERR_INVALID_ARGUMENT.
 * The wrapper keeps copies of the option arrmeta and a reference to each
 * bitmap's block.  A destination option slot without a bitmap (under a var
 * dim) that needs a null is CK_ERR_INVALID_STATE.
 */
enum {
  CK_NULLS_PROPAGATE = 0,
  CK_NULLS_KLEENE_AND = 1,
  CK_NULLS_KLEENE_OR = 2,
  CK_NULLS_PROPAGATE_ALL_SLOTS = 3
};

typedef struct ck_null_propagation {
  ck_child_kernel_factory child;
  void *child_data;
  int kleene;
} ck_null_propagation;

CK_API ck_status ck_null_propagating_child_factory(
    void *child_data, ck_kernel_builder *ckb, size_t offset, ck_type dst_type,
    const char *dst_arrmeta, size_t nsrc, const ck_type *src_types,
    const char *const *src_arrmeta, ck_kernel_request req, size_t *out_end);

/* Marker for a var dim in the shapes of ck_broadcast_shapes. */
#define CK_VAR_DIM_SIZE (-1)

/*
 * NumPy broadcasting of `nshapes` shapes (shape i has ndims[i] entries,
 * outermost first; an entry is a size >= 0 or CK_VAR_DIM_SIZE for a var
 * dim, which broadcasts against any size and makes the result var).  Writes
 * the result (max ndim entries) to out_shape, which has room for `max`
 * entries, and its length to *out_ndim.  CK_ERR_VALUE "operands could not
 * be broadcast together with shapes (3,) (4,)" when sizes differ and
 * neither is 1; CK_ERR_INVALID_ARGUMENT if max is too small.
 */
CK_API ck_status ck_broadcast_shapes(size_t nshapes,
                                     const intptr_t *const *shapes,
                                     const size_t *ndims, intptr_t *out_shape,
                                     size_t max, size_t *out_ndim);

/*
 * The destination type of an elementwise operation on `src_types` (with
 * their arrmeta, which gives the sizes of strided dims) producing elements
 * of `dst_dtype`: the broadcast dims over `dst_dtype`.  Without var dims:
 * `strided * ... * strided * dst_dtype`.  From the first axis where a source
 * has a var dim on: `var` where any source has a var dim, else a fixed dim
 * of the broadcast size.  New reference in *out_type.  The sizes of the
 * result's leading strided dims (what ck_array_empty wants) go to out_shape
 * (room for `max` entries; may be NULL when max is 0) and their count to
 * *out_nstrided (optional).  Sources without strided dims may pass NULL
 * arrmeta; `src_arrmeta` itself may be NULL if none has strided dims.
 * Errors as ck_broadcast_shapes, plus CK_ERR_TYPE for dst_dtype with dims.
 */
CK_API ck_status ck_elementwise_result_type(ck_type dst_dtype, size_t nsrc,
                                            const ck_type *src_types,
                                            const char *const *src_arrmeta,
                                            ck_type *out_type,
                                            intptr_t *out_shape, size_t max,
                                            size_t *out_nstrided);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_LIFT_H */
