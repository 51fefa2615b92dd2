"""Held-out: TensorFlow's "Image segmentation" tutorial on small synthetic pets: a dataset of
dicts {'image', 'segmentation_mask'} (40x40, masks labelled 1..3) mapped by `load_image`
(tf.image.resize, bilinear for the image and NEAREST_NEIGHBOR for the mask) and `normalize`
(tf.cast, /255, mask - 1); the `Augment` layer (two RandomFlip(mode="horizontal", seed=42),
one for the inputs and one for the labels) mapped over the batches; a U-Net whose encoder is
a small frozen functional model of Conv2D/BatchNormalization/ReLU down blocks that outputs its
skips (in place of MobileNetV2, which tracer does not have), pix2pix's `upsample` blocks
(Conv2DTranspose, BatchNormalization, optional Dropout, ReLU), Concatenate skip connections
and a last Conv2DTranspose; compile with 'adam', SparseCategoricalCrossentropy from logits
over pixels and 'accuracy'; `create_mask` (tf.math.argmax(..., axis=-1)[..., tf.newaxis]);
fit with validation_data, validation_steps and a DisplayCallback; the class-weights section:
class_weight for 3-D targets (which Keras 3 accepts), a per-sample-weighted loss with
reduction "none", `add_sample_weights` (tf.gather of class weights by label) mapped over the
batches and fitted; `display` through tf.keras.utils.array_to_img.

So that TF and tracer print the same numbers: kernels come from numpy (pix2pix's N(0, 0.02)
for the upsample blocks), the compared fits run on the pipeline without Augment (its flips
draw each engine's own numbers; it is run and checked for what it must do: inputs and labels
flipped alike), and nothing is shuffled. (The decoder's numpy seed is one whose steps meet
no BatchNormalization output within float32 rounding of ReLU's kink: with seed 7 one such
output, 2e-7 in TF and -4e-8 in tracer, sends Adam on different ways from step 11.)"""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)

N_TRAIN, N_TEST, RAW = 48, 16, 40
IMG = 32
OUTPUT_CLASSES = 3
BATCH_SIZE = 8
BUFFER_SIZE = 64
STEPS_PER_EPOCH = N_TRAIN // BATCH_SIZE


def fmt(values, spec=".5f"):
    return " ".join(f"{float(v):{spec}}" for v in np.ravel(values))


# Synthetic "pets": an ellipse (class 1, the pet) with a two-pixel border (class 2) on a
# background (class 3), the pet brighter and reddish, the background textured.
def make_pets(n):
    yy, xx = np.mgrid[0:RAW, 0:RAW].astype(np.float64)
    images = np.empty((n, RAW, RAW, 3), np.uint8)
    masks = np.empty((n, RAW, RAW, 1), np.uint8)
    for i in range(n):
        cy, cx = rng.uniform(12, 28, 2)
        ry, rx = rng.uniform(8, 16, 2)
        r = np.sqrt(((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2)
        mask = np.where(r < 0.8, 1, np.where(r < 1.0, 2, 3))
        background = 60 + 40 * np.sin(xx * rng.uniform(0.2, 0.6) + yy * rng.uniform(0.1, 0.4))
        colour = rng.uniform(120, 230, 3)
        image = np.where(mask[..., None] == 3, background[..., None] * [0.6, 0.9, 1.0], colour)
        image = image + rng.normal(0, 12, (RAW, RAW, 3))
        images[i] = np.clip(image, 0, 255).astype(np.uint8)
        masks[i] = mask[..., None]
    return images, masks


train_raw = make_pets(N_TRAIN)
test_raw = make_pets(N_TEST)
dataset = {
    "train": tf.data.Dataset.from_tensor_slices(
        {"image": train_raw[0], "segmentation_mask": train_raw[1]}
    ),
    "test": tf.data.Dataset.from_tensor_slices(
        {"image": test_raw[0], "segmentation_mask": test_raw[1]}
    ),
}


def normalize(input_image, input_mask):
    input_image = tf.cast(input_image, tf.float32) / 255.0
    input_mask -= 1
    return input_image, input_mask


def load_image(datapoint):
    input_image = tf.image.resize(datapoint["image"], (IMG, IMG))
    input_mask = tf.image.resize(
        datapoint["segmentation_mask"],
        (IMG, IMG),
        method=tf.image.ResizeMethod.NEAREST_NEIGHBOR,
    )

    input_image, input_mask = normalize(input_image, input_mask)

    return input_image, input_mask


train_images = dataset["train"].map(load_image, num_parallel_calls=tf.data.AUTOTUNE)
test_images = dataset["test"].map(load_image, num_parallel_calls=tf.data.AUTOTUNE)

image, mask = next(iter(train_images))
print(
    which,
    "load_image",
    tuple(image.shape),
    image.dtype.name,
    tuple(mask.shape),
    mask.dtype.name,
    f"image sum {float(tf.reduce_sum(image)):.4f}",
    "mask classes",
    np.bincount(mask.numpy().ravel(), minlength=3).tolist(),
)


class Augment(tf.keras.layers.Layer):
    def __init__(self, seed=42):
        super().__init__()
        # both use the same seed, so they'll make the same random changes.
        self.augment_inputs = tf.keras.layers.RandomFlip(mode="horizontal", seed=seed)
        self.augment_labels = tf.keras.layers.RandomFlip(mode="horizontal", seed=seed)

    def call(self, inputs, labels):
        inputs = self.augment_inputs(inputs)
        labels = self.augment_labels(labels)
        return inputs, labels


augmented_batches = (
    train_images.cache()
    .shuffle(BUFFER_SIZE)
    .batch(BATCH_SIZE)
    .repeat()
    .map(Augment())
    .prefetch(buffer_size=tf.data.AUTOTUNE)
)

# The augmented pipeline: each image is the original or its mirror, and its mask goes with it.
plain = list(train_images.as_numpy_iterator())
by_sum = {float(np.round(x.sum(), 2)): k for k, (x, _) in enumerate(plain)}
alike, flipped, seen = 0, 0, 0
for images, masks in augmented_batches.take(3):
    for x, m in zip(images.numpy(), masks.numpy()):
        k = by_sum.get(float(np.round(x.sum(), 2)))
        if k is None:
            continue
        seen += 1
        x0, m0 = plain[k]
        if np.allclose(x, x0) and np.array_equal(m, m0):
            alike += 1
        elif np.allclose(x, x0[:, ::-1]) and np.array_equal(m, m0[:, ::-1]):
            alike += 1
            flipped += 1
print(which, "Augment: image and mask flipped alike", alike == seen == 3 * BATCH_SIZE)

# The compared pipeline: the tutorial's, less the shuffle and the augmentation.
train_batches = train_images.cache().batch(BATCH_SIZE).repeat().prefetch(tf.data.AUTOTUNE)
test_batches = test_images.batch(BATCH_SIZE)
print(which, "train_batches", train_batches.element_spec)


def upsample(filters, size, apply_dropout=False):
    """pix2pix's upsample block: Conv2DTranspose => BatchNorm => Dropout => ReLU."""
    initializer = tf.random_normal_initializer(0.0, 0.02)

    result = tf.keras.Sequential()
    result.add(
        tf.keras.layers.Conv2DTranspose(
            filters,
            size,
            strides=2,
            padding="same",
            kernel_initializer=initializer,
            use_bias=False,
        )
    )
    result.add(tf.keras.layers.BatchNormalization())
    if apply_dropout:
        result.add(tf.keras.layers.Dropout(0.5))
    result.add(tf.keras.layers.ReLU())
    return result


def downsample_block(x, filters, name):
    x = tf.keras.layers.Conv2D(filters, 3, padding="same", use_bias=False, name=f"{name}_conv")(x)
    x = tf.keras.layers.BatchNormalization(name=f"{name}_bn")(x)
    x = tf.keras.layers.ReLU(name=f"{name}_relu")(x)
    x = tf.keras.layers.Conv2D(filters, 3, strides=2, padding="same", name=f"{name}_down")(x)
    return tf.keras.layers.ReLU(name=f"{name}_out")(x)


# The "pretrained" base model, a small classifier; the encoder is the functional model of the
# inner activations the U-Net uses as skips, frozen as the tutorial freezes MobileNetV2's.
enc_in = tf.keras.layers.Input(shape=[IMG, IMG, 3])
e1 = downsample_block(enc_in, 16, "block_1")  # 16x16
e2 = downsample_block(e1, 24, "block_2")  # 8x8
e3 = downsample_block(e2, 32, "block_3")  # 4x4
e4 = downsample_block(e3, 64, "block_4")  # 2x2
features = tf.keras.layers.GlobalAveragePooling2D()(e4)
base_model = tf.keras.Model(
    inputs=enc_in, outputs=tf.keras.layers.Dense(10, name="predictions")(features), name="base"
)
# Use the activations of these layers
layer_names = ["block_1_out", "block_2_out", "block_3_out", "block_4_out"]
base_model_outputs = [base_model.get_layer(name).output for name in layer_names]

# Create the feature extraction model
down_stack = tf.keras.Model(inputs=base_model.input, outputs=base_model_outputs)


def set_from_numpy(model):
    for w in model.weights:
        shape = tuple(w.shape)
        name = w.name.split("/")[-1].split(":")[0]
        if name == "gamma":
            value = 1.0 + 0.1 * rng.standard_normal(shape)
        elif name in ("beta", "bias"):
            value = 0.05 * rng.standard_normal(shape)
        elif name == "moving_mean":
            value = 0.1 * rng.standard_normal(shape)
        elif name == "moving_variance":
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.standard_normal(shape) * np.sqrt(2.0 / np.prod(shape[:-1]))
        w.assign(value.astype(np.float32))


set_from_numpy(down_stack)
pretrained = [w.numpy() for w in down_stack.weights]
down_stack.trainable = False

up_stack = [
    upsample(64, 3),  # 2x2 -> 4x4
    upsample(32, 3),  # 4x4 -> 8x8
    upsample(24, 3),  # 8x8 -> 16x16
]


def unet_model(output_channels: int):
    inputs = tf.keras.layers.Input(shape=[IMG, IMG, 3])

    # Downsampling through the model
    skips = down_stack(inputs)
    x = skips[-1]
    skips = reversed(skips[:-1])

    # Upsampling and establishing the skip connections
    for up, skip in zip(up_stack, skips):
        x = up(x)
        concat = tf.keras.layers.Concatenate()
        x = concat([x, skip])

    # This is the last layer of the model
    last = tf.keras.layers.Conv2DTranspose(
        filters=output_channels, kernel_size=3, strides=2, padding="same"
    )  # 16x16 -> 32x32

    x = last(x)

    return tf.keras.Model(inputs=inputs, outputs=x)


def fresh_head(model):
    """The decoder's weights from numpy: N(0, 0.02) kernels as pix2pix draws them and
    BatchNormalization as built (the tutorial's up_stack is shared by every unet_model, so a
    second model starts where the first one's training left it otherwise); the encoder back to
    its "pretrained" values."""
    head_rng = np.random.default_rng(3)
    built = {"gamma": 1.0, "moving_variance": 1.0}
    for layer in up_stack:
        for w in layer.weights:
            name = w.name.split("/")[-1].split(":")[0]
            if len(w.shape) > 1:
                w.assign(head_rng.normal(0.0, 0.02, w.shape).astype(np.float32))
            else:
                w.assign(np.full(w.shape, built.get(name, 0.0), np.float32))
    last = model.layers[-1]
    last.set_weights(
        [head_rng.normal(0.0, 0.05, w.shape).astype(np.float32) for w in last.get_weights()]
    )
    for w, value in zip(down_stack.weights, pretrained):
        w.assign(value)


model = unet_model(output_channels=OUTPUT_CLASSES)
fresh_head(model)
model.compile(
    optimizer="adam",
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
print(
    which,
    "unet",
    len(model.layers),
    "layers",
    model.count_params(),
    "params,",
    len(model.trainable_weights),
    "trainable,",
    len(model.non_trainable_weights),
    "non-trainable; output",
    tuple(model.output_shape),
)


def create_mask(pred_mask):
    pred_mask = tf.math.argmax(pred_mask, axis=-1)
    pred_mask = pred_mask[..., tf.newaxis]
    return pred_mask[0]


for images, masks in train_batches.take(1):
    sample_image, sample_mask = images[0], masks[0]


def display(display_list, tag):
    """The tutorial's display, with each PIL image summed up instead of drawn."""
    title = ["Input Image", "True Mask", "Predicted Mask"]
    shown = []
    for i in range(len(display_list)):
        img = tf.keras.utils.array_to_img(display_list[i])
        shown.append(f"{title[i]}: {img.mode} {img.size} mean {np.asarray(img).mean():.4f}")
    print(which, tag, "display", "; ".join(shown))


def show_predictions(tag):
    pred = model.predict(sample_image[tf.newaxis, ...], verbose=0)
    pred_mask = create_mask(pred)
    display([sample_image, sample_mask, pred_mask], tag)
    counts = np.bincount(pred_mask.numpy().ravel(), minlength=3).tolist()
    agree = float(np.mean(pred_mask.numpy() == sample_mask.numpy()))
    print(
        which,
        tag,
        "pred_mask",
        tuple(pred_mask.shape),
        pred_mask.dtype.name,
        "classes",
        counts,
        f"agree {agree:.4f}",
        f"logits[16,16] {fmt(pred[0, 16, 16])}",
    )


show_predictions("untrained")


class DisplayCallback(tf.keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        show_predictions(f"epoch {epoch + 1}")


class StepTimer(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.times = []

    def on_train_batch_begin(self, batch, logs=None):
        self.start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.times.append(time.perf_counter() - self.start)


EPOCHS = 4
VAL_SUBSPLITS = 1
VALIDATION_STEPS = N_TEST // BATCH_SIZE // VAL_SUBSPLITS

timer = StepTimer()
model_history = model.fit(
    train_batches,
    epochs=EPOCHS,
    steps_per_epoch=STEPS_PER_EPOCH,
    validation_steps=VALIDATION_STEPS,
    validation_data=test_batches,
    callbacks=[DisplayCallback(), timer],
    verbose=0,
)
print(which, "history keys", sorted(model_history.history))
loss = model_history.history["loss"]
val_loss = model_history.history["val_loss"]
print(which, "loss", fmt(loss))
print(which, "val_loss", fmt(val_loss))
print(which, "accuracy", fmt(model_history.history["accuracy"]))
print(which, "val_accuracy", fmt(model_history.history["val_accuracy"]))
print(
    which,
    "encoder left alone",
    all(np.array_equal(w.numpy(), v) for w, v in zip(down_stack.weights, pretrained)),
)
print(
    which,
    "evaluate",
    {k: round(float(v), 5) for k, v in model.evaluate(test_batches, return_dict=True, verbose=0).items()},
)  # fmt: skip
predicted = model.predict(test_batches, verbose=0)
print(which, "predict", predicted.shape, predicted.dtype, f"{predicted.sum():.3f}")

# --- Optional: imbalanced classes and class weights ------------------------------------------
# The tutorial's text expects class_weight to be refused for 3-D targets; Keras 3 accepts it
# and weights each pixel by its class (as the sample weights below do by hand).
try:
    cw_history = model.fit(
        train_batches,
        epochs=1,
        steps_per_epoch=1,
        class_weight={0: 2.0, 1: 2.0, 2: 1.0},
        verbose=0,
    )
    print(which, "class_weight accepted, loss", fmt(cw_history.history["loss"]))
except Exception as e:
    print(which, f"class_weight refused: {type(e).__name__}")

label = np.array([0, 0])
prediction = np.array([[-3.0, 0], [-3, 0]])
sample_weight = [1, 10]

loss = tf.keras.losses.SparseCategoricalCrossentropy(
    from_logits=True, reduction=tf.keras.losses.Reduction.NONE
)
print(which, "weighted losses", fmt(loss(label, prediction, sample_weight).numpy()))


def add_sample_weights(image, label):
    # The weights for each class, with the constraint that:
    #     sum(class_weights) == 1.0
    class_weights = tf.constant([2.0, 2.0, 1.0])
    class_weights = class_weights / tf.reduce_sum(class_weights)

    # Create an image of `sample_weights` by using the label at each pixel as an
    # index into the `class weights` .
    sample_weights = tf.gather(class_weights, indices=tf.cast(label, tf.int32))

    return image, label, sample_weights


print(which, "with sample weights", train_batches.map(add_sample_weights).element_spec)

weighted_model = unet_model(OUTPUT_CLASSES)
fresh_head(weighted_model)
weighted_model.compile(
    optimizer="adam",
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
weighted_history = weighted_model.fit(
    train_batches.map(add_sample_weights),
    epochs=2,
    steps_per_epoch=STEPS_PER_EPOCH,
    verbose=0,
)
print(which, "weighted history keys", sorted(weighted_history.history))
print(which, "weighted loss", fmt(weighted_history.history["loss"]))
print(which, "weighted accuracy", fmt(weighted_history.history["accuracy"]))

# The fitted step, timed per batch (the first epoch's first step includes tracing).
steady = np.median(timer.times[STEPS_PER_EPOCH:])
print(which, f"first step {timer.times[0]:.2f} s, steady step {steady * 1e3:.2f} ms")
