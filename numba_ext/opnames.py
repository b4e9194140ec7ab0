"""The kernel registry's operations as NumPy and Python spell them, once.

The operations themselves -- their names, arities, kernels and result types --
are the C registry's (``src/lib/ops/registry.c``, asked through ``ck_op_find``
/ ``ck_op_resolve``); the reductions are ``src/lib/kernels/reduce.c``'s.  What
Python adds is how other spellings reach them, and it is written here only:

* :data:`UFUNC_TO_OP` / :data:`OP_TO_UFUNC` -- NumPy ufunc names whose
  registry operation is called otherwise (``remainder`` is ``mod``);
* :data:`BINARY` / :data:`COMPARE` -- Python's operator dunders (the stem:
  ``add`` for ``__add__``/``__radd__``/``__iadd__``) -> operation;
* :data:`REDUCTIONS` -- the reductions (``sum``, ``product``/``prod``, ...) ->
  the binary operation that combines two partial results (the NumPy ufunc
  whose ``reduce`` they are), and :data:`REDUCE_OF_UFUNC`, its inverse for
  ``numpy.<ufunc>.reduce`` (``fmin``/``fmax`` reduce as ``min``/``max``).
"""

from __future__ import annotations

#: NumPy ufunc names whose registry operation has another name (None: none)
UFUNC_TO_OP = {"remainder": "mod", "true_divide": "divide", "abs": "absolute",
               "conjugate": None}
#: registry operation -> the NumPy ufunc of the same meaning, where the names differ
OP_TO_UFUNC = {"mod": "remainder"}
#: dunder stem -> registry operation (binary operators, with reflected and
#: in-place forms)
BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "mod", "pow": "power", "lshift": "left_shift",
    "rshift": "right_shift", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
#: dunder stem -> registry operation (comparisons)
COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
           "gt": "greater", "ge": "greater_equal"}
#: reduction -> the operation (and NumPy ufunc) combining two partial results
REDUCTIONS = {"sum": "add", "product": "multiply", "prod": "multiply", "min": "minimum",
              "max": "maximum", "any": "logical_or", "all": "logical_and"}
#: ``numpy.<ufunc>.reduce`` -> the reduction it is
REDUCE_OF_UFUNC = {"add": "sum", "multiply": "product", "minimum": "min", "maximum": "max",
                   "logical_or": "any", "logical_and": "all", "fmin": "min", "fmax": "max"}

__all__ = ["UFUNC_TO_OP", "OP_TO_UFUNC", "BINARY", "COMPARE", "REDUCTIONS", "REDUCE_OF_UFUNC"]
