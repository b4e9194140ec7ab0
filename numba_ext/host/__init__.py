"""``ckernels.host``: arrays in host memory (:class:`~ckernels.host.array.Array`).

``array.py`` holds the :class:`Array` class (the :class:`~ckernels.arraylike.ArrayLike`
primitives over ``ck_array_preamble``), its creation (``array``, ``asarray``,
``empty``, ...) and the host side of ``ckernels.ops`` (``apply_op``, ``reduce_op``).
"""
