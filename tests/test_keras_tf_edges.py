"""tt.keras against Keras 3 (TensorFlow 2.21 backend) at edges a review found: selu's gradient
at 0, BatchNormalization's float32 statistics for float16 layers, Dense on integer inputs,
Embedding's negative indices and mask_zero, categorical_crossentropy's label smoothing with
`axis`; eagerly and under tt.function (C and interpreter), values and gradients.

The expected values are Keras 3.15.1's outputs on the same inputs, as stated at each test."""

import warnings

import numpy as np
import pytest

import tracer as tt

keras = tt.keras
BACKENDS = ["eager", "c", "interpreter"]


def run(fn, backend, *args):
    """`fn(*args)` eagerly, or compiled by tt.function with `backend`."""
    if backend == "eager":
        return fn(*args)
    return tt.function(fn, backend=backend)(*args)


def value_and_grad(fn):
    def both(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return y, tape.gradient(y, x)

    return both


# --- 1. selu's gradient at exactly 0 is scale (TF's SeluGrad takes the linear branch) ------


@pytest.mark.parametrize("backend", BACKENDS)
def test_selu_gradient_at_zero_is_scale(backend):
    x = tt.constant([-1.0, 0.0, 1.0], tt.float64)
    y, g = run(value_and_grad(keras.activations.selu), backend, x)
    # Keras 3: selu([-1, 0, 1]) and its gradient (float64)
    np.testing.assert_allclose(y.numpy(), [-1.11133074, 0.0, 1.05070099], rtol=1e-7)
    np.testing.assert_allclose(g.numpy(), [0.6467686, 1.05070099, 1.05070099], rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_selu_activation_layer_gradient_at_zero(backend):
    layer = keras.layers.Activation("selu")
    y, g = run(value_and_grad(layer), backend, tt.constant([0.0]))
    assert y.numpy().tolist() == [0.0]
    np.testing.assert_allclose(g.numpy(), [1.050701], rtol=1e-6)  # Keras 3


# --- 2. BatchNormalization(dtype="float16") computes its statistics in float32 -------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_normalization_float16_statistics_in_float32(backend):
    layer = keras.layers.BatchNormalization(dtype="float16")
    x = tt.constant(np.array([[300.0], [310.0], [320.0]], np.float16))
    layer(x, training=False)  # build outside the compiled function
    y = run(lambda v: layer(v, training=True), backend, x)
    assert y.dtype == tt.float16
    # Keras 3: outputs [-1.2246094, 0, 1.2246094] (float16); moving mean 3.0996094 and
    # moving variance 1.65625 after one step (float16 weights). Computing the statistics in
    # float16 gave -1.21875 and 3.1015625, 1.6572266.
    np.testing.assert_array_equal(y.numpy().ravel(), np.float16([-1.2246094, 0.0, 1.2246094]))
    gamma, beta, mean, variance = layer.get_weights()
    assert mean.dtype == np.float16
    np.testing.assert_array_equal(mean, np.float16([3.0996094]))
    np.testing.assert_array_equal(variance, np.float16([1.65625]))


# --- 3. Dense on integer and bool inputs: Keras's matmul promotes to the kernel's dtype ------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_dense_on_integer_inputs(backend, dtype):
    layer = keras.layers.Dense(2, kernel_initializer="ones", bias_initializer="zeros")
    x = tt.constant(np.array([[1, 2]]).astype(dtype))
    y = run(layer, backend, x)
    # Keras 3: [[3, 3]] float32 ([[2, 2]] for bool: [True, True])
    assert y.dtype == tt.float32
    expected = [[2.0, 2.0]] if dtype == "bool" else [[3.0, 3.0]]
    np.testing.assert_array_equal(y.numpy(), expected)


def test_dense_integer_inputs_take_the_layer_dtype():
    # Keras 3: Dense(dtype="float16") on int32 gives float16, dtype="float64" float64
    for dtype in ("float16", "float64"):
        layer = keras.layers.Dense(2, kernel_initializer="ones", dtype=dtype)
        y = layer(tt.constant([[1, 2]]))
        assert y.dtype == tt.as_dtype(dtype)
        np.testing.assert_array_equal(y.numpy(), [[3.0, 3.0]])


def test_dense_int64_rank_3():
    layer = keras.layers.Dense(1, kernel_initializer="ones")
    y = layer(tt.constant([[[1, 2]]], tt.int64))
    np.testing.assert_array_equal(y.numpy(), [[[3.0]]])  # Keras 3


# --- 4. Embedding: negative indices wrap (ops.take), mask_zero --------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_embedding_negative_index_and_gradient(backend):
    emb = keras.layers.Embedding(4, 2)
    emb.build((None,))
    emb.set_weights([np.arange(8, dtype=np.float32).reshape(4, 2)])
    weights = tt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

    def step(ids):
        with tt.GradientTape() as tape:
            y = emb(ids)
            loss = tt.reduce_sum(y * weights)
        return y, tt.convert_to_tensor(tape.gradient(loss, emb.embeddings))

    y, g = run(step, backend, tt.constant([-1, 1, -4]))
    # Keras 3: rows 3, 1, 0; the gradient of row 3 from index -1, of row 0 from -4
    np.testing.assert_array_equal(y.numpy(), [[6.0, 7.0], [2.0, 3.0], [0.0, 1.0]])
    np.testing.assert_array_equal(g.numpy(), [[5.0, 6.0], [3.0, 4.0], [0.0, 0.0], [1.0, 2.0]])


@pytest.mark.parametrize("index", [-5, 4])
def test_embedding_index_out_of_range_raises(index):
    emb = keras.layers.Embedding(4, 2)
    with pytest.raises(tt.errors.InvalidArgumentError):  # Keras 3 too (GatherV2)
        emb(tt.constant([index]))


def test_embedding_mask_zero():
    emb = keras.layers.Embedding(4, 2, mask_zero=True, embeddings_initializer="ones")
    x = tt.constant([[0, 1, 2], [3, 0, 0]])
    y = emb(x)
    # Keras 3: the outputs are the rows (ones), the mask is inputs != 0
    np.testing.assert_array_equal(y.numpy(), np.ones((2, 3, 2), np.float32))
    mask = emb.compute_mask(x)
    assert mask.dtype == tt.bool
    np.testing.assert_array_equal(mask.numpy(), [[False, True, True], [True, False, False]])
    assert emb.supports_masking
    assert keras.layers.Embedding(4, 2).compute_mask(x) is None  # Keras 3: None


def test_embedding_mask_zero_saves_and_loads(tmp_path):
    model = keras.Sequential(
        [keras.Input((3,), dtype="int32"), keras.layers.Embedding(4, 2, mask_zero=True)]
    )
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert loaded.layers[-1].mask_zero is True
    x = tt.constant([[0, 1, 3]])
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


# --- 5. categorical_crossentropy: label smoothing divides by the last axis's size -------------

Y_TRUE = np.eye(3, dtype=np.float32)[[0, 1, 2, 0]].T  # (3 classes, 4 samples): axis=0
Y_PRED = np.full((3, 4), 1 / 3, np.float32) + np.array([[0.1], [0.0], [-0.1]], np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_categorical_crossentropy_label_smoothing_axis0(backend):
    def losses(t, p):
        fn = keras.losses.categorical_crossentropy(t, p, label_smoothing=0.2, axis=0)
        cls = keras.losses.CategoricalCrossentropy(label_smoothing=0.2, axis=0)(t, p)
        return fn, cls

    fn, cls = run(losses, backend, tt.constant(Y_TRUE), tt.constant(Y_PRED))
    # Keras 3 (s / 4, the last axis's size, though the classes lie along axis 0)
    np.testing.assert_allclose(fn.numpy(), [0.8385058, 1.0483973, 1.3337371, 0.8385058], rtol=1e-6)
    np.testing.assert_allclose(float(cls), 1.0147865, rtol=1e-6)


# --- 6. the layers and losses added after the review, against Keras 3 ----------------------

X1 = (np.arange(8, dtype=np.float32).reshape(2, 4) - 3.5) * 0.7
X3 = (np.arange(12, dtype=np.float32).reshape(2, 3, 2) % 5 - 2) * 0.5
X4 = (np.arange(48, dtype=np.float32).reshape(2, 3, 4, 2) % 7 - 3) * 0.5  # NHWC
L = keras.layers


def weighted_sum_grad(layer):
    """The layer's outputs and the gradient of sum(outputs * w), w = 1, 2, 3, 1, 2, ...
    (row-major): what the Keras values below were computed with."""

    def both(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = layer(x)
            w = np.arange(int(np.prod(y.shape))).reshape(tuple(y.shape)) % 3 + 1
            loss = tt.reduce_sum(y * tt.constant(w.astype(np.float32)))
        return y, tape.gradient(loss, x)

    return both


# (make the layer, inputs, Keras 3's outputs, Keras 3's gradient of the weighted sum)
KERAS_LAYER_VALUES = {
    "relu_max_slope_threshold": (
        lambda: L.ReLU(max_value=1.0, negative_slope=0.1, threshold=0.5),
        X1,
        [[-0.295, -0.225, -0.155, -0.085], [-0.015, 1.0, 1.0, 1.0]],
        [[0.1, 0.2, 0.3, 0.1], [0.2, 0.0, 0.0, 0.0]],
    ),
    "leaky_relu": (
        lambda: L.LeakyReLU(),
        X1,
        [[-0.735, -0.525, -0.315, -0.105], [0.35, 1.05, 1.75, 2.45]],
        [[0.3, 0.6, 0.9, 0.3], [2.0, 3.0, 1.0, 2.0]],
    ),
    "elu_alpha_0.5": (
        lambda: L.ELU(alpha=0.5),
        X1,
        [[-0.4568532, -0.413113, -0.3250311, -0.147656], [0.35, 1.05, 1.75, 2.45]],
        [[0.0431468, 0.1737739, 0.5249067, 0.352344], [2.0, 3.0, 1.0, 2.0]],
    ),
    "softmax": (
        lambda: L.Softmax(),
        X1,
        [
            [0.0656378, 0.1321783, 0.2661744, 0.5360094],
            [0.0656378, 0.1321783, 0.2661744, 0.5360095],
        ],
        [
            [-0.0436181, 0.0443422, 0.3554687, -0.3561928],
            [0.0087952, 0.1498897, -0.2305081, 0.0718231],
        ],
    ),
    "softmax_axis0": (
        lambda: L.Softmax(axis=0),
        X1,
        [[0.0573242] * 4, [0.9426758] * 4],
        [
            [-0.0540381, -0.0540381, 0.1080762, -0.0540381],
            [0.0540381, 0.0540381, -0.1080762, 0.0540381],
        ],
    ),
    "softmax_two_axes": (
        lambda: L.Softmax(axis=[1, 2]),
        X3,
        [
            [[0.0548313, 0.0904016], [0.149047, 0.245737], [0.4051518, 0.0548313]],
            [[0.0872964, 0.1439275], [0.2372963, 0.3912354], [0.052948, 0.0872964]],
        ],
        [
            [[-0.0495297, 0.0087409], [0.1634584, -0.2219767], [0.0391741, 0.060133]],
            [[-0.0738581, 0.0221561], [0.2738255, -0.3310089], [0.0081508, 0.1007348]],
        ],
    ),
    "average_pooling": (
        lambda: L.AveragePooling2D(2),
        X4,
        [[[[-0.75, -0.25], [0.375, 0.0]]], [[[0.75, 0.375], [-0.75, -0.25]]]],
        None,
    ),
    "average_pooling_same": (
        lambda: L.AveragePooling2D(pool_size=(2, 3), strides=(1, 2), padding="same"),
        X4,
        [
            [
                [[-0.25, 0.25], [0.375, 0.0]],
                [[0.25, 0.1666667], [0.0, -0.375]],
                [[0.5, -0.1666667], [0.25, -1.0]],
            ],
            [
                [[0.0833333, 0.0], [-0.75, -0.25]],
                [[0.0, -0.0833333], [-0.25, 0.25]],
                [[-0.3333333, 0.1666667], [0.0, 0.5]],
            ],
        ],
        None,
    ),
    "global_average_pooling2d": (
        lambda: L.GlobalAveragePooling2D(),
        X4,
        [[-0.0833333, -0.1666667], [-0.0416667, 0.1666667]],
        None,
    ),
    "global_max_pooling2d": (lambda: L.GlobalMaxPooling2D(), X4, [[1.5, 1.5], [1.5, 1.5]], None),
    "global_average_pooling1d": (
        lambda: L.GlobalAveragePooling1D(),
        X3,
        [[0.0, -0.3333333], [-0.3333333, 0.1666667]],
        [[[0.3333333, 0.6666667]] * 3, [[1.0, 0.3333333]] * 3],
    ),
    "global_average_pooling1d_channels_first": (
        lambda: L.GlobalAveragePooling1D(data_format="channels_first"),
        X3,
        [[-0.75, 0.25, 0.0], [-0.25, 0.75, -0.75]],
        [[[0.5, 0.5], [1.0, 1.0], [1.5, 1.5]]] * 2,
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(KERAS_LAYER_VALUES))
def test_new_layers_against_keras(case, backend):
    make, x, expected, expected_grad = KERAS_LAYER_VALUES[case]
    y, g = run(weighted_sum_grad(make()), backend, tt.constant(x))
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    if expected_grad is not None:
        np.testing.assert_allclose(g.numpy(), expected_grad, rtol=1e-5, atol=1e-6)


# Keras 3's reshaping layers are numpy's pad, slicing, repeat and transpose (checked against
# Keras 3 on these inputs); their gradients the adjoints of those
RESHAPING = {
    "permute": (lambda: L.Permute((2, 1)), X3, lambda x: x.transpose(0, 2, 1)),
    "repeat_vector": (lambda: L.RepeatVector(3), X1, lambda x: np.repeat(x[:, None], 3, axis=1)),
    "zero_padding": (
        lambda: L.ZeroPadding2D(((1, 0), (0, 2))),
        X4,
        lambda x: np.pad(x, [(0, 0), (1, 0), (0, 2), (0, 0)]),
    ),
    "zero_padding_channels_first": (
        lambda: L.ZeroPadding2D(1, data_format="channels_first"),
        X4,
        lambda x: np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)]),
    ),
    "cropping": (lambda: L.Cropping2D(((1, 0), (1, 2))), X4, lambda x: x[:, 1:, 1:-2, :]),
    "cropping_channels_first": (
        lambda: L.Cropping2D(((0, 1), (0, 0)), data_format="channels_first"),
        X4,
        lambda x: x[:, :, :-1, :],
    ),
    "up_sampling": (
        lambda: L.UpSampling2D((2, 3)),
        X4,
        lambda x: np.repeat(np.repeat(x, 2, axis=1), 3, axis=2),
    ),
    "up_sampling_channels_first": (
        lambda: L.UpSampling2D(2, data_format="channels_first"),
        X4,
        lambda x: np.repeat(np.repeat(x, 2, axis=2), 2, axis=3),
    ),
    "identity": (lambda: L.Identity(), X1, lambda x: x),
    "rescaling": (lambda: L.Rescaling(0.5, offset=-1.0), X1, lambda x: x * 0.5 - 1.0),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(RESHAPING))
def test_reshaping_layers(case, backend):
    make, x, reference = RESHAPING[case]
    y, g = run(weighted_sum_grad(make()), backend, tt.constant(x))
    expected = reference(x)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    # each is affine: the gradient of sum(y * w) at each input is the change of sum(y * w)
    # along that input's unit vector
    w = (np.arange(expected.size) % 3 + 1).reshape(expected.shape).astype(np.float64)
    basis = np.eye(x.size).reshape(x.size, *x.shape)
    at_zero = reference(np.zeros_like(x))
    expected_grad = np.array([np.sum((reference(b) - at_zero) * w) for b in basis])
    expected_grad = expected_grad.reshape(x.shape)
    np.testing.assert_allclose(g.numpy(), expected_grad, rtol=1e-5)


def test_softmax_and_global_average_pooling_masks():
    mask = tt.constant([[True, False, True, True], [False, False, True, False]])
    y = L.Softmax()(tt.constant(X1), mask=mask)
    np.testing.assert_allclose(  # Keras 3
        y.numpy(), [[0.0756351, 0.0, 0.3067156, 0.6176493], [0.0, 0.0, 1.0, 0.0]], rtol=1e-5
    )
    steps = tt.constant([[True, False, True], [True, True, False]])
    y = L.GlobalAveragePooling1D()(tt.constant(X3), mask=steps)
    np.testing.assert_allclose(y.numpy(), [[0.0, -0.75], [0.0, 0.5]], atol=1e-7)  # Keras 3


def test_rescaling_uint8_images():
    y = L.Rescaling(1 / 255)(tt.constant(np.array([[0, 51, 255]], np.uint8)))
    assert y.dtype == tt.float32
    np.testing.assert_allclose(y.numpy(), [[0.0, 0.2, 1.0]], rtol=1e-6)  # Keras 3


def test_new_layer_argument_checks_as_keras():
    with pytest.raises(ValueError):
        L.ReLU(max_value=-1.0)
    with pytest.raises(ValueError):
        L.LeakyReLU(negative_slope=-0.1)
    with pytest.raises(ValueError):
        L.Permute((1, 3))
    with pytest.raises(TypeError):
        L.RepeatVector(2.0)
    with pytest.raises(TypeError):
        L.AveragePooling2D()  # Keras 3's has no default pool_size
    assert L.LeakyReLU(alpha=0.1).negative_slope == 0.1  # Keras 2's name


NEW_LAYERS = [
    (lambda: L.ReLU(max_value=6.0, negative_slope=0.1), (None, 4)),
    (lambda: L.LeakyReLU(negative_slope=0.2), (None, 4)),
    (lambda: L.ELU(alpha=0.5), (None, 4)),
    (lambda: L.Softmax(axis=-1), (None, 4)),
    (lambda: L.Rescaling(0.5, offset=1.0), (None, 4)),
    (lambda: L.Identity(), (None, 4)),
    (lambda: L.Permute((2, 1)), (None, 3, 2)),
    (lambda: L.RepeatVector(3), (None, 4)),
    (lambda: L.ZeroPadding2D(((1, 0), (0, 2))), (None, 3, 4, 2)),
    (lambda: L.Cropping2D(((1, 0), (1, 2))), (None, 3, 4, 2)),
    (lambda: L.UpSampling2D((2, 3)), (None, 3, 4, 2)),
    (lambda: L.AveragePooling2D((2, 2), padding="same"), (None, 3, 4, 2)),
    (lambda: L.GlobalAveragePooling2D(keepdims=True), (None, 3, 4, 2)),
    (lambda: L.GlobalMaxPooling2D(data_format="channels_first"), (None, 3, 4, 2)),
    (lambda: L.GlobalAveragePooling1D(), (None, 3, 2)),
]


@pytest.mark.parametrize("index", range(len(NEW_LAYERS)))
def test_new_layers_config_and_keras_file_round_trip(index, tmp_path):
    make, shape = NEW_LAYERS[index]
    layer = make()
    config = layer.get_config() if hasattr(layer, "get_config") else None
    if config is not None:
        again = type(layer)(**config)
        assert again.get_config() == config
    model = keras.Sequential([keras.Input(shape[1:]), layer])
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert type(loaded.layers[-1]) is type(layer)
    x = tt.constant(np.random.default_rng(0).normal(size=(2, *shape[1:])).astype(np.float32))
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy())


# --- the added losses: Keras 3's values ------------------------------------------------------

YT = np.array([[0.0, 1.0, 0.5], [0.2, 0.3, 0.5]], np.float32)
YP = np.array([[0.4, 0.3, 2.5], [0.1, 0.6, 0.3]], np.float32)
SW = np.array([0.5, 2.0], np.float32)
LOSSES = keras.losses

# name: (function, class, Keras 3's per-sample losses, its default reduction, reduction="sum"
# with SW, and the gradient of the default-reduced loss with respect to y_pred)
KERAS_LOSS_VALUES = {
    "huber": (
        LOSSES.huber,
        LOSSES.Huber,
        [0.6083333, 0.0233333],
        0.3158333,
        0.3508334,
        [[0.0666667, -0.1166667, 0.1666667], [-0.0166667, 0.05, -0.0333333]],
    ),
    "kl_divergence": (
        LOSSES.kl_divergence,
        LOSSES.KLDivergence,
        [0.8573977, 0.1860981],
        0.5217479,
        0.800895,
        [[-1e-07, -1.6666666, 0.0], [-1.0, -0.25, -0.8333333]],
    ),
    "cosine_similarity": (
        LOSSES.cosine_similarity,
        LOSSES.CosineSimilarity,
        [-0.543776, -0.8371386],
        -0.6904573,
        -1.9461652,
        [[0.0167316, -0.1628629, 0.0168665], [-0.1481891, 0.1871862, -0.3249762]],
    ),
    "log_cosh": (
        LOSSES.log_cosh,
        LOSSES.LogCosh,
        [0.5434088, 0.0230668],
        0.2832378,
        0.317838,
        [[0.0633248, -0.100728, 0.1606713], [-0.0166113, 0.0485521, -0.0328959]],
    ),
    "poisson": (
        LOSSES.poisson,
        LOSSES.Poisson,
        [1.3152757, 0.7385836],
        1.0269296,
        2.134805,
        [[0.1666667, -0.3888887, 0.1333333], [-0.1666664, 0.0833334, -0.111111]],
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(KERAS_LOSS_VALUES))
def test_new_losses_against_keras(name, backend):
    fn, cls, per_sample, reduced, weighted_sum, grad = KERAS_LOSS_VALUES[name]

    def losses(t, p):
        with tt.GradientTape() as tape:
            tape.watch(p)
            loss = cls()(t, p)
        weighted = cls(reduction="sum")(t, p, sample_weight=tt.constant(SW))
        return fn(t, p), loss, weighted, tape.gradient(loss, p)

    got = run(losses, backend, tt.constant(YT), tt.constant(YP))
    np.testing.assert_allclose(got[0].numpy(), per_sample, rtol=1e-5)
    np.testing.assert_allclose(float(got[1]), reduced, rtol=1e-5)
    np.testing.assert_allclose(float(got[2]), weighted_sum, rtol=1e-5)
    np.testing.assert_allclose(got[3].numpy(), grad, rtol=1e-4, atol=1e-6)
    assert keras.losses.get(name) is fn
    assert isinstance(keras.losses.get(cls.__name__), cls)


def test_new_loss_options_as_keras():
    t, p = tt.constant(YT), tt.constant(YP)
    # Keras 3: huber(delta=0.5), cosine_similarity(axis=0), reduction="none" with weights
    np.testing.assert_allclose(
        LOSSES.huber(t, p, delta=0.5).numpy(), [0.3933333, 0.0233333], rtol=1e-5
    )
    np.testing.assert_allclose(float(LOSSES.Huber(delta=0.5)(t, p)), 0.2083333, rtol=1e-5)
    np.testing.assert_allclose(
        LOSSES.cosine_similarity(t, p, axis=0).numpy(),
        [-0.2425356, -0.6853647, -0.7863183],
        rtol=1e-5,
    )
    np.testing.assert_allclose(float(LOSSES.CosineSimilarity(axis=0)(t, p)), -0.5714062, rtol=1e-5)
    none = LOSSES.Poisson(reduction="none")(t, p, sample_weight=SW)
    np.testing.assert_allclose(none.numpy(), [0.6576378, 1.4771671], rtol=1e-5)
    zero = LOSSES.cosine_similarity(np.zeros((1, 2), np.float32), np.ones((1, 2), np.float32))
    assert zero.numpy().tolist() == [0.0]  # Keras 3: -0.0 (no NaN)
    assert LOSSES.get("kld") is LOSSES.kl_divergence
    for cls, kwargs in [(LOSSES.Huber, {"delta": 0.5}), (LOSSES.CosineSimilarity, {"axis": 0})]:
        loss = cls(**kwargs)
        again = cls.from_config(loss.get_config())
        assert again.get_config() == loss.get_config()
        np.testing.assert_allclose(float(again(t, p)), float(loss(t, p)))


def test_new_modules_docstring_examples():
    import doctest

    from tracer.keras.layers import activation_layers, core

    for module in (activation_layers, core, keras.losses):
        result = doctest.testmod(module, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0


def test_a_layer_with_its_own_compute_mask_supports_masking_by_default():
    # Keras 3: supports_masking defaults to whether the class overrides compute_mask, so a
    # layer that splits its mask attaches the halves (TF 2.21 printed the masks [[T T] [T F]]
    # and [[F F] [F F]] for this split of [[1, 2, 0, 0], [3, 0, 0, 0]])
    class TemporalSplit(keras.layers.Layer):
        def call(self, inputs):
            return tt.split(inputs, 2, axis=1)

        def compute_mask(self, inputs, mask=None):
            return None if mask is None else tt.split(mask, 2, axis=1)

    class Plain(keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    class Passing(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.supports_masking = True

    embedded = keras.layers.Embedding(5, 2, mask_zero=True)(
        tt.constant([[1, 2, 0, 0], [3, 0, 0, 0]])
    )
    first, second = TemporalSplit()(embedded)
    np.testing.assert_array_equal(first._keras_mask.numpy(), [[True, True], [True, False]])
    np.testing.assert_array_equal(second._keras_mask.numpy(), [[False, False], [False, False]])
    assert TemporalSplit().supports_masking and not Plain().supports_masking
    assert Plain()(embedded)._keras_mask is None
    assert Passing().supports_masking
    np.testing.assert_array_equal(
        Passing()(embedded)._keras_mask.numpy(), embedded._keras_mask.numpy()
    )
    turned_off = TemporalSplit()
    turned_off.supports_masking = False
    assert turned_off(embedded)[0]._keras_mask is None


def test_a_layer_that_drops_a_mask_warns_as_keras():
    # Keras 3's UserWarning, as TF 2.21 printed it for this layer
    class Scale(keras.layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    embedded = keras.layers.Embedding(5, 2, mask_zero=True)(tt.constant([[1, 0]]))
    layer = Scale(name="scale")
    with pytest.warns(UserWarning) as caught:
        layer(embedded)
    assert str(caught[0].message) == (
        "Layer 'scale' (of type Scale) was passed an input with a mask attached to it. "
        "However, this layer does not support masking and will therefore destroy the mask "
        "information. Downstream layers will not see the mask."
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.layers.Dense(2)(embedded)  # supports masking: passes it on, no warning
        layer(tt.ones((1, 2, 2)))  # no mask, no warning
    # Python's default filter shows it once, wherever the layer is called from (Keras's)
    with warnings.catch_warnings(record=True) as shown:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        other = Scale(name="other")
        other(embedded)
        other(embedded)
    assert len(shown) == 1


def test_an_input_shape_given_to_a_layer_warns_as_keras():
    # Keras 3's UserWarning, as TF 2.21 printed it for Dense(1, input_dim=784)
    with pytest.warns(UserWarning, match=r"^Do not pass an `input_shape`/`input_dim` argument"):
        model = keras.Sequential([keras.layers.Dense(1, input_dim=4)])
    assert model.input_shape == (None, 4)
    with pytest.warns(UserWarning, match="prefer using an `Input\\(shape\\)` object"):
        keras.layers.LSTM(2, input_shape=(None, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.layers.Dense(1)
