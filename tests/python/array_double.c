/*
 * array_double.c — a test double for tests/python/test_direct.py: a CPython
 * extension module `array_double` whose C types read their attributes the
 * ways torch's and CuPy's do, so that kstub_python.h's direct reads (a getset's
 * get, a member's slot, a METH_NOARGS method's ml_meth) run on the CPU:
 *
 *   TensorBase(ptr, dtype, is_cuda=True, fail=None)   is_cuda and dtype getsets, data_ptr() a
 *                                                     METH_NOARGS method (torch._C.TensorBase)
 *   ndarray_base(data, dtype)                         data a T_OBJECT_EX member (NULL when
 *                                                     data is None), dtype a getset
 *   MemoryPointer(ptr)                                ptr a T_ULONGLONG member (CuPy's)
 *   getattr_calls()                                   how many times their tp_getattro ran
 *   getter_calls()                                    how many times the tensor's getters ran
 *   exchange_api(dtypes, as_int=False)                a DLPack C exchange table (DLPack 1.3's
 *                                                     capsule, or 1.2's int address) whose
 *                                                     dltensor_from_py_object_no_sync reads a
 *                                                     TensorBase; dtypes maps its dtype objects
 *                                                     to DLPack (code, bits)
 *   exchange_calls()                                  how many times that function ran
 *
 * The test registers Python subclasses of these under sys.modules["torch"] and
 * ["cupy"], where kstub looks for the known types. Their tp_getattro counts and
 * then reads as object does (as Cython's own does for its extension types), so
 * a test can tell the direct read from PyObject_GetAttr. fail="data_ptr" (or
 * "is_cuda", "dtype") makes that getter of the tensor raise
 * RuntimeError("data_ptr failed"); fail="dlpack" makes the exchange table's
 * function raise RuntimeError("dlpack failed").
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

static unsigned long long getattr_calls, getter_calls, exchange_calls;

static PyObject *counting_getattr(PyObject *o, PyObject *name)
{
    getattr_calls++;
    return PyObject_GenericGetAttr(o, name);
}

/* ---- TensorBase -------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    unsigned long long ptr;
    PyObject *dtype;
    int is_cuda;
    PyObject *fail;            /* the name of the getter that raises, or NULL */
} tensor;

/* Whether t's getter `what` is to raise (and then raises). */
static int failed(tensor *t, const char *what)
{
    if (strcmp(what, "dlpack") != 0)
        getter_calls++;
    if (!t->fail || !PyUnicode_Check(t->fail) || PyUnicode_CompareWithASCIIString(t->fail, what) != 0)
        return 0;
    PyErr_Format(PyExc_RuntimeError, "%s failed", what);
    return 1;
}

static int tensor_init(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"ptr", "dtype", "is_cuda", "fail", NULL};
    tensor *t = (tensor *)self;
    PyObject *dtype, *fail = NULL;
    t->is_cuda = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KO|pO", names, &t->ptr, &dtype, &t->is_cuda, &fail))
        return -1;
    Py_XSETREF(t->dtype, Py_NewRef(dtype));
    Py_XSETREF(t->fail, fail == Py_None ? NULL : Py_XNewRef(fail));
    return 0;
}

static void tensor_dealloc(PyObject *self)
{
    Py_CLEAR(((tensor *)self)->dtype);
    Py_CLEAR(((tensor *)self)->fail);
    Py_TYPE(self)->tp_free(self);     /* a Python subclass's instance: subtype_dealloc drops its type */
}

static PyObject *tensor_is_cuda(PyObject *self, void *closure)
{
    (void)closure;
    tensor *t = (tensor *)self;
    return failed(t, "is_cuda") ? NULL : PyBool_FromLong(t->is_cuda);
}

static PyObject *tensor_dtype(PyObject *self, void *closure)
{
    (void)closure;
    tensor *t = (tensor *)self;
    return failed(t, "dtype") ? NULL : Py_NewRef(t->dtype);
}

static PyObject *tensor_data_ptr(PyObject *self, PyObject *unused)
{
    (void)unused;
    tensor *t = (tensor *)self;
    return failed(t, "data_ptr") ? NULL : PyLong_FromUnsignedLongLong(t->ptr);
}

static PyGetSetDef tensor_getset[] = {
    {"is_cuda", tensor_is_cuda, NULL, "whether the tensor is on a CUDA device", NULL},
    {"dtype", tensor_dtype, NULL, "the element type", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef tensor_methods[] = {
    {"data_ptr", tensor_data_ptr, METH_NOARGS, "the device address"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject tensor_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "array_double.TensorBase",
    .tp_basicsize = sizeof(tensor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "torch._C.TensorBase's ways of reading: getsets and a METH_NOARGS method",
    .tp_getattro = counting_getattr,
    .tp_getset = tensor_getset,
    .tp_methods = tensor_methods,
    .tp_init = tensor_init,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = tensor_dealloc,
};

/* ---- ndarray_base and MemoryPointer ------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *data;            /* NULL: the member raises AttributeError */
    PyObject *dtype;
} ndarray;

static int ndarray_init(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"data", "dtype", NULL};
    ndarray *a = (ndarray *)self;
    PyObject *data, *dtype;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO", names, &data, &dtype))
        return -1;
    Py_XSETREF(a->data, data == Py_None ? NULL : Py_NewRef(data));
    Py_XSETREF(a->dtype, Py_NewRef(dtype));
    return 0;
}

static void ndarray_dealloc(PyObject *self)
{
    Py_CLEAR(((ndarray *)self)->data);
    Py_CLEAR(((ndarray *)self)->dtype);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *ndarray_dtype(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((ndarray *)self)->dtype);
}

static PyMemberDef ndarray_members[] = {
    {"data", T_OBJECT_EX, offsetof(ndarray, data), READONLY, "the MemoryPointer"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef ndarray_getset[] = {
    {"dtype", ndarray_dtype, NULL, "the element type", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ndarray_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "array_double.ndarray_base",
    .tp_basicsize = sizeof(ndarray),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "cupy's ndarray's ways of reading: a member and a getset",
    .tp_getattro = counting_getattr,
    .tp_members = ndarray_members,
    .tp_getset = ndarray_getset,
    .tp_init = ndarray_init,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = ndarray_dealloc,
};

typedef struct {
    PyObject_HEAD
    unsigned long long ptr;
} memptr;

static int memptr_init(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"ptr", NULL};
    return PyArg_ParseTupleAndKeywords(args, kw, "K", names, &((memptr *)self)->ptr) ? 0 : -1;
}

static PyMemberDef memptr_members[] = {
    {"ptr", T_ULONGLONG, offsetof(memptr, ptr), READONLY, "the device address"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject memptr_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "array_double.MemoryPointer",
    .tp_basicsize = sizeof(memptr),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "cupy.cuda.MemoryPointer's way of reading ptr: a member",
    .tp_getattro = counting_getattr,
    .tp_members = memptr_members,
    .tp_init = memptr_init,
    .tp_new = PyType_GenericNew,
};

/* ---- the DLPack C exchange table --------------------------------------------------------------- */

/* The spec's DLTensor and table, as a producer lays them out. */
typedef struct {
    void *data;
    int32_t device_type, device_id, ndim;
    uint8_t code, bits;
    uint16_t lanes;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor;

typedef void (*dl_fn)(void);
static struct {
    uint32_t major, minor;
    const void *prev_api;
    dl_fn allocator, from_py, to_py;
    int (*dltensor_from_py)(void *py_object, dl_tensor *out);
    dl_fn current_work_stream;
} exchange = {1, 3, NULL, NULL, NULL, NULL, NULL, NULL};

static PyObject *dl_dtypes;            /* dtype object -> (code, bits) */
static int64_t one_shape[1] = {1};

/* A TensorBase as a DLTensor: its ptr split into data and a byte offset (as a view's may be),
 * kDLCUDA or kDLCPU by is_cuda, its dtype's (code, bits) from the table given. */
static int dltensor_from_py(void *py_object, dl_tensor *out)
{
    PyObject *o = (PyObject *)py_object;
    exchange_calls++;
    if (!PyObject_TypeCheck(o, &tensor_type)) {
        PyErr_SetString(PyExc_TypeError, "not a TensorBase");
        return -1;
    }
    tensor *t = (tensor *)o;
    if (failed(t, "dlpack"))
        return -1;
    PyObject *cb = dl_dtypes ? PyDict_GetItemWithError(dl_dtypes, t->dtype) : NULL;
    int code, bits;
    if (!cb || !PyArg_ParseTuple(cb, "ii", &code, &bits)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_BufferError, "no DLPack dtype");
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->data = (void *)(uintptr_t)(t->ptr & ~(unsigned long long)0xff);
    out->byte_offset = t->ptr & 0xff;
    out->device_type = t->is_cuda ? 2 : 1;
    out->ndim = 1;
    out->code = (uint8_t)code, out->bits = (uint8_t)bits, out->lanes = 1;
    out->shape = one_shape;
    return 0;
}

static PyObject *exchange_api(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"dtypes", "as_int", NULL};
    PyObject *dtypes;
    int as_int = 0;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!|p", names, &PyDict_Type, &dtypes, &as_int))
        return NULL;
    Py_XSETREF(dl_dtypes, Py_NewRef(dtypes));
    exchange.dltensor_from_py = dltensor_from_py;
    return as_int ? PyLong_FromVoidPtr(&exchange) : PyCapsule_New(&exchange, "dlpack_exchange_api", NULL);
}

/* ---- the module -------------------------------------------------------------------------------- */

static PyObject *calls(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(getattr_calls);
}

static PyObject *counter(unsigned long long *n)
{
    return PyLong_FromUnsignedLongLong(*n);
}

static PyObject *getters(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return counter(&getter_calls);
}

static PyObject *exchanges(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return counter(&exchange_calls);
}

static PyMethodDef methods[] = {
    {"getattr_calls", calls, METH_NOARGS, "how many times the types' tp_getattro ran"},
    {"getter_calls", getters, METH_NOARGS, "how many times the tensor's getters ran"},
    {"exchange_calls", exchanges, METH_NOARGS, "how many times the exchange table's function ran"},
    {"exchange_api", (PyCFunction)(void (*)(void))exchange_api, METH_VARARGS | METH_KEYWORDS,
     "a DLPack C exchange table for TensorBase"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "array_double",
                                    "C types that read attributes as torch's and CuPy's do (a test double).",
                                    -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_array_double(void);
PyMODINIT_FUNC PyInit_array_double(void)
{
    PyTypeObject *types[] = {&tensor_type, &ndarray_type, &memptr_type};
    const char *names[] = {"TensorBase", "ndarray_base", "MemoryPointer"};
    PyObject *m = PyModule_Create(&module);
    for (int i = 0; m && i < 3; i++)
        if (PyType_Ready(types[i]) != 0 || PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) != 0)
            Py_CLEAR(m);
    return m;
}
