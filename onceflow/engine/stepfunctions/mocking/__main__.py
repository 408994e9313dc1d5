"""Validate a mock configuration file:
`python -m onceflow.engine.stepfunctions.mocking CONFIG [--definition ASL] [--state-machine NAME]`.

Exit status 0 when it is valid, 1 with one line per problem when it is not.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from onceflow.engine.stepfunctions.mocking.errors import MockConfigError
from onceflow.engine.stepfunctions.mocking.loader import load_mock_config


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m onceflow.engine.stepfunctions.mocking", description=__doc__.splitlines()[0]
    )
    parser.add_argument("config", help="the mock configuration file (MockConfigFile.json)")
    parser.add_argument("--definition", help="the state machine's ASL file: state names are checked against it")
    parser.add_argument("--state-machine", help="check state names only for this StateMachines entry")
    args = parser.parse_args(argv)
    definition = None
    if args.definition:
        with open(args.definition, encoding="utf-8") as handle:
            definition = handle.read()
    try:
        config = load_mock_config(args.config, definition, args.state_machine)
    except MockConfigError as error:
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return 1
    cases = sum(len(c) for c in config.test_cases.values())
    print(f"{args.config}: valid; {cases} test cases for {', '.join(config.state_machines)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
