"""Where the local stack's AWS services are, named the way boto3 names them.

By default nothing is configured and the caller starts the embedded endpoint. Setting
`AWS_ENDPOINT_URL_<SERVICE>` (per service, e.g. `AWS_ENDPOINT_URL_SFN`) or `AWS_ENDPOINT_URL` (the
fallback for every service) points the stack at external endpoints instead: AWS Step Functions
Local, LocalStack, a moto server. These are the variables boto3 itself reads, with the same
precedence, so clients built here and clients built by plain `boto3.client()` agree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlparse

from botocore import utils as botocore_utils

GLOBAL_VARIABLE = "AWS_ENDPOINT_URL"
IGNORE_VARIABLE = "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"
# What the pipeline needs: the state machine and the services its tasks call.
STACK_SERVICES = ("stepfunctions", "dynamodb", "sns", "sqs")
# Used where an endpoint exists: EventBridge carries the safety net's rule.
OPTIONAL_SERVICES = ("events",)


class EndpointError(ValueError):
    """The endpoint variables are set, but not so that every service of the stack has one."""


def variable_for(service: str) -> str:
    """boto3's variable for a client name: `stepfunctions` -> `AWS_ENDPOINT_URL_SFN` (its service id)."""
    name = botocore_utils.SERVICE_NAME_ALIASES.get(service, service)
    service_id = botocore_utils.CLIENT_NAME_TO_HYPHENIZED_SERVICE_ID_OVERRIDES.get(name, name)
    return f"{GLOBAL_VARIABLE}_{service_id.replace('-', '_').upper()}"


@dataclass(frozen=True)
class Endpoints:
    """External endpoint URL per boto3 client name, and the variable each came from."""

    urls: Mapping[str, str]
    sources: Mapping[str, str]

    @property
    def primary(self) -> str:
        """The Step Functions endpoint: the one a Step Functions Local–style suite is run against."""
        return self.urls["stepfunctions"]

    def has(self, service: str) -> bool:
        return service in self.urls

    def describe(self) -> list[str]:
        return [f"{service} {url} ({self.sources[service]})" for service, url in sorted(self.urls.items())]


def _checked(variable: str, url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise EndpointError(f"{variable}={url!r} is not an endpoint URL (expected e.g. http://localhost:8083)")
    return url.rstrip("/")


def from_environment(environ: Mapping[str, str] | None = None) -> Endpoints | None:
    """The configured external endpoints, or None when none is configured (use the embedded one)."""
    env = os.environ if environ is None else environ
    if env.get(IGNORE_VARIABLE, "").strip().lower() == "true":
        return None
    services = STACK_SERVICES + OPTIONAL_SERVICES
    if not any(env.get(name) for name in (GLOBAL_VARIABLE, *map(variable_for, services))):
        return None
    urls: dict[str, str] = {}
    sources: dict[str, str] = {}
    for service in services:
        for variable in (variable_for(service), GLOBAL_VARIABLE):
            if env.get(variable):
                urls[service] = _checked(variable, env[variable])
                sources[service] = variable
                break
    missing = [service for service in STACK_SERVICES if service not in urls]
    if missing:
        names = ", ".join(variable_for(service) for service in missing)
        raise EndpointError(
            f"external endpoints are configured but {', '.join(missing)} has none: set {names} or {GLOBAL_VARIABLE}"
        )
    return Endpoints(urls=urls, sources=sources)
