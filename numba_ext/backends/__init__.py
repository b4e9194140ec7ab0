"""``ckernels.backends``: each device backend's Python half (``opencl.py``,
``cuda.py``), the DLPack capsules (``dlpack.py``) and pyopencl's objects
(``cl_interop.py``)."""
