"""The kernel of ``@ckernels.jit``: :class:`JitKernel` compiles, calls and caches.

:class:`JitKernel` is a :class:`ckernels._ufuncs.Function` (its call is in
C) with the NumPy face of :mod:`ckernels.jit.numpy_ufunc` (the ufunc or gufunc,
``reduce``/``accumulate``/``outer``/``at``) and the pickling of
:mod:`ckernels.jit.pickling` mixed in.  Here: compiling signatures (Numba's
dispatcher made on first need, the native cache of
:mod:`ckernels.jit.native_cache`), binding and dispatching calls to the general
path (:mod:`ckernels.jit.targets`), cache statistics, ``source``,
``instantiate`` and registration.  What a decorated function means (types,
errors, the error model) is told in :mod:`ckernels.jit.decorator`, the
decorator's home.
"""

from __future__ import annotations

import hashlib
import pickle
import threading
from types import CodeType
from typing import NamedTuple

from .. import _ufuncs, dtypes, progress, ufuncs
from .. import string_operands as text   # the text operands of string ufuncs
from .._cargs import c_text
from .._native import check, ffi, lib
from ..host.array import Array
from ..host import dictionary as _dictionary
from ..device.array import DeviceArray
from ..errors import CKernelError, InvalidArgumentError, NotSupportedError
from ..kernels import Kernel, KernelBuilder, kernel_request
from ..types import Type
from . import cpu, targets
from . import dims as _dims
from .cpu import Compiled
from .numpy_ufunc import _FALLBACK_KINDS, _TEXT_FALLBACK_KINDS, NumpyUfunc, _numpy_text
from .pickling import Pickling
from .signature import (MAX_ARGS, SUPPORTED_TYPES, Signature, argument_signature,
                        parse_signature, type_name)
from .structs import element as structs_element
from .time_elements import of_numba as time_of_numba


#: the error models (see :mod:`ckernels.jit.decorator`)
ERROR_MODELS = ("python", "numpy")

_numba_ready = False
_numba_lock = threading.Lock()


def _ensure_numba() -> None:
    """Import Numba and the extension, check the kernel layout, register typeof."""
    global _numba_ready
    if _numba_ready:
        return
    with _numba_lock:
        if _numba_ready:
            return
        from numba.core import types as nbtypes
        from numba.extending import typeof_impl

        from .. import _numba  # noqa: F401  (symbols by name, extension types)
        from . import time_numba  # noqa: F401  (time constructors, str() of them)
        from .llvm_passes import release_pass_managers

        # llvmlite's pass pipelines otherwise stay allocated (~0.9 MB per
        # string definition): jit.llvm_passes
        release_pass_managers()

        # the generated entry points read ck_jit_kernel.dst_arena as a pointer at
        # the offset the layout table gives (cpu_codegen.arena_offset)
        ptr = ffi.sizeof("void *")
        if cpu_layout_problem(ptr):
            raise ImportError("ckernels.jit: " + cpu_layout_problem(ptr))

        @typeof_impl.register(JitKernel)
        def _typeof_jitkernel(val, c):
            return nbtypes.Dispatcher(val.dispatcher)

        _numba_ready = True


def cpu_layout_problem(ptr_size: int) -> str | None:
    from .._native import layout_row
    off, size = layout_row("ck_jit_kernel", "dst_arena")
    if size != ptr_size or off % ptr_size:
        return (f"ck_jit_kernel.dst_arena is {size} bytes at offset {off}; the generated "
                f"code reads a {ptr_size}-byte pointer")
    return None


# ------------------------------------------------------------ the object --
class CacheStats(NamedTuple):
    """Cache statistics: the Numba dispatcher's (per Numba signature) and the
    generated entry points' (per ckernel signature)."""

    dispatcher_hits: dict
    dispatcher_misses: dict
    kernel_hits: dict
    kernel_misses: dict


# ------------------------------------------------------------ the object --
#: arguments of a general-path call that are not operands
_GENERAL_KEYWORDS = ("out",)


def _cache_trusted(py_func) -> bool:
    from . import native_cache
    return native_cache.trusted(py_func)


def _native_needs_repair(kernel, sig) -> bool:
    from . import native_cache
    return native_cache.needs_repair(kernel, sig)


#: keyword arguments of ``jit`` itself
_JIT_KEYWORDS = ("cache", "register", "error_model", "identity")
#: Numba options that mean something for a kernel (passed to ``numba.njit``);
#: ``nopython=True`` is accepted and implied (a kernel is always nopython code)
NUMBA_OPTIONS = ("fastmath", "boundscheck", "nogil", "locals", "inline", "debug")


def _numba_options(options: dict) -> dict:
    """The options for ``numba.njit``, checked: a ``TypeError`` names an
    unknown keyword and lists the accepted ones."""
    out = {}
    for k, v in options.items():
        if k == "nopython":
            if v is not True:
                raise TypeError("ckernels.jit: nopython=False is not possible: a kernel is "
                                "compiled as nopython code (nopython=True is implied)")
            continue
        if k not in NUMBA_OPTIONS:
            raise TypeError(f"ckernels.jit() got an unexpected keyword argument {k!r}; it takes "
                            f"{', '.join(_JIT_KEYWORDS)} and Numba's "
                            f"{', '.join(NUMBA_OPTIONS)} (nopython=True is implied)")
        out[k] = v
    return out


_NO_DEFAULT = object()


def _parameters(py_func) -> tuple[tuple[str, object], ...]:
    """``(name, default or _NO_DEFAULT)`` of each positional parameter; a
    ``TypeError`` for what a kernel cannot take (``*args``, ``**kwargs``,
    keyword-only parameters: a kernel has a fixed number of arguments)."""
    code = py_func.__code__
    name = py_func.__qualname__
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    if code.co_flags & 0x04:        # CO_VARARGS
        raise TypeError(f"ckernels.jit: {name}() takes *{code.co_varnames[npos + nkw]}: a "
                        "kernel takes a fixed number of arguments; name each one")
    if nkw:
        raise TypeError(f"ckernels.jit: {name}() has keyword-only parameters "
                        f"({', '.join(code.co_varnames[npos:npos + nkw])}); a kernel's "
                        "arguments are positional (defaults are allowed)")
    if code.co_flags & 0x08:        # CO_VARKEYWORDS
        raise TypeError(f"ckernels.jit: {name}() takes **keywords: a kernel takes a fixed "
                        "number of arguments; name each one")
    names = code.co_varnames[:code.co_argcount]
    defaults = py_func.__defaults__ or ()
    first = len(names) - len(defaults)
    return tuple((n, defaults[i - first] if i >= first else _NO_DEFAULT)
                 for i, n in enumerate(names))


def _hash_code(h, code) -> None:
    """Feed a code object to ``h``: nested code objects (comprehensions,
    lambdas) by their contents, not by their repr, which holds an address
    that differs in every process (the kernel cache would never hit)."""
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for c in code.co_consts:
        if isinstance(c, CodeType):
            _hash_code(h, c)
        else:
            h.update(repr(c).encode())


class JitKernel(NumpyUfunc, Pickling, _ufuncs.Function):
    """A Python function compiled into ckernels (see :mod:`ckernels.jit.decorator`).

    The call itself is :class:`ckernels._ufuncs.Function`'s, in C: calls on
    NumPy-like operands go to :attr:`ufunc`, all others to the general path
    (:mod:`ckernels.jit.targets`)."""

    def __init__(self, py_func, signatures=(), *, cache: bool = False,
                 register: str | None = None, error_model: str = "python",
                 identity=None, **numba_options):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"ckernels.jit decorates Python functions, not {py_func!r}")
        if error_model not in ERROR_MODELS:
            raise InvalidArgumentError(f"ckernels.jit: error_model must be 'python' or "
                                       f"'numpy', not {error_model!r}")
        super().__init__(None, JitKernel._general, (Array, DeviceArray),
                         wrappers=_dictionary.wrapped_call)
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__module__ = py_func.__module__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        #: ``"python"`` (raise, the default) or ``"numpy"`` (IEEE results)
        self.error_model = error_model
        #: the identity of reductions (``f.reduce``), or None: none
        self.identity = identity
        self._options = _numba_options(numba_options)
        #: ``(name, default)`` of the positional parameters (defaults are bound
        #: at the call: :meth:`_bind`)
        self._params = _parameters(py_func)
        # an untrusted cache directory (someone else could write it) means no
        # cache at all, Numba's included: both load code from it
        self._cache = bool(cache) and _cache_trusted(py_func)
        self._lock = threading.RLock()
        self._compiled: dict[tuple[str, ...], Compiled] = {}
        self._registered: list[str] = []
        self._kernel_hits: dict = {}
        self._kernel_misses: dict = {}
        self._tcache = None
        self._uuid = None
        self._native_hits: dict = {}
        #: the Numba dispatcher, made on first need (see :attr:`dispatcher`)
        self._dispatcher = None
        sigs = [signatures] if isinstance(signatures, str) else list(signatures or ())
        self._explicit = bool(sigs)
        self._ufunc_nin = None if self._explicit else len(self._params)
        self._ufunc_made = False    # signatures compiled while decorating: no loops yet
        #: whether the ufunc has (or, compiled lazily, may get) string loops
        self._string_loops = not self._explicit
        if not self._explicit:
            self.fallback_kinds = _TEXT_FALLBACK_KINDS   # object arrays; structs
        parsed = [s if isinstance(s, Signature) else parse_signature(s) for s in sigs]
        #: the output parameter of signatures with a dimensioned result
        #: (``def f(x, out)`` for ``"N * float64(N * float64)"``: docs/dims.md), or
        #: None; it is not an argument of calls
        self._out_param = _dims.output_parameter(parsed, self._params)
        if self._out_param is not None:
            self._params = self._params[:-1]
        native = self._load_native(parsed) if self._cache and parsed else None
        if native is not None:       # every signature from the native cache: no Numba
            for comp in native:
                self._compiled[comp.sig.args] = comp
        else:
            for s in parsed:
                self.compile(s)
            if self._explicit:
                self.dispatcher.disable_compile()
        self._set_ufunc(self._make_ufunc())
        self._ufunc_made = True
        if register is not None:
            self.register(register)

    # ---- compilation -----------------------------------------------------
    @property
    def dispatcher(self):
        """The Numba dispatcher of the function (``numba.njit`` with the
        ckernels pipeline).  Made on first need: a function whose signatures
        all came from the native cache (``cache=True``) runs without Numba
        until something needs it (a new signature, typed IR for a device,
        a call from jitted code); its signatures are then compiled (loaded
        from Numba's cache) into the new dispatcher."""
        d = self._dispatcher
        if d is None:
            with self._lock:
                d = self._dispatcher
                if d is None:
                    _ensure_numba()
                    d = cpu.make_dispatcher(self.py_func, cache=self._cache,
                                            error_model=self.error_model,
                                            options=self._options)
                    for comp in self._compiled.values():   # natively loaded
                        d.compile(comp.sig.ret_element.numba(*comp.sig.numba_args))
                    if self._explicit and self._compiled:
                        d.disable_compile()
                    self._dispatcher = d
        return d

    @property
    def _numba_type_(self):
        """How Numba types the function in jitted code: its dispatcher."""
        _ensure_numba()
        from numba.core import types as nbtypes
        return nbtypes.Dispatcher(self.dispatcher)

    def _native_ok(self, sig) -> bool:
        return self._cache and all(e.kind != "V" for e in sig.elements)

    def _load_native(self, sigs) -> list | None:
        """:class:`Compiled` objects of ``sigs`` from the native cache, or None
        unless every one is there (:mod:`ckernels.jit.native_cache`)."""
        from . import native_cache
        found = []
        for sig in sigs:
            if not self._native_ok(sig):
                return None
            hit = native_cache.load(self, sig)
            if hit is None:
                return None
            found.append((sig, hit))
        out = []
        for sig, (tramp, ret) in found:
            final = Signature(ret, sig.args)
            out.append(Compiled(self.__name__, final, tramp, None))
            self._native_hits[final.text] = self._native_hits.get(final.text, 0) + 1
            self._kernel_hits[final.text] = self._kernel_hits.get(final.text, 0) + 1
        return out

    def _save_native(self, sig, comp) -> None:
        """Store a just-compiled signature in the native cache (best effort:
        a failure leaves the Numba cache to serve it)."""
        if not self._native_ok(sig) or not self._native_ok(comp.sig):
            return
        from . import native_cache
        try:
            native_cache.save(self, sig, comp.sig.ret, comp._owner.trampolines)
        except Exception:
            pass

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
        h = hashlib.sha256()
        _hash_code(h, self.py_func.__code__)
        if self.py_func.__closure__:
            try:
                h.update(pickle.dumps([c.cell_contents for c in self.py_func.__closure__]))
            except Exception:
                h.update(repr([c.cell_contents for c in self.py_func.__closure__]).encode())
        return h.hexdigest()

    def compile(self, signature) -> Compiled:
        """Compile one signature (a string like ``"float64(float64)"``, or argument
        types only for the result to be inferred); returns the :class:`Compiled`."""
        if isinstance(signature, Signature) or not isinstance(signature, tuple):
            sig = parse_signature(signature)
        else:  # argument types only: the result type is inferred
            sig = argument_signature(signature, signature)
        if len(sig.args) != len(self._params):
            raise TypeError(f"ckernels.jit: signature {sig.text} has {len(sig.args)} "
                            f"argument(s); {self._describe_params()} takes "
                            f"{len(self._params)}")
        with self._lock, progress.reporting(f"{self.__qualname__}: {sig.text} for cpu"):
            have = self._compiled.get(sig.args)
            if have is not None and (sig.ret is None or have.sig.ret == sig.ret):
                return have
            if have is not None:
                raise TypeError(f"ckernels.jit: {self.__name__} already has a signature for "
                                f"({', '.join(sig.args)}): {have.sig.text}")
            if _dims.has_dims(sig):
                return self._compile_dims(sig)
            if self._cache and not self._explicit and self._dispatcher is None:
                native = self._load_native([sig])
                if native is not None:
                    comp = native[0]
                    self._compiled[comp.sig.args] = comp
                    for op in self._registered:
                        self._register_one(op, comp)
                    self._add_loop(comp)
                    return comp
            nb_args = sig.numba_args
            # a native library to repair needs LLVM code, which Numba's cache lacks
            fresh = self._native_ok(sig) and _native_needs_repair(self, sig)
            views = self._compile_views(sig, fresh)
            try:
                if views is not None:     # string arguments as views: typed
                    nb_args = views
                # a struct result is written field by field from what the
                # function returns (a tuple, a namedtuple, a struct): inferred
                elif sig.ret_element is None or sig.ret_element.kind == "V":
                    self._dispatcher_compile(nb_args, fresh)
                else:
                    self._dispatcher_compile(sig.ret_element.numba(*nb_args), fresh)
            except Exception as exc:
                from numba.core.errors import NumbaError

                from .result_check import numba_misfit
                if isinstance(exc, NumbaError):
                    misfit = numba_misfit(self, sig, exc)
                    if misfit is not None:
                        raise misfit from None
                    raise TypeError(f"ckernels.jit: cannot compile {self.__qualname__} for "
                                    f"{sig.text}:\n{exc}") from None
                if isinstance(exc, KeyError) and any(e.kind == "V" for e in sig.arg_elements):
                    # Numba's Record typing looks an unknown field up unchecked
                    raise TypeError(f"ckernels.jit: cannot compile {self.__qualname__} for "
                                    f"{sig.text}: no struct field {exc}") from None
                raise
            cres = self.dispatcher.overloads[nb_args]
            requested = sig
            if sig.ret is None:
                import numba

                from . import string_views
                ret = (string_views.result_element(cres.signature.return_type) or
                       dtypes.of_numba(cres.signature.return_type) or
                       time_of_numba(cres.signature.return_type))
                if ret is None and isinstance(cres.signature.return_type, numba.types.Record):
                    ret = structs_element(cres.signature.return_type.dtype)
                if ret is None:
                    raise TypeError(f"ckernels.jit: {self.__qualname__}({', '.join(sig.args)}) "
                                    f"returns {cres.signature.return_type}, which is not a "
                                    f"ckernel element type ({', '.join(SUPPORTED_TYPES)}, "
                                    "structs); a struct result needs its type in the "
                                    "signature")
                sig = Signature(ret.name, sig.args)
            if sig.ret_element.kind == "V":
                self._check_struct_result(sig, cres)
            comp = Compiled(self.__name__, sig, cpu.entry_points(self, sig, cres), cres)
            self._compiled[sig.args] = comp
            if self._cache:
                self._save_native(requested, comp)
            for op in self._registered:
                self._register_one(op, comp)
            if any(e.kind == "s" for e in sig.elements):
                self._string_loops = True
            if any(e.kind in "sVMm" for e in sig.elements):
                self.fallback_kinds = _TEXT_FALLBACK_KINDS if self._string_loops else \
                    _FALLBACK_KINDS
            self._add_loop(comp)
            return comp

    def _compile_dims(self, sig) -> Compiled:
        """Compile a signature with core dims (:mod:`ckernels.jit.dims`): the
        function for Numba arrays / views of its dimensioned arguments (and the
        output, when it takes one parameter more), entry points of their own
        (:mod:`ckernels.jit.cpu_dims`)."""
        from . import cpu_dims
        if sig.ret is None:
            raise TypeError(f"ckernels.jit: signature {sig.text} has dims: give its result "
                            "type")
        nb_args = cpu_dims.numba_arguments(self, sig)
        import warnings

        from numba.core.errors import NumbaError, NumbaPerformanceWarning

        from . import result_check
        try:
            with warnings.catch_warnings():
                # dimensioned arguments are "A"-layout arrays whatever their data:
                # Numba's hint to make them contiguous is not the user's to act on
                warnings.simplefilter("ignore", NumbaPerformanceWarning)
                self._dispatcher_compile(nb_args)
        except NumbaError as exc:
            misfit = result_check.numba_misfit(self, sig, exc)
            if misfit is not None:
                raise misfit from None
            raise TypeError(f"ckernels.jit: cannot compile {self.__qualname__} for "
                            f"{sig.text}:\n{exc}") from None
        cres = self.dispatcher.overloads[nb_args]
        if not cpu_dims.uses_output(self, sig):
            result_check.check_dims_result(self, sig, cres.signature.return_type)
        try:
            entry_points = cpu_dims.entry_points(self, sig)
        except NumbaError as exc:
            raise TypeError(f"ckernels.jit: cannot compile {self.__qualname__} for "
                            f"{sig.text}: what it returns cannot be stored in the result "
                            f"({cres.signature.return_type}):\n{exc}") from None
        comp = Compiled(self.__name__, sig, entry_points, cres)
        self._compiled[sig.args] = comp
        self.fallback_kinds = _FALLBACK_KINDS
        self._add_loop(comp)
        return comp

    def _propagating_dims(self, comp: Compiled, arrays) -> Compiled:
        """The null-propagating variant of a signature with dims whose plain
        ``T`` arguments get operands holding nulls (``docs/nulls.md``, "Option
        elements under dims"): ``?T`` rows in, ``?R`` out, a null result element
        wherever one of its rows holds a null, the function never run there
        (:func:`ckernels.jit.cpu_dims.propagating_signature`); made at the
        first such call and kept on ``comp``.  NotSupportedError naming the
        argument when it cannot take the nulls of ``arrays`` (checked before
        compiling)."""
        from . import cpu_dims
        # null rows (an Arrow list with null entries, `?var * T`) take a
        # variant of their own: those arguments become `?var * ?T`
        rows = tuple(i for i, a in enumerate(arrays)
                     if a.type.dtype.is_option and a.type.dtype.value_type.is_dim)
        variants = comp.nulls_variant
        if variants is None:
            variants = comp.nulls_variant = {}
        v = variants.get(rows)
        if v is None:
            try:
                vsig = cpu_dims.propagating_signature(comp.sig, rows)
            except NotSupportedError as exc:
                raise NotSupportedError(f"{self.__name__} ({comp.sig.text}): {exc}; fill "
                                        "the nulls first (a.fill_null(value))") from None
        else:
            vsig = v.sig
        for i, (a, t) in enumerate(zip(arrays, vsig.arg_types)):
            if a.type.dtype.is_option and not t.dtype.is_option or (
                    i in rows and not t.is_option):
                raise NotSupportedError(
                    f"{self.__name__}: argument {i} ({a.type}) holds nulls, which the "
                    f"signature {comp.sig.text} cannot propagate from a "
                    f"'{comp.sig.args[i]}' argument (nulls propagate from one-dim rows of "
                    "numbers or bool); fill them first (a.fill_null(value)) or declare it "
                    "with option elements (?T)")
        if v is None:
            with self._lock:
                v = variants[rows] = Compiled(
                    self.__name__, vsig, cpu_dims.entry_points(self, vsig, plain=comp.sig),
                    comp._owner.cres)
        return v

    def _check_struct_result(self, sig, cres) -> None:
        """What the function returns can be written into the struct result
        (``struct_results.struct_store_plan``), else a TypeError naming the field."""
        from numba.core.errors import TypingError
        from .struct_results import struct_store_plan
        try:
            struct_store_plan(sig.ret_element.numba, cres.signature.return_type)
        except TypingError as exc:
            raise TypeError(f"ckernels.jit: cannot compile {self.__qualname__} for "
                            f"{sig.text}: {exc}") from None

    def _compile_views(self, sig, fresh: bool):
        """Type the function with its ``string`` arguments as views
        (:mod:`ckernels.jit.string_views`): the argument types when that
        compiles and returns what the signature stores, else None (the
        function then takes Numba ``str`` arguments, as before)."""
        if (_dims.has_dims(sig) or not any(e.kind == "s" for e in sig.arg_elements)
                or self._cache):
            # cache=True: the view path raises the C library's status with its
            # message (a dynamic raise, which needs Numba's helpers), so its
            # code could not load natively; such functions keep Numba str
            return None
        from numba.core.errors import NumbaError

        from . import string_views
        views = string_views.view_args(sig.arg_elements)
        try:
            self._dispatcher_compile(views, fresh)
        except NumbaError:
            # Numba cached the failures under this definition's literals
            string_views.forget_failed_typing()
            return None
        cres = self.dispatcher.overloads[views]
        if not string_views.result_fits(sig.ret_element, cres.signature.return_type):
            return None
        return views

    def _dispatcher_compile(self, nb_sig, fresh: bool = False) -> None:
        """Compile ``nb_sig`` in the dispatcher; ``fresh``: not from Numba's
        cache (which keeps object code only), so that the LLVM module is there."""
        d = self.dispatcher
        saved = d._cache
        if fresh:
            from numba.core.caching import NullCache
            d._cache = NullCache()
        try:
            if self._explicit and self.signatures:   # decorated: compiling was disabled
                d.disable_compile(False)
                try:
                    d.compile(nb_sig)
                finally:
                    d.disable_compile()
            else:
                d.compile(nb_sig)
        finally:
            d._cache = saved


    @property
    def stats(self) -> CacheStats:
        """Cache hits/misses of the Numba dispatcher and of the entry points.  A
        signature loaded from the native cache counts as a hit of both (its
        dispatcher hit keyed by the ckernel signature text)."""
        hits, misses = {}, {}
        if self._dispatcher is not None:
            st = self._dispatcher.stats
            hits, misses = dict(st.cache_hits), dict(st.cache_misses)
        hits.update(self._native_hits)   # by ckernel signature text
        return CacheStats(hits, misses,
                          dict(self._kernel_hits), dict(self._kernel_misses))

    # ---- calling -------------------------------------------------------------
    def _describe_params(self) -> str:
        return f"{self.__name__}(" + ", ".join(
            n if d is _NO_DEFAULT else f"{n}={d!r}" for n, d in self._params) + ")"

    def _bind(self, args, kwargs):
        """The arguments of a call as positional ones: keywords naming
        parameters and the defaults of the missing ones filled in (the
        remaining keywords are the call's options).  ``None`` when the call
        needs no binding; a ``TypeError`` as Python's (and
        ``numba.vectorize``'s) for a wrong count."""
        n = len(self._params)
        named = [k for k in kwargs if any(k == p for p, _ in self._params)]
        if len(args) == n and not named:
            return None
        if len(args) > n:
            raise TypeError(f"{self.__name__}() takes {n} argument{'s' * (n != 1)}, "
                            f"{len(args)} given")
        kwargs = dict(kwargs)
        bound = list(args)
        missing = []
        for i, (p, default) in enumerate(self._params):
            if p in kwargs:
                if i < len(args):
                    raise TypeError(f"{self.__name__}() got multiple values for argument "
                                    f"{p!r}")
                bound.append(kwargs.pop(p))
            elif i >= len(args):
                if default is _NO_DEFAULT:
                    missing.append(p)
                bound.append(default)
        if missing:
            given = len(args) + len(named)
            raise TypeError(f"{self.__name__}() takes {n} argument{'s' * (n != 1)}, {given} "
                            f"given (missing {', '.join(map(repr, missing))})")
        return bound, kwargs

    def _general(self, *args, out=None, **kwargs):
        """The general path (the fallback of the C call): ckernels arrays,
        device arrays, lists, strings, calls without a ufunc; see
        :mod:`ckernels.jit.targets`.  A call with keywords naming parameters
        or missing arguments with defaults is bound first and made again."""
        bound = self._bind(args, kwargs)
        if bound is not None:
            args, kwargs = bound
            if out is not None:
                kwargs["out"] = out
            return self(*args, **kwargs)
        if self._string_loops and self.ufunc is not None and _numpy_text(args, out):
            # NumPy operands with text the C call sent here (object arrays,
            # Python str): the ufunc, object arrays made StringDType first
            if out is not None:
                kwargs["out"] = out
            lib.ck_clear_error()    # no earlier failure's element is read below
            try:
                return self.ufunc(*text.operands(args), **kwargs)
            except _ufuncs.Fallback:     # a result NumPy has no dtype for (a time)
                if kwargs.keys() - {"out"}:
                    raise
                return targets.call(self, args, out)
            except CKernelError as exc:
                if kwargs.keys() - {"out"} or lib.ck_last_error_element(ffi.NULL, 0,
                                                                       ffi.NULL) == 0:
                    raise
                first = exc
            # an element failed inside NumPy's loop, which knows its index
            # within NumPy's call only: the general path names it in the
            # operands' dims (docs/errors.md) -- where it takes the operands
            # (not NumPy bytes, which only NumPy's cast decodes)
            try:
                return targets.call(self, args, out)
            except TypeError:
                raise first from None
        if kwargs:
            raise TypeError(f"{self.__name__}() got unexpected keyword argument(s) "
                            f"{', '.join(map(repr, kwargs))}: only out= applies to "
                            "ckernels arrays, device arrays, lists and strings (NumPy "
                            "operands take every ufunc keyword)")
        return targets.call(self, args, out)

    def _arena_call(self, *args):
        """The general path whatever the operands (NumPy ones too): results in
        ckernels arrays, strings in their arenas (``ckernels.string_operands`` hands
        those to pandas over Arrow)."""
        return targets.call(self, args, None)

    def source(self, target: str = "opencl", signature=None) -> str:
        """Generated device source for one signature (default: the first compiled
        one); ``target`` names a device target (``"opencl"``: OpenCL C emitted
        from the typed IR).  A :class:`ckernels.display.SourceCode`: a ``str``
        that prints as the source and displays highlighted and whole in Jupyter."""
        tgt = targets.device_target(target, self.__name__)
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
        from ..display.source import SourceCode   # prints as text, displays highlighted
        if comp.sig.ret == "string":
            from . import device_strings     # string results: the sizing and writing programs
            return SourceCode(device_strings.source(tgt, self, comp), target)
        if comp.sig.ret in ("var * string", "var * ?string"):
            from . import device_split       # rows of strings: the sizing and writing program
            return SourceCode(device_split.source(tgt, self, comp), target)
        from . import device_append
        if device_append.wants(kernel=None, comp=comp):    # a var result: the arena kernel
            return SourceCode(device_append.source(tgt, self, comp), target)
        if any(a in ("string", "var * string") for a in comp.sig.args):
            from . import device_var     # string arguments: one work item per string/row
            return SourceCode(device_var.source(tgt, self, comp), target)
        if comp.core:
            from . import device_dims
            return SourceCode(device_dims.source(tgt, self, comp), target)
        from . import device_nulls
        if device_nulls.is_null_aware(comp.sig):     # ?T arguments or result
            return SourceCode(device_nulls.source(tgt, self, comp), target)
        return SourceCode(tgt.program(self, comp).source, target)

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
        dst = type_name(dst_type, "result", "instantiate")
        srcs = tuple(type_name(s, "argument", "instantiate") for s in src_types)
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
        return Kernel(ckb, name, f"{self.__name__}: {comp.sig.text}", len(srcs),
                      dst_type=comp.ret_type, src_types=comp.arg_types)

    # ---- registry ------------------------------------------------------------
    def _register_one(self, op_name: str, comp: Compiled) -> None:
        if any(e.kind == "V" for e in comp.sig.elements):
            raise NotSupportedError(
                f"{self.__name__}: cannot register {comp.sig.text} as '{op_name}': the "
                "registry tells struct types apart by kind only")
        if comp.sig.ret == "string":
            raise NotSupportedError(
                f"{self.__name__}: cannot register {comp.sig.text} as '{op_name}': registry "
                "kernels get no destination arena for string results")
        check(lib.ck_jit_register(c_text(op_name, "operation name"), comp.desc))
        from .. import ops
        ops.registry_changed(op_name)

    def register(self, op_name: str) -> "JitKernel":
        """Register every compiled signature (and, without explicit signatures,
        every later one) as a kernel of operation ``op_name``
        (``ck_op_register_factory``); ``ckernels.ops.<op_name>`` then dispatches
        to it (its ufunc is rebuilt with the new loops).  Replaces kernels
        registered for the same argument types."""
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
                lib.ck_op_unregister_kernel(c_text(op_name, "operation name"), len(comp.arg_types), ids)
            if op_name in self._registered:
                self._registered.remove(op_name)
        from .. import ops
        ops.registry_changed(op_name)

    def __repr__(self) -> str:
        sigs = ", ".join(self.signatures) or "no signatures compiled yet"
        return f"<ckernels.jit {self.__qualname__}: {sigs}>"

    def _repr_html_(self) -> str:
        from ..display import html  # the rich display (imported lazily: no cycle)
        return html(self)
