"""Service integrations (a Task calling another service): parameters, results and errors as AWS maps them."""
