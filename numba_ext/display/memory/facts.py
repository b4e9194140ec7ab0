"""The facts of memory pictures, read from the live C objects (see the
package docstring): :func:`array_layout` (:class:`ArrayFacts`) and
:func:`memblock_layout` / :func:`block_facts` (:class:`BlockFacts`), plain
data the text views and the pictures draw and tests compare with the C API."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import dtypes as _dtypes
from ..._native import c_text_out, check, ffi, lib
from ...errors import CKTypeError
from .._svg import columns, hex_addr

_FIXED, _STRIDED, _VAR = lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM, lib.CK_TYPE_VAR_DIM
_STRING, _BYTES, _STRUCT, _POINTER = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES,
                                      lib.CK_TYPE_STRUCT, lib.CK_TYPE_POINTER)
_OPTION = lib.CK_TYPE_OPTION
_PREAMBLE = ffi.sizeof("ck_array_preamble")
ARENA_KINDS = (lib.CK_MEMBLOCK_POD, lib.CK_MEMBLOCK_ZEROINIT)
_FLAG_NAMES = ((lib.CK_ARRAY_READ, "read"), (lib.CK_ARRAY_WRITE, "write"),
               (lib.CK_ARRAY_IMMUTABLE, "immutable"))

#: the most elements whose {begin, end} pointers are read and drawn
MAX_ELEMENTS = 12
#: the most data cells drawn (items of the data block in memory order)
MAX_CELLS = 48


# ---- reading ---------------------------------------------------------------------

def _addr(p) -> int:
    return int(ffi.cast("uintptr_t", p))


def type_str(t) -> str:
    """A ``ck_type`` printed (``ck_type_print``)."""
    return c_text_out(lib.ck_type_print, t)


@dataclass
class ChunkFacts:
    """One chunk of an arena (``ck_pod_chunk_info``)."""
    begin: int
    capacity: int
    used: int
    mapped: bool


@dataclass
class BlockFacts:
    """A memblock: header fields, and for arenas their statistics and chunks."""
    address: int
    kind: str
    kind_id: int
    refcount: int
    capacity: int | None = None
    used: int | None = None
    allocations: int | None = None
    finalized: bool | None = None
    chunks: list = field(default_factory=list)
    data: int | None = None       # fixed-size blocks: the data, and its size
    size: int | None = None
    holds: str | None = None      # external blocks: what the foreign memory is,
    holds_rows: list = field(default_factory=list)   # and that as (name, value) rows

    def chunk_of(self, address: int) -> int | None:
        """Index of the chunk holding ``address`` (None if none does)."""
        for i, c in enumerate(self.chunks):
            if c.begin <= address < c.begin + max(c.capacity, 1):
                return i
        return None


def block_facts(mb) -> BlockFacts:
    """Facts of the memblock at ``mb`` (a ``ck_memblock *`` or an address)."""
    mb = ffi.cast("ck_memblock *", mb)
    kind = mb.kind
    facts = BlockFacts(_addr(mb), ffi.string(lib.ck_memblock_kind_name(kind)).decode(),
                       int(kind), int(lib.ck_memblock_refcount(mb)))
    if kind in ARENA_KINDS:
        st = ffi.new("ck_pod_stats *")
        check(lib.ck_pod_memblock_stats(mb, st))
        facts.capacity, facts.used = int(st.capacity), int(st.used)
        facts.allocations, facts.finalized = int(st.allocations), bool(st.finalized)
        n = ffi.new("size_t *")
        check(lib.ck_pod_memblock_chunks(mb, ffi.NULL, 0, n))
        info = ffi.new("ck_pod_chunk_info[]", max(n[0], 1))
        check(lib.ck_pod_memblock_chunks(mb, info, n[0], n))
        facts.chunks = [ChunkFacts(_addr(info[i].begin), int(info[i].capacity),
                                   int(info[i].used), bool(info[i].mapped))
                        for i in range(n[0])]
    elif kind == lib.CK_MEMBLOCK_FIXED_SIZE_POD:
        data = ffi.new("char **")
        size = ffi.new("size_t *")
        check(lib.ck_fixed_size_pod_memblock_data(mb, data, size))
        facts.data, facts.size = _addr(data[0]), int(size[0])
    elif kind == lib.CK_MEMBLOCK_EXTERNAL:
        facts.holds_rows = _external_holds(mb)
        (_, what), *detail = facts.holds_rows
        if len(detail) > 1:
            name, value = detail[0]
            what += f" (an ArrowArray of {value})" if name == "ArrowArray" else f" ({value})"
        facts.holds = f"{what}, kept alive {detail[-1][1]}"
    return facts


#: the ArrowArray an imported array's external block owns: its fields are
#: believed only within these bounds (anything else is "foreign memory")
_ARROW_MAX_BUFFERS = 1 << 10
#: the type of the cffi handles MemBlock.external wraps
_HANDLE_TYPE = type(ffi.new_handle(None))


def _external_holds(mb) -> list:
    """What an external block keeps alive, as rows ``(name, value)``: what
    it is, its size where known, what keeps it alive.  Read from the object
    it wraps (``ck_external_memblock_object``): a NumPy array (a Python object
    whose type is ``numpy.ndarray``), an imported Arrow array
    (``ck_arrow_import`` moves the ``ArrowArray`` into the object it wraps:
    its length and buffers), or other foreign memory."""
    obj = ffi.new("void **")
    check(lib.ck_external_memblock_object(mb, obj))
    other = [("holds", "foreign memory"), ("kept alive", "by the block's release callback")]
    if obj[0] == ffi.NULL:
        return other
    # every object wrapped is at least two pointers long (a PyObject's refcount
    # and type; an ArrowArray's length and null count; a ck_buffer's refcount
    # and context), so this read stays inside it
    head = ffi.cast("uintptr_t *", obj[0])
    if int(head[1]) == id(_HANDLE_TYPE):
        return [("holds", "a Python object's memory (MemBlock.external)"),
                ("kept alive", "by a reference to the object, dropped on release")]
    if int(head[1]) == id(np.ndarray):
        return [("holds", "a NumPy array's memory"), ("size", f"{_ndarray_nbytes(obj[0])} B"),
                ("kept alive", "by a reference to the array, dropped on release")]
    arr = ffi.cast("struct ArrowArray *", obj[0])
    if (arr.release != ffi.NULL and arr.length >= 0 and arr.offset >= 0
            and arr.null_count >= -1 and 0 <= arr.n_buffers <= _ARROW_MAX_BUFFERS
            and 0 <= arr.n_children <= _ARROW_MAX_BUFFERS):
        return [("holds", "foreign Arrow buffers"),
                ("ArrowArray", f"{arr.length} row(s), {arr.n_buffers} buffer(s), "
                               f"{arr.n_children} child(ren)"),
                ("kept alive", "until the producer's release callback runs")]
    return other


def _ndarray_nbytes(address) -> int:
    import ctypes
    return int(ctypes.cast(int(ffi.cast("uintptr_t", address)), ctypes.py_object).value.nbytes)


@dataclass
class MetaEntry:
    """The arrmeta of one dim, field or element type: a label and its fields
    ``(offset in the array block, name, value text, referenced block address)``."""
    label: str
    fields: list


@dataclass
class ElementRef:
    """A string (``{begin, end}``) or var dim element (``{begin, size}``) of the
    array: where its pointer pair lives and where it points."""
    path: str
    kind: str            # "string", "bytes" or "var"
    slot: int            # address of the {begin, end} / {begin, size} pair
    begin: int
    end: int
    arena: int           # the blockref of its arrmeta
    preview: str


@dataclass
class Cell:
    """One item of the data block, in memory order."""
    address: int
    index: str | None    # the view's index of this item, None if outside the view
    value: str
    lines: list = field(default_factory=list)   # struct items: (field path, text) rows


@dataclass
class ArrayFacts:
    """Everything an array picture shows."""
    address: int
    refcount: int
    type_pointer: int
    type: str
    type_builtin: bool
    data: int
    flags: int
    flag_names: list
    data_ref: BlockFacts | None
    arrmeta_size: int
    arrmeta: list                      # MetaEntry
    shape: tuple
    strides: tuple
    itemsize: int                      # the innermost item's data size
    item_type: str
    view_lo: int                       # the view's bytes: [data + lo, data + hi)
    view_hi: int
    region: tuple                      # (start, end) of the data block drawn
    region_label: str
    cells: list                        # Cell, memory order, at most MAX_CELLS
    more_cells: int
    elements: list                     # ElementRef, at most MAX_ELEMENTS
    more_elements: int                 # a lower bound (big arrays are not walked whole)
    arenas: list                       # BlockFacts of every blockref


def _struct_fields(t):
    out = []
    name = ffi.new("const char **")
    ftype = ffi.new("ck_type *")
    am_off = ffi.new("size_t *")
    for i in range(lib.ck_struct_field_count(t)):
        check(lib.ck_struct_field(t, i, name, ftype, ffi.NULL, am_off))
        out.append((ffi.string(name[0]).decode(), ftype[0], int(am_off[0])))
    return out


#: how many slots of an option's validity bitmap its arrmeta entry spells out
BITMAP_SLOTS = 8


def _bits_text(m) -> str:
    """An option arrmeta's bitmap: its address and the bits of its first
    :data:`BITMAP_SLOTS` slots in slot order (1 = valid, 0 = null)."""
    if m.bits == ffi.NULL:
        return "NULL (every slot valid)"
    n = min(int(m.length), BITMAP_SLOTS)
    off = int(m.bit_offset)
    bits = "".join(str((m.bits[(off + i) // 8] >> ((off + i) % 8)) & 1) for i in range(n))
    return f"{hex_addr(_addr(m.bits))} slots: {bits}{'…' if m.length > n else ''}"


def _walk_arrmeta(t, am: int, base: int, prefix: str, out: list, axis: list) -> None:
    """Append the arrmeta entries of type ``t`` whose arrmeta is at ``am``
    (offsets printed relative to ``base``, the array block)."""
    tid = lib.ck_type_id_of(t)
    rel = am - base
    if tid in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", am)
        kind = "fixed_dim" if tid == _FIXED else "strided_dim"
        out.append(MetaEntry(f"{prefix}dim {axis[0]}: {kind}",
                             [(rel, "size", str(d.size), None),
                              (rel + 8, "stride", str(d.stride), None)]))
        axis[0] += 1
        _walk_arrmeta(lib.ck_type_element(t), am + ffi.sizeof("ck_dim_arrmeta"), base, prefix,
                      out, axis)
    elif tid == _VAR:
        d = ffi.cast("ck_var_dim_arrmeta *", am)
        ref = _addr(d.blockref)
        out.append(MetaEntry(f"{prefix}dim {axis[0]}: var_dim",
                             [(rel, "blockref", block_label(ref), ref or None),
                              (rel + 8, "stride", str(d.stride), None),
                              (rel + 16, "offset", str(d.offset), None)]))
        axis[0] += 1
        _walk_arrmeta(lib.ck_type_element(t), am + ffi.sizeof("ck_var_dim_arrmeta"), base,
                      prefix, out, axis)
    elif tid in (_STRING, _BYTES):
        d = ffi.cast("ck_string_arrmeta *", am)
        ref = _addr(d.blockref)
        out.append(MetaEntry(f"{prefix}{'string' if tid == _STRING else 'bytes'}",
                             [(rel, "blockref", block_label(ref), ref or None)]))
    elif tid == _STRUCT:
        fields = _struct_fields(t)
        offs = ffi.cast("uintptr_t *", am)
        out.append(MetaEntry(f"{prefix}struct: data offsets",
                             [(rel + 8 * i, f"offset '{n}'", str(offs[i]), None)
                              for i, (n, _, _) in enumerate(fields)]))
        for n, ft, am_off in fields:
            if lib.ck_type_arrmeta_size(ft):
                _walk_arrmeta(ft, am + am_off, base, f"{prefix}'{n}' ", out, [0])
    elif tid == _OPTION:
        m = ffi.cast("ck_option_arrmeta *", am)
        ref = _addr(m.blockref)
        out.append(MetaEntry(f"{prefix}option: validity bitmap",
                             [(rel, "blockref", block_label(ref), ref or None),
                              (rel + 8, "bits", _bits_text(m), None),
                              (rel + 16, "bit_offset", str(m.bit_offset), None),
                              (rel + 24, "origin", hex_addr(_addr(m.origin)), None),
                              (rel + 32, "step", str(m.step), None),
                              (rel + 40, "length", str(m.length), None)]))
        _walk_arrmeta(lib.ck_type_element(t), am + ffi.sizeof("ck_option_arrmeta"), base,
                      prefix, out, axis)
    elif tid == _POINTER:
        d = ffi.cast("ck_pointer_arrmeta *", am)
        ref = _addr(d.blockref)
        out.append(MetaEntry(f"{prefix}pointer",
                             [(rel, "blockref", block_label(ref), ref or None),
                              (rel + 8, "offset", str(d.offset), None)]))
        _walk_arrmeta(lib.ck_type_element(t), am + ffi.sizeof("ck_pointer_arrmeta"), base,
                      prefix, out, axis)


def block_label(address: int) -> str:
    if not address:
        return "NULL"
    mb = ffi.cast("ck_memblock *", address)
    kind = ffi.string(lib.ck_memblock_kind_name(mb.kind)).decode()
    return f"{hex_addr(address)} ({kind}, refcount {lib.ck_memblock_refcount(mb)})"


def _leading_dims(t, am: int):
    """(shape, strides, item type, arrmeta after them) of the leading
    fixed/strided dims."""
    shape, strides = [], []
    while lib.ck_type_id_of(t) in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", am)
        shape.append(int(d.size))
        strides.append(int(d.stride))
        t = lib.ck_type_element(t)
        am += ffi.sizeof("ck_dim_arrmeta")
    return tuple(shape), tuple(strides), t, am


def _extent(shape, strides, itemsize):
    """Byte range [lo, hi) a strided view covers, relative to its data pointer."""
    if any(n == 0 for n in shape):
        return 0, 0
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + itemsize
    return lo, hi


#: columns of a string cell's preview (quotes and escapes included)
STRING_WIDTH = 20


def _number_text(v) -> str:
    if isinstance(v, float):
        s = f"{v:.6g}"
        if s.lstrip("-").isdigit():
            s += ".0"          # 2.0, not 2: the item is a float
        return s
    return repr(v)


def _item_text(t, address: int, am: int, width: int = 10) -> str:
    """A short text for the item of type ``t`` at ``address``: numbers as
    ``%.6g`` (whole), strings as Python's ``repr`` (escapes, quotes) cut to
    :data:`STRING_WIDTH` columns, structs whole (``{1.5, 'ab'}``), other
    types cut to ``width``."""
    tid = lib.ck_type_id_of(t)
    d = _dtypes.by_id.get(int(tid))
    if d is not None and d.numpy is not None:   # a number is never cut (%.6g: short)
        return _number_text(np.frombuffer(ffi.buffer(ffi.cast("char *", address), d.size),
                                          d.numpy)[0].item())
    elif tid in (_STRING, _BYTES):
        return _string_preview(address, tid == _STRING, max(width, STRING_WIDTH))
    elif tid == _VAR:
        v = ffi.cast("ck_var_dim_data *", address)
        s = f"var[{v.size}]"
    elif tid == _STRUCT:
        offs = ffi.cast("uintptr_t *", am)
        parts = [_item_text(ft, address + int(offs[i]), am + am_off)
                 for i, (_, ft, am_off) in enumerate(_struct_fields(t))]
        return "{" + ", ".join(parts) + "}"
    elif tid == _OPTION:
        valid = ffi.new("bool *")
        m = ffi.cast("ck_option_arrmeta *", am)
        if lib.ck_option_get_valid(m, ffi.cast("char *", address), valid) == lib.CK_OK \
                and not valid[0]:
            return "null"      # the bytes under a null are never read as a value
        return _item_text(lib.ck_type_element(t), address,
                          am + ffi.sizeof("ck_option_arrmeta"), width)
    elif tid in (_FIXED, _STRIDED):
        s = type_str(t)
    elif int(tid) in _TIME_IDS:     # ISO 8601 (ck_time_format), cut as strings are
        buf = ffi.new("char[]", 96)
        n = ffi.new("size_t *")
        ok = lib.ck_time_format(t, ffi.cast("void *", address), buf, 96, n) == lib.CK_OK
        s = ffi.string(buf, n[0]).decode() if ok else "?"
        width = max(width, STRING_WIDTH)
    else:
        s = "?"
    return s if len(s) <= width else s[:width - 1] + "…"


#: instants, durations, dates, times of day
_TIME_IDS = frozenset(int(getattr(lib, f"CK_TYPE_{k}"))
                      for k in ("DATETIME", "TIMEDELTA", "DATE", "TIME"))


def item_lines(t, address: int, am: int, prefix: str = "") -> list:
    """The item at ``address`` as lines ``(name, text)``: one per leaf field
    of a struct (``pos.x``), else one unnamed line.  Pictures draw a struct
    item as these rows, so no field's value is cut."""
    if lib.ck_type_id_of(t) != _STRUCT:
        return [(prefix, _item_text(t, address, am))]
    offs = ffi.cast("uintptr_t *", am)
    out = []
    for i, (n, ft, am_off) in enumerate(_struct_fields(t)):
        out += item_lines(ft, address + int(offs[i]), am + am_off,
                          f"{prefix}.{n}" if prefix else n)
    return out


def quoted(text, width: int, cut: bool = False) -> str:
    """``repr(text)`` (a ``str`` or ``bytes``: tabs, newlines and other
    control characters escaped, leading and trailing spaces visible between
    the quotes), at most ``width`` columns; a cut text ends with ``…`` inside
    its quotes.  ``cut``: the text given is already a prefix."""
    r = repr(text)
    if not cut and columns(r) <= width:
        return r
    k = len(text)
    while k > 0 and columns(repr(text[:k])) + 1 > width:
        k -= 1
    r = repr(text[:k])
    return r[:-1] + "…" + r[-1]


def _string_preview(address: int, utf8: bool, width: int) -> str:
    s = ffi.cast("ck_string *", address)
    if s.begin == ffi.NULL:
        return "''" if utf8 else "b''"
    n = _addr(s.end) - _addr(s.begin)
    raw = bytes(ffi.buffer(s.begin, min(n, 4 * width)))
    cut = n > len(raw)
    if utf8:
        text = raw.decode("utf-8", "replace")
        if cut:   # a character split at the cut is not shown as U+FFFD
            text = text.rstrip("\ufffd")
        return quoted(text, width, cut)
    return quoted(raw, width, cut)


def _elements(t, data: int, am: int, path: str, out: list, count: list) -> None:
    """Collect the string / var elements reachable from the item of type ``t``
    at ``data`` (arrmeta ``am``); ``count[0]`` counts all of them."""
    tid = lib.ck_type_id_of(t)
    if tid in (_FIXED, _STRIDED):
        d = ffi.cast("ck_dim_arrmeta *", am)
        el = lib.ck_type_element(t)
        if lib.ck_type_arrmeta_size(el) == 0 and lib.ck_type_id_of(el) not in (
                _STRING, _BYTES, _VAR):
            return  # plain numbers below: nothing points anywhere
        for i in range(int(d.size)):
            if len(out) >= MAX_ELEMENTS and count[0] > 4 * MAX_ELEMENTS:
                count[0] += int(d.size) - i   # a lower bound is enough to say "more"
                return
            _elements(el, data + i * int(d.stride), am + ffi.sizeof("ck_dim_arrmeta"),
                      f"{path}[{i}]", out, count)
    elif tid == _VAR:
        d = ffi.cast("ck_var_dim_arrmeta *", am)
        v = ffi.cast("ck_var_dim_data *", data)
        begin, size = _addr(v.begin), int(v.size)
        count[0] += 1
        if len(out) < MAX_ELEMENTS:
            out.append(ElementRef(path or "[]", "var", data, begin,
                                  begin + size * int(d.stride), _addr(d.blockref),
                                  f"{size} element{'s' if size != 1 else ''}"))
        el = lib.ck_type_element(t)
        for i in range(size):
            _elements(el, begin + int(d.offset) + i * int(d.stride),
                      am + ffi.sizeof("ck_var_dim_arrmeta"), f"{path}[{i}]", out, count)
    elif tid in (_STRING, _BYTES):
        d = ffi.cast("ck_string_arrmeta *", am)
        s = ffi.cast("ck_string *", data)
        count[0] += 1
        if len(out) < MAX_ELEMENTS:
            out.append(ElementRef(path or "[]", "string" if tid == _STRING else "bytes", data,
                                  _addr(s.begin), _addr(s.end), _addr(d.blockref),
                                  _string_preview(data, tid == _STRING, 24)))
    elif tid == _STRUCT:
        offs = ffi.cast("uintptr_t *", am)
        for i, (n, ft, am_off) in enumerate(_struct_fields(t)):
            _elements(ft, data + int(offs[i]), am + am_off, f"{path}.{n}", out, count)


def _index_text(flat: int, shape) -> str:
    idx = []
    for n in reversed(shape):
        idx.append(flat % n)
        flat //= n
    return "[" + ",".join(str(i) for i in reversed(idx)) + "]"


def _owner_region(ref: int):
    """(start, end, label) of the data an owner array block holds, or None."""
    if not ref:
        return None
    mb = ffi.cast("ck_memblock *", ref)
    if mb.kind != lib.CK_MEMBLOCK_ARRAY:
        return None
    owner = ffi.cast("ck_array_preamble *", ref)
    am = _addr(owner) + _PREAMBLE
    shape, strides, item, _ = _leading_dims(owner.type, am)
    lo, hi = _extent(shape, strides, lib.ck_type_data_size(item))
    return _addr(owner.data) + lo, _addr(owner.data) + hi


def array_layout(a) -> ArrayFacts:
    """The facts of a ckernels array (an object with ``.address``, or the
    address of a ``ck_array_preamble``)."""
    address = a if isinstance(a, int) else a.address
    p = ffi.cast("ck_array_preamble *", address)
    if p == ffi.NULL or p.memblock.kind != lib.CK_MEMBLOCK_ARRAY:
        raise CKTypeError(f"address {hex_addr(address)} is not an array memblock")
    t = p.type
    tid = int(lib.ck_type_id_of(t))
    am = address + _PREAMBLE
    flags = int(p.flags)
    arrmeta: list = []
    _walk_arrmeta(t, am, address, "", arrmeta, [0])
    ref = _addr(p.data_ref)
    data = _addr(p.data)
    shape, strides, item, item_am = _leading_dims(t, am)
    itemsize = int(lib.ck_type_data_size(item))
    lo, hi = _extent(shape, strides, itemsize)

    # the data block: the owner array's data, else this view's bytes
    region = _owner_region(ref)
    if ref == 0:
        region_label = "embedded in this array's block"
        region = (data + lo, data + hi)
    elif region is not None:
        region_label = f"in the array block {hex_addr(ref)} (data_ref)"
    else:
        kind = ffi.string(lib.ck_memblock_kind_name(ffi.cast("ck_memblock *", ref).kind))
        region_label = f"owned by the {kind.decode()} block {hex_addr(ref)} (data_ref)"
        region = (data + lo, data + hi)
    cells, more = _cells(data, shape, strides, itemsize, item, item_am, region)

    elements: list = []
    count = [0]
    _elements(t, data, am, "", elements, count)
    arena_addrs = []
    for entry in arrmeta:
        for _, name, _, target in entry.fields:
            if target and target not in arena_addrs:
                arena_addrs.append(target)
    return ArrayFacts(
        address=address, refcount=int(lib.ck_memblock_refcount(ffi.cast("ck_memblock *", p))),
        type_pointer=_addr(t), type=type_str(t),
        type_builtin=tid < lib.CK_BUILTIN_TYPE_COUNT,
        data=data, flags=flags, flag_names=[n for b, n in _FLAG_NAMES if flags & b],
        data_ref=block_facts(ref) if ref else None,
        arrmeta_size=int(lib.ck_type_arrmeta_size(t)), arrmeta=arrmeta,
        shape=shape, strides=strides, itemsize=itemsize, item_type=type_str(item),
        view_lo=lo, view_hi=hi, region=region, region_label=region_label,
        cells=cells, more_cells=more, elements=elements,
        more_elements=max(count[0] - len(elements), 0),
        arenas=[block_facts(r) for r in arena_addrs])


#: views with more elements than this label the drawn cells from their first
#: 4 * MAX_CELLS elements only (the others' offsets are not computed)
_INDEX_LIMIT = 1 << 22
#: element offsets are computed this many at a time
_INDEX_CHUNK = 1 << 13


def _cells(data, shape, strides, itemsize, item, item_am, region):
    """Items of the data block in memory order (at most MAX_CELLS), marked with
    the view's index where the view reaches them."""
    if itemsize == 0:
        return [], 0
    start, end = region
    total = max((end - start) // itemsize, 0)
    drawn = min(total, MAX_CELLS)
    lo, hi = start - data, start - data + drawn * itemsize   # the drawn window, from data
    n = int(np.prod(shape)) if shape else 1
    index_of = {}
    if not shape:
        index_of[data] = "[]"
    elif n:
        # the byte offset of every element (C order), then those in the window
        # in slices of _INDEX_CHUNK elements (memory stays small whatever the
        # size), stopping once every drawn cell has its index
        count = n if n <= _INDEX_LIMIT else 4 * MAX_CELLS
        for begin in range(0, count, _INDEX_CHUNK):
            rem = np.arange(begin, min(begin + _INDEX_CHUNK, count), dtype=np.int64)
            offs = np.zeros(len(rem), dtype=np.int64)
            for size, st in zip(reversed(shape), reversed(strides)):
                offs += (rem % size) * st
                rem //= size
            for k in np.nonzero((offs >= lo) & (offs < hi))[0]:
                index_of.setdefault(data + int(offs[k]), _index_text(begin + int(k), shape))
            if len(index_of) >= drawn:
                break
    struct = lib.ck_type_id_of(item) == _STRUCT
    cells = [Cell(addr, index_of.get(addr), _item_text(item, addr, item_am),
                  item_lines(item, addr, item_am) if struct else [])
             for addr in range(start, start + drawn * itemsize, itemsize)]
    return cells, total - drawn


# ---- memblocks ----------------------------------------------------------------------

def memblock_layout(mb) -> BlockFacts:
    """Facts of a memblock (a :class:`ckernels.MemBlock`, a ``ck_memblock *`` or
    an address)."""
    if hasattr(mb, "ptr"):
        mb = mb.ptr
    return block_facts(mb if not isinstance(mb, int) else ffi.cast("ck_memblock *", mb))
