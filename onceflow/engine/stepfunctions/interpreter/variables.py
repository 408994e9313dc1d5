"""Workflow variables (`Assign`) in the embedded Step Functions as AWS records them.

- assigned_variables_json: a state's `assignedVariables` in its StateExited (and TaskStateExited)
  history event are the values' JSON text (`"\\"he said \\\\\\"hi\\\\\\"\\""`); moto wraps a string in
  quotes without escaping it, so a string with a quote or a backslash was not JSON.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StateExitedEventDetails.html
  (LocalStack's recordings of AWS: tests/aws/services/stepfunctions/v2/assign/*.snapshot.json)
- variable_references: DescribeStateMachine (and DescribeStateMachineForExecution) answer
  `variableReferences`, the variables each state reads (its JSONPath `$name` references and
  intrinsic functions' arguments; absent when none), found by moto's own static analyser, which
  moto never calls. Names sorted, as LocalStack's recordings of AWS show
  (test_sfn_api_variable_references.snapshot.json).
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachine.html
"""

from __future__ import annotations

import functools
from typing import Any

from moto.stepfunctions.parser.asl.eval.variable_store import VariableStore
from moto.stepfunctions.parser.asl.static_analyser.variable_references_static_analyser import (
    VariableReferencesStaticAnalyser,
)
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(VariableStore, "get_assigned_variables"),  # reads VariableStore._declaration_tracing
        need(VariableStore, "get", "variable_identifier"),
        need(VariableReferencesStaticAnalyser, "process_and_get", "definition"),
        need(StepFunctionResponse, "_describe_state_machine", "state_machine_arn"),
    ]


def patches() -> list[Patch]:
    return [
        (VariableStore, "get_assigned_variables", _assigned_variables),
        (
            StepFunctionResponse,
            "_describe_state_machine",
            _with_variable_references(StepFunctionResponse._describe_state_machine),
        ),
    ]


def _assigned_variables(self: VariableStore) -> dict[str, str]:
    return {name: to_json_str(self.get(name), separators=(",", ":")) for name in sorted(self._declaration_tracing)}


@functools.lru_cache(maxsize=256)
def variable_references(definition: str) -> dict[str, list[str]]:
    """The variables each state of `definition` reads, by state name (states that read none left out)."""
    found = VariableReferencesStaticAnalyser.process_and_get(definition)
    return {state: sorted(names) for state, names in found.items() if names}


def _with_variable_references(original: Any) -> Any:
    def _describe_state_machine(self: StepFunctionResponse, state_machine_arn: str) -> Any:
        result = original(self, state_machine_arn)
        response = getattr(result, "result", None)
        if isinstance(response, dict) and isinstance(response.get("definition"), str):
            try:
                references = variable_references(response["definition"])
            except Exception:  # a definition the analyser cannot read: CreateStateMachine's parser took it
                references = {}
            if references:
                response["variableReferences"] = references
        return result

    return _describe_state_machine
