"""``ckernels.host``: arrays in host memory.

``array.py``
    :class:`~ckernels.host.array.Array` (the :class:`~ckernels.arraylike.ArrayLike`
    primitives over ``ck_array_preamble``), its creation (``array``,
    ``asarray``, ``empty``, ...) and the host side of ``ckernels.ops``
    (``apply_op``, ``reduce_op``): the class's primitives make arrays from
    values and creation makes the class, so the three stay together.
``sharing.py``
    the mixin of ``Array`` that shares its memory: NumPy views,
    ``__array__``/``__array_interface__``, the buffer protocol's description,
    ``to_numpy``, DLPack, the Arrow PyCapsule exports.
``arguments.py``
    the arguments of host-array calls checked and normalised: indices and
    slice bounds, ``dtype=``/``type=``, shapes, error modes, scalars,
    missing values.
``convert.py``
    Python values <-> array memory: ``read``, ``prepare``, ``write``,
    ``check_scalar`` (one narrow interface, over type, data and arrmeta).
``arrmeta.py``
    what an array's memory looks like from Python: NumPy views of raw
    memory, element dtypes, dims and struct fields read from arrmeta
    (``layout.py`` is its old path; "layout" is the C library's ABI table).
``fastpath.py``
    the Python half of the small-call fast path (the C half is
    ``ckernels._arrays``): NumPy ufuncs over cached views; the operators and
    whole-array reductions of ``Array``.

``arrow.py``
    the Arrow PyCapsule interface by array address (the C half is
    ``ckernels._arrow``): the exports behind ``Array.__arrow_c_*__``, the
    imports behind ``asarray`` / ``array`` / ``from_arrow``.

Lowest first: ``arrmeta`` < ``convert`` < ``fastpath`` < ``array``; ``arrow``,
``arguments`` and ``sharing`` beside ``arrmeta``.
"""
