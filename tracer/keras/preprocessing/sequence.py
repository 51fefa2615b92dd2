"""`tt.keras.preprocessing.sequence`: Keras's legacy sequence module's `pad_sequences`,
`skipgrams` and `make_sampling_table` (tracer/keras/sequence_utils.py); its
TimeseriesGenerator is not in tracer."""

from tracer.keras.sequence_utils import make_sampling_table, pad_sequences, skipgrams

__all__ = ["make_sampling_table", "pad_sequences", "skipgrams"]
