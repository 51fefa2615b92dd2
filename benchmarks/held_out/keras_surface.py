"""Held-out: the observable surface of tf.keras (Keras 3) as a program meets it, in small
independent cases: the names, paths, shapes, dtypes and trainability of layer weights
(Dense, Conv2D, BatchNormalization, Embedding, LSTM, a custom layer with add_weight, a layer
inside a layer, a Model subclass); automatic layer naming and clear_session; summary text
and parameter counts; get_config and to_json; compile / fit / evaluate / predict and the
keys they report; metric, loss and optimizer-variable names; get_weights / set_weights;
freezing layers (BatchNormalization included); a .keras save and load; Input and
KerasTensor attributes; build on first call; add_loss and regularization losses;
to_categorical; Sequential pop / add; the order of callback hooks. Each case prints lines
led by its name, so the outputs of TF and tracer can be diffed line by line; a case that
raises prints the exception's type and the start of its message. Numbers come from weights
set from numpy and are rounded to 6 significant digits."""

import json
import os
import tempfile

import numpy as np
from engine import tf, which

keras = tf.keras
layers = keras.layers
SCRATCH = os.environ.get("KSURF_DIR") or tempfile.mkdtemp(prefix="ksurf_")
CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def say(name, *parts):
    print(which, name, *parts, flush=True)


def r6(x):
    """A number or an array as nested lists of floats with 6 significant digits."""
    a = np.asarray(x, dtype=np.float64)
    return np.vectorize(lambda v: float(f"{v:.6g}"), otypes=[float])(a).tolist() if a.size else []


def dt(d):
    """A dtype as its plain name, whatever object carries it."""
    return getattr(d, "name", d) if not isinstance(d, str) else d


def vpath(v):
    """A variable's Keras 3 path; the name, marked, where the variable has none."""
    return v.path if hasattr(v, "path") else "<no path>" + v.name


def describe_vars(name, variables):
    for v in variables:
        say(
            name,
            v.name,
            "|",
            vpath(v),
            "|",
            tuple(v.shape),
            dt(v.dtype),
            "trainable" if v.trainable else "frozen",
        )


def weights_from(rng, layer):
    """Set every weight of a built layer from numpy; returns the arrays."""
    arrays = [rng.normal(0.0, 0.3, tuple(w.shape)).astype(np.float32) for w in layer.weights]
    layer.set_weights(arrays)
    return arrays


def tiny_regression(n=8, d=4, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = (x @ rng.normal(size=(d, 1)) + 0.1).astype(np.float32)
    return x, y


def small_mlp(d=4, seed=1):
    model = keras.Sequential(
        [keras.Input(shape=(d,)), layers.Dense(3, activation="relu"), layers.Dense(1)]
    )
    weights_from(np.random.default_rng(seed), model)
    return model


# ---------------------------------------------------------------- weights of layers
@case
def dense_weights():
    d = layers.Dense(3)
    d.build((None, 4))
    describe_vars("dense_weights", d.weights)
    say("dense_weights", "kernel/bias attrs", d.kernel.name, d.bias.name)


@case
def conv2d_weights():
    c = layers.Conv2D(2, 3, name="conv")
    c(np.zeros((1, 5, 5, 3), np.float32))
    describe_vars("conv2d_weights", c.weights)
    say("conv2d_weights", "output", tuple(c(np.zeros((2, 5, 5, 3), np.float32)).shape))


@case
def batchnorm_weights():
    bn = layers.BatchNormalization()
    bn.build((None, 3))
    describe_vars("batchnorm_weights", bn.weights)
    say("batchnorm_weights", "trainable", [v.name for v in bn.trainable_weights])
    say("batchnorm_weights", "non_trainable", [v.name for v in bn.non_trainable_weights])


@case
def embedding_weights():
    e = layers.Embedding(10, 4)
    out = e(np.array([[1, 2, 3]]))
    describe_vars("embedding_weights", e.weights)
    say("embedding_weights", "out", tuple(out.shape), dt(out.dtype))


@case
def lstm_weights():
    lstm = layers.LSTM(5, return_sequences=True)
    out = lstm(np.zeros((2, 7, 3), np.float32))
    describe_vars("lstm_weights", lstm.weights)
    say("lstm_weights", "out", tuple(out.shape), "cell", type(lstm.cell).__name__)


class Scaler(layers.Layer):
    """A custom layer with named, unnamed and frozen weights made in build."""

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")
        self.offset = self.add_weight(shape=(input_shape[-1],), initializer="zeros")
        self.count = self.add_weight(
            shape=(), initializer="zeros", trainable=False, name="count", dtype="int32"
        )

    def call(self, x):
        return x * self.scale + self.offset


@case
def custom_add_weight():
    s = Scaler()
    say("custom_add_weight", "name", s.name, "built", s.built)
    y = s(np.ones((2, 3), np.float32))
    say("custom_add_weight", "built", s.built, "out", r6(y))
    describe_vars("custom_add_weight", s.weights)


class Block(layers.Layer):
    """A layer that holds two Dense layers and a weight of its own."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.inner = layers.Dense(4, name="inner")
        self.head = layers.Dense(2)

    def build(self, input_shape):
        self.gain = self.add_weight(shape=(2,), initializer="ones", name="gain")

    def call(self, x):
        return self.head(self.inner(x)) * self.gain


@case
def nested_layer():
    b = Block(name="block")
    b(np.zeros((1, 3), np.float32))
    describe_vars("nested_layer", b.weights)
    say("nested_layer", "trainable", [vpath(w) for w in b.trainable_weights])


class TwoTower(keras.Model):
    def __init__(self):
        super().__init__()
        self.left = layers.Dense(3, name="left")
        self.right = layers.Dense(3)
        self.norm = layers.BatchNormalization()
        self.out = layers.Dense(1)

    def call(self, x, training=False):
        h = self.left(x) + self.right(x)
        return self.out(self.norm(h, training=training))


@case
def model_subclass_weights():
    m = TwoTower()
    m(np.zeros((2, 4), np.float32))
    say("model_subclass_weights", "model name", m.name)
    say("model_subclass_weights", "layers", [item.name for item in m.layers])
    describe_vars("model_subclass_weights", m.weights)
    say(
        "model_subclass_weights",
        "counts",
        len(m.weights),
        len(m.trainable_weights),
        len(m.non_trainable_weights),
        len(m.variables),
        len(m.trainable_variables),
    )


@case
def sequential_weight_order():
    m = keras.Sequential(
        [
            keras.Input((6, 6, 1)),
            layers.Conv2D(2, 3),
            layers.BatchNormalization(),
            layers.Flatten(),
            layers.Dense(2),
        ]
    )
    say("sequential_weight_order", "weights", [vpath(w) for w in m.weights])
    say("sequential_weight_order", "trainable", [vpath(w) for w in m.trainable_weights])
    say("sequential_weight_order", "non_trainable", [vpath(w) for w in m.non_trainable_weights])
    say("sequential_weight_order", "get_weights", [a.shape for a in m.get_weights()])


# ---------------------------------------------------------------- naming
@case
def auto_naming():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((2,)), layers.Dense(2), layers.Dense(2), layers.Dense(1)])
    say("auto_naming", "first", m.name, [item.name for item in m.layers])
    m2 = keras.Sequential([keras.Input((2,)), layers.Dense(2), layers.Dropout(0.1)])
    say("auto_naming", "second", m2.name, [item.name for item in m2.layers])
    keras.backend.clear_session()
    m3 = keras.Sequential([keras.Input((2,)), layers.Dense(2), layers.Dense(2)])
    say("auto_naming", "after clear", m3.name, [item.name for item in m3.layers])
    inp = keras.Input((2,))
    f = keras.Model(inp, layers.Dense(1)(layers.Dense(3)(inp)))
    say("auto_naming", "functional", f.name, [item.name for item in f.layers])
    say("auto_naming", "custom", Scaler().name, Scaler().name, Block().name, TwoTower().name)


@case
def get_layer():
    keras.backend.clear_session()
    m = small_mlp()
    say("get_layer", m.get_layer("dense").name, m.get_layer(index=1).name)
    try:
        m.get_layer("nope")
    except Exception as e:
        say("get_layer", "missing", type(e).__name__)


# ---------------------------------------------------------------- summary, params, config
@case
def summary_text():
    keras.backend.clear_session()
    m = keras.Sequential(
        [
            keras.Input((4,)),
            layers.Dense(8, activation="relu"),
            layers.BatchNormalization(),
            layers.Dense(2),
        ],
        name="tiny",
    )
    lines = []
    m.summary(print_fn=lambda s, **kw: lines.append(s))
    for block in lines:
        for line in block.split("\n"):
            if line.strip(" ─━┃│┏┓┗┛┡┩└┘┌┐├┤┬┴┼╇╈╍"):
                say("summary_text", " ".join(line.replace("│", " ").replace("┃", " ").split()))


@case
def count_params():
    keras.backend.clear_session()
    m = keras.Sequential(
        [keras.Input((4,)), layers.Dense(8), layers.BatchNormalization(), layers.Dense(2)]
    )
    say("count_params", m.count_params(), [item.count_params() for item in m.layers])
    d = layers.Dense(3)
    try:
        d.count_params()
        say("count_params", "unbuilt", "no error")
    except Exception as e:
        say("count_params", "unbuilt", type(e).__name__)


def show_config(name, layer):
    cfg = layer.get_config()
    say(name, "keys", sorted(cfg))
    say(name, "config", json.dumps(cfg, sort_keys=True, default=lambda o: repr(o)))


@case
def config_dense():
    show_config(
        "config_dense",
        layers.Dense(
            3, activation="relu", name="d", kernel_regularizer=keras.regularizers.l2(0.01)
        ),
    )


@case
def config_conv_pool_dropout():
    show_config("config_conv", layers.Conv2D(4, (3, 3), strides=2, padding="same", name="c"))
    show_config("config_pool", layers.MaxPooling2D(2, name="p"))
    show_config("config_dropout", layers.Dropout(0.25, name="dr"))


@case
def config_bn_embedding_lstm():
    show_config("config_bn", layers.BatchNormalization(momentum=0.9, name="bn"))
    show_config("config_embedding", layers.Embedding(10, 4, name="e"))
    show_config("config_lstm", layers.LSTM(5, name="l"))


@case
def to_json():
    keras.backend.clear_session()
    m = small_mlp()
    j = json.loads(m.to_json())
    say("to_json", "top", sorted(j))
    say("to_json", "class", j.get("class_name"), "config keys", sorted(j.get("config", {})))
    lays = j.get("config", {}).get("layers", [])
    say(
        "to_json",
        "layers",
        [(item.get("class_name"), item.get("config", {}).get("name")) for item in lays],
    )
    say("to_json", "layer keys", sorted(lays[1]) if len(lays) > 1 else None)
    m2 = keras.models.model_from_json(m.to_json())
    say(
        "to_json",
        "rebuilt",
        type(m2).__name__,
        [item.name for item in m2.layers],
        m2.count_params(),
    )


# ---------------------------------------------------------------- training surface
def compiled_classifier(seed=3):
    keras.backend.clear_session()
    m = keras.Sequential(
        [
            keras.Input((4,)),
            layers.Dense(5, activation="relu"),
            layers.Dense(3, activation="softmax"),
        ]
    )
    weights_from(np.random.default_rng(seed), m)
    m.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss="sparse_categorical_crossentropy",
        metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=2, name="top2")],
    )
    return m


def class_data(n=12, seed=4):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (np.argmax(x[:, :3], axis=1)).astype(np.int32)
    return x, y


@case
def fit_history():
    m = compiled_classifier()
    say("fit_history", "metrics_names before", m.metrics_names)
    x, y = class_data()
    h = m.fit(
        x, y, batch_size=4, epochs=2, validation_data=(x[:4], y[:4]), verbose=0, shuffle=False
    )
    say("fit_history", "keys", sorted(h.history), "epoch", h.epoch)
    for k in sorted(h.history):
        say("fit_history", k, r6(h.history[k]))
    say("fit_history", "params", sorted(h.params.items()) if h.params else h.params)
    say("fit_history", "metrics_names after", m.metrics_names)
    say("fit_history", "metric objects", [mt.name for mt in m.metrics])


@case
def fit_validation_split():
    m = compiled_classifier()
    x, y = class_data()
    h = m.fit(x, y, batch_size=3, epochs=1, validation_split=0.25, verbose=0, shuffle=False)
    say("fit_validation_split", sorted(h.history), {k: r6(v) for k, v in sorted(h.history.items())})


@case
def evaluate_predict():
    m = compiled_classifier()
    x, y = class_data()
    d = m.evaluate(x, y, batch_size=5, verbose=0, return_dict=True)
    say("evaluate_predict", "dict", {k: r6(v) for k, v in sorted(d.items())})
    lst = m.evaluate(x, y, batch_size=5, verbose=0)
    say("evaluate_predict", "list", type(lst).__name__, r6(lst))
    p = m.predict(x, batch_size=5, verbose=0)
    say("evaluate_predict", "predict", type(p).__name__, p.shape, p.dtype, r6(p[:2]))
    p1 = m.predict_on_batch(x[:3])
    say("evaluate_predict", "predict_on_batch", type(p1).__name__, p1.shape)
    t = m.train_on_batch(x[:4], y[:4], return_dict=True)
    say("evaluate_predict", "train_on_batch", {k: r6(v) for k, v in sorted(t.items())})
    t2 = m.test_on_batch(x[:4], y[:4])
    say("evaluate_predict", "test_on_batch", type(t2).__name__, r6(t2))


@case
def regression_metrics():
    keras.backend.clear_session()
    m = small_mlp()
    m.compile(optimizer="adam", loss="mse", metrics=["mae", keras.metrics.RootMeanSquaredError()])
    x, y = tiny_regression()
    h = m.fit(x, y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    say("regression_metrics", "history", {k: r6(v) for k, v in sorted(h.history.items())})
    say("regression_metrics", "metrics_names", m.metrics_names)
    say(
        "regression_metrics",
        "loss",
        type(m.loss).__name__ if not isinstance(m.loss, str) else m.loss,
    )


@case
def loss_metric_names():
    objs = [
        keras.losses.MeanSquaredError(),
        keras.losses.SparseCategoricalCrossentropy(),
        keras.losses.BinaryCrossentropy(from_logits=True),
        keras.losses.Huber(),
        keras.metrics.Accuracy(),
        keras.metrics.BinaryAccuracy(),
        keras.metrics.AUC(),
        keras.metrics.Mean(),
        keras.metrics.MeanAbsoluteError(),
        keras.metrics.SparseCategoricalAccuracy(),
        keras.metrics.Precision(),
        keras.metrics.Recall(),
        keras.metrics.MeanSquaredError(name="custom"),
    ]
    for o in objs:
        say("loss_metric_names", type(o).__name__, o.name)
    mse = keras.losses.MeanSquaredError()
    say("loss_metric_names", "mse value", r6(mse(np.array([[1.0, 2.0]]), np.array([[1.5, 2.5]]))))
    say("loss_metric_names", "reduction", getattr(mse, "reduction", "<none>"))
    acc = keras.metrics.SparseCategoricalAccuracy()
    acc.update_state([1, 0], [[0.1, 0.9], [0.2, 0.8]])
    say("loss_metric_names", "acc", r6(acc.result()), [v.name for v in acc.variables])
    acc.reset_state()
    say("loss_metric_names", "reset", r6(acc.result()))
    say(
        "loss_metric_names",
        "get",
        type(keras.losses.get("mse")).__name__,
        type(keras.metrics.get("mae")).__name__,
    )


@case
def optimizer_variables():
    keras.backend.clear_session()
    for opt in [
        keras.optimizers.Adam(0.01),
        keras.optimizers.SGD(0.1, momentum=0.9),
        keras.optimizers.RMSprop(0.01),
    ]:
        d = layers.Dense(2, name="od")
        d.build((None, 3))
        weights_from(np.random.default_rng(5), d)
        x = np.ones((2, 3), np.float32)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(d(x) ** 2)
        grads = tape.gradient(loss, d.trainable_variables)
        opt.apply_gradients(zip(grads, d.trainable_variables))
        name = type(opt).__name__
        ov = opt.variables
        if callable(ov):
            say("optimizer_variables", name, "variables is callable")
            ov = ov()
        say(
            "optimizer_variables",
            name,
            opt.name,
            len(ov),
            "iterations",
            int(opt.iterations.numpy()),
        )
        say("optimizer_variables", name, [v.name for v in ov])
        say("optimizer_variables", name, [vpath(v) for v in ov])
        say("optimizer_variables", name, "lr", r6(opt.learning_rate), "kernel", r6(d.kernel)[0])


@case
def get_set_weights():
    keras.backend.clear_session()
    m = keras.Sequential(
        [keras.Input((3,)), layers.Dense(2), layers.BatchNormalization(), layers.Dense(1)]
    )
    ws = m.get_weights()
    say("get_set_weights", "shapes", [w.shape for w in ws])
    rng = np.random.default_rng(6)
    new = [rng.uniform(0.5, 1.5, w.shape).astype(np.float32) for w in ws]
    m.set_weights(new)
    say(
        "get_set_weights",
        "roundtrip",
        all(np.array_equal(a, b) for a, b in zip(new, m.get_weights())),
    )
    x = rng.normal(size=(2, 3)).astype(np.float32)
    say("get_set_weights", "predict", r6(m(x, training=False)))
    say("get_set_weights", "layer1", [w.shape for w in m.layers[1].get_weights()])
    try:
        m.set_weights(new[:-1])
        say("get_set_weights", "short", "no error")
    except Exception as e:
        say("get_set_weights", "short", type(e).__name__)
    try:
        m.layers[0].set_weights([np.zeros((4, 2), np.float32), np.zeros(2, np.float32)])
        say("get_set_weights", "bad shape", "no error")
    except Exception as e:
        say("get_set_weights", "bad shape", type(e).__name__)


@case
def freeze_layers():
    keras.backend.clear_session()
    m = keras.Sequential(
        [keras.Input((3,)), layers.Dense(2), layers.BatchNormalization(), layers.Dense(1)]
    )
    m.layers[0].trainable = False
    say(
        "freeze_layers",
        "layer0",
        len(m.layers[0].trainable_weights),
        len(m.layers[0].non_trainable_weights),
    )
    say("freeze_layers", "model trainable", [vpath(w) for w in m.trainable_weights])
    say("freeze_layers", "model frozen", [vpath(w) for w in m.non_trainable_weights])
    say("freeze_layers", "var flags", [w.trainable for w in m.layers[0].weights])
    m.trainable = False
    say(
        "freeze_layers",
        "all frozen",
        len(m.trainable_weights),
        len(m.non_trainable_weights),
        [item.trainable for item in m.layers],
    )
    m.trainable = True
    say(
        "freeze_layers", "unfrozen", len(m.trainable_weights), [item.trainable for item in m.layers]
    )


@case
def frozen_batchnorm():
    keras.backend.clear_session()
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    bn = layers.BatchNormalization()
    bn.build((None, 3))
    y_train = bn(x, training=True)
    say("frozen_batchnorm", "trainable, training=True", r6(y_train[0]), "mean", r6(bn.moving_mean))
    bn.trainable = False
    y_frozen = bn(x, training=True)
    say("frozen_batchnorm", "frozen, training=True", r6(y_frozen[0]), "mean", r6(bn.moving_mean))
    m = keras.Sequential([keras.Input((3,)), bn, layers.Dense(1, kernel_initializer="ones")])
    m.compile("sgd", "mse")
    m.fit(x, np.zeros((4, 1), np.float32), epochs=1, batch_size=4, verbose=0)
    say("frozen_batchnorm", "after fit", "mean", r6(bn.moving_mean), "gamma", r6(bn.gamma))


@case
def save_load_keras():
    keras.backend.clear_session()
    m = small_mlp()
    m.compile(optimizer="adam", loss="mse", metrics=["mae"])
    x, y = tiny_regression()
    m.fit(x, y, epochs=1, batch_size=4, verbose=0, shuffle=False)
    path = os.path.join(SCRATCH, "surface.keras")
    m.save(path)
    say("save_load_keras", "exists", os.path.exists(path))
    m2 = keras.models.load_model(path)
    say("save_load_keras", "type", type(m2).__name__, m2.name, [item.name for item in m2.layers])
    say(
        "save_load_keras",
        "same predict",
        np.allclose(m.predict(x, verbose=0), m2.predict(x, verbose=0)),
        r6(m2.predict(x[:2], verbose=0)),
    )
    say("save_load_keras", "weights", [vpath(w) for w in m2.weights])
    say(
        "save_load_keras",
        "compiled",
        m2.optimizer is not None and type(m2.optimizer).__name__,
        "iterations",
        int(m2.optimizer.iterations.numpy()) if m2.optimizer is not None else None,
    )
    say(
        "save_load_keras",
        "evaluate",
        {k: r6(v) for k, v in sorted(m2.evaluate(x, y, verbose=0, return_dict=True).items())},
    )
    try:
        m.save(os.path.join(SCRATCH, "surface.bin"))
        say("save_load_keras", "bad suffix", "no error")
    except Exception as e:
        say("save_load_keras", "bad suffix", type(e).__name__)


@case
def save_load_custom():
    keras.backend.clear_session()

    @keras.utils.register_keras_serializable(package="surface")
    class Doubler(layers.Layer):
        def call(self, x):
            return 2.0 * x

    inp = keras.Input((3,), name="feat")
    m = keras.Model(inp, layers.Dense(1, name="head")(Doubler(name="dbl")(inp)), name="fn")
    weights_from(np.random.default_rng(7), m)
    path = os.path.join(SCRATCH, "custom.keras")
    m.save(path)
    m2 = keras.models.load_model(path)
    x = np.ones((1, 3), np.float32)
    say(
        "save_load_custom",
        type(m2).__name__,
        m2.name,
        [item.name for item in m2.layers],
        type(m2.layers[1]).__name__,
        r6(m2(x)),
        r6(m(x)),
    )
    m.save_weights(os.path.join(SCRATCH, "custom.weights.h5"))
    m3 = keras.Model(inp, layers.Dense(1, name="head")(Doubler(name="dbl")(inp)))
    m3.load_weights(os.path.join(SCRATCH, "custom.weights.h5"))
    say("save_load_custom", "weights.h5", r6(m3(x)))


# ---------------------------------------------------------------- tensors, build, losses
@case
def input_keras_tensor():
    keras.backend.clear_session()
    a = keras.Input(shape=(3,), name="feat")
    b = keras.Input(shape=(None, 4), batch_size=2, dtype="int32")
    c = layers.Dense(5)(a)
    for t in (a, b, c):
        say("input_keras_tensor", type(t).__name__, tuple(t.shape), dt(t.dtype), t.name)
    say(
        "input_keras_tensor",
        "ndim",
        a.ndim if hasattr(a, "ndim") else "<none>",
        "sparse",
        getattr(a, "sparse", "<none>"),
    )
    m = keras.Model(a, c)
    say(
        "input_keras_tensor",
        "model io",
        [tuple(t.shape) for t in m.inputs],
        [tuple(t.shape) for t in m.outputs],
        m.input_shape,
        m.output_shape,
    )
    say(
        "input_keras_tensor",
        "input names",
        [t.name for t in m.inputs],
        m.input_names if hasattr(m, "input_names") else "<none>",
    )
    say("input_keras_tensor", "layer0", type(m.layers[0]).__name__, m.layers[0].name)


@case
def build_on_call():
    keras.backend.clear_session()
    seen = []

    class Probe(layers.Layer):
        def build(self, input_shape):
            seen.append(tuple(input_shape))
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones", name="w")

        def call(self, x):
            return tf.matmul(x, self.w)

    p = Probe()
    say("build_on_call", "before", p.built, len(p.weights))
    p(np.ones((3, 4), np.float32))
    p(np.ones((5, 4), np.float32))
    say("build_on_call", "after", p.built, seen, [vpath(w) for w in p.weights])
    d = layers.Dense(2)
    say(
        "build_on_call",
        "dense input_spec before",
        getattr(d, "input_spec", "<none>") is None,
        d.built,
    )
    d(np.ones((1, 3), np.float32))
    spec = getattr(d, "input_spec", "<none>")
    say(
        "build_on_call",
        "dense input_spec after",
        type(spec).__name__,
        getattr(spec, "min_ndim", None),
        getattr(spec, "axes", None),
    )
    try:
        d(np.ones((1, 4), np.float32))
        say("build_on_call", "wrong width", "no error")
    except Exception as e:
        say("build_on_call", "wrong width", type(e).__name__)
    d2 = layers.Dense(2)
    d2.build((None, 6))
    say("build_on_call", "explicit build", d2.built, tuple(d2.kernel.shape))


class Penalized(layers.Layer):
    def call(self, x):
        self.add_loss(0.5 * tf.reduce_mean(x**2))
        return x


@case
def add_loss():
    keras.backend.clear_session()
    p = Penalized()
    say("add_loss", "before", len(p.losses))
    p(np.array([[1.0, 2.0]], np.float32))
    say("add_loss", "eager call", [r6(item) for item in p.losses])
    p(np.array([[3.0, 4.0]], np.float32))
    say("add_loss", "second call", [r6(item) for item in p.losses])
    inp = keras.Input((2,))
    m = keras.Model(inp, layers.Dense(1, kernel_initializer="ones")(Penalized()(inp)))
    m.compile("sgd", "mse")
    x = np.array([[1.0, 1.0], [2.0, 0.0]], np.float32)
    y = np.zeros((2, 1), np.float32)
    d = m.evaluate(x, y, verbose=0, return_dict=True)
    say("add_loss", "evaluate", {k: r6(v) for k, v in d.items()})
    m(x)
    say("add_loss", "model.losses", [r6(item) for item in m.losses])


@case
def regularizer_losses():
    keras.backend.clear_session()
    m = keras.Sequential(
        [
            keras.Input((2,)),
            layers.Dense(
                2,
                kernel_regularizer=keras.regularizers.l2(0.1),
                kernel_initializer="ones",
                bias_regularizer=keras.regularizers.l1(0.5),
                bias_initializer="ones",
            ),
            layers.Dense(1, activity_regularizer="l2", kernel_initializer="ones"),
        ]
    )
    say("regularizer_losses", "unbuilt call", len(m.losses), [r6(item) for item in m.losses])
    m(np.ones((1, 2), np.float32))
    say("regularizer_losses", "after call", len(m.losses), [r6(item) for item in m.losses])
    m.compile("sgd", "mse")
    d = m.evaluate(
        np.ones((1, 2), np.float32), np.zeros((1, 1), np.float32), verbose=0, return_dict=True
    )
    say("regularizer_losses", "evaluate", {k: r6(v) for k, v in d.items()})
    reg = keras.regularizers.L1L2(l1=0.1, l2=0.2)
    say("regularizer_losses", "l1l2", r6(reg(tf.constant([[1.0, -2.0]]))), reg.get_config())


@case
def to_categorical():
    a = keras.utils.to_categorical([0, 2, 1, 2])
    say("to_categorical", a.shape, a.dtype, a.tolist())
    b = keras.utils.to_categorical(np.array([[1], [3]]), num_classes=5)
    say("to_categorical", b.shape, b.dtype, b.tolist())
    c = keras.utils.to_categorical(np.array([[0, 1], [1, 0]]), num_classes=2)
    say("to_categorical", c.shape)


@case
def sequential_pop_add():
    keras.backend.clear_session()
    m = keras.Sequential([keras.Input((4,)), layers.Dense(3), layers.Dense(2), layers.Dense(1)])
    say("sequential_pop_add", "start", [item.name for item in m.layers], m.output_shape)
    popped = m.pop()
    say("sequential_pop_add", "pop returns", getattr(popped, "name", popped))
    say(
        "sequential_pop_add",
        "after pop",
        [item.name for item in m.layers],
        m.output_shape,
        tuple(m(np.ones((1, 4), np.float32)).shape),
    )
    m.add(layers.Dense(7, name="new_head"))
    say(
        "sequential_pop_add",
        "after add",
        [item.name for item in m.layers],
        m.output_shape,
        tuple(m(np.ones((2, 4), np.float32)).shape),
        m.count_params(),
    )
    e = keras.Sequential()
    try:
        e.pop()
        say("sequential_pop_add", "empty pop", "no error")
    except Exception as ex:
        say("sequential_pop_add", "empty pop", type(ex).__name__)
    e.add(layers.Dense(2))
    say("sequential_pop_add", "deferred", e.built, len(e.weights))
    e(np.ones((1, 3), np.float32))
    say("sequential_pop_add", "deferred built", e.built, len(e.weights), e.layers[0].name)


class HookLog(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def _note(self, hook, arg=None, logs=None):
        keys = sorted(logs) if logs else []
        self.seen.append(f"{hook}({'' if arg is None else arg}){keys if keys else ''}")

    def on_train_begin(self, logs=None):
        self._note("train_begin", logs=logs)

    def on_train_end(self, logs=None):
        self._note("train_end", logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._note("epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._note("epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._note("train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._note("train_batch_end", batch, logs)

    def on_test_begin(self, logs=None):
        self._note("test_begin", logs=logs)

    def on_test_end(self, logs=None):
        self._note("test_end", logs=logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._note("test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._note("test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._note("predict_begin", logs=logs)

    def on_predict_end(self, logs=None):
        self._note("predict_end", logs=logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._note("predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._note("predict_batch_end", batch, logs)


@case
def callback_order():
    keras.backend.clear_session()
    m = small_mlp()
    m.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    x, y = tiny_regression(n=4)
    log = HookLog()
    m.fit(x, y, batch_size=2, epochs=2, validation_data=(x[:2], y[:2]), callbacks=[log], verbose=0)
    for line in log.seen:
        say("callback_order", "fit", line)
    say("callback_order", "model set", log.model is m, "params", sorted((log.params or {}).items()))
    log.seen.clear()
    m.predict(x, batch_size=2, callbacks=[log], verbose=0)
    say("callback_order", "predict", log.seen)


@case
def builtin_callbacks():
    keras.backend.clear_session()
    m = small_mlp()
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    x, y = tiny_regression()
    es = keras.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=1e9)
    h = m.fit(x, y, epochs=5, verbose=0, callbacks=[es], shuffle=False)
    say("builtin_callbacks", "early stop epochs", len(h.history["loss"]), es.stopped_epoch)
    sched = keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.01 * (epoch + 1))
    h = m.fit(x, y, epochs=2, verbose=0, callbacks=[sched], shuffle=False)
    say(
        "builtin_callbacks",
        "scheduler keys",
        sorted(h.history),
        r6(h.history.get("learning_rate", [])),
    )
    say("builtin_callbacks", "history is model.history", h is m.history)


@case
def dtypes_and_policy():
    keras.backend.clear_session()
    say(
        "dtypes_and_policy",
        keras.backend.floatx(),
        keras.backend.epsilon(),
        keras.backend.image_data_format(),
    )
    d = layers.Dense(2, dtype="float64")
    y = d(np.ones((1, 3)))
    say(
        "dtypes_and_policy",
        dt(d.dtype),
        dt(d.kernel.dtype),
        dt(y.dtype),
        d.dtype_policy.name if hasattr(d, "dtype_policy") else "<none>",
        d.compute_dtype,
        d.variable_dtype,
    )
    e = layers.Dense(2)
    y = e(np.ones((1, 3), np.float64))
    say("dtypes_and_policy", "f64 into f32 layer", dt(y.dtype))


@case
def functional_multi_io():
    keras.backend.clear_session()
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    h = layers.Concatenate(name="cat")([a, b])
    o1 = layers.Dense(1, name="reg")(h)
    o2 = layers.Dense(2, activation="softmax", name="cls")(h)
    m = keras.Model({"a": a, "b": b}, {"reg": o1, "cls": o2})
    weights_from(np.random.default_rng(8), m)
    m.compile(
        "sgd",
        loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
        metrics={"cls": "accuracy"},
    )
    rng = np.random.default_rng(9)
    xa, xb = rng.normal(size=(6, 3)).astype(np.float32), rng.normal(size=(6, 2)).astype(np.float32)
    yr, yc = rng.normal(size=(6, 1)).astype(np.float32), (np.arange(6) % 2).astype(np.int32)
    h = m.fit(
        {"a": xa, "b": xb}, {"reg": yr, "cls": yc}, epochs=1, batch_size=3, verbose=0, shuffle=False
    )
    say("functional_multi_io", "history", {k: r6(v) for k, v in sorted(h.history.items())})
    p = m.predict({"a": xa, "b": xb}, verbose=0)
    say(
        "functional_multi_io",
        "predict",
        type(p).__name__,
        sorted((k, v.shape) for k, v in p.items()) if isinstance(p, dict) else [v.shape for v in p],
    )
    say("functional_multi_io", "layers", [item.name for item in m.layers])
    say("functional_multi_io", "metrics_names", m.metrics_names)


for fn in CASES:
    keras.backend.clear_session()
    try:
        fn()
    except Exception as e:  # one failing case must not hide the others
        say(fn.__name__, "RAISED", type(e).__name__, str(e).replace("\n", " ")[:80])
