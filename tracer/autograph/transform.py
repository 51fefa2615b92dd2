"""The AST rewrite: `if`, `while` and `for` statements become calls of `operators`, which run
them as Python or as tt.cond / tt.while_loop depending on what the condition is.

    while i < n:                    def loop_test(i, s):
        s = s * 2                       return i < n
        i = i + 1            =>     def loop_body(i, s):
                                        s = s * 2
                                        i = i + 1
                                        return (i, s)
                                    (i, s) = ag__.while_stmt(loop_test, loop_body, ('i', 's'),
                                                             (ag__.ld(locals(), 'i'), ...), 12)

The state of a statement is the names its body assigns: each generated function takes them
as parameters and returns them, and the call passes their values now (`ld` gives
`UNDEFINED` for a name not yet bound). An `if` whose branches both end with `return`
becomes `return ag__.if_return(...)`, after moving what follows an `if` that returns into
its `else`. In a loop, `break` and `continue` become flags (`_flags_for_jumps`), and so does
a `return`, rewritten before as a flag, a value and a `break` (returns.py); a statement with
`return` elsewhere is left as it is, and its condition goes through
`ag__.python_test`, which names the line if it is a tensor. `and`, `or` and `not` become
`ag__.and_`, `or_`, `not_`, and `a if c else b` `ag__.if_exp`. Nested functions, lambdas and classes are left as they are.
A loop whose body calls `tt.autograph.experimental.set_loop_options(...)` passes a copy of that
call to its statement, which evaluates it before the loop (`_loop_options`).
"""

import ast
import collections
import copy

RUNTIME = "ag__"
CONVERTED = "_tracer_autograph_converted"  # the attribute of a function not to convert


def convert_function_def(definition, filename):
    """`definition` (an ast.FunctionDef of code in `filename`) with its control flow
    rewritten."""
    definition.decorator_list = []
    definition.body = [_BooleanOperators().visit(s) for s in definition.body]
    context = _Context(filename)
    context.declared = _hoisted_declarations(definition)
    context.reads = _reads(definition)
    definition.body = _block(definition.body, context)
    return definition


def _hoisted_declarations(definition):
    """{name: ast.Global or ast.Nonlocal} for the names `definition`'s own `global` and
    `nonlocal` statements declare; the statements move to the top of its body (a converted
    branch or loop body is a function of its own, where one would declare the name there
    only). The generated functions declare them again (`_function`), as TensorFlow's
    autograph declares its loop and branch functions' state."""
    declared = {}

    def hoist(statements):
        kept = []
        for statement in statements:
            if isinstance(statement, (ast.Global, ast.Nonlocal)):
                declared.update(dict.fromkeys(statement.names, type(statement)))
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if inner and isinstance(inner, list) and not isinstance(statement, _SCOPES):
                    setattr(statement, field, hoist(inner) or [ast.Pass()])
            for handler in getattr(statement, "handlers", []):
                handler.body = hoist(handler.body) or [ast.Pass()]
            for case in getattr(statement, "cases", []):
                case.body = hoist(case.body) or [ast.Pass()]
            kept.append(statement)
        return kept

    body = hoist(definition.body)
    top = [
        kind(names=[name for name, k in declared.items() if k is kind])
        for kind in (ast.Global, ast.Nonlocal)
        if kind in declared.values()
    ]
    definition.body = _located(top, definition.body[0]) + (body or [ast.Pass()])
    return declared


class _BooleanOperators(ast.NodeTransformer):
    """`a and b`, `a or b` and `not a` become ag__.and_(lambda: a, lambda: b), ag__.or_(...)
    and ag__.not_(a): Python's on Python values (`b` still evaluated only when needed),
    logical ops on tensors known only when the function runs. A conditional expression
    `a if c else b` becomes ag__.if_exp(c, lambda: a, lambda: b): tt.cond on a tensor `c`.
    Nested scopes stay as they are."""

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if any(isinstance(n, ast.NamedExpr) for n in ast.walk(node)):
            return node  # a := inside would bind in the lambda
        call = _call("if_exp", node.test, _thunk(node.body), _thunk(node.orelse))
        return ast.copy_location(call, node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if any(isinstance(n, ast.NamedExpr) for n in ast.walk(node)):
            return node  # a := inside would bind in the lambda
        operator = "and_" if isinstance(node.op, ast.And) else "or_"
        thunks = [_thunk(value) for value in node.values]
        return ast.copy_location(_call(operator, *thunks), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("not_", node.operand), node)
        return node

    def visit_Call(self, node):
        """`range(n)`, `len(x)`, `int(x)`, `float(x)` become ag__.builtin(range, n), ...:
        on a tensor known only when the function runs, tt.range, its first dimension read
        then, tt.cast (`operators.builtin`, which calls the function itself where it is not
        the builtin: a local `len` is the user's)."""
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in BUILTINS:
            converted = _call("builtin", node.func, *node.args)
            converted.keywords = node.keywords
            return ast.copy_location(converted, node)
        if isinstance(node.func, (ast.Name, ast.Attribute)) and not runtime_call(node.func):
            # a function of the user's that this one calls is converted too, when it is
            # called (operators.converted), as TensorFlow's autograph converts it
            node.func = ast.copy_location(_call("converted", node.func), node.func)
        return node

    def visit_Compare(self, node):
        """`a < b < c` becomes ag__.and_(lambda: a < b, lambda: b < c), a logical_and on
        tensors, as TensorFlow's autograph converts it, where the middle operands are names,
        attributes or constants (read twice, as there)."""
        self.generic_visit(node)
        middle = node.comparators[:-1]
        if len(node.ops) < 2 or not all(_plain(m) for m in middle):
            return node
        operands = [node.left, *node.comparators]
        pairs = [
            ast.Compare(left=operands[k], ops=[op], comparators=[operands[k + 1]])
            for k, op in enumerate(node.ops)
        ]
        thunks = [_thunk(ast.copy_location(pair, node)) for pair in pairs]
        return ast.copy_location(_call("and_", *thunks), node)

    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


BUILTINS = ("range", "len", "int", "float")
# calls left as they are: Python's own that take the caller's frame, and the runtime's
_UNCONVERTED = frozenset(
    ("super", "locals", "globals", "vars", "eval", "exec", "print", "isinstance")
)


def runtime_call(func):
    """Whether `func` (a called name or attribute) is the runtime's or one of _UNCONVERTED."""
    if isinstance(func, ast.Name):
        return func.id in _UNCONVERTED or func.id == RUNTIME
    base = func
    while isinstance(base, ast.Attribute):
        base = base.value
    return isinstance(base, ast.Name) and base.id == RUNTIME


def _plain(expression):
    """Whether reading `expression` twice is reading it once: a name, an attribute of one, a
    constant."""
    while isinstance(expression, ast.Attribute):
        expression = expression.value
    return isinstance(expression, (ast.Name, ast.Constant))


def _reads(node):
    """How often each name is read (loaded) in `node`, nested scopes included."""
    return collections.Counter(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def _thunk(expression):
    arguments = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.copy_location(ast.Lambda(args=arguments, body=expression), expression)


class _Context:
    """Numbers for the generated functions' names, "file:line" texts for errors, and the
    names the function declares `global` or `nonlocal` and how often it reads each."""

    def __init__(self, filename):
        self.filename = filename
        self.count = 0
        self.declared = {}
        self.reads = collections.Counter()  # how often each name is read in the function
        self.python_loops = []  # (kind, line, has `else`) of the loops left as Python around

    def read_after(self, names, loop):
        """The names of `names` the function reads outside the statement `loop` (after it,
        for all the conversion knows): a tensor loop gives them a value even where they are
        first bound inside it."""
        inside = _reads(loop)
        return [n for n in names if self.reads[n] > inside[n]]

    def __next__(self):
        self.count += 1
        return self.count

    def at(self, line):
        return ast.Constant(f"{self.filename}:{line}")


def _block(statements, counter):
    statements = _returns_as_else(list(statements))
    converted = []
    for statement in statements:
        converted.extend(_statement(statement, counter))
    return converted or [ast.Pass()]


def _returns_as_else(statements):
    """`if t: ...return` followed by more: the rest becomes the `if`'s `else`."""
    for k, statement in enumerate(statements):
        if (
            isinstance(statement, ast.If)
            and not statement.orelse
            and _always_returns(statement.body)
            and k + 1 < len(statements)
        ):
            statement.orelse = _returns_as_else(statements[k + 1 :])
            return statements[: k + 1]
    return statements


def _always_returns(statements):
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        return _always_returns(last.body) and _always_returns(last.orelse)
    return False


def _statement(statement, counter):
    if isinstance(statement, ast.If):
        return _if(statement, counter)
    if isinstance(statement, ast.While):
        return _while(statement, counter)
    if isinstance(statement, ast.For):
        return _for(statement, counter)
    for field in ("body", "orelse", "finalbody"):
        if isinstance(statement, (ast.With, ast.Try)) and getattr(statement, field, None):
            setattr(statement, field, _block(getattr(statement, field), counter))
    if isinstance(statement, ast.Try):
        for handler in statement.handlers:
            handler.body = _block(handler.body, counter)
    return [statement]


# --- if ---------------------------------------------------------------------------------


def _if(statement, counter):
    line = statement.lineno
    if _always_returns(statement.body) and _always_returns(statement.orelse):
        if _jumps(statement.body, returns=False) or _jumps(statement.orelse, returns=False):
            return _left_as_python(statement, counter, "if")
        n = next(counter)
        # NOTE: the names before converting the branches, which adds jump flags to loops in them
        in_body, in_orelse = _assigned(statement.body), _assigned(statement.orelse)
        true_fn = _function(f"{RUNTIME}if_true_{n}", in_body, statement.body, counter)
        false_fn = _function(f"{RUNTIME}if_false_{n}", in_orelse, statement.orelse, counter)
        call = _call(
            "if_return",
            statement.test,
            _name(true_fn.name),
            _name(false_fn.name),
            _state(in_body, counter),
            _state(in_orelse, counter),
            counter.at(line),
            ast.Constant(getattr(statement, "returns_from_loop", False)),
        )
        return _located([true_fn, false_fn, ast.Return(call)], statement)
    if _jumps(statement.body) or _jumps(statement.orelse):
        return _left_as_python(statement, counter, "if")
    names = _assigned(statement.body + statement.orelse)
    in_body, in_orelse = set(_assigned(statement.body)), set(_assigned(statement.orelse))
    one_side = [name for name in names if (name in in_body) != (name in in_orelse)]
    n = next(counter)
    true_fn = _function(f"{RUNTIME}if_true_{n}", names, statement.body, counter, returns=names)
    false_fn = _function(f"{RUNTIME}if_false_{n}", names, statement.orelse, counter, returns=names)
    call = _call(
        "if_stmt",
        statement.test,
        _name(true_fn.name),
        _name(false_fn.name),
        _names(names),
        _state(names, counter),
        counter.at(line),
        _names(one_side),
    )
    return _located([true_fn, false_fn, *_assign(names, call)], statement)


# --- while and for ----------------------------------------------------------------------


def _while(statement, counter):
    if statement.orelse or _jumps(statement.body, loops=False):
        return _left_as_python(statement, counter, "while")
    n = next(counter)
    before, body, stop = _flags_for_jumps(statement.body, n)
    test = (
        statement.test
        if stop is None
        else _call("and_", _thunk(_not(stop)), _thunk(statement.test))
    )
    names = _assigned(body)
    read_after = counter.read_after(names, statement)
    loop_test = _function(f"{RUNTIME}loop_test_{n}", names, [ast.Return(test)], counter)
    loop_body = _function(f"{RUNTIME}loop_body_{n}", names, body, counter, returns=names)
    call = _call(
        "while_stmt",
        _name(loop_test.name),
        _name(loop_body.name),
        _names(names),
        _state(names, counter),
        counter.at(statement.lineno),
    )
    call.keywords = [ast.keyword(arg="read_after", value=_names(read_after))]
    call.keywords += _loop_options(statement.body)
    return _located([*before, loop_test, loop_body, *_assign(names, call)], statement)


def _for(statement, counter):
    if statement.orelse or _jumps(statement.body, loops=False):
        return _left_as_python(statement, counter, "for")
    n = next(counter)
    before, body, stop = _flags_for_jumps(statement.body, n)
    item = f"{RUNTIME}item_{n}"
    unpack = ast.Assign(targets=[statement.target], value=_name(item))
    names = _assigned([ast.For(target=statement.target, iter=statement.iter, body=body, orelse=[])])
    read_after = counter.read_after(names, statement)
    loop_body = _function(
        f"{RUNTIME}loop_body_{n}", names, [unpack, *body], counter, returns=names, first=item
    )
    functions, extra = [loop_body], []
    if stop is not None:  # the loop goes on while the break flag is unset
        extra_test = _function(f"{RUNTIME}extra_test_{n}", names, [ast.Return(_not(stop))], counter)
        functions.insert(0, extra_test)
        extra = [_name(extra_test.name)]
    call = _call(
        "for_stmt",
        statement.iter,
        _name(loop_body.name),
        _names(names),
        _state(names, counter),
        counter.at(statement.lineno),
        *extra,
    )
    call.keywords = [ast.keyword(arg="read_after", value=_names(read_after))]
    call.keywords += _loop_options(statement.body)
    return _located([*before, *functions, *_assign(names, call)], statement)


def _loop_options(body):
    """[the `options` keyword of a loop's statement] where the loop's body calls
    `set_loop_options` (tt.autograph.experimental's, which returns its options): a copy of
    that call, evaluated before the loop, as TensorFlow's autograph reads the options before
    it builds the loop; [] where it does not."""
    for statement in body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        if isinstance(func, ast.Call) and runtime_call(func.func) and func.args:
            func = func.args[0]  # ag__.converted(f): the call as the user wrote it
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name == "set_loop_options":
            return [ast.keyword(arg="options", value=copy.deepcopy(call))]
    return []


# --- break and continue, as flags -------------------------------------------------------------


def _flags_for_jumps(body, n):
    """(statements before the loop, the body without break and continue, the name of the
    break flag or None). `break` sets a flag the loop's condition reads; `continue` sets one
    for this iteration; the statements after either run only while neither is set."""
    jumps = {type(j) for j in _loop_jumps(body)}
    if not jumps:
        return [], body, None
    stop = f"{RUNTIME}break_{n}" if ast.Break in jumps else None
    skip = f"{RUNTIME}continue_{n}" if ast.Continue in jumps else None
    flags = [f for f in (stop, skip) if f]
    before = [_set(stop, False)] if stop else []
    body = _guarded(body, stop, skip, flags)
    if skip:
        body = [ast.copy_location(_set(skip, False), body[0]), *body]
    return before, body, stop


def _guarded(statements, stop, skip, flags):
    out = []
    for k, statement in enumerate(statements):
        if isinstance(statement, ast.Break):
            return [*out, ast.copy_location(_set(stop, True), statement)]
        if isinstance(statement, ast.Continue):
            return [*out, ast.copy_location(_set(skip, True), statement)]
        if not _loop_jumps([statement]):
            out.append(statement)
            continue
        for field in ("body", "orelse", "finalbody"):
            if getattr(statement, field, None):
                setattr(statement, field, _guarded(getattr(statement, field), stop, skip, flags))
        if isinstance(statement, ast.Try):
            for handler in statement.handlers:
                handler.body = _guarded(handler.body, stop, skip, flags)
        out.append(statement)
        rest = statements[k + 1 :]
        if rest:
            go_on = _not(_call("or_", *(_thunk(_name(f)) for f in flags)))
            guard = ast.If(test=go_on, body=_guarded(rest, stop, skip, flags), orelse=[])
            out.append(_located([ast.copy_location(guard, rest[0])], rest[0])[0])
        return out
    return out


def _loop_jumps(statements):
    """The break and continue statements of this loop (not of loops nested in it)."""
    found = []
    for statement in statements:
        for node in _walk_same_scope(statement):
            if isinstance(node, (ast.Break, ast.Continue)) and not _inside_loop(node, statement):
                found.append(node)
    return found


def _set(name, value):
    return ast.Assign(targets=[_name(name, store=True)], value=ast.Constant(value))


def _not(value):
    """ag__.not_(value): a flag's name, or an expression."""
    return _call("not_", _name(value) if isinstance(value, str) else value)


# --- what is left as Python -------------------------------------------------------------


def _left_as_python(statement, counter, kind):
    """A statement with break, continue or return in its body, or a loop with an `else`
    (which TensorFlow's autograph does not convert either), runs as Python; a tensor
    condition gets a clear error."""
    jump = _first_jump(statement.body + getattr(statement, "orelse", []))
    loop = counter.python_loops[-1] if counter.python_loops else None
    unsupported_else = kind != "if" and bool(statement.orelse)
    if unsupported_else:
        reason = "it has an `else` clause"
    elif jump in ("break", "continue") and kind == "if" and loop is not None and loop[2]:
        reason = (
            f"its body uses `{jump}` out of the `{loop[0]}` at line {loop[1]}, which has an "
            "`else` clause"
        )
        unsupported_else = True
    else:
        reason = f"its body uses `{jump}`"
    where = counter.at(statement.lineno)
    if isinstance(statement, (ast.If, ast.While)):
        statement.test = _call(
            "python_test",
            statement.test,
            ast.Constant(kind),
            ast.Constant(reason),
            where,
            ast.Constant(unsupported_else),
        )
    else:
        statement.iter = _call(
            "python_iterable",
            statement.iter,
            ast.Constant(reason),
            where,
            ast.Constant(unsupported_else),
        )
    if kind != "if":
        counter.python_loops.append((kind, statement.lineno, bool(statement.orelse)))
    statement.body = _block(statement.body, counter)
    if kind != "if":
        counter.python_loops.pop()
    if getattr(statement, "orelse", None):
        statement.orelse = _block(statement.orelse, counter)
    return [statement]


def _jumps(statements, loops=True, returns=True):
    """Whether `statements` break or continue out of this loop (with `loops`), or return
    (with `returns`)."""
    return _first_jump(statements, loops, returns) is not None


def _first_jump(statements, loops=True, returns=True):
    if returns and any(
        isinstance(node, ast.Return) for s in statements for node in _walk_same_scope(s)
    ):
        return "return"
    jumps = _loop_jumps(statements) if loops else []
    if jumps:
        return "break" if isinstance(jumps[0], ast.Break) else "continue"
    return None


def _inside_loop(target, root):
    """Whether `target` is inside a loop nested in `root` (it jumps out of that one)."""

    def search(node, in_loop):
        if node is target:
            return in_loop
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            found = search(child, in_loop or isinstance(child, (ast.For, ast.While)))
            if found is not None:
                return found
        return None

    return bool(search(root, isinstance(root, (ast.For, ast.While)) and root is not target))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _walk_same_scope(node):
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield from _walk_same_scope(child)


# --- names and generated code ---------------------------------------------------------------


# the generated names that are state of a converted statement: break and continue flags, and
# the flag and value of a `return` inside a loop (returns.py)
_FLAGS = (f"{RUNTIME}break_", f"{RUNTIME}continue_", f"{RUNTIME}do_return", f"{RUNTIME}retval")


def _assigned(statements):
    """The names `statements` bind (assignments, loop targets, with-as, imports, defs), in
    order of first binding, then the composite symbols they assign (`_composites`); nested
    scopes excluded."""
    names = _bound_names(statements)
    return names + _composites(statements, names)


def _composites(statements, names):
    """The attributes and items `statements` assign (`st.v = ...`, `d["a"] += 1`, as source
    text, "st.v", "d['a']"), which a converted statement carries as TensorFlow's autograph
    does: the chain of attributes and items (constants, or names `statements` do not bind)
    must start at a name they do not bind, so it is the same place on every path."""
    found = []
    for statement in statements:
        for node in _walk_same_scope(statement):
            if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
                text = ast.unparse(node)
                if text not in found and _fixed_place(node, names):
                    found.append(text)
    return found


def _fixed_place(node, names):
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            key = node.slice
            if not (
                isinstance(key, ast.Constant)
                or isinstance(key, ast.Name)
                and key.id not in names
                and not key.id.startswith(RUNTIME)
            ):
                return False
        node = node.value
    return isinstance(node, ast.Name) and node.id not in names and not node.id.startswith(RUNTIME)


def _is_composite(name):
    return not name.isidentifier()


def _bound_names(statements):
    names = []

    def add(name):
        flag = name.startswith(_FLAGS)
        if name not in names and (flag or not name.startswith(RUNTIME)):
            names.append(name)

    for statement in statements:
        for node in _walk_same_scope(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not statement:
                add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    add((alias.asname or alias.name).split(".")[0])
    return names


def _deleted(statements):
    """The names a `del` statement among `statements` unbinds (nested scopes excluded)."""
    return {
        target.id
        for statement in statements
        for node in _walk_same_scope(statement)
        if isinstance(node, ast.Delete)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _function(name, parameters, body, counter, returns=None, first=None):
    """A generated function of `parameters` (the statement's state) running `body`. A name
    the function declares `global` or `nonlocal` stays so in it: its parameter has another
    name, and the body starts by declaring the name and binding it to that parameter."""
    renamed = {
        p: f"{RUNTIME}arg_{p}" if p in counter.declared else f"{RUNTIME}sym_{k}"
        for k, p in enumerate(parameters)
        if p in counter.declared or _is_composite(p)
    }
    arguments = ([first] if first else []) + [renamed.get(p, p) for p in parameters]
    statements = _block(list(body), counter) if body else [ast.Pass()]
    if renamed:
        statements = _bound_on_entry(renamed, counter) + statements
    if returns is not None:
        # NOTE: a name the body deletes (`del t`) is returned as UNDEFINED, not read unbound
        deleted = _deleted(body)
        read = deleted & set(returns) or any(map(_is_composite, returns))
        result = _state(returns, counter) if read else _tuple(returns)
        statements = [*statements, ast.Return(result)]
    return ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=a) for a in arguments],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=statements,
        decorator_list=[],
        returns=None,
        type_params=[],
    )


def _bound_on_entry(renamed, counter):
    """The statements that start a generated function whose parameters `renamed` maps
    (names declared `global` or `nonlocal`, composite symbols) to the names it takes them
    as: each declared again and bound, each composite symbol set where it is defined."""
    declared = [p for p in renamed if p in counter.declared]
    statements = [counter.declared[p](names=[p]) for p in declared]
    for p, argument in renamed.items():
        statements.extend(_stored(p, _name(argument)))
    return statements


def _stored(target, value):
    """`target = value` (a name), or for a composite symbol `st.v`: `if
    ag__.defined(value): st.v = value`."""
    if not _is_composite(target):
        return [ast.Assign(targets=[_name(target, store=True)], value=value)]
    place = _expression(target)
    place.ctx = ast.Store()
    assign = ast.Assign(targets=[place], value=value)
    return [ast.If(test=_call("defined", value), body=[assign], orelse=[])]


def _expression(text):
    """The expression `text` (a name, a composite symbol), with no position: `_located`
    gives it the statement's."""
    expression = ast.parse(text, mode="eval").body
    for node in ast.walk(expression):
        for field in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, field):
                delattr(node, field)
    return expression


def _name(name, store=False):
    return ast.Name(id=name, ctx=ast.Store() if store else ast.Load())


def _tuple(names, store=False):
    return ast.Tuple(
        elts=[_name(n, store) for n in names], ctx=ast.Store() if store else ast.Load()
    )


def _names(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _state(names, counter=None):
    """(ag__.ld(locals(), 'a'), ...): each name's value now, or UNDEFINED. A name declared
    `global` or `nonlocal` (not in locals()) and a composite symbol are read by
    `ag__.ld_read(lambda: st.v)`."""
    declared = counter.declared if counter is not None else {}
    locals_call = ast.Call(func=_name("locals"), args=[], keywords=[])
    return ast.Tuple(
        elts=[
            _call("ld_read", _thunk(_expression(n)))
            if n in declared or _is_composite(n)
            else _call("ld", locals_call, ast.Constant(n))
            for n in names
        ],
        ctx=ast.Load(),
    )


def _call(operator, *args):
    function = ast.Attribute(value=_name(RUNTIME), attr=operator, ctx=ast.Load())
    return ast.Call(func=function, args=list(args), keywords=[])


def _assign(names, value):
    """The statements that bind `names` to the items of `value`: a composite symbol through
    a temporary, set only where it is defined after the statement."""
    if not names:
        return [ast.Expr(value)]
    temporaries = {n: f"{RUNTIME}sym_{k}" for k, n in enumerate(names) if _is_composite(n)}
    targets = [temporaries.get(n, n) for n in names]
    statements = [ast.Assign(targets=[_tuple(targets, store=True)], value=value)]
    for n, temporary in temporaries.items():
        statements.extend(_stored(n, _name(temporary)))
    return statements


def _located(statements, original):
    """The new statements, at the original's line (so errors and node locations name it)."""
    for statement in statements:
        for node in ast.walk(statement):
            if not hasattr(node, "lineno") or getattr(node, "lineno", None) is None:
                node.lineno = original.lineno
                node.col_offset = original.col_offset
                node.end_lineno = original.end_lineno
                node.end_col_offset = original.end_col_offset
    return statements
