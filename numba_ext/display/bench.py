"""``ckernels.bench``: time a jitted function against NumPy, ``numba.vectorize``
and pyopencl on a few sizes, and show the result as a table and a plot.

>>> r = ckernels.bench(axpy, sizes=(1_000, 100_000), numpy=lambda x, y: 2.0 * x + y)
>>> r                       # a table in a terminal, a plot and a table in Jupyter
>>> r.times["ckernels"]     # seconds per call, one per size

Every candidate gets the same inputs (made once per size, outside the timed
region) and, where it takes one, a preallocated output.  A run repeats a call
until it lasts ``min_time`` seconds; the best of ``repeat`` runs is kept,
divided by the number of calls.  Each candidate's result is compared with
the ckernels CPU result (``agree``).  A candidate that cannot run here
(pyopencl without a platform, Numba missing a signature) is listed in
``skipped`` with the reason instead of failing the whole run.

Matplotlib is an optional dependency, imported only to draw
(``pip install 'ckernels[display]'``); the plot is made with the Agg canvas
directly, so it needs no display and leaves pyplot's state alone.
"""

from __future__ import annotations

import base64
import html as _html
import io
import time

import numpy as np

from ..errors import InvalidArgumentError
from ._svg import FONT

DEFAULT_SIZES = (1_000, 100_000, 1_000_000)


def _missing_matplotlib() -> ImportError:
    return ImportError("ckernels.bench: plotting needs matplotlib, an optional dependency: "
                       "pip install 'ckernels[display]' (or pip install matplotlib)")


def _signature(func, signature):
    """(result dtype, [argument dtypes], text) of the signature to time."""
    if signature is None:
        sigs = list(getattr(func, "signatures", []) or [])
        if not sigs:
            raise InvalidArgumentError("ckernels.bench: pass signature= (the function has "
                                       "no compiled signature)")
        signature = sigs[0]
    text = str(signature).replace(" ", "")
    ret, _, rest = text.partition("(")
    args = [a for a in rest.rstrip(")").split(",") if a]
    try:
        return np.dtype(ret), [np.dtype(a) for a in args], f"{ret}({', '.join(args)})"
    except TypeError:
        raise InvalidArgumentError(f"ckernels.bench: signature {signature!r} is not made of "
                                   "NumPy element types") from None


def _func_name(func) -> str:
    """A short name for titles: the function's qualified name, an operation's
    ``ckernels.ops.<name>``, else the type's name (never a long repr)."""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    if isinstance(name, str):
        return name
    op = getattr(func, "name", None)
    if isinstance(op, str):
        return f"{type(func).__module__}.{op}"
    return type(func).__name__


def _default_inputs(arg_dtypes, seed):
    def make(n):
        rng = np.random.default_rng(seed)
        out = []
        for dt in arg_dtypes:
            if dt.kind == "f":
                out.append(rng.standard_normal(n).astype(dt))
            elif dt.kind == "c":
                out.append((rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt))
            elif dt.kind in "iu":
                out.append(rng.integers(1, 100, n).astype(dt))   # no zero divisors
            elif dt.kind == "b":
                out.append(rng.random(n) < 0.5)
            else:
                raise InvalidArgumentError(f"ckernels.bench: no default inputs for {dt}; "
                                           "pass inputs=")
        return tuple(out)
    return make


def _best(call, repeat: int, min_time: float) -> float:
    """Seconds per call: the best of ``repeat`` runs of ``number`` calls, with
    ``number`` doubled until a run lasts ``min_time``."""
    call()                      # warm-up (compilation, first-touch of memory)
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        dt = time.perf_counter() - t0
        if dt >= min_time or number >= 1 << 20:
            break
        number *= 2
    best = dt / number
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        for _ in range(number):
            call()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _pyopencl_candidate(body, arg_dtypes, ret_dtype):
    """A pyopencl ElementwiseKernel over arguments x0, x1, ... and ``out``."""
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.elementwise import ElementwiseKernel
    from pyopencl.tools import dtype_to_ctype
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    params = ", ".join([f"{dtype_to_ctype(d)} *x{i}" for i, d in enumerate(arg_dtypes)] +
                       [f"{dtype_to_ctype(ret_dtype)} *out"])
    kernel = ElementwiseKernel(ctx, params, body, "ckernels_bench")

    def prepare(xs):
        dx = [cla.to_device(queue, x) for x in xs]
        dout = cla.empty(queue, xs[0].shape, ret_dtype)

        def run():
            kernel(*dx, dout)
            queue.finish()
        return run, lambda: dout.get()
    return prepare


class BenchResult:
    """Timings of one function: ``times[name]`` is seconds per call for each of
    ``sizes``; ``agree[name]`` whether that candidate's results matched the
    ckernels CPU result; ``skipped[name]`` why a candidate did not run."""

    def __init__(self, name, signature, sizes, times, agree, skipped):
        self.name = name
        self.signature = signature
        self.sizes = tuple(sizes)
        self.times = times
        self.agree = agree
        self.skipped = skipped
        self._png = None

    def ratio(self, name: str, baseline: str = "ckernels") -> list:
        """``times[name] / times[baseline]`` per size (> 1: ``name`` is slower)."""
        return [t / b for t, b in zip(self.times[name], self.times[baseline])]

    # ---- text --------------------------------------------------------------------
    def table(self) -> str:
        head = ["candidate"] + [f"n={n:,}" for n in self.sizes] + ["agrees"]
        rows = [head]
        for name, ts in self.times.items():
            rows.append([name] + [f"{t / n * 1e9:.3g}" for t, n in zip(ts, self.sizes)] +
                        ["yes" if self.agree.get(name, True) else "NO"])
        if "ckernels" in self.times:
            for name in self.times:
                if name != "ckernels":
                    rows.append([f"  {name} / ckernels"] +
                                [f"{r:.2f}x" for r in self.ratio(name)] + [""])
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        # the plot's unit: time per element (times[name] keeps seconds per call)
        lines = [f"ckernels.bench {self.name}: {self.signature}, time per element in ns "
                 "(best of the repeats)"]
        lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                            for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
        lines += [f"skipped {name}: {why}" for name, why in self.skipped.items()]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()

    # ---- plot --------------------------------------------------------------------
    def figure(self, width: float = 7.6, height: float = 3.6):
        """A matplotlib Figure (Agg canvas: no display needed): time per element
        against size, log-log, one line per candidate."""
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError:
            raise _missing_matplotlib() from None
        # constrained layout makes room for the tick and axis labels and for the
        # legend right of the axes (where it covers no point): nothing is cut off
        fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
        FigureCanvasAgg(fig)
        self.plot(fig.add_subplot())
        return fig

    def plot(self, ax=None):
        """Draw into matplotlib axes ``ax`` (a new figure's if None); returns ``ax``."""
        if ax is None:
            return self.figure().axes[0]
        markers = "osD^vx*+"
        for k, (name, ts) in enumerate(self.times.items()):
            ns = [t / n * 1e9 for t, n in zip(ts, self.sizes)]
            ax.plot(self.sizes, ns, marker=markers[k % len(markers)], label=name,
                    linewidth=2.2 if name == "ckernels" else 1.4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        # plain tick labels on the time axis (0.5, 2, 40, not 4×10^1): the
        # log formatter's choice of which ticks to label, its text as %g
        ax.yaxis.set_major_formatter(_plain_log_formatter())
        ax.yaxis.set_minor_formatter(_plain_log_formatter(minor=True))
        ax.set_xlabel("elements")
        ax.set_ylabel("time per element (ns)")
        ax.set_title(f"{self.name}: {self.signature}", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        return ax

    def png(self) -> bytes:
        """The plot as PNG bytes (drawn once, then kept: the result does not change)."""
        if self._png is None:
            buf = io.BytesIO()
            self.figure().savefig(buf, format="png")
            self._png = buf.getvalue()
        return self._png

    def _repr_html_(self) -> str:
        try:
            img = (f"<img alt='timings of {_html.escape(self.name)}' "
                   f"src='data:image/png;base64,{base64.b64encode(self.png()).decode()}'/>")
        except ImportError as exc:
            img = f"<p><i>{_html.escape(str(exc))}</i></p>"
        return (f"<div class='ckernels-bench'>{img}<pre style='margin:4px 0;font-family:"
                f"{FONT}'>"
                f"{_html.escape(self.table())}</pre></div>")


def _plain_log_formatter(minor: bool = False):
    """matplotlib's ``LogFormatter`` (it labels the decades, and the minor
    ticks of axes spanning few decades) with plain numbers: ``40``, ``0.2``."""
    from matplotlib.ticker import LogFormatter

    class PlainLogFormatter(LogFormatter):
        def _num_to_string(self, x, vmin, vmax):
            return f"{x:g}"

    return PlainLogFormatter(labelOnlyBase=False) if minor else PlainLogFormatter()


def bench(func, *, sizes=DEFAULT_SIZES, signature=None, inputs=None, numpy=None,
          vectorize=True, device=None, pyopencl=None, others=None, repeat: int = 5,
          min_time: float = 0.002, seed: int = 0, rtol: float | None = None) -> BenchResult:
    """Time ``func`` (a ``@ckernels.jit`` function, or any callable taking NumPy
    arrays and ``out=``) on arrays of each of ``sizes``, against:

    * ``numpy`` -- a callable computing the same with NumPy (``lambda x, y: 2 * x + y``);
    * ``vectorize`` -- True: ``numba.vectorize`` of the jitted function's Python
      code for ``signature`` (or pass a ufunc-like callable; False: none);
    * ``device`` -- a device ``ckernels.Context`` (OpenCL, CUDA): ``func`` on
      device arrays of that context (inputs copied in beforehand, not timed);
    * ``pyopencl`` -- the body of a pyopencl ``ElementwiseKernel`` over
      ``x0, x1, ...`` and ``out`` (``"out[i] = 2*x0[i] + x1[i]"``);
    * ``others`` -- ``{name: callable(*arrays)}``.

    ``signature`` -- the element types timed (default: the function's first
    compiled one); ``inputs`` -- ``callable(n) -> tuple of arrays`` (default:
    seeded random values, integers in [1, 100)).  Returns a
    :class:`BenchResult`."""
    ret_dt, arg_dts, sig_text = _signature(func, signature)
    sizes = tuple(int(n) for n in sizes)
    if not sizes or any(n < 1 for n in sizes):
        raise InvalidArgumentError(f"ckernels.bench: sizes must be positive, got {sizes}")
    if repeat < 1:
        raise InvalidArgumentError(f"ckernels.bench: repeat must be >= 1, got {repeat}")
    make = inputs or _default_inputs(arg_dts, seed)
    name = _func_name(func)
    if rtol is None:
        rtol = 1e-4 if ret_dt in (np.float32, np.complex64) else 1e-9

    candidates, skipped = {}, {}

    def cpu(xs):
        out = np.empty(xs[0].shape, ret_dt)
        return (lambda: func(*xs, out=out)), (lambda: out)
    candidates["ckernels"] = cpu
    if device is not None:
        if not (hasattr(device, "array") and hasattr(device, "empty")):
            raise InvalidArgumentError("ckernels.bench: device= takes a ckernels.Context, "
                                       f"not {type(device).__name__}")

        def on_device(xs, ctx=device):
            dxs = [ctx.array(x) for x in xs]
            dout = ctx.empty(xs[0].shape, ret_dt)
            return (lambda: func(*dxs, out=dout)), (lambda: dout.to_numpy())
        candidates[f"ckernels {device.kind}"] = on_device
    if numpy is not None:
        candidates["numpy"] = lambda xs: ((lambda: numpy(*xs)), None)
    vec = _vectorized(func, vectorize, sig_text, skipped)
    if vec is not None:
        def vcall(xs):
            out = np.empty(xs[0].shape, ret_dt)
            return (lambda: vec(*xs, out=out)), (lambda: out)
        candidates["numba.vectorize"] = vcall
    if pyopencl is not None:
        try:
            prep = _pyopencl_candidate(pyopencl, arg_dts, ret_dt)
            candidates["pyopencl"] = lambda xs: prep(xs)
        except Exception as exc:   # noqa: BLE001 -- no pyopencl / platform: say so
            skipped["pyopencl"] = f"{type(exc).__name__}: {exc}"
    for k, fn in (others or {}).items():
        candidates[k] = (lambda f: lambda xs: ((lambda: f(*xs)), None))(fn)

    times = {k: [] for k in candidates}
    agree = {k: True for k in candidates}
    for n in sizes:
        xs = tuple(make(n))
        reference = None
        for k, prepare in candidates.items():
            run, result = prepare(xs)
            times[k].append(_best(run, repeat, min_time))
            got = np.asarray(result() if result is not None else run())
            if reference is None:
                reference = got.copy()
            elif not np.allclose(got, reference, rtol=rtol, atol=rtol, equal_nan=True):
                agree[k] = False
    return BenchResult(name, sig_text, sizes, times, agree, skipped)


def _vectorized(func, vectorize, sig_text, skipped):
    if vectorize is False or vectorize is None:
        return None
    if vectorize is not True:
        return vectorize
    py = getattr(func, "py_func", None)
    if py is None:
        skipped["numba.vectorize"] = "not a @ckernels.jit function (pass vectorize=<ufunc>)"
        return None
    try:
        import numba
        return numba.vectorize([sig_text])(py)
    except Exception as exc:   # noqa: BLE001 -- Numba cannot vectorize it: say so
        skipped["numba.vectorize"] = f"{type(exc).__name__}: {exc}"
        return None


__all__ = ["bench", "BenchResult", "DEFAULT_SIZES"]
