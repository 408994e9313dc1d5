"""What the template says about cost: the starter's memory and architecture, the batch size, the
state machine's type and logging level. Read from the translated template; parameter references
are resolved by the translator's own resolver (defaults, then the given overrides)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samtranslator.intrinsics.resolver import IntrinsicsResolver

from onceflow.local.embedded import ACCOUNT_ID, REGION
from onceflow.local.template import plan_local_stack, translate_with_inline_definitions


@dataclass(frozen=True)
class CostSettings:
    memory_mb: int
    architecture: str
    batch_size: int
    state_machine_type: str
    log_level: str
    include_execution_data: bool


def read_settings(template_path: Path, parameters: dict[str, str] | None = None) -> CostSettings:
    plan = plan_local_stack("onceflow-cost", REGION, ACCOUNT_ID, parameters, template_path)
    cloudformation = translate_with_inline_definitions(template_path)
    declared = cloudformation.get("Parameters", {})
    values: dict[str, Any] = {name: spec["Default"] for name, spec in declared.items() if "Default" in spec}
    values.update(parameters or {})
    resolver = IntrinsicsResolver(values)
    resources = cloudformation["Resources"]
    function = resolver.resolve_parameter_refs(resources[plan.function.logical_id]["Properties"])
    machine = resolver.resolve_parameter_refs(resources[plan.state_machine.logical_id]["Properties"])
    mappings = [
        resolver.resolve_parameter_refs(resource["Properties"])
        for resource in resources.values()
        if resource["Type"] == "AWS::Lambda::EventSourceMapping"
    ]
    logging = machine.get("LoggingConfiguration", {})
    return CostSettings(
        memory_mb=int(function.get("MemorySize", 128)),
        architecture=str((function.get("Architectures") or ["x86_64"])[0]),
        batch_size=int(mappings[0].get("BatchSize", 10)) if mappings else 10,
        state_machine_type=str(machine.get("StateMachineType", "STANDARD")),
        log_level=str(logging.get("Level", "OFF")),
        include_execution_data=str(logging.get("IncludeExecutionData", False)).lower() == "true",
    )
