"""``ckernels.host``: arrays in host memory.

``array.py``
    :class:`~ckernels.host.array.Array` (the :class:`~ckernels.arraylike.ArrayLike`
    primitives over ``ck_array_preamble``), its creation (``array``,
    ``asarray``, ``empty``, ...) and the host side of ``ckernels.ops``
    (``apply_op``, ``reduce_op``).
``convert.py``
    Python values <-> array memory: ``read``, ``prepare``, ``write``,
    ``check_scalar`` (one narrow interface, over type, data and arrmeta).
``layout.py``
    what an array's memory looks like from Python: NumPy views of raw
    memory, element dtypes, dims and struct fields read from arrmeta.
``fastpath.py``
    the Python half of the small-call fast path (the C half is
    ``ckernels._arrays``): NumPy ufuncs over cached views; the operators and
    whole-array reductions of ``Array``.

``arrow.py``
    the Arrow PyCapsule interface by array address (the C half is
    ``ckernels._arrow``): the exports behind ``Array.__arrow_c_*__``, the
    imports behind ``asarray`` / ``array`` / ``from_arrow``.

Lowest first: ``layout`` < ``convert`` < ``fastpath`` < ``array``; ``arrow``
below ``array``, beside the others.
"""
