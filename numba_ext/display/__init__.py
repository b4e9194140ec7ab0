"""``ckernels.display``: pictures and rich displays of the live objects.

Every function here takes a live object (or a C pointer) and reads it through
the C API; nothing is drawn from a static image or a cached description.

* :func:`show` -- ``ckernels.show(obj)``: a :class:`Picture` that Jupyter
  displays (SVG or HTML) and that prints as text elsewhere.
* :func:`html` -- the rich HTML display of an object (what ``_repr_html_``
  returns): a compact view, with the memory picture inside a ``<details>``
  (on request) where there is one.
* pictures: :func:`~ckernels.display.memory.array_svg` (preamble, arrmeta,
  data block, ``data_ref``, arenas and their chunks, the ``{begin, end}``
  pointers of strings and var dims), :func:`~ckernels.display.memory.memblock_svg`,
  :func:`~ckernels.display.kernel_trees.kernel_svg` (the builder's buffer and the
  tree with decoded fields), :func:`~ckernels.display.objects.buffer_svg`
  (allocated and free ranges).
* :class:`~ckernels.display.source.SourceCode`: generated device source that
  prints as text and displays highlighted (Pygments) and complete.
* :func:`~ckernels.display.bench.bench`: timings against NumPy,
  ``numba.vectorize`` and pyopencl, as a table and a matplotlib plot.

This package imports no module of the objects it draws (arrays, kernels,
contexts, jit): they import it, so that their ``_repr_*_`` methods are one
line each.  Objects are recognised by what they hold (the C object behind
them), not by class.  Matplotlib and Pygments are optional dependencies
(``pip install 'ckernels[display]'``), imported when first needed.
"""

from __future__ import annotations

import html as _html

from .._native import ffi, lib
from ..errors import CKTypeError
from . import kernel_trees as _kernels
from . import memory as _memory
from . import objects as _objects
from .bench import BenchResult, bench
from .source import SourceCode, highlight


class Picture:
    """A picture (SVG) or rich view (HTML) of an object, with its text form:
    Jupyter shows ``svg`` (or ``html``), ``print``/``repr`` give ``text``."""

    __slots__ = ("svg", "html", "text")

    def __init__(self, text: str, svg: str | None = None, html: str | None = None):
        self.text = text
        self.svg = svg
        self.html = html

    def _repr_svg_(self):
        return self.svg

    def _repr_html_(self):
        return self.html if self.svg is None else None

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def _cdata_type(obj):
    """The cffi type of the C object behind ``obj`` (None if there is none)."""
    for attr in ("ptr", "_buf", "_ctx", "_prog"):
        p = getattr(obj, attr, None)
        if isinstance(p, ffi.CData):
            return ffi.typeof(p), p
    return None, None


_MEMBLOCK = ffi.typeof("ck_memblock *")
_BUILDER = ffi.typeof("ck_kernel_builder *")
_BUFFER = ffi.typeof("ck_buffer *")
_CONTEXT = ffi.typeof("ck_context *")
_PROGRAM = ffi.typeof("ck_program *")


def _is_dead(obj) -> bool:
    """A closed memory block, a destroyed builder: only its ``repr`` is left."""
    fin = getattr(obj, "_finalizer", None)
    return getattr(obj, "closed", False) is True or (fin is not None and not fin.alive)


def _is_array(obj) -> bool:
    """A ckernels array: an ``address`` holding an array memblock, with a type
    and dims, and no other C object of its own."""
    if not all(hasattr(obj, a) for a in ("address", "type", "ndim", "to_list")):
        return False
    address = obj.address
    if not isinstance(address, int) or not address or _cdata_type(obj)[0] is not None:
        return False
    return ffi.cast("ck_memblock *", address).kind == lib.CK_MEMBLOCK_ARRAY


def _is_device_varlen(obj) -> bool:
    """A device array of strings or var dims: Arrow's offsets and values."""
    return all(hasattr(obj, a) for a in ("offsets", "values", "element", "context"))


def _is_device_array(obj) -> bool:
    return all(hasattr(obj, a) for a in ("buffer", "offset", "shape", "strides", "dtype"))


def _is_jitted(obj) -> bool:
    return hasattr(obj, "py_func") and hasattr(obj, "compiled") and hasattr(obj, "signatures")


def _is_kernel(obj) -> bool:
    builder = getattr(obj, "builder", None)
    return builder is not None and _cdata_type(builder)[0] is _BUILDER


def show(obj) -> Picture:
    """The picture of ``obj``: arrays and memory blocks (their memory),
    kernels and kernel builders (the tree), buffers and device arrays (the
    buffer's map), and the rich views of contexts, programs, jitted
    functions, generated source and ckernels errors.  In Jupyter the result
    displays as SVG/HTML; elsewhere it prints as text."""
    if _is_dead(obj):
        return Picture(repr(obj), html=f"<code>{_html.escape(repr(obj))}</code>")
    if _is_kernel(obj):
        t = _kernels.kernel_tree(obj)
        return Picture(_kernels.kernel_text(t), svg=_kernels.kernel_svg(t))
    if _is_array(obj):
        f = _memory.array_layout(obj)
        return Picture(_memory.array_text(f), svg=_memory.array_svg(f))
    if _is_device_varlen(obj):
        return Picture(_objects.device_varlen_text(obj),
                       html=_objects.device_varlen_html(obj))
    if _is_device_array(obj):
        return Picture(_objects.device_array_text(obj), html=_objects.device_array_html(obj))
    if _is_jitted(obj):
        return Picture(_objects.jitted_text(obj), html=_objects.jitted_html(obj))
    if isinstance(obj, SourceCode):
        return Picture(str(obj), html=obj._repr_html_())
    if isinstance(obj, BaseException):
        return Picture(_objects.error_text(obj), html=_objects.error_html(obj))
    ctype, ptr = _cdata_type(obj)
    if ctype is _MEMBLOCK:
        b = _memory.memblock_layout(ptr)
        return Picture(_memory.memblock_text(b), svg=_memory.memblock_svg(b))
    if ctype is _BUILDER:
        t = _kernels.kernel_tree(ptr)
        return Picture(_kernels.kernel_text(t), svg=_kernels.kernel_svg(t))
    if ctype is _BUFFER:
        return Picture(_objects.buffer_text(obj), svg=_objects.buffer_svg(obj))
    if ctype is _CONTEXT:
        return Picture(_objects.context_text(obj), html=_objects.context_html(obj))
    if ctype is _PROGRAM:
        return Picture(_objects.program_text(obj), html=_objects.program_html(obj))
    raise CKTypeError(f"ckernels.show: no picture of a {type(obj).__name__} (arrays, "
                      "memory blocks, kernels, buffers, device arrays, contexts, programs, "
                      "jitted functions, source and ckernels errors have one)")


def html(obj) -> str:
    """The rich HTML display of ``obj`` (what its ``_repr_html_`` returns): a
    compact view; for arrays, the memory picture inside ``<details>``."""
    if not _is_dead(obj) and _is_array(obj):
        return _objects.array_html(obj)
    p = show(obj)
    if p.html is not None:
        return p.html
    # the picture's first line is its title: no text header above it
    return f"<div class='ckernels-picture'>{p.svg}</div>"

__all__ = ["show", "html", "Picture", "SourceCode", "highlight", "bench", "BenchResult"]
