"""CloudWatch metrics: what Step Functions publishes there (AWS/States)."""
