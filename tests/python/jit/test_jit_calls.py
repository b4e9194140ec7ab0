"""How a jitted function is called and decorated: argument counts said as
Python and ``numba.vectorize`` say them, defaults and keyword arguments bound
before dispatch, ``*args``/``**kwargs``/keyword-only parameters refused at
decoration, the decorator's own keywords checked."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ckernels


@ckernels.jit("float64(float64, float64, float64, float64)")
def f4(a, b, c, d):
    return a + 2 * b + 3 * c + 4 * d


@ckernels.jit
def lazy4(a, b, c, d):
    return a + 2 * b + 3 * c + 4 * d


@ckernels.jit("float64(float64, float64)")
def with_default(x, y=5.0):
    return x * 10 + y


@ckernels.jit
def lazy_default(x, y=5.0):
    return x * 10 + y


lazy_default(1.0)      # compiled here: a compiled kernel holds a memblock for good
X = np.ones(3)


@pytest.mark.parametrize("fn", [f4, lazy4], ids=["explicit", "lazy"])
@pytest.mark.parametrize("args", [(X, X, X), (1.0, 2.0, 3.0), ([1.0], [2.0], [3.0]),
                                  (ckernels.array([1.0]), X, X)],
                         ids=["numpy", "scalars", "lists", "ckernels"])
def test_too_few_arguments(fn, args):
    with pytest.raises(TypeError, match=rf"^{fn.__name__}\(\) takes 4 arguments, 3 given"):
        fn(*args)


def test_too_many_arguments():
    with pytest.raises(TypeError, match=r"^f4\(\) takes 4 arguments, 6 given"):
        f4(X, X, X, X, X, X)
    with pytest.raises(TypeError, match=r"^f4\(\) takes 4 arguments, 5 given"):
        f4([1.0], 1.0, 1.0, 1.0, 1.0)           # no positional out= off the ufunc path
    out = np.empty(3)
    assert f4(X, X, X, X, out) is out            # NumPy operands: the ufunc's out


@pytest.mark.parametrize("fn", [with_default, lazy_default], ids=["explicit", "lazy"])
def test_defaults_and_keywords_are_bound(fn):
    x = np.array([1.0, 2.0])
    assert fn(x).tolist() == [15.0, 25.0]
    assert fn(x, y=2.0).tolist() == [12.0, 22.0]
    assert fn(x=x, y=1.0).tolist() == [11.0, 21.0]
    assert fn(y=1.0, x=[1.0]).to_list() == [11.0]                # the general path
    assert fn(2.0) == 25.0
    out = np.empty(2)
    assert fn(x, y=0.0, out=out) is out and out.tolist() == [10.0, 20.0]
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        fn(x, x=x)
    with pytest.raises(TypeError, match=r"takes 2 arguments, 1 given \(missing 'x'\)"):
        fn(y=1.0)


@pytest.mark.parametrize("src, match", [
    ("def f(*xs): return xs[0]", r"f\(\) takes \*xs: a kernel takes a fixed number"),
    ("def f(x, **kw): return x", r"f\(\) takes \*\*keywords"),
    ("def f(x, *, y=1.0): return x + y", r"keyword-only parameters \(y\)"),
])
def test_what_a_kernel_cannot_take_is_refused_at_decoration(src, match):
    ns = {}
    exec(src, ns)
    with pytest.raises(TypeError, match=match):
        ckernels.jit("float64(float64)")(ns["f"])
    with pytest.raises(TypeError, match=match):
        ckernels.jit(ns["f"])


def test_signature_arity_must_match_the_parameters():
    def g(x, y=1.0):
        return x + y
    with pytest.raises(TypeError, match=r"signature float64\(float64\) has 1 argument\(s\); "
                                        r"g\(x, y=1.0\) takes 2"):
        ckernels.jit("float64(float64)")(g)


def test_decorator_keywords_are_checked():
    def h(x):
        return x
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'bogus'; it takes "
                                        r"cache, register, error_model, identity and Numba's "
                                        r"fastmath"):
        ckernels.jit("float64(float64)", bogus=1)
    with pytest.raises(TypeError, match="'parallel'"):
        ckernels.jit(h, parallel=True)
    with pytest.raises(TypeError, match="nopython=False is not possible"):
        ckernels.jit("float64(float64)", nopython=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # Numba's "nopython is set for njit" warning
        k = ckernels.jit("float64(float64)", nopython=True, fastmath=True)(h)
    assert k(2.0) == 2.0
