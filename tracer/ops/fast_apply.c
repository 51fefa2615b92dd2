/* The eager op path in C: `apply` for its most common case, the rest through Python.
 *
 * `tracer.ops.core._apply` is the definition of what applying an op does. This module
 * runs the same steps, writing the same objects, for the case an eager loop repeats:
 * one or two eager Tensors, no attributes, a shape rule already remembered, no trace,
 * no paused tape, no numerics check, and every recording tape tracking an input of the
 * op. Anything else (a first sight of a shape, a symbolic input, a Variable, an op no
 * tape tracks) calls the Python function, before anything is computed. Python's for
 * loops and attribute lookups are most of an eager op's time on small tensors; here
 * they are pointer reads.
 *
 *     configure(**the classes, tables and helpers of tracer the path reads)
 *     apply(op, inputs, attrs)     # what _apply(op, inputs, attrs) returns
 *     set_enabled(flag)            # False: every call goes to the Python function
 *
 * Objects are built as their Python __init__ would build them (every slot set), from
 * slot offsets read off the classes' member descriptors when configured; `configure`
 * refuses classes whose slots are not the ones listed here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* Slot offsets of the classes the path reads and builds. */
static Py_ssize_t tensor_value, tensor_node, tensor_origin, tensor_cut;
static Py_ssize_t node_op, node_inputs, node_attrs, node_shape, node_dtype, node_location;
static Py_ssize_t rec_nodes, rec_saved, rec_tracked, rec_outside, rec_order, rec_signature;
static Py_ssize_t opdef_name, opdef_grad, opdef_saves;

static PyTypeObject *Tensor_type, *Node_type, *Recording_type, *OpDef_type;
static PyObject *state;          /* tracer.context.state, a threading.local */
static PyObject *numerics;       /* tracer.context.numerics */
static PyObject *inferred;       /* tracer.ops.core._INFERRED */
static PyObject *kernels;        /* runtime.kernels.KERNELS */
static PyObject *codes;          /* tracer.ir.source._CODES */
static PyObject *locations;      /* tracer.ir.source._LOCATIONS */
static PyObject *user_location;  /* tracer.ir.source.user_location */
static PyObject *node_of;        /* tracer.ops.core.node_of */
static PyObject *python_apply;   /* tracer.ops.core._apply */
static PyObject *OUT;            /* tracer.ops.registry.OUT */
static int enabled = 0;

static PyObject *s_dict, *s_tapes, *s_trace, *s_paused, *s_location, *s_enabled, *s_shape, *s_dtype,
    *s_name, *s_is_differentiable, *s_recording_state, *s_outside, *s_variable;

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

/* `*target = kwargs[name]`, replacing what it held; a class when `is_class`. */
static int
take_argument(PyObject *kwargs, const char *name, PyObject **target, int is_class)
{
    PyObject *value = PyDict_GetItemString(kwargs, name);
    if (value == NULL || (is_class && !PyType_Check(value))) {
        PyErr_Format(PyExc_TypeError, "fast_apply.configure: %s is missing%s", name, is_class ? " or not a class" : "");
        return -1;
    }
    Py_XSETREF(*target, Py_NewRef(value));
    return 0;
}

static PyObject *
configure(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static const char *const tensor_slots[] = {"_value", "_node", "_origin", "_cut", "__weakref__"};
    static const char *const node_slots[] = {"op", "inputs", "attrs", "shape", "dtype", "location", "__weakref__"};
    static const char *const class_names[] = {"Tensor", "Node", "Recording", "OpDef"};
    PyTypeObject **classes[] = {&Tensor_type, &Node_type, &Recording_type, &OpDef_type};
    static const char *const object_names[] = {"state", "numerics", "inferred", "kernels", "codes", "locations",
                                               "user_location", "node_of", "python_apply", "OUT"};
    PyObject **objects[] = {&state, &numerics, &inferred, &kernels, &codes, &locations,
                            &user_location, &node_of, &python_apply, &OUT};
    if (kwargs == NULL || PyTuple_GET_SIZE(args) != 0) {
        PyErr_SetString(PyExc_TypeError, "fast_apply.configure takes keyword arguments only");
        return NULL;
    }
    enabled = 0;
    for (int i = 0; i < 4; i++)
        if (take_argument(kwargs, class_names[i], (PyObject **)classes[i], 1) < 0)
            return NULL;
    if (check_slots(Tensor_type, tensor_slots, 5) < 0 || check_slots(Node_type, node_slots, 7) < 0)
        return NULL;
    for (int i = 0; i < 10; i++)
        if (take_argument(kwargs, object_names[i], objects[i], 0) < 0)
            return NULL;
    if (slot_offset(Tensor_type, "_value", &tensor_value) < 0 || slot_offset(Tensor_type, "_node", &tensor_node) < 0 ||
        slot_offset(Tensor_type, "_origin", &tensor_origin) < 0 || slot_offset(Tensor_type, "_cut", &tensor_cut) < 0 ||
        slot_offset(Node_type, "op", &node_op) < 0 || slot_offset(Node_type, "inputs", &node_inputs) < 0 ||
        slot_offset(Node_type, "attrs", &node_attrs) < 0 || slot_offset(Node_type, "shape", &node_shape) < 0 ||
        slot_offset(Node_type, "dtype", &node_dtype) < 0 || slot_offset(Node_type, "location", &node_location) < 0 ||
        slot_offset(Recording_type, "nodes", &rec_nodes) < 0 || slot_offset(Recording_type, "saved", &rec_saved) < 0 ||
        slot_offset(Recording_type, "tracked", &rec_tracked) < 0 ||
        slot_offset(Recording_type, "outside", &rec_outside) < 0 || slot_offset(Recording_type, "order", &rec_order) < 0 ||
        slot_offset(Recording_type, "signature", &rec_signature) < 0 ||
        slot_offset(OpDef_type, "name", &opdef_name) < 0 || slot_offset(OpDef_type, "grad", &opdef_grad) < 0 ||
        slot_offset(OpDef_type, "saves", &opdef_saves) < 0)
        return NULL;
    if (!PyDict_CheckExact(inferred) || !PyDict_CheckExact(kernels) || !PyDict_CheckExact(codes) ||
        !PyDict_CheckExact(locations)) {
        PyErr_SetString(PyExc_TypeError, "fast_apply.configure: the tables must be dicts");
        return NULL;
    }
    enabled = 1;
    Py_RETURN_NONE;
}

/* A new instance of a slotted class, as object.__new__ makes it: every slot unset. */
static PyObject *
allocate(PyTypeObject *type)
{
    return type->tp_alloc(type, 0);
}

/* Tensor(value): the value, no node, no origin, no cut. Steals `value`. */
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

/* The node of tensor `t`, or NULL when it has none (its slot holds None). Borrowed. */
static PyObject *
node_or_null(PyObject *t)
{
    PyObject *node = SLOT(t, tensor_node);
    return node == Py_None ? NULL : node;
}

/* 1 if `node` is a key (by identity) of dict `table`, 0 if not, -1 on error. */
static int
has_node(PyObject *table, PyObject *node)
{
    PyObject *key = PyLong_FromVoidPtr(node);
    if (key == NULL)
        return -1;
    int found = PyDict_Contains(table, key);
    Py_DECREF(key);
    return found;
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
            PyObject *key = Py_BuildValue("(Ni)", code_id, PyFrame_GetLasti(frame));
            Py_DECREF(frame);
            if (key == NULL)
                return NULL;
            PyObject *location = PyDict_GetItemWithError(locations, key);
            Py_DECREF(key);
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

/* Recording._track(node, None): number the node and append its signature entry. */
static int
track(PyObject *rec, PyObject *node, PyObject *node_id)
{
    PyObject *tracked = SLOT(rec, rec_tracked), *outside = SLOT(rec, rec_outside);
    PyObject *order = SLOT(rec, rec_order), *inputs = SLOT(node, node_inputs);
    Py_ssize_t count = PyTuple_GET_SIZE(inputs);
    PyObject *entries = PyTuple_New(count);
    if (entries == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *input = PyTuple_GET_ITEM(inputs, i);
        PyObject *input_id = PyLong_FromVoidPtr(input);
        if (input_id == NULL)
            goto error;
        PyObject *entry = PyDict_GetItemWithError(tracked, input_id);
        if (entry != NULL) {
            Py_INCREF(entry);
        } else if (!PyErr_Occurred()) {
            PyObject *number = PyDict_GetItemWithError(outside, input_id);
            if (number != NULL) {
                Py_INCREF(number);
            } else if (!PyErr_Occurred()) {
                number = PyLong_FromSsize_t(PyDict_GET_SIZE(outside));
                if (number != NULL && PyDict_SetItem(outside, input_id, number) < 0)
                    Py_CLEAR(number);
            }
            PyObject *dtype_name = number == NULL ? NULL : PyObject_GetAttr(SLOT(input, node_dtype), s_name);
            entry = dtype_name == NULL ? NULL
                                       : PyTuple_Pack(4, s_outside, number, SLOT(input, node_shape), dtype_name);
            Py_XDECREF(number);
            Py_XDECREF(dtype_name);
        }
        Py_DECREF(input_id);
        if (entry == NULL)
            goto error;
        PyTuple_SET_ITEM(entries, i, entry);
    }
    PyObject *position = PyLong_FromSsize_t(PyList_GET_SIZE(order));
    if (position == NULL || PyDict_SetItem(tracked, node_id, position) < 0 || PyList_Append(order, node) < 0) {
        Py_XDECREF(position);
        goto error;
    }
    Py_DECREF(position);
    /* the fast path takes attribute-free ops only: their signature entry has () for attributes */
    PyObject *attr_items = PyTuple_New(0);
    PyObject *dtype_name = attr_items == NULL ? NULL : PyObject_GetAttr(SLOT(node, node_dtype), s_name);
    PyObject *signature_entry =
        dtype_name == NULL ? NULL
                           : PyTuple_Pack(7, SLOT(node, node_op), entries, attr_items, SLOT(node, node_shape),
                                          dtype_name, SLOT(node, node_location), Py_None);
    Py_XDECREF(attr_items);
    Py_XDECREF(dtype_name);
    Py_DECREF(entries);
    if (signature_entry == NULL)
        return -1;
    int appended = PyList_Append(SLOT(rec, rec_signature), signature_entry);
    Py_DECREF(signature_entry);
    return appended;
error:
    Py_DECREF(entries);
    return -1;
}

/* Recording.record(node, saved). */
static int
record_node(PyObject *rec, PyObject *node, PyObject *saved)
{
    PyObject *node_id = PyLong_FromVoidPtr(node);
    if (node_id == NULL)
        return -1;
    int known = PyDict_Contains(SLOT(rec, rec_tracked), node_id);
    int result = known < 0 ? -1 : 0;
    if (known == 0 && (track(rec, node, node_id) < 0 || PyList_Append(SLOT(rec, rec_nodes), node) < 0))
        result = -1;
    if (result == 0)
        result = PyDict_SetItem(SLOT(rec, rec_saved), node_id, saved);
    Py_DECREF(node_id);
    return result;
}

/* What op's gradient rule keeps (`op.saves`): (), all inputs, or chosen inputs and OUT. */
static PyObject *
saved_values(PyObject *op, PyObject *inputs, PyObject *out)
{
    PyObject *saves = SLOT(op, opdef_saves);
    if (!PyTuple_Check(saves))  /* ALL_INPUTS */
        return Py_NewRef(inputs);
    Py_ssize_t count = PyTuple_GET_SIZE(saves);
    PyObject *saved = PyTuple_New(count);
    for (Py_ssize_t i = 0; saved != NULL && i < count; i++) {
        PyObject *slot = PyTuple_GET_ITEM(saves, i);
        PyObject *value;
        if (slot == OUT) {
            value = out;
        } else {
            Py_ssize_t position = PyLong_AsSsize_t(slot);
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

/* Record `out = op(*inputs)` on every tape (each tracks an input; checked before). */
static int
record(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject *out, PyObject *shape, PyObject *dtype,
       PyObject *tapes, PyObject *thread_state)
{
    PyObject *location = PyDict_GetItemWithError(thread_state, s_location);
    if (location == NULL)
        return PyErr_Occurred() ? -1 : (PyErr_SetString(PyExc_AttributeError, "state.location"), -1);
    location = location == Py_None ? caller_location() : Py_NewRef(location);
    if (location == NULL)
        return -1;
    int result = 0;
    for (Py_ssize_t k = 0; result == 0 && k < PyList_GET_SIZE(tapes); k++) {
        PyObject *rec = PyObject_GetAttr(PyList_GET_ITEM(tapes, k), s_recording_state);
        if (rec == NULL)
            break;
        if (Py_TYPE(rec) != Recording_type) {
            PyErr_SetString(PyExc_RuntimeError, "fast_apply: a recording tape lost its recording");
            Py_DECREF(rec);
            result = -1;
            break;
        }
        PyObject *node = node_or_null(out);
        if (node == NULL) {
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
            node = input_nodes == NULL ? NULL
                                       : new_node(SLOT(op, opdef_name), input_nodes, attrs, shape, dtype, location);
            if (node == NULL) {
                Py_DECREF(rec);
                result = -1;
                break;
            }
            Py_SETREF(SLOT(out, tensor_node), node);
        }
        PyObject *saved = saved_values(op, inputs, out);
        result = saved == NULL ? -1 : record_node(rec, node, saved);
        Py_XDECREF(saved);
        Py_DECREF(rec);
    }
    Py_DECREF(location);
    return PyErr_Occurred() ? -1 : result;
}

/* Does every tape track an input of the op? 1 yes, 0 no, -1 on error. */
static int
every_tape_tracks(PyObject *tapes, PyObject *inputs)
{
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(tapes); k++) {
        PyObject *rec = PyObject_GetAttr(PyList_GET_ITEM(tapes, k), s_recording_state);
        if (rec == NULL)
            return -1;
        int tracks = 0;
        if (Py_TYPE(rec) == Recording_type) {
            for (Py_ssize_t i = 0; tracks == 0 && i < PyTuple_GET_SIZE(inputs); i++) {
                PyObject *node = node_or_null(PyTuple_GET_ITEM(inputs, i));
                if (node != NULL)
                    tracks = has_node(SLOT(rec, rec_tracked), node);
            }
        }
        Py_DECREF(rec);
        if (tracks <= 0)
            return tracks;
    }
    return 1;
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

/* Before anything is computed: may the C path take this call? 1 yes, 0 no, -1 on error. */
static int
fast_path_applies(PyObject *op, PyObject *tapes, PyObject *inputs, PyObject *thread_state, PyObject *dtype)
{
    PyObject *trace = state_entry(thread_state, s_trace), *paused = state_entry(thread_state, s_paused);
    if (trace == NULL || paused == NULL)
        return -1;
    if (trace != Py_None || !PyList_Check(paused) || PyList_GET_SIZE(paused) != 0)
        return 0;
    PyObject *checking = PyObject_GetAttr(numerics, s_enabled);
    if (checking == NULL)
        return -1;
    int check = PyObject_IsTrue(checking);
    Py_DECREF(checking);
    if (check != 0)
        return check < 0 ? -1 : 0;
    if (PyList_GET_SIZE(tapes) == 0) {
        /* a result computed from a Variable outside any tape notes where (for tape.explain) */
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
            PyObject *node = node_or_null(PyTuple_GET_ITEM(inputs, i));
            if (node != NULL && PyUnicode_Check(SLOT(node, node_op)) &&
                PyUnicode_Compare(SLOT(node, node_op), s_variable) == 0)
                return 0;
        }
        return 1;
    }
    if (SLOT(op, opdef_grad) == Py_None)
        return 0;
    PyObject *differentiable = PyObject_GetAttr(dtype, s_is_differentiable);
    if (differentiable == NULL)
        return -1;
    int flows = PyObject_IsTrue(differentiable);
    Py_DECREF(differentiable);
    if (flows <= 0)
        return flows;
    return every_tape_tracks(tapes, inputs);
}

/* The remembered (shape, dtype) of op on these values (borrowed), or NULL (error set or not). */
static PyObject *
inferred_shape(PyObject *op, PyObject *const *values, Py_ssize_t count)
{
    PyObject *key = PyTuple_New(1 + 2 * count);
    if (key == NULL)
        return NULL;
    PyTuple_SET_ITEM(key, 0, Py_NewRef(op));
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *shape = PyObject_GetAttr(values[i], s_shape);
        PyObject *dtype = shape == NULL ? NULL : PyObject_GetAttr(values[i], s_dtype);
        if (dtype == NULL) {
            Py_XDECREF(shape);
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, 1 + 2 * i, shape);
        PyTuple_SET_ITEM(key, 2 + 2 * i, dtype);
    }
    PyObject *known = PyDict_GetItemWithError(inferred, key);
    Py_DECREF(key);
    if (known != NULL && !(PyTuple_Check(known) && PyTuple_GET_SIZE(known) == 2))
        return NULL;
    return known;
}

static int
fast_apply(PyObject *op, PyObject *inputs, PyObject *attrs, PyObject **result)
{
    if (Py_TYPE(op) != OpDef_type || !PyTuple_CheckExact(inputs) || !PyDict_CheckExact(attrs) ||
        PyDict_GET_SIZE(attrs) != 0)
        return USE_PYTHON;
    Py_ssize_t count = PyTuple_GET_SIZE(inputs);
    if (count < 1 || count > 2)
        return USE_PYTHON;
    PyObject *values[2];
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i);
        if (Py_TYPE(t) != Tensor_type)
            return USE_PYTHON;
        values[i] = SLOT(t, tensor_value);
        if (values[i] == NULL || values[i] == Py_None)
            return USE_PYTHON;
    }
    PyObject *known = inferred_shape(op, values, count);
    if (known == NULL)
        return PyErr_Occurred() ? FAILED : USE_PYTHON;
    Py_INCREF(known);
    PyObject *thread_state = PyObject_GetAttr(state, s_dict);
    PyObject *tapes = thread_state == NULL ? NULL : state_entry(thread_state, s_tapes);
    int outcome = FAILED;
    if (tapes != NULL) {
        Py_INCREF(tapes);
        outcome = PyList_Check(tapes) ? fast_path_applies(op, tapes, inputs, thread_state, PyTuple_GET_ITEM(known, 1))
                                      : USE_PYTHON;
    }
    PyObject *kernel = NULL;
    if (outcome == 1) {
        kernel = PyDict_GetItemWithError(kernels, SLOT(op, opdef_name));
        outcome = kernel != NULL ? DONE : PyErr_Occurred() ? FAILED : USE_PYTHON;
    }
    if (outcome == DONE) {
        PyObject *value = PyObject_Vectorcall(kernel, values, count, NULL);
        PyObject *out = value == NULL ? NULL : new_tensor(value);
        if (out != NULL && PyList_GET_SIZE(tapes) != 0 &&
            record(op, inputs, attrs, out, PyTuple_GET_ITEM(known, 0), PyTuple_GET_ITEM(known, 1), tapes,
                   thread_state) < 0)
            Py_CLEAR(out);
        *result = out;
        if (out == NULL)
            outcome = FAILED;
    }
    Py_XDECREF(tapes);
    Py_XDECREF(thread_state);
    Py_DECREF(known);
    return outcome;
}

static PyObject *
apply(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "apply(op, inputs, attrs) takes 3 arguments");
        return NULL;
    }
    if (!enabled)
        return PyObject_Vectorcall(python_apply, args, 3, NULL);
    PyObject *out = NULL;
    int outcome = fast_apply(args[0], args[1], args[2], &out);
    if (outcome == USE_PYTHON)
        return PyObject_Vectorcall(python_apply, args, 3, NULL);
    return outcome == DONE ? out : NULL;
}

static PyObject *
set_enabled(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0)
        return NULL;
    if (on && python_apply == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "fast_apply: configure() first");
        return NULL;
    }
    PyObject *was = PyBool_FromLong(enabled);
    enabled = on;
    return was;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Give the path tracer's classes, tables and helpers (keyword arguments), and enable it."},
    {"apply", (PyCFunction)(void (*)(void))apply, METH_FASTCALL, "apply(op, inputs, attrs): as tracer.ops.core._apply."},
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
    INTERN(s_enabled, "enabled");
    INTERN(s_shape, "shape");
    INTERN(s_dtype, "dtype");
    INTERN(s_name, "name");
    INTERN(s_is_differentiable, "is_differentiable");
    INTERN(s_recording_state, "_recording_state");
    INTERN(s_outside, "outside");
    INTERN(s_variable, "variable");
#undef INTERN
    return PyModule_Create(&module_def);
}
