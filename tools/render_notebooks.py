#!/usr/bin/env python3
"""Render notebooks to HTML (nbconvert) and screenshot them with headless
Chromium, to look at what a person would see.

    .venv/bin/python tools/render_notebooks.py --out build/screens
    .venv/bin/python tools/render_notebooks.py --out build/screens notebooks/03-ckernels.ipynb
    .venv/bin/python tools/render_notebooks.py --out build/screens --demo

Each notebook is executed (nbclient, in a temporary folder), exported to
``OUT/<name>.html`` with nbconvert's HTMLExporter, and photographed by
Debian's ``chromium`` (``apt-get install chromium``) at 1280 px wide; the tall
screenshot is trimmed of its empty bottom and cut into pages
``OUT/<name>-1.png``, ``-2.png``, ... that an image viewer shows whole.
``--demo`` adds a notebook made here that displays every object of the
display layer (``ckernels.show``, the rich displays, source, a timing plot).
``--html FILE`` screenshots an HTML or SVG file as it is.

Needs the ``render`` extra (``pip install '.[render]'``: nbconvert, Pillow
through matplotlib) and chromium; not part of CI.  Every Chromium process is
started with a time limit and waited for: none is left running.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
WIDTH = 1280
TALL = 16000          # the screenshot's height before trimming
PAGE = 1400           # height of one PNG page

DEMO_CELLS = [
    ("markdown", "# The display layer, every object\n"
                 "Each cell below displays one kind of ckernels object the way Jupyter "
                 "shows it."),
    ("code", "import numpy as np, math\nimport ckernels\n"
             "from ckernels import display\n"
             "from ckernels.kernels import make_array_assignment_kernel, make_op_kernel"),
    ("markdown", "A strided int32 array, its compact display (the memory picture is in the "
                 "*memory layout* fold), then `ckernels.show` of it and of a reversed view."),
    ("code", "from IPython.display import HTML\n"
             "a = ckernels.array([1, 2, 3, 4], type='strided * int32')\n"
             "HTML(display.html(a))  # what the array's _repr_html_ returns"),
    ("code", "ckernels.show(a)"),
    ("code", "ckernels.show(a[::-2])"),
    ("markdown", "Strings in var dims: the `{begin, end}` pointers into the arenas."),
    ("code", "s = ckernels.array([['héllo', 'wörld'], [], ['日本語']])\nckernels.show(s)"),
    ("code", "ckernels.show(ckernels.array([{'x': 1.5, 'name': 'ab'}, {'x': 2.0, 'name': 'c'}]))"),
    ("code", "ckernels.show(ckernels.asarray(np.arange(12.0).reshape(3, 4)[:, ::2]))"),
    ("markdown", "Kernel trees: decoded fields, arrows to children, the builder's buffer."),
    ("code", "src = ckernels.array([1, 2, 3, 4], type='strided * int32')\n"
             "dst = ckernels.empty('strided * int32', (4,))\n"
             "ckernels.show(make_array_assignment_kernel(dst, src, 'single'))"),
    ("code", "x = ckernels.array([[1.0, 2.0], [3.0, 4.0]])\n"
             "y = ckernels.array([10, 20], type='strided * int32')\n"
             "d = ckernels.empty('strided * strided * float64', (2, 2))\n"
             "ckernels.show(make_op_kernel('add', d, x, y))"),
    ("code", "t = ckernels.array([['a', 'bb'], ['ccc']])\n"
             "ckernels.show(make_array_assignment_kernel(ckernels.empty(t.type, (2,)), t))"),
    ("markdown", "A memory block, a context, a buffer and a device array."),
    ("code", "mb = ckernels.MemBlock.pod(64)\nal = mb.allocator\n"
             "for n in (40, 100, 7): al.allocate(n)\nckernels.show(mb)"),
    ("code", "cpu = ckernels.Context('cpu')\nckernels.show(cpu)"),
    ("code", "buf = cpu.new_buffer(512)\nfor n in (64, 128, 32): buf.allocate(n, align=16)\n"
             "buf.free(64, 128)\nckernels.show(buf)"),
    ("code", "try:\n    ocl = ckernels.Context('opencl')\nexcept ckernels.errors.BackendError "
             "as exc:\n    ocl = None; print(exc)\n"
             "dx = ocl.array(np.arange(8, dtype=np.float32)) if ocl else None\n"
             "ckernels.show(dx) if ocl else None"),
    ("markdown", "A jitted function, its OpenCL source, a program and a timing plot."),
    ("code", "@ckernels.jit(['float32(float32, float32)', 'float64(float64, float64)'])\n"
             "def damped(x, y):\n    return math.sin(x) * math.exp(-abs(x)) + 2.0 * y\n"
             "damped(1.0, 2.0)\nckernels.show(damped)"),
    ("code", "display.SourceCode(damped.source('opencl'), 'opencl')"),
    ("code", "if ocl is not None:\n    damped(dx, dx)\n"
             "    prog = ocl.build_program(damped.source('opencl'))\n"
             "ckernels.show(prog) if ocl is not None else None"),
    ("code", "ckernels.bench(damped, sizes=(1_000, 30_000), repeat=2, min_time=0.001,\n"
             "               numpy=lambda x, y: np.sin(x) * np.exp(-np.abs(x)) + 2.0 * y)"),
    ("markdown", "An error, shown with its status."),
    ("code", "try:\n    ckernels.types.parse('3 * var * ')\nexcept ckernels.CKernelError as exc:\n"
             "    err = exc\nckernels.show(err)"),
]


def demo_notebook(path: pathlib.Path) -> pathlib.Path:
    import nbformat
    nb = nbformat.v4.new_notebook()
    for kind, src in DEMO_CELLS:
        nb.cells.append(nbformat.v4.new_markdown_cell(src) if kind == "markdown"
                        else nbformat.v4.new_code_cell(src))
    nbformat.write(nb, path)
    return path


def to_html(nb_path: pathlib.Path, out: pathlib.Path, execute: bool) -> pathlib.Path:
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter
    nb = nbformat.read(nb_path, as_version=4)
    if execute:
        with tempfile.TemporaryDirectory() as tmp:
            NotebookClient(nb, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": tmp}}).execute()
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    html = out / f"{nb_path.stem}.html"
    html.write_text(body, encoding="utf-8")
    return html


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        exe = shutil.which(name)
        if exe:
            return exe
    sys.exit("render_notebooks: no chromium on PATH (apt-get install chromium)")


def screenshot(page: pathlib.Path, out: pathlib.Path, stem: str) -> list:
    """Screenshot ``page`` into ``out/stem-N.png`` pages; returns their paths."""
    from PIL import Image, ImageChops
    full = out / f"{stem}.full.png"
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu",
               "--hide-scrollbars", "--no-first-run", f"--user-data-dir={profile}",
               f"--window-size={WIDTH},{TALL}", "--virtual-time-budget=4000",
               f"--screenshot={full}", page.resolve().as_uri()]
        subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    img = Image.open(full).convert("RGB")
    bg = Image.new("RGB", img.size, img.getpixel((img.width - 1, img.height - 1)))
    box = ImageChops.difference(img, bg).getbbox()
    height = (box[3] + 16) if box else img.height
    if box and box[3] >= img.height - 2:
        print(f"  note: {stem} is taller than {TALL} px; the rest is cut")
    img = img.crop((0, 0, img.width, min(height, img.height)))
    pages = []
    for i, top in enumerate(range(0, img.height, PAGE), start=1):
        p = out / f"{stem}-{i}.png"
        img.crop((0, top, img.width, min(top + PAGE, img.height))).save(p)
        pages.append(p)
    full.unlink()
    for stale in out.glob(f"{stem}-*.png"):
        if stale not in pages:
            stale.unlink()
    return pages


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", type=pathlib.Path,
                    help="notebooks to render (default: every notebooks/*.ipynb, unless --html is given)")
    ap.add_argument("--out", required=True, type=pathlib.Path, help="folder for HTML and PNG")
    ap.add_argument("--demo", action="store_true",
                    help="also render a notebook displaying every object of the display layer")
    ap.add_argument("--html", nargs="*", type=pathlib.Path, default=[],
                    help="HTML/SVG files to screenshot as they are")
    ap.add_argument("--no-execute", action="store_true",
                    help="convert the notebooks with the outputs they hold")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    notebooks = list(args.notebooks)
    if not notebooks and not args.html:
        notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    if args.demo:
        notebooks.append(demo_notebook(args.out / "display-demo.ipynb"))
    for nb in notebooks:
        html = to_html(nb, args.out, not args.no_execute)
        pages = screenshot(html, args.out, nb.stem)
        print(f"{nb.name}: {html} -> {', '.join(p.name for p in pages)}")
    for page in args.html:
        pages = screenshot(page, args.out, page.stem)
        print(f"{page.name}: {', '.join(p.name for p in pages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
