"""Held-out: structured data classification as TensorFlow's "Classify structured data using
Keras preprocessing layers" tutorial writes it, on a synthetic PetFinder-like table (a dict of
numpy columns in place of the pandas DataFrame): `df_to_dataset` over
`Dataset.from_tensor_slices((dict(df), labels))`, a Normalization(axis=None) adapted per numeric
column, StringLookup/IntegerLookup + CategoryEncoding per categorical column, one
`tf.keras.Input` per column, concatenate, Dense/Dropout/Dense, fit with validation, evaluate,
save and reload the `.keras` file, predict on one sample. Then the preprocessing layers of the
Keras guide "Working with preprocessing layers": Discretization, Hashing, IntegerLookup and
StringLookup output modes, TextVectorization multi_hot/tf_idf with bigrams, Normalization with
given statistics and invert=True. Dense weights come from numpy so that TF and tracer must
agree (dropout 0, no shuffling)."""

import os
import tempfile
import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
rng = np.random.default_rng(0)


def words(layer, n=None):
    """get_vocabulary() as plain Python values (TF returns numpy scalars)."""
    return [
        v.decode() if isinstance(v, bytes) else str(v) if isinstance(v, str) else int(v)
        for v in layer.get_vocabulary()[:n]
    ]


def fmt(values, digits=5):
    return " ".join(f"{float(v):.{digits}g}" for v in np.asarray(values).ravel())


# ---- A PetFinder-like table --------------------------------------------------------------
N = 1000


def pick(options, probabilities):
    return rng.choice(np.array(options), N, p=probabilities)


dataframe = {
    "Type": pick(["Dog", "Cat"], [0.55, 0.45]),
    "Age": rng.choice(
        np.array([1, 2, 3, 4, 6, 12, 24, 36, 60]),
        N,
        p=[0.22, 0.17, 0.14, 0.11, 0.09, 0.1, 0.08, 0.06, 0.03],
    ).astype(np.int64),
    "Breed1": pick(
        [
            "Mixed Breed",
            "Domestic Short Hair",
            "Domestic Medium Hair",
            "Tabby",
            "Terrier",
            "Poodle",
            "Siamese",
            "Beagle",
        ],
        [0.36, 0.22, 0.12, 0.09, 0.08, 0.06, 0.04, 0.03],
    ),
    "Gender": pick(["Female", "Male", "Mixed"], [0.5, 0.38, 0.12]),
    "Color1": pick(
        ["Black", "Brown", "Golden", "Cream", "Gray", "White", "Yellow"],
        [0.3, 0.24, 0.15, 0.1, 0.09, 0.07, 0.05],
    ),
    "Color2": pick(
        ["No Color", "White", "Brown", "Cream", "Gray", "Golden"],
        [0.36, 0.25, 0.15, 0.11, 0.08, 0.05],
    ),
    "MaturitySize": pick(["Medium", "Small", "Large"], [0.65, 0.25, 0.1]),
    "FurLength": pick(["Short", "Medium", "Long"], [0.55, 0.36, 0.09]),
    "Vaccinated": pick(["No", "Yes", "Not Sure"], [0.45, 0.4, 0.15]),
    "Sterilized": pick(["No", "Yes", "Not Sure"], [0.6, 0.28, 0.12]),
    "Health": pick(["Healthy", "Minor Injury", "Serious Injury"], [0.9, 0.08, 0.02]),
    "Fee": (rng.choice([0, 0, 0, 50, 100, 150, 200, 300], N)).astype(np.int64),
    "PhotoAmt": rng.poisson(3.5, N).astype(np.int64),
}
score = (
    0.8 * (dataframe["Type"] == "Cat")
    - 0.04 * dataframe["Age"]
    + 0.25 * dataframe["PhotoAmt"]
    - 0.004 * dataframe["Fee"]
    + 0.6 * (dataframe["Vaccinated"] == "Yes")
    - 1.0 * (dataframe["Health"] != "Healthy")
    + rng.normal(0.0, 0.8, N)
)
dataframe["target"] = np.where(score > 0.5, 1, 0)
print(which, "rows", N, "positive", int(dataframe["target"].sum()))

order = rng.permutation(N)  # the tutorial's dataframe.sample(frac=1) and np.split
splits = np.split(order, [int(0.8 * N), int(0.9 * N)])
train, val, test = ({k: v[idx] for k, v in dataframe.items()} for idx in splits)
print(which, len(train["target"]), "training examples")
print(which, len(val["target"]), "validation examples")
print(which, len(test["target"]), "test examples")


def df_to_dataset(dataframe, shuffle=True, batch_size=32):
    df = dict(dataframe)
    labels = df.pop("target")
    df = {key: value[:, tf.newaxis] for key, value in df.items()}
    ds = tf.data.Dataset.from_tensor_slices((dict(df), labels))
    if shuffle:
        ds = ds.shuffle(buffer_size=len(labels))
    ds = ds.batch(batch_size)
    ds = ds.prefetch(batch_size)
    return ds


batch_size = 5
train_ds = df_to_dataset(train, shuffle=False, batch_size=batch_size)
[(train_features, label_batch)] = train_ds.take(1)
print(which, "Every feature:", list(train_features.keys()))
print(
    which,
    "A batch of ages:",
    train_features["Age"].numpy().ravel().tolist(),
    train_features["Age"].dtype.name,
)
print(which, "A batch of types:", [t.decode() for t in train_features["Type"].numpy().ravel()])
print(which, "A batch of targets:", label_batch.numpy().tolist())


def get_normalization_layer(name, dataset):
    # Create a Normalization layer for the feature.
    normalizer = layers.Normalization(axis=None)
    # Prepare a Dataset that only yields the feature.
    feature_ds = dataset.map(lambda x, y: x[name])
    # Learn the statistics of the data.
    normalizer.adapt(feature_ds)
    return normalizer


photo_count_col = train_features["PhotoAmt"]
layer = get_normalization_layer("PhotoAmt", train_ds)
print(
    which,
    "PhotoAmt normalized",
    fmt(layer(photo_count_col)),
    "mean",
    fmt(layer.mean),
    "variance",
    fmt(layer.variance),
)


def get_category_encoding_layer(name, dataset, dtype, max_tokens=None):
    # Create a layer that turns strings into integer indices.
    if dtype == "string":
        index = layers.StringLookup(max_tokens=max_tokens)
    # Otherwise, create a layer that turns integer values into integer indices.
    else:
        index = layers.IntegerLookup(max_tokens=max_tokens)
    # Prepare a `tf.data.Dataset` that only yields the feature.
    feature_ds = dataset.map(lambda x, y: x[name])
    # Learn the set of possible values and assign them a fixed integer index.
    index.adapt(feature_ds)
    # Encode the integer indices.
    encoder = layers.CategoryEncoding(num_tokens=index.vocabulary_size())
    # Apply multi-hot encoding to the indices. The lambda function captures the
    # layer, so you can use them, or include them in the Keras Functional model later.
    return lambda feature: encoder(index(feature))


test_type_col = train_features["Type"]
test_type_layer = get_category_encoding_layer(name="Type", dataset=train_ds, dtype="string")
out = test_type_layer(test_type_col)
print(which, "Type encoded", list(out.shape), out.numpy().tolist())

test_age_col = train_features["Age"]
test_age_layer = get_category_encoding_layer(
    name="Age", dataset=train_ds, dtype="int64", max_tokens=5
)
out = test_age_layer(test_age_col)
print(which, "Age encoded", list(out.shape), out.numpy().tolist())

batch_size = 64
train_ds = df_to_dataset(train, shuffle=False, batch_size=batch_size)
val_ds = df_to_dataset(val, shuffle=False, batch_size=batch_size)
test_ds = df_to_dataset(test, shuffle=False, batch_size=batch_size)

all_inputs = {}
encoded_features = []
vocabularies = []

# Numerical features.
for header in ["PhotoAmt", "Fee"]:
    numeric_col = tf.keras.Input(shape=(1,), name=header)
    normalization_layer = get_normalization_layer(header, train_ds)
    encoded_numeric_col = normalization_layer(numeric_col)
    all_inputs[header] = numeric_col
    encoded_features.append(encoded_numeric_col)
    print(
        which,
        header,
        "mean",
        fmt(normalization_layer.mean),
        "variance",
        fmt(normalization_layer.variance),
    )

age_col = tf.keras.Input(shape=(1,), name="Age", dtype="int64")
encoding_layer = get_category_encoding_layer(
    name="Age", dataset=train_ds, dtype="int64", max_tokens=5
)
encoded_age_col = encoding_layer(age_col)
all_inputs["Age"] = age_col
encoded_features.append(encoded_age_col)

categorical_cols = [
    "Type",
    "Color1",
    "Color2",
    "Gender",
    "MaturitySize",
    "FurLength",
    "Vaccinated",
    "Sterilized",
    "Health",
    "Breed1",
]
for header in categorical_cols:
    categorical_col = tf.keras.Input(shape=(1,), name=header, dtype="string")
    encoding_layer = get_category_encoding_layer(
        name=header, dataset=train_ds, dtype="string", max_tokens=5
    )
    encoded_categorical_col = encoding_layer(categorical_col)
    all_inputs[header] = categorical_col
    encoded_features.append(encoded_categorical_col)

all_features = tf.keras.layers.concatenate(encoded_features)
print(which, "all_features", list(all_features.shape), all_features.dtype)
x = tf.keras.layers.Dense(32, activation="relu")(all_features)
x = tf.keras.layers.Dropout(0.0)(x)  # the tutorial's 0.5: 0 so that the engines agree
output = tf.keras.layers.Dense(1)(x)
model = tf.keras.Model(all_inputs, output)

dense_layers = [lyr for lyr in model.layers if isinstance(lyr, tf.keras.layers.Dense)]
for dense in dense_layers:
    kernel, bias = dense.get_weights()
    dense.set_weights(
        [rng.normal(0.0, 0.3, kernel.shape).astype(np.float32), np.zeros(bias.shape, np.float32)]
    )
print(
    which, "layers", len(model.layers), "inputs", len(model.inputs), "params", model.count_params()
)

model.compile(
    optimizer="adam",
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    metrics=["accuracy"],
)
start = time.perf_counter()
history = model.fit(train_ds, epochs=10, validation_data=val_ds, verbose=0)
fit_time = time.perf_counter() - start
print(which, "history keys", sorted(history.history))
print(which, "loss", fmt(history.history["loss"][::3]))
print(which, "accuracy", fmt(history.history["accuracy"][::3]))
print(which, "val_loss", fmt(history.history["val_loss"][::3]))
print(which, "val_accuracy", fmt(history.history["val_accuracy"][::3]))

result = model.evaluate(test_ds, return_dict=True, verbose=0)
print(which, "evaluate", {k: round(float(v), 5) for k, v in sorted(result.items())})

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "my_pet_classifier.keras")
    model.save(path)
    reloaded_model = tf.keras.models.load_model(path)

sample = {
    "Type": "Cat",
    "Age": 3,
    "Breed1": "Tabby",
    "Gender": "Male",
    "Color1": "Black",
    "Color2": "White",
    "MaturitySize": "Small",
    "FurLength": "Short",
    "Vaccinated": "No",
    "Sterilized": "No",
    "Health": "Healthy",
    "Fee": 100,
    "PhotoAmt": 2,
}
input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}
predictions = reloaded_model.predict(input_dict, verbose=0)
prob = tf.nn.sigmoid(predictions[0])
print(
    which,
    "This particular pet had a %.1f percent probability of getting adopted." % (100 * prob[0]),
)
original = model.predict(input_dict, verbose=0)
print(which, "predict logits original", fmt(original), "reloaded", fmt(predictions))
reloaded_eval = reloaded_model.evaluate(test_ds, return_dict=True, verbose=0)
print(which, "reloaded evaluate", {k: round(float(v), 5) for k, v in sorted(reloaded_eval.items())})

# ---- The Keras guide "Working with preprocessing layers" ----------------------------------
print(which, "---- preprocessing layers guide")

# Normalization adapted, then with given statistics and invert=True.
data = np.array([[0.1, 0.2, 0.3], [0.8, 0.9, 1.0], [1.5, 1.6, 1.7]])
normalizer = layers.Normalization()
normalizer.adapt(data)
normalized_data = normalizer(data)
print(
    which, "Normalization var", fmt(np.var(normalized_data)), "mean", fmt(np.mean(normalized_data))
)
adapted_layer = layers.Normalization(mean=3.0, variance=2.0)
print(which, "Normalization given", fmt(adapted_layer(np.array([[1.0], [2.0], [3.0]]))))
inverse = layers.Normalization(mean=3.0, variance=2.0, invert=True)
print(which, "Normalization invert", fmt(inverse(np.array([[-1.0], [0.0], [1.0]]))))
inverse_adapted = layers.Normalization(axis=-1, invert=True)
inverse_adapted.adapt(data)
print(which, "Normalization invert adapted", fmt(inverse_adapted(np.array([[0.0, 1.0, -1.0]]))))

# Discretization.
data = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
discretizer = layers.Discretization(num_bins=4, epsilon=0.01)
discretizer.adapt(data)
print(which, "Discretization bins", fmt(discretizer.bin_boundaries))
print(which, "Discretization", discretizer(data).numpy().tolist())
fees = layers.Discretization(num_bins=4, epsilon=0.01)
fees.adapt(train["Fee"].astype(np.float32))
print(
    which,
    "Discretization Fee bins",
    fmt(fees.bin_boundaries),
    fees(train["Fee"][:8].astype(np.float32)).numpy().tolist(),
)
explicit = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
print(which, "Discretization explicit", explicit([[-1.5, 1.0, 3.4, 0.5]]).numpy().tolist())
one_hot_bins = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="one_hot")
print(which, "Discretization one_hot", one_hot_bins([-1.5, 1.0, 3.4, 0.5]).numpy().tolist())

# StringLookup: adapt, vocabulary, one_hot / count / tf_idf.
data = tf.constant([["a"], ["b"], ["c"], ["b"], ["c"], ["c"]])
lookup = layers.StringLookup()
lookup.adapt(data)
print(which, "StringLookup vocabulary", words(lookup), lookup.vocabulary_size())
print(which, "StringLookup", lookup(data).numpy().ravel().tolist())
vocab = ["a", "b", "c"]
one_hot = layers.StringLookup(vocabulary=vocab, output_mode="one_hot")
print(which, "StringLookup one_hot", one_hot(tf.constant(["a", "b", "c", "d"])).numpy().tolist())
inverse_lookup = layers.StringLookup(vocabulary=vocab, invert=True)
print(
    which,
    "StringLookup invert",
    [s.decode() for s in inverse_lookup(tf.constant([1, 3, 0, 2])).numpy().tolist()],
)
docs = tf.constant([["a", "c", "c", "d"], ["b", "b", "a", "a"], ["c", "e", "e", "e"]])
counter = layers.StringLookup(vocabulary=vocab, output_mode="count")
print(which, "StringLookup count", counter(docs).numpy().tolist())
tf_idf = layers.StringLookup(output_mode="tf_idf")
tf_idf.adapt(docs)
print(which, "StringLookup tf_idf vocabulary", words(tf_idf))
print(which, "StringLookup tf_idf", fmt(tf_idf(docs)))
given_idf = layers.StringLookup(vocabulary=vocab, output_mode="tf_idf", idf_weights=[0.5, 1.0, 2.0])
print(which, "StringLookup tf_idf given", fmt(given_idf(docs)))
print(
    which,
    "StringLookup Breed1 vocabulary",
    words(layers.StringLookup(vocabulary=sorted(set(train["Breed1"]))), 4),
)

# IntegerLookup: adapt, one_hot, multi_hot, mask token.
data = tf.constant([[12], [1138], [42], [42], [1138], [1138]])
int_lookup = layers.IntegerLookup()
int_lookup.adapt(data)
print(which, "IntegerLookup vocabulary", words(int_lookup))
print(which, "IntegerLookup", int_lookup(data).numpy().ravel().tolist())
int_one_hot = layers.IntegerLookup(vocabulary=[12, 36, 1138, 42], output_mode="one_hot")
print(
    which, "IntegerLookup one_hot", int_one_hot(tf.constant([12, 36, 1138, 42, 7])).numpy().tolist()
)
int_multi = layers.IntegerLookup(
    vocabulary=[12, 36, 1138, 42], output_mode="multi_hot", num_oov_indices=1
)
print(
    which,
    "IntegerLookup multi_hot",
    int_multi(tf.constant([[12, 1138, 7, 12], [42, 36, 36, 0]])).numpy().tolist(),
)
masked = layers.IntegerLookup(vocabulary=[12, 36, 1138, 42], mask_token=0)
print(
    which,
    "IntegerLookup mask",
    words(masked),
    masked(tf.constant([[12, 0, 42, 7]])).numpy().tolist(),
)
ages = layers.IntegerLookup(output_mode="multi_hot", max_tokens=6)
ages.adapt(train["Age"])
print(
    which,
    "IntegerLookup Age vocabulary",
    words(ages),
    ages(train["Age"][:3].reshape(3, 1)).numpy().tolist(),
)

# CategoryEncoding on its own.
encoder = layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")
print(which, "CategoryEncoding one_hot", encoder([3, 2, 0, 1]).numpy().tolist())
encoder = layers.CategoryEncoding(num_tokens=4, output_mode="multi_hot")
print(
    which, "CategoryEncoding multi_hot", encoder([[0, 1], [0, 0], [1, 2], [3, 1]]).numpy().tolist()
)
encoder = layers.CategoryEncoding(num_tokens=4, output_mode="count")
print(
    which,
    "CategoryEncoding count",
    fmt(
        encoder(
            [[0, 1], [0, 0], [1, 2], [3, 1]],
            count_weights=np.array([[0.1, 0.2], [0.1, 0.1], [0.2, 0.3], [0.4, 0.2]]),
        )
    ),
)

# Hashing: the hashing trick, then multi-hot encoding of the hashed values.
hashing = layers.Hashing(num_bins=64, salt=1337)
data = np.array([[3], [170], [96000], [12]])
print(which, "Hashing salted", hashing(data).numpy().ravel().tolist())
hashed_strings = layers.Hashing(num_bins=8)(tf.constant([["Cat"], ["Dog"], ["Tabby"], ["Poodle"]]))
print(which, "Hashing strings", hashed_strings.numpy().ravel().tolist())
masked_hash = layers.Hashing(num_bins=5, mask_value="")
print(
    which,
    "Hashing mask",
    masked_hash(tf.constant([["A"], ["B"], [""], ["C"], ["D"]])).numpy().ravel().tolist(),
)
encoder = layers.CategoryEncoding(num_tokens=64, output_mode="multi_hot")
encoded = encoder(hashing(data))
print(which, "Hashing + multi_hot", list(encoded.shape), fmt(np.asarray(encoded).sum(1)))

# TextVectorization: multi_hot and tf_idf with bigrams, int with a sequence length.
adapt_data = tf.constant(
    [
        "The Brain is wider than the Sky",
        "For put them side by side",
        "The one the other will contain",
        "With ease and You beside",
    ]
)
text_vectorizer = layers.TextVectorization(output_mode="multi_hot", ngrams=2)
text_vectorizer.adapt(adapt_data)
vocabulary = words(text_vectorizer)
print(which, "TextVectorization multi_hot vocabulary", len(vocabulary), vocabulary[:8])
test_data = tf.constant(["The Brain is deeper than the sea", "for if they are held blue to blue"])
print(which, "TextVectorization multi_hot", fmt(text_vectorizer(test_data)[:, :16]))
tfidf_vectorizer = layers.TextVectorization(output_mode="tf_idf", ngrams=2)
tfidf_vectorizer.adapt(adapt_data)
print(which, "TextVectorization tf_idf vocabulary", words(tfidf_vectorizer, 8))
print(which, "TextVectorization tf_idf", fmt(tfidf_vectorizer(test_data)[:, :12]))
count_vectorizer = layers.TextVectorization(output_mode="count", max_tokens=10)
count_vectorizer.adapt(adapt_data)
print(which, "TextVectorization count", words(count_vectorizer), fmt(count_vectorizer(test_data)))
int_vectorizer = layers.TextVectorization(output_mode="int", output_sequence_length=6)
int_vectorizer.adapt(adapt_data)
print(which, "TextVectorization int", int_vectorizer(test_data).numpy().tolist())

# The guide's end-to-end text model: multi-hot bigrams into a Dense layer.
inputs = tf.keras.Input(shape=(text_vectorizer.vocabulary_size(),))
text_model = tf.keras.Model(inputs, layers.Dense(1)(inputs))
text_model.layers[-1].set_weights(
    [
        rng.normal(0.0, 0.3, (text_vectorizer.vocabulary_size(), 1)).astype(np.float32),
        np.zeros(1, np.float32),
    ]
)
train_text = tf.data.Dataset.from_tensor_slices((adapt_data, [0, 1, 0, 1])).batch(2)
train_text = train_text.map(lambda x, y: (text_vectorizer(x), y))
text_model.compile(optimizer="rmsprop", loss="mse")
text_history = text_model.fit(train_text, epochs=3, verbose=0)
print(which, "text model loss", fmt(text_history.history["loss"]))
string_input = tf.keras.Input(shape=(), dtype="string")
end_to_end = tf.keras.Model(string_input, text_model(text_vectorizer(string_input)))
print(which, "end to end", fmt(end_to_end(tf.constant(["The Brain is deeper than the sea"]))))

start = time.perf_counter()
model.fit(train_ds, epochs=2, validation_data=val_ds, verbose=0)
epoch = (time.perf_counter() - start) / 2
print(which, f"first fit (10 epochs) {fit_time:.2f} s, then an epoch {epoch * 1e3:.1f} ms")
