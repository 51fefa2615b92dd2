"""Keras's attention layers for sequences (batch, time, features): MultiHeadAttention (the
query, key and value projected per head by EinsumDense layers, Keras's weights, scaled dot
products, a softmax over the keys masked as Keras masks it, the heads projected back), and
Attention and AdditiveAttention (one head, no projections)."""

import math

from tracer import random as tt_random
from tracer.dtypes import float16
from tracer.keras import constraints, regularizers
from tracer.keras.activations import softmax
from tracer.keras.layers.activation_layers import Softmax
from tracer.keras.layers.core import Dropout, seed_state
from tracer.keras.layers.einsum_dense import EinsumDense
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.einsum_ops import einsum
from tracer.ops.linalg_ops import matmul
from tracer.tensor import convert_to_tensor


class MultiHeadAttention(Layer):
    """Attention of `num_heads` heads, as Keras's (Vaswani et al., 2017):
    `call(query, value, key=None, attention_mask=None, return_attention_scores=False,
    training=None, use_causal_mask=False)`.

    The mask of each step pair (query step, key step) is the AND of `attention_mask`
    (batch, T, S), the query's and the value's (or key's) masks as earlier layers passed
    them on (an Embedding with `mask_zero`) or as `query_mask`, `value_mask` and `key_mask`
    give them, and, with `use_causal_mask`, key step <= query step. The output carries the
    query's mask. `dropout` drops attention probabilities in training.
    """

    supports_masking = True

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        use_gate=False,
        sliding_window=None,
        flash_attention=None,
        seed=None,
        **kwargs,
    ):
        if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads <= 0:
            raise ValueError(
                f"MultiHeadAttention: num_heads must be a positive int, not {num_heads!r}"
            )
        if attention_axes not in (None, 1, (1,), [1], -2, (-2,), [-2]):
            raise NotImplementedError(
                f"MultiHeadAttention(attention_axes={attention_axes!r}): tracer attends over "
                "the sequence axis of (batch, time, features) inputs only"
            )
        if use_gate or sliding_window is not None:
            raise NotImplementedError(
                "MultiHeadAttention: use_gate and sliding_window are not in tracer"
            )
        # Keras's: the projections' weights take the options given for the layer's
        projection_options = {
            key: kwargs.pop(key)
            for key in (
                "kernel_regularizer",
                "bias_regularizer",
                "kernel_constraint",
                "bias_constraint",
            )
            if key in kwargs
        }
        super().__init__(**kwargs)
        self.num_heads, self.key_dim = num_heads, int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias, self.seed = float(dropout), bool(use_bias), seed
        self.output_shape_argument = output_shape
        self.attention_axes = (1,)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self._projection_options = projection_options
        for key, value in projection_options.items():  # read by its Keras config
            get = regularizers.get if key.endswith("_regularizer") else constraints.get
            setattr(self, key, get(value))
        heads = lambda size, name: EinsumDense(  # noqa: E731
            "abc,cde->abde",
            (None, num_heads, size),
            bias_axes="de" if self.use_bias else None,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            name=name,
            dtype=kwargs.get("dtype"),
            **self._projection_options,
        )
        self.query_dense = heads(self.key_dim, "query")
        self.key_dense = heads(self.key_dim, "key")
        self.value_dense = heads(self.value_dim, "value")
        self.output_dense = None  # its size is the query's features unless output_shape gives it
        self._softmax = Softmax(axis=-1, dtype=kwargs.get("dtype"))
        self._dropout_layer = Dropout(self.dropout, seed=seed, dtype=kwargs.get("dtype"))
        self._built_for = None  # Keras's build config: {"query_shape", "value_shape", "key_shape"}

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=None,
        use_causal_mask=False,
    ):
        value = _in_dtype(value, self._compute_dtype)
        key = value if key is None else _in_dtype(key, self._compute_dtype)
        for name, tensor in (("query", query), ("value", value), ("key", key)):
            if len(tensor.shape) != 3:
                raise ValueError(
                    f"MultiHeadAttention: the {name} must be (batch, time, features), not of "
                    f"shape {tuple(tensor.shape)}"
                )
        masks = self._step_masks(query, value, key, query_mask, value_mask, key_mask)
        mask = self._attention_mask(query, value, masks, attention_mask, use_causal_mask)
        if self.output_dense is None:
            self._make_output_dense(query, value, key)
        q = self.query_dense(query) * (1.0 / math.sqrt(self.key_dim))
        k = self.key_dense(key)
        v = self.value_dense(value)
        scores = einsum("aecd,abcd->acbe", k, q)  # (batch, heads, T, S)
        if mask is not None:
            mask = array_ops.expand_dims(mask, -3)
        probabilities = self._softmax(scores, mask=mask)
        dropped = self._dropout_layer(probabilities, training=training)
        attended = einsum("acbe,aecd->abcd", dropped, v)
        output = self.output_dense(attended)
        return (output, probabilities) if return_attention_scores else output

    def _make_output_dense(self, query, value, key):
        shape = self.output_shape_argument
        size = query.shape[-1] if shape is None else shape
        self.output_dense = EinsumDense(
            "abcd,cde->abe",
            (None, *((size,) if isinstance(size, int) else tuple(size))),
            bias_axes="e" if self.use_bias else None,
            kernel_initializer=self.kernel_initializer,
            bias_initializer=self.bias_initializer,
            name="attention_output",
            dtype=self._dtype_policy or self.dtype.name,  # (a mixed one: its own)
            **self._projection_options,
        )
        self._built_for = {
            "query_shape": (None, *query.shape[1:]),
            "value_shape": (None, *value.shape[1:]),
        }
        if key is not value:
            self._built_for["key_shape"] = (None, *key.shape[1:])

    @staticmethod
    def _step_masks(query, value, key, query_mask, value_mask, key_mask):
        """The query's, value's and key's masks: given, or passed on by earlier layers (the
        key's only where the key is not the value)."""
        found = [
            given if given is not None else getattr(tensor, "_keras_mask", None)
            for given, tensor in ((query_mask, query), (value_mask, value), (key_mask, key))
        ]
        if key is value and key_mask is None:
            found[2] = None
        return found

    @staticmethod
    def _attention_mask(query, value, masks, attention_mask, use_causal_mask):
        """(batch, T, S) bools, or None: the AND of every mask that applies."""
        query_mask, value_mask, key_mask = masks
        parts = []
        if query_mask is not None:
            parts.append(array_ops.cast(query_mask, "bool")[:, :, None])
        for step_mask in (value_mask, key_mask):
            if step_mask is not None:
                parts.append(array_ops.cast(step_mask, "bool")[:, None, :])
        if use_causal_mask:
            rows = array_ops.range_(_length(query))[:, None]
            columns = array_ops.range_(_length(value))[None, :]
            parts.append(math_ops.greater_equal(rows, columns)[None])
        if attention_mask is not None:
            parts.append(array_ops.cast(attention_mask, "bool"))
        if not parts:
            return None
        combined = parts[0]
        for part in parts[1:]:
            combined = math_ops.logical_and(combined, part)
        return combined


def _in_dtype(value, dtype):
    """An argument after the first as a tensor, floating ones in the layer's compute dtype
    (Layer.__call__ converts and casts the first)."""
    tensor = convert_to_tensor(value)
    if tensor.dtype.is_floating and tensor.dtype != dtype:
        return array_ops.cast(tensor, dtype)
    return tensor


def _length(tensor):
    """The size of the sequence axis: an int, or a tensor where it is known only when the
    function runs."""
    size = tensor.shape[1]
    return size if isinstance(size, int) else array_ops.shape(tensor)[1]


class Attention(Layer):
    """Keras's dot-product attention (Luong-style) of `[query, value]` or `[query, value,
    key]` (batch, steps, features): scores query . key (times a learnt `scale` with
    `use_scale`; with `score_mode="concat"`, sum(tanh(query + key)) times a learnt weight),
    masked where the value's mask or the causal mask is False (minus 1e9), a softmax over the
    keys, `dropout` on it in training, then the weighted sum of the values; query steps the
    query's mask skips give zeros, and the output carries that mask.
    """

    supports_masking = True
    _SCORE_MODES = ("dot", "concat")

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        if score_mode not in self._SCORE_MODES:
            raise ValueError(
                f"{type(self).__name__}: score_mode must be one of {self._SCORE_MODES}"
            )
        self.use_scale, self.score_mode = bool(use_scale), score_mode
        self.dropout, self.seed = float(dropout), seed
        self.scale = self.concat_score_weight = self.seed_state = None

    def build(self, input_shape):
        """Nothing: the weights are made on the first call, from the query's features (the
        inputs are a list, whose shapes a layer's first call does not give `build`)."""
        self.built = True

    _scale_init = "ones"
    _made = False

    def _scale_shape(self, query):
        return ()

    def _make_weights(self, query):
        if self.use_scale:
            self.scale = self.add_weight(
                "scale", self._scale_shape(query), initializer=self._scale_init
            )
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(
                "concat_score_weight", (), initializer="ones"
            )
        if self.dropout:
            self.seed_state = seed_state(self, self.seed)
        self._made = True

    def call(
        self,
        inputs,
        mask=None,
        training=False,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(
                f"{type(self).__name__} takes [query, value] or [query, value, key], not {inputs!r}"
            )
        query, value = (convert_to_tensor(t) for t in inputs[:2])
        key = convert_to_tensor(inputs[2]) if len(inputs) == 3 else value
        query_mask, value_mask = (list(mask) + [None, None])[:2] if mask else (None, None)
        if not self._made:
            self._make_weights(query)
        scores = self._scores(query, key)
        allowed = None if value_mask is None else array_ops.cast(value_mask, "bool")[:, None, :]
        if use_causal_mask:
            causal = math_ops.greater_equal(
                array_ops.range_(_length(query))[:, None], array_ops.range_(_length(key))[None, :]
            )[None]
            allowed = causal if allowed is None else math_ops.logical_and(allowed, causal)
        if allowed is not None:
            large = 65504.0 if scores.dtype == float16 else 1e9
            scores = math_ops.where(allowed, scores, scores - large)
        weights = softmax(scores, axis=-1)
        dropped = weights
        if training and self.dropout:
            unit = tt_random.stateless_uniform(
                weights.shape, seed=self.seed_state, dtype=weights.dtype
            )
            self.seed_state.assign_add([0, 1])
            keep = array_ops.cast(math_ops.greater_equal(unit, self.dropout), weights.dtype)
            dropped = weights * keep / (1.0 - self.dropout)
        output = matmul(dropped, value)
        if query_mask is not None:
            output = math_ops.where(array_ops.cast(query_mask, "bool")[..., None], output, 0.0)
        return (output, weights) if return_attention_scores else output

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = matmul(query, key, transpose_b=True)
            return scores * self.scale if self.scale is not None else scores
        summed = query[..., :, None, :] + key[..., None, :, :]
        if self.scale is not None:
            summed = summed * self.scale
        return self.concat_score_weight * reduce_sum(math_ops.tanh(summed), axis=-1)

    def compute_mask(self, inputs, previous_mask=None):
        """The query's mask (Keras's)."""
        return previous_mask[0] if isinstance(previous_mask, list) else None

    def get_config(self):
        return {
            **self._base_config(),
            "use_scale": self.use_scale,
            "score_mode": self.score_mode,
            "dropout": self.dropout,
            "seed": self.seed,
        }


class AdditiveAttention(Attention):
    """Keras's additive (Bahdanau-style) attention: scores sum(scale * tanh(query + key)),
    `scale` a learnt vector of the features (with `use_scale`, the default); the rest as
    Attention's."""

    def __init__(self, use_scale=True, dropout=0.0, seed=None, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, seed=seed, **kwargs)

    _scale_init = "glorot_uniform"

    def _scale_shape(self, query):
        return (query.shape[-1],)

    def _scores(self, query, key):
        terms = math_ops.tanh(query[..., :, None, :] + key[..., None, :, :])
        return reduce_sum(terms * self.scale if self.scale is not None else terms, axis=-1)

    def get_config(self):
        config = super().get_config()
        del config["score_mode"]
        return config
