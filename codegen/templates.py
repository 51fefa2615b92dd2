"""Rendering the C templates in `templates/` (strict: an undefined name is an error).

jinja2 compiles each template to Python once; that Python is kept as Python keeps a package's
bytecode: beside the templates, in `templates/__pycache__/` (or under `sys.pycache_prefix`,
PYTHONPYCACHEPREFIX), compiled by the installation's build (`compile_beside`; or, where
the build did not, by the first process that renders the template) and read by every
process, whatever its module cache holds. A process that finds them all renders
without importing jinja2: the compiled code calls the helpers of
codegen/template_runtime.py, not jinja2's (importing jinja2 was most of tracer's own share
of a first compiled call: docs/first-call.md). Where that folder cannot be written, or
someone other than its owner could write to it, they are kept in the private tracer cache
(`.templates/`) instead. Where Python writes no bytecode (PYTHONDONTWRITEBYTECODE), they are
written to the private cache too, and those already beside the templates are still read
first, as Python reads bytecode it may not write. Each is kept with the SHA-256 of the
template's text, so an edited template is compiled afresh (codegen/template_cache.py).
"""

import functools
import hashlib
import os
import re
import sys

from codegen import cache, template_cache, template_runtime


def render(template, **values):
    return _template(template).render(**values)


@functools.cache
def _template(name):
    """The template `name`, compiled (or its compiled form read), ready to render."""
    folder = _folder()
    path = os.path.join(folder, name)
    text, digest = _read(path)
    directory, read_first = compiled_directories(folder)
    code = template_cache.load(name, digest, directory, read_first)
    if code is None:
        code = _compiled(name, text, path)
        template_cache.dump(name, digest, code, directory)
    environment = _environment()
    scope = template_runtime.namespace(environment)
    exec(code, scope)
    return template_runtime.Template(environment, scope["root"])


def compile_beside(folder):
    """Compile every template in `folder` into the folder beside it, as the installation's
    build does (setup.py), the way pip compiles a package's bytecode when it installs it: the
    first process on a new installation then renders without jinja2, as every later one does.
    The number compiled; none where that folder cannot be made or is not trusted."""
    beside = _beside(folder)
    if beside is None:
        return 0
    names = sorted(name for name in os.listdir(folder) if name.endswith(".j2"))
    for name in names:
        path = os.path.join(folder, name)
        text, digest = _read(path)
        template_cache.dump(name, digest, _compiled(name, text, path), beside)
    return len(names)


def _read(path):
    """(the template's text, the SHA-256 of its bytes)."""
    with open(path, "rb") as handle:
        data = handle.read()
    return data.decode(), hashlib.sha256(data).digest()


@functools.cache
def _environment():
    return template_runtime.Environment(_own_filters(), _template)


def _own_filters():
    """The filters tracer adds to jinja2's (both environments have them)."""
    return {"format_dim": lambda name: f"int64_t {name}", "c_string": _c_string}


@functools.cache
def _folder():
    import templates  # its folder (importlib.resources.files would import its readers first)

    return os.path.dirname(os.path.abspath(templates.__file__))


_IMPORT = "from jinja2.runtime import "


def _compiled(name, text, path):
    """The code of the Python jinja2 compiles the template to, its import of jinja2's
    helpers left out (jinja2 is imported here, only where a template is not compiled yet)."""
    python = _jinja2().compile(text, name=name, filename=path, raw=True)
    first, rest = python.split("\n", 1)
    if not first.startswith(_IMPORT):
        raise RuntimeError(f"jinja2 compiled {name} to Python that starts {first[:60]!r}")
    return compile("\n" + rest, path, "exec")  # (the line numbers jinja2 gave kept)


@functools.cache
def _jinja2():
    import jinja2

    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    environment.filters.update(_own_filters())
    return environment


def compiled_directories(folder):
    """(where the compiled forms of the templates in `folder` are written, and folders only
    read before it): beside them (see `_beside`) where Python may write bytecode; otherwise
    the private cache's `.templates/`, after the folder beside them if it is there."""
    if not sys.dont_write_bytecode:
        beside = _beside(folder)
        if beside is not None:
            return beside, ()
    private = os.path.join(cache.cache_root(), ".templates")
    os.makedirs(private, mode=0o700, exist_ok=True)
    read_only = _beside(folder, make=False) if sys.dont_write_bytecode else None
    return private, () if read_only is None else (read_only,)


@functools.cache
def jinja2_version():
    """jinja2's version, as its package's first module says it (read, not imported): the
    compiled forms are jinja2's, and another jinja2 may compile a template otherwise."""
    import importlib.util

    spec = importlib.util.find_spec("jinja2")
    try:
        with open(spec.origin, encoding="utf-8") as handle:
            found = re.search(r"^__version__ = [\"']([^\"']+)[\"']", handle.read(), re.M)
    except (AttributeError, TypeError, OSError, ValueError):  # no jinja2, or not its source
        found = None
    return found.group(1) if found else "unknown"


def _beside(folder, make=True):
    """The folder beside the templates for their compiled forms (cache.beside_installation)."""
    tag = f"jinja2-{jinja2_version()}.{sys.implementation.cache_tag}"
    return cache.beside_installation(folder, tag, make)


def _c_string(text):
    """A C string literal of `text` (printable ASCII; other characters as octal escapes)."""
    out = []
    for byte in str(text).encode():
        char = chr(byte)
        if char in '"\\?':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'
