"""CloudWatch Logs: what Step Functions writes there (execution logs)."""
