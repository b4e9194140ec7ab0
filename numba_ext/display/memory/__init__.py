"""Memory pictures: arrays and memory blocks drawn from the live C objects.

Everything is read through the C API and the public structs (the layout table
checked at import guarantees cffi's offsets): the array preamble
(``ck_array_preamble``), the arrmeta of each dim and field
(``ck_dim_arrmeta``, ``ck_var_dim_arrmeta``, ``ck_string_arrmeta``, ...), the
data it points to, the memblock owning that data (``data_ref``), and the
arenas strings and var dims point into (``ck_pod_memblock_stats``,
``ck_pod_memblock_chunks``).  Nothing is copied and no reference is taken:
reading happens while the caller holds the object.

:func:`array_layout` / :func:`memblock_layout` give the facts as plain data
(tests compare them with the C API); :func:`array_svg`, :func:`array_text`,
:func:`memblock_svg`, :func:`memblock_text` draw and print them.

The package: :mod:`.facts` (reading the C objects into plain data),
:mod:`.text` (the text views), :mod:`.svg` (the pictures).
"""

from __future__ import annotations

from .facts import (MAX_CELLS, MAX_ELEMENTS, ArrayFacts, BlockFacts, Cell, ChunkFacts,
                    ElementRef, MetaEntry, array_layout, block_facts, memblock_layout, type_str)
from .svg import array_svg, memblock_svg
from .plain_text import array_text, memblock_text

__all__ = ["ArrayFacts", "BlockFacts", "ChunkFacts", "MetaEntry", "ElementRef", "Cell",
           "array_layout", "memblock_layout", "block_facts", "array_text", "array_svg",
           "memblock_text", "memblock_svg", "type_str", "MAX_ELEMENTS", "MAX_CELLS"]
