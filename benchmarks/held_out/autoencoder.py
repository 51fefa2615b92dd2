"""Held-out: TensorFlow's "Intro to Autoencoders" tutorial on synthetic data: (a) a
subclassed Autoencoder(Model) with Sequential encoder (Flatten, Dense) and decoder (Dense
sigmoid, Reshape); (b) a denoising convolutional autoencoder (Conv2D strides 2,
Conv2DTranspose) on images with clipped noise, and its encoder/decoder summaries; (c)
anomaly detection on ECG-like rows: min-max normalization, boolean masks, a Dense
autoencoder trained with MAE, a threshold from the training losses, and accuracy, precision,
recall. Weights come from numpy and fit does not shuffle, so TF and tracer must agree."""

import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
losses = tf.keras.losses
Model = tf.keras.Model
rng = np.random.default_rng(0)


def set_numpy_weights(model, seed):
    init = np.random.default_rng(seed)
    weights = []
    for w in model.get_weights():
        if w.ndim > 1:
            fan_in = int(np.prod(w.shape[:-1]))
            weights.append(init.normal(0.0, 1.0 / np.sqrt(fan_in), w.shape).astype(np.float32))
        else:
            weights.append(init.normal(0.0, 0.01, w.shape).astype(np.float32))
    model.set_weights(weights)


class EpochTimer(tf.keras.callbacks.Callback):
    def on_train_begin(self, logs=None):
        self.times = []

    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.times.append(time.perf_counter() - self.start)


def timing(name, timer):
    later = np.median(timer.times[1:]) if len(timer.times) > 1 else float("nan")
    return f"{name}: first epoch {timer.times[0]:.2f} s, later epochs {later:.3f} s"


def fmt(values):
    return " ".join(f"{v:.5f}" for v in values)


# Synthetic "MNIST": blurry strokes on a 28 x 28 canvas, values in [0, 1].
def make_images(n):
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float32)
    images = np.zeros((n, 28, 28), np.float32)
    for i in range(n):
        for _ in range(3):
            cy, cx = rng.uniform(6, 22, 2)
            sy, sx = rng.uniform(1.5, 5.0, 2)
            images[i] += np.exp(-(((yy - cy) / sy) ** 2) - ((xx - cx) / sx) ** 2)
    return np.clip(images, 0.0, 1.0).astype(np.float32)


x_train, x_test = make_images(1024), make_images(256)
timings = []

# -- (a) a basic autoencoder --------------------------------------------------------------


class Autoencoder(Model):
    def __init__(self, latent_dim, shape):
        super(Autoencoder, self).__init__()
        self.latent_dim = latent_dim
        self.shape = shape
        self.encoder = tf.keras.Sequential(
            [
                layers.Flatten(),
                layers.Dense(latent_dim, activation="relu"),
            ]
        )
        self.decoder = tf.keras.Sequential(
            [
                layers.Dense(int(tf.math.reduce_prod(shape).numpy()), activation="sigmoid"),
                layers.Reshape(shape),
            ]
        )

    def call(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return decoded


shape = x_test.shape[1:]
latent_dim = 64
autoencoder = Autoencoder(latent_dim, shape)
autoencoder(x_train[:1])
set_numpy_weights(autoencoder, 1)
autoencoder.compile(optimizer="adam", loss=losses.MeanSquaredError())
timer = EpochTimer()
start = time.perf_counter()
history = autoencoder.fit(
    x_train,
    x_train,
    epochs=4,
    shuffle=False,
    validation_data=(x_test, x_test),
    callbacks=[timer],
    verbose=0,
)
timings.append(f"dense fit {time.perf_counter() - start:.2f} s; " + timing("dense", timer))
print(which, "dense loss", fmt(history.history["loss"]))
print(which, "dense val_loss", fmt(history.history["val_loss"]))
encoded_imgs = autoencoder.encoder(x_test).numpy()
decoded_imgs = autoencoder.decoder(encoded_imgs).numpy()
print(
    which,
    "dense encoded",
    encoded_imgs.shape,
    f"{encoded_imgs.mean():.5f}",
    "decoded",
    decoded_imgs.shape,
    f"{decoded_imgs.mean():.5f}",
)

# -- (b) a denoising convolutional autoencoder --------------------------------------------
x_train = x_train[:512][..., tf.newaxis]
x_test = x_test[:128][..., tf.newaxis]
noise_factor = 0.2
x_train_noisy = x_train + noise_factor * rng.normal(size=x_train.shape).astype(np.float32)
x_test_noisy = x_test + noise_factor * rng.normal(size=x_test.shape).astype(np.float32)
x_train_noisy = tf.clip_by_value(x_train_noisy, clip_value_min=0.0, clip_value_max=1.0)
x_test_noisy = tf.clip_by_value(x_test_noisy, clip_value_min=0.0, clip_value_max=1.0)
print(
    which,
    "noisy",
    x_train_noisy.shape,
    x_train_noisy.dtype.name,
    f"{float(tf.reduce_mean(x_train_noisy)):.5f}",
)


class Denoise(Model):
    def __init__(self):
        super(Denoise, self).__init__()
        self.encoder = tf.keras.Sequential(
            [
                layers.Input(shape=(28, 28, 1)),
                layers.Conv2D(16, (3, 3), activation="relu", padding="same", strides=2),
                layers.Conv2D(8, (3, 3), activation="relu", padding="same", strides=2),
            ]
        )

        self.decoder = tf.keras.Sequential(
            [
                layers.Conv2DTranspose(
                    8, kernel_size=3, strides=2, activation="relu", padding="same"
                ),
                layers.Conv2DTranspose(
                    16, kernel_size=3, strides=2, activation="relu", padding="same"
                ),
                layers.Conv2D(1, kernel_size=(3, 3), activation="sigmoid", padding="same"),
            ]
        )

    def call(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return decoded


autoencoder = Denoise()
autoencoder(x_train_noisy[:1])
set_numpy_weights(autoencoder, 2)
autoencoder.compile(optimizer="adam", loss=losses.MeanSquaredError())
timer = EpochTimer()
start = time.perf_counter()
history = autoencoder.fit(
    x_train_noisy,
    x_train,
    epochs=3,
    shuffle=False,
    validation_data=(x_test_noisy, x_test),
    callbacks=[timer],
    verbose=0,
)
timings.append(f"conv fit {time.perf_counter() - start:.2f} s; " + timing("conv", timer))
print(which, "conv loss", fmt(history.history["loss"]))
print(which, "conv val_loss", fmt(history.history["val_loss"]))
autoencoder.encoder.summary()
autoencoder.decoder.summary()
encoded_imgs = autoencoder.encoder(x_test_noisy).numpy()
decoded_imgs = autoencoder.decoder(encoded_imgs).numpy()
print(
    which,
    "conv encoded",
    encoded_imgs.shape,
    f"{encoded_imgs.mean():.5f}",
    "decoded",
    decoded_imgs.shape,
    f"{decoded_imgs.mean():.5f}",
)

# -- (c) anomaly detection on ECG-like rows -----------------------------------------------
n_rows = 2000
t = np.linspace(0.0, 1.0, 140)
is_normal = rng.random(n_rows) < 0.6
raw_data = np.empty((n_rows, 141))
for i in range(n_rows):
    shift = rng.uniform(-0.03, 0.03)
    beat = 3.0 * np.exp(-(((t - 0.3 - shift) / 0.02) ** 2)) - 0.8 * np.exp(
        -(((t - 0.36 - shift) / 0.03) ** 2)
    )
    beat += 0.6 * np.exp(-(((t - 0.65 - shift) / 0.06) ** 2))
    if not is_normal[i]:  # a widened, displaced complex and no T wave
        beat = 2.0 * np.exp(-(((t - 0.45 - shift) / 0.08) ** 2)) - 1.0 * t
    raw_data[i, :140] = beat + rng.normal(0.0, 0.15, 140) - 1.0
    raw_data[i, 140] = float(is_normal[i])
labels = raw_data[:, -1]
data = raw_data[:, 0:-1]
order = np.random.default_rng(21).permutation(n_rows)
split = int(n_rows * 0.8)
train_data, test_data = data[order[:split]], data[order[split:]]
train_labels, test_labels = labels[order[:split]], labels[order[split:]]

min_val = tf.reduce_min(train_data)
max_val = tf.reduce_max(train_data)
train_data = (train_data - min_val) / (max_val - min_val)
test_data = (test_data - min_val) / (max_val - min_val)
train_data = tf.cast(train_data, tf.float32)
test_data = tf.cast(test_data, tf.float32)
print(which, "min max", f"{float(min_val):.5f}", f"{float(max_val):.5f}", train_data.dtype.name)

train_labels = train_labels.astype(bool)
test_labels = tf.cast(test_labels, tf.bool)
normal_train_data = train_data[train_labels]
normal_test_data = test_data[test_labels]
anomalous_train_data = train_data[~train_labels]
anomalous_test_data = test_data[~test_labels]
print(
    which,
    "splits",
    normal_train_data.shape,
    anomalous_train_data.shape,
    normal_test_data.shape,
    anomalous_test_data.shape,
)


class AnomalyDetector(Model):
    def __init__(self):
        super(AnomalyDetector, self).__init__()
        self.encoder = tf.keras.Sequential(
            [
                layers.Dense(32, activation="relu"),
                layers.Dense(16, activation="relu"),
                layers.Dense(8, activation="relu"),
            ]
        )

        self.decoder = tf.keras.Sequential(
            [
                layers.Dense(16, activation="relu"),
                layers.Dense(32, activation="relu"),
                layers.Dense(140, activation="sigmoid"),
            ]
        )

    def call(self, x):
        encoded = self.encoder(x)
        decoded = self.decoder(encoded)
        return decoded


autoencoder = AnomalyDetector()
autoencoder(normal_train_data[:1])
set_numpy_weights(autoencoder, 3)
autoencoder.compile(optimizer="adam", loss="mae")
timer = EpochTimer()
start = time.perf_counter()
history = autoencoder.fit(
    normal_train_data,
    normal_train_data,
    epochs=20,
    batch_size=512,
    validation_data=(test_data, test_data),
    shuffle=False,
    callbacks=[timer],
    verbose=0,
)
timings.append(f"ecg fit {time.perf_counter() - start:.2f} s; " + timing("ecg", timer))
print(which, "ecg loss", fmt(history.history["loss"][::4]))
print(which, "ecg val_loss", fmt(history.history["val_loss"][::4]))

reconstructions = autoencoder.predict(normal_train_data, verbose=0)
train_loss = tf.keras.losses.mae(reconstructions, normal_train_data)
threshold = np.mean(train_loss) + np.std(train_loss)
print(which, "Threshold:", f"{threshold:.5f}")
reconstructions = autoencoder.predict(anomalous_test_data, verbose=0)
test_loss = tf.keras.losses.mae(reconstructions, anomalous_test_data)
print(which, "anomalous test loss mean", f"{np.mean(test_loss):.5f}")


def predict(model, data, threshold):
    reconstructions = model(data)
    loss = tf.keras.losses.mae(reconstructions, data)
    return tf.math.less(loss, threshold)


def print_stats(predictions, labels):
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    true_positives = np.sum(predictions & labels)
    print(which, f"Accuracy = {np.mean(predictions == labels):.5f}")
    print(which, f"Precision = {true_positives / np.sum(predictions):.5f}")
    print(which, f"Recall = {true_positives / np.sum(labels):.5f}")


preds = predict(autoencoder, test_data, threshold)
print_stats(preds, test_labels)
precision = tf.keras.metrics.Precision()
recall = tf.keras.metrics.Recall()
precision.update_state(test_labels, preds)
recall.update_state(test_labels, preds)
print(
    which,
    "metrics precision",
    f"{float(precision.result()):.5f}",
    "recall",
    f"{float(recall.result()):.5f}",
)
for line in timings:
    print(which, line)
