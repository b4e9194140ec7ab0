"""Memblocks and the pod allocator in @numba.njit code (ckernels._numba / ckernels.nb).

Besides the conftest's live-memblock balance, every test here checks that
Numba's NRT allocation statistics are balanced (MemBlockRef values and
builders are NRT-managed).
"""

import gc
import importlib.metadata
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

numba = pytest.importorskip("numba")
from numba import njit  # noqa: E402
from numba.core import errors as nb_errors  # noqa: E402
from numba.core.runtime import _nrt_python, rtsys  # noqa: E402

import ckernels  # noqa: E402
import ckernels.nb as nb  # noqa: E402
from ckernels import errors, lowlevel  # noqa: E402
from ckernels._numba import symbols  # noqa: E402
from ckernels._numba.utf8 import load_u8, store_u8  # noqa: E402

_nrt_python.memsys_enable_stats()


def _nrt_live():
    st = rtsys.get_allocation_stats()
    return st.alloc - st.free, st.mi_alloc - st.mi_free


@pytest.fixture(autouse=True)
def _nrt_balance():
    gc.collect()
    before = _nrt_live()
    yield
    gc.collect()
    assert _nrt_live() == before, "NRT allocations leaked"


def _raw_pod_block():
    """A pod block owned by nobody in Python: (address, cffi pointer)."""
    out = lowlevel.ffi.new("ck_memblock **")
    lowlevel.check(lowlevel.lib.ck_pod_memblock_new(0, out))
    return int(lowlevel.ffi.cast("uintptr_t", out[0])), out[0]


# --------------------------------------------------------- symbols/layout --
def test_symbols_resolved_by_name_and_layout_checked():
    from llvmlite import binding as llvm
    assert os.path.basename(symbols.library_path()).startswith("libckernel")
    for name in symbols.SIGNATURES:
        assert llvm.address_of_symbol(name), name
    assert symbols.layout_mismatches() == []


def test_layout_mismatch_refuses_to_load(monkeypatch):
    monkeypatch.setitem(symbols.ASSUMED_LAYOUT, ("ck_string", "end"), (16, 8))
    with pytest.raises(ImportError, match=r"ck_string\.end"):
        symbols.check_layout()


def test_entry_point_registered():
    eps = importlib.metadata.entry_points(group="numba_extensions", name="init")
    values = {ep.value for ep in eps}
    assert "_ckernels_numba:init" in values     # outside the package (test_numba_entry.py)
    from ckernels._numba import _init_extension
    _init_extension()  # idempotent
    # a fresh interpreter that never imports ckernels._numba itself: Numba's
    # entry point loads the extension, so MemBlock arguments type
    code = textwrap.dedent("""
        import sys, numba, ckernels
        assert "ckernels._numba" not in sys.modules
        @numba.njit
        def f(m):
            return m.refcount
        with ckernels.MemBlock.pod() as m:
            print(f(m), "ckernels._numba" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True"]


# ------------------------------------------------------ incref / decref ---
def test_typeof_memblock():
    with ckernels.MemBlock.pod() as m:
        assert numba.typeof(m) == nb.memblock_ptr_type


def test_incref_decref_change_c_refcount():
    @njit
    def bump(mb, n):
        for _ in range(n):
            mb.incref()
        return mb.refcount

    @njit
    def drop(mb, n):
        for _ in range(n):
            mb.decref()
        return mb.refcount

    m = ckernels.MemBlock.pod()
    assert m.refcount == 1
    assert bump(m, 3) == 4
    assert m.refcount == 4
    assert drop(m, 3) == 1
    assert m.refcount == 1
    m.close()


def test_decref_frees_exactly_at_zero():
    @njit
    def incref(addr):
        nb.memblock_from_address(addr).incref()

    @njit
    def decref(addr):
        nb.memblock_from_address(addr).decref()

    base = ckernels.live_count()
    addr, _ = _raw_pod_block()
    assert ckernels.live_count() == base + 1
    incref(addr)
    decref(addr)  # 2 -> 1: not freed
    assert ckernels.live_count() == base + 1
    decref(addr)  # 1 -> 0: freed by ck_memblock_free
    assert ckernels.live_count() == base


def test_null_memblock_incref_decref_are_noops():
    @njit
    def f():
        p = nb.memblock_from_address(0)
        p.incref()
        p.decref()
        return p.is_null, p

    assert f() == (True, None)


def test_attributes():
    @njit
    def attrs(mb):
        return mb.refcount, mb.kind, mb.address, mb.is_null

    with ckernels.MemBlock.zeroinit() as m:
        assert attrs(m) == (1, lowlevel.lib.CK_MEMBLOCK_ZEROINIT, m.address, False)


def test_incref_decref_are_inline_atomics():
    @njit
    def pair(mb):
        mb.incref()
        mb.decref()

    with ckernels.MemBlock.pod() as m:
        pair(m)
        assert m.refcount == 1
    llvm_ir = pair.inspect_llvm(pair.signatures[0])
    body = llvm_ir[llvm_ir.index("define"):]
    assert re.search(r"atomicrmw add ptr %\S+, i32 1 monotonic", body)
    # the decrement: an atomicrmw sub, or x86's flag-setting form of it
    assert re.search(r"atomicrmw sub|llvm\.x86\.atomic\.sub", body)
    assert "fence release" in body and "fence acquire" in body
    assert "@ck_memblock_free" in body
    assert "ck_memblock_incref" not in llvm_ir
    assert "ck_memblock_decref" not in llvm_ir


# -------------------------------------------------------------- boxing ----
def test_returning_borrowed_memblock_boxes_with_incref():
    @njit
    def ident(mb):
        return mb

    m = ckernels.MemBlock.pod()
    r = ident(m)
    assert isinstance(r, ckernels.MemBlock) and r.address == m.address
    assert m.refcount == 2
    r.close()
    assert m.refcount == 1
    m.close()


def test_unbox_closed_memblock_raises():
    @njit
    def f(mb):
        return mb.refcount

    m = ckernels.MemBlock.pod()
    m.close()
    with pytest.raises(errors.InvalidStateError):
        f(m)


def test_constructors_return_owned_references():
    @njit
    def make(n):
        return nb.pod_memblock_new(n), nb.zeroinit_memblock_new(n)

    base = ckernels.live_count()
    p, z = make(100)
    assert ckernels.live_count() == base + 2
    assert (p.kind, p.refcount) == ("pod", 1)
    p.allocator.allocate(1)
    assert p.stats.capacity == 100  # the initial capacity reached the C constructor
    assert (z.kind, z.refcount) == ("zeroinit", 1)
    del p, z
    gc.collect()
    assert ckernels.live_count() == base


def test_unreturned_owned_reference_is_released_by_nrt():
    @njit
    def scratch(n):
        total = 0
        for i in range(n):
            r = nb.pod_memblock_new(0)
            b, e = nb.allocate(r, 64, 8)
            total += e - b + r.refcount
        return total

    base = ckernels.live_count()
    assert scratch(10) == 10 * 65
    assert ckernels.live_count() == base


def test_new_reference_and_ref_ptr():
    @njit
    def f(mb):
        r = nb.new_reference(mb)
        inside = mb.refcount
        return inside, r.ptr.address == mb.address, r

    m = ckernels.MemBlock.pod()
    inside, same, r = f(m)
    assert (inside, same) == (2, True)
    assert m.refcount == 2  # the returned r owns the extra reference
    r.close()
    assert m.refcount == 1
    m.close()


def test_owned_and_borrowed_do_not_unify():
    @njit
    def f(mb, c):
        x = mb if c else nb.pod_memblock_new(0)
        return x.refcount

    with ckernels.MemBlock.pod() as m:
        with pytest.raises(nb_errors.TypingError):
            f(m, True)


def test_fixed_size_pod_in_njit():
    @njit
    def make():
        r, data = nb.fixed_size_pod_memblock_new(32, 64)
        d2, size = nb.fixed_size_pod_data(r)
        zero = True
        for i in range(size):
            zero = zero and load_u8(data + i) == 0
        store_u8(data, 7)
        return r, data == d2, data % 64, size, zero

    r, same, mis, size, zero = make()
    assert (same, mis, size, zero) == (True, 0, 32, True)
    assert r.kind == "fixed_size_pod" and bytes(r.data[:1]) == b"\x07"
    r.close()

    @njit
    def bad():
        r, data = nb.fixed_size_pod_memblock_new(32, 3)
        return r

    with pytest.raises(errors.InvalidArgumentError, match="align"):
        bad()


# ---------------------------------------------------------- allocator -----
def test_allocate_alignment_and_sequence_match_python_api():
    sizes = [(1, 1), (3, 2), (10, 8), (0, 16), (7, 64), (100, 4096), (5, 1)]

    @njit
    def run(mb, spec):
        out = np.empty((len(spec), 2), dtype=np.intp)
        for k in range(len(spec)):
            b, e = nb.allocate(mb, spec[k, 0], spec[k, 1])
            out[k, 0] = b
            out[k, 1] = e
        return out

    with ckernels.MemBlock.pod(8192) as a, ckernels.MemBlock.pod(8192) as c:
        spans = run(a, np.array(sizes, dtype=np.intp))
        alloc = c.allocator
        ref = [alloc.allocate(n, al) for n, al in sizes]
        for (n, al), (b, e), r in zip(sizes, spans, ref):
            assert b % al == 0 and e - b == n
            assert r.begin % al == 0 and r.size == n
        assert all(spans[k, 0] >= spans[k - 1, 1] for k in range(1, len(sizes)))
        sa, sc = a.stats, c.stats  # padding depends on the chunk's address
        assert (sa.capacity, sa.chunks, sa.allocations) == (sc.capacity, sc.chunks,
                                                            sc.allocations)


def test_resize_keeps_contents_and_moves():
    @njit
    def grow(mb):
        b, e = nb.allocate(mb, 100, 1)
        for i in range(100):
            store_u8(b + i, i)
        b2, e2 = nb.resize(mb, 1 << 20, b, e)  # bigger than the chunk: moves
        ok = True
        for i in range(100):
            ok = ok and load_u8(b2 + i) == i
        b3, e3 = nb.resize(mb, 10, b2, e2)     # shrink in place
        return ok, b2 != b, e2 - b2, b3 == b2, e3 - b3

    with ckernels.MemBlock.pod(4096) as m:
        ok, moved, n2, same, n3 = grow(m)
        assert (ok, moved, n2, same, n3) == (True, True, 1 << 20, True, 10)
        assert m.stats.chunks == 2


def test_finalize_then_allocate_raises_invalid_state():
    @njit
    def f(mb):
        nb.allocate(mb, 10, 1)
        nb.finalize(mb)
        nb.finalize(mb)  # no-op
        return nb.allocate(mb, 10, 1)

    with ckernels.MemBlock.pod() as m:
        with pytest.raises(errors.InvalidStateError, match="finalized") as ei:
            f(m)
        assert isinstance(ei.value, RuntimeError) and ei.value.status == 4
        assert m.stats.finalized


def test_allocator_errors_carry_c_message():
    @njit
    def bad_align(mb):
        return nb.allocate(mb, 10, 3)

    @njit
    def stale_resize(mb):
        b, e = nb.allocate(mb, 10, 1)
        nb.allocate(mb, 10, 1)
        return nb.resize(mb, 20, b, e)

    with ckernels.MemBlock.pod() as m:
        with pytest.raises(ValueError, match=r"ck_pod_allocate: alignment 3 is not a power") as ei:
            bad_align(m)
        assert type(ei.value) is errors.InvalidArgumentError and ei.value.status == 1
        with pytest.raises(RuntimeError, match=r"ck_pod_resize") as ei:
            stale_resize(m)
        assert ei.value.status == lowlevel.lib.CK_ERR_INVALID_STATE
    with ckernels.MemBlock.fixed_size_pod(8) as f:
        with pytest.raises(TypeError, match="ck_pod_allocate") as ei:
            bad_align(f)
        assert ei.value.status == lowlevel.lib.CK_ERR_TYPE


def test_out_of_memory_raises_memory_error():
    @njit
    def big(mb, n):
        return nb.allocate(mb, n, 1)

    with ckernels.MemBlock.pod(64) as m:
        big(m, 1)  # compile first
        lowlevel.fail_alloc_after(1)
        try:
            with pytest.raises(MemoryError) as ei:
                big(m, 1 << 20)
        finally:
            lowlevel.fail_alloc_after(0)
        assert isinstance(ei.value, errors.OutOfMemoryError) and ei.value.status == 2
        assert str(ei.value)  # the C message, or "ck_pod_allocate failed with status 2"


def test_negative_size_is_value_error():
    @njit
    def f(mb):
        return nb.allocate(mb, -1, 1)

    with ckernels.MemBlock.pod() as m:
        with pytest.raises(ValueError, match="non-negative"):
            f(m)


def test_last_error_readable_from_njit():
    @njit
    def f():
        return nb.last_error()

    lowlevel.lib.ck_set_error(1, "héllo from C".encode())
    assert f() == "héllo from C"


# --------------------------------------------------------------- cache ----
_CACHE_SCRIPT = textwrap.dedent("""
    import json, sys
    import numba
    import ckernels, ckernels.nb as nb

    @numba.njit(cache=True)
    def work(mb, n):
        r = nb.pod_memblock_new(0)
        b, e = nb.allocate(r, n, 8)
        b, e = nb.resize(r, 2 * n, b, e)
        mb.incref()
        c = mb.refcount
        mb.decref()
        return e - b, c, r

    @numba.njit(cache=True)
    def bad(mb):
        return nb.allocate(mb, 8, 3)

    m = ckernels.MemBlock.pod()
    size, count, r = work(m, 50)
    assert (size, count, r.refcount, m.refcount) == (100, 2, 1, 1), (size, count)
    del r
    try:
        bad(m)
    except ckernels.errors.InvalidArgumentError as exc:  # raised by cached code
        assert "alignment 3" in str(exc) and exc.status == 1, exc
    else:
        raise AssertionError("no error")
    stats = [f.stats for f in (work, bad)]
    print(json.dumps({"hits": sum(sum(s.cache_hits.values()) for s in stats),
                      "misses": sum(sum(s.cache_misses.values()) for s in stats)}))
""")


def test_cache_true_second_interpreter_loads_without_compiling(tmp_path):
    import json
    script = tmp_path / "cached_mod.py"
    script.write_text(_CACHE_SCRIPT)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run():
        out = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run()
    assert first["misses"] == 2 and first["hits"] == 0
    second = run()
    assert second["hits"] == 2 and second["misses"] == 0
