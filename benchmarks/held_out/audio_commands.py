"""Held-out: spoken-command recognition as TensorFlow's "simple audio recognition" tutorial
writes it, on synthetic one-second WAV files (four classes of chirps, tones and noise bursts
written with the standard library's `wave`): `audio_dataset_from_directory` with
`output_sequence_length=16000` and `subset="both"`, a squeeze map, `shard` into validation
and test, spectrograms by `tf.signal.stft` and `tf.abs` in a map, `cache`/`shuffle`, a
Normalization adapted on the spectrograms, Resizing, two Conv2D, MaxPooling2D, Dropout,
Dense; fit with EarlyStopping, evaluate, predict, `tf.math.confusion_matrix`, and the
tutorial's export module taking a file name or a waveform, saved and loaded. Weights come
from numpy: what runs before training must agree (shuffling and dropout draw differently in
the two engines after that)."""

import os
import sys
import tempfile
import time
import wave

import numpy as np
from engine import tf, which

CLASSES = ["down", "go", "left", "no"]
RATE = 16000
rng = np.random.default_rng(0)


def sound(kind):
    t = np.arange(RATE) / RATE
    start = rng.uniform(0.1, 0.4)
    envelope = np.exp(-(((t - start - 0.2) / 0.12) ** 2))
    if kind == "down":
        wave_ = np.sin(2 * np.pi * (1800 * t - 700 * t**2))
    elif kind == "go":
        wave_ = rng.standard_normal(RATE) * 0.5
    elif kind == "left":
        wave_ = np.sin(2 * np.pi * 440 * t) + 0.5 * np.sin(2 * np.pi * 3300 * t)
    else:
        wave_ = np.sin(2 * np.pi * (300 * t + 900 * t**2))
    audio = rng.uniform(0.2, 0.6) * envelope * wave_ + 0.3 * rng.standard_normal(RATE)
    return np.clip(audio * 32767, -32768, 32767).astype("<i2")


data_dir = tempfile.mkdtemp(prefix="audio_commands_")
for name in CLASSES:
    os.makedirs(os.path.join(data_dir, name))
    for k in range(40):
        samples = sound(name)
        length = RATE if k % 5 else rng.integers(12000, RATE)  # some files are shorter
        with wave.open(os.path.join(data_dir, name, f"{k:03d}_nohash_0.wav"), "wb") as file:
            file.setnchannels(1)
            file.setsampwidth(2)
            file.setframerate(RATE)
            file.writeframes(samples[:length].tobytes())

train_ds, val_ds = tf.keras.utils.audio_dataset_from_directory(
    directory=data_dir,
    batch_size=16,
    validation_split=0.2,
    seed=0,
    output_sequence_length=16000,
    subset="both",
)
label_names = np.array(train_ds.class_names)
print(which, "label names:", label_names)
print(which, "element_spec:", train_ds.element_spec)


def squeeze(audio, labels):
    audio = tf.squeeze(audio, axis=-1)
    return audio, labels


train_ds = train_ds.map(squeeze, tf.data.AUTOTUNE)
val_ds = val_ds.map(squeeze, tf.data.AUTOTUNE)
test_ds = val_ds.shard(num_shards=2, index=0)
val_ds = val_ds.shard(num_shards=2, index=1)
for example_audio, example_labels in train_ds.take(1):
    print(which, "example batch:", example_audio.shape, example_labels.shape)


def get_spectrogram(waveform):
    spectrogram = tf.signal.stft(waveform, frame_length=255, frame_step=128)
    spectrogram = tf.abs(spectrogram)
    spectrogram = spectrogram[..., tf.newaxis]
    return spectrogram


path = os.path.join(data_dir, "no", "001_nohash_0.wav")
waveform, rate = tf.audio.decode_wav(tf.io.read_file(path), desired_channels=1)
waveform = tf.squeeze(waveform, axis=-1)
spectrogram = get_spectrogram(waveform)
print(
    which,
    "waveform shape:",
    waveform.shape,
    "rate:",
    int(rate),
    "spectrogram shape:",
    spectrogram.shape,
)
print(which, "spectrogram sum:", f"{float(tf.reduce_sum(spectrogram)):.6g}")


def make_spec_ds(ds):
    return ds.map(
        map_func=lambda audio, label: (get_spectrogram(audio), label),
        num_parallel_calls=tf.data.AUTOTUNE,
    )


train_spectrogram_ds = make_spec_ds(train_ds)
val_spectrogram_ds = make_spec_ds(val_ds)
test_spectrogram_ds = make_spec_ds(test_ds)
example_spectrograms, _ = next(iter(train_spectrogram_ds.take(1)))
train_spectrogram_ds = train_spectrogram_ds.cache().shuffle(10000).prefetch(tf.data.AUTOTUNE)
val_spectrogram_ds = val_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE)
test_spectrogram_ds = test_spectrogram_ds.cache().prefetch(tf.data.AUTOTUNE)

input_shape = example_spectrograms.shape[1:]
print(which, "input shape:", input_shape)
num_labels = len(label_names)
norm_layer = tf.keras.layers.Normalization()
norm_layer.adapt(data=train_spectrogram_ds.map(map_func=lambda spec, label: spec))
print(which, "adapted mean, variance:", f"{float(norm_layer.mean.numpy().ravel()[0]):.5g}",
      f"{float(norm_layer.variance.numpy().ravel()[0]):.5g}")  # fmt: skip

model = tf.keras.models.Sequential(
    [
        tf.keras.layers.Input(shape=input_shape),
        tf.keras.layers.Resizing(32, 32),
        norm_layer,
        tf.keras.layers.Conv2D(32, 3, activation="relu"),
        tf.keras.layers.Conv2D(64, 3, activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Dropout(0.25),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(128, activation="relu"),
        tf.keras.layers.Dropout(0.5),
        tf.keras.layers.Dense(num_labels),
    ]
)
weights = np.random.default_rng(1)
model.set_weights(
    [
        weights.normal(0.0, 0.05, w.shape).astype(np.float32) if w.trainable else w.numpy()
        for w in model.weights
    ]
)
model.compile(
    optimizer=tf.keras.optimizers.Adam(),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
before = model.evaluate(val_spectrogram_ds, return_dict=True, verbose=0)
print(which, "before training:", {k: round(float(v), 5) for k, v in sorted(before.items())})

start = time.perf_counter()
history = model.fit(
    train_spectrogram_ds,
    validation_data=val_spectrogram_ds,
    epochs=1,
    verbose=0,
)
first_fit = time.perf_counter() - start
start = time.perf_counter()
history = model.fit(
    train_spectrogram_ds,
    validation_data=val_spectrogram_ds,
    epochs=8,
    callbacks=tf.keras.callbacks.EarlyStopping(verbose=1, patience=2),
    verbose=0,
)
epochs = len(history.history["loss"])
epoch_time = (time.perf_counter() - start) / epochs
print(which, "val_accuracy:", " ".join(f"{v:.3f}" for v in history.history["val_accuracy"]))
print(which, "test:", {k: round(float(v), 3) for k, v in sorted(
    model.evaluate(test_spectrogram_ds, return_dict=True, verbose=0).items())})  # fmt: skip

y_pred = model.predict(test_spectrogram_ds, verbose=0)
y_pred = tf.argmax(y_pred, axis=1)
y_true = tf.concat(list(test_spectrogram_ds.map(lambda s, lab: lab)), axis=0)
confusion_mtx = tf.math.confusion_matrix(y_true, y_pred)
print(which, "confusion matrix total:", int(tf.reduce_sum(confusion_mtx)), confusion_mtx.shape)


class ExportModel(tf.Module):
    def __init__(self, model):
        self.model = model
        self.__call__.get_concrete_function(x=tf.TensorSpec(shape=(), dtype=tf.string))
        self.__call__.get_concrete_function(x=tf.TensorSpec(shape=[None, 16000], dtype=tf.float32))

    @tf.function
    def __call__(self, x):
        if x.dtype == tf.string:
            x = tf.io.read_file(x)
            x, _ = tf.audio.decode_wav(x, desired_channels=1, desired_samples=16000)
            x = tf.squeeze(x, axis=-1)
            x = x[tf.newaxis, :]
        x = get_spectrogram(x)
        result = self.model(x, training=False)
        class_ids = tf.argmax(result, axis=-1)
        class_names = tf.gather(label_names, class_ids)
        return {"predictions": result, "class_ids": class_ids, "class_names": class_names}


export = ExportModel(model)
by_file = export(tf.constant(path))
print(which, "export by file:", by_file["class_names"].numpy())
saved = os.path.join(data_dir, "saved")
tf.saved_model.save(export, saved)
imported = tf.saved_model.load(saved)
by_wave = imported(waveform[tf.newaxis, :])
print(which, "loaded by waveform:", by_wave["class_names"].numpy(),
      np.allclose(by_wave["predictions"].numpy(),
                  model(get_spectrogram(waveform[tf.newaxis, :])).numpy(), atol=1e-5))  # fmt: skip
print(which, f"first fit (1 epoch) {first_fit:.2f} s, then {epoch_time * 1000:.1f} ms an epoch "
      f"over {epochs} epochs", file=sys.stderr)  # fmt: skip
