"""The pipeline driver: what a team's test does with its own stack on the embedded AWS.

    def test_resends_are_written_once(onceflow_driver):
        bodies = onceflow_driver.bodies(3)          # the app's sample, each with a fresh event_id
        onceflow_driver.send(bodies + bodies)       # a producer's resends: same event_id, new message
        onceflow_driver.settle()                    # delivered, executed, notified: nothing left running
        report = onceflow_driver.assert_guarantees()  # R1–R3 (R4 with the subscriber, R5 on FIFO)
        assert report.business_rows == 3

Messages go through the real path: the source queue, the emulated SQS event source (batches,
visibility timeouts, partial batch responses, the redrive policy), the app's own starter, its state
machine from its ASL file, its subscriber. The verdicts are judged on evidence read back from the
stack (tables, notifications, dead letters, execution histories) by the same code as `onceflow demo`'s
(onceflow/local/report.py), each naming how many events it judged and failing when none was.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from onceflow.domain import conflicting_candidates, poison_candidates
from onceflow.domain.app import get_path
from onceflow.domain.bodies import body as body_with_id
from onceflow.domain.bodies import event_id, new_run_id
from onceflow.local.pipeline import LocalPipeline, SentMessage
from onceflow.local.report import Expectation, RunReport, Verdict, build_report, r5_verdict
from onceflow.local.starter_parse import StarterParser
from onceflow.local.subscriber_check import subscriber_evidence
from onceflow.ops.executions import ExecutionResult
from onceflow.ops.observe import QueuedMessage, drain, scan
from onceflow.ops.workflow import record_state

Bodies = int | Iterable[str | dict[str, Any]]


class GuaranteeFailed(AssertionError):
    """A guarantee did not hold on the run; the message has each failing verdict's evidence and problems."""


class PipelineDriver:
    """Sends to a stack's pipeline, runs it until it is idle, and judges what it did.

    `effects` (an onceflow.devtools.schedules.effects.EffectLog installed for the test) is how R5 is
    judged on a FIFO source: the order in which sends, writes and notifications happened."""

    def __init__(self, pipeline: LocalPipeline, effects: Any = None):
        self.pipeline = pipeline
        self.stack = pipeline.stack
        self.domain = self.stack.domain
        self.parser = StarterParser(self.stack)
        self.run_id = new_run_id()
        self.sent: list[SentMessage] = []
        self._made = 0
        self._effects = effects

    # --- what to send -----------------------------------------------------------------------

    def bodies(self, count: int = 1) -> list[str]:
        """`count` bodies made from the app's sample (Metadata.Onceflow.SampleBody), each with a fresh
        event_id (`<prefix>-<run id>-00000`, ...), new in every call."""
        if count < 0:
            raise ValueError(f"count {count}: at least 0")
        first, self._made = self._made, self._made + count
        return [
            json.dumps(body_with_id(self.domain, event_id(self.domain, i, self.run_id)))
            for i in range(first, self._made)
        ]

    def body(self, **fields: Any) -> str:
        """One fresh body with top-level `fields` set, e.g. `body(amount=-1)` (nested ones: `with_fields`)."""
        return self.with_fields(self.bodies(1)[0], fields)

    @staticmethod
    def with_fields(body: str, fields: dict[str, Any]) -> str:
        """`body` with each dotted path of `fields` set to its value."""
        from onceflow.domain.app import with_path

        document = json.loads(body)
        for path, value in fields.items():
            document = with_path(document, path, value)
        return json.dumps(document)

    def poison(self) -> list[tuple[str, str]]:
        """(what is wrong, body) for each kind of body this app's starter rejects: not JSON, no or an
        empty event_id, a number no service can carry, and each field of the wrong type where the
        app's payload validation says so."""
        return [(what, body) for what, body in poison_candidates(self.domain) if not self.parser.parse(body).accepted]

    def conflicting(self, body: str) -> str:
        """The same event_id as `body` with another payload (a field changed) that the starter accepts:
        what a producer that reuses an id sends. ValueError when no field can change and stay valid."""
        for candidate in conflicting_candidates(self.domain, json.loads(body)):
            text = json.dumps(candidate)
            if self.parser.parse(text).accepted:
                return text
        raise ValueError("no field of the body can change and stay valid: no conflicting payload can be made")

    def send(
        self,
        bodies: Bodies = 1,
        *,
        groups: int | Sequence[str] | None = None,
        group_by: str | None = None,
    ) -> list[SentMessage]:
        """Put messages on the source queue as a producer would: `bodies` is a count of fresh bodies or
        the bodies themselves (text or dicts). A FIFO source takes each message's group from `groups`
        (that many groups round robin, or one name per body), from the body's value at `group_by`, or
        else one group per event."""
        if isinstance(bodies, int):
            texts = self.bodies(bodies)
        else:
            texts = [b if isinstance(b, str) else json.dumps(b) for b in bodies]
        chosen = self._groups(texts, groups, group_by)
        sent = self.pipeline.send(texts, chosen)
        self.sent.extend(sent)
        return sent

    def _groups(self, texts: list[str], groups: int | Sequence[str] | None, group_by: str | None) -> list[str] | None:
        if groups is None and group_by is None:
            return None
        if groups is not None and group_by is not None:
            raise ValueError("give groups or group_by, not both")
        if not self.stack.fifo:
            raise ValueError("the source queue is not FIFO (SourceQueueType STANDARD): messages have no group")
        if isinstance(groups, int):
            return [f"{self.run_id}-group-{i % groups}" for i in range(len(texts))]
        if groups is not None:
            if len(groups) != len(texts):
                raise ValueError(f"{len(groups)} groups for {len(texts)} bodies: give one per body")
            return list(groups)
        values = [get_path(json.loads(text), str(group_by)) for text in texts]
        if any(value is None for value in values):
            raise ValueError(f"group_by {group_by!r}: a body has no value there")
        return [str(value) for value in values]

    # --- running it ---------------------------------------------------------------------------

    def process(self, concurrency: int = 1, timeout: float = 120.0) -> None:
        """Deliver until the source queue is empty, no execution runs and the subscribers are idle
        (ended executions swept by the safety net, the reconciler's schedule run once if any ended)."""
        self.pipeline.process(concurrency=concurrency, timeout=timeout)

    def settle(self, concurrency: int = 1, timeout: float = 120.0) -> list[ExecutionResult]:
        """`process`, then every execution ended: the run's outcome is all there to read."""
        self.process(concurrency, timeout)
        return self.pipeline.executions()

    def redeliver(self, count: int | None = None) -> int:
        """SQS hands messages the starter already handled (and deleted) to it once more, as standard
        queues rarely do; returns how many. Then `settle`."""
        handled = self.pipeline.event_source.acknowledged_records
        records = handled if count is None else handled[:count]
        if records:
            self.pipeline.starter.invoke({"Records": list(records)})
        return len(records)

    # --- the evidence -------------------------------------------------------------------------

    def business_rows(self) -> list[dict[str, Any]]:
        return scan(self.stack.client("dynamodb"), self.stack.business_table)

    def state_records(self) -> list[dict[str, Any]]:
        return scan(self.stack.client("dynamodb"), self.stack.processed_events_table)

    def notifications(self) -> list[QueuedMessage]:
        """Every notification a reader subscribed to the topic received so far (duplicates included)."""
        return list(self.pipeline.inbox.collect())

    def dead_letters(self) -> list[QueuedMessage]:
        """The dead-letter queue's messages (left there); the reason is in `attributes["error"]`."""
        return drain(self.stack.client("sqs"), self.stack.dead_letter_queue_url, delete=False)

    def expectations(self) -> list[Expectation]:
        """Every message sent, with the event_id and payload hash the app's own starter gives it."""
        parsed = [self.parser.parse(m.body, m.message_id) for m in self.sent]
        return [
            Expectation(p.event_id, p.payload_hash, p.body) if p.accepted else Expectation(None, None, p.body)
            for p in parsed
        ]

    def report(self) -> RunReport:
        """R1–R3 on everything sent so far; R4 when the stack has the example subscriber; R5 on a FIFO source."""
        executions = self.pipeline.executions()
        described = self.pipeline.sfn.describe_state_machine(stateMachineArn=self.stack.state_machine_arn)
        report = build_report(
            sent=self.expectations(),
            state_records=self.state_records(),
            business_rows=self.business_rows(),
            notifications=self.notifications(),
            dead_letters=self.dead_letters(),
            executions=executions,
            subscriber=subscriber_evidence(self.pipeline),
            business_key=self.stack.business_key,
            record_state=record_state(json.loads(described["definition"])),
        )
        if self._effects is not None:
            from onceflow.devtools.schedules.effects import order_violations

            effects = self._effects.effects
            groups = Counter(group for group, _ in {(e.group, e.event_id) for e in effects if e.kind == "sent"})
            report.verdicts.append(r5_verdict(dict(groups), len(effects), order_violations(effects)))
        return report

    def verdict(self, name: str) -> Verdict:
        """One verdict of `report()` by its number: "R1" ... "R5"."""
        for verdict in self.report().verdicts:
            if verdict.name.startswith(name):
                return verdict
        raise KeyError(f"no verdict {name!r} on this stack (R4 needs DeploySubscriber=true, R5 a FIFO source)")

    def assert_guarantees(self, *names: str) -> RunReport:
        """The report, after checking that each of `names` (all of the report's when none) passed;
        GuaranteeFailed names each one that did not, with its evidence and problems."""
        __tracebackhide__ = True  # pytest shows the test's line and the verdicts, not this method
        report = self.report()
        chosen = [v for v in report.verdicts if not names or any(v.name.startswith(n) for n in names)]
        missing = [n for n in names if not any(v.name.startswith(n) for v in report.verdicts)]
        if missing:
            raise KeyError(
                f"no verdict {missing[0]!r} on this stack (R4 needs DeploySubscriber=true, R5 a FIFO source)"
            )
        failed = [v for v in chosen if not v.passed]
        if failed:
            lines = [f"{v.name}: FAIL ({v.evidence})" + "".join(f"\n  - {p}" for p in v.problems) for v in failed]
            raise GuaranteeFailed("\n".join(lines))
        return report
