"""Generate deterministic input/output cases for Keras 3.15 image layers.

Run with a Python that has TensorFlow 2.21 and Keras 3.15.1 (CPU), from this folder:
    python make_augmentation_cases.py
It writes augmentation_cases.json beside itself (tests/test_keras_augmentation.py reads it).

Every case uses a configuration whose random draw is degenerate
(lower == upper), so the output does not depend on the RNG / seed.
Unless a case says "training": false, the output comes from
layer(x, training=True).  Entries whose "layer" is
"ops.image.affine_transform" call keras.ops.image.affine_transform
directly (which, on the TF backend, is tf.raw_ops.ImageProjectiveTransformV3).
"""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras
import numpy as np
from keras import layers

FILL_MODES = ["reflect", "wrap", "constant", "nearest"]
INTERPS = ["bilinear", "nearest"]


def arange_img(shape, dtype="float32", scale=1.0):
    n = int(np.prod(shape))
    return (np.arange(n) * scale).reshape(shape).astype(dtype)


cases = []


def layer_matrix(layer, x):
    """The 8-vector transform the layer builds (output px -> input px)."""
    t = layer.get_random_transformation(x, training=True)
    if isinstance(layer, layers.RandomRotation):
        m = t["rotation_matrix"]
    elif isinstance(layer, layers.RandomZoom):
        hw = keras.ops.concatenate([t["width_zoom"], t["height_zoom"]], 1)
        h, w = x.shape[-3], x.shape[-2]
        m = layer._get_zoom_matrix(keras.ops.cast(hw, "float32"), h, w)
    else:
        m = layer._get_translation_matrix(t["translations"])
    return np.asarray(keras.ops.convert_to_numpy(m), "float32").reshape(-1)[:8]


def tie_kind(m, x):
    """Classify .5 ties among the sampled input coordinates.

    Coordinates are computed in float32 in the same order as the TF kernel.
    Returns (exact, near): exact -> some coordinate is exactly k+0.5 (C
    round() sends it away from zero); near -> some coordinate is within 1e-4
    of k+0.5 but not equal (float32 error decides the pixel: fragile).
    """
    f = np.float32
    h, w = x.shape[-3], x.shape[-2]
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    xs, ys = xs.astype(f), ys.astype(f)
    xi = (m[0] * xs + m[1] * ys) + m[2]
    yi = (m[3] * xs + m[4] * ys) + m[5]
    c = np.concatenate([xi.ravel(), yi.ravel()]).astype(f)
    d = np.abs((c - np.floor(c)) - f(0.5))
    return bool(np.any(d == 0)), bool(np.any((d > 0) & (d < 1e-4)))


def add(layer_name, config, x, training=True, note=None):
    layer = getattr(layers, layer_name)(**config)
    y = layer(x, training=training)
    y = keras.ops.convert_to_numpy(y)
    matrix = None
    if layer_name in ("RandomRotation", "RandomZoom", "RandomTranslation"):
        matrix = layer_matrix(layer, x)
    entry = {
        "layer": layer_name,
        "config": config,
        "training": training,
        "input": x.tolist(),
        "input_dtype": str(x.dtype),
        "output": y.tolist(),
        "output_dtype": str(y.dtype),
    }
    if matrix is not None:
        entry["transform"] = [float(v) for v in matrix]
        if config.get("interpolation") == "nearest":
            exact, near = tie_kind(matrix, x)
            if exact:
                entry["exact_half_ties"] = True
            if near:
                # float32 error of cos/sin decides the rounding: fragile.
                entry["fragile_near_tie"] = True
    if note:
        entry["note"] = note
    cases.append(entry)


def add_affine(x, transform, interpolation, fill_mode, fill_value, note=None):
    y = keras.ops.image.affine_transform(
        x,
        np.asarray(transform, "float32"),
        interpolation=interpolation,
        fill_mode=fill_mode,
        fill_value=fill_value,
    )
    y = keras.ops.convert_to_numpy(y)
    entry = {
        "layer": "ops.image.affine_transform",
        "config": {
            "transform": [float(v) for v in transform],
            "interpolation": interpolation,
            "fill_mode": fill_mode,
            "fill_value": fill_value,
        },
        "input": x.tolist(),
        "input_dtype": str(x.dtype),
        "output": y.tolist(),
        "output_dtype": str(y.dtype),
    }
    if note:
        entry["note"] = note
    cases.append(entry)


# ---------------------------------------------------------------- raw sampler
# 1x1x5x1 row [0,1,2,3,4]; pure horizontal shift: input_x = output_x + t.
row = arange_img((1, 1, 5, 1))
for t in [1.5, -1.5, 7.0, -7.0, 0.5, -4.5]:
    for interp in INTERPS:
        for mode in FILL_MODES:
            add_affine(
                row,
                [1, 0, t, 0, 1, 0, 0, 0],
                interp,
                mode,
                -1.0,
                note=f"input_x = output_x + ({t}); fill_value=-1",
            )

# ------------------------------------------------------------- RandomRotation
img45 = arange_img((1, 4, 5, 1))
for mode in FILL_MODES:
    for interp in INTERPS:
        add(
            "RandomRotation",
            {"factor": [0.25, 0.25], "fill_mode": mode, "interpolation": interp},
            img45,
            note="exactly +90 degrees (counter-clockwise), 4x5 image",
        )
add(
    "RandomRotation",
    {"factor": [-0.25, -0.25], "fill_mode": "constant"},
    img45,
    note="exactly -90 degrees (clockwise)",
)
add(
    "RandomRotation",
    {"factor": [0.5, 0.5], "fill_mode": "constant", "interpolation": "nearest"},
    img45,
    note="180 degrees",
)
add(
    "RandomRotation",
    {"factor": [0.125, 0.125], "fill_mode": "constant", "fill_value": -1.0},
    img45,
    note="45 degrees, constant fill -1",
)
add(
    "RandomRotation",
    {"factor": [0.125, 0.125], "fill_mode": "reflect"},
    img45,
    note="45 degrees, reflect",
)
sq = arange_img((1, 3, 3, 1))
add(
    "RandomRotation",
    {"factor": [0.25, 0.25], "interpolation": "nearest"},
    sq,
    note="square 3x3, +90 deg: top-right pixel moves to top-left",
)
add(
    "RandomRotation",
    {"factor": [0.25, 0.25], "interpolation": "nearest"},
    arange_img((3, 3, 1)),
    note="rank-3 (unbatched) input",
)

# ----------------------------------------------------------------- RandomZoom
for mode in FILL_MODES:
    for interp in INTERPS:
        add(
            "RandomZoom",
            {"height_factor": [0.5, 0.5], "fill_mode": mode, "interpolation": interp},
            img45,
            note="zoom factor 1.5 on both axes (zoom OUT); width_factor=None -> same as height",
        )
add("RandomZoom", {"height_factor": [-0.5, -0.5]}, img45, note="zoom factor 0.5 (zoom IN)")
add(
    "RandomZoom",
    {"height_factor": [0.5, 0.5], "width_factor": [-0.25, -0.25], "fill_mode": "constant"},
    img45,
    note="height zoom 1.5, width zoom 0.75",
)

# ----------------------------------------------------------- RandomTranslation
for mode in FILL_MODES:
    for interp in INTERPS:
        add(
            "RandomTranslation",
            {
                "height_factor": [0.25, 0.25],
                "width_factor": [0.3, 0.3],
                "fill_mode": mode,
                "interpolation": interp,
            },
            img45,
            note="dy = 0.25*4 = 1 px down, dx = 0.3*5 = 1.5 px right",
        )
add(
    "RandomTranslation",
    {
        "height_factor": [-0.5, -0.5],
        "width_factor": [-0.4, -0.4],
        "fill_mode": "constant",
        "fill_value": -1.0,
    },
    img45,
    note="dy = -2 px (up), dx = -2 px (left)",
)
add(
    "RandomTranslation",
    {
        "height_factor": 0.0,
        "width_factor": [1.0, 1.0],
        "fill_mode": "wrap",
        "interpolation": "nearest",
    },
    img45,
    note="dx = +5 px = full width",
)

# ------------------------------------------------------------- RandomContrast
rgb = (np.arange(18).reshape(1, 2, 3, 3) * 7 % 23).astype("float32") * 10.0
add(
    "RandomContrast",
    {"factor": [-0.5, 0.5]},
    rgb,
    note="contrast factor exactly 1.5 (range [1-lower, 1+upper] = [1.5,1.5]);"
    " per-image per-channel mean; clip to [0,255]",
)
add(
    "RandomContrast",
    {"factor": [0.0, 0.0], "value_range": [0, 100]},
    rgb,
    note="factor exactly 1.0 -> only clipping to value_range applies",
)
add(
    "RandomContrast",
    {"factor": [-1.0, 1.0], "value_range": [0, 1]},
    (rgb / 255.0).astype("float32"),
    note="factor exactly 2.0, value_range [0,1]",
)

# ----------------------------------------------------------- RandomBrightness
add("RandomBrightness", {"factor": [0.1, 0.1]}, rgb, note="delta = 0.1*255 = 25.5, clip [0,255]")
add(
    "RandomBrightness",
    {"factor": [-0.2, -0.2], "value_range": [0, 1]},
    (rgb / 255.0).astype("float32"),
    note="delta = -0.2, clip [0,1]",
)
add(
    "RandomBrightness",
    {"factor": [0.1, 0.1]},
    rgb.astype("uint8"),
    note="uint8 input: delta 25.5 cast to uint8 (25) before adding; output stays uint8",
)

# ----------------------------------------------------------------- RandomCrop
add(
    "RandomCrop",
    {"height": 4, "width": 3},
    img45,
    note="height equals input -> deterministic centre path (h0=0,w0=1)",
)
add(
    "RandomCrop",
    {"height": 3, "width": 5},
    img45,
    note="width equals input -> deterministic path, h0=int((4-3)/2)=0",
)
add("RandomCrop", {"height": 4, "width": 5}, img45, note="same size -> identity")
add(
    "RandomCrop",
    {"height": 4, "width": 6},
    arange_img((1, 3, 3, 1)),
    note="image smaller than crop: slice is whole image, then bilinear resize (stretch) to 4x6",
)
add(
    "RandomCrop",
    {"height": 2, "width": 3},
    img45,
    training=False,
    note="inference: input returned unchanged (no crop, no resize)",
)

# ------------------------------------------------------------------- Resizing
add("Resizing", {"height": 2, "width": 3}, img45)
add("Resizing", {"height": 2, "width": 3, "interpolation": "nearest"}, img45)
add(
    "Resizing",
    {"height": 6, "width": 7},
    arange_img((1, 3, 4, 1)),
    note="upsampling, bilinear half-pixel centres",
)
add(
    "Resizing",
    {"height": 3, "width": 3, "crop_to_aspect_ratio": True},
    img45,
    note="centre 4x4 window -> 3x3",
)
add(
    "Resizing",
    {"height": 4, "width": 4, "pad_to_aspect_ratio": True, "fill_value": -1.0},
    arange_img((1, 2, 5, 1)),
    note="pad rows: top=bottom=int((5-2)/2)=1 -> 4x5, then resize to 4x4",
)
add(
    "Resizing",
    {"height": 2, "width": 3},
    arange_img((1, 4, 5, 1), "uint8", 10),
    note="uint8 in -> rounded, uint8 out",
)
add(
    "Resizing",
    {"height": 2, "width": 3},
    img45,
    training=False,
    note="applied regardless of training",
)

# ----------------------------------------------------------------- CenterCrop
add("CenterCrop", {"height": 2, "width": 3}, img45)
add(
    "CenterCrop",
    {"height": 3, "width": 2},
    img45,
    note="offsets floor((4-3)/2)=0, floor((5-2)/2)=1",
)
add(
    "CenterCrop",
    {"height": 6, "width": 3},
    img45,
    note="target taller than input -> smart_resize: crop centred 4x2 window "
    "(cols 1..2), bilinear resize to 6x3",
)
add(
    "CenterCrop",
    {"height": 2, "width": 3},
    arange_img((1, 4, 5, 1), "uint8"),
    training=False,
    note="applied regardless of training; int input -> float32 output",
)

# ------------------------------------------------------------------ Rescaling
add("Rescaling", {"scale": 0.5, "offset": -1.0}, arange_img((1, 2, 2, 1), "uint8"), training=False)

with open(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "augmentation_cases.json"), "w"
) as f:
    json.dump(cases, f, indent=1)
print(f"wrote {len(cases)} cases")
