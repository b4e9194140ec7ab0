"""One emitted program (:class:`EmittedKernel`): a device program
(:class:`~ckernels.context.device_program.DeviceProgram`: helpers, functions,
the error table) made from jitted functions, with the struct types they use
(declared by the generated C API of the target)."""

from __future__ import annotations

from ...context.device_program import DeviceProgram
from ...dialects import Dialect
from ...errors import NotSupportedError
from .. import structs as _structs
from .function import FunctionEmitter
from .typed_ir import _where


class EmittedKernel(DeviceProgram):
    """Everything emitted for one jitted function in one dialect (a
    :class:`~ckernels.context.device_program.DeviceProgram`): its device
    functions and those of the jitted functions it calls (:meth:`function`),
    the struct types they use, the entry function (``entry``)."""

    def __init__(self, dialect: Dialect, error_model: str = "python"):
        super().__init__(dialect, error_model)
        self.entry = None
        self.functions: dict = {}       # (py_func, argtypes) -> FunctionEmitter
        self._stack: list = []
        #: struct types used (typedef name -> ckernels Type), declared by the
        #: generated C API of the target (ckernels.c_api) before everything
        self.structs: dict = {}
        #: the function whose string result the kernels build (string_results)
        self.string_entry = None

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

    def __repr__(self) -> str:
        name = self.entry.py_func.__qualname__ if self.entry is not None else "?"
        return (f"<ckernels.jit {self.dialect.title} kernel for {name}: "
                f"{len(self.source)} chars, {len(self.errors)} error codes>")
