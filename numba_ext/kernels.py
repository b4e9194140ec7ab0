"""ckernels from Python: the builder, built kernels, and calling them.

A :class:`Kernel` owns a ``ck_kernel_builder`` holding one kernel tree.  Its
``address`` is the root ``ck_prefix *``; ``single`` / ``strided`` give the
entry-point address for the request it was built for, so C consumers can call
it through the plain ABI (``kernel.h``).  ``debug_repr()`` is the library's dump
of the tree; in Jupyter the tree is drawn as nested boxes.

Calling a kernel from Python is checked: :meth:`Kernel.__call__` takes NumPy
arrays of exactly the element types the kernel was built for (and enough
elements), :meth:`ArrayKernel.execute` arrays of exactly the types and layout
(arrmeta: shape, strides, arenas) it was built for; anything else is an error
before the kernel runs.  The addresses (``address``, ``single``,
``strided``) are the raw, unchecked way in, for C consumers: what they are
called with is the caller's responsibility, and they are valid only while the
Python :class:`Kernel` object lives (it owns the builder that holds the tree);
keep it alive for as long as any address taken from it is in use.
"""

from __future__ import annotations

import html
import re
import weakref

import numpy as np

from ._cargs import c_size, c_text
from ._native import c_text_out, check, ffi, lib
from .host.array import ERRMODES, errmode_value   # conversion error modes (arrays use them too)
from .errors import CKTypeError, InvalidArgumentError, InvalidStateError, NotSupportedError
from .types import Type, as_type

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
        check(lib.ck_kernel_builder_ensure_capacity(
            self.ptr, c_size(size, "KernelBuilder.ensure_capacity: size")))

    def ensure_capacity_leaf(self, size: int) -> None:
        check(lib.ck_kernel_builder_ensure_capacity_leaf(
            self.ptr, c_size(size, "KernelBuilder.ensure_capacity_leaf: size")))

    def address_at(self, offset: int) -> int:
        """Address of the prefix at ``offset`` (invalidated by any growth, and
        by the builder's destruction)."""
        p = lib.ck_kernel_builder_get(self.ptr, c_size(offset, "KernelBuilder.address_at: offset"))
        if p == ffi.NULL:
            raise InvalidArgumentError(f"offset {offset} is beyond the builder's capacity")
        return int(ffi.cast("uintptr_t", p))

    def reset(self) -> None:
        """Destroy the kernel tree, keep the storage."""
        lib.ck_kernel_builder_reset(self.ptr)

    def destroy(self) -> None:
        self._finalizer()

    def dump(self) -> str:
        return c_text_out(lib.ck_kernel_builder_dump, self.ptr)

    def __repr__(self) -> str:
        if not self._finalizer.alive:
            return "<ckernels.KernelBuilder (destroyed)>"
        where = "inline" if self.is_inline else "heap"
        return f"<ckernels.KernelBuilder capacity={self.capacity} ({where})>"

    def _repr_html_(self) -> str:
        from .display import html  # the rich display (imported lazily: no cycle)
        return html(self)


class Kernel:
    """A built ckernel tree (owns its builder).

    ``dst_type`` / ``src_types`` are the element types it was built for; a
    kernel built without them (``None``) can be called through its addresses
    only."""

    __slots__ = ("builder", "request", "signature", "nsrc", "dst_type", "src_types")

    def __init__(self, builder: KernelBuilder, request: str, signature: str, nsrc: int, *,
                 dst_type=None, src_types=None):
        if not isinstance(builder, KernelBuilder):
            raise CKTypeError(f"Kernel: builder must be a KernelBuilder, not "
                              f"{type(builder).__name__}")
        if request not in REQUESTS:
            raise InvalidArgumentError(f"Kernel: request must be 'single' or 'strided', not "
                                       f"{request!r}")
        self.builder = builder
        self.request = request
        self.signature = signature
        self.nsrc = c_size(nsrc, "Kernel: nsrc")
        self.dst_type = None if dst_type is None else as_type(dst_type)
        self.src_types = None if src_types is None else tuple(as_type(t) for t in src_types)
        if self.src_types is not None and len(self.src_types) != self.nsrc:
            raise InvalidArgumentError(f"Kernel: {len(self.src_types)} source types for "
                                       f"{self.nsrc} sources")

    @property
    def address(self) -> int:
        """The root ``ck_prefix *``, for C consumers (``kernel.h``).

        Raw and unchecked: whatever it is called with is the caller's
        responsibility.  Valid only while this Python object lives (it owns
        the builder holding the kernel tree): keep the :class:`Kernel` alive
        for as long as the address, or an entry point read from it, is used."""
        return self.builder.address_at(0)

    @property
    def function(self) -> int:
        """The root entry point (``single`` or ``strided``); lifetime as
        :attr:`address`."""
        return int(ffi.cast("uintptr_t", ffi.cast("ck_prefix *", self.address).function))

    @property
    def single(self) -> int | None:
        """Address of the ``ck_expr_single_t`` entry (None for strided kernels);
        lifetime as :attr:`address`."""
        return self.function if self.request == "single" else None

    @property
    def strided(self) -> int | None:
        """Address of the ``ck_expr_strided_t`` entry (None for single kernels);
        lifetime as :attr:`address`."""
        return self.function if self.request == "strided" else None

    def debug_repr(self) -> str:
        return self.builder.dump()

    def _numpy_dtypes(self):
        """The NumPy dtypes of the destination and the sources (checked calls)."""
        if self.dst_type is None or self.src_types is None:
            raise NotSupportedError(f"{self!r} was built without element types, so calls "
                                    "cannot be checked; call it through .address from C")
        out = []
        for t in (self.dst_type, *self.src_types):
            if not t.is_builtin:
                raise NotSupportedError(
                    f"Kernel(): {self.signature} has elements of type '{t}', which NumPy "
                    "arrays cannot hold; call it on ckernels arrays (a jitted function "
                    "itself, ckernels.assign, ckernels.ops)")
            out.append(t.to_numpy_dtype())
        return out

    def __call__(self, dst: np.ndarray, *srcs: np.ndarray) -> np.ndarray:
        """Run the kernel on 1-d NumPy arrays of exactly the element types it
        was built for (strided kernels: the whole length, the same for every
        array; single kernels: element 0).  For testing and exploring; arrays
        go through ckernels.assign / ckernels.ops.  Everything is checked
        before the kernel runs (count, types, lengths, writability, alignment)."""
        if len(srcs) != self.nsrc:
            raise InvalidArgumentError(f"Kernel(): {self.signature} takes a destination and "
                                       f"{self.nsrc} source(s), got {len(srcs)} source(s)")
        want = self._numpy_dtypes()
        for i, (a, dt) in enumerate(zip((dst, *srcs), want)):
            what = "destination" if i == 0 else f"source {i - 1}"
            if not isinstance(a, np.ndarray) or a.ndim != 1:
                raise CKTypeError(f"Kernel(): the {what} must be a 1-d NumPy array, not "
                                  f"{_describe(a)}")
            if a.dtype != dt:
                raise CKTypeError(f"Kernel(): the {what} has dtype {a.dtype}; {self.signature} "
                                  f"was built for {dt}")
            if not a.flags.aligned:
                raise InvalidArgumentError(f"Kernel(): the {what} is not aligned for {dt}")
        if not dst.flags.writeable:
            raise InvalidStateError("Kernel(): destination is read-only")
        n = len(dst)
        if self.request == "single":
            if any(len(a) == 0 for a in (dst, *srcs)):
                raise InvalidArgumentError("Kernel(): a single kernel reads and writes element "
                                           "0; every array needs at least one element")
        elif any(len(s) != n for s in srcs):
            raise InvalidArgumentError(f"Kernel(): all arguments need the same length (the "
                                       f"destination has {n}, the sources "
                                       f"{[len(s) for s in srcs]})")
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
        try:
            where = f"at {self.address:#x}"
        except InvalidStateError:
            where = "(destroyed)"
        return f"<ckernels.Kernel {self.signature} [{self.request}] {where}>"

    def _repr_html_(self) -> str:
        from .display import html  # the rich display (imported lazily: no cycle)
        return html(self)


def _describe(a) -> str:
    if isinstance(a, np.ndarray):
        return f"a {a.ndim}-d array"
    return type(a).__name__


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
    return Kernel(ckb, name, f"{dst}({src}) errmode={errmode}", 1, dst_type=dst,
                  src_types=(src,))


class ArrayKernel(Kernel):
    """A kernel built for the types and arrmeta of concrete arrays (dimension
    kernels over a scalar child).  :meth:`execute` runs it on arrays with the
    same types and layout: the data pointers are all it receives, exactly as
    in DyND's ckernel design, and the sizes, strides and arenas it uses are the
    ones baked in when it was built."""

    __slots__ = ("_keep", "_layouts")

    def execute(self, dst, *srcs):
        """Run a ``single`` array kernel on ``dst`` and ``srcs``: ckernels arrays
        (or NumPy arrays, viewed zero-copy) of exactly the types and arrmeta
        (shape, strides, var/string arenas) of the arrays it was built for."""
        from .host.array import Array, asarray
        if len(srcs) != self.nsrc:
            raise InvalidArgumentError(f"execute: {self.signature} takes a destination and "
                                       f"{self.nsrc} source(s), got {len(srcs)} source(s)")
        if self.request != "single":
            raise InvalidArgumentError("execute runs 'single' array kernels (the strided "
                                       "request repeats the whole array per element)")
        arrays = []
        for i, a in enumerate((dst, *srcs)):
            if isinstance(a, np.ndarray):
                a = asarray(a)
            if not isinstance(a, Array):
                raise CKTypeError(f"execute needs ckernels (or NumPy) arrays, not "
                                  f"{type(a).__name__}")
            self._check_layout(i, a)
            arrays.append(a)
        data = ffi.new("char **")
        check(lib.ck_array_writable_data(arrays[0]._a, data))
        src_ptrs = ffi.new("const char *[]", [lib.ck_array_data(s._a) for s in arrays[1:]]
                           or [ffi.NULL])
        prefix = ffi.cast("ck_prefix *", self.address)
        check(lib.ck_kernel_call_single(prefix, data[0], src_ptrs))
        return dst

    __call__ = execute

    def _check_layout(self, i: int, a) -> None:
        what = "destination" if i == 0 else f"source {i - 1}"
        t, arrmeta, shape, strides = self._layouts[i]
        have = a.type
        if have != t:
            raise CKTypeError(f"execute: the {what} has type '{have}'; the kernel was built "
                              f"for '{t}'")
        if _arrmeta_bytes(a, t) != arrmeta:
            if (a.shape, a.strides) != (shape, strides):
                raise InvalidArgumentError(
                    f"execute: the {what} has shape {a.shape} and strides {a.strides}; the "
                    f"kernel was built for shape {shape} and strides {strides}")
            raise InvalidArgumentError(
                f"execute: the {what} is laid out differently from the array the kernel was "
                f"built for (its var-dim or string storage is another arena); build a kernel "
                "for this array")


def _arrmeta_bytes(a, t: Type) -> bytes:
    return ffi.buffer(lib.ck_array_arrmeta(a._a), t.arrmeta_size)[:]


def _check_arrays(dst, srcs, what: str) -> None:
    from .host.array import Array
    if not isinstance(dst, Array) or not all(isinstance(s, Array) for s in srcs):
        raise CKTypeError(f"{what}: array kernels are built from ckernels arrays (for their "
                          "arrmeta)")


def _array_kernel(dst, srcs, kernreq, build, signature) -> ArrayKernel:
    req = kernel_request(kernreq)
    ckb = KernelBuilder()
    end = ffi.new("size_t *")
    build(ckb, req, end)
    k = ArrayKernel(ckb, "single" if req == lib.CK_KERNEL_REQUEST_SINGLE else "strided",
                    signature, len(srcs), dst_type=dst.type.dtype,
                    src_types=[s.type.dtype for s in srcs])
    k._keep = (dst, *srcs)  # the arrmeta baked in references their arenas
    k._layouts = [(a.type, _arrmeta_bytes(a, a.type), a.shape, a.strides)
                  for a in (dst, *srcs)]
    return k


def make_array_assignment_kernel(dst, src, kernreq="single", errmode="default") -> ArrayKernel:
    """The (lifted) assignment kernel ``dst = src`` for these arrays' types and
    arrmeta: dimension kernels with broadcasting over a scalar child."""
    _check_arrays(dst, [src], "make_array_assignment_kernel")
    mode = errmode_value(errmode)
    dst_t, src_t = dst.type, src.type   # alive across the C calls

    def build(ckb, req, end):
        check(lib.ck_make_assignment_kernel(ckb.ptr, 0, dst_t.c_type, lib.ck_array_arrmeta(dst._a),
                                            src_t.c_type, lib.ck_array_arrmeta(src._a), req,
                                            mode, end))
    return _array_kernel(dst, [src], kernreq, build, f"assign {dst_t} <- {src_t}")


def make_op_kernel(op_name: str, dst, *srcs, kernreq="single") -> ArrayKernel:
    """The lifted kernel of registry operation ``op_name`` for these arrays."""
    _check_arrays(dst, srcs, "make_op_kernel")
    op = ffi.new("const ck_op **")
    check(lib.ck_op_find(c_text(op_name, "operation name"), op))
    dst_t = dst.type
    keep = [s.type for s in srcs]       # alive across the C calls
    src_types = ffi.new("ck_type[]", [t.c_type for t in keep] or [ffi.NULL])
    src_meta = ffi.new("const char *[]", [lib.ck_array_arrmeta(s._a) for s in srcs] or [ffi.NULL])

    def build(ckb, req, end):
        check(lib.ck_make_elementwise_kernel(ckb.ptr, 0, dst_t.c_type,
                                             lib.ck_array_arrmeta(dst._a), len(srcs), src_types,
                                             src_meta, req, lib.ck_op_child_factory,
                                             ffi.cast("void *", op[0]), end))
    return _array_kernel(dst, list(srcs), kernreq, build,
                         f"{op_name}({', '.join(str(t) for t in keep)}) -> {dst_t}")


__all__ = ["KernelBuilder", "Kernel", "ArrayKernel", "make_assignment_kernel",
           "make_array_assignment_kernel", "make_op_kernel", "kernel_tree_html",
           "kernel_request", "errmode_value", "REQUESTS", "ERRMODES"]
