"""Writes the interlaced (Adam7) PNG files interlaced_*.png, made by ImageMagick 6 from
pixels drawn here (numpy's generator seeded 11), and interlaced.npz: those pixels, and what
TensorFlow 2.21's tf.io.decode_png gives for each file (channels 0; uint16 for the 16-bit
one). Run where ImageMagick's `convert` and TensorFlow are installed; tests/test_png.py
reads them.

    python tests/data/image/png/make_interlaced.py
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_interlaced.py runs where TensorFlow 2.21 is installed")

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)

# name -> (pixels [h, w, c], convert's options for the output): each a PNG format whose
# passes pack differently (8 and 16 bits, a palette of 4 bits, 1 bit, passes left empty)
CASES = {
    "rgb8": (rng.integers(0, 256, (11, 13, 3)), ["PNG24:"]),
    "gray16": (rng.integers(0, 65536, (9, 5, 1)), ["-define", "png:bit-depth=16", "PNG:"]),
    "palette": (
        rng.integers(0, 256, (9, 3))[rng.integers(0, 9, (10, 7))],  # 9 colours: 4 bits
        ["-define", "png:color-type=3", "-define", "png:bit-depth=4", "PNG8:"],
    ),
    "gray1": (rng.choice([0, 255], (6, 9, 1)), ["-define", "png:bit-depth=1", "PNG:"]),
    "rgba_small": (rng.integers(0, 256, (2, 3, 4)), ["PNG32:"]),
    "gray_one_pixel": (np.array([[[77]]]), ["-define", "png:bit-depth=8", "PNG:"]),
}


def netpbm(pixels):
    """The pixels as a PAM file, which convert reads for every channel count and depth."""
    height, width, channels = pixels.shape
    wide = pixels.max() > 255
    kind = {1: "GRAYSCALE", 3: "RGB", 4: "RGB_ALPHA"}[channels]
    header = (
        f"P7\nWIDTH {width}\nHEIGHT {height}\nDEPTH {channels}\n"
        f"MAXVAL {65535 if wide else 255}\nTUPLTYPE {kind}\nENDHDR\n"
    )
    return header.encode() + pixels.astype(">u2" if wide else np.uint8).tobytes()


def main():
    arrays = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, (pixels, options) in CASES.items():
            source = os.path.join(scratch, f"{name}.pam")
            with open(source, "wb") as file:
                file.write(netpbm(pixels))
            *defines, prefix = options
            target = os.path.join(HERE, f"interlaced_{name}.png")
            subprocess.run(
                ["convert", source, "-interlace", "PNG", *defines, prefix + target], check=True
            )
            with open(target, "rb") as file:
                data = file.read()
            assert data[28] == 1, f"{name}: convert did not interlace it"
            dtype = tf.uint16 if pixels.max() > 255 else tf.uint8
            arrays[f"{name}/pixels"] = pixels.astype(dtype.as_numpy_dtype)
            arrays[f"{name}/tf"] = tf.io.decode_png(data, dtype=dtype).numpy()
    np.savez_compressed(os.path.join(HERE, "interlaced.npz"), **arrays)


if __name__ == "__main__":
    main()
