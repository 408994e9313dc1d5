"""A JSON template is read as JSON, as CloudFormation reads it
(https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/template-formats.html).

moto 5.2.5 reads every template with PyYAML's pure-Python loader and falls back to JSON only when
that fails: YAML 1.1 reads a JSON number such as `1e3` as the string "1e3", and the loader took about
0.1 s of every deploy of this repository's template (which `onceflow.local.stack.deploy` hands over
as JSON, translated by the SAM translator). A template whose text starts with `{` is JSON text here;
anything else (YAML, with its short-form tags such as `!Ref`) is moto's to read, as before.
"""

from __future__ import annotations

import json
from typing import Any

from moto.cloudformation.models import Stack

from onceflow.engine.moto_shape import Need, need
from onceflow.engine.registry import Patch


def moto_needs() -> list[Need]:
    return [need(Stack, "parse_template", "template")]


def patches() -> list[Patch]:
    read_by_moto = Stack.parse_template

    def parse_template(template: str) -> dict[str, Any]:
        if template.lstrip().startswith("{"):
            return json.loads(template)  # type: ignore[no-any-return]
        return read_by_moto(template)  # type: ignore[no-any-return]

    return [(Stack, "parse_template", staticmethod(parse_template))]
