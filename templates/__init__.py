"""The jinja2 templates of the generated C (read with importlib.resources by `codegen`)."""
