"""`tt.train`: checkpoints of models and optimizers, as `tf.train` names them."""

from tracer.train.checkpoint import Checkpoint, LoadStatus, list_variables, load_variable
from tracer.train.files import CheckpointError, latest_checkpoint
from tracer.train.manager import CheckpointManager

__all__ = [
    "Checkpoint",
    "CheckpointError",
    "CheckpointManager",
    "LoadStatus",
    "latest_checkpoint",
    "list_variables",
    "load_variable",
]
