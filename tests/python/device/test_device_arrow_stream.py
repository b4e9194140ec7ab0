"""Arrow's C device stream interface on device arrays
(``__arrow_c_device_stream__``: one-array streams made by the C core's
``ck_arrow_device_stream_of``) and importing another producer's device
arrays and streams with ``ctx.array(obj)`` (``docs/interop.md``): our own
exports round-tripped through producers that speak only the device
interface, nanoarrow's CPU device arrays, the context check of OpenCL
buffers, the refusals."""

import ctypes

import numpy as np
import pytest

import ckernels
from ckernels import _arrow
from ckernels._native import ffi, lib
from ckernels.device.array import DeviceArray
from ckernels.device.nulls import DeviceOptionArray
from ckernels.device.varlen import DeviceVarArray
from ckernels.errors import InvalidArgumentError, NotSupportedError

pa = pytest.importorskip("pyarrow")

ARROW_DEVICE_CPU, ARROW_DEVICE_CUDA, ARROW_DEVICE_OPENCL = 1, 2, 4

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


@pytest.fixture(scope="module")
def ctx(new_opencl_context):
    return new_opencl_context()


class DeviceOnly:
    """Another producer: only the device interface of ``obj`` (an array, or
    a stream when ``stream``)."""

    def __init__(self, obj, stream=False):
        self.obj = obj
        if stream:
            self.__class__ = DeviceStreamOnly

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.obj.__arrow_c_device_array__(requested_schema)


class DeviceStreamOnly:
    def __arrow_c_device_stream__(self, requested_schema=None, **kwargs):
        return self.obj.__arrow_c_device_stream__(requested_schema)


class Capsules:
    """A producer handing out two capsules made elsewhere (once)."""

    def __init__(self, schema, array):
        self.caps = (schema, array)

    def __arrow_c_device_array__(self, requested_schema=None, **kwargs):
        return self.caps


def _read_stream(cap):
    """``(format, [(device type, device id, length, null count)], end seen)``
    read through the stream's own callbacks, as a C consumer does."""
    s = ffi.cast("struct ArrowDeviceArrayStream *",
                 _get_pointer(cap, b"arrow_device_array_stream"))
    schema = ffi.new("struct ArrowSchema *")
    assert s.get_schema(s, schema) == 0
    fmt = ffi.string(schema.format).decode()
    schema.release(schema)
    assert s.get_last_error(s) == ffi.NULL
    arrays = []
    while True:
        out = ffi.new("struct ArrowDeviceArray *")
        assert s.get_next(s, out) == 0
        if out.array.release == ffi.NULL:
            break
        arrays.append((int(out.device_type), int(out.device_id), int(out.array.length),
                       int(out.array.null_count)))
        out.array.release(ffi.addressof(out.array))
    assert int(s.device_type) == (arrays[0][0] if arrays else s.device_type)
    s.release(s)
    assert s.release == ffi.NULL
    return fmt, arrays


def test_streams_of_every_device_array_kind(ctx):
    cases = [(ctx.array(np.arange(5.0)), "g", 0),
             (ctx.array(np.array([True, False, True])), "b", 0),
             (ctx.array(["a", "héllo", ""]), "U", 0),
             (ctx.array([[1.0], [], [2.0, 3.0]]), "+L", 0),
             (ctx.array([1, None, 3, None]), "l", 2),
             (ctx.array(["x", None]), "U", 1)]
    for d, fmt, nulls in cases:
        got_fmt, arrays = _read_stream(d.__arrow_c_device_stream__())
        assert got_fmt == fmt
        assert arrays == [(ARROW_DEVICE_OPENCL, arrays[0][1], d.size, nulls)]
        # a consumer of streams gets the same elements back (var dims: refused)
        if fmt == "+L":
            with pytest.raises(NotSupportedError, match="'[+]L'"):
                ctx.array(DeviceOnly(d, stream=True))
            continue
        back = ctx.array(DeviceOnly(d, stream=True))
        assert back.tolist() == d.tolist() and type(back) is type(d)


def test_stream_is_dropped_unread_and_bad_arguments(ctx):
    d = ctx.array([1.5, None])
    cap = d.__arrow_c_device_stream__()
    del cap          # released by the capsule: the owner goes (no leak, no crash)
    with pytest.raises(NotImplementedError, match="keyword"):
        d.__arrow_c_device_stream__(copy=True)
    want = _arrow.schema_format(pa.schema([("a", pa.int32())]).field(0).type.__arrow_c_schema__())
    with pytest.raises(NotSupportedError, match="requested"):
        ctx.array(np.arange(3.0)).__arrow_c_device_stream__(
            pa.int32().__arrow_c_schema__())
    assert want == "i"
    with pytest.raises(NotSupportedError, match="one dim"):
        ctx.array(ckernels.array([[1, None], [2, 3]])).__arrow_c_device_stream__()


def test_nanoarrow_reads_the_stream_arrays(ctx):
    nad = pytest.importorskip("nanoarrow.device")
    d = ctx.array(["ab", None, "c"])
    cap = d.__arrow_c_device_stream__()
    s = ffi.cast("struct ArrowDeviceArrayStream *",
                 _get_pointer(cap, b"arrow_device_array_stream"))
    schema = ffi.new("struct ArrowSchema *")
    out = ffi.new("struct ArrowDeviceArray *")
    assert s.get_schema(s, schema) == 0 and s.get_next(s, out) == 0
    caps = _arrow.wrap_device_array(int(ffi.cast("uintptr_t", schema)),
                                    int(ffi.cast("uintptr_t", out)))
    s.release(s)
    arr = nad.c_device_array(Capsules(*caps))
    assert arr.device_type_id == ARROW_DEVICE_OPENCL and arr.array.length == 3
    assert arr.array.null_count == 1 and arr.schema.format == "U"


# ---- importing ----------------------------------------------------------------------------
def test_own_exports_round_trip(ctx):
    sources = [np.arange(7, dtype=np.int32), np.linspace(0, 1, 5),
               np.array([True, False, True, True, False, True, True, False, True]),
               ["a", "", "é€", "long text " * 5], [1.5, None, -2.0],
               pa.array([None, 1, 2, None, 4, 5, None, 7, 8]).slice(3),
               ["x", None, "yz"], pa.array([], pa.int64())]
    for src in sources:
        d = ctx.array(src)
        got = ctx.array(DeviceOnly(d))
        assert got.tolist() == d.tolist(), src
        assert type(got) is type(d)
        assert got.context == ctx
        if isinstance(got, DeviceOptionArray):
            assert got.null_count == d.null_count
    # the copy is ours: the producer's buffers may go
    d = ctx.array(np.arange(4.0))
    got = ctx.array(DeviceOnly(d))
    del d
    assert got.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_nanoarrow_cpu_device_arrays_at_offsets(ctx):
    nad = pytest.importorskip("nanoarrow.device")
    for p in (pa.array([1, None, 3, 4, None, 6, 7, 8, 9]).slice(2, 6),
              pa.array(["a", None, "bcd", "", "é"]).slice(1),
              pa.array([True, None, False, True]).slice(1),
              pa.array(np.arange(10.0)).slice(4, 3)):
        arr = nad.c_device_array(p)
        assert arr.device_type_id == ARROW_DEVICE_CPU
        got = ctx.array(arr)
        assert got.tolist() == p.to_pylist()
        assert isinstance(got, (DeviceArray, DeviceVarArray, DeviceOptionArray))


def test_opencl_buffers_of_another_context_are_refused(ctx, new_opencl_context):
    other = new_opencl_context()
    d = other.array(np.arange(3.0))
    with pytest.raises(InvalidArgumentError, match="context"):
        ctx.array(DeviceOnly(d))
    assert other.array(DeviceOnly(d)).tolist() == [0.0, 1.0, 2.0]


def _fake(device_type, device_id=0, fmt_array=np.arange(3.0)):
    """Capsules of an ArrowDeviceArray on ``device_type`` whose buffer
    pointers are never read (the importer refuses it first)."""
    node = ffi.new("ck_arrow_node *")
    node.length = 3
    node.n_buffers = 2
    node.buffers[1] = ffi.cast("void *", 0x1000)
    dev = ffi.new("struct ArrowDeviceArray *")
    assert lib.ck_arrow_wrap(node, device_type, device_id, ffi.NULL, ffi.NULL, dev) == 0
    schema = ffi.new("struct ArrowSchema *")
    h = ckernels.asarray(fmt_array)
    assert lib.ck_arrow_export_schema(h._a, ffi.NULL, schema) == 0
    return Capsules(*_arrow.wrap_device_array(int(ffi.cast("uintptr_t", schema)),
                                              int(ffi.cast("uintptr_t", dev))))


def test_refusals(ctx):
    with pytest.raises(NotSupportedError, match="ARROW_DEVICE_CUDA.*opencl"):
        ctx.array(_fake(ARROW_DEVICE_CUDA))
    with pytest.raises(InvalidArgumentError, match="device 7"):
        ctx.array(_fake(ARROW_DEVICE_OPENCL, 7))
    with pytest.raises(NotSupportedError, match="ARROW_DEVICE_OPENCL.*cpu"):
        ckernels.Context("cpu").array(_fake(ARROW_DEVICE_OPENCL))
    st = ctx.array([[1.0, 2.0], [3.0]])
    with pytest.raises(NotSupportedError, match="format"):
        ctx.array(DeviceOnly(st))
