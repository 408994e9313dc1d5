"""template.yaml read with PyYAML, CloudFormation's short tags (`!Ref`, `!GetAtt`, ...) as their long form.

The base install reads a template (the domain's sample, its event_id's place) without the SAM
translator, which is the local extra's; this is the one loader it needs, and the local stack reads
the template with it too (the same dict as the SAM translator's own `yaml_parse`). It parses with
libyaml when PyYAML has it (PyYAML's wheels do): template.yaml in 14 ms instead of 117 ms, and a demo
or a deploy reads it three or four times.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

# libyaml's parser with PyYAML's safe constructors when PyYAML was built with it, else PyYAML's own.
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _TemplateLoader(SAFE_LOADER):  # type: ignore[misc,valid-type]
    """A safe loader with CloudFormation's tags, without changing PyYAML's own."""


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
    return parse_template(path.read_text(encoding="utf-8"), str(path))


def parse_template(text: str, source: str = "the template") -> dict[str, Any]:
    """A template's text as a dict; ValueError when it is not YAML or not a template."""
    try:
        loaded = yaml.load(text, Loader=_TemplateLoader)
    except yaml.YAMLError as error:
        raise ValueError(str(error)) from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{source}: not a CloudFormation template (no mapping at the top)")
    return loaded
