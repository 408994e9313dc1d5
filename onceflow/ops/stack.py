"""Find a deployed stack's resources from its CloudFormation outputs, with botocore (boto3's core) only.

The same lookup serves a local `onceflow start` (an endpoint URL on the loopback, fake
credentials, never the user's profile) and a stack on AWS (the default credential chain). It
imports neither moto nor the SAM translator, nor boto3 itself: a client made by boto3.client is
botocore's, and importing boto3 adds its resource layer and s3transfer (about 30 ms of every
command's start, issue 21), so the client commands stay fast.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import botocore.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from onceflow.ops import http_heads, json_responses, timestamps

LOCAL_REGION = "us-east-1"
# The embedded AWS accepts any credentials; these are the ones it is documented with. Passing them
# explicitly means a local command never reads the user's profile, so it cannot reach a real account.
LOCAL_CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
# A local endpoint answers at once or not at all: fail fast and say so instead of retrying for a minute.
_LOCAL_CONFIG = Config(connect_timeout=2, read_timeout=60, retries={"mode": "standard", "max_attempts": 2})
_AWS_CONFIG = Config(connect_timeout=5, read_timeout=60, retries={"mode": "standard"})
_LOG_GROUP_SUFFIX = "LogGroupName"
NO_REGION = (
    "no AWS region configured: export AWS_REGION=us-east-1 (or AWS_DEFAULT_REGION), or set one in your AWS "
    "profile: aws configure set region us-east-1"
)
NO_CREDENTIALS = (
    "no AWS credentials found (looked in the environment, the profile {profile} of ~/.aws/credentials and "
    "~/.aws/config, and the container and instance roles): run `aws configure`, or `aws sso login --profile NAME` "
    "and export AWS_PROFILE=NAME, or export AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
)
# Answers of AWS that mean the credentials, not the request, are wrong (IAM, STS and the services'
# common errors: https://docs.aws.amazon.com/STS/latest/APIReference/CommonErrors.html).
REFUSED_CREDENTIALS = {
    "ExpiredToken",
    "ExpiredTokenException",
    "InvalidClientTokenId",
    "UnrecognizedClientException",
    "SignatureDoesNotMatch",
    "InvalidSignatureException",
}


class StackNotFound(RuntimeError):
    """No such stack where we looked, or nothing answers there; the message says what to do."""


@dataclass(frozen=True)
class Target:
    """Where the stack lives: an endpoint URL (the local stack), or AWS itself (endpoint None)."""

    endpoint_url: str | None
    region: str | None = None

    @property
    def is_local(self) -> bool:
        return self.endpoint_url is not None

    def describe(self) -> str:
        if self.endpoint_url is not None:
            return self.endpoint_url
        if self.region:
            return f"AWS ({self.region})"
        region, source = aws_region()
        return f"AWS ({region}, from {source})" if region else "AWS (no region)"

    def client(self, service: str) -> Any:
        if self.endpoint_url is not None:
            return _local_client(self.endpoint_url, self.region or LOCAL_REGION, service)
        region = self.region or aws_region()[0]
        if not region:  # unset, or set empty (AWS_REGION=""), which botocore would put in the host name
            raise NoRegionError()
        with _CLIENT_CREATION:
            return _aws_session().create_client(service, region_name=region, config=_AWS_CONFIG)


# Creating a client loads botocore's endpoint data and the service model (tens of ms each); a local
# endpoint's clients are made once per process and shared (botocore clients are thread-safe, the
# session that makes them is not: hence the lock).
_CLIENT_CREATION = threading.Lock()


@cache
def _local_client(endpoint_url: str, region: str, service: str) -> Any:
    with _CLIENT_CREATION:
        return _local_session().create_client(
            service, endpoint_url=endpoint_url, region_name=region, config=_LOCAL_CONFIG, **LOCAL_CREDENTIALS
        )


def _with_speedups(session: botocore.session.Session) -> botocore.session.Session:
    """The client commands' response readers (onceflow/ops/client_speedups.py), in the order they need."""
    http_heads.install_response_heads()  # the process's, once for all its sessions
    return timestamps.install(json_responses.install(session))


@cache
def _local_session() -> botocore.session.Session:
    """A session that ignores AWS_PROFILE (the profile may not even exist where the user is)."""
    ignore_profile = {"profile": (None, None, None, None)}  # not read from AWS_PROFILE / AWS_DEFAULT_PROFILE
    return _with_speedups(botocore.session.Session(session_vars=ignore_profile))


def aws_region() -> tuple[str | None, str]:
    """The region of the user's AWS configuration and where it came from. AWS_REGION first, as the
    AWS CLI v2 and the SDKs read it (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html:
    it overrides AWS_DEFAULT_REGION and the profile's `region`;
    https://docs.aws.amazon.com/sdkref/latest/guide/feature-region.html); botocore's own session
    reads only AWS_DEFAULT_REGION and the profile (botocore/configprovider.py), so it comes second."""
    if os.environ.get("AWS_REGION"):
        return os.environ["AWS_REGION"], "AWS_REGION"
    region = _aws_session().get_config_variable("region")
    if not region:
        return None, "nowhere"
    if os.environ.get("AWS_DEFAULT_REGION"):
        return region, "AWS_DEFAULT_REGION"
    return region, f"profile {_aws_session().profile or 'default'}"


def credentials_problem(error: Exception) -> str | None:
    """One line for an AWS call refused for its credentials (none found, expired, unknown), else None."""
    if isinstance(error, NoCredentialsError):
        return NO_CREDENTIALS.format(profile=_aws_session().profile or "default")
    code = error.response.get("Error", {}).get("Code") if isinstance(error, ClientError) else None
    if code in REFUSED_CREDENTIALS:
        message = error.response.get("Error", {}).get("Message") or code
        return (
            f"AWS refused the credentials ({code}: {message}): renew them (`aws sso login`, or new keys) "
            "or pick another profile (AWS_PROFILE)"
        )
    return None


@cache
def _aws_session() -> botocore.session.Session:
    """The default credential chain, profile and region, as boto3's default session reads them; one
    per process, so its loaded service models and credentials serve every client."""
    return _with_speedups(botocore.session.Session())


@dataclass(frozen=True)
class StackResources:
    """What the template's Outputs name: the queues, the state machine, the tables, the topic, the logs."""

    target: Target
    stack_name: str
    outputs: dict[str, str]
    log_groups: dict[str, str] = field(default_factory=dict)  # "starter" -> /aws/lambda/...

    def _output(self, key: str) -> str:
        try:
            return self.outputs[key]
        except KeyError:
            raise StackNotFound(f"stack {self.stack_name!r} has no output {key!r}: is it an Onceflow stack?") from None

    @property
    def source_queue_url(self) -> str:
        return self._output("SourceQueueUrl")

    @property
    def dead_letter_queue_url(self) -> str:
        return self._output("DeadLetterQueueUrl")

    @property
    def state_machine_arn(self) -> str:
        return self._output("StateMachineArn")

    @property
    def processed_events_table(self) -> str:
        return self._output("ProcessedEventsTableName")

    @property
    def business_table(self) -> str:
        return self._output("BusinessTableName")

    @property
    def notification_topic_arn(self) -> str:
        return self._output("NotificationTopicArn")

    def client(self, service: str) -> Any:
        return self.target.client(service)


def log_groups_of(outputs: dict[str, str]) -> dict[str, str]:
    """`StarterLogGroupName` -> {"starter": ...}; the state machine's own log group is left out."""
    return {
        key[: -len(_LOG_GROUP_SUFFIX)].lower(): value
        for key, value in outputs.items()
        if key.endswith(_LOG_GROUP_SUFFIX) and key != "StateMachine" + _LOG_GROUP_SUFFIX
    }


def find_stack(target: Target, stack_name: str) -> StackResources:
    """DescribeStacks and read the Outputs; StackNotFound with a clear message if that fails."""
    try:
        cloudformation = target.client("cloudformation")
    except NoRegionError:
        raise StackNotFound(NO_REGION) from None
    try:
        stacks = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    except (ClientError, NoCredentialsError) as error:
        refused = None if target.is_local else credentials_problem(error)
        if refused:
            raise StackNotFound(refused) from None
        if isinstance(error, NoCredentialsError):
            raise
        if target.is_local:
            raise StackNotFound(
                f"no stack {stack_name!r} at {target.endpoint_url}: {_stacks_there(cloudformation)}"
            ) from None
        raise StackNotFound(f"stack {stack_name!r} not found on {target.describe()}: {error}") from None
    except BotoCoreError as error:
        if target.is_local:
            raise StackNotFound(
                f"nothing answers at {target.endpoint_url}: run `onceflow start` in another terminal "
                "(or pass --endpoint / set ONCEFLOW_ENDPOINT to where it runs)"
            ) from None
        raise StackNotFound(f"cannot reach CloudFormation on {target.describe()}: {error}") from None
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", []) if "OutputValue" in o}
    public = {k: v for k, v in outputs.items() if not k.startswith("Local")}
    return StackResources(target, stack_name, public, log_groups_of(public))


def _stacks_there(cloudformation: Any) -> str:
    """What an endpoint that answered has instead: its stacks' names, for --stack-name."""
    try:
        names = sorted(stack["StackName"] for stack in cloudformation.describe_stacks()["Stacks"])
    except (ClientError, BotoCoreError):
        names = []
    if not names:
        return "it has no stack yet (`onceflow start` deploys one as it starts)"
    return f"it has {', '.join(names)} (pass --stack-name or set ONCEFLOW_STACK_NAME)"
