"""Visual execution traces, offline: the state machine graph with a run laid over it, as one HTML page."""

from onceflow.devtools.trace.page import collect_executions, write_trace

__all__ = ["collect_executions", "write_trace"]
