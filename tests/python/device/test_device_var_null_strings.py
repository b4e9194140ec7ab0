"""``var * ?string`` (and ``var * ?T`` of numbers) on devices
(``docs/nulls.md`` "On devices", ``docs/device-code.md``): a
:class:`DeviceVarArray` whose values are a :class:`DeviceOptionArray` -- the
items and the child's validity bitmap in a device buffer (Arrow's list of a
nullable child).  Uploads from host arrays, lists with ``None`` items and
pyarrow ``list<string>`` arrays with null items (sliced: bit offsets 0-7),
the way back (``get``/``tolist``), slicing, ``repr``/the picture and
Arrow's C device interface, checked against the host array and pyarrow
(hypothesis: non-ASCII and empty strings, empty rows, random null items).

Then ``var * ?string`` results of jitted functions (``out.append(None)``,
optional views, built text, returned lists with ``None`` items) built by the
sizing + scan + writing kernel of ``jit/device_split.py`` with presence
bytes packed into the child's bitmap, against the CPU jit on the device
contexts; the CUDA C through NVRTC + ptxas and both passes on the host
shim."""

import ctypes

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.nulls import DeviceOptionArray
from ckernels.device.varlen import DeviceVarArray
from ckernels.errors import InvalidArgumentError, NotSupportedError

pa = pytest.importorskip("pyarrow")

SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
ARROW_DEVICE_OPENCL = 4
ARROW_DEVICE_CUDA = 2

ROWS = [["a", None, "é€"], [], [None], ["", "𝄞x", None, "z"]]


@pytest.fixture(scope="module")
def ctx(device_ctx):
    return device_ctx


def test_upload_and_back_from_lists_host_arrays_and_pyarrow(ctx):
    host = ckernels.array(ROWS)
    assert str(host.type).endswith("var * ?string")
    for source in (ROWS, host, pa.array(ROWS, pa.list_(pa.string())),
                   pa.array(ROWS, pa.large_list(pa.large_string()))):
        d = ctx.array(source)
        assert isinstance(d, DeviceVarArray) and str(d.type) == "4 * var * ?string"
        assert isinstance(d.values, DeviceOptionArray)
        assert d.null_items == 3 and d.values.null_count == 3
        assert d.tolist() == ROWS
        back = d.get()
        assert str(back.type).endswith("var * ?string") and back.tolist() == ROWS
        assert pa.array(back).to_pylist() == ROWS


def test_numbers_and_bools_under_var(ctx):
    rows = [[1, None, 3], [], [None, None], [7]]
    d = ctx.array(rows, type="4 * var * ?int64")
    assert str(d.type) == "4 * var * ?int64" and d.null_items == 3
    assert d.tolist() == rows
    f = ctx.array(pa.array([[1.5, None], [None, -2.0, 0.0]]))
    assert str(f.type) == "2 * var * ?float64" and f.tolist() == [[1.5, None], [None, -2.0, 0.0]]
    b = ctx.array([[True, None], [False]], type="2 * var * ?bool")
    assert b.tolist() == [[True, None], [False]]
    assert pa.array(b.get()).to_pylist() == [[True, None], [False]]


def test_elements_slices_copies_and_other_contexts(ctx):
    d = ctx.array(ROWS)
    assert d[0] == ["a", None, "é€"] and d[-2] == [None] and d[1] == []
    s = d[1:4]
    assert isinstance(s.values, DeviceOptionArray) and s.tolist() == ROWS[1:]
    assert s.null_items == 2 and s.values.bit_offset in range(8)
    assert d[3:].tolist() == ROWS[3:] and d[2:2].tolist() == []
    c = d.copy()
    assert c.tolist() == ROWS and c.values.validity is not d.values.validity
    assert d.to(ckernels.Context("cpu")).tolist() == ROWS
    assert d.to(ctx) is d
    assert d.nbytes > d.offsets.nbytes + d.values.values.nbytes


def test_repr_str_and_picture_show_the_nulls(ctx):
    d = ctx.array(ROWS)
    r = repr(d)
    assert "4 * var * ?string" in r and "3 null items" in r
    assert str(d) == str(ROWS)
    text = str(ckernels.show(d))
    assert "values.validity" in text and "null items" in text and "3 of 8" in text
    html = d._repr_html_()
    assert "values.validity" in html


def test_arrow_device_export_carries_the_child_validity(ctx):
    nanoarrow = pytest.importorskip("nanoarrow")
    from nanoarrow.device import c_device_array
    d = ctx.array(ROWS)[1:]            # the child's bitmap at a bit offset: moved to bit 0
    view = c_device_array(d)
    assert view.device_type_id == {"opencl": ARROW_DEVICE_OPENCL,
                                     "cuda": ARROW_DEVICE_CUDA}[ctx.kind]
    assert view.schema.format == "+L" and view.schema.child(0).format == "U"
    assert view.array.length == 3 and view.array.null_count == 0
    child = view.array.child(0)
    assert child.length == 5 and child.null_count == 2 and child.n_buffers == 3
    assert child.buffers[0] != 0       # the bitmap: a device buffer
    assert nanoarrow.c_schema(d).child(0).flags & 2       # ARROW_FLAG_NULLABLE
    del view, child, nanoarrow


def test_export_round_trip_of_the_bitmap_through_the_host(ctx):
    # what the device node points at is what get() reads: the same node builder
    d = ctx.array(pa.array(ROWS * 3).slice(5))
    assert d.tolist() == (ROWS * 3)[5:]
    bits = d.values.arrow_bitmap().get()
    valid = np.unpackbits(bits, bitorder="little")[:len(d.values)].astype(bool)
    items = [x for row in (ROWS * 3)[5:] for x in row]
    assert valid.tolist() == [x is not None for x in items]


def test_refusals_are_one_line(ctx):
    with pytest.raises(NotSupportedError) as e:
        ctx.array(pa.array([["a"], None], pa.list_(pa.string())))   # a null row: ?var
    assert "\n" not in str(e.value) and "null" in str(e.value)
    with pytest.raises(NotSupportedError) as e:
        ctx.array([[{"a": 1}, None]], type="1 * var * ?{a: int64}")
    assert "\n" not in str(e.value)
    d = ctx.array(ROWS)
    with pytest.raises(InvalidArgumentError, match="validity bitmap"):
        DeviceVarArray(ctx, d.element, d.offsets, d.values.values)     # the bitmap left out


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)


@SETTINGS
@given(rows=st.lists(st.lists(st.none() | text, max_size=5), max_size=12),
       start=st.integers(0, 9))
def test_hypothesis_round_trip_against_pyarrow(ctx, rows, start):
    src = pa.array(rows, pa.list_(pa.string())).slice(min(start, len(rows)))
    want = src.to_pylist()
    d = ctx.array(src)
    assert d.tolist() == want
    assert d.null_items == sum(x is None for r in want for x in r)
    assert pa.array(d.get()).to_pylist() == want
    if len(d) > 1:
        assert d[1:].tolist() == want[1:]


# ---- var * ?string results of jitted functions -----------------------------------------
@ckernels.jit("var * ?string(string)")
def maybe_words(s, out):
    for w in s.split():
        out.append(w if len(w) > 1 else None)     # an optional view


@ckernels.jit("var * ?string(string)")
def x_is_null(s):
    return [None if w == "x" else w for w in s.split()]     # a returned list


@ckernels.jit("var * ?string(string, int64)")
def tagged(s, k, out):
    if k < 0:
        raise ValueError("negative k")
    i = 0
    for w in s.split():
        if w == "x":
            out.append(None)                      # None itself
        else:
            out.append(w.upper())                 # built text, straight into the row
            out.append(f"{w}-{i * k}")
        i += 1
    out.append(s[:k])


def tagged_py(s, k):
    out = []
    for i, w in enumerate(s.split()):
        out += [None] if w == "x" else [w.upper(), f"{w}-{i * k}"]
    return out + [s[:k]]


def test_results_match_the_cpu_jit_and_python(ctx):
    data = ["a bb x", "", "x x é€ x", "ccc", "  x  ", "𝄞 ab"]
    ks = np.array([1, 0, 2, 3, 4, 0], np.int64)
    dd, dk = ctx.array(data), ctx.array(ks)
    for f, args, dargs in ((maybe_words, (data,), (dd,)), (x_is_null, (data,), (dd,)),
                           (tagged, (data, ks), (dd, dk))):
        cpu = f(*(ckernels.array(a) if isinstance(a, list) else a for a in args)).tolist()
        got = f(*dargs)
        assert isinstance(got, DeviceVarArray) and str(got.type) == "6 * var * ?string"
        assert isinstance(got.values, DeviceOptionArray)
        assert got.tolist() == cpu, f.__name__
        assert got.null_items == sum(x is None for r in cpu for x in r)
        offs = got.values.values.offsets.get()
        items = [x for r in cpu for x in r]
        assert all(offs[j + 1] == offs[j] for j, x in enumerate(items) if x is None)
    assert tagged(dd, dk).tolist() == [tagged_py(s, int(k)) for s, k in zip(data, ks)]
    assert x_is_null(dd).tolist() == [[None if w == "x" else w for w in s.split()]
                                      for s in data]


def test_results_leave_the_device_with_their_nulls(ctx):
    got = x_is_null(ctx.array(["x a", "b x x"]))
    assert got.get().tolist() == [[None, "a"], ["b", None, None]]
    assert "3 null items" in repr(got)
    nanoarrow = pytest.importorskip("nanoarrow")
    from nanoarrow.device import c_device_array
    view = c_device_array(got)
    assert view.array.child(0).null_count == 3 and view.array.child(0).length == 5
    del view, nanoarrow


def test_empty_inputs_errors_and_refusals(ctx):
    assert maybe_words(ctx.array(["a"])[:0]).tolist() == []
    assert maybe_words(ctx.array(["", "a"])).tolist() == [[], [None]]
    with pytest.raises(ValueError, match="negative k"):
        tagged(ckernels.array(["a"]), np.array([-1]))
    with pytest.raises(ValueError, match="negative k"):
        tagged(ctx.array(["a"]), ctx.array(np.array([-1], np.int64)))
    with pytest.raises(NotSupportedError) as e:
        maybe_words(ctx.array(["a b"]), out=ctx.empty(1, "int64"))
    assert "\n" not in str(e.value) and "out=" in str(e.value)
    with pytest.raises(NotSupportedError) as e:      # a null row would be ?var
        x_is_null(ctx.array(pa.array(["a x", None])))
    assert "\n" not in str(e.value) and "null row" in str(e.value)


@SETTINGS
@given(rows=st.lists(st.lists(st.sampled_from(["x", "ab", "é", "𝄞z", "q"]), max_size=6)
                     .map(" ".join), max_size=10))
def test_hypothesis_results_against_the_cpu_jit(ctx, rows):
    d = ctx.array(rows, type=f"{len(rows)} * string")
    h = ckernels.array(rows, type=f"{len(rows)} * string")
    assert x_is_null(d).tolist() == x_is_null(h).tolist()
    assert maybe_words(d).tolist() == maybe_words(h).tolist()


# ---- CUDA C: NVRTC + ptxas, then maybe_words' kernel on the host shim ----------------------
def test_results_as_cuda_c_match_the_cpu_jit(tmp_path):
    from ckernels import dialects
    from ckernels.jit import c_emit
    from cuda_tools import host_shim_library, ptx_assembled_or_skip
    fs = (("ck_mw", maybe_words), ("ck_xn", x_is_null), ("ck_tg", tagged))
    src = "".join(f"namespace {ns} {{\n" + str(f.source("cuda")).replace(
        f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") + f"}}  // {ns}\n" for ns, f in fs)
    ptx = ptx_assembled_or_skip(tmp_path, src)
    assert all(f"{ns}_kernel" in ptx for ns, _ in fs)
    # maybe_words: string (3 operands), per-row bytes, offsets, data, the pass, presence
    sig = ("unsigned char *out, const unsigned char **in, const unsigned long long *off, "
           "const long long *stride, int mode, const long long *meta, unsigned long long n, "
           "int *err, unsigned int block")
    ins = "".join(f", in[{j}], off[{j}], stride[{j}]" for j in range(6))
    lib = host_shim_library(tmp_path, src + (
        f'extern "C" void ck_mw_run({sig}) {{\n  ck_shim_grid(n, block, [&] {{ '
        f"ck_mw::ck_mw_kernel(out, 0, 8{ins}, mode, in[6], off[6], stride[6], meta, 1, n, "
        "err); });\n}\n"))
    fn = lib.ck_mw_run
    fn.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64,
                                           ctypes.c_void_p, ctypes.c_uint]
    strings = ["ab c", "", "héllo w ß", "  x\u3000yz ", "é" * 40]
    n = len(strings)
    enc = [x.encode() for x in strings]
    so = np.cumsum([0] + [len(b) for b in enc]).astype(np.int64)
    text = np.frombuffer(b"".join(enc) + b"\0", np.uint8)
    err, meta = np.zeros(4, np.int32), np.zeros(1, np.int64)

    def launch(out, starts, inner, data, mode, present):
        arrs = [so, so, text, starts, inner, data, present]
        p = [a.ctypes.data for a in arrs]
        o, st_ = [0, 8, 0, 0, 0, 0, 0], [8, 8, 0, 8, 0, 0, 0]
        fn(out.ctypes.data, (ctypes.c_void_p * 7)(*p), (ctypes.c_uint64 * 7)(*o),
           (ctypes.c_int64 * 7)(*st_), mode, meta.ctypes.data, n, err.ctypes.data,
           dialects.CUDA_BLOCK)
        assert err[0] == 0, err
    scan = lambda a: np.concatenate([[0], np.cumsum(a[:n])]).astype(np.int64)  # noqa: E731
    counts, nbytes = np.zeros(n + 1, np.int64), np.zeros(n + 1, np.int64)
    one = np.zeros(1, np.uint8)
    launch(counts, nbytes, np.zeros(1, np.int64), one, 0, one)
    outer, starts = scan(counts), scan(nbytes)
    inner = np.zeros(outer[-1] + 1, np.int64)
    inner[-1] = starts[-1]
    data = np.zeros(max(int(starts[-1]), 1), np.uint8)
    present = np.full(max(int(outer[-1]), 1), 7, np.uint8)
    launch(outer, starts, inner, data, 1, present)
    raw = data.tobytes()
    got = [[raw[inner[j]:inner[j + 1]].decode() if present[j] else None
            for j in range(outer[i], outer[i + 1])] for i in range(n)]
    assert set(present[:outer[-1]].tolist()) <= {0, 1}
    assert got == maybe_words(ckernels.array(strings)).tolist()
