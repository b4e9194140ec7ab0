"""C and C++ programs built against the *installed* package: the headers of
``ckernels.get_include()`` and the ``libckernel.so`` of
``ckernels.get_library_dir()`` (what a C consumer of the wheel sees).

Each program is compiled, linked and run in a subprocess with a timeout:
tests/c/consumer/consumer.c at -O0 (no inlining, so every inline helper of the
headers must be an exported symbol) and at -O2, the same file as C++, and the
README's C snippet.  tools/check_exports.py checks that every CK_API function
of the installed headers is in the installed library's dynamic symbol table.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ckernels

ROOT = Path(__file__).resolve().parents[3]
CONSUMER = ROOT / "tests" / "c" / "consumer"


def _compiler(*names):
    for n in names:
        path = shutil.which(n)
        if path:
            return path
    pytest.skip(f"no compiler among {names}")


def _build_and_run(tmp_path, compiler, source, flags):
    exe = tmp_path / "prog"
    libdir = ckernels.get_library_dir()
    cmd = [compiler, *flags, "-I", ckernels.get_include(), str(source), "-o", str(exe),
           "-L", libdir, "-lckernel", f"-Wl,-rpath,{libdir}"]
    built = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, f"{' '.join(cmd)}\n{built.stdout}{built.stderr}"
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
def test_c_program_links_and_runs(tmp_path, opt):
    cc = _compiler("cc", "gcc", "clang")
    out = _build_and_run(tmp_path, cc, CONSUMER / "consumer.c",
                         ["-std=c11", opt, "-Wall", "-Wextra", "-Werror"])
    assert out.startswith("ok")


def test_cxx_program_links_and_runs(tmp_path):
    cxx = _compiler("c++", "g++", "clang++")
    out = _build_and_run(tmp_path, cxx, CONSUMER / "consumer.cpp",
                         ["-O0", "-Wall", "-Wextra", "-Werror"])
    assert out.startswith("ok")


def test_readme_c_snippet_links_and_runs(tmp_path):
    """The README's C block, statements wrapped in main(), at -O0."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```c\n(.*?)```", readme, re.S)
    if not blocks:
        pytest.skip("the README has no C block")
    lines = blocks[0].splitlines()
    includes = [ln for ln in lines if ln.startswith("#")]
    body = [ln for ln in lines if not ln.startswith("#")]
    src = tmp_path / "readme.c"
    src.write_text("#include <stdio.h>\n" + "\n".join(includes) +
                   "\nint main(void) {\n" + "\n".join(body) +
                   "\nreturn ck_memblock_live_count() == 0 ? 0 : 1;\n}\n")
    _build_and_run(tmp_path, _compiler("cc", "gcc", "clang"), src, ["-std=c11", "-O0"])


def test_every_ck_api_function_is_exported():
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    lib = os.path.join(ckernels.get_library_dir(), "libckernel.so")
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "check_exports.py"),
                          "--nm", nm, "--include", ckernels.get_include(), lib],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
