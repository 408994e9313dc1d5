"""The embedded Step Functions' APIs and context object against AWS, one test per behaviour.

BEHAVIOURS lists each behaviour with the AWS page it follows and the test that checks it (as in
test_conformance.py); where a test follows one of LocalStack's recordings of AWS
(tests/aws/services/stepfunctions/v2/**/*.snapshot.json in LocalStack's repository, recorded
against AWS itself), its docstring names the recording. The engine's side is, under
onceflow/engine/stepfunctions/: api/state_machines.py, api/executions.py and
interpreter/context_object.py.
"""

from __future__ import annotations

import datetime
import json
import re
import time
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from onceflow.engine import REGION
from onceflow.ops.executions import wait_for
from onceflow.ops.observe import topic_may_send
from tests.engine.behaviours import check_behaviours
from tests.engine.harness import ROLE_ARN, Account, single_state
from tests.engine.test_sync_execution import sfn as sync_client

API = "https://docs.aws.amazon.com/step-functions/latest/apireference"
CONTEXT = "https://docs.aws.amazon.com/step-functions/latest/dg/input-output-contextobject.html"
PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
CFN_STATE_MACHINE = "https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-stepfunctions-statemachine.html"

BEHAVIOURS: dict[str, tuple[str, str]] = {
    "An AWS::StepFunctions::StateMachine CloudFormation creates (Definition or DefinitionString) is the API's": (
        CFN_STATE_MACHINE,
        "test_a_state_machine_cloudformation_creates_is_listed_described_and_deleted_with_its_stack",
    ),
    "CreateStateMachine is idempotent for the same request; another definition or type is refused": (
        f"{API}/API_CreateStateMachine.html",
        "test_create_state_machine_is_idempotent_only_for_the_same_request",
    ),
    "UpdateStateMachine answers a revisionId, new when something changed; DescribeStateMachine has it": (
        f"{API}/API_UpdateStateMachine.html",
        "test_update_state_machine_answers_a_revision_id",
    ),
    "DescribeStateMachine's loggingConfiguration has includeExecutionData; ForExecution its own fields": (
        f"{API}/API_DescribeStateMachineForExecution.html",
        "test_describe_state_machine_and_for_execution_fields",
    ),
    "DescribeExecution answers inputDetails and outputDetails {included: true}": (
        f"{API}/API_DescribeExecution.html",
        "test_describe_execution_answers_execution_data_details",
    ),
    "An ARN that does not start with arn: is InvalidArn 'Invalid ARN prefix' for every API": (
        f"{API}/API_DescribeStateMachine.html",
        "test_an_arn_without_the_arn_prefix_is_refused_naming_the_prefix",
    ),
    "GetExecutionHistory honours reverseOrder": (
        f"{API}/API_GetExecutionHistory.html",
        "test_get_execution_history_honours_reverse_order",
    ),
    "ValidateStateMachineDefinition answers AWS's diagnostics (required fields, JSON, Express limits)": (
        f"{API}/API_ValidateStateMachineDefinition.html",
        "test_validate_state_machine_definition_answers_aws_diagnostics",
    ),
    "CreateStateMachine refuses what those checks refuse, in AWS's words": (
        f"{API}/API_CreateStateMachine.html",
        "test_create_state_machine_refuses_with_the_diagnostic_in_aws_words",
    ),
    "A state may declare JSONPath inside a JSONata Map of a JSONPath machine": (
        "https://docs.aws.amazon.com/step-functions/latest/dg/transforming-data.html",
        "test_a_jsonpath_state_inside_a_jsonata_map_of_a_jsonpath_machine_runs",
    ),
    "StartExecution's InvalidExecutionInput words a JSON mistake as AWS's parser does": (
        f"{API}/API_StartExecution.html",
        "test_start_execution_words_a_json_mistake_as_aws_does",
    ),
    "List APIs refuse maxResults over 1000, a nextToken too long, a statusFilter not in the enum": (
        f"{API}/API_ListExecutions.html",
        "test_list_apis_refuse_what_the_api_model_refuses",
    ),
    "ListStateMachines lists by ARN (name), page by page": (
        f"{API}/API_ListStateMachines.html",
        "test_list_state_machines_lists_by_name",
    ),
    "Create/UpdateStateMachine refuse a loggingConfiguration without exactly one existing log group": (
        f"{API}/API_LoggingConfiguration.html",
        "test_logging_configuration_is_refused_as_aws_refuses_it",
    ),
    "A logged execution writes its history events to the log group; an Express one has an Express ARN": (
        "https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html",
        "test_a_logged_express_execution_writes_its_events_to_the_log_group",
    ),
    "An Express execution is not listed, described, stopped or read (StateMachineTypeNotSupported, InvalidArn)": (
        f"{API}/API_ListExecutions.html",
        "test_express_executions_are_not_listed_described_stopped_or_read",
    ),
    "$$.Execution.StartTime is ISO text with milliseconds and Z; $$.Execution.RedriveCount is 0 (STANDARD)": (
        CONTEXT,
        "test_context_object_start_time_and_redrive_count",
    ),
    "SendTaskFailure's error and cause reach the waiting task's TaskFailed and a Catch's error output": (
        f"{API}/API_SendTaskFailure.html",
        "test_send_task_failure_passes_its_cause_to_the_waiting_task",
    ),
    "A Standard execution's status changes (RUNNING, then its end) reach a matching rule's SQS target": (
        "https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html",
        "test_status_change_events_reach_a_rules_sqs_target",
    ),
    "A status change rule's target with Input gets that text; with an InputTransformer, its output": (
        "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-transform-target-input.html",
        "test_status_change_events_honour_a_targets_input_and_input_transformer",
    ),
    "A disabled rule, or a schedule rule (no event pattern), gets no status change event": (
        "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rules.html",
        "test_status_change_events_skip_disabled_and_schedule_rules",
    ),
}


@pytest.mark.parametrize("definition_property", ["Definition", "DefinitionString"])
def test_a_state_machine_cloudformation_creates_is_listed_described_and_deleted_with_its_stack(
    account: Account, definition_property: str
) -> None:
    """As AWS recorded it (LocalStack's test_sfn_api.snapshot.json,
    test_cloudformation_definition_create_describe and test_cloudformation_definition_string_create_describe):
    the stack's state machine is in ListStateMachines and DescribeStateMachine answers its definition and role;
    `Definition` is the ASL as an object, `DefinitionString` as text (the resource's page)."""
    asl = {
        "Comment": "from a stack",
        "StartAt": "P",
        "States": {"P": {"Type": "Pass", "Result": {"a": 1}, "End": True}},
    }
    value = asl if definition_property == "Definition" else json.dumps(asl)
    name = f"stack-machine-{definition_property.lower()}"
    template = {
        "Resources": {
            "Machine": {
                "Type": "AWS::StepFunctions::StateMachine",
                "Properties": {"StateMachineName": name, definition_property: value, "RoleArn": ROLE_ARN},
            }
        }
    }
    cloudformation = account.client("cloudformation")
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    cloudformation.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig={"Delay": 0.1})

    listed = [m for m in account.sfn.list_state_machines()["stateMachines"] if m["name"] == name]
    assert len(listed) == 1
    described = account.sfn.describe_state_machine(stateMachineArn=listed[0]["stateMachineArn"])
    assert (json.loads(described["definition"]), described["roleArn"], described["status"]) == (asl, ROLE_ARN, "ACTIVE")
    execution = account.sfn.start_execution(stateMachineArn=listed[0]["stateMachineArn"], input="{}")
    assert wait_for(account.sfn, execution["executionArn"], timeout=30).status == "SUCCEEDED"

    cloudformation.delete_stack(StackName=name)
    cloudformation.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 0.1})
    assert name not in [m["name"] for m in account.sfn.list_state_machines()["stateMachines"]]


def test_every_behaviour_names_an_aws_page_and_a_test():
    check_behaviours(BEHAVIOURS, globals())


def test_create_state_machine_is_idempotent_only_for_the_same_request(account: Account):
    """CreateStateMachine: "idempotency check is based on the state machine name, definition, type,
    LoggingConfiguration, TracingConfiguration, and EncryptionConfiguration"; a different roleArn is
    ignored. AWS's recording (LocalStack's test_sfn_api.snapshot.json,
    test_create_duplicate_definition_format_sm, test_create_duplicate_sm_name): the same definition
    formatted otherwise is StateMachineAlreadyExists "State Machine Already Exists: '<arn>'"."""
    sfn = account.sfn
    text = json.dumps(PASS)
    created = sfn.create_state_machine(name="idempotent", definition=text, roleArn=ROLE_ARN)

    again = sfn.create_state_machine(name="idempotent", definition=text, roleArn=ROLE_ARN + "-other")
    assert (again["stateMachineArn"], again["creationDate"]) == (created["stateMachineArn"], created["creationDate"])
    for other in ({"definition": json.dumps(PASS, indent=2)}, {"definition": text, "type": "EXPRESS"}):
        with pytest.raises(ClientError) as refused:
            sfn.create_state_machine(name="idempotent", roleArn=ROLE_ARN, **other)
        assert refused.value.response["Error"]["Code"] == "StateMachineAlreadyExists"
        assert refused.value.response["Error"]["Message"] == (
            f"State Machine Already Exists: '{created['stateMachineArn']}'"
        )


def test_update_state_machine_answers_a_revision_id(account: Account):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json,
    test_create_update_state_machine_same_parameters): no revisionId before an update; an update
    answers {updateDate, revisionId} and DescribeStateMachine then carries it; an update that
    changes nothing keeps the revision, one that changes the definition makes a new one."""
    sfn = account.sfn
    arn = account.state_machine(PASS)
    assert "revisionId" not in sfn.describe_state_machine(stateMachineArn=arn)

    first = sfn.update_state_machine(stateMachineArn=arn, roleArn=ROLE_ARN + "-t1")
    same = sfn.update_state_machine(stateMachineArn=arn, roleArn=ROLE_ARN + "-t1", definition=json.dumps(PASS))
    changed = sfn.update_state_machine(
        stateMachineArn=arn, definition=json.dumps({"StartAt": "S", "States": {"S": {"Type": "Succeed"}}})
    )

    uuid.UUID(first["revisionId"])
    assert isinstance(first["updateDate"], datetime.datetime)
    assert same["revisionId"] == first["revisionId"]
    assert changed["revisionId"] != first["revisionId"]
    assert sfn.describe_state_machine(stateMachineArn=arn)["revisionId"] == changed["revisionId"]


def test_describe_state_machine_and_for_execution_fields(account: Account):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json, test_describe_state_machine_for_execution,
    and every describe_response there): loggingConfiguration {includeExecutionData: false, level: OFF};
    DescribeStateMachineForExecution answers stateMachineArn, name, definition, roleArn, updateDate,
    loggingConfiguration, tracingConfiguration (and encryptionConfiguration), no creationDate/status/type."""
    sfn = account.sfn
    arn = account.state_machine(PASS)
    execution_arn = account.start(arn, {})

    described = sfn.describe_state_machine(stateMachineArn=arn)
    for_execution = sfn.describe_state_machine_for_execution(executionArn=execution_arn)

    assert described["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}
    assert {"creationDate", "status", "type"} <= set(described)
    del for_execution["ResponseMetadata"]
    assert set(for_execution) == {
        "stateMachineArn",
        "name",
        "definition",
        "roleArn",
        "updateDate",
        "loggingConfiguration",
        "tracingConfiguration",
        "encryptionConfiguration",
    }
    assert for_execution["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}
    assert for_execution["updateDate"] == described["creationDate"]


def test_describe_execution_answers_execution_data_details(account: Account):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json, test_describe_execution; base/
    test_base.snapshot.json, test_state_fail): inputDetails {included: true} whatever the status,
    outputDetails {included: true} with the output."""
    succeeded = account.run(single_state({"Type": "Pass"}), {"a": 1})
    failed = account.run(single_state({"Type": "Fail", "Error": "E"}), {})

    described = account.describe(succeeded.arn)
    assert (described["inputDetails"], described["outputDetails"]) == ({"included": True}, {"included": True})
    described = account.describe(failed.arn)
    assert described["inputDetails"] == {"included": True} and "outputDetails" not in described


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        ("describe_state_machine", "stateMachineArn"),
        ("list_executions", "stateMachineArn"),
        ("describe_execution", "executionArn"),
        ("get_execution_history", "executionArn"),
    ],
)
def test_an_arn_without_the_arn_prefix_is_refused_naming_the_prefix(account: Account, call: str, parameter: str):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json, test_describe_invalid_arn_sm,
    test_list_execution_invalid_arn, test_describe_execution_invalid_arn,
    test_get_execution_history_invalid_arn): InvalidArn "Invalid Arn: 'Invalid ARN prefix: <arn>'"
    (moto: "Invalid State Machine Arn: ..." or "Execution Does Not Exist: ...")."""
    with pytest.raises(ClientError) as refused:
        getattr(account.sfn, call)(**{parameter: "not_a_valid_arn"})

    error = refused.value.response["Error"]
    assert (error["Code"], error["Message"]) == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'")


def test_get_execution_history_honours_reverse_order(account: Account):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json, test_get_execution_history_reversed):
    with reverseOrder the events come newest first, ids 4, 3, 2, 1."""
    result = account.run(single_state({"Type": "Pass"}), {})

    events = account.sfn.get_execution_history(executionArn=result.arn, reverseOrder=True)["events"]

    assert [e["id"] for e in events] == [4, 3, 2, 1]
    assert (events[0]["type"], events[-1]["type"]) == ("ExecutionSucceeded", "ExecutionStarted")


def test_context_object_start_time_and_redrive_count(account: Account):
    """`$$.Execution.StartTime` is "2023-11-21T06:27:31.545Z"-style text, the instant of
    DescribeExecution's startDate (AWS's recording: LocalStack's base/test_base.snapshot.json,
    test_execution_dateformat; moto put a datetime there and DescribeExecution answered 500), and
    a STANDARD execution's `$$.Execution.RedriveCount` is 0 (test_query_context_object_values), an
    EXPRESS one has none (express/test_express_sync.snapshot.json, test_query_runtime_memory)."""
    state = {"Type": "Pass", "Parameters": {"start.$": "$$.Execution.StartTime", "redrives.$": "$$.Execution"}}
    result = account.run(single_state(state), {})

    described = account.describe(result.arn)
    output = json.loads(described["output"])
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", output["start"])
    started = described["startDate"].astimezone(datetime.UTC)
    assert output["start"] == f"{started.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z"
    assert output["redrives"]["RedriveCount"] == 0
    assert output["redrives"]["StartTime"] == output["start"]
    express = account.state_machine(single_state(state), kind="EXPRESS")
    synchronous = sync_client(account).start_sync_execution(stateMachineArn=express, input="{}")
    assert "RedriveCount" not in json.loads(synchronous["output"])["redrives"], "an EXPRESS execution has none"


WAIT_FOR_TOKEN = {
    "StartAt": "Send",
    "States": {
        "Send": {
            "Type": "Task",
            "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {"QueueUrl": "q", "MessageBody.$": "$$.Task.Token"},
            "End": True,
        }
    },
}
NOT_JSON = (
    "Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"
)
SOURCE = '[Source: (String)"not a definition"; line: 1, column: 4]'


@pytest.mark.parametrize(
    ("definition", "kind", "diagnostic"),
    [
        (json.dumps(PASS), "STANDARD", None),
        ("", "STANDARD", {"code": "SCHEMA_VALIDATION_FAILED", "message": "Definition must be a valid JSON object"}),
        (
            "{}",
            "STANDARD",
            {
                "code": "SCHEMA_VALIDATION_FAILED",
                "location": "/",
                "message": "These fields are required: [States, StartAt]",
            },
        ),
        (
            "not a definition",
            "STANDARD",
            {"code": "INVALID_JSON_DESCRIPTION", "location": SOURCE, "message": f"{NOT_JSON}\n at {SOURCE}"},
        ),
        (json.dumps(WAIT_FOR_TOKEN), "STANDARD", None),
        (
            json.dumps(WAIT_FOR_TOKEN),
            "EXPRESS",
            {
                "code": "SCHEMA_VALIDATION_FAILED",
                "location": "/States/Send/Resource",
                "message": "Express state machine does not support '.waitForTaskToken' service integration ",
            },
        ),
    ],
)
def test_validate_state_machine_definition_answers_aws_diagnostics(
    account: Account, definition: str, kind: str, diagnostic: dict | None
):
    """AWS's recording (LocalStack's test_sfn_api_validation.snapshot.json,
    test_validate_state_machine_definition_not_a_definition and _type_express): result OK with no
    diagnostics, or FAIL with AWS's code, message and location (severity ERROR), truncated false.
    moto alone: NotImplementedError (HTTP 500). The empty definition is sent as the recording sent it,
    past boto3's own length check."""
    sfn = boto3.client(
        "stepfunctions",
        endpoint_url=account.aws.endpoint_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(parameter_validation=False),
    )
    answer = sfn.validate_state_machine_definition(definition=definition, type=kind)

    assert answer["truncated"] is False
    if diagnostic is None:
        assert (answer["result"], answer["diagnostics"]) == ("OK", [])
    else:
        assert (answer["result"], answer["diagnostics"]) == ("FAIL", [{**diagnostic, "severity": "ERROR"}])


@pytest.mark.parametrize(
    ("definition", "kind", "message"),
    [
        ({"StartAt": "P"}, "STANDARD", "These fields are required: [States] at /"),
        (
            WAIT_FOR_TOKEN,
            "EXPRESS",
            "Express state machine does not support '.waitForTaskToken' service integration  at /States/Send/Resource",
        ),
        (
            single_state({"Type": "Wait", "Timestamp": "2016-03-14 01:59:00"}, "WaitUntil"),
            "STANDARD",
            "String does not match RFC3339 timestamp at /States/WaitUntil/Timestamp",
        ),
        *(
            (
                single_state({"Type": "Wait", "Timestamp": text}, "WaitUntil"),
                "STANDARD",
                "String does not match RFC3339 timestamp at /States/WaitUntil/Timestamp",
            )
            # month 13, hour 25, and JSONata's braces in a JSONPath machine (only text there)
            for text in ("2016-13-05T21:29:29Z", "2016-12-05T25:29:29Z", "{% '2016-03-14T01:59:00Z' %}")
        ),
        (
            single_state({"Type": "Task", "Resource": "arn:aws:states:::dynamodb:query", "Parameters": {}}, "Query"),
            "STANDARD",
            "The resource provided arn:aws:states:::dynamodb:query is not recognized. The value is not a valid "
            "resource ARN, or the resource is not available in this region. at /States/Query/Resource",
        ),
    ],
)
def test_create_state_machine_refuses_with_the_diagnostic_in_aws_words(
    account: Account, definition: dict, kind: str, message: str
):
    """AWS's recordings (LocalStack's test_sfn_api.snapshot.json, test_create_delete_invalid_sm;
    test_sfn_api_express.snapshot.json, test_illegal_callbacks; scenarios/test_base_scenarios.snapshot.json,
    test_wait_timestamp_invalid: a month 13, an hour 25, and `{% %}` in a JSONPath machine too):
    InvalidDefinition "Invalid State Machine Definition:
    'SCHEMA_VALIDATION_FAILED: <message> at <where>'" (moto alone accepted the EXPRESS machine, and
    worded the others as Python errors)."""
    with pytest.raises(ClientError) as refused:
        account.sfn.create_state_machine(name="refused", definition=json.dumps(definition), roleArn=ROLE_ARN, type=kind)

    assert refused.value.response["Error"]["Code"] == "InvalidDefinition"
    expected = f"Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: {message}'"
    assert refused.value.response["Error"]["Message"] == expected


def test_a_jsonpath_state_inside_a_jsonata_map_of_a_jsonpath_machine_runs(account: Account):
    """AWS refuses JSONPath only "if set to 'JSONata' for whole state machine": its recording
    (LocalStack's test_sfn_api_validation.snapshot.json, VALID_QUERY_LANGUAGE_PASS) validates a
    JSONata Map of a JSONPath machine with a JSONPath state inside as OK (moto: "Cannot downgrade")."""
    inner = {"QueryLanguage": "JSONPath", "Type": "Pass", "Parameters": {"v.$": "$"}, "End": True}
    processor = {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "Pass", "States": {"Pass": inner}}
    definition = {
        "StartAt": "Map",
        "QueryLanguage": "JSONPath",
        "States": {
            "Map": {
                "Type": "Map",
                "QueryLanguage": "JSONata",
                "Items": "{% [1, 2] %}",
                "ItemProcessor": processor,
                "End": True,
            }
        },
    }

    assert account.sfn.validate_state_machine_definition(definition=json.dumps(definition))["result"] == "OK"
    result = account.run(definition, {})
    assert result.status == "SUCCEEDED"
    assert json.loads(account.describe(result.arn)["output"]) == [{"v": 1}, {"v": 2}]


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("not json", NOT_JSON),
        ("{'not': 'json'}", "Unexpected character (''' (code 39)): was expecting double-quote to start field name"),
    ],
)
def test_start_execution_words_a_json_mistake_as_aws_does(account: Account, text: str, detail: str):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json, test_invalid_start_execution_input):
    the message quotes AWS's JSON parser (Python's json said "Expecting value")."""
    arn = account.state_machine(PASS)

    with pytest.raises(ClientError) as refused:
        account.sfn.start_execution(stateMachineArn=arn, input=text)

    error = refused.value.response["Error"]
    expected = ("InvalidExecutionInput", f"Invalid State Machine Execution Input: '{detail}'")
    assert (error["Code"], error["Message"]) == expected


def test_list_apis_refuse_what_the_api_model_refuses(account: Account):
    """AWS's recordings (LocalStack's test_sfn_api.snapshot.json, test_list_sms_pagination,
    test_list_executions_pagination, test_state_machine_status_filter): ValidationException "1
    validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must
    have value less than or equal to 1000", the nextToken's length (1024 for ListStateMachines, 3096
    for ListExecutions), statusFilter's enum in AWS's order. moto alone accepted all three."""
    sfn = account.sfn
    arn = account.state_machine(PASS)
    refusals = {
        "maxResults": lambda: sfn.list_state_machines(maxResults=1001),
        "nextToken": lambda: sfn.list_executions(stateMachineArn=arn, nextToken="t" * 3097),
        "statusFilter": lambda: sfn.list_executions(stateMachineArn=arn, statusFilter="succeeded"),
    }
    messages = {}
    for field, call in refusals.items():
        with pytest.raises(ClientError) as refused:
            call()
        assert refused.value.response["Error"]["Code"] == "ValidationException"
        messages[field] = refused.value.response["Error"]["Message"]

    assert messages["maxResults"] == (
        "1 validation error detected: Value '1001' at 'maxResults' failed to satisfy constraint: "
        "Member must have value less than or equal to 1000"
    )
    assert messages["nextToken"].endswith(
        "at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to 3096"
    )
    assert messages["statusFilter"] == (
        "1 validation error detected: Value 'succeeded' at 'statusFilter' failed to satisfy constraint: Member "
        "must satisfy enum value set: [SUCCEEDED, TIMED_OUT, PENDING_REDRIVE, ABORTED, FAILED, RUNNING]"
    )
    assert sfn.list_executions(stateMachineArn=arn, maxResults=1000, statusFilter="SUCCEEDED")["executions"] == []


def test_list_state_machines_lists_by_name(account: Account):
    """AWS's recording (LocalStack's test_sfn_api.snapshot.json, test_list_sms_pagination): machines
    made in the order 0..12 are listed statemachine_0_, _10_, _11_, _12_, _1_, _2_ ... (by ARN;
    moto: by creation date), 10 per page with maxResults 10."""
    sfn = account.sfn
    names = [f"statemachine_{i}_x" for i in range(13)]
    for name in names:
        sfn.create_state_machine(name=name, definition=json.dumps(PASS), roleArn=ROLE_ARN)

    first = sfn.list_state_machines(maxResults=10)
    second = sfn.list_state_machines(maxResults=10, nextToken=first["nextToken"])

    listed = [m["name"] for m in first["stateMachines"] + second["stateMachines"]]
    assert listed == sorted(names)
    assert listed[:5] == [
        "statemachine_0_x",
        "statemachine_10_x",
        "statemachine_11_x",
        "statemachine_12_x",
        "statemachine_1_x",
    ]


def _logged_to(*arns: str, level: str = "ALL") -> dict:
    return {"level": level, "destinations": [{"cloudWatchLogsLogGroup": {"logGroupArn": arn}} for arn in arns]}


def test_logging_configuration_is_refused_as_aws_refuses_it(account: Account):
    """AWS's recordings (LocalStack's test_sfn_api_logs.snapshot.json, test_invalid_logging_configuration,
    test_multiple_destinations, test_deleted_log_group, test_update_logging_configuration):
    InvalidLoggingConfiguration "Invalid Logging Configuration: Must specify exactly one Log
    Destination." for a level other than OFF without a destination, or two destinations; "...: Log
    Destination not found." for a log group that was deleted; level OFF without one is accepted.
    moto accepted all of them."""
    sfn, logs = account.sfn, account.client("logs")
    for name in ("kept", "other", "deleted"):
        logs.create_log_group(logGroupName=name)
    kept, other, deleted = (
        logs.describe_log_groups(logGroupNamePrefix=n)["logGroups"][0]["arn"] for n in ("kept", "other", "deleted")
    )
    logs.delete_log_group(logGroupName="deleted")
    exactly_one = "Invalid Logging Configuration: Must specify exactly one Log Destination."
    not_found = "Invalid Logging Configuration: Log Destination not found."

    def refused(call: str, configuration: dict, **request: str) -> tuple[str, str]:
        with pytest.raises(ClientError) as error:
            getattr(sfn, call)(loggingConfiguration=configuration, **request)
        return error.value.response["Error"]["Code"], error.value.response["Error"]["Message"]

    create = {"name": "logged", "definition": json.dumps(PASS), "roleArn": ROLE_ARN}
    for level in ("ALL", "ERROR", "FATAL"):
        assert refused("create_state_machine", {"level": level}, **create) == (
            "InvalidLoggingConfiguration",
            exactly_one,
        )
    assert refused("create_state_machine", _logged_to(kept, other), **create) == (
        "InvalidLoggingConfiguration",
        exactly_one,
    )
    assert refused("create_state_machine", _logged_to(deleted), **create) == ("InvalidLoggingConfiguration", not_found)
    assert sfn.list_state_machines()["stateMachines"] == []

    arn = sfn.create_state_machine(loggingConfiguration=_logged_to(kept), **create)["stateMachineArn"]
    sfn.create_state_machine(
        name="off", definition=json.dumps(PASS), roleArn=ROLE_ARN, loggingConfiguration={"level": "OFF"}
    )
    sfn.update_state_machine(stateMachineArn=arn, loggingConfiguration=_logged_to(kept, level="FATAL"))
    assert refused("update_state_machine", _logged_to(kept, other), stateMachineArn=arn) == (
        "InvalidLoggingConfiguration",
        exactly_one,
    )
    assert refused("update_state_machine", {"level": "ALL"}, stateMachineArn=arn) == (
        "InvalidLoggingConfiguration",
        exactly_one,
    )
    assert sfn.describe_state_machine(stateMachineArn=arn)["loggingConfiguration"]["level"] == "FATAL"


def test_a_logged_express_execution_writes_its_events_to_the_log_group(account: Account):
    """AWS's recording (LocalStack's express/test_express_async.snapshot.json, test_base
    [BASE_PASS_RESULT]): an Express execution started asynchronously, with logging level ALL to a
    log group, writes its history there, one JSON log event per history event; the last is
    {id: "4", previous_event_id: "3", type: ExecutionSucceeded, details: {output, outputDetails},
    execution_arn, redrive_count: "0"}; the execution's ARN is an Express one,
    `...:express:<machine>:<name>:<id>`. moto logged nothing (no log stream was ever made) and gave
    a Standard execution ARN."""
    sfn, logs = account.sfn, account.client("logs")
    logs.create_log_group(logGroupName="express-logs")
    group = logs.describe_log_groups(logGroupNamePrefix="express-logs")["logGroups"][0]["arn"]
    definition = {"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": True}}}
    arn = sfn.create_state_machine(
        name="express-logged",
        definition=json.dumps(definition),
        roleArn=ROLE_ARN,
        type="EXPRESS",
        loggingConfiguration={**_logged_to(group), "includeExecutionData": True},
    )["stateMachineArn"]
    execution_arn = sfn.start_execution(stateMachineArn=arn, name="run-1", input="{}")["executionArn"]
    assert re.fullmatch(arn.replace(":stateMachine:", ":express:") + r":run-1:[0-9a-f-]{36}", execution_arn)

    events: list = []
    # The execution runs on its own thread (Express: no DescribeExecution to poll). Between two reads
    # the test waits for an execution's end (bounded): reads back to back would spin against that thread.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        streams = logs.describe_log_streams(logGroupName="express-logs")["logStreams"]
        if streams:
            stream = streams[-1]["logStreamName"]
            got = logs.get_log_events(logGroupName="express-logs", logStreamName=stream, startFromHead=True)
            events = [json.loads(e["message"]) for e in got["events"]]
            if events and events[-1]["type"] == "ExecutionSucceeded":
                break
        account.aws.clock.poll_sleep(0.1)
    assert events and events[0]["type"] == "ExecutionStarted"
    last = events[-1]
    assert (last["type"], last["id"], last["previous_event_id"]) == ("ExecutionSucceeded", "4", "3")
    assert last["execution_arn"] == execution_arn and last["redrive_count"] == "0"
    assert json.loads(last["details"]["output"]) == {"Arg1": "argument1"}


def test_express_executions_are_not_listed_described_stopped_or_read(account: Account):
    """AWS's recording (LocalStack's test_sfn_api_express.snapshot.json,
    test_start_async_describe_history_execution) and the API reference ("This API action is not
    supported by EXPRESS state machines": API_ListExecutions, API_GetExecutionHistory,
    API_StopExecution, API_DescribeExecution): ListExecutions of an Express machine is
    StateMachineTypeNotSupported; DescribeExecution, StopExecution and GetExecutionHistory of an
    Express execution are InvalidArn. moto listed, described and read it as a Standard one."""
    sfn = account.sfn
    definition = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
    arn = sfn.create_state_machine(
        name="express-unlisted", definition=json.dumps(definition), roleArn=ROLE_ARN, type="EXPRESS"
    )["stateMachineArn"]
    execution_arn = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]

    with pytest.raises(ClientError) as listed:
        sfn.list_executions(stateMachineArn=arn)
    assert listed.value.response["Error"] == {
        "Code": "StateMachineTypeNotSupported",
        "Message": "This operation is not supported by this type of state machine",
    }
    for call in (sfn.describe_execution, sfn.stop_execution, sfn.get_execution_history):
        with pytest.raises(ClientError) as refused:
            call(executionArn=execution_arn)
        assert refused.value.response["Error"] == {
            "Code": "InvalidArn",
            "Message": "Invalid Arn: 'Resource type not valid in this context: express'",
        }, call


def test_send_task_failure_passes_its_cause_to_the_waiting_task(account: Account):
    """AWS's recording (LocalStack's error_handling/test_task_service_sqs.snapshot.json,
    test_sqs_failure_in_wait_for_task_tok): a `sqs:sendMessage.waitForTaskToken` task whose token
    gets SendTaskFailure(error "Failure error", cause "Failure cause") fails with both in its
    TaskFailed, and the Catch's output is {"Error": "Failure error", "Cause": "Failure cause"}
    (moto's SendTaskFailure dropped the cause: no cause, `"Cause": null`)."""
    sqs = account.client("sqs")
    queue_url = sqs.create_queue(QueueName="conformance-task-failure")["QueueUrl"]
    send = {
        "Type": "Task",
        "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {"QueueUrl": queue_url, "MessageBody": {"TaskToken.$": "$$.Task.Token"}},
        "Catch": [{"ErrorEquals": ["Failure error"], "Next": "Caught"}],
        "End": True,
    }
    definition = {"StartAt": "Send", "States": {"Send": send, "Caught": {"Type": "Pass", "End": True}}}
    arn = account.start(account.state_machine(definition), {})
    [message] = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=10)["Messages"]

    account.sfn.send_task_failure(
        taskToken=json.loads(message["Body"])["TaskToken"], error="Failure error", cause="Failure cause"
    )

    result = wait_for(account.sfn, arn, timeout=30)
    [failed] = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert (failed["error"], failed.get("cause")) == ("Failure error", "Failure cause")
    assert json.loads(account.describe(arn)["output"]) == {"Error": "Failure error", "Cause": "Failure cause"}


STATUS_DETAIL_FIELDS = {
    *("executionArn", "stateMachineArn", "name", "status", "startDate", "stopDate", "input", "output"),
    *("stateMachineVersionArn", "stateMachineAliasArn", "redriveCount", "redriveDate", "redriveStatus"),
    *("redriveStatusReason", "inputDetails", "outputDetails", "error", "cause"),
}


def _delivered(sqs, queue_url: str, count: int, timeout: float = 10.0) -> list[dict]:
    """The first `count` messages of a queue an EventBridge target fills: Step Functions sends the
    status change event after the status changes and EventBridge delivers it asynchronously (best
    effort, https://docs.aws.amazon.com/step-functions/latest/dg/eventbridge-integration.html), so a
    reader that saw SUCCEEDED waits for it (long polls, bounded)."""
    messages: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(messages) < count and time.monotonic() < deadline:
        answer = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        messages += answer.get("Messages", [])
    return messages


def test_status_change_events_reach_a_rules_sqs_target(account: Account):
    """AWS's recording (LocalStack's base/test_base.snapshot.json, test_event_bridge_events_base): a
    rule on the default bus matching `aws.states` and the machine's ARN, with an SQS target, gets a
    "Step Functions Execution Status Change" event when the execution starts (RUNNING, no stopDate,
    output or outputDetails) and one when it ends (SUCCEEDED, output as JSON text), each detail with
    the same fields (redriveStatus NOT_REDRIVABLE, "Execution is RUNNING and cannot be redriven", ...).
    An Express machine's executions send none; a Lambda target beside it is not the engine's (moto
    raised NotImplementedError for it), and the SQS target still gets its events; an SNS target
    publishes them."""
    sqs, events = account.client("sqs"), account.client("events")
    queue_url = sqs.create_queue(QueueName="conformance-status-events")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    topic_arn = account.client("sns").create_topic(Name="conformance-status-events")["TopicArn"]
    topic_queue_url = sqs.create_queue(QueueName="conformance-status-events-topic")["QueueUrl"]
    topic_queue_arn = sqs.get_queue_attributes(QueueUrl=topic_queue_url, AttributeNames=["QueueArn"])
    # SNS delivers only to a queue whose policy admits the topic (the embedded AWS enforces it, docs/IAM.md).
    sqs.set_queue_attributes(
        QueueUrl=topic_queue_url,
        Attributes={"Policy": topic_may_send(topic_arn, topic_queue_arn["Attributes"]["QueueArn"])},
    )
    account.client("sns").subscribe(
        TopicArn=topic_arn, Protocol="sqs", Endpoint=topic_queue_arn["Attributes"]["QueueArn"]
    )
    machine = account.state_machine(single_state({"Type": "Pass", "Result": {"Arg1": "argument1"}}))
    express = account.state_machine(single_state({"Type": "Pass"}), kind="EXPRESS")
    for name, arns, target in [
        ("conformance-to-sqs", [machine, express], queue_arn),
        ("conformance-to-lambda", [machine], "arn:aws:lambda:us-east-1:123456789012:function:elsewhere"),
        ("conformance-to-sns", [machine], topic_arn),
    ]:
        pattern = {"source": ["aws.states"], "detail": {"stateMachineArn": arns}}
        events.put_rule(Name=name, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=name, Targets=[{"Id": "target", "Arn": target}])
    sync_client(account).start_sync_execution(stateMachineArn=express, input="{}")

    result = wait_for(account.sfn, account.start(machine, {}), timeout=30)

    assert result.status == "SUCCEEDED"
    delivered = [json.loads(m["Body"]) for m in _delivered(sqs, queue_url, 2)]
    assert [e["detail"]["status"] for e in delivered] == ["RUNNING", "SUCCEEDED"]
    for event in delivered:
        assert {k: v for k, v in event.items() if k not in ("id", "time", "detail")} == {
            "version": "0",
            "detail-type": "Step Functions Execution Status Change",
            "source": "aws.states",
            "account": "123456789012",
            "region": REGION,
            "resources": [result.arn],
        }
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", event["time"])
        assert set(event["detail"]) == STATUS_DETAIL_FIELDS
    running, succeeded = (e["detail"] for e in delivered)
    same = {"executionArn": result.arn, "stateMachineArn": machine, "input": "{}", "inputDetails": {"included": True}}
    same |= {"stateMachineVersionArn": None, "stateMachineAliasArn": None, "redriveCount": 0, "redriveDate": None}
    same |= {"error": None, "cause": None, "redriveStatus": "NOT_REDRIVABLE", "name": result.name}
    assert running == {
        **same,
        "status": "RUNNING",
        "startDate": running["startDate"],
        "stopDate": None,
        "output": None,
        "outputDetails": None,
        "redriveStatusReason": "Execution is RUNNING and cannot be redriven",
    }
    assert succeeded == {
        **same,
        "status": "SUCCEEDED",
        "startDate": running["startDate"],
        "stopDate": succeeded["stopDate"],
        "output": '{"Arg1":"argument1"}',
        "outputDetails": {"included": True},
        "redriveStatusReason": "Execution is SUCCEEDED and cannot be redriven",
    }
    assert isinstance(running["startDate"], int) and succeeded["stopDate"] >= running["startDate"]
    published = _delivered(sqs, topic_queue_url, 2)
    assert [json.loads(json.loads(m["Body"])["Message"])["detail"] for m in published] == [running, succeeded]


def test_status_change_events_honour_a_targets_input_and_input_transformer(account: Account):
    """EventBridge hands a target its constant `Input` instead of the event, or what its
    InputTransformer makes of it (InputPathsMap, then InputTemplate)."""
    sqs, events = account.client("sqs"), account.client("events")
    urls = [sqs.create_queue(QueueName=f"conformance-status-input-{n}")["QueueUrl"] for n in range(2)]
    arns = [sqs.get_queue_attributes(QueueUrl=u, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"] for u in urls]
    machine = account.state_machine(single_state({"Type": "Pass"}))
    events.put_rule(Name="conformance-inputs", EventPattern=json.dumps({"source": ["aws.states"]}))
    transformer = {"InputPathsMap": {"status": "$.detail.status"}, "InputTemplate": '{"s": "<status>"}'}
    events.put_targets(
        Rule="conformance-inputs",
        Targets=[
            {"Id": "constant", "Arn": arns[0], "Input": '{"fixed": true}'},
            {"Id": "transformed", "Arn": arns[1], "InputTransformer": transformer},
        ],
    )

    wait_for(account.sfn, account.start(machine, {}), timeout=30)

    bodies = [[m["Body"] for m in _delivered(sqs, u, 2)] for u in urls]
    assert bodies[0] == ['{"fixed": true}', '{"fixed": true}']
    assert [json.loads(b) for b in bodies[1]] == [{"s": "RUNNING"}, {"s": "SUCCEEDED"}]


def test_status_change_events_skip_disabled_and_schedule_rules(account: Account):
    """Only an enabled rule with an event pattern matches events: a DISABLED rule's target and a
    schedule rule's target (moto's matcher takes a missing pattern as matching everything) get none,
    while an enabled rule beside them does."""
    sqs, events = account.client("sqs"), account.client("events")
    urls = [sqs.create_queue(QueueName=f"conformance-status-skip-{n}")["QueueUrl"] for n in range(3)]
    arns = [sqs.get_queue_attributes(QueueUrl=u, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"] for u in urls]
    pattern = json.dumps({"source": ["aws.states"]})
    events.put_rule(Name="conformance-disabled", EventPattern=pattern, State="DISABLED")
    events.put_rule(Name="conformance-schedule", ScheduleExpression="rate(5 minutes)")
    events.put_rule(Name="conformance-enabled", EventPattern=pattern)
    for rule, arn in zip(["conformance-disabled", "conformance-schedule", "conformance-enabled"], arns, strict=True):
        events.put_targets(Rule=rule, Targets=[{"Id": "queue", "Arn": arn}])

    wait_for(account.sfn, account.start(account.state_machine(single_state({"Type": "Pass"})), {}), timeout=30)

    enabled = _delivered(sqs, urls[2], 2)  # both events reached every matching target by then
    received = [len(sqs.receive_message(QueueUrl=u, MaxNumberOfMessages=10).get("Messages", [])) for u in urls[:2]]
    assert [*received, len(enabled)] == [0, 0, 2]
