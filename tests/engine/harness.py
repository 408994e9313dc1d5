"""A bare account on the embedded engine for conformance tests: state machines of the tests' own
definition, run with plain boto3 and waited for with a bound."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

import boto3

from onceflow.engine import ACCOUNT_ID, REGION, EmbeddedAws
from onceflow.ops.executions import ExecutionResult, wait_for

ROLE_ARN = f"arn:aws:iam::{ACCOUNT_ID}:role/conformance"


@dataclass
class Account:
    """Clients on the embedded endpoint, and helpers to run a definition."""

    aws: EmbeddedAws

    def client(self, service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=self.aws.endpoint_url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    @property
    def sfn(self) -> Any:
        return self.client("stepfunctions")

    def state_machine(self, definition: dict[str, Any] | str, kind: str = "STANDARD") -> str:
        text = definition if isinstance(definition, str) else json.dumps(definition)
        return self.sfn.create_state_machine(
            name=f"conformance-{uuid.uuid4().hex[:8]}", definition=text, roleArn=ROLE_ARN, type=kind
        )["stateMachineArn"]

    def start(self, state_machine_arn: str, execution_input: Any = None, raw_input: str | None = None) -> str:
        text = raw_input if raw_input is not None else _compact({} if execution_input is None else execution_input)
        return self.sfn.start_execution(
            stateMachineArn=state_machine_arn, name=f"run-{uuid.uuid4().hex[:8]}", input=text
        )["executionArn"]

    def run(self, definition: dict[str, Any] | str, execution_input: Any = None) -> ExecutionResult:
        arn = self.start(self.state_machine(definition), execution_input)
        return wait_for(self.sfn, arn, timeout=30)

    def describe(self, execution_arn: str) -> dict[str, Any]:
        return self.sfn.describe_execution(executionArn=execution_arn)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def single_state(state: dict[str, Any], name: str = "Only") -> dict[str, Any]:
    return {"StartAt": name, "States": {name: {**state, "End": True} if "Next" not in state else state}}


def failed_event(result: ExecutionResult) -> dict[str, Any]:
    [event] = [e for e in result.history if e["type"] == "ExecutionFailed"]
    return event["executionFailedEventDetails"]
