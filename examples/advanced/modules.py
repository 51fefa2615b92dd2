"""TensorFlow's "Introduction to modules, layers and models" guide, with only the import
changed (and a temporary directory for the checkpoint): tf.Module's variables, submodules
and names, a checkpoint written and restored into a new model, and a Keras-style model
subclass. Each assert holds the value TensorFlow 2.21 prints for the same cell."""

import os
import tempfile

import tracer as tf


class SimpleModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_variable = tf.Variable(5.0, name="train_me")
        self.non_trainable_variable = tf.Variable(5.0, trainable=False, name="do_not_train_me")

    def __call__(self, x):
        return self.a_variable * x + self.non_trainable_variable


simple_module = SimpleModule(name="simple")
print(simple_module(tf.constant(5.0)))
print("trainable variables:", simple_module.trainable_variables)
print("all variables:", simple_module.variables)
assert float(simple_module(tf.constant(5.0))) == 30.0
assert [v.name for v in simple_module.trainable_variables] == ["train_me:0"]
assert [v.name for v in simple_module.variables] == ["train_me:0", "do_not_train_me:0"]


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


my_model = SequentialModule(name="the_model")
print("Model results:", my_model(tf.constant([[2.0, 2.0, 2.0]])))
print("Submodules:", my_model.submodules)
for var in my_model.variables:
    print(var, "\n")
assert my_model.submodules == (my_model.dense_1, my_model.dense_2)
assert [m.name for m in my_model.submodules] == ["dense", "dense"]
assert [(v.name, v.shape) for v in my_model.variables] == [
    ("b:0", (3,)),
    ("w:0", (3, 3)),
    ("b:0", (2,)),
    ("w:0", (3, 2)),
]

# Saving weights
chkp_path = os.path.join(tempfile.mkdtemp(), "my_checkpoint")
checkpoint = tf.train.Checkpoint(model=my_model)
checkpoint.write(chkp_path)
print(tf.train.list_variables(chkp_path))
assert [name for name, _ in tf.train.list_variables(chkp_path)] == [
    "model/dense_1/b",  # TensorFlow adds "/.ATTRIBUTES/VARIABLE_VALUE" to each name
    "model/dense_1/w",
    "model/dense_2/b",
    "model/dense_2/w",
]

new_model = SequentialModule()
new_checkpoint = tf.train.Checkpoint(model=new_model)
new_checkpoint.restore(chkp_path)

# Should be the same result as above
result = new_model(tf.constant([[2.0, 2.0, 2.0]]))
print(result)
assert (result.numpy() == my_model(tf.constant([[2.0, 2.0, 2.0]])).numpy()).all()


# Keras models
class MySequentialModel(tf.keras.Model):
    def __init__(self, name=None, **kwargs):
        super().__init__(**kwargs)
        self.dense_1 = tf.keras.layers.Dense(3, activation="relu")
        self.dense_2 = tf.keras.layers.Dense(2)

    def call(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


my_sequential_model = MySequentialModel(name="the_model")
print("Model results:", my_sequential_model(tf.constant([[2.0, 2.0, 2.0]])))
print(my_sequential_model.variables)
assert my_sequential_model(tf.constant([[2.0, 2.0, 2.0]])).shape == (1, 2)
assert [v.shape for v in my_sequential_model.variables] == [(3, 3), (3,), (3, 2), (2,)]
