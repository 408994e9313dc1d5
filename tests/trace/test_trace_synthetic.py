"""The trace page on a small definition and hand-written histories: edge attribution, escaping, layout."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from onceflow.devtools.trace import write_trace
from onceflow.devtools.trace.conditions import describe_rule
from onceflow.devtools.trace.graph import START_ID, build_graph
from onceflow.devtools.trace.layout import Box, _isotonic, layout
from onceflow.devtools.trace.page import pick_selected
from onceflow.devtools.trace.walk import trace_execution
from onceflow.ops.executions import ExecutionResult
from tests.trace.histories import ARN_PREFIX, History
from tests.trace.page_reader import external_references, read_page

SAY = 'Say "hi" <script>alert(1)</script> & bye'

DEFINITION: dict[str, Any] = {
    "StartAt": "Check",
    "States": {
        "Check": {
            "Type": "Choice",
            "Choices": [
                {"Variable": "$.n", "NumericGreaterThan": 1, "Next": "Work"},
                {"Variable": "$.n", "NumericEquals": 0, "Next": "Work"},
            ],
            "Default": SAY,
        },
        "Work": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke",
            "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 2}],
            "Catch": [
                {"ErrorEquals": ["Custom.Timeout"], "Next": "Recover"},
                {"ErrorEquals": ["States.ALL"], "Next": "Recover"},
            ],
            "Next": "Done",
        },
        "Recover": {"Type": "Pass", "Next": "Give up"},
        SAY: {"Type": "Pass", "End": True},
        "Done": {"Type": "Succeed"},
        "Give up": {"Type": "Fail", "Error": "GaveUp"},
    },
}


def _executions() -> list:
    return [
        History().state("Check", "Choice").state("Work", "Task", None).state("Done", "Succeed").succeed().result("ok"),
        History()
        .state("Check", "Choice")
        .state("Work", "Task", "Boom", "Boom", "Boom")
        .state("Recover", "Pass")
        .state("Give up", "Fail")
        .fail("GaveUp")
        .result("caught"),
        History().state("Check", "Choice").state(SAY, "Pass").succeed().result("skipped"),
        History().state("Check", "Choice").state("Done", "Succeed").succeed().result("odd"),
    ]


def _edges(path: Path) -> dict[tuple[str, str, str], dict[str, str]]:
    page = read_page(path)
    return {(e["data-source"], e["data-target"], e["data-kind"]): e for e in page.edges}


def test_graph_has_every_kind_of_edge() -> None:
    graph = build_graph(DEFINITION)
    kinds = sorted((e.source, e.target, e.kind) for e in graph.edges)
    assert kinds == sorted(
        [
            (START_ID, "Check", "start"),
            ("Check", "Work", "choice"),
            ("Check", "Work", "choice"),
            ("Check", SAY, "default"),
            ("Work", "Work", "retry"),
            ("Work", "Done", "next"),
            ("Work", "Recover", "catch"),
            ("Work", "Recover", "catch"),
            ("Recover", "Give up", "next"),
        ]
    )
    labels = [e.label for e in graph.edges if e.kind == "choice"]
    assert labels == ["#1 $.n > 1", "#2 $.n == 0"]


def test_transitions_are_attributed_to_the_right_edge(tmp_path: Path) -> None:
    edges = _edges(write_trace(DEFINITION, _executions(), tmp_path / "t.html"))
    work_choices = [e for (s, t, k), e in edges.items() if (s, t, k) == ("Check", "Work", "choice")]
    assert len(work_choices) == 1  # the dict keeps the last of the two rules: the unused second
    graph_edges = read_page(tmp_path / "t.html").edges
    rules = [e for e in graph_edges if e["data-kind"] == "choice"]
    assert [r["data-executions"] for r in rules] == ["2", "0"]  # no rule is recorded: the first counts
    catches = [e for e in graph_edges if e["data-kind"] == "catch"]
    assert [c["data-executions"] for c in catches] == ["0", "1"]  # Boom is not Custom.Timeout: States.ALL
    assert edges[("Check", SAY, "default")]["data-executions"] == "1"
    assert edges[("Work", "Work", "retry")]["data-traversals"] == "2"
    assert edges[("Check", "Done", "other")]["data-executions"] == "1"  # not in the definition, still shown


def test_errors_and_endings_per_state(tmp_path: Path) -> None:
    page = read_page(write_trace(DEFINITION, _executions(), tmp_path / "t.html"))
    assert json.loads(page.state("Work")["data-errors"]) == {"Boom": 3}
    assert page.state("Work")["data-retries"] == "2"
    assert json.loads(page.state("Give up")["data-errors"]) == {"GaveUp": 1}
    assert "■ 1 FAILED here" in page.html
    assert "■ 1 SUCCEEDED here" in page.html


def test_default_selection_is_the_failed_one_and_names_are_checked() -> None:
    graph = build_graph(DEFINITION)
    traces = [trace_execution(graph, r) for r in _executions()]
    assert traces[pick_selected(traces, None)].name == "caught"
    assert pick_selected(traces, "skipped") == 2
    assert pick_selected(traces, traces[3].result.arn) == 3
    assert pick_selected([], None) is None
    with pytest.raises(ValueError, match="no execution named 'nope'"):
        pick_selected(traces, "nope")


def test_names_and_data_are_escaped(tmp_path: Path) -> None:
    html = write_trace(DEFINITION, _executions(), tmp_path / "t.html").read_text()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    data = html[html.index('id="trace-data">') : html.index("</script>", html.index('id="trace-data">'))]
    assert "<" not in data.removeprefix('id="trace-data">')
    assert external_references(html) == []
    page = read_page(tmp_path / "t.html")
    assert SAY in [s["data-state"] for s in page.states]


def test_no_executions_still_draws_the_graph(tmp_path: Path) -> None:
    page = read_page(write_trace(DEFINITION, [], tmp_path / "empty.html"))
    assert sorted(s["data-state"] for s in page.states) == sorted([START_ID, *DEFINITION["States"]])
    assert "No executions." in page.html
    assert all(e["data-executions"] == "0" for e in page.edges)


def test_executions_are_listed_oldest_first(tmp_path: Path) -> None:
    late = History(datetime(2026, 2, 1, tzinfo=UTC)).state("Check", "Choice").state(SAY, "Pass").succeed()
    early = History(datetime(2026, 1, 1, tzinfo=UTC)).state("Check", "Choice").state(SAY, "Pass").succeed()
    page = read_page(write_trace(DEFINITION, [late.result("late"), early.result("early")], tmp_path / "t.html"))
    assert [e["name"] for e in page.data["executions"]] == ["early", "late"]


def test_layout_keeps_boxes_apart_and_edges_on_their_nodes() -> None:
    graph = build_graph(DEFINITION)
    graph.add_edge("Give up", "Check", "other")  # a cycle, drawn upwards
    boxes = {name: Box(width=100 + 10 * i, height=40, right=30) for i, name in enumerate(graph.states)}
    edges = [(e.id, e.source, e.target) for e in graph.edges if e.kind != "retry"]
    placed = layout(list(graph.states), boxes, edges)
    rows: dict[float, list[str]] = {}
    for name in graph.states:
        rows.setdefault(placed.tops[name], []).append(name)
    for row in rows.values():
        spans = sorted(
            (placed.centers[n] - boxes[n].width / 2, placed.centers[n] + boxes[n].width / 2 + 30) for n in row
        )
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), spans
    for key, source, target in edges:
        (x0, y0), (x1, y1) = placed.routes[key].points[0], placed.routes[key].points[-1]
        assert y0 in (placed.tops[source], placed.tops[source] + 40)
        assert y1 in (placed.tops[target], placed.tops[target] + 40)
        assert abs(x0 - placed.centers[source]) <= boxes[source].width / 2
        assert abs(x1 - placed.centers[target]) <= boxes[target].width / 2
    assert placed.layers["Check"] < placed.layers["Work"] < placed.layers["Recover"] < placed.layers["Give up"]
    assert all(0 <= x <= placed.width for x in placed.centers.values())


def test_isotonic_positions_respect_gaps() -> None:
    assert _isotonic([0, 0, 0], [1, 1, 1], [10, 10]) == [-10, 0, 10]
    assert _isotonic([0, 100], [1, 1], [10]) == [0, 100]
    assert _isotonic([5, 0], [3, 1], [10]) == pytest.approx([1.25, 11.25])


@pytest.mark.parametrize(
    ("rule", "text"),
    [
        ({"Variable": "$.a", "IsPresent": False}, "$.a absent"),
        ({"Variable": "$.s", "StringEquals": "sent"}, '$.s == "sent"'),
        ({"Variable": "$.n", "NumericLessThanEquals": 3}, "$.n <= 3"),
        ({"Variable": "$.h", "StringEqualsPath": "$.g"}, "$.h == $.g"),
        ({"Not": {"Variable": "$.x", "IsNull": True}}, "not ($.x is null)"),
        (
            {"And": [{"Variable": "$.a", "BooleanEquals": True}, {"Variable": "$.b", "StringMatches": "x*"}]},
            '($.a == true) and ($.b matches "x*")',
        ),
        ({"Condition": "{% $states.input.n > 1 %}"}, "{% $states.input.n > 1 %}"),
    ],
)
def test_choice_rules_read_as_text(rule: dict[str, Any], text: str) -> None:
    assert describe_rule({**rule, "Next": "X"}) == text


def test_states_inside_a_parallel_are_not_steps(tmp_path: Path) -> None:
    definition = {
        "StartAt": "Fan out",
        "States": {
            "Fan out": {
                "Type": "Parallel",
                "Branches": [{"StartAt": "Inner", "States": {"Inner": {"Type": "Task", "Resource": "x", "End": True}}}],
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed"}],
                "Next": "Done",
            },
            "Done": {"Type": "Succeed"},
            "Failed": {"Type": "Fail", "Error": "Branch"},
        },
    }
    history = History().add("ParallelStateEntered", stateEnteredEventDetails={"name": "Fan out", "input": "{}"})
    history.state("Inner", "Task", "Boom", "Boom")
    history.add("ParallelStateFailed", parallelStateFailedEventDetails={"error": "Boom", "cause": "branch failed"})
    history.add("ParallelStateExited", stateExitedEventDetails={"name": "Fan out", "output": "{}"})
    result = history.state("Failed", "Fail").fail("Branch").result("nested")
    trace = trace_execution(build_graph(definition), result)
    assert trace.path == ["Fan out", "Failed"]
    assert (trace.steps[0].attempts, [f.error for f in trace.steps[0].failures]) == (0, ["Boom"])
    page = read_page(write_trace(definition, [result], tmp_path / "t.html"))
    (taken,) = [e for e in page.edges if e["data-executions"] == "1" and e["data-source"] == "Fan out"]
    assert (taken["data-target"], taken["data-kind"]) == ("Failed", "catch")
    assert json.loads(page.state("Fan out")["data-errors"]) == {"Boom": 1}


def test_inputs_and_outputs_are_kept_for_one_of_every_path_and_error_and_the_selected(tmp_path: Path) -> None:
    again = History().state("Check", "Choice").state("Work", "Task", None).state("Done", "Succeed").succeed()
    executions = [*_executions(), again.result("ok-again")]
    write_trace(DEFINITION, executions, tmp_path / "t.html", "skipped", detail_limit=1)
    page = read_page(tmp_path / "t.html")
    detailed = {e["name"]: (e["detailed"], all(len(step) == 9 for step in e["steps"])) for e in page.data["executions"]}
    # four paths, one error (Boom, GaveUp): one of each path is detailed, the second "ok" path is not
    assert detailed == {
        "ok": (True, True),
        "caught": (True, True),
        "skipped": (True, True),
        "odd": (True, True),
        "ok-again": (False, False),
    }
    assert page.shown.attrs["data-name"] == "skipped"
    left_out = next(e for e in page.data["executions"] if e["name"] == "ok-again")
    assert left_out["input"] is None and left_out["events"] and all(len(event) <= 4 for event in left_out["events"])


def _pruned(name: str, status: str, error: str | None = None) -> ExecutionResult:
    described = {
        "executionArn": ARN_PREFIX + name,
        "name": name,
        "status": status,
        "startDate": datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC),
        "stopDate": datetime(2026, 1, 1, 0, 0, 2, tzinfo=UTC),
        "input": json.dumps({"event_id": name}),
    }
    if error:
        described |= {"error": error, "cause": "it failed long ago"}
    return ExecutionResult(ARN_PREFIX + name, name, status, {"event_id": name}, [], described=described)


def test_pruned_executions_are_counted_apart_and_said_why(tmp_path: Path) -> None:
    executions = [_pruned("old-1", "SUCCEEDED"), _pruned("old-2", "FAILED", "GaveUp"), *_executions()]
    page = read_page(write_trace(DEFINITION, executions, tmp_path / "t.html", history_budget=4))
    assert "2 without history" in page.ids["pruned-chip"]
    note = page.ids["pruned-note"]
    assert (
        "2 of 6 executions have no history" in note
        and "histories of 4 finished executions, failed, timed-out and aborted ones first" in note
    )
    assert "--history-budget" in note and "counted in no path" in note
    assert page.state(START_ID)["data-executions"] == "4"
    assert 'data-status="FAILED" data-count="2"' in page.html  # the pruned failure is still a FAILED execution
    old = next(e for e in page.data["executions"] if e["name"] == "old-2")
    assert (old["pruned"], old["path"], old["error"], old["started"]) == (
        True,
        -1,
        "GaveUp",
        "2026-01-01T00:00:01.000+00:00",
    )
    assert old["errors"] == ["GaveUp"] and old["detailed"]  # the only pruned FAILED one: its input is on the page
    assert '<option value="-1">no history (pruned)</option>' in page.html
