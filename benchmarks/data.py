"""The workloads' inputs: deterministic, with full sizes and tiny ones for `--quick`.

B1 eager overhead: a 200-op scalar chain (sin, then *1.01, 100 times) and its gradient.
B2 MLP step: batch 128, 784-512 relu-10, softmax cross-entropy, gradients of all 4 params.
B3 fused elementwise: gradient of sum(sin(x)*exp(-x*x) + tanh(x)*x) on 4M float32.
B4 jacobian of tanh(W@x+b), 256 -> 256; B4b batch_jacobian of it over a batch of 64.
B5 hessian of sum(sin(x)*x**2) over 100 variables.
B7 per-call time of a compiled gradient of x*x at a scalar.
B9 whole training step: the B2 MLP's loss, gradients and an Adam update of its 4 variables
   (Keras's formula: lr 1e-3, betas 0.9 and 0.999, epsilon 1e-7), batch 128; B9b at batch 1;
   B9u at batch 128 with the step compiled for any batch size (the batch dimension unknown).
B10 loop gradient: explicit Euler on dx/dt = sin(theta x) - x^3 / 2 for 1,000 steps of 0.01
   over a state of 256 floats, as a loop (tt.while_loop, lax.fori_loop, tf.while_loop);
   the loss sum(x_T^2) / 2 and its gradients with respect to x_0 and theta.
B12 Hessian-vector product of the B5 function, sum(sin(x) x^2) over 100 variables, along v:
   forward over reverse (ForwardAccumulator around a tape, jax.jvp of jax.grad).
B18 LSTM objective and its gradient (ADBench's: 2 layers of a diagonal LSTM over 1,024
   characters of 14 symbols, the log-softmax loss of each next character), written as a Python
   loop over the time steps: eager on a tape, and compiled (the loop unrolled).
B18w the same with the loop over time steps a loop in the compiled program (tt.range,
   tf.range under autograph, lax.scan).
B19 CNN step: conv 3x3 32 (SAME, relu) -> max pool 2x2 -> conv 3x3 64 (SAME, relu) -> max pool
   2x2 -> flatten -> dense 10, softmax cross-entropy with integer labels, batch 64 of 28x28x1
   float32 NHWC images; the loss and the gradients of all 6 parameters, compiled.
B33 a MobileNet-style block's step, as a held-out program first showed tracer slow on two of
   its parts (a depthwise convolution, 3 x 3 max pooling two apart): conv 3x3 32 (SAME, relu)
   -> depthwise 3x3 (SAME, relu) -> pointwise 1x1 32 (relu) -> max pool 3x3 stride 2 SAME
   (windows that overlap) -> the mean over the image -> dense 10, softmax cross-entropy with
   integer labels, batch 32 of 32x32x3 float32 NHWC images; the loss and the gradients of all
   8 parameters, compiled.
B20 GP marginal likelihood: the negative log marginal likelihood of a GP with an RBF kernel on
   512 1-D points (float64), K = s2 exp(-(xi-xj)^2 / (2 l^2)) + n2 I, through a Cholesky
   factor and cholesky_solve, and its gradient w.r.t. (log l, log s2, log n2).
B24 transformer block training step: one pre-layer-norm block (as GPT-2's), h = x + causal
   multi-head self-attention of LN1(x) (Q, K and V from one dense layer, softmax of the scores
   scaled by 1/sqrt(head width), an output dense layer), y = h + dense(gelu(dense(LN2(h)))) with
   the MLP 4 times as wide and the exact (erf) GELU; layer norm written out from mean and
   variance (epsilon 1e-5) with learned gamma and beta; the mean squared error of y against a
   fixed target, the gradients of the 12 parameters and the B9 Adam update of each, float32;
   batch 8, sequence 64, width 128, 4 heads. B24L: batch 32, sequence 128, width 256, 8 heads.
B28 text and numbers: 256 decimal numbers given as strings, parsed (to float64), 1,000 steps of
   v <- 0.99 v + 0.01 sin(v) as a loop, then written back as text with 3 decimals; the sum of
   the values and the total length of the text (strings through compiled code, issue 46).
B31 k-means cost (GradBench's kmeans objective): 10,000 points and 1,000 centroids of 16
   coordinates, float64; the sum over the points of the squared distance to the nearest
   centroid, with the distances expanded as |p|^2 + |c|^2 - 2 p.c (one matrix product).
B32 GradBench's ode: the chain y0' = x0, yi' = xi y(i-1) from y(0) = 0 to t = 2 by 10 classic
   Runge-Kutta steps (a loop), n = 100,000 float64; y(2) and the gradient of its last
   component with respect to x (reverse mode), each system's loop and tape as written.
B34 an input pipeline as TensorFlow's guides write one: 8,192 rows of 784 float32 features and
   an int64 label, from_tensor_slices, shuffle (a buffer of 4,096, seeded), map (the features
   scaled by 0.5), batch 128; one pass, each batch's sums added up (float64), so that the
   values do not depend on the order (tf.data and tt.data; torch's DataLoader over a Dataset
   whose items are scaled, shuffled and batched, with no worker processes).
B29 a small training step as users write it: B9's step (Dense relu, Dense, sparse softmax
   cross-entropy from logits, Adam) at batch 32 of 20 features, 64 hidden units and 10
   classes, through each system's own layers, loss and optimizer (tt.keras and tf.keras;
   torch.nn, F.cross_entropy and torch.optim.Adam): the per-op cost of an eager step.
B30 a small model's inference as users write it: B29's Sequential (Dense 64 relu, Dense 10)
   called on the batch outside any tape, its logits (model(x); torch under no_grad): the
   per-op cost of eager ops that read variables.
"""

import numpy as np

FULL = {
    "B1": 200,
    "B2": (128, 784, 512, 10),
    "B3": 4 * 1024 * 1024,
    "B4": 256,
    "B4b": (64, 256),
    "B5": 100,
    "B7": 1,
    "B9": (128, 784, 512, 10),
    "B9b": (1, 784, 512, 10),
    "B9u": (128, 784, 512, 10),
    "B10": (256, 1000),
    "B12": 100,
    "B18": (2, 1024, 14),
    "B18w": (2, 1024, 14),
    "B19": (64, 28, 32, 64, 10),  # batch, image side, channels of the two convs, classes
    "B20": 512,
    "B24": (8, 64, 128, 4),  # batch, sequence, width, heads
    "B24L": (32, 128, 256, 8),
    "B28": (256, 1000),
    "B29": (32, 20, 64, 10),
    "B30": (32, 20, 64, 10),
    "B31": (10000, 1000, 16),
    "B32": (100000, 10),
    "B33": (32, 32, 32, 10),  # batch, image side, channels, classes
    "B34": (8192, 784, 128, 4096),  # rows, features, batch, shuffle buffer
}
QUICK = {
    "B1": 20,
    "B2": (8, 16, 12, 4),
    "B3": 4096,
    "B4": 8,
    "B4b": (4, 8),
    "B5": 6,
    "B7": 1,
    "B9": (8, 16, 12, 4),
    "B9b": (1, 16, 12, 4),
    "B9u": (8, 16, 12, 4),
    "B10": (16, 20),
    "B12": 6,
    "B18": (2, 8, 4),
    "B18w": (2, 8, 4),
    "B19": (4, 8, 4, 8, 10),
    "B20": 16,
    "B24": (2, 8, 16, 2),
    "B24L": (2, 8, 16, 2),
    "B28": (8, 10),
    "B29": (4, 6, 5, 3),
    "B30": (4, 6, 5, 3),
    "B31": (40, 12, 3),
    "B32": (8, 3),
    "B33": (4, 8, 4, 3),
    "B34": (40, 6, 8, 16),
}
WORKLOADS = (
    "B1", "B2", "B3", "B4", "B4b", "B5", "B7", "B9", "B9b", "B9u", "B10", "B12", "B18", "B18w",
    "B19", "B20", "B24", "B24L", "B28", "B29", "B30", "B31", "B32", "B33", "B34",
)  # fmt: skip
ADAM = {"learning_rate": 1e-3, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
# B24's parameters, in the order every system takes and returns them, and its layer norm's epsilon
BLOCK_PARAMS = (
    "ln1_gamma", "ln1_beta", "w_qkv", "b_qkv", "w_o", "b_o",
    "ln2_gamma", "ln2_beta", "w_1", "b_1", "w_2", "b_2",
)  # fmt: skip
LAYER_NORM_EPSILON = 1e-5
# B33's parameters, in the order every system takes and returns them
MOBILE_PARAMS = ("w1", "b1", "dw", "b2", "pw", "b3", "wd", "bd")
# how closely each system must agree with the numpy reference before it is timed
TOLERANCE = {
    "B1": 1e-4,
    "B2": 2e-3,
    "B3": 1e-4,
    "B4": 1e-4,
    "B4b": 1e-4,
    "B5": 1e-4,
    "B7": 1e-6,
    "B9": 2e-3,
    "B9b": 2e-3,
    "B9u": 2e-3,
    "B10": 1e-3,
    "B12": 1e-4,
    "B18": 1e-4,
    "B18w": 1e-4,
    "B19": 2e-3,
    "B20": 1e-6,
    "B24": 2e-3,
    "B24L": 2e-3,
    "B28": 1e-6,
    "B29": 2e-3,
    "B30": 1e-5,
    "B31": 1e-9,
    "B32": 1e-9,
    "B33": 2e-3,
    "B34": 1e-9,
}


def make(workload, quick):
    size = (QUICK if quick else FULL)[workload]
    rng = np.random.default_rng(0)
    if workload == "B1":
        return {"ops": size, "x": np.float32(0.5)}
    if workload in ("B2", "B9", "B9b", "B9u", "B29", "B30"):
        batch, n_in, hidden, classes = size
        return {
            "x": rng.standard_normal((batch, n_in)).astype(np.float32),
            "y": rng.integers(0, classes, batch).astype(np.int32),
            "w1": (rng.standard_normal((n_in, hidden)) * 0.05).astype(np.float32),
            "b1": np.zeros(hidden, np.float32),
            "w2": (rng.standard_normal((hidden, classes)) * 0.05).astype(np.float32),
            "b2": np.zeros(classes, np.float32),
        }
    if workload == "B3":
        return {"x": rng.standard_normal(size).astype(np.float32)}
    if workload == "B4":
        return {
            "w": (rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32),
            "b": rng.standard_normal(size).astype(np.float32),
            "x": rng.standard_normal(size).astype(np.float32),
        }
    if workload == "B4b":
        batch, n = size
        return {
            "w": (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32),
            "b": rng.standard_normal(n).astype(np.float32),
            "x": rng.standard_normal((batch, n)).astype(np.float32),
        }
    if workload == "B5":
        return {"x": rng.standard_normal(size).astype(np.float32)}
    if workload == "B7":
        return {"x": np.float32(3.0)}
    if workload == "B12":
        return {
            "x": rng.standard_normal(size).astype(np.float32),
            "v": rng.standard_normal(size).astype(np.float32),
        }
    if workload == "B10":
        n, steps = size
        return {
            "x0": rng.uniform(-1.0, 1.0, n).astype(np.float32),
            "theta": rng.uniform(0.5, 1.5, n).astype(np.float32),
            "steps": steps,
            "dt": 0.01,
        }
    if workload in ("B18", "B18w"):
        layers, characters, symbols = size
        return {
            "main": rng.uniform(-1, 1, (2 * layers, 4 * symbols)).astype(np.float32),
            "extra": rng.uniform(-1, 1, (3, symbols)).astype(np.float32),
            "state": rng.uniform(-1, 1, (2 * layers, symbols)).astype(np.float32),
            "sequence": np.eye(symbols, dtype=np.float32)[rng.integers(0, symbols, characters)],
        }
    if workload == "B19":
        batch, side, c1, c2, classes = size
        flat = (side // 4) * (side // 4) * c2
        return {
            "x": rng.standard_normal((batch, side, side, 1)).astype(np.float32),
            "y": rng.integers(0, classes, batch).astype(np.int32),
            "w1": (rng.standard_normal((3, 3, 1, c1)) / 3).astype(np.float32),
            "b1": np.full(c1, 0.01, np.float32),
            "w2": (rng.standard_normal((3, 3, c1, c2)) / np.sqrt(9 * c1)).astype(np.float32),
            "b2": np.full(c2, 0.01, np.float32),
            "w3": (rng.standard_normal((flat, classes)) / np.sqrt(flat)).astype(np.float32),
            "b3": np.zeros(classes, np.float32),
        }
    if workload == "B33":
        batch, side, channels, classes = size
        return {
            "x": rng.standard_normal((batch, side, side, 3)).astype(np.float32),
            "y": rng.integers(0, classes, batch).astype(np.int32),
            "w1": (rng.standard_normal((3, 3, 3, channels)) / np.sqrt(27)).astype(np.float32),
            "b1": np.full(channels, 0.01, np.float32),
            "dw": (rng.standard_normal((3, 3, channels, 1)) / 3).astype(np.float32),
            "b2": np.full(channels, 0.01, np.float32),
            "pw": (rng.standard_normal((1, 1, channels, channels)) / np.sqrt(channels)).astype(
                np.float32
            ),
            "b3": np.full(channels, 0.01, np.float32),
            "wd": (rng.standard_normal((channels, classes)) / np.sqrt(channels)).astype(np.float32),
            "bd": np.zeros(classes, np.float32),
        }
    if workload == "B34":
        rows, features, batch, buffer = size
        return {
            "x": rng.standard_normal((rows, features)).astype(np.float32),
            "y": rng.integers(0, 10, rows).astype(np.int64),
            "batch": batch,
            "buffer": buffer,
        }
    if workload == "B20":
        x = np.sort(rng.uniform(-3.0, 3.0, size))
        return {
            "x": x,
            "y": np.sin(2 * x) + 0.3 * rng.standard_normal(size),
            # log lengthscale, log signal variance, log noise variance
            "params": np.log(np.array([0.7, 1.3, 0.1])),
        }
    if workload in ("B24", "B24L"):
        return _block(rng, *size)
    if workload == "B32":
        n, steps = size
        return {"x": rng.uniform(0.0, 1.0, n), "steps": steps}
    if workload == "B31":
        points, centroids, coordinates = size
        return {
            "points": rng.standard_normal((points, coordinates)),
            "centroids": rng.standard_normal((centroids, coordinates)),
        }
    if workload == "B28":
        n, steps = size
        text = [f"{v:.4f}".encode() for v in rng.uniform(-2.0, 2.0, n)]
        return {"lines": np.array(text, dtype=object), "steps": steps}
    raise KeyError(workload)


def _block(rng, batch, seq, width, heads):
    """B24's inputs: weights and biases normal at scale 0.02 (the gammas 1 plus that), the
    causal mask as what is added to the attention scores (-1e9 above the diagonal)."""

    def normal(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    shapes = {
        "ln1_gamma": (width,),
        "ln1_beta": (width,),
        "w_qkv": (width, 3 * width),
        "b_qkv": (3 * width,),
        "w_o": (width, width),
        "b_o": (width,),
        "ln2_gamma": (width,),
        "ln2_beta": (width,),
        "w_1": (width, 4 * width),
        "b_1": (4 * width,),
        "w_2": (4 * width, width),
        "b_2": (width,),
    }
    data = {name: normal(*shapes[name]) for name in BLOCK_PARAMS}
    data["ln1_gamma"] += 1
    data["ln2_gamma"] += 1
    data["x"] = rng.standard_normal((batch, seq, width)).astype(np.float32)
    data["target"] = rng.standard_normal((batch, seq, width)).astype(np.float32)
    data["mask"] = np.triu(np.full((seq, seq), -1e9, np.float32), 1)
    data["heads"] = heads
    return data
