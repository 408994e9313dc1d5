"""The `request_reads` speed-up: what moto reads more than once from a request's same inputs is read once
per request.

- The access key id: moto's `BaseResponse.setup_class` calls `get_access_key()` twice per request (for
  the key it keeps, and inside `get_current_account`), and each call searches the Authorization header
  with `AWS.*(?P<access_key>...)[:/]`, whose greedy `.*` backs off over the whole header (about 6 µs for
  a SigV4 header). Here the answer is kept on the request's response object with what it was read from
  (the Authorization header and the query string's AWSAccessKeyId), and read again only if either
  differs.
- Step Functions' backend: `StepFunctionResponse.stepfunction_backend` looks the account's and region's
  backend up on every use (through moto's user config and two BackendDict look-ups), up to six times
  for a DescribeExecution. Here it is kept on the response object with the account and region it was
  looked up for.

- The JSON body's parameters: moto's `_get_param` (services without automated parameter parsing,
  Step Functions among them) parses the whole body with `json.loads` for every parameter it is
  asked for, about 14 times for a ListExecutions and its checks. Here the parse is kept on the
  response object with the body it was read from, and read again only if the body differs; a
  parameter that is a list or an object is answered with a copy of its own, as each parse was.

A response object serves one request (moto's dispatch makes a new one per request). Measured with
benchmarks/instructions.py, a batched DescribeExecution: 2.2 % and 1.2 % fewer instructions.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from moto.core.responses import BaseResponse
from moto.stepfunctions.responses import StepFunctionResponse

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import REQUEST_READS
from onceflow.engine.speedups.json_copies import json_deepcopy

Patch = tuple[Any, str, Any]
SPEEDUPS = (REQUEST_READS,)
_ACCESS_KEY = "_onceflow_access_key"  # (what it was read from, the answer)
_BACKEND = "_onceflow_stepfunction_backend"  # ((account, region), the backend)
_BODY = "_onceflow_parsed_body"  # (the body, its JSON parse or _UNPARSABLE)
_UNPARSABLE = object()


def moto_needs() -> list[Need]:
    return [
        need(BaseResponse, "get_access_key"),
        need(BaseResponse, "_get_param", "param_name", "if_none"),  # json.loads(self.body) per parameter
        need(BaseResponse, "setup_class", "request"),  # sets headers and querystring before the reads
        need(StepFunctionResponse, "stepfunction_backend"),
    ]


def _kept(response: Any, attribute: str, read_from: Any, read: Callable[[], Any]) -> Any:
    """What `read()` answered for this response object when it was read from `read_from`, else its
    answer now (kept under `attribute` with what it was read from)."""
    kept = response.__dict__.get(attribute)
    if kept is not None and kept[0] == read_from:
        return kept[1]
    answer = read()
    response.__dict__[attribute] = (read_from, answer)
    return answer


def access_key_read_once(moto_access_key: Any) -> Any:
    """BaseResponse.get_access_key, answered from what this response object read last if the
    Authorization header and the query string's AWSAccessKeyId are what it read it from."""

    def get_access_key(self: BaseResponse) -> str:
        fallback = self.querystring.get("AWSAccessKeyId")
        read_from = (self.headers.get("Authorization"), fallback[0] if fallback else None)
        return _kept(self, _ACCESS_KEY, read_from, lambda: moto_access_key(self))

    return get_access_key


def backend_looked_up_once(moto_backend: Any) -> Any:
    """StepFunctionResponse.stepfunction_backend's getter, answered from what this response object
    looked up last if its account and region are the same."""

    def stepfunction_backend(self: StepFunctionResponse) -> Any:
        return _kept(self, _BACKEND, (self.current_account, self.region), lambda: moto_backend(self))

    return stepfunction_backend


def body_parsed_once(moto_get_param: Any) -> Any:
    """BaseResponse._get_param: moto's, with the JSON body parsed once per body."""

    def _get_param(self: BaseResponse, param_name: str, if_none: Any = None) -> Any:
        if self.automated_parameter_parsing:
            return moto_get_param(self, param_name, if_none)
        val = self.querystring.get(param_name)
        if val is not None:
            return val[0]
        body = self.body
        if body is not None:
            parsed = _kept(self, _BODY, body, lambda: _parsed(body))
            if parsed is not _UNPARSABLE:
                try:
                    value = parsed[param_name]
                except (KeyError, TypeError):  # what moto's json.loads(...)[param_name] passes over
                    pass
                else:
                    return json_deepcopy(value)
        if self.uri_match:
            try:
                return self.uri_match[param_name]
            except KeyError:
                pass
        return if_none

    return _get_param


def _parsed(body: Any) -> Any:
    try:
        return json.loads(body)
    except (ValueError, TypeError):
        return _UNPARSABLE


def patches() -> list[Patch]:
    moto_backend = StepFunctionResponse.stepfunction_backend.fget  # type: ignore[attr-defined]
    return [
        (BaseResponse, "get_access_key", access_key_read_once(BaseResponse.get_access_key)),
        (BaseResponse, "_get_param", body_parsed_once(BaseResponse._get_param)),
        (StepFunctionResponse, "stepfunction_backend", property(backend_looked_up_once(moto_backend))),
    ]
