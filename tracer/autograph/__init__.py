"""Autograph: Python control flow on tensors in tt.function, converted from the source.

`convert(f)` rewrites the `if`, `while` and `for` statements of `f`'s own source into calls
that run each as Python when its condition is a Python value, and as tt.cond or
tt.while_loop when it is a tensor known only when the function runs (transform.py, then
operators.py); a `return` inside a loop is first rewritten as a flag and a value
(returns.py). tt.function converts what it traces unless autograph=False. `to_code(f)`
shows the converted source.
"""

import ast
import contextlib
import copy
import functools
import inspect
import linecache
import os
import textwrap
import threading
import tokenize
import types
import warnings

from tracer.autograph import experimental, operators
from tracer.autograph.returns import returns_as_flags
from tracer.autograph.transform import CONVERTED, RUNTIME, convert_function_def, runtime_call

__all__ = ["convert", "experimental", "to_code"]

# NOTE: a converted function's code points at the original's source, which a second
# conversion would read and convert again, around the first one's runtime name: it carries
# CONVERTED, as a function not to convert does (`experimental.do_not_convert`)


def convert(function):
    """`function` with its control flow converted; itself when its source is not available
    (a lambda, a builtin, code typed at a prompt), has no `if`, `while` or `for`, or is
    converted already."""
    if getattr(function, CONVERTED, False):
        return function
    if isinstance(function, functools.partial):
        converted = convert(function.func)
        return functools.partial(converted, *function.args, **function.keywords)
    if inspect.ismethod(function):
        return types.MethodType(convert(function.__func__), function.__self__)
    converted = _converted_tree(function)
    if converted is None:
        return function
    tree, definition = converted
    return _build(function, tree, definition)


operators._convert[0] = convert  # the functions converted code calls, converted in turn


def to_code(function):
    """The source tt.function runs for `function`, after conversion."""
    target = getattr(function, "python_function", function)
    converted = _converted_tree(target)
    if converted is None:
        return textwrap.dedent(inspect.getsource(target))
    return ast.unparse(converted[1])


@functools.lru_cache(maxsize=256)
def _source(code):
    """(the dedented source of a code object's function, its first line), or None.

    Read from linecache as `inspect.getsourcelines` does, without its search of every
    loaded module for the one that holds the code (slow in a fresh process). The function
    ends at the last line its instructions come from: finding its end by tokenizing, as
    `inspect.getblock` does, is a large part of a process's first tt.function call
    (tokenize's patterns compiled, then the lines tokenized in Python). Lines after that
    hold no reachable code; where they still make the function another (a `yield` after the
    last `return` makes it a generator, an annotation `x: int` makes `x` local), where the
    text up to it does not compile alone, and before Python 3.11, the block is found by
    tokenizing."""
    lines = linecache.getlines(code.co_filename)
    first = code.co_firstlineno
    if not 0 < first <= len(lines):
        return None
    last = _last_line(code)
    if first <= last <= len(lines):
        text = textwrap.dedent("".join(lines[first - 1 : last]))
        if _same_function(text, code):
            return text, first
    try:  # a file edited since it was imported may not hold the function at that line
        block = inspect.getblock(lines[first - 1 :])
    except (tokenize.TokenError, SyntaxError):
        return None
    return textwrap.dedent("".join(block)), first


def _last_line(code):
    """The last line that an instruction of `code`, or of a function, class or
    comprehension defined in it, comes from (0 before Python 3.11, which keeps no
    positions)."""
    if not hasattr(code, "co_positions"):
        return 0
    ends = [end for _, end, _, _ in code.co_positions() if end is not None]
    ends += [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max(ends, default=0)


_KIND_FLAGS = (
    inspect.CO_GENERATOR
    | inspect.CO_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_ITERABLE_COROUTINE
)


@contextlib.contextmanager
def _unshown_warnings():
    """Warnings raised inside are not shown. NOTE: not `warnings.catch_warnings()`, whose
    change of the filters makes Python forget which warnings it has shown, so that every
    "once per place" warning of the user's program would show again after each conversion."""
    with _HIDING:  # (so that two threads cannot leave the no-op in place)
        shown = warnings.showwarning
        warnings.showwarning = lambda *args, **kwargs: None
        try:
            yield
        finally:
            warnings.showwarning = shown


_HIDING = threading.Lock()


def _same_function(text, code):
    """Whether `text` compiles to a function named as `code`'s with the same kind
    (generator, coroutine) and the same arguments, locals and cells."""
    try:
        with _unshown_warnings():  # the import showed them, at their lines
            module = compile(text, code.co_filename, "exec", dont_inherit=True)
    except (SyntaxError, SyntaxWarning, ValueError):
        return False
    inner = [c for c in module.co_consts if isinstance(c, types.CodeType)]
    return (
        len(inner) == 1
        and inner[0].co_name == code.co_name
        and inner[0].co_varnames == code.co_varnames
        and inner[0].co_cellvars == code.co_cellvars
        and not (inner[0].co_flags ^ code.co_flags) & _KIND_FLAGS
    )


def _converted_tree(function):
    code = getattr(function, "__code__", None)
    if code is not None:  # a module imported from an archive gives its source through its loader
        linecache.lazycache(code.co_filename, getattr(function, "__globals__", {}))
    found = _source(code) if code is not None else None
    if found is None:
        return None
    text, first = found
    tree = _parsed(text, lambda_header=code.co_name == "<lambda>")
    if tree is None:
        return None
    ast.increment_lineno(tree, first - 1)
    _shift_columns(tree, _dedented_by(code, text))
    if code.co_name == "<lambda>":
        definition = _lambda_definition(tree, code)
        if definition is None:
            return None
        tree = ast.Module(body=[definition], type_ignores=[])
    elif not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    elif tree.body[0].name != code.co_name:
        return None  # the file was edited since it was imported: its source is not there
    definition = tree.body[0]
    nodes = list(ast.walk(definition))
    if not any(_converted_construct(n) for n in nodes):
        return None
    if "__class__" in code.co_freevars:
        _name_the_class_of_super(definition)
    where = os.path.basename(code.co_filename)
    returns_as_flags(definition)
    convert_function_def(definition, where)
    return tree, definition


def _parsed(text, lambda_header=False):
    """The tree of `text`, or None where it does not parse. A lambda's source is the line
    that holds it, which may be a compound statement's header (`for f in [lambda x: ...]:`):
    with `lambda_header`, such a line parses with a body of `pass`."""
    try:
        return ast.parse(text)
    except SyntaxError:
        if not lambda_header:
            return None
    try:
        return ast.parse(text.rstrip() + "\n    pass\n")
    except SyntaxError:
        return None


def _dedented_by(code, text):
    """How many columns `_source` took off each line of `code`'s source (`text`)."""
    line = linecache.getlines(code.co_filename)[code.co_firstlineno - 1]
    first = text.splitlines()[0] if text else ""
    return len(line) - len(line.lstrip()) - (len(first) - len(first.lstrip()))


def _shift_columns(tree, columns):
    """`tree`'s columns moved right by `columns`: those of the file, where the source was
    dedented, so that the converted code's positions are the file's (a traceback's carets;
    the lambdas it makes found again by theirs: `_lambda_definition`)."""
    if not columns:
        return
    for node in ast.walk(tree):
        for field in ("col_offset", "end_col_offset"):
            if getattr(node, field, None) is not None:
                setattr(node, field, getattr(node, field) + columns)


def _lambda_definition(tree, code):
    """The lambda of `code` in `tree` (the statement that holds it) as a function definition
    returning its body, which converts as any function does (a `tf.function(lambda x:
    step(x))`, a branch `lambda: step(x)`: the functions it calls are converted, as
    TensorFlow's autograph converts them); None where no lambda of its parameters starts on
    its first line whose body holds the positions of `code`'s instructions (a body that
    goes on past the statement's first line, where the lines read do not hold it whole: the
    lambda runs as written), or where the innermost such lambda is not one alone."""
    flags = code.co_flags
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(flags & inspect.CO_VARARGS) + bool(flags & inspect.CO_VARKEYWORDS)
    parameters = set(code.co_varnames[:count])
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Lambda)
        and node.lineno == code.co_firstlineno
        and _parameter_names(node.args) == parameters
    ]
    holding = [node for node in found if _holds_instructions(node.body, code)]
    found = [n for n in holding if not any(_inside(m, n) for m in holding if m is not n)]
    if len(found) != 1:
        return None
    (node,) = found
    body = [ast.copy_location(ast.Return(node.body), node.body)]
    definition = ast.FunctionDef(
        name=f"{RUNTIME}lambda", args=node.args, body=body, decorator_list=[], type_params=[]
    )
    return ast.copy_location(definition, node)


def _holds_instructions(body, code):
    """Whether the expression `body` spans the source positions of `code`'s instructions
    (Python 3.11 keeps each one's lines and columns; before it, no lambda is told apart)."""
    if not hasattr(code, "co_positions"):
        return False
    start, end = (body.lineno, body.col_offset), (body.end_lineno, body.end_col_offset)
    spans = [
        ((line, column), (end_line, end_column))
        for line, end_line, column, end_column in code.co_positions()
        if None not in (line, end_line, column, end_column) and column + end_column > 0
    ]
    return bool(spans) and all(start <= a and b <= end for a, b in spans)


def _inside(inner, outer):
    """Whether the lambda `inner` is in the body of the lambda `outer`."""
    return any(node is inner for node in ast.walk(outer.body))


def _parameter_names(arguments):
    names = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    names += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return set(names)


def _name_the_class_of_super(definition):
    """`super()` in the method `definition` written `super(__class__, self)`: its converted
    branches and loop bodies are functions of their own, where `super()` without arguments
    would look for their own first argument."""
    arguments = [*definition.args.posonlyargs, *definition.args.args]
    if not arguments:
        return
    pending = list(definition.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # a function of its own: its `super()` is its own
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "super"
            and not node.args
            and not node.keywords
        ):
            node.args = [
                ast.Name(id="__class__", ctx=ast.Load()),
                ast.Name(id=arguments[0].arg, ctx=ast.Load()),
            ]
        pending.extend(ast.iter_child_nodes(node))


def _owner_class(function):
    """The name of the class whose body defines `function` (its private names, `__x`, are
    that class's), or None."""
    parts = function.__qualname__.split(".")
    return parts[-2] if len(parts) > 1 and parts[-2] != "<locals>" else None


def _build(function, tree, definition):
    """The converted function: its code compiled inside a factory whose parameters are the
    original's free variables (and the runtime), then given the original's closure cells,
    globals and defaults."""
    code = function.__code__
    free = list(code.co_freevars)
    # NOTE: defined in the factory under another name: under its own, the function's name
    # would be a local of the factory, so a recursive call would call the converted function
    # itself (not the tt.function the name is bound to) through a cell no closure provides.
    definition = copy.copy(definition)
    definition.name = f"{RUNTIME}converted"
    factory = ast.FunctionDef(
        name=f"{RUNTIME}factory",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=name) for name in [RUNTIME, *free]],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=[definition, ast.Return(ast.Name(id=definition.name, ctx=ast.Load()))],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    owner = _owner_class(function)
    if owner is not None:  # in its class's body, `self.__x` is mangled as the original's
        factory = ast.ClassDef(
            name=owner, bases=[], keywords=[], body=[factory], decorator_list=[], type_params=[]
        )
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    if owner is not None:
        factory_code = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType))
    inner = next(
        c
        for c in factory_code.co_consts
        if isinstance(c, types.CodeType) and c.co_name == definition.name
    )
    cells = dict(zip(free, function.__closure__ or ()))
    cells[RUNTIME] = types.CellType(operators)
    closure = tuple(cells[name] for name in inner.co_freevars)
    inner = inner.replace(co_name=code.co_name, co_qualname=code.co_qualname)
    converted = types.FunctionType(
        inner, function.__globals__, function.__name__, function.__defaults__, closure
    )
    converted.__kwdefaults__ = function.__kwdefaults__
    functools.update_wrapper(converted, function)
    converted.__wrapped__ = function
    setattr(converted, CONVERTED, True)
    return converted


def _converted_construct(node):
    """Whether `node` is something the conversion rewrites: control flow statements, the
    expressions that branch (`a if c else b`, `and`, `or`, `not`, `a < b < c`), and calls
    (of range, len, int and float; of other functions, which are converted in turn)."""
    if isinstance(node, (ast.If, ast.While, ast.For, ast.IfExp, ast.BoolOp)):
        return True
    if isinstance(node, ast.Compare):
        return len(node.ops) > 1
    if isinstance(node, ast.Call):
        return isinstance(node.func, (ast.Name, ast.Attribute)) and not runtime_call(node.func)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
