/* A graph's straight-line program, run in C: one kernel call per step, no interpreter loop.
 *
 *     Program(n_slots, input_slots, constants, steps, output_slots)
 *     program(*arrays) -> [array, ...]
 *
 * Values live in `n_slots` numbered slots. input_slots: the slot of each positional argument,
 * or -1 for an argument not read (an input the graph lists twice is read from its first
 * position). constants: (slot, value) pairs, set before the first step. steps: tuples
 * (function, in_slots, attribute_values, attribute_names, out_slot, dead_slots): the step
 * calls `function(*slots[in_slots], **dict(zip(attribute_names, attribute_values)))` into
 * `out_slot` and then empties `dead_slots` (values past their last use). attribute_names is
 * None or a tuple of strings, the keyword names of a vectorcall. output_slots: the slots of
 * the returned list.
 *
 * A step of Python's +, - or * whose operand is dead after it writes its result into that
 * operand's array when the array is fresh (`in_place`): the same ufunc computes the same
 * values, and a large eager gradient allocates and faults in far fewer new pages.
 *
 * runtime/straight_line.py makes the tuples from a graph and runs the same program in Python
 * where this extension was not built. The constructor checks that every slot is in range and
 * that every step reads only slots that hold a value at that point, so a run reads no empty
 * slot; a step's exception empties every slot and propagates.
 *
 *     plan(inputs, nodes, outputs) -> (n_slots, input_slots, constants, steps, output_slots)
 *
 * is runtime/straight_line.py's `_plan` of a graph (where its values live, when each dies),
 * without a Python step per node.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "quiet_errors.h"
#include <stddef.h>

#define INTERFACE 19   /* Program's arguments: runtime/native.py refuses a module of another */
#define STACK_ARGS 16 /* a step with up to this many arguments passes them on the C stack */

typedef struct {
    PyObject *function;         /* borrowed from `steps`, which the program holds */
    PyObject *attribute_values; /* a tuple, borrowed */
    PyObject *attribute_names;  /* NULL or a tuple, borrowed */
    PyObject *ufunc;            /* what a +, - or * step calls with out= a dead operand, or NULL */
    Py_ssize_t n_in, n_dead, out;
    Py_ssize_t *in, *dead;      /* into the program's `indexes` */
} Step;

/* The operators whose steps may run in place, and their ufuncs (set at import); a step of a
 * large result calls a function that runs it on tracer's threads, and marks it so with this
 * attribute (runtime.kernels.LARGE_FLOATING_KERNELS): the step calls it with out= too. */
#define N_ARITHMETIC 3
static PyObject *arithmetic_operators[N_ARITHMETIC], *arithmetic_ufuncs[N_ARITHMETIC];
static PyObject *ndarray_type, *out_keyword; /* numpy.ndarray; ("out",) */
static PyObject *str_writes_into_an_operand;
static PyObject *str_base, *str_nbytes, *str_dtype, *str_shape, *str_flags, *str_writeable, *str_c_contiguous;
static PyObject *str_op, *str_inputs, *str_attrs, *str_value, *str_array, *str_const; /* `plan`'s */
static PyObject *floating_dtypes; /* numpy's floating and complex dtypes, native byte order */

/* Below this an array's memory comes back from the allocator's free lists anyway. */
#define IN_PLACE_BYTES 65536

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *steps, *constants;
    Py_ssize_t n_slots, n_inputs, n_constants, n_steps, n_outputs;
    Py_ssize_t *input_slots, *constant_slots, *output_slots, *indexes;
    Step *program;
} Program;

static void
program_dealloc(Program *self)
{
    Py_XDECREF(self->steps);
    Py_XDECREF(self->constants);
    PyMem_Free(self->input_slots);
    PyMem_Free(self->constant_slots);
    PyMem_Free(self->output_slots);
    PyMem_Free(self->indexes);
    PyMem_Free(self->program);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The slots of a tuple of ints into `out`, each checked in [lowest, n_slots). */
static int
read_slots(PyObject *tuple, Py_ssize_t lowest, Py_ssize_t n_slots, Py_ssize_t *out, const char *what)
{
    if (!PyTuple_Check(tuple)) {
        PyErr_Format(PyExc_TypeError, "Program: %s must be a tuple of slots", what);
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(tuple); k++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(tuple, k));
        if (slot == -1 && PyErr_Occurred())
            return -1;
        if (slot < lowest || slot >= n_slots) {
            PyErr_Format(PyExc_ValueError, "Program: slot %zd of %s is outside 0..%zd", slot,
                         what, n_slots - 1);
            return -1;
        }
        out[k] = slot;
    }
    return 0;
}

static Py_ssize_t
tuple_size(PyObject *object, const char *what)
{
    if (!PyTuple_Check(object)) {
        PyErr_Format(PyExc_TypeError, "Program: %s must be a tuple", what);
        return -1;
    }
    return PyTuple_GET_SIZE(object);
}

/* Parse one step tuple into `step`, taking its slot indexes from `*next`; `alive` says which
 * slots hold a value before the step, and is updated to after it. */
static int
parse_step(PyObject *item, Step *step, Py_ssize_t **next, Py_ssize_t n_slots, char *alive)
{
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 6) {
        PyErr_SetString(PyExc_TypeError, "Program: each step must be a tuple of 6 items");
        return -1;
    }
    PyObject *in = PyTuple_GET_ITEM(item, 1), *dead = PyTuple_GET_ITEM(item, 5);
    step->function = PyTuple_GET_ITEM(item, 0);
    step->attribute_values = PyTuple_GET_ITEM(item, 2);
    step->attribute_names = PyTuple_GET_ITEM(item, 3);
    if (!PyCallable_Check(step->function)) {
        PyErr_SetString(PyExc_TypeError, "Program: a step's function is not callable");
        return -1;
    }
    if ((step->n_in = tuple_size(in, "a step's inputs")) < 0 ||
        (step->n_dead = tuple_size(dead, "a step's dead slots")) < 0 ||
        tuple_size(step->attribute_values, "a step's attribute values") < 0)
        return -1;
    if (step->attribute_names == Py_None) {
        step->attribute_names = NULL;
        if (PyTuple_GET_SIZE(step->attribute_values) != 0) {
            PyErr_SetString(PyExc_ValueError, "Program: attribute values without names");
            return -1;
        }
    }
    else if (tuple_size(step->attribute_names, "a step's attribute names") !=
             PyTuple_GET_SIZE(step->attribute_values)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "Program: attribute names and values differ in number");
        return -1;
    }
    step->ufunc = NULL;
    if (step->n_in == 2 && step->attribute_names == NULL) {
        for (int k = 0; k < N_ARITHMETIC; k++)
            if (step->function == arithmetic_operators[k])
                step->ufunc = arithmetic_ufuncs[k];
        if (step->ufunc == NULL) {
            PyObject *marked = PyObject_GetAttr(step->function, str_writes_into_an_operand);
            if (marked == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                    return -1;
                PyErr_Clear();
            }
            int truth = marked == NULL ? 0 : PyObject_IsTrue(marked);
            Py_XDECREF(marked);
            if (truth < 0)
                return -1;
            if (truth)
                step->ufunc = step->function;
        }
    }
    step->in = *next;
    step->dead = *next + step->n_in;
    *next += step->n_in + step->n_dead;
    step->out = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 4));
    if (step->out == -1 && PyErr_Occurred())
        return -1;
    if (step->out < 0 || step->out >= n_slots) {
        PyErr_Format(PyExc_ValueError, "Program: output slot %zd is outside 0..%zd", step->out, n_slots - 1);
        return -1;
    }
    if (read_slots(in, 0, n_slots, step->in, "a step's inputs") < 0 ||
        read_slots(dead, 0, n_slots, step->dead, "a step's dead slots") < 0)
        return -1;
    for (Py_ssize_t k = 0; k < step->n_in; k++)
        if (!alive[step->in[k]]) {
            PyErr_Format(PyExc_ValueError, "Program: a step reads slot %zd, which holds no value", step->in[k]);
            return -1;
        }
    alive[step->out] = 1;
    for (Py_ssize_t k = 0; k < step->n_dead; k++)
        alive[step->dead[k]] = 0;
    return 0;
}

/* Whether `a` is C-contiguous, and writeable too where `writeable` asks (-1: an error). */
static int
contiguous(PyObject *a, int writeable)
{
    PyObject *flags = PyObject_GetAttr(a, str_flags);
    if (flags == NULL)
        return -1;
    PyObject *names[2] = {str_c_contiguous, str_writeable};
    int set = 1;
    for (int k = 0; k < 1 + writeable && set == 1; k++) {
        PyObject *value = PyObject_GetAttr(flags, names[k]);
        set = value == NULL ? -1 : PyObject_IsTrue(value);
        Py_XDECREF(value);
    }
    Py_DECREF(flags);
    return set;
}

/* Whether `a`'s dtype is one of numpy's floating or complex dtypes in native byte order,
 * those whose result dtype and values `out=` keeps, and `b`'s too (-1: an error). */
static int
floating_native_of_both(PyObject *a, PyObject *b)
{
    PyObject *dtype = PyObject_GetAttr(a, str_dtype);
    if (dtype == NULL)
        return -1;
    int found = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(floating_dtypes) && found == 0; k++)
        found = PyObject_RichCompareBool(dtype, PyTuple_GET_ITEM(floating_dtypes, k), Py_EQ);
    if (found == 1) {
        PyObject *other = PyObject_GetAttr(b, str_dtype);
        found = other == NULL ? -1 : PyObject_RichCompareBool(dtype, other, Py_EQ);
        Py_XDECREF(other);
    }
    Py_DECREF(dtype);
    return found;
}

/* Whether `base`, an array's base, is a bare buffer that only that array holds: an aligned
 * array's (runtime/aligned.py: a view of bytes of its own), which the caller's reference
 * from `base` makes two. -1: an error. */
static int
own_buffer(PyObject *base)
{
    if (Py_TYPE(base) != (PyTypeObject *)ndarray_type || Py_REFCNT(base) != 2)
        return 0;
    PyObject *below = PyObject_GetAttr(base, str_base);
    if (below == NULL)
        return -1;
    int bare = below == Py_None;
    Py_DECREF(below);
    return bare;
}

/* Whether the ndarray `a` can take `a OP b`'s values in place, with the layout, dtype and
 * bits `a OP b` has: only its slot holds it (so no other value, view or caller sees it), it
 * owns its memory (or views a buffer only it holds: `own_buffer`), of at least
 * IN_PLACE_BYTES, writeable and C-contiguous, of a native floating or complex dtype; the
 * ndarray `b` has that dtype and is 0-d, or C-contiguous of `a`'s shape. -1: an error
 * (nothing written). */
static int
fresh_for(PyObject *a, PyObject *b)
{
    if (Py_REFCNT(a) != 1)
        return 0;
    PyObject *nbytes = PyObject_GetAttr(a, str_nbytes); /* first: most small steps end here */
    int fresh = nbytes != NULL && PyLong_AsSsize_t(nbytes) >= IN_PLACE_BYTES;
    Py_XDECREF(nbytes);
    if (PyErr_Occurred())
        return -1;
    if (fresh) {
        PyObject *base = PyObject_GetAttr(a, str_base);
        if (base == NULL)
            return -1;
        fresh = base == Py_None || own_buffer(base);
        Py_DECREF(base);
        if (fresh < 0)
            return -1;
    }
    if (fresh == 1)
        fresh = contiguous(a, 1);
    if (fresh == 1)
        fresh = floating_native_of_both(a, b);
    if (fresh != 1)
        return fresh;
    PyObject *a_shape = PyObject_GetAttr(a, str_shape), *b_shape = PyObject_GetAttr(b, str_shape);
    if (a_shape == NULL || b_shape == NULL)
        fresh = -1;
    else if (PyTuple_Check(b_shape) && PyTuple_GET_SIZE(b_shape) == 0)
        fresh = 1;
    else if ((fresh = PyObject_RichCompareBool(a_shape, b_shape, Py_EQ)) == 1)
        fresh = contiguous(b, 0);
    Py_XDECREF(a_shape);
    Py_XDECREF(b_shape);
    return fresh;
}

/* A +, - or * step's result written into an operand that dies with the step; NULL with no
 * error set where none can take it (the caller then calls the step's function), NULL with
 * the error where the ufunc raised (after writing, maybe: errstate, warnings as errors), as
 * the step itself would have. Both operands must be ndarrays, not subclasses (a scalar step
 * returns at the first test). */
static PyObject *
in_place(const Step *step, PyObject *const *operands)
{
    if (Py_TYPE(operands[0]) != (PyTypeObject *)ndarray_type ||
        Py_TYPE(operands[1]) != (PyTypeObject *)ndarray_type)
        return NULL;
    for (Py_ssize_t j = 0; j < 2; j++) {
        int dead = 0;
        for (Py_ssize_t k = 0; k < step->n_dead; k++)
            dead |= step->dead[k] == step->in[j];
        int fresh = dead ? fresh_for(operands[j], operands[1 - j]) : 0;
        if (fresh < 0)
            return NULL;
        if (fresh == 1) {
            PyObject *args[3] = {operands[0], operands[1], operands[j]};
            return PyObject_Vectorcall(step->ufunc, args, 2, out_keyword);
        }
    }
    return NULL;
}

static PyObject *program_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames);

static PyObject *
program_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t n_slots;
    PyObject *input_slots, *constants, *steps, *output_slots;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) {
        PyErr_SetString(PyExc_TypeError, "Program takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "nO!O!O!O!:Program", &n_slots, &PyTuple_Type, &input_slots,
                          &PyTuple_Type, &constants, &PyTuple_Type, &steps, &PyTuple_Type, &output_slots))
        return NULL;
    if (n_slots < 0) {
        PyErr_SetString(PyExc_ValueError, "Program: n_slots must be at least 0");
        return NULL;
    }
    Program *self = (Program *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = program_call;
    self->n_slots = n_slots;
    self->steps = Py_NewRef(steps);
    self->constants = Py_NewRef(constants);
    self->n_inputs = PyTuple_GET_SIZE(input_slots);
    self->n_constants = PyTuple_GET_SIZE(constants);
    self->n_steps = PyTuple_GET_SIZE(steps);
    self->n_outputs = PyTuple_GET_SIZE(output_slots);
    Py_ssize_t n_indexes = 0;
    for (Py_ssize_t k = 0; k < self->n_steps; k++) {
        PyObject *item = PyTuple_GET_ITEM(steps, k);
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 6 && PyTuple_Check(PyTuple_GET_ITEM(item, 1)) &&
            PyTuple_Check(PyTuple_GET_ITEM(item, 5)))
            n_indexes += PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 1)) + PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, 5));
    }
    char *alive = PyMem_Calloc(n_slots + 1, 1);
    self->input_slots = PyMem_Calloc(self->n_inputs + 1, sizeof(Py_ssize_t));
    self->constant_slots = PyMem_Calloc(self->n_constants + 1, sizeof(Py_ssize_t));
    self->output_slots = PyMem_Calloc(self->n_outputs + 1, sizeof(Py_ssize_t));
    self->indexes = PyMem_Calloc(n_indexes + 1, sizeof(Py_ssize_t));
    self->program = PyMem_Calloc(self->n_steps + 1, sizeof(Step));
    if (alive == NULL || self->input_slots == NULL || self->constant_slots == NULL ||
        self->output_slots == NULL || self->indexes == NULL || self->program == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    if (read_slots(input_slots, -1, n_slots, self->input_slots, "input_slots") < 0)
        goto fail;
    for (Py_ssize_t k = 0; k < self->n_inputs; k++)
        if (self->input_slots[k] >= 0)
            alive[self->input_slots[k]] = 1;
    for (Py_ssize_t k = 0; k < self->n_constants; k++) {
        PyObject *pair = PyTuple_GET_ITEM(constants, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "Program: each constant must be a (slot, value) pair");
            goto fail;
        }
        PyObject *slot = PyTuple_Pack(1, PyTuple_GET_ITEM(pair, 0));
        int failed = slot == NULL || read_slots(slot, 0, n_slots, &self->constant_slots[k], "constants") < 0;
        Py_XDECREF(slot);
        if (failed)
            goto fail;
        alive[self->constant_slots[k]] = 1;
    }
    Py_ssize_t *next = self->indexes;
    for (Py_ssize_t k = 0; k < self->n_steps; k++)
        if (parse_step(PyTuple_GET_ITEM(steps, k), &self->program[k], &next, n_slots, alive) < 0)
            goto fail;
    if (read_slots(output_slots, 0, n_slots, self->output_slots, "output_slots") < 0)
        goto fail;
    for (Py_ssize_t k = 0; k < self->n_outputs; k++)
        if (!alive[self->output_slots[k]]) {
            PyErr_Format(PyExc_ValueError, "Program: output slot %zd holds no value at the end",
                         self->output_slots[k]);
            goto fail;
        }
    PyMem_Free(alive);
    return (PyObject *)self;
fail:
    PyMem_Free(alive);
    Py_DECREF(self);
    return NULL;
}

static void
clear_slots(PyObject **slots, Py_ssize_t n_slots)
{
    for (Py_ssize_t k = 0; k < n_slots; k++)
        Py_CLEAR(slots[k]);
    PyMem_Free(slots);
}

static PyObject *
program_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Program *self = (Program *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != self->n_inputs || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0)) {
        PyErr_Format(PyExc_TypeError, "a straight-line program takes %zd positional arguments (%zd given)",
                     self->n_inputs, nargs);
        return NULL;
    }
    PyObject **slots = PyMem_Calloc(self->n_slots + 1, sizeof(PyObject *));
    if (slots == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < self->n_inputs; k++)
        if (self->input_slots[k] >= 0 && slots[self->input_slots[k]] == NULL)
            slots[self->input_slots[k]] = Py_NewRef(args[k]);
    for (Py_ssize_t k = 0; k < self->n_constants; k++)
        Py_XSETREF(slots[self->constant_slots[k]],
                   Py_NewRef(PyTuple_GET_ITEM(PyTuple_GET_ITEM(self->constants, k), 1)));
    PyObject *quiet = quiet_errors_begin();
    if (quiet == NULL) {
        clear_slots(slots, self->n_slots);
        return NULL;
    }
    PyObject *stack[STACK_ARGS];
    for (Py_ssize_t k = 0; k < self->n_steps; k++) {
        const Step *step = &self->program[k];
        Py_ssize_t n_attributes = PyTuple_GET_SIZE(step->attribute_values);
        Py_ssize_t n_args = step->n_in + n_attributes;
        PyObject **call_args = n_args <= STACK_ARGS ? stack : PyMem_Malloc(n_args * sizeof(PyObject *));
        if (call_args == NULL) {
            clear_slots(slots, self->n_slots);
            return PyErr_NoMemory();
        }
        for (Py_ssize_t j = 0; j < step->n_in; j++)
            call_args[j] = slots[step->in[j]];
        for (Py_ssize_t j = 0; j < n_attributes; j++)
            call_args[step->n_in + j] = PyTuple_GET_ITEM(step->attribute_values, j);
        PyObject *result = step->ufunc == NULL ? NULL : in_place(step, call_args);
        if (result == NULL && !PyErr_Occurred())
            result = PyObject_Vectorcall(step->function, call_args, step->n_in, step->attribute_names);
        if (call_args != stack)
            PyMem_Free(call_args);
        if (result == NULL) {
            quiet_errors_end(quiet);
            clear_slots(slots, self->n_slots);
            return NULL;
        }
        Py_XSETREF(slots[step->out], result);
        for (Py_ssize_t j = 0; j < step->n_dead; j++)
            Py_CLEAR(slots[step->dead[j]]);
    }
    if (quiet_errors_end(quiet) < 0) {
        clear_slots(slots, self->n_slots);
        return NULL;
    }
    PyObject *outputs = PyList_New(self->n_outputs);
    if (outputs != NULL)
        for (Py_ssize_t k = 0; k < self->n_outputs; k++)
            PyList_SET_ITEM(outputs, k, Py_NewRef(slots[self->output_slots[k]]));
    clear_slots(slots, self->n_slots);
    return outputs;
}

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "runtime._straight_line.Program",
    .tp_doc = "A graph's straight-line program (see runtime/straight_line.c).",
    .tp_basicsize = sizeof(Program),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = program_new,
    .tp_dealloc = (destructor)program_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Program, vectorcall),
};

/* plan(inputs, nodes, outputs) -> (n_slots, input_slots, constants, steps, output_slots):
 * runtime/straight_line.py's `_plan` of a graph, in C (that function is its definition and
 * says what each part is; this one gives the same tuples and lists, built without a Python
 * step per node: a gradient graph of 10^5 nodes is planned when it first runs). */
/* The slot of `node` (a new reference to its int), a KeyError naming it where it has none. */
static PyObject *
slot_of(PyObject *slots, PyObject *node)
{
    PyObject *slot = PyDict_GetItemWithError(slots, node);
    if (slot == NULL && !PyErr_Occurred())
        PyErr_SetObject(PyExc_KeyError, node);
    return Py_XNewRef(slot);
}

/* The slots a step empties: its distinct input slots whose last use it is, first seen first. */
static PyObject *
dead_after(PyObject *reads, Py_ssize_t step, const Py_ssize_t *last_use)
{
    Py_ssize_t n = PyTuple_GET_SIZE(reads), n_dead = 0;
    PyObject *dead = PyTuple_New(n);
    if (dead == NULL)
        return NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *slot = PyTuple_GET_ITEM(reads, j);
        if (last_use[PyLong_AsSsize_t(slot)] != step)
            continue;
        int repeated = 0;
        for (Py_ssize_t i = 0; i < n_dead; i++)
            repeated |= PyTuple_GET_ITEM(dead, i) == slot;
        if (!repeated)
            PyTuple_SET_ITEM(dead, n_dead++, Py_NewRef(slot));
    }
    if (n_dead == n)
        return dead;
    PyObject *shorter = PyTuple_GetSlice(dead, 0, n_dead);
    Py_DECREF(dead);
    return shorter;
}

/* The input slots of the computed `node`, a tuple of the ints in `slots`. */
static PyObject *
reads_of(PyObject *slots, PyObject *node)
{
    PyObject *inputs = PyObject_GetAttr(node, str_inputs);
    PyObject *sequence = inputs == NULL ? NULL : PySequence_Fast(inputs, "a node's inputs must be a sequence");
    Py_XDECREF(inputs);
    if (sequence == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    PyObject *reads = PyTuple_New(n);
    for (Py_ssize_t j = 0; reads != NULL && j < n; j++) {
        PyObject *slot = slot_of(slots, PySequence_Fast_GET_ITEM(sequence, j));
        if (slot == NULL)
            Py_CLEAR(reads);
        else
            PyTuple_SET_ITEM(reads, j, slot);
    }
    Py_DECREF(sequence);
    return reads;
}

/* The constant's (slot, array). */
static PyObject *
constant_entry(PyObject *slot, PyObject *node)
{
    PyObject *attrs = PyObject_GetAttr(node, str_attrs);
    PyObject *value = attrs == NULL ? NULL : PyObject_GetItem(attrs, str_value);
    PyObject *array = value == NULL ? NULL : PyObject_GetAttr(value, str_array);
    PyObject *entry = array == NULL ? NULL : PyTuple_Pack(2, slot, array);
    Py_XDECREF(attrs);
    Py_XDECREF(value);
    Py_XDECREF(array);
    return entry;
}

/* Whether `node` is a const (1), not (0), or an error (-1). */
static int
is_constant(PyObject *node)
{
    PyObject *op = PyObject_GetAttr(node, str_op);
    if (op == NULL)
        return -1;
    int same = PyUnicode_Check(op) ? PyUnicode_Compare(op, str_const) == 0 : 0;
    Py_DECREF(op);
    return PyErr_Occurred() ? -1 : same;
}

static PyObject *
plan(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *inputs_given, *nodes_given, *outputs_given;
    if (!PyArg_ParseTuple(args, "OOO:plan", &inputs_given, &nodes_given, &outputs_given))
        return NULL;
    PyObject *inputs = PySequence_Fast(inputs_given, "plan: inputs must be a sequence");
    PyObject *nodes = PySequence_Fast(nodes_given, "plan: nodes must be a sequence");
    PyObject *outputs = PySequence_Fast(outputs_given, "plan: outputs must be a sequence");
    PyObject *slots = PyDict_New(), *input_slots = NULL, *computed = NULL, *reads = NULL;
    PyObject *constants = NULL, *steps = NULL, *output_slots = NULL, *result = NULL;
    Py_ssize_t *last_use = NULL;
    if (inputs == NULL || nodes == NULL || outputs == NULL || slots == NULL)
        goto done;
    Py_ssize_t n_inputs = PySequence_Fast_GET_SIZE(inputs), n_nodes = PySequence_Fast_GET_SIZE(nodes);
    Py_ssize_t n_outputs = PySequence_Fast_GET_SIZE(outputs);
    if ((input_slots = PyTuple_New(n_inputs)) == NULL || (computed = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n_inputs; k++) { /* an input listed twice: -1 after the first */
        PyObject *node = PySequence_Fast_GET_ITEM(inputs, k);
        int seen = PyDict_Contains(slots, node);
        PyObject *slot = seen ? PyLong_FromLong(-1) : PyLong_FromSsize_t(PyDict_GET_SIZE(slots));
        if (seen < 0 || slot == NULL || (!seen && PyDict_SetItem(slots, node, slot) < 0)) {
            Py_XDECREF(slot);
            goto done;
        }
        PyTuple_SET_ITEM(input_slots, k, slot);
    }
    for (Py_ssize_t k = 0; k < n_nodes; k++) {
        PyObject *node = PySequence_Fast_GET_ITEM(nodes, k);
        int seen = PyDict_Contains(slots, node);
        if (seen < 0 || (!seen && PyList_Append(computed, node) < 0))
            goto done;
    }
    Py_ssize_t n_computed = PyList_GET_SIZE(computed), first = PyDict_GET_SIZE(slots);
    for (Py_ssize_t k = 0; k < n_computed; k++) {
        PyObject *slot = PyLong_FromSsize_t(first + k);
        int failed = slot == NULL || PyDict_SetItem(slots, PyList_GET_ITEM(computed, k), slot) < 0;
        Py_XDECREF(slot);
        if (failed)
            goto done;
    }
    Py_ssize_t n_slots = first + n_computed;
    if ((reads = PyList_New(n_computed)) == NULL)
        goto done;
    last_use = PyMem_Malloc((n_slots + 1) * sizeof(Py_ssize_t));
    if (last_use == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_slots; k++)
        last_use[k] = -1;
    for (Py_ssize_t step = 0; step < n_computed; step++) {
        PyObject *read = reads_of(slots, PyList_GET_ITEM(computed, step));
        if (read == NULL)
            goto done;
        PyList_SET_ITEM(reads, step, read);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(read); j++)
            last_use[PyLong_AsSsize_t(PyTuple_GET_ITEM(read, j))] = step;
    }
    if ((output_slots = PyTuple_New(n_outputs)) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n_outputs; k++) { /* outputs and inputs are kept to the end */
        PyObject *slot = slot_of(slots, PySequence_Fast_GET_ITEM(outputs, k));
        if (slot == NULL)
            goto done;
        PyTuple_SET_ITEM(output_slots, k, slot);
        last_use[PyLong_AsSsize_t(slot)] = -1;
    }
    for (Py_ssize_t k = 0; k < n_inputs; k++) {
        PyObject *slot = slot_of(slots, PySequence_Fast_GET_ITEM(inputs, k));
        if (slot == NULL)
            goto done;
        last_use[PyLong_AsSsize_t(slot)] = -1;
        Py_DECREF(slot);
    }
    if ((constants = PyList_New(0)) == NULL || (steps = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t step = 0; step < n_computed; step++) {
        PyObject *node = PyList_GET_ITEM(computed, step), *read = PyList_GET_ITEM(reads, step);
        PyObject *slot = PyDict_GetItemWithError(slots, node); /* borrowed: the dict holds it */
        int constant = slot == NULL ? -1 : is_constant(node);
        if (constant < 0)
            goto done;
        PyObject *entry;
        if (constant) {
            entry = constant_entry(slot, node);
        } else {
            PyObject *dead = dead_after(read, step, last_use);
            entry = dead == NULL ? NULL : PyTuple_Pack(4, slot, node, read, dead);
            Py_XDECREF(dead);
        }
        int failed = entry == NULL || PyList_Append(constant ? constants : steps, entry) < 0;
        Py_XDECREF(entry);
        if (failed)
            goto done;
    }
    PyObject *constant_tuple = PyList_AsTuple(constants);
    if (constant_tuple != NULL)
        result = Py_BuildValue("nNNON", n_slots, Py_NewRef(input_slots), constant_tuple, steps,
                               Py_NewRef(output_slots));
done:
    PyMem_Free(last_use);
    Py_XDECREF(inputs);
    Py_XDECREF(nodes);
    Py_XDECREF(outputs);
    Py_XDECREF(slots);
    Py_XDECREF(input_slots);
    Py_XDECREF(computed);
    Py_XDECREF(reads);
    Py_XDECREF(constants);
    Py_XDECREF(steps);
    Py_XDECREF(output_slots);
    return result;
}

static PyMethodDef module_functions[] = {
    {"plan", plan, METH_VARARGS, "plan(inputs, nodes, outputs): runtime/straight_line.py's _plan, in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_straight_line", "A graph's straight-line program in C (see straight_line.c).",
    -1, module_functions,
};

/* A tuple of numpy's floating and complex dtypes, native byte order. */
static PyObject *
native_floating(PyObject *numpy)
{
    static const char *names[] = {"float16", "float32", "float64", "longdouble",
                                  "complex64", "complex128", "clongdouble"};
    Py_ssize_t n = sizeof(names) / sizeof(names[0]);
    PyObject *dtypes = PyTuple_New(n);
    for (Py_ssize_t k = 0; dtypes != NULL && k < n; k++) {
        PyObject *dtype = PyObject_CallMethod(numpy, "dtype", "s", names[k]);
        if (dtype == NULL)
            Py_CLEAR(dtypes);
        else
            PyTuple_SET_ITEM(dtypes, k, dtype);
    }
    return dtypes;
}

/* The operators of floating +, - and * steps (runtime.kernels.INFIX_OPERATORS) and numpy's
 * ufuncs for them. */
static int
import_arithmetic(void)
{
    static const char *names[N_ARITHMETIC][2] = {{"add", "add"}, {"sub", "subtract"}, {"mul", "multiply"}};
    PyObject *operator = PyImport_ImportModule("operator"), *numpy = PyImport_ImportModule("numpy");
    int failed = operator == NULL || numpy == NULL;
    for (int k = 0; k < N_ARITHMETIC && !failed; k++) {
        arithmetic_operators[k] = PyObject_GetAttrString(operator, names[k][0]);
        arithmetic_ufuncs[k] = PyObject_GetAttrString(numpy, names[k][1]);
        failed = arithmetic_operators[k] == NULL || arithmetic_ufuncs[k] == NULL;
    }
    if (!failed) {
        ndarray_type = PyObject_GetAttrString(numpy, "ndarray");
        out_keyword = Py_BuildValue("(s)", "out");
        str_base = PyUnicode_InternFromString("base");
        str_nbytes = PyUnicode_InternFromString("nbytes");
        str_dtype = PyUnicode_InternFromString("dtype");
        str_shape = PyUnicode_InternFromString("shape");
        str_flags = PyUnicode_InternFromString("flags");
        str_writeable = PyUnicode_InternFromString("writeable");
        str_c_contiguous = PyUnicode_InternFromString("c_contiguous");
        str_writes_into_an_operand = PyUnicode_InternFromString("writes_into_an_operand");
        str_op = PyUnicode_InternFromString("op");
        str_inputs = PyUnicode_InternFromString("inputs");
        str_attrs = PyUnicode_InternFromString("attrs");
        str_value = PyUnicode_InternFromString("value");
        str_array = PyUnicode_InternFromString("array");
        str_const = PyUnicode_InternFromString("const");
        floating_dtypes = native_floating(numpy);
        failed = ndarray_type == NULL || !PyType_Check(ndarray_type) || out_keyword == NULL ||
                 str_base == NULL || str_nbytes == NULL || str_dtype == NULL || str_shape == NULL ||
                 str_flags == NULL || str_writeable == NULL || str_c_contiguous == NULL ||
                 str_writes_into_an_operand == NULL || floating_dtypes == NULL || str_op == NULL ||
                 str_inputs == NULL || str_attrs == NULL || str_value == NULL || str_array == NULL ||
                 str_const == NULL;
    }
    Py_XDECREF(operator);
    Py_XDECREF(numpy);
    if (failed && !PyErr_Occurred())
        PyErr_SetString(PyExc_ImportError, "_straight_line: numpy.ndarray is not a type");
    return failed ? -1 : 0;
}

PyMODINIT_FUNC
PyInit__straight_line(void)
{
    if (PyType_Ready(&ProgramType) < 0 || import_arithmetic() < 0)
        return NULL;
    quiet_errors_import();
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0 ||
        PyModule_AddObjectRef(module, "Program", (PyObject *)&ProgramType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
