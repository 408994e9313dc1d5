"""template.yaml, read once: translated to CloudFormation by aws-sam-translator.

The local stack is made from this translation, not from a second list of resources. The parts
that moto cannot run as AWS would (every Lambda function with its layers, its SQS event source
mapping and its permissions, and the state machine, which moto's CloudFormation creates without
execution support) are taken out and emulated; every reference to them is replaced by the name
or ARN the emulation will use, and what the emulation needs from them (environment, batch
settings, dead-letter targets, definition substitutions) is added as stack outputs, so moto's
CloudFormation resolves every intrinsic function for us. Schedule rules that target a function
stay in the stack (moto keeps them; it does not fire them): the local runtime reads their
expressions and runs the function fast-forwarded.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
from samtranslator.translator.transform import transform

from onceflow.domain.template_yaml import parse_template, read_template

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_PATH = PROJECT_ROOT / "template.yaml"
EMULATED_TYPES = {
    "AWS::SNS::Subscription",
    "AWS::Lambda::Function",
    "AWS::Lambda::EventSourceMapping",
    "AWS::Lambda::Permission",
    "AWS::Lambda::LayerVersion",
    "AWS::StepFunctions::StateMachine",
}
# Placeholders for local paths that aws-sam-translator wants as S3 URIs (sam package does the same).
_PACKAGED_PLACEHOLDER = "s3://onceflow-local-artifacts/{}"


class TemplateError(RuntimeError):
    pass


class _NoManagedPolicies(ManagedPolicyLoader):
    """The translator looks up AWS managed policies by name; the template names none (offline)."""

    def __init__(self) -> None:
        pass

    def load(self) -> dict[str, str]:
        return {}


def load_sam_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    return read_template(path)


def _packaged(sam: dict[str, Any], base: Path = PROJECT_ROOT) -> tuple[dict[str, Any], dict[str, Path]]:
    """Point local CodeUri/DefinitionUri at placeholders; remember where each really is."""
    sam = copy.deepcopy(sam)
    local_paths: dict[str, Path] = {}
    for logical_id, resource in sam.get("Resources", {}).items():
        properties = resource.get("Properties", {})
        for key in ("CodeUri", "DefinitionUri", "ContentUri"):
            value = properties.get(key)
            if isinstance(value, str) and not value.startswith("s3://"):
                local_paths[logical_id] = base / value
                properties[key] = _PACKAGED_PLACEHOLDER.format(logical_id)
    return sam, local_paths


def translate(sam: dict[str, Any], parameter_values: dict[str, Any] | None = None) -> dict[str, Any]:
    """SAM to CloudFormation with the real translator (needs a region, not credentials)."""
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    return transform(sam, dict(parameter_values or {}), _NoManagedPolicies())


def translate_with_inline_definitions(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    """The CloudFormation a deploy produces, with each ASL file inlined as `Definition`.

    cfn-lint checks an inlined definition (rule E3601) but not a DefinitionUri.
    """
    sam = load_sam_template(path)
    for resource in sam.get("Resources", {}).values():
        properties = resource.get("Properties", {})
        uri = properties.get("DefinitionUri")
        if resource.get("Type") == "AWS::Serverless::StateMachine" and isinstance(uri, str):
            properties["Definition"] = json.loads((path.parent / uri).read_text())
            del properties["DefinitionUri"]
    packaged, _ = _packaged(sam, path.parent)
    return translate(packaged)


@dataclass(frozen=True)
class EmulatedFunction:
    logical_id: str
    name: str  # the function name the emulation uses (what Ref gives)
    code_dir: Path
    handler: str
    timeout: int
    layer_dirs: tuple[Path, ...]
    # output-key suffix (alphanumerics only) -> the environment variable's real name
    environment_names: dict[str, str]
    sqs_queue_logical_id: str | None  # the queue of its SQS event source, if it has one
    schedules: tuple[str, ...]  # ScheduleExpression of every schedule rule that targets it
    has_dead_letter_target: bool  # DeadLetterConfig: where failed asynchronous invocations go
    condition: str | None = None  # the template Condition it is deployed under, if any

    @property
    def environment_prefix(self) -> str:
        return "LocalEnv" + self.logical_id

    @property
    def event_source_prefix(self) -> str:
        return "LocalEsm" + self.logical_id

    @property
    def dead_letter_output(self) -> str:
        return "LocalDlq" + self.logical_id

    @property
    def queue_output(self) -> str:
        return "LocalQueue" + self.logical_id

    @property
    def deployed_output(self) -> str:
        # Present only when the function's Condition holds (an output under the same Condition).
        return "LocalDeployed" + self.logical_id

    @property
    def role_output(self) -> str:
        # Its execution role's ARN (the calls it makes are that role's).
        return "LocalRole" + self.logical_id

    @property
    def timeout_output(self) -> str:
        # The Timeout as CloudFormation resolves it (it may be an intrinsic, e.g. !If on the mode).
        return "LocalTimeout" + self.logical_id


@dataclass(frozen=True)
class EmulatedSubscription:
    """An AWS::SNS::Subscription, which moto's CloudFormation does not create: made through the SNS
    API from outputs that carry its resolved properties (present only when its Condition holds)."""

    logical_id: str

    @property
    def output_prefix(self) -> str:
        return "LocalSns" + self.logical_id

    # property -> output-key suffix
    PROPERTIES = {"TopicArn": "Topic", "Protocol": "Protocol", "Endpoint": "Endpoint"}
    ATTRIBUTES = ("RawMessageDelivery", "FilterPolicy", "FilterPolicyScope")


@dataclass(frozen=True)
class EmulatedStateMachine:
    logical_id: str
    definition_path: Path
    substitution_keys: tuple[str, ...]


@dataclass(frozen=True)
class LocalPlan:
    """What to create on the embedded AWS, and what to emulate."""

    cloudformation: dict[str, Any]
    functions: dict[str, EmulatedFunction]
    state_machine: EmulatedStateMachine
    state_machine_name: str
    stack_name: str
    starter_id: str = ""
    subscriptions: tuple[EmulatedSubscription, ...] = ()
    template_path: Path = TEMPLATE_PATH

    @property
    def function(self) -> EmulatedFunction:
        """The function behind the source queue: the starter."""
        return self.functions[self.starter_id]

    @property
    def source_queue_logical_id(self) -> str:
        return str(self.function.sqs_queue_logical_id)


def _replace_references(node: Any, values: dict[str, str]) -> Any:
    """Replace Ref/GetAtt/${...} of emulated resources by the literal the emulation uses."""
    if isinstance(node, dict):
        if set(node) == {"Ref"} and node["Ref"] in values:
            return values[node["Ref"]]
        if set(node) == {"Fn::GetAtt"}:
            target = node["Fn::GetAtt"]
            key = ".".join(target) if isinstance(target, list) else target
            if key in values:
                return values[key]
        if set(node) == {"Fn::Sub"}:
            body = node["Fn::Sub"]
            text = body[0] if isinstance(body, list) else body
            for name, literal in values.items():
                text = text.replace("${" + name + "}", literal)
            variables = [_replace_references(item, values) for item in body[1:]] if isinstance(body, list) else []
            return {"Fn::Sub": [text, *variables] if isinstance(body, list) else text}
        return {key: _replace_references(value, values) for key, value in node.items()}
    if isinstance(node, list):
        return [_replace_references(item, values) for item in node]
    return node


def _output_key(prefix: str, name: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9]", "", name)


def plan_local_stack(
    stack_name: str,
    region: str,
    account_id: str,
    parameter_values: dict[str, Any] | None = None,
    path: Path = TEMPLATE_PATH,
) -> LocalPlan:
    """The plan for this template text and these parameters (cached: translation is the slow part)."""
    parameters = json.dumps(parameter_values or {}, sort_keys=True, default=str)
    path = path.resolve()  # code and definition paths are absolute, wherever the command was run from
    return _plan(stack_name, region, account_id, parameters, path, path.read_text())


def _referenced_id(node: Any) -> str | None:
    """The logical id in a Ref or a GetAtt, if `node` is one."""
    if isinstance(node, dict) and set(node) == {"Ref"}:
        return str(node["Ref"])
    if isinstance(node, dict) and set(node) == {"Fn::GetAtt"}:
        target = node["Fn::GetAtt"]
        return str(target[0] if isinstance(target, list) else target.split(".")[0])
    return None


def _sqs_queue_of(function_id: str, sam_function: dict[str, Any]) -> str | None:
    sqs_events = [e for e in sam_function["Properties"].get("Events", {}).values() if e.get("Type") == "SQS"]
    if not sqs_events:
        return None
    if len(sqs_events) > 1:
        raise TemplateError(
            f"{function_id} has {len(sqs_events)} SQS events; the local stack emulates one per function"
        )
    queue = _referenced_id(sqs_events[0]["Properties"]["Queue"])
    if queue is None:
        raise TemplateError(f"{function_id}'s SQS event must use !GetAtt <Queue>.Arn")
    return queue


def _schedules_of(function_id: str, resources: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(r["Properties"]["ScheduleExpression"])
        for r in resources.values()
        if r["Type"] == "AWS::Events::Rule"
        and "ScheduleExpression" in r.get("Properties", {})
        and any(_referenced_id(t.get("Arn")) == function_id for t in r["Properties"].get("Targets", []))
    )


@functools.lru_cache(maxsize=16)
def _packaged_text(path: Path, template_text: str) -> tuple[dict[str, Any], dict[str, Path]]:
    return _packaged(parse_template(template_text, str(path)), path.parent)


@functools.lru_cache(maxsize=16)
def _translation(parameters: str, path: Path, template_text: str) -> dict[str, Any]:
    return translate(copy.deepcopy(_packaged_text(path, template_text)[0]), json.loads(parameters))


@functools.lru_cache(maxsize=16)
def _plan(stack_name: str, region: str, account_id: str, parameters: str, path: Path, template_text: str) -> LocalPlan:
    # Parsing and translating do not depend on the stack's name (each external stack has its own).
    sam, local_paths = copy.deepcopy(_packaged_text(path, template_text))
    sam_resources = sam.get("Resources", {})
    function_ids = [lid for lid, r in sam_resources.items() if r.get("Type") == "AWS::Serverless::Function"]
    machines = [lid for lid, r in sam_resources.items() if r.get("Type") == "AWS::Serverless::StateMachine"]
    queues = {lid: _sqs_queue_of(lid, sam_resources[lid]) for lid in function_ids}
    # The starter is the function behind the queue the stack outputs as SourceQueueUrl; other
    # SQS-triggered functions (subscribers) each get an event source of their own.
    source_queue = _referenced_id(sam.get("Outputs", {}).get("SourceQueueUrl", {}).get("Value"))
    starters = [f for f, q in queues.items() if q is not None and q == source_queue]
    if len(machines) != 1 or len(starters) != 1:
        raise TemplateError(
            "the local stack emulates one state machine and one function behind the queue output as "
            f"SourceQueueUrl; found {machines} and {starters}"
        )
    machine_id = machines[0]

    cfn = copy.deepcopy(_translation(parameters, path, template_text))
    resources = cfn["Resources"]
    state_machine_name = f"{stack_name}-{machine_id}"
    state_machine_arn = f"arn:aws:states:{region}:{account_id}:stateMachine:{state_machine_name}"
    literals = {
        machine_id: state_machine_arn,
        f"{machine_id}.Arn": state_machine_arn,
        f"{machine_id}.Name": state_machine_name,
    }
    for function_id in function_ids:
        function_name = f"{stack_name}-{function_id}"
        literals[function_id] = function_name
        literals[f"{function_id}.Arn"] = f"arn:aws:lambda:{region}:{account_id}:function:{function_name}"
    # SAM names a layer's LayerVersion with a content hash; its S3 key (our placeholder) says which it is.
    layer_dirs: dict[str, Path] = {}
    for logical_id, resource in resources.items():
        if resource["Type"] == "AWS::Lambda::LayerVersion":
            key = resource["Properties"]["Content"]["S3Key"]
            layer_dirs[logical_id] = local_paths[key]
            literals[logical_id] = f"arn:aws:lambda:{region}:{account_id}:layer:{stack_name}-{key}:1"
    emulated = {lid: r for lid, r in resources.items() if r["Type"] in EMULATED_TYPES}
    kept = {lid: r for lid, r in resources.items() if lid not in emulated}
    outputs = {key: value for key, value in cfn.get("Outputs", {}).items()}
    mappings = {
        _referenced_id(r["Properties"]["FunctionName"]): r["Properties"]
        for r in emulated.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    }

    extra: dict[str, Any] = {}
    functions: dict[str, EmulatedFunction] = {}
    for function_id in function_ids:
        properties = emulated[function_id]["Properties"]
        variables = properties.get("Environment", {}).get("Variables", {})
        function = EmulatedFunction(
            logical_id=function_id,
            name=literals[function_id],
            code_dir=local_paths[function_id],
            handler=properties["Handler"],
            timeout=properties["Timeout"] if isinstance(properties.get("Timeout"), int) else 3,
            layer_dirs=tuple(layer_dirs[str(_referenced_id(layer))] for layer in properties.get("Layers", [])),
            environment_names={_output_key("", name): name for name in variables},
            sqs_queue_logical_id=queues[function_id],
            schedules=_schedules_of(function_id, resources),
            has_dead_letter_target="TargetArn" in properties.get("DeadLetterConfig", {}),
            condition=emulated[function_id].get("Condition"),
        )
        functions[function_id] = function
        # Outputs of a function deployed under a Condition exist only when it holds.
        outputs_of_function: dict[str, Any] = {function.deployed_output: "true"}
        for name, value in variables.items():
            outputs_of_function[_output_key(function.environment_prefix, name)] = value
        timeout = properties.get("Timeout", 3)
        outputs_of_function[function.timeout_output] = timeout if isinstance(timeout, dict) else str(timeout)
        if "Role" in properties:
            outputs_of_function[function.role_output] = properties["Role"]
        if function.has_dead_letter_target:
            outputs_of_function[function.dead_letter_output] = properties["DeadLetterConfig"]["TargetArn"]
        if function.sqs_queue_logical_id is not None:
            outputs_of_function[function.queue_output] = {"Ref": function.sqs_queue_logical_id}
        mapping = mappings.get(function_id)
        if mapping is not None:
            for name in ("BatchSize", "MaximumBatchingWindowInSeconds"):
                if name in mapping:
                    outputs_of_function[_output_key(function.event_source_prefix, name)] = mapping[name]
            outputs_of_function[function.event_source_prefix + "MaximumConcurrency"] = mapping.get(
                "ScalingConfig", {}
            ).get("MaximumConcurrency", 1000)
        for key, value in outputs_of_function.items():
            value = value if isinstance(value, dict | str) else str(value)  # an output's value is text
            outputs[key] = {"Value": value, **({"Condition": function.condition} if function.condition else {})}
    subscriptions = []
    for logical_id, resource in emulated.items():
        if resource["Type"] != "AWS::SNS::Subscription":
            continue
        subscription = EmulatedSubscription(logical_id)
        subscriptions.append(subscription)
        properties = resource["Properties"]
        values = {suffix: properties[name] for name, suffix in subscription.PROPERTIES.items()}
        values.update({name: properties[name] for name in subscription.ATTRIBUTES if name in properties})
        if "RedrivePolicy" in properties:
            values["RedriveTarget"] = properties["RedrivePolicy"]["deadLetterTargetArn"]
        condition = {"Condition": resource["Condition"]} if "Condition" in resource else {}
        for suffix, value in values.items():
            if isinstance(value, bool):
                value = str(value).lower()
            elif isinstance(value, dict) and not any(k.startswith(("Fn::", "Ref")) for k in value):
                value = json.dumps(value)
            outputs[subscription.output_prefix + suffix] = {"Value": value, **condition}
    machine_properties = emulated[machine_id]["Properties"]
    substitutions = machine_properties.get("DefinitionSubstitutions", {})
    for name, value in substitutions.items():
        extra[_output_key("LocalSub", name)] = value
    extra["LocalStateMachineType"] = machine_properties.get("StateMachineType", "STANDARD")
    extra["LocalStateMachineRoleArn"] = machine_properties.get(
        "RoleArn", f"arn:aws:iam::{account_id}:role/onceflow-local"
    )
    for key, value in extra.items():
        outputs[key] = {"Value": value}

    cloudformation = {key: value for key, value in cfn.items() if key not in ("Resources", "Outputs")}
    cloudformation["Resources"] = _replace_references(kept, literals)
    cloudformation["Outputs"] = _replace_references(outputs, literals)
    return LocalPlan(
        cloudformation=cloudformation,
        functions=functions,
        state_machine=EmulatedStateMachine(machine_id, local_paths[machine_id], tuple(substitutions)),
        state_machine_name=state_machine_name,
        stack_name=stack_name,
        starter_id=starters[0],
        subscriptions=tuple(subscriptions),
        template_path=path,
    )
