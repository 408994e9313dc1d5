"""Secrets Manager refuses a secret name with characters outside its set, as AWS does.

A secret's name is letters, digits and `/_+=.@-`
(https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_CreateSecret.html); moto 5.2.5
created "Invalid Name" (a space). AWS answers a ValidationException (an error the SDK's model does
not name, so an aws-sdk task fails with `SecretsManager.SecretsManagerException`) worded "Invalid
name. Must be a valid name containing alphanumeric characters, or any of the following:
-/_+=.@!". AWS's recording: LocalStack's error_handling/test_aws_sdk.snapshot.json
(test_invalid_secret_name).
"""

from __future__ import annotations

import re
from typing import Any

from moto.secretsmanager.exceptions import ValidationException
from moto.secretsmanager.models import SecretsManagerBackend

from onceflow.engine.moto_shape import Need, need

Patch = tuple[Any, str, Any]
# The documented set, and "!" that AWS's own message lists.
SECRET_NAME = re.compile(r"[A-Za-z0-9/_+=.@!-]+")
MESSAGE = "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!"


def moto_needs() -> list[Need]:
    return [need(SecretsManagerBackend, "create_secret", "name")]


def patches() -> list[Patch]:
    original = SecretsManagerBackend.create_secret

    def create_secret(self: SecretsManagerBackend, name: str, *args: Any, **kwargs: Any) -> str:
        if not SECRET_NAME.fullmatch(name or ""):
            raise ValidationException(MESSAGE)
        return original(self, name, *args, **kwargs)

    return [(SecretsManagerBackend, "create_secret", create_secret)]
