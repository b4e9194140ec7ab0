/*
 * ckernel/jit.h -- leaf kernels around JIT-compiled code ("leaf kernel with
 * dynamic resources").
 *
 * A JIT compiler (the Numba bridge, ckernel.jit) compiles a scalar function
 * for fixed element types into a single and a strided entry point (the
 * kernel.h ABI).  Those entry points live in memory owned by the compiler's
 * runtime, so every kernel built around them holds a reference to a
 * "code" memblock -- normally an external memblock whose release callback
 * lets the compiled code go -- and drops it in its destructor.
 *
 * Kernel layout (ck_jit_kernel, 32 bytes, offsets fixed; the generated code
 * reads `dst_arena` at CK_JIT_KERNEL_ARENA_OFFSET from its `self`):
 *
 *     @0   ck_prefix   base        single or strided entry; destructor
 *     @16  ck_memblock *code       keeps the compiled code alive (owned ref)
 *     @24  ck_memblock *dst_arena  arena string results are allocated from
 *                                  (owned ref), NULL unless the result type
 *                                  is `string`
 *
 * Where the arena comes from: the `blockref` of the destination's string
 * arrmeta when the factory is given one (so results land in the result
 * array's arena), otherwise a fresh pod arena owned by the kernel (results
 * then live as long as the kernel).  The entry points never write kernel
 * data; a kernel with a string result allocates from its arena, which has a
 * single writer, so it must not run on two threads at once (the lifting
 * layer runs blockref destinations serially).
 *
 * Errors: the entry points return CK_OK or a ck_status after ck_set_error on
 * the calling thread, like every kernel.  The factories here return
 * CK_ERR_TYPE when asked for types the compiled code was not made for.
 */
#ifndef CKERNEL_JIT_H
#define CKERNEL_JIT_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"
#include "ckernel/builder.h"
#include "ckernel/memblock.h"
#include "ckernel/types.h"
#include "ckernel/lift.h"
#include "ckernel/core_dims.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest name kept in a descriptor (bytes, NUL included). */
#define CK_JIT_NAME_MAX 96

/* What one compiled signature provides.  Filled in by the JIT; read by the
 * factories below.  `code` is borrowed by the descriptor (the JIT owns one
 * reference for as long as the descriptor is used); every kernel built takes
 * its own reference. */
typedef struct ck_jit_kernel_desc {
  ck_expr_single_t single;
  ck_expr_strided_t strided;
  ck_memblock *code;
  ck_type_id dst_id;                     /* result element type id         */
  uint32_t nsrc;                         /* 0..CK_LIFT_MAX_NSRC             */
  ck_type_id src_ids[CK_LIFT_MAX_NSRC];  /* argument element type ids      */
  char name[CK_JIT_NAME_MAX];            /* for messages: "shout(string)"  */
  /* A kernel with core dims (core_dims.h): the signature's types, patterns
   * such as `N * float64` (borrowed like `code`); NULL for a scalar kernel,
   * whose types are the ids above.  dst_id / src_ids are then the ids of the
   * patterns' dtypes. */
  ck_type dst_pattern;
  ck_type src_patterns[CK_LIFT_MAX_NSRC];
  /* A scalar kernel whose result is a struct holding `string` fields (at
   * any nesting level): the struct type (borrowed like `code`); its kernels
   * are ck_jit_struct_kernels (below).  NULL otherwise. */
  ck_type dst_struct;
} ck_jit_kernel_desc;

/* The kernel data (see the layout above). */
typedef struct ck_jit_kernel {
  ck_prefix base;
  ck_memblock *code;
  ck_memblock *dst_arena;
} ck_jit_kernel;

/*
 * A jitted kernel with core dims (a desc with patterns) has more data after
 * the ck_jit_kernel: the core dims of every operand as the compiled code
 * reads them -- the result's first, then each argument's, each operand's
 * outermost core dim first (the patterns fix how many each has):
 *
 *     @0   ck_jit_kernel   base     (code, dst_arena as above)
 *     @32  intptr_t        ndims      number of ck_jit_core_dim entries
 *     @40  ck_memblock    *text_arena the arena of a `var * string` result's
 *                                     text (owned ref), NULL otherwise
 *     @48  ck_jit_core_dim dims[ndims]
 *
 * A core dim is read per outer element as: STRIDED -- `size` elements
 * `stride` bytes apart, starting at the operand's pointer; VAR -- the
 * operand's pointer holds a ck_var_dim_data {begin, size}, the elements
 * start at begin + offset, `stride` bytes apart.  A var dim of a signature
 * accepts fixed and strided dims too (kind STRIDED); fixed and symbolic
 * ones are always STRIDED.  dst_arena is the arena of the result's var
 * core dim (at most one), from the destination's arrmeta.  A `var * string`
 * result writes its `ck_string` elements into dst_arena and their bytes into
 * text_arena (the string arrmeta's blockref; the two may be one block).
 * Without a destination arena the kernel makes its own.
 *
 * Option elements under core dims (`var * ?float64`, a `?R` or `N * ?R`
 * result): after dims[ndims] comes one ck_jit_core_option per operand whose
 * pattern's element type is an option, the result's first, then the
 * arguments' in order.  It is the operand's ck_option_arrmeta (types.h) as
 * the compiled code reads it: the slot whose data is at `p` has bit
 * `bit_offset + (p - origin) / step` of `bits`; `bits` NULL means every
 * slot is valid (no bitmap: a result into which no null can be written).
 * The bitmap is borrowed from the operands' arrmeta for the kernel's life
 * (the operands outlive the kernels built over them).
 *
 * Null-able rows (an argument pattern `?var * T`, as `?var * ?float64`: an
 * Arrow list with null entries) have their dims as core dims and two
 * records in that order: the rows' own bitmap (the slot at `p` is the
 * row's ck_var_dim_data; an operand without null rows, `var * T`, has
 * `bits` NULL), then, when T is an option, the elements'.
 *
 * A result of null-able rows, `?var * R` or `?var * ?R` (one var dim), has
 * no record for its rows (the result's record, if any, is its elements'):
 * the code writes a null row as {CK_JIT_NULL_ROW, 0} into the row's
 * ck_var_dim_data, and ck_jit_var_option_finish (below) turns those marks
 * into the rows' bitmap.  (Threads write neighbouring rows, which share a
 * byte of the bitmap: no bit is written while the kernel runs.)
 */
#define CK_JIT_NULL_ROW ((char *)UINTPTR_MAX)

enum { CK_JIT_DIM_STRIDED = 0, CK_JIT_DIM_VAR = 1 };

typedef struct ck_jit_core_dim {
  intptr_t kind;   /* CK_JIT_DIM_*                              */
  intptr_t size;   /* STRIDED: the number of elements           */
  intptr_t stride; /* bytes between elements                    */
  intptr_t offset; /* VAR: added to begin                       */
} ck_jit_core_dim;

typedef struct ck_jit_core_option {
  uint8_t *bits;       /* NULL: every slot valid                     */
  intptr_t bit_offset; /* bit of the slot at origin                  */
  char *origin;        /* data address of slot 0                     */
  intptr_t step;       /* bytes from one slot to the next, > 0       */
} ck_jit_core_option;

typedef struct ck_jit_core_kernel {
  ck_jit_kernel base;
  intptr_t ndims;
  ck_memblock *text_arena;
  ck_jit_core_dim dims[];
} ck_jit_core_kernel;

/*
 * A jitted kernel whose result is a struct holding strings (a desc with
 * dst_struct) has one arena per string field after the ck_jit_kernel:
 *
 *     @0   ck_jit_kernel   base       (code; dst_arena NULL)
 *     @32  intptr_t        narenas    the struct's string fields, depth-first
 *                                     in field order (nested structs inside)
 *     @40  ck_memblock    *arenas[narenas]  owned refs
 *
 * arenas[i] is the `blockref` of string field i's arrmeta in the
 * destination (so each field's text lands in the arena that field's
 * arrmeta owns, as a `string` result's does), or a fresh pod arena owned by
 * the kernel without a destination arrmeta.  The generated code gets the
 * address of arenas[0] where a string result gets its arena, and writes
 * field i's text into arenas[i].  One writer per arena, as above.
 */
typedef struct ck_jit_struct_kernel {
  ck_jit_kernel base;
  intptr_t narenas;
  ck_memblock *arenas[];
} ck_jit_struct_kernel;

/* Offsets of ck_jit_kernel's fields, for code generators to check the
 * layout they assume (sizeof, code, dst_arena). */
CK_API void ck_jit_kernel_layout(size_t *out_size, size_t *out_code_offset,
                                 size_t *out_arena_offset);

/* A ck_kernel_fields_fn (builder.h) for descriptions of jitted kernels: the
 * code memblock and the destination arena.  Whoever registers a description
 * of a jitted kernel (the Python binding does, per compiled signature)
 * attaches it with ck_kernel_info_set_fields. */
CK_API size_t ck_jit_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                                   ck_kernel_field *out, size_t max);

/* ck_jit_kernel_fields for kernels with a struct result holding strings:
 * also narenas and every arena. */
CK_API size_t ck_jit_struct_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                                          ck_kernel_field *out, size_t max);

/* ck_jit_kernel_fields for kernels with core dims: also ndims and every
 * core dim's kind, size, stride and offset. */
CK_API size_t ck_jit_core_kernel_fields(const ck_prefix *self, const ck_kernel_info *info,
                                        ck_kernel_field *out, size_t max);

/* Build the jitted leaf kernel described by `desc` at `offset` of `ckb` for
 * request `req`.  `dst_arrmeta` (may be NULL) is the destination element's
 * arrmeta: for a string result, its arena is used (else a new pod arena owned
 * by the kernel); for a struct result holding strings (desc->dst_struct),
 * the arena of each string field (a ck_jit_struct_kernel).  *out_end
 * (optional) gets the offset past the kernel.
 * Errors: CK_ERR_INVALID_ARGUMENT (NULLs, misaligned offset, a request
 * whose entry point is missing, a desc with core dims, a dst_struct that is
 * no struct), CK_ERR_NOT_SUPPORTED (a dst_struct with var dims, pointers or
 * strings under fixed dims), CK_ERR_NO_MEMORY / CK_ERR_OVERFLOW. */
CK_API ck_status ck_jit_make_kernel(ck_kernel_builder *ckb, size_t offset,
                                    const ck_jit_kernel_desc *desc,
                                    const char *dst_arrmeta,
                                    ck_kernel_request req, size_t *out_end);

/* Build the leaf of a jitted kernel with core dims (desc->dst_pattern set)
 * for one outer element: `dst_type` / `src_types` are the operands' core
 * types (what ck_make_lifted_kernel hands its child: the patterns' ndims
 * trailing dims of each operand) with the arrmeta of their first core dim.
 * Every operand is matched to its pattern (ck_core_match: sizes, dimension
 * variables, element types); the core dims are copied into the kernel data
 * (layout above).  A result pattern of null-able rows (`?var * R`, one var
 * dim) is taken: the code marks its null rows, ck_jit_var_option_finish
 * makes them nulls.  Errors: those of ck_core_match; CK_ERR_NOT_SUPPORTED for
 * a result pattern with more than one var dim, null-able rows other than one
 * var dim (`?3 * R`), or string elements other than one var dim over strings
 * (`var * string`);
 * the errors of ck_jit_make_kernel. */
CK_API ck_status ck_jit_make_core_kernel(ck_kernel_builder *ckb, size_t offset,
                                         const ck_jit_kernel_desc *desc, ck_type dst_type,
                                         const char *dst_arrmeta, size_t nsrc,
                                         const ck_type *src_types,
                                         const char *const *src_arrmeta,
                                         ck_kernel_request req, size_t *out_end);

/* A ck_child_kernel_factory (lift.h) for ck_array_apply /
 * ck_make_elementwise_kernel: `child_data` is a `const ck_jit_kernel_desc *`.
 * The element types must be exactly those of the descriptor (CK_ERR_TYPE
 * otherwise: convert arguments before applying).  For a desc with core
 * dims it is the factory for ck_array_apply_core / ck_make_core_kernel and
 * builds with ck_jit_make_core_kernel. */
CK_API ck_status ck_jit_child_factory(void *child_data, ck_kernel_builder *ckb,
                                      size_t offset, ck_type dst_type,
                                      const char *dst_arrmeta, size_t nsrc,
                                      const ck_type *src_types,
                                      const char *const *src_arrmeta,
                                      ck_kernel_request req, size_t *out_end);

/*
 * Null-aware jitted kernels: a signature with option types `?T`.  The
 * compiled entry points take a NULL source pointer for a `?T` argument that
 * is null, and for a `?R` result write the value followed by one byte, 1 =
 * valid, 0 = null (the whole within CK_JIT_OPTION_SCRATCH bytes).  `desc`'s
 * ids are the value types' (borrowed, as by ck_jit_child_factory).
 */
#define CK_JIT_OPTION_SCRATCH 32

typedef struct ck_jit_option_desc {
  const ck_jit_kernel_desc *desc;
  uint32_t src_nullable; /* bit j: argument j is `?T` in the signature */
  uint32_t dst_nullable; /* nonzero: the result is `?R`                 */
} ck_jit_option_desc;

/* A ck_child_kernel_factory for ck_array_apply: `child_data` is a `const
 * ck_jit_option_desc *`.  Sources may be options or not; a null in an
 * argument declared `T` (not `?T`) makes the result null without a call
 * (propagation), so the destination must then be an option.  The leaf's
 * strided entry point runs over each run of slots where every argument is
 * valid, and over each slot holding a null alone (one element, a NULL
 * source for a null `?T` argument).  Errors: CK_ERR_TYPE for
 * types the code was not compiled for or a `?R` result into a non-option
 * destination; CK_ERR_VALUE at run time for a null into a non-option
 * destination; those of ck_jit_make_kernel. */
CK_API ck_status ck_jit_option_child_factory(void *child_data, ck_kernel_builder *ckb,
                                             size_t offset, ck_type dst_type,
                                             const char *dst_arrmeta, size_t nsrc,
                                             const ck_type *src_types,
                                             const char *const *src_arrmeta,
                                             ck_kernel_request req, size_t *out_end);

/* Register the descriptor's kernel as the implementation of `op_name` for
 * its argument types (registry.h, ck_op_register_factory).  The registry
 * keeps a copy of the descriptor and its own reference to `code`, dropped
 * when the registration is replaced or removed.  Kernels it builds get no
 * destination arrmeta: a string result goes to a kernel-owned arena.
 * Kernels with core dims are not operations (CK_ERR_INVALID_ARGUMENT). */
CK_API ck_status ck_jit_register(const char *op_name,
                                 const ck_jit_kernel_desc *desc);

/*
 * `var * ?R` results (R a number, bool or string) of a kernel with core dims.
 * The compiled code writes each result row into the destination's var arena
 * as records of CK_JIT_VAR_OPTION_RECORD(sizeof R, alignof R) bytes: R's
 * value at byte 0, one validity byte (1 = valid, 0 = null) at byte sizeof R;
 * the row's ck_var_dim_data counts records.  ck_jit_var_option_finish then
 * lays such a result out as Arrow does (to be called once, on the result of
 * ck_array_apply_core before anyone reads it): the values of every row one
 * after another in one allocation of a new pod arena (C order of the outer
 * dims, which may be fixed, strided or var), the core var dim's arrmeta
 * pointing at it (offset 0, stride sizeof R; the records' arena released
 * with its last reference), the elements' option arrmeta given a bitmap over
 * those values (bit offset 0; none when there is no element).  Zeros stand
 * under a null.
 *
 * Results of null-able rows, `?var * R` and `?var * ?R`: every row marked
 * {CK_JIT_NULL_ROW, 0} by the code becomes an empty row {NULL, 0} whose bit
 * in the rows' bitmap is cleared (the bitmap ck_array_empty gave the rows'
 * option; the other bits are left as they are), then `?R` elements are
 * laid out as above.  Call it once: a second call finds no marks.
 *
 * Errors: CK_ERR_INVALID_ARGUMENT (NULL), CK_ERR_TYPE (the array's last dim
 * is not `var * ?R`, `?var * R` or `?var * ?R`), CK_ERR_VALUE (a row marked
 * null with elements), CK_ERR_NOT_SUPPORTED (null rows whose option has no
 * bitmap: rows under a var dim), CK_ERR_INDEX (a marked row the bitmap does
 * not cover), CK_ERR_NO_MEMORY, CK_ERR_OVERFLOW; the array is unchanged on
 * failure.
 */
#define CK_JIT_VAR_OPTION_RECORD(size, align) ((size) + (align))
CK_API size_t ck_jit_var_option_record_size(ck_type value_type);
CK_API ck_status ck_jit_var_option_finish(ck_array_preamble *a);

/* ---- the runtime of natively cached jitted code --------------------------
 *
 * Numba-compiled code manages what it makes (strings, lists, arrays) with
 * Numba's runtime (NRT): a reference-counted header, the "MemInfo", counted
 * up and down inline by the code, and a few C functions called by name
 * (NRT_MemInfo_alloc, NRT_MemInfo_call_dtor, NRT_Allocate, NRT_Free, ...).
 * A jitted signature stored as a shared library (the native cache of
 * ckernels.jit) must load without Numba, so the cache renames those calls to
 * these functions, which keep the same contract on the library's allocator
 * (counted and fault-injectable like every allocation of libckernel).
 *
 * The header is laid out as Numba's (numba/core/runtime/nrt.cpp; the Python
 * side checks it against Numba before it renames anything):
 *     @0 refct  @8 dtor  @16 dtor_info  @24 data  @32 size  @40 external
 * `data` points into the same allocation, after the header (aligned to
 * `align` for the _aligned form).  Objects of this runtime never meet
 * Numba's: natively cached entry points take and give element memory only. */
typedef void (*ck_jit_dtor_fn)(void *data, size_t size, void *info);

typedef struct ck_jit_meminfo {
  CK_ATOMIC(size_t) refct; /* 1 when made; code counts it inline    */
  ck_jit_dtor_fn dtor;     /* called with (data, size, dtor_info)    */
  void *dtor_info;
  void *data;
  size_t size;
  void *external; /* Numba's external allocator: always NULL here */
} ck_jit_meminfo;

/* A header and `size` bytes of data in one allocation (NULL when out of
 * memory, CK_ERR_NO_MEMORY recorded).  NRT_MemInfo_alloc, _alloc_safe. */
CK_API ck_jit_meminfo *ck_jit_meminfo_alloc(size_t size);
/* The same with data aligned to `align` (a power of two).
 * NRT_MemInfo_alloc_aligned, _alloc_safe_aligned. */
CK_API ck_jit_meminfo *ck_jit_meminfo_alloc_aligned(size_t size, unsigned align);
/* The same with a destructor called with (data, size, NULL) when the last
 * reference goes.  NRT_MemInfo_alloc_dtor, _alloc_dtor_safe. */
CK_API ck_jit_meminfo *ck_jit_meminfo_alloc_dtor(size_t size, ck_jit_dtor_fn dtor);
/* The last reference went: run the destructor, free the header and data.
 * NRT_MemInfo_call_dtor. */
CK_API void ck_jit_meminfo_call_dtor(ck_jit_meminfo *mi);
/* A header whose data is a separate, growable allocation of `size` bytes
 * (lists, dicts); the data is freed with the header, after `elem_dtor` (may
 * be NULL) is called on it.  NRT_MemInfo_new_varsize, _new_varsize_dtor. */
CK_API ck_jit_meminfo *ck_jit_meminfo_new_varsize(size_t size);
CK_API ck_jit_meminfo *ck_jit_meminfo_new_varsize_dtor(size_t size,
                                                      void (*elem_dtor)(void *data));
/* New data of `size` bytes, the data resized, a pointer freed (the data
 * pointer is cleared when it is the data): for headers made by
 * ck_jit_meminfo_new_varsize only (NULL and CK_ERR_INVALID_STATE otherwise;
 * NULL and CK_ERR_NO_MEMORY when out of memory).
 * NRT_MemInfo_varsize_alloc, _varsize_realloc, _varsize_free. */
CK_API void *ck_jit_meminfo_varsize_alloc(ck_jit_meminfo *mi, size_t size);
CK_API void *ck_jit_meminfo_varsize_realloc(ck_jit_meminfo *mi, size_t size);
CK_API void ck_jit_meminfo_varsize_free(ck_jit_meminfo *mi, void *p);
/* Plain memory (exception records).  NRT_Allocate, NRT_Free. */
CK_API void *ck_jit_allocate(size_t size);
CK_API void ck_jit_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_JIT_H */
