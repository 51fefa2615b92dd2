"""Why a module could not be built or loaded. `tt.function(backend="auto")` falls back to the
interpreter, with one warning naming the cause, on any `BuildFailure`; `backend="c"` raises it."""


class BuildFailure(RuntimeError):
    """A module could not be built or loaded."""


class CompilerUnavailable(BuildFailure):
    """No working C compiler."""


class CompileError(BuildFailure):
    """The compiler rejected generated code, or ran past its time limit: reported with the
    compiler's words."""


class LoadError(BuildFailure):
    """A built module could not be loaded (a cache on a file system that forbids running
    code, a library it links gone missing)."""


class UnsafeCacheDirectory(BuildFailure):
    """The cache directory is not the user's own, or others can write to it: modules found
    there could have been planted, so none is loaded from it."""


class UnusableCacheDirectory(BuildFailure):
    """The cache directory cannot be made or written to (a file in its place, a path under
    a file, a read-only directory): nothing can be built there."""


class UnsupportedGraph(BuildFailure):
    """The graph holds something the C backend does not compile (a tensor of too high a rank)."""
