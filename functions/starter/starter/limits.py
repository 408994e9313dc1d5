"""The AWS limits a message must fit to ever succeed, checked before anything is started.

- Step Functions: an execution's input, and every state's input and output, at most 256 KiB of
  UTF-8 text (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html, "Maximum
  input or output size for a task, state, or execution"); a state over it fails with
  States.DataLimitExceeded, which no Catch handles
  (https://docs.aws.amazon.com/step-functions/latest/dg/concepts-error-handling.html).
- DynamoDB: a partition key of at most 2048 bytes; numbers of at most 38 significant digits,
  positive magnitudes from 1E-130 to 9.9999999999999999999999999999999999999E+125
  (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.NamingRulesDataTypes.html).
"""

from __future__ import annotations

from decimal import Decimal

MAX_STATE_BYTES = 262_144

# The workflow carries the execution input through every state (the payload and the original
# body: two copies) and adds only small results next to it: the cancelled transaction's error and
# cause, the earlier record read with a projection (status, payload_hash, timestamps, ARN, with
# the SDK's HTTP metadata), a retry counter, a caught error, the dead-letter send's result. None
# of them copies the payload (statemachine/pipeline.asl.json). This bounds their sum with room to
# spare; tests/starter/test_state_size.py measures the largest state on every path at the limit.
WORKFLOW_STATE_OVERHEAD_BYTES = 8_192
MAX_EXECUTION_INPUT_BYTES = MAX_STATE_BYTES - WORKFLOW_STATE_OVERHEAD_BYTES

MAX_EVENT_ID_BYTES = 2048

DYNAMODB_MAX_DIGITS = 38
DYNAMODB_MAX_MAGNITUDE = Decimal("9.9999999999999999999999999999999999999E+125")
DYNAMODB_MIN_MAGNITUDE = Decimal("1E-130")
