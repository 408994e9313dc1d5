"""EventBridge: what Step Functions sends there (execution status change events), delivered to the rules' targets."""
