"""What one TestState call asks for, checked as the API checks it (botocore's service model for
the members; the messages LocalStack's parity tests recorded against AWS), and a mocked result
checked against the output shape of the API the Task calls (`mock.fieldValidationMode`).

https://docs.aws.amazon.com/step-functions/latest/apireference/API_TestState.html
https://docs.aws.amazon.com/step-functions/latest/apireference/API_MockInput.html
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Final

from botocore.model import ListShape, MapShape, Shape, StructureShape
from moto.core.exceptions import AWSError
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service import (
    StateTaskService,
)
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser, ASLParserException

from onceflow.engine.bookkeeping.service_models import service_model
from onceflow.engine.stepfunctions.api import definition_validation


class InvalidDefinition(AWSError):
    TYPE = "InvalidDefinition"


class InvalidExecutionInput(AWSError):
    TYPE = "InvalidExecutionInput"


class ValidationException(AWSError):
    TYPE = "ValidationException"


INSPECTION_LEVELS: Final = ("INFO", "DEBUG", "TRACE")
FIELD_VALIDATION_MODES: Final = ("STRICT", "PRESENT", "NONE")
# Every state type; Map and Parallel only with a mock (their mocked result stands for the iterations).
_TESTABLE_TYPES: Final = {"Task", "Pass", "Wait", "Choice", "Succeed", "Fail", "Map", "Parallel"}
_STRUCTURED_TYPES: Final = {"Map", "Parallel"}
# The name AWS gives a state sent alone (its $$.State.Name, and the path in its schema errors).
BARE_STATE_NAME: Final = "StateName"
_MOCKABLE_TYPES: Final = {"Task", "Map", "Parallel"}
_MOCK_REJECTING_TYPES: Final = {"Pass", "Fail", "Succeed"}
_MOCK_MAX_CHARS: Final = 262144
_NO_MOCK_RESULT: Final = object()  # `null` is a valid mocked result


@dataclass(frozen=True)
class TestStateRequest:
    """One TestState call, checked as the API checks it."""

    __test__ = False  # not a pytest test class

    state: dict[str, Any]
    state_name: str
    state_definition: str
    role_arn: str | None
    input_value: Any
    inspection_level: str
    variables: dict[str, Any]
    mock_result: Any = _NO_MOCK_RESULT
    mock_text: str | None = None  # the mocked result as the caller wrote it (AWS passes it on unchanged)
    mock_error: dict[str, str] | None = None
    field_validation_mode: str = "STRICT"
    retrier_retry_count: int = 0
    map_iteration_failure_count: int = 0
    context: dict[str, Any] | None = None

    @property
    def mocked(self) -> bool:
        return self.mock_error is not None or self.mock_result is not _NO_MOCK_RESULT


def _json_param(text: str | None, default: Any, error: type[Exception], what: str) -> Any:
    if text is None:
        return default
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if what == "Mocked result":  # AWS's words (LocalStack's test_test_state_mock_scenarios recording)
            raise error("Mocked result must be valid JSON") from exc
        raise error(f"{what} must be valid JSON: {exc}") from exc


def parse_request(params: dict[str, Any]) -> TestStateRequest:
    definition_text = params.get("definition")
    if not definition_text:
        raise ValidationException(
            "1 validation error detected: Value null at 'definition' failed to satisfy constraint: Member must not be null"
        )
    definition = _json_param(definition_text, None, InvalidDefinition, "Definition")
    if not isinstance(definition, dict):
        raise InvalidDefinition("Definition must be a JSON object")
    state_name = params.get("stateName")
    state, name, state_text = _select_state(definition, definition_text, state_name)

    inspection_level = params.get("inspectionLevel") or "INFO"
    if inspection_level not in INSPECTION_LEVELS:
        raise ValidationException(
            f"1 validation error detected: Value '{inspection_level}' at 'inspectionLevel' failed to satisfy "
            f"constraint: Member must satisfy enum value set: [{', '.join(INSPECTION_LEVELS)}]"
        )
    input_value = _json_param(params.get("input"), {}, InvalidExecutionInput, "Input")
    variables = _json_param(params.get("variables"), {}, ValidationException, "Variables")
    if not isinstance(variables, dict):
        raise ValidationException("Variables must be a JSON object")

    state_type = state.get("Type")
    mock = params.get("mock")
    mock_result, mock_error, field_validation_mode = _parse_mock(mock, state_type, params)
    configuration = params.get("stateConfiguration") or {}
    if state_type in _STRUCTURED_TYPES:
        _check_structured(state, name, mock, mock_result, configuration)
    if state_type not in _TESTABLE_TYPES:
        raise InvalidDefinition(f"Unsupported state type for TestState runs '{state_type}'.")
    context = _parse_context(params.get("context"), mocked=mock is not None)
    if mock is None and state_type == "Task" and _waits_for_completion(state.get("Resource")):
        # TestState runs these only with a mock (the API reference): the wait has no end in a test.
        raise InvalidDefinition(
            f"TestState does not support the integration pattern of '{state.get('Resource')}' without a mock"
        )
    role_arn = params.get("roleArn")
    if role_arn is None and state_type == "Task" and mock is None:
        raise ValidationException("RoleArn must be specified when testing a Task state")
    retrier_retry_count = _parse_configuration(configuration, state_type)

    return TestStateRequest(
        state=state,
        state_name=name,
        state_definition=state_text,
        role_arn=role_arn,
        input_value=input_value,
        inspection_level=inspection_level,
        variables=variables,
        mock_result=mock_result,
        mock_text=mock.get("result") if mock else None,
        mock_error=mock_error,
        field_validation_mode=field_validation_mode,
        retrier_retry_count=retrier_retry_count,
        map_iteration_failure_count=int(configuration.get("mapIterationFailureCount") or 0),
        context=context,
    )


def _check_structured(
    state: dict[str, Any], name: str, mock: dict[str, Any] | None, mock_result: Any, configuration: dict[str, Any]
) -> None:
    """A Map or Parallel runs only with a mock, whose result has the shape the state's result has
    (the messages AWS answers with, as LocalStack's TestState snapshots recorded them)."""
    failure_count = configuration.get("mapIterationFailureCount")
    if mock is None:
        if failure_count is not None:
            raise ValidationException(
                "TestState does not support MapIterationFailureCount when a mock is not specified."
            )
        raise InvalidDefinition(
            "TestState API does not support Map or Parallel states. Supported state types include: "
            "[Task, Wait, Pass, Succeed, Fail, Choice]"
        )
    if state["Type"] == "Parallel" and not state.get("Branches"):
        raise InvalidDefinition(
            f"Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Value cannot be empty at /States/{name}/Branches'"
        )
    if mock_result is _NO_MOCK_RESULT:
        return
    if state["Type"] == "Map" and "ResultWriter" in state:
        if not isinstance(mock_result, dict):
            raise ValidationException("Mocked result must be a JSON object.")
        return
    if not isinstance(mock_result, list):
        raise ValidationException("Mocked result must be an array.")
    if state["Type"] == "Parallel" and len(mock_result) != len(state["Branches"]):
        raise ValidationException("Mocked result must contain the same number of items as number of Parallel branches.")
    if failure_count is not None and int(failure_count) > len(mock_result):
        raise ValidationException(
            "Map iteration failure count must be less than or equal to the number of Map iterations"
        )


def _waits_for_completion(resource: Any) -> bool:
    """An activity, or a `.sync` / `.waitForTaskToken` service integration."""
    if not isinstance(resource, str):
        return False
    return ":activity:" in resource or bool(re.search(r"\.(sync(:\d+)?|waitForTaskToken)$", resource))


def _parse_mock(mock: dict[str, Any] | None, state_type: str, params: dict[str, Any]) -> tuple[Any, Any, str]:
    """(mocked result or _NO_MOCK_RESULT, mocked error or None, fieldValidationMode)."""
    if mock is None:
        return _NO_MOCK_RESULT, None, "STRICT"
    if state_type in _MOCK_REJECTING_TYPES or state_type not in _MOCKABLE_TYPES:
        raise ValidationException(f"State type '{state_type}' is not supported when a mock is specified")
    if params.get("revealSecrets"):
        raise ValidationException("TestState does not support RevealSecrets when a mock is specified.")
    if "result" in mock and "errorOutput" in mock:
        raise ValidationException("A test mock should have only one of the following fields: [result, errorOutput].")
    mode = mock.get("fieldValidationMode") or "STRICT"
    if mode not in FIELD_VALIDATION_MODES:
        raise ValidationException(
            f"1 validation error detected: Value '{mode}' at 'mock.fieldValidationMode' failed "
            f"to satisfy constraint: Member must satisfy enum value set: [{', '.join(FIELD_VALIDATION_MODES)}]"
        )
    if "result" in mock:
        if len(mock["result"]) > _MOCK_MAX_CHARS:
            raise ValidationException("Mocked result must be at most 262144 characters")
        return _json_param(mock["result"], None, ValidationException, "Mocked result"), None, mode
    error_output = mock.get("errorOutput")
    if error_output is None:
        return _NO_MOCK_RESULT, None, mode
    if error_output.get("error") is None:
        raise ValidationException("mock.errorOutput.error is required when mock.errorOutput is specified")
    return _NO_MOCK_RESULT, {"error": error_output["error"], "cause": error_output.get("cause", "")}, mode


# The Context object's fields TestState accepts and their types (strings unless named), as AWS
# validates them (LocalStack's test_state/test_state_context_object.snapshot.json,
# test_state_context_object_validation_failures); "Map" has its own message.
CONTEXT_FIELDS: dict[str, dict[str, type | tuple[type, ...] | None]] = {
    "Execution": {"Id": str, "Input": None, "Name": str, "RoleArn": str, "StartTime": str, "RedriveCount": int},
    "State": {"EnteredTime": str, "Name": str, "RetryCount": int},
    "StateMachine": {"Id": str, "Name": str},
    "Task": {"Token": str},
}
_TYPE_WORDS = {str: "a string", int: "an integer"}


def _check_context_fields(context: dict[str, Any]) -> None:
    for section, values in context.items():
        if section == "Map":
            continue
        fields = CONTEXT_FIELDS.get(section)
        if fields is None:
            raise ValidationException(f"Invalid Context object provided: Field '{section}' is not allowed")
        if not isinstance(values, dict):
            raise ValidationException(f"Invalid Context object provided: {section} must be an object")
        for name, value in values.items():
            if name not in fields:
                raise ValidationException(f"Invalid Context object provided: Field '{name}' is not allowed")
            expected = fields[name]
            if expected is not None and (not isinstance(value, expected) or isinstance(value, bool)):
                raise ValidationException(
                    f"Invalid Context object provided: {section}.{name} must be {_TYPE_WORDS[expected]}"
                )


def _parse_context(text: str | None, mocked: bool) -> dict[str, Any] | None:
    if text is None:
        return None
    if not mocked:
        raise ValidationException("The context field may only be specified together with a mock")
    context = _json_param(text, None, ValidationException, "Context")
    if not isinstance(context, dict):
        raise ValidationException("Invalid Context object provided: the Context object must be a JSON object")
    _check_context_fields(context)
    if "Map" in context:
        raise ValidationException(
            "Invalid Context object provided: 'Map' field is not supported when mocking a Context object"
        )
    return context


def _parse_configuration(configuration: dict[str, Any], state_type: str) -> int:
    """stateConfiguration: the retrier retry count; the Map and Parallel fields do not apply to other states."""
    retrier_retry_count = int(configuration.get("retrierRetryCount", 0))
    if retrier_retry_count < 0:
        raise ValidationException("stateConfiguration.retrierRetryCount must be at least 0")
    for map_only in ("mapIterationFailureCount", "mapItemReaderData"):
        if map_only in configuration and state_type != "Map":
            raise ValidationException(f"stateConfiguration.{map_only} applies to Map states only")
    if configuration.get("errorCausedByState") is not None and state_type not in {"Map", "Parallel"}:
        raise ValidationException("stateConfiguration.errorCausedByState applies to Map and Parallel states only")
    return retrier_retry_count


@functools.lru_cache(maxsize=32)
def _check_machine(definition_text: str) -> None:
    """The whole definition must be valid; remembered, as a test module sends the same one every call.
    AWS's own checks first, in AWS's words (stepfunctions/api/definition_validation.py)."""
    refused = definition_validation.refusal(definition_text, "STANDARD")
    if refused:
        raise InvalidDefinition(refused)
    try:
        AmazonStateLanguageParser.parse(definition_text)
    except ASLParserException as exc:
        raise InvalidDefinition(repr(exc)) from exc
    except Exception as exc:  # moto's preprocessor reports semantic errors as plain exceptions
        raise InvalidDefinition(f"Error={type(exc).__name__} Args={list(exc.args)}") from exc


def _select_state(
    definition: dict[str, Any], definition_text: str, state_name: str | None
) -> tuple[dict[str, Any], str, str]:
    """The state under test, its name and its definition text (with the machine's QueryLanguage)."""
    if state_name is None:
        if "States" in definition and "Type" not in definition:
            raise InvalidDefinition("A state machine definition needs stateName to say which state to test")
        return definition, BARE_STATE_NAME, definition_text
    _check_machine(definition_text)
    found = _find_state(definition, state_name, definition.get("QueryLanguage"))
    if found is None:
        raise ValidationException("State not found in definition")
    state, query_language = found
    state = dict(state)
    if query_language is not None and "QueryLanguage" not in state:
        state["QueryLanguage"] = query_language
    return state, state_name, json.dumps(state)


def _find_state(scope: dict[str, Any], name: str, query_language: str | None) -> tuple[dict, str | None] | None:
    """The named state in this scope or one nested in it (a Map's ItemProcessor or Iterator, a
    Parallel's Branches), with the QueryLanguage it inherits."""
    states = scope.get("States")
    if not isinstance(states, dict):
        return None
    if isinstance(states.get(name), dict):
        return states[name], query_language
    for state in states.values():
        if not isinstance(state, dict):
            continue
        inherited = state.get("QueryLanguage", query_language)
        nested = [state.get("ItemProcessor"), state.get("Iterator"), *(state.get("Branches") or [])]
        for child in nested:
            if isinstance(child, dict):
                found = _find_state(child, name, child.get("QueryLanguage", inherited))
                if found is not None:
                    return found
    return None


def _operation_output_shape(task: StateTaskService) -> StructureShape | None:
    service = task._get_boto_service_name()
    action = task.resource.api_action
    model = service_model(service)
    operation = action[0].upper() + action[1:]
    if operation not in model.operation_names:
        return None
    return model.operation_model(operation).output_shape


def validate_mock_result(task: StateTaskService, request: TestStateRequest) -> None:
    """A mocked result must fit the API's output shape (the API's fieldValidationMode)."""
    if request.mock_result is _NO_MOCK_RESULT or request.field_validation_mode == "NONE":
        return
    try:
        shape = _operation_output_shape(task)
    except Exception:  # a service botocore does not know: nothing to validate against
        return
    if shape is None:
        return
    _validate(request.mock_result, shape, None, strict=request.field_validation_mode == "STRICT")


def _schema_error(message: str) -> ValidationException:
    return ValidationException(f"Mock result schema validation error: {message}")


def _validate(value: Any, shape: Shape, name: str | None, strict: bool) -> None:
    if shape.type_name == "document":
        return
    if isinstance(shape, StructureShape):
        if not isinstance(value, dict):
            if name is None:
                raise ValidationException(f"Mock result must be a valid JSON object, but got '{type(value)}' instead")
            raise _schema_error(f"Field '{name}' must be an object")
        members = {StateTaskService._to_sfn_cased(key): member for key, member in shape.members.items()}
        if strict:
            for required in shape.required_members:
                key = StateTaskService._to_sfn_cased(required)
                if key not in value:
                    raise _schema_error(f"Required field '{key}' is missing")
        for key, item in value.items():
            if key in members:  # fields the model does not know are let through, as AWS does
                _validate(item, members[key], key, strict)
        return
    if isinstance(shape, ListShape):
        if not isinstance(value, list):
            raise _schema_error(f"Field '{name}' must be an array")
        for item in value:
            _validate(item, shape.member, name, strict)
        return
    if isinstance(shape, MapShape):
        if not isinstance(value, dict):
            raise _schema_error(f"Field '{name}' must be an object")
        for item in value.values():
            _validate(item, shape.value, name, strict)
        return
    kind = shape.type_name
    if kind in ("string", "timestamp", "blob"):
        if not isinstance(value, str):
            raise _schema_error(f"Field '{name}' must be a string")
        enum = shape.enum if kind == "string" else None
        if enum and value not in enum:
            raise _schema_error(f"Field '{name}' is not an expected value")
    elif kind in ("integer", "long"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise _schema_error(f"Field '{name}' must be a number")
    elif kind in ("float", "double"):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise _schema_error(f"Field '{name}' must be a number")
    elif kind == "boolean" and not isinstance(value, bool):
        raise _schema_error(f"Field '{name}' must be a boolean")
