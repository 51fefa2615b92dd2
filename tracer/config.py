"""`tt.config`: library-wide switches.

`strict_gradients(True)` (or TRACER_STRICT_GRADIENTS=1 in the environment) makes a None
gradient raise UnconnectedGradientError with tape.explain's reason, instead of returning
None (unless `unconnected_gradients='zero'` asked for zeros).
"""

import os


class _Settings:
    strict_gradients = os.environ.get("TRACER_STRICT_GRADIENTS", "") not in ("", "0")


settings = _Settings()


def strict_gradients(enabled=True):
    settings.strict_gradients = bool(enabled)
