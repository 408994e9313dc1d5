"""The embedded AWS: moto in server mode and the patches that make it behave as AWS does.

Public (point your own tests at these): `EmbeddedAws` and its options, `EmbeddedAwsError`,
`DelayClock` (its `clock`), `REGION`, `ACCOUNT_ID`; and `stepfunctions.mocking`, Step Functions
Local's mock configuration files. Everything else under onceflow.engine is the engine's inside.

One folder per service it emulates (stepfunctions/ with api/, interpreter/, jsonata/, test_state/,
integrations/, mocking/; dynamodb/, sqs/, sns/, secretsmanager/, cloudformation/, logs/,
cloudwatch/, events/), speed-ups in speedups/, what spans services in bookkeeping/; server.py is
`EmbeddedAws`, registry.py the patches and their order, moto_shape.py the check of the pinned moto.
README.md beside this file maps each folder.
"""

from onceflow.engine.bookkeeping.service_models import regions_listed_once

with regions_listed_once():  # before anything imports moto's EC2 models, which list regions on import
    import moto.ec2.models.availability_zones_and_regions  # noqa: F401

from onceflow.engine.server import ACCOUNT_ID, REGION, DelayClock, EmbeddedAws, EmbeddedAwsError

__all__ = ["ACCOUNT_ID", "REGION", "DelayClock", "EmbeddedAws", "EmbeddedAwsError"]
