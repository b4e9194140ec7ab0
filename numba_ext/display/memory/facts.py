"""Memory pictures: arrays and memory blocks drawn from the live C objects.

Everything is read through the C API and the public structs (the layout table
checked at import guarantees cffi's offsets): the array preamble
(``ck_array_preamble``), the arrmeta of each dim and field
(``ck_dim_arrmeta``, ``ck_var_dim_arrmeta``, ``ck_string_arrmeta``, ...), the
data it points to, the memblock owning that data (``data_ref``), and the
arenas strings and var dims point into (``ck_pod_memblock_stats``,
``ck_pod_memblock_chunks``).  Nothing is copied and no reference is taken:
reading happens while the caller holds the object.

:func:`array_layout` / :func:`memblock_layout` give the facts as plain data
(tests compare them with the C API); :func:`array_svg`, :func:`array_text`,
:func:`memblock_svg`, :func:`memblock_text` draw and print them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import dtypes as _dtypes
from .._native import check, ffi, lib
from ..errors import CKTypeError
from ._svg import COLORS, MUTED, PAD, ROW_H, Canvas, FieldBox, hex_addr, text_width

_FIXED, _STRIDED, _VAR = lib.CK_TYPE_FIXED_DIM, lib.CK_TYPE_STRIDED_DIM, lib.CK_TYPE_VAR_DIM
_STRING, _BYTES, _STRUCT, _POINTER = (lib.CK_TYPE_STRING, lib.CK_TYPE_BYTES,
                                      lib.CK_TYPE_STRUCT, lib.CK_TYPE_POINTER)
_PREAMBLE = ffi.sizeof("ck_array_preamble")
_ARENA_KINDS = (lib.CK_MEMBLOCK_POD, lib.CK_MEMBLOCK_ZEROINIT)
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
    n = ffi.new("size_t *")
    check(lib.ck_type_print(t, ffi.NULL, 0, n))
    buf = ffi.new("char[]", n[0] + 1)
    check(lib.ck_type_print(t, buf, n[0] + 1, n))
    return ffi.string(buf).decode()


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
    if kind in _ARENA_KINDS:
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
    return facts


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
                             [(rel, "blockref", _block_label(ref), ref or None),
                              (rel + 8, "stride", str(d.stride), None),
                              (rel + 16, "offset", str(d.offset), None)]))
        axis[0] += 1
        _walk_arrmeta(lib.ck_type_element(t), am + ffi.sizeof("ck_var_dim_arrmeta"), base,
                      prefix, out, axis)
    elif tid in (_STRING, _BYTES):
        d = ffi.cast("ck_string_arrmeta *", am)
        ref = _addr(d.blockref)
        out.append(MetaEntry(f"{prefix}{'string' if tid == _STRING else 'bytes'}",
                             [(rel, "blockref", _block_label(ref), ref or None)]))
    elif tid == _STRUCT:
        fields = _struct_fields(t)
        offs = ffi.cast("uintptr_t *", am)
        out.append(MetaEntry(f"{prefix}struct: data offsets",
                             [(rel + 8 * i, f"offset '{n}'", str(offs[i]), None)
                              for i, (n, _, _) in enumerate(fields)]))
        for n, ft, am_off in fields:
            if lib.ck_type_arrmeta_size(ft):
                _walk_arrmeta(ft, am + am_off, base, f"{prefix}'{n}' ", out, [0])
    elif tid == _POINTER:
        d = ffi.cast("ck_pointer_arrmeta *", am)
        ref = _addr(d.blockref)
        out.append(MetaEntry(f"{prefix}pointer",
                             [(rel, "blockref", _block_label(ref), ref or None),
                              (rel + 8, "offset", str(d.offset), None)]))
        _walk_arrmeta(lib.ck_type_element(t), am + ffi.sizeof("ck_pointer_arrmeta"), base,
                      prefix, out, axis)


def _block_label(address: int) -> str:
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


def _item_text(t, address: int, am: int, width: int = 10) -> str:
    """A short text for the item of type ``t`` at ``address``."""
    tid = lib.ck_type_id_of(t)
    d = _dtypes.by_id.get(int(tid))
    if d is not None and d.numpy is not None:
        v = np.frombuffer(ffi.buffer(ffi.cast("char *", address), d.size), d.numpy)[0].item()
        if isinstance(v, float):
            s = f"{v:.6g}"
            if s.lstrip("-").isdigit():
                s += ".0"          # 2.0, not 2: the item is a float
        else:
            s = repr(v)
    elif tid in (_STRING, _BYTES):
        s = _string_preview(address, tid == _STRING, width)
    elif tid == _VAR:
        v = ffi.cast("ck_var_dim_data *", address)
        s = f"var[{v.size}]"
    elif tid == _STRUCT:
        offs = ffi.cast("uintptr_t *", am)
        parts = [_item_text(ft, address + int(offs[i]), am + am_off, 8)
                 for i, (_, ft, am_off) in enumerate(_struct_fields(t))]
        s = "{" + ", ".join(parts) + "}"
        width = max(width, 18)
    elif tid in (_FIXED, _STRIDED):
        s = type_str(t)
    else:
        s = "?"
    return s if len(s) <= width else s[:width - 1] + "…"


def _string_preview(address: int, utf8: bool, width: int) -> str:
    s = ffi.cast("ck_string *", address)
    if s.begin == ffi.NULL:
        return "''" if utf8 else "b''"
    n = _addr(s.end) - _addr(s.begin)
    raw = bytes(ffi.buffer(s.begin, min(n, 4 * width)))
    text = raw.decode("utf-8", "replace") if utf8 else repr(raw)[2:-1]
    if len(text) > width - 2 or n > len(raw):
        text = text[:max(width - 3, 1)] + "…"
    return f"'{text}'" if utf8 else f"b'{text}'"


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
                                  _string_preview(data, tid == _STRING, 16)))
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
    cells = [Cell(addr, index_of.get(addr), _item_text(item, addr, item_am))
             for addr in range(start, start + drawn * itemsize, itemsize)]
    return cells, total - drawn


# ---- memblocks ----------------------------------------------------------------------

def memblock_layout(mb) -> BlockFacts:
    """Facts of a memblock (a :class:`ckernels.MemBlock`, a ``ck_memblock *`` or
    an address)."""
    if hasattr(mb, "ptr"):
        mb = mb.ptr
    return block_facts(mb if not isinstance(mb, int) else ffi.cast("ck_memblock *", mb))


# ---- text ------------------------------------------------------------------------------

def _flags_text(f: ArrayFacts) -> str:
    return f"{f.flags} ({'|'.join(f.flag_names) or 'none'})"


def _type_text(f: ArrayFacts, width: int | None = None) -> str:
    t = f.type if width is None else _short(f.type, width)
    if f.type_builtin:   # builtin scalars are encoded in the pointer value
        return f"builtin id {f.type_pointer} '{t}'"
    return f"{hex_addr(f.type_pointer)} '{t}'"


#: pictures cut type strings longer than this (the full type is the SVG's
#: title, shown on hover, and in the text view)
_TYPE_WIDTH = 36


def _short(s: str, width: int = _TYPE_WIDTH) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"


def _data_ref_text(f: ArrayFacts) -> str:
    if f.data_ref is None:
        return "NULL (data embedded in this block)"
    r = f.data_ref
    return f"{hex_addr(r.address)} ({r.kind}, refcount {r.refcount})"


def _arena_lines(b: BlockFacts, indent: str = "  ") -> list:
    if b.kind_id not in _ARENA_KINDS:   # e.g. an external block owning an imported Arrow array
        return [f"{indent}{b.kind} block {hex_addr(b.address)}: refcount {b.refcount}, "
                f"foreign memory it keeps alive (no chunks)"]
    lines = [f"{indent}{b.kind} arena {hex_addr(b.address)}: refcount {b.refcount}, "
             f"used {b.used} of {b.capacity} bytes in {len(b.chunks)} chunk(s), "
             f"{b.allocations} allocation(s){', finalized' if b.finalized else ''}"]
    for i, c in enumerate(b.chunks):
        lines.append(f"{indent}  chunk {i}: {hex_addr(c.begin)} used {c.used} / {c.capacity}"
                     f"{' (page mapping)' if c.mapped else ''}")
    return lines


def _element_where(e: ElementRef, arenas) -> str:
    for b in arenas:
        if b.address == e.arena:
            i = b.chunk_of(e.begin)
            if i is not None:
                c = b.chunks[i]
                return (f"arena {hex_addr(b.address)} chunk {i} "
                        f"+{e.begin - c.begin}..{e.end - c.begin}")
    if e.begin and any(b.address == e.arena and b.kind_id not in _ARENA_KINDS for b in arenas):
        return "foreign memory of the external block"
    return "no arena memory" if not e.begin else "outside the arena's chunks"


def array_text(a) -> str:
    """The array picture as text."""
    f = a if isinstance(a, ArrayFacts) else array_layout(a)
    lines = [f"ckernels.Array at {hex_addr(f.address)}: '{f.type}'",
             "preamble (ck_array_preamble, 40 bytes)",
             f"  +0   refcount  {f.refcount}",
             f"  +4   kind      {lib.CK_MEMBLOCK_ARRAY} (array)",
             f"  +8   type      {_type_text(f)}",
             f"  +16  data      {hex_addr(f.data)}",
             f"  +24  flags     {_flags_text(f)}",
             f"  +32  data_ref  {_data_ref_text(f)}",
             f"arrmeta ({f.arrmeta_size} bytes)"]
    for e in f.arrmeta:
        lines.append(f"  {e.label}")
        lines.extend(f"    +{off:<4d} {name:10s} {value}" for off, name, value, _ in e.fields)
    lines.append(f"data {hex_addr(f.data)}: {len(f.cells) + f.more_cells} item(s) of "
                 f"'{f.item_type}' ({f.itemsize} bytes) {f.region_label}; the view covers "
                 f"[{f.view_lo:+d}, {f.view_hi:+d}) bytes from data")
    shown = [f"{c.index}={c.value}" if c.index else f"({c.value})" for c in f.cells]
    if shown:
        lines.append("  " + " ".join(shown) + (f" ... {f.more_cells} more" if f.more_cells
                                               else ""))
    if f.arenas:
        lines.append("arenas")
        for b in f.arenas:
            lines.extend(_arena_lines(b, "  "))
    if f.elements:
        lines.append("elements pointing into arenas")
        for e in f.elements:
            pair = "begin, end" if e.kind != "var" else "begin, end of the elements"
            lines.append(f"  {e.path} {e.kind} {{{pair}}} = {{{hex_addr(e.begin)}, "
                         f"{hex_addr(e.end)}}} -> {_element_where(e, f.arenas)}  {e.preview}")
        if f.more_elements:
            lines.append(f"  ... at least {f.more_elements} more")
    return "\n".join(lines)


def memblock_text(mb) -> str:
    b = mb if isinstance(mb, BlockFacts) else memblock_layout(mb)
    if b.kind_id == lib.CK_MEMBLOCK_ARRAY:
        return array_text(b.address)
    head = f"ckernels.MemBlock at {hex_addr(b.address)}: kind {b.kind}, refcount {b.refcount}"
    if b.kind_id in _ARENA_KINDS:
        return "\n".join([head] + _arena_lines(b))
    if b.data is not None:
        return f"{head}\n  data {hex_addr(b.data)}, {b.size} bytes (in the same allocation)"
    return head


# ---- pictures ---------------------------------------------------------------------------

def _preamble_box(f: ArrayFacts) -> tuple:
    """The array block: preamble rows, then arrmeta entries.  Returns the box
    and the row indexes of data, data_ref and each blockref."""
    rows = [(None, f"preamble (ck_array_preamble)", None),
            ("+0", "refcount", str(f.refcount)),
            ("+4", "kind", "array"),
            ("+8", "type", _type_text(f, _TYPE_WIDTH)),
            ("+16", "data", hex_addr(f.data)),
            ("+24", "flags", _flags_text(f)),
            ("+32", "data_ref", _data_ref_text(f))]
    data_row, ref_row = 4, 6
    blockref_rows = []
    if f.arrmeta:
        rows.append((None, f"arrmeta ({f.arrmeta_size} bytes)", None))
    for e in f.arrmeta:
        rows.append((None, "  " + e.label, None))
        for off, name, value, target in e.fields:
            if target:
                blockref_rows.append((len(rows), target))
            rows.append((f"+{off}", name, value))
    box = FieldBox(f"array memblock {hex_addr(f.address)}", rows, "array",
                   subtitle=f"type '{_short(f.type)}'")
    return box, data_row, ref_row, blockref_rows


class _ChunkBar:
    """Where the bytes of one chunk are drawn, to scale: the bar's width is the
    chunk's capacity relative to the arena's largest chunk (at least
    ``_BAR_MIN`` pixels), the used part its used bytes, every address at its
    offset (spans are drawn at least 2 pixels wide)."""

    def __init__(self, ch: ChunkFacts, x: float, y: float, width: float):
        self.ch, self.x, self.y, self.width = ch, x, y, width
        frac = ch.used / ch.capacity if ch.capacity else 0.0
        self.used_w = width * frac

    def x_of(self, address: int) -> float:
        off = address - self.ch.begin
        cap = self.ch.capacity
        return self.x + (self.width * min(max(off, 0), cap) / cap if cap else 0.0)

    def draw(self, c: Canvas, index: int) -> None:
        ch = self.ch
        c.text(self.x, self.y - 4, f"chunk {index} at {hex_addr(ch.begin)}: {ch.used} of "
                                   f"{ch.capacity} bytes used"
                                   f"{' (page mapping)' if ch.mapped else ''}",
               color=MUTED, size=11, cls="chunk-label")
        fill, stroke = COLORS["free"]
        c.rect(self.x, self.y, self.width, _BAR_H, fill=fill, stroke=stroke, cls="chunk")
        if ch.used:
            uf, us = COLORS["used"]
            c.rect(self.x, self.y, max(self.used_w, 1), _BAR_H, fill=uf, stroke=us,
                   cls="chunk-used")


_BAR_W = 320
_BAR_MIN = 24             # the narrowest chunk bar (a tiny chunk beside a huge one)
_BAR_H = 16
_CHUNK_H = _BAR_H + 34    # label, bar, span labels


def _arena_block(c: Canvas, b: BlockFacts, x: float, y: float, spans=()):
    """An arena: its header fields and statistics, then one bar per chunk
    with the ``spans`` ``(label, begin, end)`` that point into it.  Returns
    (box, {chunk index: _ChunkBar}, bottom)."""
    rows = [("+0", "refcount", str(b.refcount)), ("+4", "kind", b.kind),
            ("", "used", f"{b.used} of {b.capacity} bytes, {len(b.chunks)} chunk(s)"),
            ("", "allocations", f"{b.allocations}{', finalized' if b.finalized else ''}")]
    title = f"{b.kind} arena {hex_addr(b.address)}"
    if b.kind_id not in _ARENA_KINDS:   # an external block (an imported Arrow array)
        rows = rows[:2] + [("", "holds", "foreign memory (no chunks)")]
        title = f"{b.kind} block {hex_addr(b.address)}"
    box = FieldBox(title, rows, "arena")
    box.width = max(box.width, _BAR_W + 2 * PAD)
    box.height += len(b.chunks) * _CHUNK_H + 4
    box.place(x, y).draw(c, "box arena")
    bars = {}
    top = box.y + box.head_h + ROW_H * len(rows) + 18
    biggest = max((ch.capacity for ch in b.chunks), default=0) or 1
    for i, ch in enumerate(b.chunks):
        full = box.width - 2 * PAD
        bar = _ChunkBar(ch, x + PAD, top, max(full * ch.capacity / biggest, _BAR_MIN))
        bar.draw(c, i)
        bars[i] = bar
        top += _CHUNK_H
    last_end = {}
    for label, begin, end in spans:
        i = b.chunk_of(begin)
        if i is None:
            continue
        bar = bars[i]
        x0, x1 = bar.x_of(begin), bar.x_of(end)
        c.rect(x0, bar.y + 3, max(x1 - x0, 2), _BAR_H - 6, fill=COLORS["arena"][1],
               stroke="white", cls="element-span")
        lx = max(x0, last_end.get(i, -1e9) + 3)
        if lx + text_width(label, 9) <= bar.x + bar.width + 30:
            c.text(lx, bar.y + _BAR_H + 11, label, size=9, color=COLORS["arena"][1],
                   cls="span-label")
            last_end[i] = lx + text_width(label, 9)
    return box, bars, box.bottom


def array_svg(a) -> str:
    """The memory picture of an array, as SVG text."""
    f = a if isinstance(a, ArrayFacts) else array_layout(a)
    c = Canvas(f"ckernels.Array {f.type}")
    box, data_row, ref_row, blockref_rows = _preamble_box(f)
    box.place(8, 8).draw(c, "box array")

    # the data block: its items in memory order; the view's items highlighted
    x2 = box.right + 70
    cell_w = max([text_width(cell.value) for cell in f.cells] +
                 [text_width(cell.index or "", 10) for cell in f.cells] + [5 * 7.3]) + 10
    per_row = max(1, min(len(f.cells), int(560 // cell_w) or 1))
    title = (f"data: {len(f.cells) + f.more_cells} × '{_short(f.item_type, 28)}' "
             f"({f.itemsize} B each)")
    sub = f.region_label
    dw = max(per_row * cell_w, text_width(title) + 4, text_width(sub, 11) + 4) + 2 * PAD
    nrows = (len(f.cells) + per_row - 1) // per_row
    pitch = 2 * ROW_H + 6
    cells_top = 8 + ROW_H + 16 + 22
    dh = ROW_H + 38 + nrows * pitch - ROW_H + (ROW_H if f.more_cells else 0) + PAD
    role = "data" if f.data_ref is None else "owner"
    fill, stroke = COLORS[role]
    g = c.group("box data-block")
    c.rect(x2, 8, dw, dh, fill=fill, stroke=stroke, rx=3, parent=g)
    c.text(x2 + PAD, 8 + ROW_H - 4, title, weight="bold", parent=g, cls="title")
    c.text(x2 + PAD, 8 + ROW_H + 10, sub, color=MUTED, size=11, parent=g, cls="subtitle")
    cell_pos = {}
    for i, cell in enumerate(f.cells):
        r, k = divmod(i, per_row)
        cx = x2 + PAD + k * cell_w
        cy = cells_top + r * pitch
        inview = cell.index is not None
        hf, hs = COLORS["highlight"] if inview else COLORS["free"]
        c.text(cx + cell_w / 2 + 4, cy - 4, cell.index or "", anchor="middle",
               color=MUTED, size=10, parent=g, cls="index")
        c.rect(cx, cy, cell_w, ROW_H, fill=hf, stroke=hs, parent=g, cls="cell")
        c.text(cx + cell_w / 2, cy + 13, cell.value, anchor="middle", parent=g,
               cls="cell-value",
               title=f"{hex_addr(cell.address)}" + (f" = a{cell.index}" if inview else ""))
        cell_pos[cell.address] = (cx, cy)
    if f.more_cells:
        c.text(x2 + PAD, cells_top + nrows * pitch + 8,
               f"… {f.more_cells} more item(s)", color=MUTED, parent=g)

    # data pointer and data_ref arrows
    target = cell_pos.get(f.data)
    gx = box.right + 35
    if target is not None:
        tx, ty = target
        c.dot(box.right, box.row_y(data_row), COLORS["data"][1])
        c.line([(box.right, box.row_y(data_row)), (gx, box.row_y(data_row)), (gx, ty - 15),
                (tx + 5, ty - 15), (tx + 5, ty)],
               color=COLORS["data"][1], marker="arrow-data", cls="arrow data")
    if f.data_ref is not None:
        c.dot(box.right, box.row_y(ref_row), COLORS["owner"][1])
        c.line([(box.right, box.row_y(ref_row)), (gx - 12, box.row_y(ref_row)),
                (gx - 12, 8 + ROW_H / 2), (x2, 8 + ROW_H / 2)],
               color=COLORS["owner"][1], marker="arrow-owner", cls="arrow data_ref")

    # arenas below the data block, with the spans elements point at
    y = 8 + dh + 30
    arena_pos = {}
    for b in f.arenas:
        spans = [(e.path, e.begin, e.end) for e in f.elements if e.arena == b.address]
        ab, bars, bottom = _arena_block(c, b, x2, y, spans)
        arena_pos[b.address] = (ab, bars, b)
        y = bottom + 24
    for k, (row, target) in enumerate(blockref_rows):
        if target in arena_pos:
            ab = arena_pos[target][0]
            lx = box.right + 14 + 5 * (k % 4)
            c.dot(box.right, box.row_y(row), COLORS["arena"][1])
            c.line([(box.right, box.row_y(row)), (lx, box.row_y(row)),
                    (lx, ab.y + ROW_H / 2), (ab.x, ab.y + ROW_H / 2)],
                   color=COLORS["arena"][1], marker="arrow-arena", cls="arrow blockref")
    # arrows from the {begin, end} slots in the data block to where they point
    rail = max([x2 + dw] + [e[0].right for e in arena_pos.values()]) + 16
    drawn = 0
    def holder(slot):
        for addr, pos in cell_pos.items():
            if addr <= slot < addr + f.itemsize:
                return pos
        return None
    for e in f.elements:
        src = holder(e.slot)
        entry = arena_pos.get(e.arena)
        if src is None or entry is None or drawn >= 8:
            continue
        ab, bars, b = entry
        i = b.chunk_of(e.begin)
        if i is None:
            continue
        bar = bars[i]
        sx, sy = src
        j = drawn
        drawn += 1
        x0 = bar.x_of(e.begin) + 1
        chan = 8 + dh + 6 + 3 * j
        below = bar.y + _BAR_H + 16 + 3 * j
        c.line([(sx + cell_w / 2, sy + ROW_H), (sx + cell_w / 2, chan),
                (rail + 6 * j, chan), (rail + 6 * j, below), (x0, below),
                (x0, bar.y + _BAR_H)],
               color=COLORS["arena"][1], marker="arrow-arena", dash="3 2", width=1,
               cls="arrow element")
    # the element table: {begin, end} as numbers, where they point
    if f.elements:
        ey = max(y, box.bottom + 30)
        c.text(8, ey, "elements pointing into arenas ({begin, end}):", weight="bold",
               cls="elements-title")
        for e in f.elements:
            ey += ROW_H
            c.text(8, ey, f"{e.path:8s} {e.kind:6s} {{{hex_addr(e.begin)}, {hex_addr(e.end)}}}"
                          f" -> {_element_where(e, f.arenas)}  {e.preview}", cls="element")
        if f.more_elements:
            ey += ROW_H
            c.text(8, ey, f"… at least {f.more_elements} more", color=MUTED)
    return c.to_string()


def memblock_svg(mb) -> str:
    """A memblock picture: arenas with their chunks, fixed-size blocks with
    their data, external blocks; array blocks as arrays."""
    b = mb if isinstance(mb, BlockFacts) else memblock_layout(mb)
    if b.kind_id == lib.CK_MEMBLOCK_ARRAY:
        return array_svg(b.address)
    c = Canvas(f"ckernels.MemBlock {b.kind}")
    if b.kind_id in _ARENA_KINDS:
        _arena_block(c, b, 8, 8)
    else:
        rows = [("+0", "refcount", str(b.refcount)), ("+4", "kind", b.kind)]
        if b.data is not None:
            rows.append(("", "data", f"{hex_addr(b.data)} ({b.size} bytes)"))
        FieldBox(f"{b.kind} memblock {hex_addr(b.address)}", rows, "owner").place(8, 8).draw(c)
    return c.to_string()


__all__ = ["ArrayFacts", "BlockFacts", "ChunkFacts", "MetaEntry", "ElementRef", "Cell",
           "array_layout", "memblock_layout", "block_facts", "array_text", "array_svg",
           "memblock_text", "memblock_svg", "type_str", "MAX_ELEMENTS", "MAX_CELLS"]
