/*
 * ckernel/arrow.h -- arrays to and from the Arrow C data interface.
 *
 * The Arrow C data interface (ArrowSchema, ArrowArray), its stream interface
 * (ArrowArrayStream) and its device interface (ArrowDeviceArray) are
 * published, ABI-stable structs.  They are declared here behind the guards
 * the specification recommends (ARROW_C_DATA_INTERFACE,
 * ARROW_C_STREAM_INTERFACE, ARROW_C_DEVICE_DATA_INTERFACE), so a program that
 * also includes Arrow's or nanoarrow's declarations sees them once.  The
 * library depends on no Arrow implementation.
 *
 * Mapping (export: ck type -> Arrow format; import: the reverse):
 *
 *   bool                          <-> "b" (bit-packed in Arrow: a copy)
 *   int8..uint64, float16..64     <-> "c" "C" "s" "S" "i" "I" "l" "L" "e" "f" "g"
 *   string                        <-> "U" large_utf8 (default: every Arrow
 *                                     consumer's kernels take it; the text is
 *                                     copied once), "u" utf8, "vu" string_view
 *                                     (asked for: views into the arena, no copy)
 *   bytes                         <-> "Z" large_binary (default), "z" binary,
 *                                     "vz" binary_view
 *   var * T                       <-> "+l" list (default), "+L" large_list;
 *                                     import also "+vl" / "+vL" (list views)
 *   N * T (and inner strided dims) <-> "+w:N" fixed_size_list
 *   {a: T, ...}                   <-> "+s" struct
 *   complex64/128, pointers       ->  refused (no Arrow type): CK_ERR_NOT_SUPPORTED
 *
 * An array exports as one Arrow array over its outermost dim: `strided *
 * int32` of 5 elements is an int32 array of length 5; `strided * strided *
 * float64` of shape (2, 3) a fixed_size_list<3>(float64) of length 2 (any
 * number of dims: nested fixed-size lists); a 0-d array is refused.
 * Imports give a `strided * T` array over the Arrow array's elements.
 *
 * Zero-copy:
 *   export -- numeric buffers of dims whose elements are contiguous are
 *     shared (the exported array holds a reference to the ck array, dropped
 *     by its release callback; every node holds its own, so a consumer may
 *     move children out); strings and bytes export as views whose variadic
 *     buffers are the chunks of their arena (the text is not copied; strings
 *     of at most 12 bytes are inlined in the views, others point into the
 *     chunks; text found in no chunk is copied into a buffer of the export).
 *     utf8/large_utf8/binary, lists, bools and non-contiguous numbers are
 *     copied.  Writes made to the ck array after the export show through the
 *     shared numeric buffers (as with NumPy views); nothing else changes.
 *   import -- the ArrowArray is moved into an external memblock whose
 *     release calls its release callback.  A primitive array without nulls,
 *     or fixed-size lists of one at any depth, becomes a view of the leaf
 *     buffer (the memblock is the data reference);
 *     strings keep their text in Arrow's buffers (new {begin, end} slots
 *     point into them; the string arrmeta's blockref is the memblock), as do
 *     the elements of a list of primitives without nulls (the var dim's
 *     blockref).  Everything else is copied into the new array's own memory
 *     and arenas.  Imported arrays are read-only (Arrow data is immutable),
 *     and their zero-copy strings and var dims have no arena to write into:
 *     copy them (ck_array_assign into a new array) to change them.
 *
 * Nulls are option types `?T` (ckernel/validity.h).  Without a fill value,
 * an import gives `?T` to every number, bool, string, bytes, struct and list
 * node whose array has a validity buffer and a null count other than 0
 * (-1, unknown, included): `N * ?float64`, `N * ?var * ?int64` (null rows
 * and null elements), `N * ?{x: ?int32}`.  Nodes without a validity buffer
 * (or with null count 0) keep their plain type and import as before
 * (zero-copy where they were), so a data set without nulls sees no change.
 * Arrow's validity bitmaps are shared, never copied: the option arrmeta
 * points at the buffer (at the node's bit offset, any value) and holds a
 * reference to the memblock that owns the ArrowArray.  Numbers with nulls
 * at the top level share their values too; bools, strings and the rest are
 * filled as without nulls (a null slot holds zero bytes, a null row no
 * elements).  The root's null_count, when known, must agree with its bitmap
 * (counted, never trusted): CK_ERR_INVALID_ARGUMENT otherwise.  Fixed-size
 * lists still refuse nulls (CK_ERR_VALUE naming the field and the count).
 * A stream whose arrays differ in nulls concatenates into `N * ?T` when any
 * top-level part is an option.  With a fill value the import fills instead
 * (as before options): null leaf values (numbers, bools, strings, bytes)
 * take it (converted to each leaf's type as ck_array_assign does) and null
 * lists become empty lists; null structs and fixed-size lists are refused
 * even then.
 * Exports of option arrays carry the validity buffer and the exact null
 * count on each option node (none when no slot is null): the array's own
 * bitmap, shared, when its slots are a run whose first bit starts a byte
 * (Arrow applies one offset, here 0, to every buffer); a copy shifted into
 * place otherwise; slot by slot for other layouts (steps, transposes, list
 * elements).  Every exported field is flagged nullable.
 *
 * Requested schemas (the PyCapsule interface's `requested_schema`) choose
 * between encodings of the same data: string/bytes encodings, list offset
 * widths.  A request for other leaf types (int32 for an int64 array) is
 * ignored (the consumer gets the array's own type and may cast); a request
 * of another structure (another nesting, another number or name of struct
 * fields, another fixed size) is CK_ERR_TYPE naming the field.
 *
 * Ownership: export functions fill caller-provided structs (the caller
 * becomes the owner and calls their release); on failure the structs are
 * left released (release == NULL) and nothing leaks.  Import functions
 * read the schema (the caller keeps and releases it) and MOVE the array or
 * stream: it is released by the library on success and on failure alike,
 * and its `release` is NULL when the call returns.
 */
#ifndef CKERNEL_ARROW_H
#define CKERNEL_ARROW_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the Arrow C data interface (ABI-stable, from the specification) ---- */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Array type description */
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;
  /* Release callback */
  void (*release)(struct ArrowSchema *);
  /* Opaque producer-specific data */
  void *private_data;
};

struct ArrowArray {
  /* Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;
  /* Release callback */
  void (*release)(struct ArrowArray *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  /* 0 or an errno value; the schema of every array of the stream */
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  /* 0 or an errno value; out->release == NULL marks the end */
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  /* the message of the last error (valid until the next call), or NULL */
  const char *(*get_last_error)(struct ArrowArrayStream *);
  /* Release callback */
  void (*release)(struct ArrowArrayStream *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
  struct ArrowArray array;
  int64_t device_id;
  ArrowDeviceType device_type;
  void *sync_event;
  int64_t reserved[3];
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#if !defined(CK_CFFI_CDEF) && !defined(__cplusplus) && UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct ArrowSchema) == 72, "ArrowSchema is 9 words");
_Static_assert(sizeof(struct ArrowArray) == 80, "ArrowArray is 10 words");
_Static_assert(sizeof(struct ArrowArrayStream) == 40, "ArrowArrayStream is 5 words");
_Static_assert(sizeof(struct ArrowDeviceArray) == 128, "ArrowDeviceArray");
#endif

/* ---- export --------------------------------------------------------------- */

/*
 * The Arrow schema `a` (at least one dim) exports as, shaped by `requested`
 * (may be NULL) as described above; the sizes of inner strided dims come
 * from the array.  Fills *out (the caller releases it).  The field name of
 * the top level is "".  (ck_arrow_export may switch 32-bit offsets to 64
 * bits for very large data; its own schema then says so.)
 */
CK_API ck_status ck_arrow_export_schema(const ck_array_preamble *a,
                                        const struct ArrowSchema *requested,
                                        struct ArrowSchema *out);

/*
 * Export `a` (at least one dim) as an Arrow array and its schema, shaped by
 * `requested` (may be NULL).  The schema says what the array holds (the
 * export switches lists and utf8 to their 64-bit-offset forms by itself
 * when 32-bit offsets cannot hold the data).  The ArrowArray keeps `a`'s
 * memory alive (a reference, dropped by its release).  Fills *out_schema and
 * *out_array (either may be NULL when not wanted).
 */
CK_API ck_status ck_arrow_export(ck_array_preamble *a,
                                 const struct ArrowSchema *requested,
                                 struct ArrowSchema *out_schema,
                                 struct ArrowArray *out_array);

/* The same as an ArrowDeviceArray on the CPU (device_type ARROW_DEVICE_CPU,
 * device_id -1, no sync event). */
CK_API ck_status ck_arrow_export_device(ck_array_preamble *a,
                                        const struct ArrowSchema *requested,
                                        struct ArrowSchema *out_schema,
                                        struct ArrowDeviceArray *out_array);

/*
 * A stream of one array: `a` exported as by ck_arrow_export.  get_schema
 * gives copies of the array's schema; the first get_next moves the array
 * out, the next ones mark the end.  Fills *out (the caller releases it).
 */
CK_API ck_status ck_arrow_export_stream(ck_array_preamble *a,
                                        const struct ArrowSchema *requested,
                                        struct ArrowArrayStream *out);

/* ---- import --------------------------------------------------------------- */

/* The element type an Arrow schema imports as (`int32`, `var * string`,
 * `{x: float64, s: string}`).  New reference in *out.  Unknown or
 * unsupported formats (the null type, fixed-size binary, dictionaries,
 * temporal types, decimals, unions, maps, run-end encoded) and extension
 * types (an "ARROW:extension:name" in the metadata, e.g. arrow.uuid) are
 * CK_ERR_NOT_SUPPORTED naming the field, the Arrow type, its format and the
 * supported types, in one line.  Struct fields keep their Arrow names when
 * ckernels can hold them (non-empty UTF-8 without control characters, not
 * an earlier field's name); any other name -- Arrow allows empty and
 * duplicate ones -- becomes "_i" (i the field's position, '_' appended
 * while taken).  ck_arrow_export asked for such a schema writes the
 * requested names back. */
CK_API ck_status ck_arrow_schema_type(const struct ArrowSchema *schema,
                                      ck_type *out);

/*
 * Import `array` (described by `schema`) as a new read-only `strided * T`
 * array (T from ck_arrow_schema_type), zero-copy where described above.
 * `fill` (may be NULL) is a 0-d array whose value replaces nulls.  The
 * array is moved: released by the call whatever its result.  Malformed
 * input (a released schema or array, negative lengths or offsets, wrong
 * buffer or child counts, NULL buffers, offsets out of order or out of
 * range, view indices past their buffers, invalid UTF-8 in strings) is
 * CK_ERR_INVALID_ARGUMENT or CK_ERR_INVALID_STATE with the field's name,
 * never a crash (the library cannot know the size of a foreign buffer: the
 * offsets into a utf8 data buffer are checked for order, not against it).
 * Every offset, size and index is checked with overflow-safe arithmetic
 * before use: list and list-view rows (offset >= 0, size >= 0, offset +
 * size within int64 and within the child), null_count <= length, and
 * (offset + length [+ 1]) * width within the address space.
 */
CK_API ck_status ck_arrow_import(const struct ArrowSchema *schema,
                                 struct ArrowArray *array,
                                 const ck_array_preamble *fill,
                                 ck_array_preamble **out);

/* The same for an ArrowDeviceArray; only CPU memory (ARROW_DEVICE_CPU and
 * ARROW_DEVICE_CUDA_HOST) is accepted, other devices are
 * CK_ERR_NOT_SUPPORTED.  The array is moved as in ck_arrow_import. */
CK_API ck_status ck_arrow_import_device(const struct ArrowSchema *schema,
                                        struct ArrowDeviceArray *array,
                                        const ck_array_preamble *fill,
                                        ck_array_preamble **out);

/*
 * Import every array of `stream` as ONE new `strided * T` array.  A stream
 * of one array is imported as ck_arrow_import does (zero-copy where it
 * can); several arrays are concatenated: each is imported, then copied into
 * the result (one pass over all the data, text included).  An empty stream
 * gives an array of length 0.  The stream is moved: released by the call
 * whatever its result.  A failing get_schema/get_next is CK_ERR_BACKEND with
 * the stream's own message.
 */
CK_API ck_status ck_arrow_import_stream(struct ArrowArrayStream *stream,
                                        const ck_array_preamble *fill,
                                        ck_array_preamble **out);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_ARROW_H */
