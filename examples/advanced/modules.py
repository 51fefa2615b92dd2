"""Modules, checkpoints and a Keras-style model, as TensorFlow's modules guide describes them.

* tt.Module finds the variables its attributes hold: `trainable_variables` leaves out a
  variable made with trainable=False, and a variable's name gets the ":0" suffix.
* A module's own variables come first, then its submodules', and attributes are visited
  in sorted order of their names, not in the order they were set. A module with no name
  given takes its class name in snake_case.
* tt.train.Checkpoint writes the variables under their attribute paths; restoring the file
  into a freshly built model gives back the same weights and outputs.
* A tt.keras.Model subclass lists its layers' variables in the order the layers were set,
  each layer's kernel before its bias.
"""

import os
import tempfile

import numpy as np

import tracer as tt


class Affine(tt.Module):
    """slope * x + offset, where only the slope would be trained."""

    def __init__(self, slope, offset, name=None):
        super().__init__(name=name)
        self.slope = tt.Variable(slope, name="slope")
        self.offset = tt.Variable(offset, trainable=False, name="offset")

    def __call__(self, x):
        return self.slope * x + self.offset


for slope, offset, x in [(5.0, 5.0, 5.0), (-2.0, 0.5, 3.0)]:
    affine = Affine(slope, offset, name="affine")
    assert float(affine(tt.constant(x))) == slope * x + offset  # 30 for the first case
assert affine.name == "affine"
assert [v.name for v in affine.trainable_variables] == ["slope:0"]
assert [v.name for v in affine.variables] == ["offset:0", "slope:0"]  # sorted by attribute


class ReluLinear(tt.Module):
    def __init__(self, n_in, n_out, relu=True, name=None):
        super().__init__(name=name)
        # set weight first: the module still lists bias first
        self.weight = tt.Variable(tt.random.normal([n_in, n_out]), name="weight")
        self.bias = tt.Variable(tt.random.normal([n_out]), name="bias")
        self.relu = relu

    def __call__(self, x):
        z = tt.matmul(x, self.weight) + self.bias
        return tt.nn.relu(z) if self.relu else z


class TwoLayerNet(tt.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.hidden = ReluLinear(3, 4)
        self.head = ReluLinear(4, 2, relu=False)

    def __call__(self, x):
        return self.head(self.hidden(x))


net = TwoLayerNet()
probe = tt.constant([[1.0, -0.5, 2.0]])
assert net.name == "two_layer_net"
assert net.submodules == (net.head, net.hidden)  # "head" sorts before "hidden"
assert [m.name for m in net.submodules] == ["relu_linear", "relu_linear"]
assert [(v.name, v.shape) for v in net.variables] == [
    ("bias:0", (2,)),
    ("weight:0", (4, 2)),
    ("bias:0", (4,)),
    ("weight:0", (3, 4)),
]

# write a checkpoint, then load it into a second, differently initialised net
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "net_weights")
    tt.train.Checkpoint(net=net).write(path)
    # TensorFlow also lists its object graph, and ends each variable's key with
    # "/.ATTRIBUTES/VARIABLE_VALUE"; tracer lists the attribute paths only
    assert tt.train.list_variables(path) == [
        ("net/head/bias", [2]),
        ("net/head/weight", [4, 2]),
        ("net/hidden/bias", [4]),
        ("net/hidden/weight", [3, 4]),
    ]
    twin = TwoLayerNet()
    assert not np.array_equal(twin.head.weight.numpy(), net.head.weight.numpy())
    tt.train.Checkpoint(net=twin).restore(path)

for mine, theirs in zip(twin.variables, net.variables):
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
np.testing.assert_array_equal(twin(probe).numpy(), net(probe).numpy())


class TinyMLP(tt.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = tt.keras.layers.Dense(3, activation="relu")
        self.head = tt.keras.layers.Dense(2)

    def call(self, x):
        return self.head(self.hidden(x))


mlp = TinyMLP()
assert mlp(tt.constant([[2.0, 2.0, 2.0]])).shape == (1, 2)
# Keras keeps the order the layers were set in: hidden, then head
assert [v.shape for v in mlp.variables] == [(3, 3), (3,), (3, 2), (2,)]
print("modules and checkpoints: ok")
