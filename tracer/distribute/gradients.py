"""Gradients averaged over the processes: Horovod's DistributedGradientTape and
DistributedOptimizer.

Both reduce every dense gradient of a step in one fused allreduce per dtype
(collectives.grouped_allreduce) and gather IndexedSlices gradients (never densified unless
`sparse_as_dense`). DistributedOptimizer then applies the update as one compiled call
(a tt.function of the wrapped optimizer's update, made once per set of variables and
hyperparameter values), so a step costs no Python per variable once its gradients exist.
"""

import numpy as np

from tracer.distribute import collectives, structures
from tracer.distribute.process import communicator
from tracer.distribute.reduction import Average
from tracer.function import function
from tracer.indexed_slices import IndexedSlices
from tracer.tensor import Tensor, convert_to_tensor


def reduce_gradients(gradients, op=Average, sparse_as_dense=False, gradient_predivide_factor=1.0):
    """`gradients` (any nest of tensors, IndexedSlices and None) combined over the processes:
    the dense ones in one reduction per dtype; None stays None on every process."""
    if gradient_predivide_factor != 1.0 and op is not Average:
        raise ValueError("gradient_predivide_factor applies to op=Average only")
    leaves = structures.leaves(gradients)
    scales = dict(
        prescale_factor=1.0 / gradient_predivide_factor, postscale_factor=gradient_predivide_factor
    )
    if sparse_as_dense or collectives.is_symbolic(
        [g.values for g in leaves if isinstance(g, IndexedSlices)]
    ):  # (compiled code has no allgather: there IndexedSlices are densified)
        leaves = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g for g in leaves]
    dense = [k for k, g in enumerate(leaves) if g is not None and not isinstance(g, IndexedSlices)]
    reduced = list(leaves)
    for k, value in zip(
        dense, collectives.grouped_allreduce([leaves[k] for k in dense], op=op, **scales)
    ):
        reduced[k] = value
    for k, g in enumerate(leaves):
        if isinstance(g, IndexedSlices):
            reduced[k] = collectives.allreduce(g, op=op, **scales)
    return structures.rebuilt(gradients, iter(reduced))


class DistributedGradientTape:
    """A GradientTape whose `gradient` returns the gradients averaged (or combined by `op`)
    over all processes. Wrap a tape after recording, as with Horovod:

        with tt.GradientTape() as tape:
            loss = ...
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)

    or record with one directly: `with hvd.DistributedGradientTape(tt.GradientTape()) as tape:`.
    Everything else (watch, jacobian, ...) is the wrapped tape's.
    """

    def __init__(
        self, gradtape, *, sparse_as_dense=False, op=Average, gradient_predivide_factor=1.0
    ):
        communicator()
        self._tape = gradtape
        self._reduction = dict(
            op=op,
            sparse_as_dense=sparse_as_dense,
            gradient_predivide_factor=gradient_predivide_factor,
        )

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        gradients = self._tape.gradient(
            target,
            sources,
            output_gradients=output_gradients,
            unconnected_gradients=unconnected_gradients,
        )
        return reduce_gradients(gradients, **self._reduction)

    def __enter__(self):
        self._tape.__enter__()
        return self

    def __exit__(self, *exception):
        return self._tape.__exit__(*exception)

    def __getattr__(self, name):
        return getattr(self._tape, name)


def DistributedOptimizer(
    optimizer,
    name=None,
    sparse_as_dense=False,
    backward_passes_per_step=1,
    op=Average,
    gradient_predivide_factor=1.0,
    average_aggregated_gradients=False,
):
    """An optimizer like `optimizer` (an instance of the same class, with its state and
    hyperparameters) whose `apply_gradients` first combines the gradients over all
    processes. With `backward_passes_per_step` k > 1, gradients add up locally and are
    reduced and applied on every k-th call only (divided by k when
    `average_aggregated_gradients`), as Horovod's local gradient aggregation."""
    communicator()
    if backward_passes_per_step < 1:
        raise ValueError(
            f"backward_passes_per_step must be 1 or more, not {backward_passes_per_step}"
        )
    cls = type(type(optimizer).__name__, (_Distributed, type(optimizer)), {})
    distributed = object.__new__(cls)
    distributed.__dict__.update(optimizer.__dict__)
    if name is not None:
        distributed.name = name
    distributed._distributed = _Reduction(
        dict(
            op=op,
            sparse_as_dense=sparse_as_dense,
            gradient_predivide_factor=gradient_predivide_factor,
        ),
        backward_passes_per_step,
        average_aggregated_gradients,
    )
    return distributed


class _Reduction:
    """A DistributedOptimizer's reduction options and the state of its local aggregation."""

    def __init__(self, options, passes, average_passes):
        self.options = options
        self.passes = passes
        self.average_passes = average_passes
        self.count = 0
        self.sums = None  # the gradients added up since the last update
        self.updates = {}  # (variables, gradient kinds, hyperparameters) -> compiled update


class _Distributed:
    """The methods a DistributedOptimizer adds to its optimizer's class."""

    def apply_gradients(self, grads_and_vars):
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        state = self._distributed
        grads = [g for g, _ in pairs]
        if state.passes > 1:
            if collectives.is_symbolic(grads):
                raise TypeError(
                    "DistributedOptimizer: backward_passes_per_step adds gradients up between "
                    "calls; call apply_gradients outside tt.function (a compiled function may "
                    "return the gradients)"
                )
            grads = self._aggregated(grads)
            if grads is None:
                return self.iterations
        variables = [v for _, v in pairs]
        return self._update(reduce_gradients(grads, **state.options), variables)

    def _aggregated(self, grads):
        """The sum of this and the previous passes' gradients on every k-th call, else None."""
        state = self._distributed
        grads = [convert_to_tensor(g)._value for g in grads]
        state.sums = grads if state.sums is None else [s + g for s, g in zip(state.sums, grads)]
        state.count += 1
        if state.count < state.passes:
            return None
        sums, state.sums, state.count = state.sums, None, 0
        if state.average_passes:
            sums = [s / np.asarray(state.passes, s.dtype) for s in sums]
        return [Tensor(s) for s in sums]

    def _update(self, grads, variables):
        """The wrapped optimizer's update, as one compiled call where all gradients are dense
        (IndexedSlices take the eager path)."""
        apply = super().apply_gradients
        if any(isinstance(g, IndexedSlices) for g in grads) or collectives.is_symbolic(grads):
            return apply(zip(grads, variables))  # (inside a trace: part of the caller's graph)
        key = (
            tuple(id(v) for v in variables),
            tuple((k, v) for k, v in sorted(vars(self).items()) if type(v) in (int, float, bool)),
        )
        update = self._distributed.updates.get(key)
        if update is None:

            def step(gradients):
                apply(zip(gradients, variables))

            update = self._distributed.updates[key] = function(step)
        update(grads)
        return self.iterations
