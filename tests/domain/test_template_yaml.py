"""template.yaml as onceflow reads it (onceflow/domain/template_yaml.py): with libyaml's parser when
PyYAML has it, the same dict as PyYAML's own parser and as the SAM translator's `yaml_parse` (what the
local stack read before), CloudFormation's short tags in their long form; bad YAML and a document that
is no template refused as ValueError naming where."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from samtranslator.yaml_helper import yaml_parse

from onceflow.domain import template_yaml
from onceflow.domain.template_yaml import parse_template, read_template

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = [ROOT / "template.yaml", *sorted((ROOT / "onceflow" / "app_template").rglob("template.yaml"))]
TAGS = """
Resources:
  Q: {Type: AWS::SQS::Queue}
  F:
    Type: AWS::Serverless::Function
    Properties:
      Arn: !GetAtt Q.Arn
      Listed: !GetAtt [Q, QueueName]
      Url: !Ref Q
      Joined: !Join ["", [!Sub "${AWS::Region}-x", !Select [0, !GetAZs ""]]]
      When: !If [IsProd, !Ref "AWS::NoValue", {Nested: !Equals [a, b]}]
      Date: 2024-01-01
      Number: 012
"""


class _PurePythonLoader(yaml.SafeLoader):
    pass


_PurePythonLoader.add_multi_constructor("!", template_yaml._intrinsic)


def test_the_loader_is_libyaml_s_when_pyyaml_has_it() -> None:
    assert yaml.__with_libyaml__  # PyYAML's wheels are built with it
    assert issubclass(template_yaml._TemplateLoader, yaml.CSafeLoader)


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_template_reads_as_pyyaml_and_the_sam_translator_read_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    read = read_template(path)
    assert read == yaml.load(text, Loader=_PurePythonLoader) == yaml_parse(text)
    assert read["Resources"]


def test_short_tags_read_in_their_long_form() -> None:
    properties = parse_template(TAGS)["Resources"]["F"]["Properties"]
    assert properties == yaml.load(TAGS, Loader=_PurePythonLoader)["Resources"]["F"]["Properties"]
    assert properties["Arn"] == {"Fn::GetAtt": ["Q", "Arn"]}
    assert properties["Listed"] == {"Fn::GetAtt": ["Q", "QueueName"]}
    assert properties["Url"] == {"Ref": "Q"}
    assert properties["Joined"] == {
        "Fn::Join": ["", [{"Fn::Sub": "${AWS::Region}-x"}, {"Fn::Select": [0, {"Fn::GetAZs": ""}]}]]
    }
    assert properties["When"] == {"Fn::If": ["IsProd", {"Ref": "AWS::NoValue"}, {"Nested": {"Fn::Equals": ["a", "b"]}}]}
    assert str(properties["Date"]) == "2024-01-01" and properties["Number"] == 10  # YAML 1.1, as PyYAML reads it


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Resources: [unclosed", "expected ',' or ']'"),
        ("- a list\n- not a template\n", "t.yaml: not a CloudFormation template"),
        ("", "t.yaml: not a CloudFormation template"),
    ],
)
def test_what_is_no_template_is_refused_naming_why(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_template(text, "t.yaml")
