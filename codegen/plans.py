"""Stored plans: what a second process needs to call a compiled module without running the
passes and the lowering again.

A compiled function's module is cached by its C source (codegen/cache.py), but the source
is known only after the pass pipeline and the lowering, which on a large traced graph
take most of a start whose module is cached. So
beside the module the cache keeps the lowered plan (`codegen.lower.ModulePlan`: the
source, the argument and output layout, the constants, the error messages), under a key
taken from the traced graph itself (`tracer.ir.digest`), the function's name, the values
of the module's updates, the toolchain's features, whether the CPU makes subnormals slowly
(codegen/subnormals.py: it decides which loops are written twice) and tracer's own code.

The key leaves out the user's lines, which only the C's comments and the error messages
name: the plan keeps the `file.py:14` of each of the graph's places, and a process whose
graph has them elsewhere (a line added above the function, the script run from another
folder) gets the plan with those texts renamed, in the comments only (the code, and so the
module, stay the same). Which places read alike (an f.py of two folders, at one line) is
part of the key. Where a rename could not be exact (a file name with spaces or parentheses)
the passes run as for a new graph.

    $TRACER_CACHE_DIR/.plans/<key>   "tracer-plan 1", the SHA-256 of the rest, a JSON
                                     header and the source and constants' bytes

A plan is stored only where it is plain data: no dimensions known only at run time, no
Python function called back, no tt.string handles (their table is Python's), errors of
Python's built-in exception classes. Nothing read back is trusted: a file whose digest,
header or any field does not check is removed with one log line, and the function is
compiled the usual way.
"""

import builtins
import hashlib
import json
import os
import re
import tempfile
from typing import NamedTuple

import numpy as np

from codegen import build, cache, subnormals
from codegen.loops import comment_location
from codegen.lower import ModulePlan
from codegen.version import CODE_VERSION
from tracer.errors import as_tf, builtin_of
from tracer.ir.digest import graph_digest
from tracer.ir.dims import Dim
from tracer.ir.source import format_location

MAGIC = b"tracer-plan 1\n"
_OUTPUT_KINDS = ("buffer", "input", "input before", "updated")
# A plan holds its constants' bytes; a function that closes over large arrays (a model's
# weights, new at every run) would fill the cache with plans never found again: it is
# compiled the usual way in every process instead.
MAX_CONSTANT_BYTES = 1 << 22
PLAN_MAX_BYTES = 1 << 30  # a plan's file: its constants (each at most the above) and text


class PlanKey(NamedTuple):
    name: str  # the plan's file name
    places: tuple  # (file name, line) of each of the traced graph's places (tracer.ir.digest)


def plan_key(traced, name, updates):
    """The PlanKey of `traced` compiled as `name` with `updates`, or None when the graph has
    no digest (an attribute with no stable form)."""
    if any(type(d) is Dim for node in traced.inputs for d in node.shape):
        return None  # dimensions known only at run time: such plans are not stored
    digest = graph_digest(traced)
    if digest is None:
        return None
    parts = [
        digest.hex,
        str(name),
        repr(sorted((updates or {}).items())),
        repr((build.vector_math(), build.threads(), build.blas() is not None, subnormals.slow())),
        CODE_VERSION,
    ]
    places = tuple((os.path.basename(file), line) for file, line in digest.places)
    # which places read alike in the comments (one f.py of two folders): a key of their own
    texts = {}
    parts.append(repr([texts.setdefault(format_location(p), len(texts)) for p in places]))
    return PlanKey(hashlib.sha256("\0".join(parts).encode()).hexdigest(), places)


def _folder():
    folder = os.path.join(cache.cache_root(), ".plans")
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        cache.log.warning("tracer: removing %s, which is not a directory", folder)
        cache.remove(folder)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def entries():
    """The paths of the stored plans, for `python -m tracer cache info`."""
    folder = _folder()
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if not n.startswith(".")]


def clear():
    """Remove every stored plan (and any write a process left half done); returns how many
    plans there were."""
    count = len(entries())
    cache.remove(_folder())
    return count


# --- writing ------------------------------------------------------------------------------


def store(key, plan, uses_blas):
    """Keep `plan` under the PlanKey `key` when it is plain data (see the module's
    docstring)."""
    if plan.dims or plan.host_calls or plan.strings is not None:
        return
    errors = []
    for code, (exception, message) in plan.errors.items():
        exception = builtin_of(exception)  # the builtin class: loading converts it again
        builtin = getattr(builtins, exception.__name__, None) is exception
        if not (builtin and issubclass(exception, Exception)):
            return
        errors.append([code, exception.__name__, message])
    blobs = [plan.source.encode()]
    constant_bytes = 0

    def array(value):
        nonlocal constant_bytes
        value = np.array(value, order="C")  # (ascontiguousarray makes a 0-d array 1-d)
        constant_bytes += value.nbytes
        if value.dtype.kind not in "biufc" or constant_bytes > MAX_CONSTANT_BYTES:
            raise ValueError
        blobs.append(value.tobytes())
        return {"dtype": value.dtype.str, "shape": list(value.shape), "blob": len(blobs) - 1}

    try:
        header = {
            "key": key.name,
            "places": [list(place) for place in key.places],
            "uses_blas": bool(uses_blas),
            "input_dtypes": [np.dtype(d).str for d in plan.input_dtypes],
            "input_shapes": [list(s) for s in plan.input_shapes],
            "input_names": list(plan.input_names),
            "constants": [array(c) for c in plan.constants],
            "buffers": [[list(shape), np.dtype(d).str] for shape, d in plan.buffers],
            "outputs": [
                ["constant", array(where)] if kind == "constant" else [kind, where]
                for kind, where in plan.outputs
            ],
            "updated_inputs": sorted(plan.updated_inputs),
            "workspace_bytes": plan.workspace_bytes,
            "errors": errors,
            "first_error": plan.first_error,
            "watch": plan.watch,
        }
        sizes = [len(b) for b in blobs]
        text = json.dumps(dict(header, blobs=sizes)).encode()
    except (TypeError, ValueError):  # not plain data (a Dim, an object array), or too large
        return
    body = b"".join([text, b"\n", *blobs])
    content = MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    try:
        _write(key.name, content)
    except OSError as error:  # a full disk: the module is built, the next process compiles
        cache.log.warning("tracer: the plan %s was not stored (%s)", key.name, error)


def _write(key, content):
    folder = _folder()
    descriptor, staging = tempfile.mkstemp(prefix=".tmp-", dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(content)
        os.replace(staging, os.path.join(folder, key))
    except BaseException:
        cache.remove(staging)
        raise


# --- reading ------------------------------------------------------------------------------


class _Unsound(ValueError):
    pass


def restore(key):
    """(ModulePlan, uses_blas) stored under the PlanKey `key`, its places renamed to the
    key's, or None (an unsound file is removed)."""
    path = os.path.join(_folder(), key.name)
    try:  # a regular file of a bounded size: a directory, a link or a pipe is not read
        content = cache.read_regular(path, PLAN_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return _unsound(path, f"{type(error).__name__}: {error}")
    try:
        return _parse(content, key)
    except (
        _Unsound,
        ValueError,
        TypeError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        RecursionError,  # JSON nested deeper than Python's stack
    ) as error:
        return _unsound(path, f"{type(error).__name__}: {error}")


def _unsound(path, reason):
    cache.log.warning("tracer: removing the damaged stored plan %s (%s)", path, reason)
    cache.remove(path)
    return None


def _parse(content, key):
    digest_end = len(MAGIC) + 64
    if not content.startswith(MAGIC) or content[digest_end : digest_end + 1] != b"\n":
        raise _Unsound("not a stored plan")
    body = content[digest_end + 1 :]
    if hashlib.sha256(body).hexdigest().encode() != content[len(MAGIC) : digest_end]:
        raise _Unsound("its digest does not match")
    text, _, data = body.partition(b"\n")
    header = json.loads(text.decode())
    _check(type(header) is dict and header.get("key") == key.name, "it is stored under another key")
    places = header["places"]
    _check(type(places) is list and len(places) == len(key.places), "bad places")
    places = tuple(map(tuple, places))
    _check(all(_is_place(p) for p in places), "bad places")
    sizes = header["blobs"]
    _check(_is_list(sizes, int) and all(s >= 0 for s in sizes), "bad blob sizes")
    _check(sum(sizes) == len(data), "its length does not match")
    starts = np.cumsum([0, *sizes]).tolist()
    blobs = [data[starts[k] : starts[k + 1]] for k in range(len(sizes))]

    def array(entry):
        dtype, shape = _dtype(entry["dtype"]), _shape(entry["shape"])
        _check(_index(entry["blob"], len(blobs)) and entry["blob"] > 0, "bad blob")
        raw = blobs[entry["blob"]]
        _check(len(raw) == dtype.itemsize * int(np.prod(shape, dtype=np.int64)), "bad array")
        return np.frombuffer(raw, dtype).reshape(shape).copy()

    plan = ModulePlan()
    plan.source = blobs[0].decode()
    plan.input_dtypes = [_dtype(d) for d in header["input_dtypes"]]
    plan.input_shapes = [_shape(s) for s in header["input_shapes"]]
    plan.input_names = header["input_names"]
    _check(_is_list(plan.input_names, str), "bad input names")
    _check(len(plan.input_shapes) == len(plan.input_dtypes) == len(plan.input_names), "inputs")
    plan.constants = [array(c) for c in header["constants"]]
    plan.buffers = [(_shape(shape), _dtype(d)) for shape, d in header["buffers"]]
    n_inputs = len(plan.input_dtypes)
    for kind, where in header["outputs"]:
        if kind == "constant":
            plan.outputs.append((kind, array(where)))
        else:
            bound = len(plan.buffers) if kind == "buffer" else n_inputs
            _check(kind in _OUTPUT_KINDS and _index(where, bound), "bad output")
            plan.outputs.append((kind, where))
    plan.updated_inputs = set(header["updated_inputs"])
    _check(all(_index(k, n_inputs) for k in plan.updated_inputs), "bad updated inputs")
    plan.workspace_bytes = header["workspace_bytes"]
    plan.first_error = header["first_error"]
    _check(_index(plan.workspace_bytes, 1 << 62) and _index(plan.first_error, 1 << 30), "sizes")
    for code, name, message in header["errors"]:
        exception = getattr(builtins, name, None)
        _check(
            _index(code, 1 << 31)
            and isinstance(exception, type)
            and issubclass(exception, Exception)
            and type(message) is str,
            "bad error",
        )
        plan.errors[code] = (as_tf(exception), message)
    plan.watch = header["watch"]
    _check(type(header["uses_blas"]) is bool and type(plan.watch) is bool, "bad flag")
    plan = _moved(plan, places, key.places)
    return None if plan is None else (plan, header["uses_blas"])


# a place as comments and messages show it: after a space or `(`, not followed by a digit
_PLACE = re.compile(r"(?<![^\s(])[^\s()#*/]+:[0-9]+(?![0-9])")


def _moved(plan, places, new_places):
    """`plan` with each of `places` named as the same place of `new_places` in the C's
    comments and in the error messages, or None where that could not be exact."""
    if places == new_places:
        return plan
    comments = _renames(places, new_places, comment_location)
    messages = _renames(places, new_places, format_location)
    if comments is None or messages is None:
        return None
    plan.source = build.rewrite_comments(plan.source, _renamer(comments))
    rename = _renamer(messages)
    plan.errors = {code: (kind, rename(text)) for code, (kind, text) in plan.errors.items()}
    return plan


def _renames(places, new_places, form):
    """{old text: new text} of the places that moved, as `form` writes them, or None."""
    pairs = [(form(old), form(new)) for old, new in zip(places, new_places)]
    renames = {old: new for old, new in pairs if old != new}
    if not all(_PLACE.fullmatch(old) and _PLACE.fullmatch(new) for old, new in renames.items()):
        return None
    rename = _renamer(renames)
    if any(rename(old) != new for old, new in pairs):
        return None  # a place's text holds another's: `my f.py:7` holds `f.py:7`
    return renames


def _renamer(renames):
    return lambda text: _PLACE.sub(lambda m: renames.get(m.group(0), m.group(0)), text)


def _check(condition, reason):
    if not condition:
        raise _Unsound(reason)


def _is_list(value, kind):
    return type(value) is list and all(type(v) is kind for v in value)


def _is_place(value):
    return len(value) == 2 and type(value[0]) is str and (type(value[1]) is int or value[1] is None)


def _index(value, bound):
    return type(value) is int and 0 <= value < bound


def _shape(value):
    _check(_is_list(value, int) and all(0 <= d < 1 << 40 for d in value), "bad shape")
    return tuple(value)


def _dtype(text):
    _check(type(text) is str, "bad dtype")
    dtype = np.dtype(text)
    _check(dtype.kind in "biufc", "bad dtype")
    return dtype
