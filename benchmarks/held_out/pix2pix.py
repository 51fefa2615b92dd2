"""Held-out: pix2pix as TensorFlow's pix2pix tutorial writes it, on small synthetic paired
32x32x3 images (a flat "label map" input, a textured "photo" target): the data pipeline's
resize (NEAREST_NEIGHBOR), random_crop (tf.stack + tf.image.random_crop), random_jitter
(tf.image.flip_left_right under a tf.random.uniform condition) and normalize, mapped over a
tf.data pipeline; the downsample/upsample Sequential helpers (Conv2D / Conv2DTranspose,
BatchNormalization, Dropout, LeakyReLU / ReLU); the U-Net generator (functional API, skip
connections with Concatenate over reversed skips); the PatchGAN discriminator (concatenate,
ZeroPadding2D); the tutorial's losses, two Adam(2e-4, beta_1=0.5), the @tf.function
train_step(input_image, target, step) with two tapes writing tf.summary scalars at
step//1000, the fit loop over train_ds.repeat().take(steps).enumerate(), and a
tf.train.Checkpoint saved and restored.

So that TF and tracer must print the same numbers: kernels come from numpy (the tutorial's
N(0, 0.02)), Dropout's rate is 0 (the tutorial's 0.5 draws each engine's own masks), the
training pipeline feeds the crop offsets and flip decisions drawn by numpy (the tutorial's
random_jitter, which draws them with tf.random, is run too and checked for what it must do),
and the dataset is not shuffled."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)

N, BUFFER_SIZE, BATCH_SIZE = 64, 64, 1
IMG_WIDTH, IMG_HEIGHT, JITTER_SIZE = 32, 32, 36
OUTPUT_CHANNELS = 3
DROPOUT = 0.0  # the tutorial's 0.5

# Paired images, 0..255 as decoded JPEGs are: the input a label map of rectangles in flat
# palette colours, the target the same rectangles with a per-class texture and noise.
palette = rng.uniform(0, 255, (6, 3))
yy, xx = np.mgrid[0:IMG_HEIGHT, 0:IMG_WIDTH]
inputs = np.empty((N, IMG_HEIGHT, IMG_WIDTH, 3), np.float32)
targets = np.empty((N, IMG_HEIGHT, IMG_WIDTH, 3), np.float32)
for i in range(N):
    labels = np.zeros((IMG_HEIGHT, IMG_WIDTH), np.int64)
    for _ in range(4):
        y0, x0 = rng.integers(0, 24, 2)
        h, w = rng.integers(4, 16, 2)
        labels[y0 : y0 + h, x0 : x0 + w] = rng.integers(1, 6)
    inputs[i] = palette[labels]
    texture = np.sin(labels[..., None] * (yy[..., None] * 0.4 + xx[..., None] * 0.7) + np.arange(3))
    targets[i] = np.clip(
        0.6 * palette[labels] + 60.0 * texture + rng.normal(0.0, 10.0, (IMG_HEIGHT, IMG_WIDTH, 3)),
        0,
        255,
    )
inputs, targets = inputs.round(), targets.round()


def resize(input_image, real_image, height, width):
    input_image = tf.image.resize(
        input_image, [height, width], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR
    )
    real_image = tf.image.resize(
        real_image, [height, width], method=tf.image.ResizeMethod.NEAREST_NEIGHBOR
    )
    return input_image, real_image


def random_crop(input_image, real_image):
    stacked_image = tf.stack([input_image, real_image], axis=0)
    cropped_image = tf.image.random_crop(stacked_image, size=[2, IMG_HEIGHT, IMG_WIDTH, 3])
    return cropped_image[0], cropped_image[1]


# Normalizing the images to [-1, 1]
def normalize(input_image, real_image):
    input_image = (input_image / 127.5) - 1
    real_image = (real_image / 127.5) - 1
    return input_image, real_image


@tf.function()
def random_jitter(input_image, real_image):
    # Resizing to 36x36 (the tutorial's 286x286)
    input_image, real_image = resize(input_image, real_image, JITTER_SIZE, JITTER_SIZE)
    # Random cropping back to 32x32
    input_image, real_image = random_crop(input_image, real_image)
    if tf.random.uniform(()) > 0.5:
        # Random mirroring
        input_image = tf.image.flip_left_right(input_image)
        real_image = tf.image.flip_left_right(real_image)
    return input_image, real_image


# The tutorial's jitter with tf.random: check that each result is a crop of the resized pair,
# mirrored or not, the same window and mirroring for input and target.
tf.random.set_seed(0)
resized_in, resized_re = resize(inputs[0], targets[0], JITTER_SIZE, JITTER_SIZE)
resized_in, resized_re = resized_in.numpy(), resized_re.numpy()
found, flips = 0, 0
for _ in range(8):
    jin, jre = random_jitter(tf.constant(inputs[0]), tf.constant(targets[0]))
    jin, jre = jin.numpy(), jre.numpy()
    for flip in (False, True):
        a, b = (jin[:, ::-1], jre[:, ::-1]) if flip else (jin, jre)
        hits = [
            (dy, dx)
            for dy in range(JITTER_SIZE - IMG_HEIGHT + 1)
            for dx in range(JITTER_SIZE - IMG_WIDTH + 1)
            if np.array_equal(resized_in[dy : dy + IMG_HEIGHT, dx : dx + IMG_WIDTH], a)
            and np.array_equal(resized_re[dy : dy + IMG_HEIGHT, dx : dx + IMG_WIDTH], b)
        ]
        if hits:
            found += 1
            flips += flip
            break
print(
    which,
    "resize 36 checksum",
    f"{resized_in.sum():.1f} {resized_re.sum():.1f} {(resized_in * np.arange(3)).sum():.1f}",
    "random_jitter crops found",
    found,
    "of 8",
)


# The training pipeline's jitter: the same resize, crop and mirroring, with the window and the
# mirroring drawn by numpy and fed in.
def fixed_jitter(input_image, real_image, offset, flip):
    input_image, real_image = resize(input_image, real_image, JITTER_SIZE, JITTER_SIZE)
    stacked_image = tf.stack([input_image, real_image], axis=0)
    cropped_image = tf.slice(
        stacked_image, [0, offset[0], offset[1], 0], [2, IMG_HEIGHT, IMG_WIDTH, 3]
    )
    input_image, real_image = cropped_image[0], cropped_image[1]
    if flip:
        input_image = tf.image.flip_left_right(input_image)
        real_image = tf.image.flip_left_right(real_image)
    return input_image, real_image


def load_image_train(input_image, real_image, offset, flip):
    input_image, real_image = fixed_jitter(input_image, real_image, offset, flip)
    input_image, real_image = normalize(input_image, real_image)
    return input_image, real_image


def load_image_test(input_image, real_image):
    input_image, real_image = resize(input_image, real_image, IMG_HEIGHT, IMG_WIDTH)
    input_image, real_image = normalize(input_image, real_image)
    return input_image, real_image


offsets = rng.integers(0, JITTER_SIZE - IMG_HEIGHT + 1, (N, 2)).astype(np.int32)
mirror = rng.random(N) > 0.5
train_dataset = tf.data.Dataset.from_tensor_slices((inputs, targets, offsets, mirror))
train_dataset = train_dataset.map(load_image_train, num_parallel_calls=tf.data.AUTOTUNE)
train_dataset = train_dataset.batch(BATCH_SIZE)

test_dataset = tf.data.Dataset.from_tensor_slices((inputs[:8], targets[:8]))
test_dataset = test_dataset.map(load_image_test)
test_dataset = test_dataset.batch(BATCH_SIZE)

first_in, first_re = next(iter(train_dataset))
print(
    which,
    "first train pair",
    first_in.shape,
    f"{float(tf.reduce_sum(first_in)):.4f} {float(tf.reduce_sum(first_re)):.4f}",
    f"{float(tf.reduce_sum(first_re * tf.range(32, dtype=tf.float32)[:, None])):.4f}",
)


def downsample(filters, size, apply_batchnorm=True):
    initializer = tf.random_normal_initializer(0.0, 0.02)

    result = tf.keras.Sequential()
    result.add(
        tf.keras.layers.Conv2D(
            filters, size, strides=2, padding="same", kernel_initializer=initializer, use_bias=False
        )
    )

    if apply_batchnorm:
        result.add(tf.keras.layers.BatchNormalization())

    result.add(tf.keras.layers.LeakyReLU())

    return result


def upsample(filters, size, apply_dropout=False):
    initializer = tf.random_normal_initializer(0.0, 0.02)

    result = tf.keras.Sequential()
    result.add(
        tf.keras.layers.Conv2DTranspose(
            filters, size, strides=2, padding="same", kernel_initializer=initializer, use_bias=False
        )
    )

    result.add(tf.keras.layers.BatchNormalization())

    if apply_dropout:
        result.add(tf.keras.layers.Dropout(DROPOUT))

    result.add(tf.keras.layers.ReLU())

    return result


inp, re = normalize(tf.constant(inputs[0]), tf.constant(targets[0]))
down_model = downsample(3, 4)
down_result = down_model(tf.expand_dims(inp, 0))
up_model = upsample(3, 4)
up_result = up_model(down_result)
print(which, "down/up shapes", tuple(down_result.shape), tuple(up_result.shape))


def Generator():
    inputs = tf.keras.layers.Input(shape=[IMG_HEIGHT, IMG_WIDTH, 3])

    down_stack = [
        downsample(16, 4, apply_batchnorm=False),  # (batch_size, 16, 16, 16)
        downsample(32, 4),  # (batch_size, 8, 8, 32)
        downsample(64, 4),  # (batch_size, 4, 4, 64)
        downsample(64, 4),  # (batch_size, 2, 2, 64)
        downsample(64, 4),  # (batch_size, 1, 1, 64)
    ]

    up_stack = [
        upsample(64, 4, apply_dropout=True),  # (batch_size, 2, 2, 128)
        upsample(64, 4, apply_dropout=True),  # (batch_size, 4, 4, 128)
        upsample(32, 4),  # (batch_size, 8, 8, 64)
        upsample(16, 4),  # (batch_size, 16, 16, 32)
    ]

    initializer = tf.random_normal_initializer(0.0, 0.02)
    last = tf.keras.layers.Conv2DTranspose(
        OUTPUT_CHANNELS,
        4,
        strides=2,
        padding="same",
        kernel_initializer=initializer,
        activation="tanh",
    )  # (batch_size, 32, 32, 3)

    x = inputs

    # Downsampling through the model
    skips = []
    for down in down_stack:
        x = down(x)
        skips.append(x)

    skips = reversed(skips[:-1])

    # Upsampling and establishing the skip connections
    for up, skip in zip(up_stack, skips):
        x = up(x)
        x = tf.keras.layers.Concatenate()([x, skip])

    x = last(x)

    return tf.keras.Model(inputs=inputs, outputs=x)


def Discriminator():
    initializer = tf.random_normal_initializer(0.0, 0.02)

    inp = tf.keras.layers.Input(shape=[IMG_HEIGHT, IMG_WIDTH, 3], name="input_image")
    tar = tf.keras.layers.Input(shape=[IMG_HEIGHT, IMG_WIDTH, 3], name="target_image")

    x = tf.keras.layers.concatenate([inp, tar])  # (batch_size, 32, 32, channels*2)

    down1 = downsample(16, 4, False)(x)  # (batch_size, 16, 16, 16)
    down2 = downsample(32, 4)(down1)  # (batch_size, 8, 8, 32)
    down3 = downsample(64, 4)(down2)  # (batch_size, 4, 4, 64)

    zero_pad1 = tf.keras.layers.ZeroPadding2D()(down3)  # (batch_size, 6, 6, 64)
    conv = tf.keras.layers.Conv2D(
        128, 4, strides=1, kernel_initializer=initializer, use_bias=False
    )(zero_pad1)  # (batch_size, 3, 3, 128)

    batchnorm1 = tf.keras.layers.BatchNormalization()(conv)

    leaky_relu = tf.keras.layers.LeakyReLU()(batchnorm1)

    zero_pad2 = tf.keras.layers.ZeroPadding2D()(leaky_relu)  # (batch_size, 5, 5, 128)

    last = tf.keras.layers.Conv2D(1, 4, strides=1, kernel_initializer=initializer)(
        zero_pad2
    )  # (batch_size, 2, 2, 1)

    return tf.keras.Model(inputs=[inp, tar], outputs=last)


generator = Generator()
discriminator = Discriminator()


def from_numpy(model):
    # Kernels from numpy, N(0, 0.02) as the tutorial's initializer; BatchNormalization's
    # gamma/beta/moving statistics and the biases as built.
    model.set_weights(
        [
            rng.normal(0.0, 0.02, w.shape).astype(np.float32) if len(w.shape) > 1 else w
            for w in model.get_weights()
        ]
    )


from_numpy(generator)
from_numpy(discriminator)
print(
    which,
    "generator",
    len(generator.layers),
    "layers",
    generator.count_params(),
    "params; discriminator",
    len(discriminator.layers),
    "layers",
    discriminator.count_params(),
    "params, output",
    tuple(discriminator.output_shape),
)

gen_output = generator(inp[tf.newaxis, ...], training=False)
disc_out = discriminator([inp[tf.newaxis, ...], gen_output], training=False)
print(
    which,
    "untrained gen_output",
    f"{float(tf.reduce_sum(gen_output)):.5f} {float(tf.reduce_sum(tf.abs(gen_output))):.5f}",
    "disc_out",
    f"{float(tf.reduce_sum(disc_out)):.6f} {float(disc_out[0, 1, 0, 0]):.6f}",
)

LAMBDA = 100
loss_object = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def generator_loss(disc_generated_output, gen_output, target):
    gan_loss = loss_object(tf.ones_like(disc_generated_output), disc_generated_output)

    # Mean absolute error
    l1_loss = tf.reduce_mean(tf.abs(target - gen_output))

    total_gen_loss = gan_loss + (LAMBDA * l1_loss)

    return total_gen_loss, gan_loss, l1_loss


def discriminator_loss(disc_real_output, disc_generated_output):
    real_loss = loss_object(tf.ones_like(disc_real_output), disc_real_output)

    generated_loss = loss_object(tf.zeros_like(disc_generated_output), disc_generated_output)

    total_disc_loss = real_loss + generated_loss

    return total_disc_loss


generator_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
discriminator_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)

checkpoint_dir = tempfile.mkdtemp()
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
checkpoint = tf.train.Checkpoint(
    generator_optimizer=generator_optimizer,
    discriminator_optimizer=discriminator_optimizer,
    generator=generator,
    discriminator=discriminator,
)


def generate_images(model, test_input, tar):
    prediction = model(test_input, training=True)
    p = prediction.numpy()
    return (
        f"sum {p.sum():.5f} abs {np.abs(p).sum():.4f} [0,16,16] "
        f"{' '.join(f'{v:.5f}' for v in p[0, 16, 16])} l1 {np.abs(p - tar.numpy()).mean():.5f}"
    )


log_dir = tempfile.mkdtemp()
summary_writer = tf.summary.create_file_writer(os.path.join(log_dir, "fit"))


@tf.function
def train_step(input_image, target, step):
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        gen_output = generator(input_image, training=True)

        disc_real_output = discriminator([input_image, target], training=True)
        disc_generated_output = discriminator([input_image, gen_output], training=True)

        gen_total_loss, gen_gan_loss, gen_l1_loss = generator_loss(
            disc_generated_output, gen_output, target
        )
        disc_loss = discriminator_loss(disc_real_output, disc_generated_output)

    generator_gradients = gen_tape.gradient(gen_total_loss, generator.trainable_variables)
    discriminator_gradients = disc_tape.gradient(disc_loss, discriminator.trainable_variables)

    generator_optimizer.apply_gradients(zip(generator_gradients, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(
        zip(discriminator_gradients, discriminator.trainable_variables)
    )

    with summary_writer.as_default():
        tf.summary.scalar("gen_total_loss", gen_total_loss, step=step // 1000)
        tf.summary.scalar("gen_gan_loss", gen_gan_loss, step=step // 1000)
        tf.summary.scalar("gen_l1_loss", gen_l1_loss, step=step // 1000)
        tf.summary.scalar("disc_loss", disc_loss, step=step // 1000)
    return gen_total_loss, gen_gan_loss, gen_l1_loss, disc_loss


step_times = []


def fit(train_ds, test_ds, steps, report_every=32, save_at=None):
    example_input, example_target = next(iter(test_ds.take(1)))
    losses = []
    for step, (input_image, target) in train_ds.repeat().take(steps).enumerate():
        if step % report_every == 0 and step > 0:
            print(
                which,
                f"step {int(step)}",
                "losses",
                " ".join(f"{v:.5f}" for v in np.mean(losses, axis=0)),
                generate_images(generator, example_input, example_target),
            )
            losses = []
        start = time.perf_counter()
        out = train_step(input_image, target, step)
        losses.append([float(v) for v in out])
        step_times.append(time.perf_counter() - start)

        # Save (checkpoint) the model
        if save_at and (step + 1) % save_at == 0:
            checkpoint.save(file_prefix=checkpoint_prefix)
    print(
        which,
        f"step {steps}",
        "losses",
        " ".join(f"{v:.5f}" for v in np.mean(losses, axis=0)),
        generate_images(generator, example_input, example_target),
    )


fit(train_dataset, test_dataset, 2 * N, save_at=2 * N)
example_input, example_target = next(iter(test_dataset.take(1)))
saved = generate_images(generator, example_input, example_target)
print(which, "optimizer iterations", int(generator_optimizer.iterations.numpy()))

# Train on, restore the checkpoint, and check that the generator is back. (Only a few steps:
# with batch 1 this GAN is chaotic past ~130 steps, where float32 rounding differences of 1e-7
# grow to 1e-3 within ten steps, in TensorFlow alone as well: a learning rate 1e-6 larger
# diverges so.)
fit(train_dataset, test_dataset, 4, report_every=100)
status = checkpoint.restore(tf.train.latest_checkpoint(checkpoint_dir))
print(
    which,
    "restored",
    generate_images(generator, example_input, example_target) == saved,
    int(generator_optimizer.iterations.numpy()),
    int(discriminator_optimizer.iterations.numpy()),
)

summary_writer.flush()
event_files = [f for _, _, files in os.walk(log_dir) for f in files if "tfevents" in f]
print(which, "event files", len(event_files))

# The compiled step on one batch, timed (the variables move on; the numbers are not printed).
first_call = step_times[0]
batch_in, batch_re = next(iter(train_dataset))
step = tf.constant(5, tf.int64)
steps = []
for _ in range(40):
    start = time.perf_counter()
    train_step(batch_in, batch_re, step)
    steps.append(time.perf_counter() - start)
print(
    which,
    f"first call (with tracing) {first_call:.2f} s, step {np.median(steps) * 1e3:.2f} ms",
)
