"""Compiling hand-written kernels (:mod:`ckernels.user_kernels.build`):
the CPU's shared libraries from the system C compiler -- cached on disk under
the trust rules of :mod:`ckernels._trust`, loaded with cffi (see the docstring
of ``user_kernels``) -- and compile errors carrying the user's source lines
(any compiler: the C compiler, PoCL's, NVRTC)."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading

from .. import _trust
from ..errors import CompileError
from .source import KernelProgram


def compile_error(prog: KernelProgram, log: str, compiler: str) -> CompileError:
    log = with_source_lines(log.strip(), prog.filename, prog.user_source)
    return CompileError(f"{prog.filename}: {compiler} rejected the kernels:\n{log}", log=log,
                        target=prog.target)


def with_source_lines(log: str, filename: str, source: str) -> str:
    """The log with the user's source line under each diagnostic that names
    it, unless the compiler printed the line itself."""
    lines = source.split("\n")
    pat = re.compile(r"^(?:error: )?" + re.escape(filename) + r"(?::(\d+)|\((\d+)\))")
    out = []
    log_lines = log.split("\n")
    shown = None        # the line quoted last: notes on the same line need no repeat
    for i, text in enumerate(log_lines):
        out.append(text)
        m = pat.match(text)
        if m is None:
            continue
        no = int(m.group(1) or m.group(2))
        if not 1 <= no <= len(lines) or no == shown:
            continue
        src = lines[no - 1]
        following = log_lines[i + 1] if i + 1 < len(log_lines) else ""
        if src.strip() and src.strip() not in following:
            out.append(f"{no:5d} | {src}")
        shown = no
    return "\n".join(out)


# ---- the CPU: a shared library from the system C compiler, through cffi ----

# What later C standards and GCC 14 make errors is an error here too: a
# misspelt accessor must not become an undefined symbol at load time.
_CFLAGS = ("-std=gnu11", "-O2", "-fPIC", "-shared", "-Wall",
           "-Werror=implicit-function-declaration", "-Werror=implicit-int",
           "-Werror=incompatible-pointer-types", "-Werror=int-conversion",
           "-Werror=return-type") + (("-Wl,-z,defs",) if sys.platform.startswith("linux")
                                     else ())


def cache_dir() -> str:
    """Where compiled CPU kernels are kept (see :mod:`ckernels.user_kernels.build`)."""
    root = os.environ.get("CKERNELS_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                ".cache")
        root = os.path.join(base, "ckernels")
    return os.path.join(root, "kernels")


@functools.lru_cache(maxsize=None)
def _compiler() -> tuple[tuple[str, ...], str]:
    """``(command, identity)`` of the system C compiler; the identity (path and
    version line) is part of the cache key."""
    cmd = tuple(shlex.split(os.environ.get("CC", "") or "cc"))
    path = shutil.which(cmd[0]) if cmd else None
    if path is None:
        raise CompileError(f"build_kernels: no C compiler found ({' '.join(cmd) or 'cc'}); "
                           "install one (gcc, clang) or set CC", target="c")
    try:
        version = subprocess.run([*cmd, "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.split("\n", 1)[0]
    except (OSError, subprocess.SubprocessError) as exc:
        raise CompileError(f"build_kernels: cannot run the C compiler {path}: {exc}",
                           target="c") from None
    return cmd, f"{os.path.realpath(path)} {version}"


class HostLibrary:
    """A compiled CPU kernel library, loaded with cffi (one per source, per
    process)."""

    _loaded: dict = {}
    _lock = threading.Lock()

    def __init__(self, ffi, lib_, path, log):
        self.ffi = ffi
        self.lib = lib_
        self.path = path
        self.log = log

    @classmethod
    def get(cls, prog: KernelProgram) -> "HostLibrary":
        cmd, identity = _compiler()
        key = hashlib.sha256("\n".join([identity, " ".join(_CFLAGS), prog.text]).encode()
                             ).hexdigest()[:32]
        with cls._lock:
            found = cls._loaded.get(key)
            if found is None:
                import cffi
                ffi = cffi.FFI()
                ffi.cdef("\n".join(f"void {d.entry}(void *const *args);"
                                   for d in prog.kernels.values()))
                found = cls._loaded[key] = cls(ffi, *_library(ffi, cmd, prog, key))
        return found


def _library(ffi, cmd, prog: KernelProgram, key: str):
    """``(cffi library, path, compiler log)``: from the cache when it holds a
    sound copy (trusted, its hash matching), else compiled now -- into the cache
    when the cache directory is trusted (:mod:`ckernels._trust`), else into a
    private temporary directory (nothing cached, a warning said why)."""
    folder = cache_dir()
    if _trust.trusted_directory(folder, "the build_kernels cache", create=True):
        path = os.path.join(folder, f"ck_{key}.so")
        lib_, _ = _load_checked(ffi, path)
        if lib_ is not None:
            return lib_, path, ""
        log = _compile_host(cmd, prog, key, folder)
        lib_, problem = _load_checked(ffi, path)
    else:
        with tempfile.TemporaryDirectory(prefix="ckernels-kernels-") as private:
            path = os.path.join(private, f"ck_{key}.so")
            log = _compile_host(cmd, prog, key, private)
            lib_, problem = _load_checked(ffi, path)
    if lib_ is None:
        raise CompileError(f"build_kernels: cannot load {path}: {problem}", target="c")
    return lib_, path, log


def _load_checked(ffi, path: str):
    """``(library, None)`` when ``path`` and its recorded SHA-256 (``.sha256``
    beside it) pass the checks of :mod:`ckernels._trust` and agree, the library
    loaded from the descriptor that was hashed; else ``(None, why)`` -- a
    missing, truncated, corrupt or untrusted file is rebuilt by the caller."""
    try:
        want = _trust.read_trusted(path + ".sha256").decode("ascii").strip()
        fd, data = _trust.open_trusted(path)
    except _trust.UntrustedFile as exc:
        _trust.warn_untrusted(str(exc), "the build_kernels cache")
        return None, str(exc)
    except (OSError, UnicodeDecodeError) as exc:
        return None, str(exc)
    if hashlib.sha256(data).hexdigest() != want:
        os.close(fd)
        return None, "its content does not match its recorded SHA-256"
    try:
        return ffi.dlopen(_trust.loadable_path(fd, path)), None
    except OSError as exc:
        return None, str(exc)


def _compile_host(cmd, prog: KernelProgram, key: str, folder: str) -> str:
    """Compile the library into ``folder`` as ``ck_<key>.so`` with its SHA-256
    in ``ck_<key>.so.sha256`` (each written whole, by rename); returns the
    compiler's log."""
    path = os.path.join(folder, f"ck_{key}.so")
    with tempfile.TemporaryDirectory(dir=folder, prefix="build-") as tmp:
        # not the user's file name: the compiler would quote its lines
        src = os.path.join(tmp, f"ck_{key}.c")
        out = os.path.join(tmp, f"ck_{key}.so")
        with open(src, "w") as f:
            f.write(prog.text)
        try:
            res = subprocess.run([*cmd, *_CFLAGS, "-o", out, src, "-lm"], cwd=tmp,
                                 capture_output=True, text=True, timeout=600,
                                 env={**os.environ, "LC_ALL": "C"})
        except (OSError, subprocess.SubprocessError) as exc:
            raise CompileError(f"build_kernels: running the C compiler failed: {exc}",
                               target="c") from None
        log = (res.stdout + res.stderr).strip()
        if res.returncode != 0:
            raise compile_error(prog, log, f"the C compiler ({cmd[0]})")
        with open(out, "rb") as f:
            data = f.read()
    # the library first, then its hash: a reader sees a hash only for a whole file
    _trust.write_atomic(path, data)
    _trust.write_atomic(path + ".sha256", hashlib.sha256(data).hexdigest().encode())
    return log
