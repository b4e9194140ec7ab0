/* layout.c -- the exported layout table (see ckernel/layout.h). */
#include "internal.h"

#include <stdalign.h>

#define CK_STRUCT_ROW(T) {#T, "", alignof(T), sizeof(T)}
#define CK_FIELD_ROW(T, f) {#T, #f, offsetof(T, f), sizeof(((T *)0)->f)}

static const ck_layout_entry ck_layout[] = {
    CK_STRUCT_ROW(ck_memblock),
    CK_FIELD_ROW(ck_memblock, refcount),
    CK_FIELD_ROW(ck_memblock, kind),

    CK_STRUCT_ROW(ck_pod_allocator_api),
    CK_FIELD_ROW(ck_pod_allocator_api, allocate),
    CK_FIELD_ROW(ck_pod_allocator_api, resize),
    CK_FIELD_ROW(ck_pod_allocator_api, finalize),

    CK_STRUCT_ROW(ck_pod_stats),
    CK_FIELD_ROW(ck_pod_stats, capacity),
    CK_FIELD_ROW(ck_pod_stats, used),
    CK_FIELD_ROW(ck_pod_stats, chunks),
    CK_FIELD_ROW(ck_pod_stats, allocations),
    CK_FIELD_ROW(ck_pod_stats, finalized),

    CK_STRUCT_ROW(ck_layout_entry),
    CK_FIELD_ROW(ck_layout_entry, type),
    CK_FIELD_ROW(ck_layout_entry, field),
    CK_FIELD_ROW(ck_layout_entry, offset),
    CK_FIELD_ROW(ck_layout_entry, size),
};

const ck_layout_entry *ck_layout_table(size_t *out_count) {
  if (out_count != NULL) {
    *out_count = sizeof ck_layout / sizeof ck_layout[0];
  }
  return ck_layout;
}
