"""Arrow string arrays with nulls imported in one pass: the bytes under a null
are unspecified (anything, invalid UTF-8 included) and never refused or
read; a valid element that is not UTF-8 is refused naming it.  Oracle:
pyarrow's own ``to_pylist``."""

from __future__ import annotations

import numpy as np
import pytest

import ckernels
from ckernels.errors import InvalidArgumentError

pa = pytest.importorskip("pyarrow")


def _strings(values: list[bytes], valid: list[bool], large: bool = False):
    offs = np.concatenate([[0], np.cumsum([len(v) for v in values])])
    offs = offs.astype(np.int64 if large else np.int32)
    bits = np.packbits(np.array(valid, dtype=bool), bitorder="little")
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(values),
                                 [pa.py_buffer(bits.tobytes()), pa.py_buffer(offs.tobytes()),
                                  pa.py_buffer(b"".join(values))])


@pytest.mark.parametrize("large", [False, True])
def test_bad_bytes_under_nulls_are_never_seen(large):
    values = [b"ab", b"\xff\xfe", "é".encode(), b"\x80", b"", b"xyz"] * 20
    valid = [True, False, True, False, True, True] * 20
    arr = _strings(values, valid, large)
    for start in range(8):
        sl = arr.slice(start)
        want = [None if not ok else v.decode() for v, ok in zip(values[start:], valid[start:])]
        assert ckernels.asarray(sl).tolist() == want, start


def test_bad_bytes_in_a_valid_element_name_it():
    values = [b"ab", b"\xff", b"cd", b"\xfe"]
    arr = _strings(values, [True, False, True, True])
    with pytest.raises(InvalidArgumentError, match="element 3 is not valid UTF-8"):
        ckernels.asarray(arr)


def test_nulls_with_valid_text_fast_pass():
    arr = pa.array(["a", None, "héllo", "", None] * 300)
    a = ckernels.asarray(arr)
    assert a.tolist() == arr.to_pylist()
    assert a.null_count == 600
