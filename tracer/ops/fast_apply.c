/* The eager op path in C: `apply` for its most common case, the rest through Python.
 *
 * `tracer.ops.core._apply` is the definition of what applying an op does. This module
 * runs the same steps, writing the same objects, for the case an eager loop repeats:
 * one to MAX_INPUTS eager Tensors, plain attributes (numbers, strings, dtypes, tuples of them),
 * a shape rule already remembered (tracer.ops.core._infer_eager), no trace, no paused tape,
 * no numerics check, and every recording tape tracking an input of the op, or none tracking
 * any (core._note_untracked then notes the use, as `_record` does); an op function's Variable
 * read outside any tape (read_outside); and the case a gradient graph's build repeats
 * (symbolic_apply: one or two symbolic tensors while tracer builds a graph of its own).
 * Anything else (a first sight of a shape, a traced symbolic input, a Variable inside a
 * tape, tapes of which some track an input and some not) calls the Python function, before
 * anything is computed. Python's for loops and attribute lookups are most of an eager op's
 * time on small tensors; here they are pointer reads.
 *
 *     configure(**the classes, tables and helpers of tracer the path reads)
 *     apply(op, inputs, attrs)     # what _apply(op, inputs, attrs) returns
 *     apply_unary(op, x)           # _apply_unary: apply(op, (as_tensor(x),), {})
 *     apply_binary(op, x, y)       # _apply_binary: apply(op, as_tensors(x, y), {})
 *     read_variables(Variable)     # apply_unary and apply_binary read its instances outside tapes
 *     op_function(op, function, n) # `function`, an op's public function, as a C callable
 *     tensor(value)                # Tensor(value)
 *     tensor_with_origin(value, variable_node)  # ... computed from that Variable outside tapes
 *     record(op, inputs, attrs, out, shape, dtype)  # _record's work for the Python path
 *     untrack_node(node)           # the collector stops walking an acyclic node
 *     untrack_records(recording)   # ... and a large tape's records, when it stops
 *     sweep(nodes, cotangents, ...) # tracer.passes.gradient.reverse_sweep's loop over the nodes
 *     topological_order(outputs)   # tracer.ir.graph.topological_closure(outputs)
 *     set_enabled(flag)            # False: every call goes to the Python function
 *
 * Objects are built as their Python __init__ would build them (every slot set), from
 * slot offsets read off the classes' member descriptors when configured; `configure`
 * refuses classes whose slots are not the ones listed here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "../../runtime/quiet_errors.h"

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* Slot offsets of the classes the path reads and builds. */
static Py_ssize_t tensor_value, tensor_node, tensor_origin, tensor_cut, tensor_keras_mask;
static Py_ssize_t node_op, node_inputs, node_attrs, node_shape, node_dtype, node_location;
static Py_ssize_t rec_nodes, rec_saved, rec_tracked, rec_outside, rec_order, rec_signature, rec_untracked;
static Py_ssize_t opdef_name, opdef_grad, opdef_saves, opdef_saved_for;
static Py_ssize_t dtype_name_slot, dtype_differentiable_slot;
static Py_ssize_t numerics_enabled;

/* configure's arguments and what the module does with them: runtime/native.py refuses a
 * module whose INTERFACE is not its own (one that would ignore an argument it does not know, as
 * `floating_kernels` was once new, passes the behavioural check while doing less than this
 * file). One number for all of tracer's extensions: raise it there and in each .c file. */
#define INTERFACE 19

static PyTypeObject *Tensor_type, *Node_type, *Recording_type, *OpDef_type, *DType_type;
static PyObject *state;          /* tracer.context.state, a threading.local */
static PyObject *numerics;       /* tracer.context.numerics */
static PyObject *inferred;       /* tracer.ops.core._INFERRED */
static PyObject *inferred_symbolic; /* tracer.ops.core._INFERRED_SYMBOLIC */
static PyObject *kernels;        /* runtime.kernels.KERNELS */
static PyObject *floating_kernels; /* runtime.kernels.FLOATING_KERNELS */
static PyObject *codes;          /* tracer.ir.source._CODES */
static PyObject *locations;      /* tracer.ir.source._LOCATIONS */
static PyObject *user_location;  /* tracer.ir.source.user_location */
static PyObject *node_of;        /* tracer.ops.core.node_of */
static PyObject *python_apply;   /* tracer.ops.core._apply */
static PyObject *OUT;            /* tracer.ops.registry.OUT */
static PyObject *ALL_INPUTS;     /* tracer.ops.registry.ALL_INPUTS */
static PyObject *python_unary;   /* tracer.ops.core._apply_unary */
static PyObject *python_binary;  /* tracer.ops.core._apply_binary */
static PyObject *note_untracked; /* tracer.ops.core._note_untracked */
static PyObject *dtypes_by_numpy;   /* tracer.dtypes.BY_NUMPY */
static PyObject *scalar_constants;  /* tracer.ops.convert._SCALAR_CONSTANTS */
static PyObject *scalar_constant_ids;  /* tracer.ops.convert.SCALAR_CONSTANT_IDS */
static PyObject *scalar_forms;      /* numpy scalar type -> (shape, dtype) of its values */
/* the attributes of every op applied without any (`tt.sin(x)`, `x * y`): one dict, which the
 * nodes recorded share, as nothing changes a node's attributes after it is made */
static PyObject *no_attributes;
static int configured = 0, enabled = 0;
static PyObject *acyclic_classes;  /* classes reaching no tracked object (see untrack_if_acyclic) */

static PyObject *s_dict, *s_tapes, *s_trace, *s_paused, *s_location, *s_shape, *s_dtype,
    *s_name, *s_is_differentiable, *s_recording_state, *s_outside, *s_variable, *s_building,
    *s_accumulators, *s_watchers, *s_grad, *s_value, *s_np;

/* Remembered answers (see thread_state_dict and known_scalar_constant); configure clears them. */
static uint64_t cached_state_thread = 0;
static PyObject *cached_state_dict = NULL;
static PyObject *last_value = NULL, *last_numpy_dtype = NULL, *last_constant = NULL;

/* The locations of the call sites that recorded last, by code object and instruction: an
 * op in the user's own frame finds its line with two pointer compares instead of a tuple
 * key and two dict lookups (9% of an eager scalar op's time). An entry holds its code
 * object, so that the address cannot name other code while it is here. */
#define LOCATION_SLOTS 64
static struct {
    PyObject *code;
    int lasti;
    PyObject *location;
} known_locations[LOCATION_SLOTS];

static Py_ssize_t
location_slot(PyObject *code, int lasti)
{
    return (Py_ssize_t)((((uintptr_t)code >> 4) ^ (uintptr_t)lasti * 2654435761u) % LOCATION_SLOTS);
}

static void
reset_caches(void)
{
    Py_CLEAR(cached_state_dict);
    Py_CLEAR(last_value);
    Py_CLEAR(last_numpy_dtype);
    Py_CLEAR(last_constant);
    for (Py_ssize_t k = 0; k < LOCATION_SLOTS; k++) {
        Py_CLEAR(known_locations[k].code);
        Py_CLEAR(known_locations[k].location);
    }
}

/* Outcome of the fast path: done, or hand the call to Python (nothing computed yet), or error. */
enum { FAILED = -1, USE_PYTHON = 0, DONE = 1 };

static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset)
{
    PyObject *descr = PyDict_GetItemString(type->tp_dict, name);
    if (descr == NULL || Py_TYPE(descr) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "fast_apply: %s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
        PyErr_Format(PyExc_TypeError, "fast_apply: %s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    *offset = member->offset;
    return 0;
}

/* The class's __slots__, as a tuple, must be exactly `expected` (so every slot gets set). */
static int
check_slots(PyTypeObject *type, const char *const *expected, Py_ssize_t count)
{
    PyObject *slots = PyDict_GetItemString(type->tp_dict, "__slots__");
    PyObject *as_tuple = slots == NULL ? NULL : PySequence_Tuple(slots);
    int ok = as_tuple != NULL && PyTuple_GET_SIZE(as_tuple) == count;
    for (Py_ssize_t i = 0; ok && i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(as_tuple, i);
        ok = PyUnicode_Check(item) && PyUnicode_CompareWithASCIIString(item, expected[i]) == 0;
    }
    Py_XDECREF(as_tuple);
    if (!ok) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "fast_apply: %s has other slots than the C path sets", type->tp_name);
    }
    return ok ? 0 : -1;
}

/* kwargs[name] (borrowed), a class when `is_class`; NULL with TypeError when missing. */
static PyObject *
argument(PyObject *kwargs, const char *name, int is_class)
{
    PyObject *value = PyDict_GetItemString(kwargs, name);
    if (value == NULL || (is_class && !PyType_Check(value))) {
        PyErr_Format(PyExc_TypeError, "fast_apply.configure: %s is missing%s", name, is_class ? " or not a class" : "");
        return NULL;
    }
    return value;
}

/* Everything is checked before anything is kept: a refused configure leaves the module as it
 * was, off (every call to Python) until a configure succeeds. */
static PyObject *
configure(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static const char *const tensor_slots[] = {"_value", "_node", "_origin", "_cut", "_keras_mask", "__weakref__"};
    static const char *const node_slots[] = {"op", "inputs", "attrs", "shape", "dtype", "location", "__weakref__"};
    static const char *const class_names[] = {"Tensor", "Node", "Recording", "OpDef", "DType"};
    PyTypeObject **classes[] = {&Tensor_type, &Node_type, &Recording_type, &OpDef_type, &DType_type};
    static const char *const object_names[] = {
        "state", "numerics", "inferred", "kernels", "codes", "locations", "user_location", "node_of",
        "python_apply", "python_unary", "python_binary", "dtypes_by_numpy", "scalar_constants", "scalar_forms",
        "OUT", "floating_kernels", "ALL_INPUTS", "inferred_symbolic", "note_untracked", "scalar_constant_ids"};
    PyObject **objects[] = {&state, &numerics, &inferred, &kernels, &codes, &locations, &user_location, &node_of,
                            &python_apply, &python_unary, &python_binary, &dtypes_by_numpy, &scalar_constants,
                            &scalar_forms, &OUT, &floating_kernels, &ALL_INPUTS, &inferred_symbolic,
                            &note_untracked, &scalar_constant_ids};
    enum { CLASS_COUNT = 5, OBJECT_COUNT = 20, OFFSET_COUNT = 25 };
    PyObject *new_classes[CLASS_COUNT], *new_objects[OBJECT_COUNT];
    if (kwargs == NULL || PyTuple_GET_SIZE(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "fast_apply.configure takes keyword arguments only");
        return NULL;
    }
    enabled = 0;
    for (int i = 0; i < CLASS_COUNT; i++)
        if ((new_classes[i] = argument(kwargs, class_names[i], 1)) == NULL)
            return NULL;
    for (int i = 0; i < OBJECT_COUNT; i++)
        if ((new_objects[i] = argument(kwargs, object_names[i], 0)) == NULL)
            return NULL;
    PyTypeObject *tensor = (PyTypeObject *)new_classes[0], *node = (PyTypeObject *)new_classes[1];
    PyTypeObject *recording = (PyTypeObject *)new_classes[2], *opdef = (PyTypeObject *)new_classes[3];
    PyTypeObject *dtype = (PyTypeObject *)new_classes[4];
    if (check_slots(tensor, tensor_slots, 6) < 0 || check_slots(node, node_slots, 7) < 0)
        return NULL;
    struct { PyTypeObject *type; const char *name; Py_ssize_t *offset; } slots[OFFSET_COUNT] = {
        {tensor, "_value", &tensor_value}, {tensor, "_node", &tensor_node}, {tensor, "_origin", &tensor_origin},
        {tensor, "_cut", &tensor_cut}, {tensor, "_keras_mask", &tensor_keras_mask}, {node, "op", &node_op}, {node, "inputs", &node_inputs},
        {node, "attrs", &node_attrs}, {node, "shape", &node_shape}, {node, "dtype", &node_dtype},
        {node, "location", &node_location}, {recording, "nodes", &rec_nodes}, {recording, "saved", &rec_saved},
        {recording, "tracked", &rec_tracked}, {recording, "outside", &rec_outside}, {recording, "order", &rec_order},
        {recording, "signature", &rec_signature}, {recording, "untracked", &rec_untracked},
        {opdef, "name", &opdef_name}, {opdef, "grad", &opdef_grad},
        {opdef, "saves", &opdef_saves}, {opdef, "saved_for", &opdef_saved_for},
        {Py_TYPE(new_objects[1]), "enabled", &numerics_enabled},
        {dtype, "name", &dtype_name_slot}, {dtype, "is_differentiable", &dtype_differentiable_slot},
    };
    Py_ssize_t offsets[OFFSET_COUNT];
    for (int i = 0; i < OFFSET_COUNT; i++)
        if (slot_offset(slots[i].type, slots[i].name, &offsets[i]) < 0)
            return NULL;
    /* inferred, kernels, codes, locations, dtypes_by_numpy, scalar_constants, scalar_forms, floating_kernels,
     * inferred_symbolic */
    static const int dicts[] = {2, 3, 4, 5, 11, 12, 13, 15, 17};
    for (size_t k = 0; k < sizeof dicts / sizeof *dicts; k++)
        if (!PyDict_CheckExact(new_objects[dicts[k]]))
            return PyErr_Format(PyExc_TypeError, "fast_apply.configure: %s must be a dict", object_names[dicts[k]]);
    if (!PySet_CheckExact(new_objects[19]))
        return PyErr_Format(PyExc_TypeError, "fast_apply.configure: scalar_constant_ids must be a set");
    PyObject *new_acyclic = argument(kwargs, "acyclic_classes", 0);
    if (new_acyclic == NULL)
        return NULL;
    if (!PyTuple_CheckExact(new_acyclic))
        return PyErr_Format(PyExc_TypeError, "fast_apply.configure: acyclic_classes must be a tuple");
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(new_acyclic); i++)
        if (!PyType_Check(PyTuple_GET_ITEM(new_acyclic, i)))
            return PyErr_Format(PyExc_TypeError, "fast_apply.configure: acyclic_classes must hold classes");
    Py_XSETREF(acyclic_classes, Py_NewRef(new_acyclic));
    for (int i = 0; i < CLASS_COUNT; i++)
        Py_XSETREF(*classes[i], (PyTypeObject *)Py_NewRef(new_classes[i]));
    for (int i = 0; i < OBJECT_COUNT; i++)
        Py_XSETREF(*objects[i], Py_NewRef(new_objects[i]));
    for (int i = 0; i < OFFSET_COUNT; i++)
        *slots[i].offset = offsets[i];
    reset_caches();
    configured = enabled = 1;
    Py_RETURN_NONE;
}

/* ---- nodes the garbage collector need not walk ----------------------------------------------
 * A node references its inputs, attributes, shape, dtype and source line. When each of those
 * is a number, a string, an array, a tuple of such values, an instance of one of the
 * `acyclic_classes` (Literal, Dim, DType: classes that reference nothing that could lead
 * back), and every input is a node of this kind, nothing the node reaches can reach it again:
 * it cannot be part of a reference cycle, and the collector stops walking it (with its inputs
 * tuple, attribute dict and the tuples in them), as it does by itself for tuples of numbers.
 * A node whose attributes hold anything else (a custom gradient's function, a subgraph, a
 * list) stays tracked, and so does every node computed from it. Nodes are not changed after
 * they are made, which this relies on. Without this, the collection of the youngest
 * generation when the collector resumes after a tape walked every node the tape recorded
 * (a sizeable share of a step on a large tape). */

static int recording_is_whole(PyObject *rec);

/* Whether `value` reaches no object that could lead back to it; untracks the tuples in it. */
static int
acyclic(PyObject *value, int depth)
{
    if (!PyObject_IS_GC(value))
        return 1;  /* the collector follows nothing from it: numbers, strings, arrays */
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyTuple_Type) {
        if (!PyObject_GC_IsTracked(value))
            return 1;  /* a tuple the collector untracked: it holds only such values */
        if (depth > 8)
            return 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); i++)
            if (!acyclic(PyTuple_GET_ITEM(value, i), depth + 1))
                return 0;
        PyObject_GC_UnTrack(value);
        return 1;
    }
    if (type == Node_type)
        return !PyObject_GC_IsTracked(value);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(acyclic_classes); i++)
        if ((PyObject *)type == PyTuple_GET_ITEM(acyclic_classes, i))
            return 1;
    return 0;
}

/* Untrack `node` (a Node) if it cannot be part of a reference cycle (above). */
static void
untrack_if_acyclic(PyObject *node)
{
    if (!configured || Py_TYPE(node) != Node_type || !PyObject_GC_IsTracked(node))
        return;  /* untracked already: its inputs tuple and attributes with it */
    PyObject *inputs = SLOT(node, node_inputs), *attrs = SLOT(node, node_attrs);
    if (inputs == NULL || attrs == NULL || !PyTuple_CheckExact(inputs) || !PyDict_CheckExact(attrs))
        return;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *input = PyTuple_GET_ITEM(inputs, i);
        if (Py_TYPE(input) != Node_type || PyObject_GC_IsTracked(input))
            return;
    }
    Py_ssize_t position = 0;
    PyObject *key, *value;
    while (PyDict_Next(attrs, &position, &key, &value))
        if (!acyclic(key, 0) || !acyclic(value, 0))
            return;
    PyObject *fields[] = {SLOT(node, node_op), SLOT(node, node_shape), SLOT(node, node_dtype),
                          SLOT(node, node_location)};
    for (int i = 0; i < 4; i++)
        if (fields[i] == NULL || !acyclic(fields[i], 0))
            return;
    PyObject_GC_UnTrack(attrs);
    PyObject_GC_UnTrack(inputs);
    PyObject_GC_UnTrack(node);
}

/* untrack_if_acyclic(node), for the nodes Python makes (Node.__init__); a no-op until the
 * module is configured. */
static PyObject *
untrack_node(PyObject *module, PyObject *node)
{
    untrack_if_acyclic(node);
    Py_RETURN_NONE;
}

/* The nodes a tape recorded (in the order tracked: inputs first) and its signature entries,
 * untracked where they cannot be part of a reference cycle; on tapes of LARGE_TAPE nodes or
 * more. The collector's walk of a small tape's records, still in the caches, costs less;
 * a large tape's far more. `track` untracks the records made since the last time
 * (Recording.untracked counts those done) once the tape has LARGE_TAPE: each record as it
 * is made, in the caches (far cheaper a record than a pass over the whole tape when it
 * stops, out of the caches); untrack_records, when a tape stops, takes those made after
 * the last C record (Python's Recording.record, watch). */
#define LARGE_TAPE 4096

static void
untrack_since(PyObject *rec)
{
    PyObject *order = SLOT(rec, rec_order), *signature = SLOT(rec, rec_signature);
    Py_ssize_t stop = PyList_GET_SIZE(order);
    if (stop < LARGE_TAPE)
        return;  /* a small tape is left to the collector */
    Py_ssize_t start = PyLong_AsSsize_t(SLOT(rec, rec_untracked));
    if (start < 0) {  /* not a count this module wrote: start over */
        PyErr_Clear();
        start = 0;
    }
    if (start >= stop)
        return;
    PyObject *done = PyLong_FromSsize_t(stop);
    if (done == NULL) {
        PyErr_Clear();  /* the records stay tracked: the collector walks them */
        return;
    }
    for (Py_ssize_t i = start; i < stop; i++)
        untrack_if_acyclic(PyList_GET_ITEM(order, i));
    for (Py_ssize_t i = start; i < stop && i < PyList_GET_SIZE(signature); i++)
        acyclic(PyList_GET_ITEM(signature, i), 0);
    Py_SETREF(SLOT(rec, rec_untracked), done);
}

static PyObject *
untrack_records(PyObject *module, PyObject *rec)
{
    if (configured && Py_TYPE(rec) == Recording_type && recording_is_whole(rec))
        untrack_since(rec);
    Py_RETURN_NONE;
}

/* A new instance of a slotted class, as object.__new__ makes it: every slot unset. */
static PyObject *
allocate(PyTypeObject *type)
{
    return type->tp_alloc(type, 0);
}

/* Tensor(value): the value, no node, no origin, no cut, no mask. Steals `value`. */
static PyObject *
new_tensor(PyObject *value)
{
    PyObject *tensor = allocate(Tensor_type);
    if (tensor == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    SLOT(tensor, tensor_value) = value;
    SLOT(tensor, tensor_node) = Py_NewRef(Py_None);
    SLOT(tensor, tensor_origin) = Py_NewRef(Py_None);
    SLOT(tensor, tensor_cut) = Py_NewRef(Py_None);
    SLOT(tensor, tensor_keras_mask) = Py_NewRef(Py_None);
    return tensor;
}

/* Node(op, inputs, attrs, shape, dtype, location). Steals `inputs`. */
static PyObject *
new_node(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject *shape, PyObject *dtype, PyObject *location)
{
    PyObject *node = allocate(Node_type);
    if (node == NULL) {
        Py_DECREF(inputs);
        return NULL;
    }
    SLOT(node, node_op) = Py_NewRef(op);
    SLOT(node, node_inputs) = inputs;
    SLOT(node, node_attrs) = Py_NewRef(attrs);
    SLOT(node, node_shape) = Py_NewRef(shape);
    SLOT(node, node_dtype) = Py_NewRef(dtype);
    SLOT(node, node_location) = Py_NewRef(location);
    return node;
}

/* The node of tensor `t`, or NULL when it has none (its slot holds None). Borrowed. The C
 * path takes only tensors whose slot holds None or a Node (checked in fast_apply). */
static PyObject *
node_or_null(PyObject *t)
{
    PyObject *node = SLOT(t, tensor_node);
    return node == Py_None ? NULL : node;
}

/* dtype.name or dtype.is_differentiable (`offset`, `name`): a DType's slot read in place,
 * another type's attribute (a TupleType's). New reference, or NULL with an error set. */
static PyObject *
dtype_attribute(PyObject *dtype, Py_ssize_t offset, PyObject *name)
{
    if (Py_TYPE(dtype) == DType_type && SLOT(dtype, offset) != NULL)
        return Py_NewRef(SLOT(dtype, offset));
    return PyObject_GetAttr(dtype, name);
}

/* tracer.ir.source.user_location for the calling frame: the remembered answer when the
 * walk meets only known code objects and a known instruction, else the Python function. */
static PyObject *
caller_location(void)
{
    PyFrameObject *start = PyEval_GetFrame();
    if (start == NULL)
        Py_RETURN_NONE;
#if PY_VERSION_HEX >= 0x030B0000
    {
        PyCodeObject *first = PyFrame_GetCode(start);
        int lasti = PyFrame_GetLasti(start);
        Py_ssize_t slot = location_slot((PyObject *)first, lasti);
        Py_DECREF(first);
        if (known_locations[slot].code == (PyObject *)first && known_locations[slot].lasti == lasti)
            return Py_NewRef(known_locations[slot].location);
    }
    PyFrameObject *frame = (PyFrameObject *)Py_NewRef(start);
    while (frame != NULL) {
        PyCodeObject *code = PyFrame_GetCode(frame);
        PyObject *code_id = PyLong_FromVoidPtr(code);
        Py_DECREF(code);
        if (code_id == NULL) {
            Py_DECREF(frame);
            return NULL;
        }
        PyObject *known = PyDict_GetItemWithError(codes, code_id);
        if (known == NULL || !PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 2) {
            Py_DECREF(code_id);
            Py_DECREF(frame);
            if (PyErr_Occurred())
                return NULL;
            break;
        }
        if (PyTuple_GET_ITEM(known, 1) != Py_True) {
            int lasti = PyFrame_GetLasti(frame);
            int innermost = frame == start;
            PyObject *key = Py_BuildValue("(Ni)", code_id, lasti);
            Py_DECREF(frame);
            if (key == NULL)
                return NULL;
            PyObject *location = PyDict_GetItemWithError(locations, key);
            Py_DECREF(key);
            if (location != NULL && innermost) {  /* remembered, with the code kept alive */
                PyObject *code_object = PyTuple_GET_ITEM(known, 0);
                Py_ssize_t slot = location_slot(code_object, lasti);
                Py_XSETREF(known_locations[slot].code, Py_NewRef(code_object));
                Py_XSETREF(known_locations[slot].location, Py_NewRef(location));
                known_locations[slot].lasti = lasti;
            }
            if (location != NULL)
                return Py_NewRef(location);
            if (PyErr_Occurred())
                return NULL;
            break;
        }
        Py_DECREF(code_id);
        PyFrameObject *back = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = back;
        if (frame == NULL)
            Py_RETURN_NONE;
    }
#endif
    return PyObject_CallOneArg(user_location, (PyObject *)start);
}

/* tuple(attrs.items()) (a signature entry's attributes), or NULL. */
static PyObject *
attribute_items(PyObject *attrs)
{
    if (!PyDict_CheckExact(attrs)) {
        PyErr_SetString(PyExc_TypeError, "fast_apply: a node's attributes must be a dict");
        return NULL;
    }
    PyObject *items = PyTuple_New(PyDict_GET_SIZE(attrs));
    Py_ssize_t position = 0, i = 0;
    PyObject *key, *value;
    while (items != NULL && PyDict_Next(attrs, &position, &key, &value)) {
        PyObject *item = PyTuple_Pack(2, key, value);
        if (item == NULL) {
            Py_CLEAR(items);
            break;
        }
        PyTuple_SET_ITEM(items, i++, item);
    }
    return items;
}

/* Recording._track(node, None): number the node and append its signature entry.
 * Returns its position on the tape (a new reference), or NULL on error. */
static PyObject *
track(PyObject *rec, PyObject *node)
{
    enum { FIELDS = 6 };  /* op, attributes, shape, dtype name, location, watched; then the inputs */
    PyObject *tracked = SLOT(rec, rec_tracked), *outside = SLOT(rec, rec_outside);
    PyObject *order = SLOT(rec, rec_order), *inputs = SLOT(node, node_inputs);
    Py_ssize_t count = PyTuple_GET_SIZE(inputs);
    PyObject *signature_entry = PyTuple_New(FIELDS + count);
    if (signature_entry == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *input = PyTuple_GET_ITEM(inputs, i);
        PyObject *entry = PyDict_GetItemWithError(tracked, input);
        if (entry == NULL && !PyErr_Occurred())
            entry = PyDict_GetItemWithError(outside, input);
        if (entry != NULL) {
            Py_INCREF(entry);
        } else if (!PyErr_Occurred()) {  /* an outside node read for the first time */
            PyObject *number = PyLong_FromSsize_t(PyDict_GET_SIZE(outside));
            PyObject *dtype_name =
                number == NULL ? NULL : dtype_attribute(SLOT(input, node_dtype), dtype_name_slot, s_name);
            entry = dtype_name == NULL ? NULL
                                       : PyTuple_Pack(4, s_outside, number, SLOT(input, node_shape), dtype_name);
            Py_XDECREF(number);
            Py_XDECREF(dtype_name);
            if (entry != NULL && PyDict_SetItem(outside, input, entry) < 0)
                Py_CLEAR(entry);
        }
        if (entry == NULL)
            goto error;
        PyTuple_SET_ITEM(signature_entry, FIELDS + i, entry);
    }
    PyObject *attr_items = attribute_items(SLOT(node, node_attrs));
    PyObject *dtype_name =
        attr_items == NULL ? NULL : dtype_attribute(SLOT(node, node_dtype), dtype_name_slot, s_name);
    if (dtype_name == NULL) {
        Py_XDECREF(attr_items);
        goto error;
    }
    PyObject *fields[FIELDS] = {Py_NewRef(SLOT(node, node_op)), attr_items, Py_NewRef(SLOT(node, node_shape)),
                                dtype_name, Py_NewRef(SLOT(node, node_location)), Py_NewRef(Py_None)};
    for (int k = 0; k < FIELDS; k++)
        PyTuple_SET_ITEM(signature_entry, k, fields[k]);
    PyObject *position = PyLong_FromSsize_t(PyList_GET_SIZE(order));
    if (position == NULL || PyDict_SetItem(tracked, node, position) < 0 || PyList_Append(order, node) < 0 ||
        PyList_Append(SLOT(rec, rec_saved), Py_None) < 0 ||
        PyList_Append(SLOT(rec, rec_signature), signature_entry) < 0) {
        Py_XDECREF(position);
        goto error;
    }
    Py_DECREF(signature_entry);
    if (configured)
        untrack_since(rec);
    return position;
error:
    Py_DECREF(signature_entry);
    return NULL;
}

/* Recording.record(node, saved). */
static int
record_node(PyObject *rec, PyObject *node, PyObject *saved)
{
    PyObject *position = PyDict_GetItemWithError(SLOT(rec, rec_tracked), node);
    if (position != NULL) {
        Py_INCREF(position);
    } else if (!PyErr_Occurred()) {
        position = track(rec, node);
        if (position != NULL && PyList_Append(SLOT(rec, rec_nodes), node) < 0)
            Py_CLEAR(position);
    }
    if (position == NULL)
        return -1;
    Py_ssize_t index = PyLong_AsSsize_t(position);
    Py_DECREF(position);
    if (index == -1 && PyErr_Occurred())
        return -1;
    return PyList_SetItem(SLOT(rec, rec_saved), index, Py_NewRef(saved));  /* checks the index */
}

/* What op's gradient rule keeps (`op.saves`): (), all inputs, or chosen inputs and OUT. */
static PyObject *
saved_values(PyObject *op, PyObject *inputs, PyObject *out)
{
    PyObject *saves = SLOT(op, opdef_saves);
    if (!PyTuple_Check(saves))  /* ALL_INPUTS */
        return Py_NewRef(inputs);
    Py_ssize_t count = PyTuple_GET_SIZE(saves);
    int in_order = count == PyTuple_GET_SIZE(inputs);  /* (0, 1) of a binary op: the inputs */
    for (Py_ssize_t i = 0; in_order && i < count; i++) {
        PyObject *slot = PyTuple_GET_ITEM(saves, i);
        Py_ssize_t position = PyLong_CheckExact(slot) ? PyLong_AsSsize_t(slot) : -1;
        if (position == -1)
            PyErr_Clear();  /* not a position, or one past Py_ssize_t: the loop below says */
        in_order = position == i;
    }
    if (in_order)
        return Py_NewRef(inputs);
    PyObject *saved = PyTuple_New(count);
    for (Py_ssize_t i = 0; saved != NULL && i < count; i++) {
        PyObject *slot = PyTuple_GET_ITEM(saves, i);
        PyObject *value;
        /* a slot is an input position or OUT (a string): compare strings only */
        int is_out = slot == OUT ? 1 : PyUnicode_Check(slot) ? PyObject_RichCompareBool(slot, OUT, Py_EQ) : 0;
        if (is_out < 0) {
            Py_CLEAR(saved);
            break;
        }
        if (is_out) {
            value = out;
        } else {
            Py_ssize_t position = PyLong_AsSsize_t(slot);
            if (position < 0 && !PyErr_Occurred())
                position += PyTuple_GET_SIZE(inputs);  /* inputs[slot], as in Python */
            if (position < 0 || position >= PyTuple_GET_SIZE(inputs)) {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_IndexError, "%R saves input %zd of %zd", op, position, PyTuple_GET_SIZE(inputs));
                Py_CLEAR(saved);
                break;
            }
            value = PyTuple_GET_ITEM(inputs, position);
        }
        PyTuple_SET_ITEM(saved, i, Py_NewRef(value));
    }
    return saved;
}

/* `saved` as the tape of `rec` keeps it: None for each value whose cotangents' inputs
 * (`op.saved_for`) are all Python numbers' constants this tape does not track, as
 * `core._kept_for` does. New reference, or NULL with an error set. */
static PyObject *
saved_for_tape(PyObject *op, PyObject *saved, PyObject *inputs, PyObject *input_nodes, PyObject *rec)
{
    PyObject *saved_for = SLOT(op, opdef_saved_for);
    if (saved_for == NULL || saved_for == Py_None)
        return Py_NewRef(saved);
    Py_ssize_t count = PyTuple_GET_SIZE(saved);
    if (!PyTuple_CheckExact(saved_for) || PyTuple_GET_SIZE(saved_for) != count)
        return PyErr_Format(PyExc_TypeError, "%R: saved_for needs one entry per saved value", op);
    PyObject *tracked = SLOT(rec, rec_tracked), *kept = NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *needers = PyTuple_GET_ITEM(saved_for, i);
        if (!PyTuple_CheckExact(needers)) {
            Py_XDECREF(kept);
            return PyErr_Format(PyExc_TypeError, "%R: saved_for holds tuples of input positions", op);
        }
        int needed = 0; /* 1: an input that needs it is tracked, or might be watched later */
        for (Py_ssize_t j = 0; needed == 0 && j < PyTuple_GET_SIZE(needers); j++) {
            Py_ssize_t position = PyLong_AsSsize_t(PyTuple_GET_ITEM(needers, j));
            if (position < 0 || position >= PyTuple_GET_SIZE(inputs)) {
                if (!PyErr_Occurred())
                    PyErr_Format(PyExc_IndexError, "%R: saved_for names input %zd", op, position);
                needed = -1;
                break;
            }
            PyObject *id = PyLong_FromVoidPtr(PyTuple_GET_ITEM(inputs, position));
            int constant = id == NULL ? -1 : PySet_Contains(scalar_constant_ids, id);
            Py_XDECREF(id);
            needed = constant <= 0 ? (constant < 0 ? -1 : 1)
                                   : PyDict_Contains(tracked, PyTuple_GET_ITEM(input_nodes, position));
        }
        if (needed < 0) {
            Py_XDECREF(kept);
            return NULL;
        }
        if (needed)
            continue;
        if (kept == NULL) {
            kept = PyTuple_New(count);
            if (kept == NULL)
                return NULL;
            for (Py_ssize_t k = 0; k < count; k++)
                PyTuple_SET_ITEM(kept, k, Py_NewRef(PyTuple_GET_ITEM(saved, k)));
        }
        PyObject *dropped = PyTuple_GET_ITEM(kept, i);
        PyTuple_SET_ITEM(kept, i, Py_NewRef(Py_None));
        Py_DECREF(dropped);
    }
    return kept != NULL ? kept : Py_NewRef(saved);
}

/* The tapes recording now, by their Recordings (new references), for one call. */
#define MAX_TAPES 8
typedef struct {
    Py_ssize_t count;
    PyObject *recs[MAX_TAPES];
} Recordings;

static void
release_recordings(Recordings *recordings)
{
    for (Py_ssize_t k = 0; k < recordings->count; k++)
        Py_DECREF(recordings->recs[k]);
    recordings->count = 0;
}

/* core._location(): `state.location or user_location()`. New reference, or NULL with an
 * error set. */
static PyObject *
current_location(PyObject *thread_state)
{
    PyObject *location = PyDict_GetItemWithError(thread_state, s_location);
    if (location == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "state.location");
        return NULL;
    }
    Py_INCREF(location); /* its truth may run Python code that replaces state.location */
    int given = PyObject_IsTrue(location);
    if (given > 0)
        return location;
    Py_DECREF(location);
    return given < 0 ? NULL : caller_location();
}

/* Record `out = op(*inputs)` on every tape (each tracks an input; checked before). */
static int
record(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject *out, PyObject *shape, PyObject *dtype,
       Recordings *recordings, PyObject *thread_state)
{
    PyObject *location = current_location(thread_state);
    if (location == NULL)
        return -1;
    Py_ssize_t count = PyTuple_GET_SIZE(inputs);
    PyObject *input_nodes = PyTuple_New(count);
    for (Py_ssize_t i = 0; input_nodes != NULL && i < count; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        PyObject *input_node = node_or_null(t);
        input_node = input_node != NULL ? Py_NewRef(input_node) : PyObject_CallOneArg(node_of, t);
        if (input_node == NULL)
            Py_CLEAR(input_nodes);
        else
            PyTuple_SET_ITEM(input_nodes, i, input_node);
    }
    PyObject *node =
        input_nodes == NULL ? NULL : new_node(SLOT(op, opdef_name), input_nodes, attrs, shape, dtype, location);
    Py_DECREF(location);
    if (node == NULL)
        return -1;
    Py_SETREF(SLOT(out, tensor_node), node);
    PyObject *saved = saved_values(op, inputs, out);
    if (saved == NULL)
        return -1;
    int result = 0;
    for (Py_ssize_t k = 0; result == 0 && k < recordings->count; k++) {
        PyObject *kept = saved_for_tape(op, saved, inputs, SLOT(node, node_inputs), recordings->recs[k]);
        result = kept == NULL ? -1 : record_node(recordings->recs[k], node, kept);
        Py_XDECREF(kept);
    }
    Py_DECREF(saved);
    return result;
}

/* Forward declarations: record_python, after the helpers it shares with the C path. */
static int tracking_recordings(PyObject *tapes, PyObject *inputs, Recordings *recordings);
static PyObject *thread_state_dict(void);
static PyObject *state_entry(PyObject *thread_state, PyObject *name);

/* record(op, inputs, attrs, out, shape, dtype): what `_record` does for an op the Python path
 * ran (one with attributes, a first sight of a shape), done in C when it can be: when `out`
 * has no node yet, the op is differentiable and every recording tape tracks an input, it
 * records as the C path does and returns True; otherwise it records nothing and returns
 * False, and `_record` goes on in Python. An unrolled model records many such ops (slices,
 * concat) a step.
 * A `saves` string is taken as ALL_INPUTS: `_record` keeps ALL_INPUTS_AND_OUT (a while loop's)
 * in Python. */
static PyObject *
record_python(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "record(op, inputs, attrs, out, shape, dtype) takes 6 arguments");
        return NULL;
    }
    PyObject *op = args[0], *inputs = args[1], *attrs = args[2], *out = args[3];
    if (!enabled || Py_TYPE(op) != OpDef_type || !PyTuple_CheckExact(inputs) || !PyDict_CheckExact(attrs) ||
        Py_TYPE(out) != Tensor_type || SLOT(out, tensor_node) != Py_None)
        Py_RETURN_FALSE;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i), *node;
        if (Py_TYPE(t) != Tensor_type || (node = SLOT(t, tensor_node)) == NULL ||
            (node != Py_None && Py_TYPE(node) != Node_type))
            Py_RETURN_FALSE;
    }
    PyObject *name = SLOT(op, opdef_name), *grad = SLOT(op, opdef_grad), *saves = SLOT(op, opdef_saves);
    if (name == NULL || !PyUnicode_CheckExact(name) || grad == NULL || grad == Py_None || saves == NULL ||
        !(PyTuple_CheckExact(saves) || PyUnicode_CheckExact(saves)))
        Py_RETURN_FALSE;
    PyObject *differentiable = dtype_attribute(args[5], dtype_differentiable_slot, s_is_differentiable);
    int flows = differentiable == NULL ? -1 : PyObject_IsTrue(differentiable);
    Py_XDECREF(differentiable);
    if (flows <= 0)
        return flows < 0 ? NULL : Py_NewRef(Py_False);
    PyObject *thread_state = thread_state_dict();
    PyObject *tapes = thread_state == NULL ? NULL : state_entry(thread_state, s_tapes);
    if (tapes == NULL)
        return NULL;
    if (!PyList_Check(tapes) || PyList_GET_SIZE(tapes) == 0)
        Py_RETURN_FALSE;
    Py_INCREF(tapes);
    Recordings recordings = {0};
    int tracks = tracking_recordings(tapes, inputs, &recordings);
    int outcome = tracks == 1 ? record(op, inputs, attrs, out, args[4], args[5], &recordings, thread_state)
                              : tracks < 0 ? -1 : 0;
    release_recordings(&recordings);
    Py_DECREF(tapes);
    if (outcome < 0)
        return NULL;
    return PyBool_FromLong(outcome == 0 && tracks == 1);
}

/* Are the Recording's fields the dicts and lists Recording.__init__ makes? */
static int
recording_is_whole(PyObject *rec)
{
    Py_ssize_t dicts[] = {rec_tracked, rec_outside};
    Py_ssize_t lists[] = {rec_order, rec_signature, rec_nodes, rec_saved};
    for (int i = 0; i < 2; i++)
        if (SLOT(rec, dicts[i]) == NULL || !PyDict_CheckExact(SLOT(rec, dicts[i])))
            return 0;
    for (int i = 0; i < 4; i++)
        if (SLOT(rec, lists[i]) == NULL || !PyList_CheckExact(SLOT(rec, lists[i])))
            return 0;
    if (PyList_GET_SIZE(SLOT(rec, rec_saved)) != PyList_GET_SIZE(SLOT(rec, rec_order)))
        return 0;
    PyObject *untracked = SLOT(rec, rec_untracked);
    return untracked != NULL && PyLong_CheckExact(untracked);
}

/* The Recordings of `tapes` (at least one) when each tracks an input of the op: 1, and
 * `recordings` filled; NONE_TRACKS when every tape is as expected and none tracks an input;
 * 0 when some tape does and another does not, or one is not as expected; -1 on error. */
enum { NONE_TRACKS = 2 };
static int
tracking_recordings(PyObject *tapes, PyObject *inputs, Recordings *recordings)
{
    if (PyList_GET_SIZE(tapes) > MAX_TAPES)
        return 0;
    Py_ssize_t tracking = 0;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(tapes); k++) {
        PyObject *tape = Py_NewRef(PyList_GET_ITEM(tapes, k));
        PyObject *rec = PyObject_GetAttr(tape, s_recording_state);
        Py_DECREF(tape);
        if (rec == NULL) {
            release_recordings(recordings);
            return -1;
        }
        if (recordings->count == MAX_TAPES) { /* the getattr's Python code added tapes */
            Py_DECREF(rec);
            release_recordings(recordings);
            return 0;
        }
        recordings->recs[recordings->count++] = rec;
        if (Py_TYPE(rec) != Recording_type || !recording_is_whole(rec)) {
            release_recordings(recordings);
            return 0;
        }
        int tracks = 0;
        for (Py_ssize_t i = 0; tracks == 0 && i < PyTuple_GET_SIZE(inputs); i++) {
            PyObject *node = node_or_null(PyTuple_GET_ITEM(inputs, i));
            if (node != NULL)
                tracks = PyDict_Contains(SLOT(rec, rec_tracked), node);
        }
        if (tracks < 0) {
            release_recordings(recordings);
            return -1;
        }
        tracking += tracks;
    }
    if (tracking == recordings->count)
        return 1;
    release_recordings(recordings);
    return tracking == 0 ? NONE_TRACKS : 0;
}

/* A thread-state entry (borrowed), or NULL with an error set. */
static PyObject *
state_entry(PyObject *thread_state, PyObject *name)
{
    PyObject *value = PyDict_GetItemWithError(thread_state, name);
    if (value == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_AttributeError, "fast_apply: the thread state has no %U", name);
    return value;
}

/* This thread's `state` attributes (tracer.context.state.__dict__), borrowed. Remembered per
 * thread, by the interpreter's thread id, which no later thread reuses. */
static PyObject *
thread_state_dict(void)
{
    uint64_t current = PyThreadState_GetID(PyThreadState_Get());
    if (cached_state_dict == NULL || current != cached_state_thread) {
        PyObject *fresh = PyObject_GetAttr(state, s_dict);
        if (fresh == NULL)
            return NULL;
        if (!PyDict_Check(fresh)) {
            Py_DECREF(fresh);
            PyErr_SetString(PyExc_TypeError, "fast_apply: state.__dict__ is not a dict");
            return NULL;
        }
        Py_XSETREF(cached_state_dict, fresh);
        cached_state_thread = current;
    }
    return cached_state_dict;
}

/* Before anything is computed: may the C path take this call? 1 yes (with the tracking
 * tapes' Recordings, and outside any tape the node of the first Variable read, in
 * `variable`, borrowed, or NULL), NONE_TRACKS yes where tapes record but none tracks an
 * input (`note_untracked` notes the call then, as `_record` does), 0 no, -1 on error. */
static int
fast_path_applies(PyObject *op, PyObject *tapes, PyObject *inputs, PyObject *thread_state, PyObject *dtype,
                  Recordings *recordings, PyObject **variable)
{
    PyObject *trace = state_entry(thread_state, s_trace), *paused = state_entry(thread_state, s_paused);
    if (trace == NULL || paused == NULL)
        return -1;
    if (trace != Py_None || !PyList_Check(paused) || PyList_GET_SIZE(paused) != 0)
        return 0;
    if (SLOT(numerics, numerics_enabled) != Py_False)
        return 0;
    if (PyList_GET_SIZE(tapes) == 0) {
        /* a result computed from a Variable outside any tape notes which and where (`note_origin`) */
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
            PyObject *node = node_or_null(PyTuple_GET_ITEM(inputs, i));
            if (node != NULL && PyUnicode_Check(SLOT(node, node_op)) &&
                PyUnicode_Compare(SLOT(node, node_op), s_variable) == 0) {
                *variable = node;
                break;
            }
        }
        return 1;
    }
    int tracking = tracking_recordings(tapes, inputs, recordings);
    if (tracking != 1)
        return tracking;
    PyObject *differentiable = SLOT(op, opdef_grad) == Py_None
                                   ? Py_NewRef(Py_False)
                                   : dtype_attribute(dtype, dtype_differentiable_slot, s_is_differentiable);
    int flows = differentiable == NULL ? -1 : PyObject_IsTrue(differentiable);
    Py_XDECREF(differentiable);
    if (flows <= 0)
        release_recordings(recordings);
    return flows;
}

/* tracer.ops.core._form: (type(value), value), or a tuple of the forms of a tuple's items;
 * the types tell 1 from 1.0 and True, which compare equal. New reference, or NULL with an
 * error set. */
static PyObject *
attribute_form(PyObject *value, int depth)
{
    if (!PyTuple_CheckExact(value))
        return PyTuple_Pack(2, (PyObject *)Py_TYPE(value), value);
    if (depth > 16) /* deeper than any attribute of the catalogue: not remembered */
        return PyErr_Format(PyExc_TypeError, "fast_apply: an attribute nested too deep");
    Py_ssize_t size = PyTuple_GET_SIZE(value);
    PyObject *forms = PyTuple_New(size);
    for (Py_ssize_t i = 0; forms != NULL && i < size; i++) {
        PyObject *form = attribute_form(PyTuple_GET_ITEM(value, i), depth + 1);
        if (form == NULL)
            Py_CLEAR(forms);
        else
            PyTuple_SET_ITEM(forms, i, form);
    }
    return forms;
}

/* ((name, form of value) for each attribute), as tracer.ops.core._attribute_key. */
static PyObject *
attribute_key(PyObject *attrs)
{
    const Py_ssize_t size = PyDict_GET_SIZE(attrs);
    PyObject *items = PyTuple_New(size);
    if (items == NULL)
        return NULL;
    Py_ssize_t position = 0, k = 0;
    PyObject *name, *value;
    /* the forms' allocations may collect garbage, whose finalizers may change the dict: its
       entries are held while read, and a change of its size is an error, as in Python */
    while (k < size && PyDict_Next(attrs, &position, &name, &value)) {
        Py_INCREF(name);
        Py_INCREF(value);
        PyObject *form = attribute_form(value, 0);
        PyObject *item = form == NULL ? NULL : PyTuple_Pack(2, name, form);
        Py_XDECREF(form);
        Py_DECREF(name);
        Py_DECREF(value);
        if (item == NULL) {
            Py_DECREF(items);
            return NULL;
        }
        PyTuple_SET_ITEM(items, k++, item);
    }
    if (k != size || PyDict_GET_SIZE(attrs) != size) {
        Py_DECREF(items);
        PyErr_SetString(PyExc_RuntimeError, "fast_apply: an op's attributes changed while read");
        return NULL;
    }
    return items;
}

/* The (shape, dtype) `table` remembers under `key` (a new tuple, stolen, whose last item is
 * left for the attributes' key where `attrs` has any), borrowed; or NULL (error set or not;
 * never set by attributes that cannot be hashed, which are never remembered). */
static PyObject *
remembered_shape(PyObject *table, PyObject *key, PyObject *attrs)
{
    int with_attrs = PyDict_GET_SIZE(attrs) != 0;
    if (with_attrs) {
        PyObject *items = attribute_key(attrs);
        if (items == NULL) {
            Py_DECREF(key);
            PyErr_Clear(); /* not remembered: the Python path (which raises a real error again) */
            return NULL;
        }
        PyTuple_SET_ITEM(key, PyTuple_GET_SIZE(key) - 1, items);
    }
    PyObject *known = PyDict_GetItemWithError(table, key);
    Py_DECREF(key);
    if (known == NULL && with_attrs)
        PyErr_Clear(); /* an attribute whose hash fails (a list, ...): the Python path */
    if (known != NULL && !(PyTuple_CheckExact(known) && PyTuple_GET_SIZE(known) == 2))
        return NULL;
    return known;
}

/* The remembered (shape, dtype) of op on these values with these attributes (borrowed), or
 * NULL, as remembered_shape. */
static PyObject *
inferred_shape(PyObject *op, PyObject *const *values, Py_ssize_t count, PyObject *attrs)
{
    int with_attrs = PyDict_GET_SIZE(attrs) != 0;
    PyObject *key = PyTuple_New(1 + 2 * count + with_attrs);
    if (key == NULL)
        return NULL;
    PyTuple_SET_ITEM(key, 0, Py_NewRef(op));
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *shape, *dtype, *form = PyDict_GetItemWithError(scalar_forms, (PyObject *)Py_TYPE(values[i]));
        if (form != NULL && PyTuple_CheckExact(form) && PyTuple_GET_SIZE(form) == 2) {  /* a numpy scalar */
            shape = Py_NewRef(PyTuple_GET_ITEM(form, 0));
            dtype = Py_NewRef(PyTuple_GET_ITEM(form, 1));
        } else {
            shape = PyErr_Occurred() ? NULL : PyObject_GetAttr(values[i], s_shape);
            dtype = shape == NULL ? NULL : PyObject_GetAttr(values[i], s_dtype);
        }
        if (dtype == NULL) {
            Py_XDECREF(shape);
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, 1 + 2 * i, shape);
        PyTuple_SET_ITEM(key, 2 + 2 * i, dtype);
    }
    return remembered_shape(inferred, key, attrs);
}

/* The most inputs of an op the C path takes (a concat of several parts): core.py's
 * _REMEMBERED_INPUTS, the most whose inferred shapes are remembered. */
#define MAX_INPUTS 8

/* Results of at least this many elements take the op's kernel even where it has a floating
 * operator: the kernel runs large arithmetic on the threads (tracer/ops/math_ops.py's
 * ARITHMETIC_ON_THREADS_FROM, which tests/test_fast_apply.py holds this to). */
#define LARGE_FLOATING_FROM 65536

/* Whether `shape` (a tuple of ints) has at least LARGE_FLOATING_FROM elements. */
static int
large(PyObject *shape)
{
    if (!PyTuple_CheckExact(shape))
        return 0;
    long long elements = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        PyObject *extent = PyTuple_GET_ITEM(shape, i);
        if (!PyLong_CheckExact(extent))
            return 0;
        elements *= PyLong_AsLongLong(extent);
        if (elements == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        if (elements >= LARGE_FLOATING_FROM || elements <= 0)
            return elements >= LARGE_FLOATING_FROM;
    }
    return 0;
}

/* The kernel of op `name` whose result has `shape` and DType `dtype` (borrowed; NULL, error set
 * or not, when none): where the op's floating kernel is a Python operator and its values are
 * floating or complex (its inputs have the result's dtype), that operator, which is what its
 * kernel would call on them, without the kernel's Python frame; but for a large result. */
static PyObject *
kernel_of(PyObject *name, PyObject *shape, PyObject *dtype)
{
    if (Py_TYPE(dtype) == DType_type && SLOT(dtype, dtype_differentiable_slot) == Py_True &&
        !large(shape)) {
        PyObject *kernel = PyDict_GetItemWithError(floating_kernels, name);
        if (kernel != NULL || PyErr_Occurred())
            return kernel;
    }
    return PyDict_GetItemWithError(kernels, name);
}

/* Tensor(None, node): a symbolic tensor. Steals `node`. */
static PyObject *
new_symbolic_tensor(PyObject *node)
{
    PyObject *tensor = new_tensor(Py_NewRef(Py_None));
    if (tensor == NULL) {
        Py_DECREF(node);
        return NULL;
    }
    Py_SETREF(SLOT(tensor, tensor_node), node);
    return tensor;
}

/* Whether thread-state entry `name` is an empty list (1), something else (0), or missing (-1,
 * error set). */
static int
empty_list_entry(PyObject *thread_state, PyObject *name)
{
    PyObject *value = state_entry(thread_state, name);
    if (value == NULL)
        return -1;
    return PyList_CheckExact(value) && PyList_GET_SIZE(value) == 0;
}

/* The symbolic case the C path takes: while tracer builds a graph of its own (state.building:
 * a gradient graph; no trace, no tape, no paused tape, no forward accumulator), an op of one
 * or two symbolic tensors whose shape rule is remembered for these shapes, dtypes and
 * attributes (core's _infer_symbolic, keyed as it keys them): a Node of the inputs' nodes
 * at state.location (else the caller's line),
 * untracked as Node.__init__'s hook untracks it, and a Tensor of it, what apply_symbolic
 * makes. Building a large tape's gradient graph applies an op per cotangent; most are
 * these. Anything else goes to Python. */
static int
symbolic_apply(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject **result)
{
    Py_ssize_t count = PyTuple_GET_SIZE(inputs);
    if (count > 2)
        return USE_PYTHON;
    PyObject *name = SLOT(op, opdef_name);
    if (name == NULL || !PyUnicode_CheckExact(name))
        return USE_PYTHON;
    PyObject *input_nodes[2];
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        if (Py_TYPE(t) != Tensor_type || SLOT(t, tensor_value) != Py_None)
            return USE_PYTHON;  /* an eager input becomes a constant node: Python's graph_node_of */
        input_nodes[i] = SLOT(t, tensor_node);
        if (input_nodes[i] == NULL || Py_TYPE(input_nodes[i]) != Node_type)
            return USE_PYTHON;
    }
    PyObject *thread_state = thread_state_dict();
    PyObject *trace = thread_state == NULL ? NULL : state_entry(thread_state, s_trace);
    PyObject *building = trace == NULL ? NULL : state_entry(thread_state, s_building);
    if (building == NULL)
        return FAILED;
    int overflow = 0;
    const long level = PyLong_CheckExact(building) ? PyLong_AsLongAndOverflow(building, &overflow) : 0;
    int quiet = trace == Py_None && (overflow > 0 || level > 0);
    for (int k = 0; quiet > 0 && k < 3; k++)
        quiet = empty_list_entry(thread_state, k == 0 ? s_tapes : k == 1 ? s_paused : s_accumulators);
    if (quiet <= 0)
        return quiet < 0 ? FAILED : USE_PYTHON;
    PyObject *key = PyTuple_New(1 + count + (PyDict_GET_SIZE(attrs) != 0));
    if (key == NULL)
        return FAILED;
    PyTuple_SET_ITEM(key, 0, Py_NewRef(op));
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *form = PyTuple_Pack(2, SLOT(input_nodes[i], node_shape), SLOT(input_nodes[i], node_dtype));
        if (form == NULL) {
            Py_DECREF(key);
            return FAILED;
        }
        PyTuple_SET_ITEM(key, 1 + i, form);
    }
    PyObject *known = remembered_shape(inferred_symbolic, key, attrs);
    if (known == NULL)
        return PyErr_Occurred() ? FAILED : USE_PYTHON;
    Py_INCREF(known);
    PyObject *location = current_location(thread_state);
    PyObject *nodes = location == NULL ? NULL : PyTuple_New(count);
    for (Py_ssize_t i = 0; nodes != NULL && i < count; i++)
        PyTuple_SET_ITEM(nodes, i, Py_NewRef(input_nodes[i]));
    PyObject *node = nodes == NULL ? NULL
                                   : new_node(name, nodes, attrs, PyTuple_GET_ITEM(known, 0),
                                              PyTuple_GET_ITEM(known, 1), location);
    Py_XDECREF(location);
    Py_DECREF(known);
    if (node == NULL)
        return FAILED;
    untrack_if_acyclic(node);
    *result = new_symbolic_tensor(node);
    return *result == NULL ? FAILED : DONE;
}

/* core._note_variable_origin: `out` computed from the Variable of `variable_node` outside any
 * tape remembers its name and the user's line (tape.explain names them). */
static int
note_origin(PyObject *out, PyObject *variable_node, PyObject *thread_state)
{
    PyObject *attrs = SLOT(variable_node, node_attrs);
    PyObject *name = PyDict_Check(attrs) ? PyDict_GetItemWithError(attrs, s_name) : NULL;
    if (name == NULL)
        return PyErr_Occurred() ? -1 : (PyErr_SetString(PyExc_KeyError, "a variable node without a name"), -1);
    PyObject *location = current_location(thread_state);
    PyObject *origin = location == NULL ? NULL : PyTuple_Pack(2, name, location);
    Py_XDECREF(location);
    if (origin == NULL)
        return -1;
    Py_SETREF(SLOT(out, tensor_origin), origin);
    return 0;
}

static int
fast_apply(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject **result)
{
    if (Py_TYPE(op) != OpDef_type || !PyTuple_CheckExact(inputs) || !PyDict_CheckExact(attrs))
        return USE_PYTHON;
    Py_ssize_t count = PyTuple_GET_SIZE(inputs);
    if (count < 1 || count > MAX_INPUTS)
        return USE_PYTHON;
    PyObject *values[MAX_INPUTS];
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        if (Py_TYPE(t) != Tensor_type)
            return USE_PYTHON;
        values[i] = SLOT(t, tensor_value);
        PyObject *node = SLOT(t, tensor_node);
        if (values[i] == Py_None)
            return symbolic_apply(op, inputs, attrs, result);
        if (values[i] == NULL || node == NULL || (node != Py_None && Py_TYPE(node) != Node_type))
            return USE_PYTHON;
    }
    PyObject *name = SLOT(op, opdef_name), *grad = SLOT(op, opdef_grad), *saves = SLOT(op, opdef_saves);
    if (name == NULL || !PyUnicode_CheckExact(name) || grad == NULL || saves == NULL ||
        !(PyTuple_CheckExact(saves) || (PyUnicode_CheckExact(saves) && PyUnicode_Compare(saves, ALL_INPUTS) == 0)))
        return USE_PYTHON;
    PyObject *known = inferred_shape(op, values, count, attrs);
    if (known == NULL)
        return PyErr_Occurred() ? FAILED : USE_PYTHON;
    Py_INCREF(known);
    for (Py_ssize_t i = 0; i < count; i++)
        Py_INCREF(values[i]);  /* held: Python code runs before the kernel does */
    PyObject *thread_state = thread_state_dict();
    PyObject *tapes = thread_state == NULL ? NULL : state_entry(thread_state, s_tapes);
    Recordings recordings = {0};
    PyObject *variable = NULL;
    int outcome = FAILED;
    if (tapes != NULL) {
        Py_INCREF(tapes);
        outcome = PyList_Check(tapes) ? fast_path_applies(op, tapes, inputs, thread_state, PyTuple_GET_ITEM(known, 1),
                                                          &recordings, &variable)
                                      : USE_PYTHON;
    }
    PyObject *kernel = NULL;
    const int untracked = outcome == NONE_TRACKS;
    if (outcome == 1 || untracked) {
        kernel = kernel_of(name, PyTuple_GET_ITEM(known, 0), PyTuple_GET_ITEM(known, 1));
        outcome = kernel != NULL ? DONE : PyErr_Occurred() ? FAILED : USE_PYTHON;
        Py_XINCREF(kernel);
    }
    if (outcome == DONE) {
        PyObject *quiet = quiet_errors_begin();
        PyObject *value = quiet == NULL ? NULL
                                        : PyObject_VectorcallDict(kernel, values, count,
                                                                  PyDict_GET_SIZE(attrs) ? attrs : NULL);
        if (quiet != NULL && quiet_errors_end(quiet) < 0)
            Py_CLEAR(value);
        PyObject *out = value == NULL ? NULL : new_tensor(value);
        if (out != NULL && recordings.count != 0 &&
            record(op, inputs, attrs, out, PyTuple_GET_ITEM(known, 0), PyTuple_GET_ITEM(known, 1), &recordings,
                   thread_state) < 0)
            Py_CLEAR(out);
        if (out != NULL && variable != NULL && note_origin(out, variable, thread_state) < 0)
            Py_CLEAR(out);
        if (out != NULL && untracked) {
            PyObject *noted = PyObject_CallFunctionObjArgs(note_untracked, inputs, out, NULL);
            if (noted == NULL)
                Py_CLEAR(out);
            Py_XDECREF(noted);
        }
        *result = out;
        if (out == NULL)
            outcome = FAILED;
    }
    release_recordings(&recordings);
    Py_XDECREF(kernel);
    Py_XDECREF(tapes);
    for (Py_ssize_t i = 0; i < count; i++)
        Py_DECREF(values[i]);
    Py_DECREF(known);
    return outcome;
}

/* apply(op, inputs, attrs), with `fallback(*fallback_args)` for what the C path does not take. */
static PyObject *
apply_or(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject *fallback, PyObject *const *fallback_args,
         Py_ssize_t fallback_count)
{
    PyObject *out = NULL;
    int outcome = enabled ? fast_apply(op, inputs, attrs, &out) : USE_PYTHON;
    if (outcome == USE_PYTHON)
        return PyObject_Vectorcall(fallback, fallback_args, fallback_count, NULL);
    return outcome == DONE ? out : NULL;
}

static PyObject *
not_configured(void)
{
    PyErr_SetString(PyExc_RuntimeError, "fast_apply: call configure() first");
    return NULL;
}

static PyObject *
apply(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (!configured)
        return not_configured();
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "apply(op, inputs, attrs) takes 3 arguments");
        return NULL;
    }
    return apply_or(args[0], args[1], args[2], python_apply, args, 3);
}

/* ---- Variables read outside any tape ---------------------------------------------------------
 * `tt.add(y, variable)` outside any tape reads the variable as Variable._read reads it there:
 * a Tensor of its array and node, the variable marked shared (compiled code that updates it in
 * place copies it first). read_variables(Variable) names the class and its slots; until then,
 * and for a subclass, or inside a tape, a trace, a watching() block or a forward accumulator
 * (where a read does more), Python reads it. */
static PyTypeObject *Variable_type;
static Py_ssize_t variable_value, variable_node, variable_shared;

static PyObject *
read_variables(PyObject *module, PyObject *cls)
{
    static const char *const names[] = {"_value", "_node", "_shared"};
    Py_ssize_t offsets[3];
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "read_variables takes the Variable class");
        return NULL;
    }
    for (int i = 0; i < 3; i++)
        if (slot_offset((PyTypeObject *)cls, names[i], &offsets[i]) < 0)
            return NULL;
    Py_XSETREF(Variable_type, (PyTypeObject *)Py_NewRef(cls));
    variable_value = offsets[0];
    variable_node = offsets[1];
    variable_shared = offsets[2];
    Py_RETURN_NONE;
}

/* Variable._read() of `value` where no tape, trace, watcher or accumulator is active: a new
 * reference; NULL with no error set where Python must read it (or `value` is no Variable),
 * NULL with one on error. */
static PyObject *
read_outside(PyObject *value)
{
    if (Variable_type == NULL || Py_TYPE(value) != Variable_type)
        return NULL;
    PyObject *thread_state = thread_state_dict();
    PyObject *trace = thread_state == NULL ? NULL : state_entry(thread_state, s_trace);
    if (trace == NULL || trace != Py_None)
        return NULL;
    PyObject *const quiet_lists[] = {s_tapes, s_watchers, s_accumulators};
    for (int k = 0; k < 3; k++)
        if (empty_list_entry(thread_state, quiet_lists[k]) != 1)
            return NULL;
    /* the Tensor first: allocating it may collect garbage, whose finalizers (or another
       thread, while they hold no lock) may assign the variable and free its old array */
    PyObject *tensor = allocate(Tensor_type);
    if (tensor == NULL)
        return NULL;
    PyObject *array = SLOT(value, variable_value), *node = SLOT(value, variable_node);
    if (array == NULL || node == NULL || Py_TYPE(node) != Node_type) {
        Py_DECREF(tensor); /* its slots still empty, which its dealloc skips */
        return NULL;
    }
    SLOT(tensor, tensor_value) = Py_NewRef(array);
    SLOT(tensor, tensor_node) = Py_NewRef(node);
    SLOT(tensor, tensor_origin) = Py_NewRef(Py_None);
    SLOT(tensor, tensor_cut) = Py_NewRef(Py_None);
    SLOT(tensor, tensor_keras_mask) = Py_NewRef(Py_None);
    Py_XSETREF(SLOT(value, variable_shared), Py_NewRef(Py_True));
    return tensor;
}

/* apply_unary(op, x): apply(op, (as_tensor(x),), {}). */
static PyObject *
apply_unary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "apply_unary(op, x) takes 2 arguments");
        return NULL;
    }
    if (!configured)
        return not_configured();
    PyObject *read = enabled ? read_outside(args[1]) : NULL;
    if (read == NULL && PyErr_Occurred())
        return NULL;
    PyObject *x = read != NULL ? read : args[1];
    if (!enabled || Py_TYPE(x) != Tensor_type)
        return PyObject_Vectorcall(python_unary, args, 2, NULL);
    PyObject *inputs = PyTuple_Pack(1, x);
    Py_XDECREF(read);
    PyObject *out = inputs == NULL ? NULL : apply_or(args[0], inputs, no_attributes, python_unary, args, 2);
    Py_XDECREF(inputs);
    return out;
}

static int
is_python_scalar(PyObject *value)
{
    return PyFloat_CheckExact(value) || PyLong_CheckExact(value) || PyBool_Check(value);
}

/* The shared Tensor of Python scalar `value` as an operand of eager `tensor`
 * (convert._scalar_constant's table), borrowed; NULL when not there (no error set).
 * The last answer is remembered with the value object and numpy dtype it was for (held, so
 * their addresses stay theirs): `y * 1.01` in a loop passes the same float object each time. */
static PyObject *
known_scalar_constant(PyObject *value, PyObject *tensor)
{
    PyObject *array = SLOT(tensor, tensor_value);
    if (array == NULL || array == Py_None)
        return NULL;
    PyObject *numpy_dtype = PyObject_GetAttr(array, s_dtype);
    if (numpy_dtype == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (value == last_value && numpy_dtype == last_numpy_dtype) {
        Py_DECREF(numpy_dtype);
        return last_constant;
    }
    PyObject *dtype = PyDict_GetItemWithError(dtypes_by_numpy, numpy_dtype);
    PyObject *key = dtype == NULL ? NULL : PyTuple_Pack(3, (PyObject *)Py_TYPE(value), value, dtype);
    PyObject *constant = key == NULL ? NULL : PyDict_GetItemWithError(scalar_constants, key);
    Py_XDECREF(key);
    PyErr_Clear();
    if (constant == NULL || Py_TYPE(constant) != Tensor_type) {
        Py_DECREF(numpy_dtype);
        return NULL;
    }
    Py_XSETREF(last_value, Py_NewRef(value));
    Py_XSETREF(last_numpy_dtype, numpy_dtype);
    Py_XSETREF(last_constant, Py_NewRef(constant));
    return constant;
}

/* apply_binary(op, x, y): apply(op, as_tensors(x, y), {}). */
static PyObject *
apply_binary(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "apply_binary(op, x, y) takes 3 arguments");
        return NULL;
    }
    if (!configured)
        return not_configured();
    PyObject *read_x = enabled ? read_outside(args[1]) : NULL;
    PyObject *read_y = enabled && !PyErr_Occurred() ? read_outside(args[2]) : NULL;
    if (PyErr_Occurred()) {
        Py_XDECREF(read_x);
        Py_XDECREF(read_y);
        return NULL;
    }
    PyObject *x = read_x != NULL ? read_x : args[1], *y = read_y != NULL ? read_y : args[2];
    if (enabled && Py_TYPE(x) == Tensor_type && Py_TYPE(y) != Tensor_type && is_python_scalar(y))
        y = known_scalar_constant(y, x);
    else if (enabled && Py_TYPE(y) == Tensor_type && Py_TYPE(x) != Tensor_type && is_python_scalar(x))
        x = known_scalar_constant(x, y);
    PyObject *inputs = NULL;
    if (enabled && x != NULL && y != NULL && Py_TYPE(x) == Tensor_type && Py_TYPE(y) == Tensor_type)
        inputs = PyTuple_Pack(2, x, y);
    Py_XDECREF(read_x);
    Py_XDECREF(read_y);
    if (inputs == NULL)
        return PyErr_Occurred() ? NULL : PyObject_Vectorcall(python_binary, args, 3, NULL);
    PyObject *out = apply_or(args[0], inputs, no_attributes, python_binary, args, 3);
    Py_DECREF(inputs);
    return out;
}

/* An op function (`tt.sin`, `tt.multiply`, `Tensor.__mul__`) as a C callable: a call with
 * exactly its inputs, positionally, goes to apply_unary or apply_binary without a Python
 * frame; any other call (name=..., a wrong count) goes to the Python function it wraps,
 * which also gives it its name, docstring and signature (`__wrapped__`). It binds as a
 * method, so it can stand in a class as `__mul__`. */
typedef struct {
    PyObject_HEAD
    PyObject *op;
    PyObject *python;
    Py_ssize_t arity;
    vectorcallfunc vectorcall;
    PyObject *weakrefs;
} OpFunction;

static PyObject *
op_function_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    OpFunction *function = (OpFunction *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && nargs == function->arity) {
        PyObject *with_op[3] = {function->op, args[0], nargs == 2 ? args[1] : NULL};
        return nargs == 1 ? apply_unary(NULL, with_op, 2) : apply_binary(NULL, with_op, 3);
    }
    return PyObject_Vectorcall(function->python, args, nargsf, kwnames);
}

static PyObject *
op_function_get(PyObject *self, PyObject *instance, PyObject *owner)
{
    if (instance == NULL || instance == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, instance);
}

static PyObject *
op_function_forward(PyObject *self, void *name)
{
    return PyObject_GetAttrString(((OpFunction *)self)->python, (const char *)name);
}

static PyObject *
op_function_wrapped(PyObject *self, void *unused)
{
    return Py_NewRef(((OpFunction *)self)->python);
}

static PyObject *
op_function_repr(PyObject *self)
{
    return PyObject_Repr(((OpFunction *)self)->python);
}

static int
op_function_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((OpFunction *)self)->op);
    Py_VISIT(((OpFunction *)self)->python);
    return 0;
}

static int
op_function_clear(PyObject *self)
{
    Py_CLEAR(((OpFunction *)self)->op);
    Py_CLEAR(((OpFunction *)self)->python);
    return 0;
}

static void
op_function_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    if (((OpFunction *)self)->weakrefs != NULL)
        PyObject_ClearWeakRefs(self);
    op_function_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* copy.copy and copy.deepcopy give the function itself, as for Python functions. */
static PyObject *
op_function_copy(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return Py_NewRef(self);
}

static PyMethodDef op_function_methods[] = {
    {"__copy__", (PyCFunction)(void (*)(void))op_function_copy, METH_FASTCALL, NULL},
    {"__deepcopy__", (PyCFunction)(void (*)(void))op_function_copy, METH_FASTCALL, NULL},
    {NULL},
};

static PyGetSetDef op_function_getset[] = {
    {"__name__", op_function_forward, NULL, NULL, "__name__"},
    {"__qualname__", op_function_forward, NULL, NULL, "__qualname__"},
    {"__module__", op_function_forward, NULL, NULL, "__module__"},
    {"__doc__", op_function_forward, NULL, NULL, "__doc__"},
    {"__wrapped__", op_function_wrapped, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject OpFunction_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tracer.ops._fast_apply.OpFunction",
    .tp_basicsize = sizeof(OpFunction),
    .tp_dealloc = op_function_dealloc,
    .tp_vectorcall_offset = offsetof(OpFunction, vectorcall),
    .tp_repr = op_function_repr,
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_traverse = op_function_traverse,
    .tp_clear = op_function_clear,
    .tp_getset = op_function_getset,
    .tp_methods = op_function_methods,
    .tp_descr_get = op_function_get,
    .tp_weaklistoffset = offsetof(OpFunction, weakrefs),
};

/* op_function(op, python_function, arity): the C callable for a 1- or 2-input op. */
static PyObject *
op_function(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t arity = nargs == 3 ? PyLong_AsSsize_t(args[2]) : -1;
    if (arity != 1 && arity != 2) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "op_function(op, python_function, arity) takes arity 1 or 2");
        return NULL;
    }
    OpFunction *function = PyObject_GC_New(OpFunction, &OpFunction_type);
    if (function == NULL)
        return NULL;
    function->op = Py_NewRef(args[0]);
    function->python = Py_NewRef(args[1]);
    function->arity = arity;
    function->vectorcall = op_function_call;
    function->weakrefs = NULL;
    PyObject_GC_Track(function);
    return (PyObject *)function;
}

/* Tensor(value), as `tensor(value)`: for callers that build many (a compiled call's result). */
static PyObject *
tensor(PyObject *module, PyObject *value)
{
    if (!configured)
        return not_configured();
    return new_tensor(Py_NewRef(value));
}

/* tensor_with_origin(value, variable_node): Tensor(value), computed from the Variable of
 * `variable_node` outside any tape, remembering it as core._note_variable_origin does. */
static PyObject *
tensor_with_origin(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "tensor_with_origin(value, variable_node) takes 2 arguments");
        return NULL;
    }
    if (!configured)
        return not_configured();
    if (Py_TYPE(args[1]) != Node_type) {
        PyErr_SetString(PyExc_TypeError, "tensor_with_origin: variable_node must be a Node");
        return NULL;
    }
    PyObject *thread_state = thread_state_dict();
    PyObject *out = thread_state == NULL ? NULL : new_tensor(Py_NewRef(args[0]));
    if (out != NULL && note_origin(out, args[1], thread_state) < 0)
        Py_CLEAR(out);
    return out;
}

static PyObject *
set_enabled(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    if (on && !configured)
        return not_configured();
    PyObject *was = PyBool_FromLong(enabled);
    enabled = on;
    return was;
}

/* ---- a gradient's reverse sweep ---------------------------------------------------------------
 * sweep(nodes, cotangents, leaves, reachable, saved, accumulate, structured, helpers), with
 * helpers = (OPS, SLICE, GATHER, part_of_input, concrete, check, backward_location,
 * SLICE_GRAD's name): the loop of tracer.passes.gradient.reverse_sweep, step for step, calling
 * the same Python functions (each node's gradient rule, `saved`, `accumulate`, and the helpers
 * where a cotangent is not a Tensor, a node is a slice or a gather, or a rule's cotangent is
 * not a Tensor of its input's shape and dtype), but for the first cotangent of an input in a
 * structured sweep, a Tensor not made by a slice_grad, which it keeps as `accumulate`
 * (gradient._accumulate) keeps it. Returns True once it swept, False (nothing done) where the
 * C path is off or a node is not a Node with a tuple of inputs: the Python loop runs then. On
 * a long tape of small tensors the loop's own steps in Python are a large share of an eager
 * gradient's time (benchmarks/RESULTS.md, B18's first call). */

typedef struct {
    PyObject *cotangents, *leaves, *reachable, *saved, *accumulate;
    PyObject *ops, *slice_op, *gather_op, *part_of_input, *concrete, *check, *backward_location;
    PyObject *slice_grad_name;
    PyObject *thread_state, *outer;
    int structured;
} Sweep;

/* A node's attribute: its slot where it is a Node, else getattr. New reference or NULL. */
static PyObject *
node_attribute(PyObject *node, Py_ssize_t offset, PyObject *name)
{
    if (Py_TYPE(node) == Node_type && SLOT(node, offset) != NULL)
        return Py_NewRef(SLOT(node, offset));
    return PyObject_GetAttr(node, name);
}

/* For a symbolic cotangent `ct` (a Tensor of a Node, no value), _check_cotangent's test: 1
 * where its node has `inp`'s shape and dtype (the same DType), 0 where the check must look,
 * -1 on error. */
static int
symbolic_cotangent_fits(PyObject *ct, PyObject *inp)
{
    PyObject *node = Py_TYPE(ct) == Tensor_type ? SLOT(ct, tensor_node) : NULL;
    if (node == NULL || Py_TYPE(node) != Node_type || Py_TYPE(inp) != Node_type)
        return 0;
    PyObject *shape = SLOT(node, node_shape), *input_shape = SLOT(inp, node_shape);
    if (shape == NULL || input_shape == NULL || SLOT(node, node_dtype) != SLOT(inp, node_dtype))
        return 0;
    return PyObject_RichCompareBool(shape, input_shape, Py_EQ);
}

/* Whether the sweep's test `value is None or value.shape != inp.shape or value.dtype !=
 * inp.dtype._np` (value = getattr(ct, "_value", None)) passes without the check: 1 when `ct`
 * holds an array of `inp`'s shape and dtype, 0 when the check must look, -1 on error. */
static int
cotangent_fits(PyObject *ct, PyObject *inp)
{
    PyObject *value;
    if (Py_TYPE(ct) == Tensor_type) {
        value = Py_XNewRef(SLOT(ct, tensor_value));
    } else if ((value = PyObject_GetAttr(ct, s_value)) == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
    }
    if (value == NULL || value == Py_None) {
        Py_XDECREF(value);
        return symbolic_cotangent_fits(ct, inp);
    }
    int differs = -1;
    PyObject *shape = PyObject_GetAttr(value, s_shape);
    PyObject *input_shape = shape == NULL ? NULL : node_attribute(inp, node_shape, s_shape);
    if (input_shape != NULL)
        differs = PyObject_RichCompareBool(shape, input_shape, Py_NE);
    Py_XDECREF(shape);
    Py_XDECREF(input_shape);
    if (differs == 0) {
        differs = -1;
        PyObject *dtype = PyObject_GetAttr(value, s_dtype);
        PyObject *input_dtype = dtype == NULL ? NULL : node_attribute(inp, node_dtype, s_dtype);
        PyObject *numpy_dtype = input_dtype == NULL ? NULL : PyObject_GetAttr(input_dtype, s_np);
        if (numpy_dtype != NULL)
            differs = PyObject_RichCompareBool(dtype, numpy_dtype, Py_NE);
        Py_XDECREF(dtype);
        Py_XDECREF(input_dtype);
        Py_XDECREF(numpy_dtype);
    }
    Py_DECREF(value);
    return differs < 0 ? -1 : !differs;
}

/* Whether a structured sweep's `accumulate` keeps `ct` as it is where its input has no
 * cotangent yet: a Tensor whose node (if any) is not a slice_grad, which gradient._accumulate
 * would gather with the other slices' parts instead. */
static int
kept_as_it_is(Sweep *sweep, PyObject *ct)
{
    if (Py_TYPE(ct) != Tensor_type)
        return 0;
    PyObject *node = SLOT(ct, tensor_node);
    if (node == NULL || node == Py_None)
        return 1;
    if (Py_TYPE(node) != Node_type)
        return 0;
    PyObject *op = SLOT(node, node_op);
    return op != NULL && PyUnicode_CheckExact(op) && PyUnicode_Compare(op, sweep->slice_grad_name) != 0;
}

/* The cotangent `ct` a rule gave `inp`, an input of `node`: checked, then kept or added. */
static int
give_cotangent(Sweep *sweep, PyObject *node, PyObject *inp, PyObject *ct)
{
    if (ct == Py_None)
        return 0;
    PyObject *key = PyLong_FromVoidPtr(inp);
    if (key == NULL)
        return -1;
    int result = PySet_Contains(sweep->reachable, key);
    if (result <= 0)
        goto done;
    result = cotangent_fits(ct, inp);
    if (result == 0) {
        PyObject *args[] = {node, inp, ct};
        PyObject *checked = PyObject_Vectorcall(sweep->check, args, 3, NULL);
        result = checked == NULL ? -1 : 1;
        Py_XDECREF(checked);
    }
    if (result < 0)
        goto done;
    if (!sweep->structured || kept_as_it_is(sweep, ct)) {
        PyObject *existing = PyDict_GetItemWithError(sweep->cotangents, key);
        if (existing == NULL && PyErr_Occurred()) {
            result = -1;
            goto done;
        }
        if (existing == NULL || existing == Py_None) {
            result = PyDict_SetItem(sweep->cotangents, key, ct);
            goto done;
        }
    }
    PyObject *args[] = {sweep->cotangents, inp, ct};
    PyObject *accumulated = PyObject_Vectorcall(sweep->accumulate, args, 3, NULL);
    result = accumulated == NULL ? -1 : 0;
    Py_XDECREF(accumulated);
done:
    Py_DECREF(key);
    return result < 0 ? -1 : 0;
}

/* The cotangent of `node` popped from the sweep's map: a new reference, NULL where it has none
 * (and on error, with the error set). */
static PyObject *
pop_cotangent(Sweep *sweep, PyObject *node)
{
    PyObject *key = PyLong_FromVoidPtr(node);
    if (key == NULL)
        return NULL;
    PyObject *g = NULL;
    int leaf = PySet_Contains(sweep->leaves, key);
    if (leaf == 0 && PyTuple_GET_SIZE(SLOT(node, node_inputs)) > 0) {
        g = Py_XNewRef(PyDict_GetItemWithError(sweep->cotangents, key));
        if (g != NULL && PyDict_DelItem(sweep->cotangents, key) < 0)
            Py_CLEAR(g);
    }
    Py_DECREF(key);
    if (g == Py_None)
        Py_CLEAR(g);
    return g;
}

/* `op.grad(node, g, *saved(node, op))` with state.location at the node's gradient, put back to
 * the sweep's outer location whatever the rule did. A new reference, or NULL on error. */
static PyObject *
call_rule(Sweep *sweep, PyObject *node, PyObject *op, PyObject *grad, PyObject *g)
{
    PyObject *saved_args[] = {node, op};
    PyObject *kept = PyObject_Vectorcall(sweep->saved, saved_args, 2, NULL);
    PyObject *values = kept == NULL ? NULL : PySequence_Fast(kept, "a gradient rule's saved values must be iterable");
    Py_XDECREF(kept);
    if (values == NULL)
        return NULL;
    PyObject *location_args[] = {SLOT(node, node_location), SLOT(node, node_op)};
    PyObject *location = PyObject_Vectorcall(sweep->backward_location, location_args, 2, NULL);
    if (location == NULL || PyDict_SetItem(sweep->thread_state, s_location, location) < 0) {
        Py_XDECREF(location);
        Py_DECREF(values);
        return NULL;
    }
    Py_DECREF(location);
    enum { ON_STACK = 8 };  /* a rule's arguments: the node, its cotangent, the saved values */
    PyObject *on_stack[ON_STACK];
    Py_ssize_t count = PySequence_Fast_GET_SIZE(values);
    PyObject **args = count + 2 <= ON_STACK ? on_stack : PyMem_New(PyObject *, count + 2);
    PyObject *result = NULL;
    if (args == NULL) {
        PyErr_NoMemory();
    } else {
        args[0] = node;
        args[1] = g;
        for (Py_ssize_t k = 0; k < count; k++)
            args[k + 2] = PySequence_Fast_GET_ITEM(values, k);
        result = PyObject_Vectorcall(grad, args, count + 2, NULL);
        if (args != on_stack)
            PyMem_Free(args);
    }
    Py_DECREF(values);
    PyObject *type, *error, *traceback;
    PyErr_Fetch(&type, &error, &traceback);
    if (PyDict_SetItem(sweep->thread_state, s_location, sweep->outer) < 0) {
        Py_XDECREF(type);  /* as a `finally` that raises: its error replaces the rule's */
        Py_XDECREF(error);
        Py_XDECREF(traceback);
        Py_CLEAR(result);
    } else {
        PyErr_Restore(type, error, traceback);
    }
    return result;
}

/* One node of the sweep. 0, or -1 with an error set. */
static int
sweep_node(Sweep *sweep, PyObject *node)
{
    PyObject *node_inputs_now = SLOT(node, node_inputs);  /* checked before the loop; nodes never change */
    if (node_inputs_now == NULL || !PyTuple_CheckExact(node_inputs_now)) {
        PyErr_SetString(PyExc_TypeError, "fast_apply.sweep: a node's inputs were replaced during the sweep");
        return -1;
    }
    PyObject *g = pop_cotangent(sweep, node);
    if (g == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (Py_TYPE(g) != Tensor_type)
        Py_SETREF(g, PyObject_CallOneArg(sweep->concrete, g));
    PyObject *op = g == NULL ? NULL : PyObject_GetItem(sweep->ops, SLOT(node, node_op));
    PyObject *grad = NULL, *cotangents = NULL, *iterator = NULL;
    int result = op == NULL ? -1 : 0;
    if (op != NULL && !sweep->structured && (op == sweep->slice_op || op == sweep->gather_op)) {
        PyObject *args[] = {sweep->cotangents, node, op, g, sweep->reachable, sweep->saved};
        PyObject *done = PyObject_Vectorcall(sweep->part_of_input, args, 6, NULL);
        result = done == NULL ? -1 : PyObject_IsTrue(done);
        Py_XDECREF(done);
    }
    if (result != 0)
        goto finally;  /* a slice's or a gather's part, or an error */
    grad = Py_TYPE(op) == OpDef_type && SLOT(op, opdef_grad) != NULL ? Py_NewRef(SLOT(op, opdef_grad))
                                                                      : PyObject_GetAttr(op, s_grad);
    if (grad == NULL || grad == Py_None) {
        result = grad == NULL ? -1 : 0;
        goto finally;
    }
    PyObject *inputs = Py_NewRef(SLOT(node, node_inputs));
    cotangents = call_rule(sweep, node, op, grad, g);
    iterator = cotangents == NULL ? NULL : PyObject_GetIter(cotangents);
    result = iterator == NULL ? -1 : 0;
    for (Py_ssize_t k = 0; result == 0 && k < PyTuple_GET_SIZE(inputs); k++) {
        PyObject *ct = PyIter_Next(iterator);  /* zip(node.inputs, cotangents): as many as inputs */
        if (ct == NULL) {
            result = PyErr_Occurred() ? -1 : 0;
            break;
        }
        result = give_cotangent(sweep, node, PyTuple_GET_ITEM(inputs, k), ct);
        Py_DECREF(ct);
    }
    Py_DECREF(inputs);
finally:
    Py_XDECREF(iterator);
    Py_XDECREF(cotangents);
    Py_XDECREF(grad);
    Py_XDECREF(op);
    Py_XDECREF(g);
    return result < 0 ? -1 : 0;
}

static PyObject *
sweep(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8 || !PyTuple_CheckExact(args[7]) || PyTuple_GET_SIZE(args[7]) != 8 ||
        !PyUnicode_CheckExact(PyTuple_GET_ITEM(args[7], 7))) {
        PyErr_SetString(PyExc_TypeError,
                        "sweep(nodes, cotangents, leaves, reachable, saved, accumulate, structured, helpers) takes 8 "
                        "arguments, helpers a tuple of 8 ending with a name");
        return NULL;
    }
    if (!enabled || !PyDict_CheckExact(args[1]) || !PyAnySet_Check(args[2]) || !PyAnySet_Check(args[3]))
        Py_RETURN_FALSE;
    int structured = PyObject_IsTrue(args[6]);
    if (structured < 0)
        return NULL;
    PyObject *nodes = PySequence_Tuple(args[0]);
    if (nodes == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(nodes); i++) {
        PyObject *node = PyTuple_GET_ITEM(nodes, i);
        if (Py_TYPE(node) != Node_type || SLOT(node, node_inputs) == NULL || !PyTuple_CheckExact(SLOT(node, node_inputs)) ||
            SLOT(node, node_op) == NULL || SLOT(node, node_location) == NULL) {
            Py_DECREF(nodes);
            Py_RETURN_FALSE;
        }
    }
    PyObject *thread_state = thread_state_dict();
    PyObject *outer = thread_state == NULL ? NULL : state_entry(thread_state, s_location);
    if (outer == NULL) {
        Py_DECREF(nodes);
        return NULL;
    }
    PyObject *const *helpers = &PyTuple_GET_ITEM(args[7], 0);
    Sweep state_of_sweep = {
        .cotangents = args[1], .leaves = args[2], .reachable = args[3], .saved = args[4], .accumulate = args[5],
        .ops = helpers[0], .slice_op = helpers[1], .gather_op = helpers[2], .part_of_input = helpers[3],
        .concrete = helpers[4], .check = helpers[5], .backward_location = helpers[6], .slice_grad_name = helpers[7],
        .thread_state = Py_NewRef(thread_state), .outer = Py_NewRef(outer), .structured = structured,
    };
    int failed = 0;
    for (Py_ssize_t i = PyTuple_GET_SIZE(nodes) - 1; !failed && i >= 0; i--)
        failed = sweep_node(&state_of_sweep, PyTuple_GET_ITEM(nodes, i)) < 0;
    Py_DECREF(state_of_sweep.thread_state);
    Py_DECREF(state_of_sweep.outer);
    Py_DECREF(nodes);
    if (failed)
        return NULL;
    Py_RETURN_TRUE;
}

/* ---- a graph's topological order ---------------------------------------------------------------
 * topological_order(outputs): tracer.ir.graph.topological_closure(outputs) (no `expand`, no
 * `inputs`), the same list in the same order, by the same depth-first walk; None, before
 * anything is walked further, where a node is not a Node or its inputs are not a tuple or a
 * list (topological_closure then walks in Python). No Python code runs during the walk, so the
 * nodes stay alive through the outputs that reach them, and the walk holds borrowed pointers:
 * its stack, and a table of the nodes seen, marked pending until emitted (the Python walk's
 * `seen` and `pending` sets). */

enum { UNSEEN = 0, PENDING = 1, EMITTED = 2 };

typedef struct {
    PyObject **keys;
    unsigned char *marks;
    size_t mask, count;
} NodeMarks;

static size_t
node_slot(const NodeMarks *table, PyObject *node)
{
    size_t at = (((uintptr_t)node >> 4) * (size_t)0x9E3779B97F4A7C15ull) & table->mask;
    while (table->keys[at] != NULL && table->keys[at] != node)
        at = (at + 1) & table->mask;
    return at;
}

static int
node_marks_grow(NodeMarks *table)
{
    NodeMarks grown = {.mask = 2 * (table->mask + 1) - 1, .count = table->count};
    grown.keys = PyMem_Calloc(grown.mask + 1, sizeof(PyObject *));
    grown.marks = PyMem_Calloc(grown.mask + 1, 1);
    if (grown.keys == NULL || grown.marks == NULL) {
        PyMem_Free(grown.keys);
        PyMem_Free(grown.marks);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= table->mask; i++)
        if (table->keys[i] != NULL) {
            size_t at = node_slot(&grown, table->keys[i]);
            grown.keys[at] = table->keys[i];
            grown.marks[at] = table->marks[i];
        }
    PyMem_Free(table->keys);
    PyMem_Free(table->marks);
    *table = grown;
    return 0;
}

/* The mark of `node`'s slot, adding the node (unseen) where absent: its slot's index in
 * `*at`. 0, or -1 with MemoryError. */
static int
node_marks_find(NodeMarks *table, PyObject *node, size_t *at)
{
    if (2 * (table->count + 1) > table->mask + 1 && node_marks_grow(table) < 0)
        return -1;
    *at = node_slot(table, node);
    if (table->keys[*at] == NULL) {
        table->keys[*at] = node;
        table->count++;
    }
    return 0;
}

typedef struct {
    PyObject **items;
    size_t size, capacity;
} NodeStack;

static int
node_stack_push(NodeStack *stack, PyObject *node)
{
    if (stack->size == stack->capacity) {
        size_t capacity = stack->capacity ? 2 * stack->capacity : 256;
        PyObject **items = PyMem_Realloc(stack->items, capacity * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        stack->items = items;
        stack->capacity = capacity;
    }
    stack->items[stack->size++] = node;
    return 0;
}

/* The walk: 1 with the order in `order` (borrowed pointers, in a stack's memory), 0 where a
 * node is not one it can read, -1 with an error set. */
static int
walk_in_order(PyObject *outputs, NodeMarks *table, NodeStack *stack, NodeStack *order)
{
    for (Py_ssize_t i = PySequence_Fast_GET_SIZE(outputs) - 1; i >= 0; i--)
        if (node_stack_push(stack, PySequence_Fast_GET_ITEM(outputs, i)) < 0)
            return -1;
    while (stack->size > 0) {
        PyObject *node = stack->items[--stack->size];
        size_t at;
        if (node_marks_find(table, node, &at) < 0)
            return -1;
        if (table->marks[at] == PENDING) {
            table->marks[at] = EMITTED;
            if (node_stack_push(order, node) < 0)
                return -1;
            continue;
        }
        if (table->marks[at] == EMITTED)
            continue;
        PyObject *inputs = Py_TYPE(node) == Node_type ? SLOT(node, node_inputs) : NULL;
        if (inputs == NULL || !(PyTuple_CheckExact(inputs) || PyList_CheckExact(inputs)))
            return 0;
        table->marks[at] = PENDING;
        if (node_stack_push(stack, node) < 0)
            return -1;
        for (Py_ssize_t k = PySequence_Fast_GET_SIZE(inputs) - 1; k >= 0; k--) {
            PyObject *input = PySequence_Fast_GET_ITEM(inputs, k);
            size_t input_at;
            if (node_marks_find(table, input, &input_at) < 0)
                return -1;
            if (table->marks[input_at] == UNSEEN && node_stack_push(stack, input) < 0)
                return -1;
        }
    }
    return 1;
}

static PyObject *
topological_order(PyObject *module, PyObject *outputs)
{
    if (!configured)
        Py_RETURN_NONE;
    PyObject *sequence = PySequence_Fast(outputs, "topological_order(outputs): outputs must be a sequence");
    if (sequence == NULL)
        return NULL;
    NodeMarks table = {.mask = 1023};
    table.keys = PyMem_Calloc(table.mask + 1, sizeof(PyObject *));
    table.marks = PyMem_Calloc(table.mask + 1, 1);
    NodeStack stack = {0}, order = {0};
    PyObject *result = NULL;
    if (table.keys == NULL || table.marks == NULL)
        PyErr_NoMemory();
    else {
        int walked = walk_in_order(sequence, &table, &stack, &order);
        if (walked == 0)
            result = Py_NewRef(Py_None);
        else if (walked > 0 && (result = PyList_New((Py_ssize_t)order.size)) != NULL)
            for (size_t i = 0; i < order.size; i++)
                PyList_SET_ITEM(result, (Py_ssize_t)i, Py_NewRef(order.items[i]));
    }
    PyMem_Free(table.keys);
    PyMem_Free(table.marks);
    PyMem_Free(stack.items);
    PyMem_Free(order.items);
    Py_DECREF(sequence);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Give the path tracer's classes, tables and helpers (keyword arguments), and enable it."},
    {"apply", (PyCFunction)(void (*)(void))apply, METH_FASTCALL, "apply(op, inputs, attrs): as tracer.ops.core._apply."},
    {"apply_unary", (PyCFunction)(void (*)(void))apply_unary, METH_FASTCALL,
     "apply_unary(op, x): as tracer.ops.core._apply_unary."},
    {"apply_binary", (PyCFunction)(void (*)(void))apply_binary, METH_FASTCALL,
     "apply_binary(op, x, y): as tracer.ops.core._apply_binary."},
    {"read_variables", read_variables, METH_O,
     "read_variables(Variable): apply_unary and apply_binary read its instances outside any tape."},
    {"op_function", (PyCFunction)(void (*)(void))op_function, METH_FASTCALL,
     "op_function(op, python_function, arity): the op's function as a C callable (see OpFunction)."},
    {"tensor", tensor, METH_O, "tensor(value): Tensor(value), built in C."},
    {"tensor_with_origin", (PyCFunction)(void (*)(void))tensor_with_origin, METH_FASTCALL,
     "tensor_with_origin(value, variable_node): Tensor(value) noting the Variable it came from."},
    {"record", (PyCFunction)(void (*)(void))record_python, METH_FASTCALL,
     "record(op, inputs, attrs, out, shape, dtype): record as _record does, if the C path can; whether it did."},
    {"untrack_records", untrack_records, METH_O,
     "untrack_records(recording): a large tape's records, untracked where no reference cycle can pass."},
    {"untrack_node", untrack_node, METH_O,
     "untrack_node(node): the collector no longer walks `node` if it cannot be part of a reference cycle."},
    {"sweep", (PyCFunction)(void (*)(void))sweep, METH_FASTCALL,
     "sweep(nodes, cotangents, leaves, reachable, saved, accumulate, structured, helpers): reverse_sweep's loop."},
    {"topological_order", topological_order, METH_O,
     "topological_order(outputs): tracer.ir.graph.topological_closure(outputs), or None where a node is not a Node."},
    {"set_enabled", set_enabled, METH_O, "Turn the C path on or off (off: every call goes to Python); returns the old setting."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_fast_apply", "The eager op path in C (see fast_apply.c).", -1, methods,
};

PyMODINIT_FUNC
PyInit__fast_apply(void)
{
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_dict, "__dict__");
    INTERN(s_tapes, "tapes");
    INTERN(s_trace, "trace");
    INTERN(s_paused, "paused");
    INTERN(s_location, "location");
    INTERN(s_shape, "shape");
    INTERN(s_dtype, "dtype");
    INTERN(s_name, "name");
    INTERN(s_is_differentiable, "is_differentiable");
    INTERN(s_recording_state, "_recording_state");
    INTERN(s_outside, "outside");
    INTERN(s_variable, "variable");
    INTERN(s_building, "building");
    INTERN(s_accumulators, "accumulators");
    INTERN(s_watchers, "watchers");
    INTERN(s_grad, "grad");
    INTERN(s_value, "_value");
    INTERN(s_np, "_np");
#undef INTERN
    if ((no_attributes = PyDict_New()) == NULL)
        return NULL;
    quiet_errors_import();
    if (PyType_Ready(&OpFunction_type) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module != NULL && (PyModule_AddIntConstant(module, "INTERFACE", INTERFACE) < 0 ||
                           PyModule_AddIntConstant(module, "LARGE_FLOATING_FROM", LARGE_FLOATING_FROM) < 0 ||
                           PyModule_AddIntConstant(module, "MAX_INPUTS", MAX_INPUTS) < 0))
        Py_CLEAR(module);
    return module;
}
