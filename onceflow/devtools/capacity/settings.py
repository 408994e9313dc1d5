"""What the template says about capacity: mode, source queue type, batching, the event source's
MaximumConcurrency, the starter's timeout and records handled at once, the workflow's states.
Parameter references are resolved as the cost model resolves them (cost/settings.py); the few
`Fn::If`s on the template's conditions are evaluated here."""

from __future__ import annotations

import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from onceflow.devtools.cost.settings import ResolvedTemplate, resolve_template


@dataclass(frozen=True)
class CapacitySettings:
    mode: str  # STANDARD | EXPRESS
    fifo: bool  # the source queue is a FIFO queue
    batch_size: int
    batching_window_seconds: int
    maximum_concurrency: int
    max_receive_count: int
    visibility_timeout: int
    starter_timeout: int
    max_concurrent_records: int
    definition: dict[str, Any]  # the ASL

    @property
    def label(self) -> str:
        return f"{self.mode}{' FIFO' if self.fifo else ''}"


_NO_VALUE = object()  # Ref AWS::NoValue: the property is left out


def _condition(name: str, conditions: dict[str, Any], values: dict[str, Any]) -> bool:
    return bool(_evaluate(conditions[name], conditions, values))


def _evaluate(node: Any, conditions: dict[str, Any], values: dict[str, Any]) -> Any:
    """Fn::Equals/Not/And/Or/If and Ref/Condition over parameter values: what the template's conditions use."""
    if isinstance(node, list):
        return [_evaluate(item, conditions, values) for item in node]
    if not isinstance(node, dict):
        return node
    if len(node) != 1 or not next(iter(node)).startswith(("Fn::", "Ref", "Condition")):
        evaluated = {key: _evaluate(item, conditions, values) for key, item in node.items()}
        return {key: item for key, item in evaluated.items() if item is not _NO_VALUE}
    ((key, argument),) = node.items()
    if key == "Ref":
        return _NO_VALUE if argument == "AWS::NoValue" else values.get(argument, node)
    if key == "Condition":
        return _condition(argument, conditions, values)
    if key == "Fn::Equals":
        left, right = _evaluate(argument, conditions, values)
        return str(left) == str(right)
    if key == "Fn::Not":
        return not _evaluate(argument[0], conditions, values)
    if key == "Fn::And":
        return all(_evaluate(argument, conditions, values))
    if key == "Fn::Or":
        return any(_evaluate(argument, conditions, values))
    if key == "Fn::If":
        name, when_true, when_false = argument
        return _evaluate(when_true if _condition(name, conditions, values) else when_false, conditions, values)
    if key == "Fn::Sub" or key == "Fn::GetAtt":
        return node
    return node


def _default_records_at_once(code_dir: Path, mode: str, fifo: bool) -> int:
    """The starter's own default (functions/starter/starter/settings.py), read from its code: records
    at once, or with a FIFO source message groups at once."""
    if str(code_dir) not in sys.path:
        sys.path.insert(0, str(code_dir))
    module = importlib.import_module("starter.settings")
    if fifo:
        return int(module.DEFAULT_MAX_CONCURRENT_GROUPS)
    return int(module.DEFAULT_MAX_CONCURRENT_RECORDS[mode])


def _truthy(value: Any) -> bool:
    return str(value).lower() == "true"


def from_resolved(resolved: ResolvedTemplate, template_path: Path) -> CapacitySettings:
    cloudformation = resolved.cloudformation
    conditions = cloudformation.get("Conditions", {})
    values = resolved.values

    def value(node: Any) -> Any:
        return _evaluate(node, conditions, values)

    function = value(resolved.function)
    machine = value(resolved.machine)
    mapping = value(resolved.mappings[0]) if resolved.mappings else {}
    queue_id = resolved.plan.function.sqs_queue_logical_id
    queue = value(cloudformation["Resources"][queue_id]["Properties"]) if queue_id else {}
    mode = str(machine.get("StateMachineType", "STANDARD"))
    environment = function.get("Environment", {}).get("Variables", {})
    records_at_once = environment.get("MAX_CONCURRENT_RECORDS")
    definition_path = resolved.plan.state_machine.definition_path
    redrive = queue.get("RedrivePolicy", {})
    fifo = _truthy(queue.get("FifoQueue", False))
    return CapacitySettings(
        mode=mode,
        fifo=fifo,
        batch_size=int(mapping.get("BatchSize", 10)),
        batching_window_seconds=int(mapping.get("MaximumBatchingWindowInSeconds", 0)),
        maximum_concurrency=int((mapping.get("ScalingConfig") or {}).get("MaximumConcurrency", 1000)),
        max_receive_count=int(redrive.get("maxReceiveCount", 0)) if isinstance(redrive, dict) else 0,
        visibility_timeout=int(queue.get("VisibilityTimeout", 30)),
        starter_timeout=int(function.get("Timeout", 3)),
        max_concurrent_records=int(records_at_once)
        if records_at_once
        else _default_records_at_once(resolved.plan.function.code_dir, mode, fifo),
        definition=json.loads(definition_path.read_text()),
    )


def read_capacity_settings(template_path: Path, parameters: dict[str, str] | None = None) -> CapacitySettings:
    return from_resolved(resolve_template(template_path, parameters), template_path)
