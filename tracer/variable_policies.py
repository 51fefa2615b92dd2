"""`tt.VariableSynchronization` and `tt.VariableAggregation`: how a Variable would be kept in
step across replicas, as TensorFlow's distribution strategies read them.

tracer runs on one replica, so these change nothing in what a Variable computes; a Variable
keeps them (`v.synchronization`, `v.aggregation`) for the code that asks, and one rule of
TensorFlow's holds: a variable synchronized ON_READ (a metric's count, say) is not trainable
unless `trainable=True` is given.

>>> v = tt.Variable(0.0, synchronization=tt.VariableSynchronization.ON_READ)
>>> v.trainable, v.aggregation
(False, <VariableAggregation.NONE: 0>)
"""

import enum


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies are made equal: AUTO (the strategy chooses),
    NONE (one copy), ON_WRITE (at each update), ON_READ (when it is read across replicas)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How the replicas' updates of a distributed variable are combined: NONE, SUM, MEAN,
    ONLY_FIRST_REPLICA."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def checked_policies(synchronization, aggregation, trainable, name):
    """(synchronization, aggregation, trainable) of a Variable made with these arguments: a
    ValueError for a mode that is not one of the enums' (a string too, as TensorFlow's), and
    `trainable` None made True, or False for ON_READ."""
    if synchronization is None:
        synchronization = VariableSynchronization.AUTO
    if aggregation is None:
        aggregation = VariableAggregation.NONE
    if not isinstance(synchronization, VariableSynchronization):
        raise ValueError(
            f"Invalid variable synchronization mode: {synchronization} for variable: {name}"
        )
    if not isinstance(aggregation, VariableAggregation):
        raise ValueError(f"Invalid variable aggregation mode: {aggregation} for variable: {name}")
    if trainable is None:
        trainable = synchronization is not VariableSynchronization.ON_READ
    return synchronization, aggregation, bool(trainable)
