"""`return` inside a loop, rewritten before the rest of the conversion as a flag, a value and
a `break`, so that the loop can become a tt.while_loop:

    for i in tt.range(n):                   ag__do_return = False
        if v > 5.0:                         ag__retval = ag__.UNDEFINED_RETURN
            return v                        for i in tt.range(n):
        v = v * 2.0                  =>         if v > 5.0:
    return -v                                       ag__retval = v
                                                    ag__do_return = True
                                                    break
                                                v = v * 2.0
                                            if ag__.returned(ag__do_return,
                                                             ag__retval):
                                                return ag__retval
                                            return -v

The loop carries the flag and the value as its own state (operators.py gives the value,
unknown before the loop, a placeholder shaped as the body makes it); after a loop nested in
another, `if ag__.returned(...): break` leaves the outer one too. The `if` after the outermost
loop, with the rest of the function as its `else`, becomes `ag__.if_return`: tt.cond on a
tensor flag (`ag__.returned` is False where no `return` of the traced loop set the value).
A function whose end can be reached gets an explicit `return None` there, so an `if` that
returns on one way only is one that returns on both (and a tensor condition then gets
TensorFlow's ValueError: one branch returns nothing).
"""

import ast

from tracer.autograph.transform import RUNTIME

FLAG = f"{RUNTIME}do_return"
VALUE = f"{RUNTIME}retval"

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.While)
_BLOCKS = ("body", "orelse", "finalbody")


def returns_as_flags(definition):
    """Rewrite, in place, the returns of `definition` (an ast.FunctionDef) that lie inside
    its loops; add `return None` at its end where control can reach it. A generator, or a
    function with no `return` inside a compound statement, is left as it is."""
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _same_scope(definition.body)):
        return
    if not any(_returns([s]) for s in definition.body if not isinstance(s, ast.Return)):
        return
    if _returns_in_loops(definition.body):
        start = [
            _assign(FLAG, ast.Constant(False)),
            _assign(VALUE, _runtime("UNDEFINED_RETURN")),
        ]
        definition.body = [
            *(ast.copy_location(s, definition.body[0]) for s in start),
            *_rewritten(definition.body, in_loop=False),
        ]
    if not any(_always_returns([s]) for s in definition.body):
        last = definition.body[-1]
        definition.body.append(_at(ast.Return(value=None), last, end=True))


def _rewritten(statements, in_loop):
    """`statements` with each `return` inside a loop turned into flag, value and `break`."""
    out = []
    for statement in statements:
        if in_loop and isinstance(statement, ast.Return):
            value = statement.value or ast.Constant(None)
            out += [
                _at(_assign(VALUE, value), statement),
                _at(_assign(FLAG, ast.Constant(True)), statement),
                _at(ast.Break(), statement),
            ]
            continue
        if not _returns([statement]):
            out.append(statement)
            continue
        loop = isinstance(statement, _LOOPS)
        for field in _BLOCKS:
            if getattr(statement, field, None):
                inside = in_loop or (loop and field == "body")
                setattr(statement, field, _rewritten(getattr(statement, field), inside))
        for handler in getattr(statement, "handlers", ()):
            handler.body = _rewritten(handler.body, in_loop)
        out.append(statement)
        if loop:
            out.append(_after_loop(statement, in_loop))
    return out


def _after_loop(loop, in_loop):
    """`if ag__.returned(ag__do_return, ag__retval): break` in an enclosing loop, or `...:
    return ag__retval` outside loops (the statements after it become its `else` later)."""
    leave = ast.Break() if in_loop else ast.Return(value=_name(VALUE))
    returned = ast.Call(func=_runtime("returned"), args=[_name(FLAG), _name(VALUE)], keywords=[])
    check = ast.If(test=returned, body=[leave], orelse=[])
    check.returns_from_loop = True  # for the errors of ag__.if_return
    return _at(check, loop)


def _returns_in_loops(statements):
    return any(
        isinstance(node, _LOOPS) and _returns(node.body + node.orelse)
        for node in _same_scope(statements)
    )


def _returns(statements):
    return any(isinstance(node, ast.Return) for node in _same_scope(statements))


def _always_returns(statements):
    """Whether the end of `statements` cannot be reached: their last is a `return` or a
    `raise`, or an `if` whose two ways always return."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _same_scope(statements):
    """The nodes of `statements`, without those of functions, lambdas and classes in them."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        yield node
        pending.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _SCOPES))


def _name(name, store=False):
    return ast.Name(id=name, ctx=ast.Store() if store else ast.Load())


def _runtime(attribute):
    return ast.Attribute(value=_name(RUNTIME), attr=attribute, ctx=ast.Load())


def _assign(name, value):
    return ast.Assign(targets=[_name(name, store=True)], value=value)


def _at(statement, original, end=False):
    """`statement`, every node of it at `original`'s line (its last line with `end`)."""
    line = original.end_lineno if end else original.lineno
    for node in ast.walk(statement):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            node.lineno = node.end_lineno = line
            node.col_offset = node.end_col_offset = original.col_offset
    return statement
