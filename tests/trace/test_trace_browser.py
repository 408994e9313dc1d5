"""The trace page in a real browser (headless Chromium): what its script draws, read from the DOM.

Selecting an execution and clicking a state run the same functions as the page's deep link
(`#execution=NAME&state=STATE`), which is how these tests drive them without a pointer. Each load
is a new tab (a new document) in one Chromium the module shares (tests/trace/browser.py).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest

from onceflow.devtools.trace import write_trace
from onceflow.devtools.trace.render import STATUS_LEGEND
from onceflow.ops.executions import ExecutionResult
from tests.trace.browser import Browser, chromium
from tests.trace.histories import History
from tests.trace.many import DLQ, MARK, PUBLISH, RECORD, definition, executions, pruned
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


def _shifted(events: list[dict], seconds: int) -> list[dict]:
    return [{**e, "timestamp": e["timestamp"] + timedelta(seconds=seconds)} for e in events]


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
    data = _open(browser, page).data["executions"][
        ::-1
    ]  # listed newest first (these all start at one time: last first)
    failed = [e["name"] for e in data if e["status"] == "FAILED"]
    assert [row[1] for row in _open(browser, page, "status=FAILED").row_cells] == failed

    path = data[0]["path"]
    on_path = [e["name"] for e in data if e["path"] == path]
    assert [row[1] for row in _open(browser, page, f"path={path}").row_cells] == on_path

    by_event = [e for e in data if e["event_id"] == "order-00007"]
    assert [row[1] for row in _open(browser, page, "q=order-00007").row_cells] == [e["name"] for e in by_event]
    assert [row[1] for row in _open(browser, page, "q=outage-order").row_cells] == ["outage-order-2"]
    assert "No execution matches." in "".join(_open(browser, page, "q=nothing-like-this").text)


def _events(html: str) -> list[str]:
    return re.findall(r'<tr class="event" data-type="([A-Za-z]+)">', html)


def test_the_events_table_has_every_history_event_with_its_time_and_elapsed_ms(browser: Browser, page: Path) -> None:
    outage = _outage().result("outage-order-2")
    dom = _open(browser, page, "execution=outage-order-2")
    assert _events(dom.html) == [e["type"] for e in outage.history]
    table = dom.html[dom.html.index('<table class="events"') :]
    started = outage.history[0]["timestamp"]
    last = outage.history[-1]
    elapsed = round((last["timestamp"] - started).total_seconds() * 1000)
    assert (
        f'<td class="num">{elapsed} ms</td><td>{last["timestamp"].isoformat(timespec="milliseconds")[11:23]}<' in table
    )
    assert "SNS.InternalErrorException: SNS.InternalErrorException happened" in table  # a failure's summary


def test_a_deep_link_to_an_unknown_execution_or_state_says_so(browser: Browser, page: Path) -> None:
    dom = _open(browser, page, "execution=no-such-run&state=No%20such%20state")
    assert "No execution named “no-such-run” among the 32 on this page" in dom.ids["unknown-execution"]
    assert dom.shown.attrs["data-name"] == "outage-order-2"  # the default selection stays
    assert "No state named “No such state” in this state machine." in dom.ids["unknown-state"]


def test_the_list_filters_by_error_time_and_state(browser: Browser, page: Path) -> None:
    data = _open(browser, page).data["executions"][::-1]
    index = {name: i for i, name in enumerate(_open(browser, page).data["states"])}
    throttled = [e["name"] for e in data if "SNS.ThrottledException" in e["errors"]]
    assert throttled and [r[1] for r in _open(browser, page, "error=SNS.ThrottledException").row_cells] == throttled
    assert len(_open(browser, page, "error=*").row_cells) == sum(1 for e in data if e["errors"])
    window = [e["name"] for e in data if "2026-01-01T00:00:10" <= e["started"] < "2026-01-01T00:00:20"]
    rows = _open(browser, page, "from=2026-01-01T00:00:10&to=2026-01-01T00:00:20").row_cells
    assert len(window) == 10 and [r[1] for r in rows] == window
    as_listed = _open(browser, page, f"from={quote('2026-01-01 00:00:10')}&to={quote('2026-01-01 00:00:20')}")
    assert [r[1] for r in as_listed.row_cells] == window  # typed as the list writes times, with a space
    failed_at_publish = [e["name"] for e in data if index[PUBLISH] in e["failed"]]
    rows = _open(browser, page, f"in={index[PUBLISH]}&how=failed").row_cells
    assert failed_at_publish and [r[1] for r in rows] == failed_at_publish
    entered = _open(browser, page, f"in={index[DLQ]}").row_cells
    assert [r[1] for r in entered] == [e["name"] for e in data if index[DLQ] in e["entered"]]


def test_a_state_links_to_the_executions_that_entered_or_failed_there(browser: Browser, page: Path) -> None:
    dom = _open(browser, page, f"state={quote(PUBLISH)}")
    data = dom.data["executions"]
    index = dom.data["states"].index(PUBLISH)
    text = "".join(dom.details_text)
    entered = sum(1 for e in data if index in e["entered"])
    failed = sum(1 for e in data if index in e["failed"])
    assert f"list the {entered} that entered it" in text and f"list the {failed} that failed there" in text
    assert f"whole run: entered by {entered} executions" in text


def test_run_wide_numbers_and_the_selected_executions_colours_have_their_own_legends(
    browser: Browser, page: Path
) -> None:
    dom = _open(browser, page)
    assert "Whole run (grey, numbers):" in dom.html and "Selected execution (fill and outline):" in dom.html
    # the run's notes beside states (in status colours, as text) are in the run's legend, not the selection's
    run_legend = dom.html[dom.html.index("Whole run (grey, numbers):") : dom.html.index("Selected execution (fill")]
    assert "✖ errors met there ×N" in run_legend and "■ N SUCCEEDED here" in run_legend
    # the dark badge counts the run (32 executions), whichever execution is selected
    assert dom.state(RECORD)["data-executions"] == "32"
    assert (
        dom.state(RECORD)["data-executions"]
        == _open(browser, page, "execution=retried-order-1").state(RECORD)["data-executions"]
    )


def test_five_thousand_executions_newest_first_paged_and_sorted(browser: Browser, tmp_path: Path) -> None:
    """About 10 s: 5,000 synthetic histories written and opened three times (page 1, page 2, sorted)."""
    began = time.perf_counter()
    big = write_trace(definition(), executions(5000), tmp_path / "big.html")
    written = time.perf_counter() - began
    size = big.stat().st_size
    html, opened = browser.dump_dom(big, timeout=180)
    dom = read_html(html)
    print(f"\n5,000 executions: page {size / 1e6:.1f} MB, written in {written:.2f} s, opened in {opened:.2f} s")
    assert size < 6_000_000
    names = [e["name"] for e in dom.data["executions"]][::-1]  # newest first
    assert [r[1] for r in dom.row_cells] == names[:300]
    assert "rows 1–300 of 5000 matching (5000 in all), page 1 of 17" in dom.ids["match-count"]
    second = _open(browser, big, "page=2")
    assert [r[1] for r in second.row_cells] == names[300:600]
    by_duration = _open(browser, big, "sort=ms&dir=1")
    durations = [int(r[6].removesuffix(" ms")) for r in by_duration.row_cells]
    assert durations == sorted(durations) and len(durations) == 300
    # sorted and paged by clicks: the address carries both, so a copied link opens the same rows
    rows = "Array.from(document.querySelectorAll('#executions tbody tr')).map(r => r.children[1].textContent)"
    (_, _, clicked, link), _ = browser.run(
        big,
        [
            "document.querySelector('th[data-sort=ms]').click()",
            "document.getElementById('page-older').click()",
            rows,
            "location.hash.slice(1)",
        ],
        timeout=180,
    )
    assert "sort=ms" in link and "page=2" in link
    assert [r[1] for r in _open(browser, big, link).row_cells] == clicked


def test_twenty_thousand_executions_with_pruned_histories(browser: Browser, tmp_path: Path) -> None:
    """`onceflow start`'s default budget at 20,000 executions: 1,000 histories, 19,000 pruned. About 6 s."""
    results = [*pruned(19_000), *executions(1000)]
    results = results[:19_000] + [
        ExecutionResult(r.arn, r.name, r.status, r.input, _shifted(r.history, 19_000)) for r in results[19_000:]
    ]
    began = time.perf_counter()
    big = write_trace(definition(), results, tmp_path / "big.html", history_budget=1000)
    written = time.perf_counter() - began
    size = big.stat().st_size
    html, opened = browser.dump_dom(big, "path=-1", timeout=180)
    dom = read_html(html)
    print(
        f"\n20,000 executions (19,000 pruned): page {size / 1e6:.1f} MB, written in {written:.2f} s, opened in {opened:.2f} s"
    )
    assert size < 8_000_000
    assert "19000 of 20000 executions have no history" in dom.ids["pruned-note"]
    assert dom.state("__start__")["data-executions"] == "1000"
    assert "of 19000 matching (20000 in all)" in dom.ids["match-count"]
    assert dom.row_cells[0][1] == "order-18999-pruned" and dom.row_cells[0][5] == "no history"
    assert dom.row_cells[0][0] == "2026-01-01 05:16:39.000"  # the pruned keep their dates
    newest = _open(browser, big, f"state={quote(RECORD)}")
    assert newest.row_cells[0][1] == results[-1].name
    # a state's run-wide counts say whom they leave out
    assert "among the 1000 executions with a history; the 19000 without one (pruned)" in newest.ids["state-pruned"]


_LINES = """(function (cells) {  // per cell with text: [lines it takes, words broken across lines], as laid out
  return Array.from(cells).filter(function (c) { return c.textContent.trim(); }).map(function (cell) {
    var text = cell.firstChild, range = document.createRange(), broken = 0, at = 0;
    function lines(r) {
      var tops = {}; Array.from(r.getClientRects()).forEach(function (b) { tops[Math.round(b.top)] = 1; });
      return Object.keys(tops).length;
    }
    range.selectNodeContents(cell);
    var all = lines(range);
    text.textContent.split(' ').forEach(function (word) {
      range.setStart(text, at); range.setEnd(text, at + word.length); at += word.length + 1;
      if (word && lines(range) > 1) { broken++; }
    });
    return [all, broken];
  });
})"""


def test_names_in_the_list_do_not_wrap_and_state_names_in_events_break_between_words(
    browser: Browser, page: Path
) -> None:
    """In a narrow window (900 px): the list's execution names and errors stay on one line each
    (the table scrolls sideways instead); the events table's state names break between words only."""
    (names, steps, errors), _ = browser.run(
        page,
        [
            f"{_LINES}(document.querySelectorAll('#executions tbody td:nth-child(2)'))",
            f"{_LINES}(document.querySelectorAll('table.events td.step'))",
            f"{_LINES}(document.querySelectorAll('#executions tbody td.error-cell'))",
        ],
        "execution=outage-order-2",
        size=(900, 900),
    )
    assert names and steps and errors
    assert {lines for lines, _ in names} == {1} and {lines for lines, _ in errors} == {1}
    assert {broken for _, broken in steps} == {0}
