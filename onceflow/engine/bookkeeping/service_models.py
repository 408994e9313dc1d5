"""botocore's API model of a service, loaded once per process for the whole engine.

`botocore.session.get_session().get_service_model(name)` builds a new session and reads the
service's model file again (DynamoDB's is about 1 MB of JSON: 20 ms and more on a busy machine); the
engine's checks asked for the same few models that way, one fresh session each, in every process.
"""

from __future__ import annotations

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
