"""Patches of moto's Step Functions and DynamoDB engines, each checked against the pinned moto."""
