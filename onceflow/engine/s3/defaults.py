"""What every S3 bucket and object has on AWS without being asked, which moto 5.2.5 leaves out.

- default_encryption: every bucket encrypts new objects with SSE-S3 unless told otherwise ("Amazon
  S3 now applies server-side encryption with Amazon S3 managed keys (SSE-S3) as the base level of
  encryption for every bucket", since January 2023), so PutObject, GetObject and HeadObject answer
  `ServerSideEncryption: AES256` and GetBucketEncryption the SSE-S3 rule; DeleteBucketEncryption
  goes back to it. moto answered no encryption and ServerSideEncryptionConfigurationNotFoundError.
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/default-bucket-encryption.html
- checksum_type: an object put in one request with a checksum (the SDKs send a CRC32 by default)
  has the checksum type FULL_OBJECT: PutObject answers `x-amz-checksum-type`, and so do GetObject and
  HeadObject when asked for the checksum (`x-amz-checksum-mode: ENABLED`). moto answered it for
  multipart uploads only.
  https://docs.aws.amazon.com/AmazonS3/latest/userguide/checking-object-integrity.html

AWS's recordings: LocalStack's stepfunctions services/test_aws_sdk_task_service.snapshot.json
(test_s3_put_object[*], test_s3_get_object[*], November 2025: ServerSideEncryption AES256 in both,
ChecksumCRC32 and ChecksumType FULL_OBJECT on the put and on a GetObject asking for the checksum).
"""

from __future__ import annotations

from typing import Any

from moto.s3.models import FakeBucket, S3Backend
from moto.s3.responses import S3Response

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]
FULL_OBJECT = "FULL_OBJECT"


def moto_needs() -> list[Need]:
    return [
        need(S3Backend, "create_bucket", "bucket_name", "region_name"),
        need(S3Backend, "delete_bucket_encryption", "bucket_name"),
        need(S3Backend, "put_object", "bucket_name", "key_name", "value", "checksum_value"),
        need(S3Response, "put_object"),
        need(FakeBucket, "__init__"),
    ]


def patches() -> list[Patch]:
    return [*default_encryption(), *checksum_type()]


def _sse_s3() -> dict[str, Any]:
    """The bucket's rule as moto keeps one PutBucketEncryption set."""
    return {"Rule": {"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": "false"}}


def default_encryption() -> list[Patch]:
    original_create = S3Backend.create_bucket
    original_delete = S3Backend.delete_bucket_encryption

    def create_bucket(self: S3Backend, bucket_name: str, region_name: str, *args: Any, **kwargs: Any) -> FakeBucket:
        bucket = original_create(self, bucket_name, region_name, *args, **kwargs)
        if not bucket.encryption:
            bucket.encryption = _sse_s3()
        return bucket

    def delete_bucket_encryption(self: S3Backend, bucket_name: str) -> None:
        original_delete(self, bucket_name)
        self.get_bucket(bucket_name).encryption = _sse_s3()

    return [
        (S3Backend, "create_bucket", create_bucket),
        (S3Backend, "delete_bucket_encryption", delete_bucket_encryption),
    ]


def checksum_type() -> list[Patch]:
    original_put = S3Backend.put_object
    original_response = S3Response.put_object

    def put_object(
        self: S3Backend,
        bucket_name: str,
        key_name: str,
        value: bytes,
        *args: Any,
        checksum_value: str | None = None,
        **kwargs: Any,
    ) -> Any:
        key = original_put(self, bucket_name, key_name, value, *args, checksum_value=checksum_value, **kwargs)
        if checksum_value and kwargs.get("multipart") is None and not key.checksum_type:
            key.checksum_type = FULL_OBJECT
        return key

    def put_object_response(self: S3Response) -> Any:
        status, headers, body = original_response(self)
        checksums = [h for h in headers if h.startswith("x-amz-checksum-") and h != "x-amz-checksum-type"]
        if checksums and "x-amz-checksum-type" not in headers:
            headers["x-amz-checksum-type"] = FULL_OBJECT
        return status, headers, body

    return [
        (S3Backend, "put_object", put_object),
        (S3Response, "put_object", put_object_response),
    ]
