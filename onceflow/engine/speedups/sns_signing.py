"""The `sns_signing` speed-up: a subscription's notifications are signed with one certificate, made
once, as SNS signs them with its regional signing certificate.

For every notification it delivers to an SQS queue (without raw delivery) or an HTTP endpoint, moto
builds and signs a new X.509 certificate (an RSA-2048 signature, about 0.45 ms of CPU) under a new
random name, and keeps that certificate's PEM for ever (`_message_public_keys`, about 1 KB per
notification). AWS signs with a certificate per region that changes rarely: the notifications carry
the same `SigningCertURL` until it rotates
(https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html). Here the
certificate of a subscription's key is made on its first notification, kept under one name, and
put back where moto serves it from if a reset forgot it; each notification is still signed (SHA256withRSA
over the same string moto signs) and carries the same fields as moto's.
"""

from __future__ import annotations

import base64
import threading
from datetime import timedelta
from typing import Any

import cryptography.x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.x509 import Name, NameAttribute
from cryptography.x509.oid import NameOID
from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.utils import iso_8601_datetime_with_milliseconds, utcnow
from moto.moto_api._internal import mock_random
from moto.sns import models as sns_models

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.speedups import SNS_SIGNING

Patch = tuple[Any, str, Any]
SPEEDUPS = (SNS_SIGNING,)
KEPT_CERTIFICATES = 256  # keys (one per subscription) whose certificate is kept; oldest dropped first


def moto_needs() -> list[Need]:
    return [
        need(sns_models.Subscription, "get_post_data", "message", "message_id", "subject", "message_attributes"),
        need(sns_models.Subscription, "private_key"),
        need(sns_models.SNSBackend, "__init__", "region_name", "account_id"),  # its _message_public_keys
        need(sns_models, "sns_backends"),
    ]


class Certificates:
    """The signing certificate of each key: (its name, its PEM), made once."""

    def __init__(self) -> None:
        self._by_key: dict[int, tuple[Any, str, bytes]] = {}
        self._lock = threading.Lock()
        self.made = 0

    def of(self, key: Any) -> tuple[str, bytes]:
        with self._lock:
            kept = self._by_key.get(id(key))
            if kept is not None and kept[0] is key:
                return kept[1], kept[2]
            pem = _certificate(key).public_bytes(serialization.Encoding.PEM)
            name = f"SimpleNotificationService-{str(mock_random.uuid4()).replace('-', '')}.pem"
            if len(self._by_key) >= KEPT_CERTIFICATES:
                self._by_key.pop(next(iter(self._by_key)))
            self._by_key[id(key)] = (key, name, pem)  # the key kept alive: its id names no other key
            self.made += 1
            return name, pem


def _certificate(key: Any) -> Any:
    """moto's certificate for SNS's signatures (SignatureVersion 2: SHA256)."""
    return (
        cryptography.x509.CertificateBuilder()
        .subject_name(Name([NameAttribute(NameOID.COMMON_NAME, "sns.amazonaws.com")]))
        .issuer_name(
            Name(
                [
                    NameAttribute(NameOID.COUNTRY_NAME, "US"),
                    NameAttribute(NameOID.ORGANIZATION_NAME, "Amazon"),
                    NameAttribute(NameOID.COMMON_NAME, "Amazon RSA 2048 M01"),
                ]
            )
        )
        .public_key(key.public_key())
        .serial_number(cryptography.x509.random_serial_number())
        .not_valid_before(utcnow())
        .not_valid_after(utcnow() + timedelta(days=365))
        .sign(key, hashes.SHA256())
    )


CERTIFICATES = Certificates()


def get_post_data(
    self: Any,
    message: str,
    message_id: str,
    subject: str | None,
    message_attributes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """moto's Subscription.get_post_data, with the key's certificate made once."""
    key = self.private_key()
    key_name, pem = CERTIFICATES.of(key)
    signature_version = "2"
    timestamp = iso_8601_datetime_with_milliseconds()
    string_to_sign = f"""Message
{message}
MessageId
{message_id}
Timestamp
{timestamp}
TopicArn
{self.topic.arn}
Type
Notification
"""
    signature = key.sign(string_to_sign.encode("UTF-8"), padding.PKCS1v15(), hashes.SHA256())
    region = self.topic.sns_backend.region_name
    # Served from the default account's backend, as moto serves every certificate.
    sns_models.sns_backends[DEFAULT_ACCOUNT_ID][region]._message_public_keys.setdefault(key_name, pem)
    post_data: dict[str, Any] = {
        "Type": "Notification",
        "MessageId": message_id,
        "TopicArn": self.topic.arn,
        "Message": message,
        "Timestamp": timestamp,
        "SignatureVersion": signature_version,
        "Signature": base64.b64encode(signature).decode("utf-8"),
        "SigningCertURL": f"https://sns.{region}.amazonaws.com/{key_name}",
        "UnsubscribeURL": f"https://sns.us-east-1.amazonaws.com/?Action=Unsubscribe&SubscriptionArn=arn:aws:sns:us-east-1:{self.account_id}:{self.topic.name}:2bcfbf39-05c3-41de-beaa-fcfcc21c8f55",
    }
    if subject:
        post_data["Subject"] = subject
    if message_attributes:
        post_data["MessageAttributes"] = message_attributes
    return post_data


def patches() -> list[Patch]:
    return [(sns_models.Subscription, "get_post_data", get_post_data)]
