"""The element function of a signature with core dims is inlined into the
entry points' row loop (``cpu_codegen.inline_into_loops``): no call per row,
and the results stay NumPy's / Numba's."""

import numba
import numpy as np

import ckernels


def _dot(x, y):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * y[i]
    return s


dot = ckernels.jit("float64(N * float64, N * float64)")(_dot)


def _strided_ir(fn) -> str:
    (compiled,) = fn.compiled.values()
    tramp = compiled._owner.trampolines
    text = tramp.library.get_llvm_str()
    start = text.index(f"@{tramp.symbase}_strided(")
    return text[start:text.index("\n}\n", start)]


def test_element_function_inlined_into_the_row_loop():
    x = np.arange(24.0).reshape(6, 4)
    y = np.linspace(-1.0, 1.0, 24).reshape(6, 4)
    out = np.empty(6)
    dot(x, y, out=out)
    np.testing.assert_allclose(out, np.einsum("ij,ij->i", x, y))
    # strided rows and a reversed out= go through the same loop
    out2 = np.zeros(12)
    dot(x[::-1, ::2], y[::-1, ::2], out=out2[::-2])
    np.testing.assert_allclose(out2[::-2], np.einsum("ij,ij->i", x[::-1, ::2], y[::-1, ::2]))
    ir = _strided_ir(dot)
    assert "_ck_elem" not in ir, "the element function is still called per row"


def test_inlined_loop_matches_guvectorize():
    @numba.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
    def gdot(x, y, out):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * y[i]
        out[0] = s

    rng = np.random.default_rng(5)
    for n in (0, 1, 7, 8, 9, 33):
        x, y = rng.standard_normal((5, n)), rng.standard_normal((5, n))
        np.testing.assert_array_equal(np.asarray(dot(x, y)), gdot(x, y))
