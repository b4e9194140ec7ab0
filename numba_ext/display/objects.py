"""Rich displays of the other public objects: arrays (compact, with the
memory picture on request), device arrays and buffers (the buffer's map of
allocated and free ranges), contexts (device facts), programs (source,
options, build log), jitted functions (signatures, targets, cache state) and
ckernels errors.

Each object is read through what it holds: the C object behind it
(``ck_buffer``, ``ck_context``, ``ck_program``: the buffer's ranges come from
``ck_buffer_ranges``, a program's source, options and log from
``ck_program_source`` / ``_options`` / ``ck_program_build_log``) or its public
attributes.
"""

from __future__ import annotations

import html as _html
import reprlib
import sys

import numpy as np

from .. import dtypes
from .._native import c_text_out, check, ffi, lib
from ..errors import CKernelError, error_class
from ._svg import COLORS, FONT, MUTED, Canvas, hex_addr, text_width
from .memory import array_layout, array_svg, type_str
from .source import SourceCode
from .summary import BINS, DataSummary, summarize


def _table(rows, caption: str) -> str:
    body = "".join(
        f"<tr><th style='text-align:left;padding:1px 10px 1px 0;vertical-align:top'>"
        f"{_html.escape(str(k))}</th><td style='text-align:left'>{v}</td></tr>"
        for k, v in rows)
    return (f"<table class='ckernels-facts' style='border-collapse:collapse;font-size:12px'>"
            f"<caption style='text-align:left;font-weight:bold;padding-bottom:3px'>"
            f"{_html.escape(caption)}</caption>{body}</table>")


#: monospace for every <pre>/<code> (some HTML templates give <pre> a proportional font)
MONO = f"font-family:{FONT}"


def _code(v) -> str:
    return f"<code style='{MONO}'>{_html.escape(str(v))}</code>"


def _text_table(rows, title: str) -> str:
    w = max((len(str(k)) for k, _ in rows), default=0)
    return "\n".join([title] + [f"  {str(k):<{w}}  {v}" for k, v in rows])


def _details(summary: str, inner: str, open_: bool = False) -> str:
    return (f"<details{' open' if open_ else ''}><summary style='cursor:pointer'>"
            f"{_html.escape(summary)}</summary>{inner}</details>")


# ---- arrays (compact) -------------------------------------------------------------------

_VALUES = reprlib.Repr()
_VALUES.maxlist = 12
_VALUES.maxlevel = 4
_VALUES.maxstring = 48
_VALUES.maxother = 48
_VALUES.maxdict = 8


_HEAD = 12


def _values_text(a, facts) -> str:
    """The values, summarised: numbers as NumPy does (a few items from each
    end), other values (strings, var dims, structs) as the first items' list."""
    if facts.item_type in _NUMERIC and facts.shape and facts.cells:
        return np.array2string(np.asarray(a), threshold=200, edgeitems=4, max_line_width=100)
    if facts.shape and facts.cells and _is_time(a):   # ISO 8601 text, as str(a) prints it
        with np.printoptions(threshold=200, edgeitems=4, linewidth=100):
            return str(a)
    if facts.shape and facts.shape[0] > _HEAD:   # read only the first items
        return _VALUES.repr(a[:_HEAD].to_list())[:-1] + ", ...]"
    return _VALUES.repr(a.to_list())


def _is_time(a) -> bool:
    """Whether a host array's elements are time values (instants, durations,
    dates, times of day; ``?T`` of one too)."""
    t = getattr(a, "type", None)
    if t is None or not hasattr(t, "dtype"):
        return False
    return int(t.dtype.value_type.type_id) in _TIME_IDS


_TIME_IDS = frozenset(int(getattr(lib, f"CK_TYPE_{k}"))
                      for k in ("DATETIME", "TIMEDELTA", "DATE", "TIME"))

#: element types NumPy holds as numbers (the dtype table's builtin scalars)
_NUMERIC = frozenset(d.name for d in dtypes.BUILTINS if d.numpy is not None)


def summary_html(s: DataSummary) -> str:
    """The data summary as a small table: one row per leaf (statistics and,
    for numbers, a histogram of eight bins from min to max)."""
    rows = "".join(
        f"<tr><th style='text-align:left;padding:1px 10px 1px 0;font-weight:normal'>"
        f"{_code(name)}</th><td style='text-align:left;padding-right:10px'>"
        f"{_html.escape(text)}</td><td title='histogram: {BINS} bins from min to max' "
        f"style='{MONO};letter-spacing:1px;color:#3b6db3'>{_html.escape(spark)}</td></tr>"
        for name, text, spark in s.rows())
    return (f"<table class='ckernels-summary' style='border-collapse:collapse;"
            f"font-size:12px;margin:2px 0 4px 0'><caption style='text-align:left;"
            f"font-weight:bold;padding-bottom:2px'>data: {_html.escape(s.head())}"
            f"</caption>{rows}</table>")


def _arena_fact(b) -> str:
    """One block strings or var elements point into: an arena's bytes used and
    held, or what an external block (an imported Arrow array's) holds."""
    if b.used is None:
        return f"{hex_addr(b.address)}: {b.holds or 'foreign memory'}"
    return f"{hex_addr(b.address)}: {b.used} of {b.capacity} B used, {len(b.chunks)} chunk(s)"


def array_html(a) -> str:
    """A ckernels array, compact: type, shape, flags, where its data lives,
    its values (summarised); the memory picture inside ``<details>``."""
    f = array_layout(a)
    where = ("embedded in its block" if f.data_ref is None
             else f"in {f.data_ref.kind} block {hex_addr(f.data_ref.address)}"
             + (f": {f.data_ref.holds}" if f.data_ref.holds else ""))
    facts = [("type", _code(f.type)), ("shape", _code(f.shape)),
             ("strides", _code(f.strides)), ("flags", _code("|".join(f.flag_names))),
             ("data", f"{_code(hex_addr(f.data))} {where}")]
    if f.arenas:
        facts.append(("arenas", ", ".join(_code(_arena_fact(b)) for b in f.arenas)))
    values = _html.escape(_values_text(a, f))
    return ("<div class='ckernels-array'>" + _table(facts, "ckernels.Array")
            + f"<pre style='margin:4px 0;{MONO}'>{values}</pre>"
            + summary_html(summarize(a, f))
            + _details("memory layout (preamble, arrmeta, data, arenas)", array_svg(f))
            + "</div>")


# ---- buffers and device arrays ------------------------------------------------------------

def buffer_ranges(buf) -> tuple:
    """``(allocated, free)``: the buffer's ranges as ``(offset, size)`` lists
    (``ck_buffer_ranges``), sorted by offset."""
    out = []
    for kind in (lib.CK_BUFFER_RANGES_ALLOCATED, lib.CK_BUFFER_RANGES_FREE):
        n = ffi.new("size_t *")
        check(lib.ck_buffer_ranges(buf._buf, kind, ffi.NULL, 0, n))
        r = ffi.new("ck_buffer_range[]", max(n[0], 1))
        check(lib.ck_buffer_ranges(buf._buf, kind, r, n[0], n))
        out.append([(int(r[i].offset), int(r[i].size)) for i in range(n[0])])
    return tuple(out)


_MAP_W = 640


def buffer_svg(buf, highlight: tuple | None = None) -> str:
    """The buffer's map: ``[0, capacity)`` with its allocated and free ranges
    (``highlight``: an ``(offset, size)`` range to mark, e.g. a device array's)."""
    allocated, free = buffer_ranges(buf)
    cap = buf.capacity
    c = Canvas("ckernels.Buffer")
    c.text(8, 18, f"buffer of {buf.context.kind} context: {buf.used} of {cap} bytes "
                  f"allocated in {len(allocated)} block(s), {len(free)} free range(s)",
           weight="bold", cls="title")
    top, h = 28, 26
    scale = _MAP_W / max(cap, 1)
    ranges = sorted([(o, s, "allocated") for o, s in allocated] +
                    [(o, s, "free") for o, s in free])
    for o, s, kind in ranges:
        fill, stroke = COLORS["used" if kind == "allocated" else "free"]
        x, w = 8 + o * scale, max(s * scale, 1)
        c.rect(x, top, w, h, fill=fill, stroke=stroke, cls=kind,
               dash=None if kind == "allocated" else "3 2")
        label = f"{o}+{s}" if kind == "allocated" else f"free {s}"
        if w > text_width(label, 10) + 4:
            c.text(x + w / 2, top + 17, label, anchor="middle", size=10, cls="range-label")
    if highlight is not None:
        o, s = highlight
        hf, hs = COLORS["highlight"]
        c.rect(8 + o * scale, top - 4, max(s * scale, 2), h + 8, fill="none", stroke=hs,
               cls="highlight")
        c.text(8 + o * scale, top + h + 16, f"this array: bytes [{o}, {o + s})", color=hs,
               size=11)
    c.text(8, top + h + 32, "0", color=MUTED, size=10)
    c.text(8 + _MAP_W, top + h + 32, str(cap), anchor="end", color=MUTED, size=10)
    y = top + h + 50
    for o, s, kind in ranges[:24]:
        c.text(8, y, f"{kind:9s} [{o}, {o + s})  {s} bytes", size=11, cls="range",
               color="#222222" if kind == "allocated" else MUTED)
        y += 15
    if len(ranges) > 24:
        c.text(8, y, f"… {len(ranges) - 24} more range(s)", color=MUTED, size=11)
    return c.to_string()


def buffer_text(buf) -> str:
    allocated, free = buffer_ranges(buf)
    lines = [f"ckernels.Buffer of {buf.context.describe()}: capacity {buf.capacity}, "
             f"{buf.used} bytes allocated"]
    for o, s, kind in sorted([(o, s, "allocated") for o, s in allocated] +
                             [(o, s, "free") for o, s in free]):
        lines.append(f"  {kind:9s} [{o}, {o + s})  {s} bytes")
    return "\n".join(lines)


def _device_rows(d):
    return [("shape", d.shape), ("dtype", str(d.dtype)), ("strides", d.strides),
            ("contiguous", "yes" if d.is_contiguous else "no"), ("bytes", d.nbytes),
            ("buffer", f"bytes [{d.offset}, {d.offset + d.nbytes}) of {d.buffer.capacity}"),
            ("context", d.context.describe()),
            ("values", "on the device: arr.to_numpy() copies them to the host")]


def device_array_html(d) -> str:
    rows = [(k, _code(v)) for k, v in _device_rows(d)]
    return ("<div class='ckernels-device-array'>" + _table(rows, "ckernels.DeviceArray")
            + _details("buffer map", buffer_svg(d.buffer, (d.offset, d.nbytes)), True)
            + "</div>")


def device_array_text(d) -> str:
    return _text_table(_device_rows(d), "ckernels.DeviceArray") + "\n" + buffer_text(d.buffer)


def _varlen_buffers(d, name="", out=None):
    """``(name, device array)`` of every buffer of a device string / var-dim
    array, outermost first (``offsets``, ``values``, ``values.offsets``, ...)."""
    out = [] if out is None else out
    out.append((name + "offsets", d.offsets))
    v = d.values
    if hasattr(v, "validity"):        # var * ?T: the option child's bitmap, then its values
        out.append((name + f"values.validity (bit offset {v.bit_offset})", v.validity))
        if hasattr(v.values, "offsets"):
            _varlen_buffers(v.values, name + "values.", out)
        else:
            out.append((name + "values.values", v.values))
    elif hasattr(d.values, "offsets"):
        _varlen_buffers(d.values, name + "values.", out)
    else:
        out.append((name + ("data (UTF-8)" if str(d.element) == "string" else "values"),
                    d.values))
    return out


def _varlen_rows(d):
    rows = [("type", d.type), ("layout", "Arrow: int64 offsets + values, one device "
             "allocation per buffer"), ("context", d.context.describe())]
    if hasattr(d.values, "validity"):
        rows.append(("null items", f"{d.values.null_count} of {len(d.values)} (Arrow's list "
                     "of a nullable child: a null item is a 0 bit)"))
    for name, b in _varlen_buffers(d):
        rows.append((name, f"{b.size} x {b.dtype}, {b.nbytes} bytes"))
    rows.append(("values", "on the device: .get() copies them to the host"))
    return rows


def device_varlen_html(d) -> str:
    """The picture of a device string / var-dim array: its facts and the map
    of each buffer."""
    rows = [(k, _code(v)) for k, v in _varlen_rows(d)]
    maps = "".join(_details(f"{name} buffer", buffer_svg(b.buffer, (b.offset, b.nbytes)))
                   for name, b in _varlen_buffers(d))
    return ("<div class='ckernels-device-array'>" + _table(rows, "ckernels.DeviceArray")
            + maps + "</div>")


def device_varlen_text(d) -> str:
    return "\n".join([_text_table(_varlen_rows(d), "ckernels.DeviceArray")] +
                      [f"{name}: " + buffer_text(b.buffer) for name, b in _varlen_buffers(d)])


# ---- contexts and programs ----------------------------------------------------------------

def _context_rows(ctx):
    p = ctx._ctx
    rows = [("kind", ctx.kind), ("device", ctx.describe()),
            ("double precision (fp64)", "yes" if lib.ck_context_supports_fp64(p) else "no"),
            ("host-accessible buffers", "yes" if lib.ck_context_host_accessible(p) else "no"),
            ("references", int(lib.ck_context_refcount(p)))]
    if ctx.kind == "cuda":
        ordinal, major, minor = (ffi.new("int32_t *") for _ in range(3))
        if lib.ck_cuda_context_device(p, ordinal, major, minor) == 0:
            rows += [("device ordinal", ordinal[0]),
                     ("compute capability", f"{major[0]}.{minor[0]}")]
        version = ffi.new("int32_t *")
        if lib.ck_cuda_driver_version(version) == 0:
            rows.append(("driver CUDA version", f"{version[0] // 1000}.{version[0] % 1000 // 10}"))
    return rows


def context_html(ctx) -> str:
    return _table([(k, _code(v)) for k, v in _context_rows(ctx)], "ckernels.Context")


def context_text(ctx) -> str:
    return _text_table(_context_rows(ctx), "ckernels.Context")


def _describe(ctx) -> str:
    return c_text_out(lib.ck_context_describe, ctx)


def _program_parts(prog):
    p = prog._prog
    source = ffi.string(lib.ck_program_source(p)).decode("utf-8", "replace")
    options = ffi.string(lib.ck_program_options(p)).decode("utf-8", "replace")
    log = c_text_out(lib.ck_program_build_log, p, errors="replace").strip()
    kind = ffi.string(lib.ck_context_kind(lib.ck_program_context(p))).decode()
    return source, options, log, kind


def program_html(prog) -> str:
    source, options, log, kind = _program_parts(prog)
    lang = "cuda" if kind == "cuda" else "opencl"
    code = SourceCode(source, lang)
    rows = [("context", _code(_describe(lib.ck_program_context(prog._prog)))),
            ("options", _code(options or "(none)")),
            ("build log", f"<pre style='margin:0;{MONO}'>{_html.escape(log)}</pre>" if log
             else "<i>empty</i>")]
    return ("<div class='ckernels-program'>" + _table(rows, "ckernels.Program")
            + code._repr_html_() + "</div>")


def program_text(prog) -> str:
    source, options, log, kind = _program_parts(prog)
    return "\n".join([f"ckernels.Program ({kind}), options: {options or '(none)'}",
                      f"build log: {log or '(empty)'}", "source:", source])


# ---- jitted functions ------------------------------------------------------------------------

def _device_programs(fn) -> dict:
    """target kind -> {signature text: emitted program} of the device targets
    already made (a target never made has compiled nothing)."""
    dev = sys.modules.get("ckernels.jit.device")
    out = {}
    if dev is None:
        return out
    for kind, tgt in list(dev._TARGET_OBJECTS.items()):
        cache = getattr(tgt, "_programs", None)
        if cache is None:
            continue
        done = {c.sig.text: cache[c] for c in fn.compiled.values() if c in cache}
        if done:
            out[kind] = done
    return out


def _jitted_facts(fn):
    sigs = []
    for comp in fn.compiled.values():
        sigs.append((comp.sig.text, hex_addr(comp.single), hex_addr(comp.strided),
                     "disk cache" if getattr(comp, "from_cache", False) else "compiled"))
    devices = _device_programs(fn)
    st = fn.stats
    cache = getattr(fn, "_cache", None)
    rows = [("function", f"{fn.__module__}.{fn.__qualname__}"),
            ("error model", fn.error_model),
            ("on-disk cache", "on (cache=True)" if cache else "off"),
            ("targets", ", ".join(["cpu"] + [f"{k} ({len(v)} signature(s))"
                                             for k, v in devices.items()])),
            ("Numba dispatcher cache", f"hits {sum(st.dispatcher_hits.values())}, "
                                       f"misses {sum(st.dispatcher_misses.values())}"),
            ("entry-point cache", f"hits {sum(st.kernel_hits.values())}, "
                                  f"misses {sum(st.kernel_misses.values())}")]
    registered = getattr(fn, "_registered", None)
    if registered:
        rows.append(("registered as", ", ".join(f"ckernels.ops.{n}" for n in registered)))
    return rows, sigs, devices


def jitted_html(fn) -> str:
    rows, sigs, devices = _jitted_facts(fn)
    head = "".join(f"<th style='text-align:left;padding-right:12px'>{h}</th>"
                   for h in ("signature", "single", "strided", "CPU code"))
    body = "".join("<tr>" + "".join(f"<td style='padding-right:12px'>{_code(v)}</td>"
                                    for v in s) + "</tr>" for s in sigs)
    sig_table = (f"<table style='font-size:12px;border-collapse:collapse'><tr>{head}</tr>"
                 f"{body}</table>" if sigs else "<i>no signature compiled yet</i>")
    src = "".join(_details(f"{kind} source of {sig}",
                           SourceCode(p.source, kind)._repr_html_())
                  for kind, progs in devices.items() for sig, p in progs.items())
    return ("<div class='ckernels-jit'>" + _table([(k, _code(v)) for k, v in rows],
                                                  f"ckernels.jit {fn.__qualname__}")
            + sig_table + src + "</div>")


def jitted_text(fn) -> str:
    rows, sigs, _ = _jitted_facts(fn)
    lines = [_text_table(rows, f"ckernels.jit {fn.__qualname__}")]
    lines += [f"  {s}: single {a}, strided {b} ({how})" for s, a, b, how in sigs]
    return "\n".join(lines)


# ---- errors --------------------------------------------------------------------------------

def _error_rows(exc):
    rows = [("exception", f"{type(exc).__module__}.{type(exc).__qualname__}")]
    bases = [b.__name__ for b in type(exc).__mro__[1:]
             if b.__module__ == "builtins" and b not in (Exception, BaseException, object)]
    if bases:
        rows.append(("also a", ", ".join(bases)))
    if isinstance(exc, CKernelError) and exc.status >= 0:
        name = ffi.string(lib.ck_status_name(exc.status)).decode()
        rows.append(("status", f"{name} ({exc.status})"))
        if error_class(exc.status) is not type(exc):
            rows.append(("status maps to", error_class(exc.status).__name__))
    return rows


def error_html(exc) -> str:
    msg = str(exc)
    rows = [(k, _code(v)) for k, v in _error_rows(exc)]
    return ("<div class='ckernels-error'>" + _table(rows, "ckernels error")
            + f"<pre style='white-space:pre-wrap;margin:4px 0;color:#8a1f1f;{MONO}'>"
              f"{_html.escape(msg)}</pre></div>")


def error_text(exc) -> str:
    return _text_table(_error_rows(exc), "ckernels error") + "\n" + str(exc)


__all__ = ["array_html", "buffer_ranges", "buffer_svg", "buffer_text", "device_array_html",
           "device_array_text", "context_html", "context_text", "program_html",
           "program_text", "jitted_html", "jitted_text", "error_html", "error_text",
           "type_str"]
