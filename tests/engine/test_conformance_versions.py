"""State machine versions and aliases on the embedded Step Functions against AWS, one test per behaviour.

BEHAVIOURS lists each behaviour with the AWS page it follows and the test that checks it (as in
test_conformance_api.py); a test that follows one of LocalStack's recordings of AWS
(tests/aws/services/stepfunctions/v2/test_sfn_api_versioning.snapshot.json,
test_sfn_api_aliasing.snapshot.json in LocalStack's repository, recorded against AWS itself) names the
recording in its docstring. The engine's side is onceflow/engine/stepfunctions/api/: versions.py,
aliases.py and qualified_executions.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from onceflow.ops.executions import wait_for
from tests.engine.behaviours import check_behaviours
from tests.engine.harness import ROLE_ARN, Account

API = "https://docs.aws.amazon.com/step-functions/latest/apireference"
GUIDE = "https://docs.aws.amazon.com/step-functions/latest/dg"


def _definition(comment: str) -> dict[str, Any]:
    """A Pass state that answers which definition ran and what `$$.StateMachine.Id` it saw."""
    return {
        "Comment": comment,
        "StartAt": "P",
        "States": {"P": {"Type": "Pass", "Parameters": {"ran": comment, "id.$": "$$.StateMachine.Id"}, "End": True}},
    }


BEHAVIOURS: dict[str, tuple[str, str]] = {
    "CreateStateMachine/UpdateStateMachine with publish answer the version ARN; no new version when nothing changed": (
        f"{API}/API_UpdateStateMachine.html",
        "test_create_and_update_with_publish_answer_the_version_of_the_revision",
    ),
    "PublishStateMachineVersion is idempotent per revision and refuses a revisionId that is not the current one": (
        f"{API}/API_PublishStateMachineVersion.html",
        "test_publish_state_machine_version_is_idempotent_and_checks_the_revision",
    ),
    "A version's or an alias's description over 256 characters is ValidationException": (
        f"{API}/API_PublishStateMachineVersion.html",
        "test_a_description_over_256_characters_is_refused",
    ),
    "Version numbers are never reused after a delete": (
        f"{GUIDE}/concepts-state-machine-version.html",
        "test_version_numbers_are_not_reused_after_a_delete",
    ),
    "ListStateMachineVersions lists newest first, page by page": (
        f"{API}/API_ListStateMachineVersions.html",
        "test_list_state_machine_versions_newest_first_page_by_page",
    ),
    "DescribeStateMachine of a version ARN answers the version's snapshot": (
        f"{API}/API_DescribeStateMachine.html",
        "test_describe_state_machine_of_a_version_answers_its_snapshot",
    ),
    "UpdateStateMachine and TagResource refuse a version ARN": (
        f"{API}/API_UpdateStateMachine.html",
        "test_update_state_machine_and_tag_resource_refuse_a_version_arn",
    ),
    "DeleteStateMachineVersion is refused while an alias routes to the version; deleting twice succeeds": (
        f"{API}/API_DeleteStateMachineVersion.html",
        "test_delete_state_machine_version_refused_while_an_alias_routes_to_it",
    ),
    "More than 1000 versions of a machine is ServiceQuotaExceededException": (
        f"{API}/API_PublishStateMachineVersion.html",
        "test_publishing_past_the_version_quota_is_refused",
    ),
    "StartExecution with a version ARN runs the version; DescribeExecution and ListExecutions report it": (
        f"{GUIDE}/execution-alias-version-associate.html",
        "test_start_execution_with_a_version_arn_runs_that_version",
    ),
    "StartExecution with an alias ARN runs a version it routes to; both ARNs reported; listed by alias": (
        f"{API}/API_StartExecution.html",
        "test_start_execution_through_an_alias_runs_its_routed_version",
    ),
    "The ExecutionStarted event names the version that ran and the alias it was started through": (
        f"{API}/API_ExecutionStartedEventDetails.html",
        "test_execution_started_event_names_the_version_and_the_alias",
    ),
    "DescribeStateMachineForExecution of a version's execution answers the version under the machine's ARN": (
        f"{API}/API_DescribeStateMachineForExecution.html",
        "test_describe_state_machine_for_execution_of_a_version",
    ),
    "CreateStateMachineAlias checks the routing configuration and the name in AWS's words": (
        f"{API}/API_CreateStateMachineAlias.html",
        "test_alias_routing_configuration_and_name_are_checked_in_aws_words",
    ),
    "CreateStateMachineAlias is idempotent for the same request, ConflictException otherwise": (
        f"{API}/API_CreateStateMachineAlias.html",
        "test_create_state_machine_alias_is_idempotent_or_conflicts",
    ),
    "Aliases are described, updated, listed in creation order page by page, and deleted": (
        f"{API}/API_ListStateMachineAliases.html",
        "test_alias_lifecycle_describe_update_list_delete",
    ),
    "More than 100 aliases of a machine is ServiceQuotaExceededException": (
        f"{API}/API_CreateStateMachineAlias.html",
        "test_creating_past_the_alias_quota_is_refused",
    ),
    "DeleteStateMachine deletes its versions and aliases": (
        f"{API}/API_DeleteStateMachine.html",
        "test_delete_state_machine_deletes_its_versions_and_aliases",
    ),
}


def test_every_behaviour_names_an_aws_page_and_a_test():
    check_behaviours(BEHAVIOURS, globals())


def _error(refused: pytest.ExceptionInfo[ClientError]) -> tuple[str, str]:
    error = refused.value.response["Error"]
    return error["Code"], error["Message"]


def _create(account: Account, name: str, comment: str = "v1", **extra: Any) -> dict[str, Any]:
    return account.sfn.create_state_machine(
        name=name, definition=json.dumps(_definition(comment)), roleArn=ROLE_ARN, **extra
    )


def _update(account: Account, arn: str, comment: str, **extra: Any) -> dict[str, Any]:
    return account.sfn.update_state_machine(stateMachineArn=arn, definition=json.dumps(_definition(comment)), **extra)


def _alias(account: Account, name: str, *routes: tuple[str, int], **extra: Any) -> dict[str, Any]:
    return account.sfn.create_state_machine_alias(
        name=name, routingConfiguration=[{"stateMachineVersionArn": arn, "weight": w} for arn, w in routes], **extra
    )


def _output(account: Account, execution_arn: str) -> dict[str, Any]:
    assert wait_for(account.sfn, execution_arn).status == "SUCCEEDED"
    return json.loads(account.describe(execution_arn)["output"])


def test_create_and_update_with_publish_answer_the_version_of_the_revision(account: Account):
    """AWS's recording (test_sfn_api_versioning.snapshot.json, test_create_with_publish,
    test_create_with_version_description_no_publish, test_empty_revision_with_publish_and_publish_on_creation,
    test_empty_revision_with_publish_and_no_publish_on_creation, test_update_state_machine):
    `publish` answers `stateMachineVersionArn` `<machine ARN>:1`; `versionDescription` without it is
    ValidationException "Version description can only be set when publish is true"; an update that
    changes nothing publishes no new version and answers no revisionId; one that changes the
    definition answers its revisionId and version 2."""
    sfn = account.sfn
    with pytest.raises(ClientError) as refused:
        _create(account, "described-only", versionDescription="HelloWorld!")
    assert _error(refused) == ("ValidationException", "Version description can only be set when publish is true")

    created = _create(account, "published", publish=True)
    arn = created["stateMachineArn"]
    assert created["stateMachineVersionArn"] == f"{arn}:1"
    for _ in range(2):
        unchanged = _update(account, arn, "v1", publish=True)
        assert unchanged["stateMachineVersionArn"] == f"{arn}:1" and "revisionId" not in unchanged

    changed = _update(account, arn, "v2", publish=True)
    assert changed["stateMachineVersionArn"] == f"{arn}:2" and changed["revisionId"]
    assert _update(account, arn, "v2", publish=True)["stateMachineVersionArn"] == f"{arn}:2"
    never_published = _create(account, "unpublished")["stateMachineArn"]
    assert _update(account, never_published, "v1", publish=True)["stateMachineVersionArn"] == f"{never_published}:1"
    assert len(sfn.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"]) == 2


def test_publish_state_machine_version_is_idempotent_and_checks_the_revision(account: Account):
    """AWS's recording (test_sfn_api_versioning.snapshot.json, test_idempotent_publish,
    test_publish_state_machine_version, test_publish_state_machine_version_no_such_machine,
    test_publish_state_machine_version_invalid_arn): publishing twice answers version 1 twice
    (one version listed); with the revisionId of an older revision, ConflictException "Failed to
    publish the State Machine version for revision <old>. The current State Machine revision is
    <current>."; the page: INITIAL is the revisionId of a machine never updated."""
    sfn = account.sfn
    arn = _create(account, "publish-twice")["stateMachineArn"]
    first = sfn.publish_state_machine_version(stateMachineArn=arn, revisionId="INITIAL")
    again = sfn.publish_state_machine_version(stateMachineArn=arn)
    assert first["stateMachineVersionArn"] == again["stateMachineVersionArn"] == f"{arn}:1"
    assert first["creationDate"] == again["creationDate"]
    assert [
        v["stateMachineVersionArn"]
        for v in sfn.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"]
    ] == [f"{arn}:1"]

    old = _update(account, arn, "r2")["revisionId"]
    second = sfn.publish_state_machine_version(stateMachineArn=arn, revisionId=old, description="PublishedV2")
    assert second["stateMachineVersionArn"] == f"{arn}:2"
    latest = _update(account, arn, "r3")["revisionId"]
    with pytest.raises(ClientError) as refused:
        sfn.publish_state_machine_version(stateMachineArn=arn, revisionId=old)
    assert _error(refused) == (
        "ConflictException",
        f"Failed to publish the State Machine version for revision {old}. The current State Machine revision is {latest}.",
    )

    missing = arn.replace("publish-twice", "no-such-machine")
    with pytest.raises(ClientError) as refused:
        sfn.publish_state_machine_version(stateMachineArn=missing)
    assert _error(refused) == ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{missing}'")
    with pytest.raises(ClientError) as refused:
        sfn.publish_state_machine_version(stateMachineArn="invalid_arn")
    assert _error(refused) == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_arn'")


def test_a_description_over_256_characters_is_refused(account: Account):
    """PublishStateMachineVersion and CreateStateMachineAlias: `description` "Length Constraints:
    Maximum length of 256", a sensitive field (AWS's message does not quote its value)."""
    sfn = account.sfn
    created = _create(account, "described", publish=True)
    message = (
        "1 validation error detected: Value at 'description' failed to satisfy constraint: "
        "Member must have length less than or equal to 256"
    )
    for call in (
        lambda: sfn.publish_state_machine_version(stateMachineArn=created["stateMachineArn"], description="d" * 257),
        lambda: _alias(account, "live", (created["stateMachineVersionArn"], 100), description="d" * 257),
    ):
        with pytest.raises(ClientError) as refused:
            call()
        assert _error(refused) == ("ValidationException", message)
    assert _alias(account, "live", (created["stateMachineVersionArn"], 100), description="d" * 256)


def test_version_numbers_are_not_reused_after_a_delete(account: Account):
    """The developer guide: "Version numbers aren't reused for a given state machine". AWS's
    recording (test_sfn_api_versioning.snapshot.json, test_version_ids_between_deletions): version 2
    deleted, the next publish is version 3."""
    sfn = account.sfn
    arn = _create(account, "renumbered", publish=True)["stateMachineArn"]
    _update(account, arn, "r2", publish=True)
    sfn.delete_state_machine_version(stateMachineVersionArn=f"{arn}:2")

    assert sfn.publish_state_machine_version(stateMachineArn=arn)["stateMachineVersionArn"] == f"{arn}:3"


def test_list_state_machine_versions_newest_first_page_by_page(account: Account):
    """AWS's recording (test_sfn_api_versioning.snapshot.json, test_list_state_machine_versions_pagination,
    test_list_delete_version): 13 versions, maxResults 10 lists 13 down to 4 with a nextToken, the
    token's page 3, 2, 1 without one; maxResults 0 is all 13; maxResults 1001 is ValidationException
    "... Member must have value less than or equal to 1000"; a deleted version is no longer listed."""
    sfn = account.sfn
    arn = _create(account, "thirteen")["stateMachineArn"]
    for revision in range(1, 14):
        assert _update(account, arn, f"R{revision}", publish=True)["stateMachineVersionArn"] == f"{arn}:{revision}"

    first = sfn.list_state_machine_versions(stateMachineArn=arn, maxResults=10)
    second = sfn.list_state_machine_versions(stateMachineArn=arn, maxResults=3, nextToken=first["nextToken"])
    numbers = [int(v["stateMachineVersionArn"].rsplit(":", 1)[1]) for v in first["stateMachineVersions"]]
    assert numbers == list(range(13, 3, -1))
    assert [v["stateMachineVersionArn"] for v in second["stateMachineVersions"]] == [f"{arn}:{n}" for n in (3, 2, 1)]
    assert "nextToken" not in second
    everything = sfn.list_state_machine_versions(stateMachineArn=arn, maxResults=0)
    assert len(everything["stateMachineVersions"]) == 13 and "nextToken" not in everything
    with pytest.raises(ClientError) as refused:
        sfn.list_state_machine_versions(stateMachineArn=arn, maxResults=1001)
    assert _error(refused)[1].endswith("Member must have value less than or equal to 1000")

    for number in range(1, 14):
        sfn.delete_state_machine_version(stateMachineVersionArn=f"{arn}:{number}")
    assert sfn.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"] == []


def test_describe_state_machine_of_a_version_answers_its_snapshot(account: Account):
    """AWS's recording (test_sfn_api_versioning.snapshot.json, test_create_publish_describe_with_version_description,
    test_publish_state_machine_version): DescribeStateMachine of `<arn>:1` answers the version's ARN,
    its description and the definition it was published with (the machine's own has no
    description); a version published from an updated revision carries that revisionId."""
    sfn = account.sfn
    arn = _create(account, "snapshot", publish=True, versionDescription="HelloWorld!")["stateMachineArn"]
    revision = _update(account, arn, "r2")["revisionId"]
    sfn.publish_state_machine_version(stateMachineArn=arn, description="PublishedV2Description")
    _update(account, arn, "r3")

    first = sfn.describe_state_machine(stateMachineArn=f"{arn}:1")
    second = sfn.describe_state_machine(stateMachineArn=f"{arn}:2")
    machine = sfn.describe_state_machine(stateMachineArn=arn)
    assert (first["stateMachineArn"], first["description"], json.loads(first["definition"])["Comment"]) == (
        f"{arn}:1",
        "HelloWorld!",
        "v1",
    )
    assert "revisionId" not in first
    assert (second["description"], second["revisionId"], json.loads(second["definition"])["Comment"]) == (
        "PublishedV2Description",
        revision,
        "r2",
    )
    assert "description" not in machine and json.loads(machine["definition"])["Comment"] == "r3"
    assert first["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}


def test_update_state_machine_and_tag_resource_refuse_a_version_arn(account: Account):
    """AWS's recordings (test_sfn_api_versioning.snapshot.json, test_update_state_machine;
    test_sfn_api_tagging.snapshot.json, test_tag_state_machine_version): UpdateStateMachine of a
    version ARN, with or without publish, is StateMachineDoesNotExist "State Machine Does Not Exist:
    '<version ARN>'"; TagResource of one is ResourceNotFound "Resource not found: '<version ARN>'"."""
    sfn = account.sfn
    version = _create(account, "immutable", publish=True)["stateMachineVersionArn"]
    for publish in ({}, {"publish": True}):
        with pytest.raises(ClientError) as refused:
            _update(account, version, "r3", **publish)
        assert _error(refused) == ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{version}'")
    with pytest.raises(ClientError) as refused:
        sfn.tag_resource(resourceArn=version, tags=[{"key": "key1", "value": "value1"}])
    assert _error(refused) == ("ResourceNotFound", f"Resource not found: '{version}'")
    assert json.loads(sfn.describe_state_machine(stateMachineArn=version)["definition"])["Comment"] == "v1"


def test_delete_state_machine_version_refused_while_an_alias_routes_to_it(account: Account):
    """AWS's recording (test_sfn_api_aliasing.snapshot.json, test_delete_version_with_alias;
    test_sfn_api_versioning.snapshot.json, test_list_delete_version): ConflictException "Version to be
    deleted must not be referenced by an alias. Current list of aliases referencing this version:
    [<name>]"; once the alias routes elsewhere the delete succeeds, and deleting again succeeds too."""
    sfn = account.sfn
    created = _create(account, "routed", publish=True)
    arn, first = created["stateMachineArn"], created["stateMachineVersionArn"]
    alias = _alias(account, "live", (first, 100))["stateMachineAliasArn"]
    _alias(account, "other", (first, 100))
    with pytest.raises(ClientError) as refused:
        sfn.delete_state_machine_version(stateMachineVersionArn=first)
    assert _error(refused) == (
        "ConflictException",
        "Version to be deleted must not be referenced by an alias. "
        "Current list of aliases referencing this version: [live, other]",
    )

    second = _update(account, arn, "r2", publish=True)["stateMachineVersionArn"]
    sfn.update_state_machine_alias(
        stateMachineAliasArn=alias, routingConfiguration=[{"stateMachineVersionArn": second, "weight": 100}]
    )
    sfn.delete_state_machine_alias(stateMachineAliasArn=f"{arn}:other")
    sfn.delete_state_machine_version(stateMachineVersionArn=first)
    sfn.delete_state_machine_version(stateMachineVersionArn=first)
    with pytest.raises(ClientError) as refused:
        sfn.describe_state_machine(stateMachineArn=first)
    assert _error(refused) == ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{first}'")


def test_publishing_past_the_version_quota_is_refused(account: Account, monkeypatch: pytest.MonkeyPatch):
    """PublishStateMachineVersion: "You can publish up to 1000 versions for each state machine"; past
    it, ServiceQuotaExceededException (the quota lowered to 3 here, so that the test publishes 4)."""
    from onceflow.engine.stepfunctions.api import versions

    monkeypatch.setattr(versions, "MAX_VERSIONS", 3)
    arn = _create(account, "many", publish=True)["stateMachineArn"]
    for revision in ("r2", "r3"):
        _update(account, arn, revision, publish=True)
    with pytest.raises(ClientError) as refused:
        _update(account, arn, "r4", publish=True)
    assert _error(refused)[0] == "ServiceQuotaExceededException"
    account.sfn.delete_state_machine_version(stateMachineVersionArn=f"{arn}:1")
    assert account.sfn.publish_state_machine_version(stateMachineArn=arn)["stateMachineVersionArn"] == f"{arn}:4"


def test_start_execution_with_a_version_arn_runs_that_version(account: Account):
    """The developer guide (execution-alias-version-associate): a version ARN starts that version;
    an unqualified ARN starts the latest revision and is associated with no version. AWS's
    recordings (test_sfn_api_versioning.snapshot.json, test_start_version_execution;
    test_sfn_api.snapshot.json, test_list_executions_versions_pagination): the execution's ARN is
    the machine's, DescribeExecution and ListExecutions answer `stateMachineArn` (the machine's) and
    `stateMachineVersionArn`; ListExecutions of the version ARN lists that version's executions only."""
    sfn = account.sfn
    created = _create(account, "versioned", publish=True)
    arn, version = created["stateMachineArn"], created["stateMachineVersionArn"]
    _update(account, arn, "latest")

    of_version = sfn.start_execution(stateMachineArn=version)["executionArn"]
    of_machine = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    assert of_version.startswith(arn.replace(":stateMachine:", ":execution:") + ":")
    assert _output(account, of_version) == {"ran": "v1", "id": version}
    assert _output(account, of_machine) == {"ran": "latest", "id": arn}
    described = account.describe(of_version)
    assert (described["stateMachineArn"], described["stateMachineVersionArn"]) == (arn, version)
    assert "stateMachineAliasArn" not in described
    assert "stateMachineVersionArn" not in account.describe(of_machine)

    listed = {e["executionArn"]: e for e in sfn.list_executions(stateMachineArn=arn)["executions"]}
    assert set(listed) == {of_version, of_machine}
    assert listed[of_version]["stateMachineVersionArn"] == version and listed[of_version]["stateMachineArn"] == arn
    assert "stateMachineVersionArn" not in listed[of_machine]
    [only] = sfn.list_executions(stateMachineArn=version)["executions"]
    assert (only["executionArn"], only["stateMachineArn"], only["status"]) == (of_version, arn, "SUCCEEDED")


def test_start_execution_through_an_alias_runs_its_routed_version(account: Account):
    """StartExecution: an alias ARN starts the version the alias routes to, chosen by the weights.
    AWS's recording (test_sfn_api_aliasing.snapshot.json, test_base_lifecycle_create_invoke_describe_list):
    DescribeExecution answers `stateMachineAliasArn` and `stateMachineVersionArn`, ListExecutions of
    the machine lists both ARNs; the ExecutionListItem page: an execution listed by its alias ARN.
    A weight of 0 gets no executions (the alias routes 0/100 here, deterministically)."""
    sfn = account.sfn
    created = _create(account, "aliased", publish=True)
    arn, first = created["stateMachineArn"], created["stateMachineVersionArn"]
    second = _update(account, arn, "v2", publish=True)["stateMachineVersionArn"]
    alias = _alias(account, "canary", (first, 0), (second, 100))["stateMachineAliasArn"]

    through_alias = [sfn.start_execution(stateMachineArn=alias, input="{}")["executionArn"] for _ in range(3)]
    of_version = sfn.start_execution(stateMachineArn=second)["executionArn"]
    for execution in through_alias:
        assert _output(account, execution) == {"ran": "v2", "id": second}
        described = account.describe(execution)
        assert (
            described["stateMachineArn"],
            described["stateMachineVersionArn"],
            described["stateMachineAliasArn"],
        ) == (
            arn,
            second,
            alias,
        )
    assert "stateMachineAliasArn" not in account.describe(of_version)

    by_alias = sfn.list_executions(stateMachineArn=alias)["executions"]
    assert sorted(e["executionArn"] for e in by_alias) == sorted(through_alias)
    assert all(e["stateMachineAliasArn"] == alias and e["stateMachineVersionArn"] == second for e in by_alias)
    by_version = {e["executionArn"] for e in sfn.list_executions(stateMachineArn=second)["executions"]}
    assert by_version == {*through_alias, of_version}
    assert sfn.list_executions(stateMachineArn=first)["executions"] == []


def test_execution_started_event_names_the_version_and_the_alias(account: Account):
    """ExecutionStartedEventDetails: `stateMachineVersionArn` "identifies a state machine version used
    for starting the state machine execution", `stateMachineAliasArn` the alias; an execution
    started with the machine's own ARN has neither."""
    sfn = account.sfn
    created = _create(account, "started", publish=True)
    arn, version = created["stateMachineArn"], created["stateMachineVersionArn"]
    alias = _alias(account, "live", (version, 100))["stateMachineAliasArn"]

    def started(state_machine_arn: str) -> dict[str, Any]:
        result = wait_for(sfn, sfn.start_execution(stateMachineArn=state_machine_arn)["executionArn"])
        [event] = [e for e in result.history if e["type"] == "ExecutionStarted"]
        return event["executionStartedEventDetails"]

    through_alias, of_version, of_machine = started(alias), started(version), started(arn)
    assert (through_alias["stateMachineVersionArn"], through_alias["stateMachineAliasArn"]) == (version, alias)
    assert of_version["stateMachineVersionArn"] == version and "stateMachineAliasArn" not in of_version
    assert not {"stateMachineVersionArn", "stateMachineAliasArn"} & set(of_machine)
    assert through_alias["roleArn"] == of_machine["roleArn"] == ROLE_ARN


def test_describe_state_machine_for_execution_of_a_version(account: Account):
    """AWS's recording (test_sfn_api_versioning.snapshot.json, test_describe_state_machine_for_execution_of_version,
    test_describe_state_machine_for_execution_of_version_with_revision): the machine's ARN (not the
    version's), the version's definition and revisionId (none for a version of the first revision),
    its own fields only."""
    sfn = account.sfn
    created = _create(account, "for-execution", publish=True)
    arn, first = created["stateMachineArn"], created["stateMachineVersionArn"]
    updated = _update(account, arn, "v2", publish=True)
    _update(account, arn, "v3")

    for version, comment, revision in (
        (first, "v1", None),
        (updated["stateMachineVersionArn"], "v2", updated["revisionId"]),
    ):
        execution = sfn.start_execution(stateMachineArn=version)["executionArn"]
        wait_for(sfn, execution)
        described = sfn.describe_state_machine_for_execution(executionArn=execution)
        assert described["stateMachineArn"] == arn
        assert json.loads(described["definition"])["Comment"] == comment
        assert described.get("revisionId") == revision
        assert not {"creationDate", "status", "type", "description"} & set(described)


def test_alias_routing_configuration_and_name_are_checked_in_aws_words(account: Account):
    """AWS's recording (test_sfn_api_aliasing.snapshot.json, test_error_create_alias_invalid_router_configs,
    test_error_create_alias_with_state_machine_arn, test_error_create_alias_invalid_name): each
    ValidationException as AWS words it (moto: "Routing configuration must contain 1 or 2 state machine
    versions.", "The sum of the weights ...", and no check of names or version ARNs)."""
    created = _create(account, "checked", publish=True)
    arn, v1 = created["stateMachineArn"], created["stateMachineVersionArn"]
    v2 = _update(account, arn, "v2", publish=True)["stateMachineVersionArn"]
    v3 = _update(account, arn, "v3", publish=True)["stateMachineVersionArn"]
    cases = [
        (
            [(v1, 50), (v2, 30), (v3, 20)],
            "1 validation error detected: Value '[RoutingConfigurationListItem(stateMachineVersionArn="
            f"{v1}, weight=50), RoutingConfigurationListItem(stateMachineVersionArn={v2}, weight=30), "
            f"RoutingConfigurationListItem(stateMachineVersionArn={v3}, weight=20)]' at 'routingConfiguration' "
            "failed to satisfy constraint: Member must have length less than or equal to 2",
        ),
        (
            [(v1, 50), (v1, 50)],
            f"Routing configuration must contain distinct state machine version ARNs. Received: [{v1}, {v1}]",
        ),
        ([(arn, 100)], f"Routing configuration must contain state machine version ARNs. Received: [{arn}]"),
        (
            [(arn, 70), (v2, 30)],
            f"Routing configuration must contain state machine version ARNs. Received: [{arn}, {v2}]",
        ),
        (
            [(v1, 101)],
            "1 validation error detected: Value '101' at 'routingConfiguration.1.member.weight' failed to "
            "satisfy constraint: Member must have value less than or equal to 100",
        ),
        ([(v1, 70), (v2, 29)], "Sum of routing configuration weights must equal 100. Received: [70, 29]"),
        ([(v1, 70), (v2, 31)], "Sum of routing configuration weights must equal 100. Received: [70, 31]"),
    ]
    for routes, message in cases:
        with pytest.raises(ClientError) as refused:
            _alias(account, "routes", *routes)
        assert _error(refused) == ("ValidationException", message), routes

    pattern = r"^(?=.*[a-zA-Z_\-\.])[a-zA-Z0-9_\-\.]+$"
    for name in ("123", "INVALID ALIAS", "!INVALID", "ALIAS@"):
        with pytest.raises(ClientError) as refused:
            _alias(account, name, (v1, 100))
        assert _error(refused) == (
            "ValidationException",
            f"1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: "
            f"Member must satisfy regular expression pattern: {pattern}",
        )
    with pytest.raises(ClientError) as refused:
        _alias(account, "A" * 81, (v1, 100))
    assert _error(refused)[1].endswith(
        "at 'name' failed to satisfy constraint: Member must have length less than or equal to 80"
    )
    assert account.sfn.list_state_machine_aliases(stateMachineArn=arn)["stateMachineAliases"] == []


def test_create_state_machine_alias_is_idempotent_or_conflicts(account: Account):
    """CreateStateMachineAlias: idempotent on the name, description and routing configuration. AWS's
    recording (test_sfn_api_aliasing.snapshot.json, test_idempotent_create_alias,
    test_error_create_alias_not_idempotent): the same request twice answers the same alias; another
    description or routing under the name is ConflictException "Failed to create alias because an
    alias with the same name and a different routing configuration already exists."."""
    created = _create(account, "idempotent-alias", publish=True)
    arn, v1 = created["stateMachineArn"], created["stateMachineVersionArn"]
    v2 = _update(account, arn, "v2", publish=True)["stateMachineVersionArn"]
    first = _alias(account, "live", (v1, 100), description="the description")
    again = _alias(account, "live", (v1, 100), description="the description")
    assert (first["stateMachineAliasArn"], first["creationDate"]) == (
        again["stateMachineAliasArn"],
        again["creationDate"],
    )
    assert first["stateMachineAliasArn"] == f"{arn}:live"

    for routes, description in ((((v1, 100),), "another description"), (((v1, 50), (v2, 50)), "the description")):
        with pytest.raises(ClientError) as refused:
            _alias(account, "live", *routes, description=description)
        assert _error(refused) == (
            "ConflictException",
            "Failed to create alias because an alias with the same name and a different routing configuration "
            "already exists.",
        )
    _alias(account, "live-second", (v1, 100), description="the description")
    listed = account.sfn.list_state_machine_aliases(stateMachineArn=arn)["stateMachineAliases"]
    assert [a["stateMachineAliasArn"] for a in listed] == [f"{arn}:live", f"{arn}:live-second"]


def test_alias_lifecycle_describe_update_list_delete(account: Account):
    """AWS's recording (test_sfn_api_aliasing.snapshot.json, test_base_lifecycle_create_delete_list,
    test_base_lifecycle_create_update_describe, test_list_state_machine_aliases_pagination_max_results[1],
    test_list_state_machine_aliases_pagination_invalid_next_token, test_delete_no_such_alias_arn,
    test_update_no_such_alias_arn): aliases listed in creation order, one page of maxResults 1 and
    its token's page; an unknown token is InvalidToken "Invalid Token: 'Invalid token'";
    DescribeStateMachineAlias answers name, description, routing and dates; UpdateStateMachineAlias
    answers updateDate; an alias deleted twice is fine, updated once deleted ResourceNotFound
    "Request references a resource that does not exist."."""
    sfn = account.sfn
    created = _create(account, "lifecycle", publish=True)
    arn, v1 = created["stateMachineArn"], created["stateMachineVersionArn"]
    v2 = _update(account, arn, "v2", publish=True)["stateMachineVersionArn"]
    assert sfn.list_state_machine_aliases(stateMachineArn=arn)["stateMachineAliases"] == []
    aliases = [
        _alias(account, f"AliasName-{n}", (v1, 100), description=f"Description {n}")["stateMachineAliasArn"]
        for n in (1, 2, 3)
    ]

    page = sfn.list_state_machine_aliases(stateMachineArn=arn, maxResults=1)
    rest = sfn.list_state_machine_aliases(stateMachineArn=arn, nextToken=page["nextToken"])
    assert [a["stateMachineAliasArn"] for a in page["stateMachineAliases"] + rest["stateMachineAliases"]] == aliases
    assert "nextToken" not in rest
    with pytest.raises(ClientError) as refused:
        sfn.list_state_machine_aliases(stateMachineArn=arn, nextToken="InvalidToken")
    assert _error(refused) == ("InvalidToken", "Invalid Token: 'Invalid token'")

    updated = sfn.update_state_machine_alias(stateMachineAliasArn=aliases[0], description="new description")
    sfn.update_state_machine_alias(
        stateMachineAliasArn=aliases[0],
        routingConfiguration=[
            {"stateMachineVersionArn": v1, "weight": 50},
            {"stateMachineVersionArn": v2, "weight": 50},
        ],
    )
    described = sfn.describe_state_machine_alias(stateMachineAliasArn=aliases[0])
    assert (described["name"], described["description"], described["stateMachineAliasArn"]) == (
        "AliasName-1",
        "new description",
        aliases[0],
    )
    assert described["routingConfiguration"] == [
        {"stateMachineVersionArn": v1, "weight": 50},
        {"stateMachineVersionArn": v2, "weight": 50},
    ]
    assert described["updateDate"] >= updated["updateDate"] >= described["creationDate"]

    for alias in aliases:
        sfn.delete_state_machine_alias(stateMachineAliasArn=alias)
    sfn.delete_state_machine_alias(stateMachineAliasArn=aliases[0])
    assert sfn.list_state_machine_aliases(stateMachineArn=arn)["stateMachineAliases"] == []
    for call in (
        lambda: sfn.update_state_machine_alias(stateMachineAliasArn=aliases[0], description="gone"),
        lambda: sfn.describe_state_machine_alias(stateMachineAliasArn=aliases[0]),
    ):
        with pytest.raises(ClientError) as refused:
            call()
        assert _error(refused) == ("ResourceNotFound", "Request references a resource that does not exist.")


def test_creating_past_the_alias_quota_is_refused(account: Account):
    """CreateStateMachineAlias: "You can create up to 100 aliases for each state machine"; the 101st is
    ServiceQuotaExceededException."""
    version = _create(account, "alias-quota", publish=True)["stateMachineVersionArn"]
    for number in range(100):
        _alias(account, f"alias-{number}", (version, 100))
    with pytest.raises(ClientError) as refused:
        _alias(account, "one-too-many", (version, 100))
    assert _error(refused)[0] == "ServiceQuotaExceededException"
    _alias(account, "alias-0", (version, 100))  # the same request again is still idempotent


def test_delete_state_machine_deletes_its_versions_and_aliases(account: Account):
    """DeleteStateMachine: "deletes the state machine and all its versions and aliases". AWS's
    recording (test_sfn_api_aliasing.snapshot.json, test_delete_revision_with_alias): a machine with
    an alias deletes (200); its version and alias are gone after."""
    sfn = account.sfn
    created = _create(account, "deleted", publish=True)
    arn, version = created["stateMachineArn"], created["stateMachineVersionArn"]
    alias = _alias(account, "live", (version, 100))["stateMachineAliasArn"]

    sfn.delete_state_machine(stateMachineArn=arn)
    with pytest.raises(ClientError) as refused:
        sfn.describe_state_machine(stateMachineArn=version)
    assert _error(refused)[0] == "StateMachineDoesNotExist"
    with pytest.raises(ClientError) as refused:
        sfn.describe_state_machine_alias(stateMachineAliasArn=alias)
    assert _error(refused) == ("ResourceNotFound", "Request references a resource that does not exist.")
    with pytest.raises(ClientError) as refused:
        sfn.start_execution(stateMachineArn=alias)
    assert _error(refused)[0] == "StateMachineDoesNotExist"
