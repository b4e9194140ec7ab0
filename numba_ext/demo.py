"""The main job (``make demo``): ckernel at work, layer by layer.

Run with ``python -m ckernels.demo``.  It builds variable-length strings in a
pod arena the way a string-producing kernel does (allocate a guess, grow,
trim), wraps a NumPy array in an external memblock, shares blocks between
threads, then builds typed arrays (ragged, strings, zero-copy NumPy views),
runs registry operations and reductions through lifted kernels, shows a
kernel tree, and proves that every block is freed.
"""

from __future__ import annotations

import gc
import threading

import numpy as np

import ckernels
from ckernels.lowlevel import MemBlock


def build_strings(words: list[str]) -> tuple[MemBlock, list[tuple[int, int]]]:
    """Write each word, upper-cased and repeated, into one arena."""
    arena = MemBlock.pod(256)
    alloc = arena.allocator
    spans = []
    for w in words:
        payload = (w.upper() + "!") * 3
        data = payload.encode()
        a = alloc.allocate(4)                  # a guess
        while a.size < len(data):
            alloc.resize(a, 2 * a.size)       # grow by doubling
        alloc.resize(a, len(data))            # trim to the final size
        a.view()[:] = data
        spans.append((a.begin, a.end))
    alloc.finalize()
    return arena, spans


def main() -> None:
    print(f"ckernel {ckernels.__version__} (ABI {ckernels.abi_version})")
    live0 = ckernels.live_count()

    print("\n1. strings built through the pod allocator API")
    words = ["memory", "blocks", "héllo wörld", "ckernel", "x" * 40]
    arena, spans = build_strings(words)
    from ckernels.lowlevel import ffi
    for b, e in spans:
        print("  ", ffi.buffer(ffi.cast("char *", b), e - b)[:].decode())
    st = arena.stats
    payload = sum(e - b for b, e in spans)
    print(f"   {arena.debug_repr()}")
    print(f"   payload {payload} B in {st.used} B used, {st.capacity} B held "
          f"after finalize ({st.chunks} chunk(s))")

    print("\n2. an external block keeps a NumPy array alive")
    a = np.arange(8, dtype=np.float64)
    ext = MemBlock.external(a)
    del a
    print(f"   {ext.debug_repr()}")
    print(f"   owner still alive through the block: {ext.object[:4]} ...")

    print("\n3. references shared by 4 threads (atomic incref/decref)")
    shared = MemBlock.fixed_size_pod(64, 64)
    def worker():
        for _ in range(10_000):
            shared.new_reference().close()
    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(f"   after 40000 incref/decref pairs: refcount = {shared.refcount}")

    print("\n4. errors are statuses with messages, raised as Python exceptions")
    try:
        MemBlock.pod().allocator.allocate(10, align=3)
    except ckernels.errors.InvalidArgumentError as exc:
        print(f"   {type(exc).__name__}: {exc}")

    print("\n5. types and arrays")
    from ckernels import ops
    ragged = ckernels.array([[1, 2, 3], [], [4]])
    words = ckernels.array(["héllo", "wörld", "日本語"])
    view = ckernels.asarray(np.arange(12.0).reshape(3, 4))[::-1, ::2]
    for name, arr in (("ragged", ragged), ("words", words), ("numpy view", view)):
        print(f"   {name:10s} {arr.type!s:28s} {arr.to_list()}")
    print("   " + ckernels.debug_repr(ckernels.array([1, 2, 3, 4], type="strided * int32"))
          .replace("\n", "\n   "))

    print("6. operations: broadcasting, promotion, reductions, checked assignment")
    x = ckernels.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    print("   add(x, [10, 20, 30]) =", ops.add(x, ckernels.array([10, 20, 30])).to_list())
    print("   sqrt(x[1]) =", ops.sqrt(x[1]).to_list())
    print("   sum(x, axis=0) =", ops.sum(x, axis=0).to_list(), " max(x) =", ops.max(x))
    print("   ragged + 1 =", ops.add(ragged, 1).to_list())
    try:
        ckernels.assign(ckernels.empty("strided * uint8", (2,)), [1, 300])
    except ckernels.errors.CKOverflowError as exc:
        print(f"   CKOverflowError: {exc}")

    print("7. the kernel tree behind add(x, row)")
    from ckernels.kernels import make_op_kernel
    k = make_op_kernel("add", ckernels.empty("strided * strided * float64", (2, 3)), x,
                       ckernels.array([10, 20, 30], type="strided * int32"))
    print("   " + k.debug_repr().replace("\n", "\n   "))
    del ragged, words, view, x, k, arr

    print("8. a Python function as a ckernel (compiles over a second are reported on the")
    print("   'ckernels' logger, here shown on stderr)")
    import logging
    log = logging.getLogger("ckernels")
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("   [%(name)s] %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        @ckernels.jit("string(string, float64)")
        def label(name, score):
            return f"{name.title():>8}|{score:7.2f}"
        labels = label(ckernels.array(["ada", "grace", "josé"]), ckernels.array([1.5, 22.25, 3.0]))
        print("   label(names, scores) =", labels.to_list())
        del labels, label
    finally:
        log.removeHandler(handler)

    for mb in (arena, ext, shared):
        mb.close()
    gc.collect()
    print(f"\nlive memblocks: {ckernels.live_count() - live0} (every block freed)")


if __name__ == "__main__":
    main()
