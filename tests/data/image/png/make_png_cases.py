"""Writes rgb.png, rgba.png, gray.png, rgb16.png (TensorFlow's tf.io.encode_png of numpy's
generator seeded 7) and cases.json: what TensorFlow 2.21's tf.io.decode_png gives for each
file and `channels` 0, 1, 3, 4 (the 16-bit file as uint16 and uint8), and decode_image of
rgb.png as float32. Run where TensorFlow is installed; tests/test_png.py reads them."""

import json
import os
import sys

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_png_cases.py runs where TensorFlow 2.21 is installed")

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    rng = np.random.default_rng(7)
    images = {
        "rgb": rng.integers(0, 256, (5, 7, 3), dtype=np.uint8),
        "rgba": rng.integers(0, 256, (4, 6, 4), dtype=np.uint8),
        "gray": rng.integers(0, 256, (6, 5, 1), dtype=np.uint8),
    }
    wide = rng.integers(0, 65536, (3, 4, 3), dtype=np.uint16)
    cases = {}
    for name, image in images.items():
        data = tf.io.encode_png(image).numpy()
        with open(os.path.join(HERE, f"{name}.png"), "wb") as file:
            file.write(data)
        for channels in (0, 1, 3, 4):
            cases[f"{name}/{channels}"] = tf.io.decode_png(data, channels=channels).numpy().tolist()
    data = tf.io.encode_png(wide).numpy()
    with open(os.path.join(HERE, "rgb16.png"), "wb") as file:
        file.write(data)
    cases["rgb16/uint16"] = tf.io.decode_png(data, dtype=tf.uint16).numpy().tolist()
    cases["rgb16/uint8"] = tf.io.decode_png(data).numpy().tolist()
    with open(os.path.join(HERE, "rgb.png"), "rb") as file:
        rgb = file.read()
    cases["image/float"] = tf.image.decode_image(rgb, channels=3, dtype=tf.float32).numpy().tolist()
    with open(os.path.join(HERE, "cases.json"), "w") as file:
        json.dump(cases, file)


if __name__ == "__main__":
    main()
