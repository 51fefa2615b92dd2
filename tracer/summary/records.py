"""TFRecord framing, as TensorBoard's event files use it: tracer/records/framing.py's, shared
with `tt.io.TFRecordWriter` and `tt.data.TFRecordDataset` (the names here are its).

>>> frame(b"").hex(" ")
'00 00 00 00 00 00 00 00 29 03 98 07 d8 ea 82 a2'
"""

from tracer.records.framing import crc32c, frame, masked_crc32c, read_records

__all__ = ["crc32c", "frame", "masked_crc32c", "read_records"]
