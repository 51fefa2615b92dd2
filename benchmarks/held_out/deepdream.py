"""Held-out: TensorFlow's DeepDream tutorial as written there, on a small conv net with weights
from numpy standing in for InceptionV3 (no download) and a synthetic image: a functional
tf.keras.Model whose outputs are two inner layers found with get_layer, gradient ascent on
the image in a tf.Module's @tf.function with an input_signature of unknown height and width
(a `for n in tf.range(steps)` loop around a GradientTape that watches the image, gradients
normalized by tf.math.reduce_std, tf.clip_by_value), inception_v3.preprocess_input, octaves
by tf.image.resize, and tiled gradients: the image rolled by tf.roll, a loop over the tiles
of tf.range with a tape in each, `len` of a tensor and `if` on it, and the roll undone. The
tiled run takes its shifts from numpy (through a tf.Variable) so that TF and tracer must
print the same numbers; the last run rolls by the tutorial's tf.random.uniform."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)

# The "photograph": smooth colour waves with a little noise, 48 x 64 pixels, uint8.
yy, xx = np.mgrid[0:48, 0:64]
waves = [np.sin(xx / 7.0 + c) * np.cos(yy / 5.0 - c) for c in (0.0, 1.0, 2.0)]
original_img = np.stack(waves, -1) * 100 + 128 + rng.normal(0, 10, (48, 64, 3))
original_img = original_img.clip(0, 255).astype(np.uint8)


def deprocess(img):
    img = 255 * (img + 1.0) / 2.0
    return tf.cast(img, tf.uint8)


def described(img):
    """What `show` would display, as numbers: the image's shape, mean and spread."""
    pixels = np.asarray(img, np.float64)
    return f"{pixels.shape} mean {pixels.mean():.3f} std {pixels.std():.3f}"


inputs = tf.keras.Input(shape=(None, None, 3))
h = tf.keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="conv0")(
    inputs
)
h = tf.keras.layers.Conv2D(24, 3, padding="same", activation="relu", name="mixed3")(h)
h = tf.keras.layers.MaxPooling2D(2, name="pool")(h)
h = tf.keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="mixed5")(h)
base_model = tf.keras.Model(inputs, h)
base_model.set_weights(
    [
        rng.normal(0.0, 1.5 / np.sqrt(np.prod(w.shape[:-1])), w.shape).astype(np.float32)
        if w.ndim > 1
        else rng.normal(0.0, 0.05, w.shape).astype(np.float32)
        for w in base_model.get_weights()
    ]
)

names = ["mixed3", "mixed5"]
layers = [base_model.get_layer(name).output for name in names]

dream_model = tf.keras.Model(inputs=base_model.input, outputs=layers)


def calc_loss(img, model):
    # Pass forward the image through the model to retrieve the activations.
    # Converts the image into a batch of size 1.
    img_batch = tf.expand_dims(img, axis=0)
    layer_activations = model(img_batch)
    if len(layer_activations) == 1:
        layer_activations = [layer_activations]

    losses = []
    for act in layer_activations:
        loss = tf.math.reduce_mean(act)
        losses.append(loss)

    return tf.reduce_sum(losses)


class DeepDream(tf.Module):
    def __init__(self, model):
        self.model = model

    @tf.function(
        input_signature=(
            tf.TensorSpec(shape=[None, None, 3], dtype=tf.float32),
            tf.TensorSpec(shape=[], dtype=tf.int32),
            tf.TensorSpec(shape=[], dtype=tf.float32),
        )
    )
    def __call__(self, img, steps, step_size):
        print(which, "Tracing")
        loss = tf.constant(0.0)
        for n in tf.range(steps):
            with tf.GradientTape() as tape:
                # This needs gradients relative to `img`
                # `GradientTape` only watches `tf.Variable`s by default
                tape.watch(img)
                loss = calc_loss(img, self.model)

            # Calculate the gradient of the loss with respect to the pixels of the input image.
            gradients = tape.gradient(loss, img)

            # Normalize the gradients.
            gradients /= tf.math.reduce_std(gradients) + 1e-8

            # In gradient ascent, the "loss" is maximized so that the input image increasingly
            # "excites" the layers.
            img = img + gradients * step_size
            img = tf.clip_by_value(img, -1, 1)

        return loss, img


deepdream = DeepDream(dream_model)
chunk_times = []


def run_deep_dream_simple(img, steps=100, step_size=0.01):
    # Convert from uint8 to the range expected by the model.
    img = tf.keras.applications.inception_v3.preprocess_input(img)
    img = tf.convert_to_tensor(img)
    step_size = tf.convert_to_tensor(step_size)
    steps_remaining = steps
    step = 0
    while steps_remaining:
        if steps_remaining > 100:
            run_steps = tf.constant(100)
        else:
            run_steps = tf.constant(steps_remaining)
        steps_remaining -= run_steps
        step += run_steps

        start = time.perf_counter()
        loss, img = deepdream(img, run_steps, tf.constant(step_size))
        chunk_times.append((time.perf_counter() - start) / int(run_steps))

        print(which, "Step {}, loss {:.5f}, image {}".format(step, float(loss), described(img)))

    result = deprocess(img)
    return result


print(which, "dream model outputs", [tuple(t.shape) for t in dream_model.outputs])
dream_img = run_deep_dream_simple(img=original_img, steps=150, step_size=0.01)
print(which, "dream image", dream_img.dtype.name, described(dream_img))

OCTAVE_SCALE = 1.30

img = tf.constant(np.array(original_img))
base_shape = tf.shape(img)[:-1]
float_base_shape = tf.cast(base_shape, tf.float32)

for n in range(-2, 3):
    new_shape = tf.cast(float_base_shape * (OCTAVE_SCALE**n), tf.int32)

    img = tf.image.resize(img, new_shape).numpy()

    img = run_deep_dream_simple(img=img, steps=20, step_size=0.01)

img = tf.image.resize(img, base_shape)
img = tf.image.convert_image_dtype(img / 255.0, dtype=tf.uint8)
print(which, "octaves image", img.dtype.name, described(img))
print(which, "traced", deepdream.__call__.experimental_get_tracing_count(), "time(s)")


def random_roll(img, maxroll):
    # Randomly shift the image to avoid tiled boundaries.
    shift = tf.random.uniform(shape=[2], minval=-maxroll, maxval=maxroll, dtype=tf.int32)
    img_rolled = tf.roll(img, shift=shift, axis=[0, 1])
    return shift, img_rolled


numpy_shift = tf.Variable([0, 0])


def numpy_roll(img, maxroll):
    # The shift numpy drew (into `numpy_shift`), so that both engines roll alike.
    shift = tf.identity(numpy_shift)
    img_rolled = tf.roll(img, shift=shift, axis=[0, 1])
    return shift, img_rolled


shift, img_rolled = random_roll(np.array(original_img), 16)
print(
    which,
    "rolled",
    img_rolled.dtype.name,
    described(img_rolled),
    "shift in range:",
    bool(tf.reduce_all(tf.abs(shift) <= 16)),
)


class TiledGradients(tf.Module):
    def __init__(self, model, roll=random_roll):
        self.model = model
        self.roll = roll

    @tf.function(
        input_signature=(
            tf.TensorSpec(shape=[None, None, 3], dtype=tf.float32),
            tf.TensorSpec(shape=[2], dtype=tf.int32),
            tf.TensorSpec(shape=[], dtype=tf.int32),
        )
    )
    def __call__(self, img, img_size, tile_size=512):
        shift, img_rolled = self.roll(img, tile_size)

        # Initialize the image gradients to zero.
        gradients = tf.zeros_like(img_rolled)

        # Skip the last tile, unless there's only one tile.
        xs = tf.range(0, img_size[1], tile_size)[:-1]
        if not tf.cast(len(xs), bool):
            xs = tf.constant([0])
        ys = tf.range(0, img_size[0], tile_size)[:-1]
        if not tf.cast(len(ys), bool):
            ys = tf.constant([0])

        for x in xs:
            for y in ys:
                # Calculate the gradients for this tile.
                with tf.GradientTape() as tape:
                    # This needs gradients relative to `img_rolled`.
                    # `GradientTape` only watches `tf.Variable`s by default.
                    tape.watch(img_rolled)

                    # Extract a tile out of the image.
                    img_tile = img_rolled[y : y + tile_size, x : x + tile_size]
                    loss = calc_loss(img_tile, self.model)

                # Update the image gradients for this tile.
                gradients = gradients + tape.gradient(loss, img_rolled)

        # Undo the random shift applied to the image and its gradients.
        gradients = tf.roll(gradients, shift=-shift, axis=[0, 1])

        # Normalize the gradients.
        gradients /= tf.math.reduce_std(gradients) + 1e-8

        return gradients


tile_times = []


def run_deep_dream_with_octaves(
    get_tiled_gradients,
    img,
    steps_per_octave=100,
    step_size=0.01,
    octaves=range(-2, 3),
    octave_scale=1.3,
    tile_size=512,
):
    base_shape = tf.shape(img)
    img = tf.keras.utils.img_to_array(img)
    img = tf.keras.applications.inception_v3.preprocess_input(img)

    initial_shape = img.shape[:-1]
    img = tf.image.resize(img, initial_shape)
    for octave in octaves:
        # Scale the image based on the octave
        new_size = tf.cast(tf.convert_to_tensor(base_shape[:-1]), tf.float32) * (
            octave_scale**octave
        )
        new_size = tf.cast(new_size, tf.int32)
        img = tf.image.resize(img, new_size)

        for step in range(steps_per_octave):
            numpy_shift.assign(rng.integers(-tile_size, tile_size, 2, dtype=np.int32))
            start = time.perf_counter()
            gradients = get_tiled_gradients(img, new_size, tile_size)
            tile_times.append(time.perf_counter() - start)
            img = img + gradients * step_size
            img = tf.clip_by_value(img, -1, 1)

            if step % 5 == 0:
                print(which, "Octave {}, Step {}, image {}".format(octave, step, described(img)))

    result = deprocess(img)
    return result


print(which, "-- tiled gradients, shifts from numpy")
get_tiled_gradients = TiledGradients(dream_model, roll=numpy_roll)
img = run_deep_dream_with_octaves(
    get_tiled_gradients, original_img, steps_per_octave=10, tile_size=24
)
img = tf.image.resize(img, base_shape)
img = tf.image.convert_image_dtype(img / 255.0, dtype=tf.uint8)
print(which, "tiled octaves image", img.dtype.name, described(img))

print(which, "-- tiled gradients, the tutorial's random shifts (numbers may differ from here)")
get_tiled_gradients = TiledGradients(dream_model)
img = run_deep_dream_with_octaves(
    get_tiled_gradients, original_img, steps_per_octave=2, octaves=[0], tile_size=24
)
print(which, "random-roll image", img.dtype.name, tuple(img.shape))
print(
    which,
    f"simple dream {np.median(chunk_times) * 1e3:.3f} ms a step; "
    f"tiled gradients {np.median(tile_times) * 1e3:.3f} ms a call",
)
