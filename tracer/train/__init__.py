"""`tt.train`: checkpoints of models and optimizers, as `tf.train` names them."""

from tracer.train.checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CheckpointReader,
    list_variables,
    load_checkpoint,
    load_variable,
)
from tracer.train.files import CheckpointError, latest_checkpoint
from tracer.train.manager import CheckpointManager

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointManager",
    "CheckpointReader",
    "CheckpointLoadStatus",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]
