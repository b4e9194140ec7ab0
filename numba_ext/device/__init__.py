"""``ckernels.device``: device arrays (``base.py``, ``array.py``), their
operations (``ops/``) and launches (``launch.py``)."""
