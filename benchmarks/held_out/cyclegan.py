"""Held-out: a small CycleGAN training step, as a TF user writes one, on two synthetic unpaired
"domains" of 32x32x3 images (smooth colour blobs; domain B is domain A's kind of image with
its colour channels mixed and shifted). Two generators G: A->B and F: B->A (functional API:
a stride-1 stem, a Conv2D stride 2 encoder, two residual blocks written as a Layer subclass,
a Conv2DTranspose stride 2 decoder, a tanh output), each normalized by an
InstanceNormalization layer subclass (learned scale/offset from add_weight, tf.nn.moments
over axes [1, 2] with keepdims); two PatchGAN discriminators (Conv2D stride 2, LeakyReLU(0.2),
instance norm, a 1-channel conv map). Least-squares adversarial losses, the cycle-consistency
L1 (weight 10) and the identity L1 (weight 5), one persistent tf.GradientTape in a
@tf.function train step, four Adam(2e-4, beta_1=0.5), each applying its own model's
gradients. Every weight is set from numpy after the models are built, so that TF and tracer
must print the same numbers. 30 steps on fixed batches of 4, then one batch of 2 (a retrace),
then the same step run eagerly (tf.config.run_functions_eagerly)."""

import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
rng = np.random.default_rng(0)

IMG, CHANNELS, BATCH, N = 32, 3, 4, 16
LAMBDA_CYCLE, LAMBDA_ID = 10.0, 5.0


# Two unpaired domains in [-1, 1]: a few soft coloured blobs on a grey ground; domain B mixes
# the channels of its own blobs and shifts them (a "colour cast").
def blobs(n):
    yy, xx = np.mgrid[0:IMG, 0:IMG]
    out = np.full((n, IMG, IMG, CHANNELS), 0.1)
    for i in range(n):
        for _ in range(3):
            cy, cx = rng.uniform(4, 28, 2)
            r = rng.uniform(3, 8)
            colour = rng.uniform(-1, 1, CHANNELS)
            mask = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
            out[i] += mask[..., None] * colour
    return out + rng.normal(0.0, 0.05, out.shape)


mix = np.array([[0.2, 0.7, 0.1], [0.1, 0.2, 0.7], [0.7, 0.1, 0.2]])
domain_a = np.tanh(blobs(N)).astype(np.float32)
domain_b = np.tanh(blobs(N) @ mix.T + np.array([0.3, -0.2, 0.1])).astype(np.float32)


class InstanceNormalization(layers.Layer):
    """Normalizes each image's channels over height and width, then scales and offsets."""

    def __init__(self, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = epsilon

    def build(self, input_shape):
        self.scale = self.add_weight(
            name="scale", shape=(input_shape[-1],), initializer="ones", trainable=True
        )
        self.offset = self.add_weight(
            name="offset", shape=(input_shape[-1],), initializer="zeros", trainable=True
        )

    def call(self, x):
        mean, variance = tf.nn.moments(x, axes=[1, 2], keepdims=True)
        normalized = (x - mean) * tf.math.rsqrt(variance + self.epsilon)
        return self.scale * normalized + self.offset


class ResidualBlock(layers.Layer):
    def __init__(self, filters, **kwargs):
        super().__init__(**kwargs)
        self.conv1 = layers.Conv2D(filters, 3, padding="same", use_bias=False)
        self.norm1 = InstanceNormalization()
        self.conv2 = layers.Conv2D(filters, 3, padding="same", use_bias=False)
        self.norm2 = InstanceNormalization()

    def call(self, x):
        h = tf.nn.relu(self.norm1(self.conv1(x)))
        h = self.norm2(self.conv2(h))
        return x + h


def make_generator(name):
    inputs = layers.Input(shape=(IMG, IMG, CHANNELS))
    x = layers.Conv2D(16, 5, padding="same", use_bias=False)(inputs)
    x = InstanceNormalization()(x)
    x = layers.ReLU()(x)
    x = layers.Conv2D(32, 3, strides=2, padding="same", use_bias=False)(x)  # 16x16x32
    x = InstanceNormalization()(x)
    x = layers.ReLU()(x)
    x = ResidualBlock(32)(x)
    x = ResidualBlock(32)(x)
    x = layers.Conv2DTranspose(16, 3, strides=2, padding="same", use_bias=False)(x)  # 32x32x16
    x = InstanceNormalization()(x)
    x = layers.ReLU()(x)
    outputs = layers.Conv2D(CHANNELS, 5, padding="same", activation="tanh")(x)
    return tf.keras.Model(inputs, outputs, name=name)


def make_discriminator(name):
    inputs = layers.Input(shape=(IMG, IMG, CHANNELS))
    x = layers.Conv2D(16, 4, strides=2, padding="same")(inputs)  # 16x16
    x = layers.LeakyReLU(0.2)(x)
    x = layers.Conv2D(32, 4, strides=2, padding="same", use_bias=False)(x)  # 8x8
    x = InstanceNormalization()(x)
    x = layers.LeakyReLU(0.2)(x)
    x = layers.Conv2D(64, 4, strides=1, padding="same", use_bias=False)(x)
    x = InstanceNormalization()(x)
    x = layers.LeakyReLU(0.2)(x)
    outputs = layers.Conv2D(1, 4, padding="same")(x)  # an 8x8 patch map of logits
    return tf.keras.Model(inputs, outputs, name=name)


generator_g = make_generator("generator_g")  # A -> B
generator_f = make_generator("generator_f")  # B -> A
discriminator_a = make_discriminator("discriminator_a")
discriminator_b = make_discriminator("discriminator_b")
models = [generator_g, generator_f, discriminator_a, discriminator_b]


def weights_from_numpy(model):
    # Kernels N(0, 0.02); instance-norm scales 1 + N(0, 0.02); offsets and biases N(0, 0.01).
    new = []
    for w in model.get_weights():
        if w.ndim > 1:
            new.append(rng.normal(0.0, 0.02, w.shape))
        elif np.all(w == 1.0):
            new.append(1.0 + rng.normal(0.0, 0.02, w.shape))
        else:
            new.append(rng.normal(0.0, 0.01, w.shape))
    model.set_weights([v.astype(np.float32) for v in new])


for model in models:
    weights_from_numpy(model)
print(
    which,
    "params",
    [model.count_params() for model in models],
    "weights",
    [len(model.trainable_variables) for model in models],
    "patch map",
    tuple(discriminator_a.output_shape),
)

sample_a = tf.constant(domain_a[:1])
untrained = generator_g(sample_a)
print(
    which,
    "untrained G(a)",
    f"{float(tf.reduce_sum(untrained)):.6g} {float(tf.reduce_sum(tf.abs(untrained))):.6g}",
    "D_B(G(a))",
    f"{float(tf.reduce_mean(discriminator_b(untrained))):.6g}",
)

mse = tf.keras.losses.MeanSquaredError()


def discriminator_loss(real, generated):
    real_loss = mse(tf.ones_like(real), real)
    generated_loss = mse(tf.zeros_like(generated), generated)
    return 0.5 * (real_loss + generated_loss)


def generator_loss(generated):
    return mse(tf.ones_like(generated), generated)


def cycle_loss(real_image, cycled_image):
    return LAMBDA_CYCLE * tf.reduce_mean(tf.abs(real_image - cycled_image))


def identity_loss(real_image, same_image):
    return LAMBDA_ID * tf.reduce_mean(tf.abs(real_image - same_image))


generator_g_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
generator_f_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
discriminator_a_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
discriminator_b_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)

traces = 0


@tf.function
def train_step(real_a, real_b):
    global traces
    traces += 1  # runs only while tracing
    with tf.GradientTape(persistent=True) as tape:
        fake_b = generator_g(real_a, training=True)
        cycled_a = generator_f(fake_b, training=True)
        fake_a = generator_f(real_b, training=True)
        cycled_b = generator_g(fake_a, training=True)

        same_a = generator_f(real_a, training=True)
        same_b = generator_g(real_b, training=True)

        disc_real_a = discriminator_a(real_a, training=True)
        disc_real_b = discriminator_b(real_b, training=True)
        disc_fake_a = discriminator_a(fake_a, training=True)
        disc_fake_b = discriminator_b(fake_b, training=True)

        total_cycle_loss = cycle_loss(real_a, cycled_a) + cycle_loss(real_b, cycled_b)
        gen_g_loss = generator_loss(disc_fake_b) + total_cycle_loss + identity_loss(real_b, same_b)
        gen_f_loss = generator_loss(disc_fake_a) + total_cycle_loss + identity_loss(real_a, same_a)
        disc_a_loss = discriminator_loss(disc_real_a, disc_fake_a)
        disc_b_loss = discriminator_loss(disc_real_b, disc_fake_b)

    pairs = [
        (gen_g_loss, generator_g, generator_g_optimizer),
        (gen_f_loss, generator_f, generator_f_optimizer),
        (disc_a_loss, discriminator_a, discriminator_a_optimizer),
        (disc_b_loss, discriminator_b, discriminator_b_optimizer),
    ]
    for loss, model, optimizer in pairs:
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    del tape
    return gen_g_loss, gen_f_loss, disc_a_loss, disc_b_loss


def fmt(losses):
    return " ".join(f"{float(v):.6g}" for v in losses)


batches = [
    (tf.constant(domain_a[i : i + BATCH]), tf.constant(domain_b[i : i + BATCH]))
    for i in range(0, N, BATCH)
]
step_times = []
for step in range(30):
    real_a, real_b = batches[step % len(batches)]
    start = time.perf_counter()
    losses = train_step(real_a, real_b)
    losses = [float(v) for v in losses]
    step_times.append(time.perf_counter() - start)
    if step in (0, 1, 10, 29):
        print(
            which,
            f"step {step:2d} G {losses[0]:.6g} F {losses[1]:.6g} "
            f"D_A {losses[2]:.6g} D_B {losses[3]:.6g}",
        )
print(which, "traces after 30 steps", traces, "iterations", int(generator_g_optimizer.iterations))

# A batch of 2: a new input shape, so a second trace.
start = time.perf_counter()
losses = train_step(tf.constant(domain_a[:2]), tf.constant(domain_b[-2:]))
losses = [float(v) for v in losses]
retrace_time = time.perf_counter() - start
print(which, "batch of 2:", fmt(losses), "traces", traces, f"({retrace_time:.2f} s)")

test_a = tf.constant(domain_a[-1:])
fake = generator_g(test_a, training=False).numpy()
back = generator_f(fake, training=False).numpy()
print(
    which,
    "G(a) checksum",
    f"sum {fake.sum():.6g} abs {np.abs(fake).sum():.6g} [0,16,16] "
    + " ".join(f"{v:.6g}" for v in fake[0, 16, 16]),
    f"cycle L1 {np.abs(back - domain_a[-1:]).mean():.6g}",
)
weight_sum = sum(float(tf.reduce_sum(v)) for m in models for v in m.trainable_variables)
print(which, "sum of all weights", f"{weight_sum:.6g}")

# Steady compiled step (batch of 4, no retrace).
timed = []
for i in range(20):
    real_a, real_b = batches[i % len(batches)]
    start = time.perf_counter()
    out = train_step(real_a, real_b)
    float(out[0])
    timed.append(time.perf_counter() - start)

# The same step, eagerly.
tf.config.run_functions_eagerly(True)
eager_times = []
for i in range(3):
    real_a, real_b = batches[i % len(batches)]
    start = time.perf_counter()
    losses = train_step(real_a, real_b)
    losses = [float(v) for v in losses]
    eager_times.append(time.perf_counter() - start)
tf.config.run_functions_eagerly(False)
print(which, "eager step losses", fmt(losses), "traces", traces)

print(
    which,
    f"first call (with tracing) {step_times[0]:.2f} s, "
    f"compiled step median {np.median(step_times[1:] + timed) * 1e3:.2f} ms, "
    f"eager step {np.median(eager_times) * 1e3:.1f} ms",
)
