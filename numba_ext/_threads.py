"""Who decided the library's thread count: one flag shared by
:func:`ckernels.set_num_threads` (which sets it) and the Dask worker thread
rule in :mod:`ckernels.dask` (which leaves an explicit count alone).  A module
of its own so that neither of those two imports the other."""

#: True while ``set_num_threads(n)`` with ``n >= 1`` is in force;
#: ``set_num_threads(0)`` (back to the default) clears it
explicit = False
