"""IAM as AWS enforces it: every request decided by AWS's policy evaluation logic against the
identity policies of the caller's role and the resource policies of what it calls (README.md here)."""
