"""PNG files to images and back, as TensorFlow's DecodePng and EncodePng (libpng) give them:
`tt.io.decode_png`, `encode_png`, and `tt.image.decode_image` of a PNG.

The bytes are never trusted: the signature, every chunk's length and CRC, the header's
fields and the image data's size are checked before they are used, and a file that fails
is an InvalidArgumentError naming what is wrong. Decoding reads 8- and 16-bit grayscale,
gray with alpha, RGB, RGBA and palette images, interlaced (Adam7: seven reduced images,
each filtered on its own) or not, and converts to the
`channels` asked for as libpng does for TensorFlow: gray to RGB repeats it, an alpha channel
is added as opaque or dropped, RGB to gray is (9798 R + 19235 G + 3735 B) >> 15 (libpng's
integer form of 0.299, 0.587, 0.114), and 16-bit samples decoded as uint8 keep their high
byte. The file decides the image's shape, so decoding needs the file's bytes known (eagerly,
or a constant of a traced function); encoding is a string op, which a compiled module hands
back to Python.
"""

import struct
import zlib

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.core import apply
from tracer.ops.string_ops import string_op

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MAX_PIXELS = 2**29  # a header asking for more than this is refused, not allocated
_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}  # color type -> samples a pixel (a palette's index)
_BIT_DEPTHS = {0: (1, 2, 4, 8, 16), 2: (8, 16), 3: (1, 2, 4, 8), 4: (8, 16), 6: (8, 16)}


def _invalid(message):
    return InvalidArgumentError(None, None, f"decode_png: {message}")


def _chunks(data):
    """(type, body) of each chunk after the signature, their lengths and CRCs checked."""
    offset = len(SIGNATURE)
    while offset < len(data):
        if offset + 12 > len(data):
            raise _invalid("the file ends inside a chunk's header")
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        end = offset + 12 + length
        if end > len(data):
            raise _invalid(f"chunk {kind!r} of {length} bytes runs past the file's end")
        body = data[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", data[end - 4 : end])
        if zlib.crc32(kind + body) != crc:
            raise _invalid(f"chunk {kind!r} has a bad CRC: the file is corrupt")
        yield kind, body
        offset = end
        if kind == b"IEND":
            return
    raise _invalid("no IEND chunk: the file is cut short")


def read_png(data):
    """The samples of a PNG file's bytes: an array [height, width, channels] of uint8 or
    uint16 (the file's bit depth; depths below 8 scaled to 8 bits as libpng does)."""
    if not isinstance(data, bytes) or not data.startswith(SIGNATURE):
        raise _invalid("not a PNG file (its signature is missing)")
    header, palette, transparency, compressed = None, None, None, []
    for kind, body in _chunks(data):
        if kind == b"IHDR":
            if len(body) != 13:
                raise _invalid("IHDR must be 13 bytes")
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3) if len(body) % 3 == 0 else None
        elif kind == b"tRNS":
            transparency = body
        elif kind == b"IDAT":
            compressed.append(body)
    if header is None:
        raise _invalid("no IHDR chunk")
    width, height, depth, color, compression, filtering, interlace = header
    if color not in _SAMPLES or depth not in _BIT_DEPTHS[color]:
        raise _invalid(f"color type {color} with bit depth {depth} is not a PNG format")
    if compression or filtering:
        raise _invalid("unknown compression or filter method")
    if interlace not in (0, 1):
        raise _invalid(f"unknown interlace method {interlace}")
    if not 0 < width * height <= _MAX_PIXELS:
        raise _invalid(f"an image of {width} x {height} pixels")
    samples = _SAMPLES[color]
    passes = _ADAM7 if interlace else ((0, 0, 1, 1),)
    sizes = [_pass_size(width, height, *where) for where in passes]
    row_bytes = [(w * samples * depth + 7) // 8 for w, _ in sizes]
    total = sum(h * (n + 1) for (w, h), n in zip(sizes, row_bytes) if w)
    try:
        raw = zlib.decompressobj().decompress(b"".join(compressed), total + 1)
    except zlib.error as error:
        raise _invalid(f"the image data does not decompress: {error}") from None
    if len(raw) < total:
        raise _invalid("the image data is shorter than the header's size")
    image = np.zeros((height, width, samples), np.uint16 if depth == 16 else np.uint8)
    offset = 0
    for (row, column, down, across), (w, h), n in zip(passes, sizes, row_bytes):
        if w == 0:
            continue  # a pass with no pixels has no rows in the data
        rows = _unfiltered(raw[offset : offset + h * (n + 1)], h, n, max(1, samples * depth // 8))
        image[row::down, column::across] = _samples(rows, w, samples, depth, scaled=color != 3)
        offset += h * (n + 1)
    if color != 3:
        return image
    indices = image[..., 0]
    if palette is None or indices.max(initial=0) >= len(palette):
        raise _invalid("a palette image without a palette entry for each index")
    pixels = palette[indices]
    if transparency is None:
        return pixels
    alpha = np.full(len(palette), 255, np.uint8)
    alpha[: len(transparency)] = np.frombuffer(transparency[: len(palette)], np.uint8)
    return np.concatenate([pixels, alpha[indices][..., None]], axis=-1)


# Adam7's seven passes: (first row, first column, row step, column step)
_ADAM7 = (
    (0, 0, 8, 8),
    (0, 4, 8, 8),
    (4, 0, 8, 4),
    (0, 2, 4, 4),
    (2, 0, 4, 2),
    (0, 1, 2, 2),
    (1, 0, 2, 1),
)


def _pass_size(width, height, row, column, down, across):
    """(width, height) of the pixels a pass holds, (0, 0) where it holds none."""
    w, h = -(-(width - column) // across), -(-(height - row) // down)
    return (w, h) if w > 0 and h > 0 else (0, 0)


def _unfiltered(raw, height, row_bytes, step):
    """The rows of the image data with PNG's per-row filters undone."""
    rows = np.zeros((height, row_bytes), np.uint8)
    previous = np.zeros(row_bytes, np.int32)
    for y in range(height):
        start = y * (row_bytes + 1)
        kind = raw[start]
        row = np.frombuffer(raw, np.uint8, row_bytes, start + 1).astype(np.int32)
        if kind == 2:  # Up (0, None, leaves the row as it is)
            row = (row + previous) & 255
        elif kind in (1, 3, 4):
            row = _sequential(row, previous, step, kind)
        elif kind != 0:
            raise _invalid(f"row {y} has an unknown filter type {kind}")
        rows[y] = row
        previous = row
    return rows


def _sequential(row, above, step, kind):
    """Undo the Sub (1), Average (3) or Paeth (4) filter, which read the bytes before."""
    out = row.copy()
    for i in range(len(out)):
        left = out[i - step] if i >= step else 0
        upper_left = above[i - step] if i >= step else 0
        if kind == 1:
            predicted = left
        elif kind == 3:
            predicted = (left + above[i]) >> 1
        else:
            estimate = left + above[i] - upper_left
            near_left, near_up = abs(estimate - left), abs(estimate - above[i])
            near_corner = abs(estimate - upper_left)
            if near_left <= near_up and near_left <= near_corner:
                predicted = left
            elif near_up <= near_corner:
                predicted = above[i]
            else:
                predicted = upper_left
        out[i] = (out[i] + predicted) & 255
    return out


def _samples(rows, width, samples, depth, scaled=True):
    """The samples of the rows: depths below 8 scaled to 8 bits (palette indices not)."""
    height = rows.shape[0]
    if depth == 16:
        values = rows.view(">u2").astype(np.uint16)
        return values[:, : width * samples].reshape(height, width, samples)
    if depth == 8:
        return rows[:, : width * samples].reshape(height, width, samples)
    bits = np.unpackbits(rows, axis=1)[:, : width * samples * depth]
    values = bits.reshape(height, width * samples, depth).dot(1 << np.arange(depth)[::-1])
    scale = 255 // (2**depth - 1) if scaled else 1
    return (values * scale).astype(np.uint8).reshape(height, width, samples)


def converted(pixels, channels, dtype):
    """`pixels` with `channels` (0: the file's) and `dtype` (uint8 or uint16), as libpng
    converts them for TensorFlow."""
    if pixels.dtype == np.uint16 and dtype == np.uint8:
        pixels = (pixels >> 8).astype(np.uint8)
    elif pixels.dtype == np.uint8 and dtype == np.uint16:
        pixels = pixels.astype(np.uint16) * 257
    have = pixels.shape[-1]
    if channels in (0, have):
        return pixels
    color, alpha = (pixels[..., :-1], pixels[..., -1:]) if have in (2, 4) else (pixels, None)
    if channels in (1, 2) and color.shape[-1] == 3:
        weights = np.array([9798, 19235, 3735], np.int64)
        color = ((color.astype(np.int64) * weights).sum(-1, keepdims=True) >> 15).astype(
            pixels.dtype
        )
    elif channels in (3, 4) and color.shape[-1] == 1:
        color = np.repeat(color, 3, axis=-1)
    if channels in (1, 3):
        return color
    if alpha is None:
        alpha = np.full(color.shape[:-1] + (1,), np.iinfo(pixels.dtype).max, pixels.dtype)
    return np.concatenate([color, alpha], axis=-1)


def decode_png(contents, channels=0, dtype=dtypes.uint8, name=None):
    """The image [height, width, channels] of a PNG file's bytes (known now: eagerly, or a
    constant of a traced function), uint8 or uint16."""
    data = length_value(as_tensor(contents), "tt.io.decode_png's contents")
    data = np.asarray(data)[()] if np.ndim(data) == 0 else None
    if not isinstance(data, bytes):
        raise ValueError(
            "tt.io.decode_png: contents must be one PNG file's bytes (a scalar string)"
        )
    channels = int(channels)
    if channels not in (0, 1, 2, 3, 4):
        raise ValueError(f"tt.io.decode_png: channels must be 0, 1, 2, 3 or 4, not {channels}")
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"tt.io.decode_png: dtype must be uint8 or uint16, not {dtype.name}")
    return as_tensor(converted(read_png(data), channels, dtype.as_numpy_dtype))


def _encode_kernel(image, compression):
    image = np.asarray(image)
    height, width, channels = image.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    depth = 16 if image.dtype == np.uint16 else 8
    samples = image.astype(">u2").tobytes() if depth == 16 else image.tobytes()
    stride = width * channels * depth // 8
    raw = b"".join(b"\x00" + samples[y * stride : (y + 1) * stride] for y in range(height))

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0)
    body = zlib.compress(raw, compression if compression >= 0 else 6)
    png = SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    return np.array(png, dtype=object)


def _infer_encode(attrs, image):
    if image.dtype not in (dtypes.uint8, dtypes.uint16):
        raise TypeError(f"image must be uint8 or uint16, not {image.dtype.name}")
    if len(image.shape) != 3 or image.shape[-1] not in (1, 2, 3, 4):
        raise ValueError(
            f"image must be [height, width, 1 to 4 channels], not of shape {image.shape}"
        )
    return (), dtypes.string


ENCODE_PNG = string_op("encode_png", _infer_encode, _encode_kernel)


def encode_png(image, compression=-1, name=None):
    """The bytes of a PNG file of `image` [height, width, channels] (uint8 or uint16):
    gray, gray with alpha, RGB or RGBA by its 1 to 4 channels; zlib's `compression` level
    (-1: its default). Any PNG decoder gives back the image's samples."""
    compression = int(compression)
    if not -1 <= compression <= 9:
        raise ValueError(f"tt.io.encode_png: compression must be in [-1, 9], not {compression}")
    return apply(ENCODE_PNG, (as_tensor(image),), {"compression": compression})


_FORMATS = {b"\xff\xd8\xff": "JPEG", b"GIF8": "GIF", b"BM": "BMP"}


def decode_image(contents, channels=None, dtype=dtypes.uint8, name=None, expand_animations=True):
    """The image of a file's bytes, by its format: a PNG as decode_png decodes it, then
    converted to `dtype` as convert_image_dtype converts (floats in [0, 1]). tracer has no
    JPEG, GIF or BMP decoder: such a file is a NotImplementedError naming its format."""
    from tracer.ops.image_ops import convert_image_dtype

    data = length_value(as_tensor(contents), "tt.image.decode_image's contents")
    data = np.asarray(data)[()] if np.ndim(data) == 0 else None
    if isinstance(data, bytes) and not data.startswith(SIGNATURE):
        for start, kind in _FORMATS.items():
            if data.startswith(start):
                raise NotImplementedError(
                    f"tt.image.decode_image: the file is a {kind}; tracer decodes PNG files only"
                )
    dtype = dtypes.as_dtype(dtype)
    decoded_as = dtypes.uint16 if dtype == dtypes.uint16 else dtypes.uint8
    image = decode_png(contents, channels or 0, decoded_as)
    return image if dtype == decoded_as else convert_image_dtype(image, dtype)
