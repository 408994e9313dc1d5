"""CreateStateMachine and UpdateStateMachine refuse a `loggingConfiguration` AWS refuses, in AWS's words.

moto 5.2.5 stores whatever configuration it is given. AWS answers `InvalidLoggingConfiguration`:
- "Invalid Logging Configuration: Must specify exactly one Log Destination." for more than one
  destination, or for a level other than OFF without a destination;
- "Invalid Logging Configuration: Log Destination not found." for a destination whose log group
  does not exist in CloudWatch Logs (here: the embedded CloudWatch Logs of the ARN's account and
  region; an ARN that is not a log group's names no log group, so it is not found either).
A level of OFF (or none) with no destinations is accepted.
https://docs.aws.amazon.com/step-functions/latest/apireference/API_LoggingConfiguration.html
https://docs.aws.amazon.com/step-functions/latest/apireference/API_CreateStateMachine.html (Errors:
InvalidLoggingConfiguration).

AWS's recordings: LocalStack's test_sfn_api_logs.snapshot.json (test_invalid_logging_configuration,
test_deleted_log_group, test_multiple_destinations, test_update_logging_configuration). Conformance
test: tests/engine/test_conformance_api.py::test_logging_configuration_is_refused_as_aws_refuses_it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moto.core.exceptions import AWSError
from moto.logs.models import logs_backends
from moto.stepfunctions.parser.models import StepFunctionsParserBackend

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
EXACTLY_ONE = "Invalid Logging Configuration: Must specify exactly one Log Destination."
NOT_FOUND = "Invalid Logging Configuration: Log Destination not found."


class InvalidLoggingConfiguration(AWSError):
    TYPE = "InvalidLoggingConfiguration"
    STATUS = 400


def moto_needs() -> list[Need]:
    return [
        need(StepFunctionsParserBackend, "create_state_machine", "loggingConfiguration"),
        need(StepFunctionsParserBackend, "update_state_machine", "logging_configuration"),
    ]


def _log_group_exists(arn: Any) -> bool:
    """Whether `arn` (arn:PARTITION:logs:REGION:ACCOUNT:log-group:NAME[:*]) names a log group of
    the embedded CloudWatch Logs."""
    if not isinstance(arn, str):
        return False
    parts = arn.split(":", 6)
    if len(parts) != 7 or parts[0] != "arn" or parts[2] != "logs" or parts[5] != "log-group":
        return False
    region, account, name = parts[3], parts[4], parts[6]
    if name.endswith(":*"):
        name = name[:-2]
    # dict.get, not [...]: a look-up creates no account's or region's backend.
    backend = dict.get(logs_backends, account)
    backend = dict.get(backend, region) if backend is not None else None
    return bool(name) and backend is not None and name in backend.groups


def refusal(configuration: Any) -> str | None:
    """AWS's message refusing `configuration` (a LoggingConfiguration), or None when AWS accepts it."""
    if not isinstance(configuration, dict):
        return None
    destinations = configuration.get("destinations") or []
    level = configuration.get("level")
    if len(destinations) > 1 or (level not in (None, "OFF") and not destinations):
        return EXACTLY_ONE
    for destination in destinations:
        group = (destination or {}).get("cloudWatchLogsLogGroup") or {}
        if not _log_group_exists(group.get("logGroupArn")):
            return NOT_FOUND
    return None


def _check(configuration: Any) -> None:
    refused = refusal(configuration)
    if refused:
        raise InvalidLoggingConfiguration(refused)


def patches(before: Sequence[Patch]) -> list[Patch]:
    """Wraps the Create/UpdateStateMachine that `before` leaves (state_machines.py's, versions.py's)."""
    create = current(before, StepFunctionsParserBackend, "create_state_machine")
    update = current(before, StepFunctionsParserBackend, "update_state_machine")

    def create_state_machine(
        self: StepFunctionsParserBackend,
        name: str,
        definition: str,
        roleArn: str,  # noqa: N803 (moto's parameter names)
        tags: Any = None,
        publish: bool | None = None,
        loggingConfiguration: Any = None,  # noqa: N803
        tracingConfiguration: Any = None,  # noqa: N803
        encryptionConfiguration: Any = None,  # noqa: N803
        version_description: str | None = None,
        sm_type: str | None = None,
    ) -> Any:
        _check(loggingConfiguration)
        return create(
            self,
            name=name,
            definition=definition,
            roleArn=roleArn,
            tags=tags,
            publish=publish,
            loggingConfiguration=loggingConfiguration,
            tracingConfiguration=tracingConfiguration,
            encryptionConfiguration=encryptionConfiguration,
            version_description=version_description,
            sm_type=sm_type,
        )

    def update_state_machine(
        self: StepFunctionsParserBackend,
        arn: str,
        definition: Any = None,
        role_arn: Any = None,
        logging_configuration: Any = None,
        tracing_configuration: Any = None,
        encryption_configuration: Any = None,
        publish: bool | None = None,
        version_description: str | None = None,
    ) -> Any:
        _check(logging_configuration)
        return update(
            self,
            arn,
            definition=definition,
            role_arn=role_arn,
            logging_configuration=logging_configuration,
            tracing_configuration=tracing_configuration,
            encryption_configuration=encryption_configuration,
            publish=publish,
            version_description=version_description,
        )

    return [
        (StepFunctionsParserBackend, "create_state_machine", create_state_machine),
        (StepFunctionsParserBackend, "update_state_machine", update_state_machine),
    ]
