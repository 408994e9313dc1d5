"""Step Functions' execution status change events on the embedded EventBridge, as AWS sends them.

On AWS, Step Functions sends a "Step Functions Execution Status Change" event (source `aws.states`)
to the account's default event bus whenever a Standard execution changes status: RUNNING when it
starts, then SUCCEEDED, FAILED, TIMED_OUT or ABORTED; Express workflows send none
(https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html). Every enabled
rule of that bus whose pattern matches hands the event to its targets. moto's Step Functions sends
none, so a rule's SQS target never received one. AWS's recording: LocalStack's
base/test_base.snapshot.json, test_event_bridge_events_base: a RUNNING event, then a SUCCEEDED one,
each with the execution's detail (`input` and `output` as JSON text, `startDate`/`stopDate` in epoch
milliseconds, `redriveStatus` NOT_REDRIVABLE with its reason, `stateMachineVersionArn` null, ...).

Here each start and end of a Standard execution builds that event (`status_change_event`, also what
the local pipeline's safety net builds from DescribeExecution) and delivers it to the SQS and SNS
targets of the default bus's enabled rules whose pattern matches (moto's own matcher): the whole
event as the message, or the target's `Input` or `InputTransformer` output. Lambda targets are not
the engine's: moto's EventBridge cannot run a function, and the local pipeline's safety net
(onceflow/local/safety_net.py) invokes the template's functions with these same events, with
Lambda's retries and the losses AWS allows (StatusEventLoss). Other target types get nothing. AWS
delivers these events best effort; here every one is delivered, at once. A delivery that fails is
logged (logger `onceflow.engine.events.status_events`) and never touches the execution.

Patched in moto: `Execution.start` (the RUNNING event goes out before the execution's thread starts,
so it always comes first) and `BaseExecutionWorkerCommunication.terminated` (the end's event, once
moto has set the final status). TestState's executions send none, as on AWS.
"""

from __future__ import annotations

import json
import logging
import threading
import uuid
from contextlib import nullcontext
from datetime import UTC, datetime
from typing import Any

from moto.events.models import events_backends
from moto.events.utils import EventTemplateParser
from moto.sns.models import SNSBackend, sns_backends
from moto.sqs.models import SQSBackend, sqs_backends
from moto.stepfunctions.parser.api import StateMachineType
from moto.stepfunctions.parser.backend import execution as parser_execution
from moto.stepfunctions.parser.backend.test_state.execution import TestStateExecution

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current
from onceflow_common.status_change import DETAIL_TYPE, MAX_EVENT_DATA_BYTES, SOURCE

Patch = tuple[Any, str, Any]
LOG = logging.getLogger(__name__)
DEFAULT_BUS = "default"
RUNNING = "RUNNING"
# The target services the engine delivers to (Lambda's are the local pipeline's safety net's).
DELIVERED = frozenset({"sqs", "sns"})


def moto_needs() -> list[Need]:
    return [
        need(parser_execution.Execution, "start"),
        need(parser_execution.Execution, "to_describe_output"),
        need(parser_execution.BaseExecutionWorkerCommunication, "terminated"),
        need(EventTemplateParser, "parse", "input_template", "input_paths_map", "event"),
        need(SQSBackend, "send_message"),  # (queue_name, message_body, group_id): other patches wrap it
        need(SNSBackend, "publish"),  # (message, arn)
    ]


def _epoch_ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def _escaped_size(text: str | None) -> int:
    return len(json.dumps(text)) if text is not None else 0


def event_time(moment: datetime) -> str:
    """An event's `time`: ISO 8601 in UTC, to the second, as EventBridge writes it."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _text(value: Any) -> Any:
    return getattr(value, "value", value)  # moto's enums (ExecutionStatus) as their text


def status_change_detail(described: dict[str, Any]) -> dict[str, Any]:
    """The `detail` of the status change event for a DescribeExecution result (AWS's fields)."""
    input_text, output_text = described.get("input"), described.get("output")
    output_included = _escaped_size(output_text) <= MAX_EVENT_DATA_BYTES
    input_included = _escaped_size(input_text) + (_escaped_size(output_text) if output_included else 0) <= (
        MAX_EVENT_DATA_BYTES
    )
    return {
        "executionArn": described["executionArn"],
        "stateMachineArn": described["stateMachineArn"],
        "name": described["name"],
        "status": _text(described["status"]),
        "startDate": _epoch_ms(described.get("startDate")),
        "stopDate": _epoch_ms(described.get("stopDate")),
        "input": input_text if input_included else None,
        "output": output_text if output_included else None,
        "stateMachineVersionArn": described.get("stateMachineVersionArn"),
        "stateMachineAliasArn": described.get("stateMachineAliasArn"),
        "redriveCount": described.get("redriveCount", 0),
        "redriveDate": _epoch_ms(described.get("redriveDate")),
        "redriveStatus": _text(described.get("redriveStatus")),
        "redriveStatusReason": described.get("redriveStatusReason"),
        "inputDetails": {"included": input_included},
        "outputDetails": {"included": output_included} if output_text is not None else None,
        "error": described.get("error"),
        "cause": described.get("cause"),
    }


def status_change_event(described: dict[str, Any]) -> dict[str, Any]:
    """The whole event as EventBridge hands it to a target (account and region: the execution's)."""
    _, _, _, region, account, *_ = described["executionArn"].split(":")
    moment = described.get("stopDate") or described["startDate"]
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": DETAIL_TYPE,
        "source": SOURCE,
        "account": account,
        "time": event_time(moment),
        "region": region,
        "resources": [described["executionArn"]],
        "detail": status_change_detail(described),
    }


def _described(execution: Any, status: str) -> dict[str, Any]:
    """What DescribeExecution answers for `execution`, with `status`, from moto's own execution."""
    from onceflow.engine.stepfunctions.api import qualified_executions, redrive_execution

    described: dict[str, Any] = {**execution.to_describe_output(), "status": status}
    described.update(qualified_executions.qualified_fields(execution))
    described.update(redrive_execution.redrive_fields(execution, redrive_execution.clock(), with_status=True))
    return described


def _sends_events(execution: Any) -> bool:
    from onceflow.engine.stepfunctions.api import redrive_execution

    return (
        not isinstance(execution, TestStateExecution)
        and redrive_execution.workflow_type(execution) == StateMachineType.STANDARD
    )


def _deliverable_rules(account: str, region: str) -> list[Any]:
    """The default bus's enabled event-pattern rules with a target the engine delivers to."""
    bus = events_backends[account][region].event_buses.get(DEFAULT_BUS)
    if bus is None:
        return []
    return [
        rule
        for rule in bus.rules.values()
        if rule.state == "ENABLED"
        and rule.event_pattern.get_pattern()  # a schedule rule has none (moto's matcher would match all)
        and any(_service(target) in DELIVERED for target in rule.targets)
    ]


def _may_deliver(account: str, region: str) -> bool:
    """A look without the request lock, so that an execution's end waits for no request when no rule
    wants its event (the local pipeline's rules have Lambda targets only)."""
    try:
        return bool(_deliverable_rules(account, region))
    except RuntimeError:  # a rule put meanwhile changed the dict: look again under the lock
        return True


def _service(target: dict[str, Any]) -> str:
    return target["Arn"].split(":")[2]


def _payload(target: dict[str, Any], event: dict[str, Any]) -> Any:
    """What the target receives: the event, the target's constant `Input`, or its InputTransformer's output."""
    if "Input" in target:
        return target["Input"]  # the target's own JSON text, as it is
    transformer = target.get("InputTransformer")
    if transformer:
        return EventTemplateParser.parse(
            input_template=transformer.get("InputTemplate"),
            input_paths_map=transformer.get("InputPathsMap", {}),
            event={**event, "ingestion-time": datetime.now(UTC).timestamp()},
        )
    return event


def _deliver_to(target: dict[str, Any], account: str, region: str, payload: Any) -> None:
    body = payload if isinstance(payload, str) else json.dumps(payload)
    arn = target["Arn"]
    if _service(target) == "sqs":
        group = target.get("SqsParameters", {}).get("MessageGroupId")
        sqs_backends[account][region].send_message(queue_name=arn.rsplit(":", 1)[-1], message_body=body, group_id=group)
    else:
        sns_backends[account][region].publish(message=body, arn=arn)


def deliver(execution: Any, status: str, lock: Any = None) -> int:
    """Send `execution`'s status change event to the matching rules' SQS and SNS targets; how many got it."""
    account, region = execution.account_id, execution.region_name
    if not _may_deliver(account, region):
        return 0
    delivered = 0
    with lock if lock is not None else nullcontext():
        rules = _deliverable_rules(account, region)
        if not rules:
            return 0
        event = status_change_event(_described(execution, status))
        for rule in rules:
            if not rule.event_pattern.matches_event(event):
                continue
            for target in rule.targets:
                if _service(target) not in DELIVERED:
                    continue
                try:
                    _deliver_to(target, account, region, _payload(target, event))
                    delivered += 1
                except Exception:  # EventBridge's failure to deliver never touches the execution
                    LOG.warning("status change event of %s not delivered to %s", execution.exec_arn, target["Arn"])
    return delivered


def patches(before: list[Patch], request_lock: threading.RLock | None = None) -> list[Patch]:
    """`request_lock`: the embedded server's; held while the event is delivered, as a request would."""
    start = current(before, parser_execution.Execution, "start")
    terminated = current(before, parser_execution.BaseExecutionWorkerCommunication, "terminated")

    def started(self: Any) -> None:
        if self.exec_worker is None and _sends_events(self):
            deliver(self, RUNNING, request_lock)
        start(self)

    def ended(self: Any) -> None:
        terminated(self)
        execution = self.execution
        if execution.exec_status is not None and _sends_events(execution):
            deliver(execution, _text(execution.exec_status), request_lock)

    return [
        (parser_execution.Execution, "start", started),
        (parser_execution.BaseExecutionWorkerCommunication, "terminated", ended),
    ]
