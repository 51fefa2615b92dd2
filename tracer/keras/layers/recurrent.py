"""Keras's recurrent layers: `RNN` runs a cell over a sequence's time axis; `SimpleRNN`,
`LSTM` and `GRU` are RNNs of the cells `SimpleRNNCell`, `LSTMCell` and `GRUCell`.

Each cell holds its weights as Keras's does (`kernel`, `recurrent_kernel`, `bias`, gates
side by side in Keras's order), so `.keras` files and `get_weights` agree with Keras's. A
built-in cell's input products for every step are one matmul before the loop; the loop then
makes one product a step, with the state. The loop is `tt.scan`'s (tracer/control/scan.py):
a Python loop eagerly, one compiled loop under `tt.function`, differentiable either way.

A sequence whose length is unknown when tracing (`TensorSpec([None, None, 8])`, a
functional model's `Input((None, 8))`) runs in a `tt.while_loop` bounded by the length; a
function that generalized a changed length by itself is traced again with the length
instead (tracer/function.py), since the loop of a known length is the faster.
"""

import inspect

from tracer import nest
from tracer import random as tt_random
from tracer.context import state
from tracer.control.loops import while_loop
from tracer.control.scan import accumulate
from tracer.dtypes import bool as tt_bool
from tracer.keras import activations, initializers
from tracer.keras.layers.core import seed_state
from tracer.keras.layers.layer import Layer, to_snake_case
from tracer.ops import array_ops, layout_ops, math_ops, structure_ops
from tracer.ops.linalg_ops import matmul
from tracer.variable import Variable


class _Cell(Layer):
    """What the built-in cells share: their weights' initializers, dropout on the inputs
    and on the state (one mask per sequence, as Keras's), and the split of a step into the
    input's product (`project`, for all steps at once) and the rest (`step`)."""

    gates = 1

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if int(units) <= 0:
            raise ValueError(f"{type(self).__name__}: units must be positive, not {units!r}")
        for name, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if not 0 <= float(rate) < 1:
                raise ValueError(f"{type(self).__name__}: {name} must be in [0, 1), not {rate}")
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.dropout, self.recurrent_dropout = float(dropout), float(recurrent_dropout)
        self.seed = seed
        self.kernel = self.recurrent_kernel = self.bias = self.seed_state = None

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def get_initial_state(self, batch_size=None):
        """Zeros of [batch_size, size] for each of the cell's states (Keras 3's)."""
        return _zero_states(self.state_size, batch_size, self._compute_dtype)

    def build(self, input_shape):
        width = self.gates * self.units
        self.kernel = self.add_weight(
            "kernel", (input_shape[-1], width), initializer=self.kernel_initializer
        )
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (self.units, width), initializer=self.recurrent_initializer
        )
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), initializer=self._bias_init())
        if self.dropout or self.recurrent_dropout:
            self.seed_state = seed_state(self, self.seed)
        self.built = True

    def _bias_shape(self):
        return (self.gates * self.units,)

    def _bias_init(self):
        return self.bias_initializer

    def call(self, inputs, states, training=None):
        """One step, as Keras's cells: (the output, the new states) for `inputs` of shape
        (batch, features) and the states, a list."""
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        input_mask, state_mask = self.dropout_masks(inputs, training)
        if input_mask is not None:
            inputs = inputs * input_mask
        return self.step(self.project(inputs), states, state_mask)

    def dropout_masks(self, inputs, training):
        """(the input's mask, the state's mask) for one sequence, each None where its rate
        is 0 or not training: kept values scaled by 1 / (1 - rate), as Keras's dropout."""
        if not training or self.seed_state is None:
            return None, None
        batch = inputs.shape[0]
        return (
            self._mask((batch, inputs.shape[-1]), self.dropout),
            self._mask((batch, self.units), self.recurrent_dropout),
        )

    def _mask(self, shape, rate):
        if not rate:
            return None
        dtype = self._compute_dtype
        unit = tt_random.stateless_uniform(shape, seed=self.seed_state, dtype=dtype)
        self.seed_state.assign_add([0, 1])
        return array_ops.cast(math_ops.greater_equal(unit, rate), dtype) / (1.0 - rate)

    def project(self, inputs):
        """The inputs' product with the kernel (plus the input bias), for any leading axes."""
        projected = matmul_last(inputs, self.kernel)
        return projected + self.bias if self.use_bias else projected


class SimpleRNNCell(_Cell):
    """h' = activation(x @ kernel + h @ recurrent_kernel + bias)."""

    def step(self, projected, states, state_mask=None):
        h = states[0] if state_mask is None else states[0] * state_mask
        new = self.activation(projected + matmul(h, self.recurrent_kernel))
        return new, [new]


class LSTMCell(_Cell):
    """Keras's LSTM step: gates i, f, c, o side by side in the kernels and the bias;
    c' = f * c + i * activation(z_c), h' = o * activation(c'), with i, f and o the
    recurrent activation of theirs. `unit_forget_bias` starts the forget gate's bias at 1."""

    gates = 4

    def __init__(self, units, recurrent_activation="sigmoid", unit_forget_bias=True, **kwargs):
        super().__init__(units, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        init, units = initializers.get(self.bias_initializer), self.units

        def forget_at_one(shape, dtype=None):
            parts = [
                init((units,), dtype),
                array_ops.ones((units,), dtype),
                init((2 * units,), dtype),
            ]
            return structure_ops.concat(parts, 0)

        return forget_at_one

    def step(self, projected, states, state_mask=None):
        h, c = states
        if state_mask is not None:
            h = h * state_mask
        z = projected + matmul(h, self.recurrent_kernel)
        u = self.units
        i = self.recurrent_activation(z[:, :u])
        f = self.recurrent_activation(z[:, u : 2 * u])
        g = self.activation(z[:, 2 * u : 3 * u])
        o = self.recurrent_activation(z[:, 3 * u :])
        c = f * c + i * g
        h = o * self.activation(c)
        return h, [h, c]


class GRUCell(_Cell):
    """Keras's GRU step: gates z, r and the candidate h side by side. With `reset_after`
    (Keras's default) the bias has two rows, the input's and the state's, and the reset gate
    multiplies the state's product; without it, the state before its product."""

    gates = 3

    def __init__(self, units, recurrent_activation="sigmoid", reset_after=True, **kwargs):
        super().__init__(units, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def project(self, inputs):
        projected = matmul_last(inputs, self.kernel)
        if not self.use_bias:
            return projected
        return projected + (self.bias[0] if self.reset_after else self.bias)

    def step(self, projected, states, state_mask=None):
        h = states[0]
        masked = h if state_mask is None else h * state_mask
        u, kernel = self.units, self.recurrent_kernel
        if self.reset_after:
            inner = matmul(masked, kernel)
            if self.use_bias:
                inner = inner + self.bias[1]
            z = self.recurrent_activation(projected[:, :u] + inner[:, :u])
            r = self.recurrent_activation(projected[:, u : 2 * u] + inner[:, u : 2 * u])
            candidate = self.activation(projected[:, 2 * u :] + r * inner[:, 2 * u :])
        else:
            inner = matmul(masked, kernel[:, : 2 * u])
            z = self.recurrent_activation(projected[:, :u] + inner[:, :u])
            r = self.recurrent_activation(projected[:, u : 2 * u] + inner[:, u:])
            candidate = self.activation(
                projected[:, 2 * u :] + matmul(r * masked, kernel[:, 2 * u :])
            )
        new = z * h + (1.0 - z) * candidate
        return new, [new]


class StackedRNNCells(Layer):
    """Cells run one after another at each step, each on the one before's output (Keras's
    `RNN([cell, cell])`): the states are each cell's, in a list; the output the last's.

    >>> cells = tt.keras.layers.StackedRNNCells([tt.keras.layers.LSTMCell(4),
    ...                                           tt.keras.layers.GRUCell(3)])
    >>> cells.state_size, tt.keras.layers.RNN(cells)(tt.ones((2, 5, 3))).shape
    ([[4, 4], 3], TensorShape([2, 3]))
    """

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "state_size") or not callable(cell):
                raise TypeError(f"StackedRNNCells takes cells (state_size and call), not {cell!r}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        last = self.cells[-1]
        if getattr(last, "output_size", None) is not None:
            return last.output_size
        sizes = last.state_size
        return sizes[0] if isinstance(sizes, (list, tuple)) else sizes

    def get_initial_state(self, batch_size=None):
        """Each cell's first states (zeros unless the cell says otherwise)."""
        return [
            cell.get_initial_state(batch_size)
            if hasattr(cell, "get_initial_state")
            else _zero_states(cell.state_size, batch_size, self._compute_dtype)
            for cell in self.cells
        ]

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
            input_shape = (input_shape[0], _output_size(cell))
        self.built = True

    def call(self, inputs, states, training=None):
        new_states = []
        for cell, cell_states in zip(self.cells, states):
            listed = isinstance(cell_states, (list, tuple))
            takes_training = "training" in inspect.signature(cell.call).parameters
            given = list(cell_states) if listed else [cell_states]
            if takes_training:
                inputs, cell_states = cell(inputs, given, training=training)
            else:
                inputs, cell_states = cell(inputs, given)
            cell_states = nest.flatten(cell_states)
            new_states.append(cell_states if listed or len(cell_states) > 1 else cell_states[0])
        return inputs, new_states


def matmul_last(inputs, kernel):
    """`inputs @ kernel` over the last axis of inputs of any rank."""
    if len(inputs.shape) == 2:
        return matmul(inputs, kernel)
    leading = array_ops.shape(inputs)[:-1] if _unknown(inputs.shape) else inputs.shape[:-1]
    flat = array_ops.reshape(inputs, (-1, inputs.shape[-1]))
    out = matmul(flat, kernel)
    if isinstance(leading, tuple):
        return array_ops.reshape(out, (*leading, kernel.shape[-1]))
    return array_ops.reshape(out, structure_ops.concat([leading, [kernel.shape[-1]]], 0))


class RNN(Layer):
    """Keras's RNN layer: `cell` run over axis 1 of inputs (batch, time, ...).

    Returns the last output, or every step's (`return_sequences`), followed by the final
    states where `return_state`. `go_backwards` runs from the last step to the first (its
    sequences come in that order). `mask` (batch, time), given or passed on from an
    Embedding with `mask_zero`, skips steps: a skipped step keeps the states and repeats the
    previous output (zeros with `zero_output_for_mask`). `initial_state` replaces the zero
    states. A cell is a built-in one or any layer with `state_size` and
    `call(inputs, states)` returning (output, new states). `unroll` is accepted and changes
    nothing.

    `stateful=True` (Keras's cross-batch statefulness) keeps the final states in variables,
    `layer.states` (not weights), made when the layer is built for a known batch size: each
    call without `initial_state` starts from them, so a long sequence can be fed in chunks;
    `reset_state()` (or `reset_states()`) sets them back to zeros.
    """

    supports_masking = True

    def __init__(
        self,
        cell,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)  # Keras's: the cells run one after another each step
        if not hasattr(cell, "state_size") or not callable(cell):
            raise TypeError(f"RNN's cell needs a state_size and a call, not {cell!r}")
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.stateful = bool(go_backwards), bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.states = None  # a stateful layer's state variables, once built

    def build(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError(
                f"{type(self).__name__} takes inputs of shape (batch, time, features), not "
                f"{tuple(input_shape)}"
            )
        if not self.cell.built:
            self.cell.build((input_shape[0], *input_shape[2:]))
            self.cell.built = True
        if self.stateful and self.states is None:
            self._make_state_variables(input_shape)
        self.built = True

    def _make_state_variables(self, input_shape):
        if input_shape[0] is None:
            raise ValueError(
                "When using `stateful=True` in a RNN, the batch size must be static. Found "
                f"dynamic batch size: sequence.shape={tuple(input_shape)}"
            )
        outer = self._enter_scope()
        try:
            self.states = [
                Variable(value, trainable=False, name="rnn_state")
                for value in nest.flatten(self.get_initial_state(int(input_shape[0])))
            ]
        finally:
            self._leave_scope(outer)

    def _attributes(self):
        # NOTE: a stateful RNN's states are variables, but not the layer's: not among its
        # variables or weights, nor saved (Keras's)
        return [value for value in super()._attributes() if value is not self.states]

    def reset_state(self):
        """Zeros into a stateful layer's states (nothing for a layer that is not)."""
        for variable in self.states or ():
            variable.assign(array_ops.zeros_like(variable))

    reset_states = reset_state  # Keras's older name

    def call(self, sequences, initial_state=None, mask=None, training=None):
        batch, length = sequences.shape[0], sequences.shape[1]
        if self.stateful:
            self._check_batch(batch)
            initial_state = self.states if initial_state is None else initial_state
        states = self._initial_states(initial_state, sequences)
        builtin = isinstance(self.cell, _Cell)
        if builtin:
            input_mask, state_mask = self.cell.dropout_masks(sequences[:, 0], training)
            if input_mask is not None:
                sequences = sequences * input_mask[:, None]
            steps = array_ops.transpose(self.cell.project(sequences), _time_first(3))

            def step(x, old):
                return self.cell.step(x, old, state_mask)
        else:
            steps = array_ops.transpose(sequences, _time_first(len(sequences.shape)))
            step = self._user_step(training)
        elems = [steps]
        if mask is not None:
            elems.append(array_ops.transpose(array_ops.cast(mask, tt_bool), (1, 0)))
        if self.go_backwards:
            elems = [layout_ops.reverse(e, [0]) for e in elems]
        zero_output = array_ops.zeros((batch, _output_size(self.cell)), _computes_in(self.cell))

        def advance(carried, element):
            old_states, old_output = carried
            output, new_states = step(element[0], old_states)
            new_states = nest.flatten(new_states)
            if len(element) > 1:
                keep = element[1][:, None]
                new_states = [math_ops.where(keep, n, o) for n, o in zip(new_states, old_states)]
                skipped = array_ops.zeros_like(output) if self.zero_output_for_mask else old_output
                output = math_ops.where(keep, output, skipped)
            return new_states, output

        (states, last), outputs = self._loop(advance, elems, (states, zero_output), length)
        if self.stateful:
            for variable, value in zip(self.states, states):
                variable.assign(value)
        if self.return_sequences:
            last = array_ops.transpose(outputs, _time_first(len(outputs.shape)))
        if not self.return_state:
            return last
        return (last, *nest.pack_sequence_as(_state_structure(self.cell), list(states)))

    def _check_batch(self, batch):
        expected = self.states[0].shape[0]
        if isinstance(batch, int) and batch != expected:
            raise ValueError(
                "If an RNN is stateful, the batch size of the input sequences must be the same "
                f"as the batch size of the initial state. \n- Expected batch size: {expected}\n"
                f"- Received batch size: {batch}"
            )

    def _loop(self, advance, elems, start, length):
        """(the final (states, output), every step's output stacked time first, or None)."""
        if isinstance(length, int):
            final, stacked = accumulate(
                advance, elems, start, False, type(self).__name__, stack=self.return_sequences
            )
            return final, None if stacked is None else stacked[1]
        if state.trace is not None and state.trace.sizes_known_in_call:
            raise TypeError(
                f"{type(self).__name__}: the sequence length is known in the call; the loop of "
                "a known length is traced for it"
            )
        return _unknown_length_loop(advance, elems, start, self.return_sequences)

    def get_initial_state(self, batch_size):
        """The cell's first states for a batch of `batch_size`: zeros, as Keras 3 gives them
        (a list, one for each state)."""
        if hasattr(self.cell, "get_initial_state"):
            return self.cell.get_initial_state(batch_size)
        return _zero_states(self.cell.state_size, batch_size, _computes_in(self.cell))

    def _initial_states(self, initial_state, sequences):
        """The first states, flat (a stacked cell's one after another)."""
        sizes = nest.flatten(_state_structure(self.cell))
        if initial_state is None:
            batch = sequences.shape[0]
            return [array_ops.zeros((batch, int(size)), _computes_in(self.cell)) for size in sizes]
        given = nest.flatten(initial_state)
        if len(given) != len(sizes):
            raise ValueError(
                f"{type(self).__name__}: initial_state holds {len(given)} tensors; the cell has "
                f"{len(sizes)} states"
            )
        return [array_ops.cast(s, _computes_in(self.cell)) for s in given]

    def _user_step(self, training):
        takes_training = "training" in inspect.signature(self.cell.call).parameters

        def step(x, states):  # the states as a list (of lists, stacked), as Keras gives them
            states = nest.pack_sequence_as(_state_structure(self.cell), list(states))
            if takes_training:
                output, new_states = self.cell(x, states, training=training)
            else:
                output, new_states = self.cell(x, states)
            return output, nest.flatten(new_states)

        return step

    def compute_mask(self, inputs, mask=None):
        """The mask, for each step's outputs (`return_sequences`); else None (Keras's)."""
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            sizes = self.cell.state_size
            count = len(sizes) if isinstance(sizes, (list, tuple)) else 1
            return [output_mask] + [None] * count
        return output_mask


def _unknown_length_loop(advance, elems, start, keep_outputs):
    """The loop of `_loop` for a length known only when the function runs: a
    `tt.while_loop` over the steps; where the outputs are kept, each step's is written into
    a buffer of them all by a select against its index."""
    length = array_ops.shape(elems[0])[0]
    states, output = start
    outputs = None
    if keep_outputs:
        sizes = structure_ops.concat([array_ops.shape(elems[0])[:2], [output.shape[-1]]], 0)
        outputs = array_ops.zeros(sizes, output.dtype)

    def body(i, carried_states, carried_output, *kept):
        new_states, new_output = advance((carried_states, carried_output), [e[i] for e in elems])
        if not kept:
            return i + 1, new_states, new_output
        row = math_ops.equal(array_ops.range_(length), i)[:, None, None]
        return i + 1, new_states, new_output, math_ops.where(row, new_output[None], kept[0])

    loop_vars = (0, states, output) + ((outputs,) if keep_outputs else ())
    _, states, output, *kept = while_loop(lambda i, *_: i < length, body, loop_vars)
    return (states, output), kept[0] if kept else None


def _time_first(rank):
    return (1, 0, *range(2, rank))


def _output_size(cell):
    size = getattr(cell, "output_size", None)
    if size is None:
        size = cell.state_size
        size = size[0] if isinstance(size, (list, tuple)) else size
    return int(size)


def _unknown(shape):
    return any(not isinstance(d, int) for d in shape)


class _RNNLayer(RNN):
    """An RNN of a built-in cell made from the cell's arguments (Keras's SimpleRNN, LSTM and
    GRU); the cell's settings read as the layer's (`lstm.units`, as Keras's properties)."""

    def _start(self, cell, arguments):
        del arguments["self"]
        self._arguments = arguments  # what `copied` makes the layer again from
        cell_arguments, sequence_options, layer_options = _split(dict(arguments), cell.__name__)
        super().__init__(cell(**cell_arguments), **sequence_options, **layer_options)

    def copied(self, **changes):
        """A new, unbuilt layer of this one's arguments, `changes` applied (Bidirectional's
        forward and backward layers)."""
        arguments = {**self._arguments, **self._arguments["kwargs"]}
        del arguments["kwargs"]
        return type(self)(**{**arguments, **changes})

    def __getattr__(self, name):
        if name.startswith("_") or name == "cell":
            raise AttributeError(name)
        return getattr(self.cell, name)


def _state_structure(cell):
    """The cell's state sizes as a list (of lists, for a stacked cell's)."""
    sizes = cell.state_size
    return list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]


def _computes_in(cell):
    """The dtype a cell's states are in: its compute dtype (float16 under a mixed policy,
    as Keras's), else its dtype (a cell that is no Layer)."""
    return getattr(cell, "_compute_dtype", None) or cell.dtype


def _zero_states(sizes, batch_size, dtype):
    sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
    return [array_ops.zeros((batch_size, int(size)), dtype) for size in sizes]


def _split(arguments, cell_class_name):
    """(the cell's arguments, the RNN's sequence options, the layer's own) from a recurrent
    layer's `__init__` arguments; the cell is named as Keras names it (`lstm_cell`)."""
    layer_options = dict(arguments.pop("kwargs"))
    sequence_options = {k: arguments.pop(k) for k in _SEQUENCE_OPTIONS}
    for key in ("trainable", "dtype"):  # the cell's as the layer's
        if key in layer_options:
            arguments[key] = layer_options[key]
    for key in [k for k in layer_options if k.endswith(("_regularizer", "_constraint"))]:
        if key != "activity_regularizer":  # the weights' options are the cell's
            arguments[key] = layer_options.pop(key)
    arguments["name"] = to_snake_case(cell_class_name)
    return arguments, sequence_options, layer_options


_SEQUENCE_OPTIONS = (
    "return_sequences",
    "return_state",
    "go_backwards",
    "stateful",
    "unroll",
    "zero_output_for_mask",
)


class SimpleRNN(_RNNLayer):
    """A fully connected RNN: h' = activation(x @ kernel + h @ recurrent_kernel + bias)."""

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        seed=None,
        **kwargs,
    ):
        self._start(SimpleRNNCell, dict(locals()))


class LSTM(_RNNLayer):
    """Long short-term memory (Hochreiter and Schmidhuber, 1997), as Keras's LSTM."""

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        seed=None,
        **kwargs,
    ):
        self._start(LSTMCell, dict(locals()))


class GRU(_RNNLayer):
    """Gated recurrent unit (Cho et al., 2014), as Keras's GRU (`reset_after=True`)."""

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        reset_after=True,
        seed=None,
        **kwargs,
    ):
        self._start(GRUCell, dict(locals()))


class Bidirectional(Layer):
    """Keras's Bidirectional wrapper: a recurrent layer run forward and a copy of it run
    backward (`go_backwards`; or `backward_layer`), their outputs merged by `merge_mode`
    ("concat", "sum", "mul", "ave", or None for the two as a list). The backward outputs of
    every step are put back in time order first. With `return_state` the forward layer's
    states follow the output, then the backward layer's; `initial_state` is those two
    lists, one after the other. With a mask, each sequence's skipped steps give zeros
    (Keras's `zero_output_for_mask` on both layers)."""

    _MERGE_MODES = ("concat", "sum", "mul", "ave", None)
    supports_masking = True

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layer, RNN):
            raise TypeError(
                f"Bidirectional wraps a recurrent layer (LSTM, GRU, ...), not {layer!r}"
            )
        if merge_mode not in self._MERGE_MODES:
            raise ValueError(
                f"Bidirectional: merge_mode must be one of {self._MERGE_MODES}, not {merge_mode!r}"
            )
        if weights is not None:
            raise NotImplementedError(
                "Bidirectional(weights=...): call set_weights once it is built"
            )
        if backward_layer is None and not isinstance(layer, _RNNLayer):
            raise TypeError(f"Bidirectional of {type(layer).__name__}: give its backward_layer")
        base = layer.name.removeprefix("forward_")
        self.forward_layer = (
            layer.copied(name=f"forward_{base}") if isinstance(layer, _RNNLayer) else layer
        )
        if backward_layer is None:
            backward_layer = layer.copied(
                name=f"backward_{layer.name.removeprefix('backward_')}", go_backwards=True
            )
        self.backward_layer = backward_layer
        if (
            self.forward_layer.return_sequences != backward_layer.return_sequences
            or self.forward_layer.return_state != backward_layer.return_state
        ):
            raise ValueError(
                "Bidirectional: the forward and backward layers must agree on return_sequences and return_state"
            )
        self.merge_mode = merge_mode
        self.return_sequences = self.forward_layer.return_sequences
        self.return_state = self.forward_layer.return_state
        for each in (self.forward_layer, self.backward_layer):
            each.zero_output_for_mask = self.return_sequences

    def build(self, input_shape):
        for each in (self.forward_layer, self.backward_layer):
            outer = each._enter_scope()
            try:
                each.build(input_shape)
                each.built = True
            finally:
                each._leave_scope(outer)
        self.built = True

    def call(self, sequences, initial_state=None, mask=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        forward = self.forward_layer(
            sequences, initial_state=forward_state, mask=mask, training=training
        )
        backward = self.backward_layer(
            sequences, initial_state=backward_state, mask=mask, training=training
        )
        states = ()
        if self.return_state:
            states = (*forward[1:], *backward[1:])
            forward, backward = forward[0], backward[0]
        if self.return_sequences:
            backward = layout_ops.reverse(backward, [1])
        merged = self._merged(forward, backward)
        if not self.return_state:
            return merged
        return (*merged, *states) if self.merge_mode is None else (merged, *states)

    def _merged(self, forward, backward):
        if self.merge_mode == "concat":
            return structure_ops.concat([forward, backward], -1)
        if self.merge_mode == "sum":
            return forward + backward
        if self.merge_mode == "mul":
            return forward * backward
        if self.merge_mode == "ave":
            return (forward + backward) / 2.0
        return [forward, backward]

    def compute_mask(self, inputs, mask=None):
        output_mask = mask if self.return_sequences else None
        if self.merge_mode is None:
            output_mask = [output_mask, output_mask]
        if not self.return_state:
            return output_mask
        count = (
            len(self.forward_layer.cell.state_size)
            if isinstance(self.forward_layer.cell.state_size, (list, tuple))
            else 1
        )
        outputs = output_mask if isinstance(output_mask, list) else [output_mask]
        return outputs + [None] * (2 * count)
