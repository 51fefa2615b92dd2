"""tt.image against TensorFlow 2.21's values, compiled as eager, with gradients.

tests/data/image/tf_reference.npz holds random inputs and what TensorFlow 2.21.0 returned for
them (`tf.image.flip_left_right(x)`, `tf.image.resize(x, [3, 4], method="nearest")`, ...,
gradients of `reduce_sum(tf.image.resize(x, size) * weights)` from a tf.GradientTape): it was
written once by tests/data/image/make_tf_reference.py, run with real TensorFlow, whose calls
`CALLS` below repeats with tracer. Keys are "<case>__<input>", inputs "in__<input>".
"""

import pathlib

import numpy as np
import pytest

import tracer as tt
from tests import gradcheck

IMAGE = [[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]]
REFERENCE = np.load(pathlib.Path(__file__).parent / "data" / "image" / "tf_reference.npz")
INPUTS = {key[4:]: REFERENCE[key] for key in REFERENCE.files if key.startswith("in__")}
image = tt.image


def _sized(function):
    """A case named "<name>_<h>_<w>": function(x, h, w)."""
    return lambda case, x: function(x, *map(int, case.split("_")[-2:]))


CALLS = {  # case name prefix -> tracer's call of what make_tf_reference.py called
    "flip_left_right": lambda case, x: image.flip_left_right(x),
    "flip_up_down": lambda case, x: image.flip_up_down(x),
    "rot90_": lambda case, x: image.rot90(x, int(case[len("rot90_") :])),
    "transpose": lambda case, x: image.transpose(x),
    "crop_to_bounding_box": lambda case, x: image.crop_to_bounding_box(x, 1, 2, 3, 3),
    "pad_to_bounding_box": lambda case, x: image.pad_to_bounding_box(x, 1, 2, 8, 9),
    "central_crop_": lambda case, x: image.central_crop(x, float(case.split("_")[-1])),
    "resize_with_crop_or_pad_": _sized(image.resize_with_crop_or_pad),
    "adjust_brightness_neg": lambda case, x: image.adjust_brightness(x, -0.3),
    "adjust_brightness": lambda case, x: image.adjust_brightness(
        x, 0.4 if x.dtype == tt.int32 else 0.1
    ),
    "adjust_contrast_neg": lambda case, x: image.adjust_contrast(
        x, -2.0 if x.dtype == tt.int32 else -0.6
    ),
    "adjust_contrast_3": lambda case, x: image.adjust_contrast(x, 3.0),
    "adjust_contrast": lambda case, x: image.adjust_contrast(x, 1.7),
    "per_image_standardization": lambda case, x: image.per_image_standardization(x),
    "rgb_to_grayscale_of_rgb": lambda case, x: image.rgb_to_grayscale(image.grayscale_to_rgb(x)),
    "rgb_to_grayscale": lambda case, x: image.rgb_to_grayscale(x),
    "grayscale_to_rgb": lambda case, x: image.grayscale_to_rgb(x),
    "resize_bilinear_": _sized(lambda x, h, w: image.resize(x, [h, w])),
    "resize_nearest_": _sized(lambda x, h, w: image.resize(x, [h, w], method="nearest")),
    "resize_aspect_": _sized(lambda x, h, w: image.resize(x, [h, w], preserve_aspect_ratio=True)),
    "convert_": lambda case, x: image.convert_image_dtype(
        x, getattr(tt, case.split("_")[1]), saturate=case.split("_")[2] == "True"
    ),
}
CASES = sorted(
    key
    for key in REFERENCE.files
    if not key.startswith("in__") and "_grad_" not in key and "_weights_" not in key
)


def _call(key):
    case, name = key.rsplit("__", 1)
    x = tt.fill([3, 4, 2], 0.25) if name == "constant" else tt.constant(INPUTS[name])
    prefix = next(p for p in CALLS if case.startswith(p))
    return CALLS[prefix](case, x)


def _assert_tensorflows(got, want, key):
    assert got.dtype == want.dtype and got.shape == want.shape, key
    if want.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=key)
    else:  # float32 arithmetic in another order: a few ulps
        tolerance = 2e-3 if want.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance, err_msg=key)


def test_the_reference_covers_every_call():
    assert len(CASES) > 250
    for prefix in CALLS:
        assert any(key.startswith(prefix) for key in CASES), prefix


INT32_ADJUSTED = [k for k in CASES if k.startswith("adjust_") and k.endswith("__i32")]


@pytest.mark.parametrize("key", [k for k in CASES if k not in INT32_ADJUSTED])
def test_values_are_tensorflows(key):
    _assert_tensorflows(_call(key).numpy(), REFERENCE[key], key)


@pytest.mark.parametrize("key", INT32_ADJUSTED)
def test_int32_images_saturate_as_tensorflow(key):
    """contrast_int32_saturate.py: the brightest int32 pixels saturate at 2147483520 (float32's
    largest below 2^31), as TensorFlow's saturate_cast, where they wrapped to INT_MIN. Values
    in between are exact to float32's rounding of the image's mean (TensorFlow sums in an
    order of its own: 2^31 * 2^-24 is 128)."""
    got, want = _call(key).numpy(), REFERENCE[key]
    assert got.dtype == want.dtype == np.int32
    extreme = (want == 2147483520) | (want == -(2**31))
    np.testing.assert_array_equal(got[extreme], want[extreme])
    np.testing.assert_allclose(got.astype(np.int64), want.astype(np.int64), rtol=0, atol=256)


def test_adjust_contrast_gives_tensorflows_values():
    got = tt.image.adjust_contrast(IMAGE, 2.0)
    assert got.dtype == tt.float32
    assert got.numpy().tolist() == [  # what tf.image.adjust_contrast(IMAGE, 2.) returns
        [[-3.5, -2.5, -1.5], [2.5, 3.5, 4.5]],
        [[8.5, 9.5, 10.5], [14.5, 15.5, 16.5]],
    ]
    assert tt.image.adjust_contrast(tt.constant(IMAGE, tt.float64), 0.5).dtype == tt.float64
    # TensorFlow scales integers to [0, 1) float32 and back, truncating toward zero
    ints = tt.constant([[[10], [200]], [[30], [40]]], tt.int32)
    assert tt.image.adjust_contrast(ints, 2.0).numpy().tolist() == [[[-50], [330]], [[-10], [10]]]
    with pytest.raises(ValueError, match=r"\[\.\.\., height, width, channels\]"):
        tt.image.adjust_contrast(tt.constant([1.0, 2.0]), 2.0)


def test_adjust_contrast_of_a_batch_differentiates_and_compiles():
    rng = np.random.default_rng(0)
    images = rng.standard_normal((2, 3, 4, 2)).astype(np.float32)
    weights = rng.standard_normal(images.shape).astype(np.float32)

    def loss(x, factor):
        return tt.reduce_sum(tt.image.adjust_contrast(x, factor) * weights)

    x, factor = tt.constant(images), tt.constant(1.7)
    with tt.GradientTape() as tape:
        tape.watch([x, factor])
        value = loss(x, factor)
    dx, dfactor = tape.gradient(value, [x, factor])
    mean = images.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(
        value.numpy(), np.sum(((images - mean) * 1.7 + mean) * weights), 1e-5
    )
    # d/dfactor: sum((x - mean) * w); d/dx: factor * w + (1 - factor) * mean of w per channel
    np.testing.assert_allclose(dfactor.numpy(), np.sum((images - mean) * weights), rtol=1e-5)
    w_mean = weights.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(dx.numpy(), 1.7 * weights + (1 - 1.7) * w_mean, rtol=1e-5)
    compiled = tt.function(loss)
    np.testing.assert_allclose(compiled(x, factor).numpy(), value.numpy(), rtol=1e-6)


def test_float64_images_are_adjusted_in_float32_as_tensorflow():
    x = tt.constant([[[0.1], [0.2]]], tt.float64)
    got = tt.image.adjust_brightness(x, 0.3).numpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, (np.float32([0.1, 0.2]) + np.float32(0.3)).reshape(1, 2, 1))
    assert tt.image.per_image_standardization(x).dtype == tt.float32
    assert tt.image.resize(x, [2, 2]).dtype == tt.float32
    assert tt.image.resize(x, [2, 2], method="nearest").dtype == tt.float64


# --- compiled, both backends ---------------------------------------------------------------


def _every_op(x):
    """Every tt.image op of one image or batch (floating or uint8), as a list."""
    floating = x.dtype.is_floating
    outs = [
        image.flip_left_right(x),
        image.flip_up_down(x),
        image.rot90(x, 1),
        image.rot90(x, 2),
        image.rot90(x, 3),
        image.transpose(x),
        image.crop_to_bounding_box(x, 1, 2, 3, 3),
        image.pad_to_bounding_box(x, 1, 2, 8, 9),
        image.central_crop(x, 0.5),
        image.resize_with_crop_or_pad(x, 3, 9),
        image.adjust_brightness(x, 0.1),
        image.adjust_contrast(x, 1.7),
        image.per_image_standardization(x),
        image.rgb_to_grayscale(x),
        image.grayscale_to_rgb(x[..., :1]),
        image.resize(x, [9, 11]),
        image.resize(x, [3, 4]),
        image.resize(x, [3, 4], method="nearest"),
        image.resize(x, [10, 3], preserve_aspect_ratio=True),
        image.convert_image_dtype(x, tt.uint8 if floating else tt.float32),
        image.convert_image_dtype(x, tt.int16, saturate=True),
    ]
    return outs


@pytest.mark.parametrize("backend", ["c", "interpreter"])
@pytest.mark.parametrize("name", ["f32_b", "f64_u", "u8_b"])
def test_compiled_functions_give_the_eager_values(backend, name):
    x = tt.constant(INPUTS[name])
    eager = _every_op(x)
    compiled = tt.function(_every_op, backend=backend)(x)
    assert len(compiled) == len(eager)
    for k, (got, want) in enumerate(zip(compiled, eager)):
        assert got.dtype == want.dtype and got.shape == want.shape, k
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6, err_msg=k)
    # and TensorFlow's, through the same calls
    flipped, resized = compiled[0].numpy(), compiled[15].numpy()
    np.testing.assert_array_equal(flipped, REFERENCE[f"flip_left_right__{name}"])
    np.testing.assert_allclose(resized, REFERENCE[f"resize_bilinear_9_11__{name}"], rtol=1e-6)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_int32_contrast_saturates_compiled(backend):
    ints = tt.constant(INPUTS["i32"])
    got = tt.function(lambda x: image.adjust_contrast(x, 3.0), backend=backend)(ints)
    want = REFERENCE["adjust_contrast_3__i32"]
    extreme = (want == 2147483520) | (want == -(2**31))
    np.testing.assert_array_equal(got.numpy()[extreme], want[extreme])
    # the mean of [1e-4, -1, 1, ...] in float32 depends on the order of the sum (C's is its own)
    np.testing.assert_allclose(got.numpy().astype(np.int64), want, rtol=0, atol=256)


# --- gradients ------------------------------------------------------------------------------


def _resize_gradient(x, size, method, weights):
    with tt.GradientTape() as tape:
        tape.watch(x)
        loss = tt.reduce_sum(image.resize(x, size, method=method) * weights)
    return tape.gradient(loss, x)


@pytest.mark.parametrize("method", ["bilinear", "nearest"])
@pytest.mark.parametrize("name", ["f32_b", "f64_u"])
@pytest.mark.parametrize("size", [(3, 4), (9, 11), (7, 3)])
def test_resize_gradients_are_tensorflows(method, name, size):
    h, w = size
    x = tt.constant(INPUTS[name])
    weights = tt.constant(REFERENCE[f"resize_{method}_weights_{h}_{w}__{name}"])
    want = REFERENCE[f"resize_{method}_grad_{h}_{w}__{name}"]
    got = _resize_gradient(x, [h, w], method, weights)
    assert isinstance(got, tt.Tensor) and got.dtype == x.dtype  # dense, as TensorFlow's
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    for backend in ["c", "interpreter"]:
        compiled = tt.function(
            lambda x: _resize_gradient(x, [h, w], method, weights), backend=backend
        )
        np.testing.assert_allclose(compiled(x).numpy(), want, rtol=1e-5, atol=1e-6)


# tf.image.resize by the methods that are one weight matrix per axis, and their gradients:
# tests/data/image/make_tf_resize_methods.py wrote what TensorFlow 2.21 gave
RESIZED = np.load(pathlib.Path(__file__).parent / "data" / "image" / "tf_resize_methods.npz")
RESIZE_CASES = sorted({key.split("__")[0] for key in RESIZED.files if "_grad" not in key and
                       "_weights" not in key})  # fmt: skip


def _resize_case(case):
    *method, antialias, h, w = case.split("_")
    return "_".join(method), antialias == "1", [int(h), int(w)]


@pytest.mark.parametrize("case", RESIZE_CASES)
def test_resize_by_weight_matrices_is_tensorflows(case):
    method, antialias, size = _resize_case(case)
    for name in ("f32_b", "f64_u", "u8_u"):
        x, want = tt.constant(INPUTS[name]), RESIZED[f"{case}__{name}"]
        resize = lambda x: image.resize(x, size, method=method, antialias=antialias)  # noqa: E731
        for run in (resize, tt.function(resize), tt.function(resize, backend="interpreter")):
            got = run(x)
            assert got.dtype == tt.float32
            np.testing.assert_allclose(got.numpy(), want, rtol=2e-6, atol=2e-6 * np.abs(want).max())
        if f"{case}_grad__{name}" in RESIZED.files:
            weights = tt.constant(RESIZED[f"{case}_weights__{name}"])
            want = RESIZED[f"{case}_grad__{name}"]

            def gradient(x):
                with tt.GradientTape() as tape:
                    tape.watch(x)
                    loss = tt.reduce_sum(resize(x) * weights)
                return tape.gradient(loss, x)

            for run in (gradient, tt.function(gradient)):
                np.testing.assert_allclose(run(x).numpy(), want, rtol=2e-6, atol=2e-6)


def test_keras_resizing_and_upsampling_take_the_weight_matrix_methods():
    x = INPUTS["f32_b"]  # (2, 5, 6, 3)
    for method in ("bicubic", "lanczos3", "area"):
        resized = tt.keras.layers.Resizing(9, 11, interpolation=method)(x)
        np.testing.assert_allclose(resized.numpy(), RESIZED[f"{method}_0_9_11__f32_b"], atol=5e-6)
    enlarged = tt.keras.layers.UpSampling2D((2, 3), interpolation="lanczos5")(x)
    np.testing.assert_allclose(
        enlarged.numpy(), image.resize(x, [10, 18], method="lanczos5").numpy(), rtol=1e-6
    )


def test_resize_by_weight_matrices_differentiates_where_tensorflow_does_not():
    """TensorFlow has no gradient for area, nor for float64 images through its
    ScaleAndTranslate (lanczos, gaussian, mitchellcubic, antialias). The resize is linear,
    so its gradient must be its adjoint: <resize(x), w> = <x, gradient of <resize(x), w>>
    for any w (the values of resize(x) are TensorFlow's, above)."""
    x = tt.constant(INPUTS["f64_u"])
    rng = np.random.default_rng(3)
    for method, antialias in (("area", False), ("lanczos3", True), ("mitchellcubic", False)):
        w = rng.standard_normal((9, 2, 3))
        with tt.GradientTape() as tape:
            tape.watch(x)
            resized = image.resize(x, [9, 2], method=method, antialias=antialias)
            loss = tt.reduce_sum(tt.cast(resized, tt.float64) * w)
        gradient = tape.gradient(loss, x)
        assert gradient.dtype == tt.float64
        forward = np.sum(resized.numpy().astype(np.float64) * w)
        np.testing.assert_allclose(np.sum(x.numpy() * gradient.numpy()), forward, rtol=1e-5)


DIFFERENTIABLE = {
    "resize_up": lambda x: image.resize(x, [7, 9]),
    "resize_down": lambda x: image.resize(x, [2, 3]),
    "resize_nearest": lambda x: image.resize(x, [7, 2], method="nearest"),
    "flip_left_right": image.flip_left_right,
    "flip_up_down": image.flip_up_down,
    "rot90": lambda x: image.rot90(x, 3),
    "transpose": image.transpose,
    "crop": lambda x: image.crop_to_bounding_box(x, 1, 1, 2, 3),
    "pad": lambda x: image.pad_to_bounding_box(x, 2, 1, 7, 6),
    "central_crop": lambda x: image.central_crop(x, 0.6),
    "crop_or_pad": lambda x: image.resize_with_crop_or_pad(x, 6, 2),
    "brightness": lambda x: image.adjust_brightness(x, 0.2),
    "contrast": lambda x: image.adjust_contrast(x, 0.4),
    "standardization": image.per_image_standardization,
    "grayscale": image.rgb_to_grayscale,
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
@pytest.mark.parametrize("shape", [(2, 4, 5, 3), (4, 5, 3)])
def test_gradients_match_finite_differences(name, shape):
    x = np.random.default_rng(3).random(shape).astype(np.float32)
    gradcheck.check_first_order(DIFFERENTIABLE[name], [x])


# --- arguments ------------------------------------------------------------------------------


def test_convert_image_dtype_scales_as_tensorflow_documents():
    a = tt.constant([[[1], [2]], [[3], [4]]], tt.int8)
    np.testing.assert_allclose(
        image.convert_image_dtype(a, tt.float32).numpy().ravel(),
        [0.00787402, 0.01574803, 0.02362205, 0.03149606],
        rtol=1e-6,
    )
    c = tt.constant([[[1], [2]], [[127], [127]]], tt.int8)
    c16 = image.convert_image_dtype(c, tt.int16)
    assert c16.numpy().ravel().tolist() == [256, 512, 32512, 32512]
    assert image.convert_image_dtype(c16, tt.int8).numpy().ravel().tolist() == [1, 2, 127, 127]
    d = tt.constant([[[1000], [2000]], [[3000], [4000]]], tt.int16)
    back = image.convert_image_dtype(image.convert_image_dtype(d, tt.uint8), tt.int16)
    assert back.numpy().ravel().tolist() == [896, 1920, 2944, 3968]
    with pytest.raises(AttributeError, match="floating point or integer"):
        image.convert_image_dtype(a, tt.bool)


def test_bad_arguments_raise_as_tensorflow():
    x = tt.zeros([5, 6, 3])
    with pytest.raises(ValueError, match="width must be >= target \\+ offset"):
        image.crop_to_bounding_box(x, 0, 4, 2, 3)
    with pytest.raises(ValueError, match="offset_height must be >= 0"):
        image.crop_to_bounding_box(x, -1, 0, 2, 3)
    with pytest.raises(ValueError, match="height must be <= target - offset"):
        image.pad_to_bounding_box(x, 1, 0, 5, 6)
    with pytest.raises(ValueError, match="central_fraction must be within"):
        image.central_crop(x, 0.0)
    with pytest.raises(ValueError, match="target_height must be > 0"):
        image.resize_with_crop_or_pad(x, 0, 3)
    with pytest.raises(ValueError, match="at least three-dimensional"):
        image.flip_left_right(tt.zeros([5, 6]))
    with pytest.raises(ValueError, match="either 3 or 4 dimensions"):
        image.rot90(tt.zeros([1, 2, 5, 6, 3]))
    with pytest.raises(ValueError, match="\\[\\.\\.\\., 3\\]"):
        image.rgb_to_grayscale(tt.zeros([5, 6, 4]))
    with pytest.raises(ValueError, match="1-D Tensor of 2 elements"):
        image.resize(x, [3])
    with pytest.raises(ValueError, match="Resize method is not implemented: cubic"):
        image.resize(x, [3, 3], method="cubic")


def test_sizes_may_be_eager_tensors_and_central_crop_of_one_is_the_image():
    x = tt.constant(INPUTS["f32_u"])
    got = image.resize(x, tt.constant([3, 4]))
    np.testing.assert_array_equal(got.numpy(), image.resize(x, [3, 4]).numpy())
    assert image.rot90(x, tt.constant(2)).numpy().tolist() == image.rot90(x, 2).numpy().tolist()
    assert image.central_crop(x, 1.0) is x


def test_traced_sizes_come_from_the_images():
    """A function called on images of several sizes resizes each with its own taps; one
    whose input_signature leaves height and width unknown is traced with each call's."""
    resize = tt.function(lambda x: image.resize(x, [3, 4]))
    for key in ["f32_b", "f64_b"]:
        x = tt.constant(INPUTS[key][:, :, : 4 if key == "f64_b" else 6])
        np.testing.assert_allclose(resize(x).numpy(), image.resize(x, [3, 4]).numpy(), 1e-6)
    unknown = tt.function(
        lambda x: image.resize(x, [3, 4]),
        input_signature=[tt.TensorSpec([None, None, None, 3], tt.float32)],
    )
    for key in ["f32_b", "f32_b4"]:
        x = tt.constant(INPUTS["f32_b"][:, :, : 4 if key == "f32_b4" else 6])
        np.testing.assert_allclose(unknown(x).numpy(), image.resize(x, [3, 4]).numpy(), 1e-6)
    assert unknown.experimental_get_tracing_count() == 2


# --- random augmentations ----------------------------------------------------------------


def test_random_flips_give_each_image_of_a_batch_its_own_draw_anew_at_every_call():
    """Each image comes back whole, as it is or mirrored (width for left_right, height for
    up_down), about half of them mirrored, each on its own draw, drawn anew at each call of
    a compiled function."""
    rng = np.random.default_rng(0)
    images = rng.standard_normal((400, 3, 4, 2)).astype(np.float32)
    for name, axis in (("random_flip_left_right", 2), ("random_flip_up_down", 1)):
        flip = getattr(tt.image, name)
        compiled = tt.function(flip)
        draws = []
        for out in (flip(tt.constant(images)), compiled(images), compiled(images)):
            out = out.numpy()
            same = (out == images).all(axis=(1, 2, 3))
            mirrored = (out == np.flip(images, axis)).all(axis=(1, 2, 3))
            assert (same | mirrored).all()
            assert 0.4 < mirrored.mean() < 0.6
            draws.append(mirrored)
        assert not np.array_equal(draws[1], draws[2])
        one = images[0]
        outcomes = {compiled(one).numpy().tobytes() for _ in range(30)}
        assert outcomes == {one.tobytes(), np.flip(one, axis - 1).tobytes()}


def test_random_brightness_and_contrast_apply_a_factor_drawn_in_their_range():
    """random_brightness adds one delta in [-max_delta, max_delta) to every pixel;
    random_contrast is adjust_contrast by one factor in [lower, upper); new draws at each
    call of a compiled function; bad ranges are refused as TensorFlow refuses them."""
    rng = np.random.default_rng(1)
    image = rng.uniform(0, 1, (5, 6, 3)).astype(np.float32)
    brighter = tt.function(lambda x: tt.image.random_brightness(x, 0.2))
    deltas = []
    for _ in range(20):
        shift = brighter(image).numpy() - image
        np.testing.assert_allclose(shift, shift.flat[0], atol=1e-6)
        assert -0.2 - 1e-6 <= shift.flat[0] < 0.2 + 1e-6
        deltas.append(round(float(shift.flat[0]), 5))
    assert len(set(deltas)) > 15
    contrasted = tt.function(lambda x: tt.image.random_contrast(x, 0.5, 1.5))
    mean = image.mean(axis=(0, 1))
    factors = []
    for _ in range(20):
        out = contrasted(image).numpy()
        factor = ((out - mean) / (image - mean)).mean()
        np.testing.assert_allclose(out, (image - mean) * factor + mean, rtol=1e-4, atol=1e-5)
        assert 0.5 - 1e-4 <= factor < 1.5 + 1e-4
        factors.append(round(float(factor), 4))
    assert len(set(factors)) > 15
    with pytest.raises(ValueError, match="max_delta must be non-negative"):
        tt.image.random_brightness(image, -0.1)
    with pytest.raises(ValueError, match="upper must be > lower"):
        tt.image.random_contrast(image, 0.5, 0.5)
    with pytest.raises(ValueError, match="lower must be non-negative"):
        tt.image.random_contrast(image, -0.5, 0.5)


def test_a_datasets_map_flips_anew_at_every_element_and_epoch():
    """tf.data's usual augmentation: a map that flips each image, drawing anew for each
    element and each pass over the dataset."""
    images = np.arange(2 * 3 * 3 * 1, dtype=np.float32).reshape(2, 3, 3, 1)
    dataset = tt.data.Dataset.from_tensor_slices(images).map(tt.image.random_flip_left_right)
    flipped = [
        [bool((out.numpy() != image).any()) for out, image in zip(dataset, images)]
        for _ in range(40)
    ]
    fraction = np.mean(flipped)
    assert 0.3 < fraction < 0.7
    assert len({tuple(epoch) for epoch in flipped}) > 1


def test_resize_with_pad_scales_to_fit_then_pads_as_tensorflow():
    """Values printed by TF 2.21: tf.image.resize_with_pad on a 3x5 ramp (bilinear, batched
    and not), and nearest on uint8, which keeps the dtype; the size and the padding are
    floored from float32 arithmetic."""
    x = np.arange(30, dtype=np.float32).reshape(2, 3, 5, 1)
    batched = tt.image.resize_with_pad(x, 4, 4)
    assert batched.shape == (2, 4, 4, 1) and batched.dtype == tt.float32
    np.testing.assert_allclose(
        batched.numpy()[0, :, :, 0],
        [[1.375, 2.625, 3.875, 5.125], [8.875, 10.125, 11.375, 12.625], [0] * 4, [0] * 4],
    )
    nearest = tt.image.resize_with_pad(x[0].astype(np.uint8), 7, 3, method="nearest")
    assert nearest.dtype == tt.uint8
    np.testing.assert_array_equal(
        nearest.numpy()[:, :, 0], [[0] * 3] * 2 + [[5, 7, 9]] + [[0] * 3] * 4
    )
    wide = tt.image.resize_with_pad(x[0], 6, 10)
    np.testing.assert_allclose(
        wide.numpy()[[0, 2, 5], :3, 0], [[0.0, 0.25, 0.75], [3.75, 4.0, 4.5], [10.0, 10.25, 10.75]]
    )
    with pytest.raises(ValueError, match="target_height must be > 0"):
        tt.image.resize_with_pad(x[0], 0, 3)


@pytest.mark.parametrize("backend", ["eager", "interpreter", "c"])
def test_color_transforms_gamma_and_angle_as_tensorflows(backend):
    """TensorFlow 2.21 printed these for a uniform(0, 1) float32 image of 2 x 3 pixels drawn
    with default_rng(0): the first six values of rgb_to_yuv, yuv_to_rgb, rgb_to_yiq and
    yiq_to_rgb; adjust_gamma's [0.09375, 0.375] (gamma 2, gain 1.5) and [50, 226] (uint8,
    gamma 0.5), and its ValueError for a negative gamma; angle's [0, pi, 0] and
    [pi / 4, pi]."""

    def run(function, *args):
        return (function if backend == "eager" else tt.function(function, backend=backend))(*args)

    x = tt.constant(np.random.default_rng(0).uniform(0, 1, (2, 3, 3)).astype(np.float32))
    printed = {
        "rgb_to_yuv": [0.353487, -0.153791, 0.248687, 0.586386, 0.16061, -0.499927],
        "yuv_to_rgb": [0.683667, 0.506702, 1.185185, 1.056962, -0.834389, 1.669143],
        "rgb_to_yiq": [0.353487, 0.292328, 0.006441, 0.586386, -0.506748, -0.137581],
        "yiq_to_rgb": [0.920311, 0.537058, 0.408206, 1.360664, -0.795432, 0.671995],
    }
    for name, values in printed.items():
        got = run(getattr(tt.image, name), x).numpy().ravel()[:6]
        np.testing.assert_allclose(got, values, atol=2e-6)
    back = run(lambda v: tt.image.yuv_to_rgb(tt.image.rgb_to_yuv(v)), x)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=2e-6)
    gamma = run(lambda v: tt.image.adjust_gamma(v, gamma=2.0, gain=1.5), tt.constant([[0.25, 0.5]]))
    np.testing.assert_allclose(gamma.numpy(), [[0.09375, 0.375]])
    bright = run(lambda v: tt.image.adjust_gamma(v, 0.5), tt.constant([[10, 200]], tt.uint8))
    assert bright.dtype == tt.uint8 and bright.numpy().tolist() == [[50, 226]]
    with pytest.raises(ValueError, match="Gamma should be a non-negative real number"):
        tt.image.adjust_gamma(tt.constant([1.0]), gamma=-1.0)
    np.testing.assert_allclose(
        run(tt.math.angle, tt.constant([1.0, -2.0, 0.0])).numpy(), [0.0, np.pi, 0.0], rtol=1e-6
    )
    np.testing.assert_allclose(
        run(tt.math.angle, tt.constant([1 + 1j, -1 + 0j], tt.complex64)).numpy(),
        [np.pi / 4, np.pi],
        rtol=1e-6,
    )
