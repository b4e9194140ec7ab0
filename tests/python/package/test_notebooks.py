"""Execute every notebook in notebooks/ headlessly; any cell error fails.

Every notebook must also keep every text output line narrow enough to show
whole on a notebook page in a browser, start with a sentence on what it
shows, explain each code cell's output in a markdown cell after it, and show
the pictures, rich displays and timing plots it promises in ``PROMISED``
(SVG drawn from live objects, highlighted source, a PNG plot); a notebook
missing from ``PROMISED`` fails."""

import pathlib
import re
import xml.etree.ElementTree as ET

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((pathlib.Path(__file__).parents[3] / "notebooks").glob("*.ipynb"))

#: the longest text line a notebook page shows whole (nbconvert's lab
#: template at 1280 px wraps monospace output at ~125 characters)
MAX_LINE = 120

#: notebook -> (pictures: SVG roots whose title starts with one of these,
#: rich HTML displays: ``class='ckernels-...'`` of ``ckernels.display``, timing plot)
PROMISED = {
    "01-memory-blocks.ipynb": (["pod arena"], [], False),
    "02-types-and-arrays.ipynb": (["array memblock"], ["ckernels-array"], False),
    "03-ckernels.ipynb": (["ck_kernel_builder"], [], True),
    "04-jit-kernels.ipynb": (["ck_kernel_builder", "array memblock"], [], True),
    "05-contexts-and-opencl.ipynb": (["buffer of"], ["ckernels-facts", "ckernels-source"], True),
    "06-dask.ipynb": ([], ["ckernels-jit"], True),
    # the CUDA cells show a context and a device array only where there is a device
    "07-cuda.ipynb": ([], ["ckernels-jit", "ckernels-source"], False),
    "08-particles.ipynb": (["array memblock"], ["ckernels-source"], False),
    "09-strings.ipynb": (["array memblock"], [], False),
    "10-arrow.ipynb": (["array memblock"], [], False),
    "11-dims.ipynb": (["array memblock"], [], False),
    "12-nulls-and-tables.ipynb": (["array memblock"], ["ckernels-array"], False),
}

_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_TEXT = "{http://www.w3.org/2000/svg}text"


def _outputs(nb):
    """(code cell index, output) for every output."""
    return [(i, o) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for o in c.get("outputs", [])]


def _text(o) -> str:
    if o.get("output_type") == "stream":
        return o.get("text", "")
    return o.get("data", {}).get("text/plain", "") if "text/html" not in o.get("data", {}) \
        and "image/svg+xml" not in o.get("data", {}) else ""


def _svgs(o) -> list:
    data = o.get("data", {})
    found = [data["image/svg+xml"]] if "image/svg+xml" in data else []
    return found + _SVG.findall(data.get("text/html", ""))


@pytest.fixture(scope="module", params=NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def executed(request, tmp_path_factory):
    nb = nbformat.read(request.param, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path_factory.mktemp("nb"))}})
    client.execute()
    return request.param.name, nb


def test_notebook_runs(executed):
    name, nb = executed
    outputs = [o for _, o in _outputs(nb)]
    assert outputs, "the notebook produced no output"
    assert not [o for o in outputs if o.get("output_type") == "error"]


def test_every_notebook_promises_its_outputs():
    assert sorted(PROMISED) == [p.name for p in NOTEBOOKS], "list each notebook in PROMISED"


def test_no_output_line_is_cut(executed):
    name, nb = executed
    long = [(i, line) for i, o in _outputs(nb) for line in _text(o).splitlines()
            if len(line) > MAX_LINE]
    assert not long, f"{name}: output lines wider than {MAX_LINE} characters: {long[:3]}"


def test_promised_pictures_and_plots(executed):
    name, nb = executed
    titles, views, plot = PROMISED[name]
    roots = [ET.fromstring(s) for _, o in _outputs(nb) for s in _svgs(o)]   # valid XML
    texts = [next(r.iter(_TEXT), None) for r in roots]
    firsts = ["".join(t.itertext()) for t in texts if t is not None]
    for t in titles:
        assert any(f.startswith(t) for f in firsts), f"{name}: no picture titled {t!r}: {firsts}"
    htmls = [o.get("data", {}).get("text/html", "") for _, o in _outputs(nb)]
    for v in views:
        assert any(f"class='{v}'" in h for h in htmls), f"{name}: no {v} display"
    pngs = [o for _, o in _outputs(nb)
            if "data:image/png;base64," in o.get("data", {}).get("text/html", "")
            or "image/png" in o.get("data", {})]
    assert bool(pngs) == plot, f"{name}: timing plot expected: {plot}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_text_explains_every_output(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.split("\n\n")[1].startswith("This notebook shows"), path.name
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code":
            nxt = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
            assert nxt is not None and nxt.cell_type == "markdown", \
                f"{path.name}: code cell {i} has no explanation after it"
        # the source of generated code is shown whole: no slicing of it
        assert not re.search(r"\.source\([^)]*\)\[", c.source), path.name


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"
