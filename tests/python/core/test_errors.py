"""The one exception <-> status mapping (ckernels.errors), derived from the C enum."""

import pathlib
import re

import pytest

import ckernels
from ckernels import errors
from ckernels._native import check, ffi, lib


def test_every_status_has_a_class_and_back():
    enum = {name: value for value, name in ffi.typeof("ck_status").elements.items()}
    assert enum == errors.STATUS_VALUES
    for name, value in enum.items():
        if value == 0:
            continue
        cls = errors.error_class(value)
        assert cls is not errors.CKernelError, name
        assert cls.status == value == getattr(lib, name)
        assert errors.status_name(value) == name == errors.STATUS_NAMES[cls]
    assert errors.MAX_STATUS == max(enum.values())
    assert errors.error_class(10**6) is errors.CKernelError
    assert errors.JitOnlyError.status == lib.CK_ERR_TYPE


def test_no_status_numbers_in_python():
    src = (pathlib.Path(ckernels.__file__).parent / "errors.py").read_text()
    assert not re.search(r"status\s*=\s*\d", src)


def test_check_raises_the_class_of_the_status():
    lib.ck_set_error(lib.CK_ERR_INDEX, b"axis 7 out of range")
    with pytest.raises(errors.CKIndexError, match="axis 7") as ei:
        check(lib.CK_ERR_INDEX)
    assert isinstance(ei.value, IndexError) and ei.value.status == lib.CK_ERR_INDEX


class Custom(Exception):
    pass


@pytest.mark.parametrize("exc, cls, msg", [
    (ZeroDivisionError("division by zero"), errors.CKZeroDivisionError, "division by zero"),
    (IndexError("i"), errors.CKIndexError, "i"),
    (OverflowError("o"), errors.CKOverflowError, "o"),
    (ValueError("v"), errors.CKValueError, "v"),
    (UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), errors.CKValueError,
     "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: bad"),
    (TypeError(""), errors.CKTypeError, "TypeError"),
    (MemoryError("m"), errors.OutOfMemoryError, "m"),
    (Custom("c"), errors.UserKernelError, "Custom: c"),
    (KeyError("k"), errors.UserKernelError, "KeyError: 'k'"),
    (errors.ParseError("p"), errors.ParseError, "p"),
])
def test_classify_and_record(exc, cls, msg):
    status, text = errors.classify(exc)
    assert (errors.error_class(status), text) == (cls, msg)
    assert type(errors.exception_for(exc)) is cls
    assert errors.record(exc) == status
    assert ffi.string(lib.ck_last_error()).decode() == msg


def test_device_errors_use_the_same_mapping():
    from ckernels.jit.device import device_error

    class Prog:
        errors = [(ZeroDivisionError, ("division by zero",)), (Custom, ("c", 2)),
                  (UnicodeError, ())]
    e = device_error(Prog.errors, 1, "f", "X")
    assert type(e) is errors.CKZeroDivisionError and str(e) == "division by zero"
    assert type(device_error(Prog.errors, 2, "f", "X")) is errors.UserKernelError
    assert str(device_error(Prog.errors, 3, "f", "X")) == "UnicodeError"
    assert "unknown error code 9" in str(device_error(Prog.errors, 9, "f", "X"))
