"""Tuples of numbers on devices: one C variable per element (building,
unpacking, indexing with a constant or a run-time index, ``divmod``)."""

from __future__ import annotations

from .numba_types import _unlit, _is_float, _is_int, _int64_t


class TupleEmission:
    """Methods of :class:`~ckernels.jit.c_emit.function.FunctionEmitter`."""

    def tuple_elems(self, t):
        """The element types of a flat tuple of scalars the dialect represents,
        or None (not a tuple, or one the device cannot hold)."""
        from numba.core import types
        t = _unlit(t)
        if not isinstance(t, types.BaseTuple) or isinstance(t, types.NamedTuple):
            return None
        elems = [_unlit(e) for e in t.types]
        if not elems or any(self.ct(e) is None for e in elems):
            return None
        return elems

    def tuple_assign(self, target, tt, elems, value, loc, ir) -> list[str]:
        dst = self.var(target.name)
        n = len(elems)
        if isinstance(value, (ir.Const, ir.Global, ir.FreeVar)):
            vals = value.value
            if not isinstance(vals, tuple) or len(vals) != n:
                raise self.fail(f"constant {vals!r} as {tt}", loc)
            return [f"{dst}_{k} = {self.const(v, et, loc)};"
                    for k, (v, et) in enumerate(zip(vals, elems))]
        src = None
        if isinstance(value, ir.Var):
            src = value
        elif isinstance(value, ir.Expr) and value.op == "exhaust_iter":
            src = value.value
            if value.count != n:
                raise self.fail(f"unpacking {n} values from {self.tyof(src)}", loc)
        elif isinstance(value, ir.Expr) and value.op == "cast":
            src = value.value
        elif isinstance(value, ir.Expr) and value.op == "build_tuple":
            if len(value.items) != n:
                raise self.fail(f"building {tt}", loc)
            return [f"{dst}_{k} = {self.use_as(v, et, loc)};"
                    for k, (v, et) in enumerate(zip(value.items, elems))]
        elif isinstance(value, ir.Expr) and value.op == "call" and \
                getattr(self.tyof(value.func), "typing_key", None) is divmod:
            return self.divmod_call(dst, elems, value, loc)
        if src is not None:
            selems = self.tuple_elems(self.tyof(src))
            if selems is None or len(selems) != n:
                raise self.fail(f"{self.tyof(src)} as {tt}", loc)
            s = self.var(src.name)
            return [f"{dst}_{k} = {self.cast(f'{s}_{k}', se, et)};"
                    for k, (se, et) in enumerate(zip(selems, elems))]
        raise self.fail(self._describe(value, tt), loc)

    def divmod_call(self, dst, elems, e, loc) -> list[str]:
        """``q, r = divmod(a, b)`` with Python semantics (Numba's messages; the
        NumPy error model gives (0, 0) for integers and (a / b, fmod) for floats)."""
        if len(e.args) != 2 or e.kws or len(elems) != 2 or elems[0] != elems[1]:
            raise self.fail("divmod() with these arguments", loc)
        t = elems[0]
        if not (_is_int(t) or _is_float(t)):
            raise self.fail(f"divmod() on {t}", loc)
        a, b = (self.use_as(v, t, loc) for v in e.args)
        fd, md = self.divmod_helper(t, "//"), self.divmod_helper(t, "%")
        out = []
        if self.prog.checks_zero_division:
            msg = "integer divmod by zero" if _is_int(t) else "modulo by zero"
            code = self.error_code(ZeroDivisionError, (msg,))
            out.append(f"if ({b} == 0) {self.raise_code(code)}")
            out += [f"{dst}_0 = {fd}({a}, {b});", f"{dst}_1 = {md}({a}, {b});"]
        elif _is_int(t):
            zero = self.const(0, t, loc)
            out += [f"{dst}_0 = {b} == 0 ? {zero} : {fd}({a}, {b});",
                    f"{dst}_1 = {b} == 0 ? {zero} : {md}({a}, {b});"]
        else:
            fmod = self.d.math("fmod", self.ct(t))
            out += [f"{dst}_0 = {b} == 0 ? {a} / {b} : {fd}({a}, {b});",
                    f"{dst}_1 = {b} == 0 ? {fmod}({a}, {b}) : {md}({a}, {b});"]
        return out

    def tuple_item(self, dst, tt, e, loc) -> list[str] | None:
        """``dst = t[i]`` for a tuple ``t`` (a constant index, or a run-time one
        into a tuple of one element type, with Python's negative indices and
        IndexError); None if ``e`` does not index a tuple."""
        elems = self.tuple_elems(self.tyof(e.value))
        if elems is None:
            return None
        n, t = len(elems), self.var(e.value.name)
        idx = e.index if e.op == "static_getitem" else None
        if isinstance(idx, int):
            if not -n <= idx < n:
                raise self.fail(f"tuple index {idx} out of range", loc)
            k = idx % n
            return [f"{dst} = {self.cast(f'{t}_{k}', elems[k], tt)};"]
        if e.op == "static_getitem" and e.index_var is None:
            raise self.fail(f"tuple indexed by {idx!r}", loc)
        iv = e.index if e.op == "getitem" else e.index_var
        if not _is_int(self.tyof(iv)) or len({self.ct(x) for x in elems}) != 1:
            raise self.fail(f"indexing {self.tyof(e.value)} by {self.tyof(iv)}", loc)
        i64 = _int64_t()
        i = self.use_as(iv, i64, loc)
        code = self.error_code(IndexError, ("tuple index out of range",))
        out = [f"if ({i} < -{n} || {i} >= {n}) {self.raise_code(code)}"]
        chain = self.cast(f"{t}_{n - 1}", elems[n - 1], tt)
        for k in range(n - 2, -1, -1):
            chain = (f"(({i} == {k} || {i} == {k - n}) ? "
                     f"{self.cast(f'{t}_{k}', elems[k], tt)} : {chain})")
        out.append(f"{dst} = {chain};")
        return out
