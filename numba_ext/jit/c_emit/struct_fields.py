"""Structs on devices: members of the generated typedefs read (fixed dims
inside a struct indexed with bounds checks) and struct results written."""

from __future__ import annotations

from .numba_types import _unlit, _is_int, _is_bool, _int64_t


class StructEmission:
    """Methods of :class:`~ckernels.jit.c_emit.function.FunctionEmitter`."""

    def field_read(self, dst, tt, var, rec, attr, loc) -> list[str]:
        """``dst = p.attr``: a member of the struct value (a fixed dim: a
        pointer to its first element, in the function's copy of the struct)."""
        from numba.core import types
        ft = rec.typeof(attr)
        src = f"{self.use(var, loc)}.{attr}"
        if isinstance(ft, types.NestedArray):
            return [f"{dst} = ({self.ct(ft)})({src});"]
        if _is_bool(ft):
            return [f"{dst} = ({src} != 0);"]
        if self.ct(ft) is None:
            raise self.fail(f"struct field '{attr}' of type {ft}", loc)
        return [f"{dst} = {self.cast(src, ft, tt)};"]

    def nested_item(self, dst, tt, e, loc) -> list[str]:
        """``dst = p.v[i]`` / ``p.m[i, j]`` on a fixed dim inside a struct (every
        index an integer: Python's negative indices, IndexError out of range)."""
        from numba.core import types
        at = _unlit(self.tyof(e.value))
        idx = e.index if e.op == "static_getitem" else None
        const = isinstance(idx, int) or (isinstance(idx, tuple) and
                                         all(isinstance(k, int) for k in idx))
        if e.op == "getitem":
            iv = e.index
        elif not const:
            iv = e.index_var
        else:
            iv = None
        nd = len(at.shape)
        if iv is not None:
            it = _unlit(self.tyof(iv))
            if isinstance(it, types.BaseTuple):
                elems = self.tuple_elems(it)
                if elems is None or len(elems) != nd or not all(map(_is_int, elems)):
                    raise self.fail(f"indexing {at} by {it}", loc)
                parts = [(f"{self.var(iv.name)}_{k}", et) for k, et in enumerate(elems)]
            elif _is_int(it):
                parts = [(self.var(iv.name), it)]
            else:
                raise self.fail(f"indexing {at} by {it}", loc)
        elif isinstance(idx, int):
            parts = [(str(idx), _int64_t())]
        elif isinstance(idx, tuple) and all(isinstance(k, int) for k in idx):
            parts = [(str(k), _int64_t()) for k in idx]
        else:
            raise self.fail(f"indexing {at} by {idx!r}", loc)
        if len(parts) != nd:
            raise self.fail(f"indexing the {nd}-d field {at} with {len(parts)} indices "
                            "(sub-arrays of fields)", loc)
        i64 = self.d.int64
        code = self.error_code(IndexError, ("index out of bounds",))
        out, flat = [], []
        for k, ((ix, ixt), n) in enumerate(zip(parts, at.shape)):
            c = self.cast(ix, ixt, _int64_t())
            out.append(f"if ({c} < -{n} || {c} >= {n}) {self.raise_code(code)}")
            flat.append(f"(({c}) < 0 ? ({c}) + {n} : ({c}))")
        lin = flat[0]
        for k in range(1, nd):
            lin = f"({lin}) * {at.shape[k]} + {flat[k]}"
        ptr = self.use(e.value, loc)
        el = at.dtype
        v = f"{ptr}[({i64})({lin})]"
        if _is_bool(el):
            out.append(f"{dst} = ({v} != 0);")
        elif isinstance(el, types.Record):
            out.append(f"{dst} = {v};")
        else:
            out.append(f"{dst} = {self.cast(v, el, tt)};")
        return out

    def struct_return(self, value, loc) -> list[str]:
        """``return`` of a struct result: a struct of the same type, or a tuple
        of scalars with one item per field (written member by member)."""
        from numba.core import types
        rec = self.struct_ret
        vt = _unlit(self.tyof(value))
        rt = self.ct(rec)
        if isinstance(vt, types.Record):
            if vt != rec:
                raise self.fail(f"returning a struct of type {vt} for {rec}", loc)
            return [f"return {self.use(value, loc)};"]
        names = list(rec.fields)
        if isinstance(vt, types.BaseNamedTuple):
            have = list(vt.fields)
            if sorted(have) != sorted(names):
                raise self.fail(f"returning a namedtuple with fields ({', '.join(have)}) for a "
                                f"struct with fields ({', '.join(names)})", loc)
            raise self.fail("namedtuple results (return a tuple in field order)", loc)
        elems = self.tuple_elems(vt)
        if elems is None:
            raise self.fail(f"returning {vt} for a struct (a tuple of numbers, one per field; "
                            "nested structs and fixed dims are CPU-only results)", loc)
        if len(elems) != len(names):
            raise self.fail(f"returning a tuple of {len(elems)} items for a struct with "
                            f"{len(names)} fields", loc)
        r = self.var("$ck_ret")
        out = [f"{{ {rt} {r};"]
        src = self.var(value.name)
        for k, (n, et) in enumerate(zip(names, elems)):
            ft = rec.typeof(n)
            if isinstance(ft, (types.Record, types.NestedArray)):
                raise self.fail(f"writing the field '{n}' ({ft}) of a struct result "
                                "(nested structs and fixed dims are CPU-only results)", loc)
            if _is_bool(ft):
                out.append(f"  {r}.{n} = {src}_{k} ? 1 : 0;")
            else:
                out.append(f"  {r}.{n} = {self.cast(f'{src}_{k}', et, ft)};")
        out.append(f"  return {r}; }}")
        return out
