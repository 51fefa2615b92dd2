"""Held-out: TensorFlow's convolutional VAE tutorial on small synthetic 28x28x1 binary images:
a tf.keras.Model subclass holding an encoder (InputLayer, two strided Conv2D, Flatten, Dense)
and a decoder (Dense, Reshape, three Conv2DTranspose) as Sequential models, tf.split of the
encoder's output, reparameterization with tf.random.normal, a @tf.function sample method, the
ELBO as a single-sample Monte Carlo estimate (sigmoid crossentropy, log normal densities), a
@tf.function train step given the model and optimizer as arguments, shuffled tf.data
pipelines and a Mean metric for the test ELBO. Weights from numpy; the first epochs draw
their noise from numpy (a subclass's reparameterize), so TF and tracer must print the same
numbers there; the last epochs use the tutorial's tf.random.normal, where they may differ."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
TRAIN, TEST, BATCH_SIZE, LATENT_DIM = 256, 64, 32, 2


def make_images(n):
    """Binary "strokes": a thick line at a random angle and offset through the image."""
    yy, xx = np.mgrid[0:28, 0:28] - 13.5
    angle = rng.uniform(0, np.pi, (n, 1, 1))
    offset = rng.uniform(-6, 6, (n, 1, 1))
    distance = np.abs(np.cos(angle) * xx + np.sin(angle) * yy - offset)
    images = np.exp(-(distance**2) / 8.0) + rng.normal(0, 0.15, (n, 28, 28))
    return images.reshape(n, 28, 28, 1)


def preprocess_images(images):
    return np.where(images > 0.5, 1.0, 0.0).astype("float32")


train_images = preprocess_images(make_images(TRAIN))
test_images = preprocess_images(make_images(TEST))

train_dataset = tf.data.Dataset.from_tensor_slices(train_images).shuffle(TRAIN).batch(BATCH_SIZE)
test_dataset = tf.data.Dataset.from_tensor_slices(test_images).shuffle(TEST).batch(BATCH_SIZE)
# the pipelines both engines run in the same order, for the epochs that must agree
ordered_train = tf.data.Dataset.from_tensor_slices(train_images).batch(BATCH_SIZE)
ordered_test = tf.data.Dataset.from_tensor_slices(test_images).batch(BATCH_SIZE)


class CVAE(tf.keras.Model):
    """Convolutional variational autoencoder."""

    def __init__(self, latent_dim):
        super(CVAE, self).__init__()
        self.latent_dim = latent_dim
        self.encoder = tf.keras.Sequential(
            [
                tf.keras.layers.InputLayer(input_shape=(28, 28, 1)),
                tf.keras.layers.Conv2D(
                    filters=32, kernel_size=3, strides=(2, 2), activation="relu"
                ),
                tf.keras.layers.Conv2D(
                    filters=64, kernel_size=3, strides=(2, 2), activation="relu"
                ),
                tf.keras.layers.Flatten(),
                # No activation
                tf.keras.layers.Dense(latent_dim + latent_dim),
            ]
        )

        self.decoder = tf.keras.Sequential(
            [
                tf.keras.layers.InputLayer(input_shape=(latent_dim,)),
                tf.keras.layers.Dense(units=7 * 7 * 32, activation=tf.nn.relu),
                tf.keras.layers.Reshape(target_shape=(7, 7, 32)),
                tf.keras.layers.Conv2DTranspose(
                    filters=64, kernel_size=3, strides=2, padding="same", activation="relu"
                ),
                tf.keras.layers.Conv2DTranspose(
                    filters=32, kernel_size=3, strides=2, padding="same", activation="relu"
                ),
                # No activation
                tf.keras.layers.Conv2DTranspose(
                    filters=1, kernel_size=3, strides=1, padding="same"
                ),
            ]
        )

    @tf.function
    def sample(self, eps=None):
        if eps is None:
            eps = tf.random.normal(shape=(100, self.latent_dim))
        return self.decode(eps, apply_sigmoid=True)

    def encode(self, x):
        mean, logvar = tf.split(self.encoder(x), num_or_size_splits=2, axis=1)
        return mean, logvar

    def reparameterize(self, mean, logvar):
        eps = tf.random.normal(shape=mean.shape)
        return eps * tf.exp(logvar * 0.5) + mean

    def decode(self, z, apply_sigmoid=False):
        logits = self.decoder(z)
        if apply_sigmoid:
            probs = tf.sigmoid(logits)
            return probs
        return logits


class NumpyNoiseCVAE(CVAE):
    """The CVAE whose reparameterization takes its noise from numpy, one draw for each row
    of a batch, the same draw at every step: both engines then compute the same ELBO."""

    def __init__(self, latent_dim, noise):
        super().__init__(latent_dim)
        self.noise = tf.constant(noise)

    def reparameterize(self, mean, logvar):
        eps = self.noise[: mean.shape[0]]
        return eps * tf.exp(logvar * 0.5) + mean


def log_normal_pdf(sample, mean, logvar, raxis=1):
    log2pi = tf.math.log(2.0 * np.pi)
    return tf.reduce_sum(
        -0.5 * ((sample - mean) ** 2.0 * tf.exp(-logvar) + logvar + log2pi), axis=raxis
    )


def compute_loss(model, x):
    mean, logvar = model.encode(x)
    z = model.reparameterize(mean, logvar)
    x_logit = model.decode(z)
    cross_ent = tf.nn.sigmoid_cross_entropy_with_logits(logits=x_logit, labels=x)
    logpx_z = -tf.reduce_sum(cross_ent, axis=[1, 2, 3])
    logpz = log_normal_pdf(z, 0.0, 0.0)
    logqz_x = log_normal_pdf(z, mean, logvar)
    return -tf.reduce_mean(logpx_z + logpz - logqz_x)


@tf.function
def train_step(model, x, optimizer):
    """Executes one training step and returns the loss.

    This function computes the loss and gradients, and uses the latter to
    update the model's parameters.
    """
    with tf.GradientTape() as tape:
        loss = compute_loss(model, x)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))


def from_numpy(model):
    """Every weight from numpy: kernels scaled by their fan-in, small biases."""
    weights = []
    for w in model.get_weights():
        if w.ndim > 1:
            weights.append(rng.normal(0.0, 1.0 / np.sqrt(np.prod(w.shape[:-1])), w.shape))
        else:
            weights.append(rng.normal(0.0, 0.01, w.shape))
    model.set_weights([w.astype(np.float32) for w in weights])


noise = rng.normal(size=(BATCH_SIZE, LATENT_DIM)).astype(np.float32)
model = NumpyNoiseCVAE(LATENT_DIM, noise)
from_numpy(model.encoder)
from_numpy(model.decoder)
print(
    which,
    "encoder output",
    model.encoder.output_shape,
    "decoder output",
    model.decoder.output_shape,
)
print(which, "trainable variables", [tuple(v.shape) for v in model.trainable_variables])
optimizer = tf.keras.optimizers.Adam(1e-3)


def test_elbo(model, dataset):
    loss = tf.keras.metrics.Mean()
    for test_x in dataset:
        loss(compute_loss(model, test_x))
    return -loss.result()


test_sample = test_images[:16]
print(which, f"epoch 0 test ELBO {float(test_elbo(model, ordered_test)):.3f}")
for epoch in range(1, 4):
    start_time = time.time()
    for train_x in ordered_train:
        train_step(model, train_x, optimizer)
    end_time = time.time()
    elbo = test_elbo(model, ordered_test)
    mean, logvar = model.encode(test_sample)
    z = model.reparameterize(mean, logvar)
    predictions = model.sample(z)
    print(
        which,
        f"epoch {epoch} test ELBO {float(elbo):.3f} mean {float(tf.reduce_mean(mean)):.5f} "
        f"logvar {float(tf.reduce_mean(logvar)):.5f} sampled {tuple(predictions.shape)} "
        f"mean {float(tf.reduce_mean(predictions)):.5f}, epoch {end_time - start_time:.2f} s",
    )

print(which, "-- the tutorial's noise, tf.random.normal (numbers may differ from here)")
trained = model
model = CVAE(LATENT_DIM)
model.set_weights(trained.get_weights())
optimizer = tf.keras.optimizers.Adam(1e-3)
# its slots made here: train_step, traced again for the new model, may not make variables
optimizer.build(model.trainable_variables)
for epoch in range(4, 6):
    for train_x in train_dataset:
        train_step(model, train_x, optimizer)
    elbo = test_elbo(model, test_dataset)
    print(which, f"epoch {epoch} test ELBO {float(elbo):.1f}")
predictions = model.sample()
print(which, "sampled from the prior", tuple(predictions.shape), predictions.dtype.name)
grid = np.stack(np.meshgrid(np.linspace(-1.5, 1.5, 4), np.linspace(-1.5, 1.5, 4)), -1)
digits = model.sample(grid.reshape(-1, 2).astype(np.float32))
print(
    which,
    "latent grid decoded",
    tuple(digits.shape),
    f"in [0, 1]: {bool(tf.reduce_all((digits >= 0) & (digits <= 1)))}",
)

x = next(iter(ordered_train))
for _ in range(3):
    train_step(model, x, optimizer)
ts = []
for _ in range(30):
    t = time.perf_counter()
    train_step(model, x, optimizer)
    ts.append(time.perf_counter() - t)
print(which, f"train step {np.median(ts) * 1e3:.2f} ms (batch {BATCH_SIZE})")
