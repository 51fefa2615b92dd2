"""A compiled model's optimizer state in Keras 3's layout: the group `optimizer/vars` holds
`iterations`, `learning_rate` (not where the rate is a schedule, as Keras has no variable
for it then), then the slot variables, in the order Keras makes them:

    Adam      m, v of the first trainable variable, then m, v of the second, ...; with
              amsgrad, then v_hat of each
    SGD       momentum of each variable (none without momentum)
    RMSprop   velocity of each variable, then momentum of each, then average_gradient of each
    Adagrad   accumulator of each variable
    Nadam     momentum, velocity of each variable, then the momentum factors' product

so a model trained in tracer continues training in Keras from the same state, and back.
A slot tracer has not made yet (no step taken) is written as its starting value.
"""

import numpy as np

# Keras's order: groups made one after the other; within a group, the slots of one variable
_SLOT_GROUPS = {
    "Adam": (("m", "v"), ("v_hat",)),
    "SGD": (("momentum",),),
    "RMSprop": (("velocity",), ("momentum",), ("average_gradient",)),
    "Adagrad": (("accumulator",),),
    "AdamW": (("m", "v"), ("v_hat",)),
    "Adamax": (("momentum", "norm"),),
    "Adadelta": (("accumulated_grad", "accumulated_delta_var"),),
    "Lion": (("momentum",),),
    "Nadam": (("momentum", "velocity"),),
    "Ftrl": (("accumulator", "linear"),),
}
# optimizer variables after the slots, each a scalar: (attribute, its first value)
_TRAILING = {"Nadam": (("u_product", 1.0),)}


def arrays(model):
    """The arrays of `optimizer/vars` for `model`'s optimizer, or None when the model has
    no optimizer whose layout tracer knows."""
    optimizer, layout = _layout(model)
    if layout is None:
        return None
    values = [np.asarray(optimizer.iterations.numpy(), np.int64)]
    if optimizer._schedule is None:
        values.append(np.asarray(optimizer.learning_rate.numpy(), np.float32))  # as Keras's
    starts = optimizer._every_slot_start()
    for variable, name in layout:
        entry = optimizer._slots.get(id(variable))
        if entry is not None and entry[0] is variable:
            values.append(np.asarray(entry[1][name].numpy()))
        else:
            values.append(np.full(variable.shape, starts[name], variable.dtype.as_numpy_dtype))
    dtype = layout[0][0].dtype.as_numpy_dtype if layout else np.float32
    for name, start in _TRAILING.get(type(optimizer).__name__, ()):
        value = getattr(optimizer, name)
        values.append(np.asarray(start if value is None else value.numpy(), dtype))
    return values


def restore(model, stored):
    """Set `model`'s optimizer state from the datasets of `optimizer/vars`; returns a
    warning (a str) instead when the file's state does not fit the optimizer."""
    optimizer, layout = _layout(model)
    if layout is None:
        return (
            "the file holds optimizer variables, which tracer does not load for "
            f"{type(getattr(model, 'optimizer', None)).__name__}"
        )
    scalars = 1 if optimizer._schedule is not None else 2  # iterations (and the rate)
    trailing = _TRAILING.get(type(optimizer).__name__, ())
    if len(stored) != scalars + len(layout) + len(trailing):
        return (
            f"skipped loading the optimizer's variables: {type(optimizer).__name__} has "
            f"{scalars + len(layout) + len(trailing)}, the file holds {len(stored)}"
        )
    shapes = [()] * scalars + [tuple(variable.shape) for variable, _ in layout]
    shapes += [()] * len(trailing)
    if any(tuple(d.shape) != shape for d, shape in zip(stored, shapes)):
        return "skipped loading the optimizer's variables: their shapes differ from the model's"
    optimizer.iterations.assign(int(stored[0][()]))
    if scalars == 2:
        optimizer.learning_rate = float(stored[1][()])
    for (variable, name), dataset in zip(layout, stored[scalars:]):
        slot = optimizer._slots_of(variable)[name]
        slot.assign(dataset[()].astype(slot.dtype.as_numpy_dtype))
    for (name, _), dataset in zip(trailing, stored[scalars + len(layout) :]):
        getattr(optimizer, f"_restore_{name}")(dataset[()])
    return None


def _layout(model):
    """`(optimizer, [(model variable, slot name), ...] in Keras's order)`, or a layout of
    None for a model without a known optimizer."""
    from tracer.optimizers import Optimizer

    optimizer = getattr(model, "optimizer", None)
    groups = _SLOT_GROUPS.get(type(optimizer).__name__)
    if not isinstance(optimizer, Optimizer) or groups is None:
        return optimizer, None
    if optimizer.use_ema:  # Keras makes the moving averages before the update's slots
        groups = (("average",), *groups)
    made = set(optimizer._every_slot_start())
    variables = model.trainable_variables
    layout = [
        (variable, name)
        for group in groups
        for variable in variables
        for name in group
        if name in made
    ]
    return optimizer, layout
