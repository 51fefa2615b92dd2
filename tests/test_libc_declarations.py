"""A module declares the C library names it calls (codegen/libc.py) instead of including
the headers: each declaration must be the headers' own, and a name left out stops the
build instead of being called with a guessed type."""

import math
import subprocess

import numpy as np
import pytest

import tracer as tt
from codegen import build, libc
from codegen.errors import CompileError


def _compile(tmp_path, source, extra=()):
    path = tmp_path / "check.c"
    path.write_text(source)
    include = [f"-I{build.blas()[0]}"] if build.blas() else []
    command = [build.compiler(), *build.FLAGS, *include, "-c", str(path), "-o", str(path) + ".o"]
    return subprocess.run(command + list(extra), capture_output=True, text=True, timeout=120)


def test_every_declaration_is_the_one_the_headers_give(tmp_path):
    headers = "".join(f"#include <{h}.h>\n" for h in ["stddef", *libc.HEADERS])
    # LAPACKE's types as the module defines them, after the header's: the same, or an error
    blas = "#include <cblas.h>\n#include <lapacke.h>\n" if build.blas() else ""
    types = libc.LAPACKE_TYPES if blas else []
    declarations = [
        line for name, line in libc.FUNCTIONS.items() if blas or not name.startswith("scipy_")
    ]
    # a prototype that differs from the headers' is a conflicting redeclaration: an error
    done = _compile(tmp_path, headers + blas + "\n".join(types + declarations) + "\n")
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(declarations) > 150


def test_a_prototype_that_differs_from_the_compilers_is_refused(tmp_path):
    done = _compile(tmp_path, "#include <stddef.h>\nfloat sinhf(double);\n")
    assert done.returncode != 0 and "sinhf" in done.stderr


def test_a_module_declares_only_what_it_calls():
    def f(x):
        return tt.reduce_sum(tt.math.erf(x) * tt.math.log1p(x))

    x = tt.constant(np.linspace(0.1, 1, 5, dtype=np.float32))
    compiled = tt.function(f, backend="c")
    y = compiled(x)
    prologue = compiled.get_concrete_function(x).c_source().split("#else")[0]
    assert "float erff(float);" in prologue and "float log1pf(float);" in prologue
    assert "cexp" not in prologue and "qsort" not in prologue
    v = x.numpy().astype(np.float64)
    want = np.sum([math.erf(e) for e in v] * np.log1p(v))
    np.testing.assert_allclose(float(y), want, rtol=1e-6)


def test_a_name_used_but_not_declared_stops_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delitem(libc.FUNCTIONS, "floorf")  # floor division's helper calls it

    def f(x):
        return tt.reduce_sum(x // 0.3)

    with pytest.raises(CompileError, match="floorf"):
        tt.function(f, backend="c")(tt.constant(np.linspace(0.1, 1, 6, dtype=np.float32)))


@pytest.mark.skipif(build.blas() is None, reason="no scipy-openblas32: factorizations are loops")
def test_a_factorization_declares_lapacke_instead_of_its_header():
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    compiled = tt.function(tt.linalg.cholesky, backend="c")
    np.testing.assert_allclose(compiled(tt.constant(a)).numpy(), np.linalg.cholesky(a), rtol=1e-14)
    source = compiled.get_concrete_function(tt.constant(a)).c_source()
    prologue = source.split("#else")[0]
    assert "scipy_LAPACKE_dpotrf_work(int, char, lapack_int, double *, lapack_int);" in prologue
    assert "typedef int32_t lapack_int;" in prologue
    assert "lapacke.h" not in source.replace("#include <lapacke.h>\n#endif", "", 1)
