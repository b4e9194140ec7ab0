"""The import-time ABI check: cffi's struct layouts equal the library's."""

import pytest

import ckernels
from ckernels import _native
from ckernels.lowlevel import ffi, lib


def test_layout_table_matches():
    assert _native.layout_mismatches() == []


def test_layout_table_covers_memblock():
    count = ffi.new("size_t *")
    table = lib.ck_layout_table(count)
    rows = {(ffi.string(table[i].type).decode(), ffi.string(table[i].field).decode()):
            (table[i].offset, table[i].size) for i in range(count[0])}
    assert rows[("ck_memblock", "")] == (4, 8)
    assert rows[("ck_memblock", "refcount")] == (0, 4)
    assert rows[("ck_memblock", "kind")] == (4, 4)
    assert ("ck_pod_allocator_api", "resize") in rows


def test_mismatch_is_detected_and_refuses(monkeypatch):
    # Simulate a library whose ck_memblock.kind moved: the check must name it.
    real = lib.ck_layout_table

    class FakeRow:
        def __init__(self, row, offset):
            self.type, self.field, self.offset, self.size = row.type, row.field, offset, row.size

    def fake(count):
        table = real(count)
        rows = []
        for i in range(count[0]):
            row = table[i]
            moved = ffi.string(row.field) == b"kind"
            rows.append(FakeRow(row, row.offset + 8 if moved else row.offset))
        return rows

    monkeypatch.setattr(_native, "lib", type("L", (), {"ck_layout_table": staticmethod(fake)}))
    problems = _native.layout_mismatches()
    assert any("ck_memblock.kind" in p and "offset/size" in p for p in problems)
    with pytest.raises(ImportError, match="disagree on struct layouts"):
        _native.verify_layout()


def test_versions():
    assert ckernels.__version__ == "0.1.0"
    assert ckernels.abi_version == lib.ck_abi_version() >= 1
