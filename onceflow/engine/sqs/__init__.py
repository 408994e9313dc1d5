"""SQS where moto differs from AWS: FIFO queues, long polling, receipt handles, visibility changes."""
