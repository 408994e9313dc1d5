"""A Distributed Map's ItemReader over `s3:listObjectsV2` iterates over every object, as AWS lists them.

Each item is the object's `Etag`, `LastModified` (ISO 8601 text), `Key`, `Size` and `StorageClass`,
as AWS's recording shows them; every page of the listing is read; a bucket (or prefix) with no
object gives no items. moto handed on boto3's first page as it is (`ETag`, a Python datetime that
is no JSON, `ChecksumAlgorithm`) and failed the Map run with cause 'Contents' when a page had no
object.

https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html ("Amazon S3
objects": listObjectsV2 lists the objects the Map iterates over); AWS's recording: LocalStack's
scenarios/test_base_scenarios.snapshot.json test_map_item_reader_base_list_objects_v2 (September
2023, the only one: items `{"Etag", "LastModified", "Key", "Size", "StorageClass"}`).
"""

from __future__ import annotations

import datetime
from typing import Any

from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_reader.eval import resource_eval_s3

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.stepfunctions.interpreter.context_object import iso_millis

Patch = tuple[Any, str, Any]
ResourceEvalS3 = resource_eval_s3.ResourceEvalS3


def moto_needs() -> list[Need]:
    return [
        need(ResourceEvalS3, "_handle_list_objects_v2", "env", "resource_runtime_part", "state_credentials"),
        need(ResourceEvalS3, "_get_s3_client", "resource_runtime_part", "state_credentials"),
    ]


def patches() -> list[Patch]:
    return [(ResourceEvalS3, "_handle_list_objects_v2", staticmethod(_handle_list_objects_v2))]


def item(listed: dict[str, Any]) -> dict[str, Any]:
    """One listed object as the Map's item."""
    modified = listed.get("LastModified")
    if isinstance(modified, datetime.datetime):
        modified = iso_millis(modified)
    return {
        "Etag": listed.get("ETag"),
        "LastModified": modified,
        "Key": listed.get("Key"),
        "Size": listed.get("Size"),
        "StorageClass": listed.get("StorageClass"),
    }


def _handle_list_objects_v2(env: Any, resource_runtime_part: Any, state_credentials: Any) -> None:
    s3 = ResourceEvalS3._get_s3_client(resource_runtime_part=resource_runtime_part, state_credentials=state_credentials)
    parameters = env.stack.pop()
    pages = s3.get_paginator("list_objects_v2").paginate(**parameters)
    env.stack.append([item(listed) for page in pages for listed in page.get("Contents", [])])
