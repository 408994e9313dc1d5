"""Every API request to the embedded AWS authorized as AWS authorizes it (registered in PATCH_ORDER).

moto calls `_authenticate_and_authorize_normal_action` before every action of its JSON and query
services (`BaseResponse.call_action`), whoever sends it: over HTTP, through direct_transport, the
json_lane, or the state machine's in-process integrations. Here it finds the caller by the
request's access key (identities.py), what the request needs (actions.py) and decides each
(decide.py); a refused request answers the service's own AccessDenied error instead of running:

| service | code | HTTP | page |
| --- | --- | --- | --- |
| SQS | AccessDenied (`x-amzn-query-error`), JSON `AccessDeniedException` | 403 | https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html |
| SNS | AuthorizationError | 403 | https://docs.aws.amazon.com/sns/latest/api/API_Publish.html |
| DynamoDB | AccessDeniedException | 400 | https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/CommonErrors.html |
| Step Functions, Logs, KMS, others | AccessDeniedException | 400 | each API reference's CommonErrors |

A key STS never issued (or a reset forgot) is UnrecognizedClientException / InvalidClientTokenId,
"The security token included in the request is invalid."
"""

from __future__ import annotations

import json
from typing import Any

from moto.core.authorization import ActionAuthenticatorMixin
from moto.core.responses import BaseResponse

from onceflow.engine.iam import actions, identities, resource_policies
from onceflow.engine.iam.decide import IamSwitch, decide, message, reason, record
from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch, current

INVALID_TOKEN = "The security token included in the request is invalid."


def moto_needs() -> list[Need]:
    return [
        need(ActionAuthenticatorMixin, "_authenticate_and_authorize_normal_action", "resource"),
        need(BaseResponse, "call_action"),
        need(BaseResponse, "_get_action"),
    ]


class Refused(Exception):
    """A request the caller may not make: answered (status, headers, body) instead of run."""

    def __init__(self, service: str, code: str, text: str):
        super().__init__(text)
        self.service = service
        self.code = code
        self.text = text

    def answer(self) -> tuple[int, dict[str, str], str]:
        if self.service == "sns":
            code = "InvalidClientTokenId" if self.code == "UnrecognizedClientException" else "AuthorizationError"
            body = (
                '<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type>'
                f"<Code>{code}</Code><Message>{_xml(self.text)}</Message></Error>"
                "<RequestId>onceflow-iam</RequestId></ErrorResponse>"
            )
            return 403, {"Content-Type": "text/xml"}, body
        if self.service == "sqs":
            code = "InvalidClientTokenId" if self.code == "UnrecognizedClientException" else "AccessDenied"
            body = json.dumps({"__type": f"com.amazon.coral.service#{self.code}", "message": self.text})
            headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-query-error": f"{code};Sender"}
            return 403, headers, body
        prefix = "com.amazon.coral.service#" if self.service == "dynamodb" else ""
        body = json.dumps({"__type": f"{prefix}{self.code}", "message": self.text})
        return 400, {"Content-Type": "application/x-amz-json-1.0"}, body


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def authorize(switch: IamSwitch, response: Any) -> None:
    """Raise Refused unless the request's caller may make it."""
    if not switch.on:
        return
    service = str(getattr(response, "service_name", "") or "")
    account = str(getattr(response, "current_account", "") or "")
    try:
        principal = identities.principal_of(response.headers, account)
    except identities.UnknownSession:
        raise Refused(service, "UnrecognizedClientException", INVALID_TOKEN) from None
    if principal is None:
        return
    region = str(getattr(response, "region", "us-east-1"))
    call = actions.Call(service, response._get_action(), actions.params_of(response), region, account)
    for asked in actions.asked(call, lambda key: resource_policies.key_arn(account, region, key)):
        decision = decide(principal, asked)
        if decision.allowed:
            switch.note_use(principal, asked, decision)
            continue
        record(switch, principal, asked, decision, region)
        raise Refused(service, "AccessDeniedException", message(principal, asked, reason(decision, asked.action)))


def patches(before: list[Patch], iam: IamSwitch) -> list[Patch]:
    moto_authorize = current(before, ActionAuthenticatorMixin, "_authenticate_and_authorize_normal_action")
    moto_call_action = current(before, BaseResponse, "call_action")

    def authorize_action(self: Any, resource: str = "*") -> None:
        authorize(iam, self)
        moto_authorize(self, resource)

    def call_action(self: Any) -> Any:
        try:
            return moto_call_action(self)
        except Refused as refused:
            status, headers, body = refused.answer()
            return status, {**self.response_headers, **headers, "status": str(status)}, body

    return [
        (ActionAuthenticatorMixin, "_authenticate_and_authorize_normal_action", authorize_action),
        (BaseResponse, "call_action", call_action),
    ]
