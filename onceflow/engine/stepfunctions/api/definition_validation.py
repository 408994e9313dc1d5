"""State machine definitions checked as AWS checks them, with AWS's diagnostics, where moto 5.2.5
checks less or answers in its own words:

- validate_action: ValidateStateMachineDefinition (moto: NotImplementedError, a 500) answers
  `result` OK or FAIL, `diagnostics` (code, message, location, severity ERROR) and `truncated`.
  https://docs.aws.amazon.com/step-functions/latest/apireference/API_ValidateStateMachineDefinition.html
- CreateStateMachine and UpdateStateMachine refuse a definition with a diagnostic with
  InvalidDefinition "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: <message> at
  <location>'" (moto accepted an EXPRESS machine with `.waitForTaskToken`, `.sync` or an activity,
  and worded the rest as Python errors).

- nested_query_language: a state may declare `QueryLanguage: JSONPath` inside a JSONata Map or
  Parallel of a JSONPath machine (AWS refuses the downgrade only "if set to 'JSONata' for whole
  state machine"; LocalStack's test_sfn_api_validation.snapshot.json, VALID_QUERY_LANGUAGE_PASS is
  OK); moto's parser refused it ("Cannot downgrade from JSONata context to a JSONPath context").

The checks are the ones AWS's recordings show (LocalStack's test_sfn_api_validation.snapshot.json,
test_sfn_api_express.snapshot.json (test_illegal_callbacks, test_illegal_activity_task),
test_sfn_api.snapshot.json (test_create_delete_invalid_sm), scenarios/test_base_scenarios.snapshot.json
(Wait timestamps: RFC 3339 in shape and value, `{% %}` only in a JSONata state; empty Parallel
branches)), worded as recorded; a definition that passes them
is then parsed by moto's parser, whose refusal is reported as SCHEMA_VALIDATION_FAILED too.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from moto.stepfunctions.parser.asl.component.common.query_language import QueryLanguage, QueryLanguageMode
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.api.jackson_errors import syntax_error

Patch = tuple[Any, str, Any]
SCHEMA = "SCHEMA_VALIDATION_FAILED"
STATE_TYPES = ("Task", "Wait", "Pass", "Succeed", "Fail", "Choice", "Parallel", "Map")
# The optimised DynamoDB integration's actions (https://docs.aws.amazon.com/step-functions/latest/dg/connect-ddb.html);
# any other is refused as AWS refuses it (LocalStack's services/test_dynamodb_task_service.snapshot.json,
# test_invalid_integration: dynamodb:query).
DYNAMODB_ACTIONS = frozenset({"getItem", "putItem", "deleteItem", "updateItem"})
_OPTIMISED_DYNAMODB = re.compile(r"arn:[^:]+:states:::dynamodb:([A-Za-z]+)$")
# RFC 3339 date-time (Wait's Timestamp): date, "T", time, optional fraction, "Z" or an offset.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@dataclass(frozen=True)
class Diagnostic:
    code: str
    message: str
    location: str | None = None

    def as_api(self) -> dict[str, str]:
        answer = {"code": self.code, "message": self.message, "severity": "ERROR"}
        if self.location is not None:
            answer["location"] = self.location
        return answer

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" + (f" at {self.location}" if self.location is not None else "")


def moto_needs() -> list[Need]:
    return [
        need(Preprocessor, "_open_query_language_scope", "parse_tree"),
        need(AmazonStateLanguageParser, "parse"),
        need(StepFunctionResponse, "_get_param"),
        need(StepFunctionsParserBackend, "_validate_definition"),
    ]


def patches() -> list[Patch]:
    return [(StepFunctionResponse, "validate_state_machine_definition", _validate_action), *nested_query_language()]


def nested_query_language() -> list[Patch]:
    original = Preprocessor._open_query_language_scope

    def _open_query_language_scope(self: Preprocessor, parse_tree: Any) -> None:
        try:
            original(self, parse_tree)
        except ValueError as error:
            scopes = self._query_language_per_scope
            machine_wide = scopes[0].query_language_mode if scopes else None
            if not str(error).startswith("Cannot downgrade") or machine_wide != QueryLanguageMode.JSONPath:
                raise
            # Only a state that declares JSONPath gets here (an undeclared one inherits JSONata).
            scopes.append(QueryLanguage(QueryLanguageMode.JSONPath))

    return [(Preprocessor, "_open_query_language_scope", _open_query_language_scope)]


def diagnose(definition: str, machine_type: str | None = "STANDARD") -> list[Diagnostic]:
    """AWS's diagnostics for `definition` as a machine of `machine_type` (empty: valid)."""
    found = schema_diagnostics(definition, machine_type)
    if found:
        return found
    try:
        AmazonStateLanguageParser.parse(definition)
    except Exception as error:  # moto's parser refuses it: its own words, under AWS's code
        return [Diagnostic(SCHEMA, str(error) or type(error).__name__)]
    return []


def schema_diagnostics(definition: str, machine_type: str | None) -> list[Diagnostic]:
    """The checks recorded from AWS (without moto's parser: CreateStateMachine runs that itself)."""
    if not definition.strip():
        return [Diagnostic(SCHEMA, "Definition must be a valid JSON object")]
    try:
        document = json.loads(definition)
    except json.JSONDecodeError as error:
        found = syntax_error(definition, error)
        where = found.location(definition)
        return [Diagnostic("INVALID_JSON_DESCRIPTION", f"{found.message}\n at {where}", where)]
    if not isinstance(document, dict):
        return [Diagnostic(SCHEMA, "Definition must be a valid JSON object")]
    missing = [field for field in ("States", "StartAt") if field not in document]
    if missing:
        return [Diagnostic(SCHEMA, f"These fields are required: [{', '.join(missing)}]", "/")]
    return list(_state_diagnostics(document, "", document.get("QueryLanguage"), machine_type == "EXPRESS"))


def refusal(definition: str, machine_type: str | None) -> str | None:
    """The InvalidDefinition message CreateStateMachine/UpdateStateMachine answer, or None."""
    found = [d for d in schema_diagnostics(definition, machine_type) if d.location is not None]
    if not found:
        return None
    return f"Invalid State Machine Definition: '{', '.join(str(d) for d in found)}'"


def rfc3339(text: str) -> bool:
    """An RFC 3339 date-time: the shape, and a real date and time (no month 13, no hour 25)."""
    if not _RFC3339.match(text):
        return False
    try:
        datetime.datetime.fromisoformat(text[:19])
    except ValueError:
        return False
    return True


def _states(container: dict[str, Any], path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    states = container.get("States")
    if isinstance(states, dict):
        for name, state in states.items():
            if isinstance(state, dict):
                yield name, f"{path}/States/{name}", state


def _state_diagnostics(container: dict[str, Any], path: str, language: Any, express: bool) -> Iterator[Diagnostic]:
    for _name, where, state in _states(container, path):
        state_type = state.get("Type")
        if state_type not in STATE_TYPES:
            yield Diagnostic(
                SCHEMA, f"The field 'Type' should have one of these values: [{', '.join(STATE_TYPES)}]", f"{where}/Type"
            )
            continue
        if language == "JSONata" and state.get("QueryLanguage") == "JSONPath":
            yield Diagnostic(
                SCHEMA, "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine", where
            )
        if state_type == "Task":
            yield from _task_diagnostics(state, where, express)
        timestamp = state.get("Timestamp") if state_type == "Wait" else None
        jsonata = (state.get("QueryLanguage") or language) == "JSONata"
        if isinstance(timestamp, str) and not (jsonata and timestamp.startswith("{%")) and not rfc3339(timestamp):
            yield Diagnostic(SCHEMA, "String does not match RFC3339 timestamp", f"{where}/Timestamp")
        if state_type == "Parallel":
            branches = state.get("Branches")
            if isinstance(branches, list) and not branches:
                yield Diagnostic(SCHEMA, "Value cannot be empty", f"{where}/Branches")
            for index, branch in enumerate(branches if isinstance(branches, list) else []):
                if isinstance(branch, dict):
                    yield from _state_diagnostics(branch, f"{where}/Branches[{index}]", language, express)
        if state_type == "Map":
            for key in ("ItemProcessor", "Iterator"):
                if isinstance(state.get(key), dict):
                    yield from _state_diagnostics(state[key], f"{where}/{key}", language, express)


def _task_diagnostics(state: dict[str, Any], where: str, express: bool) -> Iterator[Diagnostic]:
    resource = state.get("Resource")
    credentials = state.get("Credentials")
    if isinstance(credentials, dict) and not any(key in credentials for key in ("RoleArn", "RoleArn.$")):
        yield Diagnostic(SCHEMA, "The field 'RoleArn' is required but was missing", f"{where}/Credentials")
    optimised = _OPTIMISED_DYNAMODB.match(resource) if isinstance(resource, str) else None
    if optimised and optimised.group(1) not in DYNAMODB_ACTIONS:
        yield Diagnostic(
            SCHEMA,
            f"The resource provided {resource} is not recognized. The value is not a valid resource ARN, "
            "or the resource is not available in this region.",
            f"{where}/Resource",
        )
    if not express or not isinstance(resource, str):
        return
    if resource.endswith(".waitForTaskToken"):
        # AWS's message ends with a space (so its InvalidDefinition text has two before "at").
        yield Diagnostic(
            SCHEMA,
            "Express state machine does not support '.waitForTaskToken' service integration ",
            f"{where}/Resource",
        )
    elif re.search(r"\.sync(:\d+)?$", resource):
        yield Diagnostic(
            SCHEMA, "Express state machine does not support '.sync' service integration", f"{where}/Resource"
        )
    elif re.match(r"arn:[^:]+:states:[^:]*:[^:]*:activity:", resource):
        yield Diagnostic(SCHEMA, "Express state machine does not support Activity ARN", f"{where}/Resource")


def _validate_action(self: StepFunctionResponse) -> Any:
    from moto.core.responses import ActionResult

    found = diagnose(self._get_param("definition") or "", self._get_param("type") or "STANDARD")
    limit = self._get_param("maxResults") or 100
    return ActionResult(
        {
            "result": "FAIL" if found else "OK",
            "diagnostics": [d.as_api() for d in found[:limit]],
            "truncated": len(found) > limit,
        }
    )
