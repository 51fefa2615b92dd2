"""The C library a module uses, declared in its prologue instead of read from the headers.

<math.h>, <complex.h>, <stdlib.h>, <string.h> and <cblas.h> hold thousands of lines a module
never calls: reading them was 15-20 ms of the 80-90 ms compiler run of a small module (B22's
chain of 10 layers). A module's prologue declares the names its C uses, taken from the
tables below; the build makes a name used but not declared, and a declaration that differs
from the compiler's own built-in one, errors (codegen/build.py), so a missing or mistyped
entry stops the build instead of calling a function with the wrong type. The macros are the
GNU C built-ins glibc's headers define them as; another compiler reads the headers.
Exported C (codegen/export.py) keeps the headers: it is compiled by the user's toolchain.
"""

import re

_UNARY = (
    "acos asin atan cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 log log10 "
    "log1p log2 logb cbrt fabs sqrt erf erfc lgamma tgamma ceil floor nearbyint rint round "
    "trunc"
).split()
_BINARY = "atan2 pow hypot fmod remainder copysign nextafter fdim fmax fmin".split()
_COMPLEX_UNARY = (
    "cexp clog csqrt csin ccos ctan casin cacos catan csinh ccosh ctanh casinh cacosh catanh "
    "conj cproj"
).split()
_COMPLEX_TO_REAL = "cabs carg creal cimag".split()

_ENUMS = {
    "CBLAS_ORDER": "CblasRowMajor=101, CblasColMajor=102",
    "CBLAS_TRANSPOSE": "CblasNoTrans=111, CblasTrans=112, CblasConjTrans=113",
    "CBLAS_UPLO": "CblasUpper=121, CblasLower=122",
    "CBLAS_DIAG": "CblasNonUnit=131, CblasUnit=132",
    "CBLAS_SIDE": "CblasLeft=141, CblasRight=142",
}


def _math():
    table = {}
    for real, suffix in (("double", ""), ("float", "f")):
        for name in _UNARY:
            table[name + suffix] = f"{real} {name}{suffix}({real});"
        for name in _BINARY:
            table[name + suffix] = f"{real} {name}{suffix}({real}, {real});"
        table["fma" + suffix] = f"{real} fma{suffix}({real}, {real}, {real});"
        table["frexp" + suffix] = f"{real} frexp{suffix}({real}, int *);"
        table["ldexp" + suffix] = f"{real} ldexp{suffix}({real}, int);"
        table["modf" + suffix] = f"{real} modf{suffix}({real}, {real} *);"
        table["ilogb" + suffix] = f"int ilogb{suffix}({real});"
        table["llrint" + suffix] = f"long long llrint{suffix}({real});"
        table["lrint" + suffix] = f"long lrint{suffix}({real});"
        complex_ = f"{real} _Complex"
        for name in _COMPLEX_UNARY:
            table[name + suffix] = f"{complex_} {name}{suffix}({complex_});"
        for name in _COMPLEX_TO_REAL:
            table[name + suffix] = f"{real} {name}{suffix}({complex_});"
        table["cpow" + suffix] = f"{complex_} cpow{suffix}({complex_}, {complex_});"
    return table


def _cblas():
    """scipy-openblas32's CBLAS (32-bit indices) for the products and solves templates call."""
    enums = "enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int"
    side = "enum CBLAS_ORDER, enum CBLAS_SIDE, enum CBLAS_UPLO, enum CBLAS_TRANSPOSE"
    table = {}
    for letter, scalar, alpha in (
        ("s", "float", "float"),
        ("d", "double", "double"),
        ("c", "void", "const void *"),
        ("z", "void", "const void *"),
    ):
        data = "const void *" if scalar == "void" else f"const {scalar} *"
        out = "void *" if scalar == "void" else f"{scalar} *"
        table[f"scipy_cblas_{letter}gemm"] = (
            f"void scipy_cblas_{letter}gemm({enums}, {alpha}, {data}, int, {data}, int, "
            f"{alpha}, {out}, int);"
        )
        table[f"scipy_cblas_{letter}trsm"] = (
            f"void scipy_cblas_{letter}trsm({side}, enum CBLAS_DIAG, int, int, {alpha}, "
            f"{data}, int, {out}, int);"
        )
    return table


FUNCTIONS = {
    **_math(),
    "malloc": "void *malloc(size_t);",
    "calloc": "void *calloc(size_t, size_t);",
    "realloc": "void *realloc(void *, size_t);",
    "free": "void free(void *);",
    "abort": "void abort(void);",
    "abs": "int abs(int);",
    "labs": "long labs(long);",
    "llabs": "long long llabs(long long);",
    "qsort": "void qsort(void *, size_t, size_t, int (*)(const void *, const void *));",
    "memcpy": "void *memcpy(void *restrict, const void *restrict, size_t);",
    "memmove": "void *memmove(void *, const void *, size_t);",
    "memset": "void *memset(void *, int, size_t);",
    "memcmp": "int memcmp(const void *, const void *, size_t);",
    **_cblas(),
}

MACROS = {
    "complex": "#define complex _Complex",
    "I": "#define I (__extension__ 1.0iF)",
    "NAN": '#define NAN (__builtin_nanf(""))',
    "INFINITY": "#define INFINITY (__builtin_inff())",
    "isnan": "#define isnan(x) __builtin_isnan(x)",
    "isinf": "#define isinf(x) __builtin_isinf_sign(x)",
    "isfinite": "#define isfinite(x) __builtin_isfinite(x)",
    "signbit": "#define signbit(x) __builtin_signbit(x)",
}

HEADERS = "complex math stdlib string".split()

# what the prologue's own macros (templates/prologue.h.j2) call
PROLOGUE_MACROS = {"TR_MADDF": "fmaf", "TR_MADD": "fma"}

_WORD = re.compile(r"[A-Za-z_]\w*")


def declarations(texts, blas):
    """The prologue's lines that declare the C library names used in `texts` (the module's
    C, its prologue aside): the macros and prototypes under GNU C, the headers otherwise."""
    used = set()
    for text in texts:
        used.update(_WORD.findall(text))
    used.update(name for macro, name in PROLOGUE_MACROS.items() if macro in used)
    lines = ["#if defined(__GNUC__)"]
    lines += [line for name, line in MACROS.items() if name in used]
    if blas and any(name.startswith("scipy_cblas_") for name in used):
        lines += [f"enum {name} {{{values}}};" for name, values in _ENUMS.items()]
    lines += [line for name, line in FUNCTIONS.items() if name in used]
    lines.append("#else")
    lines += [f"#include <{header}.h>" for header in HEADERS]
    if blas:
        lines.append("#include <cblas.h>")
    lines.append("#endif")
    return "\n".join(lines)
