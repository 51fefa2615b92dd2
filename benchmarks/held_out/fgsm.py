"""Held-out: TensorFlow's "Adversarial example using FGSM" tutorial, with a small "pretrained"
CNN whose weights come from numpy in place of MobileNetV2 (tracer has no keras.applications):
the image written as a PNG and read back with tf.io.read_file / tf.image.decode_image, the
tutorial's `preprocess` (tf.cast, tf.image.resize, MobileNetV2's scaling to [-1, 1] written by
hand, a batch axis) and `get_imagenet_label` (a hand-written decode_predictions over the
model's ten class names, top 1); the model frozen, `predict` on the image; the label by
tf.one_hot + tf.reshape; `create_adversarial_pattern` (tf.GradientTape with
tape.watch(input_image), CategoricalCrossentropy on the softmax output, tf.sign of the
gradient); the epsilons loop (image + eps * perturbations, tf.clip_by_value to [-1, 1]) with
each adversarial image's top class and confidence. Then the attack on a confident model (the
same network, its last layer scaled up: the image's class at a probability within 1e-7 of 1,
whose loss Keras computes from the softmax's logits, so that its gradient is not lost to the
clipping of the probabilities), and on a batch of images, eagerly and under tf.function, with
the accuracy left at each epsilon, and its step time.

Nothing here draws random numbers in either engine: the weights and images come from numpy."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
IMG, CLASSES = 32, 10
CLASS_NAMES = [
    "tabby",
    "pizza",
    "goldfish",
    "tree_frog",
    "teapot",
    "volcano",
    "daisy",
    "sports_car",
    "labrador_retriever",
    "umbrella",
]


def fmt(values, spec=".5f"):
    return " ".join(f"{float(v):{spec}}" for v in np.ravel(values))


# --- The "pretrained" model -----------------------------------------------------------------
def make_classifier():
    return tf.keras.Sequential(
        [
            tf.keras.Input(shape=(IMG, IMG, 3)),
            tf.keras.layers.Conv2D(16, 3, strides=2, padding="same", use_bias=False),
            tf.keras.layers.BatchNormalization(),
            tf.keras.layers.ReLU(6.0),
            tf.keras.layers.DepthwiseConv2D(3, padding="same"),
            tf.keras.layers.ReLU(6.0),
            tf.keras.layers.Conv2D(32, 1),
            tf.keras.layers.MaxPooling2D(),
            tf.keras.layers.Conv2D(48, 3, strides=2, padding="same", activation="relu"),
            tf.keras.layers.GlobalAveragePooling2D(),
            tf.keras.layers.Dense(CLASSES, activation="softmax", name="predictions"),
        ]
    )


pretrained_model = make_classifier()
for w in pretrained_model.weights:
    shape = tuple(w.shape)
    name = w.name.split("/")[-1].split(":")[0]
    if name == "gamma":
        value = 1.0 + 0.1 * rng.standard_normal(shape)
    elif name == "moving_variance":
        value = rng.uniform(0.5, 1.5, shape)
    elif name in ("beta", "bias", "moving_mean"):
        value = 0.1 * rng.standard_normal(shape)
    else:
        fan_in = int(np.prod(shape[:-1])) if name != "depthwise_kernel" else 9
        value = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
    w.assign(value.astype(np.float32))
pretrained_model.trainable = False
print(
    which,
    "pretrained_model",
    len(pretrained_model.layers),
    "layers",
    pretrained_model.count_params(),
    "params, trainable weights",
    len(pretrained_model.trainable_weights),
)


def decode_predictions(preds, top=5):
    """keras.applications' decode_predictions: for each row, the `top` (class id, name,
    score) tuples, best first."""
    results = []
    for pred in np.asarray(preds):
        top_indices = pred.argsort()[-top:][::-1]
        results.append([(f"n{i:08d}", CLASS_NAMES[i], pred[i]) for i in top_indices])
    return results


# Helper function to preprocess the image so that it can be inputted in the model
def preprocess(image):
    image = tf.cast(image, tf.float32)
    image = tf.image.resize(image, (IMG, IMG))
    image = image / 127.5 - 1.0  # mobilenet_v2.preprocess_input
    image = image[None, ...]
    return image


# Helper function to extract labels from probability vector
def get_imagenet_label(probs):
    return decode_predictions(probs, top=1)[0][0]


# --- The image: a 48x40 "photo" written as a PNG and read back --------------------------------
yy, xx = np.mgrid[0:48, 0:40]
photo = np.stack(
    [
        120 + 80 * np.sin(xx / 5.0),
        100 + 60 * np.cos(yy / 7.0),
        90 + 50 * np.sin((xx + yy) / 9.0),
    ],
    axis=-1,
)
photo = np.clip(photo + rng.normal(0, 15, photo.shape), 0, 255).astype(np.uint8)
image_path = os.path.join(tempfile.mkdtemp(), "YellowLabradorLooking_new.png")
tf.io.write_file(image_path, tf.io.encode_png(photo))

image_raw = tf.io.read_file(image_path)
image = tf.image.decode_image(image_raw)
print(
    which,
    "decoded",
    tuple(image.shape),
    image.dtype.name,
    int(tf.reduce_sum(tf.cast(image, tf.int32))),
)

image = preprocess(image)
image_probs = pretrained_model.predict(image, verbose=0)
_, image_class, class_confidence = get_imagenet_label(image_probs)
print(
    which,
    "image",
    tuple(image.shape),
    f"range {float(tf.reduce_min(image)):.5f} {float(tf.reduce_max(image)):.5f}",
    f"sum {float(tf.reduce_sum(image)):.4f}",
)
print(which, f"prediction: {image_class} : {class_confidence * 100:.3f}% Confidence")
print(which, "probs", fmt(image_probs))

# --- Create the adversarial image -----------------------------------------------------------
loss_object = tf.keras.losses.CategoricalCrossentropy()


def create_adversarial_pattern(input_image, input_label):
    with tf.GradientTape() as tape:
        tape.watch(input_image)
        prediction = pretrained_model(input_image)
        loss = loss_object(input_label, prediction)

    # Get the gradients of the loss w.r.t to the input image.
    gradient = tape.gradient(loss, input_image)
    # Get the sign of the gradients to create the perturbation
    signed_grad = tf.sign(gradient)
    return signed_grad


# Get the input label of the image.
labrador_retriever_index = 8
label = tf.one_hot(labrador_retriever_index, image_probs.shape[-1])
label = tf.reshape(label, (1, image_probs.shape[-1]))
print(which, "label", tuple(label.shape), label.dtype.name, fmt(label, ".0f"))

perturbations = create_adversarial_pattern(image, label)
with tf.GradientTape() as tape:
    tape.watch(image)
    loss = loss_object(label, pretrained_model(image))
gradient = tape.gradient(loss, image)
print(
    which,
    f"loss {float(loss):.6f} gradient abs sum {float(tf.reduce_sum(tf.abs(gradient))):.6f}",
    f"[0,16,16] {fmt(gradient[0, 16, 16] * 1e3)} (x1e-3)",
)
p = perturbations.numpy()
print(
    which,
    "perturbations",
    tuple(perturbations.shape),
    perturbations.dtype.name,
    "+1/-1/0:",
    int((p > 0).sum()),
    int((p < 0).sum()),
    int((p == 0).sum()),
    f"weighted sum {float((p * np.arange(p.size).reshape(p.shape) % 7).sum()):.1f}",
)

epsilons = [0, 0.01, 0.1, 0.15]
descriptions = [("Epsilon = {:0.3f}".format(eps) if eps else "Input") for eps in epsilons]

for i, eps in enumerate(epsilons):
    adv_x = image + eps * perturbations
    adv_x = tf.clip_by_value(adv_x, -1, 1)
    _, label_name, confidence = get_imagenet_label(pretrained_model.predict(adv_x, verbose=0))
    print(
        which,
        f"{descriptions[i]} \n {label_name} : {confidence * 100:.3f}% Confidence".replace(
            "\n", "|"
        ),
        f"label prob {float(pretrained_model(adv_x)[0, labrador_retriever_index]):.6f}",
        f"adv sum {float(tf.reduce_sum(adv_x)):.3f}",
    )


# --- A confident model: the same network with its last layer's weights scaled up, so that it
# gives the image's class a probability within 1e-7 of 1 (MobileNetV2 is often that sure).
# The loss of the clipped probability would have no gradient; Keras's loss starts from the
# softmax's logits, and the attack works.
confident_model = make_classifier()
confident_model.set_weights(
    [w * 300.0 if i >= len(pretrained_model.weights) - 2 else w
     for i, w in enumerate(pretrained_model.get_weights())]
)  # fmt: skip
confident_probs = confident_model.predict(image, verbose=0)
_, confident_class, confident_confidence = get_imagenet_label(confident_probs)
confident_label = tf.one_hot(int(np.argmax(confident_probs)), CLASSES)[None]
with tf.GradientTape() as tape:
    tape.watch(image)
    confident_loss = loss_object(confident_label, confident_model(image))
confident_perturbations = tf.sign(tape.gradient(confident_loss, image))
print(
    which,
    f"confident: {confident_class} 1 - p = {1 - float(np.max(confident_probs)):.3e}",
    f"loss {float(confident_loss):.3e}",
    "nonzero signs",
    int(np.count_nonzero(confident_perturbations.numpy())),
)
for eps in epsilons:
    adv_x = tf.clip_by_value(image + eps * confident_perturbations, -1, 1)
    probs = confident_model(adv_x).numpy()
    _, label_name, confidence = get_imagenet_label(probs)
    print(
        which,
        f"confident eps {eps:.3f}: {label_name} : {confidence * 100:.3f}%",
        f"label prob {float(probs[0, np.argmax(confident_probs)]):.6f}",
    )


# --- The attack on a batch: the accuracy left at each epsilon ----------------------------------
def random_photo():
    fy, fx, fd = rng.uniform(2.0, 12.0, 3)
    phase = rng.uniform(0, 2 * np.pi, 3)
    channels = [
        np.sin(xx / fx + phase[0]),
        np.cos(yy / fy + phase[1]),
        np.sin((xx - yy) / fd + phase[2]),
    ]
    scale = rng.uniform(30, 110, 3)
    base = rng.uniform(60, 190, 3)
    return np.stack([b + s * c for b, s, c in zip(base, scale, channels)], axis=-1)


batch_photos = np.stack([random_photo() for _ in range(32)])
batch_photos = np.clip(batch_photos + rng.normal(0, 10, batch_photos.shape), 0, 255)
batch_photos = batch_photos.astype(np.uint8)
images = tf.image.resize(tf.cast(batch_photos, tf.float32), (IMG, IMG)) / 127.5 - 1.0
true_classes = tf.argmax(pretrained_model(images), axis=-1)
labels = tf.one_hot(true_classes, CLASSES)
print(which, "batch classes", np.bincount(true_classes.numpy(), minlength=CLASSES).tolist())

batch_perturbations = create_adversarial_pattern(images, labels)
for eps in epsilons:
    adv = tf.clip_by_value(images + eps * batch_perturbations, -1, 1)
    probs = pretrained_model(adv)
    accuracy = float(tf.reduce_mean(tf.cast(tf.argmax(probs, axis=-1) == true_classes, tf.float32)))
    mean_true = float(tf.reduce_mean(tf.reduce_sum(probs * labels, axis=-1)))
    print(which, f"eps {eps:.3f} accuracy {accuracy:.4f} mean true-class prob {mean_true:.6f}")


@tf.function
def fgsm_step(input_image, input_label, eps):
    signed_grad = create_adversarial_pattern(input_image, input_label)
    adv = tf.clip_by_value(input_image + eps * signed_grad, -1, 1)
    return adv, pretrained_model(adv)


adv, probs = fgsm_step(images, labels, tf.constant(0.1))
eager_adv = tf.clip_by_value(images + 0.1 * batch_perturbations, -1, 1)
print(
    which,
    "tf.function eps 0.1 matches eager",
    bool(np.allclose(adv.numpy(), eager_adv.numpy(), atol=1e-6)),
    f"probs sum {float(tf.reduce_sum(probs * labels)):.5f}",
)


def timed(fn, *args, repeats=30):
    fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args)
        np.asarray(out[0] if isinstance(out, tuple) else out)
        times.append(time.perf_counter() - start)
    return np.median(times) * 1e3


eager_ms = timed(create_adversarial_pattern, images, labels)
compiled_ms = timed(fgsm_step, images, labels, tf.constant(0.1))
print(which, f"steady step: eager pattern {eager_ms:.2f} ms, tf.function step {compiled_ms:.2f} ms")
