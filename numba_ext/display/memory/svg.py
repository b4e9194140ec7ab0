"""The pictures of arrays and memory blocks: :func:`array_svg`,
:func:`memblock_svg` (SVG drawn from the facts)."""

from __future__ import annotations

from .._svg import COLORS, MUTED, PAD, ROW_H, Canvas, FieldBox, hex_addr, text_width
from ..._native import lib
from .facts import ARENA_KINDS, ArrayFacts, BlockFacts, ChunkFacts, array_layout, memblock_layout
from .text import TYPE_WIDTH, data_ref_text, element_where, flags_text, short, type_text


# ---- pictures ---------------------------------------------------------------------------

def _preamble_box(f: ArrayFacts) -> tuple:
    """The array block: preamble rows, then arrmeta entries.  Returns the box
    and the row indexes of data, data_ref and each blockref."""
    rows = [(None, f"preamble (ck_array_preamble)", None),
            ("+0", "refcount", str(f.refcount)),
            ("+4", "kind", "array"),
            ("+8", "type", type_text(f, TYPE_WIDTH)),
            ("+16", "data", hex_addr(f.data)),
            ("+24", "flags", flags_text(f)),
            ("+32", "data_ref", data_ref_text(f))]
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
                   subtitle=f"type '{short(f.type)}'")
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
    if b.kind_id not in ARENA_KINDS:   # an external block (an imported Arrow array)
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
    title = (f"data: {len(f.cells) + f.more_cells} × '{short(f.item_type, 28)}' "
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
                          f" -> {element_where(e, f.arenas)}  {e.preview}", cls="element")
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
    if b.kind_id in ARENA_KINDS:
        _arena_block(c, b, 8, 8)
    else:
        rows = [("+0", "refcount", str(b.refcount)), ("+4", "kind", b.kind)]
        if b.data is not None:
            rows.append(("", "data", f"{hex_addr(b.data)} ({b.size} bytes)"))
        FieldBox(f"{b.kind} memblock {hex_addr(b.address)}", rows, "owner").place(8, 8).draw(c)
    return c.to_string()
