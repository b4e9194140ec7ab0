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

    monkeypatch.setattr(_native, "lib", _fake_lib(ck_layout_table=staticmethod(fake)))
    problems = _native.layout_mismatches()
    assert any("ck_memblock.kind" in p and "offset/size" in p for p in problems)
    with pytest.raises(ImportError, match="disagree on ABI versions or struct layouts"):
        _native.verify_layout()


def _fake_lib(**over):
    """The real lib's version entries, some replaced."""
    attrs = {name: getattr(lib, name) for name in (
        "CK_ABI_VERSION", "CK_KERNEL_ABI_VERSION", "ck_layout_table")}
    attrs["ck_abi_version"] = staticmethod(lib.ck_abi_version)
    attrs["ck_kernel_abi_version"] = staticmethod(lib.ck_kernel_abi_version)
    attrs.update(over)
    return type("L", (), attrs)


def test_abi_version_mismatch_refuses(monkeypatch):
    # a libckernel of an older ABI (before dimension variables) under a
    # cffi module compiled against the current headers
    assert _native.abi_mismatches() == []
    monkeypatch.setattr(_native, "lib", _fake_lib(ck_abi_version=staticmethod(lambda: 1)))
    assert _native.abi_mismatches() == [
        f"ABI version: cffi module {lib.CK_ABI_VERSION} != libckernel 1"]
    with pytest.raises(ImportError,
                       match=f"ABI version: cffi module {lib.CK_ABI_VERSION} != libckernel 1"):
        _native.verify_layout()


def test_versions():
    assert ckernels.__version__ == "0.1.0"
    # 2: dimension variables and kernels over core dims; 3: option types and
    # their validity bitmaps; 4: time and dictionary types; 5: struct results of
    # jitted kernels holding strings (ckernel/config.h)
    assert ckernels.abi_version == lib.ck_abi_version() == lib.CK_ABI_VERSION == 6
    assert lib.ck_kernel_abi_version() == lib.CK_KERNEL_ABI_VERSION == 1


def test_layout_table_covers_jit_kernel_desc():
    rows = _native.layout_rows()
    for field in ("dst_pattern", "src_patterns", "src_ids", "name", "dst_struct"):
        assert ("ck_jit_kernel_desc", field) in rows
