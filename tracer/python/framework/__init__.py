"""`tracer.python.framework`: see tracer/python/__init__.py."""
