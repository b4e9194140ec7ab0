"""The pictures of arrays and memory blocks: :func:`array_svg`,
:func:`memblock_svg` (SVG drawn from the facts)."""

from __future__ import annotations

import textwrap

from .._svg import COLORS, MUTED, PAD, ROW_H, Canvas, FieldBox, hex_addr, text_width
from ..._native import lib
from .facts import ARENA_KINDS, ArrayFacts, BlockFacts, ChunkFacts, array_layout, memblock_layout
from .plain_text import TYPE_WIDTH, data_ref_text, element_where, flags_text, short, type_text


# ---- pictures ---------------------------------------------------------------------------

def _preamble_box(f: ArrayFacts) -> tuple:
    """The array block: preamble rows, then arrmeta entries.  Returns the box
    and the row indexes of data, data_ref and each blockref."""
    rows = [(None, f"preamble (ck_array_preamble)", None),
            ("+0", "refcount", str(f.refcount)),
            ("+4", "kind", "array"),
            ("+8", "type", type_text(f, TYPE_WIDTH) if len(f.type) <= TYPE_WIDTH
             else f"{hex_addr(f.type_pointer)} (the type above)"),
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
    # the whole type, wrapped at its commas (a struct's fields: nothing cut)
    lines = textwrap.wrap(f"type '{f.type}'", _TYPE_LINE, subsequent_indent="  ",
                          break_long_words=True, break_on_hyphens=False)
    box = FieldBox(f"array memblock {hex_addr(f.address)}", rows, "array",
                   subtitle="\n".join(lines))
    return box, data_row, ref_row, blockref_rows


#: columns of a line of the wrapped type under the array block's title
_TYPE_LINE = 56


class _ChunkBar:
    """Where the bytes of one chunk are drawn.  A chunk at least a quarter used
    is drawn to the scale of its capacity (its width relative to the arena's
    largest chunk, at least ``_BAR_MIN`` pixels).  A chunk used less than that
    (5 bytes of a 4096-byte chunk) is drawn to the scale of what is used: the
    used bytes span the bar but for a ``_TAIL_W`` tail that stands for the free
    rest, labelled with its size, so small strings are not slivers.  Every
    address is drawn at its offset; spans are at least 2 pixels wide."""

    def __init__(self, ch: ChunkFacts, x: float, y: float, width: float):
        self.ch, self.x, self.y, self.width = ch, x, y, width
        self.zoomed = 0 < ch.used and 4 * ch.used < ch.capacity
        if self.zoomed:
            self.used_w = width - _TAIL_W
        else:
            self.used_w = width * (ch.used / ch.capacity if ch.capacity else 0.0)

    def x_of(self, address: int) -> float:
        off = address - self.ch.begin
        cap, used = self.ch.capacity, self.ch.used
        off = min(max(off, 0), cap)
        if not cap:
            return self.x
        if not self.zoomed:
            return self.x + self.width * off / cap
        if off <= used:
            return self.x + self.used_w * off / used
        return self.x + self.used_w + _TAIL_W * (off - used) / (cap - used)

    @property
    def scale_text(self) -> str:
        ch = self.ch
        if self.zoomed:
            return (f"bar: the {ch.used} used bytes to scale, "
                    f"then the {ch.capacity - ch.used} free")
        return f"bar: all {ch.capacity} bytes to scale"

    def draw(self, c: Canvas, index: int) -> None:
        ch = self.ch
        c.text(self.x, self.y - 4, f"chunk {index} at {hex_addr(ch.begin)}: {ch.used} of "
                                   f"{ch.capacity} bytes used"
                                   f"{' (page mapping)' if ch.mapped else ''}",
               color=MUTED, size=11, cls="chunk-label",
               title=self.scale_text)
        fill, stroke = COLORS["free"]
        c.rect(self.x, self.y, self.width, _BAR_H, fill=fill, stroke=stroke, cls="chunk")
        if ch.used:
            uf, us = COLORS["used"]
            c.rect(self.x, self.y, max(self.used_w, 1), _BAR_H, fill=uf, stroke=us,
                   cls="chunk-used")
        if self.zoomed:   # the free rest, not to scale: a broken-off tail with its size
            tx = self.x + self.used_w
            c.line([(tx + 4, self.y - 2), (tx - 2, self.y + _BAR_H + 2)], color=MUTED,
                   marker=None, width=1, cls="scale-break")
            c.text(tx + _TAIL_W / 2 + 2, self.y + 12, f"{ch.capacity - ch.used} free",
                   anchor="middle", color=MUTED, size=9, cls="chunk-free")
        c.text(self.x + self.width, self.y + _BAR_H + 22, self.scale_text, anchor="end",
               color=MUTED, size=9, cls="chunk-scale")


_BAR_W = 320
_BAR_MIN = 24             # the narrowest chunk bar (a tiny chunk beside a huge one)
_BAR_H = 16
_TAIL_W = 64              # the free tail of a chunk drawn to the scale of its used bytes
_CHUNK_H = _BAR_H + 46    # label, bar, span labels, scale note (and the arrow lanes)
_LANES_TOP = 28           # the first arrow lane, under the bar's bottom
_ARROW_GAP = 4            # between the arrow lanes under a bar
_MAX_ARROWS = 8


def _arena_block(c: Canvas, b: BlockFacts, x: float, y: float, spans=(), arrows=None):
    """An arena: its header fields and statistics, then one bar per chunk
    with the ``spans`` ``(label, begin, end)`` that point into it.  ``arrows``:
    {chunk index: number of element arrows that end at it} (room is kept
    under the bar for each).  Returns (box, {chunk index: _ChunkBar}, bottom)."""
    arrows = arrows or {}
    rows = [("+0", "refcount", str(b.refcount)), ("+4", "kind", b.kind),
            ("", "used", f"{b.used} of {b.capacity} bytes, {len(b.chunks)} chunk(s)"),
            ("", "allocations", f"{b.allocations}{', finalized' if b.finalized else ''}")]
    title = f"{b.kind} arena {hex_addr(b.address)}"
    if b.kind_id not in ARENA_KINDS:   # an external block (an imported Arrow array)
        rows = rows[:2] + [("", name, value) for name, value in b.holds_rows]
        title = f"{b.kind} block {hex_addr(b.address)}"
    box = FieldBox(title, rows, "arena")
    box.width = max(box.width, _BAR_W + 2 * PAD)
    heights = [_CHUNK_H + _ARROW_GAP * arrows.get(i, 0) for i in range(len(b.chunks))]
    box.height += sum(heights) + 4
    box.place(x, y).draw(c, "box arena")
    bars = {}
    top = box.y + box.head_h + ROW_H * len(rows) + 18
    biggest = max((ch.capacity for ch in b.chunks), default=0) or 1
    for i, ch in enumerate(b.chunks):
        full = box.width - 2 * PAD
        zoom = 0 < ch.used and 4 * ch.used < ch.capacity
        bar = _ChunkBar(ch, x + PAD, top,
                        full if zoom else max(full * ch.capacity / biggest, _BAR_MIN))
        bar.draw(c, i)
        bars[i] = bar
        top += heights[i]
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
        if lx + text_width(label, 9) <= bar.x + bar.width:
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

    # the data block: its items in memory order; the view's items highlighted.
    # A struct item is a cell of rows, one per leaf field, so no value is cut.
    x2 = box.right + 70
    name_w = max([text_width(n) for cell in f.cells for n, _ in cell.lines] + [0])
    name_w = name_w + 8 if name_w else 0
    cell_w = max([text_width(cell.value) for cell in f.cells if not cell.lines] +
                 [name_w + text_width(v) for cell in f.cells for _, v in cell.lines] +
                 [text_width(cell.index or "", 10) for cell in f.cells] + [5 * 7.3]) + 10
    cell_h = ROW_H * max([len(cell.lines) for cell in f.cells] + [1])
    per_row = max(1, min(len(f.cells), int(560 // cell_w) or 1))
    item = (f"'{f.item_type}'" if len(f.item_type) <= 28 else
            "struct" if f.item_type.startswith("{") else f"'{short(f.item_type, 28)}'")
    title = f"data: {len(f.cells) + f.more_cells} × {item} ({f.itemsize} B each)"
    # the subtitle: where the data lives, and for foreign memory what it is
    subs = [f.region_label] + [f"{name}: {value}" for name, value in
                               (f.data_ref.holds_rows if f.data_ref is not None else [])]
    dw = max(per_row * cell_w, text_width(title) + 4,
             *(text_width(sub, 11) + 4 for sub in subs)) + 2 * PAD
    nrows = (len(f.cells) + per_row - 1) // per_row
    pitch = cell_h + ROW_H + 6
    cells_top = 8 + ROW_H + 16 + 22 + 14 * (len(subs) - 1)
    dh = (ROW_H + 38 + 14 * (len(subs) - 1) + nrows * pitch - ROW_H
          + (ROW_H if f.more_cells else 0) + PAD)
    role = "data" if f.data_ref is None else "owner"
    fill, stroke = COLORS[role]
    under = c.group("under")   # drawn first: what the data block's cells may cover
    g = c.group("box data-block")
    c.rect(x2, 8, dw, dh, fill=fill, stroke=stroke, rx=3, parent=g)
    c.text(x2 + PAD, 8 + ROW_H - 4, title, weight="bold", parent=g, cls="title")
    for k, sub in enumerate(subs):
        c.text(x2 + PAD, 8 + ROW_H + 10 + 14 * k, sub, color=MUTED, size=11, parent=g,
               cls="subtitle")
    cell_pos = {}
    for i, cell in enumerate(f.cells):
        r, k = divmod(i, per_row)
        cx = x2 + PAD + k * cell_w
        cy = cells_top + r * pitch
        inview = cell.index is not None
        hf, hs = COLORS["highlight"] if inview else COLORS["free"]
        tip = f"{hex_addr(cell.address)}" + (f" = a{cell.index}" if inview else "")
        c.text(cx + cell_w / 2 + 4, cy - 4, cell.index or "", anchor="middle",
               color=MUTED, size=10, parent=g, cls="index")
        c.rect(cx, cy, cell_w, cell_h, fill=hf, stroke=hs, parent=g, cls="cell")
        if cell.lines:
            for j, (name, value) in enumerate(cell.lines):
                base = cy + 13 + j * ROW_H
                c.text(cx + 5, base, name, color=MUTED, parent=g, cls="cell-field")
                c.text(cx + 5 + name_w, base, value, parent=g, cls="cell-value",
                       title=f"{tip} .{name}")
        else:
            c.text(cx + cell_w / 2, cy + 13, cell.value, anchor="middle", parent=g,
                   cls="cell-value", title=tip)
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

    # which {begin, end} slots of the data block get an arrow to where they
    # point (at most _MAX_ARROWS), so each chunk keeps room for its arrows
    def holder(slot):
        for addr, pos in cell_pos.items():
            if addr <= slot < addr + f.itemsize:
                return pos
        return None
    by_address = {b.address: b for b in f.arenas}
    arrows, per_chunk = [], {}
    for e in f.elements:
        src, b = holder(e.slot), by_address.get(e.arena)
        i = None if b is None else b.chunk_of(e.begin)
        if src is None or i is None or len(arrows) >= _MAX_ARROWS:
            continue
        k = per_chunk.get((b.address, i), 0)
        per_chunk[(b.address, i)] = k + 1
        arrows.append((e, src, b.address, i, k))

    # arenas below the data block, with the spans elements point at
    y = 8 + dh + 30
    arena_pos = {}
    for b in f.arenas:
        spans = [(e.path, e.begin, e.end) for e in f.elements if e.arena == b.address]
        lanes = {i: n for (addr, i), n in per_chunk.items() if addr == b.address}
        ab, bars, bottom = _arena_block(c, b, x2, y, spans, lanes)
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
    # arrows from the {begin, end} slots to where they point: down from the
    # cell (under the cells below it), along a channel between the data block
    # and the arenas, down a rail right of the boxes, and back in along a lane
    # of the chunk's own (kept inside the arena box) to the byte it points at
    rail = max([x2 + dw] + [e[0].right for e in arena_pos.values()]) + 16
    color = COLORS["arena"][1]
    for j, (e, (sx, sy), address, i, k) in enumerate(arrows):
        bar = arena_pos[address][1][i]
        x0 = bar.x_of(e.begin) + 1
        chan = 8 + dh + 6 + 3 * j
        lane = bar.y + _BAR_H + _LANES_TOP + _ARROW_GAP * k
        mid = sx + cell_w / 2
        c.line([(mid, sy + cell_h), (mid, chan)], color=color, marker=None, dash="3 2",
               width=1, parent=under, cls="element-stem")
        c.line([(mid, chan), (rail + 6 * j, chan), (rail + 6 * j, lane), (x0, lane),
                (x0, bar.y + _BAR_H)],
               color=color, marker="arrow-arena", dash="3 2", width=1, cls="arrow element")
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
        rows += [("", name, value) for name, value in b.holds_rows]
        FieldBox(f"{b.kind} memblock {hex_addr(b.address)}", rows, "owner").place(8, 8).draw(c)
    return c.to_string()
