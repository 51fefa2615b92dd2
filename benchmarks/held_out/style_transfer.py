"""Held-out: neural style transfer as TensorFlow's "Neural style transfer" tutorial writes it,
on small synthetic images: load_img (tf.io.read_file, tf.image.decode_image,
convert_image_dtype, resize to a longest side of 64 with `max(shape)` over a tensor), a
feature extractor `tf.keras.Model([vgg.input], outputs)` over named intermediate layers,
gram_matrix with tf.linalg.einsum, the StyleContentModel(tf.keras.models.Model) class
returning dicts, style_content_loss with tf.add_n over the dicts, a tf.Variable image
optimized by Adam(0.02, beta_1=0.99, epsilon=1e-1) in a @tf.function() train_step with
opt.apply_gradients([(grad, image)]) and image.assign(clip_0_1(image)); then the total
variation part: high_pass_x_y, tf.image.sobel_edges, tf.image.total_variation, and the
train_step with total_variation_weight * tf.image.total_variation(image).

The pretrained VGG19 (tf.keras.applications.VGG19, which downloads its weights) is replaced
by a small functional conv net of VGG's structure, block1_conv1 ... block5_pool, on
(None, None, 3) inputs, with weights from numpy; vgg19.preprocess_input is written out by
hand (RGB to BGR, minus the ImageNet means), as it computes. The images are PNG files
written from numpy arrays (with zlib) and read back by the tutorial's load_img."""

import os
import struct
import tempfile
import time
import zlib

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
folder = tempfile.mkdtemp()


def write_png(path, array):
    """An (H, W, 3) uint8 array as an 8-bit RGB PNG file."""
    height, width, _ = array.shape

    def chunk(tag, data):
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    raw = b"".join(b"\x00" + row.tobytes() for row in array)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header))
        f.write(chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


# The "photo": a smooth colour gradient with a bright disc and a dark bar; the "painting":
# coloured diagonal stripes with a checker overlay.
yy, xx = np.mgrid[0:60, 0:80] / 60.0
photo = np.stack([0.2 + 0.6 * xx / 1.33, 0.3 + 0.5 * yy, 0.5 + 0.3 * np.sin(3 * xx)], -1)
photo[(yy - 0.5) ** 2 + (xx - 0.6) ** 2 < 0.06] = [0.95, 0.85, 0.3]
photo[(yy > 0.7) & (yy < 0.8) & (xx > 0.2)] *= 0.2
photo = np.clip(photo + rng.normal(0, 0.02, photo.shape), 0, 1)
sy, sx = np.mgrid[0:90, 0:72]
stripes = np.sin((sy + sx) * 0.45)[..., None] * np.array([0.4, -0.3, 0.2])
checker = (((sy // 9) + (sx // 9)) % 2)[..., None] * np.array([0.1, 0.2, -0.15])
painting = np.clip(0.5 + stripes + checker + rng.normal(0, 0.03, (90, 72, 3)), 0, 1)
content_path = os.path.join(folder, "photo.png")
style_path = os.path.join(folder, "painting.png")
write_png(content_path, np.round(photo * 255).astype(np.uint8))
write_png(style_path, np.round(painting * 255).astype(np.uint8))


def tensor_to_image(tensor):
    tensor = tensor * 255
    tensor = np.array(tensor, dtype=np.uint8)
    if np.ndim(tensor) > 3:
        assert tensor.shape[0] == 1
        tensor = tensor[0]
    return tensor  # the tutorial's PIL.Image.fromarray(tensor)


def load_img(path_to_img):
    max_dim = 64
    img = tf.io.read_file(path_to_img)
    img = tf.image.decode_image(img, channels=3)
    img = tf.image.convert_image_dtype(img, tf.float32)

    shape = tf.cast(tf.shape(img)[:-1], tf.float32)
    long_dim = max(shape)
    scale = max_dim / long_dim

    new_shape = tf.cast(shape * scale, tf.int32)

    img = tf.image.resize(img, new_shape)
    img = img[tf.newaxis, :]
    return img


content_image = load_img(content_path)
style_image = load_img(style_path)
print(
    which,
    "content",
    tuple(content_image.shape),
    f"{float(tf.reduce_sum(content_image)):.4f}",
    "style",
    tuple(style_image.shape),
    f"{float(tf.reduce_sum(style_image)):.4f}",
    f"{float(tf.reduce_sum(style_image * tf.range(3, dtype=tf.float32))):.4f}",
)


def preprocess_input(x):
    # tf.keras.applications.vgg19.preprocess_input ("caffe"): RGB to BGR, minus ImageNet's means
    x = x[..., ::-1]
    return x - tf.constant([103.939, 116.779, 123.68])


def VGG19():
    # Stands in for tf.keras.applications.VGG19(include_top=False, weights='imagenet').
    inputs = tf.keras.layers.Input(shape=(None, None, 3))
    x = inputs
    for block, (filters, convs) in enumerate([(8, 2), (16, 2), (24, 4), (32, 4), (32, 4)], 1):
        for i in range(1, convs + 1):
            x = tf.keras.layers.Conv2D(
                filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{i}"
            )(x)
        x = tf.keras.layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    model = tf.keras.Model(inputs, x, name="vgg19")
    weights = []
    # Kernels He-normal times 0.5 (with the full He scale, the features are so large that
    # Adam's first steps overshoot and the optimization is chaotic: in TensorFlow alone, a
    # learning rate 1e-6 larger changes the loss by 1e-3 within 2 steps), small biases.
    for w in model.get_weights():
        if len(w.shape) == 4:
            fan_in = w.shape[0] * w.shape[1] * w.shape[2]
            std = 0.5 * np.sqrt(2.0 / fan_in)
            weights.append(rng.normal(0.0, std, w.shape).astype(np.float32))
        else:
            weights.append(rng.normal(0.0, 0.05, w.shape).astype(np.float32))
    model.set_weights(weights)
    return model


vgg = VGG19()
print(
    which,
    "vgg layers",
    " ".join(layer.name for layer in vgg.layers[1:8]),
    "...",
    vgg.layers[-1].name,
)

content_layers = ["block5_conv2"]

style_layers = ["block1_conv1", "block2_conv1", "block3_conv1", "block4_conv1", "block5_conv1"]

num_content_layers = len(content_layers)
num_style_layers = len(style_layers)


def vgg_layers(layer_names):
    """Creates a VGG model that returns a list of intermediate output values."""
    vgg.trainable = False

    outputs = [vgg.get_layer(name).output for name in layer_names]

    model = tf.keras.Model([vgg.input], outputs)
    return model


style_extractor = vgg_layers(style_layers)
style_outputs = style_extractor(style_image * 255)

# Look at the statistics of each layer's output
for name, output in zip(style_layers, style_outputs):
    print(
        which,
        name,
        "shape",
        output.numpy().shape,
        f"min {output.numpy().min():.5g} max {output.numpy().max():.5g}",
        f"mean {output.numpy().mean():.5g}",
    )


def gram_matrix(input_tensor):
    result = tf.linalg.einsum("bijc,bijd->bcd", input_tensor, input_tensor)
    input_shape = tf.shape(input_tensor)
    num_locations = tf.cast(input_shape[1] * input_shape[2], tf.float32)
    return result / (num_locations)


class StyleContentModel(tf.keras.models.Model):
    def __init__(self, style_layers, content_layers):
        super(StyleContentModel, self).__init__()
        self.vgg = vgg_layers(style_layers + content_layers)
        self.style_layers = style_layers
        self.content_layers = content_layers
        self.num_style_layers = len(style_layers)
        self.vgg.trainable = False

    def call(self, inputs):
        "Expects float input in [0,1]"
        inputs = inputs * 255.0
        preprocessed_input = preprocess_input(inputs)
        outputs = self.vgg(preprocessed_input)
        style_outputs, content_outputs = (
            outputs[: self.num_style_layers],
            outputs[self.num_style_layers :],
        )

        style_outputs = [gram_matrix(style_output) for style_output in style_outputs]

        content_dict = {
            content_name: value for content_name, value in zip(self.content_layers, content_outputs)
        }

        style_dict = {
            style_name: value for style_name, value in zip(self.style_layers, style_outputs)
        }

        return {"content": content_dict, "style": style_dict}


extractor = StyleContentModel(style_layers, content_layers)

results = extractor(tf.constant(content_image))

for name, output in sorted(results["style"].items()):
    print(
        which,
        "style",
        name,
        output.numpy().shape,
        f"min {output.numpy().min():.5g} max {output.numpy().max():.5g}",
        f"mean {output.numpy().mean():.5g}",
    )

for name, output in sorted(results["content"].items()):
    print(
        which,
        "content",
        name,
        output.numpy().shape,
        f"min {output.numpy().min():.5g} max {output.numpy().max():.5g}",
        f"mean {output.numpy().mean():.5g}",
    )
print(which, "trainable variables", len(extractor.trainable_variables), len(extractor.variables))

style_targets = extractor(style_image)["style"]
content_targets = extractor(content_image)["content"]

image = tf.Variable(content_image)


def clip_0_1(image):
    return tf.clip_by_value(image, clip_value_min=0.0, clip_value_max=1.0)


opt = tf.keras.optimizers.Adam(learning_rate=0.02, beta_1=0.99, epsilon=1e-1)

style_weight = 1e-2
content_weight = 1e4


def style_content_loss(outputs):
    style_outputs = outputs["style"]
    content_outputs = outputs["content"]
    style_loss = tf.add_n(
        [
            tf.reduce_mean((style_outputs[name] - style_targets[name]) ** 2)
            for name in style_outputs.keys()
        ]
    )
    style_loss *= style_weight / num_style_layers

    content_loss = tf.add_n(
        [
            tf.reduce_mean((content_outputs[name] - content_targets[name]) ** 2)
            for name in content_outputs.keys()
        ]
    )
    content_loss *= content_weight / num_content_layers
    loss = style_loss + content_loss
    return loss


@tf.function()
def train_step(image):
    with tf.GradientTape() as tape:
        outputs = extractor(image)
        loss = style_content_loss(outputs)

    grad = tape.gradient(loss, image)
    opt.apply_gradients([(grad, image)])
    image.assign(clip_0_1(image))


def checksum(image):
    pixels = tensor_to_image(image)
    v = image.numpy()
    return (
        f"sum {v.sum():.4f} sq {(v**2).sum():.4f} [0,20,30] "
        f"{' '.join(f'{c:.5f}' for c in v[0, 20, 30])} uint8 sum {int(pixels.astype(np.int64).sum())}"
    )


print(which, "initial loss", f"{float(style_content_loss(extractor(image))):.5g}")
start = time.perf_counter()
train_step(image)
first_call = time.perf_counter() - start
train_step(image)
train_step(image)
print(
    which,
    "after 3 steps",
    f"loss {float(style_content_loss(extractor(image))):.5g}",
    checksum(image),
)

epochs = 2
steps_per_epoch = 20

step = 0
times = []
for n in range(epochs):
    for m in range(steps_per_epoch):
        step += 1
        start = time.perf_counter()
        train_step(image)
        times.append(time.perf_counter() - start)
    print(
        which,
        "Train step: {}".format(step),
        f"loss {float(style_content_loss(extractor(image))):.5g}",
        checksum(image),
    )


def high_pass_x_y(image):
    x_var = image[:, :, 1:, :] - image[:, :, :-1, :]
    y_var = image[:, 1:, :, :] - image[:, :-1, :, :]

    return x_var, y_var


x_deltas, y_deltas = high_pass_x_y(content_image)
print(
    which,
    "content deltas",
    tuple(x_deltas.shape),
    tuple(y_deltas.shape),
    f"{float(tf.reduce_sum(tf.abs(x_deltas))):.4f} {float(tf.reduce_sum(tf.abs(y_deltas))):.4f}",
)
x_deltas, y_deltas = high_pass_x_y(image)
print(
    which,
    "styled deltas",
    f"{float(tf.reduce_sum(tf.abs(x_deltas))):.4f} {float(tf.reduce_sum(tf.abs(y_deltas))):.4f}",
)

sobel = tf.image.sobel_edges(content_image)
horizontal = clip_0_1(sobel[..., 0] / 4 + 0.5)
vertical = clip_0_1(sobel[..., 1] / 4 + 0.5)
print(
    which,
    "sobel",
    tuple(sobel.shape),
    f"{float(tf.reduce_sum(tf.abs(sobel))):.4f} {float(tf.reduce_sum(sobel[..., 0])):.4f}",
    f"{float(sobel[0, 10, 20, 1, 0]):.5f} {float(sobel[0, 10, 20, 2, 1]):.5f}",
    f"clipped {float(tf.reduce_sum(horizontal)):.4f} {float(tf.reduce_sum(vertical)):.4f}",
)


def total_variation_loss(image):
    x_deltas, y_deltas = high_pass_x_y(image)
    return tf.reduce_sum(tf.abs(x_deltas)) + tf.reduce_sum(tf.abs(y_deltas))


print(
    which,
    "total variation",
    f"{total_variation_loss(image).numpy():.4f}",
    np.round(tf.image.total_variation(image).numpy(), 4),
)

total_variation_weight = 30


@tf.function()
def train_step(image):
    with tf.GradientTape() as tape:
        outputs = extractor(image)
        loss = style_content_loss(outputs)
        loss += total_variation_weight * tf.image.total_variation(image)

    grad = tape.gradient(loss, image)
    opt.apply_gradients([(grad, image)])
    image.assign(clip_0_1(image))


opt = tf.keras.optimizers.Adam(learning_rate=0.02, beta_1=0.99, epsilon=1e-1)
image = tf.Variable(content_image)

start = time.perf_counter()
train_step(image)
first_call_tv = time.perf_counter() - start
step = 1
tv_times = []
for n in range(epochs):
    for m in range(steps_per_epoch):
        step += 1
        start = time.perf_counter()
        train_step(image)
        tv_times.append(time.perf_counter() - start)
    print(
        which,
        "TV train step: {}".format(step),
        f"loss {float(style_content_loss(extractor(image))):.5g}",
        f"tv {float(tf.image.total_variation(image)[0]):.4f}",
        checksum(image),
    )
print(which, "optimizer iterations", int(opt.iterations.numpy()))
print(
    which,
    f"first call (with tracing) {first_call:.2f} s, step {np.median(times) * 1e3:.2f} ms;",
    f"with total variation: first call {first_call_tv:.2f} s, step {np.median(tv_times) * 1e3:.2f} ms",
)
