"""Gathers on the device: outer indexing by integer arrays, ``take``, and
the elements ``str(d)`` shows (only those leave the device)."""

from __future__ import annotations

import numpy as np

from ...errors import CKIndexError, InvalidArgumentError
from .. import launch as _dev
from ..base import DeviceArrayBase as DeviceArray
from ...context.device_program import KERNEL_NAME, DeviceProgram
from .conversion import astype
from .programs import cached_program, dialect_of


# =============================================================== gathering ==
def _gather_program(tgt, itemsize):
    """Outer indexing: ``out[j0, j1, ...] = in[idx0[j0], idx1[j1], ...]``, each
    axis either a range (``idx[j] = j``) or a list of int64 indices (negative
    ones counted from the end, bounds-checked)."""
    def make():
        d = tgt
        prog = DeviceProgram(d, "python")
        i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
        el = d.types[f"uint{itemsize * 8}"]
        code = prog.error_code(CKIndexError, ("index out of bounds",))
        text = f"""\
{d.kernel_prefix} {KERNEL_NAME}({d.pointer(u8)}ck_out, {u64} ck_out_off,
    {d.pointer(u8, True)}ck_in, {u64} ck_in_off, {d.pointer(i64, True)}ck_meta,
    {d.pointer(u8, True)}ck_idx, {u64} ck_idx_off, {i32} ck_ndim, {u64} ck_n,
    {d.pointer(i32)}ck_errbuf)
{{
  {u64} i = {d.thread_index};
  if (i >= ck_n) return;
  {u64} rest = i, off = ck_in_off;
  for (int k = ck_ndim - 1; k >= 0; k--) {{
    /* meta per axis: count, stride, axis length, list start (-1: a range) */
    {u64} cnt = ({u64})ck_meta[4 * k];
    {u64} j = rest % cnt;
    rest /= cnt;
    {i64} at = ck_meta[4 * k + 3], idx = ({i64})j, len = ck_meta[4 * k + 2];
    if (at >= 0) {{
      idx = *({d.pointer(i64, True)})((ck_idx + ck_idx_off) + (at + ({i64})j) * 8);
      if (idx < 0) idx += len;
      if (idx < 0 || idx >= len) {{ {d.error_store('ck_errbuf', str(code))} return; }}
    }}
    off += ({u64})(idx * ck_meta[4 * k + 1]);
  }}
  *({d.pointer(el)})(ck_out + ck_out_off + i * {itemsize}) =
      *({d.pointer(el, True)})(ck_in + off);
}}
"""
        prog.kernel_text = prog.source = text
        return prog
    return cached_program(tgt, ("gather", itemsize), make)


def _gather(view: DeviceArray, lists, index: DeviceArray | None) -> DeviceArray:
    """``view`` indexed per axis by ``lists`` (None: the whole axis; an int:
    the start of that axis' indices in ``index``, with its count)."""
    ctx = view.context
    tgt = dialect_of(ctx)
    st = _dev.state(ctx)
    shape, meta = [], []
    for k, (n, s) in enumerate(zip(view._shape, view._strides)):
        sel = lists[k]
        if sel is None:
            shape.append(n)
            meta += [n, s, n, -1]
        else:
            start, count = sel
            shape.append(count)
            meta += [count, s, n, start]
    out = type(view).empty(ctx, tuple(shape), view.dtype)
    if not out.size:
        return out
    prog = _gather_program(tgt, view.itemsize)
    built = ctx.build_program(prog.source)
    mbuf = st.meta(tuple(meta))
    ibuf, ioff = (index._buffer, index._offset) if index is not None else (st.flag, 0)
    with st.lock:
        built.launch(KERNEL_NAME, out.size, (out._buffer, 0), np.uint64(out._offset),
                     (view._buffer, 0), np.uint64(view._offset), (mbuf, 0), (ibuf, 0),
                     np.uint64(ioff), np.int32(view.ndim), np.uint64(out.size),
                     (st.flag, 0), local_size=_dev.LOCAL_SIZE)
        code = st.read_flag()
        if code:
            st.reset_flag()
    if code:
        raise _dev.device_error(prog.errors, code, "DeviceArray indexing",
                                tgt.title)
    return out


def take(view: DeviceArray, idx, axis: int, axis_len: int) -> DeviceArray:
    """``view`` with axis ``axis`` indexed by the integer (or boolean mask)
    index ``idx``: a host list/NumPy array (its indices copied to the device)
    or an integer device array (read on the device); a boolean device mask is
    read to the host to find its positions."""
    if isinstance(idx, DeviceArray):
        if idx.context != view.context:
            raise InvalidArgumentError(f"DeviceArray indexing: the index array lives on "
                                       f"{idx.context.brief}, the array on "
                                       f"{view.context.brief}")
        if idx._element.kind == "b":
            # the positions of a mask are found on the host: the mask is read
            # (one byte per element), the indexed values stay on the device
            return take(view, idx.to_numpy(), axis, axis_len)
        if idx._element.kind not in "iu":
            raise CKIndexError("arrays used as indices must be of integer (or boolean) type")
        ishape = idx._shape
        index = astype(idx, np.int64).reshape(-1) if idx.dtype != np.int64 or \
            not idx.is_contiguous else idx.reshape(-1)
    else:
        arr = np.asarray(idx)
        if arr.dtype.kind == "b":
            if arr.ndim != 1 or arr.shape[0] != axis_len:
                raise CKIndexError(f"boolean index of shape {arr.shape} does not match the "
                                   f"indexed axis of size {axis_len}")
            arr = np.flatnonzero(arr)
        elif arr.size == 0:
            arr = arr.astype(np.int64)
        elif arr.dtype.kind not in "iu":
            raise CKIndexError("arrays used as indices must be of integer (or boolean) type")
        ishape = arr.shape
        flat = arr.astype(np.int64).reshape(-1)
        bad = (flat < -axis_len) | (flat >= axis_len)
        if bad.any():
            raise CKIndexError(f"index {int(flat[bad][0])} is out of bounds for axis "
                               f"{axis} with size {axis_len}")
        index = type(view).from_host(view.context, flat) if flat.size else None
    count = int(np.prod(ishape, dtype=np.int64))
    lists = [None] * view.ndim
    lists[axis] = (0, count)
    if count == 0 or index is None:
        shape = view._shape[:axis] + (0,) + view._shape[axis + 1:]
        res = type(view).empty(view.context, shape, view.dtype)
    else:
        res = _gather(view, lists, index)
    return res.reshape(view._shape[:axis] + tuple(ishape) + view._shape[axis + 1:])


def gather(a: DeviceArray, indices) -> DeviceArray:
    """The elements of ``a`` at the outer product of per-axis index lists
    (int64 arrays, one per leading axis; what ``str(d)`` fetches), gathered
    on the device into a new C-contiguous array."""
    lists, table = [], []
    for k, idx in enumerate(indices):
        idx = np.asarray(idx, np.int64).reshape(-1)
        n = a._shape[k]
        if idx.size == n and np.array_equal(idx, np.arange(n)):
            lists.append(None)
        else:
            lists.append((len(table), idx.size))
            table.extend(idx.tolist())
    lists += [None] * (a.ndim - len(lists))
    index = type(a).from_host(a.context, np.array(table, np.int64)) if table else None
    return _gather(a, lists, index)
