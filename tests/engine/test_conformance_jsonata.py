"""The embedded Step Functions' JSONata and variables against AWS, one test per behaviour.

BEHAVIOURS lists each behaviour with the AWS page it follows and the test that checks it (as in
test_conformance.py); where a test follows one of LocalStack's recordings of AWS
(tests/aws/services/stepfunctions/v2/**/*.snapshot.json in LocalStack's repository, recorded
against AWS itself), its docstring names the recording. The engine's side is, under
onceflow/engine/stepfunctions/: jsonata/evaluator.py, jsonata/expressions.py and
interpreter/variables.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from onceflow.ops.executions import ExecutionResult
from tests.engine.behaviours import check_behaviours
from tests.engine.harness import Account, failed_event

JSONATA = "https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html"
VARIABLES = "https://docs.aws.amazon.com/step-functions/latest/dg/workflow-variables.html"
EXITED = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_StateExitedEventDetails.html"
MAP = "https://docs.aws.amazon.com/step-functions/latest/dg/state-map-inline.html"
CHOICE = "https://docs.aws.amazon.com/step-functions/latest/dg/state-choice.html"
WAIT = "https://docs.aws.amazon.com/step-functions/latest/dg/state-wait.html"
ERRORS = "https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html"
DESCRIBE_STATE_MACHINE = "https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeStateMachine.html"

BEHAVIOURS: dict[str, tuple[str, str]] = {
    "Arguments and Output evaluate {% %} expressions over $states.input; other strings are literals": (
        JSONATA,
        "test_output_evaluates_expressions_over_the_state_input",
    ),
    "A JSONata expression returning nothing fails with States.QueryEvaluationError naming the field": (
        JSONATA,
        "test_an_undefined_result_fails_with_the_field_named",
    ),
    "Calling a function that does not exist (and $eval) is T1006 in States.QueryEvaluationError": (
        JSONATA,
        "test_calling_a_non_function_is_an_evaluation_error",
    ),
    "Step Functions' own functions: $partition, $range, $hash, $random(seed), $uuid, $parse": (
        JSONATA,
        "test_step_functions_functions",
    ),
    "Assign sets variables read by later states in both query languages; history records them as JSON": (
        VARIABLES,
        "test_assigned_variables_are_read_later_and_recorded_as_json_text",
    ),
    "Choice Condition, Map Items and ItemSelector take JSONata; $states.result is the Map's result": (
        MAP,
        "test_choice_condition_and_map_items_take_jsonata",
    ),
    "Map Items that is not an array fails with States.QueryEvaluationError and the value's type": (
        MAP,
        "test_map_items_that_is_not_an_array_fails",
    ),
    "EvaluationFailed links to the event before the state was entered; what follows links to it": (
        JSONATA,
        "test_evaluation_failed_is_linked_as_aws_links_it",
    ),
    "A Map over an input that is not an array fails with the input's JSON text in the cause": (
        MAP,
        "test_map_over_an_input_that_is_not_an_array_fails",
    ),
    "DescribeStateMachine answers variableReferences: the variables each state reads": (
        DESCRIBE_STATE_MACHINE,
        "test_describe_state_machine_lists_variable_references",
    ),
    "A Catch's Output and Assign read $states.errorOutput": (ERRORS, "test_catch_reads_the_error_output"),
    "Wait Seconds takes a JSONata expression": (WAIT, "test_wait_seconds_takes_jsonata"),
    "A Map iteration reads outer variables; what it assigns is not visible after the Map": (
        VARIABLES,
        "test_map_iterations_read_outer_variables_and_keep_their_own",
    ),
    "$states has errorOutput only in a Catch, and no result there": (
        ERRORS,
        "test_states_has_error_output_only_in_a_catch",
    ),
}


def test_every_behaviour_names_an_aws_page_and_a_test():
    check_behaviours(BEHAVIOURS, globals())


def _jsonata(states: dict[str, Any], start: str | None = None) -> dict[str, Any]:
    return {"QueryLanguage": "JSONata", "StartAt": start or next(iter(states)), "States": states}


def _output(result: ExecutionResult) -> Any:
    [event] = [e for e in result.history if e["type"] == "ExecutionSucceeded"]
    return json.loads(event["executionSucceededEventDetails"]["output"])


def _evaluation_failed(result: ExecutionResult) -> dict[str, Any]:
    [event] = [e for e in result.history if e["type"] == "EvaluationFailed"]
    return event["evaluationFailedEventDetails"]


def test_output_evaluates_expressions_over_the_state_input(account: Account):
    """LocalStack's outputdecl/test_output `test_base_cases[BASE_EXPR]` and arguments/test_arguments:
    expressions anywhere in the template are evaluated; `$states.input` is the state's input; a
    string without {% %} stays a literal, `$` and all."""
    definition = _jsonata(
        {
            "Shape": {
                "Type": "Pass",
                "Output": {
                    "total": "{% $sum($states.input.lines.(price * qty)) %}",
                    "skus": "{% $states.input.lines[price > 5].sku %}",
                    "literal": "$.not.a.path",
                    "nested": [{"name": "{% $uppercase($states.input.name) %}"}],
                    "execution": "{% $states.context.Execution.Name = $states.context.Execution.Name %}",
                },
                "End": True,
            }
        }
    )
    lines = [{"sku": "a", "price": 2, "qty": 3}, {"sku": "b", "price": 10, "qty": 1}]

    result = account.run(definition, {"name": "ann", "lines": lines})

    assert result.status == "SUCCEEDED"
    assert _output(result) == {
        "total": 16,
        "skus": "b",  # a one-item sequence is the item, as JSONata defines
        "literal": "$.not.a.path",
        "nested": [{"name": "ANN"}],
        "execution": True,
    }


@pytest.mark.parametrize(
    ("state", "location"),
    [
        ({"Output": "{% $doesNotExist %}"}, "Output"),
        ({"Output": {"result": "{% $doesNotExist %}"}}, "Output/result"),
        ({"Assign": {"result": "{% $doesNotExist %}"}}, "Assign/result"),
    ],
)
def test_an_undefined_result_fails_with_the_field_named(account: Account, state: dict[str, Any], location: str):
    """LocalStack's assign/test_assign_reference_variables `test_undefined_reference[BASE_UNDEFINED_*]`,
    recorded against AWS: an EvaluationFailed event (state, location) and the execution failing with
    the same cause; no Catch on a Pass state, so nothing handles it."""
    result = account.run(_jsonata({"State0": {"Type": "Pass", **state, "End": True}}))

    assert result.status == "FAILED"
    cause = (
        "An error occurred while executing the state 'State0' (entered at the event id #2). "
        f"The JSONata expression '$doesNotExist' specified for the field '{location}' returned nothing (undefined)."
    )
    assert _evaluation_failed(result) == {
        "error": "States.QueryEvaluationError",
        "cause": cause,
        "location": location,
        "state": "State0",
    }
    assert failed_event(result) == {"error": "States.QueryEvaluationError", "cause": cause}


@pytest.mark.parametrize("call", ["$randomSeeded(1)", "$eval('1 + 1')"])
def test_calling_a_non_function_is_an_evaluation_error(account: Account, call: str):
    """LocalStack's intrinsic_functions/test_math_operations_jsonata `test_math_random_seeded`, recorded
    against AWS: `$randomSeeded(...)` "threw an error during evaluation. T1006: Attempted to invoke
    a non-function". AWS: "$eval is not available—use $parse instead"."""
    definition = _jsonata({"State_0": {"Type": "Pass", "Output": {"FunctionResult": f"{{% {call} %}}"}, "End": True}})

    result = account.run(definition)

    assert result.status == "FAILED"
    assert failed_event(result)["cause"] == (
        "An error occurred while executing the state 'State_0' (entered at the event id #2). "
        f"The JSONata expression '{call}' specified for the field 'Output/FunctionResult' threw an error "
        "during evaluation. T1006: Attempted to invoke a non-function"
    )


def test_step_functions_functions(account: Account):
    """AWS's "JSONata functions provided by Step Functions"; the $partition and $range values are
    LocalStack's intrinsic_functions/test_array_jsonata recordings ($range's end is included; a range
    of one value is that value, not an array)."""
    definition = _jsonata(
        {
            "Functions": {
                "Type": "Pass",
                "Output": {
                    "partition": "{% $partition([0, 1, 2, 3], 3) %}",
                    "range": "{% $range(0, 10, 3) %}",
                    "range_step": "{% $range(1, 9, 2) %}",
                    "range_single": "{% $range(1, 9, 9) %}",
                    "hash": "{% $hash('input data', 'SHA-256') %}",
                    "md5": "{% $hash('input data', 'MD5') %}",
                    "seeded_twice": "{% $random(7) = $random(7) %}",
                    "random": "{% $random() %}",
                    "uuid": "{% $uuid() %}",
                    "parsed": "{% $parse($states.input.text) %}",
                },
                "End": True,
            }
        }
    )

    result = account.run(definition, {"text": '{"a": [1, null, "x\\"y"]}'})

    output = _output(result)
    assert output["partition"] == [[0, 1, 2], [3]]
    assert output["range"] == [0, 3, 6, 9]
    assert output["range_step"] == [1, 3, 5, 7, 9]
    assert output["range_single"] == 1  # a range of one value is the value
    assert output["hash"] == "b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3"
    assert output["md5"] == "812f45842bc6d66ee14572ce20db8e86"
    assert output["seeded_twice"] is True
    assert 0 <= output["random"] < 1
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", output["uuid"])
    assert output["parsed"] == {"a": [1, None, 'x"y']}


def test_assigned_variables_are_read_later_and_recorded_as_json_text(account: Account):
    """LocalStack's assign/test_assign_base recordings: `assignedVariables` in the StateExited event
    holds each value as JSON text (`"\\"varname2\\""`), `assignedVariablesDetails.truncated` false;
    a JSONPath state reads a variable JSONata assigned (query_language/test_mixed_query_language
    `test_variable_sampling[JSONATA_ASSIGN_JSONPATH_REF]`) and the other way round."""
    quoted = 'he said "hi" \\ done'
    definition = {
        "StartAt": "AssignJSONata",
        "States": {
            "AssignJSONata": {
                "Type": "Pass",
                "QueryLanguage": "JSONata",
                "Assign": {"quoted": quoted, "doubled": "{% $states.input.n * 2 %}", "nothing": None},
                "Next": "ReadJSONPath",
            },
            "ReadJSONPath": {
                "Type": "Pass",
                "Parameters": {"quoted.$": "$quoted", "doubled.$": "$doubled"},
                "Assign": {"fromPath.$": "$.quoted"},
                "Next": "ReadJSONata",
            },
            "ReadJSONata": {
                "Type": "Pass",
                "QueryLanguage": "JSONata",
                "Output": {"same": "{% $fromPath = $quoted %}", "null": "{% $nothing %}", "n": "{% $doubled %}"},
                "End": True,
            },
        },
    }

    result = account.run(definition, {"n": 21})

    assert result.status == "SUCCEEDED"
    assert _output(result) == {"same": True, "null": None, "n": 42}
    [first_exit] = [
        e["stateExitedEventDetails"]
        for e in result.history
        if e["type"] == "PassStateExited" and e["stateExitedEventDetails"]["name"] == "AssignJSONata"
    ]
    assert first_exit["assignedVariables"] == {"quoted": json.dumps(quoted), "doubled": "42", "nothing": "null"}
    assert first_exit["assignedVariablesDetails"] == {"truncated": False}


def test_choice_condition_and_map_items_take_jsonata(account: Account):
    """LocalStack's scenarios/test_base_scenarios `test_map_state_item_selector[..._JSONATA]` and
    `test_choice_condition_constant_jsonata`: Items and ItemSelector are evaluated per Map,
    `$states.context.Map.Item` gives each item and index, the Map's Output reads `$states.result`
    (the iterations' outputs in order) and a Choice rule's Condition is a JSONata boolean."""
    definition = _jsonata(
        {
            "Decide": {
                "Type": "Choice",
                "Choices": [{"Condition": "{% $count($states.input.items) > 1 %}", "Next": "Each"}],
                "Default": "TooFew",
            },
            "TooFew": {"Type": "Fail", "Error": "TooFew"},
            "Each": {
                "Type": "Map",
                "Items": "{% $states.input.items %}",
                "ItemSelector": {
                    "value": "{% $states.context.Map.Item.Value %}",
                    "index": "{% $states.context.Map.Item.Index %}",
                },
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "INLINE"},
                    "StartAt": "Label",
                    "States": {
                        "Label": {
                            "Type": "Pass",
                            "Output": "{% $states.input.value & '#' & $states.input.index %}",
                            "End": True,
                        }
                    },
                },
                "Output": {"labels": "{% $states.result %}"},
                "End": True,
            },
        }
    )

    assert _output(account.run(definition, {"items": ["a", "b", "c"]})) == {"labels": ["a#0", "b#1", "c#2"]}
    assert account.run(definition, {"items": ["a"]}).path == ["Decide", "TooFew"]


@pytest.mark.parametrize(
    ("items", "described"),
    [
        ("1", "'number' for value: 1"),
        ("'string'", "'string' for value: \"string\""),
        ("null", "'null' for value: null"),
    ],
)
def test_map_items_that_is_not_an_array_fails(account: Account, items: str, described: str):
    """LocalStack's scenarios/test_base_scenarios `test_map_state_items_eval_jsonata_fail[*]`,
    recorded against AWS."""
    definition = _jsonata(
        {
            "MapIterateState": {
                "Type": "Map",
                "Items": f"{{% {items} %}}",
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "INLINE"},
                    "StartAt": "Pass",
                    "States": {"Pass": {"Type": "Pass", "End": True}},
                },
                "End": True,
            }
        }
    )

    result = account.run(definition)

    assert result.status == "FAILED"
    assert failed_event(result) == {
        "error": "States.QueryEvaluationError",
        "cause": "An error occurred while executing the state 'MapIterateState' (entered at the event id #2). "
        f"The JSONata expression '{items}' specified for the field 'Items' returned an unexpected result type. "
        f"Expected 'array', but was {described}",
    }


def test_evaluation_failed_is_linked_as_aws_links_it(account: Account):
    """LocalStack's `test_undefined_reference[BASE_UNDEFINED_OUTPUT_MULTIPLE_STATES]`, recorded against
    AWS: State2 is entered at #6 (after #5); its EvaluationFailed (#7) has previousEventId 5, the
    ExecutionFailed after it 7. The cause names the entered event even after a Task's events."""
    definition = _jsonata(
        {
            "State0": {"Type": "Pass", "Next": "State1"},
            "State1": {"Type": "Pass", "Next": "State2"},
            "State2": {"Type": "Pass", "Output": {"result": "{% $doesNotExist %}"}, "End": True},
        }
    )

    result = account.run(definition)

    links = [(e["id"], e["previousEventId"], e["type"]) for e in result.history]
    assert links[-3:] == [(6, 5, "PassStateEntered"), (7, 5, "EvaluationFailed"), (8, 7, "ExecutionFailed")]
    assert "(entered at the event id #6)" in failed_event(result)["cause"]


@pytest.mark.parametrize(
    ("items", "text"), [({"foo": "bar"}, '{"foo":"bar"}'), ("string", '"string"'), (True, "true"), (None, "null")]
)
def test_map_over_an_input_that_is_not_an_array_fails(account: Account, items: Any, text: str):
    """LocalStack's scenarios/test_base_scenarios `test_map_state_items_input_types[*]`, recorded
    against AWS: a JSONata Map without Items iterates its input; one EvaluationFailed, then
    MapStateFailed and ExecutionFailed."""
    definition = _jsonata(
        {
            "Start": {"Type": "Pass", "Output": "{% $states.input.items %}", "Next": "MapIterateState"},
            "MapIterateState": {
                "Type": "Map",
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "INLINE"},
                    "StartAt": "Pass",
                    "States": {"Pass": {"Type": "Pass", "End": True}},
                },
                "End": True,
            },
        }
    )

    result = account.run(definition, {"items": items})

    cause = (
        "An error occurred while executing the state 'MapIterateState' (entered at the event id #4). "
        f"Map state input must be an array but was: {text}"
    )
    assert [(e["id"], e["previousEventId"], e["type"]) for e in result.history][3:] == [
        (4, 3, "MapStateEntered"),
        (5, 3, "EvaluationFailed"),
        (6, 5, "MapStateFailed"),
        (7, 6, "ExecutionFailed"),
    ]
    assert failed_event(result) == {"error": "States.QueryEvaluationError", "cause": cause}


def test_describe_state_machine_lists_variable_references(account: Account):
    """LocalStack's test_sfn_api_variable_references recordings (`BASE_REFERENCE_IN_CHOICE`,
    `BASE_REFERENCE_IN_FAIL`): per state, the variables its JSONPath references read, sorted; a
    state that reads none is absent, and so is the field when no state reads any."""
    definition = {
        "StartAt": "Init",
        "States": {
            "Init": {"Type": "Pass", "Assign": {"answer": 42, "guess": 41}, "Next": "CheckAnswer"},
            "CheckAnswer": {
                "Type": "Choice",
                "Choices": [{"Variable": "$guess", "NumericEqualsPath": "$answer", "Next": "Done"}],
                "Default": "Fail",
            },
            "Fail": {"Type": "Fail", "ErrorPath": "$answer", "CausePath": "$guess"},
            "Done": {"Type": "Succeed"},
        },
    }
    sfn = account.sfn

    described = sfn.describe_state_machine(stateMachineArn=account.state_machine(definition))
    plain = sfn.describe_state_machine(
        stateMachineArn=account.state_machine(_jsonata({"P": {"Type": "Pass", "End": True}}))
    )

    assert described["variableReferences"] == {"CheckAnswer": ["answer", "guess"], "Fail": ["answer", "guess"]}
    assert "variableReferences" not in plain


def test_catch_reads_the_error_output(account: Account):
    """AWS: `$states.errorOutput` is the error output, "only available in a Catch"; a Catcher's
    Output becomes the state's output and its Assign sets variables."""
    definition = _jsonata(
        {
            "Read": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:dynamodb:getItem",
                "Arguments": {"TableName": "no-such-table", "Key": {"pk": {"S": "{% $states.input.id %}"}}},
                "Catch": [
                    {
                        "ErrorEquals": ["States.ALL"],
                        "Output": {"error": "{% $states.errorOutput.Error %}"},
                        "Assign": {"caught": "{% $states.errorOutput.Error %}"},
                        "Next": "Handled",
                    }
                ],
                "End": True,
            },
            "Handled": {
                "Type": "Pass",
                "Output": {"input": "{% $states.input %}", "caught": "{% $caught %}"},
                "End": True,
            },
        }
    )

    result = account.run(definition, {"id": "x"})

    error = "DynamoDb.ResourceNotFoundException"
    assert _output(result) == {"input": {"error": error}, "caught": error}


def test_wait_seconds_takes_jsonata(account: Account):
    """LocalStack's scenarios/test_base_scenarios `test_wait_seconds_jsonata`: the Wait's Seconds is the
    expression's value (the delay asked for, recorded by the embedded clock)."""
    definition = _jsonata(
        {"WaitState": {"Type": "Wait", "Seconds": "{% $states.input.waitSeconds * 2 %}", "End": True}}
    )

    result = account.run(definition, {"waitSeconds": 3})

    assert _output(result) == {"waitSeconds": 3}
    assert account.aws.clock.wait_seconds == [6]


def test_map_iterations_read_outer_variables_and_keep_their_own(account: Account):
    """AWS ("Passing data between states with variables", variable scope): states in a Map iteration
    read the variables of the scope around the Map; what an iteration assigns is its own, gone
    after the Map. LocalStack's assign recording `test_reference_assign[BASE_REFERENCE_IN_ITERATOR_OUTER_SCOPE]`."""
    definition = _jsonata(
        {
            "Init": {"Type": "Pass", "Assign": {"factor": 10}, "Next": "Each"},
            "Each": {
                "Type": "Map",
                "Items": "{% [1, 2] %}",
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "INLINE"},
                    "StartAt": "Scale",
                    "States": {
                        "Scale": {
                            "Type": "Pass",
                            "Assign": {"inner": "{% $states.input * $factor %}"},
                            "Next": "Report",
                        },
                        "Report": {"Type": "Pass", "Output": "{% $inner %}", "End": True},
                    },
                },
                "Next": "After",
            },
            "After": {
                "Type": "Pass",
                "Output": {"results": "{% $states.input %}", "innerVisible": "{% $exists($inner) %}"},
                "End": True,
            },
        }
    )

    result = account.run(definition)

    assert _output(result) == {"results": [10, 20], "innerVisible": False}


def test_states_has_error_output_only_in_a_catch(account: Account):
    """`$states` in a state's Output has input, context and result; a Catch's has errorOutput instead
    of result (moto bound errorOutput null outside a Catch, and the error as result inside one).
    AWS's recordings: LocalStack's test_state/test_state_configuration.snapshot.json
    (test_map_state_failure_count: `Output: {% $states %}` has no errorOutput) and
    test_state/test_test_state_scenarios.snapshot.json (test_state_task_catch_error: no result)."""
    definition = _jsonata(
        {
            "Ok": {
                "Type": "Map",
                "Items": "{% [1] %}",
                "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Pass", "End": True}}},
                "Output": "{% $keys($states) %}",
                "Next": "Fails",
            },
            "Fails": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage",
                "Arguments": {"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/none", "MessageBody": "x"},
                "Catch": [
                    {
                        "ErrorEquals": ["States.ALL"],
                        "Output": "{% {'ok': $states.input, 'caught': $keys($states)} %}",
                        "Next": "Done",
                    }
                ],
                "End": True,
            },
            "Done": {"Type": "Succeed"},
        }
    )

    result = account.run(definition, {"a": 1})

    assert result.status == "SUCCEEDED"
    output = _output(result)
    assert sorted(output["caught"]) == ["context", "errorOutput", "input"]
    assert sorted(output["ok"]) == ["context", "input", "result"]
