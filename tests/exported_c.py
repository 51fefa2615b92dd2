"""Calling exported C from a C program, as a user does: a `main` that holds the inputs,
calls each entry point and writes the outputs to stdout, built with the strict and the
sanitizer flags users build with."""

import os
import shutil
import subprocess

import numpy as np
import pytest

STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
# -O0: the sanitizers check every access as at -O1, and the catalogue compiles in a third
# of the time
SANITIZED = ["-std=c99", "-O0", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
# AddressSanitizer alone: every access checked, in a third of the time UBSan's checks add
ADDRESS_SANITIZED = ["-std=c99", "-O0", "-g", "-fsanitize=address"]


def compiler():
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


class Call:
    """One call of an entry point: its inputs, dims, and the outputs' shapes and dtypes."""

    def __init__(self, function, inputs, outputs, dims=()):
        self.function = function
        self.inputs = [np.ascontiguousarray(a) for a in inputs]
        self.outputs = [(tuple(np.shape(o)), np.asarray(o).dtype) for o in outputs]
        self.dims = list(dims)


def main_source(prefix, calls, work_dims=()):
    """A C main that makes each call and writes its outputs, raw, to stdout."""
    lines = [
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <math.h>",
        f'#include "{prefix}.h"',
        "int main(void) {",
        f"    void *work = malloc({prefix}_work_size({', '.join(map(str, work_dims)) or ''}) + 1);",
        "    int code = 0;",
        "    if (!work) return 2;",
    ]
    for k, call in enumerate(calls):
        arguments = []
        lines.append("    {")
        for j, array in enumerate(call.inputs):
            name = f"in{k}_{j}"
            lines.append(
                f"        static const {_ctype(array.dtype)} {name}[] = {{{_items(array)}}};"
            )
            arguments.append(name)
        arguments += [str(d) for d in call.dims]
        for j, (shape, dtype) in enumerate(call.outputs):
            name = f"out{k}_{j}"
            lines.append(f"        static {_ctype(dtype)} {name}[{max(1, int(np.prod(shape)))}];")
            arguments.append(name)
        arguments.append("work")
        lines.append(f"        code = {call.function}({', '.join(arguments)});")
        lines.append(
            f'        if (code) {{ fprintf(stderr, "{call.function}: %s\\n", '
            f"{prefix}_error_message(code)); return 1; }}"
        )
        for j, (shape, dtype) in enumerate(call.outputs):
            count = int(np.prod(shape))
            lines.append(f"        fwrite(out{k}_{j}, sizeof(out{k}_{j}[0]), {count}, stdout);")
        lines.append("    }")
    lines += ["    free(work);", "    return 0;", "}"]
    return "\n".join(lines) + "\n"


def build(directory, prefix, flags, extra_sources=(), extra_flags=()):
    """Compile `prefix`.c (and `extra_sources`) in `directory` with `flags`: the program's
    path. Raises AssertionError with the compiler's words when it fails."""
    out = os.path.join(directory, f"program{abs(hash(tuple(flags))) % 10**6}")
    sources = [os.path.join(directory, f"{prefix}.c"), *extra_sources]
    command = [compiler(), *flags, "-I", directory, *sources, "-o", out, *extra_flags, "-lm"]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(command)}\n{result.stderr[-4000:]}"
    return out


def run(program, calls):
    """The outputs of each call, read back from the program's stdout."""
    environment = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0")
    result = subprocess.run([program], capture_output=True, env=environment, timeout=120)
    assert result.returncode == 0, result.stderr.decode()[-4000:]
    data, offset, results = result.stdout, 0, []
    for call in calls:
        outputs = []
        for shape, dtype in call.outputs:
            size = int(np.prod(shape)) * np.dtype(dtype).itemsize
            outputs.append(np.frombuffer(data[offset : offset + size], dtype).reshape(shape))
            offset += size
        results.append(outputs)
    assert offset == len(data)
    return results


def _ctype(dtype):
    return {"float32": "float", "float64": "double", "bool": "bool"}.get(
        np.dtype(dtype).name, f"{np.dtype(dtype).name}_t"
    )


def _items(array):
    flat = array.reshape(-1)
    if flat.size == 0:
        return "0"
    if array.dtype.kind == "f":
        suffix = "f" if array.dtype == np.float32 else ""
        return ", ".join(_float(float(v), suffix) for v in flat)
    if array.dtype == np.bool_:
        return ", ".join("1" if v else "0" for v in flat)
    return ", ".join(f"{int(v)}LL" for v in flat)


def _float(value, suffix):
    if np.isnan(value):
        return "NAN"
    if np.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    return value.hex() + suffix
