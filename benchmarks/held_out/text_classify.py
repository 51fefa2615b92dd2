"""Held-out: text classification from raw strings as TensorFlow's basic text classification
tutorial writes it: a custom standardization (lower case, HTML line breaks, punctuation by
`re.escape(string.punctuation)`), a TextVectorization adapted on the training texts of a
tf.data pipeline and mapped over it, Embedding, Dropout, GlobalAveragePooling1D, Dense;
fit with validation, evaluate, then an export model that takes strings (the vectorization
layer, the model, a sigmoid) evaluated on a string dataset and asked to predict. Weights
come from numpy so that TF and tracer must agree."""

import re
import string
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
GOOD = ["great", "wonderful", "loved", "best", "superb", "moving"]
BAD = ["awful", "boring", "worst", "hated", "dull", "mess"]
FILLER = ["the", "movie", "film", "plot", "acting", "was", "and", "a", "story", "it", "this"]


def review(label):
    words = list(rng.choice(FILLER, rng.integers(5, 14)))
    for _ in range(rng.integers(1, 4)):
        words.insert(rng.integers(0, len(words) + 1), rng.choice(GOOD if label else BAD))
    text = " ".join(words).capitalize() + rng.choice([".", "!", "?", "..."])
    return text.replace(" and ", " and<br /><br />", 1) if rng.random() < 0.3 else text


labels = rng.integers(0, 2, 480)
texts = [review(label) for label in labels]
train = tf.data.Dataset.from_tensor_slices((texts[:320], labels[:320])).batch(32)
validation = tf.data.Dataset.from_tensor_slices((texts[320:400], labels[320:400])).batch(32)
test = tf.data.Dataset.from_tensor_slices((texts[400:], labels[400:])).batch(32)


def custom_standardization(input_data):
    lowercase = tf.strings.lower(input_data)
    stripped_html = tf.strings.regex_replace(lowercase, "<br />", " ")
    punctuation = "[%s]" % re.escape(string.punctuation)
    return tf.strings.regex_replace(stripped_html, punctuation, "")


MAX_FEATURES, SEQUENCE_LENGTH = 40, 16
vectorize_layer = tf.keras.layers.TextVectorization(
    standardize=custom_standardization,
    max_tokens=MAX_FEATURES,
    output_mode="int",
    output_sequence_length=SEQUENCE_LENGTH,
)
vectorize_layer.adapt(train.map(lambda x, y: x))
print(which, "vocabulary", " ".join(vectorize_layer.get_vocabulary()[:12]))
print(which, "vocabulary size", vectorize_layer.vocabulary_size())


def vectorize_text(text, label):
    text = tf.expand_dims(text, -1)
    return vectorize_layer(text), label


first_text, first_label = next(iter(train))
print(which, "review", first_text[0].numpy().decode(), "label", int(first_label[0]))
print(which, "vectorized", vectorize_text(first_text, first_label)[0][0].numpy().tolist())

train_ds = train.map(vectorize_text).cache().prefetch(buffer_size=tf.data.AUTOTUNE)
val_ds = validation.map(vectorize_text).cache().prefetch(buffer_size=tf.data.AUTOTUNE)
test_ds = test.map(vectorize_text)

layers = tf.keras.layers
model = tf.keras.Sequential(
    [
        layers.Embedding(MAX_FEATURES, 16),
        layers.Dropout(0.0),
        layers.GlobalAveragePooling1D(),
        layers.Dropout(0.0),
        layers.Dense(1),
    ]
)
model.build((None, SEQUENCE_LENGTH))
model.set_weights([rng.normal(0.0, 0.3, w.shape).astype(np.float32) for w in model.weights])
model.compile(
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    optimizer=tf.keras.optimizers.Adam(0.02),
    metrics=[tf.keras.metrics.BinaryAccuracy(threshold=0.0)],
)
start = time.perf_counter()
history = model.fit(train_ds, validation_data=val_ds, epochs=5, verbose=0)
fit_time = time.perf_counter() - start
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))
print(which, "val_loss", " ".join(f"{v:.5f}" for v in history.history["val_loss"]))
loss, accuracy = model.evaluate(test_ds, verbose=0)
print(which, "evaluate", f"{loss:.5f} {accuracy:.5f}")

export_model = tf.keras.Sequential([vectorize_layer, model, layers.Activation("sigmoid")])
export_model.compile(
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=False),
    optimizer="adam",
    metrics=["accuracy"],
)
loss, accuracy = export_model.evaluate(test, verbose=0)
print(which, "export evaluate", f"{loss:.5f} {accuracy:.5f}")
examples = tf.constant(["The movie was great!", "The movie was okay.", "The movie was awful..."])
print(
    which, "predict", " ".join(f"{v:.5f}" for v in export_model.predict(examples, verbose=0)[:, 0])
)

start = time.perf_counter()
model.fit(train_ds, validation_data=val_ds, epochs=2, verbose=0)
epoch = (time.perf_counter() - start) / 2
print(which, f"first fit (5 epochs) {fit_time:.2f} s, then an epoch {epoch * 1e3:.1f} ms")
