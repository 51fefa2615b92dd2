"""PNG encoding of 8-bit images, with zlib and struct only (no imaging library).

`encode(pixels)` takes a uint8 array [height, width, channels] (1: gray, 2: gray and alpha,
3: RGB, 4: RGBA) and returns the bytes of a PNG file: signature, IHDR, IDAT chunks, IEND.
It makes the choices libpng makes with its defaults (which TensorFlow's encoder uses), so the
files are the same byte for byte: each row gets the filter whose output has the smallest sum
of absolute values (read as signed bytes), ties to the lower filter type; the zlib stream is
deflated at level 6 with the "filtered" strategy and the smallest window that holds the
data, written in IDAT chunks of at most 8192 bytes. (The deflate stream is the one Python's
zlib makes: where its version and TensorFlow's (1.3.1) end blocks differently, as they may
on large noisy images, the bytes differ; the pixels do not.)

>>> pixels = np.arange(6, dtype=np.uint8).reshape(1, 2, 3)
>>> data = encode(pixels)
>>> data[:8] == SIGNATURE, bool((decode(data) == pixels).all())
(True, True)
"""

import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
COLOR_TYPES = {1: 0, 2: 4, 3: 2, 4: 6}  # channels -> PNG color type
_CHUNK_SIZE = 8192  # libpng's default zlib buffer: the largest IDAT it writes


def encode(pixels):
    """The PNG file (bytes) of `pixels`, a uint8 array [height, width, channels]."""
    pixels = np.asarray(pixels)
    if pixels.dtype != np.uint8 or pixels.ndim != 3 or pixels.shape[2] not in COLOR_TYPES:
        raise ValueError(
            f"a PNG holds uint8 pixels [height, width, 1 to 4 channels], not {pixels.dtype}"
            f"{list(pixels.shape)}"
        )
    height, width, channels = pixels.shape
    header = struct.pack(">IIBBBBB", width, height, 8, COLOR_TYPES[channels], 0, 0, 0)
    rows = pixels.reshape(height, width * channels)
    compressed = _deflate(b"".join(_filter_rows(rows, channels)))
    idats = [
        _chunk(b"IDAT", compressed[at : at + _CHUNK_SIZE])
        for at in range(0, len(compressed), _CHUNK_SIZE)
    ]
    return SIGNATURE + _chunk(b"IHDR", header) + b"".join(idats) + _chunk(b"IEND", b"")


def _chunk(kind, data):
    crc = zlib.crc32(kind + data)
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _filter_rows(rows, bpp):
    """Each row as its filter type byte and filtered bytes (libpng's adaptive choice)."""
    previous = np.zeros(rows.shape[1], np.int16)
    for row in rows.astype(np.int16):
        left = np.concatenate([np.zeros(bpp, np.int16), row[:-bpp]])[: len(row)]
        upper_left = np.concatenate([np.zeros(bpp, np.int16), previous[:-bpp]])[: len(row)]
        candidates = (
            row,
            row - left,
            row - previous,
            row - (left + previous) // 2,
            row - _paeth(left, previous, upper_left),
        )
        outputs = [(c & 0xFF).astype(np.uint8) for c in candidates]
        sums = [int(np.minimum(o, 256 - o.astype(np.int16)).sum()) for o in outputs]
        best = sums.index(min(sums))  # (the first of equal sums: the lowest filter type)
        yield bytes([best]) + outputs[best].tobytes()
        previous = row


def _paeth(a, b, c):
    """The Paeth predictor of each byte from its left (a), upper (b) and upper-left (c)."""
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _deflate(data):
    """The zlib stream of `data`, deflated in the smallest window that holds it (as libpng
    does for small images, header included)."""
    window_bits = 15
    if len(data) <= 16384:
        while len(data) + 262 <= 1 << (window_bits - 1):
            window_bits -= 1
    compressor = zlib.compressobj(6, zlib.DEFLATED, max(window_bits, 9), 8, zlib.Z_FILTERED)
    stream = bytearray(compressor.compress(data) + compressor.flush())
    _narrow_window(stream, len(data))
    return bytes(stream)


def _narrow_window(stream, size):
    """Rewrite the zlib header to state the smallest window (256 bytes and up) that covers
    `size` bytes, and its check bits to match: a decoder then needs no more memory."""
    if size > 16384 or stream[0] & 0x0F != 8 or stream[0] >> 4 > 7:
        return
    info = stream[0] >> 4
    while info > 0 and size <= 1 << (info + 7):
        info -= 1
    stream[0] = info << 4 | 8
    flags = stream[1] & 0xE0
    stream[1] = flags + 31 - ((stream[0] << 8) + flags) % 31


def decode(data):
    """The pixels of a PNG that `encode` wrote (8-bit, not interlaced): uint8
    [height, width, channels]. For tests and tools; not a general PNG reader."""
    if data[:8] != SIGNATURE:
        raise ValueError("not a PNG file")
    at, chunks = 8, {}
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        chunks.setdefault(kind, []).append(data[at + 8 : at + 8 + length])
        at += 12 + length
    width, height, depth, color_type = struct.unpack(">IIBB", chunks[b"IHDR"][0][:10])
    channels = {v: k for k, v in COLOR_TYPES.items()}[color_type]
    raw = zlib.decompress(b"".join(chunks[b"IDAT"]))
    stride = width * channels
    rows, previous = [], np.zeros(stride, np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int32)
        row = np.zeros(stride, np.int32)
        for x in range(stride):  # each byte depends on the one decoded before it
            a = row[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            predictor = (0, a, b, (a + b) // 2, int(_paeth(np.int32(a), b, c)))[kind]
            row[x] = (line[x] + predictor) & 0xFF
        rows.append(row)
        previous = row
    return np.array(rows, np.uint8).reshape(height, width, channels)
