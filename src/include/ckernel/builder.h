/*
 * ckernel/builder.h -- the buffer a kernel tree is built in.
 *
 * A ck_kernel_builder owns one contiguous, zero-initialised byte buffer that
 * holds a kernel tree: the root kernel at offset 0, children after their
 * parent's data.  The first CK_KERNEL_BUILDER_INLINE_SIZE bytes live inside
 * the struct itself, so building and calling a small kernel tree allocates
 * nothing; beyond that the buffer moves to the heap.
 *
 * Invariants
 *   - A zero-filled struct is a valid empty builder (ck_kernel_builder_init
 *     is a memset); so is a builder after ck_kernel_builder_destroy.
 *   - Every byte of the buffer that no kernel has written is zero.  Growth
 *     zero-fills the new tail, reset re-zeroes the buffer.
 *   - The struct holds no pointer into itself (the data pointer is computed
 *     on access: heap ? heap : inline_buf), so the struct may be moved with
 *     memcpy, like the kernel data inside it.  After a move, only the new
 *     copy may be used or destroyed.
 *   - Pointers into the buffer (ck_kernel_builder_get/_data) are invalidated
 *     by every ensure_capacity call; kernel data stores offsets, never
 *     pointers into the buffer.
 *   - The builder owns the root kernel at offset 0: reset and destroy run its
 *     destructor (if set), which destroys the rest of the tree.
 *
 * Not thread-safe: one thread builds; the finished kernel may then be called
 * from several threads (see kernel.h).
 */
#ifndef CKERNEL_BUILDER_H
#define CKERNEL_BUILDER_H

#include "ckernel/config.h"
#include "ckernel/error.h"
#include "ckernel/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Size of the inline buffer. */
#define CK_KERNEL_BUILDER_INLINE_SIZE 128

/* Alignment kernel offsets are rounded to (ck_kernel_align_offset): enough
 * for pointers, int64 and double.  Kernel data must not need more. */
#define CK_KERNEL_ALIGN 8

/* Layout (64-bit): heap @0, capacity @8, reserved_ @16, inline_buf @32,
 * sizeof 160, alignment 8 (pointer).  No alignment specifier: FFI layers
 * (cffi) cannot express one, and kernel data needs only CK_KERNEL_ALIGN.
 * Checked by static assertions in builder.c and in the layout table. */
typedef struct ck_kernel_builder {
  char *heap;        /* heap buffer, or NULL while the inline one is used   */
  size_t capacity;   /* bytes at heap (only meaningful when heap != NULL)   */
  size_t reserved_[2]; /* zero                                              */
  char inline_buf[CK_KERNEL_BUILDER_INLINE_SIZE];
} ck_kernel_builder;

/* Make `ckb` an empty builder (memset 0; allocates nothing). */
CK_API void ck_kernel_builder_init(ck_kernel_builder *ckb);

/* Run the root kernel's destructor (if any), free the heap buffer, and leave
 * an empty builder (as after init).  NULL is a no-op; calling it twice is
 * fine. */
CK_API void ck_kernel_builder_destroy(ck_kernel_builder *ckb);

/* Run the root kernel's destructor (if any) and zero the buffer, keeping its
 * storage (heap or inline) for the next kernel: rebuilding a kernel of the
 * same size then allocates nothing.  NULL is a no-op. */
CK_API void ck_kernel_builder_reset(ck_kernel_builder *ckb);

/* Make the buffer at least `requested_size` + sizeof(ck_prefix) bytes long:
 * room for a kernel ending at `requested_size` plus a zeroed prefix for its
 * first child, so that a parent whose destructor already looks at its child
 * stays destroyable until the child is built.  Use for kernels with
 * children.  Growth is at least 1.5x and zero-fills the new tail.
 * CK_ERR_OVERFLOW if the size does not fit in a size_t/ptrdiff_t,
 * CK_ERR_NO_MEMORY if the allocation fails; on failure the builder (and the
 * half-built kernel in it) is unchanged and still destroyable. */
CK_API ck_status ck_kernel_builder_ensure_capacity(ck_kernel_builder *ckb,
                                                   size_t requested_size);

/* The same without the extra child prefix: for leaf kernels. */
CK_API ck_status ck_kernel_builder_ensure_capacity_leaf(ck_kernel_builder *ckb,
                                                        size_t requested_size);

/* Current buffer size in bytes (CK_KERNEL_BUILDER_INLINE_SIZE while inline). */
CK_API size_t ck_kernel_builder_capacity(const ck_kernel_builder *ckb);

/* True while the buffer is the inline one (no heap storage held). */
CK_API bool ck_kernel_builder_is_inline(const ck_kernel_builder *ckb);

/* Start of the buffer.  Invalidated by ensure_capacity. */
CK_API char *ck_kernel_builder_data(ck_kernel_builder *ckb);

/* The kernel prefix at `offset`, or NULL if a prefix there would not fit in
 * the current capacity.  Invalidated by ensure_capacity. */
CK_API ck_prefix *ck_kernel_builder_get(ck_kernel_builder *ckb, size_t offset);

/* `offset` rounded up to CK_KERNEL_ALIGN (where a child kernel may start). */
CK_API size_t ck_kernel_align_offset(size_t offset);

/*
 * Kernel self-description, for dumps.
 *
 * The prefix alone does not say where a kernel's data ends or where its
 * children are.  A factory that wants readable dumps describes its kernel
 * with a ck_kernel_info in static storage and registers it once
 * (ck_kernel_info_register).  The library's own factories register their
 * descriptions the same way before they first build a kernel.  Kernels
 * nobody described print their prefix only.
 *
 *   name       printed instead of the function's address
 *   single,    the entry points this description covers (either may be
 *   strided    NULL); a prefix matches if its function is one of them
 *   data_size  bytes of the kernel's own struct, prefix included
 *   children   NULL for a leaf; otherwise writes up to `max` child offsets,
 *              relative to `self`, into rel_offsets and returns how many
 *              children there are (may exceed max).  Must only read.
 *              ck_kernel_children_after_data is the common case: one child
 *              at ck_kernel_align_offset(data_size).
 */
typedef struct ck_kernel_info {
  const char *name;
  ck_expr_single_t single;
  ck_expr_strided_t strided;
  size_t data_size;
  size_t (*children)(const ck_prefix *self, const struct ck_kernel_info *info,
                     size_t *rel_offsets, size_t max);
} ck_kernel_info;

CK_API size_t ck_kernel_children_after_data(const ck_prefix *self,
                                            const ck_kernel_info *info,
                                            size_t *rel_offsets, size_t max);

/* Register `info` (kept by pointer: it must outlive the registration).
 * Registering the same pointer again is a no-op.  The registry grows as
 * needed (CK_ERR_NO_MEMORY only if that allocation fails); its first
 * CK_KERNEL_INFO_MAX entries need no allocation.  Thread-safe. */
#define CK_KERNEL_INFO_MAX 256
CK_API ck_status ck_kernel_info_register(const ck_kernel_info *info);

/* Remove a registration (CK_ERR_INVALID_ARGUMENT if it is not registered).
 * Thread-safe, but a pointer returned by ck_kernel_info_find for it before
 * must no longer be used once the caller frees `info`. */
CK_API ck_status ck_kernel_info_unregister(const ck_kernel_info *info);

/* The description of the kernel at `kernel`, from the library's own tables
 * or the registry, or NULL.  *out_req (optional) receives which entry point
 * matched. */
CK_API const ck_kernel_info *ck_kernel_info_find(const ck_prefix *kernel,
                                                 ck_kernel_request *out_req);

/*
 * Decoded kernel data, for dumps and pictures.
 *
 * A description may come with a decoder that lists the kernel's fields with
 * their meaning, so that readers see "size=4 dst_stride=8 child_offset=+56"
 * instead of hex bytes.  Each field has a kind:
 *
 *   INT       `value`: a size, stride, count or offset inside the data
 *   CHILD     `value`: a child kernel's offset, relative to the kernel (0:
 *             no child there -- not built yet, or none needed; dumps print
 *             "none")
 *   TYPE      `pointer`: a ck_type the kernel holds (borrowed)
 *   MEMBLOCK  `pointer`: a ck_memblock the kernel references (an arena, the
 *             memblock owning compiled code); borrowed
 *   POINTER   `pointer`: another resource (context, program, native kernel)
 *   TEXT      `text`: a name (a type name, an error mode, a device kernel's
 *             name), static or inside the kernel's data
 *
 * `offset` is the field's byte offset in the kernel's data, or -1 for a fact
 * the description implies without storing it (the types of a builtin
 * assignment leaf).  An array field (one stride per source) is listed once
 * per element with `index` 0, 1, ...; scalar fields have index -1.
 */
typedef enum ck_kernel_field_kind {
  CK_KERNEL_FIELD_INT = 1,
  CK_KERNEL_FIELD_CHILD = 2,
  CK_KERNEL_FIELD_TYPE = 3,
  CK_KERNEL_FIELD_MEMBLOCK = 4,
  CK_KERNEL_FIELD_POINTER = 5,
  CK_KERNEL_FIELD_TEXT = 6
} ck_kernel_field_kind;

typedef struct ck_kernel_field {
  const char *name;    /* static: "size", "src_stride"                     */
  int32_t index;       /* element of an array field, -1 for a scalar field */
  uint32_t kind;       /* ck_kernel_field_kind                             */
  intptr_t offset;     /* in the kernel's data, -1 if implied              */
  int64_t value;       /* INT, CHILD                                       */
  const void *pointer; /* TYPE, MEMBLOCK, POINTER                          */
  const char *text;    /* TEXT                                             */
} ck_kernel_field;

/* A decoder: writes up to `max` fields of the kernel at `self` into `out`
 * and returns how many it has (may exceed max).  Must only read. */
typedef size_t (*ck_kernel_fields_fn)(const ck_prefix *self,
                                      const ck_kernel_info *info,
                                      ck_kernel_field *out, size_t max);

/* Attach a decoder to a registered description (NULL removes it).  The
 * library's own descriptions have theirs.  CK_ERR_INVALID_ARGUMENT if
 * `info` is not registered with ck_kernel_info_register.  Thread-safe. */
CK_API ck_status ck_kernel_info_set_fields(const ck_kernel_info *info,
                                           ck_kernel_fields_fn fields);

/* The decoded fields of the kernel at `kernel`: writes min(count, max)
 * (`out` may be NULL when max is 0) and stores the count in *out_count.  A
 * kernel without a description, or whose description has no decoder, has
 * 0 fields (ck_kernel_info_find tells which).  CK_ERR_INVALID_ARGUMENT for
 * NULLs. */
CK_API ck_status ck_kernel_fields(const ck_prefix *kernel, ck_kernel_field *out,
                                  size_t max, size_t *out_count);

/*
 * The kernel tree of a builder as a list of nodes, in the dump's order
 * (pre-order: a kernel, then each child's subtree).  `parent` is the index
 * of the parent node (-1 for the root), `request` the entry point the
 * description matched (-1 for an undescribed kernel, whose children are
 * unknown), `nchildren` the number of children the description reports
 * (children outside the buffer, beyond the dump's depth limit (32) or
 * beyond 16 per kernel are counted there but not listed).  An empty
 * (zeroed) prefix is a node with NULL function and destructor.  Writes
 * min(count, max) nodes and stores the count in *out_count.  Reads only;
 * never allocates.
 */
typedef struct ck_kernel_node {
  size_t offset;               /* of the kernel's prefix in the buffer      */
  intptr_t parent;             /* index of the parent node, -1 for the root */
  uint32_t depth;              /* 0 for the root                            */
  int32_t request;             /* ck_kernel_request, -1 if undescribed      */
  const ck_kernel_info *info;  /* NULL if undescribed                       */
  void *function;              /* the prefix's entry point                  */
  void *destructor;            /* the prefix's destructor, as a pointer     */
  size_t nchildren;            /* as the description reports                */
} ck_kernel_node;

CK_API ck_status ck_kernel_builder_nodes(const ck_kernel_builder *ckb,
                                         ck_kernel_node *out, size_t max,
                                         size_t *out_count);

/*
 * A readable dump of the kernel tree in `ckb`: one line per kernel with its
 * offset, its name (the registered name, else the dynamic symbol found by
 * dladdr, else the hex address), the request, and the destructor's name;
 * then the kernel's own data: its decoded fields ("fields size=4
 * dst_stride=8 ...", see ck_kernel_fields) when its description has a
 * decoder, else a hex dump of the bytes after the prefix; then its
 * children, indented.  Writes at most `bufsize` bytes including the NUL
 * (snprintf rules; `buf` may be NULL when bufsize is 0) and stores the full
 * length (excluding the NUL) in *out_len (optional), so callers can retry
 * with a bigger buffer.  Reads only; never allocates.
 */
CK_API ck_status ck_kernel_builder_dump(const ck_kernel_builder *ckb, char *buf,
                                        size_t bufsize, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_BUILDER_H */
