"""Held-out: a neural ODE fitted to a 2-D spiral. The data: a trajectory of the cubic system
dy/dt = A y**3, A = [[-0.1, 2], [-2, -0.1]], from y0 = (2, 0), sampled at 400 points on
[0, 10] by a fixed-step RK4 in numpy. The model: dy/dt = f(y**3), f a Keras MLP
(2 -> 50 tanh -> 2) whose weights come from numpy. Training: batches of 16 windows of 10
points, their starts drawn by numpy; each window integrated from its first point by an RK4
written in TensorFlow inside a tf.function, the loss the mean absolute error over the window,
its gradient through the loop by tf.GradientTape, RMSprop(1e-3), 300 iterations. The
integrator written twice, trained from the same weights on the same batches: once as
tf.while_loop writing a TensorArray, once as tf.scan. Then the whole trajectory from y0 with
the trained model (a `for i in tf.range(n)` loop into a TensorArray, no gradient), and the
timings: the first compiled call, the median compiled iteration, one eager iteration."""

import time

import numpy as np
from engine import tf, which

# -- the reference trajectory, numpy -----------------------------------------------------
N_POINTS, T_END = 400, 10.0
A = np.array([[-0.1, 2.0], [-2.0, -0.1]])
t_grid = np.linspace(0.0, T_END, N_POINTS)
dt = float(t_grid[1] - t_grid[0])


def true_field(y):
    return (y**3) @ A.T  # row vectors: each row is A @ y**3


def np_rk4(y, h):
    k1 = true_field(y)
    k2 = true_field(y + 0.5 * h * k1)
    k3 = true_field(y + 0.5 * h * k2)
    k4 = true_field(y + h * k3)
    return y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


traj = np.empty((N_POINTS, 2))
traj[0] = [2.0, 0.0]
for n in range(N_POINTS - 1):
    y = traj[n]
    for _ in range(4):  # four substeps per grid interval for a cleaner reference
        y = np_rk4(y, dt / 4)
    traj[n + 1] = y
traj = traj.astype(np.float32)

# -- batches: 16 windows of 10 points, drawn once so that both variants see the same ------
rng = np.random.default_rng(0)
ITERS, BATCH, WINDOW = 300, 16, 10
starts = rng.integers(0, N_POINTS - WINDOW, size=(ITERS, BATCH))
offsets = np.arange(WINDOW)
batches = [traj[s[None, :] + offsets[:, None]] for s in starts]  # each (WINDOW, BATCH, 2)

# -- the model ----------------------------------------------------------------------------
HIDDEN = 50
init_weights = [
    rng.normal(0.0, 0.1, (2, HIDDEN)).astype(np.float32),
    np.zeros(HIDDEN, np.float32),
    rng.normal(0.0, 0.1, (HIDDEN, 2)).astype(np.float32),
    np.zeros(2, np.float32),
]


def make_model():
    model = tf.keras.Sequential(
        [
            tf.keras.Input(shape=(2,)),
            tf.keras.layers.Dense(HIDDEN, activation="tanh"),
            tf.keras.layers.Dense(2),
        ]
    )
    model.set_weights(init_weights)
    return model


def rk4_step(field, y, h):
    k1 = field(y)
    k2 = field(y + 0.5 * h * k1)
    k3 = field(y + 0.5 * h * k2)
    k4 = field(y + h * k3)
    return y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def odeint_while(field, y0, steps, h):
    """States at 0..steps, stacked on a new first axis: tf.while_loop + TensorArray."""
    states = tf.TensorArray(tf.float32, size=steps + 1)
    states = states.write(0, y0)

    def cond(i, y, states):
        return i < steps

    def body(i, y, states):
        y = rk4_step(field, y, h)
        return i + 1, y, states.write(i + 1, y)

    _, _, states = tf.while_loop(cond, body, (tf.constant(0), y0, states))
    return states.stack()


def odeint_scan(field, y0, steps, h):
    """The same by tf.scan over the step index."""
    ys = tf.scan(lambda y, _: rk4_step(field, y, h), tf.range(steps), initializer=y0)
    return tf.concat([y0[None], ys], axis=0)


def make_train_step(model, opt, odeint):
    def field(y):
        return model(y**3)

    def train_step(y_true):
        with tf.GradientTape() as tape:
            pred = odeint(field, y_true[0], WINDOW - 1, dt)
            loss = tf.reduce_mean(tf.abs(pred - y_true))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return train_step


PRINT_AT = (0, 1, 10, 100, ITERS - 1)
results = {}
for name, odeint in (("while", odeint_while), ("scan", odeint_scan)):
    model = make_model()
    opt = tf.keras.optimizers.RMSprop(1e-3)
    eager_step = make_train_step(model, opt, odeint)
    step = tf.function(eager_step)
    losses, times = [], []
    for it in range(ITERS):
        y_true = tf.constant(batches[it])
        t = time.perf_counter()
        loss = step(y_true)
        loss = float(loss)
        times.append(time.perf_counter() - t)
        losses.append(loss)
    print(which, name, "loss", " ".join(f"{i}:{losses[i]:.6g}" for i in PRINT_AT))
    results[name] = (model, opt, eager_step, times)

# -- the whole trajectory from y0 with the trained model (while_loop variant) -------------
model = results["while"][0]


@tf.function
def trajectory(y0):
    states = tf.TensorArray(tf.float32, size=N_POINTS)
    states = states.write(0, y0)
    y = y0
    for i in tf.range(1, N_POINTS):
        y = rk4_step(lambda u: model(u**3), y, dt)
        states = states.write(i, y)
    return states.stack()


y0 = tf.constant(traj[:1])
t = time.perf_counter()
pred_traj = trajectory(y0).numpy()[:, 0, :]
traj_first = time.perf_counter() - t
traj_times = []
for _ in range(5):
    t = time.perf_counter()
    trajectory(y0).numpy()
    traj_times.append(time.perf_counter() - t)
for t_want in (0.0, 2.5, 5.0, 10.0):
    k = int(np.argmin(np.abs(t_grid - t_want)))
    print(
        which,
        f"t={t_grid[k]:.4f} pred {pred_traj[k, 0]:.6g} {pred_traj[k, 1]:.6g}"
        f"  true {traj[k, 0]:.6g} {traj[k, 1]:.6g}",
    )
print(which, f"trajectory mean |err| {np.mean(np.abs(pred_traj - traj)):.6g}")

# -- timings ------------------------------------------------------------------------------
for name, (model, opt, eager_step, times) in results.items():
    y_true = tf.constant(batches[0])
    eager_step(y_true)  # warm the eager path once
    t = time.perf_counter()
    float(eager_step(y_true))
    eager_time = time.perf_counter() - t
    print(
        which,
        f"{name}: first call {times[0]:.2f} s, iteration {np.median(times[1:]) * 1e3:.3f} ms,"
        f" eager iteration {eager_time * 1e3:.1f} ms",
    )
print(
    which,
    f"trajectory ({N_POINTS - 1} RK4 steps): first call {traj_first:.2f} s,"
    f" then {np.median(traj_times) * 1e3:.3f} ms",
)
