"""What a tape notes besides its graph, so that `tape.explain` can say why a gradient is None.

Each note costs time only on a path that breaks gradients anyway: an op whose inputs the
tape does not track, an op through which no gradient flows, a tracked value leaving for
numpy, a use under `stop_recording`. Values are never kept: tensors by weak reference,
graph positions by node.
"""

import weakref

MAX_UNTRACKED_USES = 10_000  # bound the notes of a long loop inside one tape


class TapeEvents:
    __slots__ = ("untracked_uses", "numpy_exits", "blocked", "paused_uses")

    def __init__(self):
        self.untracked_uses = {}  # id(tensor) -> (weak reference, location of its first use)
        self.numpy_exits = []  # (node, location, via): a tracked value converted to numpy
        self.blocked = []  # (op name, result dtype, tracked input nodes, location)
        self.paused_uses = []  # (tracked input nodes, location): used under stop_recording

    def note_untracked_use(self, inputs, location):
        uses = self.untracked_uses
        if len(uses) >= MAX_UNTRACKED_USES:
            return
        for tensor in inputs:
            if id(tensor) not in uses and tensor.dtype.is_differentiable:
                uses[id(tensor)] = (weakref.ref(tensor), location())

    def first_untracked_use(self, tensor):
        entry = self.untracked_uses.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None
