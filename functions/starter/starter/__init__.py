"""The starter Lambda's logic: turn one SQS record into one Step Functions execution."""
