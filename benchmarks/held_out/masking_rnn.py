"""Held-out: Keras's guides "Understanding masking & padding" and "Working with RNNs" as a
tf.keras user writes them: pad_sequences, masks made by Embedding(mask_zero) and Masking and
read through `_keras_mask` and `compute_mask`, custom layers that pass a mask on
(supports_masking), split it (compute_mask), make it, or consume it in `call`; SimpleRNN,
GRU and LSTM with return_sequences / return_state / initial_state, Bidirectional, a
stateful LSTM fed a long sequence in chunks, RNN over a custom cell with nested states and
RNN(LSTMCell) against LSTM; then a masked model trained with fit. Weights from numpy, so
TF and tracer must print the same numbers."""

import time

import numpy as np
from engine import tf, which

keras = tf.keras
layers = keras.layers
rng = np.random.default_rng(0)


def show(name, value):
    value = np.asarray(value)
    if value.dtype == bool:
        text = " ".join(
            "".join("1" if v else "0" for v in row) for row in value.reshape(-1, value.shape[-1])
        )
    else:
        text = " ".join(f"{v:.4f}" for v in value.ravel()[:12])
    print(which, name, value.shape, value.dtype, text)


def from_numpy(layer, scale=0.3):
    """Every weight of a built layer (or model) from numpy, in the order of `.weights`."""
    layer.set_weights([rng.normal(0.0, scale, w.shape).astype(np.float32) for w in layer.weights])


# -- padding ------------------------------------------------------------------------------
raw_inputs = [[71, 32, 11], [7, 8, 15, 55, 27], [83, 91, 1, 45, 53, 27]]
padded_inputs = keras.utils.pad_sequences(raw_inputs, padding="post")
print(which, "post-padded", padded_inputs.dtype, padded_inputs.tolist())
pre = keras.preprocessing.sequence.pad_sequences(raw_inputs, maxlen=4)
print(which, "pre-padded, truncated to 4", pre.tolist())

# -- masks made by Embedding and Masking --------------------------------------------------
embedding = layers.Embedding(input_dim=100, output_dim=4, mask_zero=True)
masked_output = embedding(padded_inputs)
from_numpy(embedding)
masked_output = embedding(padded_inputs)
show("embedding output", masked_output)
show("embedding _keras_mask", masked_output._keras_mask)
show("embedding compute_mask", embedding.compute_mask(padded_inputs))

masking_layer = layers.Masking()
unmasked_embedding = tf.cast(tf.tile(tf.expand_dims(padded_inputs, axis=-1), [1, 1, 3]), tf.float32)
masked_embedding = masking_layer(unmasked_embedding)
show("Masking _keras_mask", masked_embedding._keras_mask)
show("Masking compute_mask", masking_layer.compute_mask(unmasked_embedding))
odd = np.array([[[1.0, 2.0], [-1.0, -1.0], [3.0, 0.0]]], np.float32)
show("Masking(-1) output", layers.Masking(mask_value=-1.0)(odd))


# -- a layer that changes the mask, one that makes it -------------------------------------
class TemporalSplit(keras.layers.Layer):
    """Two halves of the time axis, and of the mask."""

    def call(self, inputs):
        return tf.split(inputs, 2, axis=1)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        return tf.split(mask, 2, axis=1)


first_half, second_half = TemporalSplit()(masked_embedding)
show("first half mask", first_half._keras_mask)
show("second half mask", second_half._keras_mask)


class CustomEmbedding(keras.layers.Layer):
    def __init__(self, input_dim, output_dim, mask_zero=False, **kwargs):
        super().__init__(**kwargs)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.mask_zero = mask_zero

    def build(self, input_shape):
        table = rng.normal(0.0, 0.5, (self.input_dim, self.output_dim)).astype(np.float32)
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim),
            initializer=keras.initializers.Constant(table),
            dtype="float32",
        )

    def call(self, inputs):
        return tf.nn.embedding_lookup(self.embeddings, inputs)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return tf.not_equal(inputs, 0)


custom = CustomEmbedding(10, 3, mask_zero=True)
ids = rng.integers(0, 10, (3, 6)).astype("int32")
y = custom(ids)
show("custom embedding", y)
show("custom embedding mask", custom.compute_mask(ids))
show("custom embedding _keras_mask", y._keras_mask)


# -- a layer that passes the mask on, one that consumes it -------------------------------
class MyActivation(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return tf.nn.relu(inputs)


class TemporalSoftmax(keras.layers.Layer):
    """A softmax over the time axis that leaves out masked steps."""

    def call(self, inputs, mask=None):
        weights = tf.expand_dims(tf.cast(mask, "float32"), -1)
        exps = tf.exp(inputs) * weights
        return exps / tf.reduce_sum(exps, axis=1, keepdims=True)


inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=100, output_dim=4, mask_zero=True)(inputs)
x = MyActivation()(x)
print(which, "mask found on the symbolic output:", x._keras_mask is not None)
outputs = layers.LSTM(5)(x)
passing = keras.Model(inputs, outputs)
from_numpy(passing)
show("Embedding > MyActivation > LSTM", passing(padded_inputs))

inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=100, output_dim=4, mask_zero=True)(inputs)
x = layers.Dense(1)(x)
outputs = TemporalSoftmax()(x)
softmax_model = keras.Model(inputs, outputs)
from_numpy(softmax_model)
attention = softmax_model(padded_inputs)
show("temporal softmax", attention[:, :, 0])
show("temporal softmax sums", tf.reduce_sum(attention, axis=[1, 2]))


class MyLayer(layers.Layer):
    """Hands the embedding's mask to the LSTM by hand."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = layers.Embedding(input_dim=100, output_dim=4, mask_zero=True)
        self.lstm = layers.LSTM(5)

    def call(self, inputs):
        x = self.embedding(inputs)
        mask = self.embedding.compute_mask(inputs)
        return self.lstm(x, mask=mask)


by_hand = MyLayer()
by_hand(padded_inputs)
from_numpy(by_hand)
show("MyLayer (mask by hand)", by_hand(padded_inputs))
lstm_alone = by_hand.lstm(by_hand.embedding(padded_inputs[:, :3]))
show("its LSTM on the first 3 steps, no mask", lstm_alone)

# -- the guide's models and their summaries ----------------------------------------------
model = keras.Sequential()
model.add(keras.Input((None,), dtype="int32"))
model.add(layers.Embedding(input_dim=1000, output_dim=64))
model.add(layers.LSTM(128))
model.add(layers.Dense(10))
model.summary()
model = keras.Sequential()
model.add(keras.Input((None,), dtype="int32"))
model.add(layers.Embedding(input_dim=1000, output_dim=64))
model.add(layers.GRU(256, return_sequences=True))
model.add(layers.SimpleRNN(128))
model.add(layers.Dense(10))
model.summary()

# -- outputs and states -------------------------------------------------------------------
sequences = rng.normal(size=(2, 5, 3)).astype(np.float32)
for rnn_class in (layers.SimpleRNN, layers.GRU, layers.LSTM):
    rnn = rnn_class(4, return_sequences=True, return_state=True)
    rnn(sequences)
    from_numpy(rnn)
    results = rnn(sequences)
    print(which, rnn_class.__name__, "weights", [tuple(w.shape) for w in rnn.weights])
    show(f"{rnn_class.__name__} sequences", results[0])
    for k, s in enumerate(results[1:]):
        show(f"{rnn_class.__name__} state {k}", s)

encoder_input = layers.Input(shape=(None,))
encoder_embedded = layers.Embedding(input_dim=30, output_dim=6)(encoder_input)
output, state_h, state_c = layers.LSTM(8, return_state=True, name="encoder")(encoder_embedded)
encoder_state = [state_h, state_c]
decoder_input = layers.Input(shape=(None,))
decoder_embedded = layers.Embedding(input_dim=40, output_dim=6)(decoder_input)
decoder_output = layers.LSTM(8, name="decoder")(decoder_embedded, initial_state=encoder_state)
seq2seq = keras.Model([encoder_input, decoder_input], layers.Dense(3)(decoder_output))
from_numpy(seq2seq)
print(which, "seq2seq output shape", seq2seq.output_shape)
seq2seq.summary()
source = rng.integers(0, 30, (2, 7)).astype(np.float32)
target = rng.integers(0, 40, (2, 4)).astype(np.float32)
show("seq2seq", seq2seq([source, target]))

# -- Bidirectional ------------------------------------------------------------------------
for merge_mode in ("concat", "sum"):
    bidi = keras.Sequential(
        [
            keras.Input((5, 3)),
            layers.Bidirectional(layers.LSTM(4, return_sequences=True), merge_mode=merge_mode),
            layers.Bidirectional(layers.LSTM(2)),
            layers.Dense(3),
        ]
    )
    from_numpy(bidi)
    bidi.summary()
    print(which, merge_mode, "bidirectional shapes", [tuple(w.shape) for w in bidi.weights])
    show(f"bidirectional {merge_mode}", bidi(sequences))

# -- cross-batch statefulness -------------------------------------------------------------
long_sequence = rng.normal(size=(2, 12, 3)).astype(np.float32)
chunks = np.split(long_sequence, 3, axis=1)
lstm_layer = layers.LSTM(4, stateful=True)
lstm_layer(chunks[0])
from_numpy(lstm_layer)
lstm_layer.reset_states()
for chunk in chunks:
    output = lstm_layer(chunk)
show("stateful, last chunk", output)
whole = layers.LSTM(4)
whole(long_sequence)
whole.set_weights(lstm_layer.get_weights())
show("one call on the whole sequence", whole(long_sequence))
existing_state = lstm_layer.states
show("stateful layer's h", existing_state[0])
new_lstm_layer = layers.LSTM(4)
new_lstm_layer(chunks[0])
new_lstm_layer.set_weights(lstm_layer.get_weights())
show("new layer from the old states", new_lstm_layer(chunks[2], initial_state=existing_state))
lstm_layer.reset_states()
show("after reset_states", lstm_layer.states[0])
show("first chunk again", lstm_layer(chunks[0]))

stateful_model = keras.Sequential(
    [keras.Input((4, 3), batch_size=2), layers.LSTM(3, stateful=True), layers.Dense(1)]
)
from_numpy(stateful_model)
print(which, "stateful model shapes", stateful_model.input_shape, stateful_model.output_shape)
stateful_model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
chunk_targets = rng.normal(size=(2, 1)).astype(np.float32)
for k, chunk in enumerate(np.split(rng.normal(size=(2, 12, 3)).astype(np.float32), 3, axis=1)):
    history = stateful_model.fit(chunk, chunk_targets, batch_size=2, shuffle=False, verbose=0)
    print(which, f"stateful model, chunk {k} loss {history.history['loss'][0]:.5f}")
stateful_model.layers[0].reset_states()
show("stateful model predicts after reset", stateful_model.predict(chunk, batch_size=2, verbose=0))


# -- RNN over a custom cell with two states ------------------------------------------------
class TwoStateCell(keras.layers.Layer):
    """A fast state that follows the input and a slow one that sums the fast one (Keras 3's
    RNN takes states of one axis each, so the guide's matrix state is left out)."""

    def __init__(self, fast_units, slow_units, **kwargs):
        super().__init__(**kwargs)
        self.fast_units = fast_units
        self.slow_units = slow_units
        self.state_size = [fast_units, slow_units]
        self.output_size = slow_units

    def build(self, input_shape):
        self.kernel = self.add_weight(
            shape=(input_shape[-1], self.fast_units), initializer="uniform", name="kernel"
        )
        self.recurrent = self.add_weight(
            shape=(self.fast_units, self.fast_units), initializer="uniform", name="recurrent"
        )
        self.slow_kernel = self.add_weight(
            shape=(self.fast_units, self.slow_units), initializer="uniform", name="slow_kernel"
        )

    def call(self, inputs, states):
        fast, slow = states
        fast = tf.tanh(tf.matmul(inputs, self.kernel) + tf.matmul(fast, self.recurrent))
        slow = 0.9 * slow + tf.matmul(fast, self.slow_kernel)
        return tf.nn.sigmoid(slow), [fast, slow]


cell_inputs = keras.Input((None, 3))
cell_outputs = layers.RNN(TwoStateCell(5, 2), return_sequences=True, return_state=True)(cell_inputs)
two_state = keras.Model(cell_inputs, cell_outputs)
from_numpy(two_state)
print(which, "two-state RNN output shapes", [tuple(s) for s in two_state.output_shape])
two_state_x = rng.normal(size=(4, 6, 3)).astype(np.float32)
for name, value in zip(("sequences", "fast state", "slow state"), two_state(two_state_x)):
    show(f"two-state cell, {name}", value)
last_only = keras.Model(cell_inputs, cell_outputs[0][:, -1])
last_only.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
cell_targets = np.full((4, 2), 0.25, np.float32)
history = last_only.fit(two_state_x, cell_targets, batch_size=2, epochs=3, shuffle=False, verbose=0)
print(which, "two-state cell fit keys", sorted(history.history))
print(which, "two-state cell fit losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))

# -- RNN(LSTMCell) is LSTM ----------------------------------------------------------------
cell_rnn = layers.RNN(layers.LSTMCell(4), return_sequences=True)
cell_rnn(sequences)
from_numpy(cell_rnn)
plain = layers.LSTM(4, return_sequences=True)
plain(sequences)
plain.set_weights(cell_rnn.get_weights())
difference = np.abs(np.asarray(cell_rnn(sequences)) - np.asarray(plain(sequences))).max()
print(which, "RNN(LSTMCell) against LSTM, largest difference", f"{difference:.1e}")
show("RNN(LSTMCell)", cell_rnn(sequences))

# -- a masked model trained with fit ------------------------------------------------------
V, T, N = 30, 12, 256
lengths = rng.integers(3, T + 1, N)
token_lists = [list(rng.integers(1, V, length)) for length in lengths]
tokens = keras.utils.pad_sequences(token_lists, maxlen=T, padding="post")
labels = np.array([(np.array(t) % 3 == 0).sum() > len(t) / 3 for t in token_lists], np.float32)
model = keras.Sequential(
    [
        keras.Input((T,), dtype="int32"),
        layers.Embedding(V, 8, mask_zero=True),
        MyActivation(),
        layers.Bidirectional(layers.GRU(8, return_sequences=True), merge_mode="sum"),
        layers.LSTM(8),
        layers.Dense(1, activation="sigmoid"),
    ]
)
from_numpy(model, 0.2)
model.compile(
    optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy", metrics=["accuracy"]
)
start = time.perf_counter()
history = model.fit(tokens, labels, batch_size=32, epochs=3, shuffle=False, verbose=0)
first_fit = time.perf_counter() - start
print(which, "history keys", sorted(history.history))
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))
print(which, "accuracy", " ".join(f"{v:.4f}" for v in history.history["accuracy"]))
print(which, "evaluate", " ".join(f"{v:.5f}" for v in model.evaluate(tokens, labels, verbose=0)))
start = time.perf_counter()
model.fit(tokens, labels, batch_size=32, epochs=2, shuffle=False, verbose=0)
epoch = (time.perf_counter() - start) / 2
print(which, f"first fit (3 epochs) {first_fit:.2f} s, then an epoch {epoch * 1e3:.1f} ms")
