"""The CPU target of ``@ckernels.jit``: compiled signatures and host calls.

One :class:`Compiled` per signature holds the entry points generated around
Numba's code (:mod:`ckernels.jit.cpu_codegen`), the ``ck_jit_kernel_desc``
the C factories build kernels from, and the external memblock that keeps the
code alive while any kernel uses it.  :func:`call` runs a jitted function on
host data: operands (shared resolution, :mod:`ckernels.jit.operands`) become
ckernel arrays, and ``ck_array_apply`` lifts the jitted leaf over their
dimensions with broadcasting, ``out=`` and the library's thread pool; scalars
in, scalar out; NumPy arrays in, a NumPy array out (a zero-copy view) when
the result type has a NumPy equivalent.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._cargs import c_text
from .._native import check, ffi, lib
from ..host.array import Array
from ..host.array import asarray as _asarray
from ..host.array import check_out_dims as _check_out_dims
from ..host.convert import check_scalar as _check_scalar
from ..host.rewrite import fresh_arena
from ..kernels import KernelBuilder, errmode_value
from ..memory import MemBlock
from ..errors import NotSupportedError
from ..types import as_type
from ..types import option as _option
from . import dims as _dims
from . import operands as _operands
from .signature import Signature


#: CK_JIT_NAME_MAX: the length of ck_jit_kernel_desc.name (NUL included)
_NAME_MAX = dict(ffi.typeof("ck_jit_kernel_desc").fields)["name"].type.length


class _CodeOwner:
    """What the compiled entry points need alive: the code library (and the
    Numba compile result of the user function, with its environment).  Held
    by the kernels' ``code`` memblock (an external block) and by the
    JitKernel; released when the last of them goes."""

    __slots__ = ("trampolines", "cres", "__weakref__")

    def __init__(self, trampolines, cres):
        self.trampolines = trampolines
        self.cres = cres


def cannot_fail(sig: Signature, cres) -> bool:
    """Whether the compiled user function can neither fail nor run long on
    any argument bytes, so that null propagation may run it over the values
    under nulls too (``CK_NULLS_PROPAGATE_ALL_SLOTS``): number and bool
    elements only, and Numba's optimised code of the function is one basic
    block (no loop, no branch to an error) that calls nothing but LLVM
    intrinsics and returns Numba's OK status.  A raise (integer division by
    zero, float division under the Python error model, a checked cast),
    a loop whose trip count could come from a value under a null, or a call
    into a helper makes it False; so does code whose IR cannot be read
    (loaded from Numba's cache)."""
    if cres is None or not all(getattr(e, "builtin", False)
                               for e in (sig.ret_element, *sig.arg_elements)):
        return False
    library = cres.library
    if getattr(library, "_disable_inspection", False):
        return False
    try:
        fn = library.get_function(cres.fndesc.mangled_name)
    except (AttributeError, NameError, RuntimeError):
        return False
    blocks = list(fn.blocks)
    if len(blocks) != 1:
        return False
    for ins in blocks[0].instructions:
        op = ins.opcode
        if op in ("invoke", "br", "switch", "indirectbr", "callbr", "resume", "unreachable"):
            return False
        if op == "call":
            callee = list(ins.operands)[-1].name
            if not callee.startswith("llvm."):
                return False
        elif op == "ret" and str(ins).split() != ["ret", "i32", "0"]:
            return False
    return True


def _unregister_info(info) -> None:
    lib.ck_kernel_info_unregister(info)


class Compiled:
    """One compiled signature: entry points, descriptor, keep-alive block."""

    __slots__ = ("sig", "ret_type", "arg_types", "single", "strided", "code", "desc",
                 "_owner", "_info", "_info_name", "_info_fin", "from_cache", "scalar_ok",
                 "_scalar_kernel", "_dtypes", "core", "nullable", "cannot_fail",
                 "struct_strings", "nulls_variant",
                 "__weakref__")

    def __init__(self, name: str, sig: Signature, trampolines, cres):
        self.sig = sig
        self.ret_type = sig.ret_type
        self.arg_types = sig.arg_types
        #: a signature with core dims (ckernels.jit.dims): its types are patterns
        self.core = _dims.has_dims(sig)
        self.single = trampolines.single
        self.strided = trampolines.strided
        self.from_cache = trampolines.from_cache
        self._owner = _CodeOwner(trampolines, cres)
        self.code = MemBlock.external(self._owner)
        d = ffi.new("ck_jit_kernel_desc *")
        d.single = ffi.cast("ck_expr_single_t", self.single)
        d.strided = ffi.cast("ck_expr_strided_t", self.strided)
        d.code = self.code.ptr
        d.dst_id = self.ret_type.dtype.value_type.type_id
        d.nsrc = len(sig.args)
        for i, t in enumerate(self.arg_types):
            d.src_ids[i] = t.dtype.value_type.type_id
        ret_el = sig.ret_element
        #: a struct result holding strings: its type (the desc borrows it), whose
        #: kernels get one arena per string field (ck_jit_struct_kernel)
        self.struct_strings = (ret_el.type if getattr(ret_el, "kind", None) == "V" and
                               getattr(ret_el, "strings", False) else None)
        if self.struct_strings is not None:
            d.dst_struct = self.struct_strings.c_type
        if self.core:     # borrowed by the desc: ret_type / arg_types keep them alive
            d.dst_pattern = self.ret_type.c_type
            for i, t in enumerate(self.arg_types):
                d.src_patterns[i] = t.c_type
        label = c_text(f"{name}{sig.text[len(sig.ret or '?'):]} -> {sig.ret}", "kernel label",
                       lossy=True)
        d.name = label[:_NAME_MAX - 1]
        self.desc = d
        #: a null-aware signature (``?T`` arguments or result): the
        #: ``ck_jit_option_desc`` of ``ck_jit_option_child_factory``
        self.nullable = None
        if not self.core and any(t.is_option for t in (self.ret_type, *self.arg_types)):
            od = ffi.new("ck_jit_option_desc *")
            od.desc = d
            od.src_nullable = sum(1 << i for i, t in enumerate(self.arg_types) if t.is_option)
            od.dst_nullable = int(self.ret_type.is_option)
            self.nullable = od
        #: the code cannot fail on any bytes (:func:`cannot_fail`): nulls
        #: propagate with the leaf run over every slot in one call
        self.cannot_fail = self.nullable is None and not self.core and cannot_fail(sig, cres)
        self._info = None
        self._info_name = None
        self._info_fin = None
        self.scalar_ok = (not self.core and self.nullable is None and
                          all(e.kind not in "sVMm" for e in sig.elements))
        self._scalar_kernel = None
        self._dtypes = None
        #: a signature with dims: its null-propagating variants by the
        #: arguments holding null rows, made at the first call with nulls
        #: (``JitKernel._propagating_dims``)
        self.nulls_variant = None

    def call_scalar(self, values):
        """One element through the single entry of a cached kernel (builtin
        types): the fast path for scalar calls."""
        k = self._scalar_kernel
        if k is None:
            ckb = KernelBuilder()
            check(lib.ck_jit_make_kernel(ckb.ptr, 0, self.desc, ffi.NULL,
                                         lib.CK_KERNEL_REQUEST_SINGLE, ffi.NULL))
            k = self._scalar_kernel = (ckb, ffi.cast("ck_prefix *", ckb.address_at(0)))
            self._dtypes = (self.sig.ret_element.numpy,
                            [e.numpy for e in self.sig.arg_elements])
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
        nm = ffi.new("char[]", c_text(f"ckernels.jit:{name}", "kernel name", lossy=True))
        info.name = nm
        info.single = self.desc.single
        info.strided = self.desc.strided
        kind = ("ck_jit_core_kernel" if self.core else
                "ck_jit_struct_kernel" if self.struct_strings is not None else "ck_jit_kernel")
        info.data_size = ffi.sizeof(kind)
        info.children = ffi.NULL
        if lib.ck_kernel_info_register(info) == 0:
            # dumps and pictures decode the leaf's fields (code block, arena, core dims)
            fields = kind + "_fields"
            lib.ck_kernel_info_set_fields(info, ffi.addressof(lib, fields))
            self._info, self._info_name = info, nm
            self._info_fin = weakref.finalize(self, _unregister_info, info)

    def __repr__(self) -> str:
        return f"<ckernels.jit compiled {self.sig.text} single={self.single:#x}>"


#: trampoline libraries loaded from the cache in this process, by symbol base
#: (the symbols are deterministic, so a library must not be loaded twice)
_LOADED: dict = {}


def entry_points(kernel, sig: Signature, cres):
    """The generated entry points of ``kernel`` for ``sig`` (``cres``: Numba's
    compile result of the user function for those argument types): for
    builtin element types, the ones compiled into the user function's own
    library (:func:`ckernels.jit.cpu_codegen.emit_entry_points`, cached with
    it by Numba); otherwise (strings) a library of their own, built or loaded
    from the on-disk cache when ``cache=True``."""
    from . import cpu_codegen as cg
    tramp = cg.in_library(cres, sig.arg_elements, sig.ret_element,
                          from_cache=_loaded_from_cache(kernel, sig))
    if tramp is not None:   # compiled with the function (builtin types)
        if kernel._cache:
            counts = kernel._kernel_hits if tramp.from_cache else kernel._kernel_misses
            counts[sig.text] = counts.get(sig.text, 0) + 1
        return tramp
    key_text = (f"{kernel.__module__}.{kernel.__qualname__}|{sig.text}|{kernel._code_key()}|"
                f"{kernel.error_model}")
    symbase = cg.symbol_base(kernel.__qualname__, key_text, unique=not kernel._cache)
    if not kernel._cache:
        return cg.build_trampolines(kernel.dispatcher, sig.arg_elements, sig.ret_element,
                                    symbase, cg.arena_offset(), user_cres=cres)
    tramp = _LOADED.get(symbase)
    if tramp is None:
        cache = kernel._trampoline_cache()
        key = cg.cache_key(symbase, sig.args, sig.ret, cg.arena_offset())
        tramp = cg.load_cached(cache, key, symbase)
        if tramp is None:
            tramp = cg.build_trampolines(kernel.dispatcher, sig.arg_elements, sig.ret_element,
                                         symbase, cg.arena_offset(), cachable=True,
                                         user_cres=cres)
            cg.save_cached(cache, key, tramp)
            kernel._kernel_misses[sig.text] = kernel._kernel_misses.get(sig.text, 0) + 1
        else:
            kernel._kernel_hits[sig.text] = kernel._kernel_hits.get(sig.text, 0) + 1
        _LOADED[symbase] = tramp
    else:
        kernel._kernel_hits[sig.text] = kernel._kernel_hits.get(sig.text, 0) + 1
    return tramp


def _loaded_from_cache(kernel, sig: Signature) -> bool:
    """Whether the dispatcher loaded this signature from its disk cache."""
    if not kernel._cache:
        return False
    nb_args = sig.numba_args
    hits = kernel.dispatcher.stats.cache_hits
    keys = [nb_args]
    if sig.ret_element is not None:
        keys.append(sig.ret_element.numba(*nb_args))
    return any(hits.get(k, 0) for k in keys)


# ------------------------------------------------------------------ calls --
def _out_array(out, fname: str) -> Array:
    if isinstance(out, Array):
        if not out.writable:     # a broadcast view, say: refused as NumPy refuses it
            raise ValueError(f"{fname}: out= is read-only")
        return out
    if isinstance(out, np.ndarray):
        if not out.flags.writeable:
            raise ValueError(f"{fname}: out= is read-only")
        return _asarray(out)
    raise TypeError(f"{fname}: out= must be a ckernel array or a NumPy array, not "
                    f"{type(out).__name__}")


_FACTORY = None
_NULLPROP = None


def _propagating(comp: Compiled):
    """The factory, its data and the result type of a call whose operands
    hold nulls (``?T`` arrays into plain ``T`` arguments): the jitted leaf
    wrapped by ``ck_null_propagating_child_factory`` (a null in any operand
    is a null out; the leaf runs on valid runs only -- or, for a leaf that
    cannot fail, over every slot in one call), the result ``?R``."""
    global _NULLPROP
    if _NULLPROP is None:
        _NULLPROP = ffi.addressof(lib, "ck_null_propagating_child_factory")
    np_ = ffi.new("ck_null_propagation *")
    np_.child = _FACTORY
    np_.child_data = comp.desc
    np_.kleene = (lib.CK_NULLS_PROPAGATE_ALL_SLOTS if comp.cannot_fail
                  else lib.CK_NULLS_PROPAGATE)
    return _NULLPROP, np_, _option(comp.ret_type)


def _plain_nulls(comp: Compiled, arrays) -> int | None:
    """The index of the first operand holding an option where a signature with
    dims takes a plain ``T`` (nulls to propagate), or null rows where it takes
    rows (``var * T``, not ``?var * T``), else None."""
    for i, (a, t) in enumerate(zip(arrays, comp.arg_types)):
        if a.type.dtype.is_option and not t.dtype.is_option:
            return i
        if _null_rows(a.type.dtype) and not _null_rows(t.dtype):
            return i
    return None


def _null_rows(t) -> bool:
    """Whether an element type is one of null-able rows (``?var * T``)."""
    return t.is_option and t.value_type.is_dim


def apply(comp: Compiled, arrays: list[Array], dst: Array | None) -> Array:
    """``ck_array_apply`` of the jitted leaf over host arrays (into ``dst`` if
    given, else a new array); operands with option elements ``?T``: nulls
    propagate (:func:`_propagating`)."""
    global _FACTORY
    if _FACTORY is None:
        _FACTORY = ffi.addressof(lib, "ck_jit_child_factory")
    srcs = ffi.new("ck_array_preamble *[]", [a._a for a in arrays] or [ffi.NULL])
    if comp.nullable is not None:   # ?T in the signature: ck_jit_option_child_factory
        rt = comp.ret_type
        if any(a.type.dtype.is_option and not t.is_option
               for a, t in zip(arrays, comp.arg_types)) or (
                dst is not None and dst.type.dtype.is_option):
            rt = _option(rt)    # a null into a plain argument: a null out
        out = ffi.NULL if dst is not None else ffi.new("ck_array_preamble **")
        check(lib.ck_array_apply(ffi.addressof(lib, "ck_jit_option_child_factory"),
                                 comp.nullable, rt.c_type, len(arrays), srcs,
                                 dst._a if dst is not None else ffi.NULL, out))
        return dst if dst is not None else Array._own(out[0])
    if not comp.core and (any(a.type.dtype.is_option for a in arrays) or (
            dst is not None and dst.type.dtype.is_option)):
        factory, data, rt = _propagating(comp)
        out = ffi.NULL if dst is not None else ffi.new("ck_array_preamble **")
        check(lib.ck_array_apply(factory, data, rt.c_type, len(arrays), srcs,
                                 dst._a if dst is not None else ffi.NULL, out))
        return dst if dst is not None else Array._own(out[0])
    if comp.core and _plain_nulls(comp, arrays) is not None:
        # the direct call switches to the null-propagating variant (call)
        raise NotSupportedError(
            f"{ffi.string(comp.desc.name).decode()}: arguments with missing values (option "
            "types ?T) into plain T arguments of a signature with dims are propagated by "
            "a direct call of the function only; fill them first (a.fill_null(value))")
    if comp.core:    # core dims: ck_array_apply_core with the signature's patterns
        pats = ffi.new("ck_type[]", [t.c_type for t in comp.arg_types] or [ffi.NULL])
        out = ffi.NULL if dst is not None else ffi.new("ck_array_preamble **")
        check(lib.ck_array_apply_core(_FACTORY, comp.desc, comp.ret_type.c_type,
                                      len(arrays), pats, srcs,
                                      dst._a if dst is not None else ffi.NULL, out))
        if dst is not None:
            return dst
        res = Array._own(out[0])
        if var_option_result(comp):     # rows of records: Arrow's layout
            check(lib.ck_jit_var_option_finish(res._a))
        return res
    if dst is not None:
        check(lib.ck_array_apply(_FACTORY, comp.desc, comp.ret_type.c_type, len(arrays), srcs,
                                 dst._a, ffi.NULL))
        return dst
    out = ffi.new("ck_array_preamble **")
    check(lib.ck_array_apply(_FACTORY, comp.desc, comp.ret_type.c_type, len(arrays), srcs,
                             ffi.NULL, out))
    return Array._own(out[0])


def var_option_result(comp: Compiled) -> bool:
    """Whether the signature's result is ``var * ?R`` (written as rows of
    records) or ``?var * R`` (null rows marked), finished by
    ``ck_jit_var_option_finish`` (``ckernel/jit.h``)."""
    if not comp.core:
        return False
    c = _dims.core(comp.sig.ret) if _dims.is_dimensioned(comp.sig.ret) else None
    return c is not None and c.has_var and (_dims.is_option_core(c) or c.null_rows)


def call(kernel, args, out=None):
    """``kernel(*args, out=out)`` on host data."""
    ops = _operands.operands(args, kernel.__name__)
    comp = _operands.select(kernel, ops)
    if comp is None:
        raise TypeError(_operands.no_signature(kernel, ops))
    scalars = all(o.scalar for o in ops)
    if scalars and out is None and comp.scalar_ok and not any(o.option for o in ops):
        return comp.call_scalar([o.value for o in ops])
    arrays = [o.as_array(t.dtype) for o, t in zip(ops, comp.arg_types)]
    if comp.core and _plain_nulls(comp, arrays) is not None:
        # a row with a null: a null out (JitKernel._propagating_dims)
        comp = kernel._propagating_dims(comp, arrays)
    ret_el = comp.ret_type.dtype
    if out is not None:
        dst = _out_array(out, kernel.__name__)
        if not comp.core:       # core dims: the C lifter matches the outer dims
            _check_out_dims(dst, arrays)
        el = dst.type.dtype
        # every element of dst is written: strings go to a fresh arena when dst
        # alone owns its old ones (host/rewrite.py), so rewrites do not pile up
        same = str(el) == str(ret_el) or (el.is_option and not ret_el.is_option and
                                           str(el.value_type) == str(ret_el))
        if same and not var_option_result(comp):     # R, or ?R (nulls propagate into it)
            with fresh_arena(dst._a):
                apply(comp, arrays, dst)
        else:
            tmp = apply(comp, arrays, None)
            with fresh_arena(dst._a):
                check(lib.ck_array_assign(dst._a, tmp._a, errmode_value("default")))
        return out
    res = apply(comp, arrays, None)
    time = ret_el.type_id in _TIME_IDS     # instants, durations: NumPy's M8/m8
    if scalars and not comp.core:
        # a NumPy datetime64/timedelta64 scalar, as Numba's and NumPy's
        return np.asarray(res)[()] if time else res.to_list()
    if (ret_el.is_builtin or time) and all(o.scalar or o.numpy for o in ops) and \
            _numpy_shaped(res):
        return np.asarray(res)
    if comp.core and res.ndim == 0 and ret_el.is_builtin:
        return res.to_list()
    return res


_TIME_IDS = (int(lib.CK_TYPE_DATETIME), int(lib.CK_TYPE_TIMEDELTA))


def _numpy_shaped(a: Array) -> bool:
    """Whether a result's dims are all strided or fixed (a NumPy view fits)."""
    return "var" not in str(a.type)


def pipeline_class():
    """The Numba compiler class of jitted functions' dispatchers."""
    from .cpu_codegen import pipeline_class as _pc
    return _pc()


_DISPATCHER_CLASS = None


def dispatcher_class():
    """The Numba dispatcher class of jitted functions: Numba's CPU dispatcher
    whose overloads are compiled without Numba's CPython wrapper
    (``no_cpython_wrapper``: it costs about 340 KiB per definition, and
    kernels, ufunc loops and jitted callers never use it).  Calling the
    dispatcher from Python (``f.dispatcher(x)``) runs a twin ``numba.njit``
    of the same function and options, compiled at its first such call (the
    overloads themselves have no Python entry)."""
    global _DISPATCHER_CLASS
    if _DISPATCHER_CLASS is None:
        from numba.core.registry import CPUDispatcher

        class KernelDispatcher(CPUDispatcher):
            _twin = None

            def __call__(self, *args, **kwargs):
                twin = self._twin
                if twin is None:
                    import numba
                    from numba.core.caching import FunctionCache
                    opts = {k: v for k, v in self.targetoptions.items()
                            if k not in ("nopython", "no_cpython_wrapper")}
                    twin = self._twin = numba.njit(
                        cache=isinstance(self._cache, FunctionCache), locals=self.locals,
                        **opts)(self.py_func)
                return twin(*args, **kwargs)

        _DISPATCHER_CLASS = KernelDispatcher
    return _DISPATCHER_CLASS


def make_dispatcher(py_func, *, cache: bool, error_model: str, options: dict):
    """A :func:`dispatcher_class` dispatcher of ``py_func`` (what
    ``numba.njit(cache=..., error_model=..., pipeline_class=..., **options)``
    makes, without CPython wrappers)."""
    opts = dict(options)
    locals_ = opts.pop("locals", None) or {}
    targetoptions = {"nopython": True, "error_model": error_model,
                     "no_cpython_wrapper": True, **opts}
    d = dispatcher_class()(py_func=py_func, locals=locals_, targetoptions=targetoptions,
                           pipeline_class=pipeline_class())
    if cache:
        d.enable_caching()
    return d


__all__ = ["Compiled", "call", "apply", "entry_points", "pipeline_class", "dispatcher_class",
           "make_dispatcher"]
