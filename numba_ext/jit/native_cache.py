"""The native cache of ``@ckernels.jit(..., cache=True)``: compiled signatures
as real shared libraries, loaded without Numba.

A kernel is a plain C ABI, so the product of a compile can be one: when a
``cache=True`` signature is compiled in this process, :func:`save` takes the
LLVM module of the library holding its entry points (``<sym>_single``,
``<sym>_strided``), keeps only what they reach (everything else internal,
then global dead-code elimination), gives it an error path of its own that
needs no Numba (:func:`record_status`, called through the Python C API), emits
position-independent object code for the host CPU and links it with the
system C compiler (``cc -shared``) against the installed ``libckernel.so``.
The calls compiled code makes into Numba's runtime (NRT: the strings,
lists and arrays a function makes) are renamed to libckernel's runtime with
the same contract (:func:`nrt_renames`, ``ckernel/jit.h``), so string
signatures are native libraries too.  A library whose undefined symbols are
still not all ``ck_*`` (libckernel), libc / libm or the Python C API (Numba's
helpers: a dynamic ``raise``, Unicode case tables, some math) is recorded as
not native-cachable, and that signature keeps the Numba cache.

In a fresh interpreter, :func:`load` finds the library by a key (module,
qualified name, code key, source hash, signature, error model, Numba
options, the library's ABI, the CPU, Python, Numba and llvmlite), checks its
SHA-256 against the index, ``dlopen``s it (once per process) and hands back
the entry point addresses: decoration with explicit signatures then imports
neither Numba nor llvmlite.

``CKERNELS_JIT_NATIVE_CACHE=0`` turns the native cache off (Numba's cache
alone, as before).  Files sit in Numba's cache directory of the function (the same rules:
``NUMBA_CACHE_DIR``, else a writable ``__pycache__`` next to the source; a
function Numba would cache elsewhere is not native-cached), one JSON index
``<name>-<line>.py<XY>.<key>.ckn`` and one ``.so`` per key, each written to a
temporary file and renamed.  Any problem (no compiler, a read-only directory,
a corrupt or foreign file) means no native cache, never an error; a library
that is missing, truncated or corrupt under a matching index is compiled again
(bypassing Numba's cache, which holds no LLVM module) and rewritten
(:func:`needs_repair`).

Trust (:mod:`ckernels._trust`): a library's constructors run inside
``dlopen``, and the index's SHA-256 only detects damage -- whoever can write
the library can write the index.  So the cache directory must be owned by the
user and writable by no one else (directories above it: the user or root, not
writable by others unless sticky), else :func:`trusted` is False, the function
gets no cache at all and an ``UntrustedCacheWarning`` says why; each file is
opened once, checked on its descriptor, hashed, and the library is loaded from
that descriptor (``/proc/self/fd/N``).

The same libckernel: the library is linked against the installed
``libckernel.so`` (by its soname, which the process already has loaded for
the cffi module), and :func:`load` checks that the ``ck_*`` symbols the
library sees are that instance's (:func:`_libckernel`), so thread-local
errors and the memory counters are shared.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading

from .. import _native, _trust

#: version of the index format and of what the libraries contain
FORMAT = "ckernels.jit.native/2"

_lock = threading.Lock()
#: libraries loaded in this process, by path (never loaded twice)
_LOADED: dict = {}
#: ctypes handle of libckernel, once its identity was checked
_CKLIB = None


class NativeEntryPoints:
    """The entry points of one signature from a native library (what
    :class:`ckernels.jit.cpu.Compiled` needs of a trampolines object)."""

    __slots__ = ("library", "path", "symbase", "single", "strided", "from_cache",
                 "element_source", "__weakref__")

    def __init__(self, library, path, symbase, single, strided):
        self.library = library       # the ctypes handle (also kept in _LOADED)
        self.path = path
        self.symbase = symbase
        self.single = single
        self.strided = strided
        self.from_cache = True
        self.element_source = None

    def __repr__(self) -> str:
        return f"<ckernels.jit native entry points {self.symbase} from {self.path}>"


# ------------------------------------------------------------------ keys --
def _file_sha(path: str) -> str:
    st = os.stat(path)
    return _file_sha_cached(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=None)
def _file_sha_cached(path, mtime, size) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


_HOST: dict | None = None


def _cpu_identity() -> str:
    """The CPU the code is compiled for, without LLVM (cheap at load): the
    model and feature flags the kernel reports, plus Numba's overrides."""
    import platform
    parts = [platform.machine()]
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if not line.strip():
                    break           # the first processor is enough
                k, _, v = line.partition(":")
                k = k.strip()
                if k in ("vendor_id", "cpu family", "model", "model name", "flags",
                         "Features", "CPU implementer", "CPU part", "isa"):
                    parts.append(f"{k}={v.strip()}")
    except OSError:
        parts.append(platform.processor() or "?")
    if len(parts) == 1:
        return ""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _package_stamp(name: str) -> str:
    """Identity of an installed package (Numba, llvmlite) without importing
    it: its location and its version file's size and time."""
    import importlib.util
    mod = sys.modules.get(name)
    origin = getattr(mod, "__file__", None) if mod is not None else None
    if origin is None:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
    if origin is None:
        return "missing"
    d = os.path.dirname(origin)
    st = os.stat(os.path.join(d, "_version.py"))
    return f"{d}|{st.st_size}|{st.st_mtime_ns}"


def host() -> dict:
    """What every key shares in this process (computed once)."""
    global _HOST
    if _HOST is None:
        __version__ = _native.ffi.string(_native.lib.ck_version_string()).decode()
        lib_path = libckernel_path()
        _HOST = {
            "format": FORMAT,
            "cpu": _cpu_identity(),
            "python": sys.version,
            "cache_tag": sys.implementation.cache_tag,
            "numba": _package_stamp("numba"),
            "llvmlite": _package_stamp("llvmlite"),
            "ckernels": __version__,
            "libckernel": _file_sha(lib_path),
            "layout": hashlib.sha256(repr(sorted(_native.layout_rows().items()))
                                     .encode()).hexdigest(),
            "numba_env": sorted((k, v) for k, v in os.environ.items()
                                if k.startswith("NUMBA_") and k != "NUMBA_CACHE_DIR"),
        }
    return _HOST


def libckernel_path() -> str:
    """The ``libckernel.so`` next to the cffi module (the one it links)."""
    import glob
    from .. import _ffi
    d = os.path.dirname(os.path.abspath(_ffi.__file__))
    cands = sorted(glob.glob(os.path.join(d, "libckernel.so*")), key=len)
    if not cands:
        raise OSError(f"no libckernel.so next to {_ffi.__file__}")
    return cands[0]


def key_of(kernel, sig) -> dict:
    """The full key of one signature of ``kernel`` (JSON-able)."""
    py_file = kernel.py_func.__code__.co_filename
    return {
        "host": host(),
        "function": f"{kernel.__module__}.{kernel.__qualname__}",
        "source": _file_sha(py_file),
        "code": kernel._code_key(),
        "signature": sig.text,
        "error_model": kernel.error_model,
        "options": repr(sorted(kernel._options.items())),
        "arena_offset": _native.layout_row("ck_jit_kernel", "dst_arena")[0],
    }


def cache_dir(py_func) -> str | None:
    """The directory Numba caches ``py_func`` in (its rules for
    ``NUMBA_CACHE_DIR`` and an in-tree ``__pycache__``), or None (other
    locations are not native-cached)."""
    py_file = py_func.__code__.co_filename
    if not os.path.isfile(py_file) or os.path.exists(".numba_config.yaml") or \
            os.environ.get("NUMBA_CACHE_LOCATOR_CLASSES"):
        return None           # Numba decides (trusted() judges where: numba_cache_dir)
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        sub = os.path.dirname(os.path.abspath(py_file))
        return os.path.join(user, "_".join([os.path.split(sub)[-1],
                                            hashlib.sha1(sub.encode()).hexdigest()]))
    d = os.path.join(os.path.dirname(py_file), "__pycache__")
    if os.path.isdir(d):
        return d if os.access(d, os.W_OK) else None
    return d if os.access(os.path.dirname(py_file) or ".", os.W_OK) else None


def _paths(kernel, key) -> tuple[str, str] | None:
    d = cache_dir(kernel.py_func)
    if d is None:
        return None
    fixed = f"{kernel.__module__}.{kernel.__qualname__}".replace("<locals>", "").replace(".", "_")
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    base = os.path.join(d, f"{fixed}-{kernel.py_func.__code__.co_firstlineno}."
                           f"py{sys.version_info[0]}{sys.version_info[1]}.{digest}")
    return base + ".ckn", base + ".so"


# ------------------------------------------------------------------ load --
def _libckernel():
    """ctypes handle of the libckernel instance the cffi module uses
    (checked once: a block made through cffi shows in the count read through
    this handle)."""
    global _CKLIB
    if _CKLIB is None:
        import ctypes
        h = ctypes.CDLL(libckernel_path())
        live = h.ck_memblock_live_count
        live.restype = ctypes.c_int64
        if not _native.same_instance(live):
            raise OSError("libckernel.so is not the instance the cffi module uses")
        _CKLIB = h
    return _CKLIB


def _address(handle, name: str) -> int:
    import ctypes
    return ctypes.cast(getattr(handle, name), ctypes.c_void_p).value or 0


def enabled() -> bool:
    """The native cache is used unless ``CKERNELS_JIT_NATIVE_CACHE=0``."""
    return os.environ.get("CKERNELS_JIT_NATIVE_CACHE", "1") != "0"


def numba_cache_dir(py_func) -> str | None:
    """The directory Numba itself will cache ``py_func`` in, found by Numba's
    own locators after reading its configuration as its compiler does
    (``NUMBA_CACHE_DIR``, a ``.numba_config.yaml`` in the working directory,
    ``NUMBA_CACHE_LOCATOR_CLASSES``, the user-wide directory, IPython's), or
    None when Numba cannot cache it at all.  Imports Numba."""
    from numba.core import caching, config
    config.reload_config()
    try:
        impl = caching.CompileResultCacheImpl(py_func)
    except RuntimeError:          # no locator: Numba caches nothing
        return None
    return impl.locator.get_cache_path()


def trusted(py_func) -> bool:
    """Whether the cache directory of ``py_func`` may be used at all (the rules
    of :mod:`ckernels._trust`: owned by this user, writable by no one else);
    warns once (:class:`~ckernels.errors.UntrustedCacheWarning`) when not.
    When the native cache has no directory of its own for the function (a
    ``.numba_config.yaml`` in the working directory, a ``__pycache__`` that
    is not writable, no source file), the directory Numba ends up using
    (:func:`numba_cache_dir`) is judged instead: Numba's index there is a
    pickle, and unpickling runs code."""
    d = cache_dir(py_func)
    if d is None:
        d = numba_cache_dir(py_func)
    return d is None or _trust.trusted_directory(d, "cache=True for this directory")


def load(kernel, sig) -> tuple[NativeEntryPoints, str] | None:
    """``(entry points, result type name)`` of ``sig`` from the cache, or None (a miss, a
    signature recorded as not native-cachable, or anything wrong with the
    files).  The index and the library are read through :mod:`ckernels._trust`
    (owner and mode checked on the open descriptor), and the library is
    loaded from the descriptor its SHA-256 was computed on."""
    if not enabled():
        return None
    try:
        key = key_of(kernel, sig)
        paths = _paths(kernel, key)
    except Exception:
        return None
    if paths is None or not _trust.trusted_directory(os.path.dirname(paths[0]),
                                                      "the native cache"):
        return None
    index_path, so_path = paths
    try:
        index = json.loads(_trust.read_trusted(index_path))
        if index.get("key") != key or not index.get("native"):
            return None
        with _lock:
            have = _LOADED.get(so_path)
            if have is None:
                fd, data = _trust.open_trusted(so_path)
                if hashlib.sha256(data).hexdigest() != index["sha256"]:
                    os.close(fd)
                    return None
                import ctypes
                handle = ctypes.CDLL(_trust.loadable_path(fd, so_path))
                ck = _libckernel()
                for name in index["ck_symbols"]:     # the same libckernel instance
                    if _address(handle, name) != _address(ck, name):
                        return None
                _LOADED[so_path] = have = handle
        symbase = index["symbase"]
        single = _address(have, f"{symbase}_single")
        strided = _address(have, f"{symbase}_strided")
        if not single or not strided:
            return None
        return NativeEntryPoints(have, so_path, symbase, single, strided), index["result"]
    except _trust.UntrustedFile as exc:
        _trust.warn_untrusted(str(exc), "the native cache")
        return None
    except Exception:   # a missing, truncated, corrupt or foreign file: a miss
        return None


def needs_repair(kernel, sig) -> bool:
    """Whether ``sig``'s index is in a trusted cache directory and says the
    signature is native, but its library is missing, truncated or corrupt: the
    next compile must then bypass Numba's cache (whose code has no LLVM module
    left to build the library from) so that :func:`save` can rewrite it."""
    if not enabled():
        return False
    try:
        key = key_of(kernel, sig)
        paths = _paths(kernel, key)
        if paths is None or _trust.directory_problem(os.path.dirname(paths[0])):
            return False
        raw = _trust.read_trusted(paths[0])
    except Exception:
        return False
    try:
        index = json.loads(raw)
        if not isinstance(index, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        # a damaged index (not JSON): every later process would miss and, with
        # Numba's cache serving the signature, never rewrite it; compile afresh
        # so that save() replaces it
        _warn_corrupt(paths[0], exc)
        return True
    return index.get("key") == key and bool(index.get("native")) and not _stored(key, *paths)


def _warn_corrupt(path: str, exc: Exception) -> None:
    import warnings
    warnings.warn(f"ckernels: the native cache index {path} is corrupt ({exc}); the "
                  "signature is compiled again and the index rewritten",
                  RuntimeWarning, stacklevel=4)


def _stored(key, index_path: str, so_path: str) -> bool:
    """Whether the files of ``key`` are there and sound (a library that fails
    its hash is rewritten by :func:`save`)."""
    try:
        index = json.loads(_trust.read_trusted(index_path))
        if index.get("key") != key:
            return False
        if not index.get("native"):
            return True
        fd, data = _trust.open_trusted(so_path)
        os.close(fd)
        return hashlib.sha256(data).hexdigest() == index["sha256"]
    except (OSError, ValueError, KeyError, AttributeError):
        return False


# ------------------------------------------------------------- the error path --
def record_status(code, payload, pending):
    """The error path of native libraries (called with the GIL from their
    ``ckernels_jit_raise``): the exception the compiled function reported
    (``payload``: Numba's pickled ``(class, args, location)`` of a static
    exception; ``pending``: a Python exception already set) is recorded with
    ``ck_set_error`` on this thread (:func:`ckernels.errors.record`); returns
    its status."""
    from .. import errors
    try:
        if payload is not None:
            import pickle
            exc, args, _loc = pickle.loads(payload)
            if isinstance(exc, type):
                exc = exc(*args)
        elif pending is not None:
            exc = pending
        elif code == -3:
            exc = StopIteration()
        else:
            exc = SystemError(f"unknown error {code} in a jitted kernel")
    except Exception as e:    # pragma: no cover - defensive
        exc = e
    return errors.record(exc)


# ------------------------------------------------------------------ save --
_ALLOWED: dict = {}

#: the functions of Numba's runtime (NRT) compiled code calls by name -> the
#: libckernel functions with the same contract (``ckernel/jit.h``): strings,
#: lists and arrays made inside a cached function live and die in the library
_NRT = {
    "NRT_MemInfo_alloc": "ck_jit_meminfo_alloc",
    "NRT_MemInfo_alloc_safe": "ck_jit_meminfo_alloc",
    "NRT_MemInfo_alloc_aligned": "ck_jit_meminfo_alloc_aligned",
    "NRT_MemInfo_alloc_safe_aligned": "ck_jit_meminfo_alloc_aligned",
    "NRT_MemInfo_alloc_dtor": "ck_jit_meminfo_alloc_dtor",
    "NRT_MemInfo_alloc_dtor_safe": "ck_jit_meminfo_alloc_dtor",
    "NRT_MemInfo_call_dtor": "ck_jit_meminfo_call_dtor",
    "NRT_MemInfo_new_varsize": "ck_jit_meminfo_new_varsize",
    "NRT_MemInfo_new_varsize_dtor": "ck_jit_meminfo_new_varsize_dtor",
    "NRT_MemInfo_varsize_alloc": "ck_jit_meminfo_varsize_alloc",
    "NRT_MemInfo_varsize_realloc": "ck_jit_meminfo_varsize_realloc",
    "NRT_MemInfo_varsize_free": "ck_jit_meminfo_varsize_free",
    "NRT_Allocate": "ck_jit_allocate",
    "NRT_Free": "ck_jit_free",
}


def nrt_renames() -> dict:
    """:data:`_NRT` when libckernel's meminfo header is laid out as the one
    Numba's code reads and writes inline (refct, dtor, dtor_info, data, size:
    ``numba.core.runtime.nrtdynmod``), else ``{}`` (code using the runtime then
    stays on Numba's cache)."""
    from numba.core.runtime import nrtdynmod
    rows = _native.layout_rows()
    fields = ("refct", "dtor", "dtor_info", "data", "size")
    elements = list(nrtdynmod._meminfo_struct_type.elements)
    offset, want = 0, []
    for name, el in zip(fields, elements):
        size = el.width // 8 if hasattr(el, "width") else 8
        want.append((name, (offset, size)))
        offset += size
    if len(elements) != len(fields) or any(rows.get(("ck_jit_meminfo", n)) != v
                                           for n, v in want):
        return {}
    return dict(_NRT)


def _allowed_symbols():
    """(libc, libm, libckernel, Python API) ctypes handles for the check of
    undefined symbols."""
    if not _ALLOWED:
        import ctypes
        import ctypes.util
        _ALLOWED["c"] = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _ALLOWED["m"] = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    return _ALLOWED


def classify_undefined(names) -> tuple[list[str], list[str]]:
    """``(ck_symbols, foreign)``: the undefined symbols a library may have
    (libckernel, libc/libm, the Python C API of this interpreter) and the
    others."""
    import ctypes
    al = _allowed_symbols()
    ck = _libckernel()
    cks, bad = [], []
    for n in names:
        if n.startswith("ck_") and hasattr(ck, n):
            cks.append(n)
        elif (n.startswith(("Py", "_Py")) and hasattr(ctypes.pythonapi, n)) or \
                hasattr(al["c"], n) or hasattr(al["m"], n):
            continue
        else:
            bad.append(n)
    return cks, bad


def save(kernel, sig, result: str, tramp) -> str:
    """Store the entry points of ``sig`` (just compiled: ``tramp`` holds the
    finalized Numba library) as a native library; returns what happened
    (``"saved"``, ``"not native-cachable"``, or why nothing was stored)."""
    if not enabled():
        return "disabled (CKERNELS_JIT_NATIVE_CACHE=0)"
    import shutil
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("cc")
    nm = shutil.which("nm")
    if cc is None or nm is None:
        return "no C compiler"
    library = tramp.library
    if getattr(library, "_final_module", None) is None:
        return "no LLVM module (the library was loaded from Numba's cache)"
    key = key_of(kernel, sig)
    paths = _paths(kernel, key)
    if paths is None:
        return "no cache directory"
    if os.path.abspath(os.path.dirname(paths[0])) != os.path.abspath(
            kernel._trampoline_cache().cache_path):
        return "Numba caches this function elsewhere"
    index_path, so_path = paths
    if not _trust.trusted_directory(os.path.dirname(index_path), "the native cache",
                                    create=True):
        return "untrusted or unusable cache directory"
    if _stored(key, index_path, so_path):
        return "already stored"
    from .cpu_codegen import native_object
    obj, undefined = native_object(library, tramp.symbase, nrt_renames())
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="ckjit-") as tmp:
        o = os.path.join(tmp, "k.o")
        so = os.path.join(tmp, "k.so")
        with open(o, "wb") as fh:
            fh.write(obj)
        ckpath = libckernel_path()
        subprocess.run([cc, "-shared", "-o", so, o, ckpath, "-lm",
                        "-Wl,-Bsymbolic", "-Wl,-rpath," + os.path.dirname(ckpath)],
                       check=True, capture_output=True, timeout=120)
        p = subprocess.run([nm, "-D", "--undefined-only", so], check=True,
                           capture_output=True, text=True, timeout=60)
        names = []
        for line in p.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[-2] in ("U",):
                names.append(parts[-1].split("@")[0])
        cks, bad = classify_undefined(names)
        index = {"format": FORMAT, "key": key, "result": result, "symbase": tramp.symbase}
        if bad:
            index.update(native=False, foreign_symbols=sorted(bad))
        else:
            with open(so, "rb") as fh:
                data = fh.read()
            index.update(native=True, sha256=hashlib.sha256(data).hexdigest(),
                         ck_symbols=sorted(cks), numba_undefined=sorted(undefined))
            _trust.write_atomic(so_path, data)
    _trust.write_atomic(index_path, json.dumps(index, sort_keys=True).encode())
    return "saved" if index["native"] else "not native-cachable"


__all__ = ["FORMAT", "NativeEntryPoints", "enabled", "trusted", "load", "needs_repair", "save", "record_status", "key_of",
           "cache_dir", "libckernel_path", "classify_undefined"]
