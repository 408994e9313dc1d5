"""The policy evaluator against AWS's documented evaluation rules and examples (pure Python).

Pages: IAM User Guide, "Policy evaluation logic"
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html), its
"Single account" page (...evaluation-logic_policies_resource.html), "Condition operators"
(reference_policies_elements_condition_operators.html), "NotAction" / "NotResource"
(reference_policies_elements_notaction.html, ..._notresource.html), the KMS developer guide's
"Default key policy" (key-policy-default.html) and the access-denied messages
(troubleshoot_access-denied.html).
"""

from __future__ import annotations

import json

import pytest

from onceflow.engine.iam.actions import Asked
from onceflow.engine.iam.conditions import holds
from onceflow.engine.iam.decide import message, reason
from onceflow.engine.iam.policy import Principal, Request, evaluate, statements

ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/starter"
SESSION = Principal(f"arn:aws:sts::{ACCOUNT}:assumed-role/starter/fn", ACCOUNT, role_arn=ROLE)
SNS = Principal("sns.amazonaws.com", ACCOUNT, service="sns.amazonaws.com")
QUEUE = f"arn:aws:sqs:us-east-1:{ACCOUNT}:orders"
TOPIC = f"arn:aws:sns:us-east-1:{ACCOUNT}:notifications"


def policy(*statement: dict) -> list:
    return statements({"Version": "2012-10-17", "Statement": list(statement)}, "test")


def decide(principal: Principal, action: str, resource: str, identity=(), resource_policy=(), context=None, key=False):
    return evaluate(Request(principal, action, resource, context or {}), identity, resource_policy, key)


def test_nothing_allows_is_an_implicit_deny() -> None:
    decision = decide(SESSION, "sqs:SendMessage", QUEUE)
    assert not decision.allowed and not decision.explicit_deny
    assert reason(decision, "sqs:SendMessage") == "because no identity-based policy allows the sqs:SendMessage action"


def test_an_explicit_deny_overrides_any_allow() -> None:
    identity = policy(
        {"Effect": "Allow", "Action": "sqs:*", "Resource": "*"},
        {"Effect": "Deny", "Action": "sqs:SendMessage", "Resource": QUEUE},
    )
    decision = decide(SESSION, "sqs:SendMessage", QUEUE, identity)
    assert not decision.allowed and decision.explicit_deny
    assert reason(decision, "sqs:SendMessage") == "with an explicit deny in an identity-based policy"


def test_a_deny_in_the_resource_policy_overrides_the_identity_allow() -> None:
    identity = policy({"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": QUEUE})
    resource = policy(
        {
            "Effect": "Deny",
            "Principal": "*",
            "Action": "sqs:*",
            "Resource": QUEUE,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }
    )
    assert not decide(SESSION, "sqs:SendMessage", QUEUE, identity, resource, {"aws:SecureTransport": "false"}).allowed
    assert decide(SESSION, "sqs:SendMessage", QUEUE, identity, resource, {"aws:SecureTransport": "true"}).allowed


def test_within_one_account_either_the_identity_or_the_resource_policy_allows() -> None:
    resource = policy({"Effect": "Allow", "Principal": {"AWS": ROLE}, "Action": "sqs:SendMessage", "Resource": QUEUE})
    assert decide(SESSION, "sqs:SendMessage", QUEUE, resource_policy=resource).allowed
    identity = policy({"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": QUEUE})
    assert decide(SESSION, "sqs:SendMessage", QUEUE, identity).allowed


@pytest.mark.parametrize(
    ("pattern", "action", "allowed"),
    [
        ("sqs:Send*", "sqs:SendMessage", True),
        ("SQS:sendmessage", "sqs:SendMessage", True),
        ("sqs:Receive*", "sqs:SendMessage", False),
        ("dynamodb:?etItem", "dynamodb:GetItem", True),
    ],
)
def test_actions_match_case_insensitively_with_wildcards(pattern: str, action: str, allowed: bool) -> None:
    identity = policy({"Effect": "Allow", "Action": pattern, "Resource": "*"})
    assert decide(SESSION, action, QUEUE, identity).allowed is allowed


def test_resources_match_case_sensitively_with_wildcards() -> None:
    identity = policy(
        {"Effect": "Allow", "Action": "dynamodb:Query", "Resource": "arn:aws:dynamodb:*:*:table/events/index/*"}
    )
    assert decide(
        SESSION, "dynamodb:Query", "arn:aws:dynamodb:us-east-1:1:table/events/index/pending", identity
    ).allowed
    assert not decide(SESSION, "dynamodb:Query", "arn:aws:dynamodb:us-east-1:1:table/events", identity).allowed
    assert not decide(SESSION, "dynamodb:Query", "arn:aws:dynamodb:us-east-1:1:table/Events/index/x", identity).allowed


def test_not_action_and_not_resource_allow_everything_else() -> None:
    identity = policy({"Effect": "Allow", "NotAction": "sqs:DeleteQueue", "NotResource": QUEUE + "-dlq"})
    assert decide(SESSION, "sqs:SendMessage", QUEUE, identity).allowed
    assert not decide(SESSION, "sqs:DeleteQueue", QUEUE, identity).allowed
    assert not decide(SESSION, "sqs:SendMessage", QUEUE + "-dlq", identity).allowed


def test_a_service_principal_is_admitted_only_by_the_resource_policy_and_its_source_arn() -> None:
    queue_policy = policy(
        {
            "Effect": "Allow",
            "Principal": {"Service": "sns.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": QUEUE,
            "Condition": {"ArnEquals": {"aws:SourceArn": TOPIC}},
        }
    )
    assert decide(SNS, "sqs:SendMessage", QUEUE, resource_policy=queue_policy, context={"aws:SourceArn": TOPIC}).allowed
    other = decide(SNS, "sqs:SendMessage", QUEUE, resource_policy=queue_policy, context={"aws:SourceArn": TOPIC + "x"})
    assert not other.allowed
    assert reason(other, "sqs:SendMessage") == "because no resource-based policy allows the sqs:SendMessage action"
    assert not decide(SNS, "sqs:SendMessage", QUEUE).allowed


def test_a_key_policy_must_allow_itself_or_name_the_account_for_iam_policies_to_count() -> None:
    key = "arn:aws:kms:us-east-1:123456789012:key/k"
    identity = policy({"Effect": "Allow", "Action": "kms:Decrypt", "Resource": key})
    account_only = policy(
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "kms:*", "Resource": "*"}
    )
    assert decide(SESSION, "kms:Decrypt", key, identity, account_only, key=True).allowed
    assert not decide(SESSION, "kms:Decrypt", key, (), account_only, key=True).allowed
    service_only = policy(
        {"Effect": "Allow", "Principal": {"Service": "logs.amazonaws.com"}, "Action": "kms:*", "Resource": "*"}
    )
    refused = decide(SESSION, "kms:Decrypt", key, identity, service_only, key=True)
    assert not refused.allowed and refused.missing == "key"


@pytest.mark.parametrize(
    ("condition", "context", "result"),
    [
        ({"StringEquals": {"aws:SourceAccount": "1"}}, {}, False),  # absent: false
        ({"StringNotEquals": {"aws:SourceAccount": "1"}}, {}, True),  # absent, negated: true
        ({"ArnNotLike": {"aws:SourceArn": "arn:aws:sns:*:*:t"}}, {}, True),
        ({"StringEqualsIfExists": {"aws:SourceAccount": "1"}}, {}, True),  # IfExists: true when absent
        ({"StringEqualsIfExists": {"aws:SourceAccount": "1"}}, {"aws:SourceAccount": "2"}, False),
        ({"Null": {"aws:SourceArn": "true"}}, {}, True),
        ({"Null": {"aws:SourceArn": "false"}}, {}, False),
        (
            {"ArnLike": {"aws:SourceArn": "arn:aws:events:*:1:rule/stack-*"}},
            {"aws:SourceArn": "arn:aws:events:us-east-1:1:rule/stack-Safety"},
            True,
        ),
        (
            {"ArnLike": {"aws:SourceArn": "arn:aws:events:*:1:rule/stack-*"}},
            {"aws:SourceArn": "arn:aws:events:us-east-1:2:rule/stack-Safety"},
            False,
        ),
        (
            {"StringEquals": {"AWS:SOURCEACCOUNT": ["1", "2"]}},
            {"aws:SourceAccount": "2"},
            True,
        ),  # keys ignore case; values OR
        ({"StringEquals": {"a:x": "1", "a:y": "2"}}, {"a:x": "1"}, False),  # keys AND
        ({"ForAnyValue:StringLike": {"a:tags": "env*"}}, {"a:tags": ["team", "env-prod"]}, True),
        ({"ForAllValues:StringLike": {"a:tags": "env*"}}, {"a:tags": ["team", "env-prod"]}, False),
        ({"ForAllValues:StringLike": {"a:tags": "env*"}}, {}, True),
        ({"Bool": {"aws:SecureTransport": "false"}}, {"aws:SecureTransport": "true"}, False),
        ({"NumericLessThan": {"a:n": "10"}}, {"a:n": "9"}, True),
    ],
)
def test_condition_operators(condition: dict, context: dict, result: bool) -> None:
    assert holds(condition, context) is result


def test_the_denial_names_principal_action_and_resource_as_aws_words_it() -> None:
    decision = decide(SESSION, "sns:Publish", TOPIC)
    text = message(SESSION, Asked("sns:Publish", TOPIC), reason(decision, "sns:Publish"))
    assert text == (
        f"User: arn:aws:sts::{ACCOUNT}:assumed-role/starter/fn is not authorized to perform: sns:Publish on resource: "
        f"{TOPIC} because no identity-based policy allows the sns:Publish action"
    )


def test_a_policy_text_is_parsed_once_and_read_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request a role makes is decided on its policies' texts: each text is parsed once, and
    its statements are what parsing it afresh gives, with the source they are read from."""
    from onceflow.engine.iam import policy as policy_module

    text = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": QUEUE},
                "AWS::NoValue",
                {"Effect": "Deny", "Action": "sns:Publish", "Resource": TOPIC},
            ],
        }
    )
    parses: list[str] = []
    parse = policy_module._parsed
    monkeypatch.setattr(policy_module, "_parsed", lambda document: parses.append(document) or parse(document))
    policy_module._statements_of_text.cache_clear()
    first = statements(text, "starter-policy")
    again = statements(text, "starter-policy")
    elsewhere = statements(text, QUEUE)
    assert parses == [text, text]  # once per (text, source)
    assert first == again == statements(json.loads(text), "starter-policy")
    assert [(s.effect, s.index, s.source) for s in elsewhere] == [("Allow", 0, QUEUE), ("Deny", 1, QUEUE)]
    first.clear()  # a caller's list is its own
    assert len(statements(text, "starter-policy")) == 2
    allowed = decide(SESSION, "sqs:SendMessage", QUEUE, identity=statements(text, "starter-policy"))
    assert allowed.allowed and not decide(SESSION, "sns:Publish", TOPIC, identity=again).allowed


def test_a_decision_is_remembered_for_the_same_statements_and_made_anew_when_they_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The memo answers the same request decided on the same statement objects; another context, a
    policy put anew (new statements) or statements that parse again after they were forgotten are
    decided again, and a denial follows a policy that now denies."""
    from onceflow.engine.iam import policy as policy_module

    made: list[str] = []
    evaluate_now = policy_module._evaluate
    monkeypatch.setattr(
        policy_module, "_evaluate", lambda request, *rest: made.append(request.action) or evaluate_now(request, *rest)
    )
    monkeypatch.setattr(policy_module, "_MEMO", {})
    allow = {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": QUEUE}
    granted = statements(json.dumps({"Statement": [allow]}), "starter-policy")
    assert decide(SESSION, "sqs:SendMessage", QUEUE, identity=list(granted)).allowed
    assert decide(SESSION, "sqs:SendMessage", QUEUE, identity=list(granted)).allowed
    assert made == ["sqs:SendMessage"]  # the second from the memo
    decide(SESSION, "sqs:SendMessage", QUEUE, identity=list(granted), context={"aws:SourceArn": TOPIC})
    assert len(made) == 2  # another context
    denied = statements(json.dumps({"Statement": [allow, {**allow, "Effect": "Deny"}]}), "starter-policy")
    assert not decide(SESSION, "sqs:SendMessage", QUEUE, identity=list(denied)).allowed
    assert len(made) == 3
    monkeypatch.setattr(policy_module, "MEMO_SIZE", 3)  # full: the memo starts again with the next
    decide(SESSION, "sqs:SendMessage", QUEUE, identity=list(granted), context={"aws:SourceArn": QUEUE})
    assert len(made) == 4 and len(policy_module._MEMO) == 1
