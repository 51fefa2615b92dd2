"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [17], "1. Replaced a variable
with a tensor": after `x = x + 1`, x is a Tensor and is no longer watched.

tracer's type names are `Variable` and `Tensor` where TensorFlow prints `ResourceVariable`
and `EagerTensor`.
"""

import tracer as tf

x = tf.Variable(2.0)

for epoch in range(2):
    with tf.GradientTape() as tape:
        y = x + 1

    print(type(x).__name__, ":", tape.gradient(y, x))
    x = x + 1  # This should be `x.assign_add(1)`
