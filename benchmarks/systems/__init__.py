"""One module per system; each has BUILDERS = {system name: {workload: builder}}.

A builder takes the workload's data (benchmarks/data.py) and returns a function of no
arguments that computes the result; `to_numpy` in the worker turns that result into numpy
arrays to check against the reference. Importing a peer that is not installed raises
ImportError, and the worker reports the system as skipped.
"""

MODULES = {
    "numpy": "systems.reference",
    "tracer-eager": "systems.tracer_systems",
    "tracer-compiled": "systems.tracer_systems",
    "tracer-profiled": "systems.tracer_systems",
    "torch-eager": "systems.torch_systems",
    "torch-compile": "systems.torch_systems",
    "jax-jit": "systems.jax_systems",
    "tf-eager": "systems.tf_systems",
    "tf-function": "systems.tf_systems",
}
PEERS = ("torch-eager", "torch-compile", "jax-jit", "tf-eager", "tf-function")
