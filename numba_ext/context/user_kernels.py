"""Hand-written kernels on every context: building, caching and launching.

``ctx.build_kernels(source, kernels={"name": {"arg": spec, ...}}, types=...)``
prepares the source for the context's target
(:func:`ckernels.context.kernel_source.kernel_program`: the generated C API of
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
"""

from __future__ import annotations

import functools
import html
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import unicodedata
import weakref

import numpy as np

from ..host.array import Array, asarray
from ..capi import highlight_html
from .kernel_source import KernelDecl, KernelProgram, kernel_program
from .. import _trust
from .._cargs import c_text
from .._native import ffi as _ffi
from .._native import lib
from ..errors import (BackendError, CKOverflowError, CKTypeError, CompileError,
                      InvalidArgumentError, NotSupportedError, error_class)
from ..types import Type
from .device_array import DeviceArray, StructElement

_DIM_AM = _ffi.sizeof("ck_dim_arrmeta")
_VAR_AM = _ffi.sizeof("ck_var_dim_arrmeta")
_FIXED, _STRIDED, _VAR = lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM, lib.CK_TYPE_VAR_DIM
_STRUCT = lib.CK_TYPE_STRUCT


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
    backend = _HostLibrary.get(prog) if target == "c" else _device_program(ctx, prog)
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
        raise _compile_error(prog, log, f"the {ctx.kind} compiler") from None


def _compile_error(prog: KernelProgram, log: str, compiler: str) -> CompileError:
    log = _with_source_lines(log.strip(), prog.filename, prog.user_source)
    return CompileError(f"{prog.filename}: {compiler} rejected the kernels:\n{log}", log=log,
                        target=prog.target)


def _with_source_lines(log: str, filename: str, source: str) -> str:
    """The log with the user's source line under each diagnostic that names
    it, unless the compiler printed the line itself."""
    lines = source.split("\n")
    pat = re.compile(r"^(?:error: )?" + re.escape(filename) + r"(?::(\d+)|\((\d+)\))")
    out = []
    log_lines = log.split("\n")
    shown = None        # the line quoted last: notes on the same line need no repeat
    for i, text in enumerate(log_lines):
        out.append(text)
        m = pat.match(text)
        if m is None:
            continue
        no = int(m.group(1) or m.group(2))
        if not 1 <= no <= len(lines) or no == shown:
            continue
        src = lines[no - 1]
        following = log_lines[i + 1] if i + 1 < len(log_lines) else ""
        if src.strip() and src.strip() not in following:
            out.append(f"{no:5d} | {src}")
        shown = no
    return "\n".join(out)


# ---- the CPU: a shared library from the system C compiler, through cffi ----

# What later C standards and GCC 14 make errors is an error here too: a
# misspelt accessor must not become an undefined symbol at load time.
_CFLAGS = ("-std=gnu11", "-O2", "-fPIC", "-shared", "-Wall",
           "-Werror=implicit-function-declaration", "-Werror=implicit-int",
           "-Werror=incompatible-pointer-types", "-Werror=int-conversion",
           "-Werror=return-type") + (("-Wl,-z,defs",) if sys.platform.startswith("linux")
                                     else ())


def cache_dir() -> str:
    """Where compiled CPU kernels are kept (see the module docstring)."""
    root = os.environ.get("CKERNELS_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        root = os.path.join(base, "ckernels")
    return os.path.join(root, "kernels")


@functools.lru_cache(maxsize=None)
def _compiler() -> tuple[tuple[str, ...], str]:
    """``(command, identity)`` of the system C compiler; the identity (path and
    version line) is part of the cache key."""
    cmd = tuple(shlex.split(os.environ.get("CC", "") or "cc"))
    path = shutil.which(cmd[0]) if cmd else None
    if path is None:
        raise CompileError(f"build_kernels: no C compiler found ({' '.join(cmd) or 'cc'}); "
                           "install one (gcc, clang) or set CC", target="c")
    try:
        version = subprocess.run([*cmd, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.split("\n", 1)[0]
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompileError(f"build_kernels: cannot run the C compiler {path}: {exc}",
                           target="c") from None
    return cmd, f"{os.path.realpath(path)} {version}"


class _HostLibrary:
    """A compiled CPU kernel library, loaded with cffi (one per source, per
    process)."""

    _loaded: dict = {}
    _lock = threading.Lock()

    def __init__(self, ffi, lib_, path, log):
        self.ffi = ffi
        self.lib = lib_
        self.path = path
        self.log = log

    @classmethod
    def get(cls, prog: KernelProgram) -> "_HostLibrary":
        cmd, identity = _compiler()
        key = hashlib.sha256("\n".join([identity, " ".join(_CFLAGS), prog.text]).encode()
                             ).hexdigest()[:32]
        with cls._lock:
            found = cls._loaded.get(key)
            if found is None:
                import cffi
                ffi = cffi.FFI()
                ffi.cdef("\n".join(f"void {d.entry}(void *const *args);"
                                   for d in prog.kernels.values()))
                found = cls._loaded[key] = cls(ffi, *_library(ffi, cmd, prog, key))
        return found


def _library(ffi, cmd, prog: KernelProgram, key: str):
    """``(cffi library, path, compiler log)``: from the cache when it holds a
    sound copy (trusted, its hash matching), else compiled now -- into the cache
    when the cache directory is trusted (:mod:`ckernels._trust`), else into a
    private temporary directory (nothing cached, a warning said why)."""
    folder = cache_dir()
    if _trust.trusted_directory(folder, "the build_kernels cache", create=True):
        path = os.path.join(folder, f"ck_{key}.so")
        lib_, _ = _load_checked(ffi, path)
        if lib_ is not None:
            return lib_, path, ""
        log = _compile_host(cmd, prog, key, folder)
        lib_, problem = _load_checked(ffi, path)
    else:
        with tempfile.TemporaryDirectory(prefix="ckernels-kernels-") as private:
            path = os.path.join(private, f"ck_{key}.so")
            log = _compile_host(cmd, prog, key, private)
            lib_, problem = _load_checked(ffi, path)
    if lib_ is None:
        raise CompileError(f"build_kernels: cannot load {path}: {problem}", target="c")
    return lib_, path, log


def _load_checked(ffi, path: str):
    """``(library, None)`` when ``path`` and its recorded SHA-256 (``.sha256``
    beside it) pass the checks of :mod:`ckernels._trust` and agree, the library
    loaded from the descriptor that was hashed; else ``(None, why)`` -- a
    missing, truncated, corrupt or untrusted file is rebuilt by the caller."""
    try:
        want = _trust.read_trusted(path + ".sha256").decode("ascii").strip()
        fd, data = _trust.open_trusted(path)
    except _trust.UntrustedFile as exc:
        _trust.warn_untrusted(str(exc), "the build_kernels cache")
        return None, str(exc)
    except (OSError, UnicodeDecodeError) as exc:
        return None, str(exc)
    if hashlib.sha256(data).hexdigest() != want:
        os.close(fd)
        return None, "its content does not match its recorded SHA-256"
    try:
        return ffi.dlopen(_trust.loadable_path(fd, path)), None
    except OSError as exc:
        return None, str(exc)


def _compile_host(cmd, prog: KernelProgram, key: str, folder: str) -> str:
    """Compile the library into ``folder`` as ``ck_<key>.so`` with its SHA-256
    in ``ck_<key>.so.sha256`` (each written whole, by rename); returns the
    compiler's log."""
    path = os.path.join(folder, f"ck_{key}.so")
    with tempfile.TemporaryDirectory(dir=folder, prefix="build-") as tmp:
        # not the user's file name: the compiler would quote its lines
        src = os.path.join(tmp, f"ck_{key}.c")
        out = os.path.join(tmp, f"ck_{key}.so")
        with open(src, "w") as f:
            f.write(prog.text)
        try:
            res = subprocess.run([*cmd, *_CFLAGS, "-o", out, src, "-lm"], cwd=tmp,
                                 capture_output=True, text=True, timeout=600,
                                 env={**os.environ, "LC_ALL": "C"})
        except (OSError, subprocess.SubprocessError) as exc:
            raise CompileError(f"build_kernels: running the C compiler failed: {exc}",
                               target="c") from None
        log = (res.stdout + res.stderr).strip()
        if res.returncode != 0:
            raise _compile_error(prog, log, f"the C compiler ({cmd[0]})")
        with open(out, "rb") as f:
            data = f.read()
    # the library first, then its hash: a reader sees a hash only for a whole file
    _trust.write_atomic(path, data)
    _trust.write_atomic(path + ".sha256", hashlib.sha256(data).hexdigest().encode())
    return log


# ---- CUDA without a GPU: NVRTC to PTX ---------------------------------------

def compile_ptx(program, arch: str = "sm_80", options: str | None = None) -> str:
    """The PTX of a CUDA :class:`~ckernels.context.kernel_source.KernelProgram` (or CUDA C
    text), compiled by NVRTC without a driver or a device
    (``ck_cuda_compile_ptx``).  A compile error is :class:`CompileError` with
    NVRTC's whole log."""
    from . import backend_cuda as _cuda
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
                raise _compile_error(program, log_text, f"NVRTC ({arch})")
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
        values = _bind(decl, args, kwargs)
        device = self.context.is_device
        converted = []
        for spec, value in zip(decl.args, values):
            if spec.array:
                converted.append(_device_array(decl, spec, value, self.context) if device
                                 else _host_array(decl, spec, value))
            else:
                converted.append(_scalar(decl, spec, value))
        for spec, c in zip(decl.args, converted):
            if spec.size is not None:
                _check_size(decl, spec, c, converted)
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


def _bind(decl: KernelDecl, args, kwargs) -> list:
    names = [a.name for a in decl.args]
    if len(args) > len(names):
        raise CKTypeError(f"{decl.name}() takes {len(names)} arguments ({', '.join(names)}), "
                          f"{len(args)} given")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise CKTypeError(f"{decl.name}() has no argument {k!r} ({decl.signature()})")
        if k in values:
            raise CKTypeError(f"{decl.name}() got argument {k!r} twice")
        values[k] = v
    missing = [n for n in names if n not in values]
    if missing:
        raise CKTypeError(f"{decl.name}() is missing {', '.join(map(repr, missing))} "
                          f"({decl.signature()})")
    return [values[n] for n in names]


def _check_size(decl, spec, c, converted) -> None:
    """An array whose spec fixes its size (``T[n]``, ``T[3]``) has that many
    elements."""
    n = spec.size
    what = str(n)
    if isinstance(n, str):
        n = int(converted[[a.name for a in decl.args].index(spec.size)])
        what = f"{spec.size} = {n}"
    count = c.size if isinstance(c, DeviceArray) else int(np.prod(c[1].shape, dtype=np.int64))
    if count != n:
        raise InvalidArgumentError(f"{decl.name}(): argument '{spec.name}' ({spec.text}) has "
                                   f"{count} elements, it must have {what}")


def _describe(spec) -> str:
    if spec.node is not None:
        return f"'{spec.type_name}' = {spec.node.type}"
    return spec.type_name


def _host_array(decl, spec, value) -> tuple[int, object]:
    """``(data address, owner)`` of a host array argument, checked."""
    where = f"{decl.name}(): argument '{spec.name}' ({spec.text})"
    if isinstance(value, DeviceArray):
        raise InvalidArgumentError(f"{where} is a device array of {value.context.describe()}, "
                                   "but this kernel runs on the CPU: copy it to the host first")
    if isinstance(value, np.ndarray):
        try:
            arr = asarray(value)
        except CKTypeError as exc:
            raise CKTypeError(f"{where}: {exc}") from None
    elif isinstance(value, Array):
        arr = value
    else:
        raise CKTypeError(f"{where} must be an array (ckernels.Array or NumPy array), not "
                          f"{type(value).__name__}")
    t = arr.type
    kinds = []
    while t.type_id in (_FIXED, _STRIDED, _VAR):
        kinds.append(t.type_id)
        t = t.element
    if _VAR in kinds:
        raise CKTypeError(f"{where}: an array of type '{arr.type}' has var dims; kernel "
                          "arrays are C-contiguous over fixed/strided dims")
    if t != spec.element_type:
        raise CKTypeError(f"{where}: elements of type '{t}', the kernel takes "
                          f"{_describe(spec)}")
    shape, strides = arr.shape, arr.strides
    if not _contiguous(shape, strides, t.data_size):
        raise InvalidArgumentError(f"{where} is not C-contiguous (shape {shape}, strides "
                                   f"{strides}); pass a contiguous copy")
    problem = _non_default(t, arr._arrmeta + _DIM_AM * len(shape))
    if problem:
        raise InvalidArgumentError(f"{where}: the elements are a view ({problem}); the C API "
                                   "addresses elements laid out as their type says: pass a copy")
    if not spec.const and not arr.writable:
        raise InvalidArgumentError(f"{where} is read-only; declare it 'const {spec.type_name}[]' "
                                   "if the kernel only reads it")
    return arr._data, arr


def _contiguous(shape, strides, itemsize) -> bool:
    """C order (as NumPy decides: the stride of a dim of size 1 does not
    matter, an empty array is contiguous)."""
    if 0 in shape:
        return True
    acc = itemsize
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


def _non_default(t: Type, arrmeta: int) -> str | None:
    """What in an element's arrmeta differs from the layout of its type (struct
    data offsets, fixed dim strides, var dim strides and offsets), or None."""
    tid = t.type_id
    if tid == _STRUCT:
        offsets = _ffi.cast("uintptr_t *", arrmeta)
        ftype = _ffi.new("ck_type *")
        name = _ffi.new("const char **")
        off = _ffi.new("size_t *")
        am_off = _ffi.new("size_t *")
        for i in range(lib.ck_struct_field_count(t.c_type)):
            lib.ck_struct_field(t.c_type, i, name, ftype, off, am_off)
            fname = _ffi.string(name[0]).decode()
            if offsets[i] != off[0]:
                return f"field '{fname}' at data offset {offsets[i]}, not {off[0]}"
            inner = _non_default(Type._borrow(ftype[0]), arrmeta + am_off[0])
            if inner:
                return f"{fname}: {inner}"
        return None
    if tid == _FIXED:
        d = _ffi.cast("ck_dim_arrmeta *", arrmeta)
        el = t.element
        if d.stride != el.data_size:
            return f"a fixed dim with stride {d.stride}, not {el.data_size}"
        return _non_default(el, arrmeta + _DIM_AM)
    if tid == _VAR:
        d = _ffi.cast("ck_var_dim_arrmeta *", arrmeta)
        el = t.element
        if d.stride != el.data_size or d.offset != 0:
            return f"a var dim with stride {d.stride} and offset {d.offset}"
        return _non_default(el, arrmeta + _VAR_AM)
    return None


def _device_array(decl, spec, value, ctx) -> DeviceArray:
    where = f"{decl.name}(): argument '{spec.name}' ({spec.text})"
    if not isinstance(value, DeviceArray):
        raise InvalidArgumentError(f"{where} must be a device array of {ctx.describe()}, not "
                                   f"{type(value).__name__}: copy it there with ctx.to(...)")
    if value.context != ctx:
        raise InvalidArgumentError(f"{where} lives in another context "
                                   f"({value.context.describe()}); copy it with ctx.to(...)")
    el = value.element
    t = el.type if isinstance(el, StructElement) else Type(el.name)
    if t != spec.element_type:
        raise CKTypeError(f"{where}: elements of type '{t}', the kernel takes "
                          f"{_describe(spec)}")
    if not value.is_contiguous:
        raise InvalidArgumentError(f"{where} is not C-contiguous (strides {value.strides})")
    return value


def _scalar(decl, spec, value):
    """``value`` as a NumPy scalar of the spec's type: no truncation, no
    overflow, no bool<->number confusion."""
    d = spec.dtype
    where = f"{decl.name}(): argument '{spec.name}' ({spec.text})"
    is_bool = isinstance(value, (bool, np.bool_))
    if d.kind == "b":
        if not is_bool:
            raise CKTypeError(f"{where} takes a bool, not {type(value).__name__} {value!r}")
        return np.bool_(value)
    if d.kind in "iu":
        if not isinstance(value, (int, np.integer)) or is_bool:
            raise CKTypeError(f"{where} takes an integer, not {type(value).__name__} "
                              f"{value!r}")
        info = np.iinfo(d.numpy)
        if not info.min <= int(value) <= info.max:
            raise CKOverflowError(f"{where}: {value} is out of range for {d.name}")
        return d.numpy.type(int(value))
    if not isinstance(value, (int, float, np.integer, np.floating)) or is_bool:
        raise CKTypeError(f"{where} takes a real number, not {type(value).__name__} "
                          f"{value!r}")
    with np.errstate(over="ignore"):
        out = d.numpy.type(value)
    if np.isinf(out) and np.isfinite(float(value)):
        raise CKOverflowError(f"{where}: {value} overflows {d.name}")
    return out


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
