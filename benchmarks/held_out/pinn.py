"""Held-out: a physics-informed network for the viscous Burgers equation
u_t + u u_x - (0.01/pi) u_xx = 0 on x in [-1, 1], t in [0, 1], with u(0, x) = -sin(pi x)
and u(t, +-1) = 0, as a TF user writes it: a tf.keras MLP of Dense tanh layers (weights from
numpy), the PDE residual from nested GradientTapes (u_t, u_x by an inner persistent tape,
u_xx by a tape around it, all inside the tape for the weights), Adam in a tf.function step,
and one eager step on an identical copy to compare with the compiled one."""

import math
import time

import numpy as np
from engine import tf, which

NU = 0.01 / math.pi
WIDTHS = [2, 32, 32, 32, 1]
rng = np.random.default_rng(7)

# Collocation points inside the domain, points on x = -1 and x = +1, points at t = 0.
n_in, n_bc, n_ic = 1000, 100, 100
t_in = rng.uniform(0.0, 1.0, (n_in, 1)).astype(np.float32)
x_in = rng.uniform(-1.0, 1.0, (n_in, 1)).astype(np.float32)
t_bc = rng.uniform(0.0, 1.0, (n_bc, 1)).astype(np.float32)
x_bc = np.where(np.arange(n_bc)[:, None] % 2 == 0, -1.0, 1.0).astype(np.float32)
t_ic = np.zeros((n_ic, 1), np.float32)
x_ic = rng.uniform(-1.0, 1.0, (n_ic, 1)).astype(np.float32)
u_ic = -np.sin(np.pi * x_ic).astype(np.float32)

# Glorot-scaled normal kernels and small biases, shared by both copies of the network.
init = []
for fan_in, fan_out in zip(WIDTHS[:-1], WIDTHS[1:]):
    scale = np.sqrt(2.0 / (fan_in + fan_out))
    init.append((rng.standard_normal((fan_in, fan_out)) * scale).astype(np.float32))
    init.append((0.1 * rng.standard_normal(fan_out)).astype(np.float32))


def make_net():
    net = tf.keras.Sequential(
        [tf.keras.Input(shape=(2,))]
        + [tf.keras.layers.Dense(w, activation="tanh") for w in WIDTHS[1:-1]]
        + [tf.keras.layers.Dense(WIDTHS[-1])]
    )
    net.set_weights(init)
    return net


T_in, X_in = tf.constant(t_in), tf.constant(x_in)
TX_bc = tf.constant(np.concatenate([t_bc, x_bc], axis=1))
TX_ic = tf.constant(np.concatenate([t_ic, x_ic], axis=1))
U_ic = tf.constant(u_ic)


def pde_residual(net, t, x):
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape(persistent=True) as inner:
            inner.watch(t)
            inner.watch(x)
            u = net(tf.concat([t, x], axis=1))
        u_t = inner.gradient(u, t)
        u_x = inner.gradient(u, x)
    u_xx = outer.gradient(u_x, x)
    del inner
    return u_t + u * u_x - NU * u_xx


def pinn_loss(net):
    f = pde_residual(net, T_in, X_in)
    loss_pde = tf.reduce_mean(tf.square(f))
    loss_bc = tf.reduce_mean(tf.square(net(TX_bc)))
    loss_ic = tf.reduce_mean(tf.square(net(TX_ic) - U_ic))
    return loss_pde + loss_bc + loss_ic


def make_step(net, opt):
    def step():
        with tf.GradientTape() as tape:
            loss = pinn_loss(net)
        grads = tape.gradient(loss, net.trainable_variables)
        opt.apply_gradients(zip(grads, net.trainable_variables))
        return loss

    return step


# Eager: three steps on a copy, to compare the first losses and time a step.
eager_step = make_step(make_net(), tf.keras.optimizers.Adam(1e-3))
eager_losses, eager_times = [], []
for _ in range(3):
    t0 = time.perf_counter()
    eager_losses.append(float(eager_step()))
    eager_times.append(time.perf_counter() - t0)

net = make_net()
train_step = tf.function(make_step(net, tf.keras.optimizers.Adam(1e-3)))
losses, times = [], []
for i in range(300):
    t0 = time.perf_counter()
    losses.append(float(train_step()))
    times.append(time.perf_counter() - t0)

probe = np.array(
    [[0.0, -0.5], [0.0, 0.5], [0.25, 0.0], [0.5, -0.5], [0.75, 0.25], [1.0, 0.8]], np.float32
)
u_probe = net(tf.constant(probe)).numpy()[:, 0]

print(which, "eager  loss 0,1,2:", " ".join(f"{v:.6g}" for v in eager_losses))
print(which, "traced loss 0,1,2:", " ".join(f"{v:.6g}" for v in losses[:3]))
print(which, "loss at 0/1/10/100/299:", " ".join(f"{losses[i]:.6g}" for i in (0, 1, 10, 100, 299)))
print(which, "u(t,x) at", [tuple(p) for p in probe.tolist()])
print(which, "   =", " ".join(f"{v:.6g}" for v in u_probe))
print(
    which,
    f"first call {times[0]:.2f} s, step {np.median(times[100:]) * 1e3:.3f} ms "
    f"(median of last 200), eager step {np.median(eager_times[1:]) * 1e3:.1f} ms",
)
