"""Held-out: TensorFlow's "Integrated gradients" tutorial with a small CNN classifier (weights
from numpy) in place of Inception: an image made by numpy, converted and padded by tf.image,
top-k predictions, tf.linspace alphas, interpolate_images by broadcasting, compute_gradients
with a tape watching the images, integral_approximation by the trapezoidal rule, the
@tf.function batched integrated_gradients that scatters gradient batches into a
tf.TensorArray, attribution masks (reduce_sum of abs over channels) and the completeness
check: the attributions sum to f(image) - f(baseline). No random ops: TF and tracer must
print the same numbers."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
SIZE, CLASSES = 32, 10
labels = np.array([f"class_{i}" for i in range(CLASSES)])

# -- a classifier of numpy weights ---------------------------------------------------------
model = tf.keras.Sequential(
    [
        tf.keras.Input(shape=(SIZE, SIZE, 3)),
        tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Conv2D(16, 3, activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(CLASSES),
    ]
)
model.set_weights([rng.normal(0.0, 0.3, w.shape).astype(np.float32) for w in model.weights])
model.build([None, SIZE, SIZE, 3])


# -- an image: numpy's uint8 pixels, converted and padded as read_image does ---------------
def read_image(pixels):
    image = tf.image.convert_image_dtype(pixels, tf.float32)
    image = tf.image.resize_with_pad(image, target_height=SIZE, target_width=SIZE)
    return image


yy, xx = np.mgrid[0:24, 0:32]
pixels = np.stack(
    [128 + 100 * np.sin(xx / 5.0), 128 + 100 * np.cos(yy / 4.0), 255 * (xx + yy) / 56.0], axis=-1
)
pixels = np.clip(pixels + rng.normal(0, 10, pixels.shape), 0, 255).astype(np.uint8)
img = read_image(tf.constant(pixels))
print(which, "image", img.shape, img.dtype.name, f"{float(tf.reduce_sum(img)):.4f}")


def top_k_predictions(img, k=3):
    image_batch = tf.expand_dims(img, 0)
    predictions = model(image_batch)
    probs = tf.nn.softmax(predictions, axis=-1)
    top_probs, top_idxs = tf.math.top_k(input=probs, k=k)
    top_labels = labels[tuple(top_idxs)]
    return top_labels, top_probs[0]


pred_label, pred_prob = top_k_predictions(img)
for label, prob in zip(pred_label, pred_prob):
    print(which, f"{label}: {prob:0.4f}")
target_class = int(np.argmax(model(img[tf.newaxis]).numpy()))

# -- the pieces, step by step ----------------------------------------------------------------
baseline = tf.zeros(shape=(SIZE, SIZE, 3))
m_steps = 50
alphas = tf.linspace(start=0.0, stop=1.0, num=m_steps + 1)  # Generate m_steps intervals.
print(which, "alphas", alphas.shape, alphas.dtype.name, f"{float(alphas[1]):.4f}")


def interpolate_images(baseline, image, alphas):
    alphas_x = alphas[:, tf.newaxis, tf.newaxis, tf.newaxis]
    baseline_x = tf.expand_dims(baseline, axis=0)
    input_x = tf.expand_dims(image, axis=0)
    delta = input_x - baseline_x
    images = baseline_x + alphas_x * delta
    return images


interpolated_images = interpolate_images(baseline=baseline, image=img, alphas=alphas)
print(
    which,
    "interpolated",
    interpolated_images.shape,
    f"{float(tf.reduce_mean(interpolated_images)):.6f}",
)


def compute_gradients(images, target_class_idx):
    with tf.GradientTape() as tape:
        tape.watch(images)
        logits = model(images)
        probs = tf.nn.softmax(logits, axis=-1)[:, target_class_idx]
    return tape.gradient(probs, images)


path_gradients = compute_gradients(
    images=interpolated_images, target_class_idx=tf.constant(target_class)
)
print(which, "path gradients", path_gradients.shape, path_gradients.dtype.name)
pred = model(interpolated_images)
pred_proba = tf.nn.softmax(pred, axis=-1)[:, target_class]
print(which, "probability along the path", " ".join(f"{p:.5f}" for p in pred_proba.numpy()[::10]))
average_grads = tf.reduce_mean(path_gradients, axis=[1, 2, 3])
average_grads_norm = (average_grads - tf.math.reduce_min(average_grads)) / (
    tf.math.reduce_max(average_grads) - tf.reduce_min(average_grads)
)
print(
    which,
    "normalized average gradients",
    " ".join(f"{g:.5f}" for g in average_grads_norm.numpy()[::10]),
)


def integral_approximation(gradients):
    # riemann_trapezoidal
    grads = (gradients[:-1] + gradients[1:]) / tf.constant(2.0)
    integrated_gradients = tf.math.reduce_mean(grads, axis=0)
    return integrated_gradients


ig = integral_approximation(gradients=path_gradients)
print(which, "integral", ig.shape, f"{float(tf.reduce_sum(tf.abs(ig))):.5e}")


# -- all together: batched, in a tf.function ------------------------------------------------
@tf.function
def integrated_gradients(baseline, image, target_class_idx, m_steps=50, batch_size=32):
    # Generate alphas.
    alphas = tf.linspace(start=0.0, stop=1.0, num=m_steps + 1)

    # Initialize TensorArray outside loop to collect gradients.
    gradient_batches = tf.TensorArray(tf.float32, size=m_steps + 1)

    # Iterate alphas range and batch computation for speed, memory efficiency, and scaling
    # to larger m_steps.
    for alpha in tf.range(0, len(alphas), batch_size):
        from_ = alpha
        to = tf.minimum(from_ + batch_size, len(alphas))
        alpha_batch = alphas[from_:to]

        interpolated_path_input_batch = interpolate_images(
            baseline=baseline, image=image, alphas=alpha_batch
        )
        gradient_batch = compute_gradients(
            images=interpolated_path_input_batch, target_class_idx=target_class_idx
        )
        # Write batch indices and gradients to extend TensorArray.
        gradient_batches = gradient_batches.scatter(tf.range(from_, to), gradient_batch)

    # Stack path gradients together row-wise into single tensor.
    total_gradients = gradient_batches.stack()

    # Integral approximation through averaging gradients.
    avg_gradients = integral_approximation(gradients=total_gradients)

    # Scale integrated gradients with respect to input.
    integrated_gradients = (image - baseline) * avg_gradients
    return integrated_gradients


start = time.perf_counter()
ig_attributions = integrated_gradients(
    baseline=baseline, image=img, target_class_idx=target_class, m_steps=240
)
first_call = time.perf_counter() - start
print(which, "attributions", ig_attributions.shape, ig_attributions.dtype.name)
print(which, "attribution sum", f"{float(tf.reduce_sum(ig_attributions)):.6f}")

# The attribution mask sums the absolute attributions over the color channels.
attribution_mask = tf.reduce_sum(tf.math.abs(ig_attributions), axis=-1)
print(which, "mask", attribution_mask.shape, f"{float(tf.reduce_max(attribution_mask)):.6e}")
flat = attribution_mask.numpy().ravel()
print(which, "brightest pixels", np.argsort(-flat, kind="stable")[:5].tolist())
print(which, "mask row 16", " ".join(f"{v:.3e}" for v in attribution_mask.numpy()[16, ::4]))

# Completeness: the attributions add up to the difference of the model's score.
score = lambda x: tf.nn.softmax(model(x[tf.newaxis]), axis=-1)[0, target_class]  # noqa: E731
delta = float(score(img) - score(baseline))
print(
    which,
    f"f(image) - f(baseline) {delta:.6f}, sum of attributions {float(tf.reduce_sum(ig_attributions)):.6f}",
)
for steps in (25, 100):
    attributions = integrated_gradients(baseline, img, target_class, m_steps=steps)
    error = abs(float(tf.reduce_sum(attributions)) - delta)
    print(which, f"m_steps {steps}: completeness error {error:.6f}")

times = []
for _ in range(10):
    start = time.perf_counter()
    integrated_gradients(baseline, img, target_class, m_steps=240)
    times.append(time.perf_counter() - start)
print(
    which,
    f"first call {first_call:.2f} s, then integrated_gradients (241 steps) "
    f"{np.median(times) * 1e3:.1f} ms",
)
