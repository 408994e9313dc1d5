"""Code shared by the Lambda functions (a layer that `sam build` packages) and the local tooling.

Only the standard library: each function stays self-contained apart from this layer.
"""
