"""A small SVG canvas over :mod:`xml.etree.ElementTree` (so every picture is
well-formed XML and every text is escaped), with the drawing vocabulary the
pictures share: labelled boxes made of field rows, arrows, bars.

Coordinates are pixels; text is monospace, and widths are estimated from a
fixed advance per character (:data:`CHAR_W`), which is what lets the
layouts size boxes without a font engine.
"""

from __future__ import annotations

import unicodedata
import xml.etree.ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
#: the font stack of every picture and view: a Latin monospace font first, then
#: monospace CJK-capable fonts (Noto Sans Mono CJK, WenQuanYi Zen Hei Mono,
#: Source Han Mono, the macOS and Windows ones), so that a renderer that does
#: no per-glyph fallback of its own (rsvg, ImageMagick, some PDF converters)
#: still finds glyphs for Chinese, Japanese and Korean text instead of boxes
#: (unquoted names: valid CSS, so the same text goes in SVG attributes and in
#: HTML style attributes of either quoting)
FONT = ("DejaVu Sans Mono, Menlo, Consolas, Noto Sans Mono CJK SC, Noto Sans Mono CJK JP, "
        "Noto Sans CJK SC, WenQuanYi Zen Hei Mono, WenQuanYi Zen Hei, Source Han Mono, "
        "PingFang SC, Hiragino Sans, MS Gothic, Microsoft YaHei, monospace")
FONT_SIZE = 12
CHAR_W = 7.3          # advance of one character at FONT_SIZE (DejaVu Sans Mono: 0.602 em)
ROW_H = 18            # height of one field row
#: bold text is given this much more room: where a font has no bold face the
#: renderer emboldens the regular one, and its advance grows (FreeType: by
#: about em/24, 0.5 px a character at 12 px), which clipped long bold titles
BOLD_WIDEN = 1.1
PAD = 6

#: colours by role (light fills, dark strokes: readable on light and dark themes)
COLORS = {
    "array": ("#e8f0fb", "#3b6db3"),
    "arrmeta": ("#eef6ee", "#3f8a3f"),
    "data": ("#fff4e0", "#b7791f"),
    "owner": ("#fbeaea", "#b33b3b"),
    "arena": ("#f3ecfa", "#7b4bb3"),
    "kernel": ("#e8f0fb", "#3b6db3"),
    "leaf": ("#eef6ee", "#3f8a3f"),
    "undescribed": ("#f2f2f2", "#777777"),
    "free": ("#f7f7f7", "#9a9a9a"),
    "used": ("#fff4e0", "#b7791f"),
    "highlight": ("#ffe08a", "#b7791f"),
}
TEXT = "#222222"
MUTED = "#666666"


def columns(s: str) -> int:
    """Monospace columns of ``s``: East Asian wide and fullwidth characters
    (CJK) take two, combining marks none, everything else one."""
    n = 0
    for ch in s:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def text_width(s: str, size: float = FONT_SIZE) -> float:
    return columns(s) * CHAR_W * size / FONT_SIZE


class Canvas:
    """An SVG document being drawn; :meth:`to_string` gives the XML text."""

    def __init__(self, title: str = ""):
        self.root = ET.Element("svg", {"xmlns": SVG_NS, "version": "1.1",
                                       "font-family": FONT, "font-size": str(FONT_SIZE)})
        if title:
            ET.SubElement(self.root, "title").text = title
        defs = ET.SubElement(self.root, "defs")
        for name, color in (("arrow", "#444444"), ("arrow-data", COLORS["data"][1]),
                            ("arrow-owner", COLORS["owner"][1]),
                            ("arrow-arena", COLORS["arena"][1])):
            m = ET.SubElement(defs, "marker", {
                "id": name, "viewBox": "0 0 10 10", "refX": "9", "refY": "5",
                "markerWidth": "7", "markerHeight": "7", "orient": "auto-start-reverse"})
            ET.SubElement(m, "path", {"d": "M 0 0 L 10 5 L 0 10 z", "fill": color})
        self.width = 0.0
        self.height = 0.0

    def _grow(self, x: float, y: float) -> None:
        self.width = max(self.width, x)
        self.height = max(self.height, y)

    def group(self, cls: str = "", parent=None):
        attrs = {"class": cls} if cls else {}
        return ET.SubElement(self.root if parent is None else parent, "g", attrs)

    def rect(self, x, y, w, h, fill="none", stroke="#444444", parent=None, rx=0,
             dash=None, cls=""):
        attrs = {"x": _n(x), "y": _n(y), "width": _n(max(w, 0)), "height": _n(max(h, 0)),
                 "fill": fill, "stroke": stroke, "stroke-width": "1"}
        if rx:
            attrs["rx"] = _n(rx)
        if dash:
            attrs["stroke-dasharray"] = dash
        if cls:
            attrs["class"] = cls
        self._grow(x + w + 1, y + h + 1)
        return ET.SubElement(self.root if parent is None else parent, "rect", attrs)

    def text(self, x, y, s, *, anchor="start", color=TEXT, weight="normal", size=None,
             parent=None, cls="", title=None):
        """Text whose baseline is at ``y``."""
        attrs = {"x": _n(x), "y": _n(y), "fill": color}
        if anchor != "start":
            attrs["text-anchor"] = anchor
        if weight != "normal":
            attrs["font-weight"] = weight
        if size is not None:
            attrs["font-size"] = _n(size)
        if cls:
            attrs["class"] = cls
        if "  " in s or s != s.strip(" "):
            # runs of spaces and leading/trailing ones are drawn, not collapsed:
            # xml:space (SVG 1.1: rsvg, Inkscape, browsers) and white-space
            # (SVG 2, CSS), set on the text itself (browsers do not inherit
            # xml:space from the root of an SVG inlined in HTML)
            attrs[XML_SPACE] = "preserve"
            attrs["style"] = "white-space: pre"
        el = ET.SubElement(self.root if parent is None else parent, "text", attrs)
        el.text = s
        if title:
            ET.SubElement(el, "title").text = title
        w = text_width(s, size or FONT_SIZE) * (BOLD_WIDEN if weight == "bold" else 1)
        right = x + (w if anchor == "start" else w / 2 if anchor == "middle" else 0)
        self._grow(right + 2, y + 4)
        return el

    def line(self, points, color="#444444", marker="arrow", dash=None, parent=None,
             width=1.2, cls=""):
        """A polyline through ``points``, with an arrow head at the end."""
        d = "M " + " L ".join(f"{_n(x)} {_n(y)}" for x, y in points)
        attrs = {"d": d, "fill": "none", "stroke": color, "stroke-width": _n(width)}
        if marker:
            attrs["marker-end"] = f"url(#{marker})"
        if dash:
            attrs["stroke-dasharray"] = dash
        if cls:
            attrs["class"] = cls
        for x, y in points:
            self._grow(x + 4, y + 4)
        return ET.SubElement(self.root if parent is None else parent, "path", attrs)

    def dot(self, x, y, color="#444444", r=2.5, parent=None):
        self._grow(x + r, y + r)
        return ET.SubElement(self.root if parent is None else parent, "circle",
                             {"cx": _n(x), "cy": _n(y), "r": _n(r), "fill": color})

    def to_string(self, margin: float = 8) -> str:
        w, h = self.width + margin, self.height + margin
        self.root.set("width", _n(w))
        self.root.set("height", _n(h))
        self.root.set("viewBox", f"0 0 {_n(w)} {_n(h)}")
        # a picture wider than the page (a notebook's output area) shrinks to fit it
        # instead of running off its right edge; the viewBox keeps the proportions
        self.root.set("style", "max-width: 100%; height: auto")
        return ET.tostring(self.root, encoding="unicode")


def _n(v: float) -> str:
    """A coordinate: integers as such, else one decimal."""
    r = round(float(v), 1)
    return str(int(r)) if r == int(r) else str(r)


class FieldBox:
    """A box of rows ``(offset, name, value)`` under a title (and a subtitle of
    one or more lines, split at ``\\n``): how a C struct is
    drawn (the offset column is the byte offset of the field).  Rows can be
    group headers (``name`` only, drawn across the box).  Lay it out with
    :meth:`place`, then :meth:`draw`; :meth:`row_y` gives the middle of a row
    for arrows."""

    def __init__(self, title: str, rows, role: str = "array", subtitle: str = ""):
        self.title = title
        self.subtitle = subtitle
        self.rows = list(rows)   # (offset str | None, name, value str | None)
        self.role = role
        self.x = self.y = 0.0
        ow = max((columns(r[0] or "") for r in self.rows), default=0)
        nw = max((columns(r[1]) for r in self.rows if r[2] is not None), default=0)
        vw = max((columns(r[2]) for r in self.rows if r[2] is not None), default=0)
        hw = max((columns(r[1]) + 2 for r in self.rows if r[2] is None), default=0)
        self.off_w = ow * CHAR_W + (PAD if ow else 0)
        self.name_w = nw * CHAR_W + PAD
        body = self.off_w + self.name_w + vw * CHAR_W
        self.width = max(body, hw * CHAR_W, text_width(title) + 4,
                         *(text_width(line, 11) + 4 for line in subtitle.split("\n"))
                         ) + 2 * PAD
        self.head_h = ROW_H + (14 * len(subtitle.split("\n")) if subtitle else 0) + 2
        self.height = self.head_h + ROW_H * len(self.rows) + PAD / 2

    def place(self, x: float, y: float) -> "FieldBox":
        self.x, self.y = x, y
        return self

    def row_y(self, i: int) -> float:
        return self.y + self.head_h + ROW_H * i + ROW_H / 2

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    def draw(self, c: Canvas, cls: str = "") -> None:
        fill, stroke = COLORS[self.role]
        g = c.group(cls or f"box {self.role}")
        c.rect(self.x, self.y, self.width, self.height, fill=fill, stroke=stroke, rx=3,
               parent=g)
        c.text(self.x + PAD, self.y + ROW_H - 4, self.title, weight="bold", parent=g,
               cls="title")
        for k, line in enumerate(self.subtitle.split("\n") if self.subtitle else ()):
            c.text(self.x + PAD, self.y + ROW_H + 10 + 14 * k, line, color=MUTED, size=11,
                   parent=g, cls="subtitle")
        sep = self.y + self.head_h - 1
        c.line([(self.x, sep), (self.x + self.width, sep)], color=stroke, marker=None,
               width=0.8, parent=g)
        for i, (off, name, value) in enumerate(self.rows):
            base = self.row_y(i) + 4
            if value is None:   # a group header
                c.text(self.x + PAD, base, name, color=stroke, weight="bold", parent=g,
                       cls="group")
                continue
            if off:
                c.text(self.x + PAD, base, off, color=MUTED, parent=g, cls="offset")
            c.text(self.x + PAD + self.off_w, base, name, parent=g, cls="name")
            c.text(self.x + PAD + self.off_w + self.name_w, base, value, parent=g,
                   cls="value")


def hex_addr(v) -> str:
    return "NULL" if not v else f"0x{int(v):x}"


__all__ = ["Canvas", "FieldBox", "COLORS", "ROW_H", "PAD", "CHAR_W", "FONT", "columns",
           "text_width", "hex_addr"]
