/*
 * kstub_python.h — what every module of the Python target
 * (templates/python/) is built on: Python arguments to a kernel's exact C
 * types, the launch keywords, the struct classes, the device-variable
 * accessors and the KstubError exceptions. Header-only (every function is
 * static), so that a generated module is one C file over the generated C
 * stubs and libkstub.a, and libkstub itself needs no Python. Include it
 * after <Python.h> and the generated C header.
 *
 * Pointers: an int (an address), None (NULL), a CuPy array or a torch
 * tensor (read directly: data.ptr / data_ptr() and dtype, each call, never
 * cached, through their types' C getters where the types have them), a cuda.core Buffer (its handle), any object with
 * __cuda_array_interface__ (the general path: its data, typestr and
 * read-only flag), or else one with __dlpack__ and __dlpack_device__ (its
 * capsule consumed and freed on the spot). An array's dtype must be the
 * pointee's; an array that
 * says it is read-only goes only to a pointer to const. Scalars are
 * converted at the parameter's exact width: a value out of its range is
 * an OverflowError, a float for an integer a TypeError. Every refusal
 * names the kernel (or struct, or variable), the parameter and the type.
 */
#ifndef KSTUB_PYTHON_H
#define KSTUB_PYTHON_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>
#include <kstub.h>
#include <kstub_types.h>

#if PY_VERSION_HEX < 0x03090000
#error "kstub's Python target needs Python 3.9 or newer"
#endif

#if defined(__GNUC__)
#define KS_PY_FN static __attribute__((unused))
/* A launch's per-argument fast paths: inlined into the generated call, where the parameter's
 * type is a constant and the tests on it fold away. */
#define KS_PY_INLINE static inline __attribute__((always_inline, unused))
/* What a launch's common path does not run (refusals, their messages, the rare forms): out of
 * line and apart (.text.unlikely), so that the code a launch runs is few cache lines: a real
 * driver's launch evicts them, and each line is then a miss on every call. */
#define KS_PY_COLD static __attribute__((noinline, cold, unused))
#define KS_PY_LIKELY(x) __builtin_expect(!!(x), 1)
#define KS_PY_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define KS_PY_LINE __attribute__((aligned(64)))
/* A kernel's function (the generated module's): its common path starts a cache line. */
#define KS_PY_ENTRY static __attribute__((aligned(64)))
#else
#define KS_PY_ENTRY static
#define KS_PY_FN static
#define KS_PY_INLINE static inline
#define KS_PY_COLD static
#define KS_PY_LIKELY(x) (x)
#define KS_PY_UNLIKELY(x) (x)
#define KS_PY_LINE
#endif

/* ---- types as the conversions see them --------------------------------------------------------- */

/* A value's kind: 'i'/'u' integers (an enum too), 'b' bool, 'f' float,
 * 'B' bfloat16, 'h' half2, 'H' bfloat162, 'p' a pointer (an address), 'r' a
 * struct or union (rec), 'v' a vector (comp_*), 'V' bytes of no known kind. */
typedef struct ks_py_rec ks_py_rec;
typedef struct ks_py_type {
    char kind;
    unsigned size;             /* sizeof the C type */
    ks_py_rec *rec;            /* 'r': its class */
    char comp_kind;            /* 'v': a component's kind and size */
    unsigned comp_size;
} ks_py_type;

#define KS_PY_KIND_OF(x)                                                                          \
    _Generic((x), _Bool: 'b', char: 'i', signed char: 'i', unsigned char: 'u', short: 'i',       \
             unsigned short: 'u', int: 'i', unsigned: 'u', long: 'i', unsigned long: 'u',        \
             long long: 'i', unsigned long long: 'u', float: 'f', double: 'f', ks_half: 'f',     \
             ks_bfloat16: 'B', ks_half2: 'h', ks_bfloat162: 'H', default: 'V')
/* The initialisers the generated tables use, from the C type itself. */
#define KS_PY_T_SCALAR(T) {KS_PY_KIND_OF(*(T *)0), (unsigned)sizeof(T), NULL, 0, 0}
#define KS_PY_T_ENUM(T, is_signed) {(is_signed) ? 'i' : 'u', (unsigned)sizeof(T), NULL, 0, 0}
#define KS_PY_T_POINTER(T) {'p', (unsigned)sizeof(T), NULL, 0, 0}
#define KS_PY_T_RECORD(T, rec) {'r', (unsigned)sizeof(T), (rec), 0, 0}
#define KS_PY_T_VECTOR(T) \
    {'v', (unsigned)sizeof(T), NULL, KS_PY_KIND_OF(((T *)0)->x), (unsigned)sizeof(((T *)0)->x)}
#define KS_PY_T_BYTES(T) {'V', (unsigned)sizeof(T), NULL, 0, 0}
/* A pointer parameter's element dtype: kind << 24 | itemsize; 0 for void (any). */
#define KS_PY_DT(kind, size) (((uint32_t)(unsigned char)(kind) << 24) | (uint32_t)(size))
#define KS_PY_DT_OF(T) KS_PY_DT(KS_PY_KIND_OF(*(T *)0), sizeof(T))
#define KS_PY_DT_ENUM(T) KS_PY_DT('e', sizeof(T))
#define KS_PY_DT_POINTER(T) KS_PY_DT('p', sizeof(T))
#define KS_PY_DT_RECORD(T) KS_PY_DT('V', sizeof(T))
#define KS_PY_DT_ANY 0u

/* A struct's field: its name, offset, element type and element count (an array: more than 1). */
typedef struct ks_py_field {
    const char *name;
    size_t offset;
    ks_py_type type;
    size_t count;
} ks_py_field;

/* A struct or union the kernels take: its Python class is made at module init. */
struct ks_py_rec {
    const char *name;          /* the C name, the class's name */
    size_t size, align;
    const ks_py_field *fields;
    size_t nfields;
    PyTypeObject *type;        /* the class, once the module is loaded */
    PyObject *dtype;           /* its NumPy dtype, made on first use */
};

/* How many keywords a call may pass and still take its last call's slots (ks_py_args). */
#define KS_PY_KW_FAST 16

/* A kernel as its function sees it: its Python name and parameter names. The fields every
 * call reads come first, in one cache line (KS_PY_LINE); the generated module names each
 * field it sets. */
typedef struct ks_py_kernel {
    /* The last call's keyword names (a strong reference: the tuple a call site passes each
     * time) with its count of positional arguments, and the slot each keyword went to. A
     * tuple is immutable, so the same object and count sort the same way again. Read and
     * written under the GIL (a module without Py_mod_gil: free-threaded Python enables it).
     * A call of more than KS_PY_KW_FAST keywords is sorted each time. */
    PyObject *kw_last;
    Py_ssize_t kw_nargs;
    Py_ssize_t nparams;
    const char *name;
    uint16_t kw_slot[KS_PY_KW_FAST];
    const char *const *params;     /* the kernel's own, then the launch keywords */
    const char *const *ctypes;     /* each parameter's C type, for messages */
    PyObject **interned;           /* params as interned strings (module init) */
    char *owner;                   /* "name()", for messages (module init) */
} KS_PY_LINE ks_py_kernel;

/* The launch keywords after a kernel's own parameters. */
#define KS_PY_LAUNCH_KEYWORDS "grid", "block", "shared", "stream", "cluster", "cooperative", "pdl", "priority"
#define KS_PY_NLAUNCH 8

#if PY_VERSION_HEX >= 0x030C0000 && !defined(Py_LIMITED_API)
/* ks__py_exact_ll's rare case, an int past 30 bits where one is usually small: out of the way. */
KS_PY_COLD int ks__py_big_ll(PyObject *o, long long *v)
{
    int over = 0;
    long long x = PyLong_AsLongLongAndOverflow(o, &over);
    if (over != 0)
        return 0;
    *v = x;
    return 1;
}
#endif

/* An exact int's value, where it fits a long long: 1 with *v set, else 0 (no exception: not an
 * exact int, or out of range). small: the value is usually small (a count, a size: not an
 * address), which Python 3.12 and newer then read inline (the documented
 * PyUnstable_Long_IsCompact and PyUnstable_Long_CompactValue); the rest asks Python. */
KS_PY_INLINE int ks__py_exact_ll(PyObject *o, long long *v, int small)
{
    if (!PyLong_CheckExact(o))
        return 0;
#if PY_VERSION_HEX >= 0x030C0000 && !defined(Py_LIMITED_API)
    if (small) {
        if (KS_PY_LIKELY(PyUnstable_Long_IsCompact((PyLongObject *)o))) {
            *v = (long long)PyUnstable_Long_CompactValue((PyLongObject *)o);
            return 1;
        }
        return ks__py_big_ll(o, v);
    }
#else
    (void)small;
#endif
    int over = 0;
#if LONG_MAX >= LLONG_MAX
    long long x = PyLong_AsLongAndOverflow(o, &over);   /* the same, a function shorter to run */
#else
    long long x = PyLong_AsLongLongAndOverflow(o, &over);
#endif
    if (over != 0)
        return 0;
    *v = x;
    return 1;
}

/* ---- errors ------------------------------------------------------------------------------------ */

/* The exception classes: KstubError and one subclass per ks_status (ERR_NO_DRIVER: NoDriverError),
 * shared by every kstub module of the process through sys.modules["_kstub_errors"]. */
static PyObject *ks__py_error_base;
static PyObject *ks__py_errors[KS__STATUS_COUNT];

/* o as text: a str, or str(o) for anything else (an exception instance: Python 3.12
 * hands PyErr_Fetch's value over normalized, 3.11 and older often as the bare str). */
KS_PY_FN const char *ks__py_str(PyObject *o, char *buf, size_t n)
{
    PyObject *t = !o ? NULL : PyUnicode_Check(o) ? Py_NewRef(o) : PyObject_Str(o);
    const char *s = t ? PyUnicode_AsUTF8(t) : NULL;
    if (!s) {
        PyErr_Clear();
        Py_XDECREF(t);
        return "?";
    }
    snprintf(buf, n, "%s", s);
    Py_DECREF(t);
    return buf;
}

KS_PY_FN int ks__py_errors_init(PyObject *module)
{
    PyObject *name = PyUnicode_FromString("_kstub_errors");
    if (!name)
        return -1;
    PyObject *reg = PyImport_GetModule(name);
    if (!reg && PyErr_Occurred()) {
        Py_DECREF(name);
        return -1;
    }
    if (!reg) {
        reg = PyModule_NewObject(name);
        PyObject *modules = PyImport_GetModuleDict();
        if (!reg || PyDict_SetItem(modules, name, reg) != 0) {
            Py_DECREF(name);
            Py_XDECREF(reg);
            return -1;
        }
    }
    Py_DECREF(name);
    int rc = 0;
    PyObject *base = PyObject_GetAttrString(reg, "KstubError");
    if (!base) {
        PyErr_Clear();
        base = PyErr_NewExceptionWithDoc("kstub.KstubError",
                                         "A libkstub call failed: .status (the ks_status value), .status_name, "
                                         ".kernel, .call, .cu_result, .cu_name and .log as libkstub reported them.",
                                         PyExc_RuntimeError, NULL);
        if (!base || PyModule_AddObjectRef(reg, "KstubError", base) != 0)
            rc = -1;
    }
    for (int s = 1; rc == 0 && s < KS__STATUS_COUNT; s++) {
        /* KS_ERR_NO_DRIVER -> NoDriverError */
        char cls[96], full[112];
        const char *n = ks_status_name((ks_status)s) + 7;
        size_t j = 0;
        int up = 1;
        for (; *n && j + 6 < sizeof cls; n++) {
            if (*n == '_') {
                up = 1;
                continue;
            }
            cls[j++] = up ? *n : (char)(*n >= 'A' && *n <= 'Z' ? *n - 'A' + 'a' : *n);
            up = 0;
        }
        memcpy(cls + j, "Error", 6);
        PyObject *e = PyObject_GetAttrString(reg, cls);
        if (!e) {
            PyErr_Clear();
            snprintf(full, sizeof full, "kstub.%s", cls);
            e = PyErr_NewExceptionWithDoc(full, ks_status_string((ks_status)s), base, NULL);
            if (!e || PyModule_AddObjectRef(reg, cls, e) != 0)
                rc = -1;
        }
        if (e && rc == 0 && PyModule_AddObjectRef(module, cls, e) != 0)
            rc = -1;
        Py_XDECREF(ks__py_errors[s]);
        ks__py_errors[s] = e;
    }
    if (rc == 0 && PyModule_AddObjectRef(module, "KstubError", base) != 0)
        rc = -1;
    Py_XDECREF(ks__py_error_base);
    ks__py_error_base = base;
    Py_DECREF(reg);
    return rc;
}

KS_PY_FN void ks__py_set_attr_str(PyObject *o, const char *name, const char *v)
{
    PyObject *s = v ? PyUnicode_DecodeUTF8(v, (Py_ssize_t)strlen(v), "replace") : Py_NewRef(Py_None);
    if (s) {
        PyObject_SetAttrString(o, name, s);
        Py_DECREF(s);
    }
    PyErr_Clear();
}

/* Raises the exception for a failed libkstub call, with its ks_last_error(); NULL. */
KS_PY_COLD PyObject *ks_py_raise_status(ks_status st)
{
    const ks_error *e = ks_last_error();
    PyObject *cls = st > 0 && st < KS__STATUS_COUNT && ks__py_errors[st] ? ks__py_errors[st] : ks__py_error_base;
    const char *msg = e->status == st && e->message && e->message[0] ? e->message : ks_status_string(st);
    PyObject *exc = PyObject_CallFunction(cls, "s", msg);
    if (!exc)
        return NULL;
    PyObject *v = PyLong_FromLong((long)st);
    if (v) {
        PyObject_SetAttrString(exc, "status", v);
        Py_DECREF(v);
    }
    ks__py_set_attr_str(exc, "status_name", ks_status_name(st));
    int same = e->status == st;
    ks__py_set_attr_str(exc, "kernel", same ? e->kernel : NULL);
    ks__py_set_attr_str(exc, "call", same ? e->call : NULL);
    ks__py_set_attr_str(exc, "cu_name", same ? e->cu_name : NULL);
    ks__py_set_attr_str(exc, "log", same ? e->log : NULL);
    v = PyLong_FromLong(same ? e->cu_result : 0);
    if (v) {
        PyObject_SetAttrString(exc, "cu_result", v);
        Py_DECREF(v);
    }
    PyErr_Clear();
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

KS_PY_INLINE PyObject *ks_py_status(ks_status st)
{
    if (KS_PY_UNLIKELY(st != KS_OK))
        return ks_py_raise_status(st);
    Py_RETURN_NONE;
}

/* ---- dtypes ------------------------------------------------------------------------------------- */

KS_PY_FN const char *ks__py_dt_name(uint32_t dt, char *buf, size_t n)
{
    unsigned kind = dt >> 24, size = dt & 0xffffffu;
    switch (kind) {
    case 'f': snprintf(buf, n, "float%u", size * 8); break;
    case 'i': snprintf(buf, n, "int%u", size * 8); break;
    case 'u': snprintf(buf, n, "uint%u", size * 8); break;
    case 'b': snprintf(buf, n, "bool"); break;
    case 'B': snprintf(buf, n, "bfloat16"); break;
    case 'e': snprintf(buf, n, "int%u or uint%u", size * 8, size * 8); break;
    case 'p': snprintf(buf, n, "uint%u (addresses)", size * 8); break;
    case 'V': snprintf(buf, n, "%u-byte records (void%u)", size, size * 8); break;
    case 'x': snprintf(buf, n, "a type with no C counterpart (DLPack)"); break;
    default: snprintf(buf, n, "%u-byte elements of kind '%c'", size, kind ? (char)kind : '?'); break;
    }
    return buf;
}

/* Whether an array of dtype got may go where expected is wanted (0: any, or not known). */
KS_PY_FN int ks__py_dt_fits(uint32_t expected, uint32_t got)
{
    if (expected == 0 || got == 0 || expected == got)
        return 1;
    unsigned ek = expected >> 24, gk = got >> 24, es = expected & 0xffffffu, gs = got & 0xffffffu;
    if (es != gs)
        return 0;
    if (ek == 'e' || ek == 'p')
        return gk == 'i' || gk == 'u';
    if (ek == 'h' || ek == 'H' || ek == 'v')
        return gk == 'V';
    return 0;
}

/* An array interface's typestr ("<f4", "|V24") as a dtype; 0 if it is not one. */
KS_PY_FN uint32_t ks__py_typestr_dt(const char *s)
{
    if (!s || !s[0] || !s[1] || !s[2])
        return 0;
    char kind = s[1];
    unsigned long size = strtoul(s + 2, NULL, 10);
    if (size == 0 || size > 0xffffffu)
        return 0;
    if (kind == 'c')
        kind = 'V';            /* complex: its bytes */
    return KS_PY_DT(kind, size);
}

/* ---- the known array types' attributes, read through the C getter their descriptor calls ------- */
/*
 * A torch tensor's is_cuda, data_ptr() and dtype, a CuPy array's data and dtype and the data's
 * ptr are what every launch reads: through PyObject_GetAttr (or a method call) each costs the
 * attribute look-up and the descriptor protocol around the library's own C getter. For a type
 * whose look-up of the name gives a C-level descriptor — a getset (its get), a member (its slot,
 * read by PyMember_GetOne as member_get does) or a METH_NOARGS method (its ml_meth) — that C
 * entry point is called directly: exactly what the descriptor does, so torch's
 * __torch_function__ handling inside its getters stays. The value is read on every call; only
 * the way to read it is kept, per exact type, with the type's tp_version_tag: CPython changes
 * (or clears) the tag whenever the type or a base is modified (an attribute assigned or
 * deleted, __bases__ set), so a changed tag makes the type verified again before the next read;
 * the object's type and its tag are checked before each read, not once per object (a getter
 * may run Python code that changes them). A subclass is its own entry (its look-ups must reach
 * C descriptors too). Anything else — no tag, a Python-level attribute, a type with its own
 * __getattribute__ or __getattr__, a method that an instance's __dict__ shadows — takes
 * PyObject_GetAttr (or the method call) as before, and every error is the getter's own, as
 * before.
 */
enum { KS__PY_READ_ATTR, KS__PY_READ_GETSET, KS__PY_READ_MEMBER, KS__PY_READ_METHOD };
#define KS__PY_NREAD 3         /* names read per type, at most */
#define KS__PY_READERS 4       /* types kept per family */

typedef struct ks__py_read {
    int how;                   /* KS__PY_READ_* */
    PyObject *descr;           /* what the type's look-up found (strong), NULL for ATTR */
    getter get;                /* GETSET: d_getset->get and its closure */
    void *closure;
    PyMemberDef *member;       /* MEMBER */
    PyCFunction meth;          /* METHOD */
} ks__py_read;

typedef struct ks__py_reader {
    PyTypeObject *type;        /* strong; NULL: a free slot */
    unsigned int tag;          /* type->tp_version_tag when verified; 0: every read generic */
    int dict;                  /* instances may hold a __dict__ (one that can shadow a method) */
    ks__py_read read[KS__PY_NREAD];
} ks__py_reader;

/* One family's names (torch's is_cuda, data_ptr, dtype ...) and the types verified for them. */
typedef struct ks__py_readers {
    int n;                     /* names */
    PyObject **name[KS__PY_NREAD];   /* the interned names' slots in ks__py_k */
    int call[KS__PY_NREAD];          /* the attribute is a method called with no arguments */
    int last, next;            /* the entry that answered last; the one to reuse next */
    ks__py_reader r[KS__PY_READERS];
} ks__py_readers;

/* Whether t reads attributes as object does: PyObject_GenericGetAttr, or the tp_getattro of
 * its nearest static (C-defined) base when t inherited it (Cython gives its extension types an
 * equivalent of its own). A Python class's __getattribute__ or __getattr__ replaces it. */
KS_PY_FN int ks__py_plain_getattr(PyTypeObject *t)
{
    PyTypeObject *b = t;
    while (b && (b->tp_flags & Py_TPFLAGS_HEAPTYPE))
        b = b->tp_base;
    return t->tp_getattro == PyObject_GenericGetAttr || (b && b->tp_getattro && t->tp_getattro == b->tp_getattro);
}

/* The entry for type t made in *out (new references): each name looked up on t (_PyType_Lookup,
 * which gives t a version tag) and kept as a C entry point where the descriptor has one. */
KS_PY_FN void ks__py_reader_make(const ks__py_readers *s, PyTypeObject *t, ks__py_reader *out)
{
    ks__py_reader n;
    memset(&n, 0, sizeof n);
    int plain = ks__py_plain_getattr(t);
    for (int i = 0; i < s->n; i++) {
        ks__py_read *d = &n.read[i];
        d->how = KS__PY_READ_ATTR;
        PyObject *a = plain ? _PyType_Lookup(t, *s->name[i]) : NULL;
        if (!a)
            continue;
        if (Py_IS_TYPE(a, &PyGetSetDescr_Type) && ((PyGetSetDescrObject *)a)->d_getset->get) {
            d->how = KS__PY_READ_GETSET;
            d->get = ((PyGetSetDescrObject *)a)->d_getset->get;
            d->closure = ((PyGetSetDescrObject *)a)->d_getset->closure;
        } else if (Py_IS_TYPE(a, &PyMemberDescr_Type)
                   && (((PyMemberDescrObject *)a)->d_member->flags & ~(READONLY | PY_WRITE_RESTRICTED)) == 0) {
            d->how = KS__PY_READ_MEMBER;     /* no audited read, no relative offset */
            d->member = ((PyMemberDescrObject *)a)->d_member;
        } else if (Py_IS_TYPE(a, &PyMethodDescr_Type) && s->call[i]
                   && (((PyMethodDescrObject *)a)->d_method->ml_flags & ~METH_COEXIST) == METH_NOARGS) {
            d->how = KS__PY_READ_METHOD;
            d->meth = ((PyMethodDescrObject *)a)->d_method->ml_meth;
        }
        /* A descriptor of another class (assigned here from elsewhere) refuses the instance. */
        if (d->how != KS__PY_READ_ATTR && !PyType_IsSubtype(t, ((PyDescrObject *)a)->d_type))
            d->how = KS__PY_READ_ATTR;
        if (d->how != KS__PY_READ_ATTR)
            d->descr = Py_NewRef(a);
    }
    n.tag = t->tp_version_tag;
#if PY_VERSION_HEX < 0x030D0000
    /* The flag says the tag is valid up to 3.12; 3.13 keeps the name but sets it no more (a
     * nonzero tag alone is valid there). */
    int valid = n.tag != 0 && (t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG);
#else
    int valid = n.tag != 0;
#endif
    for (int i = 0; i < s->n && !valid; i++) {
        Py_CLEAR(n.read[i].descr);           /* nothing guards them: every read generic */
        n.read[i].how = KS__PY_READ_ATTR;
    }
    n.dict = t->tp_dictoffset != 0;
#ifdef Py_TPFLAGS_MANAGED_DICT
    n.dict |= (t->tp_flags & Py_TPFLAGS_MANAGED_DICT) != 0;
#endif
    n.type = (PyTypeObject *)Py_NewRef((PyObject *)t);
    *out = n;
}

/* The entry for t, made anew in its slot (or the next one to reuse). The slot is written whole
 * before the references it held are dropped: dropping one may run Python code (a class freed),
 * even a launch that uses this table, so the caller checks the entry again (ks__py_read_attr). */
KS_PY_FN ks__py_reader *ks__py_reader_find(ks__py_readers *s, PyTypeObject *t)
{
    int i = 0;
    while (i < KS__PY_READERS && s->r[i].type != t)
        i++;
    if (i == KS__PY_READERS) {
        i = s->next;
        s->next = (s->next + 1) % KS__PY_READERS;
    }
    ks__py_reader n, old;
    ks__py_reader_make(s, t, &n);
    old = s->r[i];
    s->r[i] = n;
    s->last = i;
    Py_XDECREF((PyObject *)old.type);
    for (int k = 0; k < KS__PY_NREAD; k++)
        Py_XDECREF(old.read[k].descr);
    return &s->r[i];
}

/* The entry for the exact type t, made again if its version tag moved. */
KS_PY_INLINE ks__py_reader *ks__py_reader_of(ks__py_readers *s, PyTypeObject *t)
{
    ks__py_reader *r = &s->r[s->last];
    if (r->type == t && r->tag == t->tp_version_tag)
        return r;
    for (int i = 0; i < KS__PY_READERS; i++)
        if (s->r[i].type == t && s->r[i].tag == t->tp_version_tag) {
            s->last = i;
            return &s->r[i];
        }
    return ks__py_reader_find(s, t);
}

/* Whether o's own __dict__ holds name (which then shadows a method of its type). CPython 3.11
 * and newer make an instance's dict from its inline values here, once per object. */
KS_PY_FN int ks__py_shadowed(PyObject *o, PyObject *name)
{
    PyObject **dp = _PyObject_GetDictPtr(o);
    if (!dp)                                /* no dict, or it could not be made: let GetAttr say */
        return !(Py_TYPE(o)->tp_dictoffset == 0
#ifdef Py_TPFLAGS_MANAGED_DICT
                 && !(Py_TYPE(o)->tp_flags & Py_TPFLAGS_MANAGED_DICT)
#endif
        );
    if (!*dp)
        return 0;
    PyObject *v = PyDict_GetItemWithError(*dp, name);
    if (!v && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    return v != NULL;
}

/* Name i of family s read from o, a method called: a new reference, or NULL with the exception
 * set. The entry is found (and checked) for each read, as o's type is now: a getter run by
 * the read before may have changed the type, or o's __class__, or launched through this table. */
KS_PY_INLINE PyObject *ks__py_read_attr(ks__py_readers *s, int i, PyObject *o)
{
    PyTypeObject *t = Py_TYPE(o);
    const ks__py_reader *r = ks__py_reader_of(s, t);
    const ks__py_read *d = &r->read[i];
    if (r->type == t && r->tag == t->tp_version_tag) {
        switch (d->how) {
        case KS__PY_READ_GETSET:
            return d->get(o, d->closure);
        case KS__PY_READ_MEMBER:
            return PyMember_GetOne((const char *)o, d->member);
        case KS__PY_READ_METHOD:
            if (!r->dict || !ks__py_shadowed(o, *s->name[i]))
                return d->meth(o, NULL);
            break;
        default:
            break;
        }
    }
    return s->call[i] ? PyObject_CallMethodNoArgs(o, *s->name[i]) : PyObject_GetAttr(o, *s->name[i]);
}

/* ---- known array types (CuPy, torch, cuda.core), found once -------------------------------------- */

#define KS__PY_DTYPE_CACHE 32
typedef struct ks__py_known {
    PyTypeObject *cupy_ndarray;        /* strong references once found */
    PyTypeObject *torch_tensor;
    PyTypeObject *core_buffer;
    const struct ks__dl_exchange *torch_dl;   /* torch.Tensor's DLPack exchange table, or NULL, */
    unsigned int torch_dl_tag;                /* ... as its type said under this version tag */
    int looked_cupy, looked_torch;
    ks__py_readers torch_read;         /* is_cuda, data_ptr(), dtype */
    ks__py_readers cupy_read;          /* data, dtype */
    ks__py_readers mem_read;           /* a CuPy array's data, and a CuPy stream: ptr */
    ks__py_readers stream_read;        /* a torch stream: cuda_stream */
    PyObject *s_data, *s_ptr, *s_dtype, *s_data_ptr, *s_is_cuda, *s_cai, *s_handle, *s_kind,
        *s_itemsize, *s_cuda_stream_proto, *s_cuda_stream, *s_dlpack, *s_dlpack_device;
    PyObject *dl_kw[3];                /* __dlpack__'s keywords: see ks__py_dlpack_call */
    PyObject *dl_max_version;          /* (1, 1) */
    PyObject *dtype_obj[KS__PY_DTYPE_CACHE];  /* dtype objects seen (strong), and their dtype */
    uint32_t dtype_dt[KS__PY_DTYPE_CACHE];
    int ndtypes;
} ks__py_known;
static ks__py_known ks__py_k;

KS_PY_FN int ks__py_known_init(void)
{
    struct { PyObject **slot; const char *s; } names[] = {
        {&ks__py_k.s_data, "data"}, {&ks__py_k.s_ptr, "ptr"}, {&ks__py_k.s_dtype, "dtype"},
        {&ks__py_k.s_data_ptr, "data_ptr"}, {&ks__py_k.s_is_cuda, "is_cuda"},
        {&ks__py_k.s_cai, "__cuda_array_interface__"}, {&ks__py_k.s_handle, "handle"},
        {&ks__py_k.s_kind, "kind"}, {&ks__py_k.s_itemsize, "itemsize"},
        {&ks__py_k.s_cuda_stream_proto, "__cuda_stream__"}, {&ks__py_k.s_cuda_stream, "cuda_stream"},
        {&ks__py_k.s_dlpack, "__dlpack__"}, {&ks__py_k.s_dlpack_device, "__dlpack_device__"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!*names[i].slot && !(*names[i].slot = PyUnicode_InternFromString(names[i].s)))
            return -1;
    if (!ks__py_k.torch_read.n) {            /* once per module: the entries are kept */
        ks__py_k.torch_read = (ks__py_readers){3, {&ks__py_k.s_is_cuda, &ks__py_k.s_data_ptr, &ks__py_k.s_dtype},
                                               {0, 1, 0}, 0, 0, {{0}}};
        ks__py_k.cupy_read = (ks__py_readers){2, {&ks__py_k.s_data, &ks__py_k.s_dtype}, {0, 0}, 0, 0, {{0}}};
        ks__py_k.mem_read = (ks__py_readers){1, {&ks__py_k.s_ptr}, {0}, 0, 0, {{0}}};
        ks__py_k.stream_read = (ks__py_readers){1, {&ks__py_k.s_cuda_stream}, {0}, 0, 0, {{0}}};
    }
    if (!ks__py_k.dl_kw[0]) {
        /* With a stream and the DLPack 1 keywords; without the stream (a struct's field); the
         * stream alone (a producer older than DLPack 1). */
        ks__py_k.dl_kw[0] = Py_BuildValue("(sss)", "stream", "max_version", "copy");
        ks__py_k.dl_kw[1] = Py_BuildValue("(ss)", "max_version", "copy");
        ks__py_k.dl_kw[2] = Py_BuildValue("(s)", "stream");
        ks__py_k.dl_max_version = Py_BuildValue("(ii)", 1, 1);
        for (int i = 0; i < 3; i++)
            if (!ks__py_k.dl_kw[i])
                return -1;
        if (!ks__py_k.dl_max_version)
            return -1;
    }
    return 0;
}

/* The class attribute `attr` of the already imported module `mod`, if it is a type: a
 * look-up in sys.modules (the names made once), no import. */
KS_PY_FN PyTypeObject *ks__py_find_type(const char *mod, const char *attr)
{
    static struct { const char *s; PyObject *name; } names[8];
    PyObject *name = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !name; i++) {
        if (!names[i].s) {
            names[i].s = mod;
            names[i].name = PyUnicode_InternFromString(mod);
        }
        if (strcmp(names[i].s, mod) == 0)
            name = names[i].name;
    }
    PyObject *m = name ? PyImport_GetModule(name) : NULL;
    PyObject *t = m ? PyObject_GetAttrString(m, attr) : NULL;
    Py_XDECREF(m);
    PyErr_Clear();
    if (t && !PyType_Check(t))
        Py_CLEAR(t);
    return (PyTypeObject *)t;
}

/* A dtype object (NumPy's, or torch's: torch_dt gives its dtype) as a dtype; 0 if unknown. */
KS_PY_FN uint32_t ks__py_dtype_dt(PyObject *d)
{
    static int last;               /* the last one found: an array's dtype, as a rule, again */
    if (last < ks__py_k.ndtypes && ks__py_k.dtype_obj[last] == d)
        return ks__py_k.dtype_dt[last];
    for (int i = 0; i < ks__py_k.ndtypes; i++)
        if (ks__py_k.dtype_obj[i] == d)
            return ks__py_k.dtype_dt[last = i];
    uint32_t dt = 0;
    PyObject *kind = PyObject_GetAttr(d, ks__py_k.s_kind);
    PyObject *size = kind ? PyObject_GetAttr(d, ks__py_k.s_itemsize) : NULL;
    if (kind && size && PyUnicode_Check(kind) && PyUnicode_GetLength(kind) == 1) {
        long n = PyLong_AsLong(size);
        Py_UCS4 c = PyUnicode_READ_CHAR(kind, 0);
        if (n > 0 && c < 128)
            dt = KS_PY_DT(c == 'c' ? 'V' : (char)c, (unsigned long)n);
    }
    Py_XDECREF(kind);
    Py_XDECREF(size);
    PyErr_Clear();
    if (dt && ks__py_k.ndtypes < KS__PY_DTYPE_CACHE) {
        ks__py_k.dtype_obj[ks__py_k.ndtypes] = Py_NewRef(d);
        ks__py_k.dtype_dt[ks__py_k.ndtypes++] = dt;
    }
    return dt;
}

/* torch's dtypes (torch.float32 ...), entered in the cache the first time a tensor is seen. */
KS_PY_FN void ks__py_torch_dtypes(void)
{
    static const struct { const char *name; char kind; unsigned size; } t[] = {
        {"float16", 'f', 2}, {"float32", 'f', 4}, {"float64", 'f', 8}, {"bfloat16", 'B', 2},
        {"int8", 'i', 1}, {"int16", 'i', 2}, {"int32", 'i', 4}, {"int64", 'i', 8},
        {"uint8", 'u', 1}, {"uint16", 'u', 2}, {"uint32", 'u', 4}, {"uint64", 'u', 8},
        {"bool", 'b', 1}, {"complex64", 'V', 8}, {"complex128", 'V', 16},
    };
    PyObject *name = PyUnicode_FromString("torch");
    PyObject *torch = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    for (size_t i = 0; torch && i < sizeof t / sizeof t[0] && ks__py_k.ndtypes < KS__PY_DTYPE_CACHE; i++) {
        PyObject *d = PyObject_GetAttrString(torch, t[i].name);
        if (!d) {
            PyErr_Clear();
            continue;
        }
        ks__py_k.dtype_obj[ks__py_k.ndtypes] = d;
        ks__py_k.dtype_dt[ks__py_k.ndtypes++] = KS_PY_DT(t[i].kind, t[i].size);
    }
    Py_XDECREF(torch);
    PyErr_Clear();
}

/* ---- pointers ---------------------------------------------------------------------------------- */

/* What a pointer argument gave: its address, its dtype (0: not known) and whether it is read-only. */
typedef struct ks_py_ptr {
    uintptr_t addr;
    uint32_t dt;
    int readonly;
    const char *what;          /* for messages: "a CuPy array" ... */
} ks_py_ptr;

KS_PY_FN int ks__py_addr_of(PyObject *v, uintptr_t *addr)
{
    long long x;
    if (KS_PY_LIKELY(ks__py_exact_ll(v, &x, 0) && x >= 0)) {   /* an address below 2**63: no bytes copied */
        *addr = (uintptr_t)x;
        return 0;
    }
    unsigned long long a = PyLong_AsUnsignedLongLong(v);
    if (a == (unsigned long long)-1 && PyErr_Occurred())
        return -1;
    *addr = (uintptr_t)a;
    return 0;
}

/* The CUDA array interface: (data, typestr) of a dict. */
KS_PY_FN int ks__py_from_cai(PyObject *cai, ks_py_ptr *p)
{
    if (!PyDict_Check(cai)) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ is not a dict");
        return -1;
    }
    PyObject *data = PyDict_GetItemString(cai, "data");
    PyObject *ts = PyDict_GetItemString(cai, "typestr");
    if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
        PyErr_SetString(PyExc_TypeError, "__cuda_array_interface__ has no (pointer, read-only) \"data\"");
        return -1;
    }
    if (ks__py_addr_of(PyTuple_GET_ITEM(data, 0), &p->addr) != 0)
        return -1;
    p->readonly = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1)) == 1;
    p->dt = ts && PyUnicode_Check(ts) ? ks__py_typestr_dt(PyUnicode_AsUTF8(ts)) : 0;
    return 0;
}


/* ---- DLPack ------------------------------------------------------------------------------------ */

/* The DLPack C ABI as its specification lays it out (data-apis.org's array API, "DLPack"), declared
 * here so that a module needs no dlpack.h: a tensor, and the two managed forms a __dlpack__()
 * capsule holds — "dltensor" (before DLPack 1.0) and "dltensor_versioned" (1.0 on: a version,
 * flags, and the tensor last). Only what kstub reads is named; the layouts are the spec's. */
typedef struct ks__dl_tensor {
    void *data;
    int32_t device_type;       /* DLDevice: kDLCUDA 2, kDLCUDAHost 3, kDLCUDAManaged 13, ... */
    int32_t device_id;
    int32_t ndim;
    uint8_t code;              /* DLDataType: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, ... */
    uint8_t bits;
    uint16_t lanes;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} ks__dl_tensor;
typedef struct ks__dl_managed {
    ks__dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct ks__dl_managed *self);
} ks__dl_managed;
typedef struct ks__dl_managed_versioned {
    uint32_t major, minor;     /* DLPackVersion */
    void *manager_ctx;
    void (*deleter)(struct ks__dl_managed_versioned *self);
    uint64_t flags;            /* KS__DL_READ_ONLY, KS__DL_IS_COPIED */
    ks__dl_tensor dl_tensor;
} ks__dl_managed_versioned;
#define KS__DL_READ_ONLY 1u
#define KS__DL_IS_COPIED 2u
#define KS__DL_CUDA 2
#define KS__DL_CUDA_HOST 3
#define KS__DL_CUDA_MANAGED 13

/* DLPack's C exchange API (DLPack 1.2 on): a producer's table of C functions, which its type
 * names as __dlpack_c_exchange_api__ (a "dlpack_exchange_api" capsule, DLPack 1.3) or
 * __c_dlpack_exchange_api__ (its address as an int, 1.2), alive for the process. The layout is
 * the spec's (a version and the previous table, then five functions); kstub calls only
 * dltensor_from_py_object_no_sync, which fills a caller's DLTensor without an allocation, a
 * capsule or a Python call: 0, or -1 with the exception set. */
typedef void (*ks__dl_fn)(void);
typedef struct ks__dl_exchange {
    uint32_t major, minor;
    const void *prev_api;
    ks__dl_fn managed_tensor_allocator, managed_tensor_from_py_object_no_sync,
        managed_tensor_to_py_object_no_sync;
    int (*dltensor_from_py_object_no_sync)(void *py_object, ks__dl_tensor *out);
    ks__dl_fn current_work_stream;
} ks__dl_exchange;

/* t's exchange table, if it has one kstub can call (major version 1, the function given); else
 * NULL, no exception. Looked up once per type: the spec says the table is the type's. */
KS_PY_FN const ks__dl_exchange *ks__py_dl_exchange_of(PyTypeObject *t)
{
    static const char *const names[] = {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        PyObject *a = PyObject_GetAttrString((PyObject *)t, names[i]);
        const ks__dl_exchange *x = NULL;
        if (a && PyCapsule_CheckExact(a))
            x = (const ks__dl_exchange *)PyCapsule_GetPointer(a, "dlpack_exchange_api");
        else if (a && PyLong_Check(a))
            x = (const ks__dl_exchange *)PyLong_AsVoidPtr(a);
        Py_XDECREF(a);
        PyErr_Clear();
        if (x && x->major == 1 && x->dltensor_from_py_object_no_sync)
            return x;
    }
    return NULL;
}

/* A device type's name in the spec (kDLCPU ...), for messages. */
KS_PY_FN const char *ks__py_dl_device_name(long t)
{
    static const char *const names[] = {NULL, "kDLCPU", "kDLCUDA", "kDLCUDAHost", "kDLOpenCL", NULL, NULL,
                                        "kDLVulkan", "kDLMetal", "kDLVPI", "kDLROCM", "kDLROCMHost",
                                        "kDLExtDev", "kDLCUDAManaged", "kDLOneAPI", "kDLWebGPU",
                                        "kDLHexagon", "kDLMAIA"};
    return t >= 0 && t < (long)(sizeof names / sizeof names[0]) && names[t] ? names[t] : "a device type";
}

/* Memory a kernel may be given: the device's (kDLCUDA), managed, or pinned host memory, which
 * unified addressing maps at the same address. */
KS_PY_FN int ks__py_dl_on_cuda(long t)
{
    return t == KS__DL_CUDA || t == KS__DL_CUDA_HOST || t == KS__DL_CUDA_MANAGED;
}

/* A DLDataType as a dtype: int, uint, float, bfloat16, bool by kind; complex and lanes > 1 as
 * records of their size; anything else as 'x', which fits only void *. */
KS_PY_FN uint32_t ks__py_dl_dt(const ks__dl_tensor *t)
{
    unsigned long bits = (unsigned long)t->bits * t->lanes;
    if (bits == 0 || bits % 8 != 0)
        return KS_PY_DT('x', 0);
    unsigned long size = bits / 8;
    if (t->lanes != 1)
        return KS_PY_DT('V', size);
    switch (t->code) {
    case 0: return KS_PY_DT('i', size);
    case 1: return KS_PY_DT('u', size);
    case 2: return KS_PY_DT('f', size);
    case 4: return KS_PY_DT('B', size);
    case 5: return KS_PY_DT('V', size);
    case 6: return KS_PY_DT('b', size);
    default: return KS_PY_DT('x', size);
    }
}

/* o.__dlpack__(): with the consumer's stream where it is known (DLPack's numbering: 1 the legacy
 * default stream, 2 per-thread, else the handle), max_version (1, 1) and copy=False — the kernel
 * needs the array's own memory; a producer older than DLPack 1 (a TypeError) is asked again
 * without them. Pinned host memory has no stream. */
KS_PY_FN PyObject *ks__py_dlpack_call(PyObject *o, const ks_stream *stream, long device_type)
{
    PyObject *s = NULL;
    if (stream && device_type != KS__DL_CUDA_HOST) {
        s = PyLong_FromUnsignedLongLong(*stream ? (unsigned long long)(uintptr_t)*stream : 1ull);
        if (!s)
            return NULL;
    }
    PyObject *args[4] = {o, s, ks__py_k.dl_max_version, Py_False};
    PyObject *cap = s ? PyObject_VectorcallMethod(ks__py_k.s_dlpack, args, 1, ks__py_k.dl_kw[0])
                      : PyObject_VectorcallMethod(ks__py_k.s_dlpack, (PyObject *[]){o, args[2], args[3]}, 1,
                                                  ks__py_k.dl_kw[1]);
    if (!cap && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        cap = PyObject_VectorcallMethod(ks__py_k.s_dlpack, args, 1, s ? ks__py_k.dl_kw[2] : NULL);
    }
    Py_XDECREF(s);
    return cap;
}

/* An object with __dlpack__ and __dlpack_device__: its tensor's address (data + byte_offset),
 * dtype and read-only flag. The capsule is consumed as the protocol says: renamed
 * "used_dltensor" ("used_dltensor_versioned") and its deleter called once what kstub reads is
 * read — the memory stays the caller's array's, as with every other pointer argument. 0, -1
 * with the exception set, or 1: o has no __dlpack_device__. */
KS_PY_FN int ks__py_from_dlpack(PyObject *o, const ks_stream *stream, ks_py_ptr *p)
{
    PyObject *dev = PyObject_CallMethodNoArgs(o, ks__py_k.s_dlpack_device);
    if (!dev) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 1;
    }
    p->what = "a DLPack tensor";
    long type = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) == 2)
        type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
    Py_DECREF(dev);
    if (type == -1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "__dlpack_device__() gave no (device_type, device_id)");
        return -1;
    }
    if (!ks__py_dl_on_cuda(type)) {
        PyErr_Format(PyExc_ValueError, "the DLPack tensor is on %s (device type %ld), not on a CUDA device",
                     ks__py_dl_device_name(type), type);
        return -1;
    }
    PyObject *cap = ks__py_dlpack_call(o, stream, type);
    if (!cap)
        return -1;
    ks__dl_tensor t;
    uint64_t flags = 0;
    memset(&t, 0, sizeof t);
    int rc = 0;
    if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
        ks__dl_managed_versioned *m = (ks__dl_managed_versioned *)PyCapsule_GetPointer(cap, "dltensor_versioned");
        if (m->major != 1) {       /* not ours to read: the capsule's destructor frees it */
            PyErr_Format(PyExc_ValueError, "__dlpack__() gave a DLPack %u.%u tensor; kstub reads DLPack 1",
                         (unsigned)m->major, (unsigned)m->minor);
            rc = -1;
        } else if (PyCapsule_SetName(cap, "used_dltensor_versioned") != 0) {
            rc = -1;
        } else {
            t = m->dl_tensor;
            flags = m->flags;
            if (m->deleter)
                m->deleter(m);
        }
    } else if (PyCapsule_IsValid(cap, "dltensor")) {
        ks__dl_managed *m = (ks__dl_managed *)PyCapsule_GetPointer(cap, "dltensor");
        if (PyCapsule_SetName(cap, "used_dltensor") != 0) {
            rc = -1;
        } else {
            t = m->dl_tensor;
            if (m->deleter)
                m->deleter(m);
        }
    } else {
        PyErr_Format(PyExc_TypeError, "__dlpack__() gave %.100s, not a \"dltensor\" or "
                     "\"dltensor_versioned\" capsule", Py_TYPE(cap)->tp_name);
        rc = -1;
    }
    Py_DECREF(cap);
    if (rc != 0)
        return -1;
    if (!ks__py_dl_on_cuda(t.device_type)) {
        PyErr_Format(PyExc_ValueError, "the DLPack tensor is on %s (device type %ld), not on a CUDA device",
                     ks__py_dl_device_name(t.device_type), (long)t.device_type);
        return -1;
    }
    if (flags & KS__DL_IS_COPIED) {
        PyErr_SetString(PyExc_ValueError, "__dlpack__(copy=False) gave a copy, which is freed before "
                        "the kernel runs; the kernel needs the array's own memory");
        return -1;
    }
    p->addr = (uintptr_t)t.data + (uintptr_t)t.byte_offset;
    p->dt = ks__py_dl_dt(&t);
    p->readonly = (flags & KS__DL_READ_ONLY) != 0;
    return 0;
}

/*
 * A torch.Tensor (the type itself) through torch's DLPack exchange table: one C call for what
 * the three getters (is_cuda, data_ptr(), dtype) give, as data + byte_offset and the DLPack
 * dtype. 0 for a tensor on a CUDA device whose dtype is one of the getters' table (ints, uints,
 * floats, bfloat16, bool, complex); 1, no exception, for anything else — a tensor elsewhere,
 * another dtype, one the table refuses (its exception dropped) — which the getters then read,
 * so every refusal and its message is theirs. A subclass is read through its getters: they may
 * be its own.
 */
KS_PY_FN int ks__py_dl_torch(PyObject *o, ks_py_ptr *p)
{
    /* Only while the type is as verified: the table as its type names it now, and the three
     * names torch's own C getters (ks__py_read_attr would call them directly), none shadowed
     * by the instance; a type modified since (an attribute assigned or deleted changes its
     * version tag) is looked at again, so `Tensor.data_ptr = f` is obeyed from the next call. */
    PyTypeObject *ty = Py_TYPE(o);
    const ks__py_reader *r = ks__py_reader_of(&ks__py_k.torch_read, ty);   /* gives ty a tag */
    if (ty->tp_version_tag == 0 || r->type != ty || r->tag != ty->tp_version_tag ||
        r->read[0].how == KS__PY_READ_ATTR || r->read[1].how == KS__PY_READ_ATTR ||
        r->read[2].how == KS__PY_READ_ATTR)
        return 1;
    if (ks__py_k.torch_dl_tag != ty->tp_version_tag) {
        ks__py_k.torch_dl = ks__py_dl_exchange_of(ty);
        ks__py_k.torch_dl_tag = ty->tp_version_tag;
    }
    /* (The look-up may have run Python code: the entry is checked again.) */
    if (!ks__py_k.torch_dl || r->type != ty || r->tag != ty->tp_version_tag ||
        (r->dict && ks__py_shadowed(o, ks__py_k.s_data_ptr)))
        return 1;
    ks__dl_tensor t;
    if (ks__py_k.torch_dl->dltensor_from_py_object_no_sync(o, &t) != 0) {
        PyErr_Clear();
        return 1;
    }
    /* The (code, bits) of the getters' table: bit b of a code's mask stands for 8 << b bits. */
    static const unsigned char bits_of[7] = {0x0f, 0x0f, 0x0e, 0, 0x02, 0x18, 0x01};
    unsigned b = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : t.bits == 64 ? 3 : t.bits == 128 ? 4 : 8;
    if (t.device_type != KS__DL_CUDA || t.lanes != 1 || t.code > 6 || b > 4 || !(bits_of[t.code] >> b & 1))
        return 1;
    p->addr = (uintptr_t)t.data + (uintptr_t)t.byte_offset;
    p->dt = ks__py_dl_dt(&t);
    return 0;
}

/* A pointer argument's address and dtype; stream: the launch's (NULL: not known), which a
 * DLPack producer orders its work before. 0, or -1 with the exception set; 1: not a pointer. */
KS_PY_FN int ks__py_pointer_of(PyObject *o, const ks_stream *stream, ks_py_ptr *p)
{
    PyTypeObject *t = Py_TYPE(o);
    p->readonly = 0;
    p->dt = 0;
    /* An address, None and the known types themselves first, by their type alone; then subclasses. */
    if (PyLong_CheckExact(o)) {
        p->what = "an address";
        return ks__py_addr_of(o, &p->addr);
    }
    if (o == Py_None) {
        p->what = "None";
        p->addr = 0;
        return 0;
    }
    if (t == ks__py_k.cupy_ndarray || (ks__py_k.cupy_ndarray && t != ks__py_k.torch_tensor &&
                                       t != ks__py_k.core_buffer && PyType_IsSubtype(t, ks__py_k.cupy_ndarray))) {
        p->what = "a CuPy array";
        PyObject *mem = ks__py_read_attr(&ks__py_k.cupy_read, 0, o);
        PyObject *ptr = mem ? ks__py_read_attr(&ks__py_k.mem_read, 0, mem) : NULL;
        Py_XDECREF(mem);
        int rc = ptr ? ks__py_addr_of(ptr, &p->addr) : -1;
        Py_XDECREF(ptr);
        if (rc != 0)
            return -1;
        PyObject *d = ks__py_read_attr(&ks__py_k.cupy_read, 1, o);
        if (!d)
            return -1;
        p->dt = ks__py_dtype_dt(d);
        Py_DECREF(d);
        return 0;
    }
    if (t == ks__py_k.torch_tensor || (ks__py_k.torch_tensor && t != ks__py_k.core_buffer &&
                                       PyType_IsSubtype(t, ks__py_k.torch_tensor))) {
        p->what = "a torch tensor";
        if (t == ks__py_k.torch_tensor && ks__py_dl_torch(o, p) == 0)
            return 0;
        PyObject *cuda = ks__py_read_attr(&ks__py_k.torch_read, 0, o);
        if (!cuda)
            return -1;
        int on_gpu = cuda == Py_True;
        Py_DECREF(cuda);
        if (!on_gpu) {
            PyErr_SetString(PyExc_ValueError, "the tensor is not on a CUDA device (move it with .cuda())");
            return -1;
        }
        PyObject *ptr = ks__py_read_attr(&ks__py_k.torch_read, 1, o);
        int rc = ptr ? ks__py_addr_of(ptr, &p->addr) : -1;
        Py_XDECREF(ptr);
        if (rc != 0)
            return -1;
        PyObject *d = ks__py_read_attr(&ks__py_k.torch_read, 2, o);
        if (!d)
            return -1;
        p->dt = ks__py_dtype_dt(d);
        Py_DECREF(d);
        return 0;
    }
    if (PyLong_Check(o)) {
        p->what = "an address";
        return ks__py_addr_of(o, &p->addr);
    }
    if (ks__py_k.core_buffer && (t == ks__py_k.core_buffer || PyType_IsSubtype(t, ks__py_k.core_buffer))) {
        p->what = "a cuda.core Buffer";
        PyObject *h = PyObject_GetAttr(o, ks__py_k.s_handle);
        /* An int, or cuda.bindings' CUdeviceptr: __int__ (asked for directly, not after a
         * TypeError from __index__: no exception made and dropped per call). */
        PyObject *n = !h ? NULL : PyLong_CheckExact(h) ? Py_NewRef(h)
                    : PyIndex_Check(h) || !Py_TYPE(h)->tp_as_number || !Py_TYPE(h)->tp_as_number->nb_int
                        ? PyNumber_Index(h) : PyNumber_Long(h);
        if (!n && h && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            n = PyNumber_Long(h);
        }
        Py_XDECREF(h);
        int rc = n ? ks__py_addr_of(n, &p->addr) : -1;
        Py_XDECREF(n);
        return rc;
    }
    /* Look for the known array types once each, when the module has been imported. */
    if (!ks__py_k.looked_cupy && !ks__py_k.cupy_ndarray) {
        ks__py_k.cupy_ndarray = ks__py_find_type("cupy", "ndarray");
        if (ks__py_k.cupy_ndarray)
            return ks__py_pointer_of(o, stream, p);
    }
    if (!ks__py_k.looked_torch && !ks__py_k.torch_tensor) {
        ks__py_k.torch_tensor = ks__py_find_type("torch", "Tensor");
        if (ks__py_k.torch_tensor) {
            ks__py_torch_dtypes();
            return ks__py_pointer_of(o, stream, p);
        }
    }
    if (!ks__py_k.core_buffer) {
        ks__py_k.core_buffer = ks__py_find_type("cuda.core.experimental", "Buffer");
        if (!ks__py_k.core_buffer)
            ks__py_k.core_buffer = ks__py_find_type("cuda.core", "Buffer");
        if (ks__py_k.core_buffer && (t == ks__py_k.core_buffer || PyType_IsSubtype(t, ks__py_k.core_buffer)))
            return ks__py_pointer_of(o, stream, p);
    }
    PyObject *cai = PyObject_GetAttr(o, ks__py_k.s_cai);
    if (!cai) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return ks__py_from_dlpack(o, stream, p);   /* the interface first: it costs less */
    }
    p->what = "a __cuda_array_interface__ object";
    int rc = ks__py_from_cai(cai, p);
    Py_DECREF(cai);
    return rc;
}

/* A pointer argument refused: rc -1 (the exception said again with the parameter), 1 (not a
 * pointer), 2 (another dtype) or 3 (read-only for a pointer to non-const). Returns -1. */
KS_PY_COLD int ks__py_pointer_refuse(const ks_py_kernel *k, Py_ssize_t i, PyObject *o, uint32_t dt, int rc,
                                     const ks_py_ptr *p)
{
    if (rc < 0) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        char buf[256];
        PyErr_Format(type ? type : PyExc_TypeError, "%s(): parameter %s (%s): %s", k->name, k->params[i],
                     k->ctypes[i], ks__py_str(value, buf, sizeof buf));
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    } else if (rc == 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s(): parameter %s (%s) needs a device array (__cuda_array_interface__ or DLPack: "
                     "CuPy, torch, Numba, JAX), a cuda.core Buffer, an int address or None, not %.100s",
                     k->name, k->params[i], k->ctypes[i], Py_TYPE(o)->tp_name);
    } else if (rc == 2) {
        char want[64], got[64];
        PyErr_Format(PyExc_TypeError, "%s(): parameter %s (%s) needs %s, not %s of %s", k->name, k->params[i],
                     k->ctypes[i], ks__py_dt_name(dt, want, sizeof want), p->what,
                     ks__py_dt_name(p->dt, got, sizeof got));
    } else {
        PyErr_Format(PyExc_ValueError, "%s(): parameter %s (%s) is written by the kernel, but %s is read-only",
                     k->name, k->params[i], k->ctypes[i], p->what);
    }
    return -1;
}

/* The kernel's pointer parameter i from o: checked against its element dtype and constness.
 * stream: the launch's (a DLPack producer orders its work before it). probe: a dtype that
 * does not fit returns 1 with no exception (the one name over a template's instances tries
 * the next instance). 0, -1 with the exception set, or 1. */
KS_PY_FN int ks__py_pointer_arg(const ks_py_kernel *k, Py_ssize_t i, PyObject *o, uint32_t dt, int is_const,
                                int probe, ks_stream stream, void **out)
{
    ks_py_ptr p;
    int rc = ks__py_pointer_of(o, &stream, &p);
    if (KS_PY_UNLIKELY(rc != 0))
        return ks__py_pointer_refuse(k, i, o, dt, rc, &p);
    if (KS_PY_UNLIKELY(!ks__py_dt_fits(dt, p.dt)))
        return probe ? 1 : ks__py_pointer_refuse(k, i, o, dt, 2, &p);
    if (KS_PY_UNLIKELY(p.readonly && !is_const))
        return ks__py_pointer_refuse(k, i, o, dt, 3, &p);
    *out = (void *)p.addr;
    return 0;
}

/* The same, an address (an int) and None taken inline; the rest, and every refusal, above. */
KS_PY_INLINE int ks_py_pointer(const ks_py_kernel *k, Py_ssize_t i, PyObject *o, uint32_t dt, int is_const,
                               int probe, ks_stream stream, void **out)
{
    long long a;
    if (KS_PY_LIKELY(ks__py_exact_ll(o, &a, 0) && a >= 0)) {
        *out = (void *)(uintptr_t)a;
        return 0;
    }
    if (o == Py_None) {
        *out = NULL;
        return 0;
    }
    return ks__py_pointer_arg(k, i, o, dt, is_const, probe, stream, out);   /* past 2**63 and negative too */
}

/* ---- values ------------------------------------------------------------------------------------ */

KS_PY_INLINE void ks__py_store_int(void *dst, unsigned size, unsigned long long v)
{
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    switch (size) {
    case 1: a = (uint8_t)v; memcpy(dst, &a, 1); break;
    case 2: b = (uint16_t)v; memcpy(dst, &b, 2); break;
    case 4: c = (uint32_t)v; memcpy(dst, &c, 4); break;
    default: d = (uint64_t)v; memcpy(dst, &d, 8); break;
    }
}

KS_PY_FN unsigned long long ks__py_load_int(const void *src, unsigned size, int is_signed)
{
    uint8_t a;
    uint16_t b;
    uint32_t c;
    uint64_t d;
    switch (size) {
    case 1: memcpy(&a, src, 1); return is_signed ? (unsigned long long)(long long)(int8_t)a : a;
    case 2: memcpy(&b, src, 2); return is_signed ? (unsigned long long)(long long)(int16_t)b : b;
    case 4: memcpy(&c, src, 4); return is_signed ? (unsigned long long)(long long)(int32_t)c : c;
    default: memcpy(&d, src, 8); return d;
    }
}

/* Who a value is for, in messages: "saxpy(): parameter n (int)", "Params.count (int32_t)". */
typedef struct ks_py_ctx {
    const char *owner;         /* "saxpy()", "Params", "variable g_scale" */
    const char *name;          /* the parameter or field, or NULL */
    const char *ctype;         /* its C type, or NULL */
} ks_py_ctx;

KS_PY_FN const char *ks__py_ctx_text(const ks_py_ctx *c, char *buf, size_t n)
{
    if (c->name && c->owner[0] && c->owner[strlen(c->owner) - 1] == ')')
        snprintf(buf, n, "%s: parameter %s (%s)", c->owner, c->name, c->ctype ? c->ctype : "?");
    else if (c->name)
        snprintf(buf, n, "%s.%s (%s)", c->owner, c->name, c->ctype ? c->ctype : "?");
    else
        snprintf(buf, n, "%s (%s)", c->owner, c->ctype ? c->ctype : "?");
    return buf;
}

KS_PY_FN int ks__py_int(const ks_py_ctx *c, PyObject *o, char kind, unsigned size, void *dst)
{
    char where[256];
    if (PyFloat_Check(o) || !(PyLong_Check(o) || Py_TYPE(o)->tp_as_number)) {
        PyErr_Format(PyExc_TypeError, "%s needs an integer, not %.100s", ks__py_ctx_text(c, where, sizeof where),
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *n = PyLong_Check(o) ? Py_NewRef(o) : PyNumber_Index(o);
    if (!n) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s needs an integer, not %.100s", ks__py_ctx_text(c, where, sizeof where),
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    unsigned long long v;
    int bad = 0;
    if (kind == 'i') {
        int over = 0;
        long long s = PyLong_AsLongLongAndOverflow(n, &over);
        long long max = size >= 8 ? LLONG_MAX : (long long)((1ULL << (size * 8 - 1)) - 1);
        bad = over != 0 || s > max || s < -max - 1;
        v = (unsigned long long)s;
    } else {
        int over = 0;
        long long s = PyLong_AsLongLongAndOverflow(n, &over);
        int neg = over < 0 || (over == 0 && s < 0);
        v = neg ? 0 : over == 0 ? (unsigned long long)s : PyLong_AsUnsignedLongLong(n);
        if (!neg && v == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            bad = 1;
        }
        unsigned long long max = kind == 'b' ? 1 : size >= 8 ? ULLONG_MAX : (1ULL << (size * 8)) - 1;
        bad |= neg || v > max;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(n);
        return -1;
    }
    if (bad) {
        char lo[32], hi[32];
        if (kind == 'i') {
            long long max = size >= 8 ? LLONG_MAX : (long long)((1ULL << (size * 8 - 1)) - 1);
            snprintf(lo, sizeof lo, "%lld", -max - 1);
            snprintf(hi, sizeof hi, "%lld", max);
        } else {
            snprintf(lo, sizeof lo, "0");
            snprintf(hi, sizeof hi, "%llu", kind == 'b' ? 1ULL : size >= 8 ? ULLONG_MAX : (1ULL << (size * 8)) - 1);
        }
        PyErr_Format(PyExc_OverflowError, "%s: %R is out of range (%s to %s)", ks__py_ctx_text(c, where, sizeof where),
                     n, lo, hi);
        Py_DECREF(n);
        return -1;
    }
    Py_DECREF(n);
    ks__py_store_int(dst, size, v);
    return 0;
}

KS_PY_FN int ks__py_double(const ks_py_ctx *c, PyObject *o, double *v)
{
    char where[256];
    if (PyFloat_CheckExact(o)) {
        *v = PyFloat_AS_DOUBLE(o);
        return 0;
    }
    if (!PyLong_Check(o) && !PyFloat_Check(o) && !(Py_TYPE(o)->tp_as_number &&
                                                    (Py_TYPE(o)->tp_as_number->nb_float ||
                                                     Py_TYPE(o)->tp_as_number->nb_index))) {
        PyErr_Format(PyExc_TypeError, "%s needs a number, not %.100s", ks__py_ctx_text(c, where, sizeof where),
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    *v = PyFloat_AsDouble(o);
    if (*v == -1.0 && PyErr_Occurred()) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        char buf[200];
        PyErr_Format(type ? type : PyExc_TypeError, "%s: %s", ks__py_ctx_text(c, where, sizeof where),
                     ks__py_str(value, buf, sizeof buf));
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    return 0;
}

/* A floating value at its width: a finite value past the type's range is an OverflowError. */
KS_PY_FN int ks__py_float(const ks_py_ctx *c, PyObject *o, char kind, unsigned size, void *dst)
{
    double v;
    char where[256];
    if (ks__py_double(c, o, &v) != 0)
        return -1;
    double max = kind == 'B' ? 3.3895313892515355e38 : size == 2 ? 65504.0 : size == 4 ? FLT_MAX : DBL_MAX;
    if (isfinite(v) && fabs(v) > max) {
        /* within half a unit of the last one it still rounds to the largest value */
        double slack = kind == 'B' ? 1.0141204801825835e31 : size == 2 ? 16.0 : size == 4 ? 1.0141204801825835e31 : 0;
        if (fabs(v) >= max + slack) {
            char largest[32];   /* PyErr_Format has no %g (Python 3.12 refuses it: SystemError) */
            snprintf(largest, sizeof largest, "%g", max);
            PyErr_Format(PyExc_OverflowError, "%s: %R is out of range (largest %s)",
                         ks__py_ctx_text(c, where, sizeof where), o, largest);
            return -1;
        }
    }
    if (kind == 'B') {
        ks_bfloat16 b = ks_bfloat16_from_float((float)v);
        memcpy(dst, &b, sizeof b);
    } else if (size == 2) {
        ks_half h = ks_half_from_float((float)v);
        memcpy(dst, &h, sizeof h);
    } else if (size == 4) {
        float f = (float)v;
        memcpy(dst, &f, sizeof f);
    } else {
        memcpy(dst, &v, sizeof v);
    }
    return 0;
}

KS_PY_FN int ks__py_from_type(const ks_py_ctx *c, const ks_py_type *t, PyObject *o, void *dst);
KS_PY_FN PyObject *ks__py_to_type(const ks_py_type *t, const void *src);

/* The bytes of a struct, vector or other value from a buffer of exactly its size. 1: not a buffer. */
KS_PY_FN int ks__py_from_buffer(const ks_py_ctx *c, PyObject *o, unsigned size, void *dst)
{
    if (!PyObject_CheckBuffer(o))
        return 1;
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(o, &view, PyBUF_RECORDS_RO) != 0)
            return -1;
    }
    int rc = 0;
    if (view.len != (Py_ssize_t)size || !PyBuffer_IsContiguous(&view, 'C')) {
        char where[256];
        PyErr_Format(PyExc_TypeError, "%s needs %u bytes, not a buffer of %zd", ks__py_ctx_text(c, where, sizeof where),
                     size, view.len);
        rc = -1;
    } else {
        memcpy(dst, view.buf, size);
    }
    PyBuffer_Release(&view);
    return rc;
}

/* A struct's class instance: PyObject_HEAD, then the C struct's bytes. */
typedef struct ks__py_recobj {
    PyObject_HEAD
    const ks_py_rec *rec;
    _Alignas(16) unsigned char data[];
} ks__py_recobj;

KS_PY_FN PyObject *ks__py_rec_dtype(ks_py_rec *rec);

KS_PY_FN int ks__py_record(const ks_py_ctx *c, const ks_py_rec *rec, PyObject *o, void *dst)
{
    char where[256];
    if (rec->type && PyObject_TypeCheck(o, rec->type)) {
        memcpy(dst, ((ks__py_recobj *)o)->data, rec->size);
        return 0;
    }
    /* A NumPy structured scalar (or 0-d array) of the class's dtype. */
    PyObject *d = PyObject_GetAttr(o, ks__py_k.s_dtype);
    if (d) {
        PyObject *want = ks__py_rec_dtype((ks_py_rec *)rec);
        int same = want ? PyObject_RichCompareBool(d, want, Py_EQ) : -1;
        if (same == 0)
            PyErr_Format(PyExc_TypeError, "%s needs a %s, or a NumPy value of %s.dtype(), not one of dtype %R",
                         ks__py_ctx_text(c, where, sizeof where), rec->name, rec->name, d);
        Py_DECREF(d);
        if (same <= 0)
            return -1;
    } else {
        PyErr_Clear();
    }
    int rc = ks__py_from_buffer(c, o, (unsigned)rec->size, dst);
    if (rc <= 0)
        return rc;
    PyErr_Format(PyExc_TypeError, "%s needs a %s (the generated class), a NumPy value of %s.dtype() or %zu bytes, "
                 "not %.100s", ks__py_ctx_text(c, where, sizeof where), rec->name, rec->name, rec->size,
                 Py_TYPE(o)->tp_name);
    return -1;
}

/* n values of kind/size from a tuple or list (a vector's components, half2). */
KS_PY_FN int ks__py_components(const ks_py_ctx *c, PyObject *o, char kind, unsigned size, unsigned n, void *dst)
{
    char where[256];
    if (!PyTuple_Check(o) && !PyList_Check(o)) {
        int rc = ks__py_from_buffer(c, o, size * n, dst);
        if (rc <= 0)
            return rc;
        PyErr_Format(PyExc_TypeError, "%s needs a tuple of %u numbers, not %.100s",
                     ks__py_ctx_text(c, where, sizeof where), n, Py_TYPE(o)->tp_name);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(o) != (Py_ssize_t)n) {
        PyErr_Format(PyExc_TypeError, "%s needs %u components, not %zd", ks__py_ctx_text(c, where, sizeof where), n,
                     PySequence_Fast_GET_SIZE(o));
        return -1;
    }
    ks_py_type ct = {kind, size, NULL, 0, 0};
    for (unsigned i = 0; i < n; i++)
        if (ks__py_from_type(c, &ct, PySequence_Fast_GET_ITEM(o, i), (unsigned char *)dst + i * size) != 0)
            return -1;
    return 0;
}

KS_PY_FN int ks__py_from_type(const ks_py_ctx *c, const ks_py_type *t, PyObject *o, void *dst)
{
    switch (t->kind) {
    case 'i': case 'u': case 'b':
        return ks__py_int(c, o, t->kind, t->size, dst);
    case 'f': case 'B':
        return ks__py_float(c, o, t->kind, t->size, dst);
    case 'h':
        return ks__py_components(c, o, 'f', 2, 2, dst);
    case 'H':
        return ks__py_components(c, o, 'B', 2, 2, dst);
    case 'v':
        return ks__py_components(c, o, t->comp_kind, t->comp_size, t->size / t->comp_size, dst);
    case 'r':
        return ks__py_record(c, t->rec, o, dst);
    case 'p': {
        ks_py_ptr p;
        char where[256];
        int rc = ks__py_pointer_of(o, NULL, &p);   /* a field: no launch, no stream yet */
        if (rc == 1)
            PyErr_Format(PyExc_TypeError, "%s needs an address (an int, None, a device array or Buffer), not %.100s",
                         ks__py_ctx_text(c, where, sizeof where), Py_TYPE(o)->tp_name);
        if (rc != 0)
            return -1;
        ks__py_store_int(dst, t->size, p.addr);
        return 0;
    }
    default: {
        int rc = ks__py_from_buffer(c, o, t->size, dst);
        if (rc == 1) {
            char where[256];
            PyErr_Format(PyExc_TypeError, "%s needs %u bytes (a buffer), not %.100s",
                         ks__py_ctx_text(c, where, sizeof where), t->size, Py_TYPE(o)->tp_name);
            return -1;
        }
        return rc;
    }
    }
}

/* The whole way, with the parameter named in every refusal. */
KS_PY_FN int ks__py_value_of(const ks_py_kernel *k, Py_ssize_t i, PyObject *o, const ks_py_type *t, void *dst)
{
    ks_py_ctx c = {k->owner, k->params[i], k->ctypes[i]};
    return ks__py_from_type(&c, t, o, dst);
}

/* The same, for a type ks_py_value reads in most calls itself: out of the way of that path. */
KS_PY_COLD int ks__py_value_rare(const ks_py_kernel *k, Py_ssize_t i, PyObject *o, const ks_py_type *t, void *dst)
{
    return ks__py_value_of(k, i, o, t, dst);
}

/* A kernel's value parameter i (not a pointer to an array). An int (exactly) in the range of an
 * integer parameter and a float (exactly) for a double, or for a float within its range, are
 * stored here, as ks__py_from_type would store them; everything else, and every refusal, goes
 * the whole way. Inline: the generated call passes t as a constant. */
KS_PY_INLINE int ks_py_value(const ks_py_kernel *k, Py_ssize_t i, PyObject *o, const ks_py_type *t, void *dst)
{
    long long v;
    if ((t->kind == 'i' || t->kind == 'u') && t->size <= 8 && ks__py_exact_ll(o, &v, 1)) {
        int fits = t->kind == 'i' ? t->size >= 8 || (v >= -(1LL << (t->size * 8 - 1)) && v < (1LL << (t->size * 8 - 1)))
                                  : v >= 0 && (t->size >= 8 || v < (1LL << (t->size * 8)));
        if (KS_PY_LIKELY(fits)) {
            ks__py_store_int(dst, t->size, (unsigned long long)v);
            return 0;
        }
    } else if (t->kind == 'f' && (t->size == 4 || t->size == 8) && PyFloat_CheckExact(o)) {
        double d = PyFloat_AS_DOUBLE(o);
        if (t->size == 8) {
            memcpy(dst, &d, sizeof d);
            return 0;
        }
        /* |d| <= FLT_MAX, or NaN or an infinity (taken as they are), told from d's bits: an
         * IEEE double's magnitude orders as its bits do, and no constant is loaded from memory. */
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        bits &= ~((uint64_t)1 << 63);
        if (KS_PY_LIKELY(bits <= UINT64_C(0x47EFFFFFE0000000) || bits >= UINT64_C(0x7FF0000000000000))) {
            float f = (float)d;
            memcpy(dst, &f, sizeof f);
            return 0;
        }
    }
    if ((t->kind == 'i' || t->kind == 'u') && t->size <= 8)
        return ks__py_value_rare(k, i, o, t, dst);
    if (t->kind == 'f' && (t->size == 4 || t->size == 8))
        return ks__py_value_rare(k, i, o, t, dst);
    return ks__py_value_of(k, i, o, t, dst);
}

KS_PY_FN PyObject *ks__py_to_components(char kind, unsigned size, unsigned n, const void *src)
{
    PyObject *tup = PyTuple_New(n);
    ks_py_type ct = {kind, size, NULL, 0, 0};
    for (unsigned i = 0; tup && i < n; i++) {
        PyObject *v = ks__py_to_type(&ct, (const unsigned char *)src + i * size);
        if (!v) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, i, v);
    }
    return tup;
}

KS_PY_FN PyObject *ks__py_record_new(const ks_py_rec *rec, const void *bytes);

KS_PY_FN PyObject *ks__py_to_type(const ks_py_type *t, const void *src)
{
    switch (t->kind) {
    case 'i': return PyLong_FromLongLong((long long)ks__py_load_int(src, t->size, 1));
    case 'u': case 'p': return PyLong_FromUnsignedLongLong(ks__py_load_int(src, t->size, 0));
    case 'b': return PyBool_FromLong(*(const unsigned char *)src != 0);
    case 'f':
        if (t->size == 2) {
            ks_half h;
            memcpy(&h, src, 2);
            return PyFloat_FromDouble(ks_half_to_float(h));
        } else if (t->size == 4) {
            float f;
            memcpy(&f, src, 4);
            return PyFloat_FromDouble(f);
        } else {
            double d;
            memcpy(&d, src, 8);
            return PyFloat_FromDouble(d);
        }
    case 'B': {
        ks_bfloat16 b;
        memcpy(&b, src, 2);
        return PyFloat_FromDouble(ks_bfloat16_to_float(b));
    }
    case 'h': return ks__py_to_components('f', 2, 2, src);
    case 'H': return ks__py_to_components('B', 2, 2, src);
    case 'v': return ks__py_to_components(t->comp_kind, t->comp_size, t->size / t->comp_size, src);
    case 'r': return ks__py_record_new(t->rec, src);
    default: return PyBytes_FromStringAndSize((const char *)src, t->size);
    }
}

/* ---- struct classes ---------------------------------------------------------------------------- */

KS_PY_FN PyObject *ks__py_record_new(const ks_py_rec *rec, const void *bytes)
{
    if (!rec->type) {
        PyErr_Format(PyExc_RuntimeError, "the class of %s is not made yet", rec->name);
        return NULL;
    }
    ks__py_recobj *r = (ks__py_recobj *)rec->type->tp_alloc(rec->type, 0);
    if (!r)
        return NULL;
    r->rec = rec;
    if (bytes)
        memcpy(r->data, bytes, rec->size);
    else
        memset(r->data, 0, rec->size);
    return (PyObject *)r;
}

/* A field's value: an element, or a tuple of an array's elements. */
KS_PY_FN PyObject *ks__py_field_get(PyObject *self, void *closure)
{
    const ks_py_field *f = (const ks_py_field *)closure;
    const unsigned char *p = ((ks__py_recobj *)self)->data + f->offset;
    if (f->count == 1)
        return ks__py_to_type(&f->type, p);
    PyObject *tup = PyTuple_New((Py_ssize_t)f->count);
    for (size_t i = 0; tup && i < f->count; i++) {
        PyObject *v = ks__py_to_type(&f->type, p + i * f->type.size);
        if (!v) {
            Py_CLEAR(tup);
            break;
        }
        PyTuple_SET_ITEM(tup, (Py_ssize_t)i, v);
    }
    return tup;
}

KS_PY_FN int ks__py_field_set(PyObject *self, PyObject *v, void *closure)
{
    const ks_py_field *f = (const ks_py_field *)closure;
    ks__py_recobj *r = (ks__py_recobj *)self;
    ks_py_ctx c = {r->rec->name, f->name, NULL};
    char where[256];
    if (!v) {
        PyErr_Format(PyExc_AttributeError, "%s.%s cannot be deleted", r->rec->name, f->name);
        return -1;
    }
    unsigned char tmp[4096];
    size_t bytes = f->count * f->type.size;
    unsigned char *buf = bytes <= sizeof tmp ? tmp : PyMem_Malloc(bytes);
    if (!buf)
        return PyErr_NoMemory(), -1;
    int rc = 0;
    if (f->count == 1) {
        rc = ks__py_from_type(&c, &f->type, v, buf);
    } else {
        PyObject *seq = PySequence_Fast(v, "");
        if (!seq || PySequence_Fast_GET_SIZE(seq) != (Py_ssize_t)f->count) {
            PyErr_Clear();
            rc = ks__py_from_buffer(&c, v, (unsigned)bytes, buf);
            if (rc == 1) {
                PyErr_Format(PyExc_TypeError, "%s needs %zu elements", ks__py_ctx_text(&c, where, sizeof where),
                             f->count);
                rc = -1;
            }
        }
        for (size_t i = 0; seq && rc == 0 && i < f->count && PySequence_Fast_GET_SIZE(seq) == (Py_ssize_t)f->count; i++)
            rc = ks__py_from_type(&c, &f->type, PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i), buf + i * f->type.size);
        Py_XDECREF(seq);
    }
    if (rc == 0)
        memcpy(r->data + f->offset, buf, bytes);
    if (buf != tmp)
        PyMem_Free(buf);
    return rc;
}

KS_PY_FN int ks__py_rec_init(PyObject *self, PyObject *args, PyObject *kw)
{
    ks__py_recobj *r = (ks__py_recobj *)self;
    const ks_py_rec *rec = r->rec;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (n > (Py_ssize_t)rec->nfields) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zu field values, not %zd", rec->name, rec->nfields, n);
        return -1;
    }
    if (n == 1 && rec->nfields != 1 && PyObject_CheckBuffer(PyTuple_GET_ITEM(args, 0))) {
        ks_py_ctx c = {rec->name, NULL, "bytes"};
        return ks__py_from_buffer(&c, PyTuple_GET_ITEM(args, 0), (unsigned)rec->size, r->data) == 0 ? 0 : -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (ks__py_field_set(self, PyTuple_GET_ITEM(args, i), (void *)&rec->fields[i]) != 0)
            return -1;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (kw && PyDict_Next(kw, &pos, &key, &value)) {
        size_t i = 0;
        for (; i < rec->nfields; i++)
            if (PyUnicode_CompareWithASCIIString(key, rec->fields[i].name) == 0)
                break;
        if (i == rec->nfields) {
            PyErr_Format(PyExc_TypeError, "%s() has no field %R", rec->name, key);
            return -1;
        }
        if ((Py_ssize_t)i < n) {
            PyErr_Format(PyExc_TypeError, "%s() got field %R twice", rec->name, key);
            return -1;
        }
        if (ks__py_field_set(self, value, (void *)&rec->fields[i]) != 0)
            return -1;
    }
    return 0;
}

KS_PY_FN PyObject *ks__py_rec_repr(PyObject *self)
{
    ks__py_recobj *r = (ks__py_recobj *)self;
    PyObject *parts = PyList_New(0);
    for (size_t i = 0; parts && i < r->rec->nfields; i++) {
        PyObject *v = ks__py_field_get(self, (void *)&r->rec->fields[i]);
        PyObject *s = v ? PyUnicode_FromFormat("%s=%R", r->rec->fields[i].name, v) : NULL;
        Py_XDECREF(v);
        if (!s || PyList_Append(parts, s) != 0)
            Py_CLEAR(parts);
        Py_XDECREF(s);
    }
    if (!parts)
        return NULL;
    PyObject *sep = PyUnicode_FromString(", ");
    PyObject *body = sep ? PyUnicode_Join(sep, parts) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(parts);
    PyObject *out = body ? PyUnicode_FromFormat("%s(%U)", r->rec->name, body) : NULL;
    Py_XDECREF(body);
    return out;
}

KS_PY_FN PyObject *ks__py_rec_bytes(PyObject *self, PyObject *unused)
{
    (void)unused;
    ks__py_recobj *r = (ks__py_recobj *)self;
    return PyBytes_FromStringAndSize((const char *)r->data, (Py_ssize_t)r->rec->size);
}

KS_PY_FN PyObject *ks__py_rec_eq(PyObject *a, PyObject *b, int op)
{
    if ((op != Py_EQ && op != Py_NE) || Py_TYPE(a) != Py_TYPE(b))
        Py_RETURN_NOTIMPLEMENTED;
    ks__py_recobj *x = (ks__py_recobj *)a, *y = (ks__py_recobj *)b;
    int same = memcmp(x->data, y->data, x->rec->size) == 0;
    return PyBool_FromLong(op == Py_EQ ? same : !same);
}

KS_PY_FN int ks__py_rec_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    ks__py_recobj *r = (ks__py_recobj *)self;
    return PyBuffer_FillInfo(view, self, r->data, (Py_ssize_t)r->rec->size, 0, flags);
}

/* The rec of a class (its first base that is one of ours). */
KS_PY_FN ks_py_rec *ks__py_rec_of_class(PyObject *cls)
{
    PyObject *cap = PyObject_GetAttrString(cls, "__kstub_record__");
    ks_py_rec *rec = cap ? (ks_py_rec *)PyCapsule_GetPointer(cap, "kstub.record") : NULL;
    Py_XDECREF(cap);
    return rec;
}

/* NumPy's structured dtype of the struct: the fields' names, dtypes and offsets, and its size. */
KS_PY_FN PyObject *ks__py_type_dtype(const ks_py_type *t, size_t count)
{
    PyObject *base = NULL;
    char spec[32];
    switch (t->kind) {
    case 'i': case 'u': case 'f': case 'b':
        snprintf(spec, sizeof spec, "%s%c%u", t->kind == 'b' ? "|" : "<", t->kind, t->size);
        base = PyUnicode_FromString(spec);
        break;
    case 'p':
        snprintf(spec, sizeof spec, "<u%u", t->size);
        base = PyUnicode_FromString(spec);
        break;
    case 'r':
        base = Py_XNewRef(ks__py_rec_dtype(t->rec));
        break;
    case 'v':
        snprintf(spec, sizeof spec, "%c%c%u", t->comp_kind == 'b' ? '|' : '<', t->comp_kind, t->comp_size);
        base = Py_BuildValue("(si)", spec, (int)(t->size / t->comp_size));
        break;
    default:
        snprintf(spec, sizeof spec, "|V%u", t->size);
        base = PyUnicode_FromString(spec);
        break;
    }
    if (!base || count == 1)
        return base;
    PyObject *out = Py_BuildValue("(Nn)", base, (Py_ssize_t)count);
    return out;
}

KS_PY_FN PyObject *ks__py_rec_dtype(ks_py_rec *rec)
{
    if (rec->dtype)
        return rec->dtype;
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np)
        return NULL;
    PyObject *names = PyList_New(0), *formats = PyList_New(0), *offsets = PyList_New(0);
    for (size_t i = 0; names && formats && offsets && i < rec->nfields; i++) {
        PyObject *n = PyUnicode_FromString(rec->fields[i].name);
        PyObject *f = ks__py_type_dtype(&rec->fields[i].type, rec->fields[i].count);
        PyObject *o = PyLong_FromSize_t(rec->fields[i].offset);
        int bad = !n || !f || !o || PyList_Append(names, n) || PyList_Append(formats, f) || PyList_Append(offsets, o);
        Py_XDECREF(n);
        Py_XDECREF(f);
        Py_XDECREF(o);
        if (bad)
            Py_CLEAR(names);
    }
    PyObject *spec = names && formats && offsets
                         ? Py_BuildValue("{sOsOsOsn}", "names", names, "formats", formats, "offsets", offsets,
                                         "itemsize", (Py_ssize_t)rec->size)
                         : NULL;
    Py_XDECREF(names);
    Py_XDECREF(formats);
    Py_XDECREF(offsets);
    PyObject *d = spec ? PyObject_CallMethod(np, "dtype", "(OO)", spec, Py_True) : NULL;
    Py_XDECREF(spec);
    Py_DECREF(np);
    rec->dtype = d;
    return d;
}

KS_PY_FN PyObject *ks__py_rec_dtype_method(PyObject *cls, PyObject *unused)
{
    (void)unused;
    ks_py_rec *rec = ks__py_rec_of_class(cls);
    PyObject *d = rec ? ks__py_rec_dtype(rec) : NULL;
    return Py_XNewRef(d);
}

KS_PY_FN PyObject *ks__py_rec_alloc(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args;
    (void)kw;
    ks_py_rec *rec = ks__py_rec_of_class((PyObject *)type);
    if (!rec)
        return NULL;
    ks__py_recobj *r = (ks__py_recobj *)type->tp_alloc(type, 0);
    if (r) {
        r->rec = rec;
        memset(r->data, 0, rec->size);
    }
    return (PyObject *)r;
}

static PyMethodDef ks__py_rec_methods[] = {
    {"__bytes__", ks__py_rec_bytes, METH_NOARGS, "The struct's bytes, as the kernel receives them."},
    {"dtype", ks__py_rec_dtype_method, METH_NOARGS | METH_CLASS,
     "NumPy's structured dtype of the struct (the same names, offsets and size)."},
    {NULL, NULL, 0, NULL},
};

/* Makes rec's class and adds it to module. */
KS_PY_FN int ks_py_record_class(PyObject *module, const char *module_name, ks_py_rec *rec)
{
    PyGetSetDef *gs = PyMem_Calloc(rec->nfields + 1, sizeof *gs);
    if (!gs)
        return PyErr_NoMemory(), -1;
    for (size_t i = 0; i < rec->nfields; i++) {
        gs[i].name = rec->fields[i].name;
        gs[i].get = ks__py_field_get;
        gs[i].set = ks__py_field_set;
        gs[i].closure = (void *)&rec->fields[i];
    }
    char *qual = PyMem_Malloc(strlen(module_name) + strlen(rec->name) + 2);
    if (!qual)
        return PyErr_NoMemory(), -1;
    sprintf(qual, "%s.%s", module_name, rec->name);
    PyType_Slot slots[] = {
        {Py_tp_new, (void *)ks__py_rec_alloc},
        {Py_tp_init, (void *)ks__py_rec_init},
        {Py_tp_repr, (void *)ks__py_rec_repr},
        {Py_tp_richcompare, (void *)ks__py_rec_eq},
        {Py_tp_getset, gs},
        {Py_tp_methods, ks__py_rec_methods},
        {Py_bf_getbuffer, (void *)ks__py_rec_getbuffer},
        {Py_tp_doc, (void *)"A struct a kernel takes by value, laid out as on the device: fields as attributes."},
        {0, NULL},
    };
    PyType_Spec spec = {qual, (int)(offsetof(ks__py_recobj, data) + rec->size), 0, Py_TPFLAGS_DEFAULT, slots};
    PyObject *cls = PyType_FromSpec(&spec);   /* copies the name's pointer: qual stays allocated */
    if (!cls)
        return -1;
    PyObject *cap = PyCapsule_New(rec, "kstub.record", NULL);
    if (!cap || PyObject_SetAttrString(cls, "__kstub_record__", cap) != 0) {
        Py_XDECREF(cap);
        Py_DECREF(cls);
        return -1;
    }
    Py_DECREF(cap);
    rec->type = (PyTypeObject *)cls;
    return PyModule_AddObjectRef(module, rec->name, cls);
}

/* ---- the arguments of a call ------------------------------------------------------------------- */

/* Interns a kernel's names (module init). */
KS_PY_FN int ks_py_kernel_init(ks_py_kernel *k)
{
    Py_ssize_t n = k->nparams + KS_PY_NLAUNCH;
    k->interned = PyMem_Calloc((size_t)n, sizeof *k->interned);
    if (!k->interned)
        return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(k->interned[i] = PyUnicode_InternFromString(k->params[i])))
            return -1;
    if (!(k->owner = PyMem_Malloc(strlen(k->name) + 3)))
        return PyErr_NoMemory(), -1;
    sprintf(k->owner, "%s()", k->name);
    return ks__py_known_init();
}

/* ks_py_args the whole way: sorts the keywords by name, refuses what does not fit, and keeps
 * the slots found for the next call of the same keyword names and positional count. */
KS_PY_FN int ks__py_args_sort(ks_py_kernel *k, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                              PyObject **av)
{
    Py_ssize_t n = k->nparams + KS_PY_NLAUNCH;
    for (Py_ssize_t i = 0; i < n; i++)
        av[i] = NULL;
    if (nargs > k->nparams) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional argument%s (the kernel's) but %zd were given; "
                     "grid=, block=, shared=, stream= and the launch attributes are keyword-only",
                     k->name, k->nparams, k->nparams == 1 ? "" : "s", nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        av[i] = args[i];
    Py_CLEAR(k->kw_last);          /* kw_slot is rewritten below */
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t j = 0; j < nkw; j++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, j);
        Py_ssize_t i = 0;
        for (; i < n && k->interned[i] != key; i++)
            ;
        if (i == n)
            for (i = 0; i < n && PyUnicode_Compare(k->interned[i], key) != 0; i++)
                ;
        if (i == n) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", k->name, key);
            return -1;
        }
        if (av[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument %R", k->name, key);
            return -1;
        }
        av[i] = args[nargs + j];
        if (j < KS_PY_KW_FAST)
            k->kw_slot[j] = (uint16_t)i;
    }
    for (Py_ssize_t i = 0; i < k->nparams; i++)
        if (!av[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing argument '%s' (%s)", k->name, k->params[i], k->ctypes[i]);
            return -1;
        }
    if (!av[k->nparams] || !av[k->nparams + 1]) {
        PyErr_Format(PyExc_TypeError, "%s() needs the launch as keyword arguments: grid= and block= "
                     "(an int or a tuple of up to 3)", k->name);
        return -1;
    }
    /* Good: every keyword took a slot of its own (so nkw <= n), kw_slot says which. */
    if (kwnames && nkw <= KS_PY_KW_FAST && n <= 65536) {
        k->kw_last = Py_NewRef(kwnames);
        k->kw_nargs = nargs;
    }
    return 0;
}

/* Sorts a vectorcall's arguments into av (nparams + KS_PY_NLAUNCH slots, NULL where not given).
 * A call with the keyword names and positional count of the kernel's last good call (its call
 * site's constant tuple, as a rule) takes the slots found then, here; any other call sorts them
 * again, by pointer against the interned names first, and names them in every refusal. */
KS_PY_INLINE int ks_py_args(ks_py_kernel *k, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                            PyObject **av)
{
    if (KS_PY_LIKELY(kwnames && kwnames == k->kw_last && nargs == k->kw_nargs)) {
        /* That call had every parameter, each in a slot of its own: the positional ones and
         * the keywords fill the kernel's slots, and only the launch slots may stay empty. */
        Py_ssize_t nkw = Py_SIZE(kwnames);
        PyObject **lv = av + k->nparams;
        for (Py_ssize_t i = 0; i < nargs; i++) {
            av[i] = args[i];
#if defined(__GNUC__)
            __asm__("" : "+r"(i));   /* a few stores here, not a call of memcpy */
#endif
        }
        for (int i = 0; i < KS_PY_NLAUNCH; i++)
            lv[i] = NULL;
        for (Py_ssize_t j = 0; j < nkw; j++)
            av[k->kw_slot[j]] = args[nargs + j];
        return 0;
    }
    return ks__py_args_sort(k, args, nargs, kwnames, av);
}

KS_PY_COLD int ks__py_uint(const char *fn, const char *what, PyObject *o, unsigned long long max, unsigned long long *v)
{
    if (PyLong_CheckExact(o)) {    /* an int in range: read here; the rest, and every refusal, below */
        int over = 0;
        long long x = PyLong_AsLongLongAndOverflow(o, &over);
        if (over == 0 && x >= 0 && (unsigned long long)x <= max) {
            *v = (unsigned long long)x;
            return 0;
        }
    }
    if (PyFloat_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s(): %s needs an integer, not %.100s", fn, what, Py_TYPE(o)->tp_name);
        return -1;
    }
    PyObject *n = PyNumber_Index(o);
    if (!n)
        return -1;
    int neg = PyObject_RichCompareBool(n, Py_False, Py_LT);
    *v = neg ? 0 : PyLong_AsUnsignedLongLong(n);
    Py_DECREF(n);
    if (neg || (*v == (unsigned long long)-1 && PyErr_Occurred()) || *v > max) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "%s(): %s is out of range (0 to %llu)", fn, what, max);
        return -1;
    }
    return 0;
}

/* grid= or block=: an int, or a tuple of 1 to 3 ints (x, y, z). */
KS_PY_COLD int ks__py_dim3_of(const char *fn, const char *what, PyObject *o, ks_dim3 *d)
{
    unsigned long long v[3] = {1, 1, 1};
    if (PyTuple_Check(o)) {
        Py_ssize_t n = PyTuple_GET_SIZE(o);
        if (n < 1 || n > 3) {
            PyErr_Format(PyExc_TypeError, "%s(): %s needs an int or a tuple of 1 to 3 ints, not %zd", fn, what, n);
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++)
            if (ks__py_uint(fn, what, PyTuple_GET_ITEM(o, i), UINT_MAX, &v[i]) != 0)
                return -1;
    } else if (ks__py_uint(fn, what, o, UINT_MAX, &v[0]) != 0) {
        return -1;
    }
    d->x = (unsigned)v[0];
    d->y = (unsigned)v[1];
    d->z = (unsigned)v[2];
    return 0;
}

/* grid=, block= or cluster= as a tuple of 1 to 3 exact ints, each in range: 1 with *d set;
 * else 0 (no exception, nothing called): the whole way then. */
KS_PY_FN int ks__py_dim3_tuple(PyObject *o, ks_dim3 *d)
{
    long long x;
    unsigned v[3] = {1, 1, 1};
    Py_ssize_t n = Py_SIZE(o);
    if (n < 1 || n > 3)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!ks__py_exact_ll(PyTuple_GET_ITEM(o, i), &x, 1) || x < 0 || x > (long long)UINT_MAX)
            return 0;
        v[i] = (unsigned)x;
    }
    d->x = v[0];
    d->y = v[1];
    d->z = v[2];
    return 1;
}

/* The same, an exact int in range taken inline. */
KS_PY_INLINE int ks__py_dim3_fast(PyObject *o, ks_dim3 *d)
{
    long long x;
    if (KS_PY_LIKELY(ks__py_exact_ll(o, &x, 1))) {
        if (KS_PY_UNLIKELY(x < 0 || x > (long long)UINT_MAX))
            return 0;
        d->x = (unsigned)x;
        d->y = d->z = 1;
        return 1;
    }
    return PyTuple_CheckExact(o) && ks__py_dim3_tuple(o, d);
}

KS_PY_INLINE int ks__py_dim3(const char *fn, const char *what, PyObject *o, ks_dim3 *d)
{
    return ks__py_dim3_fast(o, d) ? 0 : ks__py_dim3_of(fn, what, o, d);
}

/* How a stream object gives its handle, found once per type: 1 __cuda_stream__() (cuda.core,
 * and CuPy and torch where they have it), 2 .cuda_stream (torch), 3 .ptr (CuPy). */
static PyTypeObject *ks__py_stream_type;
static int ks__py_stream_how;

KS_PY_FN int ks__py_stream_read(PyObject *o, int how, uintptr_t *h)
{
    /* torch's .cuda_stream and CuPy's .ptr through their C descriptors, as the arrays' reads are. */
    PyObject *v = how == 1 ? PyObject_CallMethodNoArgs(o, ks__py_k.s_cuda_stream_proto)
                : how == 2 ? ks__py_read_attr(&ks__py_k.stream_read, 0, o)
                           : ks__py_read_attr(&ks__py_k.mem_read, 0, o);
    if (!v)
        return -1;
    int rc;
    if (how == 1)
        rc = PyTuple_Check(v) && PyTuple_GET_SIZE(v) == 2 ? ks__py_addr_of(PyTuple_GET_ITEM(v, 1), h) : 1;
    else
        rc = PyLong_Check(v) ? ks__py_addr_of(v, h) : 1;
    Py_DECREF(v);
    return rc;
}

/* 2 for a torch stream type (a subclass of torch._C._CudaStreamBase: .cuda_stream), 3 for a
 * CuPy one (cupy.cuda.stream._BaseStream, as CuPy 14 names it, or BaseStream: .ptr), else 0: their documented handles are one
 * attribute away, where __cuda_stream__() is a method call that builds a tuple each time.
 * Asked only when a stream of a type not seen last time comes; a module not imported is not. */
KS_PY_FN int ks__py_stream_known(PyTypeObject *t)
{
    static const struct { const char *mod, *type; int how; } known[] = {
        {"torch._C", "_CudaStreamBase", 2}, {"cupy.cuda.stream", "_BaseStream", 3},
        {"cupy.cuda.stream", "BaseStream", 3}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        PyTypeObject *base = ks__py_find_type(known[i].mod, known[i].type);
        int is = base && PyType_IsSubtype(t, base);
        Py_XDECREF(base);
        if (is)
            return known[i].how;
    }
    return 0;
}

/* A stream: None (the legacy default stream), an int handle, an object with
 * __cuda_stream__() (cuda.core, CuPy, torch), or one with .cuda_stream (torch) or .ptr (CuPy);
 * a torch or CuPy stream is read through its own attribute first (ks__py_stream_known).
 * The handle is read on every call; only the way to read it is kept per type. */
KS_PY_FN int ks_py_stream(const char *fn, PyObject *o, ks_stream *s)
{
    uintptr_t h;
    if (!o || o == Py_None) {
        *s = NULL;
        return 0;
    }
    if (Py_TYPE(o) == ks__py_stream_type) {
        int rc = ks__py_stream_read(o, ks__py_stream_how, &h);
        if (rc == 0) {
            *s = (ks_stream)h;
            return 0;
        }
        if (rc < 0)
            return -1;
    }
    if (PyLong_Check(o)) {
        if (ks__py_addr_of(o, &h) != 0)
            return -1;
        *s = (ks_stream)h;
        return 0;
    }
    int known = ks__py_stream_known(Py_TYPE(o));
    for (int i = known ? 0 : 1; i <= 3; i++) {
        int how = i == 0 ? known : i;
        int rc = ks__py_stream_read(o, how, &h);
        if (rc < 0 && !PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        if (rc == 0) {
            Py_XSETREF(ks__py_stream_type, (PyTypeObject *)Py_NewRef(Py_TYPE(o)));
            ks__py_stream_how = how;
            *s = (ks_stream)h;
            return 0;
        }
    }
    PyErr_Format(PyExc_TypeError, "%s(): stream= needs None, an int handle or an object with __cuda_stream__, "
                 "not %.100s", fn, Py_TYPE(o)->tp_name);
    return -1;
}

/* The launch from av[nparams ...]: grid, block, shared, stream, cluster, cooperative, pdl, priority. */
KS_PY_COLD int ks__py_launch_of(const ks_py_kernel *k, PyObject **av, ks_launch *l, ks_launch_attrs *attrs)
{
    PyObject **lv = av + k->nparams;
    if (ks__py_dim3(k->name, "grid", lv[0], &l->grid) != 0 || ks__py_dim3(k->name, "block", lv[1], &l->block) != 0)
        return -1;
    unsigned long long v = 0;
    if (lv[2] && ks__py_uint(k->name, "shared", lv[2], UINT_MAX, &v) != 0)
        return -1;
    l->shared_bytes = (unsigned)v;
    if (ks_py_stream(k->name, lv[3], &l->stream) != 0)
        return -1;
    l->attrs = NULL;
    if (!lv[4] && !lv[5] && !lv[6] && !lv[7])
        return 0;
    *attrs = ks_launch_attrs_none();
    if (lv[4] && lv[4] != Py_None && ks__py_dim3(k->name, "cluster", lv[4], &attrs->cluster) != 0)
        return -1;
    int b;
    if (lv[5] && (b = PyObject_IsTrue(lv[5])) != 0) {
        if (b < 0)
            return -1;
        attrs->flags |= KS_LAUNCH_COOPERATIVE;
    }
    if (lv[6] && (b = PyObject_IsTrue(lv[6])) != 0) {
        if (b < 0)
            return -1;
        attrs->flags |= KS_LAUNCH_PDL;
    }
    if (lv[7] && lv[7] != Py_None) {
        ks_py_ctx c = {k->owner, "priority", "int"};
        char pr[4];
        if (ks__py_int(&c, lv[7], 'i', 4, pr) != 0)
            return -1;
        memcpy(&attrs->priority, pr, 4);
        attrs->flags |= KS_LAUNCH_PRIORITY;
    }
    l->attrs = attrs;
    return 0;
}

/* The same, grid= and block= as ints or tuples of ints, shared= absent or an int, no launch
 * attribute, and stream= absent, None or an int handle taken here; the rest the whole way. */
KS_PY_INLINE int ks_py_launch(const ks_py_kernel *k, PyObject **av, ks_launch *l, ks_launch_attrs *attrs)
{
    PyObject **lv = av + k->nparams;
    long long x = 0;
    if (KS_PY_LIKELY(!lv[4] && !lv[5] && !lv[6] && !lv[7] && (!lv[2] || ks__py_exact_ll(lv[2], &x, 1)) &&
                     x >= 0 && x <= (long long)UINT_MAX && ks__py_dim3_fast(lv[0], &l->grid) &&
                     ks__py_dim3_fast(lv[1], &l->block))) {
        l->shared_bytes = (unsigned)x;
        l->attrs = NULL;
        PyObject *so = lv[3];
        if (!so || so == Py_None) {
            l->stream = NULL;
            return 0;
        }
        if (ks__py_exact_ll(so, &x, 0) && x >= 0) {
            l->stream = (ks_stream)(uintptr_t)x;
            return 0;
        }
        return ks_py_stream(k->name, so, &l->stream);
    }
    return ks__py_launch_of(k, av, l, attrs);
}


/* ---- device variables -------------------------------------------------------------------------- */

/* A __device__ or __constant__ variable: its element type and count, and the generated accessors. */
typedef struct ks_py_global {
    const char *name;
    const char *ctype;             /* its element's C type, for messages */
    ks_py_type elem;
    size_t count;                  /* elements (1 for a scalar) */
    int is_array;
    ks_status (*write)(size_t first, const void *src, size_t n, ks_stream s);
    ks_status (*read)(size_t first, void *dst, size_t n, ks_stream s);
    ks_status (*address)(void **addr);
} ks_py_global;

typedef struct ks__py_globj {
    PyObject_HEAD
    const ks_py_global *g;
} ks__py_globj;

/* Elements [first, first + n) from a value (n == 1, not an array) or a sequence or buffer of n. */
KS_PY_FN int ks__py_glob_put(const ks_py_global *g, PyObject *value, size_t first, size_t n, PyObject *stream)
{
    char owner[160];
    snprintf(owner, sizeof owner, "variable %s", g->name);
    ks_py_ctx c = {owner, NULL, g->ctype};
    ks_stream s;
    if (ks_py_stream(owner, stream, &s) != 0)
        return -1;
    if (first > g->count || n > g->count - first) {
        PyErr_Format(PyExc_IndexError, "variable %s has %zu elements: [%zu, %zu) is past them", g->name, g->count,
                     first, first + n);
        return -1;
    }
    size_t bytes = n * g->elem.size;
    unsigned char *buf = PyMem_Malloc(bytes ? bytes : 1);
    if (!buf)
        return PyErr_NoMemory(), -1;
    int rc = 0;
    if (!g->is_array) {
        rc = ks__py_from_type(&c, &g->elem, value, buf);
    } else {
        PyObject *seq = PyTuple_Check(value) || PyList_Check(value) ? Py_NewRef(value) : NULL;
        if (!seq && !PyObject_CheckBuffer(value))
            seq = PySequence_Fast(value, "");
        if (!seq) {
            PyErr_Clear();
            rc = ks__py_from_buffer(&c, value, (unsigned)bytes, buf);
            if (rc == 1) {
                PyErr_Format(PyExc_TypeError, "variable %s needs a sequence of %zu elements, not %.100s", g->name, n,
                             Py_TYPE(value)->tp_name);
                rc = -1;
            }
        } else if (PySequence_Fast_GET_SIZE(seq) != (Py_ssize_t)n) {
            PyErr_Format(PyExc_ValueError, "variable %s: %zu elements wanted, %zd given", g->name, n,
                         PySequence_Fast_GET_SIZE(seq));
            rc = -1;
        }
        for (size_t i = 0; seq && rc == 0 && i < n; i++)
            rc = ks__py_from_type(&c, &g->elem, PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i), buf + i * g->elem.size);
        Py_XDECREF(seq);
    }
    if (rc == 0) {
        ks_status st = g->write(first, buf, n, s);
        if (st != KS_OK) {
            ks_py_raise_status(st);
            rc = -1;
        }
    }
    PyMem_Free(buf);
    return rc;
}

KS_PY_FN PyObject *ks__py_glob_take(const ks_py_global *g, size_t first, size_t n, PyObject *stream, int one)
{
    char owner[160];
    snprintf(owner, sizeof owner, "variable %s", g->name);
    ks_stream s;
    if (ks_py_stream(owner, stream, &s) != 0)
        return NULL;
    if (first > g->count || n > g->count - first) {
        PyErr_Format(PyExc_IndexError, "variable %s has %zu elements: [%zu, %zu) is past them", g->name, g->count,
                     first, first + n);
        return NULL;
    }
    unsigned char *buf = PyMem_Malloc(n > 0 ? n * g->elem.size : 1);
    if (!buf)
        return PyErr_NoMemory();
    ks_status st = g->read(first, buf, n, s);
    PyObject *out = NULL;
    if (st != KS_OK) {
        ks_py_raise_status(st);
    } else if (one) {
        out = ks__py_to_type(&g->elem, buf);
    } else {
        out = PyList_New((Py_ssize_t)n);
        for (size_t i = 0; out && i < n; i++) {
            PyObject *v = ks__py_to_type(&g->elem, buf + i * g->elem.size);
            if (!v) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, v);
        }
    }
    PyMem_Free(buf);
    return out;
}

KS_PY_FN PyObject *ks__py_glob_set(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"value", "stream", NULL};
    PyObject *value, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$O:set", names, &value, &stream))
        return NULL;
    const ks_py_global *g = ((ks__py_globj *)self)->g;
    if (ks__py_glob_put(g, value, 0, g->count, stream) != 0)
        return NULL;
    Py_RETURN_NONE;
}

KS_PY_FN PyObject *ks__py_glob_get(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"stream", NULL};
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O:get", names, &stream))
        return NULL;
    const ks_py_global *g = ((ks__py_globj *)self)->g;
    return ks__py_glob_take(g, 0, g->count, stream, !g->is_array);
}

KS_PY_FN PyObject *ks__py_glob_write(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"first", "values", "stream", NULL};
    Py_ssize_t first;
    PyObject *values, *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "nO|$O:write", names, &first, &values, &stream))
        return NULL;
    const ks_py_global *g = ((ks__py_globj *)self)->g;
    Py_ssize_t n = PyObject_Length(values);
    if (n < 0 || first < 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_IndexError, "variable %s: first must be 0 or more", g->name);
        return NULL;
    }
    if (ks__py_glob_put(g, values, (size_t)first, (size_t)n, stream) != 0)
        return NULL;
    Py_RETURN_NONE;
}

KS_PY_FN PyObject *ks__py_glob_read(PyObject *self, PyObject *args, PyObject *kw)
{
    static char *names[] = {"first", "count", "stream", NULL};
    Py_ssize_t first, count;
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "nn|$O:read", names, &first, &count, &stream))
        return NULL;
    const ks_py_global *g = ((ks__py_globj *)self)->g;
    if (first < 0 || count < 0) {
        PyErr_Format(PyExc_IndexError, "variable %s: first and count must be 0 or more", g->name);
        return NULL;
    }
    return ks__py_glob_take(g, (size_t)first, (size_t)count, stream, 0);
}

KS_PY_FN PyObject *ks__py_glob_address(PyObject *self, void *unused)
{
    (void)unused;
    void *a = NULL;
    ks_status st = ((ks__py_globj *)self)->g->address(&a);
    if (st != KS_OK)
        return ks_py_raise_status(st);
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)a);
}

KS_PY_FN PyObject *ks__py_glob_attr(PyObject *self, void *which)
{
    const ks_py_global *g = ((ks__py_globj *)self)->g;
    switch ((int)(intptr_t)which) {
    case 0: return PyUnicode_FromString(g->name);
    case 1: return PyLong_FromSize_t(g->count);
    case 2: return PyLong_FromSize_t(g->count * g->elem.size);
    default: return PyUnicode_FromString(g->ctype);
    }
}

KS_PY_FN PyObject *ks__py_glob_repr(PyObject *self)
{
    const ks_py_global *g = ((ks__py_globj *)self)->g;
    if (g->is_array)
        return PyUnicode_FromFormat("<device variable %s: %zu x %s>", g->name, g->count, g->ctype);
    return PyUnicode_FromFormat("<device variable %s: %s>", g->name, g->ctype);
}

static PyMethodDef ks__py_glob_methods[] = {
    {"set", (PyCFunction)(void (*)(void))ks__py_glob_set, METH_VARARGS | METH_KEYWORDS,
     "set(value, *, stream=None): the whole variable (an array: a sequence of all its elements)."},
    {"get", (PyCFunction)(void (*)(void))ks__py_glob_get, METH_VARARGS | METH_KEYWORDS,
     "get(*, stream=None): the value (an array: a list of its elements), once it is in host memory."},
    {"write", (PyCFunction)(void (*)(void))ks__py_glob_write, METH_VARARGS | METH_KEYWORDS,
     "write(first, values, *, stream=None): elements from first on."},
    {"read", (PyCFunction)(void (*)(void))ks__py_glob_read, METH_VARARGS | METH_KEYWORDS,
     "read(first, count, *, stream=None): count elements from first on, as a list."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef ks__py_glob_getset[] = {
    {"address", ks__py_glob_address, NULL, "Its device address in the current context.", NULL},
    {"name", ks__py_glob_attr, NULL, "Its name in the source.", (void *)0},
    {"count", ks__py_glob_attr, NULL, "Its element count (1: not an array).", (void *)1},
    {"nbytes", ks__py_glob_attr, NULL, "Its size in bytes.", (void *)2},
    {"ctype", ks__py_glob_attr, NULL, "Its element's C type.", (void *)3},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Adds the accessor objects of the module's n variables (their class, DeviceVariable, once). */
KS_PY_FN int ks_py_globals(PyObject *module, const char *module_name, const ks_py_global *gs, size_t n)
{
    char *qual = PyMem_Malloc(strlen(module_name) + 20);
    if (!qual)
        return PyErr_NoMemory(), -1;
    sprintf(qual, "%s.DeviceVariable", module_name);
    PyType_Slot slots[] = {
        {Py_tp_methods, ks__py_glob_methods},
        {Py_tp_getset, ks__py_glob_getset},
        {Py_tp_repr, (void *)ks__py_glob_repr},
        {Py_tp_doc, (void *)"A __device__ or __constant__ variable of the module's image, typed as in the source."},
        {0, NULL},
    };
    PyType_Spec spec = {qual, (int)sizeof(ks__py_globj), 0, Py_TPFLAGS_DEFAULT, slots};
    PyObject *cls = PyType_FromSpec(&spec);
    if (!cls)
        return -1;
    int rc = PyModule_AddObjectRef(module, "DeviceVariable", cls);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        ks__py_globj *o = PyObject_New(ks__py_globj, (PyTypeObject *)cls);
        if (!o) {
            rc = -1;
            break;
        }
        o->g = &gs[i];
        rc = PyModule_AddObject(module, gs[i].name, (PyObject *)o);
        if (rc != 0)
            Py_DECREF(o);
    }
    Py_DECREF(cls);
    return rc;
}

/* An enum of the source as an IntEnum of the module, from its enumerators' names and values. */
typedef struct ks_py_enumerator {
    const char *name;
    long long value;
} ks_py_enumerator;

KS_PY_FN int ks_py_enum_class(PyObject *module, const char *name, const ks_py_enumerator *e, size_t n)
{
    PyObject *enum_mod = PyImport_ImportModule("enum");
    PyObject *items = enum_mod ? PyList_New(0) : NULL;
    for (size_t i = 0; items && i < n; i++) {
        PyObject *it = Py_BuildValue("(sL)", e[i].name, e[i].value);
        if (!it || PyList_Append(items, it) != 0)
            Py_CLEAR(items);
        Py_XDECREF(it);
    }
    PyObject *cls = items ? PyObject_CallMethod(enum_mod, "IntEnum", "(sO)", name, items) : NULL;
    Py_XDECREF(items);
    Py_XDECREF(enum_mod);
    if (!cls)
        return -1;
    PyObject *modname = PyModule_GetNameObject(module);
    if (modname) {
        PyObject_SetAttrString(cls, "__module__", modname);
        Py_DECREF(modname);
    }
    PyErr_Clear();
    return PyModule_AddObject(module, name, cls) == 0 ? 0 : (Py_DECREF(cls), -1);
}

/* What an instance's function returns when an argument's dtype does not fit it (probe mode). */
#if defined(__GNUC__)
__attribute__((unused))
#endif
static char ks__py_nofit_marker;
#define KS_PY_NOFIT ((PyObject *)&ks__py_nofit_marker)

#endif /* KSTUB_PYTHON_H */
