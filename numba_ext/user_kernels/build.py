"""Hand-written kernels on every context: building, caching and launching.

``ctx.build_kernels(source, kernels={"name": {"arg": spec, ...}}, types=...)``
prepares the source for the context's target
(:func:`ckernels.user_kernels.source.kernel_program`: the generated C API of
``types``, the kernels' prototypes, the loop annotation, entry points) and
compiles it:

* **cpu**: the system C compiler (``$CC``, else ``cc``) builds a shared
  library, cached on disk by the hash of the source and the compiler
  (``$CKERNELS_CACHE_DIR``, else ``$XDG_CACHE_HOME/ckernels``, else
  ``~/.cache/ckernels``; sub-folder ``kernels``), loaded and called through
  cffi (``ffi.dlopen``; one entry point per kernel taking ``void **args``, the
  source design's kernel convention).  The cache is trusted as the native
  cache of ``@ckernels.jit`` is (:mod:`ckernels._trust`): a directory or file
  someone else could write is skipped with an ``UntrustedCacheWarning`` (the
  kernels are compiled into a private temporary directory instead); a library
  is loaded from the descriptor its SHA-256 (``ck_<key>.so.sha256``) was
  checked on; a missing, truncated or corrupt one is rebuilt.  The compiler runs as a subprocess so
  that its whole log can be reported.
* **opencl** / **cuda**: the context builds the program (its program cache;
  PoCL's compiler, NVRTC) and launches it (``ck_context_launch``).

Calls check every argument before anything runs: host arrays (``ckernels.Array``,
NumPy arrays) on the CPU, device arrays of the context elsewhere, all
C-contiguous with exactly the element type of the spec; scalars converted to
the spec's type (integers range-checked, no float for an integer, no number
for a bool).  Compile errors are
:class:`ckernels.errors.CompileError` with the compiler's log in the user's
file name and line numbers.

The module's helpers: :mod:`.user_kernel_compile` (the CPU's compiler,
libraries and cache; compile errors) and :mod:`.user_kernel_args` (the
checks of a call's arguments).
"""

from __future__ import annotations

import html
import re
import threading
import unicodedata
import weakref

import numpy as np

from ..capi import highlight_html
from .._cargs import c_text
from .._native import ffi as _ffi
from .._native import lib
from ..errors import (BackendError, CKTypeError, InvalidArgumentError, NotSupportedError,
                      error_class)
from .source import KernelDecl, KernelProgram, kernel_program
from .args import bind, check_size, device_array, host_array, scalar
from .compile import HostLibrary, cache_dir, compile_error


# ------------------------------------------------------------ building ----

def build_kernels(ctx, source, kernels, types=None, filename=None) -> "ContextKernels":
    """What :meth:`ckernels.Context.build_kernels` does (see the module docstring)."""
    if hasattr(source, "read_text"):        # a pathlib.Path
        filename = filename or str(source)
        source = source.read_text()
    filename = _check_filename(filename or "kernels.c")
    target = {"cpu": "c"}.get(ctx.kind, ctx.kind)
    if target not in ("c", "opencl", "cuda"):
        raise NotSupportedError(f"build_kernels: '{ctx.kind}' contexts run no kernels")
    prog = kernel_program(source, kernels, types, target, filename)
    backend = HostLibrary.get(prog) if target == "c" else _device_program(ctx, prog)
    built = {name: _Built(prog, decl, backend) for name, decl in prog.kernels.items()}
    with _LOCK:
        _REGISTRY.setdefault(ctx, {}).update(built)
    return ContextKernels(ctx, built, prog)


def _check_filename(filename) -> str:
    """The name shown in diagnostics, which goes into ``#line 1 "<filename>"``:
    a str without control characters (a newline would end the directive and
    start another)."""
    if not isinstance(filename, str):
        raise CKTypeError(f"build_kernels: filename must be a str, not "
                          f"{type(filename).__name__}")
    for i, ch in enumerate(filename):
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            raise InvalidArgumentError(
                f"build_kernels: filename {filename!r} contains the control character "
                f"U+{ord(ch):04X} (at index {i}); it is written into a #line directive")
    return filename


def namespace(ctx) -> "ContextKernels":
    """Every kernel built in ``ctx`` so far (``ctx.kernels``)."""
    with _LOCK:
        built = dict(_REGISTRY.get(ctx, {}))
    return ContextKernels(ctx, built, None)


class _Built:
    """One compiled kernel, without its context (the registry is keyed by the
    context weakly; this must not hold it)."""

    __slots__ = ("program", "decl", "backend")

    def __init__(self, program: KernelProgram, decl: KernelDecl, backend):
        self.program = program
        self.decl = decl
        self.backend = backend


_LOCK = threading.Lock()
_REGISTRY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _device_program(ctx, prog: KernelProgram):
    try:
        return ctx.build_program(prog.text)
    except BackendError as exc:
        msg = str(exc)
        m = re.search(r"(CL_BUILD_PROGRAM_FAILURE \(-11\)|NVRTC_ERROR_COMPILATION \(\d+\)): ",
                      msg)
        if m is None:
            raise
        log = msg[m.end():]
        raise compile_error(prog, log, f"the {ctx.kind} compiler") from None


# ---- CUDA without a GPU: NVRTC to PTX ---------------------------------------

def compile_ptx(program, arch: str = "sm_80", options: str | None = None) -> str:
    """The PTX of a CUDA :class:`~ckernels.user_kernels.source.KernelProgram` (or CUDA C
    text), compiled by NVRTC without a driver or a device
    (``ck_cuda_compile_ptx``).  A compile error is :class:`CompileError` with
    NVRTC's whole log."""
    from ..backends import cuda as _cuda
    _cuda.prepare()             # NVRTC from this interpreter's wheels first
    text = program.text if isinstance(program, KernelProgram) else str(program)
    ptx = _ffi.new("char **")
    size = _ffi.new("size_t *")
    log = _ffi.new("char **")
    status = lib.ck_cuda_compile_ptx(c_text(text, "CUDA source"),
                                     c_text(options, "NVRTC options") if options else _ffi.NULL,
                                     c_text(arch, "CUDA architecture"), ptx, size, log)
    try:
        log_text = _ffi.string(log[0]).decode(errors="replace") if log[0] != _ffi.NULL else ""
        if status != 0:
            message = _ffi.string(lib.ck_last_error()).decode(errors="replace")
            if "NVRTC_ERROR_COMPILATION" in message and isinstance(program, KernelProgram):
                raise compile_error(program, log_text, f"NVRTC ({arch})")
            raise error_class(status)(message, status)
        return _ffi.string(ptx[0], size[0]).decode()
    finally:
        lib.ck_cuda_free(ptx[0])
        lib.ck_cuda_free(log[0])


# ------------------------------------------------------------- launching ----

class ContextKernel:
    """A hand-written kernel built in a context: ``kernel(arg=value, ...)``
    (or positional, in the order of ``kernels=``) runs it."""

    __slots__ = ("context", "_built", "__weakref__")

    def __init__(self, ctx, built: _Built):
        self.context = ctx
        self._built = built

    @property
    def name(self) -> str:
        return self._built.decl.name

    @property
    def signature(self) -> str:
        return self._built.decl.signature()

    @property
    def source(self) -> str:
        """The whole program the compiler saw (generated API, the user's source,
        entry points)."""
        return self._built.program.text

    def __call__(self, *args, **kwargs) -> None:
        decl = self._built.decl
        values = bind(decl, args, kwargs)
        device = self.context.is_device
        converted = []
        for spec, value in zip(decl.args, values):
            if spec.array:
                converted.append(device_array(decl, spec, value, self.context) if device
                                 else host_array(decl, spec, value))
            else:
                converted.append(scalar(decl, spec, value))
        for spec, c in zip(decl.args, converted):
            if spec.size is not None:
                check_size(decl, spec, c, converted)
        count = 1
        bound = decl.bound_arg()
        if bound is not None:
            count = int(converted[decl.args.index(bound)])
            if count <= 0:
                return
        if device:
            largs = []
            for spec, c in zip(decl.args, converted):
                if spec.array:
                    largs += [(c.buffer, 0), np.uint64(c.offset)]
                else:
                    largs.append(np.uint8(c) if spec.dtype.kind == "b" else c)
            self._built.backend.launch(decl.entry, count, *largs)
            return
        host = self._built.backend
        argv = host.ffi.new("void *[]", max(len(converted), 1))
        keep = []
        for j, (spec, c) in enumerate(zip(decl.args, converted)):
            if spec.array:
                argv[j] = host.ffi.cast("void *", c[0])
                keep.append(c[1])
            else:
                raw = host.ffi.new("char[]", (np.uint8(c) if spec.dtype.kind == "b"
                                              else c).tobytes())
                keep.append(raw)
                argv[j] = raw
        getattr(host.lib, decl.entry)(argv)
        del keep

    def __repr__(self) -> str:
        loop = self._built.decl.loop
        where = f", one index per {loop[0]} < {loop[1]}" if loop else ""
        at = f"{self._built.program.filename}:{self._built.decl.line}"
        return f"<ckernels kernel {self.signature} ({at}) on {self.context.describe()}{where}>"

    def _repr_html_(self) -> str:
        return highlight_html(self.source, self._built.program.target, repr(self))


class ContextKernels:
    """Kernels built in one context: one attribute per kernel (a
    :class:`ContextKernel`).  ``source`` is the program the compiler saw (for
    the object ``build_kernels`` returned)."""

    def __init__(self, ctx, built: dict, program: KernelProgram | None):
        self._context = ctx
        self._kernels = {name: ContextKernel(ctx, b) for name, b in built.items()}
        self._program = program

    @property
    def context(self):
        return self._context

    @property
    def source(self) -> str | None:
        return None if self._program is None else self._program.text

    @property
    def header(self):
        """The generated C API the kernels were compiled with (a ``CHeader``)."""
        return None if self._program is None else self._program.header

    def __getattr__(self, name: str) -> ContextKernel:
        kernels = self.__dict__.get("_kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"no kernel {name!r} in {self._context.describe()} (kernels: "
                             f"{', '.join(kernels) or 'none built'})")

    def __getitem__(self, name: str) -> ContextKernel:
        return self._kernels[name]

    def __contains__(self, name) -> bool:
        return name in self._kernels

    def __iter__(self):
        return iter(self._kernels.values())

    def __len__(self) -> int:
        return len(self._kernels)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._kernels))

    def __repr__(self) -> str:
        names = ", ".join(k.signature for k in self._kernels.values()) or "none"
        return f"<ckernels kernels on {self._context.describe()}: {names}>"

    def _repr_html_(self) -> str:
        rows = "".join(f"<li><code>{html.escape(k.signature)}</code></li>"
                       for k in self._kernels.values())
        out = f"<div><b>{html.escape(repr(self))}</b><ul>{rows}</ul>"
        if self._program is not None:
            out += ("<details><summary>source</summary>"
                    + highlight_html(self._program.text, self._program.target, "")
                    + "</details>")
        return out + "</div>"


__all__ = ["build_kernels", "namespace", "ContextKernel", "ContextKernels", "compile_ptx",
           "cache_dir"]
