"""Operations tools that also run against AWS: redrive, reading executions, tables and queues.
Only boto3: importable without moto or the SAM translator."""
