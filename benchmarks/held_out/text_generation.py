"""Held-out: TensorFlow's "Text generation with an RNN" tutorial on a small made-up corpus:
characters to ids with StringLookup (and back with its inverted twin), sequences batched from
a Dataset of ids, a subclassed Embedding-GRU-Dense model that carries its GRU state, fit with
a weights-only ModelCheckpoint, the tutorial's customized training (its own train_step, then
its own loop), a generator model with a prediction mask from a SparseTensor and a tf.function
step, saved with tf.saved_model and loaded back. Weights from numpy; tf.random.categorical is
compared by shape only, and the compared text is generated greedily (argmax).

Keras 3 differs from the tutorial's text in two places followed here: GRU.get_initial_state
takes the batch size (not the embedded inputs), and ModelCheckpoint's weights-only files end
in .weights.h5. The tutorial's own OneStep reads a batch of strings inside its tf.function (a
RaggedTensor of characters): tracer has neither strings computed in a traced function nor
RaggedTensor, so the compared generator (IdStep) takes and returns ids, and OneStep runs last,
where tracer says what it lacks."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)

# A made-up corpus of a few hundred characters (the tutorial reads Shakespeare).
text = (
    "MIRA: the lanterns hum above the quiet harbour, and the gulls\n"
    "keep counting waves that never reach the shore.\n"
    "TOVEN: then let the tide be late tonight; my boat is mended,\n"
    "my nets are dry, and every star is looking at the sea.\n"
    "MIRA: the sea looks back, Toven, and it remembers names.\n"
    "TOVEN: it may remember mine; I gave it often enough.\n"
) * 3
vocab = sorted(set(text))
print(which, f"{len(text)} characters, {len(vocab)} unique")

ids_from_chars = tf.keras.layers.StringLookup(vocabulary=list(vocab), mask_token=None)
chars_from_ids = tf.keras.layers.StringLookup(
    vocabulary=ids_from_chars.get_vocabulary(), invert=True, mask_token=None
)
chars = tf.strings.unicode_split("harbour", input_encoding="UTF-8")
ids = ids_from_chars(chars)
print(which, "split", chars.shape, chars.numpy().tolist(), "ids", ids.numpy().tolist())
print(which, "joined", tf.strings.reduce_join(chars_from_ids(ids), axis=-1).numpy())


def text_from_ids(ids):
    return tf.strings.reduce_join(chars_from_ids(ids), axis=-1)


all_ids = ids_from_chars(tf.strings.unicode_split(text, "UTF-8"))
print(which, "all_ids", all_ids.shape, all_ids.dtype.name, all_ids[:10].numpy().tolist())

ids_dataset = tf.data.Dataset.from_tensor_slices(all_ids)
print(
    which, "first", "".join(chars_from_ids(i).numpy().decode("utf-8") for i in ids_dataset.take(6))
)

seq_length = 24
sequences = ids_dataset.batch(seq_length + 1, drop_remainder=True)
for seq in sequences.take(2):
    print(which, "sequence", text_from_ids(seq).numpy())


def split_input_target(sequence):
    input_text = sequence[:-1]
    target_text = sequence[1:]
    return input_text, target_text


print(which, "split_input_target", split_input_target(list("Tensorflow")))
dataset = sequences.map(split_input_target)
for input_example, target_example in dataset.take(1):
    print(which, "input ", text_from_ids(input_example).numpy())
    print(which, "target", text_from_ids(target_example).numpy())

# The tutorial shuffles here; shuffled orders differ between engines, so the batches are
# taken in order.
BATCH_SIZE = 8
dataset = dataset.batch(BATCH_SIZE, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
print(which, "dataset", [(spec.shape, spec.dtype.name) for spec in dataset.element_spec])

vocab_size = len(ids_from_chars.get_vocabulary())
embedding_dim = 16
rnn_units = 32


class MyModel(tf.keras.Model):
    def __init__(self, vocab_size, embedding_dim, rnn_units):
        super().__init__()
        self.embedding = tf.keras.layers.Embedding(vocab_size, embedding_dim)
        self.gru = tf.keras.layers.GRU(rnn_units, return_sequences=True, return_state=True)
        self.dense = tf.keras.layers.Dense(vocab_size)

    def call(self, inputs, states=None, return_state=False, training=False):
        x = inputs
        x = self.embedding(x, training=training)
        if states is None:
            states = self.gru.get_initial_state(tf.shape(x)[0])
        x, states = self.gru(x, initial_state=states, training=training)
        x = self.dense(x, training=training)

        if return_state:
            return x, states
        else:
            return x


def numpy_weights(model, seed):
    draw = np.random.default_rng(seed)
    return [draw.normal(0.0, 0.3, w.shape).astype(np.float32) for w in model.get_weights()]


model = MyModel(vocab_size=vocab_size, embedding_dim=embedding_dim, rnn_units=rnn_units)
for input_example_batch, target_example_batch in dataset.take(1):
    example_batch_predictions = model(input_example_batch)
    print(which, "predictions", example_batch_predictions.shape, "(batch, sequence, vocab)")
model.set_weights(numpy_weights(model, 1))
print(which, "weights", [tuple(w.shape) for w in model.get_weights()])
print(which, "params", model.count_params())
summary = []
model.summary(print_fn=summary.append)
for line in "".join(summary).splitlines():
    print(which, line)

example_batch_predictions = model(input_example_batch)
sampled_indices = tf.random.categorical(example_batch_predictions[0], num_samples=1)
sampled_indices = tf.squeeze(sampled_indices, axis=-1).numpy()
print(which, "sampled", sampled_indices.shape, sampled_indices.dtype)
greedy = tf.argmax(example_batch_predictions[0], axis=-1).numpy()
print(which, "greedy prediction", text_from_ids(greedy).numpy())

loss = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
example_batch_mean_loss = loss(target_example_batch, example_batch_predictions)
print(which, "mean loss", f"{float(example_batch_mean_loss):.5f}")
print(which, "exp(loss)", f"{float(tf.exp(example_batch_mean_loss)):.4f}", "vocab", vocab_size)

model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=loss)

checkpoint_dir = tempfile.mkdtemp()
checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt_{epoch}.weights.h5")
checkpoint_callback = tf.keras.callbacks.ModelCheckpoint(
    filepath=checkpoint_prefix, save_weights_only=True
)

EPOCHS = 6
start = time.perf_counter()
history = model.fit(dataset, epochs=EPOCHS, callbacks=[checkpoint_callback], verbose=0)
train_model = model
fit_time = time.perf_counter() - start
print(which, "history keys", sorted(history.history))
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))
print(which, "checkpoints", sorted(os.listdir(checkpoint_dir)))
restored = MyModel(vocab_size=vocab_size, embedding_dim=embedding_dim, rnn_units=rnn_units)
restored(input_example_batch)
restored.load_weights(os.path.join(checkpoint_dir, f"ckpt_{EPOCHS}.weights.h5"))
restored_loss = loss(target_example_batch, restored(input_example_batch))
print(which, "restored checkpoint loss", f"{float(restored_loss):.5f}")


class CustomTraining(MyModel):
    @tf.function
    def train_step(self, inputs):
        inputs, labels = inputs
        with tf.GradientTape() as tape:
            predictions = self(inputs, training=True)
            loss = self.loss(labels, predictions)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))

        return {"loss": loss}


model = CustomTraining(vocab_size=vocab_size, embedding_dim=embedding_dim, rnn_units=rnn_units)
model(input_example_batch)
model.set_weights(numpy_weights(model, 2))
model.compile(
    optimizer=tf.keras.optimizers.Adam(0.01),
    loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
)
history = model.fit(dataset, epochs=1, verbose=0)
print(which, "custom fit", " ".join(f"{v:.5f}" for v in history.history["loss"]))

mean = tf.metrics.Mean()
epoch_times = []
for epoch in range(4):
    start = time.perf_counter()
    mean.reset_state()
    for batch_n, (inp, target) in enumerate(dataset):
        logs = model.train_step([inp, target])
        mean.update_state(logs["loss"])
    if (epoch + 1) % 2 == 0:
        model.save_weights(os.path.join(checkpoint_dir, f"custom_{epoch}.weights.h5"))
    epoch_times.append(time.perf_counter() - start)
    print(which, f"Epoch {epoch + 1} Loss: {mean.result().numpy():.5f}")


class IdStep(tf.keras.Model):
    """The tutorial's OneStep on ids rather than strings, taking the likeliest character, so
    that both engines must write the same text."""

    def __init__(self, model, ids_from_chars):
        super().__init__()
        self.model = model
        skip_ids = ids_from_chars(["[UNK]"])[:, None]
        sparse_mask = tf.SparseTensor(
            values=[-float("inf")] * len(skip_ids),
            indices=skip_ids,
            dense_shape=[len(ids_from_chars.get_vocabulary())],
        )
        self.prediction_mask = tf.sparse.to_dense(sparse_mask)

    @tf.function
    def generate_one_step(self, input_ids, states=None):
        predicted_logits, states = self.model(inputs=input_ids, states=states, return_state=True)
        predicted_logits = predicted_logits[:, -1, :] + self.prediction_mask
        predicted_ids = tf.argmax(predicted_logits, axis=-1)
        return predicted_ids[:, None], states


def generate_ids(step_model, prompt, n):
    states = None
    next_ids = ids_from_chars(tf.strings.unicode_split(prompt, "UTF-8"))[None, :]
    result = [next_ids]
    for _ in range(n):
        next_ids, states = step_model.generate_one_step(next_ids, states=states)
        result.append(next_ids)
    return text_from_ids(tf.concat(result, axis=1))[0], states


model = train_model
id_step = IdStep(model, ids_from_chars)
print(which, "mask", id_step.prediction_mask.numpy().tolist()[:4], id_step.prediction_mask.shape)
generate_ids(id_step, "MIRA:", 2)  # traces generate_one_step
start = time.perf_counter()
result, states = generate_ids(id_step, "MIRA:", 60)
step_time = (time.perf_counter() - start) / 60
print(which, "greedy text", repr(result.numpy().decode("utf-8")), "states", states.shape)
print(which, "last state", " ".join(f"{v:.5f}" for v in states.numpy()[0, :6]))

saved_dir = os.path.join(tempfile.mkdtemp(), "id_step")
tf.saved_model.save(id_step, saved_dir)
id_step_reloaded = tf.saved_model.load(saved_dir)
reloaded, _ = generate_ids(id_step_reloaded, "MIRA:", 60)
print(which, "reloaded text equal", bool(reloaded.numpy() == result.numpy()))

print(which, "batches per epoch", batch_n + 1)
print(
    which,
    f"first fit ({EPOCHS} epochs) {fit_time:.2f} s, a greedy step {step_time * 1e3:.2f} ms,"
    f" a custom epoch {min(epoch_times[1:]) * 1e3:.1f} ms",
)


# The tutorial's own OneStep reads strings in its tf.function and splits a batch of them into
# a RaggedTensor: tracer has neither (it says so), TensorFlow samples from it.
class OneStep(tf.keras.Model):
    def __init__(self, model, chars_from_ids, ids_from_chars, temperature=1.0):
        super().__init__()
        self.temperature = temperature
        self.model = model
        self.chars_from_ids = chars_from_ids
        self.ids_from_chars = ids_from_chars

        # "[UNK]" must never be generated: its logit is set to -inf.
        skip_ids = self.ids_from_chars(["[UNK]"])[:, None]
        sparse_mask = tf.SparseTensor(
            values=[-float("inf")] * len(skip_ids),
            indices=skip_ids,
            dense_shape=[len(ids_from_chars.get_vocabulary())],
        )
        self.prediction_mask = tf.sparse.to_dense(sparse_mask)

    def next_ids(self, predicted_logits):
        predicted_ids = tf.random.categorical(predicted_logits, num_samples=1)
        return tf.squeeze(predicted_ids, axis=-1)

    @tf.function
    def generate_one_step(self, inputs, states=None):
        input_chars = tf.strings.unicode_split(inputs, "UTF-8")
        input_ids = self.ids_from_chars(input_chars).to_tensor()

        predicted_logits, states = self.model(inputs=input_ids, states=states, return_state=True)
        predicted_logits = predicted_logits[:, -1, :]
        predicted_logits = predicted_logits / self.temperature
        predicted_logits = predicted_logits + self.prediction_mask

        predicted_ids = self.next_ids(predicted_logits)
        predicted_chars = self.chars_from_ids(predicted_ids)
        return predicted_chars, states


try:
    one_step_model = OneStep(model, chars_from_ids, ids_from_chars)
    states = None
    next_char = tf.constant(["MIRA:", "TOVEN:"])
    result = [next_char]
    for n in range(20):
        next_char, states = one_step_model.generate_one_step(next_char, states=states)
        result.append(next_char)
    result = tf.strings.join(result)
    print(which, "OneStep sampled", result.shape, result.dtype.name, "states", states.shape)
    tf.saved_model.save(one_step_model, os.path.join(tempfile.mkdtemp(), "one_step"))
except (NotImplementedError, TypeError, ValueError) as error:
    print(which, "OneStep:", type(error).__name__, str(error).splitlines()[0][:100])
