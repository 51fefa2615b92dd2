"""The jinja2 templates of the generated C (read from this package's folder by `codegen/templates.py`)."""
