"""The client commands' speed-ups, each switchable for a side-by-side measure (benchmarks/trace_status.py).

- plain_values: option values typer would return unchanged are taken without pydantic (onceflow/cli_values.py).
- timestamps: response timestamps read without dateutil's tzlocal per value (onceflow/ops/timestamps.py).
- json_responses: JSON-protocol responses read by a plan compiled once per shape, not by botocore's
  walk of the shape for every value (onceflow/ops/json_responses.py).
- response_heads: a plain response head read without the email parser http.client hands it to
  (onceflow/ops/http_heads.py).
- batched_reads: `trace`'s reads sent to an embedded AWS many calls to an HTTP request, each parsed as
  botocore parses it (onceflow/ops/batched_calls.py).

`ONCEFLOW_CLIENT_SPEEDUPS_OFF=name,name` (or `all`) switches them off, as ONCEFLOW_SPEEDUPS_OFF does
the embedded engine's (onceflow/engine/speedups/).
"""

from __future__ import annotations

import os

OFF_VARIABLE = "ONCEFLOW_CLIENT_SPEEDUPS_OFF"
NAMES = ("plain_values", "timestamps", "json_responses", "response_heads", "batched_reads")


def enabled(name: str) -> bool:
    assert name in NAMES, name
    off = {word.strip() for word in os.environ.get(OFF_VARIABLE, "").split(",")}
    return not ({"all", name} & off)
