"""tt.keras.utils.image_dataset_from_directory on a folder of PNG files, against what Keras
3.15 on TensorFlow 2.21 gave for the same folder (the images' sums and labels, a resized
grayscale image), and its refusals: JPEG files, which tracer does not decode, and the
aspect-ratio options."""

import os

import numpy as np
import pytest

import tracer as tt


@pytest.fixture
def pets(tmp_path):
    """cats/0..2.png and dogs/0..2.png: 4 x 6 RGB images of (0, 1, ..., 71) * (k + 1) mod 256."""
    for name in ("cats", "dogs"):
        os.makedirs(tmp_path / name)
        for k in range(3):
            image = (np.arange(72).reshape(4, 6, 3) * (k + 1) % 256).astype(np.uint8)
            (tmp_path / name / f"{k}.png").write_bytes(tt.io.encode_png(image).numpy())
    return str(tmp_path)


def test_png_images_as_keras_loads_them(pets, capsys):
    dataset = tt.keras.utils.image_dataset_from_directory(
        pets, image_size=(4, 6), batch_size=4, shuffle=False
    )
    assert capsys.readouterr().out == "Found 6 files belonging to 2 classes.\n"
    assert dataset.class_names == ["cats", "dogs"]
    batches = [
        (x.dtype, tuple(x.shape), float(tt.reduce_sum(x)), y.numpy().tolist()) for x, y in dataset
    ]
    assert batches == [(tt.float32, (4, 4, 6, 3), 17892.0, [0, 0, 0, 1]), (tt.float32, (2, 4, 6, 3), 12780.0, [1, 1])]  # fmt: skip
    gray = tt.keras.utils.image_dataset_from_directory(
        pets, image_size=(2, 3), batch_size=8, shuffle=False, color_mode="grayscale", verbose=False
    )
    images, _ = next(iter(gray))
    assert images.shape == (6, 2, 3, 1)
    np.testing.assert_allclose(images.numpy()[0, :, :, 0], [[10.5, 16.5, 22.5], [46.5, 52.5, 58.5]])


def test_what_tracer_does_not_decode_or_do(pets):
    with open(os.path.join(pets, "cats", "photo.jpg"), "wb") as file:
        file.write(b"\xff\xd8\xff\xe0" + bytes(30))
    dataset = tt.keras.utils.image_dataset_from_directory(
        pets, batch_size=8, shuffle=False, verbose=False
    )
    with pytest.raises(NotImplementedError, match="JPEG"):
        list(dataset)
    with pytest.raises(NotImplementedError, match="aspect_ratio"):
        tt.keras.utils.image_dataset_from_directory(pets, crop_to_aspect_ratio=True)
