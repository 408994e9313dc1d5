"""Step Functions Local–compatible mocked service integrations (MockConfigFile.json).

- `load_mock_config(path, definition)` reads and validates a mock configuration file;
  `validate_mock_config_file(...)` returns its problems for a command line or CI.
- `mocked_integrations()` switches moto's Step Functions on to honour `stateMachineArn#TestCase`, reading
  the file that SFN_MOCK_CONFIG names, as AWS Step Functions Local does (EmbeddedAws applies the same
  patches, moto_engine.py's, when it starts).

A `StateMachines` key is the name the state machine was created with (Step Functions Local matches names
exactly, with no aliases). The local stack names it `<stack name>-<logical id>`, so the repo's file uses
`onceflow-local-PipelineStateMachine` (stack `onceflow-local`, resource `PipelineStateMachine`). To run the
same test cases on AWS Step Functions Local or LocalStack, give the container SFN_MOCK_CONFIG pointing at
the file and create the state machine under that name.
"""

from onceflow.engine.stepfunctions.mocking.errors import MockConfigError, MockedResponsesExhausted, Problem
from onceflow.engine.stepfunctions.mocking.loader import (
    load_mock_config,
    load_test_case,
    parse_mock_config,
    validate_mock_config_file,
)
from onceflow.engine.stepfunctions.mocking.model import (
    AttemptRange,
    MockConfig,
    MockedResponse,
    MockTestCase,
    Return,
    Throw,
)
from onceflow.engine.stepfunctions.mocking.moto_engine import (
    SFN_MOCK_CONFIG,
    check_moto_shape,
    is_enabled,
    mocked_integrations,
)

__all__ = [
    "SFN_MOCK_CONFIG",
    "AttemptRange",
    "MockConfig",
    "MockConfigError",
    "MockTestCase",
    "MockedResponse",
    "MockedResponsesExhausted",
    "Problem",
    "Return",
    "Throw",
    "check_moto_shape",
    "is_enabled",
    "load_mock_config",
    "load_test_case",
    "mocked_integrations",
    "parse_mock_config",
    "validate_mock_config_file",
]
