"""Held-out: `tf.image` and a few `tf.signal` ops on small seeded images and signals:
resizing by every method (with and without antialiasing, up and down, keeping the aspect
ratio), cropping and padding, crop_and_resize with boxes that leave the image, patches,
flips and rotations, colour adjustments and colour-space conversions, dtype conversion,
standardisation, gradients and edge filters, quality measures (total variation, PSNR,
SSIM), non-max suppression, frames, short-time Fourier transforms and their inverse,
windows, real FFTs, DCTs, mel filterbanks and MFCCs; plus the GradientTape gradient of a
few of them. Ops that draw random numbers are checked for their shapes alone.

Each case runs eagerly and inside tf.function (tracer: once per backend, C and the numpy
interpreter), taking its tensors as arguments, and prints one line per result and mode:
`case [mode] dtype shape values` (every value to 5 significant digits for small results;
sum, min, max and a few evenly spaced entries for big ones) or `case [mode] ERR TypeName:
message`, so the two engines' outputs can be compared line by line. An optional second
argument keeps only the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

CASES = []
SMALL = 48  # results with at most this many entries are printed whole

# ---- seeded inputs ---------------------------------------------------------------------------
_rng = np.random.RandomState(2024)
IMG = _rng.uniform(0.0, 1.0, (1, 5, 7, 3)).astype(np.float32)  # odd sizes, one image
PAIR = _rng.uniform(0.0, 1.0, (2, 6, 4, 3)).astype(np.float32)  # even sizes, two images
IMG8 = np.round(IMG * 255.0).astype(np.uint8)
PAIR8 = np.round(PAIR * 255.0).astype(np.uint8)
ONE = IMG[0]  # a single [h, w, c] image
NOISY = np.clip(PAIR + _rng.normal(0.0, 0.1, PAIR.shape), 0.0, 1.0).astype(np.float32)
BIG = _rng.uniform(0.0, 1.0, (1, 24, 24, 1)).astype(np.float32)
BIG_NOISY = np.clip(BIG + _rng.normal(0.0, 0.05, BIG.shape), 0.0, 1.0).astype(np.float32)
GRAY = _rng.uniform(0.0, 1.0, (1, 4, 5, 1)).astype(np.float32)
WAVE = (
    np.sin(np.arange(64) * 0.37) + 0.3 * np.cos(np.arange(64) * 1.3) + _rng.normal(0, 0.1, 64)
).astype(np.float32)
LOGMEL = _rng.normal(0.0, 1.0, (3, 8)).astype(np.float32)


def case(name, *inputs):
    """Registers `fn(*tensors)`; each input is a numpy array (made a tensor of its dtype)."""

    def register(fn):
        CASES.append((name, fn, inputs))
        return fn

    return register


def _num(x):
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (complex, np.complexfloating)):
        return f"{_num(float(x.real))}{'+' if x.imag >= 0 else ''}{_num(float(x.imag))}j"
    x = float(x)
    if x == 0.0:
        return "0"  # -0.0 and 0.0 alike: the sign of a zero is no concern here
    return f"{x:.5g}"


def render(v):
    a = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
    name = v.dtype.name if hasattr(v, "dtype") and hasattr(v.dtype, "name") else a.dtype.name
    a = np.asarray(a)
    if a.dtype.kind in "OSU":  # strings
        texts = [x.decode() if isinstance(x, bytes) else str(x) for x in a.ravel()]
        return f"{name} {tuple(a.shape)} {texts}"
    flat = a.ravel()
    if flat.size <= SMALL:
        body = " ".join(_num(x) for x in flat)
    else:
        wide = flat.astype(np.complex128 if np.iscomplexobj(flat) else np.float64)
        picks = np.linspace(0, flat.size - 1, 8).round().astype(int)
        summary = [_num(wide.sum()), _num(np.abs(wide).sum())]
        if not np.iscomplexobj(flat):
            summary += [_num(wide.min()), _num(wide.max())]
        samples = " ".join(_num(flat[i]) for i in picks)
        body = "sum/abs/min/max " + " ".join(summary) + " | " + samples
    return f"{name} {tuple(a.shape)} [{body}]"


def run_case(name, fn, inputs):
    args = [tf.constant(x) for x in inputs]
    for mode, wrap in MODES:
        try:
            f = fn if wrap is None else wrap(fn)
            out = f(*args)
            results = out if isinstance(out, (tuple, list)) else (out,)
            texts = [render(r) for r in results]
        except Exception as e:  # report it and go on
            texts = [failure(e)]
        for i, text in enumerate(texts):
            suffix = f"#{i}" if len(texts) > 1 else ""
            print(f"{name}{suffix} [{mode}] {text}", flush=True)


def resize_case(name, images, size, method, antialias=False, preserve=False):
    case(name, images)(
        lambda x: tf.image.resize(
            x, size, method=method, antialias=antialias, preserve_aspect_ratio=preserve
        )
    )


# ---- resize ----------------------------------------------------------------------------------
resize_case("resize_bilinear_up", IMG, [8, 10], "bilinear")
resize_case("resize_bilinear_down", IMG, [3, 4], "bilinear")
resize_case("resize_bilinear_down_aa", IMG, [3, 4], "bilinear", antialias=True)
resize_case("resize_bilinear_up_aa", PAIR, [9, 5], "bilinear", antialias=True)
resize_case("resize_nearest_up", IMG, [8, 10], "nearest")
resize_case("resize_nearest_down_aa", PAIR, [4, 3], "nearest", antialias=True)
resize_case("resize_bicubic_up", IMG, [7, 9], "bicubic")
resize_case("resize_bicubic_down_aa", IMG, [3, 4], "bicubic", antialias=True)
resize_case("resize_area_down", PAIR, [3, 2], "area")
resize_case("resize_area_up", IMG, [6, 9], "area")
resize_case("resize_lanczos3_down", IMG, [3, 5], "lanczos3")
resize_case("resize_lanczos5_up_aa", IMG, [6, 8], "lanczos5", antialias=True)
resize_case("resize_gaussian_down", PAIR, [4, 3], "gaussian")
resize_case("resize_mitchellcubic_up", IMG, [6, 10], "mitchellcubic")
resize_case("resize_preserve_aspect", IMG, [4, 4], "bilinear", preserve=True)
resize_case("resize_preserve_aspect_up", PAIR, [12, 12], "nearest", preserve=True)
resize_case("resize_uint8_bilinear", IMG8, [3, 9], "bilinear")
resize_case("resize_uint8_nearest", IMG8, [3, 9], "nearest")
resize_case("resize_rank3", ONE, [2, 3], "bilinear")
resize_case("resize_same_size", IMG, [5, 7], "bilinear")

# ---- crops and pads -----------------------------------------------------------------------
case("resize_with_pad", PAIR)(lambda x: tf.image.resize_with_pad(x, 5, 5))
case("resize_with_pad_nearest", IMG)(lambda x: tf.image.resize_with_pad(x, 8, 4, method="nearest"))
case("resize_with_crop_or_pad", IMG)(lambda x: tf.image.resize_with_crop_or_pad(x, 8, 4))
case("resize_with_crop_or_pad_u8", PAIR8)(lambda x: tf.image.resize_with_crop_or_pad(x, 3, 7))
case("central_crop", IMG)(lambda x: (tf.image.central_crop(x, 0.5), tf.image.central_crop(x, 0.8)))
case("central_crop_rank3", ONE)(lambda x: tf.image.central_crop(x, 0.34))
case("crop_to_bounding_box", PAIR)(lambda x: tf.image.crop_to_bounding_box(x, 1, 2, 3, 2))
case("pad_to_bounding_box", IMG8)(lambda x: tf.image.pad_to_bounding_box(x, 1, 2, 7, 10))

BOXES = np.array(
    [[0.0, 0.0, 1.0, 1.0], [0.2, 0.1, 0.7, 0.9], [-0.3, 0.5, 0.6, 1.4], [0.8, 0.9, 0.1, 0.2]],
    np.float32,
)
BOX_INDEX = np.array([0, 1, 0, 1], np.int32)
case("crop_and_resize_bilinear", PAIR, BOXES, BOX_INDEX)(
    lambda x, b, i: tf.image.crop_and_resize(x, b, i, [3, 2], extrapolation_value=-1.0)
)
case("crop_and_resize_nearest", PAIR, BOXES, BOX_INDEX)(
    lambda x, b, i: tf.image.crop_and_resize(x, b, i, [2, 3], method="nearest")
)
case("crop_and_resize_one_pixel", IMG8, BOXES[:2], np.array([0, 0], np.int32))(
    lambda x, b, i: tf.image.crop_and_resize(x, b, i, [1, 1])
)

# ---- patches, flips, rotations --------------------------------------------------------------
case("extract_patches_valid", IMG)(
    lambda x: tf.image.extract_patches(x, [1, 2, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], "VALID")
)
case("extract_patches_same_rates", PAIR)(
    lambda x: tf.image.extract_patches(x, [1, 2, 2, 1], [1, 3, 1, 1], [1, 2, 2, 1], "SAME")
)
case("flips", IMG)(lambda x: (tf.image.flip_left_right(x), tf.image.flip_up_down(x)))
case("flips_rank3_u8", IMG8[0])(
    lambda x: (tf.image.flip_left_right(x)[0], tf.image.flip_up_down(x)[:, 0])
)
case("rot90", PAIR)(lambda x: tuple(tf.image.rot90(x, k) for k in (1, 2, 3)))
case("rot90_rank3_neg", ONE)(lambda x: (tf.image.rot90(x, -1), tf.image.rot90(x, 4)))
case("transpose", PAIR)(lambda x: tf.image.transpose(x))

# ---- colour ---------------------------------------------------------------------------------
case("adjust_brightness", IMG, IMG8)(
    lambda x, u: (tf.image.adjust_brightness(x, 0.3), tf.image.adjust_brightness(u, -0.2))
)
case("adjust_contrast", PAIR, PAIR8)(
    lambda x, u: (tf.image.adjust_contrast(x, 1.7), tf.image.adjust_contrast(u, 0.4))
)
case("adjust_saturation", IMG, IMG8)(
    lambda x, u: (tf.image.adjust_saturation(x, 1.8), tf.image.adjust_saturation(u, 0.3))
)
case("adjust_hue", IMG, IMG8)(
    lambda x, u: (tf.image.adjust_hue(x, 0.2), tf.image.adjust_hue(u, -0.45))
)
case("adjust_gamma", IMG, IMG8)(
    lambda x, u: (tf.image.adjust_gamma(x, 2.2, 0.9), tf.image.adjust_gamma(u, 0.5))
)
case("rgb_to_grayscale", IMG, IMG8)(
    lambda x, u: (tf.image.rgb_to_grayscale(x), tf.image.rgb_to_grayscale(u))
)
case("grayscale_to_rgb", GRAY)(lambda g: tf.image.grayscale_to_rgb(g))
HSV_EDGE = np.array(
    [[[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.5, 0.5], [0, 0, 0], [1, 1, 0.999]]],
    np.float32,
)
case("rgb_to_hsv_edges", HSV_EDGE)(lambda x: tf.image.rgb_to_hsv(x))
case("rgb_hsv_round_trip", IMG)(
    lambda x: (tf.image.rgb_to_hsv(x), tf.image.hsv_to_rgb(tf.image.rgb_to_hsv(x)) - x)
)
case("rgb_yuv_round_trip", IMG)(
    lambda x: (tf.image.rgb_to_yuv(x), tf.image.yuv_to_rgb(tf.image.rgb_to_yuv(x)) - x)
)
case("rgb_to_yiq", IMG)(lambda x: tf.image.rgb_to_yiq(x))

# ---- dtypes and statistics ----------------------------------------------------------------
OUT_OF_RANGE = np.array([-0.5, 0.0, 0.2, 0.5, 0.998, 1.0, 1.7], np.float32)
case("convert_u8_to_f32", IMG8)(lambda u: tf.image.convert_image_dtype(u, tf.float32))
case("convert_f32_to_u8", OUT_OF_RANGE)(
    lambda x: (
        tf.image.convert_image_dtype(x, tf.uint8),
        tf.image.convert_image_dtype(x, tf.uint8, saturate=True),
    )
)
case("convert_f32_to_i16", OUT_OF_RANGE)(
    lambda x: tf.image.convert_image_dtype(x, tf.int16, saturate=True)
)
case("convert_u8_to_i32_to_u8", np.array([0, 1, 127, 128, 255], np.uint8))(
    lambda u: (
        tf.image.convert_image_dtype(u, tf.int32),
        tf.image.convert_image_dtype(tf.image.convert_image_dtype(u, tf.int32), tf.uint8),
        tf.image.convert_image_dtype(u, tf.float64),
    )
)
case("per_image_standardization", PAIR, IMG8)(
    lambda x, u: (tf.image.per_image_standardization(x), tf.image.per_image_standardization(u))
)
case("per_image_standardization_flat", np.full((3, 3, 2), 0.25, np.float32))(
    lambda x: tf.image.per_image_standardization(x)
)
case("image_gradients", IMG)(lambda x: tf.image.image_gradients(x))
case("sobel_edges", PAIR)(lambda x: tf.image.sobel_edges(x))
case("total_variation", PAIR, ONE)(
    lambda x, y: (tf.image.total_variation(x), tf.image.total_variation(y))
)
case("psnr", PAIR, NOISY, PAIR8)(
    lambda x, y, u: (
        tf.image.psnr(x, y, 1.0),
        tf.image.psnr(x, x, 1.0),
        tf.image.psnr(u, tf.image.flip_left_right(u), 255),
    )
)
case("ssim", BIG, BIG_NOISY)(
    lambda x, y: (
        tf.image.ssim(x, y, 1.0),
        tf.image.ssim(x, y, 1.0, filter_size=5, filter_sigma=1.0),
        tf.image.ssim(x, x, 1.0, filter_size=3),
    )
)
case("ssim_uint8", PAIR8, np.ascontiguousarray(PAIR8[:, ::-1]))(
    lambda x, y: tf.image.ssim(x, y, 255, filter_size=3, filter_sigma=0.8)
)
case("ssim_multiscale", BIG, BIG_NOISY)(
    lambda x, y: tf.image.ssim_multiscale(x, y, 1.0, power_factors=(0.6, 0.4), filter_size=3)
)

# ---- non-max suppression and drawing --------------------------------------------------------
NMS_BOXES = np.array(
    [
        [0.0, 0.0, 1.0, 1.0],
        [0.0, 0.1, 1.0, 1.1],
        [0.0, -0.1, 1.0, 0.9],
        [0.0, 10.0, 1.0, 11.0],
        [1.0, 1.0, 0.0, 0.0],  # corners flipped: the same box as the first
        [0.0, 100.0, 1.0, 101.0],
        [5.0, 5.0, 6.0, 6.0],
    ],
    np.float32,
)
NMS_SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3, 0.75], np.float32)
case("nms_basic", NMS_BOXES, NMS_SCORES)(
    lambda b, s: tf.image.non_max_suppression(b, s, 5, iou_threshold=0.5)
)
case("nms_score_threshold", NMS_BOXES, NMS_SCORES)(
    lambda b, s: tf.image.non_max_suppression(b, s, 10, iou_threshold=0.3, score_threshold=0.55)
)
case("nms_ties", NMS_BOXES, np.full(7, 0.5, np.float32))(
    lambda b, s: tf.image.non_max_suppression(b, s, 4, iou_threshold=0.99)
)
case("nms_with_scores", NMS_BOXES, NMS_SCORES)(
    lambda b, s: tf.image.non_max_suppression_with_scores(b, s, 4, 0.5, soft_nms_sigma=0.5)
)
case(
    "draw_bounding_boxes",
    np.zeros((1, 5, 6, 3), np.float32),
    np.array([[[0.2, 0.2, 0.8, 0.6], [0.0, 0.5, 0.4, 1.0]]], np.float32),
    np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], np.float32),
)(lambda x, b, c: tf.image.draw_bounding_boxes(x, b, c))

# ---- random ops: shapes only --------------------------------------------------------------
RANDOM_OPS = {
    "flip_left_right": lambda x: tf.image.random_flip_left_right(x, seed=3),
    "flip_up_down": lambda x: tf.image.random_flip_up_down(x, seed=3),
    "crop": lambda x: tf.image.random_crop(x, [2, 3, 2, 3], seed=3),
    "brightness": lambda x: tf.image.random_brightness(x, 0.2, seed=3),
    "contrast": lambda x: tf.image.random_contrast(x, 0.5, 1.5, seed=3),
    "saturation": lambda x: tf.image.random_saturation(x, 0.5, 1.5, seed=3),
    "hue": lambda x: tf.image.random_hue(x, 0.1, seed=3),
}


def _random_shapes(x):
    """Per random op, its result's shape and dtype as a string (or the error's type name,
    caught while tracing, so that one missing op does not hide the others)."""
    texts = []
    for name, op in RANDOM_OPS.items():
        try:
            y = op(x)
            texts.append(f"{name} {y.dtype.name} {list(y.shape)}")
        except Exception as e:  # report it and go on
            texts.append(f"{name} ERR {type(e).__name__}")
    return tf.constant(texts)


case("random_shapes", PAIR)(_random_shapes)

# ---- a few more edges ---------------------------------------------------------------------
case("crop_pad_u8_rank3_and_image_gradients_u8", IMG8[0], IMG8)(
    lambda u, v: (
        tf.image.pad_to_bounding_box(tf.image.crop_to_bounding_box(u, 1, 1, 3, 4), 0, 2, 4, 6),
        tf.image.image_gradients(v)[0][0, :2, :3, 0],
    )
)
case("total_variation_u8", PAIR8)(lambda u: tf.image.total_variation(u))
case("extract_patches_u8", PAIR8)(
    lambda u: tf.image.extract_patches(
        u[:, :3, :3, :1], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1], "VALID"
    )
)
F64 = np.array([0.0, 0.25, 1.0, 1.5], np.float64)
case("convert_f64_i16", F64, np.array([-5, 0, 8191, 32767], np.int16))(
    lambda d, i: (
        tf.image.convert_image_dtype(d, tf.uint8),
        tf.image.convert_image_dtype(i, tf.float32),
        tf.image.convert_image_dtype(i, tf.uint8),
    )
)

# ---- signal ---------------------------------------------------------------------------------
case("frame", WAVE[:10])(
    lambda s: (
        tf.signal.frame(s, 4, 3),
        tf.signal.frame(s, 4, 3, pad_end=True, pad_value=-1.0),
    )
)
case("frame_2d_axis0", WAVE[:12].reshape(6, 2))(lambda s: tf.signal.frame(s, 3, 2, axis=0))
case("stft", WAVE)(lambda s: tf.signal.stft(s, 16, 8, fft_length=16))
# fmt: off
# (the lambda's body goes on after a line break, as hand-formatted programs write it)
case("stft_round_trip", WAVE)(
    lambda s: tf.signal.inverse_stft(
        tf.signal.stft(s, 16, 4, fft_length=16),
        16,
        4,
        fft_length=16,
        window_fn=tf.signal.inverse_stft_window_fn(4),
    )[16:48]
    - s[16:48]
)
# fmt: on
case("windows", np.zeros(1, np.float32))(
    lambda _: (
        tf.signal.hann_window(6),
        tf.signal.hann_window(6, periodic=False),
        tf.signal.hamming_window(5),
        tf.signal.hann_window(1),
    )
)
case("rfft_irfft", WAVE[:10])(
    lambda s: (tf.signal.rfft(s), tf.signal.irfft(tf.signal.rfft(s)) - s, tf.signal.rfft(s, [7]))
)
case("irfft_odd_length", WAVE[:9])(lambda s: tf.signal.irfft(tf.signal.rfft(s), [9]) - s)
case("dct", WAVE[:8].reshape(2, 4))(
    lambda s: (
        tf.signal.dct(s),
        tf.signal.dct(s, norm="ortho"),
        tf.signal.dct(s, type=3),
        tf.signal.dct(s, type=1),
        tf.signal.idct(tf.signal.dct(s, norm="ortho"), norm="ortho") - s,
    )
)
case("linear_to_mel", np.zeros(1, np.float32))(
    lambda _: tf.signal.linear_to_mel_weight_matrix(6, 9, 8000, 100.0, 3000.0)
)
case("mfccs", LOGMEL)(lambda m: tf.signal.mfccs_from_log_mel_spectrograms(m))
case("signal_more", WAVE[:40])(
    lambda s: (
        tf.signal.stft(s, 10, 6, pad_end=True),
        tf.signal.inverse_stft(tf.signal.stft(s, 8, 4), 8, 4)[:12],
        tf.signal.dct(s[:6], type=4),
        tf.signal.dct(s[:8], n=5, norm="ortho"),
        tf.signal.frame(tf.reshape(s[:12], [3, 4]), 2, 1, axis=-1, pad_end=True),
        tf.signal.mfccs_from_log_mel_spectrograms(tf.reshape(s[:24], [2, 3, 4])),
        tf.signal.hann_window(5, dtype=tf.float64),
        tf.signal.linear_to_mel_weight_matrix(4, 5, 4000, 50.0, 1500.0, dtype=tf.float64),
    )
)


# ---- gradients ------------------------------------------------------------------------------
def _gradient(op, weight_shape):
    """d/dx sum(op(x) * w) for a fixed seeded weight w, so the gradient is not uniform."""
    w = np.random.RandomState(7).uniform(0.5, 1.5, weight_shape).astype(np.float32)

    def fn(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = op(x)
            total = tf.reduce_sum(y * tf.constant(w))
        return tape.gradient(total, x)

    return fn


case("grad_resize_bilinear_up", IMG)(_gradient(lambda x: tf.image.resize(x, [8, 9]), (1, 8, 9, 3)))
case("grad_resize_bilinear_down", PAIR)(
    _gradient(lambda x: tf.image.resize(x, [4, 3]), (2, 4, 3, 3))
)
case("grad_crop_and_resize", PAIR)(
    _gradient(lambda x: tf.image.crop_and_resize(x, BOXES, BOX_INDEX, [3, 2]), (4, 3, 2, 3))
)
case("grad_adjust_contrast", PAIR)(
    _gradient(lambda x: tf.image.adjust_contrast(x, 1.7), (2, 6, 4, 3))
)
case("grad_rgb_to_hsv", IMG)(_gradient(lambda x: tf.image.rgb_to_hsv(x), (1, 5, 7, 3)))
case("grad_per_image_standardization", PAIR)(
    _gradient(lambda x: tf.image.per_image_standardization(x), (2, 6, 4, 3))
)


if __name__ == "__main__":
    print(f"{which} image_ops: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
