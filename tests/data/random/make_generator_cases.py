"""Writes generator_cases.json: what TensorFlow's tf.random.Generator draws, for
tests/test_random_generator.py. For two seeds, each distribution and dtype TensorFlow's
Generator has (normal, truncated normal, uniform floats and integers in a range, the full
integer range) draws [3, 7] from a generator at the state the draws before it left, and
the state after each draw; and 2,000 float32 normals of one seed, whose Box-Muller pairs
meet the C library's rounding of log, sin and cos.

Made with TensorFlow 2.21 on Linux x86-64 (glibc 2.36): `python make_generator_cases.py` in
a Python with TensorFlow; it rewrites the file beside it."""

import json
import os
import sys

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_generator_cases.py runs where TensorFlow is installed")

SETTINGS = [
    ("normal", "float32", {}),
    ("normal", "float64", {}),
    ("uniform", "float32", {}),
    ("uniform", "float64", {"minval": -1.5, "maxval": 4.0}),
    ("truncated_normal", "float32", {}),
    ("truncated_normal", "float64", {"mean": 1.0, "stddev": 0.5}),
    ("uniform", "int32", {"minval": -3, "maxval": 100}),
    ("uniform", "int64", {"minval": 7, "maxval": 10**12}),
    ("uniform_full_int", "int64", {}),
    ("uniform_full_int", "uint64", {}),
    ("uniform_full_int", "int32", {}),
    ("uniform_full_int", "uint32", {}),
]

cases = []
for seed in (1, 12345):
    generator = tf.random.Generator.from_seed(seed)
    for method, dtype, arguments in SETTINGS:
        state = generator.state.numpy().tolist()
        values = getattr(generator, method)([3, 7], dtype=dtype, **arguments).numpy()
        cases.append(
            {
                "seed": seed,
                "state": state,
                "method": method,
                "dtype": dtype,
                "arguments": arguments,
                "values": [
                    str(v) if "64" in dtype and "int" in dtype else v
                    for v in values.reshape(-1).tolist()
                ],
                "state_after": generator.state.numpy().tolist(),
            }
        )
many = tf.random.Generator.from_seed(9).normal([2000]).numpy()
data = {"cases": cases, "normals_of_seed_9": many.tolist()}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generator_cases.json")
with open(path, "w") as f:
    json.dump(data, f)
print(f"wrote {len(cases)} cases to {path}")
