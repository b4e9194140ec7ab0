"""``ckernels._arrow`` (``src/python/arrow/capsules.c``): the Arrow PyCapsule interface
(C data, stream and device interfaces) of ckernels arrays; arrays are named
by the address (int) of their C ``ck_array_preamble``."""

from typing_extensions import CapsuleType

def export_schema(address: int, requested: CapsuleType | None = None, /) -> CapsuleType:
    """An ``'arrow_schema'`` capsule."""

def export_array(address: int, requested: CapsuleType | None = None,
                 /) -> tuple[CapsuleType, CapsuleType]:
    """``('arrow_schema', 'arrow_array')`` capsules."""

def export_device_array(address: int, requested: CapsuleType | None = None,
                        /) -> tuple[CapsuleType, CapsuleType]:
    """``('arrow_schema', 'arrow_device_array')`` capsules (CPU)."""

def wrap_device_array(schema_address: int, array_address: int,
                      /) -> tuple[CapsuleType, CapsuleType]:
    """``('arrow_schema', 'arrow_device_array')`` capsules holding the structs
    at those addresses, moved in (the sources are left released)."""

def wrap_device_stream(schema: CapsuleType, device_array: CapsuleType, /) -> CapsuleType:
    """An ``'arrow_device_array_stream'`` capsule of one device array, the
    structs moved out of the ``'arrow_schema'`` and ``'arrow_device_array'``
    capsules."""

def export_stream(address: int, requested: CapsuleType | None = None, /) -> CapsuleType:
    """An ``'arrow_array_stream'`` capsule."""

def import_array(schema: CapsuleType, array: CapsuleType, fill: int | None, /) -> int:
    """The address of a new C array (one reference); the array capsule may be
    an ``'arrow_device_array'`` on the CPU; ``fill``: an address or None."""

def import_stream(stream: CapsuleType, fill: int | None, /) -> int:
    """The address of a new C array (one reference)."""

def schema_format(schema: CapsuleType, /) -> str:
    """The schema's top-level format string."""

def schema_element(schema: CapsuleType, /) -> int | None:
    """The builtin type id the schema imports as, or None."""
