"""``var * ?string`` (and ``var * ?T`` of numbers) on devices
(``docs/nulls.md`` "On devices", ``docs/device-code.md``): a
:class:`DeviceVarArray` whose values are a :class:`DeviceOptionArray` -- the
items and the child's validity bitmap in a device buffer (Arrow's list of a
nullable child).  Uploads from host arrays, lists with ``None`` items and
pyarrow ``list<string>`` arrays with null items (sliced: bit offsets 0-7),
the way back (``get``/``tolist``), slicing, ``repr``/the picture and
Arrow's C device interface, checked against the host array and pyarrow
(hypothesis: non-ASCII and empty strings, empty rows, random null items)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels.device.nulls import DeviceOptionArray
from ckernels.device.varlen import DeviceVarArray
from ckernels.errors import NotSupportedError

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
