"""Calling kernels on device arrays: the part every device target shares.

A device target is a :class:`DeviceTarget`: a name (the context kind it serves)
and a C :class:`~ckernels.jit.c_emit.Dialect`.  The modules listed in
:data:`TARGETS` provide one each (``ckernels.jit.opencl.TARGET``; a CUDA
target is ``ckernels.jit.cuda.TARGET`` with a CUDA dialect, plus one line
here).  Everything else is common -- to jitted functions (:func:`call`) and to
the built-in operations on device arrays (:mod:`ckernels.jit.device_ops`):

1. operands: device arrays of one context and scalars (Python scalars are
   weak, by the one NEP 50 rule; NumPy scalars strong), anything else is an
   error naming the argument; mixed contexts name which argument lives where;
2. the signature: exact matches first (a lazily compiled function compiles
   one), then -- as on the CPU -- the first signature every argument converts
   to safely: the kernel converts each element as it reads it;
3. the emitted program (cached per compiled signature, target and operand
   layout: which operands are arrays of which element type, which are
   scalars passed by value) built by the context (cached per source);
4. broadcasting and ``out=`` through the library's one implementation
   (``ck_broadcast_shapes`` for the result shape, ``ck_broadcast_strides`` for
   per-operand byte strides, ``ck_coalesce_dims`` so that contiguous and
   scalar-broadcast calls take the kernel's 1-d path); an ``out=`` that
   partly overlaps an input goes through a temporary, as NumPy does;
5. one launch over the result's elements, then the error flag: a non-zero
   code is the exception the device code raised (``ckernels.errors``).

**Launch plans.**  Steps 2-4 depend only on the kernel, the context and the
operands' *layouts* (element types, shapes, strides, which are scalars), not
on their buffers, offsets or scalar values.  Their result is a :class:`Plan`:
the built program, the ``ck_kernel_arg`` array with the layout's constants
filled in, the N-d metadata buffer and the error flag.  Plans are cached per
(compiled signature, context) and per layout, so a repeated call costs a few
dictionary lookups, storing the buffers/offsets/scalars into the argument
array, one ``ck_context_launch`` and reading the flag -- which each context
keeps in one small buffer (read through the host pointer where the device
memory is host-addressable, e.g. PoCL; the flag is reset only after an
error).  No buffer is allocated per call.
"""

from __future__ import annotations

import importlib
import threading
import weakref
from collections import OrderedDict

import numpy as np

from .. import dtypes
from .._native import check, ffi, lib
from ..arraylike import c_strides
from ..context.device_array import DeviceArray
from ..errors import (CKOverflowError, CKTypeError, InvalidArgumentError, NotSupportedError,
                      UserKernelError, exception_for)
from . import operands as _operands
from .c_emit import KERNEL_NAME, Dialect, EmittedKernel, emit_kernel, entry_wrapper
from .signature import element_type, is_struct

#: context kind -> module whose ``TARGET`` runs jitted functions there
TARGETS = {"opencl": "ckernels.jit.opencl", "cuda": "ckernels.jit.cuda"}

_MAXD = int(lib.CK_TYPE_MAX_DEPTH)
_KERNEL_NAME = KERNEL_NAME.encode()
_PLAN_LIMIT = 512      # layouts remembered per (signature, context) / per context
#: work-group size of every launch (``ck_context_launch_local``): fixed, so
#: that implementations compiling one work-group function per size (PoCL)
#: compile a kernel once, not once per array size
LOCAL_SIZE = 64


def target(kind: str) -> "DeviceTarget":
    """The device target for contexts of ``kind`` (NotSupportedError if none)."""
    tgt = _TARGET_OBJECTS.get(kind)
    if tgt is None:
        mod = TARGETS.get(kind)
        if mod is None:
            raise NotSupportedError(f"ckernels.jit: no device target for '{kind}' contexts "
                                    f"(targets: {', '.join(TARGETS)})")
        tgt = _TARGET_OBJECTS[kind] = importlib.import_module(mod).TARGET
    return tgt


_TARGET_OBJECTS: dict = {}


class DeviceTarget:
    """One device target: the context kind it serves and its C dialect."""

    def __init__(self, kind: str, dialect: Dialect):
        self.kind = kind
        self.dialect = dialect
        self._programs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def program(self, kernel, comp) -> EmittedKernel:
        """The emitted program of one compiled signature (cached while ``comp``
        lives); its ``source`` has every operand an array of the signature's
        types (see :func:`~ckernels.jit.c_emit.kernel_wrapper` for others)."""
        with self._lock:
            prog = self._programs.get(comp)
        if prog is None:
            nb_args = tuple(element_type(a).numba for a in comp.sig.args)
            prog = emit_kernel(kernel.py_func, nb_args, element_type(comp.sig.ret).numba,
                               self.dialect, kernel.error_model)
            with self._lock:
                prog = self._programs.setdefault(comp, prog)
        return prog

    def plans(self, comp, ctx) -> dict:
        """The launch plans of one compiled signature in one context."""
        per_ctx = self._plans.get(comp)
        if per_ctx is None:
            with self._lock:
                per_ctx = self._plans.setdefault(comp, weakref.WeakKeyDictionary())
        plans = per_ctx.get(ctx)
        if plans is None:
            with self._lock:
                plans = per_ctx.setdefault(ctx, {})
        return plans

    def check_device(self, ctx, fp64_user, fname: str) -> None:
        """Refuse what the device cannot run (double without fp64 support)."""
        if fp64_user is not None and not ctx.supports_fp64:
            raise NotSupportedError(f"{fname}: {fp64_user} uses float64 but the "
                                    f"device has no fp64 support ({ctx.describe()})")

    def __repr__(self) -> str:
        return f"<ckernels.jit device target {self.kind!r} ({self.dialect.title} C)>"


# ------------------------------------------------------------- per context --
class _RawBuffer:
    """A C buffer reference kept without its Python :class:`Context` (the C
    buffer holds the C context): what a context's state keeps, so that the
    state -- cached with plans in dictionaries weakly keyed by the context --
    never keeps the context object alive."""

    __slots__ = ("_buf", "__weakref__")

    def __init__(self, cctx, nbytes: int, data: np.ndarray):
        out = ffi.new("ck_buffer **")
        check(lib.ck_buffer_new(cctx, nbytes, out))
        self._buf = out[0]
        weakref.finalize(self, lib.ck_buffer_decref, self._buf)
        self.write(data)

    def write(self, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8)
        check(lib.ck_buffer_write(self._buf, 0, ffi.from_buffer(raw), raw.nbytes))


class ContextState:
    """What launches in one context share: the error flag (one int32 in a
    buffer that lives as long as the context object), the N-d metadata
    buffers (cached by content) and the plans of the built-in operations.
    It refers to no Python context object (see :class:`_RawBuffer`)."""

    def __init__(self, ctx):
        self.lock = threading.Lock()
        self.cctx = ctx._ctx
        self.flag = _RawBuffer(ctx._ctx, 64, np.zeros(2, np.int32))
        self.flag_host = None
        if lib.ck_context_host_accessible(ctx._ctx):
            p = ffi.new("void **")
            if lib.ck_buffer_host_pointer(self.flag._buf, p) == 0:
                self.flag_host = ffi.cast("int32_t *", p[0])
        self._read = ffi.new("int32_t[2]")
        self._meta: OrderedDict = OrderedDict()
        self.plans: dict = {}          # built-in operations: key -> Plan

    def read_flag(self) -> int:
        if self.flag_host is not None:
            return self.flag_host[0]
        check(lib.ck_buffer_read(self.flag._buf, 0, self._read, 4))
        return self._read[0]

    def reset_flag(self) -> None:
        self.flag.write(np.zeros(2, np.int32))

    def meta(self, values: tuple) -> _RawBuffer:
        """A buffer holding ``values`` as int64 (cached: the same layouts come
        back call after call)."""
        buf = self._meta.get(values)
        if buf is None:
            flat = np.array(values or (0,), dtype=np.int64)
            buf = _RawBuffer(self.cctx, flat.nbytes, flat)
            with self.lock:
                self._meta[values] = buf
                while len(self._meta) > _PLAN_LIMIT:
                    self._meta.popitem(last=False)
        return buf


_STATES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_STATES_LOCK = threading.Lock()


def state(ctx) -> ContextState:
    st = _STATES.get(ctx)
    if st is None:
        with _STATES_LOCK:
            st = _STATES.get(ctx)
            if st is None:
                st = _STATES[ctx] = ContextState(ctx)
    return st


# ------------------------------------------------------------------ plans --
_CFFI_SCALAR = {d.name: ("uint8_t" if d.kind == "b" else d.cffi) for d in dtypes.BUILTINS
                if d.cffi is not None}


class Plan:
    """One kernel launch with a fixed operand layout; see the module docstring.

    ``inputs`` is ``[(DType row, by_value)]`` per kernel operand; ``errors``
    the program's error table (``EmittedKernel.errors``).  ``extra_meta``:
    int64 values the kernel reads after the N-d metadata (at ``ck_meta +
    (ndim <= 1 ? 0 : ndim * (2 + array inputs))``: the core dims of
    :mod:`ckernels.jit.device_dims`)."""

    __slots__ = ("cctx", "program", "args", "nargs", "n", "out_shape", "out_dtype",
                 "arrays", "scalars", "offs", "vals", "meta", "state", "errors", "fname",
                 "title", "__weakref__")

    def __init__(self, ctx, program, errors, fname, title, out_shape, out_dtype, out_strides,
                 inputs, in_shapes, in_strides, extra_meta=()):
        self.cctx = ctx._ctx      # kept valid by the program's context reference
        self.program = program
        self.errors = errors
        self.fname = fname
        self.title = title
        self.out_shape = out_shape
        self.out_dtype = out_dtype
        self.state = st = state(ctx)
        n = 1
        for s in out_shape:
            n *= s
        self.n = n
        arr_idx = [k for k, (_, by_value) in enumerate(inputs) if not by_value]
        ndim, shape, rows = iteration_space(out_shape, out_strides,
                                            [in_shapes[k] for k in arr_idx],
                                            [in_strides[k] for k in arr_idx])
        if ndim <= 1:
            one = [r[0] if ndim else 0 for r in rows]
            # without extra values never read by the kernel
            self.meta = st.meta(tuple(extra_meta)) if extra_meta else st.flag
        else:
            one = [0] * len(rows)
            self.meta = st.meta(tuple(shape) + tuple(x for r in rows for x in r) +
                                tuple(extra_meta))
        nargs = 3 + 3 * len(arr_idx) + (len(inputs) - len(arr_idx)) + 4
        args = ffi.new("ck_kernel_arg[]", nargs)
        self.offs = offs = ffi.new("uint64_t[]", 1 + len(arr_idx))
        strides = ffi.new("int64_t[]", one or [0])
        self.vals = []
        slots, scal = [0], []
        args[0].kind = lib.CK_KERNEL_ARG_BUFFER
        self._scalar(args, 1, offs + 0, 8)
        self._scalar(args, 2, strides + 0, 8)
        pos, j = 3, 1
        for k, (dt, by_value) in enumerate(inputs):
            if by_value:
                v = ffi.new(f"{_CFFI_SCALAR[dt.name]}[1]")
                self.vals.append(v)
                scal.append((k, v, dt))
                self._scalar(args, pos, v, dt.size)
                pos += 1
            else:
                args[pos].kind = lib.CK_KERNEL_ARG_BUFFER
                slots.append(pos)
                self._scalar(args, pos + 1, offs + j, 8)
                self._scalar(args, pos + 2, strides + j, 8)
                pos, j = pos + 3, j + 1
        args[pos].kind = lib.CK_KERNEL_ARG_BUFFER
        args[pos].buffer = self.meta._buf
        consts = ffi.new("int32_t[1]", [ndim])
        count = ffi.new("uint64_t[1]", [n])
        self._scalar(args, pos + 1, consts, 4)
        self._scalar(args, pos + 2, count, 8)
        args[pos + 3].kind = lib.CK_KERNEL_ARG_BUFFER
        args[pos + 3].buffer = st.flag._buf
        self.vals += [strides, consts, count]
        self.args = args
        self.nargs = nargs
        # (slot in args, index in the call's operand list) of each array operand
        self.arrays = tuple(zip(slots, [None] + arr_idx))
        self.scalars = tuple(scal)

    def _scalar(self, args, i, ptr, size):
        args[i].kind = lib.CK_KERNEL_ARG_SCALAR
        args[i].value = ptr
        args[i].size = size

    def __call__(self, out: DeviceArray, operands) -> None:
        """Run over ``out`` and ``operands`` (arrays and scalar values of this
        plan's layout)."""
        args, offs = self.args, self.offs
        j = 0
        for slot, k in self.arrays:
            a = out if k is None else operands[k]
            args[slot].buffer = a._buffer._buf
            offs[j] = a._offset
            j += 1
        for k, v, dt in self.scalars:
            try:
                v[0] = operands[k]
            except OverflowError:
                raise CKOverflowError(f"{self.fname}: Python integer {operands[k]} out of "
                                      f"bounds for {dt.name}") from None
        if self.n == 0:
            return
        st = self.state
        with st.lock:
            check(lib.ck_context_launch_local(self.cctx, self.program._prog, _KERNEL_NAME,
                                              self.nargs, args, self.n, LOCAL_SIZE))
            code = st.read_flag()
            if code:
                st.reset_flag()
        if code:
            raise device_error(self.errors, code, self.fname, self.title)


# ------------------------------------------------------------------ a call --
def context_of(fname, args, what="argument"):
    """The context of the device arrays among ``args`` (all in one)."""
    ctx = None
    first = None
    for i, a in enumerate(args):
        if isinstance(a, DeviceArray):
            if ctx is None:
                ctx, first = a.context, i
            elif a.context != ctx:
                raise InvalidArgumentError(
                    f"{fname}: {what} {i} lives on {a.context.brief} but {what} {first} "
                    f"lives on {ctx.brief} (a different context); copy one of them first "
                    "(ctx.to(x))")
        elif not _is_scalar(a):
            raise InvalidArgumentError(
                f"{fname}: {what} {i} is a {type(a).__name__}; with device arrays the "
                "other arguments must be device arrays of the same context or scalars "
                "(copy host arrays with ctx.to(...) / ctx.array(...))")
    return ctx


def _is_scalar(a) -> bool:
    return type(a) in (bool, int, float) or (isinstance(a, np.generic) and
                                             a.dtype.kind in "biuf")


def broadcast_shape(shapes) -> tuple:
    """NumPy broadcasting of shapes (``ck_broadcast_shapes``)."""
    n = len(shapes)
    keep = [ffi.new("intptr_t[]", list(s) or [0]) for s in shapes]
    ptrs = ffi.new("intptr_t *[]", keep or [ffi.NULL])
    nds = ffi.new("size_t[]", [len(s) for s in shapes] or [0])
    out = ffi.new("intptr_t[]", _MAXD)
    nd = ffi.new("size_t *")
    check(lib.ck_broadcast_shapes(n, ptrs, nds, out, _MAXD, nd))
    return tuple(out[i] for i in range(nd[0]))


def iteration_space(dst_shape, dst_strides, src_shapes, src_strides):
    """``(ndim, shape, rows)``: the coalesced index space of the destination
    with every source broadcast to it (``rows[0]`` the destination's byte
    strides, ``rows[1 + j]`` source j's), from ``ck_broadcast_strides`` and
    ``ck_coalesce_dims``."""
    keep = []

    def operand(shape, strides, op):
        sh = ffi.new("intptr_t[]", list(shape) or [0])
        st = ffi.new("intptr_t[]", list(strides) or [0])
        keep.extend((sh, st))
        op.ndim, op.shape, op.strides = len(shape), sh, st
    cdst = ffi.new("ck_strided_operand *")
    operand(dst_shape, dst_strides, cdst)
    csrc = ffi.new("ck_strided_operand[]", max(len(src_shapes), 1))
    for j, (sh, st) in enumerate(zip(src_shapes, src_strides)):
        operand(sh, st, csrc[j])
    pitch = max(len(dst_shape), 1)
    nops = len(src_shapes) + 1
    nd = ffi.new("size_t *")
    shape = ffi.new("intptr_t[]", pitch)
    strides = ffi.new("intptr_t[]", nops * pitch)
    check(lib.ck_broadcast_strides(cdst, len(src_shapes), csrc, pitch, nd, shape, strides))
    check(lib.ck_coalesce_dims(nops, nd, shape, strides, pitch))
    n = nd[0]
    return n, [shape[a] for a in range(n)], [[strides[k * pitch + a] for a in range(n)]
                                            for k in range(nops)]


def overlaps(out: DeviceArray, a: DeviceArray) -> bool:
    """Whether ``out`` partly overlaps ``a`` (same buffer, intersecting byte
    ranges, not the very same elements): writing ``out`` element by element in
    parallel could then change inputs not yet read."""
    if a._buffer is not out._buffer or a._key == out._key and a._offset == out._offset:
        return False
    if not out.size or not a.size:
        return False
    lo1, hi1 = _extent(out)
    lo2, hi2 = _extent(a)
    return lo1 < hi2 and lo2 < hi1


def _extent(a: DeviceArray):
    lo = a._offset + sum(st * (n - 1) for n, st in zip(a._shape, a._strides) if st < 0)
    hi = a._offset + sum(st * (n - 1) for n, st in zip(a._shape, a._strides) if st > 0)
    return lo, hi + a.itemsize


def run(plan: Plan, ctx, out: DeviceArray | None, operands):
    """Run ``plan`` in ``ctx`` (allocating the result when ``out`` is None;
    through a temporary when ``out`` partly overlaps an array operand)."""
    if out is None:
        out = DeviceArray.empty(ctx, plan.out_shape, plan.out_dtype)
        plan(out, operands)
        return out
    for a in operands:
        if isinstance(a, DeviceArray) and overlaps(out, a):
            tmp = DeviceArray.empty(ctx, out.shape, out.dtype)
            plan_tmp = plan_for_temporary(plan, ctx, tmp, operands)
            plan_tmp(tmp, operands)
            out._assign(tmp, "nocheck")     # the copy kernel
            return out
    plan(out, operands)
    return out


_TMP_PLANS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def plan_for_temporary(plan: Plan, ctx, tmp, operands) -> Plan:
    """``plan`` for a C-contiguous result of the same shape (the temporary of
    an overlapping ``out=``)."""
    p = _TMP_PLANS.get(plan)
    if p is None:
        inputs, shapes, strides = [], [], []
        arr_k = {k for _, k in plan.arrays if k is not None}
        for k, v in enumerate(operands):
            if k in arr_k:
                inputs.append((v._element, False))
                shapes.append(v._shape)
                strides.append(v._strides)
            else:
                dt = next(d for kk, _, d in plan.scalars if kk == k)
                inputs.append((dt, True))
                shapes.append(())
                strides.append(())
        p = Plan(ctx, plan.program, plan.errors, plan.fname, plan.title, tmp._shape,
                 tmp.dtype, tmp._strides, inputs, shapes, strides)
        _TMP_PLANS[plan] = p
    return p


#: jitted function -> {argument types: (compiled signature, operand layout)}
_SELECT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def call(kernel, args, out=None):
    """``kernel(*args, out=out)`` where at least one argument is a device array."""
    fname = kernel.__name__
    ctx = context_of(fname, args)
    tgt = target(ctx.kind)
    # the signature and the operand layout depend on the types only
    sel_key = (len(kernel._compiled),) + tuple(
        a._element.name if isinstance(a, DeviceArray) else type(a) if
        type(a) in (bool, int, float) else (a.dtype.name,) for a in args)
    cache = _SELECT.get(kernel)
    if cache is None:
        cache = _SELECT.setdefault(kernel, {})
    sel = cache.get(sel_key)
    if sel is None:
        sel = _select(kernel, args, fname)
        if len(cache) >= _PLAN_LIMIT:
            cache.clear()
        cache[(len(kernel._compiled),) + sel_key[1:]] = sel
    sig_args, inputs, values = sel
    comp = kernel._compiled[sig_args]
    if values is not None:      # scalar operands: their values in the storage types
        operands = [a.item() if isinstance(a, np.generic) else a for a in args]
    else:
        operands = args
    if out is not None:
        if not isinstance(out, DeviceArray):
            raise InvalidArgumentError(
                f"{fname}: out= must be a DeviceArray of the arguments' context when they "
                f"live on a device, not {type(out).__name__}")
        if out.context != ctx:
            raise InvalidArgumentError(
                f"{fname}: out= lives on {out.context.brief}, the arguments on "
                f"{ctx.brief} (a different context)")
        if out._element.name != comp.sig.ret:
            raise CKTypeError(f"{fname}: out= has dtype {out.dtype}, the result "
                              f"({comp.sig.text}) has dtype {comp.sig.ret}")
    plans = tgt.plans(comp, ctx)
    key = (out._key if out is not None else None,
           tuple(a._key if isinstance(a, DeviceArray) else None for a in args))
    plan = plans.get(key)
    if plan is None:
        plan = _jit_plan(tgt, kernel, comp, ctx, inputs, args, out, fname)
        if len(plans) >= _PLAN_LIMIT:
            plans.clear()
        plans[key] = plan
    return run(plan, ctx, out, operands)


def _select(kernel, args, fname):
    """``(signature key, inputs, has_scalars)`` for arguments of these types:
    the compiled signature (exact, else a safe cast as on the CPU) and per
    argument its element type in memory and whether it is a scalar."""
    ops = _operands.operands(args, fname)
    comp = _operands.select(kernel, ops, casts=True)
    if comp is None:
        raise CKTypeError(_operands.no_signature(kernel, ops, "the device argument types"))
    inputs = []
    scalars = False
    for o, a, t in zip(ops, args, comp.sig.args):
        if o.device:   # a struct: exactly the signature's type (operands.select)
            inputs.append((element_type(t) if is_struct(t) else a._element, False))
        else:   # a scalar is passed by value in the parameter's type
            inputs.append((element_type(t), True))
            scalars = True
    # the signature by its key (the cache must not hold the compiled code,
    # which would keep the function alive through this weak-keyed cache)
    return comp.sig.args, tuple(inputs), (True if scalars else None)


def _jit_plan(tgt, kernel, comp, ctx, inputs, args, out, fname) -> Plan:
    prog = tgt.program(kernel, comp)
    tgt.check_device(ctx, prog.fp64_user, fname)
    ret = element_type(comp.sig.ret)
    for dt, _ in inputs:
        if dt.c_type(tgt.dialect.name) is None:
            raise NotSupportedError(f"{fname}: element type {dt.name} is not supported on "
                                    f"{tgt.kind} devices")
    if ret.c_type(tgt.dialect.name) is None:
        raise NotSupportedError(f"{fname}: the result type {ret.name} is not supported on "
                                f"{tgt.kind} devices")
    if "float64" in [dt.name for dt, _ in inputs] and not ctx.supports_fp64:
        raise NotSupportedError(f"{fname}: float64 operands on a device without fp64 "
                                f"support ({ctx.describe()})")
    source = tgt.dialect.header(prog) + prog.text() + "\n" + entry_wrapper(prog, inputs, ret)
    built = ctx.build_program(source)
    shapes = [a._shape if isinstance(a, DeviceArray) else () for a in args]
    strides = [a._strides if isinstance(a, DeviceArray) else () for a in args]
    if out is None:
        oshape = broadcast_shape(shapes)
        ostrides = c_strides(oshape, ret.size)
    else:   # the sources broadcast to out= (ck_broadcast_strides says when not)
        oshape, ostrides = out._shape, out._strides
    return Plan(ctx, built, prog.errors, fname, tgt.dialect.title, oshape, ret.numpy,
                ostrides, inputs, shapes, strides)



def device_error(errors, code: int, fname: str, title: str) -> Exception:
    """The exception error code ``code`` stands for in an error table
    (``errors[code - 1] == (exception class, args)``): the one the CPU jit
    raises for the same Python exception (``ckernels.errors.classify``)."""
    if code < 1 or code > len(errors):
        return UserKernelError(f"{fname}: the {title} kernel reported unknown "
                               f"error code {code}")
    cls, args = errors[code - 1]
    try:
        exc = cls(*args)
    except Exception:   # an exception class that does not take these arguments
        exc = None
    if exc is None:
        msg = ", ".join(map(str, args))
        return UserKernelError(f"{cls.__name__}: {msg}" if msg else cls.__name__)
    return exception_for(exc)


__all__ = ["DeviceTarget", "TARGETS", "target", "call", "broadcast_shape", "iteration_space",
           "device_error", "Plan", "ContextState", "state", "run", "context_of", "overlaps"]
