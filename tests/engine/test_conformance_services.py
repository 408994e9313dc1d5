"""The embedded Step Functions' service integrations against AWS, one test per behaviour.

BEHAVIOURS lists each behaviour with the AWS page it follows and the test that checks it (as in
test_conformance.py); where a test follows one of LocalStack's recordings of AWS
(tests/aws/services/stepfunctions/v2/**/*.snapshot.json in LocalStack's repository, recorded
against AWS itself), its docstring names the recording. The engine's side is
onceflow/engine/stepfunctions/integrations/response_metadata.py and onceflow/engine/dynamodb/responses.py.
"""

from __future__ import annotations

import json
import threading
import uuid
import zlib
from typing import Any

import pytest
from moto.sqs.models import Queue

from tests.engine.behaviours import check_behaviours
from tests.engine.harness import Account, failed_event, single_state

SQS = "https://docs.aws.amazon.com/step-functions/latest/dg/connect-sqs.html"
SNS = "https://docs.aws.amazon.com/step-functions/latest/dg/connect-sns.html"
DYNAMODB = "https://docs.aws.amazon.com/step-functions/latest/dg/connect-ddb.html"
UPDATE_ITEM = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html"
LONG_POLL = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html"
AWS_SDK = "https://docs.aws.amazon.com/step-functions/latest/dg/supported-services-awssdk.html"
EVENTBRIDGE = "https://docs.aws.amazon.com/step-functions/latest/dg/connect-eventbridge.html"

BEHAVIOURS: dict[str, tuple[str, str]] = {
    "sqs:sendMessage's result carries SdkHttpMetadata (JSON body length) and SdkResponseMetadata": (
        SQS,
        "test_sqs_send_message_result_carries_the_http_metadata",
    ),
    "sns:publish's result carries SdkHttpMetadata (the XML body's length) and SdkResponseMetadata": (
        SNS,
        "test_sns_publish_result_carries_the_http_metadata",
    ),
    "dynamodb:putItem/getItem results carry SdkHttpMetadata (Server, x-amz-crc32); aws-sdk's none": (
        DYNAMODB,
        "test_dynamodb_results_carry_the_http_metadata_and_aws_sdk_results_none",
    ),
    "states:startExecution's result carries SdkHttpMetadata (JSON body length) and SdkResponseMetadata": (
        "https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html",
        "test_states_start_execution_result_carries_the_http_metadata",
    ),
    "SNS Publish: SequenceNumber for a FIFO topic, AWS's error without MessageGroupId or topic": (
        "https://docs.aws.amazon.com/sns/latest/api/API_Publish.html",
        "test_sns_publish_answers_as_aws_for_fifo_topics_and_missing_topics",
    ),
    "UpdateItem answers ConsumedCapacity only when ReturnConsumedCapacity asks for it": (
        UPDATE_ITEM,
        "test_update_item_answers_consumed_capacity_only_when_asked",
    ),
    "An SQS long poll returns a message sent while it waits; other calls are answered meanwhile": (
        LONG_POLL,
        "test_sqs_long_poll_receives_a_message_sent_while_it_waits",
    ),
    "A task calling Step Functions takes PascalCase parameters and answers PascalCase, dates as text": (
        AWS_SDK,
        "test_a_task_starting_an_execution_maps_the_parameters_and_result_casing",
    ),
    "dynamodb tasks: DynamoDB's ValidationException (table-name pattern, a required member missing)": (
        DYNAMODB,
        "test_dynamodb_task_validation_errors_are_dynamodbs_own",
    ),
    "Secrets Manager refuses a name outside its characters; the aws-sdk task: SecretsManagerException": (
        "https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html",
        "test_secret_names_outside_the_character_set_are_refused",
    ),
    "aws-sdk errors are named after the SDK service id (S3.NoSuchBucketException), caught by that name": (
        AWS_SDK,
        "test_aws_sdk_errors_are_named_after_the_service_id",
    ),
    "An aws-sdk:sfn task's error cause ends with ' (SDK Attempt Count: 1)', as AWS records it": (
        AWS_SDK,
        "test_an_aws_sdk_sfn_error_cause_carries_the_sdk_attempt_count",
    ),
    "events:putEvents reaches a rule's SQS target; a Detail that is no JSON object is MalformedDetail, the "
    "task fails EventBridge.FailedEntry with PutEvents' answer as JSON": (
        EVENTBRIDGE,
        "test_events_put_events_task_delivers_and_fails_a_malformed_detail_as_aws",
    ),
    "states:startExecution.sync / .sync:2 results carry the nested execution without the redrive fields": (
        "https://docs.aws.amazon.com/step-functions/latest/dg/connect-stepfunctions.html",
        "test_a_sync_nested_execution_result_has_no_redrive_fields",
    ),
}


def test_every_behaviour_names_an_aws_page_and_a_test():
    check_behaviours(BEHAVIOURS, globals())


def _task_result(account: Account, resource: str, parameters: dict[str, Any]) -> dict[str, Any]:
    result = account.run(single_state({"Type": "Task", "Resource": resource, "Parameters": parameters}), {})
    assert result.status == "SUCCEEDED", result.history
    [succeeded] = [e["taskSucceededEventDetails"] for e in result.history if e["type"] == "TaskSucceeded"]
    return json.loads(succeeded["output"])


def _check_metadata(output: dict[str, Any], headers: dict[str, str]) -> None:
    """The metadata's shape as AWS records it: the same headers once as lists, once as strings."""
    http = output["SdkHttpMetadata"]
    assert http["HttpStatusCode"] == 200
    assert http["AllHttpHeaders"] == {name: [value] for name, value in http["HttpHeaders"].items()}
    varying = {"Date", "x-amzn-RequestId", "x-amzn-requestid", "x-amz-crc32"}
    assert {k: v for k, v in http["HttpHeaders"].items() if k not in varying} == headers
    assert "Date" in http["HttpHeaders"] and http["HttpHeaders"]["Date"].endswith(" GMT")


def test_sqs_send_message_result_carries_the_http_metadata(account: Account):
    """AWS's recording (LocalStack's services/test_sqs_task_service.snapshot.json, test_send_message):
    the result is MD5OfMessageBody, MessageId, SdkHttpMetadata {AllHttpHeaders, HttpHeaders
    (Content-Length "106": the JSON body `{"MD5OfMessageBody":"…","MessageId":"…"}`, Content-Type
    application/x-amz-json-1.0, connection, Date, x-amzn-RequestId), HttpStatusCode 200} and
    SdkResponseMetadata {RequestId}, the same request id as the header."""
    queue_url = account.client("sqs").create_queue(QueueName="conformance-metadata")["QueueUrl"]

    output = _task_result(account, "arn:aws:states:::sqs:sendMessage", {"QueueUrl": queue_url, "MessageBody": "hello"})

    assert set(output) == {"MD5OfMessageBody", "MessageId", "SdkHttpMetadata", "SdkResponseMetadata"}
    _check_metadata(
        output, {"Content-Length": "106", "Content-Type": "application/x-amz-json-1.0", "connection": "keep-alive"}
    )
    request_id = output["SdkResponseMetadata"]["RequestId"]
    assert output["SdkHttpMetadata"]["HttpHeaders"]["x-amzn-RequestId"] == str(uuid.UUID(request_id))


def test_sns_publish_result_carries_the_http_metadata(account: Account):
    """AWS's recording (LocalStack's services/test_sns_task_service.snapshot.json, test_publish_base):
    MessageId and the metadata, Content-Type text/xml, Content-Length "294" (the query protocol's
    PublishResponse for a UUID message id and request id)."""
    topic_arn = account.client("sns").create_topic(Name="conformance-metadata")["TopicArn"]

    output = _task_result(account, "arn:aws:states:::sns:publish", {"TopicArn": topic_arn, "Message": "hello"})

    assert set(output) == {"MessageId", "SdkHttpMetadata", "SdkResponseMetadata"}
    _check_metadata(output, {"Content-Length": "294", "Content-Type": "text/xml", "connection": "keep-alive"})
    assert output["SdkHttpMetadata"]["HttpHeaders"]["x-amzn-RequestId"] == output["SdkResponseMetadata"]["RequestId"]


def test_dynamodb_results_carry_the_http_metadata_and_aws_sdk_results_none(account: Account):
    """AWS's recording (LocalStack's services/test_dynamodb_task_service.snapshot.json,
    test_base_integrations[DYNAMODB_PUT_GET_ITEM]): putItem's result is the metadata alone
    (Content-Length "2": `{}`), getItem's the Item and the metadata (Content-Length "53"), headers
    Connection, Content-Type, Date, Server "Server", x-amz-crc32 (the body's CRC32) and the request
    id (lower case for GetItem); the aws-sdk query of the same recording carries no metadata."""
    dynamodb = account.client("dynamodb")
    dynamodb.create_table(
        TableName="conformance-metadata",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {"data": {"S": "HelloWorld"}, "id": {"S": "id1"}}
    table = {"TableName": "conformance-metadata"}
    dynamo_headers = {"Connection": "keep-alive", "Content-Type": "application/x-amz-json-1.0", "Server": "Server"}

    put = _task_result(account, "arn:aws:states:::dynamodb:putItem", {**table, "Item": item})
    got = _task_result(account, "arn:aws:states:::dynamodb:getItem", {**table, "Key": {"id": {"S": "id1"}}})
    queried = _task_result(
        account,
        "arn:aws:states:::aws-sdk:dynamodb:query",
        {**table, "KeyConditionExpression": "id = :id", "ExpressionAttributeValues": {":id": {"S": "id1"}}},
    )

    assert set(put) == {"SdkHttpMetadata", "SdkResponseMetadata"}
    _check_metadata(put, {**dynamo_headers, "Content-Length": "2"})
    assert put["SdkHttpMetadata"]["HttpHeaders"]["x-amz-crc32"] == str(zlib.crc32(b"{}"))
    assert put["SdkHttpMetadata"]["HttpHeaders"]["x-amzn-RequestId"] == put["SdkResponseMetadata"]["RequestId"]
    assert got["Item"] == item
    _check_metadata(got, {**dynamo_headers, "Content-Length": "53"})
    assert "x-amzn-requestid" in got["SdkHttpMetadata"]["HttpHeaders"]
    assert "SdkHttpMetadata" not in queried and "SdkResponseMetadata" not in queried
    assert queried["Items"] == [item]


def test_states_start_execution_result_carries_the_http_metadata(account: Account):
    """AWS's recording (LocalStack's services/test_sfn_task_service.snapshot.json,
    test_start_execution_input_json): ExecutionArn, StartDate and the metadata, the headers those
    of SQS's JSON protocol; Content-Length is the body `{"executionArn":"…","startDate":1.7…E9}`."""
    child = account.state_machine(single_state({"Type": "Pass"}))
    output = _task_result(
        account, "arn:aws:states:::states:startExecution", {"StateMachineArn": child, "Input": {"a": 1}, "Name": "kid"}
    )

    assert set(output) == {"ExecutionArn", "StartDate", "SdkHttpMetadata", "SdkResponseMetadata"}
    start = account.sfn.describe_execution(executionArn=output["ExecutionArn"])["startDate"]
    seconds = f"{start.timestamp():.3f}".rstrip("0").rstrip(".").replace(".", "")
    java = f"{seconds[0]}.{seconds[1:] or '0'}E9"
    body = f'{{"executionArn":"{output["ExecutionArn"]}","startDate":{java}}}'
    _check_metadata(
        output,
        {"Content-Length": str(len(body)), "Content-Type": "application/x-amz-json-1.0", "connection": "keep-alive"},
    )
    assert output["SdkHttpMetadata"]["HttpHeaders"]["x-amzn-RequestId"] == output["SdkResponseMetadata"]["RequestId"]


def test_update_item_answers_consumed_capacity_only_when_asked(account: Account):
    """UpdateItem: "ConsumedCapacity ... is only returned if the ReturnConsumedCapacity parameter
    was specified" (AWS's recording: LocalStack's services/test_aws_sdk_task_service.snapshot.json,
    test_dynamodb_put_update_get_item: the aws-sdk updateItem result has no ConsumedCapacity)."""
    dynamodb = account.client("dynamodb")
    dynamodb.create_table(
        TableName="conformance-capacity",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    update = {
        "TableName": "conformance-capacity",
        "Key": {"id": {"S": "id1"}},
        "UpdateExpression": "SET v = :v",
        "ExpressionAttributeValues": {":v": {"S": "x"}},
    }

    plain = dynamodb.update_item(**update)
    asked = dynamodb.update_item(**update, ReturnConsumedCapacity="TOTAL")

    assert "ConsumedCapacity" not in plain
    assert asked["ConsumedCapacity"]["TableName"] == "conformance-capacity"


def test_sns_publish_answers_as_aws_for_fifo_topics_and_missing_topics(account: Account):
    """AWS's recordings (LocalStack's services/test_sns_task_service.snapshot.json):
    test_fifo_message_attribute (a FIFO publish answers a SequenceNumber, Content-Length 352; without
    MessageGroupId: SNS.InvalidParameterException "Invalid parameter: The MessageGroupId parameter is
    required for FIFO topics") and test_publish_base_error_topic_arn (SNS.NotFoundException "Topic
    does not exist"; moto: "Endpoint does not exist")."""
    sns = account.client("sns")
    topic_arn = sns.create_topic(
        Name="conformance.fifo", Attributes={"FifoTopic": "true", "ContentBasedDeduplication": "true"}
    )["TopicArn"]
    missing_arn = topic_arn.replace("conformance.fifo", "no-such-topic")
    publish = "arn:aws:states:::sns:publish"

    output = _task_result(account, publish, {"TopicArn": topic_arn, "Message": "m", "MessageGroupId": "g"})
    without_group = account.run(
        single_state({"Type": "Task", "Resource": publish, "Parameters": {"TopicArn": topic_arn, "Message": "m"}}), {}
    )
    missing = account.run(
        single_state({"Type": "Task", "Resource": publish, "Parameters": {"TopicArn": missing_arn, "Message": "m"}}), {}
    )

    assert len(output["SequenceNumber"]) == 20 and output["SequenceNumber"].isdigit()
    assert output["SdkHttpMetadata"]["HttpHeaders"]["Content-Length"] == "352"
    [failed] = [e["taskFailedEventDetails"] for e in without_group.history if e["type"] == "TaskFailed"]
    assert failed["error"] == "SNS.InvalidParameterException"
    assert failed["cause"].startswith("Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
    [failed] = [e["taskFailedEventDetails"] for e in missing.history if e["type"] == "TaskFailed"]
    assert (failed["error"], failed["cause"].split(" (")[0]) == ("SNS.NotFoundException", "Topic does not exist")


def test_aws_sdk_errors_are_named_after_the_service_id(account: Account):
    """AWS's recordings (LocalStack's error_handling/test_aws_sdk.snapshot.json, test_no_such_bucket
    and test_s3_no_such_key): an aws-sdk:s3 task's error is `S3.NoSuchBucketException` /
    `S3.NoSuchKeyException` (moto: `s3.`), its cause "The specified bucket does not exist (Service:
    S3, Status Code: 404, Request ID: …, Extended Request ID: …)", and a Catch on that name handles it."""
    account.client("s3").create_bucket(Bucket="conformance-errors")
    catch = [{"ErrorEquals": ["S3.NoSuchKeyException"], "Next": "Caught"}]
    definition = {
        "StartAt": "List",
        "States": {
            "List": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:s3:listObjects",
                "Parameters": {"Bucket": "conformance-no-such-bucket"},
                "Catch": [{"ErrorEquals": ["S3.NoSuchBucketException"], "Next": "Get"}],
                "End": True,
            },
            "Get": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
                "Parameters": {"Bucket": "conformance-errors", "Key": "no-such-key"},
                "Catch": catch,
                "End": True,
            },
            "Caught": {"Type": "Succeed"},
        },
    }

    result = account.run(definition, {})

    assert result.status == "SUCCEEDED", result.history
    failed = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert [f["error"] for f in failed] == ["S3.NoSuchBucketException", "S3.NoSuchKeyException"]
    assert failed[0]["cause"].startswith("The specified bucket does not exist (Service: S3, Status Code: 404, ")
    assert ", Extended Request ID: " in failed[0]["cause"] and ", Extended Request ID: " in failed[1]["cause"]


@pytest.mark.parametrize(
    ("action", "parameters"),
    [("sendTaskSuccess", {"Output": "ParameterOutput"}), ("sendTaskFailure", {"Error": "Failure error"})],
)
def test_an_aws_sdk_sfn_error_cause_carries_the_sdk_attempt_count(account: Account, action: str, parameters: dict):
    """AWS's recording (LocalStack's services/test_aws_sdk_task_service.snapshot.json,
    test_sfn_send_task_outcome_with_no_such_token, both templates, 2025): the task fails with
    `Sfn.InvalidTokenException`, cause "Invalid Token: 'Invalid token' (Service: Sfn, Status Code:
    400, Request ID: …) (SDK Attempt Count: 1)", in TaskFailed and ExecutionFailed alike."""
    task = {"Type": "Task", "Resource": f"arn:aws:states:::aws-sdk:sfn:{action}", "End": True}
    task["Parameters"] = {**parameters, "TaskToken.$": "$.TaskToken"}

    result = account.run(single_state(task), {"TaskToken": "NoSuchTaskToken"})

    [failed] = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert failed["error"] == "Sfn.InvalidTokenException"
    assert failed["cause"].startswith("Invalid Token: 'Invalid token' (Service: Sfn, Status Code: 400, Request ID: ")
    assert failed["cause"].endswith(") (SDK Attempt Count: 1)")
    assert failed_event(result)["cause"] == failed["cause"]


def test_sqs_long_poll_receives_a_message_sent_while_it_waits(account: Account, monkeypatch: pytest.MonkeyPatch):
    """Long polling "returns messages as soon as they become available" (moto's wait held the
    endpoint's request lock, so the SendMessage waited for the poll to end empty). As AWS's
    recording (LocalStack's services/test_sns_task_service.snapshot.json,
    test_publish_message_attributes) shows: the subscribed queue's poll receives the publication."""
    url = account.client("sqs").create_queue(QueueName="conformance-long-poll")["QueueUrl"]
    waiting = threading.Event()
    wait_for_messages = Queue.wait_for_messages

    def noting_the_wait(queue: Queue, timeout: int) -> None:
        waiting.set()
        wait_for_messages(queue, timeout)

    monkeypatch.setattr(Queue, "wait_for_messages", noting_the_wait)
    received: dict[str, Any] = {}
    poller = threading.Thread(
        target=lambda: received.update(account.client("sqs").receive_message(QueueUrl=url, WaitTimeSeconds=2))
    )
    poller.start()
    assert waiting.wait(timeout=10), "the poll never waited"

    account.client("sqs").send_message(QueueUrl=url, MessageBody="hello")
    poller.join(timeout=10)

    assert [message["Body"] for message in received.get("Messages", [])] == ["hello"]


@pytest.mark.parametrize(
    "resource", ["arn:aws:states:::aws-sdk:sfn:startExecution", "arn:aws:states:::states:startExecution"]
)
def test_a_task_starting_an_execution_maps_the_parameters_and_result_casing(account: Account, resource: str):
    """AWS's recordings (LocalStack's services/test_aws_sdk_task_service.snapshot.json,
    test_sfn_start_execution; services/test_sfn_task_service.snapshot.json,
    test_start_execution_input_json): Parameters StateMachineArn/Input/Name start the target (the
    API's own members are stateMachineArn/input/name), the aws-sdk result is {"ExecutionArn",
    "StartDate"} with the date as ISO 8601 text (moto: States.Runtime "'StateMachineArn'")."""
    target = account.state_machine(single_state({"Type": "Pass"}))
    parameters = {"StateMachineArn": target, "Input": {"a": 1}, "Name": f"started-{uuid.uuid4().hex[:8]}"}

    output = _task_result(account, resource, parameters)

    assert output["ExecutionArn"].endswith(f":{parameters['Name']}")
    assert output["StartDate"].endswith("Z") and "T" in output["StartDate"]
    started = account.describe(output["ExecutionArn"])
    assert json.loads(started["input"]) == {"a": 1}


@pytest.mark.parametrize(
    ("parameters", "cause"),
    [
        (
            {"TableName": "/conformance", "Item": {"id": {"S": "1"}}},
            "1 validation error detected: Value '/conformance' at 'tableName' failed to satisfy constraint: "
            "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
        ),
        (
            {"TableName": "conformance-validation"},
            "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null",
        ),
    ],
)
def test_dynamodb_task_validation_errors_are_dynamodbs_own(account: Account, parameters: dict, cause: str):
    """AWS's recordings (LocalStack's error_handling/test_task_service_dynamodb.snapshot.json,
    test_put_item_invalid_table_name and test_invalid_param): DynamoDB.AmazonDynamoDBException with
    the ValidationException's message and "(Service: AmazonDynamoDBv2; Status Code: 400; Error Code:
    ValidationException; ..." (moto: DynamoDB.ResourceNotFoundException, and a Python error)."""
    account.client("dynamodb").create_table(
        TableName="conformance-validation",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    definition = single_state(
        {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem", "Parameters": parameters}
    )

    result = account.run(definition, {})

    [failed] = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert failed["error"] == "DynamoDB.AmazonDynamoDBException"
    assert failed["cause"].startswith(
        f"{cause} (Service: AmazonDynamoDBv2; Status Code: 400; Error Code: ValidationException; Request ID: "
    )


def test_secret_names_outside_the_character_set_are_refused(account: Account):
    """AWS's recording (LocalStack's error_handling/test_aws_sdk.snapshot.json,
    test_invalid_secret_name): createSecret named "Invalid Name" fails with
    SecretsManager.SecretsManagerException, cause "Invalid name. Must be a valid name containing
    alphanumeric characters, or any of the following: -/_+=.@! (Service: SecretsManager, Status
    Code: 400, Request ID: ...)" (moto created the secret)."""
    definition = single_state(
        {
            "Type": "Task",
            "Resource": "arn:aws:states:::aws-sdk:secretsmanager:createSecret",
            "Parameters": {"Name": "Invalid Name", "SecretString": "HelloWorld"},
        }
    )

    result = account.run(definition, {})

    [failed] = [e["taskFailedEventDetails"] for e in result.history if e["type"] == "TaskFailed"]
    assert failed["error"] == "SecretsManager.SecretsManagerException"
    assert failed["cause"].startswith(
        "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: "
        "-/_+=.@! (Service: SecretsManager, Status Code: 400, Request ID: "
    )


def test_events_put_events_task_delivers_and_fails_a_malformed_detail_as_aws(account: Account):
    """AWS's recordings (services/test_events_task_service.snapshot.json, November 2025):
    test_put_events_base: each entry reaches the rule's SQS target with the state machine's and the
    execution's ARNs added to `resources`, the task's result is {"Entries": [{"EventId"}…],
    "FailedEntryCount": 0}; test_put_events_mixed_malformed_detail: a Detail of `"jsonstring"` is
    {"ErrorCode": "MalformedDetail", "ErrorMessage": "Detail is malformed."}, the other entry is
    put, and the task fails `EventBridge.FailedEntry` with the answer as JSON for its cause. (moto:
    HTTP 500, the task failed States.Runtime.)"""
    sqs, events = account.client("sqs"), account.client("events")
    queue_url = sqs.create_queue(QueueName="conformance-put-events")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="conformance-put-events", EventPattern=json.dumps({"detail-type": ["conformance"]}))
    events.put_targets(Rule="conformance-put-events", Targets=[{"Id": "queue", "Arn": queue_arn}])
    task = {"Type": "Task", "Resource": "arn:aws:states:::events:putEvents", "Parameters": {"Entries.$": "$"}}
    entry = {"DetailType": "conformance", "Source": "some.source"}

    put = account.run(single_state(task), [{**entry, "Detail": {"Message": "HelloWorld"}}])
    mixed = account.run(
        single_state(task), [{**entry, "Detail": '{"Message": "Hi"}'}, {**entry, "Detail": '"jsonstring"'}]
    )

    assert put.status == "SUCCEEDED", put.history
    [succeeded] = [e["taskSucceededEventDetails"] for e in put.history if e["type"] == "TaskSucceeded"]
    answer = json.loads(succeeded["output"])
    assert answer["FailedEntryCount"] == 0 and [set(e) for e in answer["Entries"]] == [{"EventId"}]
    assert mixed.status == "FAILED"
    failure = failed_event(mixed)
    assert failure["error"] == "EventBridge.FailedEntry"
    cause = json.loads(failure["cause"])
    assert list(cause) == ["Entries", "FailedEntryCount"] and cause["FailedEntryCount"] == 1
    assert cause["Entries"][1] == {"ErrorCode": "MalformedDetail", "ErrorMessage": "Detail is malformed."}
    delivered = [
        json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10)["Messages"]
    ]
    assert sorted(d["detail"]["Message"] for d in delivered) == ["HelloWorld", "Hi"]
    for event in delivered:
        assert [arn.split(":")[5] for arn in event["resources"]] == ["stateMachine", "execution"]


def test_a_sync_nested_execution_result_has_no_redrive_fields(account: Account):
    """AWS's recordings (callback/test_callback.snapshot.json test_start_execution_sync, June 2023;
    test_start_execution_sync2, August 2023): the task's result is ExecutionArn, Input,
    InputDetails, Name, Output, OutputDetails, StartDate, StateMachineArn, Status, StopDate (with
    `.sync:2`, Input and Output as JSON, not text); no RedriveCount/RedriveStatus/RedriveStatusReason."""
    child = account.state_machine(single_state({"Type": "Pass", "Result": {"Arg1": "argument1"}}))
    expected = {"ExecutionArn", "Input", "InputDetails", "Name", "Output", "OutputDetails", "StartDate"}
    expected |= {"StateMachineArn", "Status", "StopDate"}
    for resource, output in (
        ("startExecution.sync", '{"Arg1":"argument1"}'),
        ("startExecution.sync:2", {"Arg1": "argument1"}),
    ):
        parameters = {"StateMachineArn": child, "Input": {}, "Name": f"target-{resource[-1]}"}
        result = _task_result(account, f"arn:aws:states:::states:{resource}", parameters)
        assert set(result) == expected, resource
        assert result["Output"] == output and result["Status"] == "SUCCEEDED"
