/*
 * ckernel/dictionary.h -- dictionary-encoded (categorical) values.
 *
 * `dictionary[I, V]` (and `dictionary[I, V, ordered]`) is DyND's
 * `categorical`, Arrow's dictionary arrays, pandas' and polars'
 * `Categorical`: each value is an integer index I (int8..int64 or
 * uint8..uint64) into a values array of element type V (strings above all:
 * the repetitive text of a column is stored once).  `ordered` says that the
 * order of the values is the order of the categories (Arrow's
 * ARROW_FLAG_DICTIONARY_ORDERED, pandas' `ordered=True`, polars' Enum).
 *
 * Data: exactly I's data (size and alignment of the index integer).
 * Arrmeta (ck_dictionary_arrmeta): one owned reference to the memblock of
 * the values array -- a ck array (array.h) of one dim, `N * V` or `strided *
 * V` -- or NULL for a dictionary without values.  The values array is
 * shared by every view of the column (slices and indexing copy the
 * reference, never the values).
 *
 * Invariants:
 *   - every index of a valid slot is in [0, number of values): checked by
 *     ck_dictionary_array_new (one vectorised pass) and wherever indices
 *     are read (ck_dictionary_decode, the Python reader).  The Arrow import
 *     is O(1) and does not scan them (as Arrow's cheap validation): a bad
 *     index of an imported column is CK_ERR_INDEX at its first read, and
 *     an export passes the indices on as they came;
 *   - the values hold no nulls: V is not an option type, and an Arrow
 *     dictionary with nulls among its values is refused (a missing value is
 *     a null INDEX: `?dictionary[I, V]`, the option rules of validity.h).
 *
 * V needs a fixed data size and must not be an option, a pattern or another
 * dictionary.  Equality and hashing cover I, V and the ordered flag, not the
 * values themselves (they live in arrmeta, like a string's text).
 */
#ifndef CKERNEL_DICTIONARY_H
#define CKERNEL_DICTIONARY_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arrmeta of `dictionary[I, V]`: the values array's memblock (a
 * ck_array_preamble's first member), one owned reference, or NULL. */
typedef struct ck_dictionary_arrmeta {
  ck_memblock *values;
} ck_dictionary_arrmeta;

/* ---- the type ---------------------------------------------------------------- */

/*
 * `dictionary[index, value]` (`ordered`: `dictionary[index, value, ordered]`).
 * `index` is a signed or unsigned integer id (CK_TYPE_INT8..CK_TYPE_UINT64);
 * `value` as described above.  CK_ERR_TYPE otherwise, naming the type.  New
 * reference in *out; takes its own reference to value.
 */
CK_API ck_status ck_dictionary_type_new(ck_type_id index, ck_type value, bool ordered,
                                        ck_type *out);

/* True if `t` is a dictionary type (false for NULL and builtins). */
CK_API bool ck_type_is_dictionary(ck_type t);
/* The index id, CK_TYPE_UNINITIALIZED for any other type. */
CK_API ck_type_id ck_dictionary_index_id(ck_type t);
/* The value type (borrowed), CK_TYPE_UNINITIALIZED for any other type. */
CK_API ck_type ck_dictionary_value_type(ck_type t);
/* The ordered flag, false for any other type. */
CK_API bool ck_dictionary_ordered(ck_type t);

/* ---- arrays ------------------------------------------------------------------ */

/*
 * A dictionary column over existing memory: `indices` is a one-dim array of
 * integers (`N * I`, `strided * I`, or with nulls `strided * ?I`), `values`
 * a one-dim array of V without nulls.  The result has type `strided *
 * dictionary[I, V(, ordered)]` (`strided * ?dictionary[...]` for option
 * indices, sharing their validity bitmap), views the indices' data (no copy;
 * it keeps their owner alive and takes their access flags) and holds a
 * reference to `values` (no copy either).  Every valid index is checked:
 * one outside [0, len(values)) is CK_ERR_INDEX naming its position and
 * value.  Bad shapes and types are CK_ERR_TYPE.  New array in *out.
 */
CK_API ck_status ck_dictionary_array_new(ck_array_preamble *indices,
                                         ck_array_preamble *values, bool ordered,
                                         ck_array_preamble **out);

/* The values array of a one-dim dictionary column `a` (borrowed; NULL for a
 * column without values), CK_ERR_TYPE when `a` is not one. */
CK_API ck_status ck_dictionary_array_values(const ck_array_preamble *a,
                                            ck_array_preamble **out_values);

/* The indices of a one-dim dictionary column as a `strided * I` (or
 * `strided * ?I`) view of the same memory.  New array in *out. */
CK_API ck_status ck_dictionary_array_indices(ck_array_preamble *a,
                                             ck_array_preamble **out);

/*
 * The decoded column: a new `strided * V` (`strided * ?V` for null indices;
 * a null slot holds zero bytes) array whose element i is values[index i].
 * Variable-sized values (strings, bytes, var dims) are not copied: the
 * result's arrmeta shares the values' arenas.  An index out of range is
 * CK_ERR_INDEX naming its position.  New array in *out.
 */
CK_API ck_status ck_dictionary_decode(const ck_array_preamble *a, ck_array_preamble **out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_DICTIONARY_H */
