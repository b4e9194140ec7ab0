"""Which cached files this process may load, and loading exactly what was checked.

What a cache hands back runs in this process: a shared library's constructors
run inside ``dlopen``, before any check the loader could make afterwards.  So a
hash stored beside the library proves nothing against someone who can write
there (they write both); what protects is *who can write*.  The rules, those of
ssh's ``StrictModes`` and of the cache directories of other tools:

* the cache directory and each file loaded from it are owned by the current
  user and writable by no one else (no group or other write bit; group write
  only for the user's private group, as Debian's ssh allows);
* every directory above it is owned by the current user or root and writable
  by no one else, or is sticky (``/tmp``: others cannot rename or delete what
  is ours there);
* a file is opened once, without following a symbolic link, checked on that
  open descriptor (regular file, owner, mode), read and hashed from it, and a
  library is loaded from the same descriptor (``/proc/self/fd/N``): what was
  hashed is what is loaded, with no window for a swap.  The descriptor stays
  open while the library is loaded (for the life of the process): ``dlopen``
  knows a library by its name, and a reused descriptor number would name an
  older library.

What this does not protect against: the user's own account (or root) writing
the cache, a compromised compiler or ``libckernel``, and a race-free load where
``/proc`` is absent (then the file is loaded by its path after the checks).
Where these checks cannot apply (no POSIX owners: Windows), nothing is checked.

A cache directory that fails the rules is skipped -- nothing is loaded from it
or written to it -- with one :class:`ckernels.errors.UntrustedCacheWarning` per
directory and reason.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
import warnings

from .errors import UntrustedCacheWarning

_POSIX = hasattr(os, "getuid")
_warned: set = set()
_lock = threading.Lock()
#: descriptors of loaded libraries, kept open for the life of the process
_KEEP: list = []


def _who(uid: int) -> str:
    try:
        import pwd
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _private_group(gid: int) -> bool:
    """Whether ``gid`` is this user's private group (named like the user, the
    user's primary group, no other member): group write then means the user
    alone (the rule of Debian's ssh; umask 002 systems make such directories)."""
    try:
        import grp
        import pwd
        user = pwd.getpwuid(os.getuid())
        group = grp.getgrgid(gid)
    except (ImportError, KeyError):
        return False
    return (gid == user.pw_gid and group.gr_name == user.pw_name
            and set(group.gr_mem) <= {user.pw_name})


def _mode_problem(st, what: str, path: str, *, may_be_root: bool, sticky_ok: bool) -> str | None:
    uid = os.getuid()
    if st.st_uid != uid and not (may_be_root and st.st_uid == 0):
        return f"{what} {path} is owned by {_who(st.st_uid)}, not by {_who(uid)}"
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable & stat.S_IWGRP and _private_group(st.st_gid):
        writable &= ~stat.S_IWGRP
    if writable and not (sticky_ok and st.st_mode & stat.S_ISVTX):
        who = " and ".join(w for bit, w in ((stat.S_IWGRP, "its group"),
                                             (stat.S_IWOTH, "others")) if writable & bit)
        return (f"{what} {path} is writable by {who} "
                f"(mode {stat.S_IMODE(st.st_mode):04o})")
    return None


def directory_problem(path: str) -> str | None:
    """Why files in the directory ``path`` must not be loaded (a sentence), or
    None when the rules hold (see the module docstring).  A directory that does
    not exist yet is judged by its nearest existing ancestor's rules."""
    if not _POSIX:
        return None
    path = os.path.abspath(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return directory_problem_above(path)
    except OSError as exc:
        return f"cannot inspect the cache directory {path}: {exc.strerror}"
    if not stat.S_ISDIR(st.st_mode):
        return f"the cache directory {path} is not a directory"
    problem = _mode_problem(st, "the cache directory", path, may_be_root=False,
                            sticky_ok=False)
    return problem or directory_problem_above(path)


def directory_problem_above(path: str) -> str | None:
    """The rules for every existing directory above ``path``."""
    if not _POSIX:
        return None
    parent = os.path.dirname(os.path.abspath(path))
    while True:
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return f"cannot inspect {parent}: {exc.strerror}"
        if st is not None:
            problem = _mode_problem(st, "the directory", parent, may_be_root=True,
                                    sticky_ok=True)
            if problem:
                return problem
        up = os.path.dirname(parent)
        if up == parent:
            return None
        parent = up


def warn_untrusted(problem: str, what: str) -> None:
    """One :class:`UntrustedCacheWarning` per distinct problem."""
    with _lock:
        if problem in _warned:
            return
        _warned.add(problem)
    warnings.warn(f"ckernels: {what} skipped: {problem} (only a directory owned by you and "
                  "writable by no one else is trusted; see the cache= documentation)",
                  UntrustedCacheWarning, stacklevel=3)


def trusted_directory(path: str, what: str, *, create: bool = False) -> bool:
    """Whether ``what`` (e.g. "the native cache") may use the directory
    ``path``; warns once when it may not.  ``create``: make it (mode 0700)
    when missing, after checking the directories above it."""
    problem = directory_problem(path)
    if problem is None and create and not os.path.isdir(path):
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError:
            return False            # unusable, not untrusted: no warning
        problem = directory_problem(path)
    if problem is not None:
        warn_untrusted(problem, what)
        return False
    return True


class UntrustedFile(OSError):
    """A file that fails the rules (the message says which)."""


def open_trusted(path: str) -> tuple[int, bytes]:
    """``(descriptor, content)`` of the regular file ``path``, opened once
    without following a symbolic link and checked on that descriptor (owned by
    this user, writable by no one else).  The caller owns the descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile(f"{path} is not a regular file")
        if _POSIX:
            problem = _mode_problem(st, "the cached file", path, may_be_root=False,
                                    sticky_ok=False)
            if problem:
                raise UntrustedFile(problem)
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return fd, b"".join(chunks)
    except BaseException:
        os.close(fd)
        raise


def read_trusted(path: str) -> bytes:
    """The content of a small trusted file (an index), checked as
    :func:`open_trusted` does."""
    fd, data = open_trusted(path)
    os.close(fd)
    return data


def loadable_path(fd: int, path: str) -> str:
    """The name to ``dlopen`` for the file open at ``fd`` (``/proc/self/fd/N``:
    the very file that was checked and hashed), and ``fd`` is kept open for the
    life of the process; without ``/proc``, ``path`` itself (``fd`` closed)."""
    proc = f"/proc/self/fd/{fd}"
    if os.path.exists(proc):
        with _lock:
            _KEEP.append(fd)
        return proc
    os.close(fd)
    return path


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory
    and a rename (readers see the old or the new file, never half of one);
    mode 0644, as Numba's cache files."""
    d = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".ckn-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


__all__ = ["directory_problem", "trusted_directory", "warn_untrusted", "open_trusted",
           "read_trusted", "loadable_path", "write_atomic", "UntrustedFile"]
