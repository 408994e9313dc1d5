"""The trace page in a real browser (headless Chromium): what its script draws, read from the DOM.

Selecting an execution and clicking a state run the same functions as the page's deep link
(`#execution=NAME&state=STATE`), which is how these tests drive them without a pointer. Each load
is a new tab (a new document) in one Chromium the module shares (tests/trace/browser.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from onceflow.devtools.trace import write_trace
from onceflow.devtools.trace.render import STATUS_LEGEND
from tests.trace.browser import Browser, chromium
from tests.trace.histories import History
from tests.trace.many import DLQ, MARK, PUBLISH, RECORD, definition, executions
from tests.trace.page_reader import read_html

_NO_BROWSER = "needs Chromium on PATH; install it with: sudo bash .ci/run browser"
if chromium() is None and os.environ.get("CI"):  # .ci/run installs it: in CI a missing browser fails, never skips
    raise RuntimeError(_NO_BROWSER)
pytestmark = pytest.mark.skipif(chromium() is None, reason=_NO_BROWSER)


def _retried_publish() -> History:
    return (
        History()
        .state(RECORD, "Task", None)
        .state(PUBLISH, "Task", "SNS.ThrottledException", None)
        .state(MARK, "Task", None)
        .succeed()
    )


def _outage() -> History:
    return (
        History()
        .state(RECORD, "Task", None)
        .state(PUBLISH, "Task", "SNS.InternalErrorException", "SNS.InternalErrorException")
        .state(DLQ, "Task", None)
        .state("Dead-lettered", "Fail")
        .fail("Onceflow.DeadLettered")
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One Chromium for the module: each load is still a new tab, a new document."""
    with Browser() as running:
        yield running


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    results = [_retried_publish().result("retried-order-1"), _outage().result("outage-order-2"), *executions(30)]
    return write_trace(
        definition(), results, tmp_path_factory.mktemp("trace") / "trace.html", selected="outage-order-2"
    )


def _open(browser: Browser, page: Path, fragment: str = ""):
    html, _ = browser.dump_dom(page, fragment)
    dom = read_html(html)
    assert 'data-ready="true"' in html, "the page's script did not finish"
    return dom


def _state_classes(dom, name: str) -> set[str]:
    return set(dom.state(name)["class"].split())


def test_clicking_a_state_shows_its_input_output_errors_and_retries_for_the_selected_execution(
    browser: Browser, page: Path
) -> None:
    dom = _open(browser, page, f"execution=retried-order-1&state={quote(PUBLISH)}")
    assert dom.shown.attrs["data-name"] == "retried-order-1"
    [entry] = dom.entries
    assert entry["data-status"] == "retried"
    text = "".join(dom.details_text)
    assert "Attempts2" in text.replace(" ", "") and "Retries1" in text.replace(" ", "")
    assert "attempt 1 failed: SNS.ThrottledException — SNS.ThrottledException happened" in text
    assert json.dumps({"in": PUBLISH}, indent=2) in text and json.dumps({"out": PUBLISH}, indent=2) in text
    assert "→ Mark as sent" in text


def test_a_state_the_execution_did_not_enter_says_so(browser: Browser, page: Path) -> None:
    dom = _open(browser, page, f"execution=retried-order-1&state={quote(DLQ)}")
    assert dom.entries == []
    assert "Not entered by the selected execution (retried-order-1)." in "".join(dom.details_text)


def test_states_on_the_selected_path_are_filled_by_status_with_a_legend_for_each(browser: Browser, page: Path) -> None:
    dom = _open(browser, page)  # the selected execution: the outage, caught into the dead-letter path
    assert {"onpath", "st-succeeded"} <= _state_classes(dom, RECORD)
    assert {"onpath", "st-caught"} <= _state_classes(dom, PUBLISH)
    assert {"onpath", "st-failed"} <= _state_classes(dom, "Dead-lettered")
    assert "onpath" not in _state_classes(dom, MARK)
    legend = {item for item in STATUS_LEGEND}
    assert legend == {"succeeded", "retried", "caught", "failed", "running"}
    for status, words in STATUS_LEGEND.items():
        assert f'<i class="swatch st-{status}"></i> {words}' in dom.html

    other = _open(browser, page, "execution=retried-order-1")
    assert {"onpath", "st-retried"} <= _state_classes(other, PUBLISH)
    assert {"onpath", "st-succeeded"} <= _state_classes(other, MARK)
    assert "onpath" not in _state_classes(other, "Dead-lettered")


def test_the_list_filters_by_status_and_path_and_searches_name_or_event_id(browser: Browser, page: Path) -> None:
    data = _open(browser, page).data["executions"][::-1]  # listed newest first (these all start at one time: last first)
    failed = [e["name"] for e in data if e["status"] == "FAILED"]
    assert [row[1] for row in _open(browser, page, "status=FAILED").row_cells] == failed

    path = data[0]["path"]
    on_path = [e["name"] for e in data if e["path"] == path]
    assert [row[1] for row in _open(browser, page, f"path={path}").row_cells] == on_path

    by_event = [e for e in data if e["event_id"] == "order-00007"]
    assert [row[1] for row in _open(browser, page, "q=order-00007").row_cells] == [e["name"] for e in by_event]
    assert [row[1] for row in _open(browser, page, "q=outage-order").row_cells] == ["outage-order-2"]
    assert "No execution matches." in "".join(_open(browser, page, "q=nothing-like-this").text)


def test_five_thousand_executions_open_quickly_in_a_small_page(browser: Browser, tmp_path: Path) -> None:
    began = time.perf_counter()
    big = write_trace(definition(), executions(5000), tmp_path / "big.html")
    written = time.perf_counter() - began
    size = big.stat().st_size
    html, opened = browser.dump_dom(big, "status=FAILED", timeout=180)
    dom = read_html(html)
    print(f"\n5,000 executions: page {size / 1e6:.1f} MB, written in {written:.2f} s, opened in {opened:.2f} s")
    assert size < 6_000_000
    assert 'data-ready="true"' in html
    assert len(dom.rows) == min(300, sum(e["status"] == "FAILED" for e in dom.data["executions"]))
    assert "first 300 shown" in dom.ids["match-count"] or int(dom.ids["match-count"].split()[0]) == len(dom.rows)
