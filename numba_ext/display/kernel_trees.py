"""Kernel trees drawn from the live builder.

The tree comes from the C library: ``ck_kernel_builder_nodes`` lists the
kernels (offset, parent, request, description), ``ck_kernel_fields`` decodes
each kernel's data (sizes, strides, child offsets, type names, the memblocks
it holds) and the dump (``ck_kernel_builder_dump``) names undescribed entry
points and destructors by their symbols.  :func:`kernel_tree` gives the facts,
:func:`kernel_svg` draws the builder's buffer and the tree (boxes with
decoded fields, arrows from each child offset to the child) and
:func:`kernel_text` prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._native import c_text_out, check, ffi, layout_row, lib
from ..errors import CKTypeError
from ._svg import COLORS, MUTED, PAD, ROW_H, Canvas, FieldBox, hex_addr, text_width
from .memory.facts import block_label, type_str

_KINDS = {lib.CK_KERNEL_FIELD_INT: "int", lib.CK_KERNEL_FIELD_CHILD: "child",
          lib.CK_KERNEL_FIELD_TYPE: "type", lib.CK_KERNEL_FIELD_MEMBLOCK: "memblock",
          lib.CK_KERNEL_FIELD_POINTER: "pointer", lib.CK_KERNEL_FIELD_TEXT: "text"}
_REQUESTS = {lib.CK_KERNEL_REQUEST_SINGLE: "single", lib.CK_KERNEL_REQUEST_STRIDED: "strided"}
_PREFIX = ffi.sizeof("ck_prefix")
_INLINE = layout_row("ck_kernel_builder", "inline_buf")[1]   # the inline buffer's bytes


@dataclass
class KernelField:
    """One decoded field (``ck_kernel_field``): ``offset`` is None for a fact
    the description implies; ``text`` is the value as displayed."""
    name: str
    index: int | None
    kind: str
    offset: int | None
    value: int | None
    text: str

    @property
    def label(self) -> str:
        return self.name if self.index is None else f"{self.name}[{self.index}]"


@dataclass
class KernelNode:
    """One kernel of the tree (``ck_kernel_node``) and its decoded fields."""
    index: int
    offset: int
    parent: int | None
    depth: int
    name: str
    request: str | None
    described: bool
    data_size: int
    function: int
    destructor: int
    destructor_name: str
    nchildren: int
    fields: list = field(default_factory=list)
    children: list = field(default_factory=list)

    @property
    def end(self) -> int:
        """Where the kernel's data ends: its described size, or past its last
        decoded field (the per-source arrays after a fixed struct)."""
        last = max((f.offset + 8 for f in self.fields if f.offset is not None), default=0)
        return self.offset + max(self.data_size, last, _PREFIX if self.function else 0)


@dataclass
class KernelTree:
    """A builder and the kernel tree in it."""
    capacity: int
    inline: bool
    heap: int
    nodes: list
    dump: str

    @property
    def request(self) -> str | None:
        return self.nodes[0].request if self.nodes else None

    @property
    def used(self) -> int:
        return max((n.end for n in self.nodes), default=0)


def _builder_ptr(obj):
    """The ``ck_kernel_builder *`` of a Kernel, KernelBuilder or the pointer itself."""
    if isinstance(obj, ffi.CData):
        return ffi.cast("ck_kernel_builder *", obj)
    builder = getattr(obj, "builder", obj)
    ptr = getattr(builder, "ptr", None)
    if ptr is None:
        raise CKTypeError(f"no kernel builder in {type(obj).__name__} (expected a "
                          "ckernels Kernel or KernelBuilder)")
    return ptr


def _dump(ckb) -> str:
    return c_text_out(lib.ck_kernel_builder_dump, ckb)


_DUMP_LINE = re.compile(r"^\s*@(\d+) (.*?) destructor=(\S+)$")


def _dump_names(dump: str) -> dict:
    """offset -> (name as the dump prints it, destructor as it prints it)."""
    out = {}
    for line in dump.splitlines():
        m = _DUMP_LINE.match(line)
        if m:
            name = re.sub(r" \[(single|strided)\]$", "", m.group(2))
            out[int(m.group(1))] = (name, m.group(3))
    return out


def _field_text(kind: str, f) -> str:
    if kind == "int":
        return str(f.value)
    if kind == "child":
        return f"+{f.value}" if f.value else "none"   # 0: no child there
    if kind == "type":
        return f"'{type_str(f.pointer)}'" if f.pointer != ffi.NULL else "none"
    if kind == "memblock":
        return block_label(int(ffi.cast("uintptr_t", f.pointer)))
    if kind == "pointer":
        return hex_addr(int(ffi.cast("uintptr_t", f.pointer)))
    return ffi.string(f.text).decode("utf-8", "replace") if f.text != ffi.NULL else ""


def kernel_fields(prefix) -> list:
    """The decoded fields of the kernel whose prefix is at ``prefix``."""
    p = ffi.cast("ck_prefix *", prefix)
    n = ffi.new("size_t *")
    check(lib.ck_kernel_fields(p, ffi.NULL, 0, n))
    buf = ffi.new("ck_kernel_field[]", max(n[0], 1))
    check(lib.ck_kernel_fields(p, buf, n[0], n))
    out = []
    for i in range(n[0]):
        f = buf[i]
        kind = _KINDS.get(f.kind, "?")
        out.append(KernelField(ffi.string(f.name).decode(), None if f.index < 0 else f.index,
                               kind, None if f.offset < 0 else int(f.offset),
                               int(f.value) if kind in ("int", "child") else None,
                               _field_text(kind, f)))
    return out


def kernel_tree(obj) -> KernelTree:
    """The facts of the kernel tree of a Kernel / KernelBuilder."""
    ckb = _builder_ptr(obj)
    n = ffi.new("size_t *")
    check(lib.ck_kernel_builder_nodes(ckb, ffi.NULL, 0, n))
    raw = ffi.new("ck_kernel_node[]", max(n[0], 1))
    check(lib.ck_kernel_builder_nodes(ckb, raw, n[0], n))
    dump = _dump(ckb)
    names = _dump_names(dump)
    data = lib.ck_kernel_builder_data(ckb)
    nodes = []
    for i in range(n[0]):
        r = raw[i]
        described = r.info != ffi.NULL
        fn = int(ffi.cast("uintptr_t", r.function))
        name, dname = names.get(int(r.offset), ("(empty prefix)" if not fn else
                                                hex_addr(fn), "none"))
        dname = dname.replace("(", " (", 1)   # "0x7f..(libckernel.so+0x9a8f0)"
        node = KernelNode(
            index=i, offset=int(r.offset), parent=None if r.parent < 0 else int(r.parent),
            depth=int(r.depth), name=ffi.string(r.info.name).decode() if described else name,
            request=_REQUESTS.get(r.request) if r.request >= 0 else None,
            described=described, data_size=int(r.info.data_size) if described else 0,
            function=fn, destructor=int(ffi.cast("uintptr_t", r.destructor)),
            destructor_name=dname, nchildren=int(r.nchildren),
            fields=kernel_fields(data + r.offset) if fn else [])
        nodes.append(node)
        if node.parent is not None:
            nodes[node.parent].children.append(i)
    return KernelTree(capacity=int(lib.ck_kernel_builder_capacity(ckb)),
                      inline=bool(lib.ck_kernel_builder_is_inline(ckb)),
                      heap=int(ffi.cast("uintptr_t", ckb.heap)), nodes=nodes, dump=dump)


# ---- text -----------------------------------------------------------------------------

def _builder_line(t: KernelTree) -> str:
    where = ("inline (no heap allocation)" if t.inline
             else f"on the heap at {hex_addr(t.heap)}")
    return (f"ck_kernel_builder: capacity {t.capacity} bytes {where}, "
            f"{t.used} bytes used, root request: {t.request or 'none'}")


def kernel_text(obj) -> str:
    t = obj if isinstance(obj, KernelTree) else kernel_tree(obj)
    lines = [_builder_line(t)]
    for nd in t.nodes:
        ind = "  " * (nd.depth + 1)
        req = f" [{nd.request}]" if nd.request else ""
        lines.append(f"{ind}@{nd.offset} {nd.name}{req}  bytes {nd.offset}..{nd.end}, "
                     f"destructor {nd.destructor_name}")
        if not nd.described and nd.function:
            lines.append(f"{ind}  (undescribed kernel: data and children unknown)")
        for f in nd.fields:
            at = "implied" if f.offset is None else f"+{f.offset}"
            lines.append(f"{ind}  {at:>8s} {f.label} = {f.text}")
        if nd.nchildren > len(nd.children):
            lines.append(f"{ind}  ({nd.nchildren - len(nd.children)} child(ren) not listed)")
    return "\n".join(lines)


# ---- picture ---------------------------------------------------------------------------

_INDENT = 40
_BAR_W = 640


def _node_box(nd: KernelNode) -> tuple:
    rows = [("+0", "function", f"{hex_addr(nd.function)} ({nd.request or '?'} entry)"),
            ("+8", "destructor", nd.destructor_name)]
    child_rows = {}
    for f in nd.fields:
        if f.kind == "child" and f.value:
            child_rows[nd.offset + f.value] = len(rows)
        rows.append(("" if f.offset is None else f"+{f.offset}",
                     f.label, f.text if f.offset is not None else f"{f.text} (implied)"))
    if not nd.described and nd.function:
        rows.append(("", "(undescribed)", "data and children unknown"))
    role = "undescribed" if not nd.described else ("leaf" if not nd.children else "kernel")
    req = f" [{nd.request}]" if nd.request else ""
    box = FieldBox(f"@{nd.offset} {nd.name}{req}", rows, role,
                   subtitle=f"bytes {nd.offset}..{nd.end} of the buffer"
                            + (f", {nd.nchildren} child(ren)" if nd.nchildren else ""))
    return box, child_rows


def kernel_svg(obj) -> str:
    """The kernel tree picture: the builder's buffer as a bar (each kernel's
    bytes, the inline part), then one box per kernel with its decoded fields,
    and arrows from each child offset to the child."""
    t = obj if isinstance(obj, KernelTree) else kernel_tree(obj)
    c = Canvas("ckernels kernel tree")
    # the title on two short lines (a long bold line was clipped where the
    # font is wider than the estimate)
    c.text(8, 20, f"ck_kernel_builder: {t.used} of {t.capacity} bytes used, root request: "
                  f"{t.request or 'none'}", weight="bold", cls="builder")
    c.text(8, 36, "buffer inline in the builder (no heap allocation)" if t.inline
           else f"buffer on the heap at {hex_addr(t.heap)}", color=MUTED, size=11,
           cls="builder-where")
    # the buffer
    top = 48
    scale = _BAR_W / max(t.capacity, 1)
    fill, stroke = COLORS["free"]
    c.rect(8, top, _BAR_W, 18, fill=fill, stroke=stroke, cls="buffer")
    palette = [COLORS["kernel"], COLORS["leaf"], COLORS["data"], COLORS["arena"]]
    for nd in t.nodes:
        if not nd.function:
            continue
        f, s = palette[nd.depth % len(palette)]
        x0 = 8 + nd.offset * scale
        w = max((min(nd.end, t.capacity) - nd.offset) * scale, 2)
        c.rect(x0, top, w, 18, fill=f, stroke=s, cls="buffer-kernel")
        if w > text_width(f"@{nd.offset}") + 4:
            c.text(x0 + 3, top + 13, f"@{nd.offset}", size=11, cls="buffer-label")
    if t.inline:
        c.text(8 + _BAR_W, top + 34, f"capacity {t.capacity}: the builder's inline buffer",
               anchor="end", color=MUTED, size=11)
    else:
        ix = 8 + _INLINE * scale
        c.line([(ix, top - 4), (ix, top + 22)], color=MUTED, marker=None, dash="3 2")
        c.text(8, top + 48, f"the inline buffer's {_INLINE} bytes end at the dashed line "
                            "(unused: the tree lives on the heap)", color=MUTED, size=11)
        c.text(8 + _BAR_W, top + 34, f"capacity {t.capacity}", anchor="end", color=MUTED,
               size=11)

    # the boxes, in pre-order, indented by depth
    y = top + (52 if t.inline else 66)
    boxes, child_rows = {}, {}
    for nd in t.nodes:
        box, rows = _node_box(nd)
        box.place(8 + nd.depth * _INDENT, y)
        boxes[nd.index], child_rows[nd.index] = box, rows
        y = box.bottom + 14
    rail = max((b.right for b in boxes.values()), default=0) + 16
    for nd in t.nodes:
        boxes[nd.index].draw(c, "box kernel")
    for nd in t.nodes:
        pb = boxes[nd.index]
        for k, ci in enumerate(nd.children):
            child = t.nodes[ci]
            cb = boxes[ci]
            row = child_rows[nd.index].get(child.offset)
            sy = pb.row_y(row) if row is not None else pb.bottom - 4
            rx = rail + 10 * nd.depth + 4 * k
            c.dot(pb.right, sy)
            c.line([(pb.right, sy), (rx, sy), (rx, cb.y + ROW_H / 2),
                    (cb.right, cb.y + ROW_H / 2)], cls="arrow child")
    return c.to_string()


__all__ = ["KernelTree", "KernelNode", "KernelField", "kernel_tree", "kernel_fields",
           "kernel_text", "kernel_svg"]
