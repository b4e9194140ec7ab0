"""Programs: device code built by a context (from its program cache), and launches.

A :class:`Program` owns one reference to a C ``ck_program``; :meth:`Program.launch`
runs one of its kernels over a 1-d index space with buffer and by-value
arguments (``ck_context_launch``).  The same class serves every backend: the
source dialect is the caller's business (``ckernels.jit`` emits it).
"""

from __future__ import annotations

import weakref

import numpy as np

from .._native import check, ffi, lib
from ..errors import InvalidArgumentError


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
        cargs = ffi.new("ck_kernel_arg[]", max(len(args), 1))
        keep = []
        for i, a in enumerate(args):
            if isinstance(a, tuple) and len(a) == 2 and hasattr(a[0], "_buf"):
                cargs[i].kind = lib.CK_KERNEL_ARG_BUFFER
                cargs[i].buffer = a[0]._buf
                cargs[i].offset = int(a[1])
            elif isinstance(a, np.generic):
                raw = ffi.new("char[]", a.tobytes())
                keep.append(raw)
                cargs[i].kind = lib.CK_KERNEL_ARG_SCALAR
                cargs[i].value = raw
                cargs[i].size = a.itemsize
            else:
                raise InvalidArgumentError(
                    f"kernel argument {i} must be (Buffer, offset) or a NumPy scalar, "
                    f"not {type(a).__name__}")
        ctx = lib.ck_program_context(self._prog)
        check(lib.ck_context_launch_local(ctx, self._prog, kernel_name.encode(), len(args),
                                          cargs, int(global_size), int(local_size)))

    def __repr__(self) -> str:
        ctx = lib.ck_program_context(self._prog)
        n = ffi.new("size_t *")
        check(lib.ck_context_describe(ctx, ffi.NULL, 0, n))
        buf = ffi.new("char[]", n[0] + 1)
        check(lib.ck_context_describe(ctx, buf, n[0] + 1, n))
        return f"<ckernels.Program on {ffi.string(buf).decode()}>"


__all__ = ["Program"]
