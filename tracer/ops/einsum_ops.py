"""`tt.einsum`: Einstein summation, as in `tf.einsum`, composed of existing primitives.

An equation is read once into labels per axis (`_parse`, `_label_axes`); then each operand
loses what only it has, and the operands are contracted two at a time until one is left:

    repeated labels in one operand   'ii->i'        diag_part (a view), once per repeat
    a label nowhere else             'ij->i'        reduce_sum over its axes
    labels summed over by two        'bij,bjk'      one batched matmul: each operand transposed
                                                    to (batch, free, summed) and reshaped to
                                                    (batch, rows, inner) (the BLAS in C; an
                                                    operand already laid out the other way
                                                    round is read through matmul's transpose
                                                    flag, not copied)
    nothing summed                   'i,j->ij'      a broadcast mul (fuses with its readers)
    no free labels                   'bi,bi->b'     mul then reduce_sum, one fused loop
    the result                       'ij->ji'       a transpose to the output's order

The axes under '...' get labels of their own ('.0', '.1', ... from the left of the
broadcast shape); an operand's size-1 axis there that another operand stretches is dropped
first (its values are the same all along), so broadcasting needs no op of its own.

With more than two operands the pair contracted next is the cheapest one (the product of the
sizes of the labels it involves, then the smaller result, then the leftmost): a greedy order,
like TensorFlow's default (opt_einsum's 'greedy'); for two operands there is no choice.
Gradients, batching and C come from the primitives.
"""

from itertools import combinations

from tracer.ir import dims
from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensors
from tracer.ops.core import apply
from tracer.ops.linalg_ops import matmul
from tracer.ops.matrix_ops import DIAG_PART

ELLIPSIS = "..."


def einsum(equation, *inputs, **kwargs):
    """Einstein summation over `inputs` as `equation` says, with TensorFlow's rules: labels
    are letters; an output given after '->' (else the labels that appear once, in
    alphabetical order, after the '...' axes); '...' broadcasts; a label repeated within an
    operand takes its diagonal; labels absent from the output are summed over.

    >>> a, b = tt.ones((2, 3)), tt.ones((3, 4))
    >>> tt.einsum("ij,jk->ik", a, b).shape
    TensorShape([2, 4])
    >>> float(tt.einsum("ii", tt.eye(3)))  # the trace
    3.0
    """
    unknown = set(kwargs) - {"name", "optimize"}
    if unknown:
        raise TypeError(f"einsum got an unexpected keyword argument {sorted(unknown)[0]!r}")
    if not isinstance(equation, str):
        raise TypeError(f"einsum: the equation must be a string, not {type(equation).__name__}")
    if not inputs:
        raise ValueError(f"einsum: the equation {equation!r} is given no operands")
    tensors = list(as_tensors(*inputs))
    for k, t in enumerate(tensors[1:], 1):
        if t.dtype != tensors[0].dtype:
            raise TypeError(
                f"einsum: operand 0 is {tensors[0].dtype.name} but operand {k} is "
                f"{t.dtype.name}; all operands must have the same dtype"
            )
    subscripts, output = _parse(equation, len(tensors))
    labels, sizes = _label_axes(equation, subscripts, tensors)
    output = _output_labels(equation, output, labels, sizes)
    operands = [
        _prepare(t, own, sizes, _needed(output, labels[:k] + labels[k + 1 :]))
        for k, (t, own) in enumerate(zip(tensors, labels))
    ]
    while len(operands) > 1:
        i, j = _cheapest_pair(operands, output, sizes)
        rest = [labels for k, (_, labels) in enumerate(operands) if k not in (i, j)]
        operands[i] = _contract(*operands[i], *operands[j], _needed(output, rest))
        del operands[j]
    result, have = _sum_unneeded(*operands[0], set(output))
    return _permute(result, [have.index(label) for label in output])


# --- reading the equation -------------------------------------------------------------------


def _parse(equation, count):
    """([labels of each operand], labels of the output or None when implicit); each a list of
    letters and ELLIPSIS. Whitespace is ignored, as TensorFlow does."""
    text = "".join(equation.split())
    if text.count("->") > 1:
        raise ValueError(f"einsum: the equation {equation!r} has more than one '->'")
    left, arrow, right = text.partition("->")
    terms = left.split(",")
    if len(terms) != count:
        raise ValueError(
            f"einsum: the equation {equation!r} has subscripts for {len(terms)} operand(s), "
            f"but {count} operand(s) were given"
        )
    subscripts = [_subscript(equation, term) for term in terms]
    return subscripts, (_subscript(equation, right) if arrow else None)


def _subscript(equation, term):
    head, dots, tail = term.partition(ELLIPSIS)
    for character in head + tail:
        if not (character.isascii() and character.isalpha()):
            raise ValueError(
                f"einsum: {character!r} in the equation {equation!r} is not a label: labels "
                "are the letters a-z and A-Z, with at most one '...' per operand, operands "
                "separated by ',' and the output after '->'"
            )
    return [*head, *([ELLIPSIS] if dots else []), *tail]


def _label_axes(equation, subscripts, tensors):
    """One label per axis of each operand ('.k' for the axes under '...', numbered from the
    left of the broadcast shape), and each label's size (the broadcast one under '...')."""
    ranks = []
    for k, (subscript, t) in enumerate(zip(subscripts, tensors)):
        named = len(subscript) - subscript.count(ELLIPSIS)
        if ELLIPSIS in subscript and t.ndim < named:
            raise ValueError(
                f"einsum: operand {k} has rank {t.ndim}, but its subscripts "
                f"{''.join(subscript)!r} name at least {named} axes"
            )
        if ELLIPSIS not in subscript and t.ndim != named:
            raise ValueError(
                f"einsum: operand {k} has rank {t.ndim}, but its subscripts "
                f"{''.join(subscript)!r} name {named} axes"
            )
        ranks.append(t.ndim - named)
    broadcast_rank = max(ranks, default=0)
    labels = []
    for subscript, rank in zip(subscripts, ranks):
        under = [f".{k}" for k in range(broadcast_rank - rank, broadcast_rank)]
        labels.append([axis for s in subscript for axis in (under if s == ELLIPSIS else [s])])
    sizes, seen = {}, {}
    for k, (own, t) in enumerate(zip(labels, tensors)):
        for label, size in zip(own, t.shape):
            if label not in sizes or sizes[label] == size:
                sizes[label], seen[label] = size, seen.get(label, k)
            elif label.startswith("."):
                if sizes[label] == 1:
                    sizes[label], seen[label] = size, k
                elif size != 1:
                    raise ValueError(
                        f"einsum: the axes under '...' do not broadcast in {equation!r}: "
                        f"operand {seen[label]} has size {sizes[label]} where operand {k} has "
                        f"size {size} (shapes {tensors[seen[label]].shape} and {t.shape})"
                    )
            else:
                raise ValueError(
                    f"einsum: label {label!r} of {equation!r} has size {sizes[label]} in "
                    f"operand {seen[label]} but size {size} in operand {k}"
                )
    return labels, sizes


def _output_labels(equation, output, labels, sizes):
    broadcast = sorted(
        (label for label in sizes if label.startswith(".")), key=lambda s: int(s[1:])
    )
    if output is None:  # implicit: '...' first, then the labels that appear once, sorted
        counts = {}
        for own in labels:
            for label in own:
                counts[label] = counts.get(label, 0) + 1
        return broadcast + sorted(
            label for label, n in counts.items() if n == 1 and label not in broadcast
        )
    letters = [label for label in output if label != ELLIPSIS]
    for label in letters:
        if letters.count(label) > 1:
            raise ValueError(f"einsum: the output of {equation!r} names {label!r} more than once")
        if label not in sizes:
            raise ValueError(
                f"einsum: the output of {equation!r} names {label!r}, which no operand has"
            )
    if ELLIPSIS not in output and broadcast:
        raise ValueError(
            f"einsum: the operands' '...' of {equation!r} cover {len(broadcast)} axes, but the "
            "output has no '...' to hold them"
        )
    return [label for s in output for label in (broadcast if s == ELLIPSIS else [s])]


def _needed(output, others):
    """The labels that must stay after an operand or a pair is reduced: the output's, and
    those of the other operands."""
    return set(output).union(*others)


# --- the steps -------------------------------------------------------------------------------


def _permute(tensor, perm):
    perm = list(perm)
    return tensor if perm == sorted(perm) else array_ops.transpose(tensor, perm)


def _sum_unneeded(tensor, labels, needed):
    axes = [a for a, label in enumerate(labels) if label not in needed]
    if not axes:
        return tensor, labels
    return reduce_sum(tensor, axes), [label for label in labels if label in needed]


def _prepare(tensor, labels, sizes, needed):
    """One operand before the contractions: its axes under '...' that broadcasting stretches
    dropped, a repeated label replaced by its diagonal, and labels nothing else needs summed."""
    stretched = [
        a
        for a, label in enumerate(labels)
        if label.startswith(".") and tensor.shape[a] == 1 and sizes[label] != 1
    ]
    if stretched:
        tensor = array_ops.reshape(
            tensor, tuple(d for a, d in enumerate(tensor.shape) if a not in stretched)
        )
        labels = [label for a, label in enumerate(labels) if a not in stretched]
    for label in dict.fromkeys(labels):
        positions = [a for a, own in enumerate(labels) if own == label]
        if len(positions) == 1:
            continue
        others = [a for a, own in enumerate(labels) if own != label]
        tensor = _permute(tensor, others + positions)
        for _ in positions[1:]:  # the diagonal of the last two axes, until one is left
            tensor = apply(DIAG_PART, (tensor,), {})
        labels = [labels[a] for a in others] + [label]
    return _sum_unneeded(tensor, labels, needed)


def _cheapest_pair(operands, output, sizes):
    """The two operands to contract next: the pair whose contraction involves the fewest
    (label) combinations, then gives the smallest result, then comes first."""
    if len(operands) == 2:
        return 0, 1

    def size(labels):
        total = 1
        for label in labels:
            d = sizes[label]
            total *= d.estimate() if isinstance(d, dims.Dim) else d
        return total

    def key(pair):
        i, j = pair
        involved = set(operands[i][1]) | set(operands[j][1])
        rest = [labels for k, (_, labels) in enumerate(operands) if k not in pair]
        kept = involved & _needed(output, rest)
        return size(involved), size(kept), pair

    return min(combinations(range(len(operands)), 2), key=key)


def _contract(a, a_labels, b, b_labels, needed):
    """Operands a and b as one: their shared labels that `needed` lacks summed over. Labels
    of the result: a broadcast mul keeps a's then b's own; the others (batch, a's free, b's
    free)."""
    a, a_labels = _sum_unneeded(a, a_labels, needed | set(b_labels))
    b, b_labels = _sum_unneeded(b, b_labels, needed | set(a_labels))
    shared = [label for label in a_labels if label in b_labels]
    batch = [label for label in shared if label in needed]
    summed = [label for label in shared if label not in needed]
    a_free = [label for label in a_labels if label not in b_labels]
    b_free = [label for label in b_labels if label not in a_labels]
    extent = dict(zip(a_labels, a.shape)) | dict(zip(b_labels, b.shape))
    if not summed:
        return _broadcast_product(a, a_labels, b, b_labels, extent)
    if not a_free and not b_free:  # dot products along the batch: one fused loop, no GEMM
        a = _permute(a, [a_labels.index(label) for label in batch + summed])
        b = _permute(b, [b_labels.index(label) for label in batch + summed])
        return reduce_sum(a * b, list(range(len(batch), len(shared)))), batch
    # a (batched) matrix product; an operand laid out (batch, summed, free) is read as it is,
    # through matmul's transpose flags, rather than transposed into a copy first
    ta = bool(a_free) and a_labels == batch + summed + a_free
    tb = bool(b_free) and b_labels == batch + b_free + summed
    a_order = batch + summed + a_free if ta else batch + a_free + summed
    b_order = batch + b_free + summed if tb else batch + summed + b_free
    a = _permute(a, [a_labels.index(label) for label in a_order])
    b = _permute(b, [b_labels.index(label) for label in b_order])
    batch_shape = tuple(extent[label] for label in batch)
    rows, inner, columns = (
        dims.size([extent[s] for s in part]) for part in (a_free, summed, b_free)
    )
    a = array_ops.reshape(a, batch_shape + ((inner, rows) if ta else (rows, inner)))
    b = array_ops.reshape(b, batch_shape + ((columns, inner) if tb else (inner, columns)))
    product = matmul(a, b, transpose_a=ta, transpose_b=tb)
    shape = batch_shape + tuple(extent[label] for label in a_free + b_free)
    return array_ops.reshape(product, shape), batch + a_free + b_free


def _broadcast_product(a, a_labels, b, b_labels, extent):
    """a * b with nothing summed: b's axes lined up with a's, its own after them."""
    b_own = [label for label in b_labels if label not in a_labels]
    b = _permute(
        b,
        [b_labels.index(label) for label in a_labels if label in b_labels]
        + [b_labels.index(label) for label in b_own],
    )
    b_shape = tuple(extent[label] if label in b_labels else 1 for label in a_labels)
    b = array_ops.reshape(b, b_shape + tuple(extent[label] for label in b_own))
    a = array_ops.reshape(a, a.shape + (1,) * len(b_own))
    return math_ops.multiply(a, b), a_labels + b_own
