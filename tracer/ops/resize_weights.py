"""The weights of TensorFlow's separable image resizes, as (out, in) matrices per axis.

tf.image.resize's methods other than bilinear and nearest each compute an output pixel as
a weighted sum of input pixels whose weights are a product of one weight per axis, known
from the sizes alone. So each axis's weights form a matrix W (new size x old size), and
the resize is W_h . image . W_w^T, two products that `image_ops.resize` makes with tracer's
einsum: every backend, and gradients of every order (the adjoint products), follow.

- "bicubic": ResizeBicubic with half-pixel centres: Keys' cubic (a = -0.5) at four taps
  around (out + 0.5) * in / out - 0.5, its offset rounded to 1/1024 (TensorFlow reads a
  table of 1,025 entries), taps outside the image weighted 0 and the rest renormalized.
- "area": ResizeArea: the input cells an output cell covers, each by the length it covers,
  divided by the cell's length in input pixels.
- "lanczos3", "lanczos5", "gaussian", "mitchellcubic", and bilinear ("triangle") and
  bicubic ("keyscubic") with antialias: ScaleAndTranslate with that kernel, centred at
  (out + 0.5) * in / out, its support widened by in / out when antialias shrinks an image;
  the taps inside the image, renormalized.

Weights are float32, computed as TensorFlow's C++ computes them where the rounding shows
(the scale, the sample position, the 1/1024 table).
"""

import math

import numpy as np

_TABLE_SIZE = 1024  # ResizeBicubic's entries per unit of offset
_TINY = 1000.0 * np.finfo(np.float32).tiny  # below it, a sum of weights is not divided by


def _keys_cubic(x):
    x = abs(x)
    if x >= 2.0:
        return 0.0
    if x >= 1.0:
        return ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return ((1.5 * x - 2.5) * x) * x + 1.0


def _mitchell_cubic(x):
    x = abs(x)
    if x >= 2.0:
        return 0.0
    if x >= 1.0:
        return (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
    return (((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0


def _lanczos(radius):
    def kernel(x):
        x = abs(x)
        if x > radius:
            return 0.0
        if x <= 1e-3:
            return 1.0
        return radius * math.sin(math.pi * x) * math.sin(math.pi * x / radius) / (math.pi * x) ** 2

    return kernel, radius


def _gaussian(x, radius=1.5, sigma=0.5):
    x = abs(x)
    return 0.0 if x >= radius else math.exp(-x * x / (2.0 * sigma * sigma))


def _triangle(x):
    x = abs(x)
    return 1.0 - x if x < 1.0 else 0.0


# ScaleAndTranslate's kernels: (function, radius)
KERNELS = {
    "lanczos3": _lanczos(3.0),
    "lanczos5": _lanczos(5.0),
    "gaussian": (_gaussian, 1.5),
    "mitchellcubic": (_mitchell_cubic, 2.0),
    "keyscubic": (_keys_cubic, 2.0),
    "triangle": (_triangle, 1.0),
}


def scale_and_translate(kernel_name, in_size, out_size, antialias):
    """ScaleAndTranslate's weights (translation 0) for one axis."""
    kernel, radius = KERNELS[kernel_name]
    scale = np.float32(out_size) / np.float32(in_size)
    inverse = np.float32(1.0 / float(scale))
    kernel_scale = max(float(inverse), 1.0) if antialias else 1.0
    weights = np.zeros((out_size, in_size), dtype=np.float32)
    for out in range(out_size):
        sample = np.float32(np.float32(out + 0.5) * inverse)
        if sample < 0 or sample > in_size:
            continue
        reach = np.float32(radius * kernel_scale)
        start = int(math.ceil(np.float32(sample - reach - np.float32(0.5))))
        end = int(math.floor(np.float32(sample + reach - np.float32(0.5))))
        start, end = min(max(start, 0), in_size - 1), min(max(end, 0), in_size - 1) + 1
        taps = np.float32(
            [kernel(abs(float(np.float32(np.float32(k + 0.5) - sample)) / kernel_scale))
             for k in range(start, end)]
        )  # fmt: skip
        total = taps.sum(dtype=np.float32)
        if abs(total) >= _TINY:
            weights[out, start:end] = taps * np.float32(1.0 / total)
    return weights


def _cubic_table():
    """ResizeBicubic's table (Keys' a = -0.5): entry i holds the weights of the taps at
    distances i / 1024 and 1 + i / 1024."""
    a = -0.5
    near, far = [], []
    for i in range(_TABLE_SIZE + 1):
        x = float(np.float32(i / _TABLE_SIZE))  # a float, the polynomials in doubles
        near.append(((a + 2) * x - (a + 3)) * x * x + 1)
        x = float(np.float32(x + 1.0))
        far.append(((a * x - 5 * a) * x + 8 * a) * x - 4 * a)
    return np.float32(near), np.float32(far)


def bicubic(in_size, out_size):
    """ResizeBicubic's weights (half-pixel centres) for one axis."""
    near, far = _cubic_table()
    scale = np.float32(in_size) / np.float32(out_size)
    weights = np.zeros((out_size, in_size), dtype=np.float32)
    for out in range(out_size):
        position = np.float32(np.float32(out + 0.5) * scale - np.float32(0.5))
        base = int(math.floor(position))
        offset = int(np.rint(np.float32(np.float32(position - base) * _TABLE_SIZE)))
        taps = (base - 1, base, base + 1, base + 2)
        table = (far[offset], near[offset], near[_TABLE_SIZE - offset], far[_TABLE_SIZE - offset])
        inside = [(k, w) for k, w in zip(taps, table) if 0 <= k < in_size]
        total = np.float32(sum(w for _, w in inside))
        factor = np.float32(1.0) / total if abs(total) >= _TINY else np.float32(1.0)
        for k, w in inside:
            weights[out, k] += np.float32(w * factor)
    return weights


def area(in_size, out_size):
    """ResizeArea's weights for one axis."""
    scale = np.float32(in_size) / np.float32(out_size)
    weights = np.zeros((out_size, in_size), dtype=np.float32)
    for out in range(out_size):
        low, high = np.float32(out * scale), np.float32((out + 1) * scale)
        for k in range(int(math.floor(low)), int(math.ceil(high))):
            if k < low:
                covered = scale if k + 1 > high else np.float32(k + 1 - low)
            else:
                covered = np.float32(high - k) if k + 1 > high else np.float32(1.0)
            weights[out, min(k, in_size - 1)] += np.float32(covered / scale)  # (as TF's bound)
    return weights


def weights(method, in_size, out_size, antialias):
    """The (out_size, in_size) float32 weights of `method` along one axis."""
    if method == "area":
        return area(in_size, out_size)
    if method == "bicubic":
        if antialias:
            return scale_and_translate("keyscubic", in_size, out_size, True)
        return bicubic(in_size, out_size)
    if method == "bilinear":  # only with antialias: without, image_ops' own two gathers
        return scale_and_translate("triangle", in_size, out_size, True)
    return scale_and_translate(method, in_size, out_size, antialias)
