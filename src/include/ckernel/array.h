/*
 * ckernel/array.h -- arrays: a memblock holding a type, arrmeta and a data
 * pointer (DyND's array_preamble).
 *
 * Memory layout of an array memblock (kind CK_MEMBLOCK_ARRAY):
 *
 *     offset  0: ck_memblock memblock   refcount + kind
 *     offset  8: ck_type     type       one owned reference
 *     offset 16: char       *data       the array's value (type's data)
 *     offset 24: uint64_t    flags      CK_ARRAY_READ | WRITE | IMMUTABLE
 *     offset 32: ck_memblock *data_ref  owner of the data (one reference),
 *                                       NULL when the data is embedded in
 *                                       this very block (after the arrmeta)
 *     offset 40: arrmeta                ck_type_arrmeta_size(type) bytes,
 *                                       constructed; 8-aligned
 *    [offset 40 + arrmeta_size, rounded up to the data alignment: embedded
 *     data, for arrays made by ck_array_empty]
 *
 * (offsets for 64-bit targets; checked by static assertions and by the
 * exported layout table.)
 *
 * Ownership: an array is a memblock; ck_array_* functions returning an array
 * give a NEW reference (refcount 1) owned by the caller, released with
 * ck_array_decref (== ck_memblock_decref(&a->memblock)).  Freeing the block
 * destructs the arrmeta (dropping its blockrefs), drops data_ref and the
 * type.  Views (indexing, slicing) hold a reference to the block that owns
 * the data: the viewed array itself when its data is embedded, otherwise its
 * data_ref (or, for an element of a var dim, that var dim's arena), so a
 * view outlives the array it was made from.
 *
 * Access flags: READ (1), WRITE (2), IMMUTABLE (4: nobody writes the data,
 * ever; excludes WRITE).  Views carry the flags of their source.  The flags
 * are advisory for code reading the fields directly; the library enforces
 * them in ck_array_writable_data and in the element setters below.
 *
 * Dimensions: an array's dims are the leading fixed/strided/var dims of its
 * type (ck_type_ndim).  Fixed and strided dims have their size and stride in
 * arrmeta; a var dim's size is per element (only axis 0's is known without
 * picking an element).
 *
 * Thread safety: creating views and reading are safe from many threads;
 * writing data is the caller's business; ck_array_set_readonly changes the
 * flags word of one array and must not race with readers of that array.
 */
#ifndef CKERNEL_ARRAY_H
#define CKERNEL_ARRAY_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/memblock.h"
#include "ckernel/types.h"
#include "ckernel/varlen_element.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CK_ARRAY_READ = 1,
  CK_ARRAY_WRITE = 2,
  CK_ARRAY_IMMUTABLE = 4,
  CK_ARRAY_DEFAULT_FLAGS = 3 /* READ | WRITE */
};

typedef struct ck_array_preamble {
  ck_memblock memblock; /* kind CK_MEMBLOCK_ARRAY */
  ck_type type;
  char *data;
  uint64_t flags;
  ck_memblock *data_ref; /* NULL when the data is embedded in this block */
} ck_array_preamble;

/* "None" for the start/stop of ck_array_slice (Python's omitted bound). */
#define CK_SLICE_NONE INTPTR_MIN

/* ---- construction ------------------------------------------------------ */

/*
 * A new array of `type` with C-contiguous, zero-filled data embedded in the
 * array's own block.  `shape`/`ndim` as for ck_type_arrmeta_construct: the
 * sizes of the leading fixed/strided dims (strided dims need one; fixed dims
 * may be omitted from the end, so ndim = 0 for a type without strided dims;
 * given fixed sizes must match).  Strings start empty ({NULL, NULL}), var
 * dims empty ({NULL, 0}); their arrmeta blockrefs are new pod arenas that
 * writers allocate from (ck_string_assign, ck_var_dim_alloc).  Pointers
 * start NULL.  `flags`: CK_ARRAY_* bits, WRITE and IMMUTABLE exclusive.
 * Takes its own reference to `type`; new array in *out.
 */
CK_API ck_status ck_array_empty(ck_type type, const intptr_t *shape,
                                size_t ndim, uint64_t flags,
                                ck_array_preamble **out);

/*
 * As ck_array_empty, but the data of a type without blockrefs (builtin
 * scalars, structs and fixed/strided dims of them) is left uninitialised, as
 * NumPy's `empty`: its bytes are whatever the allocator returned, so the
 * caller writes every element before reading it.  A type with blockrefs
 * (strings, bytes, var dims, pointers) is zero-filled as in ck_array_empty,
 * so its slots start as valid empty values.  Allocating a large block then
 * touches no data page.
 */
CK_API ck_status ck_array_empty_uninit(ck_type type, const intptr_t *shape,
                                       size_t ndim, uint64_t flags,
                                       ck_array_preamble **out);

/*
 * A view of foreign memory (a NumPy array, a device buffer mapped on the
 * host): `data` holds values of `type` whose leading `ndim` dims have sizes
 * `shape` and byte strides `strides` (any sign; NULL means C-contiguous).
 * The type must have no blockref arrmeta (no strings, bytes, var dims or
 * pointers: their data would point into memory nobody owns) and needs a
 * shape entry for each strided dim, as in ck_array_empty.  `owner` (may be
 * NULL when the caller guarantees the memory outlives every view) is
 * incref'd and becomes data_ref: create it with ck_external_memblock_new to
 * tie the lifetime of e.g. a NumPy array to the view.  The caller keeps its
 * own reference to `owner` and `type`.
 */
CK_API ck_status ck_array_view_external(ck_type type, char *data,
                                        const intptr_t *shape,
                                        const intptr_t *strides, size_t ndim,
                                        uint64_t flags, ck_memblock *owner,
                                        ck_array_preamble **out);

/* Reference counting (NULL is a no-op). */
CK_API void ck_array_incref(ck_array_preamble *a);
CK_API void ck_array_decref(ck_array_preamble *a);

/* ---- views -------------------------------------------------------------- */

/*
 * Integer indexing of dim `axis` (0 = outermost): a view without that dim.
 * Negative indices count from the end (Python).  Out of range is
 * CK_ERR_INDEX ("index 7 is out of bounds for axis 0 with size 4"), as is an
 * axis beyond ck_type_ndim.  Any fixed/strided axis works, also under var
 * dims (the var arrmeta offset moves); a var dim can be indexed only as
 * axis 0 (its size is per element), otherwise CK_ERR_NOT_SUPPORTED.
 */
CK_API ck_status ck_array_index(ck_array_preamble *a, size_t axis,
                                intptr_t index, ck_array_preamble **out);

/*
 * Slicing of dim `axis` with Python semantics: start/stop may be negative
 * or CK_SLICE_NONE (omitted) and are clamped; step may be negative; step 0
 * is CK_ERR_INVALID_ARGUMENT.  The view keeps the dim's kind: a strided dim
 * stays strided (same type), a fixed dim of size N becomes a fixed dim of
 * the slice's length, with stride * step as its stride.
 *
 * Var dims: the outermost var dim (axis 0) has one size, so its slice is a
 * view: a `strided` dim over the selected elements (data in the var dim's
 * arena, which the view references).  A var dim at axis > 0 whose outer dims
 * are all fixed/strided is sliced row by row: the result is a NEW array of
 * the same type (its own C-contiguous outer data) whose var dim slots select
 * each row's slice (Python's clamping per row); the elements are shared with
 * the source (its arena, stride * step), so writing an element through the
 * result writes the source.  A var dim below another var dim:
 * CK_ERR_NOT_SUPPORTED (index the outer one first).
 */
CK_API ck_status ck_array_slice(ck_array_preamble *a, size_t axis,
                                intptr_t start, intptr_t stop, intptr_t step,
                                ck_array_preamble **out);

/*
 * A struct field as a view: for an array whose dims (any: fixed, strided,
 * var) hold a struct, the view with the same dims holding the field `name`
 * (`len` bytes, need not be NUL-terminated; a NUL inside never matches).
 * The field's data offset moves the data pointer (or, under a var dim, that
 * var dim's arrmeta offset, so every element moves); the field's arrmeta
 * (strings, var dims, nested structs inside) is copied from the struct's.
 * Errors: CK_ERR_TYPE when the element is not a struct, CK_ERR_INDEX "the
 * struct has no field 'z'".  Flags and the data reference as for
 * ck_array_index.  New reference in *out.
 */
CK_API ck_status ck_array_field(ck_array_preamble *a, const char *name, size_t len,
                                ck_array_preamble **out);

/*
 * Re-striding view (transpose, reshape, newaxis, broadcasting): a view of
 * `a` whose leading `k` dims -- fixed or strided; a var dim among them is
 * CK_ERR_NOT_SUPPORTED -- are replaced by `ndim` strided dims with sizes
 * `shape` and byte strides `strides` (any sign; 0 repeats an element), the
 * data pointer moved by `offset` bytes.  The type below the k dims and its
 * arrmeta are kept (blockrefs shared, not copied).  Checked: every element
 * the view addresses is one `a` addresses within its own extent (else
 * CK_ERR_INDEX "the view ... reaches elements outside the array"), and the
 * offset and the strides of dims longer than 1 are multiples of the element
 * alignment (CK_ERR_INVALID_ARGUMENT).  A view with no element (a size 0)
 * is always allowed (its offset is ignored).  Flags and the data reference
 * as for ck_array_index.  New reference in *out.
 */
CK_API ck_status ck_array_view_dims(ck_array_preamble *a, size_t k, size_t ndim,
                                    const intptr_t *shape, const intptr_t *strides,
                                    intptr_t offset, ck_array_preamble **out);

/* ---- accessors ------------------------------------------------------------ */

/* Borrowed type (CK_TYPE_UNINITIALIZED for NULL). */
CK_API ck_type ck_array_type(const ck_array_preamble *a);
/* The arrmeta (right after the preamble). */
CK_API char *ck_array_arrmeta(const ck_array_preamble *a);
/* Read-only access to the data pointer (NULL for NULL). */
CK_API const char *ck_array_data(const ck_array_preamble *a);
/* The data pointer for writing: CK_ERR_INVALID_STATE unless the array has
 * the WRITE flag ("array is read-only"). */
CK_API ck_status ck_array_writable_data(const ck_array_preamble *a,
                                        char **out_data);
CK_API uint64_t ck_array_flags(const ck_array_preamble *a);
/* Drop the WRITE flag of this array (views made later inherit it).  There
 * is deliberately no way back. */
CK_API ck_status ck_array_set_readonly(ck_array_preamble *a);
/* Drop WRITE and set IMMUTABLE: a promise by the caller that nobody writes
 * the data any more. */
CK_API ck_status ck_array_set_immutable(ck_array_preamble *a);

/* Number of dims (ck_type_ndim of the type; 0 for NULL). */
CK_API size_t ck_array_ndim(const ck_array_preamble *a);

/* Sizes / byte strides of the leading dims: writes min(ndim, max) entries
 * and stores ndim in *out_ndim (may be NULL).  A var dim's size is known
 * only as axis 0 (its element's size); deeper var dims report -1.  A var
 * dim's stride is its elements' stride. */
CK_API ck_status ck_array_shape(const ck_array_preamble *a, intptr_t *out_shape,
                                size_t max, size_t *out_ndim);
CK_API ck_status ck_array_strides(const ck_array_preamble *a,
                                  intptr_t *out_strides, size_t max,
                                  size_t *out_ndim);

/* ---- element setters on 0-d views ---------------------------------------- */

/* For an array whose type is `string` (e.g. a view made by indexing): set
 * its value (see ck_string_assign).  Needs the WRITE flag. */
CK_API ck_status ck_array_string_assign(ck_array_preamble *a, const char *bytes,
                                        size_t len);
/* For an array whose type is `var * T`: allocate `count` zero-filled
 * elements (see ck_var_dim_alloc).  Needs the WRITE flag. */
CK_API ck_status ck_array_var_dim_alloc(ck_array_preamble *a, size_t count);

/* ---- debugging ------------------------------------------------------------- */

/*
 * DyND's debug_repr: address, refcount, type (descriptor pointer and
 * string), flags with their names, the type-specific arrmeta (one block per
 * dim/field: "strided_dim arrmeta / stride: 4 / size: 4"), the data pointer
 * and its reference ("(embedded in array memory)" when NULL).  snprintf rules
 * as ck_memblock_debug_print: writes at most bufsize bytes including the NUL
 * (buf may be NULL when bufsize is 0), *out_len gets the full length.
 */
CK_API ck_status ck_array_debug_repr(const ck_array_preamble *a, char *buf,
                                     size_t bufsize, size_t *out_len);

#if !defined(CK_CFFI_CDEF) && !defined(__cplusplus)
_Static_assert(offsetof(ck_array_preamble, memblock) == 0, "preamble header");
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(offsetof(ck_array_preamble, type) == 8, "preamble type");
_Static_assert(offsetof(ck_array_preamble, data) == 16, "preamble data");
_Static_assert(offsetof(ck_array_preamble, flags) == 24, "preamble flags");
_Static_assert(offsetof(ck_array_preamble, data_ref) == 32, "preamble data_ref");
_Static_assert(sizeof(ck_array_preamble) == 40, "preamble is 40 bytes");
#endif
_Static_assert(sizeof(ck_array_preamble) % 8 == 0, "arrmeta is 8-aligned");
#endif

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ARRAY_H */
