"""What the caches load (``ckernels._trust``): the native cache of
``@ckernels.jit(cache=True)`` and the CPU cache of ``Context.build_kernels``
load only from directories and files owned by this user and writable by no
one else (a warning says when a cache is skipped), load the very file they
hashed, and rebuild a truncated or corrupt file instead of failing or missing
forever; ``build_kernels(filename=...)`` refuses control characters.

Attacks run in fresh interpreters over temporary directories: a planted
library whose ELF constructor writes a marker file shows whether it ran."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import ckernels
from ckernels import _trust, errors

IS_ROOT = hasattr(os, "getuid") and os.getuid() == 0
NOBODY = 65534

MODULE = textwrap.dedent("""
    import ckernels

    @ckernels.jit("float64(float64)", cache=True)
    def inc(x):
        return x + 1.0
""")

SCRIPT = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        import trustmod as m
        from ckernels.jit import native_cache
        value = float(m.inc(1.0))
    out = {"value": value, "numba": "numba" in sys.modules,
           "native_hits": sum(m.inc.stats.kernel_hits.values()) if not "numba" in sys.modules
                          else 0,
           "loaded": {k: getattr(v, "_name", "") for k, v in native_cache._LOADED.items()},
           "warnings": [[x.category.__name__, str(x.message)] for x in w]}
    print(json.dumps(out))
""")

EVIL_C = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void planted(void) {
    const char *p = getenv("CKN_MARKER");
    FILE *f = p ? fopen(p, "w") : NULL;
    if (f) { fputs("ran", f); fclose(f); }
}
"""


def _cc():
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


@pytest.fixture(scope="module")
def evil_so(tmp_path_factory):
    d = tmp_path_factory.mktemp("evil")
    (d / "evil.c").write_text(EVIL_C)
    subprocess.run([_cc(), "-shared", "-fPIC", "-o", str(d / "evil.so"), str(d / "evil.c")],
                   check=True, capture_output=True)
    return (d / "evil.so").read_bytes()


def _run(workdir, cache, marker, script=SCRIPT, env=None):
    e = dict(os.environ, NUMBA_CACHE_DIR=str(cache), CKN_MARKER=str(marker),
             PYTHONPATH=str(workdir) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    e.update(env or {})
    p = subprocess.run([sys.executable, "-c", script], env=e, cwd=workdir, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A cache holding ``inc``'s native library (compiled once)."""
    work = tmp_path_factory.mktemp("trust")
    (work / "trustmod.py").write_text(MODULE)
    cache = work / "cache"
    out = _run(work, cache, work / "unused")
    assert out["value"] == 2.0 and out["numba"]
    (so,) = glob.glob(str(cache / "*" / "*.so"))
    (index,) = glob.glob(str(cache / "*" / "*.ckn"))
    return work, cache, so, index


def _copy(stored, tmp_path):
    work, cache, so, index = stored
    mine = tmp_path / "cache"
    shutil.copytree(cache, mine)
    sub = os.path.basename(os.path.dirname(so))
    return (mine, str(mine / sub), str(mine / sub / os.path.basename(so)),
            str(mine / sub / os.path.basename(index)))


def _plant(so, index, evil):
    """An attacker's library under the cached name, its index's hash redone."""
    with open(so, "wb") as fh:
        fh.write(evil)
    with open(index) as fh:
        ix = json.load(fh)
    ix["sha256"] = hashlib.sha256(evil).hexdigest()
    with open(index, "w") as fh:
        json.dump(ix, fh)


def _untrusted(out):
    return [m for c, m in out["warnings"] if c == "UntrustedCacheWarning"]


def test_a_sound_cache_loads_the_descriptor_it_hashed(stored, tmp_path):
    work = stored[0]
    cache, sub, so, index = _copy(stored, tmp_path)
    out = _run(work, cache, tmp_path / "m")
    assert out["value"] == 2.0 and not out["numba"] and out["native_hits"] == 1
    assert not _untrusted(out)
    # loaded through /proc/self/fd/N of the descriptor that was read and hashed
    (name,) = out["loaded"].values()
    assert name.startswith("/proc/self/fd/"), name


@pytest.mark.parametrize("how", ["dir-other-writable", "file-other-writable",
                                 "dir-foreign-owner", "file-foreign-owner",
                                 "dir-foreign-group-writable"])
def test_native_cache_refuses_what_others_could_write(stored, tmp_path, evil_so, how):
    if "foreign" in how and not IS_ROOT:
        pytest.skip("giving a file to another user needs root")
    work = stored[0]
    cache, sub, so, index = _copy(stored, tmp_path)
    _plant(so, index, evil_so)
    if how == "dir-other-writable":
        os.chmod(sub, 0o777)
    elif how == "file-other-writable":
        os.chmod(so, 0o666)
    elif how == "dir-foreign-owner":
        os.chown(sub, NOBODY, -1)
    elif how == "file-foreign-owner":
        os.chown(so, NOBODY, -1)
    else:
        os.chown(sub, -1, NOBODY)
        os.chmod(sub, 0o775)
    marker = tmp_path / "ran"
    out = _run(work, cache, marker)
    assert not marker.exists(), "the planted library's constructor ran"
    assert out["value"] == 2.0 and out["numba"]       # compiled instead
    warned = _untrusted(out)
    assert len(warned) == 1, out["warnings"]
    assert ("writable by" in warned[0] or "owned by" in warned[0]) and "skipped" in warned[0]


def test_the_same_attack_in_a_trusted_directory_is_only_a_hash_mismatch(stored, tmp_path,
                                                                        evil_so):
    """A planted library whose index was *not* redone never loads: the hash."""
    work = stored[0]
    cache, sub, so, index = _copy(stored, tmp_path)
    with open(so, "wb") as fh:
        fh.write(evil_so)
    marker = tmp_path / "ran"
    out = _run(work, cache, marker)
    assert not marker.exists() and out["value"] == 2.0 and not _untrusted(out)


def test_a_truncated_library_is_rewritten_by_the_next_compile(stored, tmp_path):
    work = stored[0]
    cache, sub, so, index = _copy(stored, tmp_path)
    good = open(so, "rb").read()
    with open(so, "r+b") as fh:
        fh.truncate(100)
    first = _run(work, cache, tmp_path / "m")
    assert first["value"] == 2.0 and first["numba"]        # a miss, compiled
    assert open(so, "rb").read() != good[:100]               # repaired by save()
    second = _run(work, cache, tmp_path / "m")
    assert not second["numba"] and second["native_hits"] == 1


def test_untrusted_cache_also_keeps_numba_off_it(stored, tmp_path):
    """Numba's own cache files (pickles) sit in the same directory: an
    untrusted directory means no cache at all for the function."""
    work = stored[0]
    cache, sub, so, index = _copy(stored, tmp_path)
    os.chmod(sub, 0o777)
    script = SCRIPT.replace('"warnings":', '"stats": [sum(m.inc.stats.dispatcher_hits.values()),'
                                           ' m.inc._cache], "warnings":')
    out = _run(work, cache, tmp_path / "m", script=script)
    assert out["stats"] == [0, False]


# ------------------------------------------------------------- build_kernels --
KSRC = "CK_KERNEL void add1(CK_GLOBAL double *x, int64_t n) { for (int64_t i = 0; i < n; i++) x[i] += 1; }\n"

KSCRIPT = textwrap.dedent("""
    import json, warnings
    import numpy as np
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        import ckernels
        ctx = ckernels.Context("cpu")
        ks = ctx.build_kernels(%r, {"add1": {"x": "float64[]", "n": "int64"}})
        x = np.zeros(3)
        ks.add1(x, 3)
    print(json.dumps({"x": x.tolist(), "log": ks.add1._built.backend.log,
                      "path": ks.add1._built.backend.path,
                      "warnings": [[c.category.__name__, str(c.message)] for c in w]}))
""") % KSRC


def _krun(cache, marker):
    env = dict(os.environ, CKERNELS_CACHE_DIR=str(cache), CKN_MARKER=str(marker))
    p = subprocess.run([sys.executable, "-c", KSCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def kcache(tmp_path_factory):
    _cc()
    root = tmp_path_factory.mktemp("kcache")
    out = _krun(root / "cache", root / "unused")
    assert out["x"] == [1.0, 1.0, 1.0]
    (so,) = glob.glob(str(root / "cache" / "kernels" / "ck_*.so"))
    assert os.path.exists(so + ".sha256")
    return root / "cache", so


def _kcopy(kcache, tmp_path):
    cache, so = kcache
    mine = tmp_path / "cache"
    shutil.copytree(cache, mine)
    return mine, str(mine / "kernels"), str(mine / "kernels" / os.path.basename(so))


def test_build_kernels_cache_is_reused_and_a_broken_file_rebuilt(kcache, tmp_path):
    cache, folder, so = _kcopy(kcache, tmp_path)
    out = _krun(cache, tmp_path / "m")
    assert out["x"] == [1.0, 1.0, 1.0] and out["path"] == so and not out["warnings"]
    for damage in ("truncate", "garbage"):
        with open(so, "r+b") as fh:
            if damage == "truncate":
                fh.truncate(200)
            else:
                fh.write(b"\x00" * 64)
        out = _krun(cache, tmp_path / "m")        # used to fail with "cannot load" forever
        assert out["x"] == [1.0, 1.0, 1.0]
        with open(so, "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == open(so + ".sha256").read()


@pytest.mark.parametrize("how", ["dir-other-writable", "file-foreign-owner"])
def test_build_kernels_cache_refuses_what_others_could_write(kcache, tmp_path, evil_so, how):
    if "foreign" in how and not IS_ROOT:
        pytest.skip("giving a file to another user needs root")
    cache, folder, so = _kcopy(kcache, tmp_path)
    with open(so, "wb") as fh:
        fh.write(evil_so)
    with open(so + ".sha256", "w") as fh:
        fh.write(hashlib.sha256(evil_so).hexdigest())
    if how == "dir-other-writable":
        os.chmod(folder, 0o777)
    else:
        os.chown(so, NOBODY, -1)
    marker = tmp_path / "ran"
    out = _krun(cache, marker)
    assert not marker.exists(), "the planted library's constructor ran"
    assert out["x"] == [1.0, 1.0, 1.0]
    warned = [m for c, m in out["warnings"] if c == "UntrustedCacheWarning"]
    assert len(warned) == 1 and "build_kernels cache" in warned[0], out["warnings"]


@pytest.mark.parametrize("name", ['k.c"\n#include "/etc/hostname', "k.c\r", "a\x00b",
                                  "a\u2028b", "tab\there"])
def test_build_kernels_refuses_control_characters_in_filename(name):
    ctx = ckernels.Context("cpu")
    with pytest.raises(errors.InvalidArgumentError, match="control character"):
        ctx.build_kernels(KSRC, {"add1": {"x": "float64[]", "n": "int64"}}, filename=name)


def test_trust_rules_directly(tmp_path):
    d = tmp_path / "d"
    d.mkdir(mode=0o700)
    assert _trust.directory_problem(str(d)) is None
    assert _trust.directory_problem(str(d / "missing" / "deeper")) is None
    os.chmod(d, 0o757)
    assert "writable by others" in _trust.directory_problem(str(d))
    assert "writable by others" in _trust.directory_problem(str(d / "below"))
    os.chmod(d, 0o1777)                 # sticky: fine above, not as the cache itself
    assert _trust.directory_problem(str(d / "below")) is None
    assert _trust.directory_problem(str(d)) is not None
    os.chmod(d, 0o700)
    f = d / "f"
    f.write_bytes(b"abc")
    os.chmod(f, 0o600)
    fd, data = _trust.open_trusted(str(f))
    os.close(fd)
    assert data == b"abc"
    os.chmod(f, 0o622)
    with pytest.raises(_trust.UntrustedFile, match="writable by"):
        _trust.open_trusted(str(f))
    os.symlink(f, d / "link")
    with pytest.raises(OSError):
        _trust.open_trusted(str(d / "link"))     # never through a symbolic link


# ------------------------------------------------- a Numba config in the cwd --
#: a pickle whose loading writes the marker file (Numba's index is a pickle)
EVIL_PICKLE = textwrap.dedent("""
    import pickle, sys
    class Evil:
        def __reduce__(self):
            return (exec, ("open(%r, 'w').write('ran')" % sys.argv[2],))
    with open(sys.argv[1], "wb") as fh:
        pickle.dump(Evil(), fh)
""")


def _run_in(cwd, marker, script=SCRIPT):
    """``script`` with ``cwd`` as working directory and no NUMBA_CACHE_DIR:
    Numba reads ``cwd/.numba_config.yaml``."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    e.update(CKN_MARKER=str(marker),
             PYTHONPATH=str(cwd) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", script], env=e, cwd=cwd, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_numba_config_yaml_cache_dir_is_judged_by_the_trust_rules(tmp_path):
    """A ``.numba_config.yaml`` in the working directory moves Numba's cache
    (``cache_dir:``); the native cache then stands aside, and the directory
    Numba uses must pass the same rules -- else no cache, and a warning."""
    pytest.importorskip("yaml")
    work = tmp_path / "work"
    work.mkdir(mode=0o700)
    (work / "trustmod.py").write_text(MODULE)
    good = tmp_path / "good"
    (work / ".numba_config.yaml").write_text(f"cache_dir: {good}\n")
    stats = SCRIPT.replace('"warnings":', '"cache": m.inc._cache, "warnings":')
    first = _run_in(work, tmp_path / "unused", stats)
    assert first["value"] == 2.0 and first["cache"] and not _untrusted(first)
    indexes = glob.glob(str(good / "*" / "*.nbi"))
    assert indexes, "Numba cached nothing in the configured directory"
    # the same layout in a directory others can write, with every index of
    # Numba's replaced by a pickle that runs code when loaded
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    marker = tmp_path / "ran"
    for ix in glob.glob(str(bad / "*" / "*.nbi")):
        subprocess.run([sys.executable, "-c", EVIL_PICKLE, ix, str(marker)], check=True)
    for sub in glob.glob(str(bad / "*")):
        os.chmod(sub, 0o777)
    (work / ".numba_config.yaml").write_text(f"cache_dir: {bad}\n")
    out = _run_in(work, tmp_path / "unused", stats)
    assert not marker.exists(), "Numba's pickled index in an untrusted directory was loaded"
    assert out["value"] == 2.0 and out["cache"] is False
    warned = _untrusted(out)
    assert len(warned) == 1 and "writable by others" in warned[0], out["warnings"]
    assert str(bad) in warned[0]
    # the trusted directory still serves it: a hit, no warning
    (work / ".numba_config.yaml").write_text(f"cache_dir: {good}\n")
    again = _run_in(work, tmp_path / "unused", stats.replace(
        '"cache":', '"hits": sum(m.inc.stats.dispatcher_hits.values()), "cache":'))
    assert again["cache"] and again["hits"] >= 1 and not _untrusted(again)


@pytest.mark.parametrize("damage", [b"{not json", b"", b"[1, 2]", b"\xff\xfe"])
def test_a_corrupt_index_is_replaced_and_the_next_process_loads(stored, tmp_path, damage):
    """An index that is not a JSON object made every later process compile
    again (Numba's cache served the signature, so nothing rewrote it): the
    first process warns and rewrites it, the second loads the library."""
    work = stored[0]
    cache, sub, so, index = _copy(stored, tmp_path)
    with open(index, "wb") as fh:
        fh.write(damage)
    first = _run(work, cache, tmp_path / "m")
    assert first["value"] == 2.0 and first["numba"]
    repaired = [m for c, m in first["warnings"] if c == "RuntimeWarning" and "corrupt" in m]
    assert len(repaired) == 1 and os.path.basename(index) in repaired[0], first["warnings"]
    with open(index) as fh:
        assert json.load(fh)["native"] is True
    second = _run(work, cache, tmp_path / "m")
    assert not second["numba"] and second["native_hits"] == 1 and not second["warnings"]
