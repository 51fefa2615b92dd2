"""Protocol buffers by hand, for the few messages tracer reads and writes without the
protobuf package: the wire format (wire.py), messages declared in Python with protobuf's
API (message.py, containers.py), their text format (text_format.py, map_order.py), and
`tf.train.Example` read straight from its bytes for parsing (example_reader.py)."""
