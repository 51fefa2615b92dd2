"""`Model.summary()`: Keras 3's table of a model's layers, their output shapes and their
parameter counts, then the totals and their memory.

The table is drawn as Keras draws it on a stream that is not a terminal: box-drawing
characters, columns of fixed widths (three for a model whose layers run in a line, four
with "Connected to" for a functional model), text wrapped at spaces, and a word longer than
its column cut with "…". A layer's output shape is the one of its first call (None for the
batch axis when the model was built from an input shape); "?" for a layer not yet built.
"""

import numpy as np

HEADERS = ("Layer (type)", "Output Shape", "Param #", "Connected to")
WIDTHS = {3: (31, 22, 13), 4: (19, 17, 10, 17)}  # the text's width in each column
RIGHT_ALIGNED = 2  # the Param # column


def summary_lines(model):
    """The lines `Model.summary()` prints."""
    rows = model._summary_rows()
    columns = 4 if any(row[4] is not None for row in rows) else 3
    widths = WIDTHS[columns]
    lines = [f'Model: "{model.name}"']
    lines.append(_rule("┏", "━", "┳", "┓", widths))
    lines += _cells(HEADERS[:columns], widths, "┃")
    lines.append(_rule("┡", "━", "╇", "┩", widths))
    for i, (name, kind, shape, params, connected) in enumerate(rows):
        if i:
            lines.append(_rule("├", "─", "┼", "┤", widths))
        texts = [f"{name} ({kind})", shape, params, ", ".join(connected or ["-"])]
        lines += _cells(texts[:columns], widths, "│")
    lines.append(_rule("└", "─", "┴", "┘", widths))
    trainable = _count(model.trainable_weights)
    everything = _count(model.weights)
    optimizer = _optimizer_weights(model)
    total = (everything[0] + optimizer[0], everything[1] + optimizer[1])
    lines.append(f" Total params: {_amount(total)}")
    lines.append(f" Trainable params: {_amount(trainable)}")
    untrained = (everything[0] - trainable[0], everything[1] - trainable[1])
    lines.append(f" Non-trainable params: {_amount(untrained)}")
    if optimizer[0]:
        lines.append(f" Optimizer params: {_amount(optimizer)}")
    return lines


def layer_rows(layers):
    """Rows (name, class name, output shape, parameter count, None) of layers that run one
    after another."""
    return [
        (layer.name, type(layer).__name__, shape_text(layer), params_text(layer), None)
        for layer in layers
    ]


def shape_text(layer):
    shape = getattr(layer, "_output_shape", None)
    if shape is None:
        return "?"
    return _shape(shape)


def params_text(layer):
    if not getattr(layer, "built", True):
        return "0 (unbuilt)"
    count = layer.count_params() if hasattr(layer, "count_params") else 0
    return f"{count:,}"


def _shape(shape):
    """Keras's text of an output shape: `(None, 4)`, `(None)` for one axis; of several
    outputs, their texts in the list or tuple they came in (`[(None, 4), (None, 2)]`)."""
    if isinstance(shape, list):
        return "[" + ", ".join(_shape(s) for s in shape) + "]"
    if shape and all(isinstance(s, tuple) for s in shape):
        return "(" + ", ".join(_shape(s) for s in shape) + ")"
    dims = [d if isinstance(d, (int, np.integer)) else None for d in shape]
    return "(" + ", ".join(str(d) for d in dims) + ")"


def _rule(left, line, cross, right, widths):
    return left + cross.join(line * (w + 2) for w in widths) + right


def _cells(texts, widths, bar):
    """The lines of one table row: each cell's text wrapped to its column."""
    wrapped = [_wrap(text, width) for text, width in zip(texts, widths)]
    height = max(len(w) for w in wrapped)
    lines = []
    for k in range(height):
        parts = []
        for column, (cell, width) in enumerate(zip(wrapped, widths)):
            text = cell[k] if k < len(cell) else ""
            parts.append(text.rjust(width) if column == RIGHT_ALIGNED else text.ljust(width))
        lines.append(bar + bar.join(f" {p} " for p in parts) + bar)
    return lines


def _wrap(text, width):
    """`text` in lines of at most `width`, broken at spaces; a longer word is cut with …"""
    lines, current = [], ""
    for word in text.split(" "):
        if len(word) > width:
            word = word[: width - 1] + "…"
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(current)
    return lines


def _count(variables):
    """(parameters, bytes) of `variables`."""
    sizes = [(int(np.prod(v.shape)), v.dtype.itemsize) for v in variables]
    return sum(n for n, _ in sizes), sum(n * b for n, b in sizes)


def _optimizer_weights(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None or not optimizer._slots:
        return 0, 0
    rate = [optimizer.learning_rate] if optimizer._schedule is None else []  # Keras's variables
    return _count([*optimizer.variables(), *rate])


def _amount(counted):
    parameters, size = counted
    return f"{parameters:,} ({_memory(size)})"


def _memory(size):
    """Keras's readable size: B, KB, MB, ... in steps of 1024, two decimals."""
    units = ["B", "KB", "MB", "GB", "TB"]
    while size >= 1024 and len(units) > 1:
        size /= 1024
        units.pop(0)
    return f"{size:.2f} {units[0]}"
