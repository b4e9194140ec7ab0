/*
 * ckernel/config.h -- build configuration shared by every public header.
 *
 * Every public header includes this one first.  It pulls in the few system
 * headers the API needs and defines the export macro.
 *
 * When CK_CFFI_CDEF is defined, the headers are being run through the C
 * preprocessor to produce the cffi cdef (see cffi_build/).  cffi's parser
 * understands the <stdint.h>/<stddef.h> type names natively, but not system
 * headers, `_Atomic`, attributes or function bodies, so in that mode this
 * header includes nothing and the macros below expand to plain C that cffi
 * can read.  The cdef is therefore always derived from these very headers.
 */
#ifndef CKERNEL_CONFIG_H
#define CKERNEL_CONFIG_H

#ifndef CK_CFFI_CDEF
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/* Symbols exported from libckernel. */
#if defined(CK_CFFI_CDEF)
#define CK_API
#elif defined(_WIN32)
#define CK_API __declspec(dllexport)
#else
#define CK_API __attribute__((visibility("default")))
#endif

/* An atomic field: `_Atomic(T)` for C, plain `T` for cffi (same size and
 * alignment for the 32/64-bit integers we use; checked by static assertions
 * in the library and by the layout table at import). */
#if defined(CK_CFFI_CDEF) || defined(__cplusplus)
/* C++ consumers use the exported functions, never the field directly. */
#define CK_ATOMIC(T) T
#else
#define CK_ATOMIC(T) _Atomic(T)
#endif

/* Library version (semantic versioning) and ABI version.  The ABI version is
 * bumped whenever a public struct layout or a function-pointer signature
 * changes; consumers compare it with ck_abi_version() at run time (the
 * Python package refuses to import when its cffi module was compiled against
 * another version).
 *   2: ck_type_desc.dim_name (dimension variables), ck_jit_kernel_desc's
 *      dst_pattern / src_patterns (kernels over core dims), ck_jit_core_dim
 *      and ck_jit_core_kernel (their kernel data).
 *   3: option types: CK_TYPE_OPTION (72), CK_TYPE_FLAG_OPTION, the
 *      ck_option_arrmeta layout (validity bitmaps, ckernel/validity.h).
 *   4: time types: CK_TYPE_DATETIME..CK_TYPE_TIME (80..83), ck_time_unit
 *      (ckernel/datetime.h); dictionary types: CK_TYPE_DICTIONARY (84), the
 *      ck_dictionary_arrmeta layout (ckernel/dictionary.h).
 *   5: ck_arrow_node.null_count (wrapped Arrow arrays carry validity
 *      bitmaps, ckernel/arrow_wrap.h);
 *      ck_jit_kernel_desc.dst_struct and ck_jit_struct_kernel (struct results
 *      of jitted kernels holding strings, ckernel/jit.h).
 *   6: ck_jit_core_option (the validity of `?T` elements under core dims,
 *      placed in a core kernel's data after its dims, ckernel/jit.h);
 *      ArrowDeviceArrayStream and ck_arrow_device_stream_of
 *      (ckernel/arrow_device_stream.h). */
#define CK_VERSION_MAJOR 0
#define CK_VERSION_MINOR 1
#define CK_VERSION_PATCH 0
#define CK_ABI_VERSION 6

#endif /* CKERNEL_CONFIG_H */
