"""Programs: device code built by a context (from its program cache), and launches.

A :class:`Program` owns one reference to a C ``ck_program``; :meth:`Program.launch`
runs one of its kernels over a 1-d index space with buffer and by-value
arguments (``ck_context_launch``).  The same class serves every backend: the
source dialect is the caller's business (``ckernels.jit`` emits it).
:class:`KernelArgs` is the one builder of ``ck_kernel_arg`` arrays (used here
and by the launch plans, :mod:`ckernels.device.launch`).
"""

from __future__ import annotations

import weakref

import numpy as np

from .._cargs import c_size, c_text
from .._native import c_text_out, check, ffi, lib
from ..errors import InvalidArgumentError


class KernelArgs:
    """A ``ck_kernel_arg`` array under construction: buffer arguments (a
    ``ck_buffer *`` and a byte offset) and by-value ones (a pointer and a
    size), with the memory the by-value arguments point to kept alive as long
    as this object.  ``args`` is the array (callers may store new buffers and
    offsets into it between launches)."""

    __slots__ = ("args", "n", "_keep")

    def __init__(self, n: int):
        self.args = ffi.new("ck_kernel_arg[]", max(n, 1))
        self.n = n
        self._keep: list = []

    def keep(self, cdata):
        """Keep ``cdata`` alive with the arguments; returns it."""
        self._keep.append(cdata)
        return cdata

    def buffer(self, i: int, buf=ffi.NULL, offset: int = 0) -> None:
        """Argument ``i`` is a buffer (``ck_buffer *``) at ``offset``."""
        a = self.args[i]
        a.kind = lib.CK_KERNEL_ARG_BUFFER
        a.buffer = buf
        a.offset = offset

    def scalar(self, i: int, ptr, size: int) -> None:
        """Argument ``i`` is the ``size`` bytes at ``ptr`` (kept alive by the caller
        or by :meth:`keep`)."""
        a = self.args[i]
        a.kind = lib.CK_KERNEL_ARG_SCALAR
        a.value = ptr
        a.size = size

    def value(self, i: int, ctype: str, value=None):
        """Argument ``i`` is a ``ctype`` value (initially ``value``); returns the
        one-element cdata array holding it, which callers may change."""
        v = self.keep(ffi.new(f"{ctype}[1]"))
        if value is not None:
            v[0] = value
        self.scalar(i, v, ffi.sizeof(ctype))
        return v

    def raw(self, i: int, data: bytes) -> None:
        """Argument ``i`` is the bytes ``data`` (a by-value argument of any type)."""
        self.scalar(i, self.keep(ffi.new("char[]", data)), len(data))


class Program:
    """A built device program (from the context's program cache)."""

    __slots__ = ("_prog", "_finalizer", "__weakref__")

    def __init__(self, ptr):
        self._prog = ptr
        self._finalizer = weakref.finalize(self, lib.ck_program_decref, ptr)

    def launch(self, kernel_name: str, global_size: int, *args, local_size: int = 0) -> None:
        """Run ``kernel_name`` over ``global_size`` work items.  Each argument
        is a ``(Buffer, offset)`` pair (any object holding a ``ck_buffer *`` as
        ``_buf``) or a NumPy scalar (passed by value).
        ``local_size``: the work-group size (0: the implementation's choice;
        else the global size is rounded up to whole groups and the kernel must
        guard its index: ``ck_context_launch_local``)."""
        ka = KernelArgs(len(args))
        for i, a in enumerate(args):
            if isinstance(a, tuple) and len(a) == 2 and hasattr(a[0], "_buf"):
                ka.buffer(i, a[0]._buf, c_size(a[1], f"Program.launch: argument {i} offset"))
            elif isinstance(a, np.generic):
                ka.raw(i, a.tobytes())
            else:
                raise InvalidArgumentError(
                    f"kernel argument {i} must be (Buffer, offset) or a NumPy scalar, "
                    f"not {type(a).__name__}")
        ctx = lib.ck_program_context(self._prog)
        check(lib.ck_context_launch_local(
            ctx, self._prog, c_text(kernel_name, "kernel name"), len(args), ka.args,
            c_size(global_size, "Program.launch: global_size"),
            c_size(local_size, "Program.launch: local_size")))

    def __repr__(self) -> str:
        ctx = lib.ck_program_context(self._prog)
        return f"<ckernels.Program on {c_text_out(lib.ck_context_describe, ctx)}>"

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)


__all__ = ["Program", "KernelArgs"]
