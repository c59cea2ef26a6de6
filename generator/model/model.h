/*
 * model.h — the generator's signature model: what the front end (walk.h)
 * learns about each kernel, as data, and its builders and free (model.c).
 * The names a target gives (c_name, descriptor, guard, ...) are slots the
 * naming stage (naming.h) fills after the parse; the front end leaves them
 * NULL.
 *
 * The generator, one header per component (docs/design.md draws the map):
 *   walk.h (front/ inside)    parse: .cu -> this model
 *   target.h                 an output target: templates, suffixes, naming table
 *   naming.h                 name(target): every generated identifier
 *   emit.h, render.h         emit(target): values, templates, named pieces
 *   image.h, depfile.h, compdb.h, inputs.h, options.h, cachecmd.h, cli.h
 *   util.h                   buffers, files, paths, the diagnostic sink
 *
 * The return convention, everywhere in generator/: a function that can
 * fail returns 0, or -1 after reporting every problem through the
 * diagnostic sink (util.h), which counts them; results come back through
 * out-parameters. One that cannot place its own diagnostic returns -1 with
 * the reason through an out-parameter, and its caller reports it.
 * Predicates return 1/0 and never fail. Only main() (and the diff and cache
 * subcommands' own mains it hands argv to) turns results into exit statuses.
 */
#ifndef KSTUB_MODEL_H
#define KSTUB_MODEL_H

#include <stddef.h>


/*
 * The typed model. The front end (walk.c, typemap.c) fills it from libclang;
 * naming.c gives every generated identifier; emit.c and manifest.c spell it.
 * No stage after the front end reads C text: types are structure.
 */

/* Scalar types C names exactly: builtins and the <stdint.h>/<stddef.h>
 * typedefs (kept by name, so "int64_t n" stays int64_t rather than long). */
#define KS_SCALAR_LIST(X) \
    X(BOOL, "bool", "bool") X(CHAR, "char", "char") X(SCHAR, "signed char", "signedchar") \
    X(UCHAR, "unsigned char", "uchar") X(SHORT, "short", "short") \
    X(USHORT, "unsigned short", "ushort") X(INT, "int", "int") X(UINT, "unsigned int", "uint") \
    X(LONG, "long", "long") X(ULONG, "unsigned long", "ulong") X(LLONG, "long long", "longlong") \
    X(ULLONG, "unsigned long long", "ulonglong") X(FLOAT, "float", "float") \
    X(DOUBLE, "double", "double") X(SIZE_T, "size_t", "size_t") \
    X(PTRDIFF_T, "ptrdiff_t", "ptrdiff_t") X(INTPTR_T, "intptr_t", "intptr_t") \
    X(UINTPTR_T, "uintptr_t", "uintptr_t") X(INTMAX_T, "intmax_t", "intmax_t") \
    X(UINTMAX_T, "uintmax_t", "uintmax_t") X(INT8_T, "int8_t", "int8_t") \
    X(INT16_T, "int16_t", "int16_t") X(INT32_T, "int32_t", "int32_t") \
    X(INT64_T, "int64_t", "int64_t") X(UINT8_T, "uint8_t", "uint8_t") \
    X(UINT16_T, "uint16_t", "uint16_t") X(UINT32_T, "uint32_t", "uint32_t") \
    X(UINT64_T, "uint64_t", "uint64_t")

typedef enum ks_scalar {
#define KS_SCALAR_ENUM(id, c, tag) KS_SCALAR_##id,
    KS_SCALAR_LIST(KS_SCALAR_ENUM)
#undef KS_SCALAR_ENUM
    KS_SCALAR_COUNT
} ks_scalar;

/* CUDA types libkstub knows under its own names. */
typedef enum ks_special {
    KS_SPECIAL_HALF,        /* __half          -> ks_half */
    KS_SPECIAL_HALF2,       /* __half2         -> ks_half2 */
    KS_SPECIAL_BFLOAT16,    /* __nv_bfloat16   -> ks_bfloat16 */
    KS_SPECIAL_BFLOAT162,   /* __nv_bfloat162  -> ks_bfloat162 */
    KS_SPECIAL_TENSORMAP,   /* CUtensorMap_st  -> CUtensorMap (cuda.h) */
    KS_SPECIAL_COUNT
} ks_special;

typedef enum ks_base_kind {
    KS_BASE_VOID,
    KS_BASE_SCALAR,         /* .scalar */
    KS_BASE_RECORD,         /* .def: a struct or union of model->defs */
    KS_BASE_ENUM,           /* .def: an enum of model->defs */
    KS_BASE_VECTOR,         /* .vector: a CUDA vector type, "float4" */
    KS_BASE_SPECIAL         /* .special */
} ks_base_kind;

enum { KS_QUAL_CONST = 1, KS_QUAL_VOLATILE = 2, KS_QUAL_RESTRICT = 4 };

/* A type as a parameter or field uses it: a base with its qualifiers, then
 * pointer levels (ptr_quals[0] is the pointer to the base, the last one the
 * outermost), then array dimensions (fields only). */
typedef struct ks_type {
    ks_base_kind base;
    unsigned quals;            /* KS_QUAL_* on the base */
    ks_scalar scalar;
    ks_special special;
    size_t def;                /* index into ks_model.defs */
    char *vector;
    unsigned *ptr_quals;
    size_t nptrs;
    long long *dims;
    size_t ndims;
    int tag;                   /* an empty class by value (std::integral_constant<int, 4>,
                                  std::true_type, struct Tag {}): one byte nvcc passes and
                                  the stub packs itself (base is unsigned char); the caller
                                  passes nothing, its value being fixed by the type */
} ks_type;

typedef struct ks_field {
    char *name;                /* the member's name; NULL for an anonymous member */
    char *from;                /* a field of a base class, flattened into the record: that
                                  class's own name ("Base" of ns::Base<int>); NULL for the
                                  record's own fields. naming.c renames it "<from>_<name>"
                                  where another field of the record has its name */
    char *c_name;              /* naming.c's: the name, or ks__anonN */
    /* naming.c's, a record's fields: the names of their offset assertions (the
     * C99 form declares a typedef of each), in the mirror ("<type>_<c_name>")
     * and where the record is the application's own, named by its own name
     * ("<type>_field_<name>"; NULL for an anonymous member) */
    char *assert_id, *own_assert_id;
    ks_type type;
    long offset, size;
} ks_field;

typedef struct ks_enumerator {
    char *name;
    char *c_name;              /* naming.c's: the constant's macro, "<enum>_<name>" */
    long long value;           /* as unsigned long long when the enum is unsigned */
} ks_enumerator;

/* KS_DEF_ARRAY: the array a parameter points to ("float (*x)[28]"), a C
 * typedef of its element type (fields[0].type, with the dimensions) so the
 * parameter is a plain pointer to it: "float_arr28 *x".
 * KS_DEF_FUNCTION: the function type a parameter points to ("float (*op)(float)",
 * a device function's address), a C typedef of the function type
 * (fields[0].type the return type, fields[1..] the parameters' types; naming.c
 * names the fields) so the parameter is a plain pointer to it: "float_fn_float *op".
 * size and align are the pointer's. */
typedef enum ks_def_kind {
    KS_DEF_STRUCT, KS_DEF_UNION, KS_DEF_ENUM, KS_DEF_ARRAY, KS_DEF_FUNCTION
} ks_def_kind;

/* A struct, union or enum a kernel names. By value it is defined (complete:
 * layout known); through pointers only it is declared. */
typedef struct ks_def {
    ks_def_kind kind;
    char *qname;               /* C++ name, "ns::Params"; for a member's unnamed record
                                  "Outer::pair", or "Outer::(anonymous N)" for an
                                  anonymous member (the front end's key, never output) */
    int in_member;             /* an unnamed record: the type of one member of owner */
    size_t owner;              /* ... the def whose member it is */
    size_t member_field;       /* ... and that member's index in owner's fields */
    char *member;              /* naming.c's: that member's C name; NULL otherwise */
    char *c_name;              /* naming.c's */
    char **pad_names;          /* naming.c's: its mirror's padding members, one per
                                  ks_def_gaps gap, in order */
    size_t npad_names;
    char *template_args;       /* a class template specialization ("ns::Params<float, 4>"):
                                  its arguments as clang prints them, "float, 4"; NULL else */
    char *template_name;       /* ... and the template's qualified name, "ns::Params" */
    char *fn_typedef;          /* KS_DEF_FUNCTION spelled through a typedef of the pointer or
                                  of the function ("unary_t op"): its qualified name, which
                                  naming.c names the type after; NULL: named from its types */
    int complete;
    long size, align;
    int packed;                /* a field is less aligned than its type */
    int has_bases;             /* a class with (non-virtual) base classes: their fields are
                                  flattened into fields, in base order, at their offsets; C
                                  and C++ callers both take the mirror (offsetof on the
                                  application's own, not standard-layout, type is not C++) */
    ks_field *fields;
    size_t nfields;
    ks_scalar underlying;      /* enums */
    int is_signed;
    ks_enumerator *enumerators;
    size_t nenumerators;
    /* Where a complete def comes from, for using the application's own type
     * instead of a mirror (typemap.c records it; emit_values.c decides): */
    char *file;                /* the project header defining it, as the parse names it;
                                  NULL: the input itself, or a system/toolkit header */
    int c_header;              /* file can be included from C: a .h whose text has no
                                  C++-only token, and the type has no qualified name */
    int cxx_header;            /* file can be included from host C++: a .h/.hpp whose text
                                  has no CUDA-only token, and qname names the type there
                                  (not inside a class template's specialization) (issue 30
                                  #6: C++ callers pass the application's own record or
                                  enum, C ones the mirror) */
    int host_c_tried;          /* file was compiled alone as host C11 (typemap_host.c) */
    int host_cxx_tried;        /* ... as host C++17 */
    int host_c_fails;          /* ... and C cannot include it: mirrored for C (issue 39 #19) */
    int host_cxx_fails;        /* ... and C++ cannot: mirrored for C++ */
    int anon_namespace;        /* ... and the type is inside an anonymous namespace (g++
                                  warns of a struct in a header holding it) */
    char *cxx_name;            /* naming.c's: how C++ names the application's own type,
                                  "::ns::Params<float>" (an anonymous namespace left out) */
    int c_typedef;             /* file also declares a typedef of the same name for it,
                                  so C can write the bare name (else "struct X"/"enum X") */
    int mirror;                /* "// kstub:mirror NAME": mirrored even so */
    /* A scoped enum (enum class) declared at namespace scope: C++ may declare
     * it again opaquely, so C++ callers can pass its values to the mirror. */
    int scoped;                /* enum class, every enclosing scope a named namespace */
    char *leaf;                /* its own name, "Act" of "nn::Act" */
    char **scopes;             /* enclosing namespaces, outermost first */
    unsigned char *scope_inline; /* ... each an inline namespace or not */
    size_t nscopes;
} ks_def;

/* One step of an extent hint, in postfix order (the runtime's ks_extent_op). */
typedef enum ks_xop_kind { KS_XOP_CONST, KS_XOP_PARAM, KS_XOP_ADD, KS_XOP_SUB, KS_XOP_MUL, KS_XOP_DIV } ks_xop_kind;
typedef struct ks_xop {
    ks_xop_kind op;
    long long value;           /* CONST: the number; PARAM: the parameter's index */
} ks_xop;

/* One kernel parameter, as the stub declares and packs it. */
typedef struct ks_param {
    char *name;                /* the kernel's own name, or NULL when unnamed */
    char *c_name;              /* naming.c's: the name in the stub */
    char *spelled;             /* libclang's spelling of the type, for comments */
    ks_type type;
    long size;                 /* bytes */
    long align;                /* bytes */
    long offset;               /* bytes from the start of the parameter buffer */
    /* "// kstub:extent(NAME, EXPR)" (extent.c): how many elements it must hold */
    char *extent;              /* EXPR as written (spaces dropped), or NULL */
    ks_xop *extent_ops;        /* ... compiled, in postfix order */
    size_t nextent_ops;
} ks_param;

typedef struct ks_kern {
    char *name;                /* qualified C++ name, e.g. "ns::scale" or "ns::k<float, 4>" */
    char *base_name;           /* for an instantiation: the template's, "ns::k" */
    char *generic_name;        /* naming.c's, for an instantiation: the template's one
                                  C name over its instances (the same for each) */
    char *template_args;       /* ... and its arguments as written, "float, 4"; else NULL */
    char *c_name;              /* naming.c's: the generated C function */
    char *descriptor;          /* naming.c's: its exported ks_kernel, "<c_name>_kernel" */
    char *symbol;              /* device symbol, mangled for C++ kernels */
    char *signature;           /* the declaration as written, one line */
    unsigned line, col;        /* in file */
    char *file;                /* a project header defining it, as the parse names it
                                  (relative to the working directory when below it);
                                  NULL: the input */
    int tu_prefixed;           /* a header's kernel under --kernels-in=project: its C
                                  name starts with the input's stem (naming.c says why) */
    long max_threads;          /* __launch_bounds__ maximum threads, -1 if none */
    long min_blocks;           /* __launch_bounds__ minimum blocks, -1 if none */
    int dynamic_shared;        /* its body, or a function it calls, uses an extern
                                  __shared__ array: no <c_name>_n (launched with 0 bytes
                                  of dynamic shared memory, it would run with none) */
    ks_param *params;
    size_t nparams;
    /* naming.c's names for the stubs' own parameters, stepping aside for the kernel's */
    char *launch_name, *stream_name, *n_items_name;
} ks_kern;

/* Where a namespace-scope device variable lives. */
typedef enum ks_space { KS_SPACE_CONSTANT, KS_SPACE_DEVICE, KS_SPACE_MANAGED } ks_space;

/* A namespace-scope __constant__, __device__ or __managed__ variable the
 * accessors read and write (variable.c finds it). Its type is the element
 * type with the variable's array dimensions (type.dims), each accessor
 * counting in elements of the innermost type. */
typedef struct ks_var {
    char *name;                /* qualified C++ name, "ns::table" */
    char *c_name;              /* naming.c's: the accessors' stem */
    char *descriptor;          /* naming.c's: its exported ks_global, "<c_name>_global" */
    char *symbol;              /* the device symbol nvcc gives it */
    char *spelled;             /* libclang's spelling of its type, for comments */
    ks_type type;              /* element type, dims = the variable's dimensions */
    ks_space space;
    long size, align;          /* the whole variable, bytes */
    long elem_size;            /* one element of the innermost type, bytes */
    long long count;           /* elements: the product of the dimensions, 1 for none */
    int is_const;              /* declared const: nvcc may fold it away (no symbol) */
    unsigned line, col;
    char *file;                /* a project header defining it, or NULL: the input */
    int tu_prefixed;           /* as ks_kern's */
} ks_var;

/* "// kstub:name KERNEL = C_NAME" as found in the source. */
typedef struct ks_rename {
    char *kernel, *c_name;
    unsigned line, col;
    int type;                  /* naming.c: it named a class template specialization's mirror */
} ks_rename;

typedef struct ks_model {
    char *source;              /* input path as given */
    ks_kern *kernels;
    size_t nkernels;
    ks_var *vars;              /* device variables, in source order */
    size_t nvars;
    ks_def *defs;
    size_t ndefs;
    size_t *decl_order;        /* defs to declare (used through pointers), first use first */
    size_t ndecl_order;
    size_t *def_order;         /* complete defs, inner ones first */
    size_t ndef_order;
    ks_rename *renames;
    size_t nrenames;
    char *prefix;              /* naming.c's: the identifier stem of the input */
    char *header;              /* the generated header's file name */
    char *guard;               /* its include guard */
    char *image;               /* the image's symbol, "<prefix>_kstub_image" */
    int needs_vector_types;    /* a parameter names a CUDA vector type */
    int needs_cuda_h;          /* a parameter is a CUtensorMap */
} ks_model;

/* ---- model.c: builders and free ---- */
ks_kern *ks_model_add_kernel(ks_model *m);
ks_param *ks_kern_add_param(ks_kern *k);
ks_var *ks_model_add_var(ks_model *m);
void ks_var_free(ks_var *v);
/* "constant", "device", "managed". */
const char *ks_space_name(ks_space s);
/* The def named qname of this kind, or a new incomplete one. */
size_t ks_model_def(ks_model *m, ks_def_kind kind, const char *qname, int *is_new);
void ks_model_declare(ks_model *m, size_t def);   /* add to decl_order once */
void ks_model_define(ks_model *m, size_t def);    /* add to def_order once */
ks_field *ks_def_add_field(ks_def *d);

/* A padding member a mirror of a record spells: size bytes before field
 * `before` (nfields: at the end), or the one member of an empty record. */
typedef struct ks_gap {
    size_t before;
    long size;
    int empty;
} ks_gap;
/* The padding d's mirror spells, in order, into gaps (room for nfields + 1);
 * returns how many. Naming names them (pad_names), emit places them. */
size_t ks_def_gaps(const ks_def *d, ks_gap *gaps);
void ks_def_add_enumerator(ks_def *d, const char *name, long long value);
void ks_type_add_ptr(ks_type *t, unsigned quals);
void ks_type_add_dim(ks_type *t, long long n);
void ks_type_copy(ks_type *dst, const ks_type *src);
void ks_type_free(ks_type *t);
void ks_kern_free(ks_kern *k);
void ks_model_free(ks_model *m);
/* Each scalar's C spelling and overload tag. */
const char *ks_scalar_c_name(ks_scalar s);
const char *ks_scalar_tag(ks_scalar s);
const char *ks_special_c_name(ks_special s);
/* CUDA's own name of a special type ("__half"); NULL for CUtensorMap, which
 * C names as cuda.h does. */
const char *ks_special_cuda_name(ks_special s);

#endif /* KSTUB_MODEL_H */
