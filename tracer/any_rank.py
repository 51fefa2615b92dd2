"""What `get_concrete_function` gives for an argument of unknown rank (`TensorSpec(None)`).

TensorFlow traces one graph of unknown rank. Compiled code has a rank, so tracer gives an
`AnyRankFunction`: called, it runs the concrete function of the call's ranks (traced at
the first call of each rank, every dimension of those arguments unknown); it prints as
TensorFlow prints its one function, `shape=<unknown>` for those arguments and for the
results whose rank follows theirs.
"""

import numpy as np

from tracer import nest
from tracer.concrete import call_parameters, signature_text
from tracer.signature import TensorSpec, bound_arguments, is_tensor_argument
from tracer.tensor_shape import is_unknown_rank


def has_unknown_rank(arguments):
    """Whether a TensorSpec of unknown rank is among the leaves of `arguments`."""
    return any(_unknown_rank(leaf) for leaf in nest.flatten(arguments))


def _unknown_rank(leaf):
    return isinstance(leaf, TensorSpec) and is_unknown_rank(leaf.shape)


class AnyRankFunction:
    """A `tt.function` traced for arguments some of which have an unknown rank."""

    def __init__(self, function, args, kwargs):
        self._function = function
        self._arguments = (args, kwargs)
        self.name = function.__name__

    def __call__(self, *args, **kwargs):
        return self._at_ranks(self._ranks_of(args, kwargs))(*args, **kwargs)

    def _at_ranks(self, ranks):
        """The ConcreteFunction of the unknown-rank arguments at `ranks`, in order."""
        ranks = iter(ranks)
        leaves = [
            leaf.of_rank(next(ranks, 0)) if _unknown_rank(leaf) else leaf
            for leaf in nest.flatten(self._arguments)
        ]
        args, kwargs = nest.pack_sequence_as(self._arguments, leaves)
        return self._function.get_concrete_function(*args, **kwargs)

    def _ranks_of(self, args, kwargs):
        """The ranks of a call's tensors that stand for the unknown-rank arguments, whether
        the call gives the traced structure or only its tensors (a call that fits neither
        is refused by the ConcreteFunction it runs)."""
        traced = nest.flatten(self._arguments)
        given = nest.flatten((args, kwargs))
        if len(given) == len(traced):
            pairs = [
                (value, leaf) for value, leaf in zip(given, traced) if is_tensor_argument(leaf)
            ]
        else:
            pairs = list(zip(given, [leaf for leaf in traced if is_tensor_argument(leaf)]))
        return [np.ndim(value) for value, leaf in pairs if _unknown_rank(leaf)]

    def pretty_printed_signature(self, verbose=True):
        """TensorFlow's text of its function of unknown rank: the results' specs are those
        of the traces at rank 0 and 1, with `<unknown>` (or None) where they differ."""
        count = sum(map(_unknown_rank, nest.flatten(self._arguments)))
        low, high = self._at_ranks([0] * count), self._at_ranks([1] * count)
        low_output = low.output_spec()
        leaves = map(_common_spec, nest.flatten(low_output), nest.flatten(high.output_spec()))
        output = nest.pack_sequence_as(low_output, list(leaves))
        python_function = self._function.python_function
        named = bound_arguments(python_function, *self._arguments)
        parameters = call_parameters(python_function, self._arguments, named)
        return signature_text(parameters, output, low._variables, verbose)

    def __str__(self):
        return f"ConcreteFunction {self.pretty_printed_signature()}"

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature(False)} at 0x{id(self):X}>"


def _common_spec(low, high):
    """One result as the traces at two ranks give it."""
    if not isinstance(low, TensorSpec):
        return low
    if len(low.shape) != len(high.shape):
        return TensorSpec(None, low.dtype, low.name)
    return low.generalized(high)
