"""njit-callable ckernel API (re-exported from :mod:`ckernels._numba`).

Memblocks (ownership: see :mod:`ckernels._numba.memblock`)
    ``MemBlockPtrType`` / ``memblock_ptr_type``: borrowed ``ck_memblock *``
    (how a ``ckernels.MemBlock`` argument is typed);
    ``MemBlockRefType`` / ``memblock_ref_type``: owned reference (NRT);
    methods/attributes on both: ``incref()``, ``decref()``, ``refcount``,
    ``kind``, ``address``, ``is_null``; ``ref.ptr``.
    ``pod_memblock_new``, ``zeroinit_memblock_new``,
    ``fixed_size_pod_memblock_new``, ``fixed_size_pod_data``,
    ``new_reference``, ``borrow``, ``memblock_from_address``, ``last_error``.
Pod allocator (addresses are intp)
    ``allocate(mb, size, align=1) -> (begin, end)``,
    ``resize(mb, size, begin, end) -> (begin, end)``, ``finalize(mb)``.
Strings
    ``CkStringType`` views: ``string_at(address)``, ``make_string(begin, end)``;
    ``store_str(mb, dst_address, s)``, ``store_string(dst_address, begin, end)``;
    ``string_builder(mb, initial_capacity=16)`` with ``append``,
    ``append_code_point``, ``nbytes``, ``finish``, ``finish_into``.
Arrays (ownership: see :mod:`ckernels._numba.arraytype`)
    ``CkArrayType``: the borrowed typed view a ``ckernels.Array`` argument is
    unboxed as (``.shape``, ``.strides``, ``.ndim``, ``.writable``, ``len``,
    indexing, slicing, iteration, element writes); ``array_type_of(type)``
    gives the Numba type for a ckernel type (for explicit signatures).
UTF-8 helpers
    ``decode_utf8(begin, nbytes, strict)``, ``str_utf8_nbytes(s)``,
    ``str_encode_into(s, dst)``.
"""

from ._numba import symbols  # noqa: F401  (loads the library, checks the layout)
from ._numba.allocator import allocate, finalize, resize
from ._numba.memblock import (MemBlockPtrType, MemBlockRefType, borrow, fixed_size_pod_data,
                              fixed_size_pod_memblock_new, last_error, memblock_from_address,
                              memblock_ptr_type, memblock_ref_type, new_reference,
                              pod_memblock_new, zeroinit_memblock_new)
from ._numba.strings import (CkStringType, StringBuilderType, ck_string_type, make_string,
                             store_str, store_string, string_at, string_builder)
from ._numba.str_methods import free_scratch, set_string_arena
from ._numba.utf8 import decode_utf8, str_encode_into, str_utf8_nbytes
from ._numba.arraytype import CkArrayType, CkUnsupportedElement, array_type_of

__all__ = ["MemBlockPtrType", "MemBlockRefType", "memblock_ptr_type", "memblock_ref_type",
           "pod_memblock_new", "zeroinit_memblock_new", "fixed_size_pod_memblock_new",
           "fixed_size_pod_data", "new_reference", "borrow", "memblock_from_address", "last_error",
           "allocate", "resize", "finalize", "CkStringType", "ck_string_type",
           "StringBuilderType", "make_string", "string_at", "store_str", "store_string",
           "string_builder", "decode_utf8", "str_encode_into", "str_utf8_nbytes",
           "CkArrayType", "CkUnsupportedElement", "array_type_of", "set_string_arena",
           "free_scratch"]
