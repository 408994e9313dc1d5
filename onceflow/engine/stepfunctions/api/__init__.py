"""The Step Functions API: the actions moto lacks (RedriveExecution, StartSyncExecution, versions and
aliases, ValidateStateMachineDefinition) and the ones it answers otherwise than AWS."""
