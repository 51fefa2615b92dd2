/* The eager loops of codegen/array_math.py (erf, GELU and its gradient, the softmax and its
 * gradient over rows), built once, when tracer is installed, so that an eager step's first
 * call waits for no compiler:
 *
 *     entry("f32" or "f64") -> the address of that dtype's entry point (a module's
 *                              `int tracer_run(char **)`), or 0 where this CPU cannot run
 *                              the loops as built
 *
 * array_math_loops.h is codegen/array_math.py's two modules as one translation unit, written
 * by `python -m codegen.array_math`: the same C, built with the flags of the compiled modules
 * and glibc's vector maths (runtime/native.py), so it gives a module's bits. LOOPS_KEY names
 * the loops it was built from: codegen/array_math.py refuses an extension built from other
 * loops than its own (an editable install not rebuilt) and builds its module instead.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#include "array_math_loops.h"
#include "openmp_entries.h" /* its parallel loops run on tracer's pool */
#include "runs_here.h"

#define INTERFACE 19 /* runtime/native.py refuses a module of another */

static PyObject *
entry(PyObject *self, PyObject *suffix)
{
    const char *name = PyUnicode_AsUTF8(suffix);
    if (name == NULL) return NULL;
    int (*found)(char **) = NULL;
    if (strcmp(name, "f32") == 0) found = array_math_run_f32;
    else if (strcmp(name, "f64") == 0) found = array_math_run_f64;
    else return PyErr_Format(PyExc_ValueError, "no loops for %R: 'f32' or 'f64'", suffix);
    return PyLong_FromVoidPtr(runs_here() ? (void *)found : NULL);
}

static PyMethodDef methods[] = {
    {"entry", entry, METH_O,
     "The address of the entry point of the loops for 'f32' or 'f64', or 0 where this CPU "
     "cannot run them as built."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_array_math",
    "codegen/array_math.py's eager loops, built when tracer is installed (see array_math.c).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__array_math(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL) return NULL;
    if (PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0 ||
        PyModule_AddStringConstant(module, "LOOPS_KEY", LOOPS_KEY) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
