"""The embedded AWS: moto in server mode and the patches that make it behave as AWS does.

Public (point your own tests at these): `EmbeddedAws` and its options, `EmbeddedAwsError`,
`DelayClock` (its `clock`), `REGION`, `ACCOUNT_ID`. Everything else under onceflow.engine is the
engine's inside and may change between releases.
"""

from onceflow.engine.server import ACCOUNT_ID, REGION, DelayClock, EmbeddedAws, EmbeddedAwsError

__all__ = ["ACCOUNT_ID", "REGION", "DelayClock", "EmbeddedAws", "EmbeddedAwsError"]
