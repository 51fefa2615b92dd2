"""Keras's recurrent layers (tracer/keras/layers/recurrent.py) against numpy's step-by-step
equations, finite differences, analytic properties of masks, and files TensorFlow's Keras
wrote (tests/data/keras)."""

import pathlib

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers
DATA = pathlib.Path(__file__).parent / "data" / "keras"
rng = np.random.default_rng(5)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference(layer, x, mask=None, initial=None):
    """(every step's output, the final states) of `layer` on `x` by Keras's equations in
    float64, from the layer's weights."""
    cell = layer.cell
    kernel, recurrent, *rest = [w.numpy().astype(np.float64) for w in cell.weights]
    bias = rest[0] if rest else None
    u, batch = cell.units, x.shape[0]
    count = 2 if isinstance(cell, layers.LSTMCell) else 1
    states = [np.zeros((batch, u)) for _ in range(count)] if initial is None else list(initial)
    output = np.zeros((batch, u))
    order = range(x.shape[1])[::-1] if layer.go_backwards else range(x.shape[1])
    outputs = []
    act = np.tanh
    for t in order:
        xt = x[:, t].astype(np.float64)
        if isinstance(cell, layers.LSTMCell):
            z = xt @ kernel + states[0] @ recurrent + (0 if bias is None else bias)
            i, f, g, o = (z[:, k * u : (k + 1) * u] for k in range(4))
            c = sigmoid(f) * states[1] + sigmoid(i) * act(g)
            new = [sigmoid(o) * act(c), c]
        elif isinstance(cell, layers.GRUCell):
            h = states[0]
            if cell.reset_after:
                xb, hb = (bias[0], bias[1]) if bias is not None else (0, 0)
                mx, mh = xt @ kernel + xb, h @ recurrent + hb
                z = sigmoid(mx[:, :u] + mh[:, :u])
                r = sigmoid(mx[:, u : 2 * u] + mh[:, u : 2 * u])
                hh = act(mx[:, 2 * u :] + r * mh[:, 2 * u :])
            else:
                mx = xt @ kernel + (0 if bias is None else bias)
                z = sigmoid(mx[:, :u] + h @ recurrent[:, :u])
                r = sigmoid(mx[:, u : 2 * u] + h @ recurrent[:, u : 2 * u])
                hh = act(mx[:, 2 * u :] + (r * h) @ recurrent[:, 2 * u :])
            new = [z * h + (1 - z) * hh]
        else:
            new = [act(xt @ kernel + states[0] @ recurrent + (0 if bias is None else bias))]
        if mask is None:
            states, output = new, new[0]
        else:
            keep = mask[:, t][:, None]
            states = [np.where(keep, n, s) for n, s in zip(new, states)]
            skipped = np.zeros_like(output) if layer.zero_output_for_mask else output
            output = np.where(keep, new[0], skipped)
        outputs.append(output)
    return np.stack(outputs, axis=1), states


def x_and_mask(batch=3, steps=6, features=4):
    x = rng.normal(size=(batch, steps, features)).astype(np.float32)
    mask = np.ones((batch, steps), bool)
    mask[0, steps - 2 :] = False
    mask[1, 0] = False
    mask[-1, steps // 2] = False
    return x, mask


KINDS = {
    "simple_rnn": lambda **kw: layers.SimpleRNN(5, **kw),
    "lstm": lambda **kw: layers.LSTM(5, **kw),
    "gru": lambda **kw: layers.GRU(5, **kw),
    "gru_reset_before": lambda **kw: layers.GRU(5, reset_after=False, **kw),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"return_sequences": True},
        {"go_backwards": True, "return_sequences": True},
        {"return_state": True},
        {"return_sequences": True, "zero_output_for_mask": True},
    ],
    ids=["last", "sequences", "backwards", "state", "zero_output"],
)
def test_outputs_follow_kerass_equations_eagerly_and_compiled(kind, masked, options):
    layer = KINDS[kind](**options)
    x, mask = x_and_mask()
    mask = mask if masked else None
    layer(x)  # build, then give the bias values away from 0
    if layer.cell.use_bias:
        layer.cell.bias.assign(rng.normal(size=layer.cell.bias.shape).astype(np.float32))
    outputs, states = reference(layer, x, mask)
    expected_output = outputs if layer.return_sequences else outputs[:, -1]
    compiled = tt.function(lambda a, m: layer(a, mask=m))
    interpreted = tt.function(lambda a, m: layer(a, mask=m), backend="interpreter")
    for run in (
        lambda: layer(x, mask=mask),
        lambda: compiled(x, mask),
        lambda: interpreted(x, mask),
    ):
        result = run()
        if layer.return_state:
            assert isinstance(result, tuple) and len(result) == 1 + len(states)
            for got, want in zip(result[1:], states):
                np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-6)
            result = result[0]
        np.testing.assert_allclose(result.numpy(), expected_output, rtol=2e-5, atol=2e-6)


def test_initial_state_replaces_the_zeros():
    layer = layers.LSTM(3, return_state=True)
    x, _ = x_and_mask(features=2)
    initial = [rng.normal(size=(3, 3)).astype(np.float32) for _ in range(2)]
    output, h, c = layer(x, initial_state=initial)
    outputs, (h_ref, c_ref) = reference(layer, x, initial=[s.astype(np.float64) for s in initial])
    np.testing.assert_allclose(output.numpy(), outputs[:, -1], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(c.numpy(), c_ref, rtol=2e-5, atol=2e-6)
    with pytest.raises(ValueError, match="initial_state holds 1 tensors; the cell has 2 states"):
        layer(x, initial_state=[initial[0]])


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_match_finite_differences_in_float64(kind):
    layer = KINDS[kind](return_sequences=True, dtype="float64")
    x, mask = x_and_mask(batch=2, steps=4, features=3)
    x = x.astype(np.float64)
    layer(x)

    def loss(inputs):
        return tt.reduce_sum(tt.sin(layer(inputs, mask=mask)))

    value = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(value)
        y = loss(value)
    grads = tape.gradient(y, [value, *layer.trainable_variables])
    step = 1e-6
    flat = x.ravel()
    numeric = np.zeros_like(flat)
    for k in range(flat.size):
        plus, minus = flat.copy(), flat.copy()
        plus[k] += step
        minus[k] -= step
        numeric[k] = (
            float(loss(tt.constant(plus.reshape(x.shape))))
            - float(loss(tt.constant(minus.reshape(x.shape))))
        ) / (2 * step)
    np.testing.assert_allclose(grads[0].numpy().ravel(), numeric, rtol=1e-6, atol=1e-8)
    kernel = layer.cell.recurrent_kernel
    base = kernel.numpy()
    k_numeric = np.zeros(base.size)
    for k in range(base.size):
        for sign in (1, -1):
            moved = base.ravel().copy()
            moved[k] += sign * step
            kernel.assign(moved.reshape(base.shape))
            k_numeric[k] += sign * float(loss(tt.constant(x))) / (2 * step)
    kernel.assign(base)
    recurrent_index = [v.name for v in layer.trainable_variables].index(kernel.name)
    np.testing.assert_allclose(
        grads[1 + recurrent_index].numpy().ravel(), k_numeric, rtol=1e-6, atol=1e-8
    )


def test_second_order_gradient_compiled_equals_eager():
    layer = layers.GRU(3, dtype="float64")
    x, _ = x_and_mask(batch=2, steps=3, features=2)
    x = tt.constant(x.astype(np.float64))
    layer(x)

    def hessian_vector(inputs):
        with tt.GradientTape() as outer:
            outer.watch(inputs)
            with tt.GradientTape() as inner:
                inner.watch(inputs)
                y = tt.reduce_sum(layer(inputs) ** 2)
            g = inner.gradient(y, inputs)
            z = tt.reduce_sum(g * tt.ones_like(g))
        return outer.gradient(z, inputs)

    eager = hessian_vector(x).numpy()
    compiled = tt.function(hessian_vector)(x).numpy()
    np.testing.assert_allclose(compiled, eager, rtol=1e-10, atol=1e-12)
    assert np.abs(eager).max() > 0


def right_padded_ids():
    ids = rng.integers(1, 15, size=(4, 7)).astype(np.int32)
    lengths = [7, 3, 5, 1]
    for row, length in enumerate(lengths):
        ids[row, length:] = 0
    return ids, lengths


def test_an_embeddings_mask_makes_an_lstm_skip_the_padding():
    """A right-padded sequence's result is the unpadded sequence's, in a Sequential and a
    functional model, and for the sequences' outputs step by step."""
    ids, lengths = right_padded_ids()
    embed = layers.Embedding(15, 4, mask_zero=True)
    lstm = layers.LSTM(3, return_sequences=True)
    last = layers.GRU(2)
    sequential = tt.keras.Sequential([embed, lstm, last])
    inputs = tt.keras.Input((None,), dtype="int32")
    functional = tt.keras.Model(inputs, last(lstm(embed(inputs))))
    padded_s, padded_f = sequential(ids).numpy(), functional(ids).numpy()
    sequences = lstm(embed(ids)).numpy()
    for row, length in enumerate(lengths):
        alone = ids[row : row + 1, :length]
        unmasked = tt.keras.Sequential([embed, lstm, last])(alone).numpy()
        np.testing.assert_allclose(padded_s[row], unmasked[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(padded_f[row], unmasked[0], rtol=1e-5, atol=1e-6)
        steps = lstm(embed(alone)).numpy()[0]
        np.testing.assert_allclose(sequences[row, :length], steps, rtol=1e-5, atol=1e-6)
        # a skipped step repeats the last output (of the same run: the unpadded one's products
        # have one row, whose sums the BLAS may add in another order)
        repeated = np.broadcast_to(sequences[row, length - 1], (7 - length, 3))
        assert np.array_equal(sequences[row, length:], repeated)


def test_masking_skips_steps_of_mask_value():
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    x[0, 2:] = -1.0
    lstm = layers.LSTM(4)
    model = tt.keras.Sequential([layers.Masking(-1.0), lstm])
    np.testing.assert_allclose(
        model(x).numpy()[0], lstm(x[:1, :2]).numpy()[0], rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(model(x).numpy()[1], lstm(x[1:]).numpy()[0], rtol=1e-5, atol=1e-6)
    assert np.all(layers.Masking(-1.0)(x).numpy()[0, 2:] == 0)


def test_masking_zeroes_masked_steps_by_choice_not_product():
    # TF 2.21 printed [[[1. 2.] [0. 0.] [3. 0.]]] for Masking(-1.0) of these steps, a
    # masked step's -1 becoming +0, and [[[0. 0.] [1. 2.]]] where an inf is masked
    out = layers.Masking(-1.0)(np.array([[[1.0, 2.0], [-1.0, -1.0], [3.0, 0.0]]], np.float32))
    np.testing.assert_array_equal(out.numpy(), [[[1.0, 2.0], [0.0, 0.0], [3.0, 0.0]]])
    assert not np.signbit(out.numpy()).any()
    out = layers.Masking(np.inf)(np.array([[[np.inf, np.inf], [1.0, 2.0]]], np.float32))
    np.testing.assert_array_equal(out.numpy(), [[[0.0, 0.0], [1.0, 2.0]]])


def test_the_output_mask_weighs_the_loss_and_metrics_as_kerass():
    ids, lengths = right_padded_ids()
    model = tt.keras.Sequential(
        [
            layers.Embedding(15, 4, mask_zero=True),
            layers.SimpleRNN(3, return_sequences=True),
            layers.Dense(1),
        ]
    )
    model.compile(loss="mse", metrics=["mae"])
    y = rng.normal(size=(4, 7, 1)).astype(np.float32)
    loss, mae = model.evaluate(ids, y, verbose=0)
    pred = model(ids).numpy()
    mask = ids != 0
    errors = (pred - y)[..., 0]
    np.testing.assert_allclose(loss, np.mean(errors[mask] ** 2), rtol=1e-5)
    np.testing.assert_allclose(mae, np.mean(np.abs(errors[mask])), rtol=1e-5)
    assert sum(lengths) == mask.sum()


def test_a_layer_that_does_not_support_masking_stops_the_mask():
    ids, _ = right_padded_ids()
    flatten_then = tt.keras.Sequential(
        [
            layers.Embedding(15, 4, mask_zero=True),
            layers.Flatten(),
            layers.Reshape((7, 4)),
            layers.LSTM(2),
        ]
    )
    plain = tt.keras.Sequential([layers.Embedding(15, 4), layers.LSTM(2)])
    plain(ids)
    flatten_then(ids)
    plain.set_weights(flatten_then.get_weights())
    np.testing.assert_allclose(flatten_then(ids).numpy(), plain(ids).numpy(), rtol=1e-6)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_is_a_forward_and_a_reversed_backward_run(merge_mode):
    x, mask = x_and_mask(features=2)
    both = layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode=merge_mode)
    result = both(x, mask=mask)
    forward, _ = reference(both.forward_layer, x, mask)
    backward, _ = reference(both.backward_layer, x, mask)
    backward = backward[:, ::-1]
    merged = {
        "concat": lambda: np.concatenate([forward, backward], -1),
        "sum": lambda: forward + backward,
        "mul": lambda: forward * backward,
        "ave": lambda: (forward + backward) / 2,
        None: lambda: [forward, backward],
    }[merge_mode]()
    for got, want in zip(
        result if merge_mode is None else [result], merged if merge_mode is None else [merged]
    ):
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-5, atol=2e-6)
    assert both.forward_layer.zero_output_for_mask and both.backward_layer.go_backwards
    assert [w.path for w in both.weights][0].startswith(f"{both.name}/forward_")


def test_bidirectional_states_follow_the_output():
    both = layers.Bidirectional(layers.LSTM(2, return_state=True))
    x, _ = x_and_mask(features=2)
    output, fh, fc, bh, bc = both(x)
    assert output.shape == (3, 4)
    np.testing.assert_allclose(output.numpy(), np.concatenate([fh.numpy(), bh.numpy()], -1))


def test_a_users_cell_runs_in_rnn():
    class Accumulate(layers.Layer):
        state_size = 2

        def build(self, input_shape):
            self.w = self.add_weight("w", (input_shape[-1], 2))

        def call(self, inputs, states):
            assert isinstance(states, list)  # Keras gives a cell its states as a list
            new = tt.tanh(tt.matmul(inputs, self.w) + states[0])
            return new, [new]

    rnn = layers.RNN(Accumulate(), return_sequences=True)
    x, _ = x_and_mask(features=3)
    result = rnn(x).numpy()
    w = rnn.cell.w.numpy().astype(np.float64)
    h = np.zeros((3, 2))
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ w + h)
        np.testing.assert_allclose(result[:, t], h, rtol=2e-5, atol=2e-6)


def test_a_length_known_only_when_the_function_runs():
    """A signature of unknown length runs the while loop, values and gradients as eagerly;
    without one, a function given two lengths is traced for each (the loop of known length)."""
    layer = layers.LSTM(3, return_sequences=True)
    x, _ = x_and_mask(features=4)
    eager = layer(x).numpy()
    spec = [tt.TensorSpec([None, None, 4])]
    unknown = tt.function(lambda a: layer(a), input_signature=spec)
    np.testing.assert_allclose(unknown(x).numpy(), eager, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(unknown(x[:, :2]).numpy(), eager[:, :2], rtol=2e-5, atol=2e-6)

    @tt.function(input_signature=spec)
    def gradient(a):
        with tt.GradientTape() as tape:
            y = tt.reduce_sum(layer(a) ** 2)
        return tape.gradient(y, layer.trainable_variables)

    with tt.GradientTape() as tape:
        y = tt.reduce_sum(layer(x) ** 2)
    for got, want in zip(gradient(x), tape.gradient(y, layer.trainable_variables)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    automatic = tt.function(lambda a: layer(a))
    for steps in (2, 4, 6):
        np.testing.assert_allclose(
            automatic(x[:, :steps]).numpy(), eager[:, :steps], rtol=2e-5, atol=2e-6
        )


def test_dropout_draws_one_mask_per_sequence_and_only_in_training():
    x, _ = x_and_mask(features=4)
    layer = layers.LSTM(3, dropout=0.5, recurrent_dropout=0.5, seed=3)
    plain = layers.LSTM(3)
    plain(x)
    layer(x)
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(layer(x).numpy(), plain(x).numpy(), rtol=1e-6)
    step = tt.function(lambda a: layer(a, training=True))
    first, second = step(x).numpy(), step(x).numpy()
    assert not np.allclose(first, second)  # a new mask each call
    assert not np.allclose(first, plain(x).numpy())
    # the input's mask is one per sequence: a sequence of one step repeated gives one output
    # repeated, some of its values dropped
    repeated = np.repeat(x[:, :1], 6, axis=1)
    linear = layers.SimpleRNN(
        8, dropout=0.5, seed=1, activation=None, use_bias=False, return_sequences=True
    )
    linear(repeated)
    linear.cell.recurrent_kernel.assign(np.zeros((8, 8), np.float32))
    dropped, kept = linear(repeated, training=True).numpy(), linear(repeated).numpy()
    np.testing.assert_allclose(dropped, np.broadcast_to(dropped[:, :1], dropped.shape), rtol=1e-6)
    assert not np.allclose(dropped, kept)


def test_orthogonal_initializer():
    init = tt.keras.initializers.Orthogonal(gain=2.0, seed=4)
    for shape in [(4, 4), (3, 6), (6, 3), (2, 3, 4)]:
        q = init(shape).numpy().reshape(-1, shape[-1]).astype(np.float64)
        small = q @ q.T if q.shape[0] < q.shape[1] else q.T @ q
        np.testing.assert_allclose(small, 4.0 * np.eye(min(q.shape)), atol=1e-5)
    np.testing.assert_array_equal(init((3, 3)).numpy(), init((3, 3)).numpy())
    assert init.get_config() == {"seed": 4, "gain": 2.0}
    with pytest.raises(ValueError, match="two axes or more"):
        init((3,))


def test_weights_are_kerass():
    lstm = layers.LSTM(3, name="encoder")
    lstm(np.zeros((1, 2, 5), np.float32))
    assert [v.path for v in lstm.weights] == [
        "encoder/lstm_cell/kernel",
        "encoder/lstm_cell/recurrent_kernel",
        "encoder/lstm_cell/bias",
    ]
    assert [tuple(v.shape) for v in lstm.weights] == [(5, 12), (3, 12), (12,)]
    np.testing.assert_array_equal(lstm.cell.bias.numpy(), [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    gru = layers.GRU(2)
    gru(np.zeros((1, 2, 5), np.float32))
    assert tuple(gru.cell.bias.shape) == (2, 6)
    assert gru.units == 2 and gru.reset_after


def test_a_stateful_lstm_fed_in_chunks_is_one_call_on_the_whole_sequence():
    x = rng.normal(size=(2, 12, 3)).astype(np.float32)
    chunks = np.split(x, 3, axis=1)
    stateful = layers.LSTM(4, stateful=True)
    stateful(chunks[0])
    assert [tuple(w.shape) for w in stateful.weights] == [(3, 16), (4, 16), (16,)]
    assert len(stateful.states) == 2 and not stateful.states[0].trainable
    stateful.reset_states()
    for chunk in chunks:
        last = stateful(chunk)
    whole = layers.LSTM(4)
    whole(x)
    whole.set_weights(stateful.get_weights())
    np.testing.assert_allclose(last.numpy(), whole(x).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stateful.states[0].numpy(), last.numpy(), rtol=1e-6)
    stateful.reset_state()
    np.testing.assert_array_equal(stateful.states[1].numpy(), np.zeros((2, 4)))
    np.testing.assert_allclose(
        stateful(chunks[0]).numpy(), whole(chunks[0]).numpy(), rtol=1e-5, atol=1e-6
    )

    @tt.function
    def step(chunk):
        return stateful(chunk)

    stateful.reset_states()
    for chunk in chunks:
        compiled = step(chunk)
    np.testing.assert_allclose(compiled.numpy(), last.numpy(), rtol=1e-5, atol=1e-6)
    # Keras 3's messages
    with pytest.raises(ValueError, match="Expected batch size: 2"):
        stateful(x[:1])
    with pytest.raises(ValueError, match="the batch size must be static"):
        layers.GRU(2, stateful=True)(tt.keras.Input((None, 3)))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"inputs of shape \(batch, time, features\)"):
        layers.GRU(2)(np.zeros((2, 3), np.float32))
    with pytest.raises(TypeError, match="wraps a recurrent layer"):
        layers.Bidirectional(layers.Dense(2))
    with pytest.raises(ValueError, match="dropout must be in"):
        layers.SimpleRNN(2, dropout=1.5)
    with pytest.raises(ValueError, match="merge_mode"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")


# --- files TensorFlow's Keras wrote ------------------------------------------------------------


@pytest.mark.parametrize("name", ["recurrent", "masking"])
def test_kerass_recurrent_files_load_with_kerass_outputs(name, tmp_path):
    pytest.importorskip("h5py")
    data = np.load(DATA / f"{name}.npz")
    model = tt.keras.models.load_model(DATA / f"{name}.keras")
    np.testing.assert_allclose(model(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-6)
    model.save(tmp_path / "again.keras")
    again = tt.keras.models.load_model(tmp_path / "again.keras")
    np.testing.assert_allclose(again(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-6)
    weights_only = tt.keras.models.load_model(DATA / f"{name}.keras")
    weights_only.load_weights(DATA / f"{name}.weights.h5")
    np.testing.assert_allclose(weights_only(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-6)


def test_a_stateful_lstm_in_a_sequential_of_a_batch_size_fits_as_kerass(tmp_path):
    # TF 2.21 printed the shapes, the losses [0.204111, 0.202007] and these final states
    model_rng = np.random.default_rng(3)
    model = tt.keras.Sequential(
        [tt.keras.Input((4, 3), batch_size=2), layers.LSTM(3, stateful=True), layers.Dense(1)]
    )
    weights = [model_rng.normal(0, 0.3, w.shape).astype(np.float32) for w in model.weights]
    model.set_weights(weights)
    assert model.input_shape == (2, 4, 3) and model.output_shape == (2, 1)
    assert len(model.variables) == 5  # the states are not the model's variables (Keras's)
    np.testing.assert_array_equal(model.layers[0].states[0].numpy(), np.zeros((2, 3)))
    model.compile(tt.keras.optimizers.SGD(0.1), "mse")
    x = model_rng.normal(size=(4, 4, 3)).astype(np.float32)
    y = model_rng.normal(size=(4, 1)).astype(np.float32)
    history = model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [0.204111, 0.202007], atol=2e-6)
    np.testing.assert_allclose(
        model.layers[0].states[0].numpy(),
        [[-0.093276, -0.143525, 0.265257], [-0.030209, -0.150625, 0.220373]],
        atol=2e-6,
    )
    model.save(tmp_path / "stateful.keras")  # Keras writes the batch size, and reads it
    loaded = tt.keras.models.load_model(tmp_path / "stateful.keras")
    assert loaded.layers[0].stateful and loaded.input_shape == (2, 4, 3)
    assert tuple(loaded.layers[0].states[0].shape) == (2, 3)


def test_an_rnn_of_a_list_of_cells_is_the_rnns_stacked():
    # Keras's RNN([LSTMCell(4), GRUCell(3)]): state_size [[4, 4], 3] (TF 2.21 printed it),
    # the same numbers as an LSTM's sequences fed to a GRU with the same weights
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    stacked = layers.RNN([layers.LSTMCell(4), layers.GRUCell(3)], return_state=True)
    stacked(x)
    assert isinstance(stacked.cell, layers.StackedRNNCells)
    assert stacked.cell.state_size == [[4, 4], 3]
    weights = [rng.normal(0, 0.3, w.shape).astype(np.float32) for w in stacked.weights]
    stacked.set_weights(weights)
    output, (h, c), gru_h = stacked(x)
    lstm = layers.LSTM(4, return_sequences=True, return_state=True)
    gru = layers.GRU(3, return_state=True)
    lstm(x)
    lstm.set_weights(weights[:3])
    sequences, want_h, want_c = lstm(x)
    gru(sequences)
    gru.set_weights(weights[3:])
    want_output, want_gru_h = gru(sequences)
    for got, want in [(output, want_output), (h, want_h), (c, want_c), (gru_h, want_gru_h)]:
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    # masked, of any length in a functional model, and compiled
    inputs = tt.keras.Input((None,), dtype="int32")
    embedded = layers.Embedding(9, 3, mask_zero=True)(inputs)
    model = tt.keras.Model(
        inputs, layers.RNN([layers.SimpleRNNCell(2), layers.GRUCell(3)])(embedded)
    )
    assert model.output_shape == (None, 3)
    ids = np.array([[4, 5, 0, 0], [1, 2, 3, 0]], np.int32)
    np.testing.assert_allclose(
        model(ids).numpy()[:1], model(ids[:1, :2]).numpy(), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(
        tt.function(model)(ids).numpy(), model(ids).numpy(), rtol=1e-5, atol=1e-6
    )
