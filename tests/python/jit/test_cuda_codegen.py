"""The CUDA C that ``@ckernels.jit`` emits, checked without a GPU (every run).

The corpus is every function of the device differential tests (the OpenCL
corpus and its math built-ins, the error-model cases, this file's issue-9
calls) and of the CPU jit corpus where a device supports it (no complex or
string types, no tuples), each with the inputs its own test uses.  For each:

1. **PTX**: the whole corpus, one CUDA C translation unit (each program in its
   own namespace, its kernel renamed), is compiled by NVRTC
   (``ck_cuda_compile_ptx``) for sm_80 and sm_90 and the PTX assembled by
   ``ptxas`` (CUDA toolkit, else the ``nvidia-cuda-nvcc`` wheel; skipped with
   the reason if neither).  A few programs are also compiled exactly as
   emitted, alone.
2. **Semantics**: the same translation unit compiled as C++ for the host with
   ``cuda_host_shim.h`` (blockIdx/threadIdx/atomicCAS/device math on host
   code, the grid run in a loop), loaded with ctypes, every kernel run on its
   inputs and compared with the CPU jit: exact for integers, <= 2 ulp for
   floats, the same nan/inf, the same exception (class and message) element by
   element where the CPU raises.  A broadcast 3-d launch checks the kernel's
   N-d index path.

What only a GPU can check (the device's math library, real launches) runs in
``test_cuda_device.py`` (marked ``cuda``; skipped here with the reason).
"""

from __future__ import annotations

import ctypes
import math
import operator
import os
import shutil
import subprocess

import numpy as np
import pytest

import ckernels
from ckernels import dtypes, errors
from ckernels.backends import cuda as ccuda
from ckernels.jit import c_emit
from ckernels import dialects
from ckernels.jit.device import target as _device_target
from ckernels.device import ops as device_ops
from ckernels.device.ops import conversion, gathering, operations, reductions
from ckernels.device.launch import element_at
from ckernels.jit.device import device_error
from ckernels.context.device_program import CONTIG_KERNEL_NAME

import test_c_emit as cemit_tests
from cuda_tools import (assemble_or_skip, compile_ptx_fast, host_shim_library,
                        ptx_assembled_or_skip)
import test_error_model as em_tests
import test_jit_corpus as cpu_tests
import test_opencl_api as api_tests
import test_opencl_jit as ocl_tests

pytestmark = pytest.mark.cuda

HERE = os.path.dirname(os.path.abspath(__file__))
ARCHS = ("sm_80", "sm_90")
BLOCK = dialects.CUDA_BLOCK
rng = np.random.default_rng(16)


# ------------------------------------------------------ issue 9 device calls --
@ckernels.jit("bool(bool)")
def k_bool_invert(x):
    return ~x


@ckernels.jit("bool(bool, bool)")
def k_bool_ops(a, b):
    return (~a & b) | (a ^ ~b)


@ckernels.jit("float64(float64, float64)")
def k_operator(x, y):
    return operator.add(x, y) * operator.mul(x, 0.5) - operator.neg(y) + operator.iadd(x, 1.0)


@ckernels.jit("int64(int64, int64)")
def k_operator_int(a, b):
    return operator.floordiv(a, b) + operator.mod(a, b) + operator.lshift(a & 7, 2) \
        + operator.xor(a, b) + operator.pow(b & 3, 2)


@ckernels.jit("int64(float64)")
def k_round(x):
    return round(x)


@ckernels.jit(["float64(float64)", "float32(float32)"])
def k_round_nd(x):
    return round(x, 2) + round(x, -1) + round(x, 0)


@ckernels.jit(["float64(float64)", "float32(float32)"])
def k_numpy_math(x):
    return np.sqrt(np.abs(x)) + np.sin(x) + np.exp(-np.abs(x)) + np.arctan2(x, 2.0) \
        + np.floor(x) + np.hypot(x, 3.0) + np.log1p(np.abs(x)) + np.rint(x) + np.degrees(x)


@ckernels.jit("bool(float64)")
def k_numpy_pred(x):
    return np.isnan(x) or np.isinf(x) or not np.isfinite(x)


@ckernels.jit("float64(float64, int32)")
def k_ldexp(x, e):
    return math.ldexp(x, e)


@ckernels.jit(["float64(float64, float64)", "float32(float32, float32)"])
def k_nextafter(x, y):
    return math.nextafter(x, y)


@ckernels.jit(["int64(int64, int64)", "int32(int32, int32)", "uint16(uint16, uint16)"])
def k_gcd(a, b):
    return math.gcd(a, b)


@ckernels.jit("float64(float64)")
def k_float_consts(x):
    return min(x, float("inf")) + max(x, float("-inf")) * 0.0


def _bools(n=64):
    return rng.integers(0, 2, n).astype(np.bool_)


_I_EDGE = np.array([0, 1, -1, 12, -18, 7, 2**62, -2**63, 2**63 - 1, 100], np.int64)

ISSUE9 = [
    ("bool_invert", k_bool_invert, lambda: [np.array([True, False, True])]),
    ("bool_ops", k_bool_ops, lambda: [_bools(), _bools()]),
    ("operator", k_operator, lambda: [ocl_tests._f(), ocl_tests._f()[::-1].copy()]),
    ("operator_int", k_operator_int, lambda: [ocl_tests._i(), ocl_tests._nz(ocl_tests._i())]),
    ("round", k_round, lambda: [np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.7, -3.2, 1e15, 0.0])]),
    ("round_nd64", k_round_nd, lambda: [np.concatenate([[0.125, 2.675, -1.005, 1e300, 5e-324,
                                                         np.inf, np.nan, 15.0, 25.0],
                                                        rng.standard_normal(100) * 100])]),
    ("round_nd32", k_round_nd, lambda: [(rng.standard_normal(100) * 100).astype(np.float32)]),
    ("numpy_math64", k_numpy_math, lambda: [ocl_tests._f(scale=4.0)]),
    ("numpy_math32", k_numpy_math, lambda: [ocl_tests._f(scale=4.0).astype(np.float32)]),
    ("numpy_pred", k_numpy_pred, lambda: [ocl_tests._f()]),
    ("ldexp", k_ldexp, lambda: [ocl_tests._f()[:150],
                                rng.integers(-1100, 1100, 150).astype(np.int32)]),
    ("nextafter64", k_nextafter, lambda: [ocl_tests._f(), ocl_tests._f()[::-1].copy()]),
    ("nextafter32", k_nextafter, lambda: [ocl_tests._f().astype(np.float32),
                                          ocl_tests._f()[::-1].astype(np.float32)]),
    ("gcd64", k_gcd, lambda: [np.concatenate([_I_EDGE, rng.integers(-10**6, 10**6, 100)]),
                              np.concatenate([_I_EDGE[::-1], rng.integers(-10**6, 10**6, 100)])]),
    ("gcd32", k_gcd, lambda: [rng.integers(-10**5, 10**5, 100).astype(np.int32),
                              rng.integers(-10**5, 10**5, 100).astype(np.int32)]),
    ("gcd_u16", k_gcd, lambda: [rng.integers(0, 2**16, 100).astype(np.uint16),
                                rng.integers(0, 2**16, 100).astype(np.uint16)]),
    ("float_consts", k_float_consts, lambda: [ocl_tests._f()]),
]


# --------------------------------------------------------------- the corpus --
def _cpu_corpus_entries():
    """The CPU jit corpus's functions with the inputs its test uses (those that
    fit the argument types), and the ones a device cannot run, with why."""
    out, refused = [], {}
    for name, sig, fn, jk, domains, rtol, vectorize in cpu_tests.CORPUS:
        argt = [a.strip() for a in sig[sig.index("(") + 1:-1].split(",")]
        if any(t not in dialects.get("cuda").types for t in argt + [sig[:sig.index("(")]]):
            refused[name] = "complex/string types"
            continue

        def make(domains=domains, argt=argt):
            rows = [r for r in cpu_tests._inputs(domains)
                    if all(cpu_tests._fits(a, t) for a, t in zip(r, argt))]
            return [np.array([r[i] for r in rows], dtype=cpu_tests._NP[t])
                    for i, t in enumerate(argt)]
        out.append((f"cpu_{name}", jk, make))
    return out, refused


def _error_model_entries():
    out = []
    for (f, sig, a, b), i in zip(em_tests.CASES, range(len(em_tests.CASES))):
        for model in ("python", "numpy"):
            k = ckernels.jit(sig, error_model=model)(f)
            out.append((f"em_{i}_{f.__name__}_{model}", k,
                        lambda sig=sig, a=a, b=b: em_tests._args(sig, a, b)))
    return out


def _math_entries():
    out = []
    for name in ocl_tests.MATH1 + ocl_tests.MATH2:
        nargs = 2 if name in ocl_tests.MATH2 else 1
        k = ocl_tests._math_kernel(name, nargs)

        def make(name=name, nargs=nargs):
            pos = name in ("sqrt", "log", "log10", "log2", "log1p")
            x = np.abs(ocl_tests._f(300, 5.0)) if pos else ocl_tests._f(300, 5.0)
            return [x] if nargs == 1 else [x, ocl_tests._f(300, 3.0)[::-1].copy()]
        out.append((f"math_{name}", k, make))
    return out


def _friends_entries():
    """The jitted functions of the other device tests (test_opencl_api.py,
    test_c_emit.py's dialect corpus)."""
    f = ocl_tests._f
    i, nz = ocl_tests._i, ocl_tests._nz
    return [
        ("api_axpy32", api_tests.axpy, lambda: [f().astype(np.float32),
                                                f()[::-1].astype(np.float32)]),
        ("api_axpy64", api_tests.axpy, lambda: [f(), f()[::-1].copy()]),
        ("api_axpy_i64", api_tests.axpy, lambda: [i(), i()[::-1].copy()]),
        ("api_idiv", api_tests.idiv, lambda: [i(), nz(i(edge=False, lo=-9, hi=9))]),
        ("cemit_corpus32", ckernels.jit("float32(float32, float32)")(cemit_tests.corpus),
         lambda: [f(scale=3).astype(np.float32), f(scale=3)[::-1].astype(np.float32)]),
        ("cemit_corpus64", ckernels.jit("float64(float64, float64)")(cemit_tests.corpus),
         lambda: [f(scale=3), f(scale=3)[::-1].copy()]),
        ("cemit_icorpus64", ckernels.jit("int64(int64, int64)")(cemit_tests.icorpus),
         lambda: [i(lo=-50, hi=50), i(lo=-50, hi=50)[::-1].copy()]),
        ("cemit_icorpus32", ckernels.jit("int64(int32, int32)")(cemit_tests.icorpus),
         lambda: [i(lo=-50, hi=50).astype(np.int32), i(lo=-50, hi=50)[::-1].astype(np.int32)]),
        ("cemit_not", ckernels.jit("bool(bool)")(lambda x: not x),
         lambda: [np.array([True, False, True])]),
    ]


class Entry:
    """One corpus program: its kernel, arguments and emitted CUDA C."""

    def __init__(self, index, name, kernel, args):
        self.index, self.name, self.kernel = index, name, kernel
        n = min(len(a) for a in args)
        self.args = [np.ascontiguousarray(a[:n]) for a in args]
        names = tuple(dtypes.of_numpy(a.dtype).name for a in self.args)
        self.comp = kernel.compiled.get(names) or kernel.compile(names)
        self.prog = _device_target("cuda").program(kernel, self.comp)
        self.ns = f"ck_p{index}"
        self.kname = f"{self.ns}_kernel"

    @property
    def ret_dtype(self):
        return dtypes.by_name[self.comp.sig.ret].numpy

    @property
    def has_contig(self) -> bool:
        """Whether the program has the contiguous variant of its kernel."""
        return f" {CONTIG_KERNEL_NAME}(" in self.prog.source

    def namespaced(self) -> str:
        src = self.prog.source.replace(f" {c_emit.KERNEL_NAME}(", f" {self.kname}(")
        src = src.replace(f" {CONTIG_KERNEL_NAME}(", f" {self.kname}_contig(")
        return f"namespace {self.ns} {{\n{src}}}  // namespace {self.ns}\n"

    def host_wrapper(self) -> str:
        nin = len(self.args)
        ins = "".join(f", in[{k}], in_off[{k}], in_stride[{k}]" for k in range(nin))
        text = ""
        for suffix in ("", "_contig") if self.has_contig else ("",):
            text += (f'extern "C" void {self.ns}_run{suffix}(unsigned char *out, '
                     f"unsigned long long out_off, "
                     f"long long out_stride, const unsigned char **in, "
                     f"const unsigned long long *in_off, const long long *in_stride, "
                     f"const long long *meta, int ndim, unsigned long long n, int *err, "
                     f"unsigned int block) {{\n"
                     f"  ck_shim_grid(n, block, [&] {{ {self.ns}::{self.kname}{suffix}(out, "
                     f"out_off, out_stride{ins}, meta, ndim, n, err); }});\n}}\n")
        return text


@pytest.fixture(scope="module")
def corpus():
    raw = [(f"ocl_{n}", fn, mk) for n, fn, mk in ocl_tests.CORPUS]
    raw += [(f"issue9_{n}", fn, mk) for n, fn, mk in ISSUE9]
    raw += _math_entries() + _error_model_entries() + _friends_entries()
    cpu, _ = _cpu_corpus_entries()
    entries, unsupported = [], {}
    for name, fn, make in raw + cpu:
        try:
            with np.errstate(all="ignore"):
                args = make()
            entries.append(Entry(len(entries), name, fn, args))
        except errors.NotSupportedError as exc:
            unsupported[name] = str(exc)
    return entries, unsupported


def test_corpus_covers_what_devices_support(corpus):
    entries, unsupported = corpus
    assert len(entries) >= 95
    # every function is emitted, tuples included; only the CPU corpus's
    # complex functions are left out (devices hold no complex numbers)
    assert not unsupported, unsupported
    _, refused = _cpu_corpus_entries()
    assert set(refused) == {"c_square", "c_abs"}
    names = {e.name for e in entries}
    assert {"cpu_tuple_swap", "cpu_tuple_index", "cpu_gcd", "cpu_clamp"} <= names


# --------------------------------------------------------------------- PTX --
def _nvrtc_or_skip():
    try:
        return ccuda.nvrtc_version()
    except errors.BackendError as exc:
        pytest.skip(f"no NVRTC (make cuda-tools): {exc}")


def _device_source(entries) -> str:
    return "\n".join(e.namespaced() for e in entries)


def test_corpus_compiles_to_ptx_and_assembles(corpus, tmp_path):
    """NVRTC for each architecture (sm_80 with cuda_tools.FAST_COMPILE, sm_90 with the
    library's own options), then ptxas on each PTX (concurrently)."""
    _nvrtc_or_skip()
    entries, _ = corpus
    src = _device_source(entries)
    files = []
    for arch in ARCHS:
        compile_ptx = compile_ptx_fast if arch == "sm_80" else ccuda.compile_ptx
        ptx, log = compile_ptx(src, arch)
        assert "error" not in log.lower(), log
        entry_names = {ln.split()[-1].rstrip("(") for ln in ptx.splitlines() if ".entry" in ln}
        assert {e.kname for e in entries} <= entry_names, arch
        assert f".target {arch}" in ptx
        f = tmp_path / f"corpus_{arch}.ptx"
        f.write_text(ptx)
        files.append((arch, f))
    assemble_or_skip(files)


# ---- the built-in device operations (ckernels.device.ops) as CUDA C -
def by_name_c(kind, n):
    return n in dialects.get(kind).types


def _device_ops_programs():
    """``(label, DeviceProgram)`` of every kind of device_ops program for the
    CUDA target, from the same builders OpenCL contexts use: each registry
    operation for each kind of element type it resolves for (array and scalar
    operands), conversions between those types (every error mode for a few),
    every reduction for each, gathers of each item size, ``numpy.where``.
    The types stand for every code path of the generators (bool; small and
    64-bit signed and unsigned integers, whose wrapping/overflow code
    differs; both floats): NVRTC time is the suite's budget."""
    tgt = dialects.get("cuda")
    names = ["bool", "int8", "int64", "uint16", "uint64", "float32", "float64"]
    assert all(by_name_c("cuda", n) for n in names)
    by = dtypes.by_name
    out = []
    for op in sorted(device_ops.OPS):
        for n in names:
            for arity in (1, 2):
                try:
                    kargs, ret = device_ops.resolve(op, (n,) * arity)
                except (errors.CKernelError, KeyError):
                    continue
                if any(t not in dialects.get("cuda").types for t in kargs + (ret,)):
                    continue
                inputs = tuple((by[n], False) for _ in range(arity))
                out.append((f"{op}[{n}]", operations._op_program(tgt, op, kargs, ret, inputs,
                                                                  ret)))
                if arity == 2 and n in ("int64", "float64"):   # a scalar operand, by value
                    inputs = ((by[n], False), (by[n], True))
                    out.append((f"{op}[{n},scalar]",
                                operations._op_program(tgt, op, kargs, ret, inputs, ret)))
                break
    few = ("bool", "int8", "uint64", "float64")
    for s in names:
        for d in names:
            modes = ("default", "nocheck", "overflow", "fractional") \
                if s in few and d in few else ("default",)
            for m in modes:
                out.append((f"cast[{s}->{d},{m}]",
                            conversion._cast_program(tgt, by[s], by[d], m, False)))
    out.append(("cast[scalar]", conversion._cast_program(tgt, by["float64"], by["int32"],
                                                         "default", True)))
    for name in ("sum", "prod", "min", "max", "any", "all", "mean"):
        for n in names:
            acc = by[reductions._acc_type(name, n, None)]
            for final in (False, True):
                dst = acc if not (final and name == "mean") else by["float64"]
                out.append((f"{name}[{n},{final}]",
                            reductions._reduce_program(tgt, name, by[n], acc, dst,
                                                       name == "mean")))
    for item in (1, 2, 4, 8):
        out.append((f"gather[{item}]", gathering._gather_program(tgt, item)))
    for t in ("float32", "float64", "int64", "bool"):
        inputs = ((by["bool"], False), (by[t], False), (by[t], True))
        out.append((f"where[{t}]", operations._where_program(tgt, inputs, t, ("bool", t, t))))
    return out


def test_device_ops_kernels_compile_to_ptx_and_assemble(tmp_path):
    """The device operations (operators, ufuncs, astype, reductions, gathers,
    numpy.where on device arrays) are not OpenCL-only: their CUDA C compiles
    with NVRTC and the PTX assembles -- every program for sm_80 (with
    cuda_tools.FAST_COMPILE), every fifth for sm_90 with the library's own options (the
    C++ front end is the same for both; NVRTC time is the suite's budget)."""
    _nvrtc_or_skip()
    progs = _device_ops_programs()
    assert len(progs) > 300
    parts, seen = [], set()
    for i, (label, prog) in enumerate(progs):
        assert prog.dialect.name == "cuda" and 'extern "C" __global__' in prog.source, label
        if prog.source in seen:          # the same program under another label
            continue
        seen.add(prog.source)
        ns = f"ck_op{i}"
        src = prog.source.replace('extern "C" __global__', "__global__")
        parts.append(f"namespace {ns} {{  // {label}\n{src}}}  // namespace {ns}\n")
    files = []
    for arch, chosen, compile_ptx in (("sm_80", parts, compile_ptx_fast),
                                      ("sm_90", parts[::5], ccuda.compile_ptx)):
        ptx, log = compile_ptx("\n".join(chosen), arch)
        assert "error" not in log.lower(), log
        assert ptx.count(".entry") >= len(chosen), arch
        f = tmp_path / f"device_ops_{arch}.ptx"
        f.write_text(ptx)
        files.append((arch, f))
    # and as the library gets them: a few whole programs, untouched
    for label, prog in progs[:: max(1, len(progs) // 4)]:
        ptx, _ = ccuda.compile_ptx(prog.source, "sm_80")
        assert ".visible .entry" in ptx, label
    assemble_or_skip(files)


def test_programs_compile_exactly_as_emitted(corpus):
    """A few whole programs, untouched (no namespace, kernel named ck_kernel),
    as the library's build would get them."""
    _nvrtc_or_skip()
    entries, _ = corpus
    picks = [e for e in entries if e.name in ("ocl_calls", "ocl_loop", "issue9_round_nd32",
                                              "issue9_gcd64", "ocl_compare")]
    assert len(picks) == 5
    for e in picks:
        ptx, _ = ccuda.compile_ptx(e.prog.source, "sm_80")
        assert ".visible .entry ck_kernel(" in ptx


def test_compile_errors_carry_the_log():
    _nvrtc_or_skip()
    with pytest.raises(errors.BackendError, match="NVRTC_ERROR_COMPILATION.*undefined"):
        ccuda.compile_ptx('extern "C" __global__ void k() { undefined_thing(); }', "sm_80")
    with pytest.raises(errors.NotSupportedError, match="compute_20"):
        ccuda.compile_ptx('extern "C" __global__ void k() {}', "sm_20")
    with pytest.raises(errors.InvalidArgumentError, match="architecture"):
        ccuda.compile_ptx('extern "C" __global__ void k() {}', "sm_1")


# -------------------------------------------------------- host semantics --
@pytest.fixture(scope="module")
def host_lib(corpus, tmp_path_factory):
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    entries, _ = corpus
    d = tmp_path_factory.mktemp("cuda_shim")
    src = d / "corpus.cpp"
    src.write_text('#include "cuda_host_shim.h"\n' + _device_source(entries) + "\n"
                   + "\n".join(e.host_wrapper() for e in entries))
    so = d / "corpus.so"
    r = subprocess.run([cxx, "-std=c++17", "-O1", "-ffp-contract=off", "-fno-fast-math",
                        "-fPIC", "-shared", "-w", f"-I{HERE}", str(src), "-o", str(so)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-6000:]
    return ctypes.CDLL(str(so))


_RUN_ARGTYPES = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p,
                 ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                 ctypes.c_void_p, ctypes.c_uint]


def run_host(lib, e: Entry, args, out, meta=None, block=BLOCK, contig=False):
    """Launch ``e``'s kernel on the host: ``args``/``out`` 1-d (or, with
    ``meta``, N-d with the kernel's metadata layout); returns the error code.
    ``contig``: its contiguous variant (contiguous ``args`` and ``out``)."""
    fn = getattr(lib, f"{e.ns}_run_contig" if contig else f"{e.ns}_run")
    fn.argtypes = _RUN_ARGTYPES
    nin = len(args)
    ins = (ctypes.c_void_p * max(nin, 1))(*[a.ctypes.data for a in args])
    offs = (ctypes.c_uint64 * max(nin, 1))(*([0] * nin))
    if meta is None:
        strides = (ctypes.c_int64 * max(nin, 1))(*[a.strides[0] if a.ndim else 0 for a in args])
        m, ndim, ostride = np.zeros(1, np.int64), 1, out.strides[0]
    else:
        strides = (ctypes.c_int64 * max(nin, 1))(*([0] * nin))
        m, ndim, ostride = meta, len(out.shape), 0
    err = np.zeros(4, np.int32)   # the code, a spare word, the failing element's offset
    fn(out.ctypes.data, 0, ostride, ins, offs, strides, m.ctypes.data, ndim, out.size,
       err.ctypes.data, block)
    run_host.element = failed_element(err, out)
    return int(err[0])


def failed_element(err, out):
    """The element a failing kernel recorded (words 2 and 3 of the error
    buffer: its byte offset in the output, ``Dialect.error_store_at``) as an
    index tuple, or None."""
    if not err[0]:
        return None
    return element_at((int(err[2]) & 0xffffffff) | (int(err[3]) << 32), out.shape, out.strides)


def _raised(f, *a):
    try:
        return None, np.asarray(f(*a))
    except errors.CKernelError as exc:
        return exc, None


def test_host_shim_matches_cpu_jit(corpus, host_lib):
    entries, _ = corpus
    failures = []
    for e in entries:
        try:
            _check_entry(host_lib, e)
        except AssertionError as exc:
            failures.append(f"{e.name}: {str(exc)[:600]}")
    assert not failures, "\n".join(failures)


def test_host_shim_contiguous_kernel_matches_general(corpus, host_lib):
    """The contiguous variant (plain indexing) writes what the general kernel
    writes, raises the same error at the same element, for every corpus
    program whose element types have one."""
    entries, _ = corpus
    with_contig = [e for e in entries if e.has_contig]
    assert len(with_contig) >= 0.8 * len(entries)
    failures = []
    for e in with_contig:
        general = np.zeros(len(e.args[0]), e.ret_dtype)
        contig = np.zeros_like(general)
        code_g = run_host(host_lib, e, e.args, general)
        elem_g = run_host.element
        code_c = run_host(host_lib, e, e.args, contig, contig=True)
        elem_c = run_host.element
        if (code_g, elem_g) != (code_c, elem_c):
            failures.append(f"{e.name}: error {code_g} at {elem_g} / {code_c} at {elem_c}")
        elif code_g == 0 and general.tobytes() != contig.tobytes():
            failures.append(f"{e.name}: {general[:5]} / {contig[:5]}")
    assert not failures, "\n".join(failures)


def _check_entry(lib, e: Entry):
    exc, want = _raised(e.kernel, *e.args)
    out = np.zeros(len(e.args[0]), e.ret_dtype)
    code = run_host(lib, e, e.args, out)
    if exc is None:
        got = device_error(e.prog.errors, code, e.name, e.prog.dialect.title)
        assert code == 0, f"host kernel raised {got!r}"
        ocl_tests._compare(out, want, e.name)
        return
    assert code != 0, f"the CPU raised {exc!r}, the host kernel did not"
    # element by element: the same value or the same exception
    for i in range(len(e.args[0])):
        one = [a[i:i + 1] for a in e.args]
        exc1, want1 = _raised(e.kernel, *one)
        out1 = np.zeros(1, e.ret_dtype)
        code1 = run_host(lib, e, one, out1)
        if exc1 is None:
            assert code1 == 0, f"element {i}: host raised, CPU gave {want1}"
            ocl_tests._compare(out1, want1, f"{e.name}[{i}]")
        else:
            assert code1 != 0, f"element {i}: CPU raised {exc1!r}, host gave {out1}"
            got = device_error(e.prog.errors, code1, e.name, e.prog.dialect.title,
                               run_host.element)
            assert type(got) is type(exc1) and str(got) == str(exc1), (i, got, exc1)


def test_host_shim_partial_blocks_and_tiny_blocks(corpus, host_lib):
    """The index guard: n not a multiple of the block, blocks of 1 and 7."""
    entries, _ = corpus
    e = next(x for x in entries if x.name == "ocl_scale64")
    x = ocl_tests._f()[:37]
    want = np.asarray(e.kernel(x))
    for block in (1, 7, 256):
        out = np.full(40, -99.0)
        assert run_host(host_lib, e, [x], out[:37], block=block) == 0
        ocl_tests._compare(out[:37], want, f"block {block}")
        assert (out[37:] == -99.0).all()


def test_host_shim_nd_broadcast_path(corpus, host_lib):
    """ndim > 1: the kernel decomposes the flat index with the metadata buffer
    (shape, then byte strides of the output and each input, 0 = broadcast)."""
    entries, _ = corpus
    e = next(x for x in entries if x.name == "ocl_math2")
    a = rng.standard_normal((4, 1, 3))
    b = rng.standard_normal((5, 1))
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.zeros(shape)
    ins = [np.broadcast_to(a, shape), np.broadcast_to(b, shape)]
    meta = np.array(list(shape) + list(out.strides) + [s for x in ins for s in x.strides],
                    np.int64)
    fn = getattr(host_lib, f"{e.ns}_run")
    fn.argtypes = _RUN_ARGTYPES
    err = np.zeros(4, np.int32)   # the code, a spare word, the failing offset
    ptrs = (ctypes.c_void_p * 2)(a.ctypes.data, b.ctypes.data)
    zeros_u = (ctypes.c_uint64 * 2)(0, 0)
    zeros_i = (ctypes.c_int64 * 2)(0, 0)
    fn(out.ctypes.data, 0, 0, ptrs, zeros_u, zeros_i, meta.ctypes.data, 3, out.size,
       err.ctypes.data, BLOCK)
    assert err[0] == 0
    ocl_tests._compare(out, np.asarray(e.kernel(a, b)), "nd")


# ---- core dims (issue 22): the functions of test_jit_dims_devices as CUDA C --
@pytest.fixture(scope="module")
def dims_programs():
    """``(namespace, kernel, its CUDA C, host arguments: one outer dim)`` for
    dot (N, N), cross (3, 3 -> 3), matvec (M * N, N -> M) and checked (raises)."""
    import test_jit_dims_devices as dd
    from ckernels.jit import device_dims
    r = np.random.default_rng(22)
    cases = [(dd.cpu.dot, [r.standard_normal((5, 4)), r.standard_normal((5, 4))[:, ::-1]]),
             (dd.cpu.cross, [r.standard_normal((5, 3)), r.standard_normal((5, 3))]),
             (dd.matvec, [r.standard_normal((5, 3, 4)), r.standard_normal((5, 4))]),
             (dd.checked, [np.array([[3, 1, 4], [1, 5, 9], [2, 6, 5], [7, 1, 8]]),
                           np.array([1, 0, 7, -3])])]
    out = []
    for i, (f, args) in enumerate(cases):
        comp = next(iter(f.compiled.values()))
        src = device_dims.source(_device_target("cuda"), f, comp)
        ns = f"ck_dims{i}"
        text = (f"namespace {ns} {{\n" +
                src.replace(f" {c_emit.KERNEL_NAME}(", f" {ns}_kernel(") + f"}}  // {ns}\n")
        out.append((ns, f, comp, text, args))
    return out


def test_dims_kernels_compile_to_ptx_and_assemble(dims_programs, tmp_path):
    _nvrtc_or_skip()
    src = "\n".join(p[3] for p in dims_programs)
    assert "ck_view2_t" in src and "ck_wview1_t" in src
    ptx = ptx_assembled_or_skip(tmp_path, src)
    for ns, *_ in dims_programs:
        assert f"{ns}_kernel" in ptx


def test_dims_kernels_on_the_host_shim_match_cpu_jit(dims_programs, tmp_path):
    """One launch per function over 4-5 outer elements (the 1-d path: the core
    dims' sizes and byte strides in the metadata buffer, the result's first);
    then checked row by row: values or the CPU's exception, and IndexError
    where the device checks bounds and the CPU (Numba's default) does not."""
    ins = "".join(f", in[{k}], in_off[{k}], in_stride[{k}]" for k in range(2))
    wrappers = "".join(
        f'extern "C" void {ns}_run(unsigned char *out, unsigned long long out_off, '
        "long long out_stride, const unsigned char **in, const unsigned long long *in_off, "
        "const long long *in_stride, const long long *meta, int ndim, unsigned long long n, "
        f"int *err, unsigned int block) {{\n  ck_shim_grid(n, block, [&] {{ "
        f"{ns}::{ns}_kernel(out, out_off, out_stride{ins}, meta, ndim, n, err); }});\n}}\n"
        for ns, *_ in dims_programs)
    lib = host_shim_library(tmp_path, "\n".join(p[3] for p in dims_programs) + wrappers)

    def run(ns, args, core_shape=(), dtype=np.int64):
        out = np.zeros((len(args[0]),) + core_shape, dtype)
        core = [x for a in [out] * (out.ndim > 1) + [a for a in args if a.ndim > 1]
                for x in (v for pair in zip(a.shape[1:], a.strides[1:]) for v in pair)]
        meta = np.array(core or [0], np.int64)
        fn = getattr(lib, f"{ns}_run")
        fn.argtypes = _RUN_ARGTYPES
        err = np.zeros(4, np.int32)
        fn(out.ctypes.data, 0, out.strides[0],
           (ctypes.c_void_p * 2)(*[a.ctypes.data for a in args]), (ctypes.c_uint64 * 2)(0, 0),
           (ctypes.c_int64 * 2)(*[a.strides[0] for a in args]), meta.ctypes.data, 1,
           len(out), err.ctypes.data, BLOCK)
        run.element = failed_element(err, out)
        return int(err[0]), out

    for ns, f, comp, _, args in dims_programs[:3]:
        want = np.asarray(f(*args))
        code, got = run(ns, args, want.shape[1:], want.dtype)
        assert code == 0
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    ns, f, comp, _, args = dims_programs[3]
    from ckernels.jit import device_dims
    prog, _ = device_dims.tgt_program(_device_target("cuda"), f, comp)
    for i in range(len(args[0])):
        one = [a[i:i + 1] for a in args]
        code, got = run(ns, one)
        if not -3 <= int(args[1][i]) < 3:
            got_exc = device_error(prog.errors, code, "checked", "CUDA")
            assert isinstance(got_exc, errors.CKIndexError), (i, got_exc)
            continue
        exc, want = _raised(f, *one)
        if exc is None:
            assert code == 0 and got.tolist() == want.tolist(), (i, code, got, want)
        else:
            got_exc = device_error(prog.errors, code, "checked", "CUDA", run.element)
            assert type(got_exc) is type(exc) and str(got_exc) == str(exc), (i, got_exc, exc)


# ------------------------------------------------------------- the dialect --
def test_cuda_source_reads_like_cuda():
    src = ocl_tests.c_math32.source("cuda")
    assert 'extern "C" __global__ void __launch_bounds__(256) ck_kernel(' in src
    assert "sqrtf(" in src and "static __device__ float ck_fn_c_math32_" in src
    assert "blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x" in src
    src64 = ocl_tests.c_math2.source("cuda")
    assert "atan2(" in src64 and "atan2f(" not in src64 and "hypot(" in src64
    assert "atomicCAS(ck_errbuf, 0, err) == 0" in ocl_tests.c_floordiv.source("cuda")
    assert "__global" not in src64.replace("__global__", "") and "get_global_id" not in src64
    assert "9223372036854775807LL" in ocl_tests.c_floordiv.source("cuda")
    assert "__longlong_as_double(0x7ff0000000000000LL)" in k_float_consts.source("cuda")
    # the same function, both dialects: only the dialect's spellings differ
    ocl = ocl_tests.c_loop.source("opencl")
    cu = ocl_tests.c_loop.source("cuda")
    assert ocl.count("goto L") == cu.count("goto L")


def test_bool_invert_is_logical_not_on_every_target(new_opencl_context):
    x = np.array([True, False])
    np.testing.assert_array_equal(k_bool_invert(x), [False, True])
    for target in ("opencl", "cuda"):
        assert "(!v_" in k_bool_invert.source(target)
    ctx = new_opencl_context()
    np.testing.assert_array_equal(k_bool_invert(ctx.array(x)).to_numpy(), [False, True])


def _refused(f, sig="float64(float64)"):
    k = ckernels.jit(sig)(f)
    with pytest.raises(errors.NotSupportedError) as ei:
        k.source("cuda")
    return str(ei.value)


def test_unsupported_constructs_are_one_line_naming_the_line():
    here = os.path.basename(__file__)

    def uses_dict(x):
        d = {1: x}
        return d[1]

    def uses_try(x):
        try:
            return 1.0 / x
        except Exception:
            return 0.0

    def uses_set(x):
        s = {x}
        return x if x in s else 0.0

    def uses_attr(x):
        return x.no_such_attribute

    def uses_unknown_call(x):
        return np.zeros(3)[0] + x

    cases = [(uses_dict, "dicts", 1), (uses_try, "try/except", 2), (uses_set, "sets", 1),
             (uses_unknown_call, "zeros", 1)]
    for f, what, off in cases:
        msg = _refused(f)
        assert "\n" not in msg and len(msg) < 400, msg
        assert what in msg, msg
        assert f"{here}:{f.__code__.co_firstlineno + off}" in msg, msg
    # a typing error (the CPU refuses this one too, with Numba's whole report)
    from numba.core import types
    with pytest.raises(errors.NotSupportedError) as ei:
        c_emit.typed_ir(uses_attr, (types.float64,), where="CUDA")
    msg = str(ei.value)
    assert "\n" not in msg and "no_such_attribute" in msg, msg
    assert f"{here}:{uses_attr.__code__.co_firstlineno + 1}" in msg, msg
    # OpenCL says the same (the emitter is shared)
    k = ckernels.jit("float64(float64)")(uses_dict)
    with pytest.raises(errors.NotSupportedError, match=r"^OpenCL: dicts are not supported"):
        k.source("opencl")


def test_issue9_calls_match_cpu_on_opencl(new_opencl_context):
    """The new calls on a real device (PoCL), against the CPU jit."""
    ctx = new_opencl_context()
    for name, k, make in ISSUE9:
        args = make()
        n = min(len(a) for a in args)
        args = [np.ascontiguousarray(a[:n]) for a in args]
        want = np.asarray(k(*args))
        got = k(*[ctx.array(a) for a in args]).to_numpy()
        ocl_tests._compare(got, want, name)
