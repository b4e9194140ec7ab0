"""Structs in ``@ckernels.jit`` functions (issue 12 phase 2).

CPU: struct arguments (field reads, nested structs, fixed dims inside
structs) and struct results (tuples, namedtuples, structs), against NumPy
structured-array oracles, on ckernels arrays, aligned NumPy structured arrays
and their scalars; error cases (unaligned dtypes, wrong fields, bad results).
The compiled functions are module-level and shared by the tests.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import ckernels
from ckernels import errors
from ckernels.jit import structs as _jit_structs

import test_cuda_codegen as cc   # NVRTC and ptxas as the CUDA codegen tests find them

rng = np.random.default_rng(12)

VEC = "{x: float64, y: float64}"
PART = "{pos: {x: float64, y: float64}, vel: {x: float64, y: float64}, mass: float32, id: int32}"
HIST = "{n: int16, v: 3 * float32, m: 2 * 2 * int64, ok: bool}"

VEC_DT = np.dtype([("x", "f8"), ("y", "f8")], align=True)
PART_DT = ckernels.types.parse(PART).to_numpy_dtype()
HIST_DT = ckernels.types.parse(HIST).to_numpy_dtype()


def _particles(n):
    a = np.zeros(n, PART_DT)
    for f in ("pos", "vel"):
        a[f]["x"] = rng.normal(size=n)
        a[f]["y"] = rng.normal(size=n)
    a["mass"] = rng.uniform(0.5, 2.0, size=n).astype(np.float32)
    a["id"] = np.arange(n, dtype=np.int32)
    return a


def _hists(n):
    a = np.zeros(n, HIST_DT)
    a["n"] = rng.integers(-100, 100, size=n)
    a["v"] = rng.normal(size=(n, 3)).astype(np.float32)
    a["m"] = rng.integers(-1000, 1000, size=(n, 2, 2))
    a["ok"] = rng.integers(0, 2, size=n).astype(bool)
    return a


# ---------------------------------------------------------------- corpus --
@ckernels.jit(f"float64({VEC})")
def norm2(p):
    return p.x * p.x + p.y * p.y


@ckernels.jit(f"float64({PART}, float64)")
def energy(p, g):
    v2 = p.vel.x * p.vel.x + p.vel.y * p.vel.y
    return 0.5 * p.mass * v2 + p.mass * g * p.pos.y


@ckernels.jit(f"float64({HIST})")
def hist_sum(h):
    s = 0.0
    for i in range(3):
        s += h.v[i]
    t = h.m[0, 0] + h.m[1, 1] - h.m[0, 1] * h.m[1, 0]
    return s * h.n + t if h.ok else -s


@ckernels.jit(f"{VEC}(float64, float64)")
def polar(r, phi):
    return r * np.cos(phi), r * np.sin(phi)


Point = collections.namedtuple("Point", ["y", "x"])
Other = collections.namedtuple("Other", ["a", "b"])


@ckernels.jit(f"{VEC}({VEC}, float64)")
def scaled(p, k):
    return Point(x=p.x * k, y=p.y * k)


@ckernels.jit(f"{PART}({PART}, float64)")
def step(p, dt):
    return ((p.pos.x + dt * p.vel.x, p.pos.y + dt * p.vel.y),
            (p.vel.x, p.vel.y - 9.81 * dt), p.mass, p.id + 1)


@ckernels.jit(f"{HIST}({HIST})")
def hist_flip(h):
    return (-h.n, (h.v[2], h.v[1], h.v[0]), ((h.m[1, 1], h.m[1, 0]), (h.m[0, 1], h.m[0, 0])),
            not h.ok)


@ckernels.jit(f"{VEC}({VEC})")
def same(p):
    return p


def _step_oracle(a, dt):
    out = np.zeros_like(a)
    out["pos"]["x"] = a["pos"]["x"] + dt * a["vel"]["x"]
    out["pos"]["y"] = a["pos"]["y"] + dt * a["vel"]["y"]
    out["vel"]["x"] = a["vel"]["x"]
    out["vel"]["y"] = a["vel"]["y"] - 9.81 * dt
    out["mass"] = a["mass"]
    out["id"] = a["id"] + 1
    return out


def _np(res, dt):
    """A struct result as a NumPy structured array (the library's layout)."""
    if isinstance(res, np.ndarray):
        return res
    assert isinstance(res, ckernels.Array)
    assert str(res.type.dtype) == str(ckernels.types.from_numpy_dtype(dt))
    return np.asarray(res).view(dt) if np.asarray(res).dtype != dt else np.asarray(res)


# ------------------------------------------------------------ field reads --
def test_signature_text():
    assert norm2.signatures == [f"float64({VEC})"]
    assert polar.signatures == [f"{VEC}(float64, float64)"]


def test_field_reads_numpy():
    a = np.zeros(50, VEC_DT)
    a["x"] = rng.normal(size=50)
    a["y"] = rng.normal(size=50)
    np.testing.assert_array_equal(norm2(a), a["x"] ** 2 + a["y"] ** 2)


def test_field_reads_ckernels_array_and_views():
    a = np.zeros(40, VEC_DT)
    a["x"] = np.arange(40.0)
    a["y"] = -np.arange(40.0)
    ca = ckernels.asarray(a)
    expect = a["x"] ** 2 + a["y"] ** 2
    np.testing.assert_array_equal(np.asarray(norm2(ca)), expect)
    # strided views: every other element, reversed
    np.testing.assert_array_equal(norm2(a[::-2]), expect[::-2])
    # 2-d
    np.testing.assert_array_equal(norm2(a.reshape(5, 8)), expect.reshape(5, 8))


def test_nested_fields_and_broadcast_scalar():
    a = _particles(64)
    g = 9.81
    m = a["mass"].astype(np.float64)
    v2 = a["vel"]["x"] ** 2 + a["vel"]["y"] ** 2
    np.testing.assert_allclose(energy(a, g), 0.5 * m * v2 + m * g * a["pos"]["y"], rtol=1e-15)


def test_fixed_dims_in_structs():
    a = _hists(33)
    s = a["v"].astype(np.float64).sum(axis=1)
    s = a["v"][:, 0].astype(np.float64) + a["v"][:, 1] + a["v"][:, 2]
    t = a["m"][:, 0, 0] + a["m"][:, 1, 1] - a["m"][:, 0, 1] * a["m"][:, 1, 0]
    expect = np.where(a["ok"], s * a["n"] + t, -s)
    np.testing.assert_allclose(hist_sum(a), expect, rtol=1e-12)


def test_structured_scalar_argument():
    a = np.zeros(3, VEC_DT)
    a["x"], a["y"] = [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]
    assert norm2(a[1]) == 29.0


# --------------------------------------------------------------- results --
def test_tuple_result():
    r = rng.uniform(0, 2, size=20)
    phi = rng.uniform(-3, 3, size=20)
    res = _np(polar(r, phi), VEC_DT)
    np.testing.assert_allclose(res["x"], r * np.cos(phi), rtol=1e-15)
    np.testing.assert_allclose(res["y"], r * np.sin(phi), rtol=1e-15)


def test_namedtuple_result_by_field_name():
    a = np.zeros(10, VEC_DT)
    a["x"], a["y"] = np.arange(10.0), np.arange(10.0) + 100
    res = _np(scaled(a, 2.0), VEC_DT)
    np.testing.assert_array_equal(res["x"], 2 * a["x"])
    np.testing.assert_array_equal(res["y"], 2 * a["y"])


def test_nested_struct_result():
    a = _particles(25)
    res = _np(step(a, 0.01), PART_DT)
    np.testing.assert_array_equal(res, _step_oracle(a, 0.01))


def test_fixed_dims_result():
    a = _hists(17)
    res = _np(hist_flip(a), HIST_DT)
    np.testing.assert_array_equal(res["n"], -a["n"])
    np.testing.assert_array_equal(res["v"], a["v"][:, ::-1])
    np.testing.assert_array_equal(res["m"], a["m"][:, ::-1, ::-1])
    np.testing.assert_array_equal(res["ok"], ~a["ok"])


def test_struct_result_copies_struct():
    a = np.zeros(5, VEC_DT)
    a["x"], a["y"] = np.arange(5.0), -np.arange(5.0)
    np.testing.assert_array_equal(_np(same(a), VEC_DT), a)


def test_out_struct_array():
    a = _particles(12)
    out = np.zeros(12, PART_DT)
    step(a, 0.5, out=out)
    np.testing.assert_array_equal(out, _step_oracle(a, 0.5))


# ---------------------------------------------------------------- errors --
def test_unaligned_numpy_dtype():
    a = np.zeros(4, np.dtype([("x", "f8"), ("n", "i1"), ("y", "f8")]))   # packed
    with pytest.raises(TypeError, match="align=True"):
        norm2(a)


def test_wrong_fields():
    a = np.zeros(4, np.dtype([("x", "f8"), ("z", "f8")], align=True))
    with pytest.raises(TypeError, match=r"no signature matches.*\{x: float64, z: float64\}"):
        norm2(a)
    b = np.zeros(4, np.dtype([("x", "f4"), ("y", "f4")], align=True))
    with pytest.raises(TypeError, match="no signature matches"):
        norm2(b)


def test_struct_argument_is_not_a_number():
    with pytest.raises(TypeError, match="no signature matches"):
        norm2(np.arange(3.0))


def test_bad_results():
    def two(p):
        return p.x, p.y, 1.0
    with pytest.raises(TypeError, match="tuple of 3 items; the struct has 2 fields"):
        ckernels.jit(f"{VEC}({VEC})")(two)

    def named(p):
        return Other(p.x, p.y)
    with pytest.raises(TypeError, match=r"namedtuple with fields \(a, b\)"):
        ckernels.jit(f"{VEC}({VEC})")(named)

    def scalar(p):
        return p.x
    with pytest.raises(TypeError, match="a struct result is returned as a tuple"):
        ckernels.jit(f"{VEC}({VEC})")(scalar)


def test_unknown_field():
    def bad(p):
        return p.z
    with pytest.raises(TypeError, match="no struct field 'z'"):
        ckernels.jit(f"float64({VEC})")(bad)


def test_register_refused():
    with pytest.raises(errors.NotSupportedError, match="struct"):
        norm2.register("ck_test_struct_norm2")


# --------------------------------------------------------------- devices --
# The device emitter declares the structs with the generated C API of the
# target (ckernels.c_api); fields are C members.  Struct results on devices:
# a flat tuple (or a struct of the same type).
@ckernels.jit(f"{VEC}({PART})")
def momentum(p):
    return p.mass * p.vel.x, p.mass * p.vel.y


DEVICE_CASES = [   # (function, host arguments as makers, oracle-free: CPU jit)
    (norm2, lambda: (_vecs(37),)),
    (energy, lambda: (_particles(41), 9.81)),
    (hist_sum, lambda: (_hists(29),)),
    (momentum, lambda: (_particles(23),)),
    (same, lambda: (_vecs(19),)),
]


def _vecs(n):
    a = np.zeros(n, VEC_DT)
    a["x"], a["y"] = rng.normal(size=n), rng.normal(size=n)
    return a


@pytest.fixture(scope="module")
def ocl(new_opencl_context):
    return new_opencl_context()


@pytest.mark.parametrize("fn,make", DEVICE_CASES, ids=[c[0].__name__ for c in DEVICE_CASES])
def test_opencl_matches_cpu(ocl, fn, make):
    args = make()
    expect = fn(*args)
    expect = np.asarray(expect) if isinstance(expect, ckernels.Array) else expect
    dev = [ocl.to(a) if isinstance(a, np.ndarray) else a for a in args]
    got = fn(*dev).to_numpy()
    if got.dtype.fields is not None:
        got = got.view(np.uint8)
        expect = np.ascontiguousarray(expect).view(np.uint8)
    np.testing.assert_allclose(got, expect, rtol=1e-13)


def test_opencl_source_uses_the_generated_header():
    src = momentum.source("opencl")
    from ckernels.jit.structs import c_name
    name = c_name(ckernels.types.parse(PART))
    assert f"typedef struct {name} {{" in src
    assert "CKERNELS_CAPI_" in src          # the c_api header, not a second printer
    assert ".vel.x" in src or ".vel;" in src


def test_device_refuses_nested_struct_results(ocl):
    a = ocl.to(_particles(4))
    with pytest.raises(errors.NotSupportedError, match="not supported .*in step"):
        step(a, 0.1)


def test_cuda_codegen_compiles():
    """The CUDA C of every device case through NVRTC, the PTX through ptxas."""
    import os
    import subprocess
    import tempfile

    from ckernels.backends import cuda as ccuda
    cc._nvrtc_or_skip()
    from cuda_tools import ptxas as find_ptxas
    ptxas = find_ptxas()
    for fn, _ in DEVICE_CASES:
        src = fn.source("cuda")
        ptx, log = ccuda.compile_ptx(src, "sm_80")
        assert "error" not in log.lower(), log
        if ptxas is None:
            continue
        with tempfile.TemporaryDirectory() as d:
            f = os.path.join(d, "k.ptx")
            with open(f, "w") as fh:
                fh.write(ptx)
            r = subprocess.run([ptxas, "-arch=sm_80", f, "-o", f + ".cubin"],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-3000:]


# ------------------------------------------- strings and var dims (CPU) --
REC = "{name: string, xs: var * float64}"
DEEP = ("{id: int32, who: {name: string, tags: var * string}, xs: var * int32, ok: bool, "
        "v: 2 * float64}")

RECS = [{"name": "a", "xs": [1.0, 2.0]}, {"name": "héllo", "xs": []},
        {"name": "zz", "xs": [5.0, -1.0, 3.0]}, {"name": "", "xs": [0.5]},
        {"name": "naïve ☃", "xs": list(np.linspace(-1, 1, 7))}]
DEEPS = [{"id": i, "who": {"name": nm, "tags": tags}, "xs": xs, "ok": ok, "v": [i * 0.5, -i]}
         for i, (nm, tags, xs, ok) in enumerate([
             ("ab", ["x", "yy"], [1, 2], True), ("ü", [], [], False),
             ("", ["", "☃☃", "abc"], [7, -7, 9, 100], True), ("q", ["z"], [3], False)])]


@ckernels.jit(f"int64({REC})")
def rec_lens(p):
    return len(p.name) * 100 + len(p.xs)


@ckernels.jit(f"float64({REC})")
def rec_sum(p):
    s = 0.0
    for x in p.xs:            # iteration
        s += x
    if len(p.xs) > 0:
        s += 1000.0 * p.xs[-1]   # negative index
    if p.name == "zz":        # comparison with a str
        s = -s
    return s


@ckernels.jit(f"string({REC})")
def rec_name(p):
    if len(p.name) == 0:
        return "<empty>"
    return str(p.name) + ":" + p.name[0] + p.name[-1]   # str(), code point indexing


@ckernels.jit(f"bool({REC}, {REC})")
def rec_less(p, q):
    return p.name < q.name    # CkString vs CkString (bytewise = code point order)


@ckernels.jit(f"int64({DEEP})")
def deep(p):
    n = p.id * 1000 + len(p.who.tags) * 100 + len(p.who.name) * 10 + len(p.xs)
    for t in p.who.tags:      # var * string inside a nested struct
        n += 7 * len(t)
    for k in range(len(p.xs)):
        n += p.xs[k]
    if p.ok:
        n += int(p.v[1] * 3)   # a fixed dim beside the views
    return n


def _rec_sum_oracle(r):
    s = sum(r["xs"]) + (1000.0 * r["xs"][-1] if r["xs"] else 0.0)
    return -s if r["name"] == "zz" else s


def _deep_oracle(r):
    n = r["id"] * 1000 + len(r["who"]["tags"]) * 100 + len(r["who"]["name"]) * 10 + len(r["xs"])
    n += sum(7 * len(t) for t in r["who"]["tags"]) + sum(r["xs"])
    return n + (int(r["v"][1] * 3) if r["ok"] else 0)


def test_strings_and_var_dims_in_structs_read():
    a = ckernels.array(RECS)          # type inferred: strided * {name: string, xs: var * float64}
    assert str(a.type) == f"strided * {REC}"
    np.testing.assert_array_equal(np.asarray(rec_lens(a)),
                                  [len(r["name"]) * 100 + len(r["xs"]) for r in RECS])
    np.testing.assert_allclose(np.asarray(rec_sum(a)), [_rec_sum_oracle(r) for r in RECS],
                               rtol=1e-14)
    want = [r["name"] + ":" + r["name"][0] + r["name"][-1] if r["name"] else "<empty>"
            for r in RECS]
    assert list(rec_name(a)) == want
    b = a[::-1]                        # a view with a negative stride
    np.testing.assert_array_equal(np.asarray(rec_less(a, b)),
                                  [x["name"] < y["name"] for x, y in zip(RECS, RECS[::-1])])


def test_nested_strings_var_strings_and_fixed_dims_in_structs():
    a = ckernels.array(DEEPS, type=f"{len(DEEPS)} * {DEEP}")
    np.testing.assert_array_equal(np.asarray(deep(a)), [_deep_oracle(r) for r in DEEPS])
    np.testing.assert_array_equal(np.asarray(deep(a[1:])), [_deep_oracle(r) for r in DEEPS[1:]])


def test_views_in_structs_are_read_only_and_bounds_checked():
    a = ckernels.array(RECS)

    @ckernels.jit(f"int64({REC})")
    def write(p):
        p.xs[0] = 5.0
        return 0

    @ckernels.jit(f"float64({REC})")
    def past(p):
        return p.xs[len(p.xs)]

    with pytest.raises(errors.InvalidStateError, match="read-only"):
        write(a)
    with pytest.raises(IndexError):
        past(a)


def test_views_in_structs_refused_where_unsupported(ocl):
    for t, match in (("{s: 2 * string}", "fixed dims inside jitted structs"),
                     ("{v: var * var * float64}", "var dim inside a jitted struct holds"),
                     ("{v: var * {x: float64}}", "var dim inside a jitted struct holds"),
                     ("{b: bytes}", "fields of jitted struct types are")):
        with pytest.raises(TypeError, match=match):
            ckernels.jit(f"float64({t})")
    with pytest.raises(TypeError, match="struct results hold numbers"):
        ckernels.jit(f"{REC}(float64)")
    # NumPy cannot hold such structs: a structured array of the layout does not match
    with pytest.raises(TypeError, match="no signature matches"):
        rec_lens(np.zeros(3, _jit_structs.element(REC).numpy))
    with pytest.raises(errors.NotSupportedError, match="holds strings or var dims"):
        rec_lens.source("opencl")


def test_device_unknown_field(ocl):
    def bad(p):
        return p.z
    f = ckernels.jit(f"float64({VEC})")
    with pytest.raises(TypeError, match="no struct field 'z'"):
        f(bad)
    with pytest.raises(errors.NotSupportedError, match="no struct field 'z'"):
        from ckernels.jit import c_emit
        from ckernels import dialects
        from ckernels.jit.signature import element_type
        c_emit.emit_kernel(bad, (element_type(VEC).numba,), element_type("float64").numba,
                           dialects.get("opencl"))
