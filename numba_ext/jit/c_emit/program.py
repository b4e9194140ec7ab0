"""One emitted program (:class:`EmittedKernel`): the device functions in
callee-first order, the helpers they share, the struct types they use
(declared by the generated C API of the target), the kernel, and the error
table the host reads an error code back through."""

from __future__ import annotations

from ...errors import NotSupportedError
from .. import structs as _structs
from ...dialects import Dialect
from .function import FunctionEmitter
from .typed_ir import _where


class EmittedKernel:
    """Everything emitted for one kernel in one dialect: device functions,
    helpers, the kernel, and the error table (``errors[code - 1] ==
    (exception class, args)``).  ``source`` is the whole program text."""

    def __init__(self, dialect: Dialect, error_model: str = "python"):
        if error_model not in ("python", "numpy"):
            raise NotSupportedError(f"error_model must be 'python' or 'numpy', not "
                                    f"{error_model!r}")
        self.dialect = dialect
        self.error_model = error_model
        self.source = ""
        self.kernel_text = ""
        self.entry = None
        self.functions: dict = {}       # (py_func, argtypes) -> FunctionEmitter
        self.order: list = []           # emitted function texts, callees first
        self.helpers: dict = {}         # name -> text
        self.errors: list = []          # code-1 -> (exc class, args)
        self._err_index: dict = {}
        self.fp64_user: str | None = None   # first function using float64
        self._stack: list = []
        #: struct types used (typedef name -> ckernels Type), declared by the
        #: generated C API of the target (ckernels.c_api) before everything
        self.structs: dict = {}

    def error_code(self, exc_class, args) -> int:
        key = (exc_class, tuple(args))
        code = self._err_index.get(key)
        if code is None:
            self.errors.append(key)
            code = self._err_index[key] = len(self.errors)
        return code

    def helper(self, name: str, text: str) -> str:
        if name not in self.helpers:
            self.helpers[name] = text
        return name

    @property
    def checks_zero_division(self) -> bool:
        return self.error_model == "python"

    def function(self, py_func, arg_types, return_type=None, loc=None) -> "FunctionEmitter":
        key = (py_func, tuple(arg_types))
        fe = self.functions.get(key)
        if fe is not None:
            if fe.text is None:
                raise NotSupportedError(
                    f"{self.dialect.title}: recursive call to {py_func.__qualname__} "
                    f"{_where(loc)}: recursion is not supported")
            return fe
        fe = FunctionEmitter(self, py_func, arg_types, return_type)
        self.functions[key] = fe
        fe.emit()
        self.order.append(fe.text)
        return fe

    def use_struct(self, rec) -> str:
        """Note a struct type (a Numba Record) and those nested in it; its
        typedef name."""
        from numba.core import types
        st = _structs.of_record(rec)
        if st.c_name not in self.structs:
            self.structs[st.c_name] = st.type
            for _, ft in rec.members:
                while isinstance(ft, types.NestedArray):
                    ft = ft.dtype
                if isinstance(ft, types.Record):
                    self.use_struct(ft)
        return st.c_name

    def struct_header(self) -> str:
        """The typedefs (and accessors) of the struct types used, from the one
        generator of struct layouts in C (:func:`ckernels.c_api`)."""
        if not self.structs:
            return ""
        from ...capi import c_api
        try:
            return str(c_api(sorted(self.structs.items()), self.dialect.name)) + "\n"
        except NotSupportedError as exc:
            raise NotSupportedError(f"{self.dialect.title}: {exc}") from None

    def text(self) -> str:
        return "\n".join([self.struct_header() + self.dialect.prelude()] +
                         list(self.helpers.values()) + self.order)

    def __repr__(self) -> str:
        name = self.entry.py_func.__qualname__ if self.entry is not None else "?"
        return (f"<ckernels.jit {self.dialect.title} kernel for {name}: "
                f"{len(self.source)} chars, {len(self.errors)} error codes>")
