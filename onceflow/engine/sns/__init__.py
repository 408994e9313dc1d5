"""SNS where moto differs from AWS: FIFO topics."""
