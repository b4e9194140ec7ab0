"""Reductions on the device (``sum prod min max any all mean``): a tree of
partial results, each work item folding one chunk, until one value per
output element is left."""

from __future__ import annotations

import numbers

import numpy as np

from ... import dialects, dtypes
from ...opnames import REDUCTIONS
from ...errors import CKIndexError, CKTypeError, CKValueError, InvalidArgumentError
from .. import launch as _dev
from ..base import DeviceArrayBase as DeviceArray
from ...context.device_program import KERNEL_NAME, DeviceProgram
from .conversion import assign
from .element_functions import element_function
from .programs import cached_program, check_device_types, check_fp64, dialect_of, refuse_time


# ============================================================= reductions ==
#: reduction -> (combining operation of the table, identity); the operation
#: names are ckernels.opnames' (a mean sums)
_IDENTITY = {"sum": 0, "prod": 1, "min": None, "max": None, "any": False, "all": True,
             "mean": 0}
_REDUCE = {name: (REDUCTIONS["sum" if name == "mean" else name], ident)
           for name, ident in _IDENTITY.items()}
_ITEMS = 1 << 14         # work items a pass aims at
_MIN_CHUNK = 32


def _acc_type(name, src: str, dtype) -> str:
    """NumPy's accumulator/result type of a reduction."""
    if dtype is not None:
        return dtypes.of_numpy(np.dtype(dtype)).name
    d = dtypes.by_name[src]
    if name in ("any", "all"):
        return "bool"
    if name in ("min", "max"):
        return src
    if name == "mean":
        return src if d.kind == "f" else "float64"
    if d.kind in "bi":
        return "int64"
    if d.kind == "u":
        return "uint64"
    return src


def _reduce_program(tgt, name, src, acc, out, final_mean):
    """The pass kernel: each work item folds one chunk of one output element's
    reduced elements (read as ``src``, combined in ``acc``) and stores the
    partial result (as ``out``; divided by the count in the last pass of a
    mean)."""
    def make():
        d = tgt
        prog = DeviceProgram(d, "python")
        if dialects.uses_fp64((src.name, acc.name, out.name)):
            prog.fp64_user = f"{name}()"
        opname, ident = _REDUCE[name]
        fn = element_function(prog, opname, (acc, acc), acc, name)
        i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
        a_ct = d.ctype(acc)
        s_ct = u8 if src.kind == "b" else d.ctype(src)
        o_ct = u8 if out.kind == "b" else d.ctype(out)
        load = f"*({d.pointer(s_ct, True)})(ck_in + off)"
        load = f"({a_ct})({load} != 0)" if src.kind == "b" or acc.kind == "b" else \
            f"({a_ct}){load}"
        if ident is None:
            init = ["    if (j == j0) { acc = x; continue; }"]
            start = f"  {a_ct} acc = 0;"
        else:
            init = []
            start = f"  {a_ct} acc = ({a_ct}){int(ident)};"
        div = f"  if (ck_final) acc = acc / ({a_ct})ck_count;\n" if final_mean else ""
        store = "acc ? 1 : 0" if out.kind == "b" else f"({o_ct})acc"
        text = f"""\
{d.kernel_prefix} {KERNEL_NAME}({d.pointer(u8)}ck_out, {u64} ck_out_off,
    {d.pointer(u8, True)}ck_in, {u64} ck_in_off, {d.pointer(i64, True)}ck_meta,
    {i32} ck_nkeep, {i32} ck_nred, {u64} ck_nout, {u64} ck_m, {u64} ck_chunk,
    {u64} ck_nchunks, {u64} ck_count, {i32} ck_final, {d.pointer(i32)}ck_errbuf)
{{
  {u64} g = {d.thread_index};
  if (g >= ck_nout * ck_nchunks) return;
  {u64} o = g / ck_nchunks, c = g % ck_nchunks;
  {u64} base = ck_in_off, rest = o;
  for (int k = ck_nkeep - 1; k >= 0; k--) {{
    {u64} idx = rest % ({u64})ck_meta[k];
    rest /= ({u64})ck_meta[k];
    base += idx * ck_meta[ck_nkeep + k];
  }}
  {u64} j0 = c * ck_chunk, j1 = j0 + ck_chunk;
  if (j1 > ck_m) j1 = ck_m;
  {i32} err = 0;
{start}
  {i64} rstride = ck_meta[2 * ck_nkeep + ck_nred];
  for ({u64} j = j0; j < j1; j++) {{
    {u64} off = base;
    if (ck_nred == 1) {{
      off += j * rstride;
    }} else {{
      {u64} r = j;
      for (int k = ck_nred - 1; k >= 0; k--) {{
        {u64} idx = r % ({u64})ck_meta[2 * ck_nkeep + k];
        r /= ({u64})ck_meta[2 * ck_nkeep + k];
        off += idx * ck_meta[2 * ck_nkeep + ck_nred + k];
      }}
    }}
    {a_ct} x = {load};
{chr(10).join(init)}
    acc = {fn}(acc, x, &err);
  }}
{div}  *({d.pointer(o_ct)})(ck_out + ck_out_off + g * sizeof({o_ct})) = {store};
}}
"""
        prog.finish(text)
        return prog
    return cached_program(tgt, ("reduce", name, src.name, acc.name, out.name, final_mean), make)


def _coalesce(shape, strides):
    """Drop size-1 dims and merge dims that walk memory as one run."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    out = []
    for n, s in dims:
        if out and out[-1][1] == s * n:
            pn, ps = out[-1]
            out[-1] = (pn * n, s)
        else:
            out.append((n, s))
    return [n for n, _ in out], [s for _, s in out]


def _axes(axis, nd, name):
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if isinstance(axis, (numbers.Integral, np.integer)) else tuple(axis)
    norm = []
    for a in axes:
        a = int(a)
        if not -nd <= a < nd:
            raise CKIndexError(f"{name}: axis {a} is out of bounds for array of dimension "
                               f"{nd}")
        if a % nd in norm:
            raise InvalidArgumentError(f"{name}: duplicate value in 'axis'")
        norm.append(a % nd)
    return tuple(norm)


def reduce(name: str, a: DeviceArray, axis=None, keepdims=False, dtype=None, out=None):
    """A reduction on the device (``sum prod min max any all mean``), NumPy's
    result types, ``axis`` (int, tuple or None) and ``keepdims``; a full
    reduction is a 0-d device array."""
    if not isinstance(a, DeviceArray):
        raise CKTypeError(f"{name}: expected a DeviceArray, not {type(a).__name__}")
    refuse_time(f"ckernels.ops.{name}", (a,))
    ctx = a.context
    tgt = dialect_of(ctx)
    axes = _axes(axis, a.ndim, name)
    keep = [k for k in range(a.ndim) if k not in axes]
    keep_shape = tuple(a._shape[k] for k in keep)
    res_shape = tuple(1 if k in axes else a._shape[k] for k in range(a.ndim)) if keepdims \
        else keep_shape
    acc_name = _acc_type(name, a._element.name, dtype)
    if name in ("any", "all"):
        res_name = "bool"
    else:
        res_name = acc_name
    check_device_types(tgt, name, (acc_name, res_name))
    check_fp64(ctx, name, (a._element.name, acc_name, res_name))
    acc = dtypes.by_name[acc_name]
    nout = 1
    for s in keep_shape:
        nout *= s
    m = 1
    for k in axes:
        m *= a._shape[k]
    result = type(a).empty(ctx, keep_shape, dtypes.by_name[res_name].numpy)
    if nout:
        if m == 0:
            ident = _REDUCE[name][1]
            if ident is None:
                raise CKValueError(f"zero-size array to reduction operation "
                                   f"{_REDUCE[name][0]} which has no identity")
            assign(result, np.nan if name == "mean" else ident)
        else:
            _reduce_passes(tgt, ctx, name, a, keep, axes, acc, result, nout, m)
    if keepdims:
        result = result.reshape(res_shape)
    if out is not None:
        if not isinstance(out, DeviceArray) or out.context != ctx:
            raise InvalidArgumentError(f"{name}: out= must be a DeviceArray of the same "
                                       "context")
        if out._shape != res_shape:
            raise InvalidArgumentError(f"{name}: out= has shape {out._shape}, the result "
                                       f"{res_shape}")
        assign(out, result)
        return out
    return result


def _reduce_passes(tgt, ctx, name, a, keep, axes, acc, result, nout, m):
    st = _dev.state(ctx)
    kshape, kstrides = _coalesce([a._shape[k] for k in keep], [a._strides[k] for k in keep])
    rshape, rstrides = _coalesce([a._shape[k] for k in axes], [a._strides[k] for k in axes])
    if not rshape:
        rshape, rstrides = [1], [0]
    src, buf, off = a._element, a._buffer, a._offset
    mean = name == "mean"
    count = m         # a mean divides by the original count, in the last pass
    while True:
        chunk = max(_MIN_CHUNK, -(-m // max(1, _ITEMS // nout)))
        nchunks = -(-m // chunk)
        final = nchunks == 1
        if final:
            dst = result
            out_dt = result._element
        else:
            dst = type(a).empty(ctx, (nout * nchunks,), acc.numpy)
            out_dt = acc
        prog = _reduce_program(tgt, name, src, acc, out_dt, mean)
        built = ctx.build_program(prog.source)
        meta = st.meta(tuple(kshape) + tuple(kstrides) + tuple(rshape) + tuple(rstrides))
        u64, i32 = np.uint64, np.int32
        with st.lock:
            built.launch(KERNEL_NAME, nout * nchunks, (dst._buffer, 0), u64(dst._offset),
                         (buf, 0), u64(off), (meta, 0), i32(len(kshape)), i32(len(rshape)),
                         u64(nout), u64(m), u64(chunk), u64(nchunks), u64(count),
                         i32(1 if final else 0), (st.flag, 0), local_size=_dev.LOCAL_SIZE)
        if final:
            return
        # the next pass folds each output element's partial results
        src, buf, off = acc, dst._buffer, dst._offset
        kshape, kstrides = ([nout], [nchunks * acc.size]) if nout > 1 else ([], [])
        rshape, rstrides = [nchunks], [acc.size]
        m = nchunks
