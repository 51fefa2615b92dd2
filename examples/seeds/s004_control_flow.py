"""Seed 004_b8d273961b668fdb.txt (older eager-mode tutorial), "Recording control flow": Python
`for`/`if` around tape-recorded ops.

The seed has a typo: `return output` is indented inside the `for` loop, so f would return
1.0 after the first iteration and both gradients would be None, contradicting the asserted
values 12.0 and 4.0. This is the intended version, with `return` after the loop. (The
stray `</pre>` after the last assert in the seed is HTML debris and is dropped.)
"""

import tracer as tf


def f(x, y):
    output = 1.0
    for i in range(y):
        if i > 1 and i < 5:
            output = tf.multiply(output, x)
    return output


def grad(x, y):
    with tf.GradientTape() as t:
        t.watch(x)
        out = f(x, y)
    return t.gradient(out, x)


x = tf.convert_to_tensor(2.0)

assert grad(x, 6).numpy() == 12.0
assert grad(x, 4).numpy() == 4.0
