"""tt.io.decode_png, encode_png and tt.image.decode_image against TensorFlow 2.21's decoding
of PNG files its encode_png wrote (tests/data/image/png, made by the script there), other
PNG formats written here by hand (palette, transparency, low bit depths, every filter), and
the errors for files that are not PNGs or are corrupt."""

import json
import os
import struct
import zlib

import numpy as np
import pytest

import tracer as tt

HERE = os.path.join(os.path.dirname(__file__), "data", "image", "png")
CASES = json.load(open(os.path.join(HERE, "cases.json")))


def _file(name):
    with open(os.path.join(HERE, name), "rb") as file:
        return file.read()


@pytest.mark.parametrize("name", ["rgb", "rgba", "gray"])
@pytest.mark.parametrize("channels", [0, 1, 3, 4])
def test_decodes_tensorflows_files_as_tensorflow(name, channels):
    image = tt.io.decode_png(_file(f"{name}.png"), channels=channels)
    want = np.array(CASES[f"{name}/{channels}"])
    assert image.dtype == tt.uint8 and image.shape == want.shape
    # RGB with alpha to gray: libpng's rounding there is not tracer's, one unit at most
    tolerance = 1 if (name, channels) == ("rgba", 1) else 0
    np.testing.assert_allclose(image.numpy(), want, atol=tolerance, rtol=0)


def test_sixteen_bits_and_floats():
    wide = _file("rgb16.png")
    assert tt.io.decode_png(wide, dtype=tt.uint16).numpy().tolist() == CASES["rgb16/uint16"]
    assert tt.io.decode_png(wide).numpy().tolist() == CASES["rgb16/uint8"]
    floats = tt.image.decode_image(_file("rgb.png"), channels=3, dtype=tt.float32)
    np.testing.assert_allclose(floats.numpy(), CASES["image/float"], rtol=1e-6)


def test_encode_then_decode_gives_the_image_back():
    rng = np.random.default_rng(0)
    for shape, dtype in (((7, 9, 4), np.uint8), ((3, 5, 1), np.uint8), ((4, 4, 3), np.uint16), ((2, 6, 2), np.uint8)):  # fmt: skip
        image = rng.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
        data = tt.io.encode_png(image)
        back = tt.io.decode_png(data, dtype=tt.as_dtype(dtype.__name__))
        np.testing.assert_array_equal(back.numpy(), image)
    encoded = tt.function(lambda image: tt.io.encode_png(image))(np.zeros((2, 3, 3), np.uint8))
    assert tt.io.decode_png(encoded).numpy().tolist() == np.zeros((2, 3, 3)).tolist()


def _png(width, height, depth, color, rows, chunks=()):
    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, 0))
    extra = b"".join(chunk(kind, body) for kind, body in chunks)
    body = chunk(b"IDAT", zlib.compress(b"".join(rows)))
    return b"\x89PNG\r\n\x1a\n" + header + extra + body + chunk(b"IEND", b"")


def test_palettes_transparency_low_depths_and_filters():
    palette = (b"PLTE", bytes([255, 0, 0, 0, 255, 0, 0, 0, 255]))
    indexed = _png(3, 1, 8, 3, [b"\x00\x02\x01\x00"], [palette, (b"tRNS", bytes([10, 20]))])
    np.testing.assert_array_equal(
        tt.io.decode_png(indexed).numpy()[0], [[0, 0, 255, 255], [0, 255, 0, 20], [255, 0, 0, 10]]
    )
    two_bit = _png(4, 1, 2, 0, [b"\x00" + bytes([0b00011011])])
    assert tt.io.decode_png(two_bit).numpy()[0, :, 0].tolist() == [0, 85, 170, 255]
    # Sub, Up, Average and Paeth rows of a gray image whose samples are all 7 more than
    # the one before or above
    rows = [b"\x01" + bytes([7, 7, 7]), b"\x02" + bytes([21, 21, 21]), b"\x03" + bytes([35, 25, 25]), b"\x04" + bytes([21, 7, 7])]  # fmt: skip
    filtered = tt.io.decode_png(_png(3, 4, 8, 0, rows)).numpy()[..., 0]
    want = np.zeros((4, 3), np.int64)
    for y, row in enumerate(rows):
        kind, values = row[0], list(row[1:])
        for x, v in enumerate(values):
            left = want[y, x - 1] if x else 0
            up = want[y - 1, x] if y else 0
            corner = want[y - 1, x - 1] if x and y else 0
            if kind == 1:
                predicted = left
            elif kind == 2:
                predicted = up
            elif kind == 3:
                predicted = (left + up) // 2
            else:
                estimate = left + up - corner
                options = [(abs(estimate - left), 0, left), (abs(estimate - up), 1, up), (abs(estimate - corner), 2, corner)]  # fmt: skip
                predicted = min(options)[2]
            want[y, x] = (v + predicted) % 256
    np.testing.assert_array_equal(filtered, want)


INTERLACED = np.load(os.path.join(HERE, "interlaced.npz"))


@pytest.mark.parametrize(
    "name", ["rgb8", "gray16", "palette", "gray1", "rgba_small", "gray_one_pixel"]
)
def test_interlaced_files_are_the_pixels_they_were_made_of(name):
    """Adam7 files ImageMagick wrote (make_interlaced.py): 8 and 16 bits, a 4-bit palette,
    1 bit, images too small for some passes; TensorFlow decodes each to the same pixels."""
    pixels = INTERLACED[f"{name}/pixels"]
    np.testing.assert_array_equal(INTERLACED[f"{name}/tf"], pixels)
    dtype = tt.uint16 if pixels.dtype == np.uint16 else tt.uint8
    decoded = tt.io.decode_png(_file(f"interlaced_{name}.png"), dtype=dtype)
    assert decoded.dtype == dtype
    np.testing.assert_array_equal(decoded.numpy(), pixels)


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        (b"not a png", "signature"),
        (_file("rgb.png")[:40], "ends inside|runs past"),
        (_file("rgb.png")[:30] + b"\x00" + _file("rgb.png")[31:], "CRC"),
        (_png(2, 2, 8, 2, [b"\x00" * 7]), "shorter"),
        (_png(1, 1, 8, 2, [b"\x07\x00\x00\x00"]), "filter type 7"),
        (_png(0, 5, 8, 2, []), "0 x 5 pixels"),
    ],
)
def test_files_that_are_no_png_are_refused(contents, message):
    with pytest.raises(tt.errors.InvalidArgumentError, match=message):
        tt.io.decode_png(contents)


def test_other_formats_and_traced_files():
    with pytest.raises(NotImplementedError, match="JPEG"):
        tt.image.decode_image(b"\xff\xd8\xff\xe0" + bytes(20))
    # contents known only when the function runs (TF 2.21 decodes them): it runs as Python
    decoded = tt.function(lambda data: tt.io.decode_png(data))(tt.constant(_file("rgb.png")))
    np.testing.assert_array_equal(decoded.numpy(), tt.io.decode_png(_file("rgb.png")).numpy())
