"""The display layer (ckernels.display): pictures drawn from the live objects.

Every picture is parsed as XML and checked against what the C API says about
the same object (addresses, refcounts, sizes, strides, arena chunks, kernel
fields); kernel trees are checked against the library's dump; highlighted
source is checked to be whole; the timing helper runs on tiny sizes and plots
with the Agg canvas (no display)."""

import base64
import html as html_mod
import re
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import numpy as np
import pytest

import ckernels
from ckernels import display
from ckernels._native import ffi, lib
from ckernels.display import kernel_trees as dk
from ckernels.display import memory as dm
from ckernels.display import objects as do
from ckernels.kernels import (KernelBuilder, make_array_assignment_kernel,
                              make_assignment_kernel, make_op_kernel)

SVG = "{http://www.w3.org/2000/svg}"


def parse_svg(text):
    root = ET.fromstring(text)
    assert root.tag == SVG + "svg"
    assert float(root.get("width")) > 0 and float(root.get("height")) > 0
    return root


def svg_texts(root):
    return ["".join(t.itertext()) for t in root.iter(SVG + "text")]


def with_class(root, cls):
    return [e for e in root.iter() if cls in (e.get("class") or "").split()]


def h(addr):
    return f"0x{addr:x}"


# ---- arrays -----------------------------------------------------------------------

def test_array_picture_shows_the_preamble_arrmeta_and_data():
    a = ckernels.array([1, 2, 3, 4], type="strided * int32")
    f = dm.array_layout(a)
    raw = ffi.cast("ck_array_preamble *", a.address)
    assert f.address == a.address
    assert f.refcount == lib.ck_memblock_refcount(ffi.cast("ck_memblock *", raw)) == 1
    assert f.data == int(ffi.cast("uintptr_t", lib.ck_array_data(raw)))
    assert f.type_pointer == int(ffi.cast("uintptr_t", raw.type)) and f.type == str(a.type)
    assert f.data_ref is None and f.flag_names == ["read", "write"]
    assert f.arrmeta[0].label == "dim 0: strided_dim"
    assert [(off, name, value) for off, name, value, _ in f.arrmeta[0].fields] == \
        [(40, "size", "4"), (48, "stride", "4")]
    assert [c.value for c in f.cells] == ["1", "2", "3", "4"]
    assert [c.index for c in f.cells] == ["[0]", "[1]", "[2]", "[3]"]
    assert [c.address for c in f.cells] == [f.data + 4 * i for i in range(4)]

    root = parse_svg(dm.array_svg(a))
    texts = svg_texts(root)
    for want in (h(a.address), h(f.data), "refcount", "data_ref", "size", "stride",
                 "'strided * int32'", "3 (read|write)"):
        assert any(want in t for t in texts), want
    assert len(with_class(root, "cell")) == 4
    assert len(with_class(root, "arrow")) == 1          # data -> the first item
    text = dm.array_text(a)
    assert h(a.address) in text and re.search(r"\+48\s+stride\s+4\n", text) and "[3]=4" in text


def test_a_view_points_into_its_owner_and_holds_a_reference():
    a = ckernels.array([1, 2, 3, 4], type="strided * int32")
    v = a[::-2]
    f = dm.array_layout(v)
    assert f.data_ref is not None and f.data_ref.address == a.address
    assert f.data_ref.kind == "array" and f.data_ref.refcount == 2
    assert f.region == (dm.array_layout(a).data, dm.array_layout(a).data + 16)
    # every item of the owner, the view's marked with its index
    assert [(c.index, c.value) for c in f.cells] == \
        [(None, "1"), ("[1]", "2"), (None, "3"), ("[0]", "4")]
    assert f.cells[3].address == f.data
    assert (f.view_lo, f.view_hi) == (-8, 4)
    root = parse_svg(display.show(v).svg)
    assert len(with_class(root, "arrow")) == 2          # data and data_ref
    assert any(f"{h(a.address)} (array, refcount 2)" in t for t in svg_texts(root))
    del v
    assert dm.array_layout(a).refcount == 1             # the picture took no reference


def test_strings_in_var_dims_point_into_arena_chunks():
    s = ckernels.array([["héllo", "wörld"], [], ["日本語"]])
    f = dm.array_layout(s)
    am = s.address + ffi.sizeof("ck_array_preamble")
    var_am = ffi.cast("ck_var_dim_arrmeta *", am + ffi.sizeof("ck_dim_arrmeta"))
    str_am = ffi.cast("ck_string_arrmeta *", am + ffi.sizeof("ck_dim_arrmeta") +
                      ffi.sizeof("ck_var_dim_arrmeta"))
    blockrefs = [int(ffi.cast("uintptr_t", var_am.blockref)),
                 int(ffi.cast("uintptr_t", str_am.blockref))]
    assert [b.address for b in f.arenas] == blockrefs
    for b in f.arenas:
        st = ffi.new("ck_pod_stats *")
        lib.ck_pod_memblock_stats(ffi.cast("ck_memblock *", b.address), st)
        assert (b.used, b.capacity, len(b.chunks)) == (st.used, st.capacity, st.chunks)
        assert sum(c.used for c in b.chunks) == st.used
        assert b.refcount == lib.ck_memblock_refcount(ffi.cast("ck_memblock *", b.address))
    strings = [e for e in f.elements if e.kind == "string"]
    assert [e.path for e in strings] == ["[0][0]", "[0][1]", "[2][0]"]
    for e, want in zip(strings, ["héllo", "wörld", "日本語"]):
        assert bytes(ffi.buffer(ffi.cast("char *", e.begin), e.end - e.begin)) == \
            want.encode()
        arena = f.arenas[1]
        assert e.arena == arena.address and arena.chunk_of(e.begin) == 0
    var = [e for e in f.elements if e.kind == "var"]
    assert [e.preview for e in var] == ["2 elements", "0 elements", "1 element"]
    assert all(e.arena == blockrefs[0] for e in var)
    root = parse_svg(dm.array_svg(f))
    assert len(with_class(root, "element-span")) == len(f.elements) == 6
    assert len(with_class(root, "blockref")) == 2
    assert len(with_class(root, "chunk")) == 2
    texts = "\n".join(svg_texts(root))
    assert all(h(b) in texts for b in blockrefs)
    assert "'héllo'" in dm.array_text(f)


def test_struct_and_external_arrays():
    st = ckernels.array([{"x": 1.5, "name": "ab"}, {"x": 2.0, "name": "c"}])
    f = dm.array_layout(st)
    assert [e.path for e in f.elements] == ["[0].name", "[1].name"]
    assert f.cells[0].value == "{1.5, 'ab'}"
    assert any(e.label == "struct: data offsets" for e in f.arrmeta)
    parse_svg(dm.array_svg(f))

    n = np.arange(12.0).reshape(3, 4)
    c = ckernels.asarray(n[:, ::2])
    f = dm.array_layout(c)
    assert f.data_ref.kind == "external" and f.data == n.ctypes.data
    assert f.shape == (3, 2) and f.strides == (32, 16)
    assert [x.value for x in f.cells if x.index] == ["0.0", "2.0", "4.0", "6.0", "8.0", "10.0"]
    assert len(f.cells) == 11                          # [data, data + 88): the view's bytes
    parse_svg(dm.array_svg(f))


def test_compact_array_html_has_values_and_the_picture_on_request():
    a = ckernels.array(np.arange(1000, dtype=np.int64))
    out = display.html(a)
    assert "<details>" in out and "<svg" in out and "memory layout" in out
    assert "..." in out                                  # summarised like NumPy
    assert "[  0   1   2   3 ..." in html_mod.unescape(out).replace("\n", " ")
    f = dm.array_layout(a)
    assert len(f.cells) == dm.MAX_CELLS and f.more_cells == 1000 - dm.MAX_CELLS
    s = ckernels.array([["x"] * 30])
    assert "'x'" in display.html(s)


def test_cells_of_a_transposed_view_carry_their_index():
    n = np.arange(100 * 100, dtype=np.int32).reshape(100, 100)
    f = dm.array_layout(ckernels.asarray(n.T))
    # memory order: item k holds n.flat[k], which the view sees at [k % 100, k // 100]
    assert [c.index for c in f.cells[:3]] == ["[0,0]", "[1,0]", "[2,0]"]
    assert [c.value for c in f.cells[:3]] == ["0", "1", "2"]
    assert all(c.index is not None for c in f.cells) and f.more_cells == 10000 - dm.MAX_CELLS


def test_big_arrays_are_summarised_without_reading_everything():
    s = ckernels.array([f"s{i}" for i in range(2000)])
    page = display.html(s)
    values = html_mod.unescape(page[page.index("<pre"):page.index("</pre>")])
    assert "'s0'" in values and "'s11'" in values and "'s12'" not in values
    assert values.endswith(", ...]")
    f = dm.array_layout(s)
    assert len(f.elements) == dm.MAX_ELEMENTS and f.more_elements > 0
    assert "at least" in dm.array_text(f)


def test_a_kernel_is_not_taken_for_an_array():
    src = ckernels.array([1.0, 2.0])
    k = make_array_assignment_kernel(ckernels.empty(src.type, (2,)), src)
    assert not display._is_array(k) and display._is_kernel(k)
    assert "strided_dim" in str(display.show(k))


def test_memblock_pictures():
    mb = ckernels.MemBlock.pod(64)
    al = mb.allocator
    for n in (40, 100, 7):
        al.allocate(n)
    b = dm.memblock_layout(mb)
    assert (b.kind, b.refcount, b.allocations) == ("pod", 1, 3)
    assert [(c.capacity, c.used) for c in b.chunks] == [(64, 40), (128, 107)]
    assert b.used == mb.stats.used and b.capacity == mb.stats.capacity
    root = parse_svg(display.show(mb).svg)
    assert len(with_class(root, "chunk")) == 2
    assert "max-width: 100%" in root.get("style")   # never wider than the page
    # to scale: bar widths as the capacities (64 : 128), used parts as the used bytes
    bars = [float(r.get("width")) for r in with_class(root, "chunk")]
    used = [float(r.get("width")) for r in with_class(root, "chunk-used")]
    assert abs(bars[0] / bars[1] - 64 / 128) < 0.01
    assert abs(used[0] / bars[0] - 40 / 64) < 0.01 and abs(used[1] / bars[1] - 107 / 128) < 0.01
    assert "chunk 1" in str(display.show(mb))
    fixed = ckernels.MemBlock.fixed_size_pod(24)
    assert dm.memblock_layout(fixed).size == 24
    parse_svg(display.show(fixed).svg)
    ext = ckernels.MemBlock.external(bytearray(4))
    assert "external" in str(display.show(ext))
    a = ckernels.array([1.0, 2.0])
    with a.memblock as amb:
        assert "ckernels.Array at" in str(display.show(amb))   # an array block is an array
    for m in (mb, fixed, ext):
        m.close()


def test_show_refuses_what_it_cannot_draw():
    with pytest.raises(ckernels.errors.CKTypeError, match="no picture of a int"):
        display.show(3)
    with pytest.raises(ckernels.errors.CKTypeError):
        dm.array_layout(0)


# ---- kernel trees --------------------------------------------------------------------

_NODE = re.compile(r"^(\s*)@(\d+) (\S+) \[(single|strided)\]")


def _dump_nodes(dump):
    return [(len(m.group(1)) // 2, int(m.group(2)), m.group(3), m.group(4))
            for m in map(_NODE.match, dump.splitlines()) if m]


def _dump_fields(dump):
    """offset -> the decoded 'name=value' pairs of the dump's fields lines."""
    out, cur = {}, None
    for line in dump.splitlines():
        m = _NODE.match(line)
        if m:
            cur = int(m.group(2))
            out[cur] = []
        elif line.strip().startswith("fields ") or (cur is not None and out[cur] and
                                                    line.startswith(" " * 8) and "=" in line):
            body = line.strip()
            body = body[len("fields "):] if body.startswith("fields ") else body
            out[cur] += re.findall(r"(\S+?)=('[^']*'|\S+)", body)
    return out


def test_kernel_tree_decoding_matches_the_dump():
    a = ckernels.array([[1.0, 2.0], [3.0, 4.0]])
    b = ckernels.array([10, 20], type="strided * int32")
    d = ckernels.empty("strided * strided * float64", (2, 2))
    k = make_op_kernel("add", d, a, b)
    t = dk.kernel_tree(k)
    dump = k.debug_repr()
    assert t.dump == dump
    assert [(n.depth, n.offset, n.name, n.request) for n in t.nodes] == _dump_nodes(dump)
    assert not t.inline and t.capacity == k.builder.capacity
    fields = _dump_fields(dump)
    for n in t.nodes:
        pairs = [(f.label, f.text.split(" (")[0] if f.kind == "memblock" else f.text)
                 for f in n.fields]
        assert [(x, y.split("(")[0]) for x, y in pairs] == \
            [(x, y.split("(")[0]) for x, y in fields[n.offset]]
    root_, inner = t.nodes[0], t.nodes[1]
    vals = {f.label: f.value for f in root_.fields}
    assert (vals["size"], vals["dst_stride"], vals["src_stride[0]"], vals["src_stride[1]"]) \
        == (2, d.strides[0], a.strides[0], 0)          # b broadcasts along axis 0
    vals = {f.label: f.value for f in inner.fields}
    assert (vals["size"], vals["dst_stride"], vals["src_stride[0]"], vals["src_stride[1]"]) \
        == (2, 8, 8, 4)
    # child offsets lead to the children
    for n in t.nodes:
        kids = [n.offset + f.value for f in n.fields if f.kind == "child" and f.value]
        assert sorted(kids) == sorted(t.nodes[i].offset for i in n.children)
    leaf = t.nodes[3]
    assert leaf.name == "assign_int32_to_float64_nocheck"
    assert {f.name: f.text for f in leaf.fields} == \
        {"dst_type": "float64", "src_type": "int32", "errmode": "nocheck"}
    assert all(f.offset is None for f in leaf.fields)
    root = parse_svg(dk.kernel_svg(t))
    assert len(with_class(root, "child")) == sum(len(n.children) for n in t.nodes) == 4
    assert len(with_class(root, "buffer-kernel")) == len(t.nodes)
    texts = "\n".join(svg_texts(root))
    assert "on the heap" in texts and "root request: single" in texts
    assert "src_stride[1]" in texts and "+64" in texts
    assert "@208 add_float64 [strided]" in dk.kernel_text(t)


def test_small_trees_are_inline_and_var_kernels_show_their_types():
    src = ckernels.array([1, 2, 3, 4], type="strided * int32")
    dst = ckernels.empty("strided * int32", (4,))
    t = dk.kernel_tree(make_array_assignment_kernel(dst, src, "strided"))
    assert t.inline and t.capacity == 128 and t.request == "strided"
    assert "inline buffer" in "\n".join(svg_texts(parse_svg(dk.kernel_svg(t))))

    s = ckernels.array([["a", "bb"], ["ccc"]])
    k = make_array_assignment_kernel(ckernels.empty(s.type, (2,)), s)
    t = dk.kernel_tree(k)
    var = t.nodes[1]
    assert var.name == "var_dim"
    f = {x.label: x for x in var.fields}
    assert f["dst_var_type"].text == "'var * string'"
    assert f["dst_kind"].text == "var" and f["src_kind[0]"].text == "var"
    assert f["dst_arena"].kind == "memblock" and "(pod, refcount" in f["dst_arena"].text
    copy = {x.label: x for x in t.nodes[2].fields}
    assert t.nodes[2].name == "string_copy" and copy["align"].value == 1
    parse_svg(display.show(k).svg)


def test_builders_leaves_and_undescribed_kernels():
    kb = KernelBuilder()
    t = dk.kernel_tree(kb)                               # empty: one empty prefix
    assert len(t.nodes) == 1 and t.nodes[0].function == 0
    parse_svg(display.show(kb).svg)
    leaf = make_assignment_kernel("float64", "int32", "single")
    t = dk.kernel_tree(leaf)
    assert t.nodes[0].name == "assign_int32_to_float64_fractional"

    @ckernels.jit("float64(float64)")
    def twice(x):
        return 2.0 * x
    k = twice.instantiate("float64", ["float64"], "strided")
    t = dk.kernel_tree(k)
    assert t.nodes[0].name.startswith("ckernels.jit:twice") and t.nodes[0].request == "strided"
    parse_svg(dk.kernel_svg(t))


# ---- buffers, device arrays, contexts, programs, jitted functions, errors -----------

def test_buffer_map_comes_from_the_allocator():
    buf = ckernels.Context("cpu").new_buffer(512)
    offs = [buf.allocate(n, align=16) for n in (64, 128, 32)]
    buf.free(offs[1], 128)
    allocated, free = do.buffer_ranges(buf)
    assert allocated == [(0, 64), (192, 32)]
    assert free == [(64, 128), (224, 288)]
    root = parse_svg(display.show(buf).svg)
    assert len(with_class(root, "allocated")) == 2 and len(with_class(root, "free")) == 2
    assert "96 of 512 bytes" in svg_texts(root)[0]
    assert "free      [224, 512)  288 bytes" in str(display.show(buf))


def test_device_array_context_and_program(new_opencl_context):
    ctx = new_opencl_context()
    x = ctx.array(np.arange(8, dtype=np.float32))
    out = display.html(x)
    assert "ckernels.DeviceArray" in out and "<svg" in out and "this array: bytes [" in out
    assert "(8,)" in str(display.show(x))
    assert "fp64" in display.html(ctx) and "host-accessible buffers" in str(display.show(ctx))

    src = "__kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }\n"
    prog = ctx.build_program(src, "-cl-fast-relaxed-math")
    source, options, log, kind = do._program_parts(prog)
    assert (source, options, kind) == (src, "-cl-fast-relaxed-math", "opencl")
    page = display.html(prog)
    assert "-cl-fast-relaxed-math" in page and "get_global_id" in _visible_text(page)


def test_context_display_on_the_cpu():
    cpu = ckernels.Context("cpu")
    text = str(display.show(cpu))
    assert "kind" in text and "cpu: host memory" in text and "references" in text


def test_jitted_function_display():
    @ckernels.jit(["float64(float64, float64)", "int64(int64, int64)"])
    def axpy(x, y):
        return 2 * x + y
    page = display.html(axpy)
    for sig, comp in zip(axpy.signatures, axpy.compiled.values()):
        assert sig in page and h(comp.single) in page and h(comp.strided) in page
    text = str(display.show(axpy))
    assert "error model" in text and "python" in text and "cpu" in text


def test_error_display_names_the_status():
    with pytest.raises(ckernels.errors.ParseError) as info:
        ckernels.types.parse("3 * var * ")
    page = display.html(info.value)
    assert "CK_ERR_PARSE" in page and "ValueError" in page
    assert "expected a type" in str(display.show(info.value))


# ---- class hooks: every public object displays through ckernels.display ------------------

def test_every_public_object_has_its_rich_display(new_opencl_context):
    ctx = new_opencl_context()
    x = ctx.array(np.arange(8, dtype=np.float32))
    k = make_assignment_kernel("float64", "int32", "strided")

    @ckernels.jit("float32(float32)")
    def inc(v):
        return v + 1
    inc(x)
    mb = ckernels.MemBlock.pod(64)
    objects = [ckernels.array([1, 2, 3]), x, x.buffer if hasattr(x, "buffer") else None,
               ctx, ctx.build_program(inc.source("opencl")), inc, k, k.builder, mb,
               ckernels.Context("cpu").new_buffer(64)]
    for obj in [o for o in objects if o is not None]:
        page = obj._repr_html_()             # the class's hook ...
        assert page == display.html(obj), type(obj).__name__   # ... is ckernels.display's
        assert page.startswith("<"), type(obj).__name__
    mb.close()
    assert mb._repr_html_() == "<code>&lt;ckernels.MemBlock (closed)&gt;</code>"
    # a kernel's and a memory block's display hold their picture
    assert parse_svg(re.search(r"<svg.*</svg>", k._repr_html_(), re.S).group(0))


def test_jit_source_is_a_source_code_object():
    @ckernels.jit("float32(float32)")
    def dec(v):
        return v - 1
    src = dec.source("opencl")
    assert isinstance(src, display.SourceCode) and isinstance(src, str)
    assert src.language == "opencl" and str(src) == str(dec.source("opencl"))
    assert "__kernel" in _visible_text(src._repr_html_())
    assert len(re.findall(r"\n", str(src))) + 1 >= src.line_count


# ---- source ------------------------------------------------------------------------------

class _Text(HTMLParser):
    def __init__(self):
        super().__init__()
        self.parts = []

    def handle_data(self, data):
        self.parts.append(data)


def _visible_text(page):
    p = _Text()
    p.feed(page)
    return "".join(p.parts)


def test_source_code_is_a_str_and_highlights_every_line():
    lines = [f"float f{i}(float x) {{ return x * {i}.0f; }}  /* line {i} */" for i in range(300)]
    text = "\n".join(lines) + "\n__kernel void k(__global float *o) { o[0] = f1(1.0f); }\n"
    src = display.SourceCode(text, "opencl")
    assert isinstance(src, str) and src == text and src[:5] == "float"
    assert len(text) > 1800 and src.line_count == 301
    page = src._repr_html_()
    visible = _visible_text(page[page.index("<pre"):page.rindex("</pre>")])
    # every line, whole, in order (line numbers are added in front of each)
    body = [re.sub(r"^\s*\d+ ?", "", ln) for ln in visible.splitlines() if ln.strip()]
    assert body == text.splitlines()
    assert "color" in page and "__kernel" in visible          # highlighted (inline styles)
    kw = re.search(r"<span style=\"([^\"]*)\">__kernel</span>", page)
    assert kw and "font-weight: bold" in kw.group(1)           # a keyword in OpenCL C
    cuda = display.SourceCode('extern "C" __global__ void k() {}', "cuda")
    assert "CUDA C, 1 lines" in cuda._repr_html_()
    with pytest.raises(ValueError, match="unknown language"):
        display.SourceCode("x", "fortran")
    import pickle
    again = pickle.loads(pickle.dumps(src))
    assert again == src and again.language == "opencl"


def test_source_prints_plainly_in_ipython():
    from IPython.lib.pretty import pretty
    src = display.SourceCode("int x;\nint y;\n", "c")
    assert pretty(src) == "int x;\nint y;\n"
    assert str(display.show(src)) == "int x;\nint y;\n"


# ---- bench -------------------------------------------------------------------------------

@ckernels.jit("float64(float64, float64)")
def _axpy(x, y):
    return 2.0 * x + y


def test_bench_times_plots_and_tabulates():
    r = display.bench(_axpy, sizes=(100, 2_000), repeat=2, min_time=0.0005,
                      numpy=lambda x, y: 2.0 * x + y,
                      others={"wrong": lambda x, y: x + y})
    assert ckernels.bench is display.bench
    assert r.sizes == (100, 2_000)
    assert set(r.times) == {"ckernels", "numpy", "numba.vectorize", "wrong"}
    for ts in r.times.values():
        assert len(ts) == 2 and all(0 < t < 1.0 for t in ts)
    assert r.agree == {"ckernels": True, "numpy": True, "numba.vectorize": True,
                       "wrong": False}
    table = str(r)
    assert "n=2,000" in table and "numpy / ckernels" in table and "NO" in table
    # the table shows what the plot shows: time per element, in ns
    assert "time per element in ns" in table.splitlines()[0]
    row = next(line for line in table.splitlines() if line.startswith("ckernels "))
    want = r.times["ckernels"][1] / 2_000 * 1e9
    assert abs(float(row.split()[2]) - want) <= 0.01 * want
    fig = r.figure()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.get_lines()) == 4
    # nothing drawn outside the figure: the y label (pushed by tick labels) and the legend
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    w, h = fig.canvas.get_width_height()
    for artist in (ax.yaxis.label, ax.xaxis.label, ax.get_legend(), ax.title):
        box = artist.get_window_extent(renderer)
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= w and box.y1 <= h, (artist, box)
    page = r._repr_html_()
    assert "data:image/png;base64," in page and "numba.vectorize" in page
    png = r.png()                                          # drawn once, kept
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and r.png() is png
    assert base64.b64encode(png).decode() in page


def test_bench_without_matplotlib_still_tabulates(monkeypatch):
    r = display.bench(_axpy, sizes=(50,), repeat=1, min_time=0.0, vectorize=False)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    monkeypatch.setitem(sys.modules, "matplotlib.backends.backend_agg", None)
    with pytest.raises(ImportError, match=r"pip install 'ckernels\[display\]'"):
        r.figure()
    page = r._repr_html_()
    assert "matplotlib" in page and "ckernels.bench" in page


def test_bench_arguments_and_device(new_opencl_context):
    with pytest.raises(ckernels.errors.InvalidArgumentError, match="sizes"):
        display.bench(_axpy, sizes=(0,))
    with pytest.raises(ckernels.errors.InvalidArgumentError, match="signature"):
        display.bench(lambda x: x, sizes=(10,))
    with pytest.raises(ckernels.errors.InvalidArgumentError, match="Context"):
        display.bench(_axpy, sizes=(10,), device="opencl")
    ctx = new_opencl_context()
    r = display.bench(_axpy, sizes=(64,), repeat=1, min_time=0.0, vectorize=False,
                      device=ctx)
    assert r.agree["ckernels opencl"] and r.times["ckernels opencl"][0] > 0


def test_bench_against_a_pyopencl_kernel(new_opencl_context):
    new_opencl_context()                                  # skips without a platform
    pytest.importorskip("pyopencl")
    r = display.bench(_axpy, sizes=(64,), repeat=1, min_time=0.0, vectorize=False,
                      pyopencl="out[i] = 2.0 * x0[i] + x1[i]")
    assert not r.skipped and r.agree["pyopencl"] and r.times["pyopencl"][0] > 0
    with pytest.raises(Exception, match="no_such_thing"):   # the caller's kernel: its error
        display.bench(_axpy, sizes=(64,), repeat=1, min_time=0.0, vectorize=False,
                      pyopencl="out[i] = no_such_thing(x0[i]);")


# ---- issue 29: what a new user met in the pictures -----------------------------------

XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


def test_whitespace_in_strings_is_escaped_and_kept():
    raw = "\t josé  GARCÍA "
    s = ckernels.array([raw, "a\nb", "x" * 40])
    f = dm.array_layout(s)
    # tabs and newlines escaped as repr does, the quotes show leading and
    # trailing spaces, the double space is kept, nothing cut that fits
    assert f.cells[0].value == repr(raw) == "'\\t josé  GARCÍA '"
    assert f.cells[1].value == repr("a\nb")
    assert f.cells[2].value.startswith("'xxx") and f.cells[2].value.endswith("…'")
    assert f.elements[0].preview == repr(raw)
    root = parse_svg(dm.array_svg(f))
    cells = [t for t in with_class(root, "cell-value")]
    assert cells[0].text == repr(raw)
    # a run of spaces is drawn as it is: xml:space and white-space on the text itself
    assert cells[0].get(XML_SPACE) == "preserve" and "white-space: pre" in cells[0].get("style")
    assert cells[1].get(XML_SPACE) is None       # nothing to keep: no attribute
    text = dm.array_text(f)
    assert repr(raw) in text and "\t" not in text.split("elements")[1]
    # bytes too, and a cut string never ends in half a character
    b = ckernels.array([b"\x00\tab  c"])
    assert dm.array_layout(b).cells[0].value == repr(b"\x00\tab  c")
    # (20 columns: the quotes, the ellipsis and 8 two-column characters)
    assert dm.array_layout(ckernels.array(["日本語" * 20])).cells[0].value == \
        "'" + ("日本語" * 3)[:8] + "…'"


def test_quoted_fits_its_width_in_columns():
    from ckernels.display._svg import columns
    assert columns("abc") == 3 and columns("日本") == 4 and columns("é") == 1
    for text in ("\t josé  GARCÍA ", "日本語テキスト" * 3, "a'b\"c" * 9, "x"):
        for width in (6, 10, 20):
            q = dm.facts.quoted(text, width)
            assert columns(q) <= max(width, 3) or q == repr(text)
            assert q == repr(text) or q.endswith("…'") or q.endswith('…"')


def test_pictures_name_cjk_capable_fonts():
    from ckernels.display._svg import FONT
    root = parse_svg(dm.array_svg(ckernels.array(["日本語", "한국어"])))
    family = root.get("font-family")
    assert family == FONT
    names = [n.strip() for n in family.split(",")]
    assert names[0] == "DejaVu Sans Mono" and names[-1] == "monospace"
    assert any("CJK" in n for n in names) and "WenQuanYi Zen Hei Mono" in names
    # the HTML views use the same stack
    page = display.html(ckernels.array(["日本語"]))
    assert f"font-family:{FONT}" in page
    # wide characters are two columns when boxes are sized
    from ckernels.display._svg import text_width
    assert text_width("日本語") == 2 * text_width("abc")


def _chunk_bars(root):
    return [(float(r.get("width")), r) for r in with_class(root, "chunk")]


def test_a_little_used_arena_chunk_is_drawn_to_the_scale_of_its_used_bytes():
    s = ckernels.array(["ab", "cde"])             # 5 bytes of a 4096-byte chunk
    f = dm.array_layout(s)
    ch = f.arenas[0].chunks[0]
    assert ch.used == 5 and ch.capacity >= 4096
    root = parse_svg(dm.array_svg(f))
    (bar_w, bar), = _chunk_bars(root)
    used = with_class(root, "chunk-used")[0]
    # the used bytes take most of the bar (before: 5/4096 of it, a sliver)
    assert float(used.get("width")) >= 0.7 * bar_w
    spans = with_class(root, "element-span")
    assert all(float(r.get("width")) >= 0.25 * float(used.get("width")) for r in spans)
    texts = "\n".join(svg_texts(root))
    free = ch.capacity - ch.used
    assert f"{free} free" in texts and f"the 5 used bytes to scale, then the {free} free" \
        in texts and f"5 of {ch.capacity} bytes used" in texts
    # a chunk used more than a quarter is drawn to the scale of its capacity
    bar = dm.svg._ChunkBar(dm.ChunkFacts(0, 100, 60, False), 0, 0, 300)
    assert not bar.zoomed and bar.used_w == 180 and bar.x_of(50) == 150
    bar = dm.svg._ChunkBar(dm.ChunkFacts(0, 4096, 32, False), 0, 0, 300)
    assert bar.zoomed and bar.x_of(16) == pytest.approx((300 - dm.svg._TAIL_W) / 2)
    assert bar.x_of(4096) == 300


def _path_points(el):
    nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", el.get("d"))]
    return list(zip(nums[::2], nums[1::2]))


def test_element_arrows_stay_inside_the_arena_box():
    s = ckernels.array([f"w{i}" * 3 for i in range(10)] + ["日本語"])
    f = dm.array_layout(s)
    root = parse_svg(dm.array_svg(f))
    arenas = []
    for g in with_class(root, "arena"):
        r = g.find(SVG + "rect")
        x, y = float(r.get("x")), float(r.get("y"))
        arenas.append((x, y, x + float(r.get("width")), y + float(r.get("height"))))
    arrows = [e for e in with_class(root, "element") if e.tag == SVG + "path"]
    assert len(arrows) == 8
    for a in arrows:
        pts = _path_points(a)
        end = pts[-1]
        box = next(b for b in arenas if b[0] <= end[0] <= b[2] and b[1] <= end[1] <= b[3])
        lane_y = pts[-2][1]
        # the lane back in to the chunk runs inside the box that holds the chunk
        assert box[1] < lane_y < box[3], (lane_y, box)
    # the stems under the cells are drawn before the data block (covered by cells)
    order = [e.get("class") for e in root if e.tag == SVG + "g"]
    assert order.index("under") < order.index("box data-block")


def test_kernel_tree_title_fits_its_picture():
    a = ckernels.array([[1.0, 2.0], [3.0, 4.0]])
    b = ckernels.array([10, 20], type="strided * int32")
    d = ckernels.empty("strided * strided * float64", (2, 2))
    t = dk.kernel_tree(make_op_kernel("add", d, a, b))
    root = parse_svg(dk.kernel_svg(t))
    width = float(root.get("width"))
    for cls in ("builder", "builder-where"):
        title = with_class(root, cls)[0]
        text = "".join(title.itertext())
        size = float(title.get("font-size", 12))
        # room for bold monospace even where the renderer emboldens a regular
        # face (0.602 em + em/24 a character)
        assert float(title.get("x")) + len(text) * size * 0.645 <= width, text
        assert float(title.get("y")) - size >= 0
    assert f"{t.used} of {t.capacity} bytes used" in \
        "".join(with_class(root, "builder")[0].itertext())


def test_arrow_imported_arrays_say_what_holds_their_memory():
    pa = pytest.importorskip("pyarrow")
    s = ckernels.asarray(pa.array(["alpha", "beta", "gamma"]))
    f = dm.array_layout(s)
    ext = f.arenas[0]
    assert ext.kind == "external" and ext.used is None
    assert ext.holds == ("foreign Arrow buffers (an ArrowArray of 3 row(s), 3 buffer(s), "
                         "0 child(ren)), kept alive until the producer's release callback runs")
    page = html_mod.unescape(display.html(s))
    assert "None" not in page and ext.holds in page
    assert ext.holds in dm.array_text(f)
    texts = "\n".join(svg_texts(parse_svg(dm.array_svg(f))))
    assert "foreign Arrow buffers" in texts and "3 row(s), 3 buffer(s), 0 child(ren)" in texts
    n = ckernels.asarray(pa.array([1.5, 2.5]))
    assert "foreign Arrow buffers (an ArrowArray of 2 row(s)" in display.html(n)
    # a view of Arrow's buffer: the data block says whose memory it is
    subs = ["".join(e.itertext()) for e in with_class(parse_svg(dm.array_svg(n)), "subtitle")]
    assert "holds: foreign Arrow buffers" in subs and \
        "ArrowArray: 2 row(s), 2 buffer(s), 0 child(ren)" in subs
    # NumPy's memory is told apart: its size in bytes
    x = np.arange(12.0)
    ref = dm.array_layout(ckernels.asarray(x)).data_ref
    assert ref.holds.startswith(f"a NumPy array's memory ({x.nbytes} B)")


def test_bench_y_ticks_are_plain_numbers():
    pytest.importorskip("matplotlib")
    sizes = (1_000, 10_000, 100_000)
    # 20..60 ns per element: inside one decade, where minor ticks are labelled
    r = display.bench.__globals__["BenchResult"](
        "f", "float64(float64)", sizes, {"ckernels": [n * 20e-9 for n in sizes],
                                         "numpy": [n * 60e-9 for n in sizes]},
        {}, {})
    fig = r.figure()
    fig.canvas.draw()
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.yaxis.get_ticklabels(minor=True)
              + ax.yaxis.get_ticklabels()]
    shown = [t for t in labels if t]
    assert shown and not any("times" in t or "\\" in t or "×" in t or "^" in t or "$" in t
                             for t in shown), shown
    assert any(t in shown for t in ("20", "30", "40", "50", "60")), shown
    float(shown[0])                                      # a plain number


def test_struct_items_are_drawn_whole():
    Vec3 = np.dtype([("x", "f8"), ("y", "f8"), ("z", "f8")], align=True)
    P = np.dtype([("pos", Vec3), ("vel", Vec3), ("mass", "f8")], align=True)
    t = str(ckernels.types.from_numpy_dtype(P))
    p = np.zeros(2, P)
    p["pos"]["x"] = [0.1234567, -2.5]
    p["vel"]["y"] = [-0.00671432, 1e-300]      # 11 and 6 characters: never cut
    p["mass"] = [1.25, 0.75]
    a = ckernels.array(p.tolist(), type=f"2 * {t}")
    f = dm.array_layout(a)
    assert f.cells[0].lines == [("pos.x", "0.123457"), ("pos.y", "0.0"), ("pos.z", "0.0"),
                                ("vel.x", "0.0"), ("vel.y", "-0.00671432"), ("vel.z", "0.0"),
                                ("mass", "1.25")]
    assert f.cells[1].value == "{{-2.5, 0.0, 0.0}, {0.0, 1e-300, 0.0}, 0.75}"
    root = parse_svg(dm.array_svg(f))
    texts = svg_texts(root)
    assert not any("…" in t for t in texts), [t for t in texts if "…" in t]
    # the whole type, wrapped under the block's title
    sub = "".join(t for t in (("".join(e.itertext())) for e in with_class(root, "subtitle")))
    assert sub.replace(" ", "") .count("float64") == 7 and "mass" in sub
