"""Running a workflow: the context object, the history events an execution records, ASL literals."""
