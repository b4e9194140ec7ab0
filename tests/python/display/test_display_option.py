"""Pictures of option arrays ``?T``: the arrmeta entry of the validity bitmap
(its block, address, bit offset and the bits of its first slots) and the
null items, checked against pyarrow's own bitmap and ``is_null``."""

import xml.etree.ElementTree as ET

import pyarrow as pa

import ckernels
from ckernels.display import memory as dm
from ckernels.display.memory import facts

VALUES = [1.5, None, 3.0, None, 5.0, 6.0, None, 8.0, 9.0, 10.0]


def _option_entry(f):
    [entry] = [m for m in f.arrmeta if m.label == "option: validity bitmap"]
    return {name: (value, ref) for _, name, value, ref in entry.fields}


def test_imported_bitmap_is_drawn_from_arrows_buffer():
    p = pa.array(VALUES)
    a = ckernels.asarray(p)
    f = dm.array_layout(a[1:9])
    fields = _option_entry(f)
    bits = p.buffers()[0]
    want = "".join("0" if v is None else "1" for v in VALUES[:8])
    assert fields["bits"][0] == f"{facts.hex_addr(bits.address)} slots: {want}…"
    assert fields["bit_offset"][0] == "0" and fields["length"][0] == str(len(VALUES))
    assert fields["blockref"][1] == f.data_ref.address        # the Arrow array's block
    # items: "null" exactly where pyarrow says, the values elsewhere
    texts = [c.value for c in f.cells if c.index is not None]
    assert texts == ["null" if v is None else facts._number_text(v) for v in VALUES[1:9]]
    ET.fromstring(ckernels.show(a)._repr_svg_())              # the picture is valid XML
    assert "slots: " + want in str(ckernels.show(a))


def test_strings_with_nulls_and_a_plain_array():
    s = dm.array_layout(ckernels.array(["x", None, "z"]))
    assert _option_entry(s)["bits"][0].endswith("slots: 101")
    assert [c.value for c in s.cells] == ["'x'", "null", "'z'"]
    plain = dm.array_layout(ckernels.array([1.0, 2.0]))
    assert not [m for m in plain.arrmeta if m.label.startswith("option")]
