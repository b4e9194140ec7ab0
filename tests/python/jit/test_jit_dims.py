"""Jitted functions over dims (issue 22, docs/dims.md): fixed, symbolic and var
core dims in arguments and results on the CPU, against NumPy (einsum, cumsum,
cross, @), plain Python and awkward-array; dimension variables matched
across arguments; var results built in the destination's arena; errors.

The functions are compiled once, at import (Numba compiles dominate CI time)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels import errors
from ckernels.jit import dims

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- kernels --
@ckernels.jit("float64(N * float64, N * float64)")
def dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


@ckernels.jit("float64(var * float64)")
def rowsum(r):
    return np.sum(r)


@ckernels.jit("N * float64(N * float64)")
def cumsum(x):
    return np.cumsum(x)


@ckernels.jit("3 * float64(3 * float64, 3 * float64)")
def cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@ckernels.jit("M * float64(M * N * float64, N * float64)")
def matvec(m, v):
    return m @ v


@ckernels.jit("var * float64(var * float64)")
def positive(r):
    return [x for x in r if x > 0]


@ckernels.jit("var * float64(var * float64)")
def positive_out(r, out):
    for x in r:
        if x > 0:
            out.append(x)


@ckernels.jit("int64(var * string)")
def long_words(words):
    n = 0
    for w in words:
        if len(w) > 2:
            n += 1
    return n


@ckernels.jit("float64(var * {x: float64, y: float64})")
def xy_sum(pts):
    s = 0.0
    for p in pts:
        s += p.x * p.y
    return s


@ckernels.jit("float64(N * float64)")
def mean_checked(x):
    if len(x) == 0:
        raise ValueError("empty row")
    return x.mean()


# ---------------------------------------------------------------- helpers --
def ragged(rng, nrows, maxlen=6):
    return [list(rng.standard_normal(rng.integers(0, maxlen + 1))) for _ in range(nrows)]


shapes = st.tuples(st.integers(0, 5), st.integers(1, 6))


# ------------------------------------------------------------ signatures --
def test_signature_parts():
    c = dims.core("M * N * float64")
    assert [str(d) for d in c.dims] == ["M", "N"] and c.dtype == "float64"
    assert dot.signatures == ["float64(N * float64, N * float64)"]
    assert dims.gufunc_signature("float64", ["N * float64", "N * float64"]) == "(n),(n)->()"
    assert dims.gufunc_signature("3 * float64", ["3 * float64"] * 2) == "(3),(3)->(3)"
    assert dims.gufunc_signature("float64", ["var * float64"]) is None


@pytest.mark.parametrize("sig, msg", [
    ("K * float64(N * float64)", "the result's dimension variable K is bound by no argument"),
    ("float64(N * var * float64)", "a var dim below the first core dim"),
    ("var * var * float64(var * float64)", "a var result is one var dim"),
    ("N * string(N * float64)", "string elements of a dimensioned result take one var dim"),
    ("float64(strided * float64)", "signatures take fixed (3 *), symbolic (N *) and var"),
])
def test_bad_signatures(sig, msg):
    with pytest.raises((TypeError, errors.NotSupportedError), match=msg.replace("(", r"\(")
                       .replace(")", r"\)").replace("*", r"\*")):
        ckernels.jit(sig)(lambda x: x)


def test_patterns_are_not_array_types():
    with pytest.raises(errors.CKTypeError, match="is a pattern type: the dimension variable N"):
        ckernels.array([1.0, 2.0], type="N * float64")


# --------------------------------------------------- fixed/symbolic dims --
@SETTINGS
@given(shape=shapes, seed=st.integers(0, 2**32 - 1))
def test_dot_against_einsum(shape, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape[1:])
    np.testing.assert_allclose(dot(a, b), np.einsum("ij,j->i", a, b), rtol=1e-12, atol=1e-12)


def test_dot_on_ckernels_arrays_and_lists():
    a = ckernels.asarray(np.arange(12.0).reshape(3, 4))
    res = dot(a, [1.0, 0.0, 0.0, 2.0])
    assert isinstance(res, ckernels.Array) and res.to_list() == [6.0, 18.0, 30.0]
    assert dot([1.0, 2.0], [3.0, 4.0]) == 11.0       # no outer dims: a scalar
    # outer dims broadcast: (2, 1, 4) with (3, 4)
    x, y = np.arange(8.0).reshape(2, 1, 4), np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(dot(x, y), np.einsum("...i,...i", x, y))


def test_dot_var_outer_dim():
    a = ckernels.array([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]], type="var * var * 2 * float64")
    assert dot(a, [1.0, 1.0]).to_list() == [[3.0, 7.0], [11.0]]


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 2**32 - 1))
def test_cumsum_against_numpy(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape)
    np.testing.assert_allclose(cumsum(a), np.cumsum(a, axis=-1), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(n=st.integers(0, 6), seed=st.integers(0, 2**32 - 1))
def test_cross_against_numpy(n, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
    np.testing.assert_allclose(cross(a, b), np.cross(a, b), rtol=1e-12, atol=1e-12)


@SETTINGS
@given(outer=st.integers(0, 3), m=st.integers(1, 5), n=st.integers(1, 5),
       seed=st.integers(0, 2**32 - 1))
def test_matvec_against_matmul(outer, m, n, seed):
    rng = np.random.default_rng(seed)
    a, v = rng.standard_normal((outer, m, n)), rng.standard_normal(n)
    np.testing.assert_allclose(matvec(a, v), a @ v, rtol=1e-12, atol=1e-12)


def test_output_parameter_is_not_an_argument():
    a, b = np.eye(3), np.ones((3, 3))
    out = np.empty((3, 3))
    assert cross(a, b, out=out) is out                     # out= of the call, not `out`
    np.testing.assert_allclose(out, np.cross(a, b))
    res = cross(ckernels.asarray(a), [1.0, 1.0, 1.0])       # the general path
    np.testing.assert_allclose(res.to_numpy() if hasattr(res, "to_numpy") else np.asarray(res),
                               np.cross(a, np.ones(3)))
    ca = ckernels.asarray(a)
    with pytest.raises(TypeError, match="takes 2 arguments, 3 given"):
        cross(ca, ca, ca)                                   # the general path's check


def test_out_is_written_in_place():
    a = np.arange(6.0).reshape(2, 3)
    out = np.zeros((2, 3))
    assert cumsum(a, out=out) is out                       # the gufunc's out=
    np.testing.assert_array_equal(out, np.cumsum(a, axis=1))
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        cumsum(a, out=np.zeros((2, 4)))
    ca, co = ckernels.asarray(a), ckernels.asarray(np.zeros((2, 4)))
    with pytest.raises(errors.CKValueError, match="dimension variable N is 3 in argument 0 and "
                                                  "4 in the result"):
        cumsum(ca, out=co)                                  # the general path


# ---------------------------------------------------------------- var dims --
def test_ragged_row_sum_against_python_and_awkward():
    ak = pytest.importorskip("awkward")
    rows = ragged(np.random.default_rng(1), 50)
    got = rowsum(ckernels.array(rows, type="var * var * float64")).to_list()
    np.testing.assert_allclose(got, [sum(r) for r in rows], atol=1e-12)
    np.testing.assert_allclose(got, ak.to_numpy(ak.sum(ak.Array(rows), axis=1)), atol=1e-12)


def test_var_signature_takes_strided_rows():
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(rowsum(a), a.sum(axis=1))


@pytest.mark.parametrize("f", [positive, positive_out], ids=["list", "builder"])
def test_filtered_rows(f):
    ak = pytest.importorskip("awkward")
    rows = ragged(np.random.default_rng(2), 40)
    res = f(ckernels.array(rows, type="var * var * float64"))
    assert str(res.type) == "var * var * float64"
    want = ak.Array(rows)
    assert res.to_list() == ak.to_list(want[want > 0])
    assert res.to_list() == [[x for x in r if x > 0] for r in rows]


def test_var_results_share_one_arena():
    res = positive_out(ckernels.array([[1.0, -1.0, 2.0], [], [3.0]]))
    assert res.to_list() == [[1.0, 2.0], [], [3.0]]
    arena = res.debug_repr()
    assert "pod" in arena.lower()


def test_var_results_on_threads():
    """Var results split over two threads (each row allocated from the
    thread's own arena, adopted by the result's): the serial rows."""
    rows = ckernels.array(ragged(np.random.default_rng(5), 70_000))
    assert str(rows.type) == "strided * var * float64"   # the outer dim splits
    old = ckernels.get_num_threads()
    try:
        ckernels.set_num_threads(1)
        want = positive_out(rows).to_list()
        ckernels.set_num_threads(2)
        got = positive_out(rows)
    finally:
        ckernels.set_num_threads(old)
    assert got.to_list() == want == [[x for x in r if x > 0] for r in rows.to_list()]


def test_strings_and_structs_under_dims():
    words = ckernels.array([["ab", "abc", "hello"], [], ["xyz"]])
    assert np.asarray(long_words(words)).tolist() == [2, 0, 1]
    pts = ckernels.array([[(1.0, 2.0), (3.0, 4.0)], [(5.0, 6.0)]],
                         type="var * var * {x: float64, y: float64}")
    assert xy_sum(pts).to_list() == [14.0, 30.0]


# ------------------------------------------------------------------ errors --
def test_mismatched_dimension_variables():
    with pytest.raises(errors.CKValueError,
                       match="dimension variable N is 3 in argument 0 and 4 in argument 1"):
        dot([1.0, 2.0, 3.0], ckernels.asarray(np.ones(4)))
    with pytest.raises(ValueError, match="mismatch in its core dimension 0"):   # NumPy's
        dot(np.ones(3), np.ones(4))


def test_wrong_core_size_and_too_few_dims():
    with pytest.raises(errors.CKValueError, match="core dim 0 has size 2, the signature's "
                                                  r"'3 \* float64' wants 3"):
        cross([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="core dimension 0"):
        cross(np.ones(2), np.ones(2))
    with pytest.raises(errors.CKValueError, match="fewer than the 1 core dims"):  # NumPy's
        dot(ckernels.array(1.0), ckernels.array(2.0))


def test_symbolic_dim_refuses_ragged_rows():
    with pytest.raises(errors.CKTypeError, match="needs a fixed or strided dim"):
        dot(ckernels.array([[1.0], [2.0, 3.0]]), ckernels.array([[1.0], [2.0, 3.0]]))


def test_errors_raised_inside_keep_their_class_and_message():
    with pytest.raises(errors.CKValueError, match="empty row"):
        mean_checked(np.ones((2, 0)))
    assert mean_checked(np.arange(6.0).reshape(2, 3)).tolist() == [1.0, 4.0]


# ----------------------------------------------------------------- gufuncs --
def test_gufuncs_for_fixed_and_symbolic_dims():
    assert isinstance(dot.ufunc, np.ufunc) and dot.ufunc.signature == "(n),(n)->()"
    assert cross.ufunc.signature == "(3),(3)->(3)"
    assert matvec.ufunc.signature == "(m,n),(n)->(m)"
    assert rowsum.ufunc is None and positive.ufunc is None      # var dims: general path
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(dot(a.T, np.arange(4.0), axes=[(0,), (0,), ()]),
                                  a @ np.arange(4.0))
    np.testing.assert_array_equal(dot(a, a, keepdims=True), (a * a).sum(1, keepdims=True))
    np.testing.assert_array_equal(cumsum(a.T, axis=0), np.cumsum(a.T, axis=0))
    assert dot(np.arange(4), np.arange(4)) == 14.0           # int64 cast safely
    with pytest.raises(TypeError):
        dot(np.ones(3, complex), np.ones(3, complex))         # not safely


def test_gufunc_matches_numba_guvectorize():
    numba = pytest.importorskip("numba")

    @numba.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
    def gdot(x, y, out):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        out[0] = s
    rng = np.random.default_rng(5)
    for xs, ys in [((4, 1, 5), (3, 5)), ((0, 5), (5,)), ((2, 3), (2, 3))]:
        x, y = rng.standard_normal(xs), rng.standard_normal(ys)
        np.testing.assert_allclose(dot(x, y), gdot(x, y), rtol=1e-12, atol=1e-12)
    x = rng.standard_normal((2, 3, 5))
    np.testing.assert_allclose(dot(x, x, axes=[(1,), (1,), ()]),
                               gdot(x, x, axes=[(1,), (1,), ()]), rtol=1e-12)


def test_gufunc_with_pandas_xarray_dask():
    xr = pytest.importorskip("xarray")
    da = pytest.importorskip("dask.array")
    a = np.arange(12.0).reshape(3, 4)
    xa = xr.DataArray(a, dims=("row", "col"))
    res = xr.apply_ufunc(dot, xa, xa, input_core_dims=[["col"], ["col"]])
    assert res.dims == ("row",)
    np.testing.assert_array_equal(res.values, (a * a).sum(1))
    d = da.from_array(a, chunks=(2, 4))
    np.testing.assert_array_equal(da.apply_gufunc(dot.ufunc, "(n),(n)->()", d, d).compute(),
                                  (a * a).sum(1))
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(a)
    np.testing.assert_array_equal(dot(df, df), (a * a).sum(1))


def test_wrong_returned_size():
    f = ckernels.jit("N * float64(N * float64)")(lambda x: x[1:])
    with pytest.raises(errors.CKValueError, match="shape differs from the result's core dims"):
        f(np.ones(3))


def test_var_result_allocation_failures_are_clear_errors():
    """Every library allocation of a var-result call failing in turn (the
    jitted builder's ck_pod_allocate / ck_pod_resize included): an
    OutOfMemoryError naming the allocation, nothing leaked."""
    from ckernels.lowlevel import lib
    rows = ckernels.array([[1.0] * 100] * 50)
    positive_out(rows)
    messages = set()
    for k in range(1, 200):
        lib.ck_debug_fail_alloc_after(k)
        try:
            positive_out(rows)
        except errors.OutOfMemoryError as exc:
            messages.add(str(exc).split(":")[0])
        finally:
            fired = lib.ck_debug_fail_alloc_fired()
            lib.ck_debug_fail_alloc_after(0)
        if not fired:
            break
    assert {"ck_pod_allocate", "ck_pod_resize"} <= messages
