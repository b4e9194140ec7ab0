"""Validity bitmaps in device programs: the C text every device kernel over
option arrays (``?T``) shares, whoever launches it (jitted functions,
:mod:`ckernels.jit.device_nulls`; the built-in operations,
:mod:`ckernels.device.nulls`).

A device bitmap is Arrow's: bit ``off + i`` (LSB first within each byte, 1 =
valid) says whether flat element ``i`` holds a value, ``off`` a bit offset.

* :func:`guard_lines` -- the lines an elementwise kernel
  (:func:`~ckernels.context.device_program.kernel_wrapper` with
  ``validity=k``) runs after finding its element: read the result's bit
  (operand ``k`` is the bitmap, an array operand broadcast to every element,
  operand ``k + 1`` its bit offset by value); on a null slot store a zero
  and return, so the body never runs there (``10 // x`` cannot raise on the
  0 Arrow leaves under a null).  The flat index ``i`` of the launch is the
  element's C-order index in the result (``ck_coalesce_dims`` keeps the
  order), so the bit is ``off + i``.
* :func:`and_source` -- a program whose kernel :data:`AND_KERNEL` writes the
  AND of ``m`` bitmaps, each at its own bit offset, into a new bitmap at bit
  offset 0 (one work item per output byte; bits past the length are 0).  With
  ``m == 1`` it moves a bitmap to bit offset 0 (what Arrow's export needs when
  the values start at element 0).
"""

from __future__ import annotations

from ..dialects import Dialect

#: the kernel of :func:`and_source`
AND_KERNEL = "ck_validity_and"


def guard_lines(d: Dialect, k: int, out) -> list[str]:
    """The null-slot guard of an elementwise kernel: bitmap operand ``k``
    (``ck_in{k}``, broadcast), bit offset ``ck_in{k + 1}_val``; ``out`` is
    the result's element type (a :mod:`ckernels.dtypes` row)."""
    u64 = d.uint64
    st = d.uint8 if out.kind == "b" else d.ctype(out)
    return [f"  {u64} ck_vbit = ck_in{k + 1}_val + i;",
            f"  if (!((ck_in{k}[o_in{k} + (ck_vbit >> 3)] >> (ck_vbit & 7)) & 1)) {{",
            f"    *({d.pointer(st)})(ck_out + o_out) = ({st})0;",
            "    return;",
            "  }"]


def and_source(d: Dialect, m: int) -> str:
    """The whole program of :data:`AND_KERNEL` over ``m`` bitmaps.

    Arguments: the output bitmap (bit offset 0), the element count ``n``,
    then per input its bitmap and its bit offset (``uint64``).  Input bytes
    past the last bit an input holds (``(off + n - 1) / 8``) are never read."""
    u8, u64, u32 = d.uint8, d.uint64, d.types["uint32"]
    params = [f"{d.pointer(u8)}out", f"{u64} n"]
    for k in range(m):
        params += [f"{d.pointer(u8, True)}b{k}", f"{u64} off{k}"]
    lines = [f"{d.kernel_prefix} {AND_KERNEL}({', '.join(params)})", "{",
             f"  {u64} j = {d.thread_index};",
             f"  {u64} nbytes = (n + 7) >> 3;",
             "  if (j >= nbytes) return;",
             f"  {u32} r = 0xFFu;"]
    for k in range(m):
        lines += [f"  {{ {u64} bit = off{k} + (j << 3); {u64} q = bit >> 3; "
                  f"{u32} s = ({u32})(bit & 7);",
                  f"    {u32} w = b{k}[q];",
                  f"    if (s != 0 && q + 1 <= (off{k} + n - 1) >> 3) "
                  f"w |= ({u32})b{k}[q + 1] << 8;",
                  "    r &= w >> s; }"]
    lines += ["  if (j == nbytes - 1 && (n & 7) != 0) r &= (1u << (n & 7)) - 1u;",
              f"  out[j] = ({u8})r;", "}"]
    return "\n".join(lines) + "\n"


__all__ = ["AND_KERNEL", "guard_lines", "and_source"]
