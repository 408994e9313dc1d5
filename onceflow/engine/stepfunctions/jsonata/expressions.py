"""The embedded Step Functions' JSONata: moto's interpreter evaluates `{% %}` expressions (and the
JSONPath-mode variable references `$name`, which it evaluates as JSONata too) with
onceflow/engine/stepfunctions/jsonata/evaluator.py, and fails them as AWS does.

- every `{% %}` field (Arguments, Output, Assign, Choice Condition, Map Items, ItemSelector,
  MaxConcurrency, tolerated failures, Wait Seconds/Timestamp, TimeoutSeconds, HeartbeatSeconds, ...)
  is evaluated with `$states` and the variables in scope bound; moto's own path (the expression's
  text with every value spliced in, evaluated by a `None` evaluator) is not used;
- an expression that returns nothing, returns a function or raises fails the state with
  `States.QueryEvaluationError`, its `EvaluationFailed` event naming the state and the field's
  `location` ("Output/result"), its cause "An error occurred while executing the state 'S'
  (entered at the event id #2). The JSONata expression '$x' specified for the field 'Output/result'
  returned nothing (undefined)." as LocalStack's recordings of AWS show
  (tests/aws/services/stepfunctions/v2/assign/test_assign_reference_variables.snapshot.json).
"""

from __future__ import annotations

from typing import Any

from moto.stepfunctions.parser.api import EvaluationFailedEventDetails, HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import StatesErrorName
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.common.path.items_path import ItemsPath
from moto.stepfunctions.parser.asl.component.common.query_language import QueryLanguageMode
from moto.stepfunctions.parser.asl.component.common.string.string_expression import (
    StringJSONata,
    StringJsonPath,
    StringVariableSample,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.state_map import StateMap
from moto.stepfunctions.parser.asl.component.state.exec.state_map.tolerated_failure import (
    ToleratedFailureCountStringJSONata,
)
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventHistoryContext, EventManager
from moto.stepfunctions.parser.asl.eval.states import States
from moto.stepfunctions.parser.asl.eval.variable_store import VariableStore
from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor
from moto.stepfunctions.parser.asl.utils.encoding import to_json_str

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.jsonata import evaluator

Patch = tuple[Any, str, Any]
# The field an expression is in, as AWS names it in `location` ("Output/result"); set at parse time.
LOCATION = "_onceflow_location"


def moto_needs() -> list[Need]:
    return [
        need(StringJSONata, "_eval_body", "env"),
        need(StringJSONata, "__init__", "expression"),
        need(StringVariableSample, "_eval_body", "env"),
        need(StringVariableSample, "__init__", "query_language_mode", "expression"),
        need(Preprocessor, "visitString_jsonata", "ctx"),
        need(States, "__init__", "context"),  # States._states_data: input, context, result, errorOutput
        need(VariableStore, "__init__"),  # VariableStore._outer_scope, _inner_scope
        need(FailureEventException, "get_evaluation_failed_event_details"),
        need(EvaluationFailedEventDetails, "__annotations__"),
        need(EventHistoryContext, "__init__", "previous_event_id"),
        need(
            EventManager, "add_event", "context", "event_type", "event_details", "timestamp", "update_source_event_id"
        ),
        need(EventManager, "__init__", "cloud_watch_logging_session"),  # EventManager._history_event_list
        need(ItemsPath, "_eval_body", "env"),
        need(ItemsPath, "__init__", "string_sampler"),
        need(StringJsonPath, "__init__", "json_path"),
        need(StateMap, "from_state_props", "state_props"),  # StateMap.items, items_path, item_reader
        need(Preprocessor, "visitTolerated_failure_count_string_jsonata", "ctx"),
        need(ToleratedFailureCountStringJSONata, "__init__", "string_jsonata"),
    ]


def patches() -> list[Patch]:
    return [
        (StringJSONata, "_eval_body", _eval_jsonata),
        (StringVariableSample, "_eval_body", _eval_variable_sample),
        (Preprocessor, "visitString_jsonata", _located(Preprocessor.visitString_jsonata)),
        (EventManager, "add_event", _evaluation_failed_links(EventManager.add_event)),
        (ItemsPath, "_eval_body", _items_path_checked(ItemsPath._eval_body)),
        (StateMap, "from_state_props", _jsonata_map_items_checked(StateMap.from_state_props)),
        (Preprocessor, "visitTolerated_failure_count_string_jsonata", _tolerated_failure_count_jsonata),
    ]


def _tolerated_failure_count_jsonata(self: Preprocessor, ctx: Any) -> ToleratedFailureCountStringJSONata:
    """A JSONata ToleratedFailureCount is a count: moto's parser made it a ToleratedFailurePercentage
    declaration, so the Map tolerated 0 failures (and TestState reported toleratedFailureCount 0;
    LocalStack's test_test_state_scenarios.snapshot.json, test_base_map_state_inspect[TOLERATED_FAILURE_COUNT-*]
    records 1 for "{% $variable := 1 %}")."""
    return ToleratedFailureCountStringJSONata(string_jsonata=self.visitString_jsonata(ctx=ctx.string_jsonata()))


# -- where an expression is ------------------------------------------------------------------------


def _located(original: Any) -> Any:
    def visit_string_jsonata(self: Preprocessor, ctx: Any) -> StringJSONata:
        string_jsonata = original(self, ctx)
        setattr(string_jsonata, LOCATION, field_location(ctx))
        return string_jsonata

    return visit_string_jsonata


def _key_of(ctx: Any) -> str | None:
    """The key of a `"key": value` rule of the ASL grammar (a field or a template binding), or None."""
    if ctx.getChildCount() >= 3 and ctx.getChild(1).getText() == ":":
        key = ctx.getChild(0).getText()
        return key[1:-1] if len(key) >= 2 and key[0] == key[-1] == '"' else key
    return None


def field_location(ctx: Any) -> str:
    """The path AWS gives an expression's field: the state's field, then the keys down to the value
    ("Arguments/FunctionName"); stops at the state (whose own key is its name)."""
    keys: list[str] = []
    node = ctx.parentCtx
    while node is not None and type(node).__name__ != "State_declContext":
        key = _key_of(node)
        if key is not None:
            keys.append(key)
        node = node.parentCtx
    return "/".join(reversed(keys))


# -- evaluation ------------------------------------------------------------------------------------


def bindings(env: Any, with_states: bool = True) -> dict[str, Any]:
    """What an expression reads: the variables in scope (inner over outer) and `$states`."""
    store = env.variable_store
    values = {**store._outer_scope, **store._inner_scope}
    if with_states:
        states = env.states._states_data
        # $states.errorOutput exists in a Catch only, and $states.result not there (moto keeps a null
        # errorOutput elsewhere and the error as the result in a Catch; AWS's `$states` has neither:
        # LocalStack's test_state_configuration.snapshot.json, test_map_state_failure_count, and
        # test_state_scenarios.snapshot.json, test_state_task_catch_error).
        absent = "result" if states.get("errorOutput") is not None else "errorOutput"
        if absent in states:
            states = {key: value for key, value in states.items() if key != absent}
        values["states"] = states
    return values


def _entered_event(events: list[dict[str, Any]], event_id: int, state: str | None) -> dict[str, Any] | None:
    """The StateEntered event of `state`: back along the previousEventId links from `event_id` (the
    links of one Map iteration or Parallel branch stay in it, whatever runs beside it)."""
    while 0 < event_id <= len(events):
        event = events[event_id - 1]
        details = event.get("stateEnteredEventDetails")
        if details is not None and details.get("name") == state:
            return event
        event_id = event["previousEventId"]
    return None


def _evaluation_failed_links(original: Any) -> Any:
    """EvaluationFailed as AWS links it: its previousEventId is the one of the state's StateEntered
    event (0 for the first state), the events after it link to it; recorded once (moto's Map records
    it again for an error its fields raised)."""

    def add_event(
        self: EventManager,
        context: EventHistoryContext,
        event_type: HistoryEventType,
        event_details: Any = None,
        timestamp: Any = None,
        update_source_event_id: bool = True,
    ) -> int:
        if event_type != HistoryEventType.EvaluationFailed:
            return original(self, context, event_type, event_details, timestamp, update_source_event_id)
        events = self._history_event_list
        details = (event_details or {}).get("evaluationFailedEventDetails") or {}
        last_id = context.last_published_event_id
        if 0 < last_id <= len(events):
            last = events[last_id - 1]
            if (
                last["type"] == HistoryEventType.EvaluationFailed
                and last.get("evaluationFailedEventDetails") == details
            ):
                return last_id
        entered = _entered_event(events, context.source_event_id, details.get("state"))
        if entered is None:
            return original(self, context, event_type, event_details, timestamp, update_source_event_id)
        linked = EventHistoryContext(previous_event_id=entered["previousEventId"])
        event_id = original(self, linked, event_type, event_details, timestamp, update_source_event_id)
        context.last_published_event_id = event_id
        if update_source_event_id:
            context.source_event_id = event_id
        return event_id

    return add_event


def query_evaluation_error(env: Any, cause: str, location: str | None) -> FailureEventException:
    """States.QueryEvaluationError, recorded as AWS records it: an EvaluationFailed event (state,
    location, the cause prefixed with the state and the event it was entered at), then the failure
    (LocalStack's recordings of AWS)."""
    error = StatesErrorNameType.StatesQueryEvaluationError.to_name()
    details = EvaluationFailedEventDetails(error=error, cause=cause)
    if location:
        details["location"] = location
    failure_event = FailureEvent(
        env=env,
        error_name=StatesErrorName(typ=StatesErrorNameType.StatesQueryEvaluationError),
        event_type=HistoryEventType.EvaluationFailed,
        event_details=EventDetails(evaluationFailedEventDetails=details),
    )
    entered = _entered_event(
        env.event_manager._history_event_list, env.event_history_context.source_event_id, env.next_state_name
    )
    if entered is not None:  # "entered at the event id #N" (moto: the last event, a TaskSucceeded say)
        failure_event.source_event_id = entered["id"]  # type: ignore[misc]
    exception = FailureEventException(failure_event=failure_event)
    env.event_manager.add_event(
        context=env.event_history_context,
        event_type=HistoryEventType.EvaluationFailed,
        event_details=EventDetails(evaluationFailedEventDetails=exception.get_evaluation_failed_event_details()),
    )
    return exception


# -- a Map's items that are not an array --------------------------------------------------------------


def _items_path_checked(original: Any) -> Any:
    """A Map whose ItemsPath selects something other than an array fails with its JSON text in the
    cause (`... must be an array but was: {"foo":"bar"}`); moto names the Python type (`<class
    'dict'>`). LocalStack's scenarios/test_base_scenarios `test_map_state_items_input_types`,
    recorded against AWS. moto evaluates ItemsPath only for a Map that reads no ItemReader, and
    requires an array there."""

    def _eval_body(self: ItemsPath, env: Any) -> None:
        original(self, env)
        items = env.stack[-1]
        if not isinstance(items, list):
            error = StatesErrorNameType.StatesQueryEvaluationError
            raise FailureEventException(
                failure_event=FailureEvent(
                    env=env,
                    error_name=StatesErrorName(typ=error),
                    event_type=HistoryEventType.EvaluationFailed,
                    event_details=EventDetails(
                        evaluationFailedEventDetails=EvaluationFailedEventDetails(
                            error=error.to_name(),
                            cause="Map state input must be an array but was: "
                            + to_json_str(items, separators=(",", ":")),
                        )
                    ),
                )
            )

    return _eval_body


def _jsonata_map_items_checked(original: Any) -> Any:
    """A JSONata Map without `Items` iterates over its input, which must be an array as ItemsPath's
    result must (moto leaves it to an inline check that names the Python type)."""

    def from_state_props(self: StateMap, state_props: Any) -> None:
        original(self, state_props)
        if self.items is None and self.items_path is None and self.item_reader is None:
            self.items_path = ItemsPath(string_sampler=StringJsonPath(json_path="$"))

    return from_state_props


def evaluate_field(env: Any, expression: str, location: str | None) -> Any:
    """The JSON value of a `{% %}` field, or States.QueryEvaluationError as AWS raises it."""
    described = f"The JSONata expression '{expression}'" + (
        f" specified for the field '{location}'" if location else ""
    )
    try:
        result = evaluator.evaluate(expression, bindings(env))
    except evaluator.JSONataError as error:
        raise query_evaluation_error(
            env, f"{described} threw an error during evaluation. {error.detail}", location
        ) from None
    if result is evaluator.UNDEFINED:
        raise query_evaluation_error(env, f"{described} returned nothing (undefined).", location)
    if evaluator.is_function(result):
        raise query_evaluation_error(env, f"{described} returned an unsupported result type.", location)
    return result


def _eval_jsonata(self: StringJSONata, env: Any) -> None:
    env.stack.append(evaluate_field(env, self.expression, getattr(self, LOCATION, None)))


def _eval_variable_sample(self: StringVariableSample, env: Any) -> None:
    # `"name.$": "$var.field"` (JSONPath) and `$var` references: JSONata over the variables, and
    # `$states` in JSONata states.
    with_states = self.query_language_mode == QueryLanguageMode.JSONata
    try:
        result = evaluator.evaluate(self.expression, bindings(env, with_states=with_states))
    except evaluator.JSONataError as error:
        raise query_evaluation_error(
            env, f"The JSONata expression '{self.expression}' threw an error during evaluation. {error.detail}", None
        ) from None
    env.stack.append(None if result is evaluator.UNDEFINED else result)
