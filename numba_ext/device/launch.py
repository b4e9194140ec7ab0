"""Launching device programs: what every call on device arrays shares, the
jit's (:mod:`ckernels.jit.device`) and the built-in operations'
(:mod:`ckernels.device.ops`).

* operands (:func:`context_of`): device arrays of one context and scalars;
  anything else is an error naming the argument; mixed contexts name which
  argument lives where;
* broadcasting and ``out=`` through the library's one implementation
  (``ck_broadcast_shapes`` for the result shape, ``ck_broadcast_strides`` for
  per-operand byte strides, ``ck_coalesce_dims`` so that contiguous and
  scalar-broadcast calls take the kernel's 1-d path); an ``out=`` that partly
  overlaps an input goes through a temporary, as NumPy does (:func:`run`);
* one launch over the result's elements, then the error flag: a non-zero code
  is the exception the device code raised (:func:`device_error`,
  ``ckernels.errors``).

**Launch plans.**  What a launch needs beyond the operands' buffers, offsets
and scalar values depends only on the program, the context and the operands'
*layouts* (element types, shapes, strides, which are scalars).  That is a
:class:`Plan`: the built program, the ``ck_kernel_arg`` array with the
layout's constants filled in (:class:`~ckernels.context.program.KernelArgs`),
the N-d metadata buffer and the error flag.  Callers cache plans per layout,
so a repeated call costs a few dictionary lookups, storing the
buffers/offsets/scalars into the argument array, one launch and reading the
flag -- which each context keeps in one small buffer (:class:`ContextState`;
read through the host pointer where the device memory is host-addressable,
e.g. PoCL, else by ``ck_context_launch_read``: the flag's 16 bytes copied
behind the kernel, one wait for both; the flag is reset only after an
error).  No buffer is allocated per call but the result's (a repeated jitted
call skips the rest: :mod:`ckernels.jit.fastcall`).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np

from .. import dtypes
from ..arraylike import c_strides
from ..arraylike import shapes as _shapes
from .._native import check, ffi, lib
from ..errors import CKOverflowError, InvalidArgumentError, UserKernelError, exception_for
from .base import DeviceArrayBase
from ..context.device_program import CONTIG_KERNEL_NAME, KERNEL_NAME
from ..context.program import KernelArgs

_MAXD = int(lib.CK_TYPE_MAX_DEPTH)
_KERNEL_NAME = KERNEL_NAME.encode()
_CONTIG_NAME = CONTIG_KERNEL_NAME.encode()
#: layouts remembered per (signature, context) / per context
PLAN_LIMIT = 512
#: work-group size of every launch (``ck_context_launch_local``): fixed, so
#: that implementations compiling one work-group function per size (PoCL)
#: compile a kernel once, not once per array size
LOCAL_SIZE = 64


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
        self._read = ffi.new("int32_t[4]")
        self._meta: OrderedDict = OrderedDict()
        self.plans: dict = {}          # built-in operations: key -> Plan

    def read_flag(self) -> int:
        """The error code (word 0 of the flag); where the flag is not
        host-addressable all four words are read (:meth:`read_offset`)."""
        if self.flag_host is not None:
            return self.flag_host[0]
        check(lib.ck_buffer_read(self.flag._buf, 0, self._read, 16))
        return self._read[0]

    def read_offset(self) -> int:
        """The failing element's byte offset in the output (words 2 and 3 of
        the flag: ``Dialect.error_store_at``), after a non-zero code: in
        place where the flag is host-addressable, else the words the launch
        read (``ck_context_launch_read``: :meth:`Plan.__call__`)."""
        if self.flag_host is not None:
            lo, hi = self.flag_host[2], self.flag_host[3]
        else:
            lo, hi = self._read[2], self._read[3]
        return (lo & 0xFFFFFFFF) | ((hi & 0xFFFFFFFF) << 32)

    def reset_flag(self) -> None:
        self.flag.write(np.zeros(4, np.int32))

    def meta(self, values: tuple) -> _RawBuffer:
        """A buffer holding ``values`` as int64 (cached: the same layouts come
        back call after call)."""
        buf = self._meta.get(values)
        if buf is None:
            flat = np.array(values or (0,), dtype=np.int64)
            buf = _RawBuffer(self.cctx, flat.nbytes, flat)
            with self.lock:
                self._meta[values] = buf
                while len(self._meta) > PLAN_LIMIT:
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
    :mod:`ckernels.jit.device_dims`).

    ``contiguous_kernel``: the program has the contiguous variant of its
    kernel (``kernel_wrapper(..., contiguous=True)``); a layout of one
    dimension whose output and array inputs all have their element size as
    byte stride launches it (``kernel``: the name launched).  Offsets need no
    check: a device array's offset is a multiple of its element size
    (``DeviceArrayBase``), so each typed pointer is aligned."""

    __slots__ = ("cctx", "program", "kargs", "args", "nargs", "n", "out_shape", "out_strides",
                 "out_dtype", "arrays", "scalars", "offs", "meta", "state", "errors", "fname", "title",
                 "contiguous_kernel", "kernel", "__weakref__")

    def __init__(self, ctx, program, errors, fname, title, out_shape, out_dtype, out_strides,
                 inputs, in_shapes, in_strides, extra_meta=(), contiguous_kernel=False):
        self.cctx = ctx._ctx      # kept valid by the program's context reference
        self.program = program
        self.errors = errors
        self.fname = fname
        self.title = title
        self.out_shape = out_shape
        self.out_strides = tuple(out_strides)
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
        self.contiguous_kernel = contiguous_kernel
        self.kernel = _KERNEL_NAME
        if ndim <= 1:
            one = [r[0] if ndim else 0 for r in rows]
            sizes = [np.dtype(out_dtype).itemsize] + [inputs[k][0].size for k in arr_idx]
            if (contiguous_kernel and ndim == 1 and not extra_meta and one == sizes
                    and np.dtype(out_dtype).kind in "biuf"
                    and all(dt.kind in "biuf" for dt, _ in inputs)):
                self.kernel = _CONTIG_NAME
            # without extra values never read by the kernel
            self.meta = st.meta(tuple(extra_meta)) if extra_meta else st.flag
        else:
            one = [0] * len(rows)
            self.meta = st.meta(tuple(shape) + tuple(x for r in rows for x in r) +
                                tuple(extra_meta))
        nargs = 3 + 3 * len(arr_idx) + (len(inputs) - len(arr_idx)) + 4
        ka = KernelArgs(nargs)
        self.offs = offs = ka.keep(ffi.new("uint64_t[]", 1 + len(arr_idx)))
        strides = ka.keep(ffi.new("int64_t[]", one or [0]))
        slots, scal = [0], []
        ka.buffer(0)
        ka.scalar(1, offs + 0, 8)
        ka.scalar(2, strides + 0, 8)
        pos, j = 3, 1
        for k, (dt, by_value) in enumerate(inputs):
            if by_value:
                scal.append((k, ka.value(pos, _CFFI_SCALAR.get(dt.name, dt.cffi)), dt))
                pos += 1
            else:
                ka.buffer(pos)
                slots.append(pos)
                ka.scalar(pos + 1, offs + j, 8)
                ka.scalar(pos + 2, strides + j, 8)
                pos, j = pos + 3, j + 1
        ka.buffer(pos, self.meta._buf)
        ka.value(pos + 1, "int32_t", ndim)
        ka.value(pos + 2, "uint64_t", n)
        ka.buffer(pos + 3, st.flag._buf)
        self.kargs = ka
        self.args = ka.args
        self.nargs = nargs
        # (slot in args, index in the call's operand list) of each array operand
        self.arrays = tuple(zip(slots, [None] + arr_idx))
        self.scalars = tuple(scal)

    def __call__(self, out: DeviceArrayBase, operands) -> None:
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
        offset = None
        with st.lock:
            if st.flag_host is not None:     # host-addressable: read in place
                check(lib.ck_context_launch_local(self.cctx, self.program._prog, self.kernel,
                                                  self.nargs, args, self.n, LOCAL_SIZE))
                code = st.flag_host[0]
            else:    # the flag's four words read behind the kernel: one wait
                words = st._read
                check(lib.ck_context_launch_read(self.cctx, self.program._prog, self.kernel,
                                                 self.nargs, args, self.n, LOCAL_SIZE,
                                                 st.flag._buf, 0, words, 16))
                code = words[0]
            if code:
                offset = st.read_offset()
                st.reset_flag()
        if code:
            raise device_error(self.errors, code, self.fname, self.title,
                               element_at(offset, self.out_shape, self.out_strides))


# ------------------------------------------------------------------ a call --
def build_plan(ctx, source: str, errors, fname: str, title: str, inputs, operands,
               out_dtype, *, out=None, out_layout=None, operand_layouts=None,
               extra_meta=(), contiguous_kernel=False) -> Plan:
    """The one way a launch plan is made -- for jitted calls
    (:mod:`ckernels.jit.device`, :mod:`ckernels.jit.device_dims`) and the
    built-in operations (:mod:`ckernels.device.ops`) alike: ``source`` built
    in ``ctx`` (the context's program cache), the operands' layouts and the
    result's, and the :class:`Plan` over them.

    ``inputs``: ``[(DType row, by_value)]`` per kernel operand; ``operands``:
    the call's operands (device arrays and scalars), whose ``(shape,
    strides)`` are the layouts unless ``operand_layouts`` gives them (the
    outer dims of operands with core dims).  The result's layout is
    ``out_layout``, else ``out=``'s (the sources broadcast to it:
    ``ck_broadcast_strides`` says when not), else the C-contiguous broadcast
    of the operands' shapes in ``out_dtype``.  ``extra_meta`` and
    ``contiguous_kernel``: see :class:`Plan`."""
    built = ctx.build_program(source)
    if operand_layouts is None:
        operand_layouts = [(a._shape, a._strides) if isinstance(a, DeviceArrayBase) else ((), ())
                           for a in operands]
    shapes = [shape for shape, _ in operand_layouts]
    strides = [st for _, st in operand_layouts]
    out_dtype = np.dtype(out_dtype)
    if out_layout is not None:
        oshape, ostrides = out_layout
    elif out is not None:
        oshape, ostrides = out._shape, out._strides
    else:
        oshape = broadcast_shape(shapes)
        ostrides = c_strides(oshape, out_dtype.itemsize)
    return Plan(ctx, built, errors, fname, title, oshape, out_dtype, ostrides, inputs, shapes,
                strides, extra_meta=extra_meta, contiguous_kernel=contiguous_kernel)


def remember(plans: dict, key, plan: Plan, limit: int = PLAN_LIMIT, lock=None) -> Plan:
    """Keep ``plan`` in a cache of plans (at most ``limit``: a full cache starts
    over), under ``lock`` if given."""
    if lock is None:
        if len(plans) >= limit:
            plans.clear()
        plans[key] = plan
        return plan
    with lock:
        return remember(plans, key, plan, limit)


def context_of(fname, args, what="argument"):
    """The context of the device arrays among ``args`` (all in one)."""
    ctx = None
    first = None
    for i, a in enumerate(args):
        if isinstance(a, DeviceArrayBase):
            if ctx is None:
                ctx, first = a.context, i
            elif a.context != ctx:
                raise InvalidArgumentError(
                    f"{fname}: {what} {i} lives on {a.context.brief} but {what} {first} "
                    f"lives on {ctx.brief} (a different context); copy one of them first "
                    "(ctx.to(x))")
        elif not (_is_scalar(a) or isinstance(a, (np.datetime64, np.timedelta64))):
            raise InvalidArgumentError(
                f"{fname}: {what} {i} is a {type(a).__name__}; with device arrays the "
                "other arguments must be device arrays of the same context or scalars "
                "(copy host arrays with ctx.to(...) / ctx.array(...))")
    return ctx


def _is_scalar(a) -> bool:
    return type(a) in (bool, int, float) or (isinstance(a, np.generic) and
                                             a.dtype.kind in "biuf")


broadcast_shape = _shapes.broadcast_shape   # NumPy broadcasting by the C library


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


def overlaps(out: DeviceArrayBase, a: DeviceArrayBase) -> bool:
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


def _extent(a: DeviceArrayBase):
    lo = a._offset + sum(st * (n - 1) for n, st in zip(a._shape, a._strides) if st < 0)
    hi = a._offset + sum(st * (n - 1) for n, st in zip(a._shape, a._strides) if st > 0)
    return lo, hi + a.itemsize


def run(plan: Plan, ctx, out: DeviceArrayBase | None, operands):
    """Run ``plan`` in ``ctx`` (allocating the result, an array of the class of
    the first array operand, when ``out`` is None; through a temporary when
    ``out`` partly overlaps an array operand)."""
    if out is None:
        cls = next(type(a) for a in operands if isinstance(a, DeviceArrayBase))
        out = cls.empty(ctx, plan.out_shape, plan.out_dtype)
        plan(out, operands)
        return out
    for a in operands:
        if isinstance(a, DeviceArrayBase) and overlaps(out, a):
            tmp = type(out).empty(ctx, out.shape, out.dtype)
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
                 tmp.dtype, tmp._strides, inputs, shapes, strides,
                 contiguous_kernel=plan.contiguous_kernel)
        _TMP_PLANS[plan] = p
    return p


#: jitted function -> {argument types: (compiled signature, operand layout)}
def element_at(offset, shape, strides):
    """The index (outermost first) of the element at byte ``offset`` of an
    output with ``shape`` / ``strides`` (no two elements at one offset), or
    None when no element lies there."""
    if offset is None or not shape:
        return None
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n > 0)
    off = offset - lo
    pos = [0] * len(shape)
    for k in sorted(range(len(shape)), key=lambda k: -abs(strides[k])):
        a = abs(strides[k])
        if a == 0:
            continue
        q = off // a
        if off < 0 or q >= shape[k]:
            return None
        off -= q * a
        pos[k] = shape[k] - 1 - q if strides[k] < 0 else q
    return tuple(pos) if off == 0 else None


def device_error(errors, code: int, fname: str, title: str, element=None) -> Exception:
    """The exception error code ``code`` stands for in an error table
    (``errors[code - 1] == (exception class, args[, where])``): the one the
    CPU jit raises for the same Python exception (``ckernels.errors.classify``),
    its message ending with the user's ``[function at file:line, element i]``
    when the entry names the line and ``element`` (an index tuple) is known."""
    if code < 1 or code > len(errors):
        return UserKernelError(f"{fname}: the {title} kernel reported unknown "
                               f"error code {code}")
    cls, args, *where = errors[code - 1]
    parts = []
    if where and where[0] is not None:      # the user's (function, file, line)
        parts.append(f"{where[0][0]} at {where[0][1]}:{where[0][2]}")
    if element is not None:                 # the failing element (outermost first)
        parts.append(f"element {element[0] if len(element) == 1 else element}")
    suffix = f" [{', '.join(parts)}]" if parts else ""
    try:
        exc = cls(*args)
    except Exception:   # an exception class that does not take these arguments
        exc = None
    if exc is None:
        msg = ", ".join(map(str, args))
        return UserKernelError((f"{cls.__name__}: {msg}" if msg else cls.__name__) + suffix)
    if not suffix:
        return exception_for(exc)
    err = exception_for(exc)
    return type(err)(err.message + suffix, err.status)




__all__ = ["build_plan", "remember", "Plan", "ContextState", "state", "run", "context_of",
           "overlaps", "broadcast_shape",
           "iteration_space", "plan_for_temporary", "device_error", "element_at", "LOCAL_SIZE",
           "PLAN_LIMIT"]
