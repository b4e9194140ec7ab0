/*
 * ckernel/registry.h -- named operations and the kernels that implement
 * them (the built-in kernel registry; docs/kernel-registry.md).
 *
 * An operation ("add", "sqrt", "less", ...) has a name and a fixed arity
 * (number of arguments, 1..CK_OP_MAX_ARGS).  It holds kernels keyed by the
 * type ids of their arguments; each kernel has a return type id.  A kernel
 * is registered either as
 *   - plain entry points: a single and a strided function for a leaf kernel
 *     made of a bare ck_prefix (no data, no destructor), or
 *   - a factory that builds the kernel (with any data and children) into a
 *     ck_kernel_builder, plus a user_data pointer handed to every call and
 *     an optional release callback run once when the registration is
 *     dropped.  This is how jitted user kernels register.
 *
 * The library registers its built-in operations (arithmetic, comparison,
 * logic and bitwise, minimum/maximum, math functions) the first time any
 * function here is called.  Users add kernels -- to existing operations or
 * to new ones -- through the same functions.
 *
 * Dispatch (ck_op_resolve, ck_op_make_kernel), for argument types T1..Tn:
 *   1. a kernel registered for exactly (T1..Tn);
 *   2. if every Ti is builtin: P = ck_promote_types over all Ti (NumPy's
 *      numpy.result_type for builtin dtypes) and the kernel for (P..P);
 *   3. if every Ti is builtin: among the kernels whose every argument type
 *      Ki is builtin with ck_can_cast_safely(Ti, Ki), the one with the
 *      smallest types (NumPy's type order bool < int8 < uint8 < int16 <
 *      uint16 < int32 < uint32 < int64 < uint64 < float16 < float32 <
 *      float64 < complex64 < complex128; compared by the largest argument
 *      type, then by the sum, then by registration order).  This is NumPy's
 *      ufunc loop search: sqrt(int8) -> float16, sqrt(int16) -> float32,
 *      sqrt(int32) -> float64, floor_divide(bool, bool) -> int8.
 *   Otherwise CK_ERR_TYPE, with a message listing the signatures the
 *   operation has.  Built-in exceptions: subtract and negative never promote
 *   bool arguments (NumPy refuses bool subtraction).
 * When the kernel found takes other argument types than given, the kernel
 * built is a converting parent: it converts each such argument (exactly, or
 * rounding int64 -> float64 as NumPy does) into stack scratch and calls the
 * kernel found as its child.  The result type is always the found kernel's
 * return type: callers allocate the destination accordingly.
 *
 * Casts are not an operation here: converting one builtin type to another
 * is ck_make_builtin_assignment_kernel (assign.h), with error modes.
 *
 * Thread safety: every function here may be called from any thread.
 * Registration takes a process-wide write lock; lookups, dispatch and kernel
 * construction take it for reading, so they run concurrently with each
 * other and are safe against concurrent registration.  Operations are never
 * destroyed: a `const ck_op *` and the names returned here stay valid until
 * the process exits.  Kernels built by the library's built-in kernels are
 * read-only after construction and may be called from many threads.
 *
 * Ownership: the registry copies names and signatures.  A factory's
 * user_data is owned by the registration from the moment
 * ck_op_register_factory succeeds (and is released through the callback if
 * the registration fails); the release runs when the registration is
 * replaced or unregistered and no ck_op_make_kernel call is still using it.
 * Registrations alive at exit are not released.  A kernel built from a
 * factory must not depend on user_data after the registration is dropped
 * (take your own reference in the kernel if it does).
 */
#ifndef CKERNEL_REGISTRY_H
#define CKERNEL_REGISTRY_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most arguments an operation may take, and longest name (bytes, no NUL). */
#define CK_OP_MAX_ARGS 8
#define CK_OP_NAME_MAX 63

/* A named operation (opaque; lives until exit). */
typedef struct ck_op ck_op;

/* Build the kernel at `offset` of `ckb` (a multiple of CK_KERNEL_ALIGN),
 * installing the entry point for `req`, and store the offset just past the
 * kernel tree in *out_end (never NULL).  Same contract as the library's
 * factories: grow with ck_kernel_builder_ensure_capacity(_leaf), re-get
 * pointers after growing, keep the half-built kernel destroyable; on
 * failure return a status with ck_set_error (the caller destroys what was
 * built).  May be called from several threads at once. */
typedef ck_status (*ck_kernel_factory_t)(ck_kernel_builder *ckb, size_t offset,
                                         ck_kernel_request req, void *user_data,
                                         size_t *out_end);
typedef void (*ck_user_data_release_t)(void *user_data);

/* ---- operations -------------------------------------------------------- */

/* The operation named `name`.  CK_ERR_INDEX ("no operation named ...") if
 * there is none, CK_ERR_INVALID_ARGUMENT for NULL arguments,
 * CK_ERR_NO_MEMORY if registering the built-ins failed (retried on the next
 * call). */
CK_API ck_status ck_op_find(const char *name, const ck_op **out);

/* Number of operations, and the name of the i-th (registration order, which
 * never changes: new operations are appended); NULL for i out of range. */
CK_API size_t ck_op_count(void);
CK_API const char *ck_op_name_at(size_t i);

/* Name and arity of `op` (NULL / 0 for a NULL op). */
CK_API const char *ck_op_name(const ck_op *op);
CK_API size_t ck_op_arity(const ck_op *op);

/* Number of kernels `op` holds now, and the signature of the i-th
 * (registration order; a replaced kernel keeps its place).  out_args
 * receives arity entries (up to max_args; out_ret and out_args may be
 * NULL).  CK_ERR_INDEX for i out of range. */
CK_API size_t ck_op_kernel_count(const ck_op *op);
CK_API ck_status ck_op_kernel_signature(const ck_op *op, size_t i,
                                        ck_type_id *out_ret,
                                        ck_type_id *out_args, size_t max_args);

/* All signatures of `op` as "(int8, int8) -> int8, (float64, float64) ->
 * float64" into buf (snprintf rules: at most bufsize bytes including the
 * NUL, buf may be NULL when bufsize is 0; *out_len, optional, gets the full
 * length without the NUL). */
CK_API ck_status ck_op_signatures(const ck_op *op, char *buf, size_t bufsize,
                                  size_t *out_len);

/* ---- registration ---------------------------------------------------- */

/*
 * Register a kernel of `op_name` for argument types args[0..nargs-1]
 * returning `ret`.  The operation is created if it does not exist (with
 * arity nargs); registering for an existing operation with another arity is
 * CK_ERR_INVALID_ARGUMENT.  A kernel already registered for the same
 * argument types is REPLACED (its factory's user_data released), keeping
 * its place in the order; the return type may change.  Type ids must be
 * valid (builtin or a descriptor kind: ck_type_id_name is not "invalid").
 * Names are 1..CK_OP_NAME_MAX bytes of [A-Za-z0-9_].
 *
 * ck_op_register_kernel: both entry points are required; the kernel is a
 * bare ck_prefix leaf (they must not use kernel data).
 * ck_op_register_factory: on failure, `release` (if any) has been called on
 * user_data before returning.
 */
CK_API ck_status ck_op_register_kernel(const char *op_name, size_t nargs,
                                       ck_type_id ret, const ck_type_id *args,
                                       ck_expr_single_t single,
                                       ck_expr_strided_t strided);
CK_API ck_status ck_op_register_factory(const char *op_name, size_t nargs,
                                        ck_type_id ret, const ck_type_id *args,
                                        ck_kernel_factory_t factory,
                                        void *user_data,
                                        ck_user_data_release_t release);

/* Drop the kernel of `op_name` registered for exactly these argument types
 * (its release runs once no kernel construction uses it).  CK_ERR_INDEX if
 * there is no such operation or kernel.  The operation itself stays (with
 * no kernels, if it was the last). */
CK_API ck_status ck_op_unregister_kernel(const char *op_name, size_t nargs,
                                         const ck_type_id *args);

/* ---- dispatch ---------------------------------------------------------- */

/* Find the kernel for arguments of types arg_types[0..nargs-1] (rules
 * above).  *out_ret (optional) gets its return type, out_kernel_args
 * (optional, nargs entries) its argument types: equal to arg_types unless
 * promotion was needed.  CK_ERR_INVALID_ARGUMENT if nargs is not the arity,
 * CK_ERR_TYPE if no kernel applies. */
CK_API ck_status ck_op_resolve(const ck_op *op, size_t nargs,
                               const ck_type_id *arg_types,
                               ck_type_id *out_ret,
                               ck_type_id *out_kernel_args);

/* Resolve, then build the kernel for these argument types at `offset` of
 * `ckb` (a multiple of CK_KERNEL_ALIGN) for request `req`: the registered
 * kernel itself, or a converting parent around it when promotion was
 * needed.  *out_ret (optional) gets the type the kernel writes, *out_end
 * (optional) the offset just past the kernel tree.  On failure the builder
 * holds a destroyable half-built kernel (destroy or reset it); errors are
 * those of ck_op_resolve, of growing the builder, and of the factory. */
CK_API ck_status ck_op_make_kernel(const ck_op *op, ck_kernel_builder *ckb,
                                   size_t offset, ck_kernel_request req,
                                   size_t nargs, const ck_type_id *arg_types,
                                   ck_type_id *out_ret, size_t *out_end);

/* ---- type promotion ------------------------------------------------------ */

/* NumPy's "safe" casting between builtin ids: every value of `from` is
 * representable in `to` (int64/uint64 -> float64 and complex128 count as
 * safe, as in NumPy).  False for non-builtin ids. */
CK_API bool ck_can_cast_safely(ck_type_id from, ck_type_id to);

/* numpy.result_type of two builtin ids: the first type in NumPy's type
 * order to which both cast safely (int8 + uint8 -> int16, int64 + uint64 ->
 * float64, int16 + float16 -> float32, int32 + float32 -> float64,
 * complex64 + float64 -> complex128).  CK_ERR_TYPE for non-builtin ids. */
CK_API ck_status ck_promote_types(ck_type_id a, ck_type_id b, ck_type_id *out);

/* Python scalars in NumPy 2's promotion (NEP 50): a Python int, float or
 * complex is "weak" -- it takes the type of the other operands when that
 * type's kind is at least its own -- while NumPy scalars and Python bool are
 * strong (ordinary promotion; bool is the lowest kind). */
typedef enum ck_weak_kind {
  CK_WEAK_INT = 1,     /* a Python int     */
  CK_WEAK_FLOAT = 2,   /* a Python float   */
  CK_WEAK_COMPLEX = 3, /* a Python complex */
} ck_weak_kind;

/* The one NEP 50 rule: the type of an operand of builtin type `strong`
 * combined with a weak Python scalar of kind `weak`
 * (numpy.result_type(strong, scalar)).  `strong` itself when its kind is at
 * least the scalar's (bool < integer < float < complex); else the lowest type
 * of the scalar's kind that keeps strong's precision: bool + int -> int64;
 * bool or integer + float -> float64; bool or integer + complex ->
 * complex128; float16 or float32 + complex -> complex64, float64 + complex
 * -> complex128.  Values do not enter the rule: int8 with the int 300 is
 * int8 (converting 300 then fails).  A weak scalar passes as an operand of
 * type T unchanged exactly when the result is T.  Errors: CK_ERR_TYPE for a
 * non-builtin `strong`, CK_ERR_INVALID_ARGUMENT for an unknown `weak` or a
 * NULL `out`. */
CK_API ck_status ck_weak_result(ck_type_id strong, ck_weak_kind weak, ck_type_id *out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_REGISTRY_H */
