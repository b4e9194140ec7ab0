"""``ckernels.user_kernels``: hand-written kernels for every target --
their sources prepared for a target (``source.py``), building them
(``build.py``), binding their arguments (``args.py``) and
compiling host kernels (``compile.py``)."""
