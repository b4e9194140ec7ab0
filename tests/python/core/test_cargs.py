"""Values handed to C (ckernels._cargs): text, sizes and addresses.

Every public entry point that passes text to C rejects a NUL (C would cut the
text there: ``types.parse("int8\\x00junk")`` used to give ``int8``) and a lone
surrogate (``UnicodeEncodeError`` before), naming what the text was for; every
size, offset, count and alignment that does not fit its C type is a
``ValueError`` naming the value (cffi's "int too big to convert" before);
integer addresses handed to low-level wrappers are checked as far as possible
without touching them.
"""

import sys

import numpy as np
import pytest

import ckernels
from ckernels import _cargs, errors, kernels, ops
from ckernels import types as T
from ckernels._native import ffi, lib
from ckernels.memory import MemBlock

_array_mod = sys.modules["ckernels.host.array"]   # ckernels.array is also the function


@ckernels.jit("float64(float64)")
def _twice(x):
    return 2.0 * x


BAD_TEXT = [("x\x00y", "NUL"), ("x\ud800y", "surrogate")]

#: entry point -> (call with the bad text, exception class, what the message names)
TEXT_ENTRY_POINTS = {
    "types.parse": (lambda t: T.parse("int8" + t), errors.ParseError, "type string"),
    "types.Type": (lambda t: T.Type("int8" + t), errors.ParseError, "type string"),
    "types.fixed_dim element": (lambda t: T.fixed_dim(2, "int8" + t), errors.ParseError,
                                "type string"),
    "types.struct field name": (lambda t: T.struct({"a" + t: "int8"}),
                                errors.InvalidArgumentError, "struct field name"),
    "jit signature": (lambda t: ckernels.jit(f"float64(float64{t})"), TypeError,
                      "type string"),
    "Context kind": (lambda t: ckernels.Context("cpu" + t), errors.InvalidArgumentError,
                     "context kind"),
    "errmode": (lambda t: kernels.make_assignment_kernel("int32", "float64",
                                                         errmode="default" + t),
                errors.InvalidArgumentError, "errmode"),
    "ops.Op": (lambda t: ops.Op("add" + t), errors.InvalidArgumentError, "operation name"),
    "make_op_kernel": (lambda t: kernels.make_op_kernel(
        "add" + t, ckernels.array([1.0]), ckernels.array([1.0]), ckernels.array([1.0])),
        errors.InvalidArgumentError, "operation name"),
    "ops.register_kernel": (lambda t: ops.register_kernel("myop" + t, "float64", ["float64"],
                                                          1, 1),
                            errors.InvalidArgumentError, "operation name"),
    "JitKernel.register": (lambda t: _twice.register("twice" + t),
                           errors.InvalidArgumentError, "operation name"),
    "Context.build_program source": (lambda t: ckernels.Context("cpu").build_program("k" + t),
                                     errors.InvalidArgumentError, "program source"),
    "Context.build_program options": (lambda t: ckernels.Context("cpu").build_program(
        "k", options="-O2" + t), errors.InvalidArgumentError, "build options"),
    "Array field name": (lambda t: ckernels.array([{"a": 1}], type="1 * {a: int32}")["a" + t],
                         errors.CKIndexError, "field name"),
    "array.apply_op": (lambda t: _array_mod.apply_op("add" + t, [ckernels.array([1.0]),
                                                                ckernels.array([2.0])]),
                       errors.InvalidArgumentError, "operation name"),
    "array.reduce_op": (lambda t: _array_mod.reduce_op("sum" + t, ckernels.array([1.0])),
                        errors.InvalidArgumentError, "operation name"),
}


@pytest.mark.parametrize("bad, kind", BAD_TEXT, ids=["nul", "surrogate"])
@pytest.mark.parametrize("entry", list(TEXT_ENTRY_POINTS))
def test_text_with_nul_or_surrogate_is_rejected(entry, bad, kind):
    call, exc, what = TEXT_ENTRY_POINTS[entry]
    with pytest.raises(exc, match=kind) as info:
        call(bad)
    assert what in str(info.value)
    assert not isinstance(info.value, UnicodeError)


def test_nul_no_longer_truncates():
    # the reported bug: C read "int8" and returned it
    with pytest.raises(errors.ParseError, match="NUL character"):
        T.parse("int8\x00junk")
    assert T.parse("int8") == T.int8


def test_string_values_keep_nul_and_reject_surrogates():
    a = ckernels.array(["a\x00b"], type="1 * string")
    assert a.to_list() == ["a\x00b"]
    with pytest.raises(errors.CKValueError, match="surrogate"):
        ckernels.array(["a\ud800"], type="1 * string")


def test_labels_never_fail():
    assert _cargs.c_text("f\x00\ud800", "label", lossy=True) == b"f\\0\\ud800"
    assert _cargs.c_message(ValueError("x")) == b"x"
    with pytest.raises(errors.CKTypeError, match="must be a str"):
        _cargs.c_text(b"int8", "type string")


# ------------------------------------------------------------------ sizes --
def _buffer():
    return ckernels.Context("cpu").new_buffer(64)


SIZE_ENTRY_POINTS = {
    "MemBlock.pod": lambda n: MemBlock.pod(n),
    "MemBlock.zeroinit": lambda n: MemBlock.zeroinit(n),
    "MemBlock.fixed_size_pod size": lambda n: MemBlock.fixed_size_pod(n),
    "MemBlock.fixed_size_pod align": lambda n: MemBlock.fixed_size_pod(8, n),
    "PodAllocator.allocate size": lambda n: MemBlock.pod().allocator.allocate(n),
    "PodAllocator.allocate align": lambda n: MemBlock.pod().allocator.allocate(8, n),
    "PodAllocator.resize": lambda n: (lambda a: a.resize(a.allocate(8), n))(
        MemBlock.pod().allocator),
    "types.fixed_dim": lambda n: T.fixed_dim(n, "int8"),
    "types.bytes_type": lambda n: T.bytes_type(n),
    "set_num_threads": lambda n: ckernels.set_num_threads(n),
    "empty shape": lambda n: ckernels.empty("strided * int32", [n]),
    "KernelBuilder.ensure_capacity": lambda n: kernels.KernelBuilder().ensure_capacity(n),
    "KernelBuilder.address_at": lambda n: kernels.KernelBuilder().address_at(n),
    "Context.new_buffer": lambda n: ckernels.Context("cpu").new_buffer(n),
    "Buffer.allocate": lambda n: _buffer().allocate(n),
    "Buffer.free": lambda n: _buffer().free(n, 8),
    "Buffer.grow": lambda n: _buffer().grow(n),
    "Buffer.write": lambda n: _buffer().write(n, b"x"),
    "Buffer.read offset": lambda n: _buffer().read(n, 1),
    "Buffer.read nbytes": lambda n: _buffer().read(0, n),
    "Buffer.fill": lambda n: _buffer().fill(0, b"\x00", n),
    "Buffer.copy_from": lambda n: (lambda b: b.copy_from(0, b, n, 1))(_buffer()),
    "Buffer.to_numpy": lambda n: _buffer().to_numpy(0, "float64", n),
}


@pytest.mark.parametrize("bad", [-1, 2**64, -2**70], ids=["negative", "2**64", "huge"])
@pytest.mark.parametrize("entry", list(SIZE_ENTRY_POINTS))
def test_sizes_that_do_not_fit_name_the_value(entry, bad):
    with pytest.raises(ValueError, match=str(bad)) as info:
        SIZE_ENTRY_POINTS[entry](bad)
    # InvalidArgumentError; a negative shape keeps NumPy's message (CKValueError)
    assert isinstance(info.value, (errors.InvalidArgumentError, errors.CKValueError))
    assert "too big to convert" not in str(info.value)


@pytest.mark.parametrize("entry", ["MemBlock.pod", "types.fixed_dim", "set_num_threads",
                                   "empty shape", "Buffer.allocate"])
def test_sizes_must_be_integers(entry):
    with pytest.raises(TypeError, match="integer"):
        SIZE_ENTRY_POINTS[entry](2.5)


def test_numpy_integers_are_sizes():
    with MemBlock.pod(np.int64(64)) as mb:
        assert mb.allocator.allocate(np.uint8(3)).size == 3
    assert str(T.fixed_dim(np.int32(3), "int8")) == "3 * int8"
    assert ckernels.empty("strided * int32", (np.int64(2),)).shape == (2,)


def test_set_num_threads_range():
    old = ckernels.get_num_threads()
    with pytest.raises(ValueError, match=str(lib.CK_MAX_THREADS + 1)):
        ckernels.set_num_threads(lib.CK_MAX_THREADS + 1)
    ckernels.set_num_threads(0)
    ckernels.set_num_threads(old)


# -------------------------------------------------------------- addresses --
def test_memblock_addresses_are_checked():
    with pytest.raises(errors.InvalidArgumentError, match="NULL"):
        MemBlock(0)
    with pytest.raises(errors.InvalidArgumentError, match="NULL"):
        MemBlock(ffi.NULL)
    with pytest.raises(errors.InvalidArgumentError, match="aligned"):
        MemBlock(12)
    with pytest.raises(errors.InvalidArgumentError, match="not mapped"):
        MemBlock(8)
    with pytest.raises(errors.InvalidArgumentError, match="2\\*\\*64-1"):
        MemBlock(2**64)
    x = np.zeros(4)   # readable memory that is not a memblock
    with pytest.raises(errors.InvalidArgumentError, match="not a live memblock"):
        MemBlock(x.ctypes.data)
    with MemBlock.pod() as mb:
        other = MemBlock(mb.address, incref=True)   # a real block: accepted
        assert other.refcount == 2 and other.kind == "pod"
        other.close()


def test_array_from_address_is_checked():
    from ckernels.host.array import Array
    with pytest.raises(errors.InvalidArgumentError, match="NULL"):
        Array._from_address(0)
    with pytest.raises(errors.InvalidArgumentError, match="not mapped"):
        Array._from_address(64)
    with MemBlock.pod() as mb:
        with pytest.raises(errors.InvalidArgumentError, match="not a live array memblock"):
            Array._from_address(mb.address)
    a = ckernels.array([1, 2, 3])
    b = Array._from_address(a.address)
    assert b.to_list() == [1, 2, 3]


def test_registering_null_entry_points_is_rejected():
    with pytest.raises(errors.InvalidArgumentError, match="NULL"):
        ops.register_kernel("ck_test_null_entry", "float64", ["float64"], 0, 0)


def test_readable_probe():
    x = np.zeros(2)
    assert _cargs.readable(x.ctypes.data, x.nbytes)
    assert not _cargs.readable(8, 8)


# ------------------------------------------------- device programs (OpenCL) --
@pytest.fixture(scope="module")
def cl_program(new_opencl_context):
    ctx = new_opencl_context()
    prog = ctx.build_program("__kernel void k(__global int *x) { x[get_global_id(0)] = 7; }")
    return ctx, prog


@pytest.mark.parametrize("bad, kind", BAD_TEXT, ids=["nul", "surrogate"])
def test_program_launch_kernel_name(cl_program, bad, kind):
    ctx, prog = cl_program
    buf = ctx.new_buffer(64)
    with pytest.raises(errors.InvalidArgumentError, match=kind) as info:
        prog.launch("k" + bad, 1, (buf, 0))
    assert "kernel name" in str(info.value)


@pytest.mark.parametrize("bad", [-1, 2**64], ids=["negative", "2**64"])
@pytest.mark.parametrize("where", ["global_size", "offset", "local_size"])
def test_program_launch_sizes(cl_program, where, bad):
    ctx, prog = cl_program
    buf = ctx.new_buffer(64)
    args = {"global_size": (("k", bad, (buf, 0)), {}),
            "offset": (("k", 1, (buf, bad)), {}),
            "local_size": (("k", 1, (buf, 0)), {"local_size": bad})}[where]
    with pytest.raises(errors.InvalidArgumentError, match=str(bad)) as info:
        prog.launch(*args[0], **args[1])
    assert where in str(info.value)
    prog.launch("k", 4, (buf, 0))   # a good launch still runs
    ctx.finish()
    assert buf.to_numpy(0, "int32", 4).tolist() == [7] * 4
