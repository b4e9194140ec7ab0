"""Progress on long work (ckernels.progress): a compile longer than the
threshold is said on the 'ckernels' logger when it passes the threshold and
when it ends; short work says nothing; a Jupyter kernel gets a progress line
that is updated in place."""

import logging
import threading
import time

import pytest

import ckernels
from ckernels import progress


@pytest.fixture
def threshold(monkeypatch):
    def set_(seconds):
        monkeypatch.setattr(progress, "after", seconds)
    return set_


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "ckernels"]


def test_long_work_is_said_twice_in_order(caplog, threshold):
    threshold(0.1)
    with caplog.at_level(logging.INFO, logger="ckernels"):
        with progress.reporting("slow thing"):
            time.sleep(0.6)          # the clock looks four times a second
    msgs = _messages(caplog)
    assert msgs[0] == "compiling slow thing ..."
    assert msgs[1].startswith("compiling slow thing ... done in ")
    assert float(msgs[1].split()[-2]) >= 0.6
    assert len(msgs) == 2


def test_short_work_says_nothing(caplog, threshold):
    threshold(5.0)
    with caplog.at_level(logging.INFO, logger="ckernels"):
        with progress.reporting("quick thing"):
            pass
    assert _messages(caplog) == []


def test_work_the_clock_missed_still_gets_its_done(caplog, threshold):
    threshold(0.0)                   # over the threshold at once, ends before the clock looks
    with caplog.at_level(logging.INFO, logger="ckernels"):
        with progress.reporting("fast but over"):
            pass
    msgs = _messages(caplog)
    assert len(msgs) == 1 and msgs[0].startswith("compiling fast but over ... done in ")


def test_an_error_inside_is_not_swallowed(caplog, threshold):
    threshold(0.0)
    with caplog.at_level(logging.INFO, logger="ckernels"):
        with pytest.raises(KeyError):
            with progress.reporting("failing"):
                raise KeyError("x")
    assert len(_messages(caplog)) == 1


def test_threads_report_their_own_tasks(caplog, threshold):
    threshold(0.05)
    with caplog.at_level(logging.INFO, logger="ckernels"):
        def work(i):
            with progress.reporting(f"task {i}"):
                time.sleep(0.4)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    msgs = _messages(caplog)
    for i in range(3):
        mine = [m for m in msgs if m.startswith(f"compiling task {i} ")]
        assert len(mine) == 2 and mine[1].startswith(f"compiling task {i} ... done")


def test_a_jit_compile_is_reported(caplog, threshold):
    threshold(0.0)

    @ckernels.jit
    def progress_probe(x):
        return x * 3 + 1

    with caplog.at_level(logging.INFO, logger="ckernels"):
        progress_probe.compile("int64(int64)")
        msgs = _messages(caplog)
        assert any(m.startswith("compiling") and "progress_probe: int64(int64) for cpu" in m
                   and "done in" in m for m in msgs), msgs
        caplog.clear()
        threshold(0.5)
        progress_probe.compile("int64(int64)")      # already compiled: nothing to say
        assert not any("progress_probe" in m for m in _messages(caplog))


def test_jupyter_line_is_updated_in_place(monkeypatch, threshold):
    """Inside a Jupyter kernel the line is displayed once and updated when the
    work ends (IPython's display with a display_id)."""
    shown = []

    class Handle:
        def update(self, obj, raw):
            shown.append(("update", obj["text/plain"]))

    def display(obj, raw, display_id):
        assert raw and display_id
        shown.append(("display", obj["text/plain"]))
        return Handle()

    monkeypatch.setattr(progress, "_jupyter", lambda: display)
    threshold(0.05)
    with progress.reporting("in a notebook"):
        time.sleep(0.5)
    assert shown[0] == ("display", "ckernels: compiling in a notebook ...")
    assert shown[1][0] == "update" and shown[1][1].startswith("ckernels: compiled in a notebook in ")


def test_jupyter_line_fits_its_width(monkeypatch, threshold):
    """A long signature is cut in its middle so the line stays within
    progress.WIDTH (the notebooks' outputs have no cut lines)."""
    shown = []

    class Handle:
        def update(self, obj, raw):
            shown.append(obj["text/plain"])

    def display(obj, raw, display_id):
        shown.append(obj["text/plain"])
        return Handle()

    monkeypatch.setattr(progress, "_jupyter", lambda: display)
    threshold(0.0)
    what = "kinetic: float64({" + ", ".join(f"f{i}: float64" for i in range(40)) + "}) for cpu"
    with progress.reporting(what):
        time.sleep(0.4)
    assert len(shown) == 2
    for line in shown:
        assert len(line) <= progress.WIDTH and "…" in line and "for cpu" in line
