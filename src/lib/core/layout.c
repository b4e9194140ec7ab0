/* layout.c -- the exported layout table (see ckernel/layout.h). */
#include "core/core_internal.h"

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

    CK_STRUCT_ROW(ck_pod_chunk_info),
    CK_FIELD_ROW(ck_pod_chunk_info, begin),
    CK_FIELD_ROW(ck_pod_chunk_info, capacity),
    CK_FIELD_ROW(ck_pod_chunk_info, used),
    CK_FIELD_ROW(ck_pod_chunk_info, mapped),
    CK_FIELD_ROW(ck_pod_chunk_info, reserved_),

    CK_STRUCT_ROW(ck_prefix),
    CK_FIELD_ROW(ck_prefix, function),
    CK_FIELD_ROW(ck_prefix, destructor),

    CK_STRUCT_ROW(ck_kernel_builder),
    CK_FIELD_ROW(ck_kernel_builder, heap),
    CK_FIELD_ROW(ck_kernel_builder, capacity),
    CK_FIELD_ROW(ck_kernel_builder, reserved_),
    CK_FIELD_ROW(ck_kernel_builder, inline_buf),

    CK_STRUCT_ROW(ck_kernel_info),
    CK_FIELD_ROW(ck_kernel_info, name),
    CK_FIELD_ROW(ck_kernel_info, single),
    CK_FIELD_ROW(ck_kernel_info, strided),
    CK_FIELD_ROW(ck_kernel_info, data_size),
    CK_FIELD_ROW(ck_kernel_info, children),

    CK_STRUCT_ROW(ck_kernel_field),
    CK_FIELD_ROW(ck_kernel_field, name),
    CK_FIELD_ROW(ck_kernel_field, index),
    CK_FIELD_ROW(ck_kernel_field, kind),
    CK_FIELD_ROW(ck_kernel_field, offset),
    CK_FIELD_ROW(ck_kernel_field, value),
    CK_FIELD_ROW(ck_kernel_field, pointer),
    CK_FIELD_ROW(ck_kernel_field, text),

    CK_STRUCT_ROW(ck_kernel_node),
    CK_FIELD_ROW(ck_kernel_node, offset),
    CK_FIELD_ROW(ck_kernel_node, parent),
    CK_FIELD_ROW(ck_kernel_node, depth),
    CK_FIELD_ROW(ck_kernel_node, request),
    CK_FIELD_ROW(ck_kernel_node, info),
    CK_FIELD_ROW(ck_kernel_node, function),
    CK_FIELD_ROW(ck_kernel_node, destructor),
    CK_FIELD_ROW(ck_kernel_node, nchildren),

    CK_STRUCT_ROW(ck_pod_copy_kernel),
    CK_FIELD_ROW(ck_pod_copy_kernel, base),
    CK_FIELD_ROW(ck_pod_copy_kernel, data_size),

    CK_STRUCT_ROW(ck_type_desc),
    CK_FIELD_ROW(ck_type_desc, refcount),
    CK_FIELD_ROW(ck_type_desc, id),
    CK_FIELD_ROW(ck_type_desc, flags),
    CK_FIELD_ROW(ck_type_desc, depth),
    CK_FIELD_ROW(ck_type_desc, data_size),
    CK_FIELD_ROW(ck_type_desc, data_alignment),
    CK_FIELD_ROW(ck_type_desc, arrmeta_size),
    CK_FIELD_ROW(ck_type_desc, hash),
    CK_FIELD_ROW(ck_type_desc, vtable),
    CK_FIELD_ROW(ck_type_desc, element),
    CK_FIELD_ROW(ck_type_desc, fixed_size),
    CK_FIELD_ROW(ck_type_desc, target_alignment),
    CK_FIELD_ROW(ck_type_desc, field_count),
    CK_FIELD_ROW(ck_type_desc, field_names),
    CK_FIELD_ROW(ck_type_desc, field_types),
    CK_FIELD_ROW(ck_type_desc, field_data_offsets),
    CK_FIELD_ROW(ck_type_desc, field_arrmeta_offsets),
    CK_FIELD_ROW(ck_type_desc, dim_name),

    CK_STRUCT_ROW(ck_type_vtable),
    CK_FIELD_ROW(ck_type_vtable, name),
    CK_FIELD_ROW(ck_type_vtable, arrmeta_construct),
    CK_FIELD_ROW(ck_type_vtable, arrmeta_destruct),
    CK_FIELD_ROW(ck_type_vtable, arrmeta_copy),
    CK_FIELD_ROW(ck_type_vtable, print),
    CK_FIELD_ROW(ck_type_vtable, arrmeta_debug_print),
    CK_FIELD_ROW(ck_type_vtable, equal),
    CK_FIELD_ROW(ck_type_vtable, hash),

    CK_STRUCT_ROW(ck_kernel_arg),
    CK_FIELD_ROW(ck_kernel_arg, kind),
    CK_FIELD_ROW(ck_kernel_arg, reserved_),
    CK_FIELD_ROW(ck_kernel_arg, buffer),
    CK_FIELD_ROW(ck_kernel_arg, offset),
    CK_FIELD_ROW(ck_kernel_arg, value),
    CK_FIELD_ROW(ck_kernel_arg, size),

    CK_STRUCT_ROW(ck_jit_kernel),
    CK_FIELD_ROW(ck_jit_kernel, base),
    CK_FIELD_ROW(ck_jit_kernel, code),
    CK_FIELD_ROW(ck_jit_kernel, dst_arena),
    CK_STRUCT_ROW(ck_jit_meminfo),
    CK_FIELD_ROW(ck_jit_meminfo, refct),
    CK_FIELD_ROW(ck_jit_meminfo, dtor),
    CK_FIELD_ROW(ck_jit_meminfo, dtor_info),
    CK_FIELD_ROW(ck_jit_meminfo, data),
    CK_FIELD_ROW(ck_jit_meminfo, size),
    CK_STRUCT_ROW(ck_format_spec),

    CK_STRUCT_ROW(ck_jit_kernel_desc),
    CK_FIELD_ROW(ck_jit_kernel_desc, single),
    CK_FIELD_ROW(ck_jit_kernel_desc, strided),
    CK_FIELD_ROW(ck_jit_kernel_desc, code),
    CK_FIELD_ROW(ck_jit_kernel_desc, dst_id),
    CK_FIELD_ROW(ck_jit_kernel_desc, nsrc),
    CK_FIELD_ROW(ck_jit_kernel_desc, src_ids),
    CK_FIELD_ROW(ck_jit_kernel_desc, name),
    CK_FIELD_ROW(ck_jit_kernel_desc, dst_pattern),
    CK_FIELD_ROW(ck_jit_kernel_desc, src_patterns),
    CK_FIELD_ROW(ck_jit_kernel_desc, dst_struct),

    CK_STRUCT_ROW(ck_jit_core_dim),
    CK_FIELD_ROW(ck_jit_core_dim, kind),
    CK_FIELD_ROW(ck_jit_core_dim, size),
    CK_FIELD_ROW(ck_jit_core_dim, stride),
    CK_FIELD_ROW(ck_jit_core_dim, offset),

    CK_STRUCT_ROW(ck_jit_core_option),
    CK_FIELD_ROW(ck_jit_core_option, bits),
    CK_FIELD_ROW(ck_jit_core_option, bit_offset),
    CK_FIELD_ROW(ck_jit_core_option, origin),
    CK_FIELD_ROW(ck_jit_core_option, step),

    CK_STRUCT_ROW(ck_jit_core_kernel),
    CK_FIELD_ROW(ck_jit_core_kernel, base),
    CK_FIELD_ROW(ck_jit_core_kernel, ndims),
    CK_FIELD_ROW(ck_jit_core_kernel, text_arena),
    CK_STRUCT_ROW(ck_jit_struct_kernel),
    CK_FIELD_ROW(ck_jit_struct_kernel, narenas),
    /* a flexible array: the size of one entry */
    {"ck_jit_struct_kernel", "arenas", offsetof(ck_jit_struct_kernel, arenas),
     sizeof(ck_memblock *)},

    CK_STRUCT_ROW(ck_buffer_range),
    CK_FIELD_ROW(ck_buffer_range, offset),
    CK_FIELD_ROW(ck_buffer_range, size),

    CK_STRUCT_ROW(ck_device_ptr),
    CK_FIELD_ROW(ck_device_ptr, buffer),
    CK_FIELD_ROW(ck_device_ptr, offset),

    CK_STRUCT_ROW(ck_dim_arrmeta),
    CK_FIELD_ROW(ck_dim_arrmeta, size),
    CK_FIELD_ROW(ck_dim_arrmeta, stride),

    CK_STRUCT_ROW(ck_var_dim_data),
    CK_FIELD_ROW(ck_var_dim_data, begin),
    CK_FIELD_ROW(ck_var_dim_data, size),

    CK_STRUCT_ROW(ck_var_dim_arrmeta),
    CK_FIELD_ROW(ck_var_dim_arrmeta, blockref),
    CK_FIELD_ROW(ck_var_dim_arrmeta, stride),
    CK_FIELD_ROW(ck_var_dim_arrmeta, offset),

    CK_STRUCT_ROW(ck_string),
    CK_FIELD_ROW(ck_string, begin),
    CK_FIELD_ROW(ck_string, end),

    CK_STRUCT_ROW(ck_string_arrmeta),
    CK_FIELD_ROW(ck_string_arrmeta, blockref),

    CK_STRUCT_ROW(ck_pointer_arrmeta),
    CK_FIELD_ROW(ck_pointer_arrmeta, blockref),
    CK_FIELD_ROW(ck_pointer_arrmeta, offset),

    CK_STRUCT_ROW(ck_option_arrmeta),
    CK_FIELD_ROW(ck_option_arrmeta, blockref),
    CK_FIELD_ROW(ck_option_arrmeta, bits),
    CK_FIELD_ROW(ck_option_arrmeta, bit_offset),
    CK_FIELD_ROW(ck_option_arrmeta, origin),
    CK_FIELD_ROW(ck_option_arrmeta, step),
    CK_FIELD_ROW(ck_option_arrmeta, length),

    CK_STRUCT_ROW(ck_array_preamble),
    CK_FIELD_ROW(ck_array_preamble, memblock),
    CK_FIELD_ROW(ck_array_preamble, type),
    CK_FIELD_ROW(ck_array_preamble, data),
    CK_FIELD_ROW(ck_array_preamble, flags),
    CK_FIELD_ROW(ck_array_preamble, data_ref),

    /* the Arrow C data, stream and device interfaces (ckernel/arrow.h) */
    CK_STRUCT_ROW(struct ArrowSchema),
    CK_FIELD_ROW(struct ArrowSchema, format),
    CK_FIELD_ROW(struct ArrowSchema, name),
    CK_FIELD_ROW(struct ArrowSchema, metadata),
    CK_FIELD_ROW(struct ArrowSchema, flags),
    CK_FIELD_ROW(struct ArrowSchema, n_children),
    CK_FIELD_ROW(struct ArrowSchema, children),
    CK_FIELD_ROW(struct ArrowSchema, dictionary),
    CK_FIELD_ROW(struct ArrowSchema, release),
    CK_FIELD_ROW(struct ArrowSchema, private_data),

    CK_STRUCT_ROW(struct ArrowArray),
    CK_FIELD_ROW(struct ArrowArray, length),
    CK_FIELD_ROW(struct ArrowArray, null_count),
    CK_FIELD_ROW(struct ArrowArray, offset),
    CK_FIELD_ROW(struct ArrowArray, n_buffers),
    CK_FIELD_ROW(struct ArrowArray, n_children),
    CK_FIELD_ROW(struct ArrowArray, buffers),
    CK_FIELD_ROW(struct ArrowArray, children),
    CK_FIELD_ROW(struct ArrowArray, dictionary),
    CK_FIELD_ROW(struct ArrowArray, release),
    CK_FIELD_ROW(struct ArrowArray, private_data),

    CK_STRUCT_ROW(struct ArrowArrayStream),
    CK_FIELD_ROW(struct ArrowArrayStream, get_schema),
    CK_FIELD_ROW(struct ArrowArrayStream, get_next),
    CK_FIELD_ROW(struct ArrowArrayStream, get_last_error),
    CK_FIELD_ROW(struct ArrowArrayStream, release),
    CK_FIELD_ROW(struct ArrowArrayStream, private_data),

    CK_STRUCT_ROW(struct ArrowDeviceArray),
    CK_FIELD_ROW(struct ArrowDeviceArray, array),
    CK_FIELD_ROW(struct ArrowDeviceArray, device_id),
    CK_FIELD_ROW(struct ArrowDeviceArray, device_type),
    CK_FIELD_ROW(struct ArrowDeviceArray, sync_event),
    CK_FIELD_ROW(struct ArrowDeviceArray, reserved),

    CK_STRUCT_ROW(struct ArrowDeviceArrayStream),
    CK_FIELD_ROW(struct ArrowDeviceArrayStream, device_type),
    CK_FIELD_ROW(struct ArrowDeviceArrayStream, get_schema),
    CK_FIELD_ROW(struct ArrowDeviceArrayStream, get_next),
    CK_FIELD_ROW(struct ArrowDeviceArrayStream, get_last_error),
    CK_FIELD_ROW(struct ArrowDeviceArrayStream, release),
    CK_FIELD_ROW(struct ArrowDeviceArrayStream, private_data),

    CK_STRUCT_ROW(ck_str_region),
    CK_FIELD_ROW(ck_str_region, cur),
    CK_FIELD_ROW(ck_str_region, lim),
    CK_FIELD_ROW(ck_str_region, made_b),
    CK_FIELD_ROW(ck_str_region, made_e),
    CK_FIELD_ROW(ck_str_region, arena),

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
