"""Rendering the C templates in `templates/` with jinja2 (strict: an undefined name is an error)."""

import functools
import importlib.resources

import jinja2


@functools.lru_cache(maxsize=1)
def environment():
    folder = importlib.resources.files("templates")
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template, **values):
    return environment().get_template(template).render(**values)
