"""The `unsigned_local_calls` speed-up: a boto3 call from this process to its embedded AWS carries
SigV4's headers (date, security token, the Authorization header's credential scope and signed
headers) but no computed signature.

botocore signs every request: a canonical request, its payload hashed, a string to sign and four
HMACs for the signing key, then one for the signature (about 4 % of the demo's CPU: the functions'
and the pipeline's own calls). Nothing in this process verifies a signature (moto does not, nor does
the engine's IAM, which reads the caller's access key from the credential scope:
engine/iam/identities.py), so for a request direct_transport hands to the embedded application here
the Authorization header is written with `Signature=` zeros (as direct_integrations' calls have it).
A request to any other endpoint (AWS itself), S3's signer (it hashes the payload into a header S3
reads) and presigned URLs are signed by botocore as before.
"""

from __future__ import annotations

from typing import Any

from botocore.auth import SIGNED_HEADERS_BLACKLIST, SIGV4_TIMESTAMP, SigV4Auth
from botocore.exceptions import NoCredentialsError
from botocore.utils import get_current_datetime

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import UNSIGNED_LOCAL_CALLS, direct_transport
from onceflow.engine.speedups.direct_integrations import unsigned_authorization

Patch = tuple[Any, str, Any]
SPEEDUPS = (UNSIGNED_LOCAL_CALLS,)


def moto_needs() -> list[Need]:
    """What it builds on in botocore (the signer whose last steps it leaves out)."""
    return [
        need(SigV4Auth, "add_auth", "request"),
        need(SigV4Auth, "_modify_request_before_signing", "request"),
        need(SigV4Auth, "scope", "request"),
    ]


_NOT_SIGNED_NAMES = frozenset(SIGNED_HEADERS_BLACKLIST)


def signed_header_names(request: Any) -> str:
    """SigV4Auth.signed_headers(headers_to_sign(request)): the request's header names, lower case,
    without those SigV4 leaves out, `host` among them, sorted; without the copy of every header into
    an email message headers_to_sign makes."""
    names = {name.lower().strip() for name in request.headers if name.lower() not in _NOT_SIGNED_NAMES}
    names.add("host")
    return ";".join(sorted(names))


def patches() -> list[Patch]:
    original = SigV4Auth.add_auth

    def add_auth(self: SigV4Auth, request: Any) -> None:
        if type(self) is not SigV4Auth or not direct_transport.serves(request.url):
            original(self, request)
            return
        if self.credentials is None:
            raise NoCredentialsError()
        request.context["timestamp"] = get_current_datetime().strftime(SIGV4_TIMESTAMP)
        self._modify_request_before_signing(request)  # X-Amz-Date, the session token, no old Authorization
        signed = signed_header_names(request)
        request.headers["Authorization"] = unsigned_authorization(self.scope(request), signed)

    return [(SigV4Auth, "add_auth", add_auth)]
