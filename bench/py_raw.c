/*
 * py_raw.c — the raw launch inside the Python process, for bench/launch_py.py:
 * a CPython extension module `py_raw` that launches bench_args through the
 * driver's own cuLaunchKernel with arguments prepared once, so the Python
 * rows are compared with the raw C call in the same process and round (not
 * with the C benchmark's process, whose median moves by hundreds of ns from
 * one process to the next).
 *
 *   prepare(function, stream, x, y, n)  a CUfunction (or CUkernel) handle, a CUstream and two
 *                                       device addresses, as ints; the launch's arguments
 *   loop(count)                         count launches in a C loop: the raw C row
 *   launch()                            one launch: the floor of any launch made from a
 *                                       Python loop (the interpreter's call and nothing else)
 *
 * libcuda is found with dlopen, like libkstub does; nothing here is checked
 * beyond the driver's result (a benchmark, not an API).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <string.h>
#include <stdint.h>

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shared, void *stream, void **params, void **extra);

static launch_fn cu_launch;
static void *fn_handle, *stream_handle;
static float a_val = 1.5f;
static uintptr_t x_val, y_val;
static int n_val;
static long long m_val = 1;
static void *params[5] = {&a_val, &x_val, &y_val, &n_val, &m_val};

static PyObject *prepare(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long f, s, x, y;
    int n;
    if (!PyArg_ParseTuple(args, "KKKKi", &f, &s, &x, &y, &n))
        return NULL;
    if (cu_launch == NULL) {
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        void *sym = lib ? dlsym(lib, "cuLaunchKernel") : NULL;
        if (sym == NULL) {
            PyErr_SetString(PyExc_OSError, "libcuda.so.1 or its cuLaunchKernel not found");
            return NULL;
        }
        memcpy(&cu_launch, &sym, sizeof sym);
    }
    fn_handle = (void *)(uintptr_t)f;
    stream_handle = (void *)(uintptr_t)s;
    x_val = (uintptr_t)x;
    y_val = (uintptr_t)y;
    n_val = n;
    Py_RETURN_NONE;
}

static PyObject *fail(int r)
{
    PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel returned %d", r);
    return NULL;
}

static PyObject *loop(PyObject *self, PyObject *arg)
{
    (void)self;
    long count = PyLong_AsLong(arg);
    if (count < 0 && PyErr_Occurred())
        return NULL;
    for (long i = 0; i < count; i++) {
        int r = cu_launch(fn_handle, 1, 1, 1, 32, 1, 1, 0, stream_handle, params, NULL);
        if (r != 0)
            return fail(r);
    }
    Py_RETURN_NONE;
}

static PyObject *launch(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    int r = cu_launch(fn_handle, 1, 1, 1, 32, 1, 1, 0, stream_handle, params, NULL);
    if (r != 0)
        return fail(r);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"prepare", prepare, METH_VARARGS, "prepare(function, stream, x, y, n): the launch's handle and arguments"},
    {"loop", loop, METH_O, "loop(count): count raw launches in a C loop"},
    {"launch", launch, METH_NOARGS, "launch(): one raw launch"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "py_raw", "The raw cuLaunchKernel from Python.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_py_raw(void);
PyMODINIT_FUNC PyInit_py_raw(void)
{
    return PyModule_Create(&module);
}
