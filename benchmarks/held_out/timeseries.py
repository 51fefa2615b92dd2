"""Held-out: time series forecasting as TensorFlow's time series tutorial writes it, on a
synthetic multivariate hourly series (numpy in place of pandas): the WindowGenerator class
(split_window with slices, tf.stack of the label columns and set_shape; make_dataset with
tf.keras.utils.timeseries_dataset_from_array and map; the train/val/test/example
properties), compile_and_fit (MeanSquaredError, Adam, MeanAbsoluteError, EarlyStopping on
val_loss), and the tutorial's models: Baseline, Linear, multi-step Dense, Conv1D,
LSTM, ResidualWrapper, the multi-step baselines, linear and LSTM models, and the
autoregressive FeedBack model (LSTMCell in an RNN with return_state, warmup, a Python loop,
tf.stack, tf.transpose). Weights from numpy and shuffle=False, so that TF and tracer must
print the same numbers."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)

# The data: hourly rows of a few sine/cosine driven columns with noise (the tutorial's
# weather data, made up; numpy arrays in place of its pandas DataFrames).
n = 2000
hours = np.arange(n, dtype=np.float64)
day = 2 * np.pi * hours / 24.0
year = 2 * np.pi * hours / (24.0 * 365.2425)
temperature = 9.0 + 7.0 * np.sin(day - 1.0) + 4.0 * np.sin(year * 8) + rng.normal(0, 0.8, n)
pressure = 990.0 + 6.0 * np.cos(2 * np.pi * hours / 170.0) + rng.normal(0, 0.5, n)
humidity = 75.0 - 2.5 * (temperature - 9.0) + rng.normal(0, 3.0, n)
wind = 2.0 + np.abs(np.sin(hours / 37.0)) * 3.0 + rng.normal(0, 0.3, n)
wind_direction = 2 * np.pi * (hours / 300.0 + rng.normal(0, 0.05, n))
columns = ["T (degC)", "p (mbar)", "rh (%)", "Wx", "Wy", "Day sin", "Day cos"]
df = np.stack(
    [
        temperature,
        pressure,
        humidity,
        wind * np.cos(wind_direction),
        wind * np.sin(wind_direction),
        np.sin(day),
        np.cos(day),
    ],
    axis=1,
)

column_indices = {name: i for i, name in enumerate(columns)}
train_df = df[0 : int(n * 0.7)]
val_df = df[int(n * 0.7) : int(n * 0.9)]
test_df = df[int(n * 0.9) :]
num_features = df.shape[1]

train_mean = train_df.mean(axis=0)
train_std = train_df.std(axis=0, ddof=1)  # pandas' std
train_df = (train_df - train_mean) / train_std
val_df = (val_df - train_mean) / train_std
test_df = (test_df - train_mean) / train_std


class WindowGenerator:
    def __init__(
        self,
        input_width,
        label_width,
        shift,
        train_df=train_df,
        val_df=val_df,
        test_df=test_df,
        label_columns=None,
    ):
        # Store the raw data.
        self.train_df = train_df
        self.val_df = val_df
        self.test_df = test_df

        # Work out the label column indices.
        self.label_columns = label_columns
        if label_columns is not None:
            self.label_columns_indices = {name: i for i, name in enumerate(label_columns)}
        self.column_indices = {name: i for i, name in enumerate(columns)}

        # Work out the window parameters.
        self.input_width = input_width
        self.label_width = label_width
        self.shift = shift

        self.total_window_size = input_width + shift

        self.input_slice = slice(0, input_width)
        self.input_indices = np.arange(self.total_window_size)[self.input_slice]

        self.label_start = self.total_window_size - self.label_width
        self.labels_slice = slice(self.label_start, None)
        self.label_indices = np.arange(self.total_window_size)[self.labels_slice]

    def __repr__(self):
        return "\n".join(
            [
                f"Total window size: {self.total_window_size}",
                f"Input indices: {self.input_indices}",
                f"Label indices: {self.label_indices}",
                f"Label column name(s): {self.label_columns}",
            ]
        )


def split_window(self, features):
    inputs = features[:, self.input_slice, :]
    labels = features[:, self.labels_slice, :]
    if self.label_columns is not None:
        labels = tf.stack(
            [labels[:, :, self.column_indices[name]] for name in self.label_columns], axis=-1
        )

    # Slicing doesn't preserve static shape information, so set the shapes
    # manually. This way the `tf.data.Datasets` are easier to inspect.
    inputs.set_shape([None, self.input_width, None])
    labels.set_shape([None, self.label_width, None])

    return inputs, labels


WindowGenerator.split_window = split_window


def make_dataset(self, data):
    data = np.array(data, dtype=np.float32)
    ds = tf.keras.utils.timeseries_dataset_from_array(
        data=data,
        targets=None,
        sequence_length=self.total_window_size,
        sequence_stride=1,
        shuffle=False,  # the tutorial shuffles; both engines must see the same batches here
        batch_size=32,
    )

    ds = ds.map(self.split_window)

    return ds


WindowGenerator.make_dataset = make_dataset


@property
def train(self):
    return self.make_dataset(self.train_df)


@property
def val(self):
    return self.make_dataset(self.val_df)


@property
def test(self):
    return self.make_dataset(self.test_df)


@property
def example(self):
    """Get and cache an example batch of `inputs, labels` for plotting."""
    result = getattr(self, "_example", None)
    if result is None:
        # No example batch was found, so get one from the `.train` dataset
        result = next(iter(self.train))
        # And cache it for next time
        self._example = result
    return result


WindowGenerator.train = train
WindowGenerator.val = val
WindowGenerator.test = test
WindowGenerator.example = example


def plot(self, model=None, plot_col="T (degC)", max_subplots=3):
    # The tutorial plots; here a checksum of what it would plot.
    inputs, labels = self.example
    plot_col_index = self.column_indices[plot_col]
    shown = [float(np.sum(inputs[:max_subplots, :, plot_col_index]))]
    if model is not None:
        predictions = model(inputs)
        label_col_index = (
            self.label_columns_indices.get(plot_col, None) if self.label_columns else plot_col_index
        )
        shown.append(float(np.sum(predictions[:max_subplots, :, label_col_index])))
    return " ".join(f"{v:.4f}" for v in shown)


WindowGenerator.plot = plot

w2 = WindowGenerator(input_width=6, label_width=1, shift=1, label_columns=["T (degC)"])
print(which, repr(w2).replace("\n", "; "))

# Stack three slices, the length of the total window.
example_window = tf.stack(
    [
        np.array(train_df[: w2.total_window_size]),
        np.array(train_df[100 : 100 + w2.total_window_size]),
        np.array(train_df[200 : 200 + w2.total_window_size]),
    ]
)
example_inputs, example_labels = w2.split_window(example_window)
print(
    which,
    "shapes",
    example_window.shape,
    example_inputs.shape,
    example_labels.shape,
    example_window.dtype.name,
)
print(which, "element_spec", [(s.shape.as_list(), s.dtype.name) for s in w2.train.element_spec])
for example_inputs, example_labels in w2.train.take(1):
    print(
        which,
        "batch",
        example_inputs.shape,
        example_labels.shape,
        "batches",
        int(w2.train.cardinality()),
    )


def from_numpy(model, scale=0.1):
    """Weights from numpy: each weight that is not all zeros and is not a vector (the
    initializers' zeros, the biases and the LSTM's forget-gate ones stay as built)."""
    model.set_weights(
        [
            rng.normal(0.0, scale, w.shape).astype(np.float32) if w.ndim > 1 and w.any() else w
            for w in model.get_weights()
        ]
    )


MAX_EPOCHS = 3  # the tutorial's 20, cut so that the program runs in half a minute


def compile_and_fit(model, window, patience=2):
    early_stopping = tf.keras.callbacks.EarlyStopping(
        monitor="val_loss", patience=patience, mode="min"
    )

    model.compile(
        loss=tf.keras.losses.MeanSquaredError(),
        optimizer=tf.keras.optimizers.Adam(),
        metrics=[tf.keras.metrics.MeanAbsoluteError()],
    )

    history = model.fit(
        window.train,
        epochs=MAX_EPOCHS,
        validation_data=window.val,
        callbacks=[early_stopping],
        verbose=0,
    )
    return history


val_performance = {}
performance = {}
fit_times = {}


def report(name, model, window, history=None, build=True, fit=True):
    if build:
        model(window.example[0])
        from_numpy(model)
    if fit:
        start = time.perf_counter()
        history = compile_and_fit(model, window)
        fit_times[name] = (time.perf_counter() - start, len(history.epoch))
    val_performance[name] = model.evaluate(window.val, return_dict=True, verbose=0)
    performance[name] = model.evaluate(window.test, verbose=0, return_dict=True)
    losses = " ".join(f"{v:.5f}" for v in history.history["val_loss"]) if history else "-"
    print(
        which,
        f"{name:<18} val_loss {losses} | val mae {val_performance[name]['mean_absolute_error']:.5f}",
        f"test mae {performance[name]['mean_absolute_error']:.5f}",
        f"test loss {performance[name]['loss']:.5f} | plot {window.plot(model)}",
    )


# Single step models.
single_step_window = WindowGenerator(
    input_width=1, label_width=1, shift=1, label_columns=["T (degC)"]
)
wide_window = WindowGenerator(input_width=24, label_width=24, shift=1, label_columns=["T (degC)"])


class Baseline(tf.keras.Model):
    def __init__(self, label_index=None):
        super().__init__()
        self.label_index = label_index

    def call(self, inputs):
        if self.label_index is None:
            return inputs
        result = inputs[:, :, self.label_index]
        return result[:, :, tf.newaxis]


baseline = Baseline(label_index=column_indices["T (degC)"])
baseline.compile(
    loss=tf.keras.losses.MeanSquaredError(), metrics=[tf.keras.metrics.MeanAbsoluteError()]
)
report("Baseline", baseline, single_step_window, build=False, fit=False)
report("Baseline wide", baseline, wide_window, build=False, fit=False)

linear = tf.keras.Sequential([tf.keras.layers.Dense(units=1)])
report("Linear", linear, single_step_window)
print(which, "linear kernel", " ".join(f"{v:.4f}" for v in linear.layers[0].kernel[:, 0].numpy()))

CONV_WIDTH = 3
conv_window = WindowGenerator(
    input_width=CONV_WIDTH, label_width=1, shift=1, label_columns=["T (degC)"]
)
multi_step_dense = tf.keras.Sequential(
    [
        # Shape: (time, features) => (time*features)
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(units=32, activation="relu"),
        tf.keras.layers.Dense(units=32, activation="relu"),
        tf.keras.layers.Dense(units=1),
        # Add back the time dimension.
        # Shape: (outputs) => (1, outputs)
        tf.keras.layers.Reshape([1, -1]),
    ]
)
report("Multi step dense", multi_step_dense, conv_window)

conv_model = tf.keras.Sequential(
    [
        tf.keras.layers.Conv1D(filters=32, kernel_size=(CONV_WIDTH,), activation="relu"),
        tf.keras.layers.Dense(units=32, activation="relu"),
        tf.keras.layers.Dense(units=1),
    ]
)
report("Conv", conv_model, conv_window)
LABEL_WIDTH = 24
INPUT_WIDTH = LABEL_WIDTH + (CONV_WIDTH - 1)
wide_conv_window = WindowGenerator(
    input_width=INPUT_WIDTH, label_width=LABEL_WIDTH, shift=1, label_columns=["T (degC)"]
)
print(which, "conv on the wide window", conv_model(wide_conv_window.example[0]).shape)

lstm_model = tf.keras.models.Sequential(
    [
        # Shape [batch, time, features] => [batch, time, lstm_units]
        tf.keras.layers.LSTM(32, return_sequences=True),
        # Shape => [batch, time, features]
        tf.keras.layers.Dense(units=1),
    ]
)
report("LSTM", lstm_model, wide_window)

# Multi-output models: every feature is a label.
wide_window = WindowGenerator(input_width=24, label_width=24, shift=1)
multi_lstm_model = tf.keras.models.Sequential(
    [
        tf.keras.layers.LSTM(32, return_sequences=True),
        tf.keras.layers.Dense(units=num_features),
    ]
)
report("Multi-output LSTM", multi_lstm_model, wide_window)


class ResidualWrapper(tf.keras.Model):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def call(self, inputs, *args, **kwargs):
        delta = self.model(inputs, *args, **kwargs)

        # The prediction for each time step is the input
        # from the previous time step plus the delta
        # calculated by the model.
        return inputs + delta


residual_lstm = ResidualWrapper(
    tf.keras.Sequential(
        [
            tf.keras.layers.LSTM(32, return_sequences=True),
            tf.keras.layers.Dense(
                num_features,
                # The predicted deltas should start small.
                # Therefore, initialize the output layer with zeros.
                kernel_initializer=tf.keras.initializers.zeros(),
            ),
        ]
    )
)
report("Residual LSTM", residual_lstm, wide_window)

# Multi-step models.
OUT_STEPS = 24
multi_window = WindowGenerator(input_width=24, label_width=OUT_STEPS, shift=OUT_STEPS)
print(which, repr(multi_window).replace("\n", "; ")[:60])


class MultiStepLastBaseline(tf.keras.Model):
    def call(self, inputs):
        return tf.tile(inputs[:, -1:, :], [1, OUT_STEPS, 1])


last_baseline = MultiStepLastBaseline()
last_baseline.compile(
    loss=tf.keras.losses.MeanSquaredError(), metrics=[tf.keras.metrics.MeanAbsoluteError()]
)
report("Last", last_baseline, multi_window, build=False, fit=False)

multi_linear_model = tf.keras.Sequential(
    [
        # Take the last time-step.
        # Shape [batch, time, features] => [batch, 1, features]
        tf.keras.layers.Lambda(lambda x: x[:, -1:, :]),
        # Shape => [batch, 1, out_steps*features]
        tf.keras.layers.Dense(OUT_STEPS * num_features, kernel_initializer=tf.initializers.zeros()),
        # Shape => [batch, out_steps, features]
        tf.keras.layers.Reshape([OUT_STEPS, num_features]),
    ]
)
report("Multi linear", multi_linear_model, multi_window)

multi_lstm = tf.keras.Sequential(
    [
        # Shape [batch, time, features] => [batch, lstm_units].
        tf.keras.layers.LSTM(32, return_sequences=False),
        # Shape => [batch, out_steps*features].
        tf.keras.layers.Dense(OUT_STEPS * num_features, kernel_initializer=tf.initializers.zeros()),
        # Shape => [batch, out_steps, features].
        tf.keras.layers.Reshape([OUT_STEPS, num_features]),
    ]
)
report("Multi LSTM", multi_lstm, multi_window)


class FeedBack(tf.keras.Model):
    def __init__(self, units, out_steps):
        super().__init__()
        self.out_steps = out_steps
        self.units = units
        self.lstm_cell = tf.keras.layers.LSTMCell(units)
        # Also wrap the LSTMCell in an RNN to simplify the `warmup` method.
        self.lstm_rnn = tf.keras.layers.RNN(self.lstm_cell, return_state=True)
        self.dense = tf.keras.layers.Dense(num_features)


feedback_model = FeedBack(units=32, out_steps=OUT_STEPS)


def warmup(self, inputs):
    # inputs.shape => (batch, time, features)
    # x.shape => (batch, lstm_units)
    x, *state = self.lstm_rnn(inputs)

    # predictions.shape => (batch, features)
    prediction = self.dense(x)
    return prediction, state


FeedBack.warmup = warmup

prediction, state = feedback_model.warmup(multi_window.example[0])
print(which, "warmup", prediction.shape, len(state))


def call(self, inputs, training=None):
    # Use a TensorArray to capture dynamically unrolled outputs.
    predictions = []
    # Initialize the LSTM state.
    prediction, state = self.warmup(inputs)

    # Insert the first prediction.
    predictions.append(prediction)

    # Run the rest of the prediction steps.
    for n in range(1, self.out_steps):
        # Use the last prediction as input.
        x = prediction
        # Execute one lstm step.
        x, state = self.lstm_cell(x, states=state, training=training)
        # Convert the lstm output to a prediction.
        prediction = self.dense(x)
        # Add the prediction to the output.
        predictions.append(prediction)

    # predictions.shape => (time, batch, features)
    predictions = tf.stack(predictions)
    # predictions.shape => (batch, time, features)
    predictions = tf.transpose(predictions, [1, 0, 2])
    return predictions


FeedBack.call = call

print(which, "feedback output", feedback_model(multi_window.example[0]).shape)
report("AR LSTM", feedback_model, multi_window)

start = time.perf_counter()
multi_lstm_model.fit(wide_window.train, epochs=1, validation_data=wide_window.val, verbose=0)
epoch = time.perf_counter() - start
print(
    which,
    f"an LSTM epoch after its fit {epoch * 1e3:.0f} ms; fit s (epochs)",
    " ".join(f"{name}: {t:.2f} ({e})" for name, (t, e) in fit_times.items()),
)
