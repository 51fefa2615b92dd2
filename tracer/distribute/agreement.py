"""The check that begins every collective call: every process makes the same call.

MPI matches collective calls by their order alone. A process that makes one call more than
the others (one batch more, on uneven data) meets their next call with it, and an allreduce
met by a broadcast waits forever, fails inside MPI, or reads a size out of the other's data.
So every collective call of tracer.distribute starts with the same small reduction, whatever
its kind: three int64 reduced by MAX,

    (code, -code, value)        code = kind << 32 | crc32 of the call's terms

where the terms are what every process must pass alike (shapes and dtypes, op, root_rank).
Its first two results agree only if every process's code does. Where they do not, every
process gathers each one's call and raises the same ValueError, naming them:

    rank 0: broadcast_object(root_rank=0); rank 1: allreduce(op='Average', tensors=[float32[49]])

Where they do, the calls that follow are the same on every process and match. `value`
carries a number of the call's own at no extra cost (broadcast_object's size, from the root).
"""

import pickle
import zlib

import numpy as np

from tracer.distribute.departures import wait
from tracer.distribute.process import communicator, mpi

KINDS = (  # a kind's code is its place here, from 1
    "allreduce",
    "allgather",
    "allgather_object",
    "broadcast",
    "broadcast_object",
    "broadcast_variables",
)
CODES = {kind: k + 1 for k, kind in enumerate(KINDS)}


def agree(what, terms, value=0):
    """Check that every process calls the collective `what` with the same `terms` (a tuple of
    (name, value) pairs), or raise ValueError on every process; return the largest `value`
    (an int >= 0) that a process passed.

        size = agree("broadcast_object", (("root_rank", 0),), len(data) if root else 0)
    """
    comm = communicator()
    if comm.size == 1:
        return value
    code = _code(what, terms)
    sent = np.array([code, -code, value], np.int64)
    got = np.empty(3, np.int64)
    wait(comm.Iallreduce(sent, got, op=mpi().MAX), what)
    if got[0] != -got[1]:
        calls = gather_pickles(pickle.dumps((what, terms)), what)
        raise _mismatch(what, [pickle.loads(call) for call in calls])
    return int(got[2])


def gather_pickles(data, what):
    """Every process's bytes `data` (a pickle), in rank order: the sizes, then the bytes.
    Only after `agree`, which makes sure that every process makes this call."""
    comm = communicator()
    data = np.frombuffer(data, np.uint8)
    sizes = np.empty(comm.size, np.int64)
    wait(comm.Iallgather(np.array([data.size], np.int64), sizes), what)
    gathered = np.empty(int(sizes.sum()), np.uint8)
    wait(comm.Iallgatherv(data, [gathered, sizes]), what)
    ends = np.cumsum(sizes)
    return [gathered[end - size : end] for size, end in zip(sizes, ends)]


def shapes_of(arrays):
    """The terms of a call on `arrays`: their shapes and dtypes."""
    return tuple((a.shape, a.dtype.str) for a in arrays)


_codes = {}


def _code(what, terms):
    key = (what, terms)
    found = _codes.get(key)
    if found is None:
        if len(_codes) > 4096:  # shapes that change every step: keep the table small
            _codes.clear()
        found = _codes[key] = CODES[what] << 32 | zlib.crc32(repr(key).encode())
    return found


def _mismatch(what, calls):
    """The ValueError of a process in `what` whose processes made `calls`, by rank."""
    shown = "; ".join(f"rank {r}: {_shown(*call)}" for r, call in enumerate(calls))
    if len({kind for kind, _ in calls}) > 1:
        return ValueError(
            f"{what}: the processes made different collective calls at this point ({shown}). "
            "Every process must make the same collective calls in the same order: one that "
            "takes more steps than the others (uneven data; hvd.shard gives every process as "
            "many items) meets their next call with its extra ones"
        )
    return ValueError(f"{what}: the processes passed different tensors or arguments ({shown})")


def _shown(kind, terms):
    return f"{kind}(" + ", ".join(f"{name}={_value(name, v)}" for name, v in terms) + ")"


def _value(name, v):
    if name == "tensors":  # (shape, dtype) pairs, as numpy names them: [float32[2, 3], ...]
        return "[" + ", ".join(f"{np.dtype(d).name}{list(s)}" for s, d in v) + "]"
    return repr(v)
