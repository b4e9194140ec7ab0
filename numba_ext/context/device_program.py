"""Device programs, the half every device C source shares whoever wrote it
(the jit's emitter, :mod:`ckernels.jit.c_emit`, or the built-in operations,
:mod:`ckernels.device.ops`): :class:`DeviceProgram` -- the dialect,
the helper functions and device functions in callee-first order, the error
table the host reads an error code back through, the program text -- and the
kernel around an entry function (:func:`kernel_wrapper`, named
:data:`KERNEL_NAME`), which the launch code (:mod:`ckernels.device.launch`)
runs over the flattened broadcast index space.

Python's ``//``, ``%`` and integer ``**`` come from one C header shared with
the registry's kernels (``ckernel/pyarith.h``, installed with the package):
:meth:`DeviceProgram.pyarith` places its text in front of the program once and
instantiates the functions a program uses for the dialect's type names.
"""

from __future__ import annotations

import functools
import os

from ..dialects import Dialect
from ..errors import NotSupportedError
from .device_validity import guard_lines

#: the name of every kernel a device program has (the launch looks it up)
KERNEL_NAME = "ck_kernel"
#: the contiguous variant of the jit's kernel (:func:`kernel_wrapper` with
#: ``contiguous=True``): the same parameters, plain indexing
CONTIG_KERNEL_NAME = "ck_kernel_contig"


class DeviceProgram:
    """One program in one dialect: device functions (``order``, callees
    first), the helpers they share (``helpers``: name -> text), the kernel
    text, the error table (``errors[code - 1] == (exception class, args)``)
    and the error model of its arithmetic.  ``source`` is the whole program
    text; ``fp64_user`` names the first user of double precision (devices
    without fp64 refuse the program)."""

    def __init__(self, dialect: Dialect, error_model: str = "python"):
        if error_model not in ("python", "numpy"):
            raise NotSupportedError(f"error_model must be 'python' or 'numpy', not "
                                    f"{error_model!r}")
        self.dialect = dialect
        self.error_model = error_model
        self.source = ""
        self.kernel_text = ""
        self.order: list = []           # emitted function texts, callees first
        self.helpers: dict = {}         # name -> text
        self.errors: list = []          # code-1 -> (exc class, args)
        self._err_index: dict = {}
        self.fp64_user: str | None = None   # first function using float64

    def error_code(self, exc_class, args, where=None) -> int:
        """The code of ``exc_class(*args)`` in this program's error table
        (``where``: the user's ``(function, file, line)`` raising it, named by
        the host's exception; entries are ``(class, args)`` or ``(class, args,
        where)``)."""
        key = (exc_class, tuple(args)) if where is None else (exc_class, tuple(args), where)
        code = self._err_index.get(key)
        if code is None:
            self.errors.append(key)
            code = self._err_index[key] = len(self.errors)
        return code

    def helper(self, name: str, text: str) -> str:
        """Add helper function ``name`` (once); its name."""
        if name not in self.helpers:
            self.helpers[name] = text
        return name

    @property
    def checks_zero_division(self) -> bool:
        return self.error_model == "python"

    def pyarith(self, op: str, element) -> str:
        """The name of ``ck_py_<op>_<element>`` of ``ckernel/pyarith.h``
        (``op``: ``"floordiv"``, ``"mod"`` -- signed integers and floats -- or
        ``"pow"`` -- integers, a non-negative exponent), instantiated in this
        program for the dialect's types (the header's text placed first)."""
        d = self.dialect
        ct = d.ctype(element)
        name = element.name
        if _PYARITH not in self.helpers:
            self.helpers[_PYARITH] = f"#define CK_PYARITH_FN {d.function_prefix}\n{pyarith_h()}"
        if op == "pow":
            wu = d.types[f"uint{max(element.size, 4) * 8}"]
            self.helper(f"{_PYARITH} pow {name}",
                        f"CK_PYARITH_POW({name}, {ct}, {wu}, {d.uint64})\n")
        elif element.kind == "f":
            fmod, floor, copysign = (d.math(f, ct) for f in ("fmod", "floor", "copysign"))
            self.helper(f"{_PYARITH} float {name}",
                        f"CK_PYARITH_FLOAT({name}, {ct}, {fmod}, {floor}, {copysign})\n")
        elif element.kind == "i":
            self.helper(f"{_PYARITH} sint {name}", f"CK_PYARITH_SINT({name}, {ct})\n")
        else:
            raise NotSupportedError(f"pyarith: no {op} for {name}")
        return f"ck_py_{op}_{name}"

    def struct_header(self) -> str:
        """Declarations of the struct types the program uses (none here)."""
        return ""

    def text(self) -> str:
        """The program without its kernel: types, helpers, functions."""
        return "\n".join([self.struct_header() + self.dialect.prelude()] +
                         list(self.helpers.values()) + self.order)

    def finish(self, kernel_text: str) -> None:
        """Set the kernel and the whole source (the dialect's header first)."""
        self.kernel_text = kernel_text
        self.source = self.dialect.header(self) + self.text() + "\n" + kernel_text

    def __repr__(self) -> str:
        return (f"<ckernels {self.dialect.title} device program: {len(self.source)} chars, "
                f"{len(self.errors)} error codes>")


_PYARITH = "ckernel/pyarith.h"


@functools.lru_cache(maxsize=None)
def pyarith_h() -> str:
    """The text of ``ckernel/pyarith.h`` as installed with the package."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "include", "ckernel", "pyarith.h")
    with open(path, encoding="utf-8") as f:
        return f.read()


def kernel_parameters(d: Dialect, inputs) -> tuple[list[str], list[int]]:
    """The kernel's parameters for these ``inputs`` (see :func:`kernel_wrapper`)
    and the indices of the array inputs."""
    i64, u64, u8, i32 = d.int64, d.uint64, d.uint8, d.int32
    args = [f"{d.pointer(u8)}ck_out", f"{u64} ck_out_off", f"{i64} ck_out_stride"]
    arrays = []
    for k, (dt, by_value) in enumerate(inputs):
        if by_value:
            ct = u8 if dt.kind == "b" else d.ctype(dt)
            args.append(f"{ct} ck_in{k}_val")
        else:
            arrays.append(k)
            args += [f"{d.pointer(u8, True)}ck_in{k}", f"{u64} ck_in{k}_off",
                     f"{i64} ck_in{k}_stride"]
    args += [f"{d.pointer(i64, True)}ck_meta", f"{i32} ck_ndim", f"{u64} ck_n",
             f"{d.pointer(i32)}ck_errbuf"]
    return args, arrays


def element_offsets(d: Dialect, arrays) -> list[str]:
    """The kernel's first lines: the work item's index ``i`` (returning past
    ``ck_n``) and the byte offsets ``o_out`` / ``o_in<k>`` of its element in
    the output and in each array input ``k`` (the 1-d strided path, or the
    N-d metadata)."""
    u64 = d.uint64
    lines = [f"  {u64} i = {d.thread_index};",
             "  if (i >= ck_n) return;",
             f"  {u64} o_out = ck_out_off;"]
    lines += [f"  {u64} o_in{k} = ck_in{k}_off;" for k in arrays]
    lines += ["  if (ck_ndim <= 1) {",
              "    o_out += i * ck_out_stride;"]
    lines += [f"    o_in{k} += i * ck_in{k}_stride;" for k in arrays]
    lines += ["  } else {",
              f"    {u64} rest = i;",
              "    for (int d = ck_ndim - 1; d >= 0; d--) {",
              f"      {u64} idx = rest % ({u64})ck_meta[d];",
              f"      rest /= ({u64})ck_meta[d];",
              "      o_out += idx * ck_meta[ck_ndim + d];"]
    lines += [f"      o_in{k} += idx * ck_meta[{j + 2} * ck_ndim + d];"
              for j, k in enumerate(arrays)]
    lines += ["    }", "  }"]
    return lines


def error_return(d: Dialect) -> str:
    """The entry wrapper's check after the call: the first error of the
    launch kept, with the failing element's byte offset in the output
    (``Dialect.error_store_at``), and the work item done."""
    return (f"  if (err) {{ {d.error_store_at('ck_errbuf', 'err', 'o_out - ck_out_off')} "
            "return; }")


def store_result(d: Dialect, ret_ctype: str, out, call: str) -> list[str]:
    """The end of an entry wrapper whose function returns its value of the
    C type ``ret_ctype``: the call, :func:`error_return`, and the value stored
    at ``ck_out + o_out`` as the output's element type ``out`` (a
    :mod:`ckernels.dtypes` row; bools as one byte 0/1)."""
    lines = [f"  {ret_ctype} r = {call};", error_return(d)]
    if out.kind == "b":
        lines.append(f"  *({d.pointer(d.uint8)})(ck_out + o_out) = r ? 1 : 0;")
    else:
        oct_ = d.ctype(out)
        lines.append(f"  *({d.pointer(oct_)})(ck_out + o_out) = ({oct_})r;")
    return lines


def contiguous_ok(inputs, out) -> bool:
    """Whether :func:`kernel_wrapper` can give these element types a
    contiguous variant: every one a bool, integer or float (whose C type has
    the element's size, so a typed pointer indexes it)."""
    return out.kind in "biuf" and all(dt.kind in "biuf" for dt, _ in inputs)


def kernel_wrapper(d: Dialect, entry: str, params, ret, inputs, out,
                   validity=None, contiguous: bool = False) -> str:
    """The kernel calling ``entry`` once per element.

    ``entry`` is a device function ``R entry(P0 x0, ..., int *err)``;
    ``params`` its parameters' ``(C type, is_bool)``, ``ret`` its result's.
    ``inputs`` says what each operand is: ``(DType row, by_value)`` -- the
    element type in memory (converted to the parameter's type as it is read:
    a safe cast) and whether it is passed by value instead of as an array.
    ``out`` is the element type written (the result converted to it).

    Kernel arguments, in order: the output buffer, its byte offset and byte
    stride; per input, the same triple for an array operand (stride 0:
    broadcast) or its value (one argument; bool as uchar, since kernels may not
    take bool); the N-d metadata buffer (int64: shape[ndim], then byte
    strides[ndim] of the output and of each *array* input), ``ndim`` (<= 1: the
    strided fast path, no metadata reads), the element count ``n`` and the
    error buffer (one int32: the first error code).

    ``contiguous`` (where :func:`contiguous_ok`) adds a second kernel,
    :data:`CONTIG_KERNEL_NAME`, with the same parameters, for a launch whose
    output and array inputs are all contiguous (byte stride = element size,
    one dimension; offsets are multiples of the element size): element ``i``
    of each is ``((T *)(buffer + offset))[i]`` -- no stride arithmetic, no N-d
    branch, and the bounds check only in a partial last group (``group_end``
    of the dialect), so that a compiler vectorising across work items sees
    consecutive accesses and no per-item branch (as CuPy specialises
    contiguous operands).

    ``validity=k``: inputs ``k`` and ``k + 1`` (after the function's) are the
    result's validity bitmap and its bit offset; the function is not called
    on a null slot (:func:`ckernels.context.device_validity.guard_lines`);
    no contiguous variant then."""
    text = _kernel(d, entry, params, ret, inputs, out, False, validity)
    if contiguous and validity is None and contiguous_ok(inputs, out):
        text += _kernel(d, entry, params, ret, inputs, out, True)
    return text


def _kernel(d: Dialect, entry: str, params, ret, inputs, out, contig: bool,
            validity=None) -> str:
    """One kernel of :func:`kernel_wrapper`: the general one (byte offsets
    from the strides or the N-d metadata) or the contiguous one."""
    u8, i32, u64 = d.uint8, d.int32, d.uint64
    args, arrays = kernel_parameters(d, inputs)
    name = CONTIG_KERNEL_NAME if contig else KERNEL_NAME
    lines = [f"{d.kernel_prefix} {name}({', '.join(args)})", "{"]
    if contig:
        lines.append(f"  {u64} i = {d.thread_index};")
    else:
        lines += element_offsets(d, arrays)
        if validity is not None:
            lines += guard_lines(d, validity, out)
    cargs, reads = [], []
    for k, ((dt, by_value), (pct, pbool)) in enumerate(zip(inputs, params)):
        if by_value:
            v = f"ck_in{k}_val"
        elif contig:
            st = u8 if dt.kind == "b" else d.ctype(dt)
            v = f"(({d.pointer(st, True)})(ck_in{k} + ck_in{k}_off))[i]"
        else:
            st = u8 if dt.kind == "b" else d.ctype(dt)
            v = f"*({d.pointer(st, True)})(ck_in{k} + o_in{k})"
        if dt.kind == "b" or pbool:
            v = f"({v} != 0)"
        elif dt.kind == "V":    # a struct: copied, never converted
            if by_value:
                raise NotSupportedError(f"{d.title}: a struct scalar argument (pass a device "
                                        "array of structs)")
            v = f"({v})"
        else:
            v = f"({pct}){v}"
        reads.append(f"  {pct} x{k} = {v};")
        cargs.append(f"x{k}")
    rct, rbool = ret
    oct_ = u8 if out.kind == "b" else d.ctype(out)
    if contig:
        where = f"i * {out.size}{d.uint64_suffix}"
        dst = f"(({d.pointer(oct_)})(ck_out + ck_out_off))[i]"
    else:
        where = "o_out - ck_out_off"
        dst = f"*({d.pointer(oct_)})(ck_out + o_out)"
    body = reads + [f"  {i32} err = 0;",
            f"  {rct} r = {entry}({', '.join(cargs + ['&err'])});",
            f"  if (err) {{ {d.error_store_at('ck_errbuf', 'err', where)} "
            "return; }"]
    if out.kind == "b":
        body.append(f"  {dst} = r ? 1 : 0;")
    else:
        r = "r" if oct_ == rct else f"({oct_})r"
        body.append(f"  {dst} = {r};")
    if not contig:
        lines += body
    else:
        # the bounds check only in the last, partial group: a condition
        # uniform over each group keeps a full group's work items free of
        # per-item branches (PoCL vectorises them; measured 2x slower with
        # the per-item check than the general kernel, faster without)
        inner = ["  " + ln for ln in body]
        if d.group_end is not None:
            lines += [f"  if ({d.group_end} <= ck_n) {{"] + inner + \
                     ["  } else if (i < ck_n) {"] + inner + ["  }"]
        else:
            lines += ["  if (i < ck_n) {"] + inner + ["  }"]
    lines.append("}")
    return "\n".join(lines) + "\n"


__all__ = ["DeviceProgram", "KERNEL_NAME", "CONTIG_KERNEL_NAME", "contiguous_ok", "kernel_wrapper",
           "pyarith_h"]
