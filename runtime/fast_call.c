/* The call of a compiled function in C, for the case a program repeats.
 *
 * runtime/compiled.py generates a Python function per module that fills the module's
 * argument array and calls it; that function is the definition of a call. An `Entry` does
 * the same for one traced signature when nothing but the arrays can change from call to
 * call: the arguments are tensors whose arrays have the traced shapes and dtypes, C-ordered;
 * the module has no sizes known only at run time and no Python callbacks; the variables it
 * writes hold arrays of their own; the function returns one tensor, or a flat list or tuple
 * of them. Anything else (another shape, a snapshot of a variable, a tape recording) returns
 * None before anything is computed, and the caller takes the Python path.
 *
 *     Entry(run, arguments, pattern, variables, value_name, inputs, updated, shared_name,
 *           constants, buffers, outputs, pack, workspace_bytes, guards, empty, wrap, failed,
 *           workspace)
 *     entry(args) -> wrap(the output array), [wrap(...), ...], (wrap(...), ...), or None
 *
 * run: the address of the module's `tracer_run`. pattern: one item per positional argument,
 * `arguments` (a class) where a tensor goes, whose type the argument must be exactly (its
 * attribute `value_name` is the array, or numpy scalar), else the value it was traced with,
 * which the argument must equal, of the same type. variables: objects whose `value_name`
 * arrays follow the tensors' arrays. inputs: (format,
 * shape) of every argument and variable, as numpy's buffer protocol gives them. updated: the
 * positions among them of the variables the module writes in place; each must be writable
 * and its attribute `shared_name` falsy (no snapshot holds its array). constants: the
 * module's constant arrays. buffers: (shape, dtype) of each output buffer, allocated by
 * calling `empty(shape, dtype)`; `outputs`: the buffers returned, as one value (pack 0), a
 * list (1) or a tuple (2). guards: (object, attribute) pairs that must all be falsy (no tape
 * recording, no trace, ...). failed(code): the exception for a nonzero return code.
 * workspace(): an object whose writable buffer of at least workspace_bytes bytes is a call's
 * workspace (the one the Python function's calls kept, whose pages are in memory already,
 * or a new one).
 *
 * The GIL is released while the module runs, as cffi's call does; the workspace is kept
 * between calls (fresh pages cost the kernel's zeroing) and taken by one call at a time.
 *
 *     run_each(run, slots, count, strided) -> None, or (element, code)
 *
 * The module's `tracer_run` called `count` times on one argument array (`slots`: its address,
 * filled for the first element): after each call, the slots that `strided` names ((slot,
 * stride in bytes) pairs) move on by their strides, to the next element's inputs and output
 * buffers (tt.data's map over a batch, runtime/fast_call.py's `run_each`). A call that fails
 * stops the loop: its element and nonzero code are returned.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INTERFACE 19     /* Entry's arguments: runtime/native.py refuses a module of another */
#define STACK_SLOTS 64  /* argument arrays up to this size live on the C stack */
#define MAX_NDIM 32
#define FORMAT_SIZE 16

typedef int (*run_function)(char **args);

typedef struct {
    char format[FORMAT_SIZE];
    int ndim;
    int written;  /* the module writes it in place */
    Py_ssize_t shape[MAX_NDIM];
} InputSpec;

enum { PACK_ONE = 0, PACK_LIST = 1, PACK_TUPLE = 2 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    run_function run;
    PyTypeObject *argument_type;
    Py_ssize_t n_tensors, n_inputs, n_constants, n_buffers;
    Py_ssize_t *positions;    /* the argument position of each tensor input */
    PyObject *pattern, *variables, *value_name, *shared_name, *buffers, *outputs, *guards, *empty, *wrap, *failed;
    int pack;
    InputSpec *specs;
    Py_buffer *constants;     /* views held for the entry's life: their pointers do not move */
    size_t workspace_bytes;
    PyObject *new_workspace;  /* the `workspace` function */
    PyObject *spare_workspace; /* the object whose memory is the workspace; NULL while a call
                                  holds it, and before the first call */
    Py_ssize_t hits;
} Entry;

static void
release_constants(Entry *entry)
{
    if (entry->constants == NULL)
        return;
    for (Py_ssize_t k = 0; k < entry->n_constants; k++)
        if (entry->constants[k].obj != NULL)
            PyBuffer_Release(&entry->constants[k]);
    PyMem_Free(entry->constants);
    entry->constants = NULL;
}

static int
read_specs(Entry *entry, PyObject *inputs)
{
    if (!PyTuple_Check(inputs) || PyTuple_GET_SIZE(inputs) != entry->n_inputs) {
        PyErr_SetString(PyExc_TypeError, "Entry: inputs must be a tuple of (format, shape), one per argument and variable");
        return -1;
    }
    entry->specs = PyMem_Calloc(entry->n_inputs ? entry->n_inputs : 1, sizeof(InputSpec));
    if (entry->specs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < entry->n_inputs; k++) {
        const char *format;
        PyObject *shape;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(inputs, k), "sO!", &format, &PyTuple_Type, &shape))
            return -1;
        InputSpec *spec = &entry->specs[k];
        if (strlen(format) >= FORMAT_SIZE || PyTuple_GET_SIZE(shape) > MAX_NDIM) {
            PyErr_SetString(PyExc_ValueError, "Entry: an input's format or rank is too large");
            return -1;
        }
        strcpy(spec->format, format);
        spec->ndim = (int)PyTuple_GET_SIZE(shape);
        for (int d = 0; d < spec->ndim; d++) {
            spec->shape[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, d));
            if (spec->shape[d] == -1 && PyErr_Occurred())
                return -1;
        }
    }
    return 0;
}

static int
hold_constants(Entry *entry, PyObject *constants)
{
    entry->n_constants = PyTuple_GET_SIZE(constants);
    entry->constants = PyMem_Calloc(entry->n_constants ? entry->n_constants : 1, sizeof(Py_buffer));
    if (entry->constants == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < entry->n_constants; k++)
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(constants, k), &entry->constants[k], PyBUF_C_CONTIGUOUS) < 0)
            return -1;
    return 0;
}

static PyObject *entry_call(Entry *entry, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* Each item of `indices` an int in [low, high): 0, or -1 with an error set. */
static int
check_indices(PyObject *indices, Py_ssize_t low, Py_ssize_t high, const char *what)
{
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(indices); k++) {
        Py_ssize_t index = PyLong_AsSsize_t(PyTuple_GET_ITEM(indices, k));
        if (index == -1 && PyErr_Occurred())
            return -1;
        if (index < low || index >= high) {
            PyErr_Format(PyExc_ValueError, "Entry: %s holds %zd, out of [%zd, %zd)", what, index, low, high);
            return -1;
        }
    }
    return 0;
}

static int
check_pairs(PyObject *items, const char *what)
{
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(items); k++) {
        PyObject *item = PyTuple_GET_ITEM(items, k);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_Format(PyExc_TypeError, "Entry: each item of %s is a pair", what);
            return -1;
        }
    }
    return 0;
}

static PyObject *
entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"run", "arguments", "pattern", "variables", "value_name", "inputs", "updated",
                            "shared_name", "constants", "buffers", "outputs", "pack", "workspace_bytes", "guards",
                            "empty", "wrap", "failed", "workspace", NULL};
    unsigned long long run;
    PyObject *argument_type, *pattern, *variables, *value_name, *inputs, *updated, *shared_name, *constants, *buffers,
        *outputs, *guards, *empty, *wrap, *failed, *new_workspace;
    Py_ssize_t workspace_bytes;
    int pack;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KO!O!O!UO!O!UO!O!O!inO!OOOO:Entry", names, &run, &PyType_Type,
                                     &argument_type, &PyTuple_Type, &pattern, &PyTuple_Type, &variables, &value_name,
                                     &PyTuple_Type, &inputs, &PyTuple_Type, &updated, &shared_name, &PyTuple_Type,
                                     &constants, &PyTuple_Type, &buffers, &PyTuple_Type, &outputs, &pack,
                                     &workspace_bytes, &PyTuple_Type, &guards, &empty, &wrap, &failed, &new_workspace))
        return NULL;
    Py_ssize_t n_tensors = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(pattern); k++)
        n_tensors += PyTuple_GET_ITEM(pattern, k) == argument_type;
    Py_ssize_t n_inputs = n_tensors + PyTuple_GET_SIZE(variables);
    if (run == 0 || workspace_bytes < 0 || pack < PACK_ONE ||
        pack > PACK_TUPLE || (pack == PACK_ONE && PyTuple_GET_SIZE(outputs) != 1)) {
        PyErr_SetString(PyExc_ValueError, "Entry: a null function, or outputs that do not pack");
        return NULL;
    }
    if (check_indices(updated, n_tensors, n_inputs, "updated") < 0 ||
        check_indices(outputs, 0, PyTuple_GET_SIZE(buffers), "outputs") < 0 ||
        check_pairs(guards, "guards") < 0 || check_pairs(buffers, "buffers") < 0)
        return NULL;
    Entry *entry = (Entry *)type->tp_alloc(type, 0);
    if (entry == NULL)
        return NULL;
    entry->vectorcall = (vectorcallfunc)entry_call;
    entry->run = (run_function)(uintptr_t)run;
    entry->argument_type = (PyTypeObject *)Py_NewRef(argument_type);
    entry->n_tensors = n_tensors;
    entry->pattern = Py_NewRef(pattern);
    entry->positions = PyMem_Calloc(n_tensors ? n_tensors : 1, sizeof(Py_ssize_t));
    if (entry->positions == NULL) {
        Py_DECREF(entry);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0, t = 0; k < PyTuple_GET_SIZE(pattern); k++)
        if (PyTuple_GET_ITEM(pattern, k) == argument_type)
            entry->positions[t++] = k;
    entry->n_inputs = n_inputs;
    entry->n_buffers = PyTuple_GET_SIZE(buffers);
    entry->variables = Py_NewRef(variables);
    entry->value_name = Py_NewRef(value_name);
    entry->shared_name = Py_NewRef(shared_name);
    entry->buffers = Py_NewRef(buffers);
    entry->outputs = Py_NewRef(outputs);
    entry->pack = pack;
    entry->guards = Py_NewRef(guards);
    entry->empty = Py_NewRef(empty);
    entry->wrap = Py_NewRef(wrap);
    entry->failed = Py_NewRef(failed);
    entry->new_workspace = Py_NewRef(new_workspace);
    entry->workspace_bytes = (size_t)workspace_bytes;
    if (read_specs(entry, inputs) < 0 || hold_constants(entry, constants) < 0) {
        Py_DECREF(entry);
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(updated); k++)
        entry->specs[PyLong_AsSsize_t(PyTuple_GET_ITEM(updated, k))].written = 1;
    return (PyObject *)entry;
}

static int
entry_traverse(Entry *entry, visitproc visit, void *arg)
{
    Py_VISIT(entry->argument_type);
    Py_VISIT(entry->pattern);
    Py_VISIT(entry->variables);
    Py_VISIT(entry->buffers);
    Py_VISIT(entry->outputs);
    Py_VISIT(entry->guards);
    Py_VISIT(entry->empty);
    Py_VISIT(entry->wrap);
    Py_VISIT(entry->failed);
    Py_VISIT(entry->new_workspace);
    Py_VISIT(entry->spare_workspace);
    return 0;
}

static int
entry_clear(Entry *entry)
{
    Py_CLEAR(entry->argument_type);
    Py_CLEAR(entry->pattern);
    Py_CLEAR(entry->variables);
    Py_CLEAR(entry->value_name);
    Py_CLEAR(entry->shared_name);
    Py_CLEAR(entry->buffers);
    Py_CLEAR(entry->outputs);
    Py_CLEAR(entry->guards);
    Py_CLEAR(entry->empty);
    Py_CLEAR(entry->wrap);
    Py_CLEAR(entry->failed);
    Py_CLEAR(entry->new_workspace);
    Py_CLEAR(entry->spare_workspace);
    return 0;
}

static void
entry_dealloc(Entry *entry)
{
    PyObject_GC_UnTrack(entry);
    entry_clear(entry);
    release_constants(entry);
    PyMem_Free(entry->specs);
    PyMem_Free(entry->positions);
    Py_TYPE(entry)->tp_free((PyObject *)entry);
}

/* 1 when every guard's attribute is falsy, 0 when one is not, -1 on error. */
static int
guards_pass(Entry *entry)
{
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(entry->guards); k++) {
        PyObject *guard = PyTuple_GET_ITEM(entry->guards, k);
        PyObject *value = PyObject_GetAttr(PyTuple_GET_ITEM(guard, 0), PyTuple_GET_ITEM(guard, 1));
        if (value == NULL)
            return -1;
        int truth = PyObject_IsTrue(value);
        Py_DECREF(value);
        if (truth != 0)
            return truth < 0 ? -1 : 0;
    }
    return 1;
}

/* The array of input k held by `holder`, viewed as the spec says: 1 done, 0 it is not
 * what the module was built for (nothing held), -1 error. */
static int
view_input(Entry *entry, Py_ssize_t k, PyObject *holder, Py_buffer *view)
{
    const InputSpec *spec = &entry->specs[k];
    if (spec->written) {  /* a snapshot shares its array: the Python path copies it first */
        PyObject *shared = PyObject_GetAttr(holder, entry->shared_name);
        int truth = shared == NULL ? -1 : PyObject_IsTrue(shared);
        Py_XDECREF(shared);
        if (truth != 0)
            return truth < 0 ? -1 : 0;
    }
    PyObject *value = PyObject_GetAttr(holder, entry->value_name);
    if (value == NULL)
        return -1;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (spec->written ? PyBUF_WRITABLE : 0);
    int got = PyObject_CheckBuffer(value) && PyObject_GetBuffer(value, view, flags) == 0;
    Py_DECREF(value);  /* the holder keeps it alive, and the view holds it too */
    if (!got) {
        PyErr_Clear();  /* not contiguous, not an array: the Python path converts it */
        return 0;
    }
    int same = view->ndim == spec->ndim && view->format != NULL && strcmp(view->format, spec->format) == 0;
    for (int d = 0; same && d < spec->ndim; d++)
        same = view->shape[d] == spec->shape[d];
    if (!same)
        PyBuffer_Release(view);
    return same;
}

static void
release_views(Py_buffer *views, Py_ssize_t count)
{
    for (Py_ssize_t k = 0; k < count; k++)
        PyBuffer_Release(&views[k]);
}

/* The output buffers, allocated, with their pointers in `slots`; NULL on error. */
static PyObject *
allocate_buffers(Entry *entry, char **slots)
{
    PyObject *arrays = PyTuple_New(entry->n_buffers);
    if (arrays == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < entry->n_buffers; k++) {
        PyObject *spec = PyTuple_GET_ITEM(entry->buffers, k);
        PyObject *array = PyObject_Vectorcall(entry->empty, &PyTuple_GET_ITEM(spec, 0), 2, NULL);
        if (array == NULL) {
            Py_DECREF(arrays);
            return NULL;
        }
        PyTuple_SET_ITEM(arrays, k, array);
        Py_buffer view;
        if (PyObject_GetBuffer(array, &view, PyBUF_WRITABLE) < 0) {
            Py_DECREF(arrays);
            return NULL;
        }
        slots[k] = view.buf;  /* the array owns the memory; `arrays` keeps it */
        PyBuffer_Release(&view);
    }
    return arrays;
}

/* The function's result: the output buffers wrapped, one, or in a list or a tuple. */
static PyObject *
wrap_outputs(Entry *entry, PyObject *arrays)
{
    Py_ssize_t count = PyTuple_GET_SIZE(entry->outputs);
    if (entry->pack == PACK_ONE)
        return PyObject_CallOneArg(entry->wrap, PyTuple_GET_ITEM(arrays, PyLong_AsSsize_t(PyTuple_GET_ITEM(entry->outputs, 0))));
    PyObject *result = entry->pack == PACK_LIST ? PyList_New(count) : PyTuple_New(count);
    for (Py_ssize_t k = 0; result != NULL && k < count; k++) {
        PyObject *array = PyTuple_GET_ITEM(arrays, PyLong_AsSsize_t(PyTuple_GET_ITEM(entry->outputs, k)));
        PyObject *tensor = PyObject_CallOneArg(entry->wrap, array);
        if (tensor == NULL)
            Py_CLEAR(result);
        else if (entry->pack == PACK_LIST)
            PyList_SET_ITEM(result, k, tensor);
        else
            PyTuple_SET_ITEM(result, k, tensor);
    }
    return result;
}

/* A call's workspace: the object that holds it, its memory in *memory; the spare one, or
 * where a call holds that (a call made from within a call), a new one from `workspace()`.
 * NULL with an exception where that fails or gives a buffer too small. */
static PyObject *
take_workspace(Entry *entry, char **memory)
{
    PyObject *workspace = entry->spare_workspace;
    entry->spare_workspace = NULL;
    if (workspace == NULL && (workspace = PyObject_CallNoArgs(entry->new_workspace)) == NULL)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(workspace, &view, PyBUF_WRITABLE) < 0) {
        Py_DECREF(workspace);
        return NULL;
    }
    *memory = view.buf;  /* the object owns the memory; the call holds the object */
    Py_ssize_t length = view.len;
    PyBuffer_Release(&view);
    if (length < 0 || (size_t)length < entry->workspace_bytes) {
        PyErr_Format(PyExc_ValueError, "Entry: a workspace of %zd bytes, where the module needs %zu", length,
                     entry->workspace_bytes);
        Py_DECREF(workspace);
        return NULL;
    }
    return workspace;
}

static void
give_back_workspace(Entry *entry, PyObject *workspace)
{
    if (entry->spare_workspace == NULL)
        entry->spare_workspace = workspace;
    else
        Py_DECREF(workspace);
}

/* 1 when `arguments` fit the pattern (tensors where tensors go, the traced values
 * elsewhere), 0 when not, -1 on error. */
static int
matches_pattern(Entry *entry, PyObject *arguments)
{
    if (PyTuple_GET_SIZE(arguments) != PyTuple_GET_SIZE(entry->pattern))
        return 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(arguments); k++) {
        PyObject *argument = PyTuple_GET_ITEM(arguments, k), *expected = PyTuple_GET_ITEM(entry->pattern, k);
        if (expected == (PyObject *)entry->argument_type) {
            if (Py_TYPE(argument) != entry->argument_type)
                return 0;
        } else if (argument != expected) {
            if (Py_TYPE(argument) != Py_TYPE(expected))
                return 0;
            if (PyFloat_CheckExact(expected)) {  /* the bits, as the trace key: -0.0 is not 0.0, a NaN is itself */
                double a = PyFloat_AS_DOUBLE(argument), b = PyFloat_AS_DOUBLE(expected);
                if (memcmp(&a, &b, sizeof a) != 0)
                    return 0;
                continue;
            }
            int equal = PyObject_RichCompareBool(argument, expected, Py_EQ);
            if (equal <= 0)
                return equal;
        }
    }
    return 1;
}

static PyObject *
entry_call(Entry *entry, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "an Entry takes one tuple: the call's positional arguments");
        return NULL;
    }
    PyObject *arguments = args[0];
    int matches = matches_pattern(entry, arguments);
    if (matches <= 0)
        return matches < 0 ? NULL : Py_NewRef(Py_None);
    int quiet = guards_pass(entry);
    if (quiet <= 0)
        return quiet < 0 ? NULL : Py_NewRef(Py_None);

    Py_ssize_t n_slots = entry->n_inputs + entry->n_constants + entry->n_buffers + 1;
    Py_buffer stack_views[STACK_SLOTS], *views = stack_views;
    char *stack_slots[STACK_SLOTS], **slots = stack_slots;
    if (n_slots > STACK_SLOTS) {
        views = PyMem_Malloc(entry->n_inputs * sizeof(Py_buffer));
        slots = PyMem_Malloc(n_slots * sizeof(char *));
        if (views == NULL || slots == NULL) {
            PyMem_Free(views);
            PyMem_Free(slots);
            return PyErr_NoMemory();
        }
    }
    PyObject *result = NULL;
    Py_ssize_t held = 0;
    for (; held < entry->n_inputs; held++) {
        PyObject *holder = held < entry->n_tensors ? PyTuple_GET_ITEM(arguments, entry->positions[held])
                                                    : PyTuple_GET_ITEM(entry->variables, held - entry->n_tensors);
        int viewed = view_input(entry, held, holder, &views[held]);
        if (viewed <= 0) {
            result = viewed < 0 ? NULL : Py_NewRef(Py_None);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < entry->n_inputs; k++)
        slots[k] = views[k].buf;
    for (Py_ssize_t k = 0; k < entry->n_constants; k++)
        slots[entry->n_inputs + k] = entry->constants[k].buf;
    PyObject *arrays = allocate_buffers(entry, slots + entry->n_inputs + entry->n_constants);
    char *memory = NULL;
    PyObject *workspace = arrays == NULL || !entry->workspace_bytes ? NULL : take_workspace(entry, &memory);
    if (arrays != NULL && (workspace != NULL || !entry->workspace_bytes)) {
        slots[n_slots - 1] = memory;
        int code;
        Py_BEGIN_ALLOW_THREADS
        code = entry->run(slots);
        Py_END_ALLOW_THREADS
        if (workspace != NULL)
            give_back_workspace(entry, workspace);
        if (code == 0) {
            entry->hits++;
            result = wrap_outputs(entry, arrays);
        } else {
            PyObject *code_object = PyLong_FromLong(code);
            PyObject *error = code_object ? PyObject_CallOneArg(entry->failed, code_object) : NULL;
            Py_XDECREF(code_object);
            if (error != NULL) {
                PyErr_SetObject((PyObject *)Py_TYPE(error), error);
                Py_DECREF(error);
            }
        }
    }  /* else: the exception of the buffers' or the workspace's allocation */
    Py_XDECREF(arrays);
done:
    release_views(views, held);
    if (slots != stack_slots) {
        PyMem_Free(views);
        PyMem_Free(slots);
    }
    return result;
}

static PyMemberDef entry_members[] = {
    {"hits", T_PYSSIZET, offsetof(Entry, hits), READONLY, "calls this entry ran"},
    {NULL},
};

static PyTypeObject Entry_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "runtime._fast_call.Entry",
    .tp_basicsize = sizeof(Entry),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_doc = "One compiled signature's call path in C (see fast_call.c).",
    .tp_new = entry_new,
    .tp_call = PyVectorcall_Call,
    .tp_traverse = (traverseproc)entry_traverse,
    .tp_clear = (inquiry)entry_clear,
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_members = entry_members,
};

static PyObject *
run_each(PyObject *module, PyObject *args)
{
    unsigned long long run_address, slots_address;
    Py_ssize_t count;
    PyObject *strided;
    if (!PyArg_ParseTuple(args, "KKnO!", &run_address, &slots_address, &count, &PyTuple_Type, &strided))
        return NULL;
    Py_ssize_t n_strided = PyTuple_GET_SIZE(strided);
    Py_ssize_t stack_moves[2 * STACK_SLOTS], *moves = stack_moves;  /* (slot, stride) pairs */
    if (n_strided > STACK_SLOTS && (moves = PyMem_Malloc(2 * n_strided * sizeof(Py_ssize_t))) == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < n_strided; k++) {
        PyObject *pair = PyTuple_GET_ITEM(strided, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "run_each: strided holds (slot, stride) pairs");
            goto failed;
        }
        moves[2 * k] = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 0));
        moves[2 * k + 1] = PyLong_AsSsize_t(PyTuple_GET_ITEM(pair, 1));
        if ((moves[2 * k] == -1 || moves[2 * k + 1] == -1) && PyErr_Occurred())
            goto failed;
    }
    run_function run = (run_function)(uintptr_t)run_address;
    char **slots = (char **)(uintptr_t)slots_address;
    Py_ssize_t element = 0;
    int code = 0;
    Py_BEGIN_ALLOW_THREADS
    for (; element < count; element++) {
        code = run(slots);
        if (code != 0)
            break;
        for (Py_ssize_t k = 0; k < n_strided; k++)
            slots[moves[2 * k]] += moves[2 * k + 1];
    }
    Py_END_ALLOW_THREADS
    if (moves != stack_moves)
        PyMem_Free(moves);
    if (code != 0)
        return Py_BuildValue("(ni)", element, code);
    Py_RETURN_NONE;
failed:
    if (moves != stack_moves)
        PyMem_Free(moves);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"run_each", run_each, METH_VARARGS, "The module run on each element of a batch (see fast_call.c)."},
    {NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_fast_call", "A compiled function's call path in C (see fast_call.c).", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__fast_call(void)
{
    if (PyType_Ready(&Entry_type) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "Entry", (PyObject *)&Entry_type) < 0 ||
        PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
