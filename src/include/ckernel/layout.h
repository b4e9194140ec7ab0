/*
 * ckernel/layout.h -- the exported layout table.
 *
 * Every public struct that crosses the ABI is listed here with its size and
 * the offset and size of each field, as the C compiler that built libckernel
 * laid them out.  Bindings (the cffi module, the Numba lowering) compare what
 * they were compiled against with this table at load time and refuse to run
 * on a mismatch, instead of corrupting memory.
 *
 * Rows with field == "" give the size (and alignment in `offset`) of the
 * struct itself.
 */
#ifndef CKERNEL_LAYOUT_H
#define CKERNEL_LAYOUT_H

#include "ckernel/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ck_layout_entry {
  const char *type;   /* C struct name, e.g. "ck_memblock"        */
  const char *field;  /* field name, or "" for the struct itself */
  size_t offset;      /* field offset (struct row: alignment)    */
  size_t size;        /* field size (struct row: sizeof)         */
} ck_layout_entry;

/* The table; *out_count receives the number of rows.  Static storage. */
CK_API const ck_layout_entry *ck_layout_table(size_t *out_count);

#ifdef __cplusplus
}
#endif

#endif /* CKERNEL_LAYOUT_H */
