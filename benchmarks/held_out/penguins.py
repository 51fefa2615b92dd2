"""Held-out: TensorFlow's custom training walkthrough (penguin species) as written there, with
the penguins made by numpy and written as CSV text files to a temporary directory in place
of tensorflow_datasets: tf.data.experimental.make_csv_dataset with column and label names,
a map that stacks the feature columns, a test set read with tf.data.TextLineDataset,
skip(1) and tf.io.decode_csv; a Sequential model given input_shape, the tensors printed as
the tutorial prints them, SparseCategoricalCrossentropy from logits, a grad function with a
GradientTape, SGD, and the eager loop over 201 epochs with the Mean and
SparseCategoricalAccuracy metrics, then the Accuracy metric on the test set and predictions
on three new examples. Data and weights from numpy, so TF and tracer must print the same."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
column_names = [
    "species",
    "culmen_length_mm",
    "culmen_depth_mm",
    "flipper_length_mm",
    "body_mass_g",
]
feature_names = column_names[1:]
label_name = column_names[0]
class_names = ["Adélie", "Chinstrap", "Gentoo"]

# Each species' mean of the four (scaled) measurements; 150 penguins, 20% of them for testing.
means = np.array([[0.25, 0.62, 0.25, 0.25], [0.55, 0.65, 0.30, 0.28], [0.50, 0.25, 0.70, 0.70]])
species = rng.integers(0, 3, 150)
measurements = (means[species] + rng.normal(0, 0.08, (150, 4))).clip(0, 1)


def write_csv(path, rows, labels):
    with open(path, "w") as f:
        f.write(",".join(column_names) + "\n")
        for label, row in zip(labels, rows):
            f.write(f"{label}," + ",".join(f"{v:.4f}" for v in row) + "\n")


directory = tempfile.mkdtemp()
train_dataset_fp = os.path.join(directory, "penguins_train.csv")
test_fp = os.path.join(directory, "penguins_test.csv")
write_csv(train_dataset_fp, measurements[30:], species[30:])
write_csv(test_fp, measurements[:30], species[:30])
with open(train_dataset_fp) as f:
    print(which, "first lines:", [next(f).strip() for _ in range(3)])

batch_size = 32

train_dataset = tf.data.experimental.make_csv_dataset(
    train_dataset_fp,
    batch_size,
    column_names=column_names,
    label_name=label_name,
    num_epochs=1,
    shuffle=False,
)
features, labels = next(iter(train_dataset))
print(which, "columns", list(features.keys()))
print(which, features["culmen_length_mm"][:5])
print(which, labels[:8])


def pack_features_vector(features, labels):
    """Pack the features into a single array."""
    features = tf.stack(list(features.values()), axis=1)
    return features, labels


train_dataset = train_dataset.map(pack_features_vector)
features, labels = next(iter(train_dataset))
print(which, features[:5])

model = tf.keras.Sequential(
    [
        tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # input shape required
        tf.keras.layers.Dense(10, activation=tf.nn.relu),
        tf.keras.layers.Dense(3),
    ]
)
model.set_weights(
    [
        rng.normal(0, 1 / np.sqrt(w.shape[0]), w.shape).astype(np.float32)
        for w in model.get_weights()
    ]
)
predictions = model(features)
print(which, predictions[:5])
print(which, tf.nn.softmax(predictions[:5]))
print(which, "Prediction: {}".format(tf.math.argmax(predictions, axis=1)))
print(which, "    Labels: {}".format(labels))

loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def loss(model, x, y, training):
    # training=training is needed only if there are layers with different
    # behavior during training versus inference (e.g. Dropout).
    y_ = model(x, training=training)

    return loss_object(y_true=y, y_pred=y_)


loss_test = loss(model, features, labels, training=False)
print(which, "Loss test: {}".format(loss_test))


def grad(model, inputs, targets):
    with tf.GradientTape() as tape:
        loss_value = loss(model, inputs, targets, training=True)
    return loss_value, tape.gradient(loss_value, model.trainable_variables)


optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
loss_value, grads = grad(model, features, labels)

print(which, "Step: {}, Initial Loss: {}".format(optimizer.iterations.numpy(), loss_value.numpy()))

optimizer.apply_gradients(zip(grads, model.trainable_variables))

print(
    which,
    "Step: {},         Loss: {}".format(
        optimizer.iterations.numpy(), loss(model, features, labels, training=True).numpy()
    ),
)

train_loss_results = []
train_accuracy_results = []

num_epochs = 201
start = time.perf_counter()
for epoch in range(num_epochs):
    epoch_loss_avg = tf.keras.metrics.Mean()
    epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

    # Training loop - using batches of 32
    for x, y in train_dataset:
        # Optimize the model
        loss_value, grads = grad(model, x, y)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

        # Track progress
        epoch_loss_avg.update_state(loss_value)  # Add current batch loss
        # Compare predicted label to actual label
        # training=True is needed only if there are layers with different
        # behavior during training versus inference (e.g. Dropout).
        epoch_accuracy.update_state(y, model(x, training=True))

    # End epoch
    train_loss_results.append(epoch_loss_avg.result())
    train_accuracy_results.append(epoch_accuracy.result())

    if epoch % 50 == 0:
        print(
            which,
            "Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(
                epoch, epoch_loss_avg.result(), epoch_accuracy.result()
            ),
        )
train_time = time.perf_counter() - start
print(
    which,
    "steps",
    int(optimizer.iterations.numpy()),
    f"final loss {float(train_loss_results[-1]):.6f}",
)


def parse_line(line):
    """One CSV line as its features and its label."""
    fields = tf.io.decode_csv(line, record_defaults=[[0]] + [[0.0]] * 4)
    return tf.stack(fields[1:]), fields[0]


test_dataset = tf.data.TextLineDataset(test_fp).skip(1).map(parse_line)
test_accuracy = tf.keras.metrics.Accuracy()
ds_test_batch = test_dataset.batch(10)

for x, y in ds_test_batch:
    # training=False is needed only if there are layers with different
    # behavior during training versus inference (e.g. Dropout).
    logits = model(x, training=False)
    prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
    test_accuracy(prediction, y)

print(which, "Test set accuracy: {:.3%}".format(test_accuracy.result()))
print(which, tf.stack([tf.cast(y, tf.int64), prediction], axis=1)[:5])

predict_dataset = tf.convert_to_tensor(
    [
        [0.3, 0.8, 0.4, 0.5],
        [0.4, 0.1, 0.8, 0.5],
        [0.7, 0.9, 0.8, 0.4],
    ]
)

predictions = model(predict_dataset, training=False)

for i, logits in enumerate(predictions):
    class_idx = tf.math.argmax(logits).numpy()
    p = tf.nn.softmax(logits)[class_idx]
    name = class_names[class_idx]
    print(which, "Example {} prediction: {} ({:4.1f}%)".format(i, name, 100 * p))

steps = int(optimizer.iterations.numpy())
print(which, f"201 epochs in {train_time:.2f} s: {train_time / steps * 1e3:.3f} ms a step")
