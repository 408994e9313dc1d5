"""The reconciler: brings every event that an execution left neither finished nor dead-lettered to
the dead-letter queue, without depending on EventBridge's best-effort status change events."""
