"""Writes tf_reference.npz: the inputs and TensorFlow 2.21's outputs that tests/test_image.py
compares tt.image with. Run once with real TensorFlow (not tracer):

    python tests/data/image/make_tf_reference.py

Every key is "<case>__<input>"; the inputs are stored too ("in__<input>"), so the test does
not depend on numpy's random streams.
"""

import pathlib

import numpy as np

try:
    import tensorflow as tf  # a peer, never a dependency: only this generator needs it
except ImportError:
    raise SystemExit("make_tf_reference.py runs with TensorFlow installed") from None

rng = np.random.RandomState(7)
INPUTS = {
    "f32_b": rng.rand(2, 5, 6, 3).astype(np.float32),
    "f32_u": rng.rand(5, 6, 3).astype(np.float32),
    "f64_b": rng.rand(2, 5, 6, 3),
    "f64_u": rng.rand(5, 7, 3),
    "u8_b": rng.randint(0, 256, (2, 5, 6, 3)).astype(np.uint8),
    "u8_u": rng.randint(0, 256, (4, 7, 3)).astype(np.uint8),
    "wide_f32": (rng.rand(3, 4, 3) * 2.2 - 0.6).astype(np.float32),
    "wide_f64": rng.rand(3, 4, 3) * 2.2 - 0.6,
    "i32": np.array(
        [
            0,
            2_000_000_000,
            1_000_000_000,
            2_100_000_000,
            -5,
            7,
            123456,
            -(2**31),
            2**31 - 1,
            300,
            99,
            1,
        ],
        np.int32,
    ).reshape(2, 2, 3, 1),
    "i16": np.array(
        [-32768, -200, -1, 0, 1, 127, 128, 255, 256, 1000, 32767, 5000], np.int16
    ).reshape(2, 2, 3),
    "i8": np.array([-128, -3, -1, 0, 1, 2, 63, 64, 100, 126, 127, 5], np.int8).reshape(2, 2, 3),
    "gray_b": rng.rand(2, 4, 5, 1).astype(np.float32),
    "gray_u": rng.rand(4, 5, 1),
}
FLOATING = ["f32_b", "f32_u", "f64_b", "f64_u"]
IMAGES = FLOATING + ["u8_b", "u8_u"]
SIZES = [(3, 4), (9, 11), (5, 6), (1, 1), (2, 13), (7, 3)]

out = {f"in__{k}": v for k, v in INPUTS.items()}
im = tf.image


def put(case, key, value):
    out[f"{case}__{key}"] = np.asarray(value)


for key in IMAGES:
    x = tf.constant(INPUTS[key])
    put("flip_left_right", key, im.flip_left_right(x))
    put("flip_up_down", key, im.flip_up_down(x))
    for k in (-1, 0, 1, 2, 3, 5):
        put(f"rot90_{k}", key, im.rot90(x, k))
    put("transpose", key, im.transpose(x))
    put("crop_to_bounding_box", key, im.crop_to_bounding_box(x, 1, 2, 3, 3))
    put("pad_to_bounding_box", key, im.pad_to_bounding_box(x, 1, 2, 8, 9))
    for fraction in (0.5, 0.3, 0.77, 1.0):
        put(f"central_crop_{fraction}", key, im.central_crop(x, fraction))
    for h, w in [(3, 9), (8, 4), (5, 6), (2, 2)]:
        put(f"resize_with_crop_or_pad_{h}_{w}", key, im.resize_with_crop_or_pad(x, h, w))
    put("adjust_brightness", key, im.adjust_brightness(x, 0.1))
    put("adjust_brightness_neg", key, im.adjust_brightness(x, -0.3))
    put("adjust_contrast", key, im.adjust_contrast(x, 1.7))
    put("adjust_contrast_neg", key, im.adjust_contrast(x, -0.6))
    put("per_image_standardization", key, im.per_image_standardization(x))
    put("rgb_to_grayscale", key, im.rgb_to_grayscale(x))
    for h, w in SIZES:
        put(f"resize_bilinear_{h}_{w}", key, im.resize(x, [h, w]))
        put(f"resize_nearest_{h}_{w}", key, im.resize(x, [h, w], method="nearest"))
    for h, w in [(4, 4), (10, 3), (12, 12)]:
        put(f"resize_aspect_{h}_{w}", key, im.resize(x, [h, w], preserve_aspect_ratio=True))

for key in ["gray_b", "gray_u"]:
    put("grayscale_to_rgb", key, im.grayscale_to_rgb(tf.constant(INPUTS[key])))
    put(
        "rgb_to_grayscale_of_rgb",
        key,
        im.rgb_to_grayscale(im.grayscale_to_rgb(tf.constant(INPUTS[key]))),
    )

# per_image_standardization of a constant image: the stddev floor 1/sqrt(pixels)
put("per_image_standardization", "constant", im.per_image_standardization(tf.fill([3, 4, 2], 0.25)))

# convert_image_dtype: (input, dtype, saturate)
CONVERSIONS = [
    ("u8_b", tf.float32, False),
    ("u8_b", tf.float64, False),
    ("u8_b", tf.float16, False),
    ("u8_b", tf.int16, False),
    ("u8_b", tf.int8, False),
    ("u8_b", tf.int8, True),
    ("u8_b", tf.int32, False),
    ("u8_b", tf.uint16, False),
    ("f32_b", tf.uint8, False),
    ("f64_b", tf.uint8, False),
    ("f32_b", tf.float64, False),
    ("f64_b", tf.float32, False),
    ("f64_b", tf.float16, False),
    ("f32_b", tf.int16, False),
    ("wide_f32", tf.uint8, True),
    ("wide_f64", tf.uint8, True),
    ("wide_f32", tf.int32, True),
    ("wide_f32", tf.int8, True),
    ("wide_f64", tf.int32, True),
    ("wide_f32", tf.uint16, True),
    ("i32", tf.uint8, False),
    ("i32", tf.uint8, True),
    ("i32", tf.float32, False),
    ("i32", tf.float64, False),
    ("i32", tf.int16, True),
    ("i32", tf.int64, False),
    ("i16", tf.uint8, False),
    ("i16", tf.uint8, True),
    ("i16", tf.int32, False),
    ("i16", tf.float32, False),
    ("i8", tf.uint8, False),
    ("i8", tf.uint8, True),
    ("i8", tf.int16, False),
    ("i8", tf.float32, False),
    ("i8", tf.uint16, True),
]
for key, dtype, saturate in CONVERSIONS:
    put(
        f"convert_{dtype.name}_{saturate}",
        key,
        im.convert_image_dtype(tf.constant(INPUTS[key]), dtype, saturate=saturate),
    )

# integer images through the float adjustments (contrast_int32_saturate.py's case and more)
i32 = tf.constant(INPUTS["i32"])
put("adjust_contrast_3", "i32", im.adjust_contrast(i32, 3.0))
put("adjust_contrast_neg", "i32", im.adjust_contrast(i32, -2.0))
put("adjust_brightness", "i32", im.adjust_brightness(i32, 0.4))
put("adjust_contrast_3", "u8_b", im.adjust_contrast(tf.constant(INPUTS["u8_b"]), 3.0))
put("per_image_standardization", "i32", im.per_image_standardization(i32))

# gradients of sum(resize(x) * weights) with respect to x
for key in ["f32_b", "f64_u"]:
    x = tf.constant(INPUTS[key])
    for method in ["bilinear", "nearest"]:
        for h, w in [(3, 4), (9, 11), (7, 3)]:
            weights = (
                np.random.RandomState(h * w)
                .rand(*(x.shape[:-3] + (h, w) + x.shape[-1:]))
                .astype(np.float32)
            )
            if method == "nearest":
                weights = weights.astype(x.dtype.as_numpy_dtype)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(im.resize(x, [h, w], method=method) * weights)
            put(f"resize_{method}_grad_{h}_{w}", key, tape.gradient(y, x))
            put(f"resize_{method}_weights_{h}_{w}", key, weights)

path = pathlib.Path(__file__).with_name("tf_reference.npz")
np.savez_compressed(path, **out)
print(f"{len(out)} arrays, tensorflow {tf.__version__}, -> {path}")
