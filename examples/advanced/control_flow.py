"""TensorFlow's documented control flow, with only the import changed: tf.while_loop and
tf.cond (eager and in tf.function), Python control flow that tf.function converts, and
tf.TensorArray collecting a loop's outputs."""

import collections

import numpy as np

import tracer as tf

# tf.while_loop
i = tf.constant(0)
c = lambda i: tf.less(i, 10)  # noqa: E731
b = lambda i: (tf.add(i, 1),)  # noqa: E731
r = tf.while_loop(c, b, [i])
print(r)
assert r[0].numpy() == 10

Pair = collections.namedtuple("Pair", "j, k")
ijk_0 = (tf.constant(0), Pair(tf.constant(1), tf.constant(2)))
c = lambda i, p: i < 10  # noqa: E731
b = lambda i, p: (i + 1, Pair((p.j + p.k), (p.j - p.k)))  # noqa: E731
ijk_final = tf.while_loop(c, b, ijk_0)
print(ijk_final)
assert ijk_final[1].j.numpy() == 32 and ijk_final[1].k.numpy() == 64

# tf.cond
x = tf.constant(2)
y = tf.constant(5)


def f1():
    return tf.multiply(x, 17)


def f2():
    return tf.add(y, 23)


r = tf.cond(tf.less(x, y), f1, f2)
print(r)
assert r.numpy() == 34


# Python control flow on tensors, converted by tf.function
@tf.function
def sum_even(items):
    s = 0
    for c in items:
        if c % 2 > 0:
            continue
        s += c
    return s


print(sum_even(tf.constant([10, 12, 15, 20])))
assert sum_even(tf.constant([10, 12, 15, 20])).numpy() == 42


@tf.function
def collatz(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps = steps + 1
    return steps


print(collatz(tf.constant(27)))
assert collatz(tf.constant(27)).numpy() == 111
print(tf.autograph.to_code(collatz.python_function))


# tf.TensorArray collecting a loop's outputs
@tf.function
def fibonacci(n):
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    ta = ta.unstack([0.0, 1.0])

    for i in range(2, n):
        ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))

    return ta.stack()


print(fibonacci(7))
np.testing.assert_array_equal(fibonacci(7).numpy(), [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0])
