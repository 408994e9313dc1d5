"""Notifications delivered to an SQS subscriber are signed as SNS signs them: each envelope's
Signature verifies with the certificate its SigningCertURL serves (SignatureVersion 2, SHA256withRSA
over the fields AWS lists), whether the engine makes that certificate once per subscription (the
`sns_signing` speed-up) or once per notification as moto does
(`ONCEFLOW_SPEEDUPS_OFF=sns_signing` runs this file the other way).

AWS: https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
moto leaves a notification's Subject out of the string it signs (AWS signs it when present): the
notifications here have none, as the pipeline's have none.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding
from moto.core import DEFAULT_ACCOUNT_ID
from moto.sns.models import sns_backends

from onceflow.engine import REGION
from tests.support import sqs_subscribed_topic


def _string_to_sign(envelope: dict[str, Any]) -> bytes:
    fields = ["Message", "MessageId", *(["Subject"] if "Subject" in envelope else []), "Timestamp", "TopicArn", "Type"]
    return "".join(f"{name}\n{envelope[name]}\n" for name in fields).encode()


def _certificate(signing_cert_url: str) -> x509.Certificate:
    """The PEM the URL names, where moto's SNS serves it from (its default account's backend)."""
    name = signing_cert_url.rsplit("/", 1)[-1]
    return x509.load_pem_x509_certificate(sns_backends[DEFAULT_ACCOUNT_ID][REGION]._message_public_keys[name])


def test_each_notification_verifies_with_the_certificate_its_url_serves(stack):
    sns, sqs = stack.client("sns"), stack.client("sqs")
    topic, queue = sqs_subscribed_topic(stack, "signed-notifications")
    sent = [sns.publish(TopicArn=topic, Message=f"order {i}")["MessageId"] for i in range(3)]

    envelopes = [json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]]
    assert sorted(e["MessageId"] for e in envelopes) == sorted(sent)
    for envelope in envelopes:
        assert envelope["Type"] == "Notification" and envelope["SignatureVersion"] == "2"
        assert envelope["SigningCertURL"].startswith(f"https://sns.{REGION}.amazonaws.com/SimpleNotificationService-")
        certificate = _certificate(envelope["SigningCertURL"])
        certificate.public_key().verify(  # raises InvalidSignature if it does not verify
            base64.b64decode(envelope["Signature"]), _string_to_sign(envelope), padding.PKCS1v15(), hashes.SHA256()
        )
        assert certificate.subject.rfc4514_string() == "CN=sns.amazonaws.com"
