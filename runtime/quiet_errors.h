/* numpy's floating-point error modes set to ignore every error, what np.errstate(all="ignore")
 * sets, while tracer's kernels run: a NaN or an infinity is a result, as in TensorFlow, not a
 * RuntimeWarning (nor, under the program's np.seterr(all="raise"), an exception). The
 * program's own numpy calls keep its modes: they are set for one call and reset after it.
 * Included by the extensions that call numpy kernels (tracer/ops/fast_apply.c,
 * runtime/straight_line.c); runtime.kernels.errors_ignored does the same for Python.
 *
 *     quiet_errors_import()     once, at the module's import
 *     token = quiet_errors_begin()
 *     ... the kernels ...
 *     quiet_errors_end(token)   the program's modes back; an error set meanwhile is kept
 *
 * numpy 2 keeps the modes in a context variable; an older numpy has none, and its warnings
 * stay. */
#ifndef TRACER_QUIET_ERRORS_H
#define TRACER_QUIET_ERRORS_H

#include <Python.h>

static PyObject *quiet_modes; /* numpy's context variable of its error modes; NULL: none */
static PyObject *quiet_make;  /* runtime.kernels._ignoring_errors */
static PyObject *quiet_seen;  /* the modes last seen, and those modes ignoring every error */
static PyObject *quiet_ignoring;

static void
quiet_errors_import(void)
{
    PyObject *kernels = PyImport_ImportModule("runtime.kernels");
    if (kernels != NULL) {
        quiet_modes = PyObject_GetAttrString(kernels, "_ERROR_MODES");
        quiet_make = PyObject_GetAttrString(kernels, "_ignoring_errors");
        Py_DECREF(kernels);
    }
    if (quiet_modes == NULL || quiet_make == NULL || !PyContextVar_CheckExact(quiet_modes)) {
        Py_CLEAR(quiet_modes);
        Py_CLEAR(quiet_make);
    }
    PyErr_Clear();
}

/* The modes ignoring every error, made from the current ones (their buffer size and error
 * callback kept) by runtime.kernels once for each modes object: borrowed; NULL with an error
 * set. */
static PyObject *
quiet_ignoring_for(PyObject *current)
{
    if (current == quiet_seen || current == quiet_ignoring)
        return quiet_ignoring;
    PyObject *ignoring = PyObject_CallNoArgs(quiet_make);
    if (ignoring == NULL)
        return NULL;
    Py_XSETREF(quiet_seen, Py_NewRef(current));
    Py_XSETREF(quiet_ignoring, ignoring);
    return ignoring;
}

/* A token for quiet_errors_end (Py_None where nothing was set), or NULL with an error set. */
static PyObject *
quiet_errors_begin(void)
{
    if (quiet_modes == NULL)
        return Py_NewRef(Py_None);
    PyObject *current;
    if (PyContextVar_Get(quiet_modes, NULL, &current) < 0)
        return NULL;
    PyObject *ignoring = current == NULL ? Py_None : quiet_ignoring_for(current);
    PyObject *token = ignoring == NULL ? NULL
                      : ignoring == current || ignoring == Py_None ? Py_NewRef(Py_None) /* (quiet already) */
                                                                   : PyContextVar_Set(quiet_modes, ignoring);
    Py_XDECREF(current);
    return token;
}

/* The modes back as they were before `token`'s begin (the reference is taken); -1 where
 * that failed and no error was set before. */
static int
quiet_errors_end(PyObject *token)
{
    if (token == Py_None) {
        Py_DECREF(token);
        return 0;
    }
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    int failed = PyContextVar_Reset(quiet_modes, token);
    Py_DECREF(token);
    if (type != NULL) {
        PyErr_Clear();
        PyErr_Restore(type, value, traceback);
        return 0;
    }
    return failed;
}

#endif
