"""``ckernels.jit``: Python scalar functions compiled into ckernels (see
:mod:`ckernels.jit.decorator`)."""

from .decorator import (CacheStats, Compiled, JitKernel, Signature, SUPPORTED_TYPES, jit,
                        parse_signature)

__all__ = ["jit", "JitKernel", "Compiled", "Signature", "parse_signature", "SUPPORTED_TYPES",
           "CacheStats"]
