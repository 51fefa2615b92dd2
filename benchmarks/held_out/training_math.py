"""Held-out: the numerics of training, in small independent cases.

Optimizers (every tf.keras.optimizers class a training loop reaches for, with momentum,
nesterov, centered, amsgrad, weight decay, clipping by value / norm / global norm, an
exponential moving average, a None gradient, IndexedSlices gradients from tf.gather, and
learning-rate schedules) take 3-5 steps through apply_gradients on variables set from numpy
with fixed gradients, and print the variables after every step and the iteration count at
the end. The schedules are also evaluated alone at a few steps. Losses (every class and
function, with each reduction, sample weights per sample and per element, probabilities of
exactly 0 and 1, label smoothing, from_logits, axis) print their values, and a few print
their gradients with respect to the predictions. Stateful metrics print result() after each
of 2-3 update_state calls, then after reset_state and one more update.

Each case runs eagerly and with its step, loss or update inside tf.function (tracer: once
per backend, C and the numpy interpreter) and prints lines `case [mode] text`, where text
is a label and values with 6 significant digits, or `ERR TypeName: message`, so the outputs
of the two engines can be compared line by line. An optional second argument keeps only the
cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""
keras = tf.keras
opts = keras.optimizers
sched = keras.optimizers.schedules
losses = keras.losses
metrics = keras.metrics
CASES = []


def case(name):
    """Registers `body(wrap, emit)`: wrap turns a function into the mode's (identity when
    eager); emit prints one line of results."""

    def register(fn):
        CASES.append((name, fn))
        return fn

    return register


def fmt(v):
    """A tensor, variable, array or number as `dtype shape [values]`, 6 significant digits."""
    if isinstance(v, (tuple, list)):
        return "(" + " ; ".join(fmt(x) for x in v) + ")"
    if v is None:
        return "None"
    a = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
    a = np.asarray(a)
    name = getattr(getattr(v, "dtype", None), "name", None) or a.dtype.name
    if a.dtype.kind in "fc":
        items = ["%.6g" % x for x in a.ravel()]
    else:
        items = [str(x) for x in a.ravel()]
    return f"{name} {tuple(a.shape)} [{' '.join(items)}]"


def vals(v):
    """Values only, 6 significant digits (for variables, whose dtype is always float32)."""
    a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    return "[" + " ".join("%.6g" % x for x in a.ravel()) + "]"


def run_case(name, body):
    for mode, wrap in MODES:
        lines = []
        try:
            body(wrap or (lambda f: f), lines.append)
        except Exception as e:  # report it and go on
            lines.append(failure(e))
        for line in lines:
            print(f"{name} [{mode}] {line}", flush=True)


# ================================================================ optimizers
RNG = np.random.default_rng(20240611)
W0 = RNG.normal(0.0, 1.0, (2, 3)).astype(np.float32)
B0 = RNG.normal(0.0, 1.0, (3,)).astype(np.float32)
# a different gradient per step so that momentum and accumulators show
GRADS = [
    (
        RNG.normal(0.0, 1.0, (2, 3)).astype(np.float32),
        RNG.normal(0.0, 0.5, (3,)).astype(np.float32),
    )
    for _ in range(5)
]
GRADS[1][0][0, 1] = 0.0  # a zero entry
GRADS[2][1][2] = 3.0  # a large entry for clipping


def opt_case(name, make, steps=3, none_grad=False, lr_line=False, after=None):
    """Runs `steps` of make().apply_gradients on (W, b) with GRADS, printing both after each."""

    @case(name)
    def body(wrap, emit):
        w = tf.Variable(W0, name="w")
        b = tf.Variable(B0, name="b")
        opt = make()

        if none_grad:

            def step(gw, gb):
                opt.apply_gradients(zip([gw, None], [w, b]))
        else:

            def step(gw, gb):
                opt.apply_gradients(zip([gw, gb], [w, b]))

        f = wrap(step)
        for k in range(steps):
            f(tf.constant(GRADS[k][0]), tf.constant(GRADS[k][1]))
            emit(f"step{k + 1} w {vals(w)} b {vals(b)}")
        emit(f"iterations {int(opt.iterations.numpy())}")
        if lr_line:
            emit(f"learning_rate {'%.6g' % float(np.asarray(opt.learning_rate))}")
        if after is not None:
            after(opt, [w, b], emit)

    return body


opt_case("sgd_plain", lambda: opts.SGD(learning_rate=0.1))
opt_case("sgd_momentum", lambda: opts.SGD(learning_rate=0.1, momentum=0.9), steps=4)
opt_case("sgd_nesterov", lambda: opts.SGD(learning_rate=0.1, momentum=0.9, nesterov=True), steps=4)
opt_case("rmsprop_default", lambda: opts.RMSprop(), steps=4)
opt_case("rmsprop_centered", lambda: opts.RMSprop(learning_rate=0.01, centered=True), steps=4)
opt_case("rmsprop_momentum", lambda: opts.RMSprop(learning_rate=0.01, momentum=0.5), steps=4)
opt_case(
    "rmsprop_centered_momentum_rho",
    lambda: opts.RMSprop(learning_rate=0.02, rho=0.8, momentum=0.3, centered=True, epsilon=1e-3),
    steps=4,
)
opt_case("adam_default", lambda: opts.Adam(), steps=4)
opt_case("adam_lr_betas", lambda: opts.Adam(0.05, beta_1=0.5, beta_2=0.9, epsilon=0.1), steps=4)
opt_case("adam_amsgrad", lambda: opts.Adam(learning_rate=0.05, amsgrad=True), steps=5)
opt_case("adamw_default", lambda: opts.AdamW(learning_rate=0.05), steps=4)
opt_case("adamw_decay", lambda: opts.AdamW(learning_rate=0.05, weight_decay=0.2), steps=4)
opt_case("adamw_amsgrad", lambda: opts.AdamW(0.05, weight_decay=0.1, amsgrad=True), steps=4)
opt_case("adagrad_default", lambda: opts.Adagrad(), steps=4)
opt_case("adagrad_init_acc", lambda: opts.Adagrad(0.3, initial_accumulator_value=0.5), steps=4)
opt_case("adadelta_default", lambda: opts.Adadelta(), steps=4)
opt_case("adadelta_lr1", lambda: opts.Adadelta(learning_rate=1.0, rho=0.9, epsilon=1e-6), steps=4)
opt_case("adamax_default", lambda: opts.Adamax(), steps=4)
opt_case("adamax_lr", lambda: opts.Adamax(0.1, beta_1=0.8, beta_2=0.95), steps=4)
opt_case("nadam_default", lambda: opts.Nadam(), steps=4)
opt_case("nadam_lr", lambda: opts.Nadam(0.05, beta_1=0.8, beta_2=0.9), steps=4)
opt_case("ftrl_default", lambda: opts.Ftrl(learning_rate=0.1), steps=4)
opt_case(
    "ftrl_l1_l2_power",
    lambda: opts.Ftrl(
        learning_rate=0.2,
        learning_rate_power=-0.3,
        initial_accumulator_value=0.2,
        l1_regularization_strength=0.05,
        l2_regularization_strength=0.1,
        l2_shrinkage_regularization_strength=0.02,
        beta=0.5,
    ),
    steps=4,
)
opt_case("lion_default", lambda: opts.Lion(learning_rate=0.01), steps=4)
opt_case("lion_betas", lambda: opts.Lion(learning_rate=0.05, beta_1=0.5, beta_2=0.8), steps=4)
# weight decay, clipping
opt_case("sgd_weight_decay", lambda: opts.SGD(0.1, momentum=0.5, weight_decay=0.1))
opt_case("adam_weight_decay", lambda: opts.Adam(0.05, weight_decay=0.05))
opt_case("rmsprop_weight_decay", lambda: opts.RMSprop(0.01, weight_decay=0.3))
opt_case("sgd_clipnorm", lambda: opts.SGD(0.1, clipnorm=1.0))
opt_case("adam_clipnorm", lambda: opts.Adam(0.05, clipnorm=0.5))
opt_case("sgd_clipvalue", lambda: opts.SGD(0.1, clipvalue=0.4))
opt_case("rmsprop_clipvalue", lambda: opts.RMSprop(0.01, clipvalue=0.2))
opt_case("sgd_global_clipnorm", lambda: opts.SGD(0.1, global_clipnorm=1.0))
opt_case("adam_global_clipnorm", lambda: opts.Adam(0.05, global_clipnorm=0.7))
opt_case("sgd_momentum_nesterov_clip_wd", lambda: opts.SGD(0.1, 0.9, True, 0.01, clipnorm=0.8))


def finalize(opt, variables, emit):
    opt.finalize_variable_values(variables)
    emit(f"finalized w {vals(variables[0])} b {vals(variables[1])}")


opt_case(
    "sgd_use_ema_finalize",
    lambda: opts.SGD(0.1, use_ema=True, ema_momentum=0.5),
    steps=3,
    after=finalize,
)
opt_case(
    "adam_use_ema_overwrite2",
    lambda: opts.Adam(0.05, use_ema=True, ema_momentum=0.8, ema_overwrite_frequency=2),
    steps=5,
)
# a None gradient for the bias
opt_case("sgd_none_grad", lambda: opts.SGD(0.1, momentum=0.9), none_grad=True)
opt_case("adam_none_grad", lambda: opts.Adam(0.05), none_grad=True)
# schedules through the optimizer
opt_case(
    "sgd_lr_exponential_staircase",
    lambda: opts.SGD(sched.ExponentialDecay(0.5, decay_steps=2, decay_rate=0.5, staircase=True)),
    steps=5,
    lr_line=True,
)
opt_case(
    "adam_lr_piecewise",
    lambda: opts.Adam(sched.PiecewiseConstantDecay([1, 3], [0.1, 0.05, 0.01])),
    steps=5,
    lr_line=True,
)
opt_case(
    "sgd_lr_polynomial",
    lambda: opts.SGD(sched.PolynomialDecay(0.4, decay_steps=4, end_learning_rate=0.1, power=2.0)),
    steps=5,
    lr_line=True,
)
opt_case(
    "sgd_lr_cosine_warmup",
    lambda: opts.SGD(
        sched.CosineDecay(0.0, decay_steps=4, alpha=0.1, warmup_target=0.5, warmup_steps=2)
    ),
    steps=5,
    lr_line=True,
)
opt_case(
    "rmsprop_lr_inverse_time",
    lambda: opts.RMSprop(sched.InverseTimeDecay(0.05, decay_steps=1, decay_rate=0.5)),
    steps=4,
    lr_line=True,
)
opt_case(
    "sgd_lr_cosine_restarts",
    lambda: opts.SGD(sched.CosineDecayRestarts(0.5, first_decay_steps=2, t_mul=2.0, m_mul=0.5)),
    steps=5,
    lr_line=True,
)


@case("sgd_set_learning_rate_midway")
def _sgd_set_lr(wrap, emit):
    w = tf.Variable(W0)
    opt = opts.SGD(learning_rate=0.1, momentum=0.5)
    f = wrap(lambda g: opt.apply_gradients([(g, w)]))
    f(tf.constant(GRADS[0][0]))
    emit(f"step1 {vals(w)} lr {'%.6g' % float(np.asarray(opt.learning_rate))}")
    opt.learning_rate = 0.01
    f(tf.constant(GRADS[1][0]))
    emit(f"step2 {vals(w)} lr {'%.6g' % float(np.asarray(opt.learning_rate))}")
    emit(f"iterations {int(opt.iterations.numpy())}")


@case("adam_float64_vars")
def _adam_f64(wrap, emit):
    w = tf.Variable(W0.astype(np.float64))
    opt = opts.Adam(0.1)
    f = wrap(lambda g: opt.apply_gradients([(g, w)]))
    for k in range(3):
        f(tf.constant(GRADS[k][0].astype(np.float64)))
        emit(f"step{k + 1} {fmt(w)}")


@case("two_optimizers_iterations")
def _two_opts(wrap, emit):
    w = tf.Variable(W0)
    b = tf.Variable(B0)
    o1, o2 = opts.SGD(0.1), opts.Adam(0.1)

    def step(gw, gb):
        o1.apply_gradients([(gw, w)])
        o2.apply_gradients([(gb, b)])
        o2.apply_gradients([(gb, b)])

    f = wrap(step)
    for k in range(2):
        f(tf.constant(GRADS[k][0]), tf.constant(GRADS[k][1]))
        emit(f"step{k + 1} w {vals(w)} b {vals(b)}")
    emit(f"iterations {fmt(o1.iterations)} {fmt(o2.iterations)}")


# sparse updates: the gradient of tf.gather is IndexedSlices
EMB0 = RNG.normal(0.0, 1.0, (5, 3)).astype(np.float32)
EMB_IDS = [np.array([0, 2, 2], np.int32), np.array([4, 0], np.int32), np.array([2], np.int32)]
EMB_W = RNG.normal(0.0, 1.0, (3, 3)).astype(np.float32)


def sparse_case(name, make, steps=3):
    @case(name)
    def body(wrap, emit):
        emb = tf.Variable(EMB0, name="emb")
        opt = make()

        def step(ids, weights):
            with tf.GradientTape() as tape:
                rows = tf.gather(emb, ids)
                loss = tf.reduce_sum(rows * weights[: tf.shape(ids)[0]])
            g = tape.gradient(loss, emb)
            opt.apply_gradients([(g, emb)])
            return type(g).__name__

        f = wrap(step)
        for k in range(steps):
            f(tf.constant(EMB_IDS[k]), tf.constant(EMB_W))
            emit(f"step{k + 1} {vals(emb)}")

    return body


@case("gather_gradient_is_indexed_slices")
def _gather_grad(wrap, emit):
    emb = tf.Variable(EMB0)

    def grad(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(emb, ids) * 2.0)
        g = tape.gradient(loss, emb)
        return g.values, g.indices, tf.convert_to_tensor(g)

    emit(fmt(wrap(grad)(tf.constant(EMB_IDS[0]))))


sparse_case("sgd_sparse", lambda: opts.SGD(0.1))
sparse_case("sgd_momentum_sparse", lambda: opts.SGD(0.1, momentum=0.9))
sparse_case("adam_sparse", lambda: opts.Adam(0.1))
sparse_case("adagrad_sparse", lambda: opts.Adagrad(0.3))
sparse_case("rmsprop_sparse", lambda: opts.RMSprop(0.05))
sparse_case("adamw_sparse", lambda: opts.AdamW(0.1, weight_decay=0.1))
sparse_case("sgd_sparse_clipnorm", lambda: opts.SGD(0.1, clipnorm=0.5))
sparse_case("sgd_sparse_global_clipnorm", lambda: opts.SGD(0.1, global_clipnorm=0.5))
sparse_case("sgd_sparse_clipvalue", lambda: opts.SGD(0.1, clipvalue=0.5))


@case("clip_by_norm_indexed_slices")
def _clip_slices(wrap, emit):
    emb = tf.Variable(EMB0)

    def clipped(ids):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(emb, ids) * 2.0)
        g = tape.gradient(loss, emb)
        c = tf.clip_by_norm(g, 1.0)
        return tf.convert_to_tensor(c), tf.linalg.global_norm([g])

    emit(fmt(wrap(clipped)(tf.constant(EMB_IDS[0]))))


@case("clipping_zero_gradient")
def _clip_zero(wrap, emit):
    w = tf.Variable(W0)
    b = tf.Variable(B0)
    o1, o2 = opts.SGD(0.1, clipnorm=1.0), opts.Adam(0.1, global_clipnorm=1.0)

    def step(gw, gb):
        o1.apply_gradients([(gw, w)])
        o2.apply_gradients([(gb, b)])

    wrap(step)(tf.zeros((2, 3)), tf.zeros((3,)))
    emit(f"w {vals(w)} b {vals(b)}")


# ================================================================ schedules alone
SCHED_STEPS = np.array([0, 1, 2, 3, 4, 5, 7, 10, 20], np.int64)


def sched_case(name, make):
    @case(name)
    def body(wrap, emit):
        s = make()
        f = wrap(lambda step: s(step))
        out = [float(np.asarray(f(tf.constant(k)))) for k in SCHED_STEPS]
        emit("[" + " ".join("%.6g" % x for x in out) + "]")

    return body


sched_case("sched_exponential", lambda: sched.ExponentialDecay(0.1, 3, 0.5))
sched_case("sched_exponential_staircase", lambda: sched.ExponentialDecay(0.1, 3, 0.5, True))
sched_case("sched_piecewise", lambda: sched.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1]))
sched_case("sched_polynomial", lambda: sched.PolynomialDecay(1.0, 5, 0.1, power=0.5))
sched_case("sched_polynomial_cycle", lambda: sched.PolynomialDecay(1.0, 4, 0.2, 1.0, cycle=True))
sched_case("sched_cosine_alpha", lambda: sched.CosineDecay(1.0, 10, alpha=0.2))
sched_case(
    "sched_cosine_warmup",
    lambda: sched.CosineDecay(0.1, 5, alpha=0.0, warmup_target=1.0, warmup_steps=3),
)
sched_case("sched_inverse_time", lambda: sched.InverseTimeDecay(1.0, 2, 0.5))
sched_case("sched_inverse_time_staircase", lambda: sched.InverseTimeDecay(1.0, 2, 0.5, True))
sched_case("sched_cosine_restarts", lambda: sched.CosineDecayRestarts(1.0, 2, 2.0, 0.5, 0.1))


@case("sched_get_config")
def _sched_config(wrap, emit):
    s = sched.ExponentialDecay(0.1, 3, 0.5, staircase=True, name="ed")
    emit(str(sorted(s.get_config().items())))


# ================================================================ losses
LR = np.random.default_rng(7)
REG_T = LR.uniform(0.5, 2.0, (4, 3)).astype(np.float32)
REG_P = LR.uniform(0.2, 2.5, (4, 3)).astype(np.float32)
REG_T0 = REG_T.copy()
REG_T0[0, 0] = 0.0  # MAPE's division by zero
BIN_T = (LR.uniform(size=(4, 3)) > 0.5).astype(np.float32)
BIN_P = LR.uniform(0.05, 0.95, (4, 3)).astype(np.float32)
BIN_L = LR.normal(0.0, 2.0, (4, 3)).astype(np.float32)
BIN_PX = np.array(
    [[0.0, 1.0, 0.0], [1.0, 0.0, 0.5], [1e-9, 1 - 1e-7, 0.3], [0.0, 1.0, 1.0]], np.float32
)
BIN_TX = np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], np.float32)
CAT_IDS = np.array([0, 2, 1, 2], np.int32)
CAT_T = np.eye(3, dtype=np.float32)[CAT_IDS]
CAT_L = LR.normal(0.0, 2.0, (4, 3)).astype(np.float32)
CAT_P = (np.exp(CAT_L) / np.exp(CAT_L).sum(-1, keepdims=True)).astype(np.float32)
CAT_PX = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 1.0, 0.0], [0.2, 0.2, 0.6]], np.float32)
CAT_PU = (CAT_P * np.array([[2.0], [0.5], [1.0], [3.0]])).astype(
    np.float32
)  # rows not summing to 1
HINGE_T = np.array([[1, -1, 1], [-1, -1, 1], [0, 1, 1], [1, 0, 0]], np.float32)
SW_S = np.array([1.0, 0.0, 2.0, 0.5], np.float32)
SW_E = LR.uniform(0.0, 2.0, (4, 3)).astype(np.float32)
# per-element weights: a (2, 2) weight for each timestep of (2, 2, 3) sequences
SEQ_T, SEQ_P, SEQ_BT, SEQ_BP = (a.reshape(2, 2, 3) for a in (REG_T, REG_P, BIN_T, BIN_P))
SW_SEQ = np.array([[1.0, 0.0], [0.5, 2.0]], np.float32)


def loss_case(name, make, yt, yp, sw=None, grad=False):
    """The value of make()(y_true, y_pred[, sample_weight]); with grad, also d/dy_pred."""

    @case(name)
    def body(wrap, emit):
        fn = make()

        def compute(a, b, *w):
            kw = {"sample_weight": w[0]} if w else {}
            if not grad:
                return fn(a, b, **kw)
            with tf.GradientTape() as tape:
                tape.watch(b)
                value = fn(a, b, **kw)
            return value, tape.gradient(value, b)

        args = [tf.constant(yt), tf.constant(yp)] + ([] if sw is None else [tf.constant(sw)])
        emit(fmt(wrap(compute)(*args)))

    return body


# regression
loss_case("mse_default", lambda: losses.MeanSquaredError(), REG_T, REG_P)
loss_case("mse_sum", lambda: losses.MeanSquaredError(reduction="sum"), REG_T, REG_P)
loss_case("mse_none", lambda: losses.MeanSquaredError(reduction="none"), REG_T, REG_P)
loss_case("mse_reduction_None", lambda: losses.MeanSquaredError(reduction=None), REG_T, REG_P)
loss_case(
    "mse_sum_over_batch_sw",
    lambda: losses.MeanSquaredError(reduction="sum_over_batch_size"),
    REG_T,
    REG_P,
    SW_S,
)
loss_case("mse_sw_sample", lambda: losses.MeanSquaredError(), REG_T, REG_P, SW_S)
loss_case("mse_sw_element", lambda: losses.MeanSquaredError(), SEQ_T, SEQ_P, SW_SEQ)
loss_case(
    "mse_sw_element_none", lambda: losses.MeanSquaredError(reduction="none"), SEQ_T, SEQ_P, SW_SEQ
)
loss_case("mse_sw_shape_mismatch", lambda: losses.MeanSquaredError(), REG_T, REG_P, SW_E)
loss_case("mse_float64", lambda: losses.MeanSquaredError(), REG_T * 1.0, REG_P.astype(np.float64))
loss_case("mse_sw_sum", lambda: losses.MeanSquaredError(reduction="sum"), REG_T, REG_P, SW_S)
loss_case("mse_sw_none", lambda: losses.MeanSquaredError(reduction="none"), REG_T, REG_P, SW_S)
loss_case(
    "mse_sw_mean_with_sample_weight",
    lambda: losses.MeanSquaredError(reduction="mean_with_sample_weight"),
    REG_T,
    REG_P,
    SW_S,
)
loss_case("mse_sw_scalar", lambda: losses.MeanSquaredError(), REG_T, REG_P, np.float32(0.5))
loss_case("mse_rank1", lambda: losses.MeanSquaredError(), REG_T[:, 0], REG_P[:, 0])
loss_case("mse_int_labels", lambda: losses.MeanSquaredError(), CAT_IDS, REG_P[:, 0])
loss_case("mse_grad", lambda: losses.MeanSquaredError(), REG_T, REG_P, SW_S, grad=True)
loss_case("mse_fn", lambda: losses.mse, REG_T, REG_P)
loss_case("mae_default", lambda: losses.MeanAbsoluteError(), REG_T, REG_P)
loss_case("mae_sum_sw", lambda: losses.MAE(reduction="sum"), SEQ_T, SEQ_P, SW_SEQ)
loss_case("mae_grad_tie", lambda: losses.MeanAbsoluteError(), REG_T, REG_T, grad=True)
loss_case("mae_fn", lambda: losses.mae, REG_T, REG_P)
loss_case("mape_default", lambda: losses.MeanAbsolutePercentageError(), REG_T, REG_P)
loss_case("mape_zero_true", lambda: losses.MeanAbsolutePercentageError(), REG_T0, REG_P)
loss_case("mape_fn_none", lambda: losses.mape, REG_T0, REG_P)
loss_case("msle_default", lambda: losses.MeanSquaredLogarithmicError(), REG_T, REG_P)
loss_case("msle_negative_pred", lambda: losses.msle, REG_T, REG_P - 1.5)
loss_case("huber_default", lambda: losses.Huber(), REG_T, REG_P)
loss_case("huber_delta", lambda: losses.Huber(delta=0.3), REG_T, REG_P)
loss_case("huber_delta_grad", lambda: losses.Huber(delta=0.3), REG_T, REG_P, grad=True)
loss_case("huber_fn", lambda: losses.huber, REG_T, REG_P)
loss_case("logcosh_default", lambda: losses.LogCosh(), REG_T, REG_P)
loss_case("logcosh_large", lambda: losses.LogCosh(), REG_T * 0.0, REG_P * 100.0)
loss_case("logcosh_grad", lambda: losses.LogCosh(), REG_T, REG_P, grad=True)
loss_case("poisson_default", lambda: losses.Poisson(), REG_T, REG_P)
loss_case("poisson_zero_pred", lambda: losses.poisson, REG_T, REG_P * 0.0)
loss_case("cosine_default", lambda: losses.CosineSimilarity(), REG_T, REG_P - 1.0)
loss_case("cosine_axis0", lambda: losses.CosineSimilarity(axis=0), REG_T, REG_P - 1.0)
loss_case("cosine_zero_vector", lambda: losses.cosine_similarity, REG_T * 0.0, REG_P)
loss_case("cosine_grad", lambda: losses.CosineSimilarity(), REG_T, REG_P - 1.0, grad=True)
# binary
loss_case("bce_probs", lambda: losses.BinaryCrossentropy(), BIN_T, BIN_P)
loss_case("bce_logits", lambda: losses.BinaryCrossentropy(from_logits=True), BIN_T, BIN_L)
loss_case("bce_smoothing", lambda: losses.BinaryCrossentropy(label_smoothing=0.2), BIN_T, BIN_P)
loss_case(
    "bce_logits_smoothing",
    lambda: losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
    BIN_T,
    BIN_L,
)
loss_case("bce_axis0", lambda: losses.BinaryCrossentropy(axis=0, reduction="none"), BIN_T, BIN_P)
loss_case("bce_extreme_probs", lambda: losses.BinaryCrossentropy(reduction="none"), BIN_TX, BIN_PX)
loss_case("bce_extreme_probs_grad", lambda: losses.BinaryCrossentropy(), BIN_TX, BIN_PX, grad=True)
loss_case(
    "bce_extreme_logits",
    lambda: losses.BinaryCrossentropy(from_logits=True, reduction="none"),
    BIN_TX,
    (BIN_PX - 0.5) * 400.0,
)
loss_case(
    "bce_logits_grad",
    lambda: losses.BinaryCrossentropy(from_logits=True),
    BIN_T,
    BIN_L,
    SW_S,
    grad=True,
)
loss_case("bce_sw_element", lambda: losses.BinaryCrossentropy(), SEQ_BT, SEQ_BP, SW_SEQ)
loss_case("bce_rank1_vs_col", lambda: losses.BinaryCrossentropy(), BIN_T[:, 0], BIN_P[:, :1])
loss_case(
    "bce_fn_logits", lambda: lambda a, b: losses.binary_crossentropy(a, b, True), BIN_T, BIN_L
)
loss_case(
    "bce_fn_smoothing",
    lambda: lambda a, b: losses.binary_crossentropy(a, b, label_smoothing=0.3),
    BIN_T,
    BIN_P,
)
loss_case("bfocal_default", lambda: losses.BinaryFocalCrossentropy(), BIN_T, BIN_P)
loss_case(
    "bfocal_balanced_gamma",
    lambda: losses.BinaryFocalCrossentropy(apply_class_balancing=True, alpha=0.3, gamma=1.5),
    BIN_T,
    BIN_P,
)
loss_case(
    "bfocal_logits_smoothing",
    lambda: losses.BinaryFocalCrossentropy(from_logits=True, label_smoothing=0.1, gamma=3.0),
    BIN_T,
    BIN_L,
)
loss_case("hinge_default", lambda: losses.Hinge(), HINGE_T, BIN_L)
loss_case("hinge_01_labels", lambda: losses.Hinge(reduction="none"), BIN_T, BIN_L)
loss_case("squared_hinge", lambda: losses.SquaredHinge(), HINGE_T, BIN_L)
loss_case("squared_hinge_grad", lambda: losses.SquaredHinge(), BIN_T, BIN_L, grad=True)
loss_case("categorical_hinge", lambda: losses.CategoricalHinge(), CAT_T, CAT_L)
loss_case("categorical_hinge_fn", lambda: losses.categorical_hinge, CAT_T, CAT_P)
# categorical
loss_case("cce_probs", lambda: losses.CategoricalCrossentropy(), CAT_T, CAT_P)
loss_case("cce_logits", lambda: losses.CategoricalCrossentropy(from_logits=True), CAT_T, CAT_L)
loss_case(
    "cce_smoothing", lambda: losses.CategoricalCrossentropy(label_smoothing=0.3), CAT_T, CAT_P
)
loss_case(
    "cce_logits_smoothing",
    lambda: losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1),
    CAT_T,
    CAT_L,
)
loss_case(
    "cce_extreme_probs", lambda: losses.CategoricalCrossentropy(reduction="none"), CAT_T, CAT_PX
)
loss_case("cce_unnormalized_probs", lambda: losses.categorical_crossentropy, CAT_T, CAT_PU)
loss_case(
    "cce_axis0", lambda: losses.CategoricalCrossentropy(axis=0, reduction="none"), CAT_T, CAT_P
)
loss_case("cce_soft_labels", lambda: losses.CategoricalCrossentropy(), CAT_P[::-1].copy(), CAT_P)
loss_case("cce_sw_sum", lambda: losses.CategoricalCrossentropy(reduction="sum"), CAT_T, CAT_P, SW_S)
loss_case("cce_probs_grad", lambda: losses.CategoricalCrossentropy(), CAT_T, CAT_P, grad=True)
loss_case(
    "cce_logits_grad",
    lambda: losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.2),
    CAT_T,
    CAT_L,
    grad=True,
)
loss_case("scce_probs", lambda: losses.SparseCategoricalCrossentropy(), CAT_IDS, CAT_P)
loss_case(
    "scce_logits", lambda: losses.SparseCategoricalCrossentropy(from_logits=True), CAT_IDS, CAT_L
)
loss_case(
    "scce_col_labels",
    lambda: losses.SparseCategoricalCrossentropy(from_logits=True),
    CAT_IDS[:, None].copy(),
    CAT_L,
)
loss_case(
    "scce_float_labels",
    lambda: losses.SparseCategoricalCrossentropy(from_logits=True),
    CAT_IDS.astype(np.float32),
    CAT_L,
)
loss_case(
    "scce_ignore_class",
    lambda: losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=2),
    CAT_IDS,
    CAT_L,
)
loss_case(
    "scce_ignore_class_none",
    lambda: losses.SparseCategoricalCrossentropy(ignore_class=2, reduction="none"),
    CAT_IDS,
    CAT_P,
)
loss_case(
    "scce_extreme_probs",
    lambda: losses.SparseCategoricalCrossentropy(reduction="none"),
    CAT_IDS,
    CAT_PX,
)
loss_case(
    "scce_sequence",
    lambda: losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none"),
    CAT_IDS.reshape(2, 2),
    CAT_L.reshape(2, 2, 3),
)
loss_case(
    "scce_sequence_sw",
    lambda: losses.SparseCategoricalCrossentropy(from_logits=True),
    CAT_IDS.reshape(2, 2),
    CAT_L.reshape(2, 2, 3),
    np.array([[1.0, 0.0], [1.0, 1.0]], np.float32),
)
loss_case(
    "scce_logits_grad",
    lambda: losses.SparseCategoricalCrossentropy(from_logits=True),
    CAT_IDS,
    CAT_L,
    SW_S,
    grad=True,
)
loss_case(
    "scce_fn_logits",
    lambda: lambda a, b: losses.sparse_categorical_crossentropy(a, b, from_logits=True),
    CAT_IDS,
    CAT_L,
)
# probabilities from an activation of saturated logits: the loss of the probabilities
SAT_L = np.array([[30.0, -30.0, 2.0], [-40.0, 40.0, 0.0], [17.0, -17.0, 0.5], [0.0, 25.0, -25.0]])
SAT_L = SAT_L.astype(np.float32)


def through(activation, loss):
    return lambda: lambda a, b: loss(a, activation(b))


loss_case(
    "bce_after_keras_sigmoid",
    through(keras.activations.sigmoid, losses.BinaryCrossentropy(reduction="none")),
    BIN_TX,
    SAT_L,
)
loss_case(
    "bce_after_tf_sigmoid",
    through(tf.sigmoid, losses.BinaryCrossentropy(reduction="none")),
    BIN_TX,
    SAT_L,
)
loss_case(
    "cce_after_keras_softmax",
    through(keras.activations.softmax, losses.CategoricalCrossentropy(reduction="none")),
    CAT_T,
    SAT_L,
)
loss_case(
    "cce_after_tf_softmax",
    through(tf.nn.softmax, losses.CategoricalCrossentropy(reduction="none")),
    CAT_T,
    SAT_L,
)
loss_case(
    "scce_after_keras_softmax_grad",
    through(keras.activations.softmax, losses.SparseCategoricalCrossentropy()),
    CAT_IDS,
    SAT_L,
    grad=True,
)


@case("bce_dense_sigmoid_layer")
def _dense_sigmoid(wrap, emit):
    layer = keras.layers.Dense(1, activation="sigmoid")
    layer.build((None, 3))
    layer.set_weights([np.array([[20.0], [-15.0], [5.0]], np.float32), np.zeros(1, np.float32)])
    loss = losses.BinaryCrossentropy()

    def compute(x, y):
        with tf.GradientTape() as tape:
            value = loss(y, layer(x))
        return value, tape.gradient(value, layer.kernel)

    x = tf.constant(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.1, 1.0]], np.float32))
    emit(fmt(wrap(compute)(x, tf.constant([[0.0], [1.0], [1.0]]))))


loss_case("kld_default", lambda: losses.KLDivergence(), CAT_T, CAT_P)
loss_case("kld_soft", lambda: losses.KLDivergence(reduction="none"), CAT_P[::-1].copy(), CAT_PX)
loss_case("kld_fn", lambda: losses.kld, CAT_P, CAT_PU)
loss_case("kld_grad", lambda: losses.KLDivergence(), CAT_P[::-1].copy(), CAT_P, grad=True)
loss_case("tversky_default", lambda: losses.Tversky(), BIN_T, BIN_P)
loss_case("tversky_alpha_beta", lambda: losses.Tversky(alpha=0.7, beta=0.3), BIN_T, BIN_P)
loss_case("dice_default", lambda: losses.Dice(), BIN_T, BIN_P)
loss_case("dice_axis", lambda: losses.Dice(reduction="none", axis=1), BIN_T, BIN_P)


@case("loss_get_by_name")
def _loss_get(wrap, emit):
    out = []
    for key in ["mse", "mean_absolute_error", "binary_crossentropy", "huber", "kld"]:
        fn = losses.get(key)
        out.append(f"{key}={fmt(wrap(lambda a, b, fn=fn: fn(a, b))(REG_T / 3, REG_P / 3))}")
    emit(" | ".join(out))


@case("loss_config")
def _loss_config(wrap, emit):
    cfg = losses.Huber(delta=0.5, reduction="sum", name="hub").get_config()
    emit(str(sorted((k, v) for k, v in cfg.items() if k in ("delta", "reduction", "name"))))


# ================================================================ metrics
MR = np.random.default_rng(11)
M_BIN_T = [(MR.uniform(size=(6,)) > 0.5).astype(np.float32) for _ in range(3)]
M_BIN_P = [MR.uniform(size=(6,)).astype(np.float32) for _ in range(3)]
M_SW = [MR.uniform(0.0, 2.0, (6,)).astype(np.float32) for _ in range(3)]
M_SW[1][2] = 0.0
M_IDS = [MR.integers(0, 4, (6,)).astype(np.int32) for _ in range(3)]
M_ONEHOT = [np.eye(4, dtype=np.float32)[i] for i in M_IDS]
M_PROBS = [MR.dirichlet(np.ones(4), 6).astype(np.float32) for _ in range(3)]
M_PROBS[0][1] = [0.25, 0.25, 0.25, 0.25]  # ties for argmax and top-k
M_REG_T = [MR.normal(size=(6, 2)).astype(np.float32) for _ in range(3)]
M_REG_P = [MR.normal(size=(6, 2)).astype(np.float32) for _ in range(3)]
M_MULTI_T = [(MR.uniform(size=(6, 4)) > 0.6).astype(np.float32) for _ in range(3)]


def metric_case(name, make, ys_true, ys_pred, sws=None, updates=3):
    """update_state (inside the mode's function) `updates` times, then reset and one more."""

    @case(name)
    def body(wrap, emit):
        m = make()
        if sws is None:
            f = wrap(lambda a, b: m.update_state(a, b))
        else:
            f = wrap(lambda a, b, w: m.update_state(a, b, sample_weight=w))

        def update(k):
            args = [tf.constant(ys_true[k])]
            if ys_pred is not None:
                args.append(tf.constant(ys_pred[k]))
            if sws is not None:
                args.append(tf.constant(sws[k]))
            f(*args)

        for k in range(updates):
            update(k)
            emit(f"update{k + 1} {fmt(m.result())}")
        m.reset_state()
        emit(f"reset {fmt(m.result())}")
        update(updates - 1)
        emit(f"after reset {fmt(m.result())}")

    return body


def value_metric_case(name, make, values, sws=None):
    """For Mean and Sum, whose update_state takes values only."""

    @case(name)
    def body(wrap, emit):
        m = make()
        if sws is None:
            f = wrap(lambda v: m.update_state(v))
        else:
            f = wrap(lambda v, w: m.update_state(v, sample_weight=w))
        for k, v in enumerate(values):
            f(*([tf.constant(v)] + ([] if sws is None else [tf.constant(sws[k])])))
            emit(f"update{k + 1} {fmt(m.result())}")
        m.reset_state()
        emit(f"reset {fmt(m.result())}")

    return body


value_metric_case("metric_mean", lambda: metrics.Mean(), M_BIN_P)
value_metric_case("metric_mean_sw", lambda: metrics.Mean(), M_BIN_P, M_SW)
value_metric_case("metric_mean_scalars", lambda: metrics.Mean(), [np.float32(2.0), np.float32(5.0)])
value_metric_case("metric_sum", lambda: metrics.Sum(), M_REG_T)
value_metric_case("metric_sum_sw", lambda: metrics.Sum(), M_BIN_P, M_SW)
metric_case("metric_mse", lambda: metrics.MeanSquaredError(), M_REG_T, M_REG_P)
metric_case("metric_mse_sw", lambda: metrics.MeanSquaredError(), M_REG_T, M_REG_P, M_SW)
metric_case("metric_rmse", lambda: metrics.RootMeanSquaredError(), M_REG_T, M_REG_P)
metric_case("metric_rmse_sw", lambda: metrics.RootMeanSquaredError(), M_REG_T, M_REG_P, M_SW)
metric_case("metric_mae", lambda: metrics.MeanAbsoluteError(), M_REG_T, M_REG_P)
metric_case(
    "metric_accuracy",
    lambda: metrics.Accuracy(),
    [i % 3 for i in M_IDS],
    [np.roll(i, 1) % 3 for i in M_IDS],
)
metric_case("metric_binary_accuracy", lambda: metrics.BinaryAccuracy(), M_BIN_T, M_BIN_P)
metric_case(
    "metric_binary_accuracy_thr",
    lambda: metrics.BinaryAccuracy(threshold=0.7),
    M_BIN_T,
    M_BIN_P,
    M_SW,
)
metric_case("metric_categorical_accuracy", lambda: metrics.CategoricalAccuracy(), M_ONEHOT, M_PROBS)
metric_case(
    "metric_categorical_accuracy_sw",
    lambda: metrics.CategoricalAccuracy(),
    M_ONEHOT,
    M_PROBS,
    M_SW,
)
metric_case(
    "metric_sparse_cat_accuracy", lambda: metrics.SparseCategoricalAccuracy(), M_IDS, M_PROBS
)
metric_case(
    "metric_sparse_cat_accuracy_col",
    lambda: metrics.SparseCategoricalAccuracy(),
    [i[:, None].copy() for i in M_IDS],
    M_PROBS,
    M_SW,
)
metric_case("metric_topk_k2", lambda: metrics.TopKCategoricalAccuracy(k=2), M_ONEHOT, M_PROBS)
metric_case(
    "metric_sparse_topk_k2",
    lambda: metrics.SparseTopKCategoricalAccuracy(k=2),
    M_IDS,
    M_PROBS,
    M_SW,
)
metric_case("metric_auc_roc", lambda: metrics.AUC(), M_BIN_T, M_BIN_P)
metric_case("metric_auc_roc_5", lambda: metrics.AUC(num_thresholds=5), M_BIN_T, M_BIN_P)
metric_case("metric_auc_pr", lambda: metrics.AUC(curve="PR"), M_BIN_T, M_BIN_P)
metric_case(
    "metric_auc_pr_10_sw",
    lambda: metrics.AUC(num_thresholds=10, curve="PR"),
    M_BIN_T,
    M_BIN_P,
    M_SW,
)
metric_case(
    "metric_auc_minoring",
    lambda: metrics.AUC(num_thresholds=7, summation_method="minoring"),
    M_BIN_T,
    M_BIN_P,
)
metric_case(
    "metric_auc_multilabel",
    lambda: metrics.AUC(num_thresholds=20, multi_label=True),
    M_MULTI_T,
    M_PROBS,
)
metric_case("metric_precision", lambda: metrics.Precision(), M_BIN_T, M_BIN_P)
metric_case(
    "metric_precision_thr", lambda: metrics.Precision(thresholds=0.7), M_BIN_T, M_BIN_P, M_SW
)
metric_case(
    "metric_precision_thr_list",
    lambda: metrics.Precision(thresholds=[0.2, 0.5, 0.9]),
    M_BIN_T,
    M_BIN_P,
)
metric_case("metric_precision_top_k", lambda: metrics.Precision(top_k=2), M_MULTI_T, M_PROBS)
metric_case("metric_recall", lambda: metrics.Recall(), M_BIN_T, M_BIN_P, M_SW)
metric_case(
    "metric_recall_thr_list", lambda: metrics.Recall(thresholds=[0.3, 0.8]), M_BIN_T, M_BIN_P
)
metric_case("metric_recall_top_k", lambda: metrics.Recall(top_k=1), M_MULTI_T, M_PROBS)
metric_case(
    "metric_mean_iou",
    lambda: metrics.MeanIoU(num_classes=4),
    M_IDS,
    [np.argmax(p, -1).astype(np.int32) for p in M_PROBS],
)
metric_case(
    "metric_mean_iou_sw",
    lambda: metrics.MeanIoU(num_classes=4),
    M_IDS,
    [np.roll(i, 2) for i in M_IDS],
    M_SW,
)
metric_case(
    "metric_f1_macro",
    lambda: metrics.F1Score(average="macro", threshold=0.3),
    M_MULTI_T,
    M_PROBS,
)
metric_case("metric_f1_none", lambda: metrics.F1Score(), M_MULTI_T, M_PROBS)
metric_case(
    "metric_f1_micro_sw",
    lambda: metrics.F1Score(average="micro", threshold=0.25),
    M_MULTI_T,
    M_PROBS,
    M_SW,
)
metric_case(
    "metric_f1_weighted",
    lambda: metrics.F1Score(average="weighted", threshold=0.2),
    M_MULTI_T,
    M_PROBS,
)
metric_case("metric_true_positives", lambda: metrics.TruePositives(0.4), M_BIN_T, M_BIN_P, M_SW)
metric_case("metric_false_negatives", lambda: metrics.FalseNegatives([0.3, 0.6]), M_BIN_T, M_BIN_P)
metric_case(
    "metric_cce", lambda: metrics.CategoricalCrossentropy(from_logits=False), M_ONEHOT, M_PROBS
)
metric_case("metric_r2", lambda: metrics.R2Score(), M_REG_T, M_REG_P)
ONES6 = [np.ones(6, np.float32)] * 3
metric_case("metric_auc_single_class", lambda: metrics.AUC(num_thresholds=5), ONES6, M_BIN_P)
metric_case(
    "metric_precision_no_positives",
    lambda: metrics.Precision(thresholds=0.99),
    M_BIN_T,
    [p * 0.5 for p in M_BIN_P],
)
metric_case("metric_recall_no_labels", lambda: metrics.Recall(), [o * 0 for o in ONES6], M_BIN_P)


@case("metric_names_and_variables")
def _metric_names(wrap, emit):
    out = []
    for make in [
        lambda: metrics.Mean(name="m"),
        lambda: metrics.AUC(num_thresholds=4, name="a"),
        lambda: metrics.Precision(thresholds=[0.2, 0.4], name="p"),
        lambda: metrics.MeanIoU(3, name="iou"),
    ]:
        try:
            m = make()
            out.append(f"{m.name}:{sorted(tuple(v.shape) for v in m.variables)}")
        except Exception as e:  # report it and go on
            out.append(failure(e))
    emit(" | ".join(out))


if __name__ == "__main__":
    print(f"{which} training_math: {len(CASES)} cases")
    for name, body in CASES:
        if ONLY in name:
            run_case(name, body)
