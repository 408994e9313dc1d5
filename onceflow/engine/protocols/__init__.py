"""What AWS's wire protocols mean, where moto reads a request otherwise (json_bodies.py)."""
