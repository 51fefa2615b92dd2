"""A pipeline's fingerprint: a hash of what its stages are, so that `snapshot(path)` reads
back only the elements of the same pipeline (TensorFlow names a snapshot's directory by a
fingerprint of its graph).

The hash takes each stage's kind and settings, the code of its functions (their bytecode,
constants and names, and the plain values their closures hold: numbers, strings, arrays),
and the arrays of its sources. A mutable object a function closes over (a list of counts)
counts by its type only, so that a pipeline keeps its fingerprint as it runs; two pipelines
that differ only there share one.

    key = fingerprint(stage)   # 16 hex digits
"""

import functools
import hashlib
import types

import numpy as np

# attributes that change as a pipeline runs (what a pass kept, counted or traced), not
# what it computes
_STATE = frozenset(
    {"_kept", "_passes", "_first", "_concretes", "_signatures", "_spec", "_traced", "_eager"}
)
_MAX_DEPTH = 40


def fingerprint(stage):
    """16 hex digits that differ between pipelines that compute different elements."""
    digest = hashlib.sha256()
    _feed(digest, stage, 0, set())
    return digest.hexdigest()[:16]


def _feed(digest, value, depth, seen):
    def put(*parts):
        for part in parts:
            digest.update(part if isinstance(part, bytes) else repr(part).encode())
            digest.update(b"\0")

    if depth > _MAX_DEPTH:
        put("deep")
        return
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, range)):
        put(type(value).__name__, value)
        return
    if isinstance(value, np.ndarray):
        put("array", value.dtype.str, value.shape)
        put(value.tobytes() if value.dtype.kind != "O" else repr(value.tolist()))
        return
    if isinstance(value, np.generic):
        put("scalar", value.dtype.str, value.tobytes())
        return
    if id(value) in seen:
        put("seen", type(value).__qualname__)
        return
    seen.add(id(value))
    if isinstance(value, (tuple, list)):
        put(type(value).__name__, len(value))
        for item in value:
            _feed(digest, item, depth + 1, seen)
    elif isinstance(value, dict):
        put("dict", len(value))
        for key in sorted(value, key=repr):
            _feed(digest, key, depth + 1, seen)
            _feed(digest, value[key], depth + 1, seen)
    elif isinstance(value, types.FunctionType):
        _feed_function(digest, value, depth, seen)
    elif isinstance(value, functools.partial):
        put("partial")
        for part in (value.func, value.args, value.keywords):
            _feed(digest, part, depth + 1, seen)
    elif isinstance(value, np.random.SeedSequence):
        put("seed", value.entropy, value.spawn_key)
    elif hasattr(value, "_python"):  # (a stage's function: what it calls)
        _feed(digest, value._python, depth + 1, seen)
    elif hasattr(value, "_python_function"):  # (a tt.function)
        _feed(digest, value._python_function, depth + 1, seen)
    elif hasattr(value, "numpy") and hasattr(value, "dtype"):  # (an eager tensor)
        _feed(digest, np.asarray(value.numpy()), depth + 1, seen)
    elif isinstance(value, np.dtype) or hasattr(value, "is_compatible_with"):  # a dtype, spec
        put(type(value).__qualname__, repr(value))
    elif hasattr(value, "arrays") or hasattr(value, "_stage"):  # a stage, or a dataset
        put("stage", type(value).__qualname__)
        for name, item in sorted(_attributes(value).items()):
            if name not in _STATE:
                put(name)
                _feed(digest, item, depth + 1, seen)
    else:
        put("object", type(value).__qualname__)


def _feed_function(digest, function, depth, seen):
    function = getattr(function, "__wrapped__", function)  # (functools.wraps: the user's)
    if not isinstance(function, types.FunctionType):
        _feed(digest, function, depth + 1, seen)
        return
    _feed_code(digest, function.__code__, depth)
    for cell in function.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # (an empty cell)
            continue
        if callable(contents) or isinstance(contents, (tuple, np.ndarray, np.generic)):
            _feed(digest, contents, depth + 1, seen)
        elif contents is None or isinstance(contents, (bool, int, float, str, bytes)):
            _feed(digest, contents, depth + 1, seen)
        else:  # a mutable object (a list of counts): its type, not what it holds now
            digest.update(type(contents).__qualname__.encode() + b"\0")
    _feed(digest, function.__defaults__, depth + 1, seen)


def _feed_code(digest, code, depth):
    digest.update(code.co_code + b"\0" + repr(code.co_names).encode() + b"\0")
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType) and depth < _MAX_DEPTH:
            _feed_code(digest, constant, depth + 1)
        else:
            digest.update(repr(constant).encode() + b"\0")


def _attributes(value):
    found = dict(getattr(value, "__dict__", {}))
    for cls in type(value).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(value, name):
                found[name] = getattr(value, name)
    return found
