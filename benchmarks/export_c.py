"""Exported C against CasADi's generated C: the same functions written once in tracer and
once in CasADi's SX symbolics, both generated as C, compiled by the same `cc` with the same
flags, and called the same way from small C programs.

    python benchmarks/export_c.py [--quick] [--json out.json] [--o1]

- B13, call time of small functions: a planar 2-link arm's forward dynamics (the formulas of
  examples/export_c/arm.py) and its jacobian with respect to q, qd and tau; a 16-32-32-1 tanh
  MLP (fixed weights, seed 0) and its gradient with respect to its 16 inputs.
- B14, a 1,000-op elementwise chain of 100 float64 elements, summed, with its gradient (one
  entry point returning both): the bytes of the .c files each system writes, the wall time
  of `cc -O3 -std=c99 -c` on them (and of -O1 with --o1: CasADi's source takes minutes),
  and the call time.
- B15, the arm dynamics on 10^5 states in one call: tracer's batched function with the
  number of states a runtime size (d0), CasADi's scalar function mapped ("serial").

Each C program is checked before it is timed: its outputs must match a numpy reference
(derivatives by complex step, exact to rounding) and the other system's outputs to 1e-10
relative, or no time is reported for it. A timing is the best of several repetitions of a
loop of calls (each repetition at least a set time), and the two systems alternate over
rounds so a slow spell of a shared machine meets both. CasADi is optional: without it,
tracer's figures are reported and CasADi's are marked skipped.
"""

import argparse
import json
import os
import platform
import string
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples", "export_c"))

from arm import GRAVITY, LENGTHS, MASSES, dynamics  # noqa: E402

import tracer as tt  # noqa: E402

CC = os.environ.get("CC", "cc")
STANDARD = "-std=c99"
CFLAGS = ("-O3", STANDARD)  # no -march=native: the same portable code for both systems
TOLERANCE = 1e-10
SYSTEMS = ("tracer", "casadi")
MLP_SIZES = (16, 32, 32, 1)
CHAIN_OPS_PER_CYCLE = 8  # the tt/numpy/SX ops of one cycle of `chain_formula`


@dataclass
class Settings:
    """Sizes and timing effort: --quick shrinks both."""

    directory: str
    seconds: float  # the least time of one timed repetition
    repeats: int  # repetitions per timing run, the best kept
    rounds: int  # timing runs per system, alternating between systems
    chain_size: int
    chain_cycles: int
    points: int
    o1: bool


@dataclass
class Call:
    """How a C program calls one exported function: its C name, its inputs (float64 arrays)
    and, for tracer, the sizes it takes at run time (d0, ...)."""

    name: str
    inputs: list
    dims: tuple = ()


@dataclass
class Library:
    """One system's generated C for one workload, and the calls the programs make of it."""

    system: str
    directory: str
    header: str
    prefix: str
    calls: dict
    source_bytes: int = 0
    compile_seconds: dict = field(default_factory=dict)  # optimisation flag -> seconds
    objects: list = field(default_factory=list)


@dataclass
class Row:
    """One line of the table: a figure or a status (why there is none) per system."""

    workload: str
    title: str
    unit: str  # "seconds" or "bytes"
    figures: dict
    errors: dict = field(default_factory=dict)  # relative error against the reference

    def ratio(self):
        tracer, casadi = self.figures.get("tracer"), self.figures.get("casadi")
        if isinstance(tracer, (int, float)) and isinstance(casadi, (int, float)):
            return tracer / casadi
        return None


# The functions, written once for numpy, tracer and CasADi where their ops are spelled alike.


def arm_formula(m, q0, q1, qd0, qd1, tau0, tau1):
    """The arm's joint accelerations from the scalars of its state, with `m`'s cos and sin
    (numpy, tracer or CasADi): arm.py's `dynamics` step by step, in the same order."""
    (m1, m2), (l1, l2) = MASSES, LENGTHS
    cos2, sin2 = m.cos(q1), m.sin(q1)
    m11 = (m1 + m2) * l1**2 + m2 * l2**2 + 2 * m2 * l1 * l2 * cos2
    m12 = m2 * l2**2 + m2 * l1 * l2 * cos2
    m22 = m2 * l2**2
    h = m2 * l1 * l2 * sin2
    coriolis0, coriolis1 = -h * (2 * qd0 * qd1 + qd1**2), h * qd0**2
    reach = m.cos(q0 + q1)
    gravity0 = (m1 + m2) * GRAVITY * l1 * m.cos(q0) + m2 * GRAVITY * l2 * reach
    gravity1 = m2 * GRAVITY * l2 * reach
    rhs0, rhs1 = tau0 - coriolis0 - gravity0, tau1 - coriolis1 - gravity1
    det = m11 * m22 - m12 * m12
    return (m22 * rhs0 - m12 * rhs1) / det, (m11 * rhs1 - m12 * rhs0) / det


def arm_numpy(q, qd, tau):
    """The reference: states along the last axis, any leading shape, complex too."""
    parts = (q[..., 0], q[..., 1], qd[..., 0], qd[..., 1], tau[..., 0], tau[..., 1])
    return np.stack(arm_formula(np, *parts), axis=-1)


def arm_batched(q, qd, tau):
    """tracer: the dynamics of N states at once, each argument of shape [N, 2]."""
    parts = (q[:, 0], q[:, 1], qd[:, 0], qd[:, 1], tau[:, 0], tau[:, 1])
    return tt.stack(arm_formula(tt, *parts), axis=1)


def mlp_weights():
    """The MLP's (weight [in, out], bias [out]) per layer: seed 0, scaled by 1/sqrt(in)."""
    rng = np.random.default_rng(0)
    shapes = zip(MLP_SIZES, MLP_SIZES[1:])
    return [
        (rng.standard_normal((m, n)) / np.sqrt(m), 0.1 * rng.standard_normal(n)) for m, n in shapes
    ]


def mlp_formula(tanh, matvec, x, layers):
    """tanh on the hidden layers, the last one linear; matvec(h, W) is h times W."""
    for k, (weight, bias) in enumerate(layers):
        x = matvec(x, weight) + bias
        if k < len(layers) - 1:
            x = tanh(x)
    return x


def chain_formula(m, x, cycles):
    """`cycles` times the 8 elementwise ops sin, *1.01, +0.1, tanh, and x*exp(-x*x): values
    stay below 1.2 in magnitude whatever x. The chain contracts, so the gradient is tiny
    (1e-45 after 125 cycles) but still a normal double, compared as any other."""
    for _ in range(cycles):
        x = m.tanh(m.sin(x) * 1.01 + 0.1)
        x = m.exp(-x * x) * x
    return x


def complex_step_jacobian(function, inputs, which, step=1e-30):
    """d function / d inputs[which], shape output + input, exact to rounding: the imaginary
    part of f(x + i h e_k) is h df/dx_k with no difference of nearby values to cancel."""
    columns = []
    for k in range(inputs[which].size):
        shifted = [np.array(x, dtype=complex) for x in inputs]
        shifted[which].flat[k] += 1j * step
        columns.append(np.asarray(function(*shifted)).imag / step)
    return np.stack(columns, axis=-1).reshape(np.shape(function(*inputs)) + inputs[which].shape)


# Generating each system's C.


def export_tracer(directory, function, signature, prefix, calls, derivatives=()):
    tt.export_c(function, signature, directory, prefix=prefix, derivatives=derivatives)
    return Library("tracer", directory, f"{prefix}.h", prefix, calls)


def export_casadi(ca, directory, functions, prefix, calls):
    generator = ca.CodeGenerator(f"{prefix}.c", {"with_header": True})
    for function in functions:
        generator.add(function)
    os.makedirs(directory, exist_ok=True)
    generator.generate(directory + os.sep)
    return Library("casadi", directory, f"{prefix}.h", prefix, calls)


def casadi_arm(ca):
    """The arm's SX function, its symbols and its output."""
    q, qd, tau = (ca.SX.sym(name, 2) for name in ("q", "qd", "tau"))
    qdd = ca.vertcat(*arm_formula(ca, q[0], q[1], qd[0], qd[1], tau[0], tau[1]))
    return ca.Function("arm", [q, qd, tau], [qdd]), (q, qd, tau), qdd


def row_major(ca, matrix):
    """A dense matrix whose column-major storage (CasADi's) is `matrix` in row-major order
    (tracer's): its transpose."""
    return ca.densify(matrix).T


# Compiling and calling.

MAIN = string.Template(r"""/* Calls one exported function as a C program would: `bench check` writes its outputs to
 * out<k>.bin; `bench time SECONDS REPEATS` prints the best seconds per call of REPEATS
 * loops of calls, each of at least SECONDS. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "$header"

static double $arrays;
static double sink;
$state

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double *load(const char *path, size_t count) {
    double *values = malloc(count * sizeof *values);
    FILE *file = fopen(path, "rb");
    if (values == NULL || file == NULL || fread(values, sizeof *values, count, file) != count) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(file);
    return values;
}

static void save(const char *path, const double *values, size_t count) {
    FILE *file = fopen(path, "wb");
    if (file == NULL || fwrite(values, sizeof *values, count, file) != count) exit(1);
    fclose(file);
}

static void call(void) {
    if ($call != 0) {
        fprintf(stderr, "the call returned an error\n");
        exit(1);
    }
}

/* `count` calls, the first input moved by 1e-9 each call and the first output summed:
 * no call repeats the last one's work, and none is dead. */
static double timed(long count) {
    const double start = now();
    for (long i = 0; i < count; i++) {
        in0[0] += (i & 1) ? -1e-9 : 1e-9;
        call();
        sink += out0[0];
    }
    return now() - start;
}

int main(int argc, char **argv) {
$load
$setup
    if (argc == 2 && strcmp(argv[1], "check") == 0) {
        call();
$save
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "time") == 0) {
        const double seconds = atof(argv[2]);
        const int repeats = atoi(argv[3]);
        long count = 1;
        double best;
        while (timed(count) < seconds) count *= 2;
        best = timed(count);
        for (int r = 1; r < repeats; r++) {
            const double t = timed(count);
            if (t < best) best = t;
        }
        printf("%.9e %ld %g\n", best / count, count, sink);
        return 0;
    }
    fprintf(stderr, "usage: %s check | time SECONDS REPEATS\n", argv[0]);
    return 2;
}
""")


def tracer_c(library, call, n_outputs):
    """(globals, setup, call expression) for tracer's convention: inputs, sizes, outputs,
    one workspace of PREFIX_work_size(sizes) bytes."""
    dims = [f"(int64_t){d}" for d in call.dims]
    setup = (
        f"    work = malloc({library.prefix}_work_size({', '.join(dims)}));\n"
        "    if (work == NULL) return 1;"
    )
    arguments = [f"in{k}" for k in range(len(call.inputs))] + dims
    arguments += [f"out{k}" for k in range(n_outputs)] + ["work"]
    return "static void *work;", setup, f"{call.name}({', '.join(arguments)})"


def casadi_c(library, call, n_outputs):
    """(globals, setup, call expression) for CasADi's convention: arrays of input and output
    pointers and the work arrays NAME_work sizes (at least one element each: no malloc(0))."""
    state = (
        "static const casadi_real **arg;\nstatic casadi_real **res;\n"
        "static casadi_int *iw;\nstatic casadi_real *w;"
    )
    lines = [
        "    casadi_int n_arg, n_res, n_iw, n_w;",
        f"    {call.name}_work(&n_arg, &n_res, &n_iw, &n_w);",
        "    arg = malloc(n_arg * sizeof *arg);",
        "    res = malloc(n_res * sizeof *res);",
        "    iw = malloc((n_iw + 1) * sizeof *iw);",
        "    w = malloc((n_w + 1) * sizeof *w);",
        "    if (arg == NULL || res == NULL || iw == NULL || w == NULL) return 1;",
    ]
    lines += [f"    arg[{k}] = in{k};" for k in range(len(call.inputs))]
    lines += [f"    res[{k}] = out{k};" for k in range(n_outputs)]
    return state, "\n".join(lines), f"{call.name}(arg, res, iw, w, 0)"


CALLING_CONVENTIONS = {"tracer": tracer_c, "casadi": casadi_c}


def run(command, cwd):
    return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True)


def compile_library(library, levels=("-O3",)):
    """Compile the library's .c files to objects, timing `cc LEVEL -std=c99 -c` (wall) at
    each optimisation level; the objects kept are the last level's."""
    sources = sorted(f for f in os.listdir(library.directory) if f.endswith(".c"))
    library.source_bytes = sum(os.path.getsize(os.path.join(library.directory, f)) for f in sources)
    for level in levels:
        start = time.perf_counter()
        for source in sources:
            run([CC, level, STANDARD, "-c", source], library.directory)
        library.compile_seconds[level] = time.perf_counter() - start
    library.objects = [os.path.join(library.directory, f[:-2] + ".o") for f in sources]


def build_program(library, key, output_shapes, directory):
    """A C program calling `library.calls[key]`, its inputs written beside it; returns its
    directory."""
    call = library.calls[key]
    directory = os.path.join(directory, "programs", f"{key}_{library.system}")
    os.makedirs(directory)
    sizes = [np.asarray(x).size for x in call.inputs]
    for k, x in enumerate(call.inputs):
        np.asarray(x, dtype=np.float64).tofile(os.path.join(directory, f"in{k}.bin"))
    counts = [int(np.prod(shape)) for shape in output_shapes]
    state, setup, expression = CALLING_CONVENTIONS[library.system](library, call, len(counts))
    source = MAIN.substitute(
        header=library.header,
        arrays=", ".join(
            [f"*in{k}" for k in range(len(sizes))] + [f"*out{k}" for k in range(len(counts))]
        ),
        state=state,
        call=expression,
        load="\n".join(
            [f'    in{k} = load("in{k}.bin", {n});' for k, n in enumerate(sizes)]
            + [f"    out{k} = malloc({n} * sizeof *out{k});" for k, n in enumerate(counts)]
        ),
        setup=setup,
        save="\n".join(f'        save("out{k}.bin", out{k}, {n});' for k, n in enumerate(counts)),
    )
    with open(os.path.join(directory, "main.c"), "w") as handle:
        handle.write(source)
    run([CC, *CFLAGS, "-I", library.directory, "-c", "main.c"], directory)
    run([CC, "main.o", *library.objects, "-lm", "-o", "bench"], directory)
    return directory


def check_outputs(program, output_shapes):
    run(["./bench", "check"], program)
    return [
        np.fromfile(os.path.join(program, f"out{k}.bin")).reshape(shape)
        for k, shape in enumerate(output_shapes)
    ]


def seconds_per_call(program, settings):
    printed = run(["./bench", "time", str(settings.seconds), str(settings.repeats)], program)
    return float(printed.stdout.split()[0])


def relative_error(outputs, reference):
    """The largest difference of any output from the reference's, relative to the largest
    magnitude of that reference output: norm-wise, as the rounding of a near-zero entry of
    a jacobian is no error."""
    worst = 0.0
    for output, expected in zip(outputs, reference):
        scale = max(np.max(np.abs(expected)), np.finfo(np.float64).tiny)
        worst = max(worst, float(np.max(np.abs(output - expected)) / scale))
    return worst


def timed_row(workload, title, libraries, key, reference, settings):
    """Build, check and time `key` of each system's library: a time only for a system whose
    outputs match the reference and the other system's."""
    shapes = [np.shape(r) for r in reference]
    figures, programs, outputs = {}, {}, {}
    for system, library in libraries.items():
        if library is None:
            figures[system] = "skipped (not installed)"
            continue
        programs[system] = build_program(library, key, shapes, settings.directory)
        outputs[system] = check_outputs(programs[system], shapes)
    errors = {system: relative_error(o, reference) for system, o in outputs.items()}
    for system, error in list(errors.items()):
        if error > TOLERANCE:
            figures[system] = f"wrong results ({error:.1e})"
    if len(outputs) == 2:
        apart = errors["tracer vs casadi"] = relative_error(outputs["tracer"], outputs["casadi"])
        if apart > TOLERANCE:
            for system in outputs:
                figures.setdefault(system, f"disagrees with the other system ({apart:.1e})")
    passed = [s for s in programs if s not in figures]
    for system in passed:
        figures[system] = float("inf")
    for _ in range(settings.rounds):
        for system in passed:
            figures[system] = min(figures[system], seconds_per_call(programs[system], settings))
    return Row(workload, title, "seconds", figures, errors)


def compile_all(libraries, levels=("-O3",)):
    for library in libraries.values():
        if library is not None:
            compile_library(library, levels)


# The workloads.


def b13(ca, settings):
    """The arm and its jacobian, the MLP and its gradient: call times."""
    arm_inputs = [np.array([0.3, -0.4]), np.array([0.2, 0.5]), np.array([1.0, 0.2])]
    arm_calls = {
        "arm": Call("arm", arm_inputs),
        "arm_jacobian": Call("arm_jacobian", arm_inputs),
    }
    signature = [tt.TensorSpec([2], tt.float64)] * 3
    libraries = {
        "tracer": export_tracer(
            os.path.join(settings.directory, "arm_tracer"),
            dynamics,
            signature,
            "arm",
            arm_calls,
            derivatives=("jacobian",),
        ),
        "casadi": None,
    }
    if ca is not None:
        function, symbols, qdd = casadi_arm(ca)
        jacobian = ca.Function(
            "arm_jacobian", list(symbols), [row_major(ca, ca.jacobian(qdd, s)) for s in symbols]
        )
        libraries["casadi"] = export_casadi(
            ca,
            os.path.join(settings.directory, "arm_casadi"),
            [function, jacobian],
            "arm",
            arm_calls,
        )
    compile_all(libraries)
    jacobians = [complex_step_jacobian(arm_numpy, arm_inputs, k) for k in range(3)]
    cases = [
        ("arm", "arm qdd = f(q, qd, tau)", [arm_numpy(*arm_inputs)]),
        ("arm_jacobian", "arm jacobian (q, qd, tau)", jacobians),
    ]
    rows = [
        timed_row("B13", f"{title}, per call", libraries, key, reference, settings)
        for key, title, reference in cases
    ]
    return rows + mlp_rows(ca, settings)


def mlp_rows(ca, settings):
    layers = mlp_weights()
    x = np.random.default_rng(1).standard_normal(MLP_SIZES[0])

    def reference(x):
        return mlp_formula(np.tanh, np.matmul, x, layers)[0]

    constants = [(tt.constant(w), tt.constant(b)) for w, b in layers]

    def mlp(x):
        row = tt.reshape(x, [1, MLP_SIZES[0]])
        return tt.reshape(mlp_formula(tt.tanh, tt.matmul, row, constants), [])

    libraries = {
        "tracer": export_tracer(
            os.path.join(settings.directory, "mlp_tracer"),
            mlp,
            [tt.TensorSpec([MLP_SIZES[0]], tt.float64)],
            "mlp",
            {"mlp": Call("mlp", [x]), "mlp_gradient": Call("mlp_vjp", [x, np.array(1.0)])},
            derivatives=("vjp",),
        ),
        "casadi": None,
    }
    if ca is not None:
        symbol = ca.SX.sym("x", MLP_SIZES[0])
        y = mlp_formula(ca.tanh, lambda h, w: ca.mtimes(w.T, h), symbol, layers)
        functions = [
            ca.Function("mlp", [symbol], [y]),
            ca.Function("mlp_gradient", [symbol], [ca.densify(ca.gradient(y, symbol))]),
        ]
        calls = {"mlp": Call("mlp", [x]), "mlp_gradient": Call("mlp_gradient", [x])}
        libraries["casadi"] = export_casadi(
            ca, os.path.join(settings.directory, "mlp_casadi"), functions, "mlp", calls
        )
    compile_all(libraries)
    gradient = complex_step_jacobian(reference, [x], 0)
    name = "MLP " + "-".join(map(str, MLP_SIZES)) + " tanh"
    cases = [("mlp", "value", [np.array(reference(x))]), ("mlp_gradient", "gradient", [gradient])]
    return [
        timed_row("B13", f"{name}, {what}, per call", libraries, key, expected, settings)
        for key, what, expected in cases
    ]


def b14(ca, settings):
    """The chain and its gradient: source bytes, compile time, call time."""
    n, cycles = settings.chain_size, settings.chain_cycles
    x = np.linspace(-2.0, 2.0, n)

    def chain(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            value = tt.reduce_sum(chain_formula(tt, x, cycles))
        return value, tape.gradient(value, x)

    calls = {"chain": Call("chain", [x])}
    libraries = {
        "tracer": export_tracer(
            os.path.join(settings.directory, "chain_tracer"),
            chain,
            [tt.TensorSpec([n], tt.float64)],
            "chain",
            calls,
        ),
        "casadi": None,
    }
    if ca is not None:
        symbol = ca.SX.sym("x", n)
        value = ca.sum1(chain_formula(ca, symbol, cycles))
        function = ca.Function("chain", [symbol], [value, ca.densify(ca.gradient(value, symbol))])
        libraries["casadi"] = export_casadi(
            ca, os.path.join(settings.directory, "chain_casadi"), [function], "chain", calls
        )
    levels = ("-O1", "-O3") if settings.o1 else ("-O3",)
    compile_all(libraries, levels)  # -O3 last: its objects are the ones called

    def reference(x):
        return np.sum(chain_formula(np, x, cycles))

    expected = [np.array(reference(x)), complex_step_jacobian(reference, [x], 0)]
    ops = f"{cycles * CHAIN_OPS_PER_CYCLE:,}-op chain of {n} float64"
    skipped = {s: "skipped (not installed)" for s, library in libraries.items() if library is None}

    def built(title, unit, figure):
        present = {s: figure(library) for s, library in libraries.items() if library is not None}
        return Row("B14", title, unit, {**present, **skipped})

    rows = [built(f"{ops}: .c source", "bytes", lambda library: library.source_bytes)]
    for level in levels:
        rows.append(
            built(f"{ops}: cc {level} -c", "seconds", lambda lib, lv=level: lib.compile_seconds[lv])
        )
    rows.append(
        timed_row(
            "B14", f"{ops}: value and gradient, per call", libraries, "chain", expected, settings
        )
    )
    return rows


def b15(ca, settings):
    """The arm dynamics on `settings.points` states in one call."""
    n = settings.points
    rng = np.random.default_rng(2)
    inputs = [
        rng.uniform(-np.pi, np.pi, (n, 2)),
        rng.standard_normal((n, 2)),
        rng.standard_normal((n, 2)),
    ]
    libraries = {
        "tracer": export_tracer(
            os.path.join(settings.directory, "batch_tracer"),
            arm_batched,
            [tt.TensorSpec([None, 2], tt.float64) for _ in range(3)],
            "batch",
            {"batch": Call("batch", inputs, dims=(n,))},
        ),
        "casadi": None,
    }
    if ca is not None:
        mapped = casadi_arm(ca)[0].map(n, "serial")  # [2, n] column-major: tracer's [n, 2]
        libraries["casadi"] = export_casadi(
            ca,
            os.path.join(settings.directory, "batch_casadi"),
            [mapped],
            "batch",
            {"batch": Call(mapped.name(), inputs)},
        )
    compile_all(libraries)
    title = f"arm qdd on {n:,} states, per call (tracer: N as d0)"
    return [timed_row("B15", title, libraries, "batch", [arm_numpy(*inputs)], settings)]


# Reporting.


def format_figure(value, unit):
    if isinstance(value, str):
        return value
    if unit == "bytes":
        return f"{value:,} B"
    for scale, name in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if value >= scale:
            return f"{value / scale:.3g} {name}"
    return f"{value * 1e9:.3g} ns"


def print_table(rows, header):
    labels = [f"{row.workload} {row.title}" for row in rows]
    width = max(map(len, labels))
    print(header)
    print(f"{'workload':{width}} {'tracer':>12} {'casadi':>24} {'tracer/casadi':>14}")
    for label, row in zip(labels, rows):
        ratio = row.ratio()
        cells = [format_figure(row.figures[s], row.unit) for s in SYSTEMS]
        print(
            f"{label:{width}} {cells[0]:>12} {cells[1]:>24} "
            f"{'' if ratio is None else f'{ratio:.3g}x':>14}"
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--o1", action="store_true", help="also time cc -O1 -c for B14")
    options = parser.parse_args(argv)
    try:
        import casadi as ca
    except ImportError:
        ca = None
    quick = options.quick
    with tempfile.TemporaryDirectory(prefix="export_c_bench_") as directory:
        settings = Settings(
            directory=directory,
            seconds=0.01 if quick else 0.1,
            repeats=3 if quick else 5,
            rounds=1 if quick else 3,
            chain_size=10 if quick else 100,
            chain_cycles=25 if quick else 125,
            points=1000 if quick else 100_000,
            o1=options.o1,
        )
        rows = [*b13(ca, settings), *b14(ca, settings), *b15(ca, settings)]
    compiler = run([CC, "--version"], ROOT).stdout.splitlines()[0]
    casadi_version = ca.__version__ if ca is not None else None
    version = f"CasADi {casadi_version}" if ca is not None else "CasADi not installed"
    header = (
        f"tracer's exported C against CasADi's generated C ({version}); {compiler}, "
        f"{' '.join(CFLAGS)}; {platform.machine()}, {os.cpu_count()} cores"
    )
    print_table(rows, header)
    if options.json:
        results = {
            "quick": quick,
            "compiler": compiler,
            "cflags": list(CFLAGS),
            "casadi": casadi_version,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
            "settings": {
                "seconds_per_repetition": settings.seconds,
                "repeats": settings.repeats,
                "rounds": settings.rounds,
            },
            "rows": [
                {
                    "workload": row.workload,
                    "title": row.title,
                    "unit": row.unit,
                    **{system: row.figures[system] for system in SYSTEMS},
                    "ratio": row.ratio(),
                    "relative_error": row.errors,
                }
                for row in rows
            ],
        }
        with open(options.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
