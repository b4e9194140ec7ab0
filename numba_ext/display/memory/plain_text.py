"""The text views of memory pictures: :func:`array_text`,
:func:`memblock_text` (what the pictures show, as lines)."""

from __future__ import annotations

from ..._native import lib
from .._svg import hex_addr
from .facts import (ARENA_KINDS, ArrayFacts, BlockFacts, ElementRef, array_layout,
                    memblock_layout)


# ---- text ------------------------------------------------------------------------------

def flags_text(f: ArrayFacts) -> str:
    return f"{f.flags} ({'|'.join(f.flag_names) or 'none'})"


def type_text(f: ArrayFacts, width: int | None = None) -> str:
    t = f.type if width is None else short(f.type, width)
    if f.type_builtin:   # builtin scalars are encoded in the pointer value
        return f"builtin id {f.type_pointer} '{t}'"
    return f"{hex_addr(f.type_pointer)} '{t}'"


#: pictures cut type strings longer than this (the full type is the SVG's
#: title, shown on hover, and in the text view)
TYPE_WIDTH = 36


def short(s: str, width: int = TYPE_WIDTH) -> str:
    return s if len(s) <= width else s[:width - 1] + "…"


def data_ref_text(f: ArrayFacts) -> str:
    if f.data_ref is None:
        return "NULL (data embedded in this block)"
    r = f.data_ref
    return f"{hex_addr(r.address)} ({r.kind}, refcount {r.refcount})"


def _arena_lines(b: BlockFacts, indent: str = "  ") -> list:
    if b.kind_id not in ARENA_KINDS:   # e.g. an external block owning an imported Arrow array
        return [f"{indent}{b.kind} block {hex_addr(b.address)}: refcount {b.refcount}, "
                f"{b.holds or 'foreign memory'} (no chunks)"]
    lines = [f"{indent}{b.kind} arena {hex_addr(b.address)}: refcount {b.refcount}, "
             f"used {b.used} of {b.capacity} bytes in {len(b.chunks)} chunk(s), "
             f"{b.allocations} allocation(s){', finalized' if b.finalized else ''}"]
    for i, c in enumerate(b.chunks):
        lines.append(f"{indent}  chunk {i}: {hex_addr(c.begin)} used {c.used} / {c.capacity}"
                     f"{' (page mapping)' if c.mapped else ''}")
    return lines


def element_where(e: ElementRef, arenas) -> str:
    for b in arenas:
        if b.address == e.arena:
            i = b.chunk_of(e.begin)
            if i is not None:
                c = b.chunks[i]
                return (f"arena {hex_addr(b.address)} chunk {i} "
                        f"+{e.begin - c.begin}..{e.end - c.begin}")
    if e.begin and any(b.address == e.arena and b.kind_id not in ARENA_KINDS for b in arenas):
        return "foreign memory of the external block"
    return "no arena memory" if not e.begin else "outside the arena's chunks"


def array_text(a) -> str:
    """The array picture as text."""
    f = a if isinstance(a, ArrayFacts) else array_layout(a)
    lines = [f"ckernels.Array at {hex_addr(f.address)}: '{f.type}'",
             "preamble (ck_array_preamble, 40 bytes)",
             f"  +0   refcount  {f.refcount}",
             f"  +4   kind      {lib.CK_MEMBLOCK_ARRAY} (array)",
             f"  +8   type      {type_text(f)}",
             f"  +16  data      {hex_addr(f.data)}",
             f"  +24  flags     {flags_text(f)}",
             f"  +32  data_ref  {data_ref_text(f)}",
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
                         f"{hex_addr(e.end)}}} -> {element_where(e, f.arenas)}  {e.preview}")
        if f.more_elements:
            lines.append(f"  ... at least {f.more_elements} more")
    return "\n".join(lines)


def memblock_text(mb) -> str:
    b = mb if isinstance(mb, BlockFacts) else memblock_layout(mb)
    if b.kind_id == lib.CK_MEMBLOCK_ARRAY:
        return array_text(b.address)
    head = f"ckernels.MemBlock at {hex_addr(b.address)}: kind {b.kind}, refcount {b.refcount}"
    if b.kind_id in ARENA_KINDS:
        return "\n".join([head] + _arena_lines(b))
    if b.data is not None:
        return f"{head}\n  data {hex_addr(b.data)}, {b.size} bytes (in the same allocation)"
    if b.holds:
        return f"{head}\n  holds {b.holds}"
    return head
