"""Graph passes, each a pure function in its own module with a docstring showing its rewrite."""
