"""`Model.summary()`: Keras 3's table of a model's layers, their output shapes and their
parameter counts, then the totals and their memory.

The table is drawn as Keras draws it with rich on a stream that is not a terminal:
box-drawing characters, columns (three for a model whose layers run in a line, four with
"Connected to" for a functional model, one more with `show_trainable`) whose widths Keras
cuts from its line length at `positions` and rich then narrows to fit that length, text
wrapped at spaces, and a word longer than its column cut with "…". A layer's output shape is
the one of its first call (None for the batch axis when the model was built from an input
shape); "?" for a layer not yet built.
"""

import numpy as np

HEADERS = ("Layer (type)", "Output Shape", "Param #", "Connected to")
# Keras's line length and column positions (fractions of it), by the number of columns
LINE_LENGTHS = {3: 88, 4: 108}
POSITIONS = {3: (0.45, 0.80, 1.0), 4: (0.3, 0.56, 0.74, 1.0)}
RIGHT_ALIGNED = 2  # the Param # column
NOT_A_TERMINAL = 80  # the columns Python's shutil.get_terminal_size gives a pipe


def summary_text(model, line_length=None, positions=None, show_trainable=False):
    """What `Model.summary()` prints, its lines ending in newlines (what Keras gives a
    `print_fn`, in one call)."""
    return "".join(
        f"{line}\n" for line in summary_lines(model, line_length, positions, show_trainable)
    )


def summary_lines(model, line_length=None, positions=None, show_trainable=False):
    """The lines `Model.summary()` prints."""
    rows = model._summary_rows()
    columns = 4 if any(row[4] is not None for row in rows) else 3
    widths = column_widths(columns, line_length, positions, show_trainable)
    headers = [*HEADERS[:columns], *(["Trainable"] if show_trainable else [])]
    lines = [f'Model: "{model.name}"']
    lines.append(_rule("┏", "━", "┳", "┓", widths))
    lines += _cells(headers, widths, "┃", show_trainable)
    lines.append(_rule("┡", "━", "╇", "┩", widths))
    for i, (name, kind, shape, params, connected, trainable) in enumerate(rows):
        if i:
            lines.append(_rule("├", "─", "┼", "┤", widths))
        texts = [f"{name} ({kind})", shape, params, ", ".join(connected or ["-"])][:columns]
        lines += _cells(texts + [trainable] * show_trainable, widths, "│", show_trainable)
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


def column_widths(columns, line_length=None, positions=None, show_trainable=False):
    """The width of each column's text. Keras cuts its line length (88 or 108, 12 more with
    a "Trainable" column, at most 76) at `positions`; rich, asked
    for a table of that width with columns of those widths, takes their padding (1 on each
    side) and borders out of the line, as evenly as rounding allows, the first columns
    first (rich's ratio_reduce).

    >>> column_widths(3, line_length=76), column_widths(4, line_length=76)
    ([31, 22, 13], [19, 17, 10, 17])
    """
    default = LINE_LENGTHS[columns]
    positions = list(positions or POSITIONS[columns])
    if show_trainable:
        default += 12
        positions = [p * 0.90 for p in positions] + [1.0]
    # NOTE: Keras takes at most the terminal's width less 4, 76 on a stream that is not a
    # terminal; tracer draws as there, the same wherever it runs (its text has no styles)
    line_length = line_length or min(default, NOT_A_TERMINAL - 4)
    padded, current = [], 0
    for position in positions:
        width = int(position * line_length) - current
        if width < 4:
            raise ValueError("Insufficient console width to print summary.")
        padded.append(width + 2)
        current += width
    excess = sum(padded) - (line_length - len(padded) - 1)  # less the borders
    for k, width in enumerate(padded):
        share = min(width, round(excess / (len(padded) - k))) if excess > 0 else 0
        padded[k], excess = width - share, excess - share
    return [width - 2 for width in padded]


def layer_rows(layers):
    """Rows (name, class name, output shape, parameter count, None, trainable mark) of
    layers that run one after another."""
    return [
        (
            layer.name,
            type(layer).__name__,
            shape_text(layer),
            params_text(layer),
            None,
            trainable_mark(layer),
        )
        for layer in layers
    ]


def trainable_mark(layer):
    """The "Trainable" column's: Y or N for a layer with weights, - for one without."""
    if not getattr(layer, "weights", None):
        return "-"
    return "Y" if layer.trainable else "N"


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


def _cells(texts, widths, bar, centred_last=False):
    """The lines of one table row: each cell's text wrapped to its column (Param # to the
    right, a last "Trainable" column centred as rich centres: the odd space on the right)."""
    wrapped = [_wrap(text, width) for text, width in zip(texts, widths)]
    height = max(len(w) for w in wrapped)
    lines = []
    for k in range(height):
        parts = []
        for column, (cell, width) in enumerate(zip(wrapped, widths)):
            text = cell[k] if k < len(cell) else ""
            if centred_last and column == len(widths) - 1:
                left = (width - len(text)) // 2
                parts.append(" " * left + text.ljust(width - left))
            elif column == RIGHT_ALIGNED:
                parts.append(text.rjust(width))
            else:
                parts.append(text.ljust(width))
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
    # (a LossScaleOptimizer's slots are its wrapped optimizer's)
    updating = getattr(optimizer, "inner_optimizer", optimizer)
    if optimizer is None or not updating._slots:
        return 0, 0
    return _count(optimizer.variables)


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
