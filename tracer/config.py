"""`tt.config`: library-wide switches.

`strict_gradients(True)` (or TRACER_STRICT_GRADIENTS=1 in the environment) makes a None
gradient raise UnconnectedGradientError with tape.explain's reason, instead of returning
None (unless `unconnected_gradients='zero'` asked for zeros).

`run_functions_eagerly(True)`, as TensorFlow's: every `tt.function` runs its Python function
as it is, op by op, instead of its traced and compiled version (for debugging with print
and pdb); `functions_run_eagerly()` says whether it is on.
"""

import os


class _Settings:
    strict_gradients = os.environ.get("TRACER_STRICT_GRADIENTS", "") not in ("", "0")
    run_functions_eagerly = False


settings = _Settings()


def strict_gradients(enabled=True):
    settings.strict_gradients = bool(enabled)


def run_functions_eagerly(run_eagerly):
    settings.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    return settings.run_functions_eagerly
