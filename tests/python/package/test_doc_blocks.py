"""Every code block of docs/*.md runs as written, or says why it cannot.

* ```python blocks of one page run in order, in one fresh interpreter (a page
  reads like a notebook: a later block may use the names of an earlier one);
  the failing block is named by its page and line.
* ```c blocks compile (``-fsyntax-only``, C11, ``-Wall -Werror``): against
  the installed headers (``#include <ckernel/ckernel.h>`` in front), or, for
  a block that restates a declaration of those headers (the ABI structs),
  alone with ``<stddef.h>``/``<stdint.h>``.
* A block that cannot run here is marked on the line just above its fence:
  ``<!-- doc-test: skip -- why -->`` (a GPU, a cluster, a fragment of a
  class body, a layout drawn for the reader).  The reason is required.

README.md has its own test (``test_readme.py``: each block alone, and the C
example linked and run)."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import ckernels

DOCS = pathlib.Path(__file__).parents[3] / "docs"
_BLOCK = re.compile(r"^```(python|c)\n(.*?)^```$", re.S | re.M)
_MARK = re.compile(r"<!-- doc-test: skip -- (?P<why>[^>]*\S)\s*-->\s*\n\Z")
_ANY_MARK = re.compile(r"<!-- doc-test:")


def _blocks(path):
    """(lang, line, code, skip reason or None) for each block of a page."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        before = text[:m.start()]
        mark = _MARK.search(before[-300:])
        out.append((m.group(1), before.count("\n") + 1, m.group(2),
                    mark.group("why") if mark else None))
    return out


PAGES = sorted(DOCS.glob("*.md"))
PY_PAGES = [p for p in PAGES if any(b[0] == "python" for b in _blocks(p))]
C_BLOCKS = [(p, line, code, why) for p in PAGES for lang, line, code, why in _blocks(p)
            if lang == "c"]


def test_every_marker_is_well_formed():
    """A marker with a typo would silently run (or silently skip) a block."""
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in _ANY_MARK.finditer(text):
            line = text[m.start():text.index("\n", m.start())]
            assert re.fullmatch(r"<!-- doc-test: skip -- .*\S\s*-->", line), (page.name, line)
            rest = text[text.index("\n", m.start()) + 1:]
            assert rest.startswith("```"), f"{page.name}: a marker must sit just above a fence"


def _session(page):
    """The page's runnable Python blocks as one script; each block is compiled
    with its own file name so a traceback names the page and line."""
    parts = ["import sys as _s\n"]
    for lang, line, code, why in _blocks(page):
        if lang != "python" or why is not None:
            continue
        name = f"{page.name}:{line}"
        parts.append(f"exec(compile({code!r}, {name!r}, 'exec'))\n")
    return "".join(parts)


@pytest.mark.parametrize("page", PY_PAGES, ids=[p.name for p in PY_PAGES])
def test_python_blocks_run(page, tmp_path):
    blocks = [b for b in _blocks(page) if b[0] == "python"]
    if all(why is not None for _, _, _, why in blocks):
        pytest.skip("; ".join(f"line {line}: {why}" for _, line, _, why in blocks))
    script = tmp_path / "page.py"
    script.write_text(_session(page), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, f"{page.name}: a block failed:\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("page,line,code,why", C_BLOCKS,
                         ids=[f"{p.name}:{line}" for p, line, _, _ in C_BLOCKS])
def test_c_blocks_compile(page, line, code, why, tmp_path):
    if why is not None:
        pytest.skip(why)
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    errors = []
    for head in ("#include <ckernel/ckernel.h>\n", "#include <stddef.h>\n#include <stdint.h>\n"):
        src = tmp_path / "block.c"
        src.write_text(head + code)
        proc = subprocess.run([cc, "-std=c11", "-fsyntax-only", "-Wall", "-Werror",
                               "-Wno-unused-function", "-Wno-unused-variable", str(src),
                               f"-I{ckernels.get_include()}"], capture_output=True, text=True)
        if proc.returncode == 0:
            return
        errors.append(proc.stderr)
    pytest.fail(f"{page.name}:{line}:\n" + "\n".join(errors))
