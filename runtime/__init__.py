"""What executes graphs: numpy kernels for every primitive and the graph interpreter.

This package never imports tracer's front end (tensors, tapes); it reads IR nodes through
their public attributes (`op`, `inputs`, `attrs`, `shape`, `dtype`) only.
"""
