"""What the engine keeps, bounds and shares across services: memory budgets for long runs, the baseline
between tests, throughput quotas, a once-per-key cache."""
