"""Onceflow's local tooling: the embedded AWS, the local stack built from template.yaml,
the emulated SQS event source, and the `onceflow` command line."""
