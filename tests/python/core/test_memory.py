"""The memory core through cffi: memblocks, the pod allocator, errors."""

import gc
import threading

import numpy as np
import pytest

import ckernels
from ckernels import errors
from ckernels.lowlevel import MemBlock, PodAllocator, ffi, lib


def test_refcount_and_close():
    mb = MemBlock.pod(128)
    assert mb.refcount == 1 and mb.kind == "pod"
    other = mb.new_reference()
    assert mb.refcount == 2
    other.close()
    other.close()  # idempotent: drops exactly one reference
    assert mb.refcount == 1
    live = ckernels.live_count()
    mb.close()
    assert ckernels.live_count() == live - 1
    assert mb.closed
    with pytest.raises(errors.InvalidStateError, match="closed"):
        mb.refcount


def test_context_manager_and_gc_release():
    live = ckernels.live_count()
    with MemBlock.zeroinit() as mb:
        assert ckernels.live_count() == live + 1
        assert mb.kind == "zeroinit"
    assert ckernels.live_count() == live
    MemBlock.pod()  # dropped at once: finaliser decrefs
    gc.collect()
    assert ckernels.live_count() == live


def test_every_kind_allocates_and_frees():
    live = ckernels.live_count()
    blocks = [MemBlock.pod(), MemBlock.zeroinit(10), MemBlock.fixed_size_pod(24, 64),
              MemBlock.external(object())]
    assert [b.kind for b in blocks] == ["pod", "zeroinit", "fixed_size_pod", "external"]
    assert ckernels.live_count() == live + 4
    for b in blocks:
        assert b.refcount == 1
        assert b.kind in repr(b)
        assert "<svg" in b._repr_html_() and b.kind in b._repr_html_()
        b.close()
    assert ckernels.live_count() == live


def test_fixed_size_pod_data_view_keeps_block_alive():
    mb = MemBlock.fixed_size_pod(16, 4096)
    view = mb.data
    assert len(view) == 16 and bytes(view) == bytes(16)
    assert int(ffi.cast("uintptr_t", ffi.from_buffer(view))) % 4096 == 0
    assert mb.refcount == 2  # the view holds its own reference
    mb.close()
    view[:4] = b"abcd"  # still valid: the view owns a reference
    assert bytes(view[:4]) == b"abcd"
    del view
    gc.collect()


def test_external_release_runs_once_and_frees_owner():
    class Owner:
        pass

    owner = Owner()
    import weakref
    ref = weakref.ref(owner)
    mb = MemBlock.external(owner)
    assert mb.object is owner
    del owner
    gc.collect()
    assert ref() is not None  # the block keeps it alive
    extra = mb.new_reference()
    mb.close()
    gc.collect()
    assert ref() is not None
    extra.close()
    gc.collect()
    assert ref() is None  # released exactly when the count hit zero


def test_external_numpy_array_owner():
    a = np.arange(10, dtype=np.int32)
    mb = MemBlock.external(a)
    assert mb.object is a
    mb.close()


def test_pod_allocator_sequence():
    mb = MemBlock.pod(32)
    alloc = PodAllocator(mb)
    keep = alloc.allocate(5)
    keep.view()[:] = b"hello"
    s = alloc.allocate(4, align=8)
    assert s.begin % 8 == 0
    for size in (8, 64, 4096, 100_000):  # grows through several chunks
        s.view()[:] = b"\x07" * s.size
        alloc.resize(s, size)
        assert s.size == size
        assert bytes(s.view()[:4]) == b"\x07" * 4
    alloc.resize(s, 10)
    assert bytes(keep.view()) == b"hello"
    st = mb.stats
    assert st.allocations == 2 and not st.finalized
    alloc.finalize()
    assert mb.stats.finalized
    assert mb.stats.used == st.used
    with pytest.raises(errors.InvalidStateError, match="finalized"):
        alloc.allocate(1)
    with pytest.raises(errors.InvalidStateError, match="finalized"):
        alloc.resize(s, 20)


def test_allocator_errors():
    mb = MemBlock.pod()
    alloc = mb.allocator
    for bad in (0, 3, 12, 8192):
        with pytest.raises(errors.InvalidArgumentError, match="power of two"):
            alloc.allocate(8, align=bad)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        alloc.allocate(-1)
    with pytest.raises(errors.CKOverflowError, match="too large"):
        alloc.allocate(2**64 - 1)
    with pytest.raises(OverflowError):
        alloc.allocate(2**63)
    first = alloc.allocate(8)
    alloc.allocate(8)
    with pytest.raises(errors.InvalidStateError, match="most recent"):
        alloc.resize(first, 16)
    z = alloc.allocate(0)
    assert z.size == 0 and z.begin != 0
    fixed = MemBlock.fixed_size_pod(8)
    with pytest.raises(errors.CKTypeError, match="no pod allocator"):
        PodAllocator(fixed)
    with pytest.raises(errors.CKTypeError, match="not external"):
        fixed.object
    with pytest.raises(errors.CKTypeError, match="fixed_size_pod"):
        mb.data


def test_resize_releases_views():
    mb = MemBlock.pod(16)
    alloc = mb.allocator
    a = alloc.allocate(8)
    view = a.view()
    view[:] = b"abcdefgh"
    alloc.resize(a, 1 << 20)  # moves to a new chunk
    with pytest.raises(ValueError, match="released"):
        view[0]  # a stale view cannot reach the old memory
    assert bytes(a.view()[:8]) == b"abcdefgh"


def test_stale_slice_stays_memory_safe():
    mb = MemBlock.pod(16)
    alloc = mb.allocator
    a = alloc.allocate(8)
    a.view()[:] = b"abcdefgh"
    part = a.view()[2:4]  # a slice outlives the release of its parent view
    alloc.resize(a, 1 << 20)  # moves; the old bytes stay mapped
    assert bytes(part) == b"cd"
    assert bytes(a.view()[:8]) == b"abcdefgh"
    del part


def test_zeroinit_reads_zero():
    mb = MemBlock.zeroinit(64)
    alloc = mb.allocator
    a = alloc.allocate(100, align=16)
    assert bytes(a.view()) == bytes(100)
    a.view()[:] = b"\xff" * 100
    alloc.resize(a, 10)
    alloc.resize(a, 100)
    assert bytes(a.view()[10:]) == bytes(90)


def test_error_status_and_message_from_c():
    out = ffi.new("ck_memblock **")
    status = lib.ck_fixed_size_pod_memblock_new(8, 3, out, ffi.new("char **"))
    assert status == lib.CK_ERR_INVALID_ARGUMENT
    with pytest.raises(errors.InvalidArgumentError) as info:
        ckernels.lowlevel.check(status)
    assert "ck_fixed_size_pod_memblock_new: alignment 3" in str(info.value)
    assert info.value.status == lib.CK_ERR_INVALID_ARGUMENT
    assert isinstance(info.value, ckernels.CKernelError)


def test_debug_repr():
    mb = MemBlock.pod(64)
    mb.allocator.allocate(10)
    text = mb.debug_repr()
    assert "kind=pod" in text and "refcount=1" in text and "used=10" in text
    assert "capacity=64" in text


def test_fault_injection_from_python():
    live = ckernels.live_count()
    ckernels.lowlevel.fail_alloc_after(1)
    try:
        with pytest.raises(errors.OutOfMemoryError, match="out of memory"):
            MemBlock.pod()
    finally:
        ckernels.lowlevel.fail_alloc_after(0)
    assert ckernels.live_count() == live


def test_threads_share_blocks():
    mb = MemBlock.pod()
    def work():
        for _ in range(2000):
            mb.new_reference().close()
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mb.refcount == 1


def test_external_blocks_released_at_exit_print_nothing(tmp_path):
    """Blocks still held by C objects at exit (here a cached jitted function's
    code, held by its NumPy ufunc loop) are released after cffi's callback
    state is gone: the release guard leaves their owners alone, silently
    (before it, the cached load printed cffi's "extern \"Python\" ... not
    called in the current subinterpreter" at every exit)."""
    import os
    import subprocess
    import sys
    mod = tmp_path / "exitmod.py"
    mod.write_text("import numpy as np, ckernels\n"
                   "@ckernels.jit('float64(float64)', cache=True)\n"
                   "def f(x):\n"
                   "    return x + 1.0\n"
                   "assert f(np.ones(3)).tolist() == [2.0, 2.0, 2.0]\n")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    for _ in range(2):   # compile and save, then load from the cache
        p = subprocess.run([sys.executable, str(mod)], capture_output=True, text=True,
                           timeout=120, env=env, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stderr == "", p.stderr
