"""Held-out: a DCGAN as TensorFlow's DCGAN tutorial writes it, on small synthetic 28x28x1
images: a Sequential generator (Dense without bias, BatchNormalization, LeakyReLU, Reshape,
Conv2DTranspose with strides 1 and 2), a Sequential discriminator (Conv2D strides 2,
LeakyReLU, Dropout, Flatten, Dense), BinaryCrossentropy from logits, two Adam optimizers, a
@tf.function train step with two GradientTapes, a tf.data pipeline, and a tf.train.Checkpoint
of both models and optimizers saved and restored. Weights and noise come from numpy (dropout
0), so that TF and tracer must print the same numbers."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
rng = np.random.default_rng(0)

N, BATCH_SIZE, NOISE_DIM, EPOCHS = 256, 32, 32, 3
# "Images": a bright blob at a random place on a dark ground, scaled to [-1, 1] as the tutorial does.
yy, xx = np.mgrid[0:28, 0:28]
centers = rng.uniform(7, 21, (N, 2))
blobs = np.exp(-((yy - centers[:, :1, None]) ** 2 + (xx - centers[:, 1:, None]) ** 2) / 18.0)
train_images = (blobs * 255.0 + rng.normal(0.0, 8.0, blobs.shape)).clip(0, 255)
train_images = train_images.reshape(N, 28, 28, 1).astype("float32")
train_images = (train_images - 127.5) / 127.5

train_dataset = tf.data.Dataset.from_tensor_slices(train_images).batch(BATCH_SIZE)


def make_generator_model():
    model = tf.keras.Sequential()
    model.add(layers.Dense(7 * 7 * 64, use_bias=False, input_shape=(NOISE_DIM,)))
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Reshape((7, 7, 64)))
    assert model.output_shape == (None, 7, 7, 64)

    model.add(layers.Conv2DTranspose(32, (5, 5), strides=(1, 1), padding="same", use_bias=False))
    assert model.output_shape == (None, 7, 7, 32)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(layers.Conv2DTranspose(16, (5, 5), strides=(2, 2), padding="same", use_bias=False))
    assert model.output_shape == (None, 14, 14, 16)
    model.add(layers.BatchNormalization())
    model.add(layers.LeakyReLU())

    model.add(
        layers.Conv2DTranspose(
            1, (5, 5), strides=(2, 2), padding="same", use_bias=False, activation="tanh"
        )
    )
    assert model.output_shape == (None, 28, 28, 1)
    return model


def make_discriminator_model():
    model = tf.keras.Sequential()
    model.add(layers.Conv2D(32, (5, 5), strides=(2, 2), padding="same", input_shape=[28, 28, 1]))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.0))

    model.add(layers.Conv2D(64, (5, 5), strides=(2, 2), padding="same"))
    model.add(layers.LeakyReLU())
    model.add(layers.Dropout(0.0))

    model.add(layers.Flatten())
    model.add(layers.Dense(1))
    return model


generator = make_generator_model()
discriminator = make_discriminator_model()


def from_numpy(model, scale):
    # Kernels from numpy; BatchNormalization's gamma/beta/moving statistics and biases as built.
    model.set_weights(
        [
            rng.normal(0.0, scale, w.shape).astype(np.float32) if len(w.shape) > 1 else w
            for w in model.get_weights()
        ]
    )


from_numpy(generator, 0.05)
from_numpy(discriminator, 0.05)

seed = rng.normal(size=(16, NOISE_DIM)).astype(np.float32)
generated_image = generator(tf.constant(seed[:1]), training=False)
decision = discriminator(generated_image)
print(
    which,
    "untrained decision",
    f"{float(decision[0, 0]):.5f}",
    "image mean",
    f"{float(tf.reduce_mean(generated_image[0, :, :, 0] * 127.5 + 127.5)):.4f}",
)

cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def discriminator_loss(real_output, fake_output):
    real_loss = cross_entropy(tf.ones_like(real_output), real_output)
    fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
    total_loss = real_loss + fake_loss
    return total_loss


def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)


generator_optimizer = tf.keras.optimizers.Adam(1e-4)
discriminator_optimizer = tf.keras.optimizers.Adam(1e-4)

checkpoint_dir = tempfile.mkdtemp()
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
checkpoint = tf.train.Checkpoint(
    generator_optimizer=generator_optimizer,
    discriminator_optimizer=discriminator_optimizer,
    generator=generator,
    discriminator=discriminator,
)


# Noise is an argument (drawn by numpy) rather than tf.random.normal inside, so that both
# engines see the same noise.
@tf.function
def train_step(images, noise):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated_images = generator(noise, training=True)

        real_output = discriminator(images, training=True)
        fake_output = discriminator(generated_images, training=True)

        gen_loss = generator_loss(fake_output)
        disc_loss = discriminator_loss(real_output, fake_output)

    gradients_of_generator = gen_tape.gradient(gen_loss, generator.trainable_variables)
    gradients_of_discriminator = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

    generator_optimizer.apply_gradients(zip(gradients_of_generator, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(
        zip(gradients_of_discriminator, discriminator.trainable_variables)
    )
    return gen_loss, disc_loss


def checksum(model, test_input):
    predictions = model(test_input, training=False)
    p = predictions.numpy()
    return f"sum {p.sum():.5f} abs {np.abs(p).sum():.5f} [0,14,14] {p[0, 14, 14, 0]:.5f}"


noise_rng = np.random.default_rng(1)


def train(dataset, epochs, save_every=None):
    times = []
    for epoch in range(epochs):
        start = time.perf_counter()
        gen_losses, disc_losses = [], []
        for image_batch in dataset:
            noise = noise_rng.normal(size=(BATCH_SIZE, NOISE_DIM)).astype(np.float32)
            gen_loss, disc_loss = train_step(image_batch, tf.constant(noise))
            gen_losses.append(float(gen_loss))
            disc_losses.append(float(disc_loss))
        times.append(time.perf_counter() - start)
        print(
            which,
            f"epoch {epoch + 1} gen_loss {np.mean(gen_losses):.5f}",
            f"disc_loss {np.mean(disc_losses):.5f}",
            checksum(generator, seed),
        )
        if save_every and (epoch + 1) % save_every == 0:
            checkpoint.save(file_prefix=checkpoint_prefix)
    return times


times = train(train_dataset, EPOCHS, save_every=EPOCHS)
saved = checksum(generator, seed)
print(which, "optimizer iterations", int(generator_optimizer.iterations.numpy()))

# Train on, then restore the checkpoint and train the same batches again: both runs after the
# checkpoint must print the same losses.
state = noise_rng.bit_generator.state
train(train_dataset, 1)
checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))
print(
    which,
    "restored",
    checksum(generator, seed) == saved,
    int(generator_optimizer.iterations.numpy()),
)
noise_rng.bit_generator.state = state
train(train_dataset, 1)

images = next(iter(train_dataset))
noise = tf.constant(noise_rng.normal(size=(BATCH_SIZE, NOISE_DIM)).astype(np.float32))
steps = []
for _ in range(30):
    start = time.perf_counter()
    train_step(images, noise)
    steps.append(time.perf_counter() - start)
print(
    which,
    f"first epoch (with tracing) {times[0]:.2f} s, later epoch {np.median(times[1:]) * 1e3:.1f} ms,",
    f"step {np.median(steps) * 1e3:.2f} ms",
)
