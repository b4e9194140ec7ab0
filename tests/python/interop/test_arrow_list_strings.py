"""Arrow ``list<string>`` / ``large_list<string>`` / ``list<string_view>`` and
top-level ``utf8`` imported as ``var * string`` / ``string``: the text stays
in Arrow's buffers, one ``ck_string`` slot is written per string, and the
checks (offsets that do not decrease, strict UTF-8 validated once over the
data buffer, elements starting on a character boundary) name the element.
pyarrow's ``to_pylist`` is the oracle."""
import numpy as np
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import ckernels
from ckernels.errors import InvalidArgumentError

pa = pytest.importorskip("pyarrow")
na = pytest.importorskip("nanoarrow")

WORDS = ["alpha", "", "délta", "東京", "x" * 40, "ñandú", "😀 emoji", "a\u0301"]
LIST_TYPES = [pa.list_(pa.string()), pa.large_list(pa.string()), pa.list_(pa.large_string()),
              pa.large_list(pa.large_string()), pa.list_(pa.string_view())]


def _rows(n, seed=0):
    rng = np.random.default_rng(seed)
    return [[WORDS[k] for k in rng.integers(0, len(WORDS), rng.integers(0, 6))]
            for _ in range(n)]


@pytest.mark.parametrize("typ", LIST_TYPES, ids=str)
def test_list_of_strings_round_values(typ):
    rows = _rows(3000)
    col = pa.array(rows, typ)
    a = ckernels.from_arrow(col)
    assert str(a.type) == "strided * var * string" and len(a) == 3000
    assert a.tolist() == rows
    # sliced: the offsets start inside the buffers
    assert ckernels.from_arrow(col[123:2071]).tolist() == rows[123:2071]
    assert ckernels.from_arrow(col[2999:]).tolist() == rows[2999:]
    assert ckernels.from_arrow(col[5:5]).tolist() == []


@pytest.mark.parametrize("typ", LIST_TYPES, ids=str)
def test_list_of_strings_with_nulls(typ):
    rows = _rows(500, seed=1)
    rows[3] = None
    rows[10] = [None, "b"] if rows[10] is not None else None
    rows[-1] = None
    col = pa.array(rows, typ)
    assert ckernels.from_arrow(col).tolist() == col.to_pylist()
    assert ckernels.from_arrow(col[3:400]).tolist() == col[3:400].to_pylist()


def test_all_empty_rows_and_strings():
    for rows in ([[], [], []], [[""], [], ["", ""]]):
        col = pa.array(rows, pa.list_(pa.string()))
        assert ckernels.from_arrow(col).tolist() == rows


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.none(), st.lists(st.text(max_size=12), max_size=5)),
                max_size=40),
       st.integers(0, 10), st.sampled_from(LIST_TYPES[:3]))
def test_hypothesis_matches_pyarrow(rows, cut, typ):
    col = pa.array(rows, typ)
    assert ckernels.from_arrow(col).tolist() == col.to_pylist()
    assert ckernels.from_arrow(col[cut:]).tolist() == col[cut:].to_pylist()


def test_text_is_not_copied():
    """The slots point into Arrow's data buffer (the array keeps it alive)."""
    col = pa.array([["abc", "défg"], ["h"]], pa.list_(pa.string()))
    data = col.values.buffers()[2]
    a = ckernels.from_arrow(col)
    rows = a.tolist()
    del col
    assert rows == [["abc", "défg"], ["h"]]
    assert a.tolist() == rows
    text = ckernels.from_arrow(pa.array(["abc", "défg"]))
    assert text.tolist() == ["abc", "défg"]
    assert data.size == len("abcdéfgh".encode())


# ---- bad input: each check names the element ----------------------------------------

def _strings(offsets, data, typ=pa.string()):
    """Unvalidated strings (nanoarrow builds what pyarrow would refuse)."""
    width = np.int64 if typ == pa.large_string() else np.int32
    return na.c_array_from_buffers(na.c_schema(typ), len(offsets) - 1,
                                   [None, np.array(offsets, width).tobytes(), bytes(data)],
                                   validation_level="none")


def _list(values, offsets, typ=pa.list_):
    vt = pa.large_string() if "large" in str(values.schema) else pa.string()
    width = np.int64 if typ is pa.large_list else np.int32
    return na.c_array_from_buffers(na.c_schema(typ(vt)), len(offsets) - 1,
                                   [None, np.array(offsets, width).tobytes()],
                                   children=[values], validation_level="none")


@pytest.mark.parametrize("typ", [pa.string(), pa.large_string()], ids=str)
def test_invalid_utf8_named_in_a_long_buffer(typ):
    words = ["word%03d-é" % i for i in range(200)]          # > 64 bytes: the block path
    data = bytearray("".join(words).encode())
    offsets = np.concatenate([[0], np.cumsum([len(w.encode()) for w in words])])
    at = int(offsets[150]) + 2
    data[at] = 0xff
    with pytest.raises(InvalidArgumentError, match="element 150 is not valid UTF-8"):
        ckernels.from_arrow(_strings(offsets, bytes(data), typ))
    data[at] = 0xed                                          # a surrogate
    data[at + 1:at + 3] = b"\xa0\x80"
    with pytest.raises(InvalidArgumentError, match="element 150 is not valid UTF-8"):
        ckernels.from_arrow(_strings(offsets, bytes(data), typ))
    # inside a list
    data[at:at + 3] = b"\xf4\x90\x80"                        # above U+10FFFF
    vals = _strings(offsets, bytes(data), typ)
    with pytest.raises(InvalidArgumentError, match="element 150 is not valid UTF-8"):
        ckernels.from_arrow(_list(vals, [0, 100, 200]))


def test_element_starting_inside_a_character():
    data = ("a" * 70 + "é" + "b" * 70).encode()
    # element 1 starts on the continuation byte of 'é' (the whole buffer is valid)
    with pytest.raises(InvalidArgumentError, match="element 1 is not valid UTF-8"):
        ckernels.from_arrow(_strings([0, 71, len(data)], data))
    with pytest.raises(InvalidArgumentError, match="element 1 is not valid UTF-8"):
        ckernels.from_arrow(_list(_strings([0, 71, len(data)], data), [0, 2]))


def test_text_cut_at_the_end():
    data = ("c" * 80 + "東").encode()[:-1]                   # the last character cut short
    with pytest.raises(InvalidArgumentError, match="element 0 is not valid UTF-8"):
        ckernels.from_arrow(_strings([0, len(data)], data))


@pytest.mark.parametrize("typ", [pa.string(), pa.large_string()], ids=str)
def test_decreasing_string_offsets(typ):
    with pytest.raises(InvalidArgumentError, match="offsets 2 and 3 decrease"):
        ckernels.from_arrow(_strings([0, 1, 3, 2, 4], b"abcd", typ))
    with pytest.raises(InvalidArgumentError, match="offsets 2 and 3 decrease"):
        ckernels.from_arrow(_list(_strings([0, 1, 3, 2, 4], b"abcd", typ), [0, 4]))


@pytest.mark.parametrize("typ", [pa.list_, pa.large_list])
def test_decreasing_or_negative_list_offsets(typ):
    vals = na.c_array(pa.array(["a", "b", "c", "d"]))
    with pytest.raises(InvalidArgumentError, match="offsets 1 and 2 decrease"):
        ckernels.from_arrow(_list(vals, [0, 3, 1, 4], typ))
    with pytest.raises(InvalidArgumentError, match="negative offset"):
        ckernels.from_arrow(_list(vals, [-1, 2], typ))
    with pytest.raises(InvalidArgumentError, match="the list offsets reach 9"):
        ckernels.from_arrow(_list(vals, [0, 2, 9], typ))


def test_empty_data_buffer():
    empty = na.c_array_from_buffers(na.string(), 3, [None, np.zeros(4, np.int32).tobytes(),
                                                      None], validation_level="none")
    assert ckernels.from_arrow(empty).tolist() == ["", "", ""]
    bad = na.c_array_from_buffers(na.string(), 2, [None, np.array([0, 0, 2], np.int32)
                                                   .tobytes(), None], validation_level="none")
    with pytest.raises(InvalidArgumentError, match="element 1 has 2 bytes but the data "
                                                   "buffer is NULL"):
        ckernels.from_arrow(bad)
