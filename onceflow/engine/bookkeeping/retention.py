"""A bounded memory budget for long local runs: what moto keeps of finished work, pruned.

moto keeps, for as long as the process lives:
- every execution's evaluation environment (its history events, context object, state inputs and
  outputs) — on AWS the history lives in the service, and a local run of thousands of events
  holds them all in this process;
- every finished worker thread, in a module-level list (TMP_THREADS) that nothing reads;
- every model instance it ever made (each SQS message and its received copies, each DynamoDB item
  version...), in a registry kept only for its /moto-api/data.json dashboard.
- every notification each SNS topic ever sent (`Topic.sent_notifications`), kept only for tests
  that inspect moto's backend (issue 21: with the above, what a long run grew by per event).

`Retention(max_histories)` keeps the histories of `max_histories` finished executions per state
machine, those that ended FAILED, TIMED_OUT or ABORTED first (newest first), then the newest of the
others (onceflow.ops.executions.histories_kept: what an on-call engineer opens first, and what
`onceflow trace` reads the listing by), and prunes the rest: a pruned execution keeps its name, status, input, output and
dates (ListExecutions, DescribeExecution, StartExecution's ExecutionAlreadyExists answer as
before); GetExecutionHistory answers with no events. Its input and output are kept as compact
JSON text instead of moto's parsed values and parsed again when read (the pipeline's: about 5 KB
parsed, 1 KB as text, measured with tracemalloc: 4 KB less per pruned execution); its inputDetails and outputDetails, `{"included": true}` dicts made per execution, are
made when read (issue 21: what a long run still grew by per execution). Runs every `every` requests, under the
embedded server's request lock (it is called from inside it), in time proportional to the
executions started since the last run and those still kept. Tests that read every execution's history run without it
(EmbeddedAws(history_budget=None), the default).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from moto.core import model_instances
from moto.sns.models import Topic, sns_backends
from moto.stepfunctions.parser import utils as parser_utils
from moto.stepfunctions.parser.backend import execution as parser_execution
from moto.stepfunctions.parser.backend import execution_worker as parser_execution_worker
from moto.stepfunctions.parser.models import stepfunctions_parser_backends

from onceflow.ops.executions import histories_kept

# A long local run (`onceflow start`, the demo, the benchmarks): about 0.04 MB per kept history
# (benchmarks/trace_status.py --memory-only measured 0.039 MB).
LONG_RUN_HISTORY_BUDGET = 1000


Patch = tuple[Any, str, Any]
_SETTLED = "_onceflow_settled"
_AS_TEXT = ("input_data", "output")  # Execution attributes a pruned execution keeps as JSON text
_INCLUDED = ("input_details", "output_details")  # {"included": True} unless moto says otherwise


def moto_needs() -> list[Any]:
    """What pruning reads, replaces or patches in the pinned moto (checked by engine/moto_shape.py)."""
    from onceflow.engine.moto_shape import need

    return [
        need(model_instances, "reset_model_data"),
        need(parser_utils, "TMP_THREADS"),
        need(parser_execution.Execution, "to_history_output"),
        need(parser_execution.Execution, "stop", "stop_date", "error", "cause"),
        need(parser_execution.BaseExecutionWorkerCommunication, "terminated"),
        need(parser_execution.Execution, "__init__", "input_data"),  # input_data, output, *_details attributes
        need(parser_execution_worker.ExecutionWorker, "stop", "stop_date", "error", "cause"),
        need(stepfunctions_parser_backends, "values"),
        need(sns_backends, "values"),
        need(Topic, "__init__", "name"),  # Topic.sent_notifications: a list of every notification sent
    ]


def patches() -> list[Patch]:
    """Mark an execution settled once moto has copied its outcome out of the environment: its
    status is set before its output is read (BaseExecutionWorkerCommunication), so a status alone
    does not say the environment may go."""
    original = parser_execution.BaseExecutionWorkerCommunication.terminated

    def terminated(self: Any) -> None:
        original(self)
        setattr(self.execution, _SETTLED, True)

    return [
        (parser_execution.BaseExecutionWorkerCommunication, "terminated", terminated),
        *((parser_execution.Execution, name, _kept_as_text(name)) for name in _AS_TEXT),
        *((parser_execution.Execution, name, _made_when_read(name)) for name in _INCLUDED),
    ]


def _text_key(name: str) -> str:
    return f"_onceflow_{name}_text"


def _kept_as_text(name: str) -> property:
    """The attribute as moto sets and reads it; once `_compact` ran, kept as JSON text and parsed
    again on each read (a value is compacted only if it round-trips exactly)."""
    text_key = _text_key(name)

    def get(execution: Any) -> Any:
        values = execution.__dict__
        if name in values or text_key not in values:
            return values.get(name)
        if _answering_text.execution is execution and name == "output":
            return values[text_key]
        return json.loads(values[text_key])

    def set_(execution: Any, value: Any) -> None:
        execution.__dict__[name] = value
        execution.__dict__.pop(text_key, None)

    return property(get, set_)


class _AnsweringText(threading.local):
    execution: Any = None


_answering_text = _AnsweringText()


@contextmanager
def output_as_text(execution: Any) -> Iterator[None]:
    """While moto describes a pruned execution in this thread, its `output` reads as the kept text,
    not parsed (moto's DescribeExecution then answers a text output as it is; it read and parsed it
    three times, then wrote it again, for an answer stepfunctions/strict.py replaces with this text)."""
    _answering_text.execution = execution
    try:
        yield
    finally:
        _answering_text.execution = None


def compact_output(execution: Any) -> str | None:
    """A pruned execution's output as the compact JSON text it is kept as, when that is also what
    moto's to_json_str writes for it (ASCII: to_json_str escapes the rest); None otherwise."""
    text = execution.__dict__.get(_text_key("output"))
    if text is None or "output" in execution.__dict__ or not text.isascii():
        return None
    return text


def _made_when_read(name: str) -> property:
    """moto's `{"included": True}` per execution: none kept once compacted, a fresh one per read."""

    def get(execution: Any) -> Any:
        return execution.__dict__.get(name, {"included": True})

    def set_(execution: Any, value: Any) -> None:
        execution.__dict__[name] = value

    return property(get, set_)


def _compact(execution: Any) -> None:
    values = execution.__dict__
    for name in _AS_TEXT:
        value = values.get(name)
        if value is None or isinstance(value, bool | int | float | str):
            continue  # nothing to gain
        try:
            text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):
            continue  # not plain JSON (moto's own encoder writes it): kept as it is
        if json.loads(text) == value:
            values[_text_key(name)] = text
            del values[name]
    for name in _INCLUDED:
        if values.get(name) == {"included": True}:
            del values[name]


class _NoRecords:
    """A pruned execution's map runs and callbacks: none (it has finished)."""

    def get(self, *args: Any, **kwargs: Any) -> None:
        return None

    def get_all(self) -> list[Any]:
        return []

    def heartbeat(self, *args: Any, **kwargs: Any) -> bool:
        return False

    def notify(self, *args: Any, **kwargs: Any) -> bool:
        return False


class _PrunedEventManager:
    def get_event_history(self) -> list[Any]:
        return []


class _PrunedEnvironment:
    """What moto's backend reads from a finished execution's environment (see models.py), emptied."""

    def __init__(self) -> None:
        self.event_manager = _PrunedEventManager()
        self.map_run_record_pool_manager = _NoRecords()
        self.callback_pool_manager = _NoRecords()

    def set_stop(self, *args: Any, **kwargs: Any) -> None:
        pass  # stopping a finished execution changes nothing


class _PrunedWorker:
    def __init__(self) -> None:
        self.env = _PrunedEnvironment()

    def stop(self, *args: Any, **kwargs: Any) -> None:
        pass


_PRUNED = _PrunedWorker()


@dataclass
class Retention:
    max_histories: int
    every: int = 200
    pruned: int = 0
    _requests: int = 0
    # state machine ARN -> how many of its executions (in start order) were taken into `_live` already
    _cursor: dict[str, int] = field(default_factory=dict)
    # state machine ARN -> its executions not pruned (running, or kept), in start order
    _live: dict[str, list[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.max_histories < 0:
            raise ValueError("max_histories must be 0 or more")

    def after_request(self) -> None:
        self._requests += 1
        if self._requests % self.every == 0:
            self.prune()

    def reset(self) -> None:
        """After the backends were reset: start counting again."""
        self._cursor.clear()
        self._live.clear()

    def prune(self) -> int:
        """Prune what is beyond the budget; call with the request lock held. Returns how many."""
        released = 0
        for state_machine in _state_machines():
            executions = state_machine.executions
            live = self._live.setdefault(state_machine.arn, [])
            live.extend(executions[self._cursor.get(state_machine.arn, 0) :])
            self._cursor[state_machine.arn] = len(executions)
            finished = [execution for execution in live if _finished(execution)]
            kept = histories_kept([_status(execution) for execution in finished], self.max_histories)
            for position, execution in enumerate(finished):
                if position not in kept:
                    released += _release(execution)
            still_kept = {id(finished[position]) for position in kept}
            self._live[state_machine.arn] = [e for e in live if not _finished(e) or id(e) in still_kept]
        parser_utils.TMP_THREADS[:] = [thread for thread in parser_utils.TMP_THREADS if thread.is_alive()]
        model_instances.reset_model_data()
        for topic in _topics():
            topic.sent_notifications.clear()
        self.pruned += released
        return released


def _state_machines() -> list[Any]:
    machines = []
    for account in list(stepfunctions_parser_backends.values()):
        for backend in list(account.values()):
            machines.extend(backend.state_machines)
    return machines


def _topics() -> list[Any]:
    return [
        topic for account in list(sns_backends.values()) for b in list(account.values()) for topic in b.topics.values()
    ]


def _status(execution: Any) -> str:
    status = execution.exec_status
    return str(getattr(status, "value", status))


def _finished(execution: Any) -> bool:
    return getattr(execution, _SETTLED, False)


def _release(execution: Any) -> int:
    if execution.exec_worker is None or execution.exec_worker is _PRUNED:
        return 0
    execution.exec_worker = _PRUNED
    _compact(execution)
    return 1
