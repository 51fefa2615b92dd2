"""Held-out: transfer learning and fine-tuning as the Keras guide "Transfer learning &
fine-tuning" and TensorFlow's tutorial "Transfer learning and fine-tuning" write them: the
guide's trainable/non-trainable weight bookkeeping (Dense, BatchNormalization, a frozen layer
whose weights fit must leave alone, `trainable` set recursively on a nested model, a frozen
BatchNormalization running in inference mode), then the tutorial's flow on synthetic 32x32
two-class images: a small MobileNet-like functional base model (Conv2D, DepthwiseConv2D,
BatchNormalization, ReLU(6)) whose "pretrained" weights come from numpy, frozen; a new head
(augmentation Sequential, Rescaling to [-1, 1], base_model(x, training=False),
GlobalAveragePooling2D, Dropout, Dense(1)); compile with Adam, BinaryCrossentropy from logits
and BinaryAccuracy; evaluate, fit with validation; then unfreeze the top of the base, recompile
with RMSprop at a tenth of the rate, fit on from `initial_epoch`, evaluate, predict_on_batch.
Augmentation draws each engine's own numbers, so the model that is fitted shares every layer
of the tutorial's model except the augmentation (which evaluate, running in inference mode,
skips anyway); no shuffling, Dropout rate 0."""

import time

import numpy as np
from engine import tf, which

L = tf.keras.layers
rng = np.random.default_rng(0)


def fmt(values):
    return " ".join(f"{float(v):.5g}" for v in np.ravel(values))


def set_from_numpy(model_or_layer):
    """Fill every weight from numpy, as if loaded: BatchNormalization gets a plausible
    gamma/beta/moving mean/moving variance, the rest a scaled normal."""
    for w in model_or_layer.weights:
        name = w.name if "/" not in w.name else w.name.split("/")[-1].split(":")[0]
        shape = tuple(w.shape)
        if "gamma" in name:
            value = 1.0 + 0.1 * rng.standard_normal(shape)
        elif "beta" in name:
            value = 0.1 * rng.standard_normal(shape)
        elif "moving_mean" in name:
            value = 0.2 * rng.standard_normal(shape)
        elif "moving_variance" in name:
            value = rng.uniform(0.5, 1.5, shape)
        elif "bias" in name:
            value = 0.05 * rng.standard_normal(shape)
        else:
            fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
            if "depthwise" in name:
                fan_in = int(np.prod(shape[:2]))
            value = rng.standard_normal(shape) / np.sqrt(fan_in)
        w.assign(value.astype(np.float32))


# --- The guide: layers & models have three weight attributes ------------------------------
layer = L.Dense(3)
layer.build((None, 4))
print(
    which,
    "dense weights:",
    len(layer.weights),
    "trainable:",
    len(layer.trainable_weights),
    "non_trainable:",
    len(layer.non_trainable_weights),
)
layer = L.BatchNormalization()
layer.build((None, 4))
print(
    which,
    "batchnorm weights:",
    len(layer.weights),
    "trainable:",
    len(layer.trainable_weights),
    "non_trainable:",
    len(layer.non_trainable_weights),
)
layer = L.Dense(3)
layer.build((None, 4))
layer.trainable = False
print(
    which,
    "frozen dense weights:",
    len(layer.weights),
    "trainable:",
    len(layer.trainable_weights),
    "non_trainable:",
    len(layer.non_trainable_weights),
)

# A frozen layer's weights do not change during fit.
layer1 = L.Dense(3, activation="relu")
layer2 = L.Dense(3, activation="sigmoid")
model = tf.keras.Sequential([tf.keras.Input(shape=(3,)), layer1, layer2])
set_from_numpy(model)
layer1.trainable = False
initial_layer1_weights_values = layer1.get_weights()
initial_layer2_weights_values = layer2.get_weights()
model.compile(optimizer="adam", loss="mse")
x_small = rng.random((2, 3)).astype(np.float32)
y_small = rng.random((2, 3)).astype(np.float32)
h = model.fit(x_small, y_small, verbose=0)
final_layer1_weights_values = layer1.get_weights()
final_layer2_weights_values = layer2.get_weights()
print(
    which,
    "frozen fit loss",
    fmt(h.history["loss"]),
    "layer1 unchanged:",
    all(
        np.array_equal(a, b)
        for a, b in zip(initial_layer1_weights_values, final_layer1_weights_values)
    ),
    "layer2 changed:",
    any(
        not np.array_equal(a, b)
        for a, b in zip(initial_layer2_weights_values, final_layer2_weights_values)
    ),
)
print(which, "layer2 kernel after fit", fmt(final_layer2_weights_values[0][0]))

# Recursive setting of the trainable attribute.
inner_model = tf.keras.Sequential(
    [tf.keras.Input(shape=(3,)), L.Dense(3, activation="relu"), L.Dense(3, activation="relu")]
)
model = tf.keras.Sequential(
    [tf.keras.Input(shape=(3,)), inner_model, L.Dense(3, activation="sigmoid")]
)
model.trainable = False
print(
    which,
    "recursive: inner_model.trainable",
    inner_model.trainable,
    "inner_model.layers[0].trainable",
    inner_model.layers[0].trainable,
    "model trainable weights",
    len(model.trainable_weights),
    "non_trainable",
    len(model.non_trainable_weights),
)
model.trainable = True
inner_model.layers[1].trainable = False
print(
    which,
    "partly frozen: trainable",
    len(model.trainable_weights),
    "non_trainable",
    len(model.non_trainable_weights),
)

# A frozen BatchNormalization runs in inference mode, even under fit (training=True).
bn = L.BatchNormalization()
bn_model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), bn, L.Dense(1)])
set_from_numpy(bn_model)
bn.trainable = False
bn_x = (3.0 + 2.0 * rng.standard_normal((64, 4))).astype(np.float32)
bn_y = rng.standard_normal((64, 1)).astype(np.float32)
before = [v.numpy().copy() for v in (bn.moving_mean, bn.moving_variance)]
bn_model.compile(optimizer=tf.keras.optimizers.SGD(0.01), loss="mse")
h = bn_model.fit(bn_x, bn_y, batch_size=16, epochs=2, verbose=0, shuffle=False)
after = [v.numpy() for v in (bn.moving_mean, bn.moving_variance)]
print(
    which,
    "frozen bn fit loss",
    fmt(h.history["loss"]),
    "moving stats unchanged:",
    all(np.array_equal(a, b) for a, b in zip(before, after)),
)
print(
    which,
    "frozen bn training=True output",
    fmt(bn(bn_x[:1], training=True)),
    "inference",
    fmt(bn(bn_x[:1], training=False)),
)

# --- The tutorial: data -------------------------------------------------------------------
N_TRAIN, N_VAL, SIZE, BATCH_SIZE = 256, 96, 32, 32
IMG_SIZE = (SIZE, SIZE)
labels = rng.integers(0, 2, N_TRAIN + N_VAL)
rows = np.linspace(0.0, 1.0, SIZE)[:, None]
columns = np.linspace(0.0, 1.0, SIZE)[None, :]
images = np.empty((N_TRAIN + N_VAL, SIZE, SIZE, 3), np.float32)
for i, label in enumerate(labels):  # "cats" stripe across the rows, "dogs" down the columns
    freq = rng.uniform(2.0, 4.0)
    pattern = np.sin(freq * np.pi * (rows if label == 0 else columns) + rng.uniform(0, 6.3))
    pattern = np.broadcast_to(pattern, (SIZE, SIZE))
    tint = rng.uniform(0.7, 1.3, 3)
    noise = rng.normal(0.0, 0.4, (SIZE, SIZE, 3))
    images[i] = np.clip(127.5 + 90.0 * (pattern[..., None] * tint + noise), 0, 255)
labels = labels.astype(np.float32)
train_dataset = tf.data.Dataset.from_tensor_slices((images[:N_TRAIN], labels[:N_TRAIN]))
train_dataset = train_dataset.batch(BATCH_SIZE)
validation_dataset = tf.data.Dataset.from_tensor_slices((images[N_TRAIN:], labels[N_TRAIN:]))
validation_dataset = validation_dataset.batch(BATCH_SIZE)
val_batches = tf.data.experimental.cardinality(validation_dataset)
test_dataset = validation_dataset.take(val_batches // 3)
validation_dataset = validation_dataset.skip(val_batches // 3)
print(
    which, "Number of validation batches: %d" % tf.data.experimental.cardinality(validation_dataset)
)
print(which, "Number of test batches: %d" % tf.data.experimental.cardinality(test_dataset))
AUTOTUNE = tf.data.AUTOTUNE
train_dataset = train_dataset.prefetch(buffer_size=AUTOTUNE)
validation_dataset = validation_dataset.prefetch(buffer_size=AUTOTUNE)
test_dataset = test_dataset.prefetch(buffer_size=AUTOTUNE)

data_augmentation = tf.keras.Sequential(
    [L.RandomFlip("horizontal"), L.RandomRotation(0.2)], name="data_augmentation"
)
for image, _ in train_dataset.take(1):
    first_image = image[0]
    augmented = data_augmentation(tf.expand_dims(first_image, 0), training=True)
    print(
        which,
        "augmented image shape",
        tuple(augmented.shape),
        "in range:",
        bool(
            float(tf.reduce_min(augmented)) >= -1e-3 and float(tf.reduce_max(augmented)) <= 255.001
        ),
    )
    same = data_augmentation(tf.expand_dims(first_image, 0), training=False)
    print(
        which,
        "augmentation in inference is identity:",
        bool(np.allclose(same.numpy()[0], first_image.numpy())),
    )

# preprocess_input of MobileNetV2 written by hand: pixels from [0, 255] to [-1, 1].
preprocess_input = L.Rescaling(1.0 / 127.5, offset=-1)


# --- The "pretrained" base model ----------------------------------------------------------
def mobilenet_like(input_shape):
    inputs = tf.keras.Input(shape=input_shape)
    x = L.Conv2D(16, 3, strides=2, padding="same", use_bias=False, name="Conv1")(inputs)
    x = L.BatchNormalization(name="bn_Conv1")(x)
    x = L.ReLU(6.0, name="Conv1_relu")(x)
    for i, (filters, stride) in enumerate([(24, 1), (32, 2), (48, 1)]):
        x = L.DepthwiseConv2D(
            3, strides=stride, padding="same", use_bias=False, name=f"block_{i}_depthwise"
        )(x)
        x = L.BatchNormalization(name=f"block_{i}_depthwise_BN")(x)
        x = L.ReLU(6.0, name=f"block_{i}_depthwise_relu")(x)
        x = L.Conv2D(filters, 1, use_bias=False, name=f"block_{i}_project")(x)
        x = L.BatchNormalization(name=f"block_{i}_project_BN")(x)
        x = L.ReLU(6.0, name=f"block_{i}_project_relu")(x)
    return tf.keras.Model(inputs, x, name="mobilenet_like")


IMG_SHAPE = IMG_SIZE + (3,)
base_model = mobilenet_like(IMG_SHAPE)
set_from_numpy(base_model)  # "weights='imagenet'"
# Pretrained moving statistics match the data: each BatchNormalization's moving mean and
# variance from the activations that reach it (a feature-extraction model per layer).
calibration = preprocess_input(images[:N_TRAIN:4])
for layer in base_model.layers:
    if isinstance(layer, L.BatchNormalization):
        extractor = tf.keras.Model(inputs=base_model.inputs, outputs=layer.input)
        features = extractor(calibration).numpy()
        layer.moving_mean.assign(features.mean(axis=(0, 1, 2)))
        layer.moving_variance.assign(features.var(axis=(0, 1, 2)))
image_batch, label_batch = next(iter(train_dataset))
feature_batch = base_model(image_batch)
print(
    which,
    "feature batch shape",
    tuple(feature_batch.shape),
    "mean",
    f"{float(tf.reduce_mean(feature_batch)):.5g}",
)
base_model.trainable = False
print(
    which,
    "frozen base: weights",
    len(base_model.weights),
    "trainable",
    len(base_model.trainable_weights),
    "non_trainable",
    len(base_model.non_trainable_weights),
)

global_average_layer = L.GlobalAveragePooling2D()
feature_batch_average = global_average_layer(feature_batch)
print(which, "feature batch average shape", tuple(feature_batch_average.shape))
prediction_layer = L.Dense(1)
prediction_batch = prediction_layer(feature_batch_average)
print(which, "prediction batch shape", tuple(prediction_batch.shape))
prediction_layer.set_weights(
    [(0.3 * rng.standard_normal((48, 1))).astype(np.float32), np.zeros(1, np.float32)]
)
dropout = L.Dropout(0.0)


def head(x):
    x = preprocess_input(x)
    x = base_model(x, training=False)
    x = global_average_layer(x)
    x = dropout(x)
    return prediction_layer(x)


inputs = tf.keras.Input(shape=(32, 32, 3))
outputs = head(data_augmentation(inputs))
tutorial_model = tf.keras.Model(inputs, outputs)  # the tutorial's model, augmentation and all
inputs = tf.keras.Input(shape=(32, 32, 3))
model = tf.keras.Model(inputs, head(inputs))  # the same layers, without the augmentation


def summary_lines(m):
    lines = []
    m.summary(print_fn=lambda line, *args, **kwargs: lines.append(line))
    text = "\n".join(lines)
    return [s.strip() for s in text.splitlines() if "params" in s]


for line in summary_lines(tutorial_model):
    print(which, "summary:", line)
print(
    which,
    "len(model.trainable_variables)",
    len(tutorial_model.trainable_variables),
    len(model.trainable_variables),
)

base_learning_rate = 0.0001 * 100  # a hundred times the tutorial's rate: few epochs here
metrics = [tf.keras.metrics.BinaryAccuracy(threshold=0.5, name="accuracy")]
tutorial_model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=base_learning_rate),
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    metrics=metrics,
)
loss0, accuracy0 = tutorial_model.evaluate(validation_dataset, verbose=0)
print(
    which,
    "tutorial model initial loss: {:.5f}".format(loss0),
    "initial accuracy: {:.5f}".format(accuracy0),
)
model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=base_learning_rate),
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    metrics=[tf.keras.metrics.BinaryAccuracy(threshold=0.5, name="accuracy")],
)
loss0, accuracy0 = model.evaluate(validation_dataset, verbose=0)
print(which, "initial loss: {:.5f}".format(loss0), "initial accuracy: {:.5f}".format(accuracy0))

bn_layer = base_model.get_layer("block_1_project_BN")
stats_before = [bn_layer.moving_mean.numpy().copy(), bn_layer.moving_variance.numpy().copy()]
base_kernel_before = base_model.get_layer("block_2_project").kernel.numpy().copy()
print(
    which,
    "bn moving_mean[:4] before",
    fmt(stats_before[0][:4]),
    "moving_variance[:4]",
    fmt(stats_before[1][:4]),
)

initial_epochs = 3
start = time.perf_counter()
history = model.fit(
    train_dataset, epochs=initial_epochs, validation_data=validation_dataset, verbose=0
)
fit_seconds = time.perf_counter() - start
stats_after = [bn_layer.moving_mean.numpy(), bn_layer.moving_variance.numpy()]
print(
    which,
    "bn moving_mean[:4] after ",
    fmt(stats_after[0][:4]),
    "moving_variance[:4]",
    fmt(stats_after[1][:4]),
)
print(
    which,
    "frozen fit: bn stats unchanged:",
    all(np.array_equal(a, b) for a, b in zip(stats_before, stats_after)),
    "base kernel unchanged:",
    bool(
        np.array_equal(base_kernel_before, base_model.get_layer("block_2_project").kernel.numpy())
    ),
)
print(which, "history.epoch", history.epoch, "keys", sorted(history.history))
acc = history.history["accuracy"]
val_acc = history.history["val_accuracy"]
loss = history.history["loss"]
val_loss = history.history["val_loss"]
print(which, "loss", fmt(loss))
print(which, "val_loss", fmt(val_loss))
print(which, "accuracy", fmt(acc), "val_accuracy", fmt(val_acc))
print(which, "head kernel[:4]", fmt(prediction_layer.kernel.numpy()[:4, 0]))

# --- Fine-tuning ----------------------------------------------------------------------------
base_model.trainable = True
print(which, "Number of layers in the base model: ", len(base_model.layers))
fine_tune_at = 14
for layer in base_model.layers[:fine_tune_at]:
    layer.trainable = False
model.compile(
    loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
    optimizer=tf.keras.optimizers.RMSprop(learning_rate=base_learning_rate / 10),
    metrics=[tf.keras.metrics.BinaryAccuracy(threshold=0.5, name="accuracy")],
)
for line in summary_lines(model):
    print(which, "fine-tune summary:", line)
print(
    which,
    "fine-tune len(model.trainable_variables)",
    len(model.trainable_variables),
    "non_trainable",
    len(model.non_trainable_variables),
)
print(which, "trainable:", [v.name.split("/")[-1].split(":")[0] for v in model.trainable_variables])

fine_tune_epochs = 2
total_epochs = initial_epochs + fine_tune_epochs
stats_before = [bn_layer.moving_mean.numpy().copy(), bn_layer.moving_variance.numpy().copy()]
start = time.perf_counter()
history_fine = model.fit(
    train_dataset,
    epochs=total_epochs,
    initial_epoch=history.epoch[-1],
    validation_data=validation_dataset,
    verbose=0,
)
fine_seconds = time.perf_counter() - start
stats_after = [bn_layer.moving_mean.numpy(), bn_layer.moving_variance.numpy()]
print(
    which,
    "history_fine.epoch",
    history_fine.epoch,
    "bn stats unchanged (training=False):",
    all(np.array_equal(a, b) for a, b in zip(stats_before, stats_after)),
)
acc += history_fine.history["accuracy"]
val_acc += history_fine.history["val_accuracy"]
loss += history_fine.history["loss"]
val_loss += history_fine.history["val_loss"]
print(which, "all loss", fmt(loss))
print(which, "all val_loss", fmt(val_loss))
print(which, "all accuracy", fmt(acc), "val_accuracy", fmt(val_acc))
print(
    which,
    "unfrozen kernel[0,0,:4]",
    fmt(base_model.get_layer("block_2_project").kernel.numpy()[0, 0, 0, :4]),
)

loss, accuracy = model.evaluate(test_dataset, verbose=0)
print(which, "Test loss: {:.5f}".format(loss), "Test accuracy: {:.5f}".format(accuracy))
image_batch, label_batch = test_dataset.as_numpy_iterator().next()
predictions = model.predict_on_batch(image_batch).flatten()
print(which, "logits[:6]", fmt(predictions[:6]))
predictions = tf.nn.sigmoid(predictions)
predictions = tf.where(predictions < 0.5, 0, 1)
print(which, "Predictions:", predictions.numpy().tolist())
print(which, "Labels:     ", label_batch.astype(int).tolist())
print(
    which,
    f"fit {initial_epochs} epochs (with tracing) {fit_seconds:.2f} s, "
    f"fine-tune {fine_tune_epochs} epochs {fine_seconds:.2f} s",
)
