"""Step Functions: moto's API and interpreter made to answer and run as AWS does (one folder per part)."""
