"""`onceflow trace --watch`: a live page while `onceflow start` runs, and the self-contained file after.

The watch rewrites the page whole each round, reading only what is new or running (an ended
execution's history does not change); the page reloads itself and keeps its selection, filters
and zoom; Ctrl-C writes it once more without reloading, the file to share. The rounds' waits are
the test's own callback: each runs the work the next round is to find (another execution), or
ends the watch as Ctrl-C does. The console script's watch is ended by a real SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from onceflow.devtools.trace import write_trace
from onceflow.devtools.trace.collect import Collected, collect
from onceflow.devtools.trace.watch import watch
from tests.support import order, run_execution
from tests.trace.browser import Browser, chromium
from tests.trace.engine_reads import count_engine_reads
from tests.trace.many import definition, executions
from tests.trace.page_reader import read_page

CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")


def _live(page: Path) -> Any:
    return read_page(page).data["live"]


def test_a_watch_rewrites_the_page_live_reading_only_what_is_new_then_writes_it_to_share(
    stack, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sfn = stack.client("stepfunctions")
    definition_ = json.loads(stack.definition_path.read_text())
    first = run_execution(stack, order("watched-1"), name="watched-1")
    asked = count_engine_reads(monkeypatch)
    last: list[Collected] = []

    def read() -> Collected:
        known = {r.arn: r for r in last[0].executions} if last else None
        last[:] = [collect(sfn, stack.state_machine_arn, known=known)]
        return last[0]

    written: list[tuple[int, Any]] = []

    def write(collected: Collected, live: Any) -> Path:
        path = write_trace(definition_, collected.executions, tmp_path / "live.html", live=live)
        written.append((len(collected.executions), _live(path)))
        return path

    waits: list[float] = []

    def wait(seconds: float) -> None:  # what happens while the watch waits, then Ctrl-C
        waits.append(seconds)
        if len(waits) == 1:
            run_execution(stack, order("watched-2"), name="watched-2")
            asked.clear()  # what the next round asks, not what running it read
        else:
            raise KeyboardInterrupt

    moment = datetime(2026, 12, 6, 12, 0, 5, tzinfo=UTC)
    watched = watch(read, write, every=5, sleep=wait, now=lambda: moment)
    assert waits == [5, 5] and watched.rounds == 2 and watched.ended_by == "interrupted"
    live = {"every": 5, "written": "2026-12-06T12:00:05+00:00"}
    assert written == [(1, live), (2, live), (2, None)]  # two live pages, then the one to share
    assert asked["GetExecutionHistory"] == 1  # the second round read the new execution's history only
    names = [e["name"] for e in read_page(watched.path).data["executions"]]
    assert names == [first.name, "watched-2"]
    assert "live-note" not in read_page(watched.path).ids


def test_the_console_scripts_watch_ends_on_ctrl_c_with_a_page_that_does_not_reload(
    stack, embedded_aws, tmp_path
) -> None:
    run_execution(stack, order("watched-3"), name="watched-3")
    page = tmp_path / "watched.html"
    where = ["--endpoint", embedded_aws.endpoint_url, "--stack-name", stack.stack_name]
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "trace", *where, "--watch", "--every", "1", "--out", str(page)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "400"},
        # Ctrl-C as at a terminal, even when this runner was started in the background (`cmd &` starts
        # it ignoring SIGINT, its children inherit that, and the watch leaves an ignored SIGINT be).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # blocks until the first page is written
        assert first.startswith(f"trace of 1 execution written to {page}; rewritten every 1 s"), first
        assert _live(page)["every"] == 1
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "Traceback" not in err and out.strip().endswith(f"trace of 1 execution written to {page}")
    assert _live(page) is None


@pytest.mark.skipif(chromium() is None, reason="needs Chromium on PATH; install it with: sudo bash .ci/run browser")
def test_a_live_page_reloads_itself_keeping_selection_and_zoom(tmp_path: Path) -> None:
    runs = executions(40)
    page = tmp_path / "live.html"
    hourly = {"every": 3600, "written": "2026-12-06T12:00:00+00:00"}  # its own timer never fires in the test
    write_trace(definition(), runs[:39], page, live=hourly)
    chosen = runs[20].name
    with Browser() as browser, browser.tab(page, f"execution={chosen}", size=(1280, 800)) as tab:
        assert tab.evaluate("document.body.dataset.live") == "3600"
        assert "rewrites this page every 3600 s" in tab.evaluate("document.getElementById('live-note').textContent")
        tab.evaluate("document.getElementById('zoom-in').click()")
        zoom = tab.evaluate("window.onceflowGraph.view.k")
        write_trace(definition(), runs, page, live=hourly)  # the watch's next round: one execution more
        tab.reloaded_by("window.onceflowReload()")
        assert tab.evaluate("JSON.parse(document.getElementById('trace-data').textContent).executions.length") == 40
        assert tab.evaluate("document.getElementById('selected-name').textContent") == chosen
        assert abs(tab.evaluate("window.onceflowGraph.view.k") - zoom) < 1e-6
        write_trace(definition(), runs, page)  # Ctrl-C: the page to share
        tab.reloaded_by("location.reload()")
        assert tab.evaluate("document.body.dataset.live") is None
        assert tab.evaluate("document.getElementById('live-note')") is None


def test_ctrl_c_lets_the_read_under_way_finish_then_ends_the_watch(tmp_path: Path) -> None:
    """Ctrl-C during a read is not raised inside it (inside botocore or a thread pool it could leave a
    lock taken, and the watch's last write wait on it: a console watch once hung so); the read finishes,
    the watch ends, and the page is written once more without `live`. A second Ctrl-C raises."""
    # As at a terminal (a runner started in the background, `cmd &`, ignores SIGINT; the watch leaves that be).
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    reads: list[str] = []

    def read() -> str:
        reads.append("read")
        if len(reads) == 2:
            signal.raise_signal(signal.SIGINT)  # as Ctrl-C arrives while the second read waits on the endpoint
            reads.append("finished after Ctrl-C")
        return f"state {len(reads)}"

    written: list[tuple[str, object]] = []

    def write(state: str, live: object) -> Path:
        written.append((state, live))
        return tmp_path / "watched.html"

    watched = watch(read, write, every=0.001)
    assert reads == ["read", "read", "finished after Ctrl-C"]
    assert watched.ended_by == "interrupted" and watched.last == "state 3" and watched.rounds == 1
    assert written[-1] == ("state 3", None)  # the page to share, from the read Ctrl-C let finish
    with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C, while the first is being handled

        def read_twice() -> str:
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
            return "never"

        watch(read_twice, write, every=0.001)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    signal.signal(signal.SIGINT, before)
