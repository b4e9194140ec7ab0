"""Rewriting every string of an array without growing its arena.

A string element is ``{begin, end}`` into the arena its array's arrmeta
references (``ck_string_arrmeta.blockref``); an arena only grows (bytes once
handed out never move, ``pod_allocator.h``).  A write such as ``f(x, out=s)``
allocates every new string in ``s``'s arena, so rewriting ``s`` a thousand
times kept a thousand generations of strings alive (issue 29: +148 MB for 500
rewrites, where NumPy's ``StringDType`` stays flat).

:func:`fresh_arena` reclaims them when that is safe: when the destination is
the *sole owner* of its strings -- its array block, its data and its arena
each referenced once (no view, no second handle, no export holds them: every
one of those takes a reference) -- and the write assigns every element, the
write goes into a new, empty arena and the old one is dropped after it.  A
write that fails part way leaves some elements in the new arena and the others
in the old: the new arena's chunks are then moved into the old one
(``ck_pod_memblock_adopt``, no byte copied) and the array keeps it, so every
element stays valid.

Anything else (a view as destination, an array shared with a view or an
export, var dims or struct elements holding the strings) keeps the old
behaviour: the arena grows until the array is freed (``a.copy()`` makes a
compact one).  As for any write, a thread reading the destination while
another writes it is the caller's business (``array.h``).
"""

from __future__ import annotations

import contextlib

from .._native import check, ffi, lib

_DIMS = (lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM)
_LEAVES = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES)
_ARENAS = {lib.CK_MEMBLOCK_POD: lib.ck_pod_memblock_new,
           lib.CK_MEMBLOCK_ZEROINIT: lib.ck_zeroinit_memblock_new}


def arena_slot(preamble):
    """The ``ck_memblock **`` of the arena the strings of the array at
    ``preamble`` (a ``ck_array_preamble *``) point into, when its type is
    fixed/strided dims over ``string`` or ``bytes``; else None."""
    t = preamble.type
    offset = ffi.sizeof("ck_array_preamble")
    while lib.ck_type_id_of(t) in _DIMS:
        offset += ffi.sizeof("ck_dim_arrmeta")
        t = lib.ck_type_element(t)
    if lib.ck_type_id_of(t) not in _LEAVES:
        return None
    meta = ffi.cast("ck_string_arrmeta *", ffi.cast("char *", preamble) + offset)
    return ffi.addressof(meta, "blockref")


def _sole_owner_slot(preamble):
    """:func:`arena_slot` when the array alone owns its strings (see the
    module doc) and its arena takes new allocations; else None."""
    slot = arena_slot(preamble)
    if slot is None or slot[0] == ffi.NULL or slot[0].kind not in _ARENAS:
        return None
    if lib.ck_memblock_refcount(ffi.cast("ck_memblock *", preamble)) != 1 or \
            lib.ck_memblock_refcount(slot[0]) != 1:
        return None
    if preamble.data_ref != ffi.NULL and lib.ck_memblock_refcount(preamble.data_ref) != 1:
        return None
    st = ffi.new("ck_pod_stats *")
    if lib.ck_pod_memblock_stats(slot[0], st) != lib.CK_OK or st.finalized:
        return None
    return slot


@contextlib.contextmanager
def fresh_arena(preamble):
    """Around a write that assigns *every* element of the array at
    ``preamble``: the write's strings go to a new arena and the old one is
    released after it, when the array is the sole owner of its strings (see
    the module doc); otherwise nothing changes."""
    slot = _sole_owner_slot(preamble)
    swapped = False
    if slot is not None:
        old = slot[0]
        # writers of this arena (ck_array_apply / assign) hold its lock for the
        # whole write: the swap waits for them, and a writer that starts later
        # finds the new arena in the arrmeta
        check(lib.ck_pod_memblock_writer_lock(old))
        try:
            new = ffi.new("ck_memblock **")
            if lib.ck_memblock_refcount(old) == 1 and \
                    _ARENAS[old.kind](0, new) == lib.CK_OK:
                slot[0] = new[0]
                swapped = True
        finally:
            lib.ck_pod_memblock_writer_unlock(old)
    if not swapped:
        yield
        return
    try:
        yield
    except BaseException:
        # some elements point into the new arena, the others into the old: the
        # old one takes over the new one's chunks (both unfinalized arenas of
        # one kind: this cannot fail) and stays the array's
        new = slot[0]
        check(lib.ck_pod_memblock_adopt(old, new))
        slot[0] = old
        lib.ck_memblock_decref(new)
        raise
    lib.ck_memblock_decref(old)


def arena_stats(preamble) -> tuple[int, int] | None:
    """``(capacity, used)`` bytes of the arena of the array at ``preamble``
    (:func:`arena_slot`), or None when it has none."""
    slot = arena_slot(preamble)
    if slot is None or slot[0] == ffi.NULL or slot[0].kind not in _ARENAS:
        return None
    st = ffi.new("ck_pod_stats *")
    check(lib.ck_pod_memblock_stats(slot[0], st))
    return int(st.capacity), int(st.used)


__all__ = ["arena_slot", "fresh_arena", "arena_stats"]
