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
 *   launch_args(a, x, y, n, m, *, grid, block, stream)
 *                                       one launch from a METH_FASTCALL | METH_KEYWORDS call
 *                                       given what a kstub call is given (its arguments are
 *                                       ignored): what the interpreter charges for passing
 *                                       them, apart from what kstub does with them
 *   stub_prepare(stream, x, y, n)       the arguments of kstub's C stub of bench_args
 *                                       (bench/gen/bench_kernels.kstub.c, linked in)
 *   stub_loop(count)                    count launches through that stub in a C loop: kstub's
 *                                       C stub in this process, what the Python target's
 *                                       "<= 1.2 x the C stub" is measured against
 *   stub_struct_loop(count)             the same for bench_struct (its x the struct's pointer)
 *   stub_call(a, x, y, n, m, *, grid, block, stream)
 *                                       one launch through that stub per Python call, the
 *                                       arguments not read: the C stub as the module calls it
 *   stub_handle()                       the CUkernel the stub launches, once it has launched
 *                                       (for a run without CuPy: the fake driver's)
 *
 * The C stub and its libkstub.a are linked with hidden visibility (bench/python.mk:
 * -fvisibility=hidden and --exclude-libs,ALL), so this module's copy of libkstub is its own
 * and never binds to the kstub Python module's, nor it to this. libcuda is found with dlopen
 * as libkstub does (KSTUB_LIBCUDA first: the fake driver on the CPU machine); nothing here is
 * checked beyond the driver's result (a benchmark, not an API).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>
#include "bench_kernels.kstub.h"

typedef int (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                         unsigned shared, void *stream, void **params, void **extra);

static launch_fn cu_launch;
static void *fn_handle, *stream_handle;
static float a_val = 1.5f;
static uintptr_t x_val, y_val;
static int n_val;
static long long m_val = 1;
static void *params[5] = {&a_val, &x_val, &y_val, &n_val, &m_val};

typedef int (*get_proc_fn)(const char *symbol, void **pfn, int version, unsigned long long flags);

/* cuLaunchKernel of the driver libkstub would load: dlsym, else cuGetProcAddress (a driver,
 * such as the fake, that exports nothing else). */
static int find_launch(void)
{
    const char *path = getenv("KSTUB_LIBCUDA");
    void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    void *sym = lib ? dlsym(lib, "cuLaunchKernel") : NULL;
    void *gp = lib && !sym ? dlsym(lib, "cuGetProcAddress") : NULL;
    if (gp) {
        get_proc_fn get;
        memcpy(&get, &gp, sizeof gp);
        if (get("cuLaunchKernel", &sym, 12000, 0) != 0)
            sym = NULL;
    }
    if (sym == NULL) {
        PyErr_SetString(PyExc_OSError, "libcuda.so.1 (or KSTUB_LIBCUDA) or its cuLaunchKernel not found");
        return -1;
    }
    memcpy(&cu_launch, &sym, sizeof sym);
    return 0;
}

static PyObject *prepare(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long f, s, x, y;
    int n;
    if (!PyArg_ParseTuple(args, "KKKKi", &f, &s, &x, &y, &n))
        return NULL;
    if (cu_launch == NULL && find_launch() != 0)
        return NULL;
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

/* The same launch as launch(), called as a kstub kernel function is: positional and keyword
 * arguments through vectorcall, none of them read. */
static PyObject *launch_args(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)args;
    (void)nargs;
    (void)kwnames;
    return launch(self, NULL);
}

/* ---- kstub's C stub of bench_args, in this process ----------------------------------------- */

static ks_launch stub_cfg;
static const float *stub_x;
static float *stub_y;

static PyObject *stub_fail(ks_status s)
{
    PyErr_Format(PyExc_RuntimeError, "bench_args (kstub's C stub): %s: %s", ks_status_name(s),
                 ks_last_error_message());
    return NULL;
}

static PyObject *stub_prepare(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long long s, x, y;
    int n;
    if (!PyArg_ParseTuple(args, "KKKi", &s, &x, &y, &n))
        return NULL;
    stub_cfg = ks_launch_on(ks_launch_1d(1, 32), (ks_stream)(uintptr_t)s);
    stub_x = (const float *)(uintptr_t)x;
    stub_y = (float *)(uintptr_t)y;
    n_val = n;
    Py_RETURN_NONE;
}

static PyObject *stub_loop(PyObject *self, PyObject *arg)
{
    (void)self;
    long count = PyLong_AsLong(arg);
    if (count < 0 && PyErr_Occurred())
        return NULL;
    for (long i = 0; i < count; i++) {
        ks_status s = bench_args(stub_cfg, a_val, stub_x, stub_y, n_val, m_val);
        if (s != KS_OK)
            return stub_fail(s);
    }
    Py_RETURN_NONE;
}

/* The same C stub loop for bench_struct (a 24-byte struct by value and y): the in-process C stub
 * its Python rows are held to, as bench_args' are to stub_loop. */
static PyObject *stub_struct_loop(PyObject *self, PyObject *arg)
{
    (void)self;
    long count = PyLong_AsLong(arg);
    if (count < 0 && PyErr_Occurred())
        return NULL;
    BenchParams p = {2.0f, n_val, 0.5, stub_x};
    for (long i = 0; i < count; i++) {
        ks_status s = bench_struct(stub_cfg, p, stub_y);
        if (s != KS_OK)
            return stub_fail(s);
    }
    Py_RETURN_NONE;
}

/* One launch through the C stub per Python call, given what a kstub kernel function is given
 * (none of it read): what the Python rows cost over this is the module's argument conversion. */
static PyObject *stub_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)self;
    (void)args;
    (void)nargs;
    (void)kwnames;
    ks_status s = bench_args(stub_cfg, a_val, stub_x, stub_y, n_val, m_val);
    if (s != KS_OK)
        return stub_fail(s);
    Py_RETURN_NONE;
}

static PyObject *stub_handle(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (!bench_args_kernel.ks__handle) {
        PyErr_SetString(PyExc_RuntimeError, "the stub has not launched, or launched through the module loader");
        return NULL;
    }
    return PyLong_FromVoidPtr(bench_args_kernel.ks__handle);
}

static PyMethodDef methods[] = {
    {"prepare", prepare, METH_VARARGS, "prepare(function, stream, x, y, n): the launch's handle and arguments"},
    {"loop", loop, METH_O, "loop(count): count raw launches in a C loop"},
    {"launch", launch, METH_NOARGS, "launch(): one raw launch"},
    {"launch_args", (PyCFunction)(void (*)(void))launch_args, METH_FASTCALL | METH_KEYWORDS,
     "launch_args(a, x, y, n, m, *, grid, block, stream): one raw launch; the arguments are not read"},
    {"stub_prepare", stub_prepare, METH_VARARGS, "stub_prepare(stream, x, y, n): the C stub's arguments"},
    {"stub_loop", stub_loop, METH_O, "stub_loop(count): count launches through kstub's C stub in a C loop"},
    {"stub_struct_loop", stub_struct_loop, METH_O,
     "stub_struct_loop(count): count launches of bench_struct through kstub's C stub in a C loop"},
    {"stub_call", (PyCFunction)(void (*)(void))stub_call, METH_FASTCALL | METH_KEYWORDS,
     "stub_call(a, x, y, n, m, *, grid, block, stream): one launch through the C stub; the arguments are not read"},
    {"stub_handle", stub_handle, METH_NOARGS, "stub_handle(): the CUkernel the C stub launched"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "py_raw", "The raw cuLaunchKernel from Python.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_py_raw(void);
PyMODINIT_FUNC PyInit_py_raw(void)
{
    return PyModule_Create(&module);
}
