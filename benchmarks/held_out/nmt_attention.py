"""Held-out: TensorFlow's "Neural machine translation with attention" tutorial as it writes
it, on ~600 synthetic Spanish/English sentence pairs: a tf.data pipeline of raw strings, two
TextVectorization layers with the tutorial's tf.strings standardization adapted on it, an
Encoder (Embedding with mask_zero, a Bidirectional GRU summed), a CrossAttention layer
(MultiHeadAttention returning its scores, Add, LayerNormalization), a Decoder (GRU with
state, StringLookup and its inverse), a Translator model fit with masked loss/accuracy
functions, evaluate, greedy translation in a Python loop, and the tutorial's Export module
through tf.saved_model. Weights come from numpy so that TF and tracer must agree.

Deviations from the tutorial: synthetic data (no download), no shuffling (both engines must
see the same batches), no tensorflow_text (its NFKD normalization is left out: the data has
no accents), a smaller UNITS and a larger Adam learning rate, and the TextVectorization
layers take `ragged=False, output_sequence_length=...` instead of `ragged=True` (tracer
has no ragged tensors), so that `.to_tensor()` is left out; TensorFlow runs both forms.
Decoder.get_initial_state passes the batch size to GRU.get_initial_state, as Keras 3 asks."""

import tempfile
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
SUBJECTS = [("yo", "i", 0), ("tu", "you", 1), ("el", "he", 2), ("ella", "she", 2),
            ("nosotros", "we", 3), ("ellos", "they", 4)]  # fmt: skip
VERBS = [
    (["como", "comes", "come", "comemos", "comen"], "eat"),
    (["veo", "ves", "ve", "vemos", "ven"], "see"),
    (["quiero", "quieres", "quiere", "queremos", "quieren"], "want"),
    (["tengo", "tienes", "tiene", "tenemos", "tienen"], "have"),
    (["leo", "lees", "lee", "leemos", "leen"], "read"),
    (["busco", "buscas", "busca", "buscamos", "buscan"], "look for"),
]
OBJECTS = [("el pan", "the bread"), ("la sopa", "the soup"), ("el libro", "the book"),
           ("la carta", "the letter"), ("el perro", "the dog"), ("la casa", "the house"),
           ("una manzana", "an apple"), ("un gato", "a cat")]  # fmt: skip
TIMES = [("hoy", "today"), ("ahora", "now"), ("", "")]


def english_verb(verb, person):
    if person != 2:
        return verb
    if verb == "have":
        return "has"
    head, _, rest = verb.partition(" ")
    return " ".join([head + "s"] + ([rest] if rest else []))


def sentence_pair():
    es_subject, en_subject, person = SUBJECTS[rng.integers(len(SUBJECTS))]
    forms, en_verb = VERBS[rng.integers(len(VERBS))]
    es_object, en_object = OBJECTS[rng.integers(len(OBJECTS))]
    es_time, en_time = TIMES[rng.integers(len(TIMES))]
    es = " ".join(w for w in [es_subject, forms[person], es_object, es_time] if w)
    en = " ".join(w for w in [en_subject, english_verb(en_verb, person), en_object, en_time] if w)
    kind = rng.integers(4)
    if kind == 0:
        return "¿" + es.capitalize() + "?", en.capitalize() + "?"
    if kind == 1:
        return es.capitalize() + "!", en.capitalize() + "!"
    return es.capitalize() + ".", en.capitalize() + "."


def load_data(n=600):
    pairs = [sentence_pair() for _ in range(n)]
    context = np.array([context for context, target in pairs])
    target = np.array([target for context, target in pairs])
    return target, context


target_raw, context_raw = load_data()
print(which, "pair", context_raw[-1], "->", target_raw[-1])

BATCH_SIZE = 64
is_train = np.arange(len(target_raw)) % 5 != 0
train_raw = tf.data.Dataset.from_tensor_slices((context_raw[is_train], target_raw[is_train])).batch(
    BATCH_SIZE
)
val_raw = tf.data.Dataset.from_tensor_slices((context_raw[~is_train], target_raw[~is_train])).batch(
    BATCH_SIZE
)


def tf_lower_and_split_punct(text):
    text = tf.strings.lower(text)
    # Keep space, a to z, and select punctuation.
    text = tf.strings.regex_replace(text, "[^ a-z.?!,¿]", "")
    # Add spaces around punctuation.
    text = tf.strings.regex_replace(text, "[.?!,¿]", r" \0 ")
    # Strip whitespace.
    text = tf.strings.strip(text)
    text = tf.strings.join(["[START]", text, "[END]"], separator=" ")
    return text


example_text = tf.constant("¿Todavía está en casa?")
print(which, "standardized", tf_lower_and_split_punct(example_text).numpy().decode())

max_vocab_size = 5000
MAX_LENGTH = 12
context_text_processor = tf.keras.layers.TextVectorization(
    standardize=tf_lower_and_split_punct,
    max_tokens=max_vocab_size,
    ragged=False,
    output_sequence_length=MAX_LENGTH,
)
context_text_processor.adapt(train_raw.map(lambda context, target: context))
print(which, "context vocabulary", " ".join(context_text_processor.get_vocabulary()[:12]))
target_text_processor = tf.keras.layers.TextVectorization(
    standardize=tf_lower_and_split_punct,
    max_tokens=max_vocab_size,
    ragged=False,
    output_sequence_length=MAX_LENGTH,
)
target_text_processor.adapt(train_raw.map(lambda context, target: target))
print(which, "target vocabulary", " ".join(target_text_processor.get_vocabulary()[:12]))
print(
    which,
    "vocabulary sizes",
    context_text_processor.vocabulary_size(),
    target_text_processor.vocabulary_size(),
)


def process_text(context, target):
    context = context_text_processor(context)
    target = target_text_processor(target)
    targ_in = target[:, :-1]
    targ_out = target[:, 1:]
    return (context, targ_in), targ_out


train_ds = train_raw.map(process_text, tf.data.AUTOTUNE)
val_ds = val_raw.map(process_text, tf.data.AUTOTUNE)

for (ex_context_tok, ex_tar_in), ex_tar_out in train_ds.take(1):
    print(which, "context tokens", ex_context_tok[0, :10].numpy().tolist())
    print(which, "target in", ex_tar_in[0, :10].numpy().tolist())
    print(which, "target out", ex_tar_out[0, :10].numpy().tolist())

UNITS = 32


class Encoder(tf.keras.layers.Layer):
    def __init__(self, text_processor, units):
        super(Encoder, self).__init__()
        self.text_processor = text_processor
        self.vocab_size = text_processor.vocabulary_size()
        self.units = units
        # The embedding layer converts tokens to vectors
        self.embedding = tf.keras.layers.Embedding(self.vocab_size, units, mask_zero=True)
        # The RNN layer processes those vectors sequentially.
        self.rnn = tf.keras.layers.Bidirectional(
            merge_mode="sum",
            layer=tf.keras.layers.GRU(
                units,
                # Return the sequence and state
                return_sequences=True,
                recurrent_initializer="glorot_uniform",
            ),
        )

    def call(self, x):
        x = self.embedding(x)
        x = self.rnn(x)
        return x

    def convert_input(self, texts):
        texts = tf.convert_to_tensor(texts)
        if len(texts.shape) == 0:
            texts = tf.convert_to_tensor(texts)[tf.newaxis]
        context = self.text_processor(texts)
        context = self(context)
        return context


class CrossAttention(tf.keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__()
        self.mha = tf.keras.layers.MultiHeadAttention(key_dim=units, num_heads=1, **kwargs)
        self.layernorm = tf.keras.layers.LayerNormalization()
        self.add = tf.keras.layers.Add()

    def call(self, x, context):
        attn_output, attn_scores = self.mha(query=x, value=context, return_attention_scores=True)
        # Cache the attention scores for plotting later.
        attn_scores = tf.reduce_mean(attn_scores, axis=1)
        self.last_attention_weights = attn_scores
        x = self.add([x, attn_output])
        x = self.layernorm(x)
        return x


class Decoder(tf.keras.layers.Layer):
    @classmethod
    def add_method(cls, fun):
        setattr(cls, fun.__name__, fun)
        return fun

    def __init__(self, text_processor, units):
        super(Decoder, self).__init__()
        self.text_processor = text_processor
        self.vocab_size = text_processor.vocabulary_size()
        self.word_to_id = tf.keras.layers.StringLookup(
            vocabulary=text_processor.get_vocabulary(), mask_token="", oov_token="[UNK]"
        )
        self.id_to_word = tf.keras.layers.StringLookup(
            vocabulary=text_processor.get_vocabulary(),
            mask_token="",
            oov_token="[UNK]",
            invert=True,
        )
        self.start_token = self.word_to_id("[START]")
        self.end_token = self.word_to_id("[END]")
        self.units = units
        # 1. The embedding layer converts token IDs to vectors
        self.embedding = tf.keras.layers.Embedding(self.vocab_size, units, mask_zero=True)
        # 2. The RNN keeps track of what's been generated so far.
        self.rnn = tf.keras.layers.GRU(
            units,
            return_sequences=True,
            return_state=True,
            recurrent_initializer="glorot_uniform",
        )
        # 3. The RNN output will be the query for the attention layer.
        self.attention = CrossAttention(units)
        # 4. This fully connected layer produces the logits for each output token.
        self.output_layer = tf.keras.layers.Dense(self.vocab_size)


@Decoder.add_method
def call(self, context, x, state=None, return_state=False):
    # 1. Lookup the embeddings
    x = self.embedding(x)
    # 2. Process the target sequence.
    x, state = self.rnn(x, initial_state=state)
    # 3. Use the RNN output as the query for the attention over the context.
    x = self.attention(x, context)
    self.last_attention_weights = self.attention.last_attention_weights
    # Step 4. Generate logit predictions for the next token.
    logits = self.output_layer(x)
    if return_state:
        return logits, state
    else:
        return logits


@Decoder.add_method
def get_initial_state(self, context):
    batch_size = tf.shape(context)[0]
    start_tokens = tf.fill([batch_size, 1], self.start_token)
    done = tf.zeros([batch_size, 1], dtype=tf.bool)
    # Keras 3's RNN.get_initial_state takes the batch size (Keras 2's took the inputs:
    # `self.rnn.get_initial_state(self.embedding(start_tokens))[0]`, as the tutorial writes)
    return start_tokens, done, self.rnn.get_initial_state(batch_size)[0]


@Decoder.add_method
def tokens_to_text(self, tokens):
    words = self.id_to_word(tokens)
    result = tf.strings.reduce_join(words, axis=-1, separator=" ")
    result = tf.strings.regex_replace(result, r"^ *\[START\] *", "")
    result = tf.strings.regex_replace(result, r" *\[END\] *$", "")
    return result


@Decoder.add_method
def get_next_token(self, context, next_token, done, state, temperature=0.0):
    logits, state = self(context, next_token, state=state, return_state=True)
    if temperature == 0.0:
        next_token = tf.argmax(logits, axis=-1)
    else:
        logits = logits[:, -1, :] / temperature
        next_token = tf.random.categorical(logits, num_samples=1)
    # If a sequence produces an `end_token`, set it `done`
    done = done | (next_token == self.end_token)
    # Once a sequence is done it only produces 0-padding.
    next_token = tf.where(done, tf.constant(0, dtype=tf.int64), next_token)
    return next_token, done, state


class Translator(tf.keras.Model):
    @classmethod
    def add_method(cls, fun):
        setattr(cls, fun.__name__, fun)
        return fun

    def __init__(self, units, context_text_processor, target_text_processor):
        super().__init__()
        # Build the encoder and decoder
        encoder = Encoder(context_text_processor, units)
        decoder = Decoder(target_text_processor, units)
        self.encoder = encoder
        self.decoder = decoder

    def call(self, inputs):
        context, x = inputs
        context = self.encoder(context)
        logits = self.decoder(context, x)
        try:
            # Delete the keras mask, so keras doesn't scale the loss+accuracy.
            del logits._keras_mask
        except AttributeError:
            pass
        return logits


model = Translator(UNITS, context_text_processor, target_text_processor)
logits = model((ex_context_tok, ex_tar_in))
print(which, "logits shape", tuple(logits.shape))
print(which, "weights", " ".join("x".join(map(str, w.shape)) for w in model.weights))
model.set_weights(
    [
        (1.0 if "gamma" in w.name else 0.0) + rng.normal(0.0, 0.2, w.shape).astype(np.float32)
        for w in model.weights
    ]
)
logits = model((ex_context_tok, ex_tar_in))
print(
    which,
    "logits",
    f"{float(tf.reduce_mean(logits)):.5f} {float(tf.math.reduce_std(logits)):.5f}",
    " ".join(f"{v:.5f}" for v in logits[0, 0, :5].numpy()),
)
attention = model.decoder.last_attention_weights
print(
    which,
    "attention",
    tuple(attention.shape),
    " ".join(f"{v:.5f}" for v in attention[0, 0].numpy()),
)


def masked_loss(y_true, y_pred):
    # Calculate the loss for each item in the batch.
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    loss = loss_fn(y_true, y_pred)
    # Mask off the losses on padding.
    mask = tf.cast(y_true != 0, loss.dtype)
    loss *= mask
    # Return the total.
    return tf.reduce_sum(loss) / tf.reduce_sum(mask)


def masked_acc(y_true, y_pred):
    # Calculate the loss for each item in the batch.
    y_pred = tf.argmax(y_pred, axis=-1)
    y_pred = tf.cast(y_pred, y_true.dtype)
    match = tf.cast(y_true == y_pred, tf.float32)
    mask = tf.cast(y_true != 0, tf.float32)
    return tf.reduce_sum(match) / tf.reduce_sum(mask)


model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=0.01),
    loss=masked_loss,
    metrics=[masked_acc, masked_loss],
)
vocab_size = 1.0 * target_text_processor.vocabulary_size()
print(
    which,
    "expected_loss",
    f"{tf.math.log(vocab_size).numpy():.5f}",
    "expected_acc",
    f"{1 / vocab_size:.5f}",
)


def show(result):
    return " ".join(f"{key} {value:.5f}" for key, value in sorted(result.items()))


print(which, "evaluate before", show(model.evaluate(val_ds, steps=2, return_dict=True, verbose=0)))
start = time.perf_counter()
history = model.fit(
    train_ds.repeat(),
    epochs=3,
    steps_per_epoch=8,
    validation_data=val_ds,
    validation_steps=2,
    callbacks=[tf.keras.callbacks.EarlyStopping(patience=3)],
    verbose=0,
)
fit_time = time.perf_counter() - start
for key in ("loss", "masked_acc", "val_loss", "val_masked_acc"):
    print(which, key, " ".join(f"{v:.5f}" for v in history.history[key]))
print(which, "evaluate after", show(model.evaluate(val_ds, steps=2, return_dict=True, verbose=0)))


@Translator.add_method
def translate(self, texts, *, max_length=50, temperature=0.0):
    # Process the input texts
    context = self.encoder.convert_input(texts)
    batch_size = tf.shape(texts)[0]  # noqa: F841 (the tutorial's own)
    # Setup the loop inputs
    tokens = []
    attention_weights = []
    next_token, done, state = self.decoder.get_initial_state(context)
    for _ in range(max_length):
        # Generate the next token
        next_token, done, state = self.decoder.get_next_token(
            context, next_token, done, state, temperature
        )
        # Collect the generated tokens
        tokens.append(next_token)
        attention_weights.append(self.decoder.last_attention_weights)
        if tf.executing_eagerly() and tf.reduce_all(done):
            break
    # Stack the lists of tokens and attention weights.
    tokens = tf.concat(tokens, axis=-1)  # t*[(batch 1)] -> (batch, t)
    self.last_attention_weights = tf.concat(attention_weights, axis=1)
    result = self.decoder.tokens_to_text(tokens)
    return result


inputs = [
    "¿Ella tiene el perro hoy?",  # "She has the dog today?"
    "Nosotros leemos la carta.",  # "We read the letter."
    "Ellos buscan un gato ahora!",  # "They look for a cat now!"
]
result = model.translate(["¿Ella tiene el perro hoy?"])
print(which, "translate one", repr(result[0].numpy().decode()))
attention = model.last_attention_weights
print(which, "attention", tuple(attention.shape), f"{float(tf.reduce_sum(attention)):.4f}")
start = time.perf_counter()
result = model.translate(inputs)
translate_time = time.perf_counter() - start
for text in result.numpy():
    print(which, "translate", repr(text.decode()))


class Export(tf.Module):
    def __init__(self, model):
        self.model = model

    @tf.function(input_signature=[tf.TensorSpec(dtype=tf.string, shape=[None])])
    def translate(self, inputs):
        return self.model.translate(inputs)


export = Export(model)
start = time.perf_counter()
_ = export.translate(tf.constant(inputs))
trace_time = time.perf_counter() - start
result = export.translate(tf.constant(inputs))
for text in result.numpy():
    print(which, "export", repr(text.decode()))
with tempfile.TemporaryDirectory() as directory:
    tf.saved_model.save(export, directory, signatures={"serving_default": export.translate})
    reloaded = tf.saved_model.load(directory)
    result = reloaded.translate(tf.constant(inputs))
for text in result.numpy():
    print(which, "reloaded", repr(text.decode()))

start = time.perf_counter()
model.fit(train_ds.repeat(), epochs=2, steps_per_epoch=8, verbose=0)
epoch = (time.perf_counter() - start) / 2
print(
    which,
    f"first fit (3 epochs) {fit_time:.2f} s, then an epoch {epoch * 1e3:.1f} ms; "
    f"translate {translate_time * 1e3:.1f} ms, export trace+run {trace_time:.2f} s",
)
