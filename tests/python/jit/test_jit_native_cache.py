"""The native cache of ``@ckernels.jit(..., cache=True)`` (``ckernels.jit.native_cache``):
a signature compiled in one interpreter is a shared library the next one loads
without importing Numba; results equal NumPy's; errors raised in the cached code
reach Python through the same libckernel instance; string signatures (their
strings, lists and formatted numbers) load natively too; a changed body, a changed
closure value, corrupt or foreign files, no compiler and an unusable cache
directory all mean a fresh compile (or Numba's cache), never a stale kernel.

Every check runs in fresh interpreters (subprocesses, each doing many checks)."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

MODULE = textwrap.dedent("""
    import os
    import ckernels

    @ckernels.jit(["int64(int64, int64)", "float64(float64, float64)",
                   "float32(float32, float32)"], cache=True)
    def axpy(x, y):
        return x * 2 + y

    @ckernels.jit(["float64(float64, float64)", "float64(int64, int64)"], cache=True)
    def div(x, y):
        return x / y

    @ckernels.jit(["float64(float64, float64)", "int64(int64, int64)"], cache=True,
                  error_model="numpy")
    def ndiv(x, y):
        return x // y

    @ckernels.jit(["complex128(complex128, complex128)", "complex64(complex64, float32)"],
                  cache=True)
    def cfma(a, b):
        return a * b + 1

    @ckernels.jit(["bool(float64, float64)", "bool(bool, bool)"], cache=True)
    def less(x, y):
        return x < y

    @ckernels.jit(["uint8(uint8, uint8)", "int16(int16, int16)"], cache=True)
    def wrap(x, y):
        return x - y

    @ckernels.jit("float64(float64)", cache=True)
    def checked(x):
        if x < 0:
            raise ValueError("negative input")
        return x + 0.5

    def _make(k):
        @ckernels.jit("float64(float64)", cache=True)
        def scale(x):
            return x * k
        return scale

    scale = _make(float(os.environ.get("CKN_K", "2")))

    @ckernels.jit(cache=True)
    def poly(x):
        return x * x + 1.0

    @ckernels.jit("string(string)", cache=True)
    def twice(s):
        return s + s

    # string signatures are native libraries too: their strings, lists and
    # formatted numbers use libckernel (ckernel/text.h, jit.h's runtime)
    @ckernels.jit(["string(int64)", "string(uint8)"], cache=True)
    def label(i):
        return "item-" + str(i)

    @ckernels.jit("string(int64, float64, string)", cache=True)
    def fmt(i, x, s):
        return f"{s:*^7}|{i:+06,d}|{x:.3e}|{x}|{i:#x}"

    @ckernels.jit("string(string)", cache=True)
    def first(s):
        if len(s) == 0:
            raise ValueError("empty string")
        return s[0] + "/" + s[-1]

    @ckernels.jit("string(int64)", cache=True)
    def char(i):
        c = f"{i:c}"                    # a Numba str (used twice): formatted, then copied
        return c + c

    @ckernels.jit("string(string)", cache=True)
    def joined(s):
        return "-".join(s.split(","))   # a list: Numba's variable-size runtime calls

    @ckernels.jit("int64(string)", cache=True)
    def length(s):
        return len(s)

    def make_upper():     # decorated last: Unicode case tables are Numba's helpers
        @ckernels.jit("string(string)", cache=True)
        def upper(s):
            return s.upper()
        return upper
""")

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import nativemod as m
    import ckernels
    from ckernels.jit import native_cache
    out = {"numba_after_decorating": "numba" in sys.modules}
    rng = np.random.default_rng(0)
    bad = []

    def same(name, got, want):
        got, want = np.asarray(got), np.asarray(want)
        if got.dtype != want.dtype or not np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"):
            bad.append(f"{name}: {got!r} != {want!r}")

    for dt in (np.int64, np.float64, np.float32):
        x = (rng.random(7) * 100).astype(dt); y = (rng.random(7) * 100).astype(dt)
        same(f"axpy {dt}", m.axpy(x, y), x * dt(2) + y)
    x, y = rng.random(5) + 0.5, rng.random(5) + 0.5
    same("div f8", m.div(x, y), x / y)
    same("div i8", m.div(np.arange(1, 6), np.arange(2, 7)), np.arange(1, 6) / np.arange(2, 7))
    with np.errstate(all="ignore"):
        same("ndiv f8", m.ndiv(np.array([1.0, -1.0, 0.0, 7.0]), np.array([0.0, 0.0, 0.0, 2.0])),
             np.array([1.0, -1.0, 0.0, 7.0]) // np.array([0.0, 0.0, 0.0, 2.0]))
        same("ndiv i8", m.ndiv(np.array([7, -7, 5]), np.array([2, 2, 0])),
             np.array([7, -7, 5]) // np.array([2, 2, 0]))
    a = rng.random(4) + 1j * rng.random(4)
    b = rng.random(4) + 1j * rng.random(4)
    same("cfma c16", m.cfma(a, b), a * b + 1)
    a64, f32 = a.astype(np.complex64), rng.random(4).astype(np.float32)
    same("cfma c8", m.cfma(a64, f32), (a64 * f32 + np.complex64(1)).astype(np.complex64))
    same("less f8", m.less(x, y), x < y)
    bx, by = np.array([True, False, True, False]), np.array([True, True, False, False])
    same("less b1", m.less(bx, by), bx < by)
    u, v = np.array([1, 200, 3], np.uint8), np.array([2, 100, 3], np.uint8)
    same("wrap u1", m.wrap(u, v), u - v)
    same("wrap i2", m.wrap(np.array([-32768, 5], np.int16), np.array([1, -3], np.int16)),
         np.array([-32768, 5], np.int16) - np.array([1, -3], np.int16))
    same("checked", m.checked(np.array([0.0, 2.0])), np.array([0.5, 2.5]))
    same("checked scalar", m.checked(3.0), np.float64(3.5))
    same("scale", m.scale(np.array([1.0, 3.0])), np.array([1.0, 3.0]) * m.scale(1.0))
    out["scale1"] = m.scale(1.0)
    same("poly", m.poly(np.array([1.0, 2.0])), np.array([2.0, 5.0]))
    out["ufunc_reduce"] = float(m.axpy.reduce(np.array([1.0, 2.0, 3.0])))
    errs = []
    for call in (lambda: m.div(1.0, 0.0), lambda: m.div(np.array([1]), np.array([0])),
                 lambda: m.checked(np.array([1.0, -1.0]))):
        try:
            call()
            errs.append(None)
        except Exception as e:
            # the message ck_set_error recorded in the cached code, read back through
            # the cffi module's libckernel (a second copy would have no message)
            errs.append([type(e).__name__, isinstance(e, (ZeroDivisionError, ValueError)),
                         str(e), ckernels._native.last_error()])
    out["errors"] = errs
    out["numba_after_numeric"] = "numba" in sys.modules
    out["loaded"] = len(native_cache._LOADED)
    st = [f.stats for f in (m.axpy, m.div, m.checked, m.poly)]
    out["kern_hits"] = sum(sum(s.kernel_hits.values()) for s in st)
    out["kern_misses"] = sum(sum(s.kernel_misses.values()) for s in st)
    out["disp_hits"] = sum(sum(s.dispatcher_hits.values()) for s in st)
    out["twice"] = m.twice("ab")
    out["twice_arr"] = m.twice(["x", "yz"]).tolist()
    ints = [0, -7, 2**63 - 1, -2**63]
    out["label"] = m.label(np.array(ints)).tolist() == ["item-" + str(v) for v in ints]
    out["label_u8"] = m.label(np.array([255], np.uint8)).tolist()
    words = ["", "é", "日本語x"]
    xs = [0.1, -2.5e-300, float("nan")]
    out["fmt"] = m.fmt(np.array(ints[:3]), np.array(xs), words).tolist() == [
        m.fmt.py_func(i, x, w) for i, x, w in zip(ints, xs, words)]
    out["first"] = m.first(["ab", "日本語"]).tolist()
    out["char"] = m.char(np.array([65, 0x1F600])).tolist()
    out["joined"] = m.joined(["a,b,c", "", "é,"]).tolist()
    out["length"] = m.length(["abé", ""]).tolist()
    serrs = []
    for call in (lambda: m.first(["ok", ""]), lambda: m.char(np.array([0x110000]))):
        try:
            call()
            serrs.append(None)
        except Exception as e:
            serrs.append([type(e).__name__, isinstance(e, (ValueError, OverflowError)),
                          str(e), ckernels._native.last_error()])
    out["string_errors"] = serrs
    out["numba_after_strings"] = "numba" in sys.modules
    upper = m.make_upper()
    out["upper"] = upper(["ab", "é"]).tolist()
    out["bad"] = bad
    print(json.dumps(out))
""")


# The fallback runs (no compiler, an unusable cache directory) need only a few
# functions to show it: a numeric signature pair, an error raised in compiled code
# and a formatted string (libckernel's text runtime), each checked as above.
SMALL_MODULE = textwrap.dedent("""
    import ckernels

    @ckernels.jit(["int64(int64, int64)", "float64(float64, float64)"], cache=True)
    def axpy(x, y):
        return x * 2 + y

    @ckernels.jit("float64(float64)", cache=True)
    def checked(x):
        if x < 0:
            raise ValueError("negative input")
        return x + 0.5

    @ckernels.jit("string(int64, float64, string)", cache=True)
    def fmt(i, x, s):
        return f"{s:*^7}|{i:+06,d}|{x:.3e}|{x}|{i:#x}"
""")

SMALL_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import nativemod as m
    import ckernels
    bad = []
    for dt in (np.int64, np.float64):
        x, y = np.arange(7).astype(dt), np.arange(3, 10).astype(dt)
        got = m.axpy(x, y)
        if got.dtype != x.dtype or not np.array_equal(got, x * dt(2) + y):
            bad.append(f"axpy {dt}: {got!r}")
    if not np.array_equal(m.checked(np.array([0.0, 2.0])), np.array([0.5, 2.5])):
        bad.append("checked")
    ints, xs, words = [0, -7, 2**63 - 1], [0.1, -2.5e-300, float("nan")], ["", "é", "日本語x"]
    if m.fmt(np.array(ints), np.array(xs), words).tolist() != [
            m.fmt.py_func(i, x, w) for i, x, w in zip(ints, xs, words)]:
        bad.append("fmt")
    try:
        m.checked(np.array([1.0, -1.0]))
        err = None
    except Exception as e:
        err = [type(e).__name__, isinstance(e, ValueError), str(e),
               ckernels._native.last_error()]
    print(json.dumps({"bad": bad, "error": err, "numba": "numba" in sys.modules}))
""")


def run_small(d, cache, extra_env=None, changed=False):
    """SMALL_MODULE in a fresh interpreter: right results and errors.  `changed`:
    axpy's body (and the oracle) is x * 2 - y."""
    source, script = SMALL_MODULE, SMALL_SCRIPT
    if changed:
        source = source.replace("return x * 2 + y", "return x * 2 - y")
        script = script.replace("x * dt(2) + y", "x * dt(2) - y")
    d.mkdir(exist_ok=True)
    (d / "nativemod.py").write_text(source)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=str(d) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.update(extra_env or {})
    p = subprocess.run([sys.executable, "-c", script], env=env, cwd=d,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["bad"] == [], out["bad"]
    err = out["error"]
    assert err[:2] == ["CKValueError", True] and err[2].startswith("negative input [")
    assert err[2].split(", element")[0].rstrip("]") == err[3].rstrip("]")
    return out


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("native_cache")
    (d / "nativemod.py").write_text(MODULE)
    return d


@pytest.fixture(scope="module")
def warm(workdir):
    """The first interpreter: compiles everything (Numba) and stores the libraries."""
    cache = workdir / "cache"
    return cache, run(workdir, cache)


def run(d, cache, extra_env=None, source=MODULE):
    if (d / "nativemod.py").read_text() != source:
        (d / "nativemod.py").write_text(source)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=str(d) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CKN_K", None)
    env.update(extra_env or {})
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=d, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["bad"] == [], out["bad"]
    assert out["twice"] == "abab" and out["twice_arr"] == ["xx", "yzyz"]
    assert out["label"] and out["label_u8"] == ["item-255"] and out["fmt"]
    assert out["first"] == ["a/b", "日/語"] and out["char"] == ["AA", "😀😀"]
    assert out["joined"] == ["a-b-c", "", "é-"] and out["length"] == [3, 0]
    assert out["upper"] == ["AB", "É"]
    empty, char_range = out["string_errors"]
    # messages end with the function, the line and the element (docs/dispatch.md)
    assert empty[:2] == ["CKValueError", True] and empty[2].startswith("empty string [first at ")
    assert "nativemod.py:" in empty[2] and empty[2].endswith(", element 1]")
    assert char_range[:2] == ["CKOverflowError", True]
    assert "%c arg not in range(0x110000)" in char_range[2]
    for e in out["string_errors"]:   # libckernel's last error, without the element
        assert e[2].split(", element")[0].rstrip("]") == e[3].rstrip("]")
    assert out["ufunc_reduce"] == 11.0     # axpy(axpy(1, 2), 3)
    zero, zero_i, neg = out["errors"]
    assert zero[:2] == ["CKZeroDivisionError", True] and "division by zero" in zero[2]
    assert zero_i[:2] == ["CKZeroDivisionError", True]
    assert neg[:2] == ["CKValueError", True] and neg[2].startswith("negative input [")
    for e in out["errors"]:      # the exception's message is libckernel's last error
        assert e[2].split(", element")[0].rstrip("]") == e[3].rstrip("]")
    return out


def test_native_cache_fresh_interpreters(workdir, warm):
    cache, first = warm
    assert first["numba_after_decorating"] and first["kern_misses"] > 0
    assert first["scale1"] == 2.0
    indexes = glob.glob(str(cache / "*" / "*.ckn"))
    libs = glob.glob(str(cache / "*" / "*.so"))
    # 15 numeric signatures with explicit types and poly(float64), and 8 string
    # signatures: native; upper(string) needs Numba's Unicode tables: an index
    # that says so, no library
    assert len(libs) == 24 and len(indexes) == 25
    upper = [json.load(open(i)) for i in indexes if "upper" in i]
    assert len(upper) == 1 and not upper[0]["native"]
    assert "numba_gettyperecord" in upper[0]["foreign_symbols"]
    second = run(workdir, cache)
    # decorating, every numeric and every string call: no Numba; upper imports it
    assert not second["numba_after_decorating"]
    assert not second["numba_after_numeric"]
    assert not second["numba_after_strings"]
    assert second["loaded"] == 24     # one library per native signature, each loaded once
    assert second["kern_misses"] == 0 and second["kern_hits"] == 7
    assert second["disp_hits"] == 7   # a native hit counts as a hit
    assert second["scale1"] == 2.0

    # a changed closure value: a new key, compiled (Numba imported), right value
    k3 = run(workdir, cache, {"CKN_K": "3"})
    assert k3["scale1"] == 3.0 and k3["numba_after_decorating"]
    # a changed body: never the stale kernel (SMALL_MODULE: its cache stored
    # once, then axpy's body changed; fmt's string library is keyed by the source too)
    small, small_cache = workdir / "small", workdir / "small_cache"
    assert run_small(small, small_cache)["numba"]          # compiled and stored,
    assert not run_small(small, small_cache)["numba"]      # then loaded natively
    assert run_small(small, small_cache, changed=True)["numba"]


def test_native_cache_bad_files_and_no_compiler(workdir, warm, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(warm[0], cache)
    libs = sorted(glob.glob(str(cache / "*" / "*.so")))
    indexes = sorted(glob.glob(str(cache / "*" / "*.ckn")))
    assert libs and indexes
    # truncated, foreign (another function's library under this name), corrupt index
    with open(libs[0], "r+b") as fh:
        fh.truncate(100)
    with open(libs[1], "wb") as fh, open(libs[2], "rb") as other:
        fh.write(other.read())
    for ix in indexes[3:]:
        with open(ix, "w") as fh:
            fh.write("{not json")
    # a string signature's library too (one per source version of the module)
    fmt_libs = [x for x in libs if "_fmt-" in os.path.basename(x)]
    for lib in fmt_libs:
        with open(lib, "r+b") as fh:
            fh.truncate(64)
    out = run(workdir, cache)
    assert out["numba_after_decorating"]          # misses: Numba serves them
    # the damaged string library of this source was compiled again (bypassing
    # Numba's cache) and rewritten: the next interpreter loads it without Numba
    source = hashlib.sha256((workdir / "nativemod.py").read_bytes()).hexdigest()

    def index_of(lib):
        try:      # its index may be one of those made corrupt above
            return json.loads(open(lib[:-3] + ".ckn").read())
        except ValueError:
            return {"key": {}}
    current = [x for x in fmt_libs if index_of(x)["key"].get("source") == source]
    assert len(current) == 1
    index = index_of(current[0])
    with open(current[0], "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == index["sha256"]
    again = run(workdir, cache)
    assert not again["numba_after_strings"]
    # no C compiler (and no nm): no native cache, everything still right
    nocc = tmp_path / "nocc"
    bin_dir = tmp_path / "empty_bin"
    bin_dir.mkdir()
    env = {"PATH": str(bin_dir), "CC": "/nonexistent/cc"}
    small = tmp_path / "small"
    run_small(small, nocc, env)
    assert glob.glob(str(nocc / "*" / "*.nbi"))            # Numba's cache only
    assert not glob.glob(str(nocc / "*" / "*.ckn"))
    # an unusable cache directory (below a regular file): Numba caches elsewhere or
    # not at all; no native files, right results
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    run_small(small, blocker / "cache")
    assert not glob.glob(str(small / "__pycache__" / "*.ckn"))
