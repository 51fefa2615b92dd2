"""Writes tf_resize_methods.npz: TensorFlow 2.21's tf.image.resize by every method that is a
weight matrix per axis in tracer (bicubic, area, lanczos3, lanczos5, gaussian,
mitchellcubic, and bilinear with antialias), of tf_reference.npz's inputs, with the
gradients of `reduce_sum(resize(x) * weights)`, that tests/test_image.py compares
tt.image.resize with. Run once with real TensorFlow (not tracer):

    python tests/data/image/make_tf_resize_methods.py

Keys: "<method>_<antialias 0/1>_<h>_<w>__<input>" (the resized images),
"..._weights__<input>" and "..._grad__<input>" (absent where TensorFlow has no gradient:
area's, and ScaleAndTranslate's of float64 images, which it refuses).
"""

import pathlib

import numpy as np

try:
    import tensorflow as tf  # a peer, never a dependency: only this generator needs it
except ImportError:
    raise SystemExit("make_tf_resize_methods.py runs with TensorFlow installed") from None

HERE = pathlib.Path(__file__).parent
REFERENCE = np.load(HERE / "tf_reference.npz")
INPUTS = ("f32_b", "f64_u", "u8_u")
METHODS = ("bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic", "bilinear")
SIZES = ((3, 4), (9, 11), (7, 3))

rng = np.random.RandomState(11)
out = {}
for name in INPUTS:
    x = tf.constant(REFERENCE[f"in__{name}"])
    for method in METHODS:
        for antialias in (False, True):
            if method == "bilinear" and not antialias:
                continue  # tf_reference.npz has it
            for h, w in SIZES:
                key = f"{method}_{int(antialias)}_{h}_{w}"
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    resized = tf.image.resize(x, [h, w], method=method, antialias=antialias)
                    weights = rng.standard_normal(resized.shape).astype(np.float32)
                    loss = tf.reduce_sum(resized * weights)
                out[f"{key}__{name}"] = resized.numpy()
                if x.dtype.is_floating and method != "area":
                    try:  # (TensorFlow's ScaleAndTranslateGrad refuses float64 images)
                        gradient = tape.gradient(loss, x).numpy()
                    except tf.errors.InvalidArgumentError:
                        continue
                    out[f"{key}_weights__{name}"] = weights
                    out[f"{key}_grad__{name}"] = gradient
np.savez_compressed(HERE / "tf_resize_methods.npz", **out)
print(f"wrote {len(out)} arrays")
