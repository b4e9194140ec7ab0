"""Every public spelling of the context and device side still works after the
device-wing split (issue 30): the names and import paths that tests, docs
and notebooks used before (``ckernels.Context``, ``ckernels.context.*``,
``ckernels.opencl``, ``ctx.array/empty/zeros/ones/full/to/from_dlpack``,
``a.context``, the DeviceArray import paths, the old module paths kept as
aliases of the modules that moved), each checked against what it names now."""

import importlib
import pickle

import numpy as np
import pytest

import ckernels

#: old module path -> the module it names now (the thin modules of
#: numba_ext/context/ replace themselves with these in sys.modules)
MOVED = {
    "ckernels.context.backend_cuda": "ckernels.backends.cuda",
    "ckernels.context.backend_opencl": "ckernels.pyopencl_interop",
    "ckernels.context.dlpack": "ckernels.backends.dlpack",
    "ckernels.context.device_array": "ckernels.device.array",
    "ckernels.context.device_ops": "ckernels.device.ops",
    "ckernels.context.user_kernels": "ckernels.user_kernels.build",
    "ckernels.context.user_kernel_args": "ckernels.user_kernels.args",
    "ckernels.context.user_kernel_compile": "ckernels.user_kernels.compile",
    "ckernels.context.context": "ckernels.device.place",
    # renamed so that each name has one meaning: the compiled module for what it
    # holds, "layout" for the C library's ABI table, hand-written kernels' sources
    # beside them, the pyopencl interop beside OpenCL's backend (public path kept)
    "ckernels._dispatch": "ckernels._ufuncs",
    "ckernels.host.layout": "ckernels.host.arrmeta",
    "ckernels.context.kernel_source": "ckernels.user_kernels.source",
    "ckernels.opencl": "ckernels.pyopencl_interop",
}

#: modules that kept their path
KEPT = ["ckernels.context", "ckernels.context.buffer", "ckernels.context.program",
        "ckernels.context.device_program",
        "ckernels.routing", "ckernels.dialects", "ckernels.jit.device", "ckernels.jit.device_dims"]


@pytest.mark.parametrize("old,new", sorted(MOVED.items()))
def test_old_module_paths_are_the_moved_modules(old, new):
    assert importlib.import_module(old) is importlib.import_module(new)


@pytest.mark.parametrize("name", KEPT)
def test_kept_module_paths_import(name):
    importlib.import_module(name)


def test_package_names():
    from ckernels.context import Buffer, Context, DeviceArray, Program
    from ckernels.context import check_context, default_context, same_context
    from ckernels.context.buffer import Buffer as B2
    from ckernels.context.program import Program as P2
    assert Context is ckernels.Context and DeviceArray is ckernels.DeviceArray
    assert Buffer is ckernels.Buffer is B2 and Program is P2
    assert ckernels.context.Context is ckernels.Context
    assert ckernels.context.DeviceArray is ckernels.DeviceArray
    assert isinstance(default_context("cpu"), ckernels.Context)
    assert check_context(default_context("cpu"), "t") is default_context("cpu")
    assert same_context(default_context("cpu"), ckernels.Context.default("cpu"))
    with pytest.raises(AttributeError):
        ckernels.context.no_such_name
    # the DeviceArray import paths
    from ckernels.opencl import DeviceArray as D1
    from ckernels.context.device_array import DeviceArray as D2
    from ckernels.device.array import DeviceArray as D3
    assert D1 is D2 is D3 is ckernels.DeviceArray
    # ckernels.opencl, ckernels.context.backend_opencl and the package's aliases
    from ckernels.opencl import (array, empty, from_pyopencl, from_pyopencl_buffer,  # noqa: F401
                                 same_context as sc, same_memory, to, to_device, to_pyopencl)
    assert ckernels.from_pyopencl is from_pyopencl and ckernels.to_pyopencl is to_pyopencl
    from ckernels.context import backend_opencl
    assert backend_opencl.from_pyopencl is from_pyopencl
    # the CUDA module's public functions under the old path
    from ckernels.context import backend_cuda as ccuda
    for n in ("compile_ptx", "nvrtc_version", "nvrtc_wheel_dirs", "device_count",
              "context_device", "parse_cuda_array_interface", "extent", "prepare"):
        assert callable(getattr(ccuda, n)), n
    from ckernels.context import dlpack as dl
    for n in ("consume", "export", "live_exports", "KDL_CPU", "KDL_CUDA", "KDL_OPENCL"):
        assert hasattr(dl, n), n
    from ckernels.context.user_kernels import compile_ptx  # noqa: F401
    from ckernels.context.device_ops import conversion, gathering, operations, reductions
    assert conversion.__name__ == "ckernels.device.ops.conversion"
    from ckernels.context.kernel_source import kernel_program
    from ckernels.user_kernels.source import kernel_program as kp2
    assert kernel_program is kp2
    # the renamed compiled module and host module under their old names
    from ckernels._dispatch import Function
    from ckernels._ufuncs import Function as F2
    assert Function is F2 and isinstance(ckernels.ops.add, Function)
    from ckernels.host.layout import numpy_dtype
    from ckernels.host.arrmeta import numpy_dtype as nd2
    assert numpy_dtype is nd2
    assert ckernels.opencl is importlib.import_module("ckernels.opencl") is \
        importlib.import_module("ckernels.pyopencl_interop")
    from ckernels.jit.device import device_error  # noqa: F401


def _context_methods(ctx):
    for n in ("array", "empty", "zeros", "ones", "full", "to", "from_dlpack", "new_buffer",
              "build_program", "wrap_buffer", "describe", "finish", "build_kernels",
              "native_handles", "pyopencl_queue", "default", "from_opencl", "from_pyopencl"):
        assert callable(getattr(ctx, n)), n
    assert isinstance(ctx.kind, str) and isinstance(ctx.brief, str)
    assert isinstance(ctx.is_device, bool) and isinstance(ctx.supports_fp64, bool)
    ctx.kernels     # the namespace of hand-written kernels


def test_cpu_context_spellings():
    ctx = ckernels.Context("cpu")
    _context_methods(ctx)
    h = np.arange(6.0).reshape(2, 3)
    for a in (ctx.array(h), ctx.array(h, "float32"), ctx.to(h), ctx.from_dlpack(h)):
        assert isinstance(a, ckernels.Array)
        np.testing.assert_array_equal(np.asarray(a), h)
    assert ctx.empty((2, 3), "int32").shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(ctx.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(ctx.ones(3, "int8")), np.ones(3, np.int8))
    np.testing.assert_array_equal(np.asarray(ctx.full((2,), 7.5)), np.full(2, 7.5))
    # a.context of a host array: the public shared CPU Context itself (the device
    # layer publishes the class the handle layer makes), placing methods included;
    # routing.context_of gives the public Context of any array
    a = ckernels.array([1.0, 2.0])
    assert a.context.kind == "cpu" and a.context == ckernels.Context.default("cpu")
    assert a.context is ckernels.array([3]).context
    from ckernels.routing import context_of
    assert context_of(a) is ckernels.Context.default("cpu")
    assert context_of(a) == a.context
    assert isinstance(context_of(a), ckernels.Context)
    assert a.context is ckernels.Context.default("cpu")
    assert isinstance(a.context, ckernels.Context)
    assert a.context.array([1.0, 2.0]).tolist() == [1.0, 2.0]   # as before the move


def test_device_context_spellings(new_opencl_context):
    ctx = new_opencl_context()
    _context_methods(ctx)
    h = np.arange(6.0).reshape(2, 3)
    made = [ctx.array(h), ctx.array(h, "float64"), ctx.to(h), ctx.empty((2, 3)),
            ctx.empty((2, 3), "float64"), ctx.empty("2 * 3 * float64"), ctx.zeros((2, 3)),
            ctx.ones((2, 3), "float64"), ctx.full((2, 3), 1.5)]
    for d in made:
        assert isinstance(d, ckernels.DeviceArray) and d.context is ctx and d.shape == (2, 3)
    d = made[0]
    np.testing.assert_array_equal(d.to_numpy(), h)
    assert ctx.to(d) is d
    shared = ctx.from_dlpack(d)
    assert isinstance(shared, ckernels.DeviceArray) and shared.buffer.native_handle == \
        d.buffer.native_handle
    from ckernels.routing import context_of
    assert context_of(d) is ctx
    # ckernels.opencl's historical functions
    from ckernels import opencl as ocl
    np.testing.assert_array_equal(ocl.to_device(ctx, h).to_numpy(), h)
    assert ocl.empty(ctx, (3,)).shape == (3,)
    np.testing.assert_array_equal(ocl.array(ctx, h).to_numpy(), h)
    np.testing.assert_array_equal(ocl.to(ctx, h).to_numpy(), h)
    # pickling goes to the default context of the kind (a public Context)
    p = pickle.loads(pickle.dumps(d))
    assert p.context is ckernels.context.default_context("opencl")
    assert isinstance(p.context, ckernels.Context)
    # pyopencl both ways (zero-copy in one cl_context)
    pytest.importorskip("pyopencl")
    pa = d.to_pyopencl()
    back = ckernels.from_pyopencl(pa, ctx)
    assert back.buffer.native_handle == d.buffer.native_handle
    assert ocl.same_memory(d, pa)


def test_backends_sit_below_the_arrays_and_hand_back_raw_parts(new_opencl_context):
    """The backends know raw memory only (issue 30): ranked below the host and
    device arrays, their import hooks hand back ``Raw`` parts, and the device
    layer makes the array."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[3] / "tools" / "check_py_layers.py"
    spec = importlib.util.spec_from_file_location("check_py_layers", path)
    lc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lc)
    lc.check(str(path.parents[1] / "numba_ext"))
    for b in ("ckernels.backends", "ckernels.backends.opencl", "ckernels.backends.cuda",
              "ckernels.backends.dlpack"):
        for above in ("ckernels.context.handle", "ckernels.host.array", "ckernels.device.base",
                      "ckernels.device.array", "ckernels.device.place"):
            assert lc.rank_of(b) < lc.rank_of(above), (b, above)
    from ckernels import backends
    from ckernels.backends import dlpack as dl
    from ckernels.backends.raw import Raw
    from ckernels.device import interop
    assert set(backends.BACKENDS) == {"opencl", "cuda"}
    assert backends.hook("cpu", "adopt") is None and backends.hook("nope", "adopt") is None
    ctx = new_opencl_context()
    d = ctx.array(np.arange(6, dtype=np.int32).reshape(2, 3))
    raw = backends.hook("opencl", "dlpack_adopt")(ctx, dl.consume(d.__dlpack__()))
    assert isinstance(raw, Raw) and not isinstance(raw, ckernels.DeviceArray)
    assert (raw.native, raw.offset, raw.shape, raw.strides, raw.dtype) == \
        (d.buffer.native_handle, d.offset, (2, 3), (12, 4), np.dtype(np.int32))
    e = interop.array_of(ctx, raw, "test")
    assert isinstance(e, ckernels.DeviceArray) and e.context is ctx
    np.testing.assert_array_equal(e.to_numpy(), d.to_numpy())
    pytest.importorskip("pyopencl")
    p = d.to_pyopencl()
    raw = backends.hook("opencl", "adopt")(ctx, p)
    assert isinstance(raw, Raw) and raw.native == d.buffer.native_handle
    assert backends.hook("opencl", "adopt")(ctx, np.zeros(3)) is None
