"""Secrets Manager where moto differs from AWS: secret names."""
