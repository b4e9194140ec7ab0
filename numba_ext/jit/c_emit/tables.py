"""Python operators and math functions -> the generic C names the emitter
asks a dialect for (:meth:`~ckernels.jit.c_emit.dialect.Dialect.math`)."""

from __future__ import annotations

import operator

_MATH_1 = {"sqrt": "sqrt", "exp": "exp", "log10": "log10", "log2": "log2", "log1p": "log1p",
           "expm1": "expm1", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin",
           "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
           "asinh": "asinh", "acosh": "acosh", "atanh": "atanh", "fabs": "fabs",
           "erf": "erf", "erfc": "erfc", "gamma": "tgamma", "lgamma": "lgamma",
           "exp2": "exp2", "cbrt": "cbrt"}
_MATH_2 = {"atan2": "atan2", "pow": "pow", "hypot": "hypot", "copysign": "copysign",
           "fmod": "fmod", "nextafter": "nextafter"}
_MATH_TO_INT = {"floor": "floor", "ceil": "ceil", "trunc": "trunc"}
_MATH_PRED = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
_BINOPS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
           operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
           operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&",
           operator.or_: "|", operator.xor: "^", operator.eq: "==", operator.ne: "!=",
           operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}
_UNOPS = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "!"}
#: in-place operator functions on scalars are their plain operators
_INPLACE = {operator.iadd: operator.add, operator.isub: operator.sub,
            operator.imul: operator.mul, operator.itruediv: operator.truediv,
            operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
            operator.ipow: operator.pow, operator.ilshift: operator.lshift,
            operator.irshift: operator.rshift, operator.iand: operator.and_,
            operator.ior: operator.or_, operator.ixor: operator.xor}
#: NumPy ufuncs on scalars -> the math table names they compute (the same
#: functions as math.*, except that the to-integer ones stay floats)
_NP_UFUNCS = {"sqrt": "sqrt", "exp": "exp", "log": "log", "log10": "log10", "log2": "log2",
              "log1p": "log1p", "expm1": "expm1", "exp2": "exp2", "cbrt": "cbrt",
              "sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "asin", "arccos": "acos",
              "arctan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh",
              "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fabs": "fabs",
              "absolute": "abs", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
              "rint": "rint", "arctan2": "atan2", "hypot": "hypot", "copysign": "copysign",
              "fmod": "fmod", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
              "degrees": "degrees", "radians": "radians", "rad2deg": "degrees",
              "deg2rad": "radians", "ldexp": "ldexp", "nextafter": "nextafter"}
