"""`make demo` runs `python -m ckernels.demo`: it must run cleanly and free
every memory block it made."""

import subprocess
import sys


def test_demo_runs_and_frees_everything():
    out = subprocess.run([sys.executable, "-m", "ckernels.demo"], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "live memblocks: 0 (every block freed)" in out.stdout
    assert "CKOverflowError: assign: overflow while assigning int64 value 300 to uint8" \
        in out.stdout
    assert "strided_dim" in out.stdout and "HÉLLO WÖRLD!" in out.stdout
