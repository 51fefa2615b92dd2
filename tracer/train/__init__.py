"""`tt.train`: checkpoints of models and optimizers, and the `Example` messages of training
data (tracer/train/example.py), as `tf.train` names them."""

from tracer.train.checkpoint import (
    Checkpoint,
    CheckpointLoadStatus,
    CheckpointReader,
    list_variables,
    load_checkpoint,
    load_variable,
)
from tracer.train.example import (
    BytesList,
    Example,
    Feature,
    FeatureList,
    FeatureLists,
    Features,
    FloatList,
    Int64List,
    SequenceExample,
)
from tracer.train.files import CheckpointError, latest_checkpoint
from tracer.train.manager import CheckpointManager

__all__ = [
    "BytesList",
    "Checkpoint",
    "CheckpointError",
    "CheckpointManager",
    "CheckpointReader",
    "CheckpointLoadStatus",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
    "latest_checkpoint",
    "list_variables",
    "load_checkpoint",
    "load_variable",
]
