"""Train a small MLP classifier on three interleaved spirals, in eager mode.

    python3 examples/train_mlp.py

The data set is generated here (600 points, 3 classes), so the example needs nothing but
tracer. Prints the loss as it falls, and the accuracy on the training points and on 600
fresh points from the same spirals (above 95%).
"""

import time

import numpy as np

import tracer as tt


def spirals(points_per_class=200, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    radius = np.linspace(0.05, 1.0, points_per_class)
    xs, ys = [], []
    for c in range(classes):
        turn = np.linspace(0, 3 * np.pi, points_per_class) + c * 2 * np.pi / classes
        angle = turn + rng.normal(0, 0.2, points_per_class)
        xs.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        ys.append(np.full(points_per_class, c))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int32)


def train(steps=600, learning_rate=0.02, seed=0, log_every=100):
    """Train the model; returns (losses at each logged step, training accuracy, held-out accuracy)."""
    tt.random.set_seed(seed)
    features, labels = spirals(seed=seed)
    x, y = tt.constant(features), tt.constant(labels)
    model = tt.layers.Sequential(
        [
            tt.layers.Dense(64, activation="relu"),
            tt.layers.Dense(64, activation="relu"),
            tt.layers.Dense(3),
        ]
    )
    optimizer = tt.optimizers.Adam(learning_rate)
    losses = []
    for step in range(steps + 1):
        with tt.GradientTape() as tape:
            logits = model(x)
            loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        if step % log_every == 0:
            losses.append(float(loss))
            print(f"step {step:4d}  loss {float(loss):.4f}")
    held_out = spirals(seed=seed + 1)
    return losses, accuracy(model, features, labels), accuracy(model, *held_out)


def accuracy(model, features, labels):
    predictions = tt.argmax(model(features), axis=1, output_type=tt.int32)
    return float(tt.reduce_mean(tt.cast(tt.equal(predictions, labels), tt.float32)))


if __name__ == "__main__":
    start = time.perf_counter()
    _, train_accuracy, test_accuracy = train()
    seconds = time.perf_counter() - start
    print(
        f"accuracy: training {train_accuracy:.1%}, held out {test_accuracy:.1%} ({seconds:.1f} s)"
    )
