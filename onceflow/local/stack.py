"""Deploy template.yaml onto the embedded AWS: moto CloudFormation for the data resources,
the real ASL file (substitutions resolved) for the state machine."""

from __future__ import annotations

import functools
import json
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3

from onceflow.domain import Domain, load_domain
from onceflow.engine import ACCOUNT_ID, REGION
from onceflow.local.template import TEMPLATE_PATH, EmulatedFunction, LocalPlan, plan_local_stack

DEFAULT_STACK_NAME = "onceflow-local"
_NO_VALUE = "AWS::NoValue"


class StackError(RuntimeError):
    pass


@dataclass(frozen=True)
class EventSourceSettings:
    """The SQS event source mapping's behaviour, as the template configures it."""

    batch_size: int
    batching_window_seconds: float
    maximum_concurrency: int
    visibility_timeout: int
    max_receive_count: int | None


@dataclass(frozen=True)
class LocalFunction:
    """A function of the template, as the local runtime runs it."""

    logical_id: str
    name: str
    code_dir: Path
    handler: str
    timeout: int
    layer_dirs: tuple[Path, ...]
    environment: dict[str, str]
    schedules: tuple[str, ...] = ()
    # Where failed asynchronous invocations go (the function's DeadLetterConfig), as a queue URL.
    dead_letter_queue_url: str | None = None
    # The queue of its SQS event source and that mapping's settings, if it has one.
    queue_url: str | None = None
    event_source: EventSourceSettings | None = None
    # Its execution role: what its calls (and its event source's, and its failed asynchronous
    # invocations' dead letters) are authorized as.
    role_arn: str | None = None


@dataclass(frozen=True)
class LocalStack:
    endpoint_url: str
    stack_name: str
    outputs: dict[str, str]
    source_queue_url: str
    dead_letter_queue_url: str
    state_machine_arn: str
    processed_events_table: str
    business_table: str
    notification_topic_arn: str
    starter_code_dir: Path
    starter_handler: str
    starter_timeout: int
    starter_environment: dict[str, str]
    event_source: EventSourceSettings
    definition_path: Path
    substitutions: dict[str, str] = field(default_factory=dict)
    # boto3 client name -> endpoint URL, for services that are not at `endpoint_url` (external endpoints).
    service_endpoints: dict[str, str] = field(default_factory=dict)
    # Every function of the template by logical id (the starter's fields above repeat its entry).
    functions: dict[str, LocalFunction] = field(default_factory=dict)
    # The business table's key attribute (its key schema's HASH key), where the event_id is written.
    business_key: str = ""
    template_path: Path = TEMPLATE_PATH
    parameters: dict[str, str] = field(default_factory=dict)

    @functools.cached_property
    def domain(self) -> Domain:
        """The app's domain: its sample body and where its event_id is (onceflow.domain)."""
        return load_domain(self.template_path, self.parameters)

    @property
    def subscribers(self) -> list[LocalFunction]:
        """SQS-triggered functions other than the starter (behind queues subscribed to the topic)."""
        return [f for f in self.functions.values() if f.queue_url and f.code_dir != self.starter_code_dir]

    @property
    def fifo(self) -> bool:
        """A FIFO source queue (SourceQueueType FIFO): SQS requires the .fifo suffix of its name."""
        return self.source_queue_url.endswith(".fifo")

    @property
    def express(self) -> bool:
        """An EXPRESS state machine (StateMachineType): its executions are neither listed nor described,
        and send no status change events."""
        return self.starter_environment.get("STATE_MACHINE_TYPE") == "EXPRESS"  # template.yaml sets it

    @property
    def scheduled_functions(self) -> list[LocalFunction]:
        """Functions that a schedule rule invokes (the reconciler)."""
        return [f for f in self.functions.values() if f.schedules]

    def client(self, service: str) -> Any:
        return client(self.service_endpoints.get(service, self.endpoint_url), service)

    def describe(self) -> dict[str, Any]:
        return {
            "endpoint_url": self.endpoint_url,
            "source_queue_url": self.source_queue_url,
            "dead_letter_queue_url": self.dead_letter_queue_url,
            "state_machine_arn": self.state_machine_arn,
            "processed_events_table": self.processed_events_table,
            "business_table": self.business_table,
            "notification_topic_arn": self.notification_topic_arn,
        }


_CLIENT_CREATION = threading.Lock()  # building clients on one boto3 session is not thread-safe


@functools.cache
def _session() -> boto3.session.Session:
    """A boto3 session whose clients read JSON responses and timestamps with the client commands'
    readers (onceflow/ops/client_speedups.py: json_responses, timestamps; each compared with
    botocore's in tests/operations/, each switchable with ONCEFLOW_CLIENT_SPEEDUPS_OFF): the
    report's read of every execution's history was a tenth of the demo's CPU."""
    import botocore.session

    from onceflow.ops import json_responses, timestamps

    return boto3.session.Session(
        botocore_session=timestamps.install(json_responses.install(botocore.session.Session()))
    )


@functools.cache
def client(endpoint_url: str, service: str) -> Any:
    """One client per endpoint and service, shared (boto3 clients are thread-safe; building one
    costs about 10 ms of CPU, and the pipeline, the tests and the tools ask for many)."""
    with _CLIENT_CREATION:
        return _session().client(
            service,
            endpoint_url=endpoint_url,
            region_name=REGION,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )


def render_definition(definition_path: Path, substitutions: dict[str, str]) -> str:
    """DefinitionSubstitutions, applied as CloudFormation applies them: `${Key}` text replaced."""
    text = definition_path.read_text()
    for key, value in substitutions.items():
        text = text.replace("${" + key + "}", value)
    json.loads(text)  # fail here, not inside the engine, if the result is not JSON
    return text


def _wait_for_stack(cloudformation: Any, stack_name: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        stack = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
        status = stack["StackStatus"]
        if status.endswith("_COMPLETE") and "ROLLBACK" not in status:
            return stack
        if "FAILED" in status or "ROLLBACK" in status:
            events = cloudformation.describe_stack_events(StackName=stack_name)["StackEvents"][:5]
            reasons = [f"{e['LogicalResourceId']}: {e.get('ResourceStatusReason', '')}" for e in events]
            raise StackError(f"stack {stack_name} ended {status}: {reasons}")
        if time.monotonic() > deadline:
            raise StackError(f"stack {stack_name} still {status} after {timeout}s")
        time.sleep(0.1)


def _subscribe(endpoint_url: str, plan: LocalPlan, outputs: dict[str, str]) -> None:
    """moto's CloudFormation skips AWS::SNS::Subscription; make each (whose Condition holds) through the API."""
    sns = client(endpoint_url, "sns")
    for subscription in plan.subscriptions:
        prefix = subscription.output_prefix
        if prefix + "Topic" not in outputs:
            continue
        attributes = {name: outputs[prefix + name] for name in subscription.ATTRIBUTES if prefix + name in outputs}
        if prefix + "RedriveTarget" in outputs:
            attributes["RedrivePolicy"] = json.dumps({"deadLetterTargetArn": outputs[prefix + "RedriveTarget"]})
        sns.subscribe(
            TopicArn=outputs[prefix + "Topic"],
            Protocol=outputs[prefix + "Protocol"],
            Endpoint=outputs[prefix + "Endpoint"],
            Attributes=attributes,
        )


def _apply_what_moto_cloudformation_skips(endpoint_url: str, plan: LocalPlan) -> None:
    """moto's CloudFormation ignores a table's TimeToLiveSpecification; apply it through the API."""
    dynamodb = client(endpoint_url, "dynamodb")
    cloudformation = client(endpoint_url, "cloudformation")
    physical = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cloudformation.list_stack_resources(StackName=plan.stack_name)["StackResourceSummaries"]
    }
    for logical_id, resource in plan.cloudformation["Resources"].items():
        ttl = resource.get("Properties", {}).get("TimeToLiveSpecification")
        if resource["Type"] == "AWS::DynamoDB::Table" and ttl and ttl.get("Enabled"):
            dynamodb.update_time_to_live(
                TableName=physical[logical_id],
                TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": True},
            )


def deploy(
    endpoint_url: str,
    stack_name: str = DEFAULT_STACK_NAME,
    parameter_overrides: dict[str, Any] | None = None,
    template_path: Path = TEMPLATE_PATH,
) -> LocalStack:
    """Create the stack from template.yaml (or another copy of it) on the endpoint and return where everything is."""
    plan = plan_local_stack(stack_name, REGION, ACCOUNT_ID, parameter_overrides, template_path)
    cloudformation = client(endpoint_url, "cloudformation")
    # moto's CloudFormation skips types it cannot create (alarms, dashboards, queue policies) with
    # a UserWarning each, from its server thread; they have no effect on the local run.
    warnings.filterwarnings("ignore", message="Tried to parse AWS::", category=UserWarning)
    cloudformation.create_stack(
        StackName=stack_name,
        TemplateBody=json.dumps(plan.cloudformation),
        Parameters=[{"ParameterKey": k, "ParameterValue": str(v)} for k, v in (parameter_overrides or {}).items()],
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"],
    )
    outputs = _outputs(_wait_for_stack(cloudformation, stack_name))
    _apply_what_moto_cloudformation_skips(endpoint_url, plan)
    _subscribe(endpoint_url, plan, outputs)
    substitutions = definition_substitutions(plan, outputs)
    client(endpoint_url, "stepfunctions").create_state_machine(
        name=plan.state_machine_name,
        definition=render_definition(plan.state_machine.definition_path, substitutions),
        roleArn=outputs["LocalStateMachineRoleArn"],
        type=outputs.get("LocalStateMachineType", "STANDARD"),
    )
    parameters = {key: str(value) for key, value in (parameter_overrides or {}).items()}
    return build_local_stack(endpoint_url, plan, outputs, parameters=parameters)


def attach(endpoint_url: str, stack_name: str = DEFAULT_STACK_NAME, template_path: Path = TEMPLATE_PATH) -> LocalStack:
    """Find a stack that `deploy` made earlier on a running endpoint (e.g. `onceflow start`)."""
    cloudformation = client(endpoint_url, "cloudformation")
    try:
        described = cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    except cloudformation.exceptions.ClientError as error:
        raise StackError(f"no local stack {stack_name!r} at {endpoint_url}: start one with `onceflow start`") from error
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in described.get("Parameters", [])}
    plan = plan_local_stack(stack_name, REGION, ACCOUNT_ID, parameters, template_path)
    return build_local_stack(endpoint_url, plan, _outputs(described), parameters=parameters)


def _outputs(described: dict[str, Any]) -> dict[str, str]:
    return {
        o["OutputKey"]: o["OutputValue"]
        for o in described.get("Outputs", [])
        if o.get("OutputValue") not in (None, _NO_VALUE)
    }


def definition_substitutions(plan: LocalPlan, outputs: dict[str, str]) -> dict[str, str]:
    return {
        key: outputs["LocalSub" + "".join(c for c in key if c.isalnum())]
        for key in plan.state_machine.substitution_keys
    }


def build_local_stack(
    endpoint_url: str,
    plan: LocalPlan,
    outputs: dict[str, str],
    service_endpoints: dict[str, str] | None = None,
    state_machine_arn: str | None = None,
    parameters: dict[str, str] | None = None,
) -> LocalStack:
    service_endpoints = service_endpoints or {}
    sqs = client(service_endpoints.get("sqs", endpoint_url), "sqs")
    dynamodb = client(service_endpoints.get("dynamodb", endpoint_url), "dynamodb")
    source_queue_url = outputs["SourceQueueUrl"]
    functions = {
        lid: _local_function(sqs, function, outputs)
        for lid, function in plan.functions.items()
        if function.condition is None or function.deployed_output in outputs
    }
    starter = functions[plan.function.logical_id]
    assert starter.event_source is not None  # the plan found it behind the source queue
    return LocalStack(
        endpoint_url=endpoint_url,
        stack_name=plan.stack_name,
        outputs={k: v for k, v in outputs.items() if not k.startswith("Local")},
        source_queue_url=source_queue_url,
        dead_letter_queue_url=outputs["DeadLetterQueueUrl"],
        state_machine_arn=state_machine_arn
        or f"arn:aws:states:{REGION}:{ACCOUNT_ID}:stateMachine:{plan.state_machine_name}",
        processed_events_table=outputs["ProcessedEventsTableName"],
        business_table=outputs["BusinessTableName"],
        notification_topic_arn=outputs["NotificationTopicArn"],
        starter_code_dir=starter.code_dir,
        starter_handler=starter.handler,
        starter_timeout=starter.timeout,
        starter_environment=starter.environment,
        event_source=starter.event_source,
        definition_path=plan.state_machine.definition_path,
        substitutions=definition_substitutions(plan, outputs),
        service_endpoints=dict(service_endpoints),
        functions=functions,
        business_key=hash_key(dynamodb, outputs["BusinessTableName"]),
        template_path=plan.template_path,
        parameters=dict(parameters or {}),
    )


def hash_key(dynamodb: Any, table_name: str) -> str:
    """A table's partition key attribute, as DescribeTable tells it."""
    schema = dynamodb.describe_table(TableName=table_name)["Table"]["KeySchema"]
    return next(key["AttributeName"] for key in schema if key["KeyType"] == "HASH")


def _local_function(sqs: Any, function: EmulatedFunction, outputs: dict[str, str]) -> LocalFunction:
    dead_letter_arn = outputs.get(function.dead_letter_output)
    dead_letter_url = (
        sqs.get_queue_url(QueueName=dead_letter_arn.rsplit(":", 1)[-1])["QueueUrl"] if dead_letter_arn else None
    )
    queue_url = outputs.get(function.queue_output)
    return LocalFunction(
        queue_url=queue_url,
        event_source=_event_source_settings(sqs, function, queue_url, outputs) if queue_url else None,
        logical_id=function.logical_id,
        name=function.name,
        code_dir=function.code_dir,
        handler=function.handler,
        timeout=int(outputs.get(function.timeout_output, function.timeout)),
        layer_dirs=function.layer_dirs,
        environment=environment_names(function, outputs),
        schedules=function.schedules,
        dead_letter_queue_url=dead_letter_url,
        role_arn=outputs.get(function.role_output),
    )


def _event_source_settings(
    sqs: Any, function: EmulatedFunction, queue_url: str, outputs: dict[str, str]
) -> EventSourceSettings:
    queue = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    redrive = json.loads(queue["RedrivePolicy"]) if "RedrivePolicy" in queue else {}
    esm = function.event_source_prefix
    return EventSourceSettings(
        batch_size=int(outputs.get(esm + "BatchSize", 10)),
        batching_window_seconds=float(outputs.get(esm + "MaximumBatchingWindowInSeconds", 0)),
        maximum_concurrency=int(outputs.get(esm + "MaximumConcurrency", 1000)),
        visibility_timeout=int(queue.get("VisibilityTimeout", 30)),
        max_receive_count=int(redrive["maxReceiveCount"]) if redrive else None,
    )


def environment_names(function: EmulatedFunction, outputs: dict[str, str]) -> dict[str, str]:
    """Output keys lose underscores; map them back to the template's variable names."""
    prefix = function.environment_prefix
    return {
        name: outputs[prefix + squashed]
        for squashed, name in function.environment_names.items()
        if prefix + squashed in outputs
    }
