"""Held-out: TensorFlow's SNGP tutorial (uncertainty-aware deep learning) on the two-moons data
made with numpy: a residual tf.keras.Model subclass (a frozen input Dense, Dense layers with
Dropout made in `call`, `hidden += resid`), trained with compile/fit and sparse categorical
crossentropy; then the SNGP model, whose tf-models-official layers are written here by hand
as Keras layers: spectral normalization of each hidden Dense by one power iteration a
training step (a non-trainable vector kept with `assign`), and a random-feature Gaussian
process output layer (LayerNormalization, a frozen random projection and cosine features, a
trainable output kernel, a precision matrix accumulated during training and inverted with
tf.linalg.inv for the predictive covariance), a callback that resets the covariance at each
epoch's start, and mean-field logits. Data and weights from numpy, so TF and tracer must
print the same numbers."""

import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
DEFAULT_X_RANGE = (-3.5, 3.5)
DEFAULT_Y_RANGE = (-2.5, 2.5)
DEFAULT_N_GRID = 20


def make_moons(n_samples, noise):
    """Two interleaving half circles, as sklearn.datasets.make_moons draws them."""
    n_out, n_in = n_samples // 2, n_samples - n_samples // 2
    outer = np.linspace(0, np.pi, n_out)
    inner = np.linspace(0, np.pi, n_in)
    x = np.concatenate([np.cos(outer), 1 - np.cos(inner)])
    y = np.concatenate([np.sin(outer), 1 - np.sin(inner) - 0.5])
    examples = np.stack([x, y], -1) + rng.normal(0, noise, (n_samples, 2))
    labels = np.concatenate([np.zeros(n_out, np.int64), np.ones(n_in, np.int64)])
    order = rng.permutation(n_samples)
    return examples[order], labels[order]


def make_training_data(sample_size=500):
    """Create two moon training dataset."""
    train_examples, train_labels = make_moons(n_samples=2 * sample_size, noise=0.1)

    # Adjust data position slightly.
    train_examples[train_labels == 0] += [-0.1, 0.2]
    train_examples[train_labels == 1] += [0.1, -0.2]

    return train_examples.astype(np.float32), train_labels


def make_testing_data(x_range=DEFAULT_X_RANGE, y_range=DEFAULT_Y_RANGE, n_grid=DEFAULT_N_GRID):
    """Create a mesh grid in 2D space."""
    # testing data (mesh grid over data space)
    x = np.linspace(x_range[0], x_range[1], n_grid)
    y = np.linspace(y_range[0], y_range[1], n_grid)
    xv, yv = np.meshgrid(x, y)
    return np.stack([xv.flatten(), yv.flatten()], axis=-1).astype(np.float32)


def make_ood_data(sample_size=500, means=(2.5, -1.75), vars=(0.01, 0.01)):
    return rng.multivariate_normal(means, cov=np.diag(vars), size=sample_size).astype(np.float32)


train_examples, train_labels = make_training_data(sample_size=128)
test_examples = make_testing_data()
ood_examples = make_ood_data(sample_size=100)


class DeepResNet(tf.keras.Model):
    """Defines a multi-layer residual network."""

    def __init__(
        self, num_classes, num_layers=3, num_hidden=128, dropout_rate=0.1, **classifier_kwargs
    ):
        super().__init__()
        # Defines class meta data.
        self.num_hidden = num_hidden
        self.num_layers = num_layers
        self.dropout_rate = dropout_rate
        self.classifier_kwargs = classifier_kwargs

        # Defines the hidden layers.
        self.input_layer = tf.keras.layers.Dense(self.num_hidden, trainable=False)
        self.dense_layers = [self.make_dense_layer() for _ in range(num_layers)]

        # Defines the output layer.
        self.classifier = self.make_output_layer(num_classes)

    def call(self, inputs):
        # Projects the 2d input data to high dimension.
        hidden = self.input_layer(inputs)

        # Computes the ResNet hidden representations.
        for i in range(self.num_layers):
            resid = self.dense_layers[i](hidden)
            resid = tf.keras.layers.Dropout(self.dropout_rate)(resid)
            hidden += resid

        return self.classifier(hidden)

    def make_dense_layer(self):
        """Uses the Dense layer as the hidden layer."""
        return tf.keras.layers.Dense(self.num_hidden, activation="relu")

    def make_output_layer(self, num_classes):
        """Uses the Dense layer as the output layer."""
        return tf.keras.layers.Dense(num_classes, **self.classifier_kwargs)


class SpectralNormalization(tf.keras.layers.Layer):
    """A Dense layer whose kernel is divided by its largest singular value (estimated by one
    power iteration a training step) wherever that exceeds `norm_multiplier`."""

    def __init__(self, layer, norm_multiplier=0.95, **kwargs):
        super().__init__(**kwargs)
        self.layer = layer
        self.norm_multiplier = norm_multiplier

    def build(self, input_shape):
        self.layer.build(input_shape)
        units = self.layer.kernel.shape[-1]
        self.u = self.add_weight(
            name="singular_vector", shape=(1, units), initializer="random_normal", trainable=False
        )

    def call(self, inputs, training=None):
        w = self.layer.kernel
        u = self.u
        v = tf.math.l2_normalize(tf.matmul(u, w, transpose_b=True))
        u = tf.math.l2_normalize(tf.matmul(v, w))
        u = tf.stop_gradient(u)
        v = tf.stop_gradient(v)
        if training:
            self.u.assign(u)
        sigma = tf.squeeze(tf.matmul(tf.matmul(v, w), u, transpose_b=True))
        w_normalized = w * (self.norm_multiplier / tf.maximum(sigma, self.norm_multiplier))
        outputs = tf.matmul(inputs, w_normalized) + self.layer.bias
        return self.layer.activation(outputs)


class RandomFeatureGaussianProcess(tf.keras.layers.Layer):
    """A Gaussian process output layer approximated with random Fourier features: returns the
    logits and, outside training, the predictive covariance of the batch."""

    def __init__(
        self, units, num_inducing=1024, gp_cov_momentum=-1, gp_cov_ridge_penalty=1.0, **kwargs
    ):
        super().__init__(**kwargs)
        self.units = units
        self.num_inducing = num_inducing
        self.gp_cov_momentum = gp_cov_momentum
        self.ridge_penalty = gp_cov_ridge_penalty
        self.input_norm = tf.keras.layers.LayerNormalization(name="gp_input_normalization")

    def build(self, input_shape):
        self.input_norm.build(input_shape)
        self.random_kernel = self.add_weight(
            name="random_kernel",
            shape=(input_shape[-1], self.num_inducing),
            initializer="random_normal",
            trainable=False,
        )
        self.random_bias = self.add_weight(
            name="random_bias", shape=(self.num_inducing,), initializer="zeros", trainable=False
        )
        self.output_kernel = self.add_weight(
            name="output_kernel",
            shape=(self.num_inducing, self.units),
            initializer="glorot_uniform",
        )
        self.precision = self.add_weight(
            name="precision",
            shape=(self.num_inducing, self.num_inducing),
            initializer="identity",
            trainable=False,
        )

    def reset_covariance_matrix(self):
        self.precision.assign(self.ridge_penalty * tf.eye(self.num_inducing))

    def call(self, inputs, training=None):
        hidden = self.input_norm(inputs)
        features = tf.cos(tf.matmul(hidden, self.random_kernel) + self.random_bias)
        features = features * np.sqrt(2.0 / self.num_inducing)
        logits = tf.matmul(features, self.output_kernel)
        batch_size = tf.shape(inputs)[0]
        if training:
            features = tf.stop_gradient(features)
            self.precision.assign_add(tf.matmul(features, features, transpose_a=True))
            return logits, tf.eye(batch_size)
        covariance = tf.linalg.inv(self.precision)
        covmat = self.ridge_penalty * tf.matmul(
            features, tf.matmul(covariance, features, transpose_b=True)
        )
        return logits, covmat


def mean_field_logits(logits, covmat, mean_field_factor=1.0):
    """Logits scaled down by their predictive variance (the mean-field approximation)."""
    variances = tf.linalg.diag_part(covmat)[:, None]
    return logits / tf.sqrt(1.0 + mean_field_factor * variances)


def from_numpy(model):
    """Every weight from numpy by its shape: the GP layer's random bias uniform in [0, 2 pi),
    its precision the identity, other vectors small and matrices scaled by their fan-in."""
    weights = []
    for variable in model.weights:
        shape = tuple(variable.shape)
        name = variable.path if hasattr(variable, "path") else variable.name
        if "random_bias" in name:
            weights.append(rng.uniform(0, 2 * np.pi, shape))
        elif "precision" in name:
            weights.append(np.eye(shape[0]))
        elif "gamma" in name:
            weights.append(np.ones(shape))
        elif "random_kernel" in name:
            weights.append(rng.normal(0, 1, shape))
        elif len(shape) == 2 and shape[0] > 1:
            weights.append(rng.normal(0, 1 / np.sqrt(shape[0]), shape))
        else:
            weights.append(rng.normal(0, 0.05, shape))
    model.set_weights([w.astype(np.float32) for w in weights])


# dropout 0 (the tutorial: 0.1), as dropout draws random numbers of its own
resnet_config = dict(num_classes=2, num_layers=6, num_hidden=64, dropout_rate=0.0)
resnet_model = DeepResNet(**resnet_config)
resnet_model.build((None, 2))
resnet_model(train_examples[:1])  # (Keras 3's build of a subclassed model makes no weights)
from_numpy(resnet_model)
print(which, "resnet weights", [tuple(w.shape) for w in resnet_model.get_weights()])
print(
    which,
    "resnet parameters",
    resnet_model.count_params(),
    "trainable",
    len(resnet_model.trainable_weights),
)

loss = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
metrics = (tf.keras.metrics.SparseCategoricalAccuracy(),)
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)

train_config = dict(loss=loss, metrics=metrics, optimizer=optimizer)
fit_config = dict(batch_size=64, epochs=30)
resnet_model.compile(**train_config)
start = time.perf_counter()
history = resnet_model.fit(train_examples, train_labels, verbose=0, shuffle=False, **fit_config)
resnet_time = time.perf_counter() - start
for key, values in history.history.items():
    print(which, "resnet", key, " ".join(f"{v:.5f}" for v in values[::6]))

resnet_logits = resnet_model(test_examples)
resnet_probs = tf.nn.softmax(resnet_logits, axis=-1)[:, 0]  # Take the probability for class 0.
resnet_uncertainty = resnet_probs * (1 - resnet_probs)
print(
    which,
    f"resnet grid probs mean {float(tf.reduce_mean(resnet_probs)):.5f}, uncertainty max {float(tf.reduce_max(resnet_uncertainty)):.5f}",
)
ood_probs = tf.nn.softmax(resnet_model(ood_examples), axis=-1)[:, 0]
print(
    which,
    f"resnet out-of-domain uncertainty mean {float(tf.reduce_mean(ood_probs * (1 - ood_probs))):.5f}",
)


class DeepResNetSNGP(DeepResNet):
    def __init__(self, spec_norm_bound=0.9, **kwargs):
        self.spec_norm_bound = spec_norm_bound
        super().__init__(**kwargs)

    def make_dense_layer(self):
        """Applies spectral normalization to the hidden layer."""
        dense_layer = super().make_dense_layer()
        return SpectralNormalization(dense_layer, norm_multiplier=self.spec_norm_bound)

    def make_output_layer(self, num_classes):
        """Uses Gaussian process as the output layer."""
        return RandomFeatureGaussianProcess(
            num_classes, num_inducing=256, gp_cov_momentum=-1, **self.classifier_kwargs
        )

    def call(self, inputs, training=False, return_covmat=False):
        # Gets logits and a covariance matrix from the GP layer.
        logits, covmat = super().call(inputs)

        # Returns only logits during training.
        if not training and return_covmat:
            return logits, covmat

        return logits


class ResetCovarianceCallback(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        """Resets covariance matrix at the beginning of the epoch."""
        if epoch > 0:
            self.model.classifier.reset_covariance_matrix()


class DeepResNetSNGPWithCovReset(DeepResNetSNGP):
    def fit(self, *args, **kwargs):
        """Adds ResetCovarianceCallback to model callbacks."""
        kwargs["callbacks"] = list(kwargs.get("callbacks", []))
        kwargs["callbacks"].append(ResetCovarianceCallback())

        return super().fit(*args, **kwargs)


sngp_model = DeepResNetSNGPWithCovReset(**resnet_config)
sngp_model.build((None, 2))
sngp_model(train_examples[:1])
from_numpy(sngp_model)
print(which, "sngp weights", [tuple(w.shape) for w in sngp_model.get_weights()])
print(
    which,
    "sngp parameters",
    sngp_model.count_params(),
    "trainable",
    len(sngp_model.trainable_weights),
)
sngp_model.compile(
    loss=loss,
    metrics=(tf.keras.metrics.SparseCategoricalAccuracy(),),
    optimizer=tf.keras.optimizers.Adam(learning_rate=1e-3),
)
start = time.perf_counter()
history = sngp_model.fit(train_examples, train_labels, verbose=0, shuffle=False, **fit_config)
sngp_time = time.perf_counter() - start
for key, values in history.history.items():
    print(which, "sngp", key, " ".join(f"{v:.5f}" for v in values[::6]))
u = sngp_model.dense_layers[0].u.numpy()
print(which, "first singular vector", " ".join(f"{v:.5f}" for v in u[0, :4]))
precision = sngp_model.classifier.precision.numpy()
print(
    which, f"precision trace {np.trace(precision):.3f} (an epoch's features after the last reset)"
)


def compute_posterior_mean_probability(logits, covmat, lambda_param=np.pi / 8.0):
    # Computes uncertainty-adjusted logits using the built-in method.
    logits_adjusted = mean_field_logits(logits, covmat, mean_field_factor=lambda_param)

    return tf.nn.softmax(logits_adjusted, axis=-1)[:, 0]


sngp_logits, sngp_covmat = sngp_model(test_examples, return_covmat=True)
sngp_variance = tf.linalg.diag_part(sngp_covmat)[:, None]
print(
    which,
    "sngp covmat",
    tuple(sngp_covmat.shape),
    f"variance mean {float(tf.reduce_mean(sngp_variance)):.5f}",
)
sngp_probs = compute_posterior_mean_probability(sngp_logits, sngp_covmat)
print(
    which,
    f"sngp grid probs mean {float(tf.reduce_mean(sngp_probs)):.5f}, uncertainty max {float(tf.reduce_max(sngp_probs * (1 - sngp_probs))):.5f}",
)
ood_logits, ood_covmat = sngp_model(ood_examples, return_covmat=True)
ood_probs = compute_posterior_mean_probability(ood_logits, ood_covmat)
print(
    which,
    f"sngp out-of-domain uncertainty mean {float(tf.reduce_mean(ood_probs * (1 - ood_probs))):.5f}",
)

steps = fit_config["epochs"] * -(-len(train_examples) // fit_config["batch_size"])
print(
    which,
    f"fit: resnet {resnet_time:.2f} s ({resnet_time / steps * 1e3:.2f} ms a step), "
    f"sngp {sngp_time:.2f} s ({sngp_time / steps * 1e3:.2f} ms a step)",
)
