"""botocore's API model of a service, loaded once per process for the whole engine.

`botocore.session.get_session().get_service_model(name)` builds a new session and reads the
service's model file again (DynamoDB's is about 1 MB of JSON: 20 ms and more on a busy machine); the
engine's checks asked for the same few models that way, one fresh session each, in every process.
moto's EC2 models do the same for the region lists they build on import (`regions_listed_once`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3.session
import botocore.session
from botocore.model import ServiceModel

from onceflow.engine.bookkeeping.once_per_key import once_per_key


@once_per_key
def _session() -> botocore.session.Session:
    return botocore.session.get_session()


@once_per_key
def service_model(name: str) -> ServiceModel:
    """The model of `name` (a boto service name); raises botocore's UnknownServiceError as botocore does."""
    return _session().get_service_model(name)


# A service's endpoint prefix, which botocore reads from its API model to list its regions: EC2's is
# its name, so listing EC2's regions need not read that model (several MB of JSON, about 0.1 s).
ENDPOINT_PREFIXES = {"ec2": "ec2"}


def moto_needs() -> list[Any]:
    """What listing regions reads of the pinned botocore (checked by engine/moto_shape.py)."""
    from botocore.regions import EndpointResolver

    from onceflow.engine.moto_shape import need

    return [
        need(botocore.session.Session, "_get_internal_component", "name"),
        need(EndpointResolver, "get_available_endpoints", "service_name", "partition_name", "allow_non_regional"),
    ]


@contextmanager
def regions_listed_once() -> Iterator[None]:
    """While moto's EC2 models import (its Step Functions interpreter imports them with its Batch
    models), the region lists they ask three new boto3 Sessions for come from this module's one
    botocore session: each new session read EC2's API model (several MB of JSON) again, about 0.4 s
    of every embedded engine's start. The lists are botocore's, from the same endpoint data, and
    for EC2 without its API model (ENDPOINT_PREFIXES)."""
    original = boto3.session.Session.get_available_regions

    def listed(_: Any, service_name: str, partition_name: str = "aws", allow_non_regional: bool = False) -> list[str]:
        session = _session()
        prefix = ENDPOINT_PREFIXES.get(service_name)
        if prefix is None:
            return session.get_available_regions(service_name, partition_name, allow_non_regional)  # type: ignore[no-any-return]
        resolver = session._get_internal_component("endpoint_resolver")
        return resolver.get_available_endpoints(prefix, partition_name, allow_non_regional)  # type: ignore[no-any-return]

    boto3.session.Session.get_available_regions = listed  # type: ignore[method-assign]
    try:
        yield
    finally:
        boto3.session.Session.get_available_regions = original  # type: ignore[method-assign]
