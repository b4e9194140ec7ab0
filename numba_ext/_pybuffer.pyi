"""``ckernels._pybuffer`` (``src/python/pybuffer/pybuffer.c``): the buffer protocol (PEP 3118)
for ckernels host arrays."""

class BufferExporter:
    """Base of ``ckernels.Array``: exports the buffer protocol from
    ``self._buffer_info(writable) -> (address, shape, strides, format,
    itemsize, readonly)``.  The protocol is the C type's buffer slots
    (``memoryview(a)``, ``np.asarray(a)``), not Python methods."""

    def __new__(cls, *args: object, **kwargs: object) -> BufferExporter: ...
