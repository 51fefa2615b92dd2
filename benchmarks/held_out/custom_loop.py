"""Held-out: Keras's guide "Writing a training loop from scratch" (TensorFlow backend) on
synthetic MNIST-like data: a functional model, an eager loop with tf.GradientTape and SGD,
SparseCategoricalAccuracy metrics (update_state / result / reset_state), then the same loop
with @tf.function train_step / test_step and Adam, then a model whose custom layer calls
add_loss (activity regularization) with sum(model.losses) added to the loss. Weights come
from numpy and the dataset is not shuffled, so TF and tracer must print the same numbers."""

import time

import numpy as np
from engine import tf, which

keras = tf.keras
rng = np.random.default_rng(0)
N, NV, D, C = 1024, 256, 784, 10
teacher = rng.normal(size=(D, C)).astype(np.float32)
x_all = rng.random((N + NV, D)).astype(np.float32)
y_all = np.argmax(x_all @ teacher + rng.normal(0.0, 2.0, (N + NV, C)), axis=1).astype(np.int64)
x_train, y_train, x_val, y_val = x_all[:N], y_all[:N], x_all[N:], y_all[N:]


def get_model(with_regularizer=False):
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    if with_regularizer:
        x = ActivityRegularizationLayer()(x)
    x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    return keras.Model(inputs=inputs, outputs=outputs)


class ActivityRegularizationLayer(keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * tf.reduce_sum(inputs))
        return inputs


init_rng = np.random.default_rng(1)
model = get_model()
initial = [init_rng.normal(0.0, 0.05, w.shape).astype(np.float32) for w in model.get_weights()]
model.set_weights(initial)
print(which, "trainable_weights", [tuple(w.shape) for w in model.trainable_weights])

batch_size = 64
train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(batch_size)
val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size)

# -- 1. the eager loop, SGD ---------------------------------------------------------------
optimizer = keras.optimizers.SGD(learning_rate=1e-3)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

start = time.perf_counter()
for epoch in range(2):
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
            logits = model(x_batch_train, training=True)
            loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y_batch_train, logits)
        if step % 5 == 0:
            print(which, f"eager epoch {epoch} step {step} loss {float(loss_value):.5f}")
    train_acc = train_acc_metric.result()
    train_acc_metric.reset_state()
    for x_batch_val, y_batch_val in val_dataset:
        val_logits = model(x_batch_val, training=False)
        val_acc_metric.update_state(y_batch_val, val_logits)
    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print(
        which, f"eager epoch {epoch} train acc {float(train_acc):.4f} val acc {float(val_acc):.4f}"
    )
eager_time = time.perf_counter() - start
print(which, "sgd iterations", int(optimizer.iterations.numpy()))

# -- 2. the same loop with tf.function, Adam ----------------------------------------------
model = get_model()
model.set_weights(initial)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply(grads, model.trainable_weights)
    train_acc_metric.update_state(y, logits)
    return loss_value


@tf.function
def test_step(x, y):
    val_logits = model(x, training=False)
    val_acc_metric.update_state(y, val_logits)


first_call = None
start = time.perf_counter()
for epoch in range(3):
    epoch_start = time.perf_counter()
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        t = time.perf_counter()
        loss_value = train_step(x_batch_train, y_batch_train)
        if first_call is None:
            first_call = time.perf_counter() - t
        if step % 5 == 0:
            print(which, f"compiled epoch {epoch} step {step} loss {float(loss_value):.5f}")
    train_acc = train_acc_metric.result()
    train_acc_metric.reset_state()
    for x_batch_val, y_batch_val in val_dataset:
        test_step(x_batch_val, y_batch_val)
    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print(
        which,
        f"compiled epoch {epoch} train acc {float(train_acc):.4f} val acc {float(val_acc):.4f}"
        f" ({time.perf_counter() - epoch_start:.3f} s)",
    )
print(which, "adam iterations", int(optimizer.iterations.numpy()))
print(
    which,
    "weights after",
    " ".join(f"{float(np.sum(w.numpy())):.5f}" for w in model.trainable_weights),
)

xb, yb = tf.constant(x_train[:batch_size]), tf.constant(y_train[:batch_size])
times = []
for _ in range(200):
    t = time.perf_counter()
    train_step(xb, yb)
    times.append(time.perf_counter() - t)
train_acc_metric.reset_state()

# -- 3. add_loss: an activity-regularization layer ----------------------------------------
model = get_model(with_regularizer=True)
model.set_weights(initial)
optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
        # Add any extra losses created during the forward pass.
        loss_value += sum(model.losses)
    grads = tape.gradient(loss_value, model.trainable_weights)
    optimizer.apply(grads, model.trainable_weights)
    train_acc_metric.update_state(y, logits)
    return loss_value


@tf.function
def test_step(x, y):
    val_logits = model(x, training=False)
    val_acc_metric.update_state(y, val_logits)


for epoch in range(2):
    for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        loss_value = train_step(x_batch_train, y_batch_train)
        if step % 5 == 0:
            print(which, f"regularized epoch {epoch} step {step} loss {float(loss_value):.5f}")
    train_acc = train_acc_metric.result()
    train_acc_metric.reset_state()
    for x_batch_val, y_batch_val in val_dataset:
        test_step(x_batch_val, y_batch_val)
    val_acc = val_acc_metric.result()
    val_acc_metric.reset_state()
    print(
        which,
        f"regularized epoch {epoch} train acc {float(train_acc):.4f} val acc {float(val_acc):.4f}",
    )
model(x_val[:batch_size])  # an eager call, so that model.losses holds eager tensors
print(which, "regularized losses", len(model.losses), f"{float(sum(model.losses)):.5f}")
print(which, "regularized iterations", int(optimizer.iterations.numpy()))
print(
    which,
    f"eager 2 epochs {eager_time:.2f} s, first train_step {first_call:.2f} s,"
    f" train_step {np.median(times) * 1e3:.3f} ms",
)
