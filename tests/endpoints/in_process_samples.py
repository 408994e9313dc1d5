"""Sample code for the embedded-only detection (tests/endpoints/test_markers.py), not tests.

The tests reach these through the module, so that the detection does not follow them into the
tests themselves.
"""

from __future__ import annotations

import moto.sns.models

from onceflow.engine.server import free_port
from onceflow.local.faults import dynamodb_throttling, sns_publish_failures
from onceflow.local.stack import render_definition


def publish_outage() -> None:
    with sns_publish_failures():
        pass


def indirect_outage() -> None:
    publish_outage()


def plain_helper() -> str:
    return render_definition.__name__


def injects_in_a_closure() -> None:
    def later() -> None:
        with dynamodb_throttling(times=1):
            pass

    later()


def patches_moto_directly() -> None:
    moto.sns.models.SNSBackend.publish = moto.sns.models.SNSBackend.publish


def starts_an_engine() -> int:
    return free_port()
