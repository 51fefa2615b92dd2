"""Held-out: the numbers tf.keras layers compute, forward and backward. Each case builds one
layer (or a small Sequential / functional Model) by calling it once, sets every weight from
seeded numpy arrays of the shapes get_weights() reports (so both engines hold identical
weights), and prints the weight names and shapes in order, then, per mode, the output and
the gradient of sum(output * fixed_random) with respect to every float input and every
trainable weight (one GradientTape), plus the values of any non-trainable weights after the
call (BatchNormalization's moving statistics). The whole step, tape included, runs eagerly
and inside the mode's tf.function (tracer: C and the numpy interpreter).

Layers: Dense, Conv1D/2D/3D (padding valid/same/causal, strides, dilation, groups),
DepthwiseConv2D, SeparableConv2D, Conv1D/2DTranspose (output_padding), Max/Average pooling
1D/2D, global pooling (keepdims), UpSampling2D, ZeroPadding2D, Cropping2D,
BatchNormalization (training on and off, axis=1, without center/scale), LayerNormalization,
GroupNormalization, UnitNormalization, Dropout and GaussianNoise at inference, Embedding
(mask_zero), SimpleRNN/LSTM/GRU (sequences, states, go_backwards, reset_after, Masking),
Bidirectional merge modes, MultiHeadAttention, Attention, AdditiveAttention, reshaping
layers, merge layers, activation layers, Lambda, TimeDistributed, and two small models.

Lines read `case [mode] label shape values` (values "%.5g", float32) or
`case [mode] ERR TypeName: message`; an optional second argument keeps only the cases whose
names contain it."""

import sys
import zlib

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
keras = tf.keras
layers = keras.layers
CASES = []


def say(name, mode, *parts):
    print(f"{name} [{mode}]", *parts, flush=True)


def render(v):
    if v is None:
        return "None"
    if hasattr(v, "indices") and hasattr(v, "values"):  # IndexedSlices (Embedding's gradient)
        v = tf.convert_to_tensor(v)
    a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    if a.dtype == bool:
        return f"{tuple(a.shape)} " + " ".join(str(int(x)) for x in a.ravel())
    return f"{tuple(a.shape)} " + " ".join("%.5g" % x for x in a.astype(np.float64).ravel())


def flat(x):
    """Outputs (a tensor, or lists / tuples / dicts of them) as a flat list."""
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in flat(v)]
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in flat(x[k])]
    return [x]


def is_float(a):
    return np.asarray(a).dtype.kind == "f"


def fill(rng, layer):
    """numpy arrays for every weight of a built layer, in get_weights() order."""
    arrays = []
    for v, a in zip(layer.weights, layer.get_weights()):
        a = np.asarray(a)
        if a.dtype.kind != "f":
            arrays.append(a)  # integer state (a seed, a counter) stays as it is
        elif "variance" in v.name:
            arrays.append(rng.uniform(0.5, 1.5, a.shape).astype(a.dtype))
        else:
            arrays.append(rng.normal(0.0, 0.5, a.shape).astype(a.dtype))
    return arrays


def run_case(name, make, inputs, call):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    try:
        xs = [x(rng) if callable(x) else x for x in inputs]
        xs = [np.asarray(x) for x in xs]
        layer = make()
        first = flat(call(layer, [tf.constant(x) for x in xs]))
        shapes = [tuple(np.asarray(w).shape) for w in layer.get_weights()]
        names = [v.name.split("/")[-1].split(":")[0] for v in layer.weights]
        flags = ["T" if v.trainable else "N" for v in layer.weights]
        say(name, "weights", " ".join(f"{n}{s}{t}" for n, s, t in zip(names, shapes, flags)))
        arrays = fill(rng, layer)
        rs = [rng.normal(size=tuple(o.shape)).astype(np.float32) for o in first]
    except Exception as e:  # report it and go on
        say(name, "build", failure(e))
        return
    watched = [i for i, x in enumerate(xs) if is_float(x)]

    def step(*args):
        with tf.GradientTape() as tape:
            for i in watched:
                tape.watch(args[i])
            outs = flat(call(layer, list(args)))
            loss = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32) * r) for o, r in zip(outs, rs)])
        grads = tape.gradient(loss, [args[i] for i in watched] + list(layer.trainable_weights))
        return outs, grads

    for mode, wrap in MODES:
        try:
            layer.set_weights(arrays)
            f = step if wrap is None else wrap(step)
            outs, grads = f(*[tf.constant(x) for x in xs])
            lines = [f"out{i} {render(o)}" for i, o in enumerate(outs)]
            lines += [f"d_x{i} {render(g)}" for i, g in zip(watched, grads)]
            lines += [f"d_w{i} {render(g)}" for i, g in enumerate(grads[len(watched) :])]
            lines += [f"state{i} {render(v)}" for i, v in enumerate(layer.non_trainable_weights)]
        except Exception as e:  # report it and go on
            lines = [failure(e)]
        for line in lines:
            say(name, mode, line)


def case(name, make, *inputs, call=None, **kw):
    """Registers a layer case; `call(layer, tensors)` defaults to layer(x, **kw) for one
    input and layer([x, y, ...], **kw) for several."""
    if call is None:

        def call(layer, xs):
            return layer(xs[0] if len(xs) == 1 else xs, **kw)

    CASES.append((name, make, inputs, call))


def normal(*shape):
    return lambda rng: rng.normal(size=shape).astype(np.float32)


def ints(high, *shape):
    return lambda rng: rng.integers(0, high, size=shape).astype(np.int32)


def const(a, dtype=np.float32):
    return lambda rng: np.asarray(a, dtype)


# ---- Dense ----------------------------------------------------------------------------------
case("dense_linear", lambda: layers.Dense(4), normal(3, 5))
case("dense_relu_nobias", lambda: layers.Dense(4, activation="relu", use_bias=False), normal(3, 5))
case("dense_softmax", lambda: layers.Dense(3, activation="softmax"), normal(2, 4))
case("dense_gelu_rank3", lambda: layers.Dense(3, activation="gelu"), normal(2, 3, 4))

# ---- convolutions ---------------------------------------------------------------------------
case("conv1d_valid", lambda: layers.Conv1D(3, 3), normal(2, 8, 2))
case("conv1d_same_stride2", lambda: layers.Conv1D(3, 3, strides=2, padding="same"), normal(2, 8, 2))
case(
    "conv1d_causal_dilation2",
    lambda: layers.Conv1D(2, 3, padding="causal", dilation_rate=2),
    normal(2, 7, 2),
)
case(
    "conv1d_causal_stride2",
    lambda: layers.Conv1D(2, 3, strides=2, padding="causal"),
    normal(1, 7, 2),
)
case("conv2d_valid", lambda: layers.Conv2D(3, (3, 2)), normal(2, 5, 4, 2))
case(
    "conv2d_same_stride2_odd",
    lambda: layers.Conv2D(2, 3, strides=2, padding="same"),
    normal(1, 7, 7, 2),
)
case(
    "conv2d_same_stride2_even_k4",
    lambda: layers.Conv2D(2, 4, strides=2, padding="same"),
    normal(1, 6, 6, 2),
)
case(
    "conv2d_same_dilation2",
    lambda: layers.Conv2D(2, 3, dilation_rate=2, padding="same"),
    normal(1, 6, 5, 2),
)
case(
    "conv2d_groups2_relu",
    lambda: layers.Conv2D(4, 3, groups=2, activation="relu"),
    normal(2, 5, 5, 4),
)
case(
    "conv2d_strides12_nobias",
    lambda: layers.Conv2D(2, (2, 3), strides=(1, 2), use_bias=False),
    normal(1, 5, 7, 3),
)
case("conv3d_valid", lambda: layers.Conv3D(2, 2), normal(1, 4, 3, 4, 2))
case(
    "depthwise_dm2_stride2",
    lambda: layers.DepthwiseConv2D(3, strides=2, depth_multiplier=2),
    normal(1, 7, 6, 2),
)
case(
    "depthwise_dilation2_same",
    lambda: layers.DepthwiseConv2D(2, dilation_rate=2, padding="same"),
    normal(1, 5, 5, 2),
)
case(
    "separable_same_dm2",
    lambda: layers.SeparableConv2D(3, 3, padding="same", depth_multiplier=2),
    normal(1, 5, 5, 2),
)
case(
    "separable_valid_stride2",
    lambda: layers.SeparableConv2D(2, 2, strides=2, activation="relu"),
    normal(2, 6, 5, 3),
)
case("conv2dT_valid", lambda: layers.Conv2DTranspose(2, 3), normal(1, 3, 4, 2))
case(
    "conv2dT_same_stride2",
    lambda: layers.Conv2DTranspose(2, 3, strides=2, padding="same"),
    normal(1, 3, 3, 2),
)
case(
    "conv2dT_same_stride21_k4",
    lambda: layers.Conv2DTranspose(3, 4, strides=(2, 1), padding="same"),
    normal(1, 3, 3, 1),
)
case(
    "conv2dT_valid_stride2_outpad1",
    lambda: layers.Conv2DTranspose(2, 3, strides=2, output_padding=1),
    normal(1, 3, 2, 2),
)
case(
    "conv1dT_same_stride2",
    lambda: layers.Conv1DTranspose(2, 3, strides=2, padding="same"),
    normal(2, 4, 2),
)

# ---- pooling --------------------------------------------------------------------------------
case(
    "maxpool1d_same_s1",
    lambda: layers.MaxPooling1D(pool_size=3, strides=1, padding="same"),
    normal(2, 5, 2),
)
case(
    "avgpool1d_same_s2",
    lambda: layers.AveragePooling1D(pool_size=3, strides=2, padding="same"),
    normal(2, 6, 2),
)
case("maxpool2d_valid", lambda: layers.MaxPooling2D(), normal(2, 5, 4, 2))
case(
    "maxpool2d_same_s1",
    lambda: layers.MaxPooling2D(pool_size=3, strides=1, padding="same"),
    normal(1, 4, 4, 2),
)
case(
    "avgpool2d_same_s2",
    lambda: layers.AveragePooling2D(pool_size=3, strides=2, padding="same"),
    normal(1, 5, 5, 2),
)
case(
    "avgpool2d_same_s1_k2",
    lambda: layers.AveragePooling2D(pool_size=2, strides=1, padding="same"),
    normal(1, 3, 3, 1),
)
case(
    "maxpool2d_ties_overlap",
    lambda: layers.MaxPooling2D(pool_size=2, strides=1),
    const(np.array([[1, 1, 0, 2], [1, 1, 2, 2], [0, 3, 3, 1], [3, 3, 1, 1]]).reshape(1, 4, 4, 1)),
)
case("gmp2d_keepdims", lambda: layers.GlobalMaxPooling2D(keepdims=True), normal(2, 3, 4, 2))
case("gap1d_keepdims", lambda: layers.GlobalAveragePooling1D(keepdims=True), normal(2, 5, 3))

# ---- resizing, padding, cropping ------------------------------------------------------------
case("upsampling2d_nearest", lambda: layers.UpSampling2D((2, 3)), normal(1, 2, 3, 2))
case(
    "upsampling2d_bilinear",
    lambda: layers.UpSampling2D(2, interpolation="bilinear"),
    normal(1, 3, 3, 1),
)
case("zeropad2d", lambda: layers.ZeroPadding2D(((1, 2), (0, 1))), normal(1, 2, 3, 2))
case("cropping2d", lambda: layers.Cropping2D(((1, 0), (1, 2))), normal(2, 4, 5, 1))

# ---- normalization --------------------------------------------------------------------------
case("bn_infer", lambda: layers.BatchNormalization(), normal(4, 3), training=False)
case(
    "bn_train_momentum09",
    lambda: layers.BatchNormalization(momentum=0.9),
    normal(5, 3),
    training=True,
)
case("bn_train_axis1", lambda: layers.BatchNormalization(axis=1), normal(2, 3, 2, 2), training=True)
case(
    "bn_train_no_center_scale",
    lambda: layers.BatchNormalization(center=False, scale=False),
    normal(4, 3),
    training=True,
)
case(
    "bn_train_conv_eps",
    lambda: layers.BatchNormalization(momentum=0.5, epsilon=0.01),
    normal(2, 3, 3, 2),
    training=True,
)
case(
    "bn_train_batch1",
    lambda: layers.BatchNormalization(),
    normal(1, 2, 2, 2),
    training=True,
)
case(
    "bn_infer_axis1_no_center",
    lambda: layers.BatchNormalization(axis=1, center=False),
    normal(2, 3, 4),
    training=False,
)
case("bn_default_call", lambda: layers.BatchNormalization(), normal(4, 2))
case(
    "bn_train_explicit_mask",
    lambda: layers.BatchNormalization(momentum=0.5),
    normal(2, 3, 2),
    const(np.array([[1, 1, 0], [1, 0, 0]], bool), bool),
    call=lambda layer, xs: layer(xs[0], training=True, mask=xs[1]),
)
case("ln_last", lambda: layers.LayerNormalization(), normal(3, 4))
case("ln_axis12_eps", lambda: layers.LayerNormalization(axis=[1, 2], epsilon=0.1), normal(2, 3, 4))
case("ln_rms_scaling", lambda: layers.LayerNormalization(rms_scaling=True), normal(2, 4))
case("groupnorm_g2", lambda: layers.GroupNormalization(groups=2), normal(2, 3, 4))
case("groupnorm_instance", lambda: layers.GroupNormalization(groups=-1), normal(2, 2, 2, 3))
case(
    "groupnorm_no_center_eps",
    lambda: layers.GroupNormalization(groups=2, center=False, epsilon=0.1),
    normal(2, 3, 4),
)
case("unitnorm_last", lambda: layers.UnitNormalization(), normal(3, 4))
case(
    "unitnorm_zero_and_tiny_rows",
    lambda: layers.UnitNormalization(),
    const([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0], [1e-8, 2e-8, 0.0]]),
)

# ---- regularization at inference -------------------------------------------------------------
case("dropout_infer", lambda: layers.Dropout(0.5), normal(2, 4), training=False)
case("gaussian_noise_infer", lambda: layers.GaussianNoise(1.0), normal(2, 4), training=False)

# ---- Embedding --------------------------------------------------------------------------------
case("embedding_plain", lambda: layers.Embedding(6, 3), ints(6, 2, 4))


def embed_mask(layer, xs):
    return layer(xs[0]), tf.cast(layer.compute_mask(xs[0]), tf.float32)


case(
    "embedding_mask_zero",
    lambda: layers.Embedding(5, 2, mask_zero=True),
    const([[1, 2, 0, 0], [0, 3, 4, 1]], np.int32),
    call=embed_mask,
)
case(
    "embedding_lstm_masked",
    lambda: keras.Sequential([layers.Embedding(5, 2, mask_zero=True), layers.LSTM(3)]),
    const([[1, 2, 0, 0], [3, 0, 4, 0]], np.int32),
)
case(
    "embedding_gap1d_masked",
    lambda: keras.Sequential(
        [layers.Embedding(5, 2, mask_zero=True), layers.GlobalAveragePooling1D()]
    ),
    const([[1, 2, 0, 0], [3, 0, 4, 1]], np.int32),
)

# ---- recurrent ------------------------------------------------------------------------------
case(
    "simplernn_seq_state",
    lambda: layers.SimpleRNN(3, return_sequences=True, return_state=True),
    normal(2, 3, 2),
)
case("lstm_last", lambda: layers.LSTM(3), normal(2, 4, 2))
case(
    "lstm_seq_state",
    lambda: layers.LSTM(3, return_sequences=True, return_state=True),
    normal(2, 3, 2),
)
case(
    "lstm_backwards_seq",
    lambda: layers.LSTM(2, return_sequences=True, go_backwards=True),
    normal(2, 4, 3),
)
case(
    "lstm_initial_state",
    lambda: layers.LSTM(2, return_sequences=True),
    normal(2, 3, 2),
    normal(2, 2),
    normal(2, 2),
    call=lambda layer, xs: layer(xs[0], initial_state=[xs[1], xs[2]]),
)
case("gru_reset_after", lambda: layers.GRU(3), normal(2, 4, 2))
case("gru_reset_before", lambda: layers.GRU(3, reset_after=False), normal(2, 4, 2))
case(
    "gru_seq_state_backwards",
    lambda: layers.GRU(2, return_sequences=True, return_state=True, go_backwards=True),
    normal(2, 3, 2),
)
case(
    "gru_dropout_infer",
    lambda: layers.GRU(2, dropout=0.5, recurrent_dropout=0.5),
    normal(2, 3, 2),
    training=False,
)
MASKED = np.random.default_rng(7).normal(size=(2, 4, 2)).astype(np.float32)
MASKED[0, 2:] = 0.0
MASKED[1, 0] = 0.0
ALLMASKED = MASKED.copy()
ALLMASKED[1] = 0.0
case(
    "masking_lstm_seq",
    lambda: keras.Sequential([layers.Masking(0.0), layers.LSTM(3, return_sequences=True)]),
    const(MASKED),
)
case(
    "masking_gru_last",
    lambda: keras.Sequential([layers.Masking(0.0), layers.GRU(3)]),
    const(MASKED),
)
case(
    "masking_simplernn_backwards",
    lambda: keras.Sequential(
        [layers.Masking(0.0), layers.SimpleRNN(2, go_backwards=True, return_sequences=True)]
    ),
    const(MASKED),
)
case(
    "masking_lstm_all_masked_row",
    lambda: keras.Sequential(
        [layers.Masking(0.0), layers.LSTM(2, return_sequences=True, return_state=True)]
    ),
    const(ALLMASKED),
)
case(
    "masking_timedistributed_gru",
    lambda: keras.Sequential(
        [layers.Masking(0.0), layers.TimeDistributed(layers.Dense(2)), layers.GRU(2)]
    ),
    const(MASKED),
)
case(
    "masking_gap1d",
    lambda: keras.Sequential([layers.Masking(0.0), layers.GlobalAveragePooling1D()]),
    const(MASKED),
)
case(
    "masking_bn_train",
    lambda: keras.Sequential([layers.Masking(0.0), layers.BatchNormalization()]),
    const(MASKED),
    training=True,
)
for mode_name in ["concat", "sum", "ave", None]:
    case(
        f"bidir_lstm_{mode_name}",
        lambda m=mode_name: layers.Bidirectional(
            layers.LSTM(2, return_sequences=True), merge_mode=m
        ),
        normal(2, 3, 2),
    )
case(
    "bidir_lstm_return_state",
    lambda: layers.Bidirectional(layers.LSTM(2, return_state=True)),
    normal(2, 3, 2),
)
case(
    "bidir_gru_last_masked",
    lambda: keras.Sequential([layers.Masking(0.0), layers.Bidirectional(layers.GRU(2))]),
    const(MASKED),
)
case(
    "bidir_embedding_masked",
    lambda: keras.Sequential(
        [
            layers.Embedding(5, 2, mask_zero=True),
            layers.Bidirectional(layers.LSTM(2, return_sequences=True)),
        ]
    ),
    const([[1, 2, 0, 0], [3, 1, 4, 0]], np.int32),
)

# ---- attention ------------------------------------------------------------------------------
case(
    "mha_mask_scores",
    lambda: layers.MultiHeadAttention(num_heads=2, key_dim=2),
    normal(2, 3, 4),
    normal(2, 5, 4),
    const(np.tril(np.ones((3, 5)))[None].repeat(2, 0).astype(bool), bool),
    call=lambda layer, xs: layer(xs[0], xs[1], attention_mask=xs[2], return_attention_scores=True),
)
case(
    "mha_causal",
    lambda: layers.MultiHeadAttention(num_heads=2, key_dim=2),
    normal(2, 4, 3),
    call=lambda layer, xs: layer(xs[0], xs[0], use_causal_mask=True),
)
case(
    "mha_causal_and_mask",
    lambda: layers.MultiHeadAttention(num_heads=2, key_dim=2),
    normal(2, 4, 3),
    const(np.array([[1, 1, 0, 1], [0, 1, 1, 1]], bool)[:, None, :].repeat(4, 1), bool),
    call=lambda layer, xs: layer(
        xs[0], xs[0], attention_mask=xs[1], use_causal_mask=True, return_attention_scores=True
    ),
)
case(
    "mha_kv_dims",
    lambda: layers.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=4, output_shape=5),
    normal(2, 3, 4),
    normal(2, 2, 6),
    normal(2, 2, 3),
    call=lambda layer, xs: layer(xs[0], xs[1], key=xs[2]),
)
case(
    "mha_nobias_dropout_infer",
    lambda: layers.MultiHeadAttention(num_heads=1, key_dim=3, use_bias=False, dropout=0.5),
    normal(1, 3, 2),
    call=lambda layer, xs: layer(xs[0], xs[0], training=False),
)
case(
    "mha_attention_axes",
    lambda: layers.MultiHeadAttention(num_heads=2, key_dim=2, attention_axes=(1, 2)),
    normal(1, 3, 2, 4),
    call=lambda layer, xs: layer(xs[0], xs[0]),
)
case("attention_dot", lambda: layers.Attention(), normal(2, 3, 4), normal(2, 5, 4))
case(
    "attention_scale_causal_scores",
    lambda: layers.Attention(use_scale=True),
    normal(2, 4, 3),
    normal(2, 4, 2),
    normal(2, 4, 3),
    call=lambda layer, xs: layer(xs, use_causal_mask=True, return_attention_scores=True),
)
QMASK = np.array([[1, 1, 0], [1, 0, 1]], bool)
VMASK = np.array([[1, 0, 1, 1], [0, 1, 1, 0]], bool)
case(
    "attention_masks",
    lambda: layers.Attention(),
    normal(2, 3, 2),
    normal(2, 4, 2),
    const(QMASK, bool),
    const(VMASK, bool),
    call=lambda layer, xs: layer(xs[:2], mask=xs[2:]),
)
case(
    "attention_causal_and_masks",
    lambda: layers.Attention(),
    normal(2, 3, 2),
    normal(2, 3, 2),
    const(QMASK, bool),
    const(np.array([[1, 1, 0], [0, 1, 1]], bool), bool),
    call=lambda layer, xs: layer(xs[:2], mask=xs[2:], use_causal_mask=True),
)
case(
    "attention_concat_mode",
    lambda: layers.Attention(score_mode="concat"),
    normal(1, 2, 3),
    normal(1, 3, 3),
)
case("additive_attention", lambda: layers.AdditiveAttention(), normal(2, 3, 2), normal(2, 4, 2))
case(
    "additive_attention_mask_scores",
    lambda: layers.AdditiveAttention(use_scale=False),
    normal(2, 3, 2),
    normal(2, 4, 2),
    const(VMASK, bool),
    call=lambda layer, xs: layer(xs[:2], mask=[None, xs[2]], return_attention_scores=True),
)

# ---- reshaping --------------------------------------------------------------------------------
case("reshape_infer", lambda: layers.Reshape((-1, 2)), normal(2, 3, 4))
case("flatten", lambda: layers.Flatten(), normal(2, 2, 3, 2))
case("permute", lambda: layers.Permute((3, 1, 2)), normal(2, 2, 3, 4))
case("repeat_vector", lambda: layers.RepeatVector(3), normal(2, 4))

# ---- merging ----------------------------------------------------------------------------------
case("concatenate_axis1", lambda: layers.Concatenate(axis=1), normal(2, 2, 3), normal(2, 4, 3))
case("add3", lambda: layers.Add(), normal(2, 3), normal(2, 3), normal(2, 3))
case("multiply", lambda: layers.Multiply(), normal(2, 3), normal(2, 3))
case("average", lambda: layers.Average(), normal(2, 3), normal(2, 3), normal(2, 3))
case(
    "maximum_ties",
    lambda: layers.Maximum(),
    const([[1.0, 2.0, 3.0]]),
    const([[1.0, 5.0, 0.0]]),
)
case("dot_axes", lambda: layers.Dot(axes=(2, 2)), normal(2, 3, 4), normal(2, 5, 4))
case("dot_normalize", lambda: layers.Dot(axes=1, normalize=True), normal(3, 4), normal(3, 4))
case(
    "dot_normalize_3d",
    lambda: layers.Dot(axes=(1, 1), normalize=True),
    normal(2, 3, 2),
    normal(2, 3, 4),
)

# ---- activation layers ----------------------------------------------------------------------
X_ACT = np.array([[-3.0, -1.0, -0.2, 0.0, 0.3, 1.0, 2.5, 7.0]], np.float32)
case("relu_max_value", lambda: layers.ReLU(max_value=2.0), const(X_ACT))
case(
    "relu_slope_threshold",
    lambda: layers.ReLU(negative_slope=0.1, threshold=0.5),
    const(X_ACT),
)
case(
    "relu_all_options",
    lambda: layers.ReLU(max_value=6.0, negative_slope=0.2, threshold=0.5),
    const(X_ACT),
)
case("leaky_relu_default", lambda: layers.LeakyReLU(), const(X_ACT))
case("prelu", lambda: layers.PReLU(), normal(2, 4))
case("prelu_shared_axes", lambda: layers.PReLU(shared_axes=[1, 2]), normal(2, 2, 3, 2))
case("elu_alpha", lambda: layers.ELU(alpha=0.5), const(X_ACT))
case("softmax_axis1", lambda: layers.Softmax(axis=1), normal(2, 3, 2))
case("softmax_axis_tuple", lambda: layers.Softmax(axis=(1, 2)), normal(2, 2, 3))
case(
    "softmax_mask",
    lambda: layers.Softmax(),
    normal(2, 4),
    const(VMASK, bool),
    call=lambda layer, xs: layer(xs[0], mask=xs[1]),
)
case(
    "softmax_mask_full_row",
    lambda: layers.Softmax(),
    normal(2, 4),
    const(np.array([[1, 0, 1, 1], [0, 0, 0, 0]], bool), bool),
    call=lambda layer, xs: layer(xs[0], mask=xs[1]),
)
case("activation_hard_sigmoid", lambda: layers.Activation("hard_sigmoid"), const(X_ACT))

# ---- Lambda and TimeDistributed --------------------------------------------------------------
case(
    "lambda_layer",
    lambda: layers.Lambda(lambda t: tf.square(t) * 0.5 + tf.reduce_mean(t, axis=-1, keepdims=True)),
    normal(2, 3),
)
case("timedistributed_dense", lambda: layers.TimeDistributed(layers.Dense(2)), normal(2, 3, 4))


# ---- small models -----------------------------------------------------------------------------
def small_cnn():
    return keras.Sequential(
        [
            keras.Input((6, 6, 2)),
            layers.Conv2D(3, 3, padding="same"),
            layers.BatchNormalization(),
            layers.ReLU(),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dense(2, activation="softmax"),
        ]
    )


case("sequential_cnn_train", small_cnn, normal(2, 6, 6, 2), training=True)


def functional_two_inputs():
    seq = keras.Input((4, 3))
    vec = keras.Input((2,))
    h = layers.LSTM(3)(seq)
    v = layers.Dense(3, activation="tanh")(vec)
    h = layers.Concatenate()([h, v])
    h = layers.LayerNormalization()(h)
    out = layers.Dense(2)(h)
    return keras.Model([seq, vec], out)


case("functional_lstm_dense", functional_two_inputs, normal(2, 4, 3), normal(2, 2))


def functional_attention():
    x = keras.Input((4, 4))
    a = layers.MultiHeadAttention(num_heads=2, key_dim=2)(x, x)
    h = layers.Add()([x, a])
    h = layers.LayerNormalization()(h)
    h = layers.Dense(3, activation="relu")(h)
    h = layers.GlobalAveragePooling1D()(h)
    return keras.Model(x, layers.Dense(1)(h))


case("functional_attention_block", functional_attention, normal(2, 4, 4))


def embedding_mha_pool():
    tokens = keras.Input((4,), dtype="int32")
    x = layers.Embedding(6, 4, mask_zero=True)(tokens)
    a = layers.MultiHeadAttention(num_heads=2, key_dim=2)(x, x)
    return keras.Model(tokens, layers.GlobalAveragePooling1D()(a))


case(
    "functional_embedding_mha_masked",
    embedding_mha_pool,
    const([[1, 2, 3, 0], [4, 5, 0, 0]], np.int32),
)


def functional_conv():
    x = keras.Input((5, 5, 2))
    a = layers.DepthwiseConv2D(3, padding="same")(x)
    b = layers.Conv2D(2, 1)(x)
    h = layers.Multiply()([a, b])
    h = layers.ZeroPadding2D(1)(h)
    h = layers.AveragePooling2D(3, strides=2)(h)
    h = layers.GlobalMaxPooling2D()(h)
    return keras.Model(x, layers.Dense(2)(h))


case("functional_conv_merge", functional_conv, normal(2, 5, 5, 2))


if __name__ == "__main__":
    print(f"{which} layer_numerics: {len(CASES)} cases")
    for name, make, inputs, call in CASES:
        if ONLY in name:
            keras.backend.clear_session()
            run_case(name, make, inputs, call)
