"""The compression of TFRecord files: `tt.io.TFRecordOptions`, and the streams that deflate a
file as it is written and inflate it as it is read, with zlib (in Python's standard library).

"GZIP" is gzip's format (members one after another, as TensorFlow reads them), "ZLIB" zlib's
(what follows its end is ignored, as there); "" or None, none. zlib's defaults give the same
bytes as TensorFlow's writer. An inflate error is TensorFlow's DataLossError ("inflate()
failed with error -3: incorrect header check"); a stream cut short just ends, and the record
it cuts is what raises (tracer/records/framing.py).
"""

import re
import zlib

from tracer.errors import DataLossError, NotFoundError

NAMES = ("", "ZLIB", "GZIP")  # the compression_type names, by TensorFlow's enum values
_WINDOW_BITS = {"ZLIB": zlib.MAX_WBITS, "GZIP": 16 + zlib.MAX_WBITS}
_CHUNK = 1 << 16  # compressed bytes read at a time


class TFRecordOptions:
    """How a TFRecord file is compressed: `compression_type` "", "ZLIB" or "GZIP" (or None,
    or TensorFlow's enum value 0, 1, 2); `compression_level`, `window_bits`, `mem_level` and
    `compression_strategy` are zlib's (None: its defaults); the buffer sizes and
    `flush_mode` are accepted and left to Python's zlib.

    >>> TFRecordOptions(compression_type="GZIP").compression_type
    'GZIP'
    """

    compression_type_map = dict(enumerate(NAMES))

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None, output_buffer_size=None, window_bits=None, compression_level=None, compression_method=None, mem_level=None, compression_strategy=None):  # fmt: skip
        self.compression_type = _checked(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """The compression name of `options`: TFRecordOptions, a name, an enum value or None."""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return _checked(options)


def compression_name(compression_type):
    """`compression_type` (a name, an enum value, None, or TFRecordOptions) as a name of
    NAMES; ValueError for another."""
    return TFRecordOptions.get_compression_type_string(compression_type)


def _checked(compression_type):
    if compression_type is None:
        return ""
    if isinstance(compression_type, int) and not isinstance(compression_type, bool):
        if 0 <= compression_type < len(NAMES):
            return NAMES[compression_type]
    elif isinstance(compression_type, str) and compression_type in NAMES:
        return compression_type
    raise ValueError(f'Not a valid compression_type: "{compression_type}"')


def open_file(path, mode):
    """The file at `path` opened in binary `mode`; NotFoundError as TensorFlow's where it or
    its folder is missing."""
    try:
        return open(path, mode)
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None


class Inflating:
    """The decompressed bytes of the binary file object `raw`, read as `read(count)` asks.

    It inflates ahead, up to 64 KiB at a time, as TensorFlow's reader does: a small file's
    damaged gzip or zlib trailer is found before its first record is given."""

    def __init__(self, raw, compression):
        self._raw, self._bits = raw, _WINDOW_BITS[compression]
        self._several = compression == "GZIP"  # gzip members may follow one another
        self._inflate = zlib.decompressobj(self._bits)
        self._pending = b""  # compressed bytes read and not yet given to zlib
        self._out, self._at = b"", 0  # inflated bytes, and how many of them were read
        self._ended = False

    def read(self, count):
        """Up to `count` bytes (fewer only at the end of the stream)."""
        parts = [self._out[self._at :]]
        have = len(parts[0])
        while have < count and not self._ended:
            parts.append(self._inflated())
            have += len(parts[-1])
        self._out = b"".join(parts) if len(parts) > 1 else parts[0]
        data, self._at = self._out[:count], min(count, len(self._out))
        return data

    def _inflated(self):
        """The next inflated bytes (b"" once the stream ends, whole or cut short)."""
        try:
            while not self._ended:
                data = self._inflate.decompress(self._input(), _CHUNK)
                self._pending = self._inflate.unconsumed_tail
                if self._inflate.eof:
                    self._next_member()
                elif not data and not self._pending and not self._more():
                    self._ended = True  # cut short: what was inflated is all there is
                if data:
                    return data
            return b""
        except zlib.error as error:
            raise inflate_error(error) from None

    def _input(self):
        if not self._pending:
            self._more()
        pending, self._pending = self._pending, b""
        return pending

    def _more(self):
        """Read more compressed bytes into `_pending`; False at the file's end."""
        self._pending += self._raw.read(_CHUNK)
        return bool(self._pending)

    def _next_member(self):
        # NOTE: at a member's end zlib's unconsumed_tail may still hold what unused_data
        # holds (Python 3.11): the input left is unused_data alone
        self._pending = self._inflate.unused_data
        if not self._several or not (self._pending or self._more()):
            self._ended = True
            return
        self._inflate = zlib.decompressobj(self._bits)

    def close(self):
        self._raw.close()


def inflate_error(error):
    """zlib's error as TensorFlow's DataLossError."""
    found = re.match(r"Error (-?\d+) while decompressing data: (.*)", str(error))
    text = f"inflate() failed with error {found[1]}: {found[2]}" if found else str(error)
    return DataLossError(None, None, text)


class Deflating:
    """A binary file object whose writes are compressed into the file object `raw`."""

    def __init__(self, raw, compression, options):
        self._raw = raw

        def given(name, default):
            value = getattr(options, name, None)
            return default if value is None else value

        bits = given("window_bits", zlib.MAX_WBITS)
        self._deflate = zlib.compressobj(
            given("compression_level", zlib.Z_DEFAULT_COMPRESSION),
            zlib.DEFLATED,
            bits + 16 if compression == "GZIP" else bits,
            given("mem_level", zlib.DEF_MEM_LEVEL),
            given("compression_strategy", zlib.Z_DEFAULT_STRATEGY),
        )

    def write(self, data):
        self._raw.write(self._deflate.compress(data))

    def flush(self):
        """What was written, readable in the file from now (a zlib sync flush)."""
        self._raw.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
        self._raw.flush()

    def close(self):
        try:
            self._raw.write(self._deflate.flush())
        finally:
            self._raw.close()
