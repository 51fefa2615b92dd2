"""Held-out: image classification as TensorFlow's image classification tutorial writes it: a
Sequential of augmentation layers (RandomFlip, RandomRotation, RandomZoom) inside the model,
Rescaling, three Conv2D and MaxPooling2D blocks, Dropout, Dense; compile with sparse
categorical cross-entropy from logits, fit with validation data, evaluate, predict. The
weights come from numpy, so that before training (augmentation off in evaluate) both engines
must agree; during fit the augmentations draw each engine's own numbers, so the losses after
differ by the draws."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
N, SIZE, CLASSES = 512, 32, 5
labels = rng.integers(0, CLASSES, N)
rows = np.linspace(0.0, 1.0, SIZE)[:, None]
columns = np.linspace(0.0, 1.0, SIZE)[None, :]
images = np.empty((N, SIZE, SIZE, 3), np.float32)
for i, label in enumerate(labels):  # each class a stripe pattern of its own frequency
    pattern = np.sin((label + 1) * 3.0 * (rows + columns * rng.uniform(0.5, 1.5)))
    noise = rng.normal(0.0, 0.3, (SIZE, SIZE, 3))
    images[i] = np.clip(127.5 + 100.0 * (pattern[..., None] + noise), 0, 255)
train_x, train_y, test_x, test_y = images[:384], labels[:384], images[384:], labels[384:]

data_augmentation = tf.keras.Sequential(
    [
        tf.keras.layers.RandomFlip("horizontal"),
        tf.keras.layers.RandomRotation(0.1),
        tf.keras.layers.RandomZoom(0.1),
    ]
)
model = tf.keras.Sequential(
    [
        tf.keras.Input((SIZE, SIZE, 3)),
        data_augmentation,
        tf.keras.layers.Rescaling(1.0 / 255),
        tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dense(CLASSES),
    ]
)
model.set_weights([rng.normal(0.0, 0.05, w.shape).astype(np.float32) for w in model.get_weights()])
model.compile(
    optimizer="adam",
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
loss, accuracy = model.evaluate(test_x, test_y, verbose=0)
print(which, "before training: loss", f"{loss:.5f}", "accuracy", f"{accuracy:.5f}")
start = time.perf_counter()
history = model.fit(
    train_x, train_y, validation_data=(test_x, test_y), epochs=1, batch_size=32, verbose=0
)
first = time.perf_counter() - start
start = time.perf_counter()
history = model.fit(
    train_x, train_y, validation_data=(test_x, test_y), epochs=4, batch_size=32, verbose=0
)
later = (time.perf_counter() - start) / 4
print(which, "val_accuracy", " ".join(f"{v:.3f}" for v in history.history["val_accuracy"]))
predictions = model.predict(test_x[:4], verbose=0)
print(
    which, "predicted classes", np.argmax(predictions, axis=1).tolist(), "true", test_y[:4].tolist()
)
print(which, f"first fit (1 epoch, with tracing) {first:.2f} s, later epochs {later * 1000:.1f} ms")
