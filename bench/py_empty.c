/*
 * py_empty.c — the floor for bench/launch_py_cpu.py: a CPython extension
 * module `py_empty` with one function, empty(*args, **kw), taken as
 * METH_FASTCALL | METH_KEYWORDS like every kernel function of the Python
 * target, that reads nothing and returns None. Calling it with a launch's
 * arguments costs what the interpreter charges for the call itself.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *empty(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    (void)args;
    (void)nargs;
    (void)kwnames;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"empty", (PyCFunction)(void (*)(void))empty, METH_FASTCALL | METH_KEYWORDS, "empty(*args, **kw): None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "py_empty", "An empty METH_FASTCALL function.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_py_empty(void);
PyMODINIT_FUNC PyInit_py_empty(void)
{
    return PyModule_Create(&module);
}
