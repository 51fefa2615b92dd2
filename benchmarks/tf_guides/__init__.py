"""TensorFlow's own guide notebooks run on TensorFlow and on tracer, cell by cell, and compared.

execute.py runs one notebook's code cells (inside a subprocess, with either engine),
compare.py decides which cells match, run.py is the command line. See docs/tf_guides.md.
"""
