/*
 * ckernel/types.h -- the type system.
 *
 * A type is a `ck_type`: a pointer-sized value.  Builtin scalar types are
 * encoded directly in the value as small integers (their ck_type_id, below
 * CK_BUILTIN_TYPE_ID_MASK), as DyND did: they need no allocation and no
 * reference counting, and ck_type_incref/decref ignore them.  Every other
 * type is a pointer to a reference-counted descriptor (ck_type_desc) with a
 * small vtable.
 *
 * Types are immutable after construction, so a descriptor may be shared by
 * any number of threads; only its reference count changes (atomically, with
 * the memblock protocol: relaxed increment, release decrement, acquire fence
 * before the free).
 *
 * Data, arrmeta.  A value of a type is `data_size` bytes of data aligned to
 * `data_alignment`.  Besides the data, every array carries the type's
 * "arrmeta" (array metadata: sizes, strides, references to the memory that
 * variable-sized elements live in), `arrmeta_size` bytes stored right after
 * the array preamble (array.h).  Builtin scalars have no arrmeta.  The
 * layouts of every kind are given below, next to the constructors, as C
 * structs; arrmeta of a compound type is its own part followed by the
 * arrmeta of its element(s).  Every arrmeta size is a multiple of
 * sizeof(void *), so nested arrmeta stays pointer-aligned.
 *
 * The rules that keep every layout computable from the type alone:
 *   - A strided dim (`strided * T`) has no fixed data size: its size lives in
 *     arrmeta.  Such a type is marked CK_TYPE_FLAG_ARRMETA_SIZED, and may only
 *     be the element of another strided dim: fixed dims, var dims, struct
 *     fields and pointer targets need an element with a fixed data size.  So
 *     strided dims are always the outermost dims of a type.
 *   - Nesting is at most CK_TYPE_MAX_DEPTH levels (a builtin is 1 level, each
 *     constructor adds one), which bounds every recursion over types.
 *
 * Ownership conventions (every function states its own):
 *   - Constructors return a NEW reference (refcount 1) in *out, owned by the
 *     caller, and take their OWN new reference to every element type they
 *     store: the caller keeps (and must still drop) its references.
 *   - Accessors return BORROWED references, valid as long as the type they
 *     were read from is alive.
 *   - On failure, *out is set to CK_TYPE_UNINITIALIZED (NULL) and nothing
 *     is leaked.
 */
#ifndef CKERNEL_TYPES_H
#define CKERNEL_TYPES_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/memblock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Type ids.  Values are ABI.  Builtin scalars are 1..CK_TYPE_COMPLEX128. */
typedef enum ck_type_id {
  CK_TYPE_UNINITIALIZED = 0,
  CK_TYPE_BOOL = 1,
  CK_TYPE_INT8 = 2,
  CK_TYPE_INT16 = 3,
  CK_TYPE_INT32 = 4,
  CK_TYPE_INT64 = 5,
  CK_TYPE_UINT8 = 6,
  CK_TYPE_UINT16 = 7,
  CK_TYPE_UINT32 = 8,
  CK_TYPE_UINT64 = 9,
  CK_TYPE_FLOAT16 = 10,
  CK_TYPE_FLOAT32 = 11,
  CK_TYPE_FLOAT64 = 12,
  CK_TYPE_COMPLEX64 = 13,
  CK_TYPE_COMPLEX128 = 14,
  CK_BUILTIN_TYPE_COUNT = 15, /* ids 1..14 are the builtin scalars */
  /* Descriptor (non-builtin) types. */
  CK_TYPE_FIXED_DIM = 64,
  CK_TYPE_STRIDED_DIM = 65,
  CK_TYPE_VAR_DIM = 66,
  CK_TYPE_STRING = 67,
  CK_TYPE_BYTES = 68,
  CK_TYPE_STRUCT = 69,
  CK_TYPE_POINTER = 70,
  /* Pattern types (signatures only, never the type of an array). */
  CK_TYPE_SYMBOLIC_DIM = 71,
  /* `?T`: a T or a null, with an Arrow validity bitmap (ABI 3). */
  CK_TYPE_OPTION = 72,
  /* Time types (ABI 4; ckernel/datetime.h): instants, durations, calendar
   * dates, times of day. */
  CK_TYPE_DATETIME = 80,
  CK_TYPE_TIMEDELTA = 81,
  CK_TYPE_DATE = 82,
  CK_TYPE_TIME = 83,
  /* `dictionary[I, V]`: indices into a values array (ABI 4;
   * ckernel/dictionary.h). */
  CK_TYPE_DICTIONARY = 84
} ck_type_id;

/* Builtin ids live in the low bits of a ck_type value; a ck_type is builtin
 * iff (value & ~CK_BUILTIN_TYPE_ID_MASK) == 0.  Descriptors are heap
 * pointers, always above the mask. */
#define CK_BUILTIN_TYPE_ID_MASK ((uintptr_t)0x3f)

typedef const struct ck_type_desc *ck_type;

#ifndef CK_CFFI_CDEF
/* The ck_type value of a builtin scalar id. */
#define CK_BUILTIN(id) ((ck_type)(uintptr_t)(id))
static inline bool ck_type_is_builtin(ck_type t) {
  return ((uintptr_t)t & ~CK_BUILTIN_TYPE_ID_MASK) == 0;
}
#endif

/* Limits. */
enum {
  CK_TYPE_MAX_DEPTH = 64,      /* nesting levels of one type (builtin = 1)  */
  CK_BYTES_MAX_ALIGN = 4096,   /* largest alignment of bytes[align=N]       */
  CK_DIM_NAME_MAX = 64         /* longest dimension variable name (bytes)   */
};

/* Flags of a descriptor (ck_type_flags; builtins have none). */
enum {
  CK_TYPE_FLAG_DIM = 1,            /* fixed, strided or var dim              */
  CK_TYPE_FLAG_ARRMETA_SIZED = 2,  /* data size known only from arrmeta      */
  CK_TYPE_FLAG_BLOCKREF = 4,       /* arrmeta holds memblock references      */
  CK_TYPE_FLAG_PATTERN = 8,        /* holds a dimension variable: signatures
                                      only, no array has this type          */
  CK_TYPE_FLAG_OPTION = 16         /* is or holds an option type `?T`        */
};

/* ---- layouts ------------------------------------------------------------ */

/* Arrmeta of a fixed dim (`N * T`) and of a strided dim (`strided * T`),
 * followed by T's arrmeta.  `size` is the number of elements (always N for a
 * fixed dim), `stride` the distance in bytes between elements (any value,
 * negative included, in views).  Data: `size` elements of T at `stride`
 * apart.  A fixed dim's data_size is N * T's data size (the C-contiguous
 * default, which constructors and struct layouts use); a strided dim has no
 * data size of its own (0, CK_TYPE_FLAG_ARRMETA_SIZED). */
typedef struct ck_dim_arrmeta {
  intptr_t size;
  intptr_t stride;
} ck_dim_arrmeta;

/* Data of a var dim (`var * T`): `size` elements, the first at
 * `begin + arrmeta.offset`, the others `arrmeta.stride` bytes apart.
 * An empty element is {NULL, 0}. */
typedef struct ck_var_dim_data {
  char *begin;
  size_t size;
} ck_var_dim_data;

/* Arrmeta of a var dim, followed by T's arrmeta.  `blockref` is the arena
 * (pod allocator memblock) the elements are allocated from; one reference is
 * owned by the arrmeta.  `offset` is added to every element's `begin` (views
 * that index an inner dimension of every row move it instead of the data). */
typedef struct ck_var_dim_arrmeta {
  ck_memblock *blockref;
  intptr_t stride;
  intptr_t offset;
} ck_var_dim_arrmeta;

/* Data of a string (UTF-8) and of bytes: [begin, end), NOT NUL-terminated,
 * may contain NUL bytes.  The empty value is {NULL, NULL} or begin == end.
 * The bytes live in the arena referenced by the arrmeta. */
typedef struct ck_string {
  char *begin;
  char *end;
} ck_string;

/* Arrmeta of a string and of bytes: the arena the bytes are allocated from
 * (one owned reference). */
typedef struct ck_string_arrmeta {
  ck_memblock *blockref;
} ck_string_arrmeta;

typedef ck_string ck_bytes;
typedef ck_string_arrmeta ck_bytes_arrmeta;

/* Data of a pointer (`pointer[T]`): a `char *`; the target is at
 * `pointer + arrmeta.offset`.  Arrmeta: the memblock owning the target
 * memory (one owned reference, NULL while the pointer is NULL), followed by
 * T's arrmeta. */
typedef struct ck_pointer_arrmeta {
  ck_memblock *blockref;
  intptr_t offset;
} ck_pointer_arrmeta;

/* Arrmeta of an option `?T`, followed by T's arrmeta.  Data: exactly T's
 * data (same size and alignment; the bytes under a null are unspecified and
 * never read as a value).  Whether a slot holds a value is one bit of an
 * Arrow validity bitmap: LSB first within each byte, 1 = valid, 0 = null.
 *
 * The bitmap is keyed by data ADDRESS, so that every view (index, slice,
 * transpose, broadcast, struct field) that copies this arrmeta still finds
 * the right bit without the dims knowing about it: the slot whose data is
 * at address p has bit number
 *
 *     bit_offset + (p - origin) / step,   for 0 <= (p - origin) / step < length
 *
 * and (p - origin) a multiple of step.  `origin` is the data address of
 * slot 0, `step` (> 0) the bytes between consecutive slots (the element size
 * for `N * ?T`, the struct size for a field of a struct array), `length` the
 * number of slots the bitmap covers.  `bits == NULL` means every slot is
 * valid (Arrow's absent validity buffer); then blockref is NULL and origin,
 * step, length are ignored.  `blockref` owns the bitmap memory (one
 * reference): a bitmap the library allocates is a fixed-size POD memblock
 * released with the last array or view referring to it; a foreign one (an
 * Arrow validity buffer) is held by an external memblock whose release
 * callback keeps the producer alive.  The accessors are in
 * ckernel/validity.h. */
typedef struct ck_option_arrmeta {
  ck_memblock *blockref;
  uint8_t *bits;
  intptr_t bit_offset;
  char *origin;
  intptr_t step;
  intptr_t length;
} ck_option_arrmeta;

/* Arrmeta of a struct with n fields: n `uintptr_t` data offsets (initialised
 * from the type's field_data_offsets), followed by each field's arrmeta at
 * the type's field_arrmeta_offsets (measured from the start of the struct's
 * arrmeta).  Data: fields at C-like offsets with natural alignment, size
 * rounded up to the largest field alignment; an empty struct has size 0,
 * alignment 1. */

/* ---- descriptors ------------------------------------------------------- */

typedef struct ck_type_desc ck_type_desc;

/* The vtable of a descriptor kind.  Internal to the library in the sense
 * that callers use the ck_type_* functions below, which also handle the
 * builtins; it is public so that generated code can read it. */
typedef struct ck_type_vtable {
  const char *name; /* "fixed_dim", "string", ... */
  /* Construct arrmeta in place for default C-contiguous data (see
   * ck_type_arrmeta_construct).  All-or-nothing: on failure nothing is left
   * to destruct. */
  ck_status (*arrmeta_construct)(ck_type self, char *arrmeta,
                                 const intptr_t *shape, size_t ndim);
  /* Drop the references held by arrmeta. */
  void (*arrmeta_destruct)(ck_type self, char *arrmeta);
  /* Copy arrmeta, taking new references to its memblocks. */
  void (*arrmeta_copy)(ck_type self, char *dst, const char *src);
  /* Append the canonical type string at buf + *pos (ck__appendf rules). */
  void (*print)(ck_type self, char *buf, size_t bufsize, size_t *pos);
  /* Append a debug description of arrmeta, one line per field. */
  void (*arrmeta_debug_print)(ck_type self, const char *arrmeta, char *buf,
                              size_t bufsize, size_t *pos, int indent);
  /* Structural equality with a descriptor of the same id. */
  bool (*equal)(ck_type self, ck_type other);
  /* Hash of the type (computed once at construction, cached in `hash`). */
  uint64_t (*hash)(ck_type self);
} ck_type_vtable;

/* A non-builtin type.  Read-only after construction (refcount aside).
 * Fields that do not apply to a kind are 0 / NULL. */
struct ck_type_desc {
  CK_ATOMIC(uint32_t) refcount;
  uint32_t id;                 /* ck_type_id                               */
  uint32_t flags;              /* CK_TYPE_FLAG_*                           */
  uint32_t depth;              /* nesting levels, 2..CK_TYPE_MAX_DEPTH     */
  size_t data_size;            /* 0 when CK_TYPE_FLAG_ARRMETA_SIZED        */
  size_t data_alignment;       /* power of two                             */
  size_t arrmeta_size;         /* bytes of arrmeta, multiple of sizeof(ptr)*/
  uint64_t hash;               /* ck_type_hash, computed once              */
  const ck_type_vtable *vtable;
  ck_type element;             /* dims: element type; pointer: target      */
  intptr_t fixed_size;         /* fixed dim: N; time types: ck_time_unit   */
  size_t target_alignment;     /* bytes: alignment of the bytes            */
  size_t field_count;          /* struct                                   */
  const char *const *field_names;        /* NUL-terminated UTF-8 names     */
  const ck_type *field_types;
  const uintptr_t *field_data_offsets;
  const size_t *field_arrmeta_offsets;
  const char *dim_name;        /* symbolic dim: the variable ("N"), stored
                                  after the descriptor; datetime: its time
                                  zone (or NULL), stored the same way      */
};

/* ---- reference counting and generic queries ----------------------------- */

/* Add / drop a reference.  No-ops for builtins (and NULL).  Cannot fail. */
CK_API void ck_type_incref(ck_type t);
CK_API void ck_type_decref(ck_type t);

/* Number of descriptors created and not yet freed, process-wide (tests). */
CK_API int64_t ck_type_live_count(void);

/* True if `t` is a builtin id 1..14 or a descriptor; false for NULL /
 * CK_TYPE_UNINITIALIZED and for unused builtin ids. */
CK_API bool ck_type_is_valid(ck_type t);

/* Queries.  For an invalid type: id CK_TYPE_UNINITIALIZED, sizes 0,
 * alignment 1.  A builtin's data size and alignment are those of its C type
 * (bool: 1; float16: 2; complex64: 8 aligned 4; complex128: 16 aligned 8);
 * its arrmeta size is 0 and its flags 0. */
CK_API ck_type_id ck_type_id_of(ck_type t);
CK_API size_t ck_type_data_size(ck_type t);
CK_API size_t ck_type_data_alignment(ck_type t);
CK_API size_t ck_type_arrmeta_size(ck_type t);
CK_API uint32_t ck_type_flags(ck_type t);

/* A short constant name for an id ("int32", "fixed_dim"), or "invalid". */
CK_API const char *ck_type_id_name(ck_type_id id);

/* The kind of a builtin scalar id, as NumPy's dtype kinds: 'b' bool, 'i'
 * signed integer, 'u' unsigned integer, 'f' real float, 'c' complex; 0 for
 * any other id.  Its width in bits is 8 * ck_type_data_size(CK_BUILTIN(id)). */
CK_API char ck_type_id_kind(ck_type_id id);

/* Structural equality (same printed form <=> equal) and a hash consistent
 * with it.  Invalid types are equal only to themselves. */
CK_API bool ck_type_equal(ck_type a, ck_type b);
CK_API uint64_t ck_type_hash(ck_type t);

/* Number of leading dims (fixed/strided/var chain from the outside). */
CK_API size_t ck_type_ndim(ck_type t);

/* Element type of a dim, target of a pointer (borrowed), else
 * CK_TYPE_UNINITIALIZED. */
CK_API ck_type ck_type_element(ck_type t);

/* The innermost non-dim type under the leading dims (borrowed; `t` itself
 * when it is not a dim). */
CK_API ck_type ck_type_dtype(ck_type t);

/* N of a fixed dim, -1 for any other type. */
CK_API intptr_t ck_fixed_dim_size(ck_type t);

/* The variable of a symbolic dim ("N" of `N * T`; borrowed, NUL-terminated),
 * NULL for any other type. */
CK_API const char *ck_symbolic_dim_name(ck_type t);

/* Alignment parameter of a bytes type, 0 for any other type. */
CK_API size_t ck_bytes_type_alignment(ck_type t);

/* Struct fields: count (0 for non-structs), and field i's name (borrowed
 * NUL-terminated UTF-8), type (borrowed), data offset and arrmeta offset.
 * CK_ERR_TYPE for a non-struct, CK_ERR_INDEX for i >= count.  Any out
 * pointer may be NULL. */
CK_API size_t ck_struct_field_count(ck_type t);
CK_API ck_status ck_struct_field(ck_type t, size_t i, const char **out_name,
                                 ck_type *out_type, size_t *out_data_offset,
                                 size_t *out_arrmeta_offset);
/* Index of the field named `name`, CK_ERR_INDEX if there is none. */
CK_API ck_status ck_struct_field_index(ck_type t, const char *name,
                                       size_t *out_index);

/* ---- constructors -------------------------------------------------------- */

/* `N * elem`: N >= 0, elem of fixed data size, N * data size <= PTRDIFF_MAX
 * (else CK_ERR_OVERFLOW).  New reference in *out; takes its own reference to
 * elem. */
CK_API ck_status ck_fixed_dim_type_new(intptr_t size, ck_type elem, ck_type *out);

/* `strided * elem` (any elem).  New reference in *out; own ref to elem. */
CK_API ck_status ck_strided_dim_type_new(ck_type elem, ck_type *out);

/* `var * elem`, elem of fixed data size.  New reference; own ref to elem. */
CK_API ck_status ck_var_dim_type_new(ck_type elem, ck_type *out);

/*
 * `NAME * elem`: a symbolic dim, i.e. a dimension variable -- a pattern
 * type for kernel signatures (`float64(N * float64, N * float64)`): its size
 * is bound when the kernel is applied, and every use of the same name must
 * agree.  `name` is an upper-case identifier, [A-Z][A-Za-z0-9_]*, at most
 * CK_DIM_NAME_MAX - 1 bytes (it is copied).  `elem` follows the rules of a
 * fixed dim's element, except that a pattern element (another symbolic dim,
 * `M * N * T`) is accepted.  The result, and every type containing it, has
 * CK_TYPE_FLAG_PATTERN and CK_TYPE_FLAG_ARRMETA_SIZED (no data size): arrays
 * refuse it (ck_type_arrmeta_construct is CK_ERR_TYPE "... is a pattern
 * type ...").  Its arrmeta layout is a fixed dim's, so a signature walks the
 * arrmeta of the arrays it matches.  Types with pattern elements are
 * accepted by the dim, struct and pointer constructors (a pattern has no
 * data size to check).  New reference in *out; own ref to elem.
 */
CK_API ck_status ck_symbolic_dim_type_new(const char *name, ck_type elem, ck_type *out);

/* `string` (UTF-8).  New reference in *out. */
CK_API ck_status ck_string_type_new(ck_type *out);

/* `bytes[align=A]`, A a power of two in [1, CK_BYTES_MAX_ALIGN]: the
 * alignment of the bytes in the arena.  New reference in *out. */
CK_API ck_status ck_bytes_type_new(size_t align, ck_type *out);

/* A struct of `nfields` fields (0 allowed).  `names` are NUL-terminated,
 * non-empty, valid UTF-8 without control characters, pairwise distinct;
 * they are copied.  Field types need a fixed data size.  New reference in
 * *out; takes its own reference to each field type. */
CK_API ck_status ck_struct_type_new(size_t nfields, const char *const *names,
                                    const ck_type *types, ck_type *out);

/* `pointer[target]`, target of fixed data size.  New reference; own ref. */
CK_API ck_status ck_pointer_type_new(ck_type target, ck_type *out);

/*
 * `?value`: the option type -- a value of `value` or a null (datashape,
 * DyND and xnd's `?T`; Arrow's nullable field).  `value` needs a fixed,
 * nonzero data size (numbers, bool, string, bytes, structs, fixed and var
 * dims: `?var * int64` is a null-able row) and must not itself be an option
 * (`??T` is CK_ERR_TYPE).  Patterns are accepted (signatures).  The result
 * has value's data size and alignment, CK_TYPE_FLAG_OPTION and
 * CK_TYPE_FLAG_BLOCKREF (its arrmeta holds the bitmap's memblock), and every
 * type built around it inherits CK_TYPE_FLAG_OPTION.  ck_type_element of it
 * is `value` (borrowed).  New reference in *out; own reference to value.
 */
CK_API ck_status ck_option_type_new(ck_type value, ck_type *out);

/* True if `t` is an option type `?T` (false for NULL and builtins). */
CK_API bool ck_type_is_option(ck_type t);

/* ---- type strings ------------------------------------------------------- */

/* Parse a datashape type string (grammar: docs/type-grammar.md).  New
 * reference in *out.  Malformed text is CK_ERR_PARSE with a message giving
 * the 0-based byte column, the offending text and what was expected:
 * "ck_type_parse: at column 4: expected a type after '*', found ')'".
 * Out of memory is CK_ERR_NO_MEMORY. */
CK_API ck_status ck_type_parse(const char *text, ck_type *out);

/* The same for `len` bytes that need not be NUL-terminated (a NUL byte in
 * them is an error). */
CK_API ck_status ck_type_parse_n(const char *text, size_t len, ck_type *out);

/* The canonical string of `t`.  Writes at most `bufsize` bytes including the
 * terminating NUL (snprintf rules; buf may be NULL when bufsize is 0) and
 * stores in *out_len (if not NULL) the length of the full text. */
CK_API ck_status ck_type_print(ck_type t, char *buf, size_t bufsize,
                               size_t *out_len);

/* ---- arrmeta ------------------------------------------------------------- */

/*
 * Construct arrmeta at `arrmeta` (ck_type_arrmeta_size(t) bytes) for
 * C-contiguous data.  `shape` gives the sizes of the leading fixed/strided
 * dims, outermost first: every strided dim needs an entry; trailing fixed
 * dims may be left out (ndim = 0 is fine for a type without strided dims);
 * a given fixed size must equal N.  Var dims take no entry.  Strings, bytes
 * and var dims get a new, empty pod arena as blockref; pointers a NULL
 * blockref.  All-or-nothing: on failure nothing needs destructing.
 */
CK_API ck_status ck_type_arrmeta_construct(ck_type t, char *arrmeta,
                                           const intptr_t *shape, size_t ndim);
/* Drop the references held by constructed arrmeta.  Cannot fail. */
CK_API void ck_type_arrmeta_destruct(ck_type t, char *arrmeta);
/* Copy constructed arrmeta to `dst`, taking new references.  Cannot fail. */
CK_API void ck_type_arrmeta_copy(ck_type t, char *dst, const char *src);

/* ---- element helpers ----------------------------------------------------- */

/* True if [bytes, bytes + len) is well-formed UTF-8 (no overlongs, no
 * surrogates, nothing above U+10FFFF). */
CK_API bool ck_utf8_validate(const char *bytes, size_t len);

/* Setting one string, bytes or var dim element in its arena:
 * ckernel/varlen_element.h. */

#if !defined(CK_CFFI_CDEF) && !defined(__cplusplus)
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(ck_dim_arrmeta) == 16, "dim arrmeta is {size, stride}");
_Static_assert(sizeof(ck_var_dim_data) == 16, "var data is {begin, size}");
_Static_assert(sizeof(ck_var_dim_arrmeta) == 24, "var arrmeta is 3 words");
_Static_assert(offsetof(ck_var_dim_arrmeta, offset) == 16, "var offset");
_Static_assert(sizeof(ck_string) == 16, "string data is {begin, end}");
_Static_assert(sizeof(ck_string_arrmeta) == 8, "string arrmeta is {blockref}");
_Static_assert(sizeof(ck_pointer_arrmeta) == 16, "pointer arrmeta");
_Static_assert(sizeof(ck_option_arrmeta) == 48, "option arrmeta is 6 words");
#endif
_Static_assert(sizeof(ck_dim_arrmeta) % sizeof(void *) == 0, "arrmeta words");
_Static_assert(sizeof(ck_var_dim_arrmeta) % sizeof(void *) == 0, "arrmeta words");
_Static_assert(sizeof(ck_pointer_arrmeta) % sizeof(void *) == 0, "arrmeta words");
_Static_assert(sizeof(ck_option_arrmeta) % sizeof(void *) == 0, "arrmeta words");
_Static_assert(sizeof(uintptr_t) == sizeof(void *), "struct arrmeta words");
#endif

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_TYPES_H */
