"""``@ckernels.jit``: Python scalar functions compiled by Numba into real ckernels.

>>> import ckernels
>>> @ckernels.jit("float64(float64, float64)")
... def axpy(x, y):
...     return 2.0 * x + y
>>> axpy([1.0, 2.0], 10.0).to_list()
[12.0, 14.0]

Signatures use ckernel type names (``"string(string)"``, ``"bool(float32)"``,
``"complex128(complex128, float64)"``); element types: ``bool``, ``int8`` ..
``int64``, ``uint8`` .. ``uint64``, ``float32``, ``float64``, ``complex64``,
``complex128`` and ``string``.  A list of signatures compiles each one at
decoration; without signatures, one is compiled per argument types at the
first call (like ``numba.vectorize``).  ``cache=True`` caches both the Numba
function and the generated entry points on disk.

What a decorated function is:

* a callable on ckernel arrays, NumPy arrays, nested lists and scalars, with
  NumPy broadcasting and ``out=``.  It runs through the library's own
  lifting (``ck_array_apply``): the jitted kernel is the child of the C
  dimension kernels, large results are split over the library's thread pool
  (string results run serially: an arena has one writer).  Scalars in give a
  scalar out; NumPy arrays in give a NumPy array out (a zero-copy view of the
  result) when the result type has a NumPy equivalent; anything else gives a
  :class:`ckernels.Array`.
* a source of real ckernels for C consumers: :meth:`JitKernel.instantiate`.
* callable from other ``@ckernels.jit`` functions and from ``@numba.njit``
  code: Numba types it as its underlying dispatcher (``f.dispatcher``).
* registrable as the implementation of a named operation
  (:meth:`JitKernel.register`, ``register=`` at decoration).
* picklable by reference (module + qualified name) and otherwise by value of
  its Python function and signatures: it is always rebuilt by compiling (or
  loading from the cache), never from raw addresses.

Errors raised inside the function become a ``ck_status`` with the
exception's message (``ck_set_error``) and come back at the call site as the
matching :mod:`ckernels.errors` class, which derives from the built-in one:
ZeroDivisionError -> :class:`~ckernels.errors.CKZeroDivisionError`, IndexError
-> :class:`~ckernels.errors.CKIndexError`, ValueError ->
:class:`~ckernels.errors.CKValueError`, OverflowError ->
:class:`~ckernels.errors.CKOverflowError`, TypeError ->
:class:`~ckernels.errors.CKTypeError`; any other exception ->
:class:`~ckernels.errors.UserKernelError` with ``"ClassName: message"``.
Design notes: :mod:`ckernels._numba.jitcodegen`.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
import threading
import weakref
from typing import Any, NamedTuple

import numpy as np

from .. import types as _t
from .._native import check, ffi, lib
from ..array import Array, _check_scalar
from ..array import array as _array
from ..array import asarray as _asarray
from ..errors import InvalidArgumentError, NotSupportedError
from ..kernels import Kernel, KernelBuilder, errmode_value, kernel_request
from ..memory import MemBlock
from ..types import Type, as_type

#: element types a jitted kernel may take and return
SUPPORTED_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float32", "float64", "complex64", "complex128", "string")
_KIND = {"bool": "b", "int8": "i", "int16": "i", "int32": "i", "int64": "i", "uint8": "u",
         "uint16": "u", "uint32": "u", "uint64": "u", "float32": "f", "float64": "f",
         "complex64": "c", "complex128": "c", "string": "s"}
_MAX_ARGS = int(lib.CK_LIFT_MAX_NSRC) if hasattr(lib, "CK_LIFT_MAX_NSRC") else 16

_numba_ready = False
_numba_lock = threading.Lock()
_ARENA_OFFSET = None


def _ensure_numba() -> None:
    """Import Numba and the extension, check the kernel layout, register typeof."""
    global _numba_ready, _ARENA_OFFSET
    if _numba_ready:
        return
    with _numba_lock:
        if _numba_ready:
            return
        from numba.core import types as nbtypes
        from numba.extending import typeof_impl

        from .. import _numba  # noqa: F401  (symbols by name, extension types)

        size, code_off, arena_off = (ffi.new("size_t *") for _ in range(3))
        lib.ck_jit_kernel_layout(size, code_off, arena_off)
        if (size[0], code_off[0], arena_off[0]) != (32, 16, 24):
            raise ImportError("ckernels.jit: ck_jit_kernel layout differs from the generated "
                              f"code's assumption: {(size[0], code_off[0], arena_off[0])}")
        _ARENA_OFFSET = int(arena_off[0])

        @typeof_impl.register(JitKernel)
        def _typeof_jitkernel(val, c):
            return nbtypes.Dispatcher(val.dispatcher)

        _numba_ready = True


# ---------------------------------------------------------------- signatures --
class Signature(NamedTuple):
    """A parsed signature: result type name (None: inferred) and argument names."""

    ret: str | None
    args: tuple[str, ...]

    @property
    def text(self) -> str:
        return f"{self.ret or '?'}({', '.join(self.args)})"

    def __str__(self) -> str:
        return self.text


def _type_name(spec, what: str, where: str) -> str:
    """Normalised ckernel element type name for a signature part."""
    if not isinstance(spec, (str, Type)):
        nb = _numba_type_name(spec)
        if nb is not None:
            return nb
    try:
        t = as_type(spec.strip() if isinstance(spec, str) else spec)
    except Exception as exc:  # parse errors, unknown names
        raise TypeError(f"ckernels.jit: bad {what} type {spec!r} in signature {where!r}: "
                        f"{exc}") from None
    name = str(t)
    if name not in SUPPORTED_TYPES:
        raise TypeError(f"ckernels.jit: unsupported {what} type '{name}' in signature "
                        f"{where!r}; element types are {', '.join(SUPPORTED_TYPES)}")
    return name


def _numba_type_name(nbty) -> str | None:
    try:
        from .cpu_codegen import ck_name_of_numba
    except Exception:  # pragma: no cover
        return None
    return ck_name_of_numba(nbty)


def _split_args(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur))
    elif parts:
        raise TypeError("ckernels.jit: empty argument in signature")
    return parts


def parse_signature(sig) -> Signature:
    """``"float64(float64, int64)"`` (or a Numba signature object) -> Signature."""
    if isinstance(sig, Signature):
        return sig
    if isinstance(sig, str):
        text = sig.strip()
        i = text.find("(")
        if i <= 0 or not text.endswith(")"):
            raise TypeError(f"ckernels.jit: bad signature {sig!r}; expected "
                            "'result(arg, ...)', e.g. 'float64(float64, float64)'")
        ret = _type_name(text[:i], "result", sig)
        args = tuple(_type_name(a, "argument", sig) for a in _split_args(text[i + 1:-1]))
    elif hasattr(sig, "return_type") and hasattr(sig, "args"):  # numba Signature
        if sig.return_type is None:
            ret = None
        else:
            ret = _type_name(sig.return_type, "result", str(sig))
        args = tuple(_type_name(a, "argument", str(sig)) for a in sig.args)
    else:
        raise TypeError(f"ckernels.jit: a signature must be a string like "
                        f"'float64(float64)', not {sig!r}")
    if len(args) > _MAX_ARGS:
        raise TypeError(f"ckernels.jit: at most {_MAX_ARGS} arguments, signature {sig!r} "
                        f"has {len(args)}")
    return Signature(ret, args)


# ------------------------------------------------------------ compiled code --
class _CodeOwner:
    """What the compiled entry points need alive: the code library (and the
    Numba compile result of the user function, with its environment).  Held
    by the kernels' ``code`` memblock (an external block) and by the
    JitKernel; released when the last of them goes."""

    __slots__ = ("trampolines", "cres", "__weakref__")

    def __init__(self, trampolines, cres):
        self.trampolines = trampolines
        self.cres = cres


def _unregister_info(info) -> None:
    lib.ck_kernel_info_unregister(info)


class Compiled:
    """One compiled signature: entry points, descriptor, keep-alive block."""

    __slots__ = ("sig", "ret_type", "arg_types", "single", "strided", "code", "desc",
                 "_owner", "_info", "_info_name", "_info_fin", "from_cache", "scalar_ok",
                 "_scalar_kernel", "_dtypes", "__weakref__")

    def __init__(self, name: str, sig: Signature, trampolines, cres):
        self.sig = sig
        self.ret_type = as_type(sig.ret)
        self.arg_types = tuple(as_type(a) for a in sig.args)
        self.single = trampolines.single
        self.strided = trampolines.strided
        self.from_cache = trampolines.from_cache
        self._owner = _CodeOwner(trampolines, cres)
        self.code = MemBlock.external(self._owner)
        d = ffi.new("ck_jit_kernel_desc *")
        d.single = ffi.cast("ck_expr_single_t", self.single)
        d.strided = ffi.cast("ck_expr_strided_t", self.strided)
        d.code = self.code.ptr
        d.dst_id = self.ret_type.type_id
        d.nsrc = len(sig.args)
        for i, t in enumerate(self.arg_types):
            d.src_ids[i] = t.type_id
        label = f"{name}{sig.text[len(sig.ret or '?'):]} -> {sig.ret}".encode()
        d.name = label[:95]
        self.desc = d
        self._info = None
        self._info_name = None
        self._info_fin = None
        self.scalar_ok = "string" not in sig.args and sig.ret != "string"
        self._scalar_kernel = None
        self._dtypes = None

    def call_scalar(self, values):
        """One element through the single entry of a cached kernel (builtin
        types): the fast path for scalar calls."""
        k = self._scalar_kernel
        if k is None:
            ckb = KernelBuilder()
            check(lib.ck_jit_make_kernel(ckb.ptr, 0, self.desc, ffi.NULL,
                                         lib.CK_KERNEL_REQUEST_SINGLE, ffi.NULL))
            k = self._scalar_kernel = (ckb, ffi.cast("ck_prefix *", ckb.address_at(0)))
            self._dtypes = (_t.builtin_numpy_dtype(self.ret_type),
                            [_t.builtin_numpy_dtype(t) for t in self.arg_types])
        rdt, adts = self._dtypes
        bufs = [np.array(_check_scalar(t, v), dtype=dt)
                for t, v, dt in zip(self.arg_types, values, adts)]
        dst = np.empty((), rdt)
        srcs = ffi.new("const char *[]", [ffi.from_buffer(b) for b in bufs] or [ffi.NULL])
        check(lib.ck_kernel_call_single(k[1], ffi.from_buffer(dst, require_writable=True),
                                        srcs))
        return dst.item()

    def register_info(self, name: str) -> None:
        """Describe the kernel for dumps (ck_kernel_info_register; best effort:
        the registry is small and shared)."""
        if self._info is not None:
            return
        info = ffi.new("ck_kernel_info *")
        nm = ffi.new("char[]", f"ckernels.jit:{name}".encode())
        info.name = nm
        info.single = self.desc.single
        info.strided = self.desc.strided
        info.data_size = ffi.sizeof("ck_jit_kernel")
        info.children = ffi.NULL
        if lib.ck_kernel_info_register(info) == 0:
            self._info, self._info_name = info, nm
            self._info_fin = weakref.finalize(self, _unregister_info, info)

    def __repr__(self) -> str:
        return f"<ckernels.jit compiled {self.sig.text} single={self.single:#x}>"


class CacheStats(NamedTuple):
    """Cache statistics: the Numba dispatcher's (per Numba signature) and the
    generated entry points' (per ckernel signature)."""

    dispatcher_hits: dict
    dispatcher_misses: dict
    kernel_hits: dict
    kernel_misses: dict


# ------------------------------------------------------------ the object --
class JitKernel:
    """A Python function compiled into ckernels (see the module docstring)."""

    def __init__(self, py_func, signatures=(), *, cache: bool = False,
                 register: str | None = None, **numba_options):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"ckernels.jit decorates Python functions, not {py_func!r}")
        _ensure_numba()
        import numba
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self._options = dict(numba_options)
        self._cache = bool(cache)
        self._lock = threading.RLock()
        self._compiled: dict[tuple[str, ...], Compiled] = {}
        self._registered: list[str] = []
        self._kernel_hits: dict = {}
        self._kernel_misses: dict = {}
        self._tcache = None
        self.dispatcher = numba.njit(cache=self._cache, **self._options)(py_func)
        sigs = [signatures] if isinstance(signatures, str) else list(signatures or ())
        self._explicit = bool(sigs)
        self._sig_texts = []
        for s in sigs:
            self.compile(s)
        if self._explicit:
            self.dispatcher.disable_compile()
        if register is not None:
            self.register(register)

    # ---- compilation -----------------------------------------------------
    @property
    def signatures(self) -> list[str]:
        """The compiled signatures, as ckernel signature strings."""
        return [c.sig.text for c in self._compiled.values()]

    @property
    def compiled(self) -> dict:
        """Argument type names -> :class:`Compiled`."""
        return dict(self._compiled)

    def _trampoline_cache(self):
        if self._tcache is None:
            from .cpu_codegen import TrampolineCache
            self._tcache = TrampolineCache(self.py_func)
        return self._tcache

    def _code_key(self) -> str:
        code = self.py_func.__code__
        h = hashlib.sha256(code.co_code)
        h.update(repr(code.co_consts).encode())
        h.update(repr(code.co_names).encode())
        if self.py_func.__closure__:
            try:
                h.update(pickle.dumps([c.cell_contents for c in self.py_func.__closure__]))
            except Exception:
                h.update(repr([c.cell_contents for c in self.py_func.__closure__]).encode())
        return h.hexdigest()

    def compile(self, signature) -> Compiled:
        """Compile one signature (a string like ``"float64(float64)"``, or argument
        types only for the result to be inferred); returns the :class:`Compiled`."""
        from . import cpu_codegen as cg
        if isinstance(signature, Signature) or not isinstance(signature, tuple):
            sig = parse_signature(signature)
        else:  # argument types only: the result type is inferred
            sig = Signature(None, tuple(_type_name(a, "argument", str(signature))
                                        for a in signature))
        with self._lock:
            have = self._compiled.get(sig.args)
            if have is not None and (sig.ret is None or have.sig.ret == sig.ret):
                return have
            if have is not None:
                raise TypeError(f"ckernels.jit: {self.__name__} already has a signature for "
                                f"({', '.join(sig.args)}): {have.sig.text}")
            nb_args = tuple(cg.NUMBA_TYPES[a] for a in sig.args)
            try:
                if sig.ret is None:
                    self.dispatcher.compile(nb_args)
                else:
                    self.dispatcher.compile(cg.NUMBA_TYPES[sig.ret](*nb_args))
            except Exception as exc:
                from numba.core.errors import NumbaError
                if isinstance(exc, NumbaError):
                    raise TypeError(f"ckernels.jit: cannot compile {self.__qualname__} for "
                                    f"{sig.text}:\n{exc}") from exc
                raise
            cres = self.dispatcher.overloads[nb_args]
            ret = sig.ret
            if ret is None:
                ret = cg.ck_name_of_numba(cres.signature.return_type)
                if ret is None:
                    raise TypeError(f"ckernels.jit: {self.__qualname__}({', '.join(sig.args)}) "
                                    f"returns {cres.signature.return_type}, which is not a "
                                    f"ckernel element type ({', '.join(SUPPORTED_TYPES)})")
                sig = Signature(ret, sig.args)
            tramp = self._trampolines(sig, cres)
            comp = Compiled(self.__name__, sig, tramp, cres)
            self._compiled[sig.args] = comp
            for op in self._registered:
                self._register_one(op, comp)
            return comp

    def _trampolines(self, sig: Signature, cres):
        from . import cpu_codegen as cg
        key_text = f"{self.__module__}.{self.__qualname__}|{sig.text}|{self._code_key()}"
        symbase = cg.symbol_base(self.__qualname__, key_text, unique=not self._cache)
        if not self._cache:
            tramp = cg.build_trampolines(self.dispatcher, list(sig.args), sig.ret, symbase,
                                         _ARENA_OFFSET, user_cres=cres)
            return tramp
        tramp = _LOADED.get(symbase)
        cache = self._trampoline_cache()
        key = cg.cache_key(symbase, sig.args, sig.ret)
        if tramp is None:
            tramp = cg.load_cached(cache, key, symbase)
            if tramp is None:
                tramp = cg.build_trampolines(self.dispatcher, list(sig.args), sig.ret, symbase,
                                             _ARENA_OFFSET, cachable=True, user_cres=cres)
                cg.save_cached(cache, key, tramp)
                self._kernel_misses[sig.text] = self._kernel_misses.get(sig.text, 0) + 1
            else:
                self._kernel_hits[sig.text] = self._kernel_hits.get(sig.text, 0) + 1
            _LOADED[symbase] = tramp
        else:
            self._kernel_hits[sig.text] = self._kernel_hits.get(sig.text, 0) + 1
        return tramp

    @property
    def stats(self) -> CacheStats:
        """Cache hits/misses of the Numba dispatcher and of the entry points."""
        st = self.dispatcher.stats
        return CacheStats(dict(st.cache_hits), dict(st.cache_misses),
                          dict(self._kernel_hits), dict(self._kernel_misses))

    # ---- selecting a signature ---------------------------------------------
    def _select(self, ops: list["_Operand"]) -> Compiled:
        n = len(ops)
        cands = [c for c in self._compiled.values() if len(c.sig.args) == n]
        strong = [o for o in ops if not o.weak]
        # 1. strong arguments exactly, weak (Python number) arguments by kind
        for c in cands:
            if all(_exact(o, a) for o, a in zip(ops, c.sig.args)) and (
                    strong or all(o.name == a for o, a in zip(ops, c.sig.args))):
                return c
        if not self._explicit:
            with self._lock:
                return self.compile(tuple(o.name for o in ops))
        # 2. safe casts
        for c in cands:
            if all(_castable(o, a) for o, a in zip(ops, c.sig.args)):
                return c
        got = ", ".join(o.describe() for o in ops)
        have = "; ".join(self.signatures) or "none"
        raise TypeError(f"{self.__name__}: no signature matches the argument types "
                        f"({got}); compiled signatures: {have}")

    # ---- calling -------------------------------------------------------------
    def __call__(self, *args, out=None):
        if any(type(a).__name__ == "DeviceArray" for a in args):   # OpenCL device arrays
            from ..context import device_array as _ocl
            if any(isinstance(a, _ocl.DeviceArray) for a in args):
                return _ocl.call(self, args, out)
        ops = [_Operand(a, self.__name__, i) for i, a in enumerate(args)]
        comp = self._select(ops)
        scalars = all(o.scalar for o in ops)
        if scalars and out is None and comp.scalar_ok:
            return comp.call_scalar([o.value for o in ops])
        arrays = [o.as_array(as_type(t)) for o, t in zip(ops, comp.sig.args)]
        if out is not None:
            dst = _out_array(out, self.__name__)
            if dst.dtype.type_id == comp.ret_type.type_id and str(dst.dtype) == comp.sig.ret:
                _apply(comp, arrays, dst)
            else:
                tmp = _apply(comp, arrays, None)
                check(lib.ck_array_assign(dst._a, tmp._a, errmode_value("default")))
            return out
        res = _apply(comp, arrays, None)
        if scalars:
            return res.to_list()
        if comp.ret_type.is_builtin and all(o.scalar or o.numpy for o in ops):
            return np.asarray(res)
        return res

    def source(self, target: str = "opencl", signature=None) -> str:
        """Generated device source for one signature (default: the first compiled
        one); ``target`` is ``"opencl"`` (OpenCL C emitted from the typed IR)."""
        if target != "opencl":
            raise NotSupportedError(f"{self.__name__}: no source for target {target!r} "
                                    "(targets: 'opencl')")
        if signature is None:
            if not self._compiled:
                raise InvalidArgumentError(f"{self.__name__}: no compiled signature; pass "
                                           "signature=")
            comp = next(iter(self._compiled.values()))
        else:
            sig = parse_signature(signature)
            comp = self._compiled.get(sig.args)
            if comp is None or (sig.ret is not None and comp.sig.ret != sig.ret):
                if self._explicit:
                    raise TypeError(f"{self.__name__}: no compiled signature {sig.text}; "
                                    f"compiled: {'; '.join(self.signatures) or 'none'}")
                comp = self.compile(sig)
        from ..context.device_array import emitted
        return emitted(self, comp).source

    def instantiate(self, dst_type, src_types, kernreq="single") -> Kernel:
        """Build the ckernel for these element types in a new builder.

        ``dst_type`` and ``src_types`` are types or type strings (a single one
        is accepted for one argument); ``kernreq`` is ``"single"`` or
        ``"strided"``.  Returns a :class:`ckernels.kernels.Kernel` (``.address``
        is the ``ck_prefix *``, ``.single`` / ``.strided`` the entry point,
        ``debug_repr()`` the dump).  A ``string`` result is written into an
        arena owned by the kernel (valid while it lives)."""
        if isinstance(src_types, (str, Type)):
            src_types = [src_types]
        dst = _type_name(dst_type, "result", "instantiate")
        srcs = tuple(_type_name(s, "argument", "instantiate") for s in src_types)
        comp = self._compiled.get(srcs)
        if comp is None and not self._explicit:
            comp = self.compile(Signature(dst, srcs))
        if comp is None or comp.sig.ret != dst:
            raise TypeError(f"{self.__name__}: no compiled signature {dst}({', '.join(srcs)}); "
                            f"compiled: {'; '.join(self.signatures) or 'none'}")
        req = kernel_request(kernreq)
        comp.register_info(f"{self.__name__}{comp.sig.text[len(comp.sig.ret):]}")
        ckb = KernelBuilder()
        end = ffi.new("size_t *")
        check(lib.ck_jit_make_kernel(ckb.ptr, 0, comp.desc, ffi.NULL, req, end))
        name = "single" if req == lib.CK_KERNEL_REQUEST_SINGLE else "strided"
        return Kernel(ckb, name, f"{self.__name__}: {comp.sig.text}", len(srcs))

    # ---- registry ------------------------------------------------------------
    def _register_one(self, op_name: str, comp: Compiled) -> None:
        if comp.sig.ret == "string":
            raise NotSupportedError(
                f"{self.__name__}: cannot register {comp.sig.text} as '{op_name}': registry "
                "kernels get no destination arena for string results")
        check(lib.ck_jit_register(op_name.encode(), comp.desc))

    def register(self, op_name: str) -> "JitKernel":
        """Register every compiled signature (and, without explicit signatures,
        every later one) as a kernel of operation ``op_name``
        (``ck_op_register_factory``); ``ckernels.ops.<op_name>`` then dispatches
        to it.  Replaces kernels registered for the same argument types."""
        if not isinstance(op_name, str) or not op_name:
            raise InvalidArgumentError(f"operation name must be a non-empty str, not "
                                       f"{op_name!r}")
        with self._lock:
            for comp in self._compiled.values():
                self._register_one(op_name, comp)
            if op_name not in self._registered:
                self._registered.append(op_name)
        return self

    def unregister(self, op_name: str) -> None:
        """Remove the kernels this function registered for ``op_name``."""
        with self._lock:
            for comp in self._compiled.values():
                ids = ffi.new("ck_type_id[]", [t.type_id for t in comp.arg_types] or [0])
                lib.ck_op_unregister_kernel(op_name.encode(), len(comp.arg_types), ids)
            if op_name in self._registered:
                self._registered.remove(op_name)

    # ---- misc -------------------------------------------------------------
    def __reduce__(self):
        mod = sys.modules.get(self.__module__)
        obj: Any = mod
        for part in self.__qualname__.split("."):
            obj = getattr(obj, part, None)
        if obj is self:
            return self.__qualname__
        from numba.core import serialize
        return (_rebuild, (serialize.dumps(self.py_func),
                           [c.sig.text for c in self._compiled.values()] if self._explicit
                           else [], self._cache, self._options))

    def __repr__(self) -> str:
        sigs = ", ".join(self.signatures) or "no signatures compiled yet"
        return f"<ckernels.jit {self.__qualname__}: {sigs}>"

    def _repr_html_(self) -> str:
        import html
        rows = "".join(f"<li><code>{html.escape(c.sig.text)}</code> single=0x{c.single:x} "
                       f"strided=0x{c.strided:x}</li>" for c in self._compiled.values())
        return (f"<div><b>ckernels.jit</b> <code>{html.escape(self.__qualname__)}</code>"
                f"<ul>{rows}</ul></div>")


#: trampoline libraries loaded from the cache in this process, by symbol base
#: (the symbols are deterministic, so a library must not be loaded twice)
_LOADED: dict = {}


def _rebuild(func_bytes, sigs, cache, options):
    py_func = pickle.loads(func_bytes)
    return JitKernel(py_func, sigs, cache=cache, **options)


# ------------------------------------------------------------ operands --
def _exact(op: "_Operand", name: str) -> bool:
    if op.weak:
        return _weak_ok(op.kind, name)
    return op.name == name


def _weak_ok(kind: str, name: str) -> bool:
    k = _KIND[name]
    if kind == "i":
        return k in "iufc"
    if kind == "f":
        return k in "fc"
    if kind == "c":
        return k == "c"
    return False


def _castable(op: "_Operand", name: str) -> bool:
    if op.weak:
        return _weak_ok(op.kind, name)
    if op.name == name:
        return True
    if "string" in (op.name, name):
        return False
    return bool(lib.ck_can_cast_safely(as_type(op.name).type_id, as_type(name).type_id))


class _Operand:
    """One call argument: its element type for resolution and how to turn it
    into a ckernel array of the chosen type."""

    __slots__ = ("value", "array", "name", "kind", "weak", "scalar", "numpy")

    def __init__(self, value, fname: str, index: int):
        self.value = value
        self.array = None
        self.weak = False
        self.scalar = False
        self.numpy = False
        if isinstance(value, Array):
            self.array = value
            self.name = _elem_name(value.dtype, fname, index)
        elif isinstance(value, np.ndarray):
            self.numpy = value.dtype.kind not in "OUSTV"
            if value.dtype.kind in "OUST":
                self.array = _array(value)
            else:
                if not value.dtype.isnative:
                    value = value.astype(value.dtype.newbyteorder("="))
                try:
                    self.array = _asarray(value)
                except Exception:
                    raise TypeError(f"{fname}: argument {index}: unsupported NumPy dtype "
                                    f"{value.dtype}") from None
            self.name = _elem_name(self.array.dtype, fname, index)
        elif isinstance(value, np.generic):
            self.scalar = True
            if isinstance(value, (np.str_, np.bytes_)):
                if isinstance(value, np.bytes_):
                    raise TypeError(f"{fname}: argument {index}: bytes are not supported")
                self.value = str(value)
                self.name = "string"
            else:
                self.name = _elem_name(_t.from_numpy_dtype(value.dtype), fname, index)
        elif isinstance(value, bool):
            self.scalar, self.name = True, "bool"
        elif isinstance(value, int):
            self.scalar, self.weak, self.kind = True, True, "i"
            self.name = "int64" if -2**63 <= value < 2**63 else "uint64"
        elif isinstance(value, float):
            self.scalar, self.weak, self.kind, self.name = True, True, "f", "float64"
        elif isinstance(value, complex):
            self.scalar, self.weak, self.kind, self.name = True, True, "c", "complex128"
        elif isinstance(value, str):
            self.scalar, self.name = True, "string"
        elif isinstance(value, (list, tuple)):
            try:
                self.array = _array(value)
            except Exception as exc:
                raise TypeError(f"{fname}: argument {index}: cannot convert "
                                f"{type(value).__name__} to a ckernel array: {exc}") from None
            self.name = _elem_name(self.array.dtype, fname, index)
        else:
            raise TypeError(f"{fname}: argument {index} has unsupported type "
                            f"{type(value).__name__}; expected a ckernel array, a NumPy "
                            f"array, a (nested) list or a scalar")
        if not self.weak:
            self.kind = _KIND[self.name]

    def describe(self) -> str:
        if self.weak:
            return f"Python {type(self.value).__name__}"
        return self.name

    def as_array(self, t: Type) -> Array:
        if self.array is None:
            try:
                return _array(self.value, type=t)
            except Exception as exc:
                raise type(exc)(f"argument {self.value!r} as {t}: {exc}") from None
        a = self.array
        if str(a.dtype) == str(t):
            return a
        return _cast(a, t)


def _elem_name(t: Type, fname: str, index: int) -> str:
    name = str(t)
    if name not in SUPPORTED_TYPES:
        raise TypeError(f"{fname}: argument {index} has element type '{name}', which a jitted "
                        f"kernel cannot take ({', '.join(SUPPORTED_TYPES)})")
    return name


_ERRMODE = None


def _cast(a: Array, t: Type) -> Array:
    """A converted copy of ``a`` with element type ``t`` (the library's assignment
    kernel, lifted; parallel for large arrays)."""
    global _ERRMODE
    if _ERRMODE is None:
        _ERRMODE = ffi.new("ck_errmode *", errmode_value("default"))
    srcs = ffi.new("ck_array_preamble *[]", [a._a])
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_array_apply(ffi.addressof(lib, "ck_assignment_child_factory"), _ERRMODE,
                             t.c_type, 1, srcs, ffi.NULL, out))
    return Array._own(out[0])


def _out_array(out, fname: str) -> Array:
    if isinstance(out, Array):
        return out
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise ValueError(f"{fname}: out= is read-only")
        return _asarray(out)
    raise TypeError(f"{fname}: out= must be a ckernel array or a NumPy array, not "
                    f"{type(out).__name__}")


_FACTORY = None


def _apply(comp: Compiled, arrays: list[Array], dst: Array | None) -> Array:
    global _FACTORY
    if _FACTORY is None:
        _FACTORY = ffi.addressof(lib, "ck_jit_child_factory")
    srcs = ffi.new("ck_array_preamble *[]", [a._a for a in arrays] or [ffi.NULL])
    if dst is not None:
        check(lib.ck_array_apply(_FACTORY, comp.desc, comp.ret_type.c_type, len(arrays), srcs,
                                 dst._a, ffi.NULL))
        return dst
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_array_apply(_FACTORY, comp.desc, comp.ret_type.c_type, len(arrays), srcs,
                             ffi.NULL, out))
    return Array._own(out[0])


# ------------------------------------------------------------ the decorator --
def jit(signatures=None, *, cache: bool = False, register: str | None = None,
        **numba_options):
    """Compile a Python scalar function into ckernels.

    ``@jit``, ``@jit("float64(float64)")``, ``@jit(["int64(int64)",
    "float64(float64)"], cache=True, register="myop")``.  Extra keyword
    arguments go to ``numba.njit`` (``fastmath``, ``error_model``, ...)."""
    if callable(signatures) and not isinstance(signatures, str) and hasattr(
            signatures, "__code__"):
        return JitKernel(signatures, (), cache=cache, register=register, **numba_options)
    if signatures is not None and not isinstance(signatures, (str, list, tuple)):
        if not (hasattr(signatures, "return_type") and hasattr(signatures, "args")):
            raise TypeError(f"ckernels.jit: signatures must be a string or a list of strings, "
                            f"not {signatures!r}")
        signatures = [signatures]
    sigs = [signatures] if isinstance(signatures, str) else list(signatures or ())
    parsed = [parse_signature(s) for s in sigs]   # TypeError at decoration
    for p in parsed:
        if p.ret is None:
            raise TypeError(f"ckernels.jit: signature {p.text} needs a result type")

    def decorate(py_func):
        return JitKernel(py_func, parsed, cache=cache, register=register, **numba_options)
    return decorate


__all__ = ["jit", "JitKernel", "Compiled", "Signature", "parse_signature", "SUPPORTED_TYPES",
           "CacheStats"]
