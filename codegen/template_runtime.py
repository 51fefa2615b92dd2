"""What the templates' compiled code calls when it renders, so that a process renders C
without importing jinja2.

jinja2 compiles a template to the Python of a module (`Environment.compile(raw=True)`) whose
`root(context)` yields the text; that module imports its helpers from `jinja2.runtime`, and
importing any part of jinja2 imports all of it, its lexer's and parser's modules included,
before every process's first C: most of tracer's own share of a first compiled call. The
compiled code only calls a few of those helpers, for what the templates use (`if`, `for`
with `loop`, `set`, macros and `call` blocks, `include`, `with`, the filters `length`,
`replace`, `join`, `map` and `format`, the test `none`, the global `range`), and this module
defines them, with jinja2's meaning for those uses (codegen/templates.py runs the compiled
code with them; tests/test_templates.py renders every template both ways and compares).
Names the compiled code imports but no template's code calls are bound to `_unused`, which
fails loudly.
"""


class _Missing:
    """The compiled code's marker of a name not yet bound."""

    def __repr__(self):
        return "missing"


missing = _Missing()


class TemplateError(Exception):
    """Rendering a template failed."""


class UndefinedError(TemplateError):
    """A template used a name, attribute or item that its values do not have."""


class TemplateRuntimeError(TemplateError):
    pass


class TemplateNotFound(TemplateError):
    pass


class Undefined:
    """The value of an inline `if` whose condition is false and that has no `else`: empty
    text, false, no items (jinja2's `Undefined`)."""

    def __init__(self, hint=None, obj=missing, name=None, exc=UndefinedError):
        self._hint, self._obj, self._name = hint, obj, name

    def _message(self):
        if self._hint:
            return self._hint
        if self._obj is missing:
            return f"{self._name!r} is undefined"
        kind = type(self._obj).__name__
        if not isinstance(self._name, str):
            return f"{kind} object has no element {self._name!r}"
        return f"{kind!r} object has no attribute {self._name!r}"

    def _fail(self, *args, **kwargs):
        raise UndefinedError(self._message())

    def __getattr__(self, name):
        if name[:2] == "__" and name[-2:] == "__":
            raise AttributeError(name)
        self._fail()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _fail
    __pos__ = __neg__ = __call__ = __getitem__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __int__ = __float__ = __complex__ = __pow__ = __rpow__ = _fail

    def __str__(self):
        return ""

    def __bool__(self):
        return False

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __eq__(self, other):
        return type(self) is type(other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return id(type(self))


class StrictUndefined(Undefined):
    """A name, attribute or item the values do not have: any use of it but passing it on
    raises UndefinedError naming it (the templates are rendered strict)."""

    __iter__ = __str__ = __len__ = __eq__ = __ne__ = __bool__ = __hash__ = Undefined._fail
    __contains__ = Undefined._fail


class _EvalContext:
    """The compiled code's evaluation context: never escaping (autoescape is off)."""

    autoescape = False


class Context:
    """The names a template renders with: its values over the globals (`parent`), and the
    names its top level sets (`vars`)."""

    def __init__(self, environment, parent):
        self.environment = environment
        self.parent = parent
        self.vars = {}
        self.exported_vars = set()
        self.eval_ctx = _EvalContext()

    def resolve_or_missing(self, key):
        if key in self.vars:
            return self.vars[key]
        return self.parent.get(key, missing)

    def get_all(self):
        return {**self.parent, **self.vars} if self.vars else dict(self.parent)

    def call(self, function, *args, **kwargs):
        kwargs.pop("_loop_vars", None)
        kwargs.pop("_block_vars", None)
        return function(*args, **kwargs)


class LoopContext:
    """`loop` in a `for`: iterating it gives (item, itself) with its position set."""

    def __init__(self, iterable, undefined, recurse=None, depth0=0):
        self._items = list(iterable)
        self.index0 = -1

    def __iter__(self):
        for index, item in enumerate(self._items):
            self.index0 = index
            yield item, self

    @property
    def length(self):
        return len(self._items)

    @property
    def index(self):
        return self.index0 + 1

    @property
    def revindex0(self):
        return self.length - self.index

    @property
    def revindex(self):
        return self.length - self.index0

    @property
    def first(self):
        return self.index0 == 0

    @property
    def last(self):
        return self.index0 == self.length - 1


class Macro:
    """A template's macro, or a `call` block's body (`caller`): called with its arguments by
    position or name; one not given is `missing`, which its code makes undefined."""

    def __init__(
        self, environment, function, name, arguments, catch_kwargs, catch_varargs, caller,
        autoescape=False,  # (the templates are rendered unescaped)
    ):  # fmt: skip
        self._environment = environment
        self._function = function
        self.name = name
        self.arguments = arguments
        self.catch_kwargs = catch_kwargs
        self.catch_varargs = catch_varargs
        self.caller = caller

    def __call__(self, *args, **kwargs):
        count = len(self.arguments)
        values = list(args[:count])
        named_caller = "caller" in self.arguments[len(values) :]
        for name in self.arguments[len(values) :]:
            values.append(kwargs.pop(name, missing))
        if self.caller and not named_caller:
            given = kwargs.pop("caller", None)
            values.append(
                self._environment.undefined("No caller defined", name="caller")
                if given is None
                else given
            )
        if self.catch_kwargs:
            values.append(kwargs)
        elif kwargs:
            raise TypeError(f"macro {self.name!r} takes no keyword argument {next(iter(kwargs))!r}")
        if self.catch_varargs:
            values.append(args[count:])
        elif len(args) > count:
            raise TypeError(f"macro {self.name!r} takes not more than {count} argument(s)")
        return self._function(*values)


def str_join(values):
    return "".join(map(str, values))


markup_join = str_join


def identity(value):
    return value


def internalcode(function):
    return function


def _unused(*args, **kwargs):
    raise TemplateRuntimeError("a compiled template called a part of jinja2 tracer does not have")


# the filters and the test the templates use, called as jinja2 calls its own (replace and
# join get the evaluation context first, map the context)
def _replace(eval_context, text, old, new, count=None):
    return str(text).replace(str(old), str(new), -1 if count is None else count)


def _join(eval_context, values, separator=""):
    return str(separator).join(map(str, values))


def _map(context, values, name, *args, **kwargs):
    """The filter `name` applied to each of `values` (the templates map no attribute)."""
    named = context.environment.filters[name]
    for value in values or ():
        yield named(value, *args, **kwargs)


def _format(text, *args, **kwargs):
    if args and kwargs:
        raise TemplateRuntimeError("format takes positional or keyword arguments, not both")
    return str(text) % (kwargs or args)


FILTERS = {"length": len, "replace": _replace, "join": _join, "map": _map, "format": _format}
TESTS = {"none": lambda value: value is None}
GLOBALS = {"range": range, "dict": dict}


class Environment:
    """What the compiled code asks of its environment: filters, tests, attribute and item
    lookups that fall back on each other as jinja2's do, and the templates it includes
    (`load(name)`: a Template)."""

    undefined = StrictUndefined

    def __init__(self, filters, load):
        self.filters = {**FILTERS, **filters}
        self.tests = dict(TESTS)
        self._load = load

    @staticmethod
    def concat(parts):
        return "".join(parts)

    def getattr(self, value, attribute):
        try:
            return getattr(value, attribute)
        except AttributeError:
            pass
        try:
            return value[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=value, name=attribute)

    def getitem(self, value, key):
        try:
            return value[key]
        except (AttributeError, TypeError, LookupError):
            if isinstance(key, str):
                try:
                    return getattr(value, key)
                except AttributeError:
                    pass
            return self.undefined(obj=value, name=key)

    def get_template(self, name, parent=None):
        return self._load(name)

    def get_or_select_template(self, name, parent=None):
        return self._load(name)


class Template:
    """A compiled template's `root` as a renderer."""

    def __init__(self, environment, root):
        self.environment = environment
        self.root_render_func = root

    def new_context(self, values=None, shared=False, locals=None):
        parent = dict(values or {}) if shared else {**GLOBALS, **(values or {})}
        for key, value in (locals or {}).items():
            if value is not missing:
                parent[key] = value
        return Context(self.environment, parent)

    def render(self, **values):
        return "".join(self.root_render_func(self.new_context(values)))


def namespace(environment):
    """The names the compiled code of a template reads besides its own: what it imports from
    jinja2.runtime, and its environment."""
    return {
        "environment": environment,
        "missing": missing,
        "Undefined": Undefined,
        "LoopContext": LoopContext,
        "Macro": Macro,
        "str_join": str_join,
        "markup_join": markup_join,
        "identity": identity,
        "internalcode": internalcode,
        "TemplateNotFound": TemplateNotFound,
        "TemplateRuntimeError": TemplateRuntimeError,
        "Markup": _unused,
        "Namespace": _unused,
        "TemplateReference": _unused,
        "escape": _unused,
    }
