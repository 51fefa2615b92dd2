"""TensorFlow's dispatch for extension types: a user's function runs in place of one of
tracer's APIs where the arguments are of the user's types.

    @tt.experimental.dispatch_for_api(tt.stack)
    def masked_stack(values: List[MaskedTensor], axis=0): ...

    @tt.experimental.dispatch_for_unary_elementwise_apis(MaskedTensor)
    def handler(api_func, x): ...                  # tt.abs(x), tt.ones_like(x, ...), ...

    @tt.experimental.dispatch_for_binary_elementwise_apis(MaskedTensor, MaskedTensor)
    def handler(api_func, x, y): ...               # tt.add(x, y), tt.math.maximum(x, y), ...

A target runs where its annotated parameters' values have the annotated types and one of
them, at least, is an ExtensionType (plain tensors keep tracer's own op). The first
registration for an API puts a dispatching wrapper in its place in tracer's public
namespaces (`tt.stack`, `tt.math.add`), so programs that never register pay nothing; tracer's
own code calls the ops directly and never dispatches.
"""

import collections.abc
import functools
import inspect
import sys
import types
import typing

from tracer.extension_type import ExtensionType

# TensorFlow's elementwise APIs that tracer has, by their public names
UNARY_ELEMENTWISE = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cast", "ceil", "cos", "cosh",
    "exp", "expm1", "floor", "identity", "log", "log1p", "logical_not", "negative",
    "ones_like", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt",
    "square", "tan", "tanh", "zeros_like",
)  # fmt: skip
BINARY_ELEMENTWISE = (
    "add", "divide", "equal", "floordiv", "floormod", "greater", "greater_equal", "less",
    "less_equal", "logical_and", "logical_or", "maximum", "minimum", "mod", "multiply",
    "not_equal", "pow", "squared_difference", "subtract", "truediv",
)  # fmt: skip

_TARGETS = {}  # the original API -> [(matches(args, kwargs), call(args, kwargs), target)]


def dispatch_for_api(api, *signatures):
    """Run the decorated function for `api` where its annotated parameters (or those of
    `signatures`, dicts of parameter name to type) hold values of their types."""

    def register(target):
        checks = [dict(s) for s in signatures] or [_annotations(target)]
        parameters = inspect.signature(_original(api))

        def matches(args, kwargs):
            try:
                bound = parameters.bind(*args, **kwargs)
            except TypeError:
                return False
            return any(_fits(bound.arguments, check) for check in checks)

        _register(api, matches, lambda args, kwargs: target(*args, **kwargs), target)
        return target

    return register


def dispatch_for_unary_elementwise_apis(x_type):
    """Run the decorated `handler(api_func, x)` for every unary elementwise API called with
    `x` of type `x_type`; `api_func` takes `x` alone, the call's other arguments bound."""

    def register(handler):
        for api in _publics(UNARY_ELEMENTWISE):

            def matches(args, kwargs, api=api):
                x = _first(api, args, kwargs)
                return _has_type(x, x_type) and _dispatchable([x])

            def call(args, kwargs, api=api):
                first = _parameter_names(api)[0]
                rest = {k: v for k, v in kwargs.items() if k != first}
                return handler(lambda x: api(x, *args[1:], **rest), _first(api, args, kwargs))

            _register(api, matches, call, handler)
        return handler

    return register


def dispatch_for_binary_elementwise_apis(x_type, y_type):
    """Run the decorated `handler(api_func, x, y)` for every binary elementwise API called
    with `x` of type `x_type` and `y` of `y_type`; `api_func` takes `x` and `y`."""

    def register(handler):
        for api in _publics(BINARY_ELEMENTWISE):

            def matches(args, kwargs, api=api):
                x, y = _pair(api, args, kwargs)
                return _has_type(x, x_type) and _has_type(y, y_type) and _dispatchable([x, y])

            def call(args, kwargs, api=api):
                x, y = _pair(api, args, kwargs)
                rest = dict(kwargs)
                for key in _parameter_names(api)[:2]:
                    rest.pop(key, None)
                return handler(lambda a, b: api(a, b, *args[2:], **rest), x, y)

            _register(api, matches, call, handler)
        return handler

    return register


def unregister_dispatch_for(dispatch_target):
    """Stop running `dispatch_target` (a function registered above) for any API."""
    found = False
    for entries in _TARGETS.values():
        kept = [entry for entry in entries if entry[2] is not dispatch_target]
        found = found or len(kept) != len(entries)
        entries[:] = kept
    if not found:
        raise ValueError(
            f"Function {dispatch_target} was not registered using a `@dispatch_for_*` decorator."
        )


def _register(api, matches, call, target):
    original = _original(api)
    if original not in _TARGETS:
        _TARGETS[original] = []
        _install(original)
    _TARGETS[original].append((matches, call, target))


def _original(api):
    return getattr(api, "_tt_dispatched", api)


def _install(original):
    """Put a dispatching wrapper of `original` wherever tracer's public namespaces hold it."""

    @functools.wraps(original)
    def dispatching(*args, **kwargs):
        for matches, call, _ in _TARGETS[original]:
            if matches(args, kwargs):
                return call(args, kwargs)
        return original(*args, **kwargs)

    dispatching._tt_dispatched = original
    for module in _public_modules():
        for name, value in list(vars(module).items()):
            if value is original:
                setattr(module, name, dispatching)


def _public_modules():
    tracer = sys.modules["tracer"]
    yield tracer
    for name in tracer.__all__:
        module = sys.modules.get(f"tracer.{name}")
        if module is not None:
            yield module


def _publics(names):
    """The originals of tracer's public functions of these names (tt.name, else tt.math.name)."""
    tracer = sys.modules["tracer"]
    for name in names:
        api = getattr(tracer, name, None) or getattr(tracer.math, name, None)
        if api is not None:
            yield _original(api)


def _parameter_names(api):
    return list(inspect.signature(api).parameters)


def _first(api, args, kwargs):
    return args[0] if args else kwargs.get(_parameter_names(api)[0])


def _pair(api, args, kwargs):
    names = _parameter_names(api)
    x = args[0] if args else kwargs.get(names[0])
    y = args[1] if len(args) > 1 else kwargs.get(names[1])
    return x, y


def _annotations(target):
    hints = typing.get_type_hints(target)
    hints.pop("return", None)
    if not hints:
        raise ValueError(f"dispatch_for_api: {target.__name__} annotates none of its parameters")
    return hints


def _fits(arguments, check):
    values = [arguments[name] for name in check if name in arguments]
    return all(
        _has_type(arguments[name], kind) for name, kind in check.items() if name in arguments
    ) and _dispatchable(values)


def _has_type(value, kind):
    """Whether `value` is of the annotated type `kind` (a class, List/Sequence[...],
    Union[...], Optional[...]); a tracer Tensor annotation takes anything a tensor is made of."""
    origin, arguments = typing.get_origin(kind), typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        return any(_has_type(value, option) for option in arguments)
    if origin in (list, tuple, collections.abc.Sequence):
        return isinstance(value, (list, tuple)) and all(
            _has_type(item, arguments[0] if arguments else typing.Any) for item in value
        )
    if kind is typing.Any:
        return True
    if isinstance(kind, type) and issubclass(kind, ExtensionType):
        return isinstance(value, kind)
    return not isinstance(value, ExtensionType)


def _dispatchable(values):
    """Whether one of `values` (or of the lists among them) is an ExtensionType."""
    for value in values:
        items = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(item, ExtensionType) for item in items):
            return True
    return False
