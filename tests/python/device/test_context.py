"""Contexts, buffers and programs from Python: CPU always, OpenCL through PoCL
when a platform exists (skipped with the library's reason otherwise)."""

import numpy as np
import pytest

import ckernels
from ckernels import errors


@pytest.fixture(params=["cpu", "opencl"])
def ctx(request, new_opencl_context):
    return ckernels.Context("cpu") if request.param == "cpu" else new_opencl_context()


def test_buffer_allocate_free_merge_grow(ctx):
    buf = ctx.new_buffer(256)
    offs = [buf.allocate(64, align=16) for _ in range(4)]
    assert sorted(offs) == offs and all(o % 16 == 0 for o in offs)
    assert buf.capacity == 256 and buf.used == 256
    data = np.arange(16, dtype=np.float32)
    buf.write(offs[0], data)
    for o in offs[1:]:
        buf.free(o, 64)
    assert buf.allocate(192) == offs[1]        # freed neighbours merged
    with pytest.raises(errors.CKernelError):
        buf.free(offs[1] + 8, 64)               # not an allocation
    big = buf.allocate(1000)                    # no room: the buffer grows
    assert buf.capacity >= 1256 and big >= 256
    np.testing.assert_array_equal(buf.to_numpy(offs[0], np.float32, 16), data)
    buf.fill(big, b"\x01\x02", 10)
    assert bytes(buf.read(big, 10)) == b"\x01\x02" * 5


def test_copy_between_buffers_and_contexts(ctx):
    a, b = ctx.new_buffer(128), ctx.new_buffer(128)
    a.write(0, b"hello world!")
    b.copy_from(4, a, 0, 12)
    assert bytes(b.read(4, 12)) == b"hello world!"
    other = ckernels.Context("cpu").new_buffer(64)
    with pytest.raises(errors.InvalidArgumentError, match="different contexts"):
        other.copy_from(0, a, 0, 8)
    with pytest.raises(errors.CKIndexError):
        a.read(120, 64)


def test_context_errors_and_repr():
    with pytest.raises(errors.CKernelError, match="kind"):
        ckernels.Context("tpu")
    # cuda: a context where there is a driver and a device, else the reason
    # ("no CUDA driver found", "CUDA driver present but no device")
    try:
        assert ckernels.Context("cuda").kind == "cuda"
    except errors.BackendError as exc:
        assert "CUDA" in str(exc)
    c = ckernels.Context("cpu")
    assert c.kind == "cpu" and "cpu" in repr(c)


def test_opencl_program_build_cache_and_launch(new_opencl_context):
    ctx = new_opencl_context()
    src = """__kernel void axpb(__global float *y, __global const float *x, uint n) {
        size_t i = get_global_id(0);
        if (i < n) y[i] = 2.0f * x[i] + 1.0f;
    }"""
    prog = ctx.build_program(src)
    assert ctx.build_program(src)._prog == prog._prog   # the program cache
    n = 100_003
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    bx, by = ctx.new_buffer(4 * n), ctx.new_buffer(4 * n)
    bx.write(0, x)
    prog.launch("axpb", n, (by, 0), (bx, 0), np.uint32(n))
    np.testing.assert_array_equal(by.to_numpy(0, np.float32, n), 2.0 * x + 1.0)
    with pytest.raises(errors.BackendError, match="CL_BUILD_PROGRAM_FAILURE"):
        ctx.build_program("__kernel void broken( { }")
    with pytest.raises(errors.BackendError, match="CL_INVALID_KERNEL_NAME"):
        prog.launch("nope", 1, (by, 0))
    with pytest.raises(errors.InvalidArgumentError):
        prog.launch("axpb", 1, "not an argument")
    assert "OpenCL" in ctx.describe() or "opencl" in ctx.describe()
