"""CloudFormation where moto differs from AWS: the state machines it creates."""
