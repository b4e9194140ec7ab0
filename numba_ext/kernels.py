"""ckernels from Python: the builder, built kernels, and calling them.

A :class:`Kernel` owns a ``ck_kernel_builder`` holding one kernel tree.  Its
``address`` is the root ``ck_prefix *``; ``single`` / ``strided`` give the
entry-point address for the request it was built for, so C consumers can call
it through the plain ABI (``kernel.h``).  ``debug_repr()`` is the library's dump
of the tree; in Jupyter the tree is drawn as nested boxes.
"""

from __future__ import annotations

import html
import re
import weakref

import numpy as np

from ._native import check, ffi, lib
from .array import ERRMODES, errmode_value   # conversion error modes (arrays use them too)
from .errors import CKTypeError, InvalidArgumentError, InvalidStateError
from .types import as_type

REQUESTS = {"single": lib.CK_KERNEL_REQUEST_SINGLE, "strided": lib.CK_KERNEL_REQUEST_STRIDED}


def kernel_request(kernreq) -> int:
    if kernreq in REQUESTS:
        return REQUESTS[kernreq]
    if kernreq in REQUESTS.values():
        return kernreq
    raise InvalidArgumentError(f"kernel request must be 'single' or 'strided', not {kernreq!r}")


def _destroy(ckb) -> None:
    lib.ck_kernel_builder_destroy(ckb)


class KernelBuilder:
    """A ``ck_kernel_builder``: a zero-initialised, growable buffer with a
    128-byte inline part (small kernel trees allocate nothing)."""

    __slots__ = ("_ckb", "_finalizer", "__weakref__")

    def __init__(self):
        self._ckb = ffi.new("ck_kernel_builder *")
        lib.ck_kernel_builder_init(self._ckb)
        self._finalizer = weakref.finalize(self, _destroy, self._ckb)

    @property
    def ptr(self):
        if not self._finalizer.alive:
            raise InvalidStateError("KernelBuilder: destroyed")
        return self._ckb

    @property
    def capacity(self) -> int:
        return lib.ck_kernel_builder_capacity(self.ptr)

    @property
    def is_inline(self) -> bool:
        return bool(lib.ck_kernel_builder_is_inline(self.ptr))

    def ensure_capacity(self, size: int) -> None:
        """Room for a kernel ending at ``size`` plus a zeroed child prefix."""
        check(lib.ck_kernel_builder_ensure_capacity(self.ptr, size))

    def ensure_capacity_leaf(self, size: int) -> None:
        check(lib.ck_kernel_builder_ensure_capacity_leaf(self.ptr, size))

    def address_at(self, offset: int) -> int:
        """Address of the prefix at ``offset`` (invalidated by any growth)."""
        p = lib.ck_kernel_builder_get(self.ptr, offset)
        if p == ffi.NULL:
            raise InvalidArgumentError(f"offset {offset} is beyond the builder's capacity")
        return int(ffi.cast("uintptr_t", p))

    def reset(self) -> None:
        """Destroy the kernel tree, keep the storage."""
        lib.ck_kernel_builder_reset(self.ptr)

    def destroy(self) -> None:
        self._finalizer()

    def dump(self) -> str:
        n = ffi.new("size_t *")
        check(lib.ck_kernel_builder_dump(self.ptr, ffi.NULL, 0, n))
        buf = ffi.new("char[]", n[0] + 1)
        check(lib.ck_kernel_builder_dump(self.ptr, buf, n[0] + 1, n))
        return ffi.string(buf).decode()

    def __repr__(self) -> str:
        if not self._finalizer.alive:
            return "<ckernels.KernelBuilder (destroyed)>"
        where = "inline" if self.is_inline else "heap"
        return f"<ckernels.KernelBuilder capacity={self.capacity} ({where})>"


class Kernel:
    """A built ckernel tree (owns its builder)."""

    __slots__ = ("builder", "request", "signature", "nsrc")

    def __init__(self, builder: KernelBuilder, request: str, signature: str, nsrc: int):
        self.builder = builder
        self.request = request
        self.signature = signature
        self.nsrc = nsrc

    @property
    def address(self) -> int:
        """The root ``ck_prefix *``."""
        return self.builder.address_at(0)

    @property
    def function(self) -> int:
        return int(ffi.cast("uintptr_t", ffi.cast("ck_prefix *", self.address).function))

    @property
    def single(self) -> int | None:
        """Address of the ``ck_expr_single_t`` entry (None for strided kernels)."""
        return self.function if self.request == "single" else None

    @property
    def strided(self) -> int | None:
        """Address of the ``ck_expr_strided_t`` entry (None for single kernels)."""
        return self.function if self.request == "strided" else None

    def debug_repr(self) -> str:
        return self.builder.dump()

    def __call__(self, dst: np.ndarray, *srcs: np.ndarray) -> np.ndarray:
        """Run the kernel on contiguous 1-d NumPy buffers (strided kernels: the
        whole length; single kernels: element 0).  For testing and exploring;
        arrays go through ckernels.assign / ckernels.ops."""
        if len(srcs) != self.nsrc:
            raise InvalidArgumentError(f"kernel takes {self.nsrc} source(s), got {len(srcs)}")
        for a in (dst, *srcs):
            if not isinstance(a, np.ndarray) or a.ndim != 1:
                raise CKTypeError("Kernel(): arguments must be 1-d NumPy arrays")
        if not dst.flags.writeable:
            raise InvalidStateError("Kernel(): destination is read-only")
        n = len(dst)
        if any(len(s) != n for s in srcs):
            raise InvalidArgumentError("Kernel(): all arguments need the same length")
        src_ptrs = ffi.new("const char *[]", [ffi.cast("const char *", s.ctypes.data)
                                              for s in srcs] or [ffi.NULL])
        prefix = ffi.cast("ck_prefix *", self.address)
        dptr = ffi.cast("char *", dst.ctypes.data)
        if self.request == "single":
            check(lib.ck_kernel_call_single(prefix, dptr, src_ptrs))
        else:
            strides = ffi.new("intptr_t[]", [s.strides[0] for s in srcs] or [0])
            check(lib.ck_kernel_call_strided(prefix, dptr, dst.strides[0], src_ptrs, strides, n))
        return dst

    def __repr__(self) -> str:
        return (f"<ckernels.Kernel {self.signature} [{self.request}] at {self.address:#x}>")

    def _repr_html_(self) -> str:
        return kernel_tree_html(self.debug_repr(), title=f"{self.signature} [{self.request}]")


_LINE = re.compile(r"^(?P<indent>\s*)@(?P<offset>\d+)\s+(?P<rest>.*)$")


def kernel_tree_html(dump: str, title: str = "") -> str:
    """Draw a kernel dump as nested boxes (one per kernel, children inside)."""
    out, depth_stack = [], []
    for line in dump.splitlines():
        m = _LINE.match(line)
        if not m:
            if out:
                out.append(f"<div style='font-family:monospace;font-size:85%;color:#555'>"
                           f"{html.escape(line.strip())}</div>")
            continue
        indent = len(m.group("indent"))
        while depth_stack and depth_stack[-1] >= indent:
            out.append("</div>")
            depth_stack.pop()
        out.append("<div style='border:1px solid #888;border-radius:4px;margin:4px;"
                   "padding:4px 8px;background:rgba(120,160,220,0.08)'>"
                   f"<b>@{m.group('offset')}</b> <code>{html.escape(m.group('rest'))}</code>")
        depth_stack.append(indent)
    out.extend("</div>" for _ in depth_stack)
    return (f"<div><b>ckernels.Kernel</b> {html.escape(title)}"
            + "".join(out) + "</div>")


def make_assignment_kernel(dst_type, src_type, kernreq="strided",
                           errmode: str = "default") -> Kernel:
    """The assignment kernel between two builtin scalar types."""
    dst, src = as_type(dst_type), as_type(src_type)
    if not (dst.is_builtin and src.is_builtin):
        raise CKTypeError(f"make_assignment_kernel: builtin types only (got {src} -> {dst}); "
                          "use ckernels.assign for arrays")
    req = kernel_request(kernreq)
    ckb = KernelBuilder()
    end = ffi.new("size_t *")
    check(lib.ck_make_builtin_assignment_kernel(ckb.ptr, 0, dst.type_id, src.type_id, req,
                                                errmode_value(errmode), end))
    name = "single" if req == lib.CK_KERNEL_REQUEST_SINGLE else "strided"
    return Kernel(ckb, name, f"{dst}({src}) errmode={errmode}", 1)


class ArrayKernel(Kernel):
    """A kernel built for the types and arrmeta of concrete arrays (dimension
    kernels over a scalar child).  :meth:`execute` runs it on arrays with the
    same types and shapes: the data pointers are all it receives, exactly as
    in the seed documents."""

    __slots__ = ("_keep",)

    def execute(self, dst, *srcs):
        from .array import Array
        if len(srcs) != self.nsrc or not all(isinstance(a, Array) for a in (dst, *srcs)):
            raise CKTypeError(f"execute needs a destination and {self.nsrc} ckernel arrays")
        data = ffi.new("char **")
        check(lib.ck_array_writable_data(dst._a, data))
        src_ptrs = ffi.new("const char *[]", [lib.ck_array_data(s._a) for s in srcs])
        prefix = ffi.cast("ck_prefix *", self.address)
        if self.request == "single":
            check(lib.ck_kernel_call_single(prefix, data[0], src_ptrs))
        else:
            raise InvalidArgumentError("execute runs 'single' array kernels (the strided "
                                       "request repeats the whole array per element)")
        return dst


def _array_kernel(dst, srcs, kernreq, build, signature) -> ArrayKernel:
    from .array import Array
    if not isinstance(dst, Array) or not all(isinstance(s, Array) for s in srcs):
        raise CKTypeError("array kernels are built from ckernels arrays (for their arrmeta)")
    req = kernel_request(kernreq)
    ckb = KernelBuilder()
    end = ffi.new("size_t *")
    build(ckb, req, end)
    k = ArrayKernel(ckb, "single" if req == lib.CK_KERNEL_REQUEST_SINGLE else "strided",
                    signature, len(srcs))
    k._keep = (dst, *srcs)  # arrmeta may reference their arenas while building
    return k


def make_array_assignment_kernel(dst, src, kernreq="single", errmode="default") -> ArrayKernel:
    """The (lifted) assignment kernel ``dst = src`` for these arrays' types and
    arrmeta: dimension kernels with broadcasting over a scalar child."""
    mode = errmode_value(errmode)

    def build(ckb, req, end):
        check(lib.ck_make_assignment_kernel(ckb.ptr, 0, dst.type.c_type,
                                            lib.ck_array_arrmeta(dst._a), src.type.c_type,
                                            lib.ck_array_arrmeta(src._a), req, mode, end))
    return _array_kernel(dst, [src], kernreq, build, f"assign {dst.type} <- {src.type}")


def make_op_kernel(op_name: str, dst, *srcs, kernreq="single") -> ArrayKernel:
    """The lifted kernel of registry operation ``op_name`` for these arrays."""
    op = ffi.new("const ck_op **")
    check(lib.ck_op_find(op_name.encode(), op))
    src_types = ffi.new("ck_type[]", [s.type.c_type for s in srcs])
    src_meta = ffi.new("const char *[]", [lib.ck_array_arrmeta(s._a) for s in srcs])
    keep = [s.type for s in srcs]

    def build(ckb, req, end):
        check(lib.ck_make_elementwise_kernel(ckb.ptr, 0, dst.type.c_type,
                                             lib.ck_array_arrmeta(dst._a), len(srcs), src_types,
                                             src_meta, req, lib.ck_op_child_factory,
                                             ffi.cast("void *", op[0]), end))
    k = _array_kernel(dst, list(srcs), kernreq, build,
                      f"{op_name}({', '.join(str(t) for t in keep)}) -> {dst.type}")
    return k


__all__ = ["KernelBuilder", "Kernel", "ArrayKernel", "make_assignment_kernel",
           "make_array_assignment_kernel", "make_op_kernel", "kernel_tree_html",
           "kernel_request", "errmode_value", "REQUESTS", "ERRMODES"]
