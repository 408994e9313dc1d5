"""What the template says about cost: the starter's memory and architecture, the batch size, the
state machine's type and logging level. Read from the translated template; parameter references
are resolved by the translator's own resolver (defaults, then the given overrides)."""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samtranslator.intrinsics.resolver import IntrinsicsResolver

from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.local.template import LocalPlan, plan_local_stack, translate_with_inline_definitions


@dataclass(frozen=True)
class CostSettings:
    memory_mb: int
    architecture: str
    batch_size: int
    state_machine_type: str
    log_level: str
    include_execution_data: bool
    source_queue_type: str = "STANDARD"  # FIFO: FIFO request prices; a STANDARD workflow is waited for

    @property
    def fifo(self) -> bool:
        return self.source_queue_type == "FIFO"


@dataclass(frozen=True)
class ResolvedTemplate:
    """The translated template's starter, state machine and event source mappings, parameter
    references resolved; `values` are the parameters in force (defaults, then the overrides)."""

    plan: LocalPlan
    values: dict[str, Any]
    cloudformation: dict[str, Any]
    function: dict[str, Any]
    machine: dict[str, Any]
    mappings: list[dict[str, Any]]


@functools.lru_cache(maxsize=8)
def _translated(template_path: Path, text: str) -> dict[str, Any]:
    return translate_with_inline_definitions(template_path)


def resolve_template(template_path: Path, parameters: dict[str, str] | None = None) -> ResolvedTemplate:
    plan = plan_local_stack("onceflow-cost", REGION, ACCOUNT_ID, parameters, template_path)
    # Translated once per template text (the slow part); the resolver below changes what it is given.
    cloudformation = copy.deepcopy(_translated(template_path, template_path.read_text()))
    declared = cloudformation.get("Parameters", {})
    values: dict[str, Any] = {name: spec["Default"] for name, spec in declared.items() if "Default" in spec}
    values.update(parameters or {})
    resolver = IntrinsicsResolver(values)
    resources = cloudformation["Resources"]
    return ResolvedTemplate(
        plan=plan,
        values=values,
        cloudformation=cloudformation,
        function=resolver.resolve_parameter_refs(resources[plan.function.logical_id]["Properties"]),
        machine=resolver.resolve_parameter_refs(resources[plan.state_machine.logical_id]["Properties"]),
        mappings=[
            resolver.resolve_parameter_refs(resource["Properties"])
            for resource in resources.values()
            if resource["Type"] == "AWS::Lambda::EventSourceMapping"
        ],
    )


def read_settings(template_path: Path, parameters: dict[str, str] | None = None) -> CostSettings:
    resolved = resolve_template(template_path, parameters)
    function, machine, mappings = resolved.function, resolved.machine, resolved.mappings
    logging = machine.get("LoggingConfiguration", {})
    return CostSettings(
        memory_mb=int(function.get("MemorySize", 128)),
        architecture=str((function.get("Architectures") or ["x86_64"])[0]),
        batch_size=int(mappings[0].get("BatchSize", 10)) if mappings else 10,
        state_machine_type=str(machine.get("StateMachineType", "STANDARD")),
        log_level=str(logging.get("Level", "OFF")),
        include_execution_data=str(logging.get("IncludeExecutionData", False)).lower() == "true",
        source_queue_type=str(resolved.values.get("SourceQueueType", "STANDARD")),
    )
