"""No verdict passes on nothing: every R-check names how many events it judged and fails a run that
processed none, and the demo refuses, in one line, to judge a stream its domain does not accept
(a run where every message was dead-lettered once printed PASS R1 and PASS R2)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from onceflow.local.report import NOTHING_TO_JUDGE, Expectation, build_report, r5_verdict
from onceflow.local.subscriber_check import SubscriberEvidence, judge_r4
from onceflow.local.template import PROJECT_ROOT
from onceflow.ops.observe import QueuedMessage

CONSOLE_SCRIPT = Path(sys.executable).with_name("onceflow")


def _dead_letter(body: str) -> QueuedMessage:
    attributes = {"error": "Onceflow.InvalidMessage", "cause": "field 'x' breaks rule 'y'", "source": "starter"}
    return QueuedMessage("m-1", body, attributes, 1)


def test_a_run_where_every_message_was_dead_lettered_passes_no_guarantee() -> None:
    bodies = [json.dumps({"payment_id": f"p-{i}"}) for i in range(3)]
    report = build_report(
        sent=[Expectation(None, None, body) for body in bodies],
        state_records=[],
        business_rows=[],
        notifications=[],
        dead_letters=[_dead_letter(body) for body in bodies],
        executions=[],
        business_key="payment_id",
    )
    assert not report.passed
    for verdict in report.verdicts:
        assert not verdict.passed, verdict
        assert verdict.problems[-1].endswith(NOTHING_TO_JUDGE), verdict
    r1 = report.verdicts[0]
    assert r1.evidence == "0 of 3 messages processed, 3 dead-lettered with a reason, 0 unaccounted"


def test_r4_and_r5_fail_on_nothing_too() -> None:
    empty = SubscriberEvidence(markers=[], tallies=[], dead_letters=[], deliveries=0, tally_key_path="account_id")
    r4 = judge_r4(empty, notifications=[])
    assert not r4.passed and r4.problems == [f"no event was notified: {NOTHING_TO_JUDGE}"]
    r5 = r5_verdict({}, 0, [])
    assert not r5.passed and r5.evidence.startswith("0 events in 0 message groups")


def test_the_demo_refuses_bodies_its_domain_rejects_in_one_line(tmp_path: Path) -> None:
    """The worked example's app with a sample the order model rejects (amount 0): the demo would
    only dead-letter; it says so before it judges anything."""
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(PROJECT_ROOT / "template.yaml", app / "template.yaml")
    for folder in ("statemachine", "functions"):
        (app / folder).symlink_to(PROJECT_ROOT / folder)
    (app / "events" / "bodies").mkdir(parents=True)
    sample = {"order_id": "order-1", "customer_id": "c-1", "amount": 0, "currency": "EUR"}
    (app / "events" / "bodies" / "order.json").write_text(json.dumps(sample))
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), "demo", "--events", "5", "--out", str(tmp_path / "reports")],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=app,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        "onceflow demo: nothing to judge: the starter rejects the bodies made from the sample order.json with a "
        "fresh order_id: field 'amount' breaks rule 'greater_than'; fix the sample or the payload validation"
    )
    assert not (tmp_path / "reports" / "report.json").exists()
