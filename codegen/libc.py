"""The C library a module uses, declared in its prologue instead of read from the headers.

<math.h>, <complex.h>, <stdlib.h>, <string.h> and <cblas.h> hold thousands of lines a module
never calls, and reading them is a large part of a small module's compiler run. A module's prologue declares the names its C uses, taken from the
tables below; the build makes a name used but not declared, and a declaration that differs
from the compiler's own built-in one, errors (codegen/build.py), so a missing or mistyped
entry stops the build instead of calling a function with the wrong type. The macros are the
GNU C built-ins glibc's headers define them as; another compiler reads the headers.
Exported C (codegen/export.py) keeps the headers: it is compiled by the user's toolchain,
and it names nothing after the names a user's program gets from them (LIBRARY_NAMES).
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
        table[f"scipy_cblas_{letter}gemv"] = (
            f"void scipy_cblas_{letter}gemv(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, int, int, "
            f"{alpha}, {data}, int, {data}, int, {alpha}, {out}, int);"
        )
        table[f"scipy_cblas_{letter}trsm"] = (
            f"void scipy_cblas_{letter}trsm({side}, enum CBLAS_DIAG, int, int, {alpha}, "
            f"{data}, int, {out}, int);"
        )
        table[f"scipy_cblas_{letter}trsv"] = (
            f"void scipy_cblas_{letter}trsv(enum CBLAS_ORDER, enum CBLAS_UPLO, "
            f"enum CBLAS_TRANSPOSE, enum CBLAS_DIAG, int, {data}, int, {out}, int);"
        )
    return table


def _lapacke():
    """scipy-openblas32's LAPACKE (a 32-bit lapack_int) for the factorizations a module's
    templates call: its header is 36,000 lines, a fifth of a small module's compile.
    Exported C includes <lapacke.h> and calls LAPACKE's own names instead."""
    table = {}
    for letter, T in (("s", "float"), ("d", "double")):
        for name, parameters in (
            ("getrf_work", f"int, lapack_int, lapack_int, {T} *, lapack_int, lapack_int *"),
            ("potrf_work", f"int, char, lapack_int, {T} *, lapack_int"),
            (
                "getrs_work",
                f"int, char, lapack_int, lapack_int, const {T} *, lapack_int, "
                f"const lapack_int *, {T} *, lapack_int",
            ),
            ("geqrf", f"int, lapack_int, lapack_int, {T} *, lapack_int, {T} *"),
            ("orgqr", f"int, lapack_int, lapack_int, lapack_int, {T} *, lapack_int, const {T} *"),
            ("syevd", f"int, char, char, lapack_int, {T} *, lapack_int, {T} *"),
            (
                "gesdd",
                f"int, char, lapack_int, lapack_int, {T} *, lapack_int, {T} *, {T} *, "
                f"lapack_int, {T} *, lapack_int",
            ),
        ):
            full = f"scipy_LAPACKE_{letter}{name}"
            table[full] = f"lapack_int {full}({parameters});"
    return table


# what the LAPACKE prototypes need, as <lapacke.h> defines it for scipy-openblas32
LAPACKE_TYPES = [
    "typedef int32_t lapack_int;",
    "#define LAPACK_ROW_MAJOR 101",
    "#define LAPACK_COL_MAJOR 102",
]

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
    "omp_get_max_threads": "int omp_get_max_threads(void);",
    "memset": "void *memset(void *, int, size_t);",
    "memcmp": "int memcmp(const void *, const void *, size_t);",
    **_cblas(),
    **_lapacke(),
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
PROLOGUE_MACROS = {"TR_MADDF": "fmaf", "TR_MADD": "fma", "TR_THREADS": "omp_get_max_threads"}

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
    lapacke = blas and any(name.startswith("scipy_LAPACKE_") for name in used)
    if lapacke:
        lines += LAPACKE_TYPES
    lines += [line for name, line in FUNCTIONS.items() if name in used]
    lines.append("#else")
    lines += [f"#include <{header}.h>" for header in HEADERS]
    if "omp_get_max_threads" in used:
        lines += ["#ifdef _OPENMP", "#include <omp.h>", "#endif"]
    if blas:
        lines.append("#include <cblas.h>")
    if lapacke:
        lines.append("#include <lapacke.h>")
    lines.append("#endif")
    return "\n".join(lines)


# --- the names a user's program may hold beside an exported header ------------------------
# Exported C (codegen/export.py) names no function, argument or output after these: every
# identifier the C99 headers below declare (functions, macros, types and objects; the
# float and long double variants of <math.h> and <complex.h> written once, as their double
# name), with C11's additions, and what glibc's declare too by default (POSIX and BSD names:
# gcc and clang compile gnu17 unless told otherwise). Names of the patterns the standard
# reserves for these headers are LIBRARY_PATTERN's instead of listed.

_MATH_FUNCTIONS = [  # (the f and l variants: LIBRARY_NAMES)
    *_UNARY,
    *_BINARY,
    *(
        "fma frexp ldexp modf ilogb lrint llrint lround llround scalbn scalbln remquo nan "
        "nexttoward "
        # glibc's (POSIX, BSD, SVID)
        "drem finite gamma j0 j1 jn y0 y1 yn scalb significand isinf isnan"
    ).split(),
]
_COMPLEX_FUNCTIONS = [*_COMPLEX_UNARY, *_COMPLEX_TO_REAL, "cpow"]

_LIBRARY = {
    "math.h": (
        "HUGE_VAL HUGE_VALF HUGE_VALL INFINITY NAN FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL "
        "FP_ZERO FP_FAST_FMA FP_FAST_FMAF FP_FAST_FMAL FP_ILOGB0 FP_ILOGBNAN MATH_ERRNO "
        "MATH_ERREXCEPT math_errhandling fpclassify isfinite isinf isnan isnormal signbit "
        "isgreater isgreaterequal isless islessequal islessgreater isunordered float_t double_t "
        "M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 "
        "M_SQRT1_2 MAXFLOAT HUGE signgam lgamma_r lgammaf_r lgammal_r"
    ),
    "complex.h": "complex imaginary I CMPLX CMPLXF CMPLXL",
    "string.h": (
        "memcpy memmove strcpy strncpy strcat strncat memcmp strcmp strcoll strncmp strxfrm "
        "memchr strchr strcspn strpbrk strrchr strspn strstr strtok memset strerror strlen "
        "bcmp bcopy bzero explicit_bzero ffs ffsl ffsll index rindex memccpy stpcpy stpncpy "
        "strcasecmp strncasecmp strcasecmp_l strncasecmp_l strcoll_l strdup strndup strerror_l "
        "strerror_r strnlen strsep strsignal strtok_r strxfrm_l"
    ),
    "stdlib.h": (
        "div_t ldiv_t lldiv_t EXIT_FAILURE EXIT_SUCCESS RAND_MAX MB_CUR_MAX atof atoi atol atoll "
        "strtod strtof strtold strtol strtoll strtoul strtoull rand srand calloc free malloc "
        "realloc abort atexit exit getenv system bsearch qsort abs labs llabs div ldiv lldiv "
        "mblen mbtowc wctomb mbstowcs wcstombs aligned_alloc at_quick_exit quick_exit "
        "a64l alloca arc4random arc4random_buf arc4random_uniform clearenv drand48 drand48_r "
        "ecvt ecvt_r erand48 erand48_r fcvt fcvt_r gcvt getloadavg getsubopt initstate "
        "initstate_r jrand48 jrand48_r l64a lcong48 lcong48_r lrand48 lrand48_r mkdtemp mkstemp "
        "mkstemps mktemp mrand48 mrand48_r nrand48 nrand48_r on_exit posix_memalign putenv "
        "qecvt qecvt_r qfcvt qfcvt_r qgcvt rand_r random random_r reallocarray realpath rpmatch "
        "seed48 seed48_r setenv setstate setstate_r srand48 srand48_r srandom srandom_r strtoq "
        "strtouq unsetenv valloc pselect select "
        "WCONTINUED WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WNOHANG "
        "WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED FD_CLR FD_ISSET FD_SET FD_SETSIZE FD_ZERO "
        "NFDBITS BYTE_ORDER BIG_ENDIAN LITTLE_ENDIAN PDP_ENDIAN be16toh be32toh be64toh htobe16 "
        "htobe32 htobe64 htole16 htole32 htole64 le16toh le32toh le64toh "
        "blkcnt_t blksize_t caddr_t clock_t clockid_t daddr_t dev_t fd_mask fd_set fsblkcnt_t "
        "fsfilcnt_t fsid_t gid_t id_t ino_t key_t locale_t loff_t mode_t nlink_t off_t pid_t "
        "quad_t sigset_t ssize_t suseconds_t time_t timer_t u_char u_int u_long u_quad_t u_short "
        "uid_t uint ulong ushort u_int8_t u_int16_t u_int32_t u_int64_t pthread_t pthread_attr_t "
        "pthread_key_t pthread_once_t pthread_spinlock_t pthread_mutex_t pthread_mutexattr_t "
        "pthread_cond_t pthread_condattr_t pthread_rwlock_t pthread_rwlockattr_t "
        "pthread_barrier_t pthread_barrierattr_t"
    ),
    "stdint.h": "intptr_t uintptr_t intmax_t uintmax_t PTRDIFF_MIN PTRDIFF_MAX SIG_ATOMIC_MIN "
    "SIG_ATOMIC_MAX SIZE_MAX WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX",
    "stddef.h": "ptrdiff_t size_t wchar_t NULL offsetof max_align_t",
    "stdio.h": (
        "FILE fpos_t BUFSIZ EOF FOPEN_MAX FILENAME_MAX L_tmpnam SEEK_CUR SEEK_END SEEK_SET "
        "TMP_MAX stderr stdin stdout remove rename tmpfile tmpnam fclose fflush fopen freopen "
        "setbuf setvbuf fprintf fscanf printf scanf snprintf sprintf sscanf vfprintf vfscanf "
        "vprintf vscanf vsnprintf vsprintf vsscanf fgetc fgets fputc fputs getc getchar gets "
        "putc putchar puts ungetc fread fwrite fgetpos fseek fsetpos ftell rewind clearerr feof "
        "ferror perror ctermid dprintf vdprintf fdopen fileno fmemopen open_memstream getdelim "
        "getline pclose popen renameat tempnam tmpnam_r fseeko ftello flockfile ftrylockfile "
        "funlockfile getc_unlocked getchar_unlocked putc_unlocked putchar_unlocked "
        "clearerr_unlocked feof_unlocked ferror_unlocked fflush_unlocked fgetc_unlocked "
        "fputc_unlocked fread_unlocked fwrite_unlocked fileno_unlocked getw putw setbuffer "
        "setlinebuf L_ctermid P_tmpdir va_list"
    ),
    "limits.h": (
        "CHAR_BIT SCHAR_MIN SCHAR_MAX UCHAR_MAX CHAR_MIN CHAR_MAX MB_LEN_MAX SHRT_MIN SHRT_MAX "
        "USHRT_MAX LONG_MIN LONG_MAX ULONG_MAX LLONG_MIN LLONG_MAX ULLONG_MAX "
        "AIO_PRIO_DELTA_MAX BC_BASE_MAX BC_DIM_MAX BC_SCALE_MAX BC_STRING_MAX CHARCLASS_NAME_MAX "
        "COLL_WEIGHTS_MAX DELAYTIMER_MAX EXPR_NEST_MAX HOST_NAME_MAX LINE_MAX LOGIN_NAME_MAX "
        "MAX_CANON MAX_INPUT MQ_PRIO_MAX NAME_MAX NGROUPS_MAX PATH_MAX PIPE_BUF "
        "PTHREAD_DESTRUCTOR_ITERATIONS PTHREAD_KEYS_MAX PTHREAD_STACK_MIN RE_DUP_MAX RTSIG_MAX "
        "SEM_VALUE_MAX SSIZE_MAX TTY_NAME_MAX XATTR_LIST_MAX XATTR_NAME_MAX XATTR_SIZE_MAX"
    ),
    "float.h": " ".join(
        f"{kind}_{name}"
        for kind in ("FLT", "DBL", "LDBL")
        for name in (
            "MANT_DIG DIG MIN_EXP MIN_10_EXP MAX_EXP MAX_10_EXP MAX EPSILON MIN TRUE_MIN "
            "DECIMAL_DIG HAS_SUBNORM"
        ).split()
    )
    + " FLT_ROUNDS FLT_EVAL_METHOD FLT_RADIX DECIMAL_DIG",
    "errno.h": "errno",
    "stdbool.h": "bool true false",
    # the compiler's own: gcc and clang define these in their gnu modes
    "": "linux unix",
}

LIBRARY_NAMES = frozenset(
    [f"{name}{suffix}" for name in _MATH_FUNCTIONS for suffix in ("", "f", "l")]
    + [f"{name}{suffix}" for name in _COMPLEX_FUNCTIONS for suffix in ("", "f", "l")]
    + [name for names in _LIBRARY.values() for name in names.split()]
    + [name for name in FUNCTIONS if not name.startswith(("scipy_cblas_", "scipy_LAPACKE_"))]
    + list(MACROS)
)

# the standard's reservations for these headers (C99 7.1.3, 7.26): `_` and an uppercase
# letter or `_` anywhere, errno's macros (E and a digit or uppercase letter), <stdint.h>'s
# types and macros (int8_t, INT_FAST64_MAX, UINT64_C, ...)
LIBRARY_PATTERN = re.compile(r"_[A-Z_]|E[0-9A-Z]|u?int\w*_t\Z|U?INT\w*_(MAX|MIN|C)\Z")
