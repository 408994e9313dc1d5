"""template.yaml read with PyYAML, CloudFormation's short tags (`!Ref`, `!GetAtt`, ...) as their long form.

The base install reads a template (the domain's sample, its event_id's place) without the SAM
translator, which is the local extra's; this is the one loader it needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class _TemplateLoader(yaml.SafeLoader):
    """SafeLoader with CloudFormation's tags, without changing PyYAML's own SafeLoader."""


def _intrinsic(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = tag_suffix if tag_suffix in ("Ref", "Condition") else f"Fn::{tag_suffix}"
    value: Any
    if tag_suffix == "GetAtt" and isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node).split(".", 1)
    elif isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_TemplateLoader.add_multi_constructor("!", _intrinsic)


def read_template(path: Path) -> dict[str, Any]:
    """The template as a dict; OSError when it cannot be read, ValueError when it is not a template."""
    try:
        loaded = yaml.load(path.read_text(encoding="utf-8"), Loader=_TemplateLoader)
    except yaml.YAMLError as error:
        raise ValueError(str(error)) from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{path}: not a CloudFormation template (no mapping at the top)")
    return loaded
