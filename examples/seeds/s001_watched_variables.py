"""Seed 001_a6690b526758e3cb.txt (autodiff guide notebook), cell In [13], "Controlling what the
tape watches": which sources get gradients, and GradientTape.watched_variables."""

import tracer as tf

# You can list the variables being watched by the tape using the GradientTape.watched_variables method:
x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x**2
# dy = 2x * dx
dy_dx = tape.gradient(y, x)
print(dy_dx.numpy())

# A trainable variable
x0 = tf.Variable(3.0, name="x0")
# Not trainable
x1 = tf.Variable(3.0, name="x1", trainable=False)
# Not a Variable: A variable + tensor returns a tensor.
x2 = tf.Variable(2.0, name="x2") + 1.0
# Not a variable
x3 = tf.constant(3.0, name="x3")

with tf.GradientTape() as tape:
    y = (x0**2) + (x1**2) + (x2**2)

grad = tape.gradient(y, [x0, x1, x2, x3])

for g in grad:
    print(g)
print([var.name for var in tape.watched_variables()])
