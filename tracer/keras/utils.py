"""`tt.keras.utils`: Keras's utilities that tracer has."""

from tracer.keras.downloads import get_file
from tracer.keras.progbar import Progbar

__all__ = ["Progbar", "get_file"]
