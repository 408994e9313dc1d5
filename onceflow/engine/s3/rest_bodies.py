"""S3's XML answers keep their members: the REST serializers write their structures through moto's path.

moto's REST serializers (S3's RestXML, and RestJSON) route each top-level member of a result to the
body or to a header in `_serialize_structure_member`; the `serializer_fast_paths` speed-up's
structure path (speedups/serializer_fast_paths.py, on ResponseSerializer) calls `_serialize` for each
member directly, so with it on every S3 answer built from a result lost its members: ListObjectsV2
answered an empty `<ListBucketResult/>`, and a Distributed Map's ItemReader over `s3:listObjectsV2`
failed MapRunFailed with cause 'Contents'. Here the REST serializer classes take moto's own
structure path (the speed-up keeps serving the JSON and query protocols it was written for); the
speed-up can take this guard over, and this module go.
https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
"""

from __future__ import annotations

from typing import Any

from moto.core import serialize

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]
_MOTO_STRUCTURE = serialize.ResponseSerializer._serialize_type_structure


def moto_needs() -> list[Need]:
    return [
        need(serialize.ResponseSerializer, "_serialize_type_structure", "serialized", "value", "shape", "key"),
        need(serialize.BaseRestSerializer, "_serialize_structure_member", "serialized", "value", "shape", "key"),
        need(serialize, "RestXMLSerializer"),
        need(serialize, "RestJSONSerializer"),
    ]


def _rest_json_structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
    if shape.is_document_type:  # as BaseJSONSerializer writes a document
        serialized[key] = value
        return
    _MOTO_STRUCTURE(self, serialized, value, shape, key)


def patches() -> list[Patch]:
    return [
        (serialize.RestXMLSerializer, "_serialize_type_structure", _MOTO_STRUCTURE),
        (serialize.RestJSONSerializer, "_serialize_type_structure", _rest_json_structure),
    ]
