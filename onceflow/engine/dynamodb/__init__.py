"""DynamoDB where moto differs from AWS, and Time to Live on a clock a test advances."""
