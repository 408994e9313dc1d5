"""Workflow variables (`Assign`) in the embedded Step Functions as AWS records them.

- assigned_variables_json: a state's `assignedVariables` in its StateExited (and TaskStateExited)
  history event are the values' JSON text (`"\\"he said \\\\\\"hi\\\\\\"\\""`); moto wraps a string in
  quotes without escaping it, so a string with a quote or a backslash was not JSON.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_StateExitedEventDetails.html
  (LocalStack's recordings of AWS: tests/aws/services/stepfunctions/v2/assign/*.snapshot.json)
"""

from __future__ import annotations

from typing import Any

from moto.stepfunctions.parser.asl.eval.variable_store import VariableStore
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

from onceflow.local.engine.shape import Need, need

Patch = tuple[Any, str, Any]


def moto_needs() -> list[Need]:
    return [
        need(VariableStore, "get_assigned_variables"),  # reads VariableStore._declaration_tracing
        need(VariableStore, "get", "variable_identifier"),
    ]


def patches() -> list[Patch]:
    return [(VariableStore, "get_assigned_variables", _assigned_variables)]


def _assigned_variables(self: VariableStore) -> dict[str, str]:
    return {name: to_json_str(self.get(name), separators=(",", ":")) for name in sorted(self._declaration_tracing)}
