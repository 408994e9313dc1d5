"""The query languages: JSONata (moto ships no evaluator) evaluated as AWS does. JSONPath is moto's own
(its parser cache is a speed-up: speedups/jsonpath_cache.py)."""
