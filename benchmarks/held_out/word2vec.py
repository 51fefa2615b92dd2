"""Held-out: TensorFlow's word2vec tutorial on a small synthetic corpus: one sentence turned
into skip-gram pairs (tf.keras.preprocessing.sequence.skipgrams), negatives drawn by
tf.random.log_uniform_candidate_sampler, make_sampling_table, a corpus read by
TextLineDataset and tokenized by TextVectorization with a custom standardization, the
training examples (target, context + negatives, labels) from generate_training_data, a
subclassed Word2Vec model (two Embeddings and tf.einsum('be,bce->bc')) trained with
CategoricalCrossentropy(from_logits=True), then get_layer('w2v_embedding').get_weights().

The candidate sampler's draws and Dataset.shuffle's order are each engine's own, so of the
tutorial's pipeline only shapes, dtypes and the draw-free parts are compared; the compared
fit has its negatives drawn by numpy (Python's `random`, seeded, drives skipgrams in both)
and its weights set from numpy, so TF and tracer must print the same numbers."""

import os
import random
import re
import shutil
import string
import tempfile
import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
AUTOTUNE = tf.data.AUTOTUNE
SEED = 42
random.seed(SEED)  # skipgrams draws with Python's `random`
rng = np.random.default_rng(0)

# -- one sentence: skip-grams and negative sampling ----------------------------------------
sentence = "The wide road shimmered in the hot sun"
tokens = list(sentence.lower().split())
vocab, index = {"<pad>": 0}, 1
for token in tokens:
    if token not in vocab:
        vocab[token] = index
        index += 1
vocab_size = len(vocab)
inverse_vocab = {index: token for token, index in vocab.items()}
example_sequence = [vocab[word] for word in tokens]
print(which, "vocab", vocab)
print(which, "sequence", example_sequence)

window_size = 2
positive_skip_grams, _ = tf.keras.preprocessing.sequence.skipgrams(
    example_sequence, vocabulary_size=vocab_size, window_size=window_size, negative_samples=0
)
print(which, "positive skip-grams", len(positive_skip_grams))
for target, context in positive_skip_grams[:5]:
    print(which, f"({target}, {context}): ({inverse_vocab[target]}, {inverse_vocab[context]})")

target_word, context_word = positive_skip_grams[0]
num_ns = 4
context_class = tf.reshape(tf.constant(context_word, dtype="int64"), (1, 1))
negative_sampling_candidates, true_expected, sampled_expected = (
    tf.random.log_uniform_candidate_sampler(
        true_classes=context_class,
        num_true=1,
        num_sampled=num_ns,
        unique=True,
        range_max=vocab_size,
        seed=SEED,
        name="negative_sampling",
    )
)
candidates = negative_sampling_candidates.numpy()
print(
    which,
    "candidates",
    negative_sampling_candidates.shape,
    negative_sampling_candidates.dtype.name,
    "distinct",
    len(set(candidates.tolist())) == num_ns,
    "in range",
    bool(((candidates >= 0) & (candidates < vocab_size)).all()),
)
print(
    which, "expected counts", true_expected.shape, sampled_expected.shape, true_expected.dtype.name
)
squeezed_context_class = tf.squeeze(context_class, 1)
context = tf.concat([squeezed_context_class, negative_sampling_candidates], 0)
label = tf.constant([1] + [0] * num_ns, dtype="int64")
print(which, "context", context.shape, context.dtype.name, "label", label.numpy().tolist())

sampling_table = tf.keras.preprocessing.sequence.make_sampling_table(size=10)
print(which, "sampling table", " ".join(f"{p:.5f}" for p in sampling_table))


def generate_training_data(sequences, window_size, num_ns, vocab_size, seed, negatives=None):
    """The tutorial's generator; `negatives(context_class)` draws the negatives instead of
    the candidate sampler where given."""
    targets, contexts, labels = [], [], []
    sampling_table = tf.keras.preprocessing.sequence.make_sampling_table(vocab_size)
    for sequence in sequences:
        positive_skip_grams, _ = tf.keras.preprocessing.sequence.skipgrams(
            sequence,
            vocabulary_size=vocab_size,
            sampling_table=sampling_table,
            window_size=window_size,
            negative_samples=0,
        )
        for target_word, context_word in positive_skip_grams:
            context_class = tf.expand_dims(tf.constant([context_word], dtype="int64"), 1)
            if negatives is None:
                negative_sampling_candidates, _, _ = tf.random.log_uniform_candidate_sampler(
                    true_classes=context_class,
                    num_true=1,
                    num_sampled=num_ns,
                    unique=True,
                    range_max=vocab_size,
                    seed=seed,
                    name="negative_sampling",
                )
            else:
                negative_sampling_candidates = negatives(context_class)
            context = tf.concat([tf.squeeze(context_class, 1), negative_sampling_candidates], 0)
            label = tf.constant([1] + [0] * num_ns, dtype="int64")
            targets.append(target_word)
            contexts.append(context)
            labels.append(label)
    return targets, contexts, labels


# -- a synthetic corpus, read as text lines and vectorized ---------------------------------
words = [f"w{i:03d}" for i in range(150)]
topics = [rng.permutation(150)[:30] for _ in range(8)]  # each sentence draws from one topic
lines = []
for _ in range(2000):
    topic = topics[rng.integers(len(topics))]
    length = rng.integers(4, 11)
    picked = [words[i] for i in rng.choice(topic, length)]
    picked[0] = picked[0].capitalize()
    lines.append(" ".join(picked) + rng.choice([".", "!", ",", ""]))
lines.insert(7, "")  # an empty line, which the filter drops
corpus_dir = tempfile.mkdtemp()
path_to_file = os.path.join(corpus_dir, "corpus.txt")
with open(path_to_file, "w") as f:
    f.write("\n".join(lines) + "\n")

text_ds = tf.data.TextLineDataset(path_to_file).filter(
    lambda x: tf.cast(tf.strings.length(x), bool)
)


def custom_standardization(input_data):
    lowercase = tf.strings.lower(input_data)
    return tf.strings.regex_replace(lowercase, "[%s]" % re.escape(string.punctuation), "")


vocab_size = 128
sequence_length = 10
vectorize_layer = layers.TextVectorization(
    standardize=custom_standardization,
    max_tokens=vocab_size,
    output_mode="int",
    output_sequence_length=sequence_length,
)
vectorize_layer.adapt(text_ds.batch(1024))
inverse_vocab = vectorize_layer.get_vocabulary()
print(which, "vocabulary", len(inverse_vocab), inverse_vocab[:8])

text_vector_ds = text_ds.batch(1024).prefetch(AUTOTUNE).map(vectorize_layer).unbatch()
sequences = list(text_vector_ds.as_numpy_iterator())
print(which, "sequences", len(sequences), sequences[0].dtype.name)
for seq in sequences[:3]:
    print(which, f"{seq} => {[inverse_vocab[i] for i in seq]}")

# -- the tutorial's pipeline, with the candidate sampler (shapes and dtypes compared) -------
random.seed(SEED)
targets, contexts, labels = generate_training_data(
    sequences=sequences, window_size=2, num_ns=num_ns, vocab_size=vocab_size, seed=SEED
)
targets, contexts, labels = np.array(targets), np.array(contexts), np.array(labels)
print(which, "targets", targets.shape, targets.dtype.name, int(targets.sum()))
print(which, "contexts", contexts.shape, contexts.dtype.name, int(contexts[:, 0].sum()))
print(which, "labels", labels.shape, labels.dtype.name, int(labels.sum()))

BATCH_SIZE = 64
BUFFER_SIZE = 1000
dataset = tf.data.Dataset.from_tensor_slices(((targets, contexts), labels))
dataset = dataset.shuffle(BUFFER_SIZE).batch(BATCH_SIZE, drop_remainder=True)
dataset = dataset.cache().prefetch(buffer_size=AUTOTUNE)
print(which, "element_spec", dataset.element_spec)


class Word2Vec(tf.keras.Model):
    def __init__(self, vocab_size, embedding_dim):
        super().__init__()
        self.target_embedding = layers.Embedding(vocab_size, embedding_dim, name="w2v_embedding")
        self.context_embedding = layers.Embedding(vocab_size, embedding_dim)

    def call(self, pair):
        target, context = pair
        # target: (batch, dummy?), context: (batch, context)
        if len(target.shape) == 2:
            target = tf.squeeze(target, axis=1)
        word_emb = self.target_embedding(target)  # (batch, embed)
        context_emb = self.context_embedding(context)  # (batch, context, embed)
        dots = tf.einsum("be,bce->bc", word_emb, context_emb)  # (batch, context)
        return dots


embedding_dim = 16
word2vec = Word2Vec(vocab_size, embedding_dim)
word2vec.compile(
    optimizer="adam",
    loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
history = word2vec.fit(dataset, epochs=3, verbose=0)
print(which, "history keys", sorted(history.history))
print(which, "shuffled fit finite", bool(np.isfinite(history.history["loss"]).all()))

# -- the compared fit: negatives drawn by numpy, weights from numpy ------------------------
unigram = np.log1p(1.0 / (np.arange(vocab_size) + 1.0))  # the log-uniform (Zipf) law
unigram = unigram / unigram.sum()


def numpy_negatives(context_class):
    # like the sampler with unique=True: distinct classes, which may include the true one
    return tf.constant(rng.choice(vocab_size, num_ns, replace=False, p=unigram), dtype="int64")


random.seed(SEED)
targets, contexts, labels = generate_training_data(
    sequences, 2, num_ns, vocab_size, SEED, negatives=numpy_negatives
)
targets, contexts, labels = np.array(targets), np.array(contexts), np.array(labels)
order = rng.permutation(len(targets))
targets, contexts, labels = targets[order], contexts[order], labels[order]
print(which, "fixed pairs", targets.shape, int(targets.sum()), int(contexts.sum()))
dataset = tf.data.Dataset.from_tensor_slices(((targets, contexts), labels))
dataset = dataset.batch(BATCH_SIZE, drop_remainder=True).cache().prefetch(AUTOTUNE)

word2vec = Word2Vec(vocab_size, embedding_dim)
word2vec((tf.constant(targets[:2]), tf.constant(contexts[:2])))
word2vec.set_weights(
    [rng.normal(0.0, 0.05, w.shape).astype(np.float32) for w in word2vec.get_weights()]
)
word2vec.compile(
    optimizer=tf.keras.optimizers.Adam(0.01),
    loss=tf.keras.losses.CategoricalCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
start = time.perf_counter()
history = word2vec.fit(dataset, epochs=6, verbose=0)
fit_time = time.perf_counter() - start
print(which, "losses", " ".join(f"{v:.5f}" for v in history.history["loss"]))
print(which, "accuracy", " ".join(f"{v:.4f}" for v in history.history["accuracy"]))
print(which, "evaluate", " ".join(f"{v:.5f}" for v in word2vec.evaluate(dataset, verbose=0)))

weights = word2vec.get_layer("w2v_embedding").get_weights()[0]
vocab = vectorize_layer.get_vocabulary()
print(which, "embedding", weights.shape, weights.dtype, f"{float(np.abs(weights).sum()):.2f}")
for index, word in enumerate(vocab[:4]):
    if index == 0:
        continue  # skip 0, it's padding
    vec = weights[index]
    print(which, word, " ".join(f"{x:.4f}" for x in vec[:4]))
dots = word2vec((tf.constant(targets[:3]), tf.constant(contexts[:3])))
print(which, "dots", dots.shape, " ".join(f"{v:.4f}" for v in dots.numpy().ravel()[:6]))

start = time.perf_counter()
word2vec.fit(dataset, epochs=2, verbose=0)
epoch = (time.perf_counter() - start) / 2
steps = len(targets) // BATCH_SIZE
print(
    which,
    f"first fit (6 epochs) {fit_time:.2f} s, then an epoch {epoch * 1e3:.1f} ms"
    f" ({steps} steps, {epoch / steps * 1e3:.2f} ms a step)",
)
shutil.rmtree(corpus_dir)
