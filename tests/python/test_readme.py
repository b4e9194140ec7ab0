"""Every code block of README.md runs as written: each ```python block as its own
script in a fresh interpreter."""

import pathlib
import re
import subprocess
import sys

import pytest

import ckernels

README = pathlib.Path(__file__).parents[2] / "README.md"
_BLOCK = re.compile(r"^```(python|c)\n(.*?)^```$", re.S | re.M)


def _blocks(lang):
    text = README.read_text(encoding="utf-8")
    found = [(text[:m.start()].count("\n") + 1, m.group(2))
             for m in _BLOCK.finditer(text) if m.group(1) == lang]
    return found


PYTHON_BLOCKS = _blocks("python")
C_BLOCKS = _blocks("c")


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
