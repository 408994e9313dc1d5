"""An `aws-sdk:s3:*` task calls S3 as Step Functions' own SDK does.

- no_checksum_mode: the client asks for no checksum in a GetObject's answer unless the task's
  parameters do (`ChecksumMode`); boto3 asks for one by default, so the task's result carried
  `ChecksumCrc32`, which AWS's does not.
- text_bodies: a putObject without ContentType stores its Body (JSON text, as Step Functions writes a
  value that is not text) as `text/plain; charset=UTF-8`; boto3 sent none and S3 kept
  `binary/octet-stream`.

AWS's recordings: LocalStack's services/test_aws_sdk_task_service.snapshot.json (November 2025):
test_s3_get_object[*] (AcceptRanges, ContentLength, ContentType, ETag, LastModified, Metadata,
ServerSideEncryption, Body; no checksum), test_s3_put_object[*] (the result ChecksumCRC32,
ChecksumType, ETag, ServerSideEncryption; the object's ContentType "text/plain; charset=UTF-8").
The result's member names keep the API model's spelling (`ChecksumCRC32`): sdk_shapes.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
    state_task_service_aws_sdk as aws_sdk_module,
)

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import current

Patch = tuple[Any, str, Any]
TEXT = "text/plain; charset=UTF-8"
_ASKED = "onceflow_checksum_mode_asked"


def moto_needs() -> list[Need]:
    return [need(aws_sdk_module, "boto_client_for")]


def patches(before: Sequence[Patch] = ()) -> list[Patch]:
    original = current(before, aws_sdk_module, "boto_client_for")

    def boto_client_for(region: str, service: str, state_credentials: Any = None) -> Any:
        client = original(region=region, service=service, state_credentials=state_credentials)
        if service == "s3":
            events = client.meta.events
            # unique ids: a client the engine caches is prepared once
            events.register("provide-client-params.s3", _note_checksum_mode, unique_id=_ASKED)
            events.register("before-call.s3", _no_checksum_mode, unique_id="onceflow_no_checksum_mode")
            events.register_last("before-parameter-build.s3.PutObject", _text_body, unique_id="onceflow_text_body")
        return client

    return [(aws_sdk_module, "boto_client_for", boto_client_for)]


def _note_checksum_mode(params: dict[str, Any], context: dict[str, Any], **kwargs: Any) -> None:
    context[_ASKED] = "ChecksumMode" in params


def _no_checksum_mode(params: dict[str, Any], context: dict[str, Any], **kwargs: Any) -> None:
    """`params` is the serialised request here: botocore has added the header it asks with."""
    if not context.get(_ASKED):
        params.get("headers", {}).pop("x-amz-checksum-mode", None)
        context.get("checksum", {}).pop("response_algorithms", None)


def _text_body(params: dict[str, Any], **kwargs: Any) -> None:
    params.setdefault("ContentType", TEXT)
