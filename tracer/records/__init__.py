"""TFRecord files: the framing of records (framing.py, with its CRC32C in crc32c.py), their
compression (compression.py), `tt.io.TFRecordWriter` (writer.py) and the reading that
`tt.data.TFRecordDataset` and `tt.compat.v1.io.tf_record_iterator` share (reading.py)."""
