"""Every code block of README.md runs as written: each ```python block as its own
script in a fresh interpreter, each ```c block compiled against the installed
headers and shared library, linked and run -- and the README's own shell lines
that build and run the C example, run as written (``python`` is this interpreter)."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import ckernels

README = pathlib.Path(__file__).parents[3] / "README.md"
_BLOCK = re.compile(r"^```(python|c|sh)\n(.*?)^```$", re.S | re.M)


def _blocks(lang):
    text = README.read_text(encoding="utf-8")
    found = [(text[:m.start()].count("\n") + 1, m.group(2))
             for m in _BLOCK.finditer(text) if m.group(1) == lang]
    return found


PYTHON_BLOCKS = _blocks("python")
C_BLOCKS = _blocks("c")
#: the shell lines that build and run the C example (they name prog.c)
BUILD_BLOCKS = [(n, code) for n, code in _blocks("sh") if "prog.c" in code]


def test_readme_has_blocks():
    assert len(PYTHON_BLOCKS) >= 3 and C_BLOCKS


@pytest.mark.parametrize("line,code", PYTHON_BLOCKS,
                         ids=[f"line{n}" for n, _ in PYTHON_BLOCKS])
def test_python_block_runs(line, code, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"README block at line {line} failed:\n{proc.stderr}"
    if "MemBlock.pod" in code:   # the tour's comments state what it prints
        assert "refcount=2" in proc.stdout and "used=16" in proc.stdout
        assert proc.stdout.strip().splitlines()[-1] == "0"


@pytest.mark.parametrize("opt", ["-O0", "-O2"])
@pytest.mark.parametrize("line,code", C_BLOCKS, ids=[f"line{n}" for n, _ in C_BLOCKS])
def test_c_block_compiles_links_runs(line, code, opt, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "prog.c"
    src.write_text(code)
    exe = tmp_path / "prog"
    libdir = ckernels.get_library_dir()
    proc = subprocess.run([cc, "-std=c11", opt, str(src), "-o", str(exe),
                           f"-I{ckernels.get_include()}", f"-L{libdir}", "-lckernel",
                           f"-Wl,-rpath,{libdir}"], capture_output=True, text=True)
    assert proc.returncode == 0, f"README C block at line {line}:\n{proc.stderr}"
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_readme_build_lines_run_as_written(tmp_path):
    """The ```sh block naming prog.c, run by bash in a folder holding the C block
    as prog.c, with this interpreter first on PATH as ``python``: it compiles,
    and the program runs (finding libckernel.so through the rpath it shows)."""
    import os
    if shutil.which("cc") is None or shutil.which("bash") is None:
        pytest.skip("no C compiler or bash")
    assert len(BUILD_BLOCKS) == 1 and len(C_BLOCKS) == 1
    (tmp_path / "prog.c").write_text(C_BLOCKS[0][1])
    bindir = tmp_path / "bin"
    bindir.mkdir()
    wrapper = bindir / "python"           # a script, not a link: a venv knows itself by path
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.run(["bash", "-e", "-c", BUILD_BLOCKS[0][1]], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "prog").exists()


def test_docs_speak_of_the_project_alone():
    """README, docs/ and the notebooks' text name no development history (the
    seed documents, issue numbers) and no paths outside the project."""
    root = README.parent
    files = [README, *sorted((root / "docs").glob("*.md")),
             *sorted((root / "notebooks").glob("*.ipynb"))]
    bad = re.compile(r"\bseeds?\b(?! *[=:(])|\bissues? ?-?\d|/work/|shared/seeds|/root/",
                     re.I)
    found = []
    for f in files:
        for no, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if bad.search(line) and "default_rng" not in line:
                found.append(f"{f.relative_to(root)}:{no}: {line.strip()[:100]}")
    assert found == []
