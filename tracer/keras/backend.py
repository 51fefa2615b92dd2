"""`tt.keras.backend`: what programs written for Keras call most: `clear_session` (layer
names start again from `dense`), `epsilon`, `floatx` and `image_data_format` (tracer's fixed
float32 and channels_last)."""

from tracer.keras import naming


def clear_session(free_memory=True):
    """Start the layer names again (`dense`, `dense_1`, ...), as Keras's clear_session does;
    the models already made keep theirs."""
    naming.reset()


def epsilon():
    """The fuzz factor Keras's losses and layers add (1e-7)."""
    return 1e-7


def floatx():
    """The default float type: float32."""
    return "float32"


def image_data_format():
    """The layout of images tracer's layers take: channels_last."""
    return "channels_last"
